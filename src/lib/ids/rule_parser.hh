// The rule-file parser: the Snort/Suricata subset of rule.hh. One rule a line; a line whose
// first non-blank character is `#` is a comment; blank lines are ignored. Errors read
// "PATH:LINE: what was expected".
//
// Options: msg, content (with `!`, |hex| bytes and the escapes \" \\ \; \:), nocase, offset,
// depth, distance, within (modifiers apply to the content before them), pcre, sid (required,
// unique), rev, threshold, detection_filter, flowbits, flow. A relative content (distance,
// within) whose base would be a pcre's match is unsupported ("relative to pcre"), and so are
// flowbits groups (A|B, A&B: "flowbits group"), thresholds tracked by flow, flow:only_frag and
// no_frag (reassembled fragments are not tracked) and flow:only_stream on a rule other than tcp
// ("flow: only_stream": only TCP streams are reassembled).
// Ignored (accepted, no effect on matching): classtype, reference, metadata, priority, gid.
// Any other option makes the rule unsupported ("unsupported option 'dsize'"): a rule never
// silently matches more than it says. Such a rule is skipped and counted by the feature it needs
// (parse_rule_file), or, strictly, an error.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.hh"
#include "lib/ids/rule.hh"

namespace fulcrum::ids {

// One rule (the text of one line); errors come without a location prefix. On an error,
// `feature` (if given) names the unsupported feature, or is "malformed".
Result<Rule> parse_rule(std::string_view text, std::string* feature = nullptr);

// The rules of a rule file's text; `path` prefixes errors. Strict: the first rule that does
// not load (unsupported, malformed, a repeated sid) is an error. Otherwise such rules are
// skipped and listed, as Suricata does.
struct RuleFile {
  std::vector<Rule> rules;
  std::vector<SkippedRule> skipped;
};
Result<RuleFile> parse_rule_file(std::string_view text, const std::string& path, bool strict);
Result<RuleFile> load_rule_file(const std::string& path, bool strict);

// Strict parse_rule_file, the rules only.
Result<std::vector<Rule>> parse_rules(std::string_view text, const std::string& path);
Result<std::vector<Rule>> load_rules(const std::string& path);

// "byte_test 812, flow: only_frag 40, malformed 1": the skipped rules counted by feature, most
// first.
std::string skipped_summary(const std::vector<SkippedRule>& skipped);

}  // namespace fulcrum::ids
