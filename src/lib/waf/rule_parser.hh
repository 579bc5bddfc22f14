// Reads a ModSecurity configuration (the OWASP CRS 3.3 dialect as Debian ships it: crs-setup.conf,
// rules/*.conf, ModSecurity's recommended config) into a Ruleset: SecRule, SecAction, SecMarker,
// chains, SecDefaultAction, SecRuleRemoveById, Include, SecArgumentsLimit; other directives are
// accepted and noted. A malformed rule is an error naming FILE:LINE.
//
// What a rule needs that the engine does not support (an operator such as @detectSQLi, a variable
// such as FILES, a ctl: action) does not stop loading: the rule is kept (its flow-control
// effects still apply) and Ruleset::notes says which rule and why (`fulcrum` prints the list).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hh"
#include "lib/waf/rule.hh"

namespace fulcrum::waf {

// One @rx pattern, compiled by the engine.
struct RegexSpec {
  std::string pattern;
  std::vector<int> pipelines;  // the transformation lists its values go through
};

struct RuleNote {
  uint32_t id = 0;
  std::string where;  // file:line
  std::string why;
};

struct Ruleset {
  std::vector<std::unique_ptr<Rule>> rules;       // top-level rules and markers in file order
  std::vector<RegexSpec> regexes;                 // every @rx (Operator::regex indexes it)
  std::vector<std::string> selector_regexes;      // every /regex/ key selector (Target::regex)
  std::vector<std::vector<Transform>> pipelines;  // distinct transformation lists
  std::vector<RuleNote> notes;                    // rules the engine cannot run exactly, and why
  std::vector<RuleNote> ignored;                // rules with ignored persistent-collection actions
  std::vector<std::string> ignored_directives;  // "SecAuditLog (file:line)", ...
  uint32_t arguments_limit = 0;                 // SecArgumentsLimit; 0: none
  std::shared_ptr<const UnicodeMap> unicode_map;  // SecUnicodeMapFile (urlDecodeUni)
  size_t rule_count = 0;                          // rules with an id (chains count once)

  // The pipeline index of `ts`, added when new.
  int pipeline_of(const std::vector<Transform>& ts);
};

class RuleParser {
 public:
  RuleParser();

  // Parses one configuration file (Include directives followed, globs allowed).
  Status load_file(const std::string& path);
  // Parses configuration text; `name` stands for the file in messages and @pmFromFile paths
  // are taken from `dir`.
  Status load_text(std::string_view text, const std::string& name, const std::string& dir);

  // The rules so far (SecRuleRemoveById applied); the parser is left empty.
  Ruleset finish();

 private:
  Status directive(std::string_view line, const std::string& file, int lineno,
                   const std::string& dir);
  Status sec_rule(std::vector<std::string>& args, bool is_action, const std::string& file,
                  int lineno, const std::string& dir);
  Status parse_targets(const std::string& text, Rule& r);
  Status parse_operator(const std::string& text, Rule& r, const std::string& dir);
  Status parse_actions(const std::string& text, Rule& r, bool is_default);

  Ruleset set_;
  struct Defaults {
    bool log = true;
    Disruptive disruptive = Disruptive::kPass;
    std::vector<Transform> transforms;
  };
  std::map<int, Defaults> defaults_;
  Rule* chain_tail_ = nullptr;  // the last link of an open chain
  std::vector<std::pair<uint32_t, uint32_t>> removed_;
  int include_depth_ = 0;
};

// Splits a ModSecurity action list ("id:1,phase:2,msg:'a, b'") into name/value pairs.
std::vector<std::pair<std::string, std::string>> split_actions(std::string_view text);

}  // namespace fulcrum::waf
