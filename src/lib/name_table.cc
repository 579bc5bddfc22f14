#include "lib/name_table.hh"

#include <algorithm>
#include <bit>
#include <optional>

#include "lib/ndn_wire.hh"
#include "lib/uniform_draws.hh"

namespace fulcrum {
namespace {

constexpr uint32_t kMaxWireLen = 0xFFFF;
constexpr uint32_t kBitsPerByte = 8;
constexpr uint32_t kMaxLoadDivisor = 2;  // tables at most half full
constexpr uint32_t kTopBit = 31;

}  // namespace

NameTable::NameTable() = default;
NameTable::~NameTable() = default;

Status NameTable::add(std::string_view uri, uint16_t port) {
  std::optional<std::vector<std::string>> comps = ndn::parse_uri(uri);
  if (!comps) return make_error("bad name '" + std::string(uri) + "'");
  if (comps->size() > kMaxComponents)
    return make_error("name '" + std::string(uri) + "' has more than " +
                      std::to_string(kMaxComponents) + " components");
  if (port > kMaxPort) return make_error("port " + std::to_string(port) + " out of range");
  std::string wire = ndn::encode_components(*comps);
  if (wire.size() > kMaxWireLen) return make_error("name '" + std::string(uri) + "' too long");
  if (comps->empty()) {
    default_ = port;
    return {};
  }
  auto [it, inserted] = index_.try_emplace(wire, names_.size());
  if (inserted)
    names_.push_back({std::move(wire), static_cast<uint32_t>(comps->size()), port});
  else
    names_[it->second].port = port;
  return {};
}

Status NameTable::build() {
  std::array<size_t, kMaxComponents + 1> count{};
  for (const Name& n : names_) ++count[n.components];
  depth_mask_ = 0;
  pool_.clear();
  for (uint32_t c = 1; c <= kMaxComponents; ++c) {
    Depth& d = depths_[c];
    d = Depth{};
    if (count[c] == 0) continue;
    const size_t want =
        std::max<size_t>(1, (count[c] * kMaxLoadDivisor + kBucketEntries - 1) / kBucketEntries);
    const size_t buckets = std::bit_ceil(want);
    d.mem = TableMemory::allocate(buckets * sizeof(Bucket), "ndn_names");
    if (d.mem == nullptr) return make_error("out of memory for the name table");
    d.buckets = static_cast<Bucket*>(d.mem->data());
    d.mask = static_cast<uint32_t>(buckets - 1);
    depth_mask_ |= 1u << c;
  }
  ParsedName parsed;
  for (const Name& n : names_) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(n.wire.data());
    parse_name(bytes, static_cast<uint32_t>(n.wire.size()), parsed);
    const uint32_t hash = parsed.hash[n.components - 1];
    const Depth& d = depths_[n.components];
    for (uint32_t b = hash & d.mask;; b = (b + 1) & d.mask) {
      Entry* slot = nullptr;
      for (Entry& e : d.buckets[b].e) {
        if (e.len == 0) {
          slot = &e;
          break;
        }
      }
      if (slot == nullptr) continue;
      *slot = Entry{hash, static_cast<uint32_t>(pool_.size()), static_cast<uint16_t>(n.wire.size()),
                    n.port, 0};
      pool_ += n.wire;
      break;
    }
  }
  return {};
}

size_t NameTable::memory_bytes() const {
  size_t bytes = pool_.size();
  for (const Depth& d : depths_)
    if (d.mem) bytes += d.mem->size();
  return bytes;
}

NameTable::Parse NameTable::parse_frame(const uint8_t* frame, uint32_t len, ParsedName& out) {
  if (len < ndn::kEtherHeaderLen) return Parse::kNotNdn;
  const uint16_t ether_type = static_cast<uint16_t>((frame[ndn::kEtherTypeOffset] << kBitsPerByte) |
                                                    frame[ndn::kEtherTypeOffset + 1]);
  if (ether_type != ndn::kEtherType) return Parse::kNotNdn;
  const uint8_t* p = frame + ndn::kEtherHeaderLen;
  uint32_t n = len - ndn::kEtherHeaderLen;
  uint32_t pos = 0, type = 0, l = 0;
  if (!ndn::read_var(p, n, &pos, &type) || (type != ndn::kTypeInterest && type != ndn::kTypeData))
    return Parse::kMalformed;
  if (!ndn::read_var(p, n, &pos, &l) || l > n - pos) return Parse::kMalformed;
  n = pos + l;
  if (!ndn::read_var(p, n, &pos, &type) || type != ndn::kTypeName) return Parse::kMalformed;
  if (!ndn::read_var(p, n, &pos, &l) || l > n - pos) return Parse::kMalformed;
  return parse_name(p + pos, l, out) ? Parse::kOk : Parse::kMalformed;
}

