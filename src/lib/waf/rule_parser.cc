#include "lib/waf/rule_parser.hh"

#include <glob.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace fulcrum::waf {
namespace {

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && lower(a) == lower(b);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

struct VarName {
  std::string_view name;
  Var var;
};
constexpr VarName kVars[] = {
    {"ARGS", Var::kArgs},
    {"ARGS_NAMES", Var::kArgsNames},
    {"ARGS_GET", Var::kArgsGet},
    {"ARGS_GET_NAMES", Var::kArgsGetNames},
    {"ARGS_POST", Var::kArgsPost},
    {"ARGS_POST_NAMES", Var::kArgsPostNames},
    {"REQUEST_HEADERS", Var::kRequestHeaders},
    {"REQUEST_HEADERS_NAMES", Var::kRequestHeadersNames},
    {"REQUEST_COOKIES", Var::kRequestCookies},
    {"REQUEST_COOKIES_NAMES", Var::kRequestCookiesNames},
    {"REQUEST_URI", Var::kRequestUri},
    {"REQUEST_URI_RAW", Var::kRequestUriRaw},
    {"REQUEST_FILENAME", Var::kRequestFilename},
    {"REQUEST_BASENAME", Var::kRequestBasename},
    {"REQUEST_LINE", Var::kRequestLine},
    {"REQUEST_METHOD", Var::kRequestMethod},
    {"REQUEST_PROTOCOL", Var::kRequestProtocol},
    {"QUERY_STRING", Var::kQueryString},
    {"REQUEST_BODY", Var::kRequestBody},
    {"REQUEST_BODY_LENGTH", Var::kRequestBodyLength},
    {"REQBODY_PROCESSOR", Var::kReqbodyProcessor},
    {"REQBODY_ERROR", Var::kReqbodyError},
    {"REMOTE_ADDR", Var::kRemoteAddr},
    {"TX", Var::kTx},
    {"MATCHED_VAR", Var::kMatchedVar},
    {"MATCHED_VAR_NAME", Var::kMatchedVarName},
    {"MATCHED_VARS", Var::kMatchedVars},
    {"MATCHED_VARS_NAMES", Var::kMatchedVarsNames},
    {"XML", Var::kXml},
};

struct OpName {
  std::string_view name;
  Op op;
};
constexpr OpName kOps[] = {
    {"rx", Op::kRx},
    {"pm", Op::kPm},
    {"pmf", Op::kPm},
    {"pmFromFile", Op::kPm},
    {"streq", Op::kStreq},
    {"beginsWith", Op::kBeginsWith},
    {"endsWith", Op::kEndsWith},
    {"contains", Op::kContains},
    {"containsWord", Op::kContainsWord},
    {"within", Op::kWithin},
    {"eq", Op::kEq},
    {"ge", Op::kGe},
    {"gt", Op::kGt},
    {"le", Op::kLe},
    {"lt", Op::kLt},
    {"validateByteRange", Op::kValidateByteRange},
    {"validateUrlEncoding", Op::kValidateUrlEncoding},
    {"validateUtf8Encoding", Op::kValidateUtf8Encoding},
    {"detectSQLi", Op::kDetectSqli},
    {"detectXSS", Op::kDetectXss},
    {"unconditionalMatch", Op::kUnconditional},
    {"noMatch", Op::kNoMatch},
};

// Splits a directive's arguments: words, or "quoted strings" (\" is a quote inside one; any
// other backslash pair is kept as written).
Result<std::vector<std::string>> split_args(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i >= s.size()) break;
    std::string word;
    if (s[i] == '"') {
      ++i;
      bool closed = false;
      while (i < s.size()) {
        if (s[i] == '\\' && i + 1 < s.size()) {
          if (s[i + 1] == '"') {
            word.push_back('"');
          } else {
            word.push_back(s[i]);
            word.push_back(s[i + 1]);
          }
          i += 2;
        } else if (s[i] == '"') {
          ++i;
          closed = true;
          break;
        } else {
          word.push_back(s[i++]);
        }
      }
      if (!closed) return make_error("unterminated quoted argument");
    } else {
      while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i])))
        word.push_back(s[i++]);
    }
    out.push_back(std::move(word));
  }
  return out;
}

