// A ModSecurity rule as the WAF engine runs it (SecRule / SecAction / SecMarker of a
// ModSecurity configuration, OWASP CRS 3.3 dialect). Filled by rule_parser.hh, run by engine.hh.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lib/waf/transforms.hh"

namespace fulcrum::waf {

// The request variables the engine knows. kUnsupported: a variable it has no value for (FILES,
// XML, IP, ...); a rule naming one is loaded but listed (Rule::unsupported) and that variable
// gives no values.
enum class Var : uint8_t {
  kArgs,
  kArgsNames,
  kArgsGet,
  kArgsGetNames,
  kArgsPost,
  kArgsPostNames,
  kRequestHeaders,
  kRequestHeadersNames,
  kRequestCookies,
  kRequestCookiesNames,
  kRequestUri,
  kRequestUriRaw,
  kRequestFilename,
  kRequestBasename,
  kRequestLine,
  kRequestMethod,
  kRequestProtocol,
  kQueryString,
  kRequestBody,
  kRequestBodyLength,
  kReqbodyProcessor,
  kReqbodyError,
  kRemoteAddr,
  kTx,
  kMatchedVar,
  kMatchedVarName,
  kMatchedVars,
  kMatchedVarsNames,
  kXml,  // XML:<xpath> of a body parsed by ctl:requestBodyProcessor=XML (libxml2)
  kUnsupported,
};
constexpr size_t kVarCount = static_cast<size_t>(Var::kUnsupported) + 1;
static_assert(kVarCount <= 64, "the engine keeps a set of variables in 64 bits");

// One entry of a rule's variable list: ARGS, ARGS:id, ARGS:/^x/, !ARGS:id, &ARGS.
struct Target {
  Var var = Var::kUnsupported;
  std::string name;             // the variable as written ("REQUEST_HEADERS")
  std::string selector;         // key selector, lower-cased; empty: the whole collection
  bool selector_regex = false;  // selector is /regex/ (matched case-insensitively)
  bool exclude = false;         // !VAR:key
  bool count = false;           // &VAR
  int regex = -1;               // selector_regex: index into Ruleset::selector_regexes
};

enum class Op : uint8_t {
  kRx,
  kPm,  // @pm and @pmFromFile: case-insensitive phrase match
  kStreq,
  kBeginsWith,
  kEndsWith,
  kContains,
  kContainsWord,
  kWithin,
  kEq,
  kGe,
  kGt,
  kLe,
  kLt,
  kValidateByteRange,
  kValidateUrlEncoding,
  kValidateUtf8Encoding,
  kDetectSqli,  // libinjection (engine.hh: where it comes from)
  kDetectXss,
  kUnconditional,
  kNoMatch,
  kUnsupported,  // @ipMatch, @rbl, @geoLookup, @verifyCC, ...
};

struct Operator {
  Op op = Op::kUnsupported;
  bool negated = false;
  std::string name;   // "rx", "pm", ...
  std::string param;  // as written (macros expanded at run time for string/number operators)
  bool param_has_macro = false;
  std::vector<std::string> phrases;  // kPm
  uint8_t byte_ok[32] = {};          // kValidateByteRange: bit per allowed byte
  int regex = -1;                    // kRx: index into Ruleset::regexes
  int pm_db = -1;                    // kPm: the engine's literal database for it
};

// setvar:tx.name=value | tx.name=+value | tx.name=-value | !tx.name | tx.name
struct SetVar {
  enum class Kind : uint8_t { kSet, kAdd, kSub, kDelete };
  Kind kind = Kind::kSet;
  std::string name;   // lower-cased, without "tx."
  std::string value;  // macros expanded at run time
};

enum class Disruptive : uint8_t { kNone, kPass, kBlock, kDeny, kDrop, kAllow, kRedirect };

struct Rule {
  uint32_t id = 0;  // 0 for a chained (child) rule
  int phase = 2;
  std::string file;
  int line = 0;
  bool is_action = false;  // SecAction: no variables, always matches
  bool is_marker = false;  // SecMarker
  std::string marker;      // SecMarker's name
  std::vector<Target> targets;
  Operator op;
  std::vector<Transform> transforms;
  int pipeline = -1;  // index into Ruleset::pipelines (the rule's transformation list)
  // multiMatch: the operator also runs on the value before the transformations and after each
  // one that changed it; prefix_pipelines[k] is the pipeline of the first k transformations.
  bool multi_match = false;
  std::vector<int> prefix_pipelines;
  std::vector<SetVar> setvars;
  Disruptive disruptive = Disruptive::kNone;
  int status = 0;   // status:NNN
  bool log = true;  // log / nolog (from SecDefaultAction unless given)
  bool capture = false;
  bool chained = false;        // the next rule is this rule's chain child
  std::string body_processor;  // ctl:requestBodyProcessor=JSON|URLENCODED|XML
  std::string skip_after;
  int skip = 0;
  int paranoia_level = 0;                // from tag:'paranoia-level/N'; 0 when untagged
  std::vector<std::string> unsupported;  // why this rule cannot run exactly (empty: it can)
  // Actions on persistent collections (IP, SESSION, ...: initcol, setvar ip.x, expirevar): no
  // effect on this request's verdict, ignored (they feed IP reputation across requests).
  std::vector<std::string> ignored;
  std::string msg;
  std::unique_ptr<Rule> child;  // chain link
  // Set by the engine: an @rx on request values only, answered by Hyperscan, so the rule cannot
  // match unless its regex hit some value of its pipeline (the rule is then skipped).
  bool hs_gate = false;
};

}  // namespace fulcrum::waf