bool NameTable::parse_name(const uint8_t* value, uint32_t len, ParsedName& out) {
  out.bytes = value;
  out.components = 0;
  uint32_t pos = 0, hash = kHashSeed;
  while (pos < len && out.components < kMaxComponents) {
    const uint32_t start = pos;
    uint32_t type = 0, l = 0;
    if (!ndn::read_var(value, len, &pos, &type) || !ndn::read_var(value, len, &pos, &l) ||
        l > len - pos)
      return false;
    pos += l;
    hash = hash_component(hash, value + start, pos - start);
    out.end[out.components] = pos;
    out.hash[out.components] = hash;
    ++out.components;
  }
  return true;
}

uint16_t NameTable::probe(uint32_t depth, uint32_t hash, const uint8_t* bytes, uint32_t len) const {
  const Depth& d = depths_[depth];
  for (uint32_t b = hash & d.mask;; b = (b + 1) & d.mask) {
    for (const Entry& e : d.buckets[b].e) {
      if (e.len == 0) return kNoRoute;
      if (e.hash == hash && e.len == len && std::memcmp(pool_.data() + e.offset, bytes, len) == 0)
        return e.port;
    }
  }
}

uint16_t NameTable::lookup(const ParsedName& name) const {
  uint32_t cand = depth_mask_ & ((2u << name.components) - 1);
  while (cand != 0) {
    const uint32_t c = kTopBit - std::countl_zero(cand);
    cand &= ~(1u << c);
    const uint16_t port = probe(c, name.hash[c - 1], name.bytes, name.end[c - 1]);
    if (port != kNoRoute) return port;
  }
  return default_;
}

uint16_t NameTable::lookup(std::string_view uri) const {
  std::optional<std::vector<std::string>> comps = ndn::parse_uri(uri);
  if (!comps) return kNoRoute;
  const std::string wire = ndn::encode_components(*comps);
  ParsedName parsed;
  if (!parse_name(reinterpret_cast<const uint8_t*>(wire.data()), static_cast<uint32_t>(wire.size()),
                  parsed))
    return kNoRoute;
  return lookup(parsed);
}

void NameTable::prefetch(const ParsedName& name) const {
  uint32_t cand = depth_mask_ & ((2u << name.components) - 1);
  for (uint32_t i = 0; i < kPrefetchDepths && cand != 0; ++i) {
    const uint32_t c = kTopBit - std::countl_zero(cand);
    cand &= ~(1u << c);
    const Depth& d = depths_[c];
    __builtin_prefetch(&d.buckets[name.hash[c - 1] & d.mask]);
  }
}

void NameTable::lookup_bulk(const ParsedName* names, uint16_t* out, size_t n) const {
  lookup_grouped<kPrefetchGroup>(names, out, n);
}

void NameTable::lookup_bulk(const ParsedName* names, uint16_t* out, size_t n,
                            unsigned group) const {
  with_prefetch_group<kPrefetchGroup>(
      group, [&](auto g) { lookup_grouped<decltype(g)::value>(names, out, n); });
}

template <size_t G>
void NameTable::lookup_grouped(const ParsedName* names, uint16_t* out, size_t n) const {
  constexpr size_t kPrefetchGroup = G;
  for (size_t j = 0; j < std::min(n, kPrefetchGroup); ++j) prefetch(names[j]);
  for (size_t i = 0; i < n; i += kPrefetchGroup) {
    const size_t end = std::min(n, i + kPrefetchGroup);
    for (size_t j = end; j < std::min(n, end + kPrefetchGroup); ++j) prefetch(names[j]);
    for (size_t j = i; j < end; ++j) out[j] = lookup(names[j]);
  }
}

std::vector<ParsedName> NameTable::sample_names(size_t n) const {
  return draw_uniform(names_, n, [](const Name& name, std::mt19937_64&) {
    ParsedName p;
    parse_name(reinterpret_cast<const uint8_t*>(name.wire.data()),
               static_cast<uint32_t>(name.wire.size()), p);
    return p;
  });
}

}  // namespace fulcrum
