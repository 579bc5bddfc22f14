#include "lib/dir24_8.hh"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "lib/table_memory.hh"
#include "lib/uniform_draws.hh"

namespace fulcrum {
namespace {

constexpr uint8_t kTbl24Bits = 24;
constexpr int kFirstOctetShift = 24;
constexpr int kOctetBits = 8;
constexpr uint32_t kOctetMask = 0xFF;

std::string format_prefix(uint32_t prefix, uint8_t len) {
  std::string s;
  for (int shift = kFirstOctetShift; shift >= 0; shift -= kOctetBits) {
    s += std::to_string((prefix >> shift) & kOctetMask);
    s += shift > 0 ? '.' : '/';
  }
  return s + std::to_string(len);
}

uint32_t prefix_mask(uint8_t len) {
  return len == 0 ? 0 : ~uint32_t{0} << (Dir24_8::kMaxPrefixLen - len);
}

}  // namespace

Dir24_8::Dir24_8() = default;
Dir24_8::~Dir24_8() = default;

Status Dir24_8::add(uint32_t prefix, uint8_t len, uint16_t next_hop) {
  if (len > kMaxPrefixLen)
    return make_error("prefix length " + std::to_string(len) + " out of range 0..32");
  if ((prefix & ~prefix_mask(len)) != 0)
    return make_error("host bits set in " + format_prefix(prefix, len));
  if (next_hop > kMaxNextHop)
    return make_error("next hop " + std::to_string(next_hop) + " out of range 0.." +
                      std::to_string(kMaxNextHop));
  routes_.push_back(Route{prefix, len, next_hop});
  return {};
}

Status Dir24_8::build() {
  // Shorter prefixes first: a longer prefix overwrites what a shorter one wrote. Equal prefixes
  // stay in insertion order, and only the last one is kept.
  std::stable_sort(routes_.begin(), routes_.end(), [](const Route& a, const Route& b) {
    return a.len != b.len ? a.len < b.len : a.prefix < b.prefix;
  });
  std::vector<Route> unique;
  unique.reserve(routes_.size());
  for (size_t i = 0; i < routes_.size(); ++i) {
    bool superseded = i + 1 < routes_.size() && routes_[i + 1].len == routes_[i].len &&
                      routes_[i + 1].prefix == routes_[i].prefix;
    if (!superseded) unique.push_back(routes_[i]);
  }
  routes_ = std::move(unique);

  // Check the TBLlong capacity before touching the tables, so a failed build leaves them intact.
  std::vector<uint32_t> long_blocks;
  for (const Route& r : routes_)
    if (r.len > kTbl24Bits) long_blocks.push_back(r.prefix >> kSegmentBits);
  std::sort(long_blocks.begin(), long_blocks.end());
  size_t needed = std::unique(long_blocks.begin(), long_blocks.end()) - long_blocks.begin();
  if (needed > kMaxSegments)
    return make_error(std::to_string(needed) +
                      " /24 blocks hold routes longer than /24; TBLlong holds at most " +
                      std::to_string(kMaxSegments) + " segments");

  const size_t tbl24_bytes = size_t{kTbl24Entries} * sizeof(uint16_t);
  if (!tbl24_mem_) {
    tbl24_mem_ = TableMemory::allocate(tbl24_bytes, "dir24_8");
    if (!tbl24_mem_) return make_error("cannot allocate 32 MiB for the DIR-24-8 TBL24");
  }
  uint16_t* tbl24 = static_cast<uint16_t*>(tbl24_mem_->data());
  static_assert(kNoRoute == 0xFFFF, "memset below fills with kNoRoute");
  std::memset(tbl24, 0xFF, tbl24_bytes);

  std::vector<uint16_t> tbllong;
  tbllong.reserve(needed * kSegmentEntries);
  for (const Route& r : routes_) {
    if (r.len <= kTbl24Bits) {
      uint32_t first = r.prefix >> kSegmentBits;
      std::fill_n(tbl24 + first, size_t{1} << (kTbl24Bits - r.len), r.next_hop);
      continue;
    }
    uint16_t& e = tbl24[r.prefix >> kSegmentBits];
    if (!is_segment(e)) {
      // The segment starts as the /24's current verdict: the covering route or kNoRoute.
      uint16_t segment = static_cast<uint16_t>(tbllong.size() / kSegmentEntries);
      tbllong.resize(tbllong.size() + kSegmentEntries, e);
      e = static_cast<uint16_t>(kSegmentFlag | segment);
    }
    size_t base =
        (static_cast<size_t>(e - kSegmentFlag) << kSegmentBits) | (r.prefix & kSegmentIndexMask);
    std::fill_n(tbllong.begin() + static_cast<long>(base), size_t{1} << (kMaxPrefixLen - r.len),
                r.next_hop);
  }

  segments_ = tbllong.size() / kSegmentEntries;
  tbllong_mem_.reset();
  tbllong_ = nullptr;
  if (!tbllong.empty()) {
    tbllong_mem_ = TableMemory::allocate(tbllong.size() * sizeof(uint16_t), "dir24_8");
    if (!tbllong_mem_) {
      tbl24_ = nullptr;
      return make_error("cannot allocate " + std::to_string(tbllong.size() * sizeof(uint16_t)) +
                        " bytes for the DIR-24-8 TBLlong");
    }
    std::memcpy(tbllong_mem_->data(), tbllong.data(), tbllong.size() * sizeof(uint16_t));
    tbllong_ = static_cast<const uint16_t*>(tbllong_mem_->data());
  }
  tbl24_ = tbl24;
  measure_working_set();
  return {};
}

void Dir24_8::measure_working_set() {
  // A line of TBL24 that holds no route is never read by a packet that has one; with a default
  // route every line is.
  constexpr size_t kLineBytes = 64;
  constexpr size_t kEntriesPerLine = kLineBytes / sizeof(uint16_t);
  size_t lines = 0, routed = 0;
  for (size_t l = 0; l < kTbl24Entries / kEntriesPerLine; ++l) {
    size_t here = 0;
    for (size_t k = 0; k < kEntriesPerLine; ++k)
      here += tbl24_[l * kEntriesPerLine + k] != kNoRoute ? 1 : 0;
    lines += here != 0 ? 1 : 0;
    routed += here;
  }
  working_set_ = lines * kLineBytes + segments_ * kSegmentEntries * sizeof(uint16_t);
  accesses_ = routed == 0 ? 1 : 1 + static_cast<double>(segments_) / static_cast<double>(routed);
}

size_t Dir24_8::memory_bytes() const {
  size_t bytes = segments_ * kSegmentEntries * sizeof(uint16_t);
  if (tbl24_mem_) bytes += size_t{kTbl24Entries} * sizeof(uint16_t);
  return bytes;
}

std::vector<uint32_t> Dir24_8::sample_addresses(size_t n) const {
  return draw_uniform(routes_, n, [](const Route& r, std::mt19937_64& rng) {
    const uint32_t host = r.len >= 32 ? 0 : ~uint32_t{0} >> r.len;
    return r.prefix | (static_cast<uint32_t>(rng()) & host);
  });
}

}  // namespace fulcrum