bool parse_byte_ranges(std::string_view text, uint8_t table[32]) {
  std::string spec(text);
  std::stringstream ss(spec);
  std::string part;
  bool any = false;
  while (std::getline(ss, part, ',')) {
    const std::string_view p = trim(part);
    if (p.empty()) continue;
    const size_t dash = p.find('-');
    int a = 0, b = 0;
    try {
      a = std::stoi(std::string(p.substr(0, dash)));
      b = dash == std::string_view::npos ? a : std::stoi(std::string(p.substr(dash + 1)));
    } catch (...) {
      return false;
    }
    if (a < 0 || b > 255 || a > b) return false;
    for (int x = a; x <= b; ++x)
      table[x >> 3] = static_cast<uint8_t>(table[x >> 3] | (1u << (x & 7)));
    any = true;
  }
  return any;
}

}  // namespace

int Ruleset::pipeline_of(const std::vector<Transform>& ts) {
  for (size_t i = 0; i < pipelines.size(); ++i)
    if (pipelines[i] == ts) return static_cast<int>(i);
  pipelines.push_back(ts);
  return static_cast<int>(pipelines.size() - 1);
}

std::vector<std::pair<std::string, std::string>> split_actions(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t i = 0;
  while (i < text.size()) {
    std::string item;
    bool quoted = false;
    while (i < text.size()) {
      const char c = text[i];
      if (c == '\\' && quoted && i + 1 < text.size() && text[i + 1] == '\'') {
        item.push_back('\'');
        i += 2;
        continue;
      }
      if (c == '\'') quoted = !quoted;
      if (c == ',' && !quoted) break;
      item.push_back(c);
      ++i;
    }
    ++i;  // the comma
    const std::string_view t = trim(item);
    if (t.empty()) continue;
    const size_t colon = t.find(':');
    std::string name(trim(t.substr(0, colon)));
    std::string value;
    if (colon != std::string_view::npos) {
      std::string_view v = trim(t.substr(colon + 1));
      if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') v = v.substr(1, v.size() - 2);
      value = std::string(v);
    }
    out.emplace_back(std::move(name), std::move(value));
  }
  return out;
}

RuleParser::RuleParser() {
  for (int p = 1; p <= 5; ++p) defaults_[p] = Defaults{};
}

Status RuleParser::load_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  return load_text(ss.str(), path, dir_of(path));
}

Status RuleParser::load_text(std::string_view text, const std::string& name,
                             const std::string& dir) {
  size_t pos = 0;
  int lineno = 0;
  while (pos < text.size()) {
    // One logical line: physical lines joined where they end in a backslash.
    std::string logical;
    const int start = lineno + 1;
    while (pos < text.size()) {
      size_t eol = text.find('\n', pos);
      if (eol == std::string_view::npos) eol = text.size();
      std::string_view phys = text.substr(pos, eol - pos);
      pos = eol + 1;
      ++lineno;
      if (!phys.empty() && phys.back() == '\r') phys.remove_suffix(1);
      if (!phys.empty() && phys.back() == '\\') {
        logical.append(phys.substr(0, phys.size() - 1));
        continue;
      }
      logical.append(phys);
      break;
    }
    const std::string_view t = trim(logical);
    if (t.empty() || t.front() == '#') continue;
    if (Status s = directive(t, name, start, dir); !s) return s;
  }
  return {};
}

