// Layout of an ESP tunnel-mode frame as the IPsec elements build and read it (RFC 4303):
//
//   Ethernet (14) | outer IPv4 (IHL*4, 20 when we build it) or IPv6 (40, next header 50) |
//   SPI (4) | sequence (4) | IV (8 for AES-CTR, 16 for AES-CBC) |
//   inner IPv4 or IPv6 packet | padding 1,2,3.. | pad length (1) |
//   next header (1) = 4 (IPv4) or 41 (IPv6) | ICV (12)
//
// The cipher covers the inner packet through the next-header byte; the ICV covers SPI through
// the next-header byte, then, with extended sequence numbers, the sequence number's high 32
// bits (RFC 4303 §2.2.1: appended for the ICV computation, never sent; the elements put them
// where the ICV goes until it is written). AES-GCM (RFC 4106): IV 8 bytes, ICV 16, no HMAC; its
// AAD is SPI | sequence (low 32 bits), or SPI | high 32 | low 32 with ESN (RFC 4106 §5).
// Padding aligns the ICV to 4 bytes (AES-CTR and GCM themselves need none) and the CBC
// ciphertext to 16.
#pragma once

#include <rte_byteorder.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/packet.hh"
#include "lib/ipsec_crypto.hh"
#include "lib/ipsec_sa.hh"

namespace fulcrum::esp {

inline constexpr uint32_t kEtherHdrLen = 14;
inline constexpr uint32_t kEtherTypeOffset = 12;
inline constexpr uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr uint16_t kEtherTypeIpv6 = 0x86DD;
inline constexpr uint32_t kIpv4HdrLen = 20;
inline constexpr uint32_t kIpv6HdrLen = 40;
inline constexpr uint8_t kIpv6Version = 6;
inline constexpr uint32_t kIpv6PayloadLenOffset = 4;
inline constexpr uint32_t kIpv6NextHeaderOffset = 6;
inline constexpr uint32_t kIpv6HopLimitOffset = 7;
inline constexpr uint32_t kIpv6SrcOffset = 8;
inline constexpr uint32_t kIpv6DstOffset = 24;
inline constexpr uint32_t kVersionShift = 4;
inline constexpr uint32_t kIpv4WordBytes = 4;  // IHL unit
inline constexpr uint8_t kIpv4Version = 4;
inline constexpr uint8_t kIpv4VersionIhl = 0x45;
inline constexpr uint8_t kIpProtoEsp = 50;
inline constexpr uint8_t kOuterTtl = 64;
inline constexpr uint32_t kSpiLen = 4;
inline constexpr uint32_t kSeqLen = 4;
inline constexpr uint32_t kHdrLen = kSpiLen + kSeqLen;
inline constexpr uint32_t kIvLen = kCtrIvLen;
inline constexpr uint32_t kHdrIvLen = kHdrLen + kIvLen;
inline constexpr uint32_t kTrailerLen = 2;  // pad length, next header
inline constexpr uint32_t kEspIcvLen = fulcrum::kIcvLen;
inline constexpr uint32_t kAlign = 4;
inline constexpr uint8_t kNextHeaderIpv4 = 4;
inline constexpr uint8_t kNextHeaderIpv6 = 41;
inline constexpr uint32_t kMaxIpv4Len = 0xFFFF;
inline constexpr uint32_t kMaxIpv6PayloadLen = 0xFFFF;  // no jumbograms (RFC 2675)
// What encapsulation adds in front of the inner packet (after the Ethernet header), IPv4 outer.
inline constexpr uint32_t kPrependLen = kIpv4HdrLen + kHdrIvLen;
static_assert(kIpv4HdrLen == kSaOuterIpv4Len && kIpv6HdrLen == kSaOuterIpv6Len &&
              kHdrLen == kSaEspHdrLen && kTrailerLen == kSaTrailerLen);
// The smallest ESP part (SPI through ICV) with a non-empty trailer.
inline constexpr uint32_t kMinEspLen = kHdrIvLen + kTrailerLen + kEspIcvLen;

// Padding so that payload + trailer is a multiple of `align` (4, or the CBC block of 16).
inline constexpr uint32_t pad_len(uint32_t payload_len, uint32_t align = kAlign) {
  return (align - (payload_len + kTrailerLen) % align) % align;
}

inline uint16_t load_be16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return rte_be_to_cpu_16(v);
}
inline uint32_t load_be32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return rte_be_to_cpu_32(v);
}
inline void store_be16(uint8_t* p, uint16_t v) {
  const uint16_t be = rte_cpu_to_be_16(v);
  std::memcpy(p, &be, sizeof be);
}
inline void store_be32(uint8_t* p, uint32_t v) {
  const uint32_t be = rte_cpu_to_be_32(v);
  std::memcpy(p, &be, sizeof be);
}
inline void store_be64(uint8_t* p, uint64_t v) {
  const uint64_t be = rte_cpu_to_be_64(v);
  std::memcpy(p, &be, sizeof be);
}

inline constexpr uint32_t kAadSlotLen = 16;  // room for the longest GCM AAD (12 bytes)

// The GCM AAD of the ESP header at `e` into `out`: SPI | low 32, or with `seq_hi` (the 4
// bytes holding the high half, big-endian) SPI | high 32 | low 32. Returns its length.
inline uint32_t gcm_aad(const uint8_t* e, const uint8_t* seq_hi, uint8_t* out) {
  std::memcpy(out, e, kSpiLen);
  if (seq_hi == nullptr) {
    std::memcpy(out + kSpiLen, e + kSpiLen, kSeqLen);
    return kSpiLen + kSeqLen;
  }
  std::memcpy(out + kSpiLen, seq_hi, kSeqLen);
  std::memcpy(out + kSpiLen + kSeqLen, e + kSpiLen, kSeqLen);
  return kSpiLen + 2 * kSeqLen;
}

// The traffic class of the IPv6 header at `ip` (the 8 bits after the version).
inline uint8_t ipv6_traffic_class(const uint8_t* ip) {
  return static_cast<uint8_t>((ip[0] & 0x0F) << kVersionShift | ip[1] >> kVersionShift);
}

// Where the ESP header of an outbound frame starts (Ethernet + the outer header: IPv4's IHL, or
// IPv6's fixed 40 bytes, which is what IPsecESPEncap builds), or 0 when the frame cannot hold
// an ESP packet with a non-empty trailer.
inline uint32_t esp_offset(const Packet* m) {
  const uint32_t len = length(m);
  if (len < kEtherHdrLen + kIpv4HdrLen + kMinEspLen) return 0;
  const uint8_t* d = rte_pktmbuf_mtod(m, const uint8_t*);
  const uint32_t hdr = (d[kEtherHdrLen] >> kVersionShift) == kIpv6Version
                           ? kIpv6HdrLen
                           : (d[kEtherHdrLen] & 0x0F) * kIpv4WordBytes;
  if (hdr < kIpv4HdrLen || kEtherHdrLen + hdr + kMinEspLen > len) return 0;
  return kEtherHdrLen + hdr;
}

}  // namespace fulcrum::esp
