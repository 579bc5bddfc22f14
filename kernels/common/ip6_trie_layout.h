// The compressed IPv6 trie's encoding (src/lib/ip6_trie.hh builds it, kernels/ipv6_trie_lookup.cl
// walks it): a TBL24 indexed by the top IP6_TRIE_TBL24_BITS address bits, then groups of
// IP6_TRIE_GROUP_ENTRIES entries, one per value of the next address byte. An entry with
// IP6_TRIE_LINK set links to group (entry & IP6_TRIE_GROUP_MASK) indexed by address byte
// (entry >> IP6_TRIE_BYTE_SHIFT) & IP6_TRIE_BYTE_MASK; otherwise its low 16 bits are the next
// hop. Each group has IP6_TRIE_HEADER_WORDS 64-bit header words: path hi, path lo, fallback hop.
// Plain constants, so the host's Ip6Trie takes its own from here.
#ifndef FULCRUM_KERNELS_COMMON_IP6_TRIE_LAYOUT_H
#define FULCRUM_KERNELS_COMMON_IP6_TRIE_LAYOUT_H

#define IP6_TRIE_TBL24_BITS 24u
#define IP6_TRIE_STRIDE_BITS 8u  // every level below TBL24: one address byte
#define IP6_TRIE_GROUP_ENTRIES (1u << IP6_TRIE_STRIDE_BITS)
#define IP6_TRIE_LINK 0x80000000u
#define IP6_TRIE_BYTE_SHIFT 27u
#define IP6_TRIE_BYTE_MASK 0xFu
#define IP6_TRIE_GROUP_MASK ((1u << IP6_TRIE_BYTE_SHIFT) - 1u)
#define IP6_TRIE_HOP_MASK 0xFFFFu
#define IP6_TRIE_HEADER_WORDS 4u
#define IP6_TRIE_TBL24_SHIFT (64u - IP6_TRIE_TBL24_BITS)  // of the address's high 64 bits
#define IP6_TRIE_FIRST_GROUP_BYTE (IP6_TRIE_TBL24_BITS / IP6_TRIE_STRIDE_BITS)

#endif  // FULCRUM_KERNELS_COMMON_IP6_TRIE_LAYOUT_H
