// The rule-file parser: the Snort/Suricata subset of rule.hh. One rule a line; a line whose
// first non-blank character is `#` is a comment; blank lines are ignored. Errors read
// "PATH:LINE: what was expected".
//
// Options: msg, content (with `!`, |hex| bytes and the escapes \" \\ \; \:), nocase, offset,
// depth (modifiers apply to the content before them), pcre, sid (required, unique), rev.
// Ignored (accepted, no effect on matching): classtype, reference, metadata, priority, gid.
// Any other option is an error ("unsupported option 'flow'"), so that a rule never silently
// matches more than it says.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.hh"
#include "lib/ids/rule.hh"

namespace fulcrum::ids {

// One rule (the text of one line); errors come without a location prefix.
Result<Rule> parse_rule(std::string_view text);

// Every rule of a rule file's text; `path` prefixes errors. Rejects a repeated sid.
Result<std::vector<Rule>> parse_rules(std::string_view text, const std::string& path);

// Reads and parses the rule file at `path`.
Result<std::vector<Rule>> load_rules(const std::string& path);

}  // namespace fulcrum::ids
