#include "elements/standard/classifier.hh"

#include <algorithm>
#include <charconv>
#include <limits>
#include <string>

namespace fulcrum {
namespace {

constexpr std::string_view kMatchAll = "-";
constexpr uint32_t kMaxOffset = std::numeric_limits<uint16_t>::max();
constexpr size_t kChunkBytes = sizeof(uint64_t);
constexpr int kHexBase = 16;
constexpr int kDecimalBase = 10;

std::string quoted(std::string_view s) {
  return "'" + std::string(s) + "'";
}

std::vector<std::string_view> split_words(std::string_view s) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (true) {
    i = s.find_first_not_of(" \t\n", i);
    if (i == std::string_view::npos) return words;
    size_t j = s.find_first_of(" \t\n", i);
    if (j == std::string_view::npos) j = s.size();
    words.push_back(s.substr(i, j - i));
    i = j;
  }
}

// Hex digits to bytes; the error message names what went wrong.
bool parse_hex(std::string_view hex, std::vector<uint8_t>& out, std::string& error) {
  if (hex.size() % 2 != 0) {
    error = "odd number of hex digits in " + quoted(hex);
    return false;
  }
  out.clear();
  for (size_t i = 0; i < hex.size(); i += 2) {
    uint8_t byte = 0;
    auto [p, ec] = std::from_chars(hex.data() + i, hex.data() + i + 2, byte, kHexBase);
    if (ec != std::errc() || p != hex.data() + i + 2) {
      error = "bad hex digit in " + quoted(hex);
      return false;
    }
    out.push_back(byte);
  }
  return true;
}

}  // namespace

Status Classifier::configure(Args& args) {
  std::vector<std::string> patterns =
      args.rest("PATTERN",
                "1 to 64 patterns, one per output. A pattern is a list of space-separated "
                "clauses OFFSET/HEX or OFFSET/HEX%MASK that must all match: the bytes at decimal "
                "OFFSET, ANDed with MASK (as many hex digits as HEX), equal HEX. \"-\" matches "
                "every packet; a packet too "
                "short for a clause does not match it");
  if (Status s = args.finish(); !s) return s;
  if (patterns.empty()) return args.error("expected at least one pattern");
  if (patterns.size() > kMaxOutputs)
    return args.error("too many patterns (" + std::to_string(patterns.size()) + ", at most " +
                      std::to_string(kMaxOutputs) + ")");
  chunks_.clear();
  for (size_t i = 0; i < patterns.size(); ++i) {
    if (Status s = add_pattern(args, static_cast<int>(i) + 1, patterns[i]); !s) return s;
    pattern_end_[i] = static_cast<uint32_t>(chunks_.size());
  }
  npatterns_ = static_cast<int>(patterns.size());
  set_noutputs(npatterns_);
  return {};
}

Status Classifier::add_pattern(const Args& args, int number, std::string_view pattern) {
  const std::string where = "pattern " + std::to_string(number) + ": ";
  for (std::string_view clause : split_words(pattern)) {
    if (clause == kMatchAll) continue;
    const size_t slash = clause.find('/');
    const std::string_view offset_text = clause.substr(0, slash);
    uint32_t offset = 0;
    auto [p, ec] = std::from_chars(offset_text.data(), offset_text.data() + offset_text.size(),
                                   offset, kDecimalBase);
    if (slash == std::string_view::npos || slash + 1 == clause.size() || offset_text.empty() ||
        ec != std::errc() || p != offset_text.data() + offset_text.size())
      return args.error(where + "expected OFFSET/HEX, got " + quoted(clause));

    std::string_view value_text = clause.substr(slash + 1);
    std::string_view mask_text;
    const size_t percent = value_text.find('%');
    const bool has_mask = percent != std::string_view::npos;
    if (has_mask) {
      mask_text = value_text.substr(percent + 1);
      value_text = value_text.substr(0, percent);
    }
    std::vector<uint8_t> value, mask;
    std::string error;
    if (!parse_hex(value_text, value, error)) return args.error(where + error);
    if (value.empty()) return args.error(where + "expected OFFSET/HEX, got " + quoted(clause));
    if (has_mask) {
      if (!parse_hex(mask_text, mask, error)) return args.error(where + error);
      if (mask.size() != value.size())
        return args.error(where + "mask " + quoted(mask_text) + " and value " + quoted(value_text) +
                          " differ in length");
    } else {
      mask.assign(value.size(), std::numeric_limits<uint8_t>::max());
    }
    if (offset + value.size() > kMaxOffset)
      return args.error(where + "offset " + std::to_string(offset) + " too large in " +
                        quoted(clause));

    for (size_t k = 0; k < value.size(); k += kChunkBytes) {
      Chunk c{};
      c.offset = static_cast<uint16_t>(offset + k);
      c.size = static_cast<uint8_t>(std::min(kChunkBytes, value.size() - k));
      uint8_t v[kChunkBytes] = {}, m[kChunkBytes] = {};
      for (size_t b = 0; b < c.size; ++b) {
        m[b] = mask[k + b];
        v[b] = value[k + b] & m[b];
      }
      std::memcpy(&c.value, v, sizeof(v));
      std::memcpy(&c.mask, m, sizeof(m));
      chunks_.push_back(c);
    }
  }
  return {};
}

}  // namespace fulcrum
