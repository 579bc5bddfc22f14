#include "elements/ipsec/ipsec_esp_encap.hh"

#include <cstring>
#include <string>

#include "lib/esp.hh"
#include "lib/ipsec_spd.hh"

namespace fulcrum {
namespace {

constexpr uint32_t kTosOffset = 1;
constexpr uint32_t kTotalLengthOffset = 2;
constexpr uint32_t kIdOffset = 4;
constexpr uint32_t kFragOffset = 6;
constexpr uint32_t kTtlOffset = 8;
constexpr uint32_t kProtoOffset = 9;
constexpr uint32_t kChecksumOffset = 10;
constexpr uint32_t kSrcOffset = 12;
constexpr uint32_t kDstOffset = 16;
constexpr uint32_t kIdMask = 0xFFFF;
constexpr uint16_t kDontFragment = 0x4000;
constexpr uint32_t kIpv6VersionShift = 28;
constexpr uint32_t kTcShift = 20;
constexpr uint64_t kMaxSeq = 0xFFFFFFFFull;
constexpr uint32_t kMinMtu = 68;  // RFC 791's minimum

// The checksum of the outer IPv4 header IPsecESPEncap writes, from its fields (summing them in
// registers rather than reading back the header just stored, which stalls store forwarding).
uint16_t outer_ipv4_checksum(uint8_t tos, uint32_t total_len, uint16_t id, uint32_t src,
                             uint32_t dst) {
  constexpr uint32_t kWordBits = 16, kWordMask = 0xFFFF;
  uint32_t sum = (uint32_t{esp::kIpv4VersionIhl} << 8 | tos) + total_len + id +
                 (uint32_t{esp::kOuterTtl} << 8 | esp::kIpProtoEsp) + (src >> kWordBits) +
                 (src & kWordMask) + (dst >> kWordBits) + (dst & kWordMask);
  sum = (sum & kWordMask) + (sum >> kWordBits);
  sum = (sum & kWordMask) + (sum >> kWordBits);
  return static_cast<uint16_t>(~sum);
}

}  // namespace

Status IPsecESPEncap::configure(Args& args) {
  loc_ = args.loc();
  args.positional_file("SA_FILE", file_, kSaFileHelp)
      .key("POLICY_SPI", policy_spi_,
           "use the SA whose SPI IPsecPolicy put in the packet's annotation (user[4]) when it "
           "is not 0, instead of the inner destination's selector; only behind IPsecPolicy, "
           "which sets it on every packet it protects")
      .key("MTU", mtu_,
           "the outgoing link's MTU: the largest outer IP packet to send, 0 (default) for no "
           "check; an IPv6 packet or a DF IPv4 packet whose encapsulation exceeds it leaves by "
           "output 1 (mtu-exceeded when unconnected) with the inner MTU in user[3], an IPv4 "
           "packet without DF is dropped as needs-fragmentation");
  if (Status s = args.finish(); !s) return s;
  if (mtu_ != 0 && (mtu_ < kMinMtu || mtu_ > esp::kIpv6HdrLen + esp::kMaxIpv6PayloadLen))
    return args.error("MTU must be 0 (no check) or " + std::to_string(kMinMtu) + ".." +
                      std::to_string(esp::kIpv6HdrLen + esp::kMaxIpv6PayloadLen));
  return {};
}

Status IPsecESPEncap::initialize(const InitContext& ctx) {
  auto t =
      get_sa_slot(ctx.shared, file_,
                  loc_.str() + ": " + name() + " :: " + std::string(kTraits.class_name) + ": ");
  if (!t) return make_error(t.error());
  slot_ = t.value();
  worker_ = ctx.worker;
  table_ = slot_->current();
  mtu_output_ = output_connected(kMtuOutput);
  auto ivs = IvSource::create();
  if (!ivs) return make_error(loc_.str() + ": " + name() + ": " + ivs.error());
  ivs_ = std::move(ivs.value());
  return {};
}

// The inner packet of an Ethernet frame: IPv4 (version, IHL, total length within the frame)
// or IPv6 (version, payload length + 40 within the frame); false for anything else.
bool IPsecESPEncap::parse_inner(const uint8_t* d, uint32_t len, Inner& in) const {
  using namespace esp;
  const uint16_t type = load_be16(d + kEtherTypeOffset);
  const uint8_t* ip = d + kEtherHdrLen;
  const uint32_t spi = in.spi;
  if (type == kEtherTypeIpv4) [[likely]] {
    const uint32_t ihl = (ip[0] & 0x0F) * kIpv4WordBytes;
    in.len = load_be16(ip + kTotalLengthOffset);
    if ((ip[0] >> kVersionShift) != kIpv4Version || ihl < kIpv4HdrLen || in.len < ihl ||
        in.len > len - kEtherHdrLen)
      return false;
    in.tc = ip[kTosOffset];
    in.df = (load_be16(ip + kFragOffset) & kDontFragment) != 0;
    in.next_header = kNextHeaderIpv4;
    in.sa = spi != 0 ? table_->lookup_out_spi(spi) : table_->lookup_out(load_be32(ip + kDstOffset));
    return true;
  }
  if (type != kEtherTypeIpv6 || len < kEtherHdrLen + kIpv6HdrLen ||
      (ip[0] >> kVersionShift) != kIpv6Version)
    return false;
  in.len = kIpv6HdrLen + load_be16(ip + kIpv6PayloadLenOffset);
  if (in.len > len - kEtherHdrLen) return false;
  in.tc = ipv6_traffic_class(ip);
  in.df = true;  // IPv6 routers never fragment (RFC 8200 §5)
  in.next_header = kNextHeaderIpv6;
  in.sa = spi != 0 ? table_->lookup_out_spi(spi) : table_->lookup_out6(ip + kIpv6DstOffset);
  return true;
}

Verdict IPsecESPEncap::encap(Packet* p) {
  using namespace esp;
  const uint32_t len = length(p);
  uint8_t* d = data(p);
  Inner in;
  in.spi = policy_spi_ ? static_cast<uint32_t>(anno(p).user[kPolicySpiSlot]) : 0;
  if (len < kEtherHdrLen + kIpv4HdrLen || !parse_inner(d, len, in))
    return Verdict::drop(kDropReasons["not-ip"]);
  if (in.sa == SaTable::kNoSa) return Verdict::drop(kDropReasons["no-sa"]);
  SecurityAssociation& sa = table_->at(in.sa);
  const uint32_t inner_len = in.len;

  const uint32_t iv_len = sa.cfg.iv_len();
  const uint32_t prepend = sa.cfg.prepend_len();
  const uint32_t pad = pad_len(inner_len, sa.cfg.align());
  const uint32_t icv_len = sa.cfg.icv_len();
  const uint32_t tail = pad + kTrailerLen + icv_len;
  const uint32_t outer_len = prepend + inner_len + tail;
  const uint32_t ether_pad = len - kEtherHdrLen - inner_len;
  const uint32_t max_len = sa.cfg.tunnel6 ? kIpv6HdrLen + kMaxIpv6PayloadLen : kMaxIpv4Len;
  if (outer_len > max_len || !rte_pktmbuf_is_contiguous(p) || rte_pktmbuf_headroom(p) < prepend ||
      rte_pktmbuf_tailroom(p) + ether_pad < tail)
    return Verdict::drop(kDropReasons["too-big"]);
  if (mtu_ != 0 && outer_len > mtu_) [[unlikely]] {
    if (!in.df) return Verdict::drop(kDropReasons["needs-fragmentation"]);
    anno(p).user[kMtuAnnoSlot] = sa.cfg.inner_mtu(mtu_);
    return mtu_output_ ? Verdict::out(kMtuOutput) : Verdict::drop(kDropReasons["mtu-exceeded"]);
  }
  if (const SaLife life = sa.count(inner_len, now_ns_); life != SaLife::kLive) {
    note_life(life, sa);
    if (life != SaLife::kSoftNow) return Verdict::drop(kDropReasons["sa-expired"]);
  }
  const uint64_t seq = sa.last_seq.fetch_add(1, std::memory_order_relaxed) + 1;
  if (seq > kMaxSeq && !sa.cfg.esn) return Verdict::drop(kDropReasons["seq-overflow"]);

  if (ether_pad > 0) rte_pktmbuf_trim(p, static_cast<uint16_t>(ether_pad));
  uint8_t* t = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(p, static_cast<uint16_t>(tail)));
  if (t == nullptr) return Verdict::drop(kDropReasons["too-big"]);
  for (uint32_t i = 0; i < pad; ++i) t[i] = static_cast<uint8_t>(i + 1);
  t[pad] = static_cast<uint8_t>(pad);
  t[pad + 1] = in.next_header;
  // Constant sizes: two vector stores instead of a `rep stos` of a run-time length.
  if (icv_len == kGcmIcvLen)
    std::memset(t + pad + kTrailerLen, 0, kGcmIcvLen);
  else
    std::memset(t + pad + kTrailerLen, 0, kIcvLen);
  if (sa.cfg.esn) store_be32(t + pad + kTrailerLen, static_cast<uint32_t>(seq >> 32));

