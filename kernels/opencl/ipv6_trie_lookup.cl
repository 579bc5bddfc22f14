// IPv6 longest-prefix match on the compressed trie of paper 003 §3.6 (src/lib/ip6_trie.hh has
// the layout): one work item per address, the walk of Ip6Trie::lookup. Addresses are 16 bytes
// each in network byte order (as they sit in the packet); results are next hops or 0xFFFF.
// headers: 4 ulong per group {path hi, path lo, fallback hop in bits 0..15, unused}.

#define IP6_TRIE_LINK 0x80000000u
#define IP6_TRIE_BYTE_SHIFT 27u
#define IP6_TRIE_BYTE_MASK 0xFu
#define IP6_TRIE_GROUP_MASK 0x7FFFFFFu
#define IP6_TRIE_HOP_MASK 0xFFFFu
#define IP6_TRIE_TBL24_SHIFT 40u
#define IP6_TRIE_FIRST_GROUP_BYTE 3u
#define IP6_TRIE_GROUP_BITS 8u
#define IP6_TRIE_GROUP_ENTRIES 256u
#define IP6_TRIE_HEADER_WORDS 4u
#define IP6_ADDR_BYTES 16u
#define IP6_WORD_BYTES 8u
#define IP6_WORD_BITS 64u
#define IP6_LAST_BYTE_SHIFT 56u

static ulong load_be64(__global const uchar* b) {
  ulong w = 0;
  for (uint k = 0; k < IP6_WORD_BYTES; ++k) w = (w << 8) | b[k];
  return w;
}

static ulong hi_mask(uint bits) {
  return bits >= IP6_WORD_BITS ? ~0UL : bits == 0 ? 0UL : ~0UL << (IP6_WORD_BITS - bits);
}

static ulong lo_mask(uint bits) {
  return bits <= IP6_WORD_BITS ? 0UL : ~0UL << (2 * IP6_WORD_BITS - bits);
}

__kernel void ipv6_trie_lookup(__global const uchar* addrs, __global ushort* next_hops,
                               __global const uint* tbl24, __global const uint* groups,
                               __global const ulong* headers, uint count) {
  const uint i = get_global_id(0);
  if (i >= count) return;
  __global const uchar* a = addrs + (size_t)i * IP6_ADDR_BYTES;
  const ulong hi = load_be64(a);
  const ulong lo = load_be64(a + IP6_WORD_BYTES);
  uint e = tbl24[hi >> IP6_TRIE_TBL24_SHIFT];
  uint expect = IP6_TRIE_FIRST_GROUP_BYTE;  // the byte a link that skips nothing leads to
  while (e & IP6_TRIE_LINK) {
    const uint byte = (e >> IP6_TRIE_BYTE_SHIFT) & IP6_TRIE_BYTE_MASK;
    const uint g = e & IP6_TRIE_GROUP_MASK;
    const ulong w = byte < IP6_WORD_BYTES ? hi : lo;
    const uint b =
        (uint)(w >> (IP6_LAST_BYTE_SHIFT - IP6_TRIE_GROUP_BITS * (byte % IP6_WORD_BYTES))) &
        (IP6_TRIE_GROUP_ENTRIES - 1);
    const uint next = groups[(size_t)g * IP6_TRIE_GROUP_ENTRIES + b];
    if (byte != expect) {
      // The link skipped bytes: the address must carry the group's path.
      __global const ulong* h = headers + (size_t)g * IP6_TRIE_HEADER_WORDS;
      const uint bits = byte * IP6_TRIE_GROUP_BITS;
      if ((((hi & hi_mask(bits)) ^ h[0]) | ((lo & lo_mask(bits)) ^ h[1])) != 0) {
        next_hops[i] = (ushort)(h[2] & IP6_TRIE_HOP_MASK);
        return;
      }
    }
    expect = byte + 1;
    e = next;
  }
  next_hops[i] = (ushort)(e & IP6_TRIE_HOP_MASK);
}
