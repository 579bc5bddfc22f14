#include "l7/nf/stream_rules.hh"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <string_view>

namespace fulcrum::l7 {
namespace {

// Why rule `r` cannot be matched on a byte stream ("" when it can): feature, reason.
std::pair<std::string, std::string> not_applicable(const ids::Rule& r) {
  if (r.proto != ids::Proto::kTcp) return {"protocol", "only tcp rules apply to a proxied stream"};
  if (!r.src.any() || !r.dst.any() || !r.sport.items.empty() || !r.dport.items.empty() ||
      r.src.negated || r.dst.negated || r.sport.negated || r.dport.negated)
    return {"addresses/ports", "a proxied message carries no addresses or ports; write any any"};
  if (!r.flowbits.empty() || r.noalert) return {"flowbits", "flowbits are not kept per stream"};
  if (r.threshold.type != ids::ThresholdType::kNone)
    return {"threshold", "thresholds and detection_filter are not kept per stream"};
  if (r.flow.stream == ids::FlowStream::kNoStream)
    return {"flow: no_stream", "the rule inspects packets only"};
  if (r.contents.empty() && r.pcres.empty())
    return {"no content", "a rule without content or pcre has nothing to match in a stream"};
  for (const ids::Content& c : r.contents) {
    if (c.negated)
      return {"negated content", "a negated content is only decidable when the stream ends"};
    if (c.has_distance && c.distance < 0)
      return {"negative distance", "a negative distance is not supported on a stream"};
    if (c.has_within && static_cast<size_t>(c.within) < c.bytes.size())
      return {"within", "a within shorter than its content never matches"};
    if (c.depth != 0 && c.depth < c.bytes.size())
      return {"depth", "a depth shorter than its content never matches"};
  }
  return {};
}

std::string literal_regex(const ids::Content& c) {
  std::string s = c.nocase ? "(?i:" : "(?:";
  char hex[8];
  for (char ch : c.bytes) {
    std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(ch));
    s += hex;
  }
  return s + ")";
}

// Any lo..hi bytes (hi absent: no limit). Hyperscan rejects the repeat {0,0}: no bytes is "".
std::string gap(uint64_t lo, std::optional<uint64_t> hi) {
  if (hi && *hi == lo) return lo == 0 ? std::string() : "[\\s\\S]{" + std::to_string(lo) + "}";
  std::string s = "[\\s\\S]{" + std::to_string(lo) + ",";
  if (hi) s += std::to_string(*hi);
  return s + "}";
}

// A chain's first content's window from the stream's start: offset/depth, or distance/within
// of a first content that is relative (relative to the start: Suricata's buffer offset 0).
std::pair<uint32_t, uint32_t> head_window(const ids::Content& c) {
  if (c.relative())
    return {static_cast<uint32_t>(c.has_distance ? c.distance : 0),
            static_cast<uint32_t>(c.has_within ? c.within : 0)};
  return {c.offset, c.depth};
}

// The components of rule `r` (index `ri`), appended to `out`.
void components_of(const ids::Rule& r, uint32_t ri, std::vector<StreamComponent>& out) {
  const auto& cs = r.contents;
  for (size_t i = 0; i < cs.size();) {
    size_t j = i + 1;
    while (j < cs.size() && cs[j].relative()) ++j;
    StreamComponent k;
    k.rule = ri;
    const auto [off, depth] = head_window(cs[i]);
    if (j == i + 1) {
      k.kind = StreamComponent::Kind::kLiteral;
      k.bytes = cs[i].bytes;
      k.nocase = cs[i].nocase;
      k.offset = off;
      k.depth = depth;
      k.expr = literal_regex(cs[i]);
      k.flags = (cs[i].nocase ? HS_FLAG_CASELESS : 0) |
                (off == 0 && depth == 0 ? HS_FLAG_SINGLEMATCH : 0);
    } else {
      k.kind = StreamComponent::Kind::kChain;
      k.flags = HS_FLAG_SINGLEMATCH;
      if (off != 0 || depth != 0) {
        k.expr =
            "^" + gap(off, depth != 0
                               ? std::optional<uint64_t>(uint64_t{off} + depth - cs[i].bytes.size())
                               : std::nullopt);
      }
      k.expr += literal_regex(cs[i]);
      for (size_t m = i + 1; m < j; ++m) {
        const uint64_t d = cs[m].has_distance ? static_cast<uint64_t>(cs[m].distance) : 0;
        k.expr += gap(d, cs[m].has_within
                             ? std::optional<uint64_t>(d + static_cast<uint64_t>(cs[m].within) -
                                                       cs[m].bytes.size())
                             : std::nullopt);
        k.expr += literal_regex(cs[m]);
      }
    }
    out.push_back(std::move(k));
    i = j;
  }
  for (const ids::Pcre& p : r.pcres) {
    StreamComponent k;
    k.kind = StreamComponent::Kind::kPcre;
    k.rule = ri;
    k.expr = p.expr;
    k.flags = (p.caseless ? HS_FLAG_CASELESS : 0) | (p.dotall ? HS_FLAG_DOTALL : 0) |
              (p.multiline ? HS_FLAG_MULTILINE : 0) | HS_FLAG_SINGLEMATCH;
    out.push_back(std::move(k));
  }
}

}  // namespace