Status RuleParser::directive(std::string_view line, const std::string& file, int lineno,
                             const std::string& dir) {
  const std::string where = file + ":" + std::to_string(lineno);
  size_t sp = 0;
  while (sp < line.size() && !std::isspace(static_cast<unsigned char>(line[sp]))) ++sp;
  const std::string name(line.substr(0, sp));
  auto args = split_args(line.substr(sp));
  if (!args) return make_error(where + ": " + args.error());
  if (iequals(name, "SecRule") || iequals(name, "SecAction")) {
    return sec_rule(*args, iequals(name, "SecAction"), file, lineno, dir);
  }
  if (iequals(name, "SecMarker")) {
    if (args->size() != 1) return make_error(where + ": SecMarker takes one name");
    auto r = std::make_unique<Rule>();
    r->is_marker = true;
    r->marker = (*args)[0];
    r->file = file;
    r->line = lineno;
    set_.rules.push_back(std::move(r));
    return {};
  }
  if (iequals(name, "SecDefaultAction")) {
    if (args->size() != 1) return make_error(where + ": SecDefaultAction takes one action list");
    Rule r;
    if (Status s = parse_actions((*args)[0], r, true); !s)
      return make_error(where + ": " + s.error());
    Defaults& d = defaults_[r.phase];
    d.log = r.log;
    d.disruptive = r.disruptive == Disruptive::kNone ? Disruptive::kPass : r.disruptive;
    d.transforms = r.transforms;
    return {};
  }
  if (iequals(name, "Include") || iequals(name, "IncludeOptional")) {
    if (args->size() != 1) return make_error(where + ": " + name + " takes one path");
    if (include_depth_ > 8) return make_error(where + ": Include nested too deep");
    std::string pattern = (*args)[0];
    if (!pattern.empty() && pattern[0] != '/') pattern = dir + "/" + pattern;
    glob_t g{};
    const int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
    std::vector<std::string> files;
    for (size_t i = 0; rc == 0 && i < g.gl_pathc; ++i) files.emplace_back(g.gl_pathv[i]);
    globfree(&g);
    if (files.empty() && iequals(name, "Include") &&
        pattern.find_first_of("*?[") == std::string::npos)
      return make_error(where + ": Include: no file " + pattern);
    std::sort(files.begin(), files.end());
    ++include_depth_;
    for (const std::string& f : files) {
      if (Status s = load_file(f); !s) {
        --include_depth_;
        return s;
      }
    }
    --include_depth_;
    return {};
  }
  if (iequals(name, "SecRuleRemoveById")) {
    for (const std::string& a : *args) {
      const size_t dash = a.find('-');
      try {
        const uint32_t lo = static_cast<uint32_t>(std::stoul(a.substr(0, dash)));
        const uint32_t hi =
            dash == std::string::npos ? lo : static_cast<uint32_t>(std::stoul(a.substr(dash + 1)));
        removed_.emplace_back(lo, hi);
      } catch (...) {
        return make_error(where + ": SecRuleRemoveById: bad id " + a);
      }
    }
    return {};
  }
  if (iequals(name, "SecArgumentsLimit")) {
    try {
      set_.arguments_limit = args->empty() ? 0 : static_cast<uint32_t>(std::stoul((*args)[0]));
    } catch (...) {
      return make_error(where + ": SecArgumentsLimit: not a number");
    }
    return {};
  }
  if (iequals(name, "SecUnicodeMapFile")) {
    if (args->size() != 2) return make_error(where + ": SecUnicodeMapFile takes FILE CODEPAGE");
    std::string path = (*args)[0];
    if (!path.empty() && path[0] != '/') path = dir + "/" + path;
    auto map = load_unicode_map(
        path, static_cast<unsigned>(std::strtoul((*args)[1].c_str(), nullptr, 10)));
    if (!map) return make_error(where + ": SecUnicodeMapFile: cannot read " + path);
    set_.unicode_map = std::make_shared<const UnicodeMap>(std::move(*map));
    return {};
  }
  set_.ignored_directives.push_back(name + " (" + where + ")");
  return {};
}

Status RuleParser::sec_rule(std::vector<std::string>& args, bool is_action, const std::string& file,
                            int lineno, const std::string& dir) {
  const std::string where = file + ":" + std::to_string(lineno);
  const size_t want = is_action ? 1 : 3;
  if (args.size() != want && !(args.size() == want - 1 && !is_action))
    return make_error(where + ": " +
                      (is_action ? "SecAction takes one action list"
                                 : "SecRule takes VARIABLES OPERATOR [ACTIONS]"));
  auto r = std::make_unique<Rule>();
  r->file = file;
  r->line = lineno;
  r->is_action = is_action;
  const bool is_child = chain_tail_ != nullptr;
  if (is_child) r->phase = chain_tail_->phase;
  const std::string actions = is_action ? args[0] : (args.size() == 3 ? args[2] : std::string());
  if (Status s = parse_actions(actions, *r, false); !s) return make_error(where + ": " + s.error());
  if (is_child) r->phase = chain_tail_->phase;
  if (!is_action) {
    if (Status s = parse_targets(args[0], *r); !s) return make_error(where + ": " + s.error());
    if (Status s = parse_operator(args[1], *r, dir); !s)
      return make_error(where + ": " + s.error());
  } else {
    r->op.op = Op::kUnconditional;
    r->op.name = "unconditionalMatch";
  }
  if (is_child && r->id != 0) return make_error(where + ": a chained rule may not have an id");
  if (!is_child && r->id == 0) return make_error(where + ": rule has no id");
  Rule* raw = r.get();
  if (is_child) {
    chain_tail_->child = std::move(r);
  } else {
    ++set_.rule_count;
    set_.rules.push_back(std::move(r));
  }
  chain_tail_ = raw->chained ? raw : nullptr;
  return {};
}

