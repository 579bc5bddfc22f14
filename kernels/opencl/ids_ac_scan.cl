// The IDS content prefilter (ENGINE ac, src/offload/ids_tables.hh): one work item per packet
// walks its region of the packed bytes with the Aho-Corasick DFA of src/lib/ids/aho_corasick.hh,
// one table load per byte, and records every step into a state with outputs.
// regions: per packet {uint offset into bytes, uint length}. classes: uchar[256] byte -> class.
// table: entries premultiplied by the stride, IDS_AC_MATCH_BIT set when the target has outputs.
// results: per packet IDS_AC_RESULT_WORDS uints {count, then (state, end) for the first
// IDS_AC_MAX_MATCHES steps}; count keeps counting past them (the packet is then overflowed).

#define IDS_AC_MATCH_BIT 0x80000000u
#define IDS_AC_STATE_MASK 0x7FFFFFFFu
#define IDS_AC_MAX_MATCHES 31u
#define IDS_AC_RESULT_WORDS (1u + 2u * IDS_AC_MAX_MATCHES)
#define IDS_AC_REGION_WORDS 2u

__kernel void ids_ac_scan(__global const uchar* bytes, __global const uint* regions,
                          __global const uchar* classes, __global const uint* table,
                          __global uint* results, uint count) {
  const uint i = get_global_id(0);
  if (i >= count) return;
  const uint offset = regions[(size_t)i * IDS_AC_REGION_WORDS];
  const uint len = regions[(size_t)i * IDS_AC_REGION_WORDS + 1];
  __global const uchar* msg = bytes + offset;
  __global uint* out = results + (size_t)i * IDS_AC_RESULT_WORDS;
  uint s = 0;
  uint n = 0;
  for (uint k = 0; k < len; ++k) {
    const uint e = table[s + classes[msg[k]]];
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
