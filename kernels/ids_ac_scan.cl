// The IDS content prefilter (ENGINE ac, src/offload/ids_tables.hh): one work item per packet
// walks its region of the packed bytes with the Aho-Corasick DFA of src/lib/ids/aho_corasick.hh,
// one table load per byte, and records every step into a state with outputs.
// regions: per packet {uint32 offset into bytes, uint32 length}. classes: uint8[256] byte ->
// class, staged in local memory by each work group. table: entries premultiplied by the stride,
// IDS_AC_MATCH_BIT set when the target has outputs.
// results: per packet IDS_AC_RESULT_WORDS uint32 {count, then (state, end) for the first
// IDS_AC_MAX_MATCHES steps}; count keeps counting past them (the packet is then overflowed).
#include "common/ids_ac_layout.h"
#include "common/portable.h"

#define IDS_AC_REGION_WORDS 2u

KERNEL void ids_ac_scan(GLOBAL const uint8_t* RESTRICT bytes,
                        GLOBAL const uint32_t* RESTRICT regions,
                        GLOBAL const uint8_t* RESTRICT classes,
                        GLOBAL const uint32_t* RESTRICT table, GLOBAL uint32_t* RESTRICT results,
                        uint32_t count) {
  LOCAL_MEM uint8_t cls[IDS_AC_ALPHABET];
  for (uint32_t c = LOCAL_ID(); c < IDS_AC_ALPHABET; c += GROUP_SIZE()) cls[c] = classes[c];
  LOCAL_BARRIER();
  const uint32_t i = GLOBAL_ID();
  if (i >= count) return;
  const uint32_t offset = regions[(size_t)i * IDS_AC_REGION_WORDS];
  const uint32_t len = regions[(size_t)i * IDS_AC_REGION_WORDS + 1];
  GLOBAL const uint8_t* msg = bytes + offset;
  GLOBAL uint32_t* out = results + (size_t)i * IDS_AC_RESULT_WORDS;
  uint32_t s = 0;
  uint32_t n = 0;
  for (uint32_t k = 0; k < len; ++k) {
    const uint32_t e = LOAD_RO(&table[s + cls[LOAD_RO(&msg[k])]]);
    s = e & IDS_AC_STATE_MASK;
    if (e & IDS_AC_MATCH_BIT) {
      if (n < IDS_AC_MAX_MATCHES) {
        out[1 + 2 * n] = s;
        out[2 + 2 * n] = k + 1;
      }
      ++n;
    }
  }
  out[0] = n;
}
