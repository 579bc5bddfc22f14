// The WAF's rule engine: runs a Ruleset (rule_parser.hh) on an HTTP request the way
// libmodsecurity 3 does (phases 1 and 2, rules in file order, chains, skipAfter, setvar on the
// TX collection once per matching value, anomaly scores), with the @rx rules' regexes compiled
// into one Hyperscan database per transformation pipeline: each distinct (pipeline, value) of a
// request is transformed and scanned once, and every rule using that pipeline reads its answer.
// Regexes Hyperscan compiles exactly are answered by it alone; those it can only prefilter
// (back-references, lookarounds, ...) are confirmed with PCRE2 (the library ModSecurity uses,
// same options: DOTALL | MULTILINE); those it rejects run on PCRE2 alone. Captures come from
// PCRE2.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.hh"
#include "lib/waf/rule_parser.hh"

namespace fulcrum::waf {

// An HTTP request as ModSecurity sees it.
struct Request {
  std::string_view method;
  std::string_view target;  // request-target as sent ("/a/b?c=d")
  std::string_view version = "1.1";
  const std::vector<std::pair<std::string, std::string>>* headers = nullptr;  // names as sent
  std::string_view body;
  std::string_view remote_addr;
};

struct Outcome {
  bool disrupted = false;  // a deny/drop rule matched
  bool drop = false;       // ... and it was `drop` (close the connection)
  int status = 0;          // the answer's status when disrupted (403 unless the rule says)
  uint32_t disruptive_rule = 0;
  int64_t anomaly_score = 0;      // TX:ANOMALY_SCORE at the end
  std::vector<uint32_t> logged;   // ids of matched rules that log (in evaluation order)
  std::vector<uint32_t> matched;  // ids of every matched rule (chains: the whole chain)
};

struct EngineStats {
  size_t rules = 0;          // rules with an id
  size_t request_rules = 0;  // ... in phases 1 and 2
  size_t unsupported = 0;    // request rules with a note (Ruleset::notes)
  size_t regexes = 0;
  size_t hs_exact = 0;      // answered by Hyperscan alone
  size_t hs_prefilter = 0;  // Hyperscan prefilter + PCRE2 confirmation
  size_t pcre_only = 0;     // Hyperscan rejected them
  size_t pipelines = 0;
  size_t hs_databases = 0;
};

class Engine {
 public:
  // Compiles `rules`. `initial` are TX variables set before phase 1 (as a SecAction before the
  // CRS would: "paranoia_level" -> "1", ...).
  static Result<std::unique_ptr<Engine>> create(
      Ruleset rules, std::vector<std::pair<std::string, std::string>> initial = {});
  ~Engine();

  // Evaluates phases 1 and 2 on `req`. Thread-safe (per-thread scratch).
  Outcome evaluate(const Request& req) const;

  const Ruleset& ruleset() const { return rules_; }
  const EngineStats& stats() const { return stats_; }

  struct Impl;

 private:
  Engine() = default;
  Ruleset rules_;
  EngineStats stats_;
  std::vector<std::pair<std::string, std::string>> initial_;
  std::unique_ptr<Impl> impl_;
};

// Loads a CRS installation: `crs` is a directory holding owasp-crs.load (Debian's, which
// Includes crs-setup.conf and rules/*.conf) or crs-setup.conf and rules/, or one .conf file;
// `base` (optional) a ModSecurity configuration read first (the recommended modsecurity.conf).
Result<Ruleset> load_crs(const std::string& crs, const std::string& base = {});

}  // namespace fulcrum::waf
