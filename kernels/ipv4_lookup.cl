// IPv4 longest-prefix match on a DIR-24-8 table (src/lib/dir24_8.hh has the layout): one work
// item per address. Addresses are in host byte order; results are next hops or 0xFFFF.
#include "common/dir24_8_layout.h"
#include "common/portable.h"

KERNEL void ipv4_dir24_8_lookup(GLOBAL const uint32_t* RESTRICT addrs,
                                GLOBAL uint16_t* RESTRICT next_hops,
                                GLOBAL const uint16_t* RESTRICT tbl24,
                                GLOBAL const uint16_t* RESTRICT tbllong, uint32_t count) {
  const uint32_t i = GLOBAL_ID();
  if (i >= count) return;
  const uint32_t addr = addrs[i];
  const uint16_t e = LOAD_RO(&tbl24[addr >> DIR24_8_SEGMENT_BITS]);
  const uint32_t segment = (uint32_t)e - DIR24_8_SEGMENT_FLAG;
  uint16_t hop = e;
  if (e >= DIR24_8_SEGMENT_FLAG && segment < DIR24_8_MAX_SEGMENTS)
    hop = LOAD_RO(&tbllong[(segment << DIR24_8_SEGMENT_BITS) | (addr & DIR24_8_SEGMENT_MASK)]);
  next_hops[i] = hop;
}