Status RuleParser::parse_targets(const std::string& text, Rule& r) {
  // Split on '|', keeping /regex/ selectors whole.
  std::vector<std::string> parts;
  std::string cur;
  bool in_regex = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '/' && !cur.empty() && cur.back() == ':' && !in_regex) {
      std::string_view var = trim(std::string_view(cur).substr(0, cur.size() - 1));
      if (!var.empty() && (var.front() == '!' || var.front() == '&')) var.remove_prefix(1);
      in_regex = !iequals(var, "XML");  // XML:/path is an XPath, not a /regex/
    } else if (c == '/' && in_regex && (i + 1 == text.size() || text[i + 1] == '|')) {
      in_regex = false;
    } else if (c == '|' && !in_regex) {
      parts.push_back(cur);
      cur.clear();
      continue;
    }
    cur.push_back(c);
  }
  parts.push_back(cur);
  for (std::string& raw : parts) {
    std::string_view p = trim(raw);
    if (p.empty()) return make_error("empty variable in \"" + text + "\"");
    Target t;
    if (p.front() == '!') {
      t.exclude = true;
      p.remove_prefix(1);
    } else if (p.front() == '&') {
      t.count = true;
      p.remove_prefix(1);
    }
    const size_t colon = p.find(':');
    t.name = std::string(p.substr(0, colon));
    if (colon != std::string_view::npos) {
      std::string_view sel = p.substr(colon + 1);
      if (sel.size() >= 2 && sel.front() == '\'' && sel.back() == '\'')
        sel = sel.substr(1, sel.size() - 2);
      if (sel.size() >= 2 && sel.front() == '/' && sel.back() == '/') {
        t.selector_regex = true;
        t.selector = std::string(sel.substr(1, sel.size() - 2));
        t.regex = static_cast<int>(set_.selector_regexes.size());
        set_.selector_regexes.push_back(t.selector);
      } else {
        t.selector = lower(sel);
      }
    }
    t.var = Var::kUnsupported;
    for (const VarName& v : kVars)
      if (iequals(v.name, t.name)) t.var = v.var;
    if (t.var == Var::kXml && colon != std::string_view::npos)
      t.selector = std::string(p.substr(colon + 1));  // an XPath: kept as written
    if (t.var == Var::kUnsupported && !t.exclude)
      r.unsupported.push_back("variable " + std::string(p));
    r.targets.push_back(std::move(t));
  }
  return {};
}

Status RuleParser::parse_operator(const std::string& text, Rule& r, const std::string& dir) {
  std::string_view s = text;
  Operator& o = r.op;
  if (!s.empty() && s.front() == '!') {
    o.negated = true;
    s.remove_prefix(1);
  }
  std::string_view param;
  if (!s.empty() && s.front() == '@') {
    size_t e = 1;
    while (e < s.size() && !std::isspace(static_cast<unsigned char>(s[e]))) ++e;
    o.name = std::string(s.substr(1, e - 1));
    param = s.substr(e);
    while (!param.empty() && std::isspace(static_cast<unsigned char>(param.front())))
      param.remove_prefix(1);
  } else {
    o.name = "rx";
    param = s;
  }
  o.param = std::string(param);
  o.param_has_macro = o.param.find("%{") != std::string::npos;
  o.op = Op::kUnsupported;
  for (const OpName& n : kOps)
    if (iequals(n.name, o.name)) o.op = n.op;
  switch (o.op) {
    case Op::kUnsupported:
      r.unsupported.push_back("operator @" + o.name);
      break;
    case Op::kRx:
      if (o.param_has_macro) break;  // compiled when run, after expansion (as ModSecurity)
      o.regex = static_cast<int>(set_.regexes.size());
      set_.regexes.push_back(
          {o.param, r.multi_match ? r.prefix_pipelines : std::vector<int>{r.pipeline}});
      break;
    case Op::kPm:
      if (iequals(o.name, "pm")) {
        std::istringstream iss(o.param);
        for (std::string w; iss >> w;) o.phrases.push_back(w);
      } else {
        std::istringstream files(o.param);
        for (std::string f; files >> f;) {
          const std::string path = f[0] == '/' ? f : dir + "/" + f;
          std::ifstream in(path, std::ios::binary);
          if (!in) return make_error("@" + o.name + ": cannot open " + path);
          for (std::string line; std::getline(in, line);) {
            const size_t hash = line.find('#');
            bool comment = line.empty();
            if (hash != std::string::npos) {
              comment = true;
              for (size_t k = 0; k < hash; ++k)
                if (!std::isspace(static_cast<unsigned char>(line[k]))) comment = false;
            }
            if (!comment) o.phrases.push_back(line);
          }
        }
      }
      std::erase_if(o.phrases, [](const std::string& p) { return p.empty(); });
      if (o.phrases.empty()) return make_error("@" + o.name + ": no phrases");
      break;
    case Op::kValidateByteRange:
      if (!parse_byte_ranges(o.param, o.byte_ok))
        return make_error("@validateByteRange: bad range \"" + o.param + "\"");
      break;
    default:
      break;
  }
  return {};
}

