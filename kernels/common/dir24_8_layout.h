// The DIR-24-8 table encoding (src/lib/dir24_8.hh builds it, kernels/ipv4_lookup.cl walks it): a
// TBL24 entry at or above DIR24_8_SEGMENT_FLAG, less the flag, is a segment index below
// DIR24_8_MAX_SEGMENTS, whose 2^DIR24_8_SEGMENT_BITS TBLlong entries the address's low bits pick.
// Plain constants, so the host's Dir24_8 takes its own from here.
#ifndef FULCRUM_KERNELS_COMMON_DIR24_8_LAYOUT_H
#define FULCRUM_KERNELS_COMMON_DIR24_8_LAYOUT_H

#define DIR24_8_SEGMENT_FLAG 0x8000u
#define DIR24_8_MAX_SEGMENTS 0x7FFFu  // segment indices 0..0x7FFE
#define DIR24_8_SEGMENT_BITS 8u       // address bits below the /24
#define DIR24_8_SEGMENT_MASK ((1u << DIR24_8_SEGMENT_BITS) - 1u)

#endif  // FULCRUM_KERNELS_COMMON_DIR24_8_LAYOUT_H
