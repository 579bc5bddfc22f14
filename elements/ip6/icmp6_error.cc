#include "elements/ip6/icmp6_error.hh"

#include <arpa/inet.h>
#include <rte_ip.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string>

#include "elements/l2/ether_mirror.hh"
#include "lib/esp.hh"
#include "lib/ip6_ext.hh"

namespace fulcrum {
namespace {

using esp::kEtherHdrLen;
using esp::kIpv6HdrLen;
constexpr uint8_t kIpProtoIcmp6 = 58;
constexpr uint8_t kMulticastPrefix = 0xFF;
constexpr uint8_t kFirstInformational = 128;  // ICMPv6 types below are errors
constexpr uint8_t kParameterProblem = 4;
constexpr uint8_t kUnrecognizedOption = 2;  // Parameter Problem code allowed to multicast
constexpr uint32_t kVersionWord = 0x60000000;
constexpr uint32_t kChecksumOffset = 2;
constexpr uint32_t kFieldOffset = 4;  // MTU, pointer or unused
constexpr uint32_t kPrepend = kIpv6HdrLen + ICMP6Error::kIcmpHeaderLen;

bool unspecified(const uint8_t* a) {
  static constexpr uint8_t kZero[16] = {};
  return std::memcmp(a, kZero, sizeof kZero) == 0;
}

}  // namespace

Status ICMP6Error::configure(Args& args) {
  std::string src, mtu;
  uint32_t type = 0, code = 0;
  args.positional("SRC", src, "IPv6 address of the router (the message's source)")
      .positional("TYPE", type, "ICMPv6 type, 0..255 (2: packet too big, 3: time exceeded)")
      .positional("CODE", code, "ICMPv6 code, 0..255")
      .key("MTU", mtu,
           "the MTU of Packet Too Big (TYPE 2): a number, or 'anno': each packet's user[3] "
           "(kMtuAnnoSlot), as IPsecESPEncap's output 1 sets it");
  if (Status s = args.finish(); !s) return s;
  if (inet_pton(AF_INET6, src.c_str(), src_.data()) != 1)
    return args.error("SRC: expected an IPv6 address, got '" + src + "'");
  if (type > UINT8_MAX || code > UINT8_MAX) return args.error("TYPE and CODE must be 0..255");
  if (type >= kFirstInformational) return args.error("TYPE must be an error type, 0..127");
  type_ = static_cast<uint8_t>(type);
  code_ = static_cast<uint8_t>(code);
  if (mtu == "anno") {
    mtu_from_anno_ = true;
  } else if (!mtu.empty()) {
    const auto [end, ec] = std::from_chars(mtu.data(), mtu.data() + mtu.size(), mtu_);
    if (ec != std::errc() || end != mtu.data() + mtu.size())
      return args.error("MTU must be a number or 'anno', got '" + mtu + "'");
  }
  return {};
}

bool ICMP6Error::error_allowed(const uint8_t* ip, uint8_t type, uint8_t code) {
  const uint8_t* src = ip + esp::kIpv6SrcOffset;
  if (unspecified(src) || src[0] == kMulticastPrefix) return false;
  if (ip[esp::kIpv6DstOffset] == kMulticastPrefix && type != kPacketTooBig &&
      !(type == kParameterProblem && code == kUnrecognizedOption))
    return false;
  Ip6Upper upper;
  const uint32_t payload = esp::load_be16(ip + esp::kIpv6PayloadLenOffset);
  if (!walk_ip6(ip, payload, upper)) return false;
  if (upper.proto != kIpProtoIcmp6 || upper.later_fragment) return true;
  // An ICMPv6 error is never answered; without its type in the packet, neither is it.
  return upper.offset < kIpv6HdrLen + payload && ip[upper.offset] >= kFirstInformational;
}

Verdict ICMP6Error::process(Packet* p) {
  using namespace esp;
  const uint32_t len = length(p);
  const uint8_t* d = data(p);
  if (len < kEtherHdrLen + kIpv6HdrLen || load_be16(d + kEtherTypeOffset) != kEtherTypeIpv6 ||
      (d[kEtherHdrLen] >> kVersionShift) != kIpv6Version)
    return Verdict::drop(kDropReasons["not-ipv6"]);
  const uint32_t packet = kIpv6HdrLen + load_be16(d + kEtherHdrLen + kIpv6PayloadLenOffset);
  if (packet > len - kEtherHdrLen) return Verdict::drop(kDropReasons["not-ipv6"]);
  if (!error_allowed(d + kEtherHdrLen, type_, code_))
    return Verdict::drop(kDropReasons["no-error-allowed"]);
  if (p->next != nullptr) {  // the message fits the first segment: drop the rest
    rte_pktmbuf_free(p->next);
    p->next = nullptr;
    p->nb_segs = 1;
    p->pkt_len = p->data_len;
  }
  uint8_t* f = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(p, kPrepend));
  if (f == nullptr) return Verdict::drop(kDropReasons["no-room"]);
  const uint32_t quote = std::min(packet, kMinMtu - kPrepend);  // Ethernet padding excluded
  rte_pktmbuf_trim(p, static_cast<uint16_t>(length(p) - kEtherHdrLen - kPrepend - quote));
  std::memmove(f, f + kPrepend, kEtherHdrLen);
  EtherMirror::swap_addrs(reinterpret_cast<rte_ether_hdr*>(f));
  uint8_t* ip = f + kEtherHdrLen;
  const uint8_t* orig = ip + kPrepend;
  store_be32(ip, kVersionWord);
  store_be16(ip + kIpv6PayloadLenOffset, static_cast<uint16_t>(kIcmpHeaderLen + quote));
  ip[kIpv6NextHeaderOffset] = kIpProtoIcmp6;
  ip[kIpv6HopLimitOffset] = kHopLimit;
  std::memcpy(ip + kIpv6DstOffset, orig + kIpv6SrcOffset, src_.size());
  std::memcpy(ip + kIpv6SrcOffset, src_.data(), src_.size());
  uint8_t* icmp = ip + kIpv6HdrLen;
  icmp[0] = type_;
  icmp[1] = code_;
  store_be16(icmp + kChecksumOffset, 0);
  const uint64_t mtu = mtu_from_anno_ ? anno(p).user[kMtuAnnoSlot] : mtu_;
  store_be32(icmp + kFieldOffset, type_ == kPacketTooBig
                                      ? static_cast<uint32_t>(std::min<uint64_t>(mtu, UINT32_MAX))
                                      : 0);
  const uint16_t sum = rte_ipv6_udptcp_cksum(reinterpret_cast<const rte_ipv6_hdr*>(ip), icmp);
  std::memcpy(icmp + kChecksumOffset, &sum, sizeof sum);
  set_out_port(p, in_port(p));
  return Verdict::out(0);
}

}  // namespace fulcrum
