#include "elements/ip/icmp_error.hh"

#include <rte_icmp.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string>

#include "elements/l2/ether_mirror.hh"

namespace fulcrum {
namespace {

constexpr uint32_t kMinFrameLen = RTE_ETHER_HDR_LEN + sizeof(rte_ipv4_hdr);
constexpr uint32_t kMaxQuote = 15 * 4 + ICMPError::kQuotedPayload;  // IHL 15 + 8 bytes
constexpr uint32_t kIhlUnit = 4;
constexpr uint8_t kIhlMask = 0x0F;
constexpr uint8_t kVersionIhl = 0x45;
constexpr uint16_t kFragOffsetMask = 0x1FFF;
constexpr uint32_t kClassEStart = 0xF0000000;
constexpr uint32_t kMulticastMask = 0xF0000000, kMulticast = 0xE0000000;
constexpr uint32_t kLoopbackMask = 0xFF000000, kLoopback = 0x7F000000;
constexpr uint32_t kBroadcast = 0xFFFFFFFF;

// RFC 792 error types: destination unreachable, source quench, redirect, time exceeded,
// parameter problem.
enum IcmpErrorType : uint8_t {
  kDestUnreachable = 3,
  kSourceQuench = 4,
  kRedirect = 5,
  kTimeExceeded = 11,
  kParameterProblem = 12
};

constexpr uint8_t kFragmentationNeeded = 4;  // destination unreachable code

bool is_icmp_error_type(uint8_t type) {
  switch (type) {
    case kDestUnreachable:
    case kSourceQuench:
    case kRedirect:
    case kTimeExceeded:
    case kParameterProblem:
      return true;
    default:
      return false;
  }
}

}  // namespace

Status ICMPError::configure(Args& args) {
  std::string src, mtu;
  uint32_t type = 0, code = 0;
  args.positional("SRC", src, "IPv4 address of the router (the message's source)")
      .positional("TYPE", type, "ICMP type, 0..255 (11: time exceeded, 3: destination unreachable)")
      .positional("CODE", code, "ICMP code, 0..255")
      .key("MTU", mtu,
           "next-hop MTU written into 'fragmentation needed' errors (type 3 code 4, RFC 1191): "
           "0..65535, or 'anno': each packet's user[3] (kMtuAnnoSlot), as IPsecESPEncap's "
           "output 1 sets it");
  if (Status s = args.finish(); !s) return s;
  if (mtu == "anno") {
    mtu_from_anno_ = true;
  } else if (!mtu.empty()) {
    const auto [end, ec] = std::from_chars(mtu.data(), mtu.data() + mtu.size(), mtu_);
    if (ec != std::errc() || end != mtu.data() + mtu.size() || mtu_ > UINT16_MAX)
      return args.error("MTU must be 0..65535 or 'anno', got '" + mtu + "'");
  }
  if (!parse_ipv4(src, src_)) return args.error("SRC: expected an IPv4 address, got '" + src + "'");
  if (type > UINT8_MAX || code > UINT8_MAX) return args.error("TYPE and CODE must be 0..255");
  type_ = static_cast<uint8_t>(type);
  code_ = static_cast<uint8_t>(code);
  return {};
}

bool ICMPError::error_allowed(const rte_ipv4_hdr* ip, uint32_t available) {
  const uint32_t src = rte_be_to_cpu_32(ip->src_addr);
  const uint32_t dst = rte_be_to_cpu_32(ip->dst_addr);
  if ((dst & kMulticastMask) == kMulticast || dst == kBroadcast) return false;
  if (src == 0 || src >= kClassEStart || (src & kMulticastMask) == kMulticast ||
      (src & kLoopbackMask) == kLoopback)
    return false;
  if ((rte_be_to_cpu_16(ip->fragment_offset) & kFragOffsetMask) != 0) return false;
  if (ip->next_proto_id == IPPROTO_ICMP) {
    const uint32_t hlen = (ip->version_ihl & kIhlMask) * kIhlUnit;
    if (available <= hlen) return false;  // cannot tell: do not risk answering an error
    if (is_icmp_error_type(reinterpret_cast<const uint8_t*>(ip)[hlen])) return false;
  }
  return true;
}

Verdict ICMPError::process(Packet* p) {
  const uint32_t len = length(p);
  if (len < kMinFrameLen) return Verdict::drop(kDropReasons["truncated"]);
  auto* ip = rte_pktmbuf_mtod_offset(p, rte_ipv4_hdr*, RTE_ETHER_HDR_LEN);
  const uint32_t hlen = (ip->version_ihl & kIhlMask) * kIhlUnit;
  // The datagram, without Ethernet padding.
  const uint32_t available =
      std::min<uint32_t>(len - RTE_ETHER_HDR_LEN, rte_be_to_cpu_16(ip->total_length));
  if (hlen < sizeof(rte_ipv4_hdr) || hlen > available)
    return Verdict::drop(kDropReasons["truncated"]);
  if (!error_allowed(ip, available)) return Verdict::drop(kDropReasons["no-error-allowed"]);

  uint8_t quote[kMaxQuote];
  const uint32_t quote_len = std::min(available, hlen + kQuotedPayload);
  std::memcpy(quote, ip, quote_len);
  const rte_be32_t dst = ip->src_addr;

  const uint32_t icmp_len = kIcmpHeaderLen + quote_len;
  const uint32_t new_len = RTE_ETHER_HDR_LEN + sizeof(rte_ipv4_hdr) + icmp_len;
  if (p->next != nullptr) {  // the message fits the first segment: drop the rest
    rte_pktmbuf_free(p->next);
    p->next = nullptr;
    p->nb_segs = 1;
    p->pkt_len = p->data_len;
  }
  if (new_len > len) {
    if (rte_pktmbuf_append(p, static_cast<uint16_t>(new_len - len)) == nullptr)
      return Verdict::drop(kDropReasons["truncated"]);
  } else {
    rte_pktmbuf_trim(p, static_cast<uint16_t>(len - new_len));
  }

  EtherMirror::swap_addrs(rte_pktmbuf_mtod(p, rte_ether_hdr*));
  std::memset(ip, 0, sizeof(rte_ipv4_hdr));
  ip->version_ihl = kVersionIhl;
  ip->type_of_service = kTos;
  ip->total_length = rte_cpu_to_be_16(static_cast<uint16_t>(sizeof(rte_ipv4_hdr) + icmp_len));
  ip->packet_id = rte_cpu_to_be_16(next_id_++);
  ip->time_to_live = kTtl;
  ip->next_proto_id = IPPROTO_ICMP;
  ip->src_addr = rte_cpu_to_be_32(src_);
  ip->dst_addr = dst;
  ip->hdr_checksum = rte_ipv4_cksum(ip);

  auto* icmp = reinterpret_cast<rte_icmp_hdr*>(ip + 1);
  std::memset(icmp, 0, kIcmpHeaderLen);
  icmp->icmp_type = type_;
  icmp->icmp_code = code_;
  if (type_ == kDestUnreachable && code_ == kFragmentationNeeded)  // RFC 1191 §4
    icmp->icmp_seq_nb = rte_cpu_to_be_16(static_cast<uint16_t>(
        mtu_from_anno_ ? std::min<uint64_t>(anno(p).user[kMtuAnnoSlot], UINT16_MAX) : mtu_));
  std::memcpy(reinterpret_cast<uint8_t*>(icmp) + kIcmpHeaderLen, quote, quote_len);
  const uint16_t sum = rte_raw_cksum(icmp, icmp_len);
  icmp->icmp_cksum = sum == UINT16_MAX ? sum : static_cast<uint16_t>(~sum);

  set_out_port(p, in_port(p));
  return Verdict::out(0);
}

}  // namespace fulcrum