Status RuleParser::parse_actions(const std::string& text, Rule& r, bool is_default) {
  bool phase_given = false, log_given = false, none = false;
  std::vector<Transform> ts;
  for (auto& [name, value] : split_actions(text)) {
    const std::string n = lower(name);
    if (n == "id") {
      try {
        r.id = static_cast<uint32_t>(std::stoul(value));
      } catch (...) {
        return make_error("bad id '" + value + "'");
      }
    } else if (n == "phase") {
      const std::string v = lower(value);
      if (v == "request")
        r.phase = 2;
      else if (v == "response")
        r.phase = 4;
      else if (v == "logging")
        r.phase = 5;
      else if (v.size() == 1 && v[0] >= '1' && v[0] <= '5')
        r.phase = v[0] - '0';
      else
        return make_error("bad phase '" + value + "'");
      phase_given = true;
    } else if (n == "t") {
      if (iequals(value, "none")) {
        ts.clear();
        none = true;
      } else if (auto t = parse_transform(value)) {
        ts.push_back(*t);
      } else {
        r.unsupported.push_back("transformation t:" + value);
      }
    } else if (n == "chain") {
      r.chained = true;
    } else if (n == "setvar") {
      std::string_view v = value;
      SetVar sv;
      if (!v.empty() && v.front() == '!') {
        sv.kind = SetVar::Kind::kDelete;
        v.remove_prefix(1);
      }
      const size_t eq = v.find('=');
      std::string_view target = v.substr(0, eq);
      if (eq != std::string_view::npos) {
        std::string_view val = v.substr(eq + 1);
        if (!val.empty() && (val.front() == '+' || val.front() == '-')) {
          sv.kind = val.front() == '+' ? SetVar::Kind::kAdd : SetVar::Kind::kSub;
          val.remove_prefix(1);
        }
        sv.value = std::string(val);
      } else if (sv.kind != SetVar::Kind::kDelete) {
        sv.value = "1";
      }
      const size_t dot = target.find('.');
      if (dot == std::string_view::npos) return make_error("setvar without a collection: " + value);
      if (!iequals(target.substr(0, dot), "tx")) {
        r.ignored.push_back("setvar on " + lower(target.substr(0, dot)));
        continue;
      }
      sv.name = lower(target.substr(dot + 1));
      r.setvars.push_back(std::move(sv));
    } else if (n == "pass") {
      r.disruptive = Disruptive::kPass;
    } else if (n == "block") {
      r.disruptive = Disruptive::kBlock;
    } else if (n == "deny") {
      r.disruptive = Disruptive::kDeny;
    } else if (n == "drop") {
      r.disruptive = Disruptive::kDrop;
    } else if (n == "allow") {
      r.disruptive = Disruptive::kAllow;
      if (!value.empty()) r.unsupported.push_back("allow:" + value);
    } else if (n == "redirect") {
      r.disruptive = Disruptive::kRedirect;
    } else if (n == "status") {
      try {
        r.status = std::stoi(value);
      } catch (...) {
        return make_error("bad status '" + value + "'");
      }
    } else if (n == "log") {
      r.log = true;
      log_given = true;
    } else if (n == "nolog") {
      r.log = false;
      log_given = true;
    } else if (n == "capture") {
      r.capture = true;
    } else if (n == "skipafter") {
      r.skip_after = value;
    } else if (n == "skip") {
      try {
        r.skip = std::stoi(value);
      } catch (...) {
        return make_error("bad skip '" + value + "'");
      }
    } else if (n == "msg") {
      r.msg = value;
    } else if (n == "tag") {
      constexpr std::string_view kPl = "paranoia-level/";
      if (value.starts_with(kPl)) r.paranoia_level = std::atoi(value.c_str() + kPl.size());
    } else if (n == "ctl") {
      const std::string v = lower(value);
      // These change only logging or what ModSecurity keeps: no effect on a verdict.
      if (v.starts_with("auditlogparts") || v.starts_with("forcerequestbodyvariable") ||
          v.starts_with("auditengine"))
        continue;
      if (v.starts_with("requestbodyprocessor=")) {
        r.body_processor = value.substr(21);
        for (char& c : r.body_processor)
          c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        if (r.body_processor != "JSON" && r.body_processor != "URLENCODED" &&
            r.body_processor != "XML")
          r.unsupported.push_back("ctl:requestBodyProcessor=" + r.body_processor +
                                  " (body not parsed)");
        continue;
      }
      r.unsupported.push_back("ctl:" + value);
    } else if (n == "multimatch") {
      r.multi_match = true;
    } else if (n == "initcol" || n == "setsid" || n == "setuid" || n == "expirevar" ||
               n == "deprecatevar") {
      r.ignored.push_back(n);
    } else if (n == "exec" || n == "setenv") {
      r.unsupported.push_back(n);
    }
    // Other actions (rev, ver, severity, logdata, auditlog, noauditlog, maturity, accuracy,
    // sanitise*, ...) do not change a verdict.
  }
  if (!phase_given && !is_default && r.phase == 0) r.phase = 2;
  if (is_default) {
    r.transforms = ts;
    return {};
  }
  const Defaults& d = defaults_[r.phase];
  if (!log_given) r.log = d.log;
  // `block` (and no disruptive action) means the phase's SecDefaultAction (pass in CRS).
  if (r.disruptive == Disruptive::kBlock || r.disruptive == Disruptive::kNone)
    r.disruptive = d.disruptive;
  if (!none) ts.insert(ts.begin(), d.transforms.begin(), d.transforms.end());
  r.transforms = std::move(ts);
  r.pipeline = set_.pipeline_of(r.transforms);
  if (r.multi_match)
    for (size_t k = 0; k <= r.transforms.size(); ++k)
      r.prefix_pipelines.push_back(set_.pipeline_of(std::vector<Transform>(
          r.transforms.begin(), r.transforms.begin() + static_cast<long>(k))));
  return {};
}

