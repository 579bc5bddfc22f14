// Fuzz target: the IDS rule parser (src/lib/ids/rule_parser.*, parse_rules) and the rule set
// compiled from what it accepts (RuleSet::compile: Aho-Corasick DFA and Hyperscan databases).
//
// Input: a rule file's text. Checked: every accepted rule has a sid, and sids are unique.
#include <cstdint>
#include <set>
#include <string>

#include "fuzz_support.hh"
#include "lib/ids/rule_engine.hh"
#include "lib/ids/rule_parser.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fulcrum;
  Result<std::vector<ids::Rule>> r = ids::parse_rules(fuzz::as_text(data, size), "fuzz.rules");
  if (!r.ok()) return 0;
  std::set<uint32_t> sids;
  for (const ids::Rule& rule : r.value())
    FUZZ_CHECK(sids.insert(rule.sid).second, "sid " + std::to_string(rule.sid) + " repeated");
  (void)ids::RuleSet::compile(std::move(r.value()));
  return 0;
}
