// IPv6 longest-prefix match on the compressed trie of paper 003 §3.6 (src/lib/ip6_trie.hh has
// the layout): one work item per address, the walk of Ip6Trie::lookup. Addresses are 16 bytes
// each in network byte order (as they sit in the packet); results are next hops or 0xFFFF.
// headers: 4 uint64 per group {path hi, path lo, fallback hop in bits 0..15, unused}.
#include "common/ip6_trie_layout.h"
#include "common/portable.h"

#define IP6_ADDR_BYTES 16u
#define IP6_WORD_BYTES 8u
#define IP6_WORD_BITS 64u
#define IP6_LAST_BYTE_SHIFT 56u
#define IP6_ALL_ONES (~(uint64_t)0)

INLINE uint64_t ip6_load_be64(GLOBAL const uint8_t* b) {
  uint64_t w = 0;
  for (uint32_t k = 0; k < IP6_WORD_BYTES; ++k) w = (w << 8) | b[k];
  return w;
}

INLINE uint64_t ip6_hi_mask(uint32_t bits) {
  return bits >= IP6_WORD_BITS ? IP6_ALL_ONES
         : bits == 0           ? (uint64_t)0
                               : IP6_ALL_ONES << (IP6_WORD_BITS - bits);
}

INLINE uint64_t ip6_lo_mask(uint32_t bits) {
  return bits <= IP6_WORD_BITS ? (uint64_t)0 : IP6_ALL_ONES << (2 * IP6_WORD_BITS - bits);
}

KERNEL void ipv6_trie_lookup(GLOBAL const uint8_t* RESTRICT addrs,
                             GLOBAL uint16_t* RESTRICT next_hops,
                             GLOBAL const uint32_t* RESTRICT tbl24,
                             GLOBAL const uint32_t* RESTRICT groups,
                             GLOBAL const uint64_t* RESTRICT headers, uint32_t count) {
  const uint32_t i = GLOBAL_ID();
  if (i >= count) return;
  GLOBAL const uint8_t* a = addrs + (size_t)i * IP6_ADDR_BYTES;
  const uint64_t hi = ip6_load_be64(a);
  const uint64_t lo = ip6_load_be64(a + IP6_WORD_BYTES);
  uint32_t e = LOAD_RO(&tbl24[hi >> IP6_TRIE_TBL24_SHIFT]);
  uint32_t expect = IP6_TRIE_FIRST_GROUP_BYTE;  // the byte a link that skips nothing leads to
  while (e & IP6_TRIE_LINK) {
    const uint32_t byte = (e >> IP6_TRIE_BYTE_SHIFT) & IP6_TRIE_BYTE_MASK;
    const uint32_t g = e & IP6_TRIE_GROUP_MASK;
    const uint64_t w = byte < IP6_WORD_BYTES ? hi : lo;
    const uint32_t b =
        (uint32_t)(w >> (IP6_LAST_BYTE_SHIFT - IP6_TRIE_STRIDE_BITS * (byte % IP6_WORD_BYTES))) &
        (IP6_TRIE_GROUP_ENTRIES - 1);
    const uint32_t next = LOAD_RO(&groups[(size_t)g * IP6_TRIE_GROUP_ENTRIES + b]);
    if (byte != expect) {
      // The link skipped bytes: the address must carry the group's path.
      GLOBAL const uint64_t* h = headers + (size_t)g * IP6_TRIE_HEADER_WORDS;
      const uint32_t bits = byte * IP6_TRIE_STRIDE_BITS;
      if ((((hi & ip6_hi_mask(bits)) ^ LOAD_RO(&h[0])) |
           ((lo & ip6_lo_mask(bits)) ^ LOAD_RO(&h[1]))) != 0) {
        next_hops[i] = (uint16_t)(LOAD_RO(&h[2]) & IP6_TRIE_HOP_MASK);
        return;
      }
    }
    expect = byte + 1;
    e = next;
  }
  next_hops[i] = (uint16_t)(e & IP6_TRIE_HOP_MASK);
}
