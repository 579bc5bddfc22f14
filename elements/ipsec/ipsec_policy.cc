#include "elements/ipsec/ipsec_policy.hh"

#include "lib/esp.hh"

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

Verdict IPsecPolicy::classify(const SpdTable& spd, Packet* p) const {
  using namespace esp;
  const uint32_t len = length(p);
  const uint8_t* d = data(p);
  if (len < kEtherHdrLen + kIpv4HdrLen || load_be16(d + kEtherTypeOffset) != kEtherTypeIpv4)
    return Verdict::drop(kDropReasons["not-ipv4"]);
  const uint8_t* ip = d + kEtherHdrLen;
  const uint32_t ihl = (ip[0] & 0x0F) * kIpv4WordBytes;
  const uint32_t total = load_be16(ip + kTotalLengthOffset);
  if ((ip[0] >> 4) != kIpv4Version || ihl < kIpv4HdrLen || total < ihl ||
      total > len - kEtherHdrLen)
    return Verdict::drop(kDropReasons["not-ipv4"]);
  SpdPacket k;
  k.src = load_be32(ip + kSrcOffset);
  k.dst = load_be32(ip + kDstOffset);
  k.proto = ip[kProtoOffset];
  if ((load_be16(ip + kFragOffset) & kFragOffsetMask) == 0) {
    const uint32_t l4 = total - ihl;
    if (k.proto == kIpProtoTcp || k.proto == kIpProtoUdp) {
      if (l4 < kPortsLen) return Verdict::drop(kDropReasons["truncated"]);
      k.sport = load_be16(ip + ihl);
      k.dport = load_be16(ip + ihl + 2);
      k.has_ports = true;
    } else if (k.proto == kIpProtoIcmp) {
      if (l4 < kIcmpTypeCodeLen) return Verdict::drop(kDropReasons["truncated"]);
      k.sport = ip[ihl];
      k.dport = ip[ihl + 1];
      k.has_ports = true;
    }
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
