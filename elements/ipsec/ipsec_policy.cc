#include "elements/ipsec/ipsec_policy.hh"

#include "lib/esp.hh"
#include "lib/ip6_ext.hh"

namespace fulcrum {
namespace {

constexpr uint32_t kTotalLengthOffset = 2;
constexpr uint32_t kFragOffset = 6;
constexpr uint16_t kFragOffsetMask = 0x1FFF;  // non-zero: not the first fragment
constexpr uint32_t kProtoOffset = 9;
constexpr uint32_t kSrcOffset = 12;
constexpr uint32_t kDstOffset = 16;
constexpr uint32_t kPortsLen = 4;
constexpr uint32_t kIcmpTypeCodeLen = 2;

}  // namespace

Status IPsecPolicy::configure(Args& args) {
  loc_ = args.loc();
  return args.positional_file("SPD_FILE", file_, kSpdFileHelp).finish();
}

Status IPsecPolicy::initialize(const InitContext& ctx) {
  auto t =
      get_spd_slot(ctx.shared, file_,
                   loc_.str() + ": " + name() + " :: " + std::string(kTraits.class_name) + ": ");
  if (!t) return make_error(t.error());
  slot_ = t.value();
  return {};
}

// The ports (TCP, UDP) or type and code (ICMP, ICMPv6) of the upper-layer header at `l4`
// with `room` bytes, into k; false when they do not fit.
bool IPsecPolicy::read_ports(const uint8_t* l4, uint32_t room, SpdPacket& k) {
  using esp::load_be16;
  const bool icmp = k.proto == (k.family == kSpdIpv6 ? kIpProtoIcmp6 : kIpProtoIcmp);
  if (k.proto == kIpProtoTcp || k.proto == kIpProtoUdp) {
    if (room < kPortsLen) return false;
    k.sport = load_be16(l4);
    k.dport = load_be16(l4 + 2);
    k.has_ports = true;
  } else if (icmp) {
    if (room < kIcmpTypeCodeLen) return false;
    k.sport = l4[0];
    k.dport = l4[1];
    k.has_ports = true;
  }
  return true;
}

Verdict IPsecPolicy::classify(const SpdTable& spd, Packet* p) const {
  using namespace esp;
  const uint32_t len = length(p);
  const uint8_t* d = data(p);
  if (len < kEtherHdrLen + kIpv4HdrLen) return Verdict::drop(kDropReasons["not-ip"]);
  const uint16_t type = load_be16(d + kEtherTypeOffset);
  const uint8_t* ip = d + kEtherHdrLen;
  SpdPacket k;
  if (type == kEtherTypeIpv4) [[likely]] {
    const uint32_t ihl = (ip[0] & 0x0F) * kIpv4WordBytes;
    const uint32_t total = load_be16(ip + kTotalLengthOffset);
    if ((ip[0] >> kVersionShift) != kIpv4Version || ihl < kIpv4HdrLen || total < ihl ||
        total > len - kEtherHdrLen)
      return Verdict::drop(kDropReasons["not-ip"]);
    k.src = load_be32(ip + kSrcOffset);
    k.dst = load_be32(ip + kDstOffset);
    k.proto = ip[kProtoOffset];
    if ((load_be16(ip + kFragOffset) & kFragOffsetMask) == 0 &&
        !read_ports(ip + ihl, total - ihl, k))
      return Verdict::drop(kDropReasons["truncated"]);
  } else {
    if (type != kEtherTypeIpv6 || len < kEtherHdrLen + kIpv6HdrLen ||
        (ip[0] >> kVersionShift) != kIpv6Version)
      return Verdict::drop(kDropReasons["not-ip"]);
    const uint32_t payload = load_be16(ip + kIpv6PayloadLenOffset);
    if (payload > len - kEtherHdrLen - kIpv6HdrLen) return Verdict::drop(kDropReasons["not-ip"]);
    Ip6Upper upper;
    if (!walk_ip6(ip, payload, upper)) return Verdict::drop(kDropReasons["truncated"]);
    k.family = kSpdIpv6;
    k.src6 = Addr6::from_bytes(ip + kIpv6SrcOffset);
    k.dst6 = Addr6::from_bytes(ip + kIpv6DstOffset);
    k.proto = upper.proto;
    if (!upper.later_fragment &&
        !read_ports(ip + upper.offset, kIpv6HdrLen + payload - upper.offset, k))
      return Verdict::drop(kDropReasons["truncated"]);
  }
  const size_t rule = spd.match(k);
  switch (spd.action(rule)) {
    case SpdAction::kProtect:
      anno(p).user[kPolicySpiSlot] = spd.spi(rule);
      return Verdict::out(kProtectOutput);
    case SpdAction::kBypass:
      return Verdict::out(kBypassOutput);
    case SpdAction::kDiscard:
      break;
  }
  return Verdict::drop(kDropReasons["discard"]);
}

void IPsecPolicy::process_batch(PacketBatch& batch) {
  const SpdTable& spd = *slot_->current();
  batch.for_each([&](uint32_t i, Packet* p) { batch.set_result(i, classify(spd, p)); });
}

}  // namespace fulcrum