  uint8_t* f = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(p, static_cast<uint16_t>(prepend)));
  if (f == nullptr) return Verdict::drop(kDropReasons["too-big"]);
  std::memmove(f, f + prepend, kEtherHdrLen);
  uint8_t* ip = f + kEtherHdrLen;
  if (!sa.cfg.tunnel6) [[likely]] {
    store_be16(f + kEtherTypeOffset, kEtherTypeIpv4);
    ip[0] = kIpv4VersionIhl;
    ip[kTosOffset] = in.tc;
    store_be16(ip + kTotalLengthOffset, static_cast<uint16_t>(outer_len));
    store_be16(ip + kIdOffset, static_cast<uint16_t>(seq & kIdMask));
    store_be16(ip + kFragOffset, 0);
    ip[kTtlOffset] = kOuterTtl;
    ip[kProtoOffset] = kIpProtoEsp;
    store_be32(ip + kSrcOffset, sa.cfg.tunnel_src);
    store_be32(ip + kDstOffset, sa.cfg.tunnel_dst);
    store_be16(ip + kChecksumOffset,
               outer_ipv4_checksum(in.tc, outer_len, static_cast<uint16_t>(seq & kIdMask),
                                   sa.cfg.tunnel_src, sa.cfg.tunnel_dst));
  } else {
    store_be16(f + kEtherTypeOffset, kEtherTypeIpv6);
    // Version 6, the inner traffic class, flow label 0 (RFC 6437 allows it; the SPI is what
    // tells this tunnel's packets apart).
    store_be32(ip, uint32_t{kIpv6Version} << kIpv6VersionShift | uint32_t{in.tc} << kTcShift);
    store_be16(ip + kIpv6PayloadLenOffset, static_cast<uint16_t>(outer_len - kIpv6HdrLen));
    ip[kIpv6NextHeaderOffset] = kIpProtoEsp;
    ip[kIpv6HopLimitOffset] = kOuterTtl;
    std::memcpy(ip + kIpv6SrcOffset, sa.cfg.tunnel_src6, sizeof sa.cfg.tunnel_src6);
    std::memcpy(ip + kIpv6DstOffset, sa.cfg.tunnel_dst6, sizeof sa.cfg.tunnel_dst6);
  }
  uint8_t* e = ip + sa.cfg.outer_hdr_len();
  store_be32(e, sa.cfg.spi);
  store_be32(e + kSpiLen, static_cast<uint32_t>(seq));
  if (sa.cfg.cipher != EspCipher::kAesCbc) {
    store_be64(e + kHdrLen, seq);
  } else if (!ivs_->fill(e + kHdrLen, iv_len)) {
    return Verdict::drop(kDropReasons["no-random"]);
  }
  anno(p).flow_id = in.sa;
  return Verdict::out(0);
}

void IPsecESPEncap::note_life(SaLife event, const SecurityAssociation& sa) {
  if (event != SaLife::kSoftNow && event != SaLife::kExpiredNow) return;
  ++(event == SaLife::kSoftNow ? soft_expired_ : hard_expired_);
  sa.report(event, name() + " :: " + std::string(kTraits.class_name), now_ns_);
}

void IPsecESPEncap::process_batch(PacketBatch& batch) {
  table_ = slot_->for_worker(worker_);
  if (table_->timed()) now_ns_ = sa_clock_ns();
  batch.for_each([&](uint32_t i, Packet* p) { batch.set_result(i, encap(p)); });
}

}  // namespace fulcrum