Result<std::shared_ptr<const StreamRules>> StreamRules::compile(ids::RuleFile file) {
  auto set = std::make_shared<StreamRules>();
  set->skipped_ = std::move(file.skipped);
  std::vector<const ids::Rule*> usable;
  for (const ids::Rule& r : file.rules) {
    auto [feature, reason] = not_applicable(r);
    if (feature.empty())
      usable.push_back(&r);
    else
      set->skipped_.push_back({r.line, feature, "sid " + std::to_string(r.sid) + ": " + reason});
  }
  // Compile; a rule whose expression Hyperscan rejects is skipped and the rest compiled again.
  std::set<size_t> rejected;
  for (;;) {
    set->rules_.clear();
    set->components_.clear();
    std::vector<size_t> source;  // rules_ index -> usable index
    for (size_t u = 0; u < usable.size(); ++u) {
      if (rejected.count(u)) continue;
      const ids::Rule& r = *usable[u];
      StreamRule sr;
      sr.sid = r.sid;
      sr.rev = r.rev;
      sr.msg = r.msg;
      sr.first = static_cast<uint32_t>(set->components_.size());
      if (r.flow.dir == ids::FlowDir::kToServer) sr.dirs = kRuleRequests;
      if (r.flow.dir == ids::FlowDir::kToClient) sr.dirs = kRuleResponses;
      components_of(r, static_cast<uint32_t>(set->rules_.size()), set->components_);
      sr.count = static_cast<uint32_t>(set->components_.size()) - sr.first;
      set->rules_.push_back(std::move(sr));
      source.push_back(u);
    }
    if (set->rules_.empty()) return make_error("StreamIDS: no rule applies to a stream");
    std::vector<const char*> exprs;
    std::vector<unsigned> flags, ids;
    for (size_t c = 0; c < set->components_.size(); ++c) {
      exprs.push_back(set->components_[c].expr.c_str());
      flags.push_back(set->components_[c].flags);
      ids.push_back(static_cast<unsigned>(c));
    }
    hs_database_t* db = nullptr;
    hs_compile_error_t* err = nullptr;
    if (hs_compile_multi(exprs.data(), flags.data(), ids.data(),
                         static_cast<unsigned>(exprs.size()), HS_MODE_STREAM, nullptr, &db,
                         &err) == HS_SUCCESS) {
      set->db_.reset(db);
      break;
    }
    const std::string what = err->message;
    const int at = err->expression;
    hs_free_compile_error(err);
    if (at < 0) return make_error("StreamIDS: Hyperscan: " + what);
    const size_t u = source[set->components_[static_cast<size_t>(at)].rule];
    rejected.insert(u);
    const bool pcre =
        set->components_[static_cast<size_t>(at)].kind == StreamComponent::Kind::kPcre;
    set->skipped_.push_back({usable[u]->line, pcre ? "pcre: Hyperscan" : "chain: Hyperscan",
                             "sid " + std::to_string(usable[u]->sid) + ": Hyperscan: " + what});
  }
  for (size_t c = 0; c < set->components_.size(); ++c) {
    const StreamComponent& k = set->components_[c];
    if (k.kind != StreamComponent::Kind::kLiteral) {
      set->literals_only_ = false;
      continue;
    }
    set->max_literal_ = std::max(set->max_literal_, static_cast<uint32_t>(k.bytes.size()));
    set->ac_.add(k.bytes, static_cast<uint32_t>(c));
  }
  if (!set->ac_.build()) set->literals_only_ = false;
  return std::shared_ptr<const StreamRules>(std::move(set));
}

}  // namespace fulcrum::l7
