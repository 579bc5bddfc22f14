// NameTable: longest-name-prefix match for NDN names (wire format: src/lib/ndn_wire.hh), with
// one hash table per component count, as the NDN forwarder of G-Opt and P4C-opt (paper 003).
//
// A name is looked up from its longest prefix present in the table down to one component: the
// prefix of c components is looked up in table c, keyed by the CRC32 of its wire bytes (the
// first c component TLVs, hashed component by component so every prefix's hash falls out of one
// pass over the name). A hash match is confirmed by comparing the stored wire bytes, so hash
// collisions never misroute. The empty name "/" is the default route.
//
// Each table is open addressing over 64-byte buckets of 4 entries (hash, name offset and length
// in a byte pool, port), at most half full, probing the next bucket when one is full.
// lookup_bulk() prefetches, for a group of names, the first bucket of their kPrefetchDepths
// longest candidate prefixes before resolving the previous group.
//
// Usage: add() every name, build(), then lookup()/lookup_bulk() from any number of threads.
#pragma once

#include <nmmintrin.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/result.hh"
#include "lib/prefetch_group.hh"
#include "lib/table_memory.hh"

namespace fulcrum {

// A name parsed out of a packet: its wire bytes, component boundaries and prefix hashes.
struct ParsedName {
  static constexpr uint32_t kMaxComponents = 16;
  const uint8_t* bytes = nullptr;             // the Name VALUE
  uint32_t components = 0;                    // parsed components (at most kMaxComponents)
  std::array<uint32_t, kMaxComponents> end;   // end[c - 1]: bytes of the first c components
  std::array<uint32_t, kMaxComponents> hash;  // hash[c - 1]: hash of those bytes
};

class NameTable {
 public:
  static constexpr uint16_t kNoRoute = 0xFFFF;
  static constexpr uint16_t kMaxPort = 0xFFFE;
  static constexpr uint32_t kMaxComponents = ParsedName::kMaxComponents;
  static constexpr size_t kPrefetchGroup = 8;
  static constexpr uint32_t kPrefetchDepths = 4;

  enum class Parse : uint8_t { kOk, kNotNdn, kMalformed };

  NameTable();
  ~NameTable();
  NameTable(const NameTable&) = delete;
  NameTable& operator=(const NameTable&) = delete;

  // Adds a name (URI, "/a/b/c") routed to `port`. Adding a name twice keeps the last port.
  // Errors: bad URI, more than kMaxComponents components, port above kMaxPort.
  Status add(std::string_view uri, uint16_t port);
  // (Re)builds the hash tables from every name added so far.
  Status build();

  // Parses the Interest or Data packet in an Ethernet frame of `len` bytes: kNotNdn when the
  // frame is too short for an Ethernet header or its EtherType is not ndn::kEtherType;
  // kMalformed when the TLVs do not parse or overrun the frame.
  static Parse parse_frame(const uint8_t* frame, uint32_t len, ParsedName& out);
  // Parses a Name VALUE (component TLVs) of `len` bytes.
  static bool parse_name(const uint8_t* value, uint32_t len, ParsedName& out);
  // The hash of one more component (its TLV bytes), continuing from `state`.
  static uint32_t hash_component(uint32_t state, const uint8_t* p, uint32_t len) {
    constexpr uint32_t kWord = 8;
    uint64_t s = state;
    uint32_t i = 0;
    for (; i + kWord <= len; i += kWord) {
      uint64_t w;
      std::memcpy(&w, p + i, kWord);
      s = _mm_crc32_u64(s, w);
    }
    for (; i < len; ++i) s = _mm_crc32_u8(static_cast<uint32_t>(s), p[i]);
    return static_cast<uint32_t>(s);
  }

  // The port of the longest prefix of `name` in the table (the default route, else kNoRoute).
  uint16_t lookup(const ParsedName& name) const;
  // lookup() of a URI (tests, tools); kNoRoute also for a bad URI.
  uint16_t lookup(std::string_view uri) const;
  // lookup() for n names with group prefetch.
  void lookup_bulk(const ParsedName* names, uint16_t* out, size_t n) const;
  // The same in groups of `group` (valid_prefetch_group; another value: kPrefetchGroup).
  void lookup_bulk(const ParsedName* names, uint16_t* out, size_t n, unsigned group) const;
  static constexpr unsigned kDefaultPrefetch = kPrefetchGroup;

  size_t size() const { return names_.size(); }
  size_t memory_bytes() const;
  // n of the table's names drawn uniformly, deterministic; none without names. They point into
  // the table's own bytes: valid until its next add() or build(). The keys of `PREFETCH auto`'s
  // probe of the lookup (elements/ndn/ndn_lookup.cc).
  std::vector<ParsedName> sample_names(size_t n) const;

 private:
  static constexpr uint32_t kBucketEntries = 4;
  static constexpr uint32_t kHashSeed = 0x6e646e31;

  struct Entry {
    uint32_t hash;
    uint32_t offset;  // into pool_
    uint16_t len;     // 0: empty slot
    uint16_t port;
    uint32_t reserved;
  };
  struct alignas(64) Bucket {
    Entry e[kBucketEntries];
  };
  static_assert(sizeof(Bucket) == 64);

  struct Depth {
    std::unique_ptr<TableMemory> mem;
    Bucket* buckets = nullptr;
    uint32_t mask = 0;
  };

  struct Name {
    std::string wire;
    uint32_t components;
    uint16_t port;
  };

  template <size_t G>
  void lookup_grouped(const ParsedName* names, uint16_t* out, size_t n) const;
  uint16_t probe(uint32_t depth, uint32_t hash, const uint8_t* bytes, uint32_t len) const;
  void prefetch(const ParsedName& name) const;

  std::vector<Name> names_;
  std::unordered_map<std::string, size_t> index_;  // wire bytes -> position in names_
  std::string pool_;
  std::array<Depth, kMaxComponents + 1> depths_;
  uint32_t depth_mask_ = 0;  // bit c: table c has entries
  uint16_t default_ = kNoRoute;
};

}  // namespace fulcrum
