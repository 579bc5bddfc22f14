#include "elements/ipsec/ipsec_esp_encap.hh"

#include <rte_ip.h>

#include <cstring>

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
constexpr uint64_t kMaxSeq = 0xFFFFFFFFull;

}  // namespace

Status IPsecESPEncap::configure(Args& args) {
  loc_ = args.loc();
  return args.positional_file("SA_FILE", file_, kSaFileHelp)
      .key("POLICY_SPI", policy_spi_,
           "use the SA whose SPI IPsecPolicy put in the packet's annotation (user[4]) when it "
           "is not 0, instead of the inner destination's selector; only behind IPsecPolicy, "
           "which sets it on every packet it protects")
      .finish();
}

Status IPsecESPEncap::initialize(const InitContext& ctx) {
  auto t =
      get_sa_slot(ctx.shared, file_,
                  loc_.str() + ": " + name() + " :: " + std::string(kTraits.class_name) + ": ");
  if (!t) return make_error(t.error());
  slot_ = t.value();
  worker_ = ctx.worker;
  table_ = slot_->current();
  auto ivs = IvSource::create();
  if (!ivs) return make_error(loc_.str() + ": " + name() + ": " + ivs.error());
  ivs_ = std::move(ivs.value());
  return {};
}

Verdict IPsecESPEncap::encap(Packet* p) {
  using namespace esp;
  const uint32_t len = length(p);
  uint8_t* d = data(p);
  if (len < kEtherHdrLen + kIpv4HdrLen || load_be16(d + kEtherTypeOffset) != kEtherTypeIpv4)
    return Verdict::drop(kDropReasons["not-ipv4"]);
  const uint8_t* inner = d + kEtherHdrLen;
  const uint32_t ihl = (inner[0] & 0x0F) * kIpv4WordBytes;
  const uint32_t inner_len = load_be16(inner + kTotalLengthOffset);
  if ((inner[0] >> 4) != kIpv4Version || ihl < kIpv4HdrLen || inner_len < ihl ||
      inner_len > len - kEtherHdrLen)
    return Verdict::drop(kDropReasons["not-ipv4"]);
  const uint32_t spi = policy_spi_ ? static_cast<uint32_t>(anno(p).user[kPolicySpiSlot]) : 0;
  const uint16_t sa_index =
      spi != 0 ? table_->lookup_out_spi(spi) : table_->lookup_out(load_be32(inner + kDstOffset));
  if (sa_index == SaTable::kNoSa) return Verdict::drop(kDropReasons["no-sa"]);
  SecurityAssociation& sa = table_->at(sa_index);

  const uint32_t iv_len = sa.cfg.iv_len();
  const uint32_t prepend = kIpv4HdrLen + kHdrLen + iv_len;
  const uint32_t pad = pad_len(inner_len, sa.cfg.align());
  const uint32_t icv_len = sa.cfg.icv_len();
  const uint32_t tail = pad + kTrailerLen + icv_len;
  const uint32_t outer_len = prepend + inner_len + tail;
  const uint32_t ether_pad = len - kEtherHdrLen - inner_len;
  if (outer_len > kMaxIpv4Len || !rte_pktmbuf_is_contiguous(p) ||
      rte_pktmbuf_headroom(p) < prepend || rte_pktmbuf_tailroom(p) + ether_pad < tail)
    return Verdict::drop(kDropReasons["too-big"]);
  if (const SaLife life = sa.count(inner_len, now_ns_); life != SaLife::kLive) {
    note_life(life, sa);
    if (life != SaLife::kSoftNow) return Verdict::drop(kDropReasons["sa-expired"]);
  }
  const uint64_t seq = sa.last_seq.fetch_add(1, std::memory_order_relaxed) + 1;
  if (seq > kMaxSeq && !sa.cfg.esn) return Verdict::drop(kDropReasons["seq-overflow"]);
  const uint8_t tos = inner[kTosOffset];

  if (ether_pad > 0) rte_pktmbuf_trim(p, static_cast<uint16_t>(ether_pad));
  uint8_t* t = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(p, static_cast<uint16_t>(tail)));
  if (t == nullptr) return Verdict::drop(kDropReasons["too-big"]);
  for (uint32_t i = 0; i < pad; ++i) t[i] = static_cast<uint8_t>(i + 1);
  t[pad] = static_cast<uint8_t>(pad);
  t[pad + 1] = kNextHeaderIpv4;
  std::memset(t + pad + kTrailerLen, 0, icv_len);
  if (sa.cfg.esn) store_be32(t + pad + kTrailerLen, static_cast<uint32_t>(seq >> 32));

  uint8_t* f = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(p, static_cast<uint16_t>(prepend)));
  if (f == nullptr) return Verdict::drop(kDropReasons["too-big"]);
  std::memmove(f, f + prepend, kEtherHdrLen);
  uint8_t* ip = f + kEtherHdrLen;
  ip[0] = kIpv4VersionIhl;
  ip[kTosOffset] = tos;
  store_be16(ip + kTotalLengthOffset, static_cast<uint16_t>(outer_len));
  store_be16(ip + kIdOffset, static_cast<uint16_t>(seq & kIdMask));
  store_be16(ip + kFragOffset, 0);
  ip[kTtlOffset] = kOuterTtl;
  ip[kProtoOffset] = kIpProtoEsp;
  store_be16(ip + kChecksumOffset, 0);
  store_be32(ip + kSrcOffset, sa.cfg.tunnel_src);
  store_be32(ip + kDstOffset, sa.cfg.tunnel_dst);
  const uint16_t cksum = rte_ipv4_cksum(reinterpret_cast<const rte_ipv4_hdr*>(ip));
  std::memcpy(ip + kChecksumOffset, &cksum, sizeof cksum);
  uint8_t* e = ip + kIpv4HdrLen;
  store_be32(e, sa.cfg.spi);
  store_be32(e + kSpiLen, static_cast<uint32_t>(seq));
  if (sa.cfg.cipher != EspCipher::kAesCbc) {
    store_be64(e + kHdrLen, seq);
  } else if (!ivs_->fill(e + kHdrLen, iv_len)) {
    return Verdict::drop(kDropReasons["no-random"]);
  }
  anno(p).flow_id = sa_index;
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
