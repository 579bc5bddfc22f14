// StreamRules: IDS rules (src/lib/ids/rule_parser.hh, the packet IDS's rule language) compiled
// for a byte stream, the flow's bytes in one direction (StreamIDS, stream_ids.hh).
//
// Each rule becomes components, one Hyperscan expression each in one STREAMING database, and
// matches once every component has been found in the stream so far:
//   kLiteral  a content without distance/within and not followed by one: its bytes (nocase:
//             HS_FLAG_CASELESS); offset and depth count from the stream's first byte and are
//             checked on each reported occurrence (content_counts), not by Hyperscan, so that a
//             stream can be resumed from a tail of its bytes (StreamIDS's device path);
//   kChain    a content followed by relative contents (distance/within): one regex
//             `A[\s\S]{d,d+w-|B|}B...` (`^[\s\S]{o,o+depth-|A|}A...` when A has offset/depth),
//             nocase contents in (?i:...);
//   kPcre     a pcre with its i/s/m flags.
// A component is found once: every expression reports only its first match in a stream
// (HS_FLAG_SINGLEMATCH; a pcre like `abc[a-z]*` would otherwise report at every later byte),
// except literals with offset/depth, whose occurrences are checked one by one. A literal without
// them that ends in the tail a resumed stream is primed with was found before (found bits), so
// SINGLEMATCH loses nothing there.
// Literal components are also the patterns of a caseless Aho-Corasick DFA (the device prefilter,
// L7_OP_IDS_AC), component index = pattern id; case-sensitive contents are confirmed by bytes.
//
// Not applicable to a stream and skipped with a reason (the packet IDS's parser already skips
// rules with packet-only options such as ttl, flags, dsize, byte_test): protocols other than tcp;
// address or port lists other than any (a message carries none); negated contents (only
// decidable once the stream ends, which a FlowNf is not told); negative distances; a within
// shorter than its content; flowbits, threshold and detection_filter; flow:no_stream; rules with
// neither content nor pcre. flow:to_server limits a rule to requests, flow:to_client to
// responses; flow:established and only_stream add nothing (a proxied flow is an established
// stream).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.hh"
#include "lib/ids/aho_corasick.hh"
#include "lib/ids/hs_matcher.hh"
#include "lib/ids/rule.hh"
#include "lib/ids/rule_parser.hh"

namespace fulcrum::l7 {

struct StreamComponent {
  enum class Kind : uint8_t { kLiteral, kChain, kPcre };
  Kind kind = Kind::kLiteral;
  uint32_t rule = 0;  // index in StreamRules::rules()
  std::string bytes;  // kLiteral: the content
  bool nocase = false;
  uint32_t offset = 0;  // kLiteral: the occurrence starts at stream offset >= offset
  uint32_t depth = 0;   // kLiteral: and ends at or before offset + depth (0: no limit)
  std::string expr;     // the Hyperscan expression
  unsigned flags = 0;
};

inline constexpr uint8_t kRuleRequests = 1;
inline constexpr uint8_t kRuleResponses = 2;

struct StreamRule {
  uint32_t sid = 0;
  uint32_t rev = 0;
  std::string msg;
  uint32_t first = 0, count = 0;  // its components
  uint8_t dirs = kRuleRequests | kRuleResponses;
};

struct HsStreamFree {
  void operator()(hs_stream_t* s) const { hs_close_stream(s, nullptr, nullptr, nullptr); }
};
using HsStream = std::unique_ptr<hs_stream_t, HsStreamFree>;

class StreamRules {
 public:
  // Compiles `file`'s rules; the rules that do not apply to a stream, or that Hyperscan rejects,
  // join file.skipped. Fails when no rule is left.
  static Result<std::shared_ptr<const StreamRules>> compile(ids::RuleFile file);

  const std::vector<StreamRule>& rules() const { return rules_; }
  const std::vector<StreamComponent>& components() const { return components_; }
  const std::vector<ids::SkippedRule>& skipped() const { return skipped_; }
  const hs_database_t* db() const { return db_.get(); }
  // The longest literal component (0 without literals).
  uint32_t max_literal() const { return max_literal_; }
  // Every component is a literal: the Aho-Corasick DFA decides the rules by itself.
  bool literals_only() const { return literals_only_; }
  const ids::AhoCorasick& ac() const { return ac_; }

  // Whether the occurrence of literal component `c` ending at stream offset `end` (one past its
  // last byte) satisfies its offset and depth.
  bool content_counts(uint32_t c, uint64_t end) const {
    const StreamComponent& k = components_[c];
    const uint64_t n = k.bytes.size();
    if (end < n) return false;
    const uint64_t start = end - n;
    return start >= k.offset && (k.depth == 0 || end <= uint64_t{k.offset} + k.depth);
  }

 private:
  std::vector<StreamRule> rules_;
  std::vector<StreamComponent> components_;
  std::vector<ids::SkippedRule> skipped_;
  ids::HsDatabase db_;
  uint32_t max_literal_ = 0;
  bool literals_only_ = true;
  ids::AhoCorasick ac_{/*caseless=*/true};
};

}  // namespace fulcrum::l7
