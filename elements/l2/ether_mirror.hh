// EtherMirror — swaps the source and destination Ethernet addresses (echo).
//
// Ports:     input 0: Ethernet frames. output 0: the frame with its MAC addresses swapped.
// Uses:      nothing.  Sets: nothing.
// Counters:  none; the graph counts drops by reason: "truncated" (frame shorter than 14
//            bytes).
// Offload:   none.
#pragma once

#include <rte_ether.h>
#include <tmmintrin.h>

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class EtherMirror final : public PacketElement<EtherMirror> {
 public:
  static constexpr DropReasons kDropReasons{"truncated"};
  static constexpr ElementTraits kTraits{"EtherMirror", 1, 1, kDropReasons};

  Status configure(Args& args) override { return args.finish(); }

  Verdict process(Packet* p) {
    const uint32_t len = length(p);
    if (len >= kShuffleBytes) [[likely]] {
      swap_addrs_shuffle(rte_pktmbuf_mtod(p, uint8_t*));
      return Verdict::out(0);
    }
    if (len < RTE_ETHER_HDR_LEN) return Verdict::drop(kDropReasons["truncated"]);
    swap_addrs(rte_pktmbuf_mtod(p, rte_ether_hdr*));
    return Verdict::out(0);
  }

  // Frames of 16 bytes or more: the first 16 bytes in one vector register, the two addresses
  // exchanged by one byte shuffle, bytes 12..15 (EtherType and on) kept.
  static constexpr uint32_t kShuffleBytes = 16;
  static void swap_addrs_shuffle(uint8_t* b) {
    const __m128i order = _mm_setr_epi8(6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15);
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(b), _mm_shuffle_epi8(v, order));
  }

  // The 12 address bytes as one 8-byte and one 4-byte word, swapped in registers (the
  // member-wise copy went through the stack).
  static void swap_addrs(rte_ether_hdr* eth) {
    auto* b = reinterpret_cast<uint8_t*>(eth);
    uint64_t lo;  // dst[0..5] src[0..1]
    uint32_t hi;  // src[2..5]
    std::memcpy(&lo, b, sizeof lo);
    std::memcpy(&hi, b + sizeof lo, sizeof hi);
    static_assert(std::endian::native == std::endian::little);
    const uint64_t first = (lo >> 48) | (uint64_t{hi} << 16) | (lo << 48);  // src, dst[0..1]
    const auto second = static_cast<uint32_t>(lo >> 16);                    // dst[2..5]
    std::memcpy(b, &first, sizeof first);
    std::memcpy(b + sizeof first, &second, sizeof second);
  }
};

FULCRUM_REGISTER_ELEMENT(EtherMirror);

}  // namespace fulcrum