Ruleset RuleParser::finish() {
  if (!removed_.empty()) {
    std::erase_if(set_.rules, [&](const std::unique_ptr<Rule>& r) {
      if (r->is_marker) return false;
      for (auto [lo, hi] : removed_)
        if (r->id >= lo && r->id <= hi) return true;
      return false;
    });
  }
  set_.rule_count = 0;
  for (const auto& r : set_.rules) {
    if (r->is_marker) continue;
    ++set_.rule_count;
    if (r->phase > 2) {
      set_.notes.push_back(
          {r->id, r->file + ":" + std::to_string(r->line),
           "phase " + std::to_string(r->phase) + " (response): not run on requests"});
      continue;
    }
    std::vector<std::string> why, ignored;
    for (const Rule* l = r.get(); l != nullptr; l = l->child.get()) {
      why.insert(why.end(), l->unsupported.begin(), l->unsupported.end());
      for (const std::string& g : l->ignored)
        if (std::find(ignored.begin(), ignored.end(), g) == ignored.end()) ignored.push_back(g);
    }
    if (!ignored.empty()) {
      std::string w;
      for (const std::string& g : ignored) w += (w.empty() ? "" : "; ") + g;
      set_.ignored.push_back({r->id, r->file + ":" + std::to_string(r->line), w});
    }
    if (!why.empty()) {
      std::string w;
      for (const std::string& s : why) w += (w.empty() ? "" : "; ") + s;
      set_.notes.push_back({r->id, r->file + ":" + std::to_string(r->line), w});
    }
  }
  Ruleset out = std::move(set_);
  set_ = Ruleset{};
  chain_tail_ = nullptr;
  removed_.clear();
  return out;
}

}  // namespace fulcrum::waf
