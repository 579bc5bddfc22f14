#include "lib/waf/engine.hh"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <dlfcn.h>
#include <hs/hs.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <pcre2.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <nlohmann/json.hpp>
#include <unordered_map>

namespace fulcrum::waf {
namespace {

constexpr unsigned kOvectorPairs = 32;
constexpr int kDefaultDenyStatus = 403;
constexpr int kMaxCaptures = 10;  // TX:0 .. TX:9

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool is_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// std::stoi as ModSecurity's @eq uses it: 0 when the text is no number or out of range.
int stoi_or_zero(const std::string& s) {
  try {
    return std::stoi(s);
  } catch (...) {
    return 0;
  }
}

// libinjection (@detectSQLi, @detectXSS) as ModSecurity runs it: the copy libmodsecurity 3
// bundles, taken from its shared object at run time (Debian's libmodsecurity3 exports it).
struct Libinjection {
  int (*sqli)(const char*, size_t, char*) = nullptr;
  int (*xss)(const char*, size_t) = nullptr;
};
constexpr const char* kLibinjectionLibrary = "libmodsecurity.so.3";

const Libinjection& libinjection() {
  static const Libinjection li = [] {
    Libinjection l;
    void* h = ::dlopen(kLibinjectionLibrary, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return l;
    l.sqli = reinterpret_cast<int (*)(const char*, size_t, char*)>(::dlsym(h, "libinjection_sqli"));
    l.xss = reinterpret_cast<int (*)(const char*, size_t)>(::dlsym(h, "libinjection_xss"));
    return l;
  }();
  return li;
}

enum class RxMode : uint8_t { kExact, kPrefilter, kPcreOnly, kBroken };

struct Regex {
  pcre2_code* code = nullptr;
  bool jit = false;
  RxMode mode = RxMode::kBroken;
};

struct HsDb {
  hs_database_t* db = nullptr;
};

// A request value: the string slot it lives in and its key (for selectors and MATCHED_VAR_NAME).
struct Entry {
  uint32_t slot = 0;
  std::string_view key;  // points into the request or into Scratch::keys
};

struct CacheEntry {
  std::string value;                       // the value after the pipeline
  std::vector<uint32_t> hits;              // regex ids Hyperscan reported
  std::vector<std::pair<int, bool>> pcre;  // memoised PCRE2 answers
};

// Whether Hyperscan accepts `pattern` with `flags` (its parser and analysis, no compile).
bool hs_available_regex(const std::string& pattern, unsigned flags) {
  hs_expr_info_t* info = nullptr;
  hs_compile_error_t* err = nullptr;
  const hs_error_t rc = hs_expression_info(pattern.c_str(), flags, &info, &err);
  if (err != nullptr) hs_free_compile_error(err);
  if (info != nullptr) std::free(info);
  return rc == HS_SUCCESS;
}

}  // namespace

std::atomic<uint64_t> g_next_serial{1};

struct Engine::Impl {
  uint64_t serial = g_next_serial++;  // tells a thread's scratch which engine it was made for
  std::vector<Regex> regexes;
  std::vector<pcre2_code*> selectors;
  std::vector<HsDb> pipeline_db;  // per pipeline; db == nullptr: no exact/prefilter regexes
  std::vector<HsDb> pm_db;
  std::unordered_map<std::string, std::vector<size_t>> markers;  // name -> rule indices
  std::vector<uint64_t> pipeline_vars;  // per pipeline: bit per Var its gated rules read
  std::vector<std::string> xml_paths;   // the XPaths of XML:<xpath> targets
  std::vector<size_t> phase_rules[3];   // indices of rules (and markers) run in phase 1, 2

  ~Impl() {
    for (Regex& r : regexes)
      if (r.code != nullptr) pcre2_code_free(r.code);
    for (pcre2_code* c : selectors)
      if (c != nullptr) pcre2_code_free(c);
    for (HsDb& d : pipeline_db)
      if (d.db != nullptr) hs_free_database(d.db);
    for (HsDb& d : pm_db)
      if (d.db != nullptr) hs_free_database(d.db);
  }
};

namespace {

// Per-thread working memory of one evaluation.
struct Scratch {
  uint64_t serial = 0;
  hs_scratch_t* hs = nullptr;
  pcre2_match_data* md = nullptr;

  std::vector<std::string> strs;  // value slots
  size_t nstrs = 0;
  std::deque<std::string> keys;  // decoded argument/cookie names (a deque: views stay valid)
  size_t nkeys = 0;
  std::vector<Entry> vars[kVarCount];
  std::vector<int32_t> cache_index;  // pipeline * slots + slot -> cache entry
  std::deque<CacheEntry> cache;      // a deque: entries stay put while it grows
  size_t ncache = 0;
  std::unordered_map<std::string, std::string> tx;
  std::string matched_var, matched_var_name;
  bool has_matched_var = false;
  std::vector<std::pair<std::string, std::string>> matched_vars;  // name, value
  std::string body_processor;  // URLENCODED / MULTIPART from Content-Type, or set by ctl
  size_t nargs = 0;
  std::unordered_map<std::string, pcre2_code*> macro_regexes;
  std::vector<uint64_t> pipe_hits;    // per pipeline: bit per regex hit by any gated value
  xmlDocPtr xml = nullptr;            // the request's XML body (ctl:requestBodyProcessor=XML)
  std::vector<uint8_t> pipe_scanned;  // per pipeline: pipe_hits is complete

  ~Scratch() {
    if (hs != nullptr) hs_free_scratch(hs);
    if (md != nullptr) pcre2_match_data_free(md);
    for (auto& [p, c] : macro_regexes)
      if (c != nullptr) pcre2_code_free(c);
    if (xml != nullptr) xmlFreeDoc(xml);
  }

  uint32_t slot(std::string_view v) {
    if (nstrs == strs.size()) strs.emplace_back();
    strs[nstrs].assign(v.data(), v.size());
    return static_cast<uint32_t>(nstrs++);
  }
  std::string_view key(std::string_view k) {
    if (nkeys == keys.size()) keys.emplace_back();
    keys[nkeys].assign(k.data(), k.size());
    return keys[nkeys++];
  }
  void add(Var v, std::string_view key, uint32_t s) {
    vars[static_cast<size_t>(v)].push_back({s, key});
  }
  void add_value(Var v, std::string_view key, std::string_view value) { add(v, key, slot(value)); }
};

// One scratch per thread and engine (a new engine at a freed one's address gets a new scratch).
Scratch& scratch_for(const void* engine, uint64_t serial) {
  thread_local std::unordered_map<const void*, std::unique_ptr<Scratch>> all;
  auto& s = all[engine];
  if (!s || s->serial != serial) {
    s = std::make_unique<Scratch>();
    s->serial = serial;
  }
  return *s;
}

// ModSecurity's urldecode_nonstrict_inplace.
void url_decode_args(std::string_view in, std::string& out) {
  out.clear();
  auto hex = [](unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  };
  auto val = [](unsigned char c) { return c >= 'A' ? ((c & 0xdf) - 'A') + 10 : c - '0'; };
  for (size_t i = 0; i < in.size();) {
    const unsigned char c = static_cast<unsigned char>(in[i]);
    if (c == '%' && i + 2 < in.size() && hex(static_cast<unsigned char>(in[i + 1])) &&
        hex(static_cast<unsigned char>(in[i + 2]))) {
      out.push_back(static_cast<char>(val(static_cast<unsigned char>(in[i + 1])) * 16 +
                                      val(static_cast<unsigned char>(in[i + 2]))));
      i += 3;
    } else {
      out.push_back(c == '+' ? ' ' : static_cast<char>(c));
      ++i;
    }
  }
}

// ModSecurity's utils::uri_decode (no '+' to space).
std::string uri_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  auto dec = [](unsigned char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  size_t i = 0;
  while (i + 2 < s.size()) {
    if (s[i] == '%') {
      const int a = dec(static_cast<unsigned char>(s[i + 1]));
      const int b = dec(static_cast<unsigned char>(s[i + 2]));
      if (a >= 0 && b >= 0) {
        out.push_back(static_cast<char>((a << 4) + b));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i++]);
  }
  while (i < s.size()) out.push_back(s[i++]);
  return out;
}

inline char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
}

bool ieq(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

// One argument (Transaction::addArgument): ARGS, ARGS_NAMES and, for GET / POST, their own.
void add_argument(Scratch& s, std::string_view k, std::string_view v, Var which, Var which_names,
                  uint32_t args_limit) {
  if (args_limit != 0 && s.nargs >= args_limit) return;
  const std::string_view key = s.key(k);
  const uint32_t ks = s.slot(k), vs = s.slot(v);
  s.add(Var::kArgs, key, vs);
  s.add(Var::kArgsNames, key, ks);
  if (which != Var::kUnsupported) {
    s.add(which, key, vs);
    s.add(which_names, key, ks);
  }
  ++s.nargs;
}

// Transaction::extractArguments: '&'-separated pairs (std::getline: empty pieces kept but a
// trailing one), each side url-decoded (urldecode_nonstrict).
void add_urlencoded_args(Scratch& s, std::string_view buf, Var which, Var which_names,
                         uint32_t limit) {
  std::string k, v;
  size_t start = 0;
  while (start < buf.size()) {
    size_t amp = buf.find('&', start);
    if (amp == std::string_view::npos) amp = buf.size();
    const std::string_view piece = buf.substr(start, amp - start);
    start = amp + 1;
    const size_t eq = piece.find('=');
    url_decode_args(piece.substr(0, eq), k);
    url_decode_args(eq == std::string_view::npos ? std::string_view() : piece.substr(eq + 1), v);
    add_argument(s, k, v, which, which_names, limit);
  }
}

// ModSecurity's JSON body processor (request_body_processor/json.cc, on yajl) as SAX events:
// every scalar becomes an argument named by its path: json.a.b, json.list.array_0, ...
class JsonArgs : public nlohmann::json::json_sax_t {
 public:
  JsonArgs(Scratch& s, uint32_t limit) : s_(s), limit_(limit) {}
  bool null() override { return add(""); }
  bool boolean(bool v) override { return add(v ? "true" : "false"); }
  bool number_integer(number_integer_t v) override { return add(std::to_string(v)); }
  bool number_unsigned(number_unsigned_t v) override { return add(std::to_string(v)); }
  bool number_float(number_float_t, const string_t& text) override { return add(text); }
  bool string(string_t& v) override { return add(v); }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return open(false); }
  bool key(string_t& k) override {
    key_ = k;
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(true); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  struct Container {
    std::string name;
    bool array;
    size_t count = 0;
  };
  std::string current_key() {
    if (stack_.empty()) return "json";
    if (key_.empty()) return stack_.back().array ? std::string() : std::string("empty-key");
    std::string k;
    k.swap(key_);
    return k;
  }
  bool open(bool array) {
    stack_.push_back({current_key(), array});
    return true;
  }
  bool close() {
    if (stack_.empty()) return true;
    stack_.pop_back();
    if (!stack_.empty() && stack_.back().array) ++stack_.back().count;
    return true;
  }
  bool add(const std::string& value) {
    std::string path;
    for (const Container& c : stack_)
      path += c.name + (c.array ? ".array_" + std::to_string(c.count) : std::string("."));
    std::string data;
    if (!stack_.empty() && stack_.back().array)
      ++stack_.back().count;
    else
      data = current_key();
    add_argument(s_, path + data, value, Var::kUnsupported, Var::kUnsupported, limit_);
    return true;
  }
  Scratch& s_;
  uint32_t limit_;
  std::vector<Container> stack_;
  std::string key_;
};

// Fills the request variables as libmodsecurity's Transaction does (processURI,
// addRequestHeader, processRequestBody for url-encoded bodies).
void fill_request(Scratch& s, const Request& req, uint32_t args_limit) {
  for (auto& v : s.vars) v.clear();
  s.nstrs = 0;
  s.nkeys = 0;
  std::string uri(req.target);
  const size_t frag = uri.find('#');
  if (frag != std::string::npos) uri.resize(frag);
  const size_t raw_q = uri.find('?');
  const std::string decoded = uri_decode(uri);
  const std::string line =
      std::string(req.method) + " " + std::string(req.target) + " HTTP/" + std::string(req.version);
  s.add_value(Var::kRequestMethod, "REQUEST_METHOD", req.method);
  s.add_value(Var::kRequestLine, "REQUEST_LINE", line);
  s.add_value(Var::kRequestProtocol, "REQUEST_PROTOCOL", "HTTP/" + std::string(req.version));
  const size_t q = decoded.find('?');
  std::string query;
  if (raw_q != std::string::npos) {
    query = uri.substr(raw_q + 1);
    s.add_value(Var::kQueryString, "QUERY_STRING", query);
  }
  const std::string path = q == std::string::npos ? decoded : decoded.substr(0, q);
  s.add_value(Var::kRequestFilename, "REQUEST_FILENAME", path);
  const size_t base = path.find_last_of("/\\");
  if (base != std::string::npos && path.size() > base + 1)
    s.add_value(Var::kRequestBasename, "REQUEST_BASENAME", path.substr(base + 1));
  std::string parsed = decoded;
  if (!decoded.empty() && decoded[0] != '/') {
    const size_t colon = decoded.find(':');
    if (colon != std::string::npos) {
      const size_t scheme = colon + 1;
      const size_t netloc = decoded.find("//", scheme);
      if (netloc != std::string::npos && netloc == scheme) {
        const size_t p = decoded.find('/', netloc + 2);
        if (p != std::string::npos) parsed = decoded.substr(p);
      }
    }
  }
  s.add_value(Var::kRequestUri, "REQUEST_URI", parsed);
  s.add_value(Var::kRequestUriRaw, "REQUEST_URI_RAW", req.target);
  if (!req.remote_addr.empty()) s.add_value(Var::kRemoteAddr, "REMOTE_ADDR", req.remote_addr);

  s.nargs = 0;
  s.body_processor.clear();
  if (!query.empty()) add_urlencoded_args(s, query, Var::kArgsGet, Var::kArgsGetNames, args_limit);

  if (req.headers != nullptr) {
    for (const auto& [name, value] : *req.headers) {
      const uint32_t vs = s.slot(value);
      s.add(Var::kRequestHeaders, name, vs);
      s.add(Var::kRequestHeadersNames, name, s.slot(name));
      if (ieq(name, "cookie")) {
        std::vector<std::string> cookies;
        {
          size_t st = 0;
          while (st < value.size()) {
            size_t semi = value.find(';', st);
            if (semi == std::string::npos) semi = value.size();
            cookies.push_back(value.substr(st, semi - st));
            st = semi + 1;
          }
        }
        if (!cookies.empty()) {
          std::string& last = cookies.back();
          while (!last.empty() && std::isspace(static_cast<unsigned char>(last.back())))
            last.pop_back();
        }
        for (const std::string& c : cookies) {
          if (c.empty()) continue;
          const size_t eq = c.find('=');
          std::string ck = eq == std::string::npos ? c : c.substr(0, eq);
          const std::string cv = eq == std::string::npos ? std::string() : c.substr(eq + 1);
          size_t lead = 0;
          while (lead < ck.size() && std::isspace(static_cast<unsigned char>(ck[lead]))) ++lead;
          ck.erase(0, lead);
          if (ck.empty()) continue;
          const std::string_view key = s.key(ck);
          s.add(Var::kRequestCookiesNames, key, s.slot(ck));
          s.add(Var::kRequestCookies, key, s.slot(cv));
        }
      }
      if (ieq(name, "content-type")) {
        const std::string l = lower(value);
        if (l.starts_with("multipart/form-data")) s.body_processor = "MULTIPART";
        if (l.starts_with("application/x-www-form-urlencoded")) s.body_processor = "URLENCODED";
      }
    }
  }
  if (!s.body_processor.empty())
    s.add_value(Var::kReqbodyProcessor, "REQBODY_PROCESSOR", s.body_processor);
  if (!req.body.empty()) {
    s.add_value(Var::kRequestBody, "REQUEST_BODY", req.body);
    s.add_value(Var::kRequestBodyLength, "REQUEST_BODY_LENGTH", std::to_string(req.body.size()));
  }
}

class Evaluator {
 public:
  Evaluator(const Ruleset& rs, const Engine::Impl& im, Scratch& s) : rs_(rs), im_(im), s_(s) {}

  Outcome run(const Request& req, const std::vector<std::pair<std::string, std::string>>& initial) {
    fill_request(s_, req, rs_.arguments_limit);
    s_.tx.clear();
    for (const auto& [k, v] : initial) s_.tx[k] = v;
    s_.ncache = 0;
    s_.cache_index.assign(rs_.pipelines.size() * s_.nstrs, -1);
    s_.pipe_hits.assign(rs_.pipelines.size() * regex_words(), 0);
    s_.pipe_scanned.assign(rs_.pipelines.size(), 0);
    Outcome out;
    bool stop = false;
    for (int phase = 1; phase <= 2 && !stop; ++phase) {
      if (phase == 2) process_body(req);
      std::fill(s_.pipe_scanned.begin(), s_.pipe_scanned.end(), 0);
      size_t skip = 0;
      const std::vector<size_t>& order = im_.phase_rules[phase];
      for (size_t k = 0; k < order.size() && !stop; ++k) {
        const size_t i = order[k];
        const Rule& r = *rs_.rules[i];
        if (r.is_marker) continue;
        if (skip > 0) {
          --skip;
          continue;
        }
        s_.matched_vars.clear();
        s_.has_matched_var = false;
        if (!link(r)) continue;
        for (const Rule* l = &r; l != nullptr; l = l->child.get())
          if (!l->body_processor.empty()) set_body_processor(l->body_processor);
        out.matched.push_back(r.id);
        if (r.log) out.logged.push_back(r.id);
        switch (r.disruptive) {
          case Disruptive::kDeny:
          case Disruptive::kDrop:
          case Disruptive::kRedirect:
            out.disrupted = true;
            out.drop = r.disruptive == Disruptive::kDrop;
            out.status = r.status != 0 ? r.status : kDefaultDenyStatus;
            out.disruptive_rule = r.id;
            stop = true;
            break;
          case Disruptive::kAllow:
            stop = true;
            break;
          default:
            break;
        }
        if (stop) break;
        if (!r.skip_after.empty()) {
          auto it = im_.markers.find(r.skip_after);
          size_t next = rs_.rules.size();
          if (it != im_.markers.end())
            for (size_t m : it->second)
              if (m > i) {
                next = m;
                break;
              }
          // The loop's ++k moves past the marker (markers are in every phase's order).
          while (k + 1 < order.size() && order[k + 1] <= next) ++k;
        } else if (r.skip > 0) {
          skip = static_cast<size_t>(r.skip);
        }
      }
    }
    out.anomaly_score = std::atoll(tx("anomaly_score").c_str());
    return out;
  }

 private:
  void set_body_processor(const std::string& p) {
    s_.body_processor = p;
    auto& v = s_.vars[static_cast<size_t>(Var::kReqbodyProcessor)];
    if (v.empty())
      s_.add_value(Var::kReqbodyProcessor, "REQBODY_PROCESSOR", p);
    else
      s_.strs[v[0].slot] = p;
    grow_cache_index();
  }

  // ModSecurity's XML body processor (libxml2 push parser): a body that is not well-formed sets
  // REQBODY_ERROR; XML:<xpath> gives each selected node's text content.
  void xml_body(std::string_view body) {
    if (s_.xml != nullptr) {
      xmlFreeDoc(s_.xml);
      s_.xml = nullptr;
    }
    xmlParserCtxtPtr ctx = xmlCreatePushParserCtxt(nullptr, nullptr, nullptr, 0, "body.xml");
    if (ctx == nullptr) return;
    xmlParseChunk(ctx, body.data(), static_cast<int>(body.size()), 0);
    bool ok = ctx->wellFormed == 1;
    xmlParseChunk(ctx, nullptr, 0, 1);
    ok = ok && ctx->wellFormed == 1;
    if (ok)
      s_.xml = ctx->myDoc;
    else if (ctx->myDoc != nullptr)
      xmlFreeDoc(ctx->myDoc);
    xmlFreeParserCtxt(ctx);
    s_.add_value(Var::kReqbodyError, "REQBODY_ERROR", ok ? "0" : "1");
    if (!ok) return;
    for (const std::string& path : im_.xml_paths) {
      xmlXPathContextPtr xc = xmlXPathNewContext(s_.xml);
      if (xc == nullptr) continue;
      xmlXPathObjectPtr obj =
          xmlXPathEvalExpression(reinterpret_cast<const xmlChar*>(path.c_str()), xc);
      if (obj != nullptr && obj->nodesetval != nullptr) {
        for (int i = 0; i < obj->nodesetval->nodeNr; ++i) {
          xmlChar* content = xmlNodeGetContent(obj->nodesetval->nodeTab[i]);
          if (content == nullptr) continue;
          s_.add(Var::kXml, path, s_.slot(reinterpret_cast<const char*>(content)));
          xmlFree(content);
        }
      }
      if (obj != nullptr) xmlXPathFreeObject(obj);
      xmlXPathFreeContext(xc);
    }
  }

  void grow_cache_index() { s_.cache_index.resize(rs_.pipelines.size() * s_.nstrs, -1); }

  // processRequestBody: the body's arguments, REQBODY_ERROR; then the phase 2 rules run.
  void process_body(const Request& req) {
    const std::string& p = s_.body_processor;
    if (p == "JSON") {
      JsonArgs sax(s_, rs_.arguments_limit);
      const bool ok = nlohmann::json::sax_parse(req.body.begin(), req.body.end(), &sax,
                                                nlohmann::json::input_format_t::json, true);
      s_.add_value(Var::kReqbodyError, "REQBODY_ERROR", !ok && !req.body.empty() ? "1" : "0");
    } else if (p == "XML") {
      xml_body(req.body);
    } else if (p == "URLENCODED") {
      add_urlencoded_args(s_, req.body, Var::kArgsPost, Var::kArgsPostNames, rs_.arguments_limit);
    } else if (p.empty()) {
      s_.add_value(Var::kReqbodyError, "REQBODY_ERROR", "0");
    }
    grow_cache_index();
  }

  std::string tx(const std::string& name) const {
    auto it = s_.tx.find(name);
    return it == s_.tx.end() ? std::string() : it->second;
  }

  std::string expand(std::string_view text) const {
    if (text.find("%{") == std::string_view::npos) return std::string(text);
    std::string out;
    size_t i = 0;
    while (i < text.size()) {
      const size_t open = text.find("%{", i);
      if (open == std::string_view::npos) {
        out.append(text.substr(i));
        break;
      }
      const size_t close = text.find('}', open);
      if (close == std::string_view::npos) {
        out.append(text.substr(i));
        break;
      }
      out.append(text.substr(i, open - i));
      out += macro(lower(text.substr(open + 2, close - open - 2)));
      i = close + 1;
    }
    return out;
  }

  std::string macro(const std::string& name) const {
    if (name.starts_with("tx.")) return tx(name.substr(3));
    if (name == "matched_var") return s_.has_matched_var ? s_.matched_var : std::string();
    if (name == "matched_var_name") return s_.has_matched_var ? s_.matched_var_name : std::string();
    if (name.starts_with("request_headers.")) {
      const std::string h = name.substr(16);
      for (const Entry& e : s_.vars[static_cast<size_t>(Var::kRequestHeaders)])
        if (ieq(e.key, h)) return s_.strs[e.slot];
      return {};
    }
    for (Var v : {Var::kRemoteAddr, Var::kRequestMethod, Var::kRequestUri, Var::kRequestFilename,
                  Var::kRequestLine, Var::kQueryString, Var::kReqbodyProcessor}) {
      const auto& list = s_.vars[static_cast<size_t>(v)];
      if (!list.empty() && ieq(list[0].key, name)) return s_.strs[list[0].slot];
    }
    return {};
  }

  void setvars(const Rule& r) {
    for (const SetVar& sv : r.setvars) {
      const std::string name =
          sv.name.find("%{") == std::string::npos ? sv.name : lower(expand(sv.name));
      switch (sv.kind) {
        case SetVar::Kind::kDelete:
          s_.tx.erase(name);
          break;
        case SetVar::Kind::kSet:
          s_.tx[name] = expand(sv.value);
          break;
        case SetVar::Kind::kAdd:
        case SetVar::Kind::kSub: {
          std::string& cur = s_.tx[name];
          const int a = stoi_or_zero(cur);
          const int b = stoi_or_zero(expand(sv.value));
          cur = std::to_string(sv.kind == SetVar::Kind::kAdd ? a + b : a - b);
          break;
        }
      }
    }
  }

  bool pcre_match(int id, std::string_view v, bool capture) {
    const Regex& rx = im_.regexes[static_cast<size_t>(id)];
    if (rx.code == nullptr) return false;
    const auto* subj = reinterpret_cast<PCRE2_SPTR>(v.data());
    int rc = rx.jit ? pcre2_jit_match(rx.code, subj, v.size(), 0, 0, s_.md, nullptr)
                    : pcre2_match(rx.code, subj, v.size(), 0, 0, s_.md, nullptr);
    if (rx.jit && rc == PCRE2_ERROR_JIT_STACKLIMIT)
      rc = pcre2_match(rx.code, subj, v.size(), 0, PCRE2_NO_JIT, s_.md, nullptr);
    if (rc < 0) return false;
    if (capture) store_captures(rc, v);
    return true;
  }

  // An @rx whose pattern holds a macro: compiled after expansion (kept per thread and pattern).
  bool macro_regex(const std::string& pattern, std::string_view v, bool capture) {
    auto it = s_.macro_regexes.find(pattern);
    if (it == s_.macro_regexes.end()) {
      int err = 0;
      PCRE2_SIZE off = 0;
      pcre2_code* c =
          pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.c_str()), PCRE2_ZERO_TERMINATED,
                        PCRE2_DOTALL | PCRE2_MULTILINE, &err, &off, nullptr);
      it = s_.macro_regexes.emplace(pattern, c).first;
    }
    if (it->second == nullptr) return false;
    const int rc = pcre2_match(it->second, reinterpret_cast<PCRE2_SPTR>(v.data()), v.size(), 0, 0,
                               s_.md, nullptr);
    if (rc < 0) return false;
    if (capture) store_captures(rc, v);
    return true;
  }

  void store_captures(int rc, std::string_view v) {
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(s_.md);
    const int n = rc == 0 ? static_cast<int>(kOvectorPairs) : rc;
    for (int g = 0; g < n && g < kMaxCaptures; ++g) {
      if (ov[2 * g] == PCRE2_UNSET) continue;
      s_.tx[std::to_string(g)] = std::string(v.substr(ov[2 * g], ov[2 * g + 1] - ov[2 * g]));
    }
  }

  bool pm_match(const Operator& o, std::string_view v) {
    if (o.pm_db < 0 || v.empty()) return false;
    bool hit = false;
    auto cb = [](unsigned, unsigned long long, unsigned long long, unsigned, void* ctx) -> int {
      *static_cast<bool*>(ctx) = true;
      return 1;
    };
    hs_scan(im_.pm_db[static_cast<size_t>(o.pm_db)].db, v.data(), static_cast<unsigned>(v.size()),
            0, s_.hs, cb, &hit);
    return hit;
  }

  // The operator on a value, negation applied; an unsupported operator never matches.
  bool matches(const Rule& r, std::string_view v, CacheEntry* ce) {
    if (r.op.op == Op::kUnsupported) return false;
    return op_on(r, v, ce) != r.op.negated;
  }

  // The operator on a value (without negation); `ce` the value's cache entry when it has one.
  bool op_on(const Rule& r, std::string_view v, CacheEntry* ce) {
    const Operator& o = r.op;
    switch (o.op) {
      case Op::kRx: {
        if (o.param.empty()) return true;
        if (o.param_has_macro) return macro_regex(expand(o.param), v, r.capture);
        const Regex& rx = im_.regexes[static_cast<size_t>(o.regex)];
        const uint32_t id = static_cast<uint32_t>(o.regex);
        if (ce != nullptr && (rx.mode == RxMode::kExact || rx.mode == RxMode::kPrefilter)) {
          const bool hs_hit = std::find(ce->hits.begin(), ce->hits.end(), id) != ce->hits.end();
          if (!hs_hit) return false;
          if (rx.mode == RxMode::kExact && !r.capture) return true;
        }
        if (ce != nullptr && !r.capture) {
          for (const auto& [rid, res] : ce->pcre)
            if (rid == o.regex) return res;
          const bool res = pcre_match(o.regex, v, false);
          ce->pcre.emplace_back(o.regex, res);
          return res;
        }
        return pcre_match(o.regex, v, r.capture);
      }
      case Op::kPm: {
        const bool hit = pm_match(o, v);
        return hit;
      }
      case Op::kStreq:
        return v == expand(o.param);
      case Op::kBeginsWith: {
        const std::string p = expand(o.param);
        return v.size() >= p.size() && v.compare(0, p.size(), p) == 0;
      }
      case Op::kEndsWith: {
        const std::string p = expand(o.param);
        return v.size() >= p.size() && v.compare(v.size() - p.size(), p.size(), p) == 0;
      }
      case Op::kContains:
        return v.find(expand(o.param)) != std::string_view::npos;
      case Op::kContainsWord: {
        const std::string p = expand(o.param);
        if (p.empty()) return true;
        for (size_t at = v.find(p); at != std::string_view::npos; at = v.find(p, at + 1)) {
          const bool left = at == 0 || !std::isalnum(static_cast<unsigned char>(v[at - 1]));
          const size_t e = at + p.size();
          const bool right = e == v.size() || !std::isalnum(static_cast<unsigned char>(v[e]));
          if (left && right) return true;
        }
        return false;
      }
      case Op::kWithin:
        return v.empty() || expand(o.param).find(v) != std::string::npos;
      case Op::kEq:
        return stoi_or_zero(std::string(v)) == stoi_or_zero(expand(o.param));
      case Op::kGe:
        return std::atoll(std::string(v).c_str()) >= std::atoll(expand(o.param).c_str());
      case Op::kGt:
        return std::atoll(std::string(v).c_str()) > std::atoll(expand(o.param).c_str());
      case Op::kLe:
        return std::atoll(std::string(v).c_str()) <= std::atoll(expand(o.param).c_str());
      case Op::kLt:
        return std::atoll(std::string(v).c_str()) < std::atoll(expand(o.param).c_str());
      case Op::kValidateByteRange:
        for (unsigned char c : v)
          if (!(o.byte_ok[c >> 3] & (1u << (c & 7)))) return true;
        return false;
      case Op::kValidateUrlEncoding: {
        if (v.empty()) return false;
        auto hex = [](char c) {
          return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
        };
        for (size_t i = 0; i < v.size();) {
          if (v[i] != '%') {
            ++i;
            continue;
          }
          if (i + 2 >= v.size()) return true;
          if (!hex(v[i + 1]) || !hex(v[i + 2])) return true;
          i += 3;
        }
        return false;
      }
      case Op::kValidateUtf8Encoding: {
        for (size_t i = 0; i < v.size();) {
          const unsigned char c = static_cast<unsigned char>(v[i]);
          size_t n = c < 0x80             ? 1
                     : (c & 0xE0) == 0xC0 ? 2
                     : (c & 0xF0) == 0xE0 ? 3
                     : (c & 0xF8) == 0xF0 ? 4
                                          : 0;
          if (n == 0 || i + n > v.size()) return true;
          for (size_t k = 1; k < n; ++k)
            if ((static_cast<unsigned char>(v[i + k]) & 0xC0) != 0x80) return true;
          i += n;
        }
        return false;
      }
      case Op::kDetectSqli: {
        char fingerprint[8] = {};
        auto* const f = libinjection().sqli;
        if (f == nullptr || f(v.data(), v.size(), fingerprint) == 0) return false;
        if (r.capture) s_.tx["0"] = fingerprint;
        return true;
      }
      case Op::kDetectXss: {
        auto* const f = libinjection().xss;
        if (f == nullptr || f(v.data(), v.size()) == 0) return false;
        if (r.capture) s_.tx["0"] = std::string(v);
        return true;
      }
      case Op::kUnconditional:
        return true;
      case Op::kNoMatch:
      case Op::kUnsupported:
        return false;
    }
    return false;
  }

  CacheEntry& cached(int pipeline, uint32_t slot) {
    int32_t& idx = s_.cache_index[static_cast<size_t>(slot) * rs_.pipelines.size() +
                                  static_cast<size_t>(pipeline)];
    if (idx >= 0) return s_.cache[static_cast<size_t>(idx)];
    if (s_.ncache == s_.cache.size()) s_.cache.emplace_back();
    idx = static_cast<int32_t>(s_.ncache++);
    CacheEntry& e = s_.cache[static_cast<size_t>(idx)];
    e.value = s_.strs[slot];
    apply_transforms(rs_.pipelines[static_cast<size_t>(pipeline)], e.value, rs_.unicode_map.get());
    e.hits.clear();
    e.pcre.clear();
    const hs_database_t* db = im_.pipeline_db[static_cast<size_t>(pipeline)].db;
    if (db != nullptr) {
      auto cb = [](unsigned id, unsigned long long, unsigned long long, unsigned,
                   void* ctx) -> int {
        static_cast<std::vector<uint32_t>*>(ctx)->push_back(id);
        return 0;
      };
      hs_scan(db, e.value.data(), static_cast<unsigned>(e.value.size()), 0, s_.hs, cb, &e.hits);
    }
    return e;
  }

  bool excluded(const Rule& r, Var var, std::string_view key) const {
    for (const Target& t : r.targets) {
      if (!t.exclude || t.var != var) continue;
      if (t.selector.empty()) return true;
      if (t.selector_regex) {
        pcre2_code* c = im_.selectors[static_cast<size_t>(t.regex)];
        if (c != nullptr && pcre2_match(c, reinterpret_cast<PCRE2_SPTR>(key.data()), key.size(), 0,
                                        0, s_.md, nullptr) >= 0)
          return true;
      } else if (ieq(t.selector, key)) {
        return true;
      }
    }
    return false;
  }

  bool selected(const Target& t, std::string_view key) const {
    if (t.selector.empty()) return true;
    if (t.selector_regex) {
      pcre2_code* c = im_.selectors[static_cast<size_t>(t.regex)];
      return c != nullptr && pcre2_match(c, reinterpret_cast<PCRE2_SPTR>(key.data()), key.size(), 0,
                                         0, s_.md, nullptr) >= 0;
    }
    return ieq(t.selector, key);
  }

  // One value matched: MATCHED_VAR(S), captures already stored, the link's setvars.
  void on_match(const Rule& r, const std::string& name, std::string_view value) {
    s_.matched_var.assign(value.data(), value.size());
    s_.matched_var_name = name;
    s_.has_matched_var = true;
    s_.matched_vars.emplace_back(name, std::string(value));
    setvars(r);
  }

  bool eval_dynamic(const Rule& r, const std::string& name, std::string value) {
    if (r.multi_match) {
      bool any = false;
      if (matches(r, value, nullptr)) {
        on_match(r, name, value);
        any = true;
      }
      for (Transform t : r.transforms) {
        std::string next = value;
        apply_transform(t, next, rs_.unicode_map.get());
        if (next == value) continue;
        value = std::move(next);
        if (matches(r, value, nullptr)) {
          on_match(r, name, value);
          any = true;
        }
      }
      return any;
    }
    apply_transforms(r.transforms, value, rs_.unicode_map.get());
    if (matches(r, value, nullptr)) {
      on_match(r, name, value);
      return true;
    }
    return false;
  }

  // A static value through the rule's pipeline (all its multiMatch stages): true if any matched.
  bool eval_entry(const Rule& r, const Target& t, const Entry& e) {
    const uint32_t slot = e.slot;
    auto name = [&] { return t.name + ":" + std::string(e.key); };
    if (!r.multi_match) {
      CacheEntry& ce = cached(r.pipeline, slot);
      if (!matches(r, ce.value, &ce)) return false;
      on_match(r, name(), ce.value);
      return true;
    }
    bool any = false;
    int prev = -1;
    for (int p : r.prefix_pipelines) {
      CacheEntry& cur = cached(p, slot);
      const bool unchanged = prev >= 0 && cached(prev, slot).value == cur.value;
      prev = p;
      if (unchanged) continue;
      if (matches(r, cur.value, &cur)) {
        on_match(r, name(), cur.value);
        any = true;
      }
    }
    return any;
  }

  // Evaluates one link of a chain (and the links after it).
  size_t regex_words() const { return (rs_.regexes.size() + 63) / 64; }

  // Scans every value a gated rule of `pipeline` can read, once per phase.
  const uint64_t* pipeline_hits(int pipeline) {
    const size_t p = static_cast<size_t>(pipeline);
    uint64_t* bits = s_.pipe_hits.data() + p * regex_words();
    if (s_.pipe_scanned[p]) return bits;
    s_.pipe_scanned[p] = 1;
    const uint64_t vars = im_.pipeline_vars[p];
    for (size_t v = 0; v < kVarCount; ++v) {
      if (!(vars & (uint64_t{1} << v))) continue;
      for (const Entry& e : s_.vars[v])
        for (uint32_t id : cached(pipeline, e.slot).hits) bits[id / 64] |= uint64_t{1} << (id % 64);
    }
    return bits;
  }

  bool link(const Rule& r) {
    if (r.is_action) {
      setvars(r);
      return r.chained && r.child ? link(*r.child) : true;
    }
    if (r.hs_gate) {
      const uint64_t* bits = pipeline_hits(r.pipeline);
      const auto id = static_cast<uint32_t>(r.op.regex);
      if (!(bits[id / 64] & (uint64_t{1} << (id % 64)))) return false;
    }
    bool any = false;
    for (const Target& t : r.targets) {
      if (t.exclude || t.var == Var::kUnsupported) continue;
      if (t.count) {
        size_t n = 0;
        if (t.var == Var::kTx && !t.selector.empty() && !t.selector_regex) {
          n = s_.tx.count(t.selector);
        } else if (t.var == Var::kTx) {
          for (const auto& [k, v] : s_.tx) n += selected(t, k) ? 1 : 0;
        } else if (t.var == Var::kMatchedVars || t.var == Var::kMatchedVarsNames) {
          n = s_.matched_vars.size();
        } else {
          for (const Entry& e : s_.vars[static_cast<size_t>(t.var)])
            if (selected(t, e.key)) ++n;
        }
        any |= eval_dynamic(r, t.name, std::to_string(n));
        continue;
      }
      switch (t.var) {
        case Var::kTx: {
          if (!t.selector.empty() && !t.selector_regex) {  // TX keys are kept lower-case
            auto it = s_.tx.find(t.selector);
            if (it != s_.tx.end() && !excluded(r, t.var, it->first)) {
              const std::string value = it->second;
              any |= eval_dynamic(r, "TX:" + t.selector, value);
            }
            break;
          }
          std::vector<std::pair<std::string, std::string>> vals;
          for (const auto& [k, v] : s_.tx)
            if (selected(t, k) && !excluded(r, t.var, k)) vals.emplace_back(k, v);
          for (auto& [k, v] : vals) any |= eval_dynamic(r, "TX:" + k, v);
          break;
        }
        case Var::kMatchedVar:
          if (s_.has_matched_var) any |= eval_dynamic(r, "MATCHED_VAR", s_.matched_var);
          break;
        case Var::kMatchedVarName:
          if (s_.has_matched_var) any |= eval_dynamic(r, "MATCHED_VAR_NAME", s_.matched_var_name);
          break;
        case Var::kMatchedVars:
        case Var::kMatchedVarsNames: {
          const auto vals = s_.matched_vars;
          for (const auto& [k, v] : vals)
            any |= eval_dynamic(r, "MATCHED_VARS:" + k, t.var == Var::kMatchedVars ? v : k);
          break;
        }
        default: {
          // ModSecurity's collections are unordered_multimaps with a hash it defines: the values
          // of one key (VAR:key) come newest first; which value comes last matters to captures
          // and setvar (e.g. 920420 with two Content-Type headers).
          const auto& list = s_.vars[static_cast<size_t>(t.var)];
          const bool keyed = !t.selector.empty() && !t.selector_regex;
          for (size_t k = 0; k < list.size(); ++k) {
            const Entry& e = list[keyed ? list.size() - 1 - k : k];
            if (!selected(t, e.key) || excluded(r, t.var, e.key)) continue;
            any |= eval_entry(r, t, e);
          }
        } break;
      }
    }
    if (!any) return false;
    if (r.chained) return r.child ? link(*r.child) : false;
    return true;
  }

  const Ruleset& rs_;
  const Engine::Impl& im_;
  Scratch& s_;
};

void collect_links(Rule& r, std::vector<Rule*>& out) {
  for (Rule* l = &r; l != nullptr; l = l->child.get()) out.push_back(l);
}

}  // namespace

Engine::~Engine() = default;

Result<std::unique_ptr<Engine>> Engine::create(
    Ruleset rules, std::vector<std::pair<std::string, std::string>> initial) {
  std::unique_ptr<Engine> e(new Engine());
  e->rules_ = std::move(rules);
  e->initial_ = std::move(initial);
  e->impl_ = std::make_unique<Impl>();
  Impl& im = *e->impl_;
  Ruleset& rs = e->rules_;
  EngineStats& st = e->stats_;

  for (size_t i = 0; i < rs.rules.size(); ++i)
    if (rs.rules[i]->is_marker) im.markers[rs.rules[i]->marker].push_back(i);

  // Regexes: PCRE2 for all, Hyperscan where it compiles them (exactly or as a prefilter).
  constexpr unsigned kHsFlags =
      HS_FLAG_DOTALL | HS_FLAG_MULTILINE | HS_FLAG_SINGLEMATCH | HS_FLAG_ALLOWEMPTY;
  std::vector<bool> in_request(rs.regexes.size(), false);
  for (auto& r : rs.rules) {
    if (r->is_marker) continue;
    std::vector<Rule*> links;
    collect_links(*r, links);
    for (Rule* l : links)
      if (l->op.op == Op::kRx && l->op.regex >= 0 && r->phase <= 2)
        in_request[static_cast<size_t>(l->op.regex)] = true;
  }
  im.regexes.resize(rs.regexes.size());
  for (size_t i = 0; i < rs.regexes.size(); ++i) {
    Regex& rx = im.regexes[i];
    int err = 0;
    PCRE2_SIZE off = 0;
    rx.code =
        pcre2_compile(reinterpret_cast<PCRE2_SPTR>(rs.regexes[i].pattern.c_str()),
                      PCRE2_ZERO_TERMINATED, PCRE2_DOTALL | PCRE2_MULTILINE, &err, &off, nullptr);
    if (rx.code == nullptr) {
      rx.mode = RxMode::kBroken;
      continue;
    }
    rx.jit = pcre2_jit_compile(rx.code, PCRE2_JIT_COMPLETE) == 0;
    if (!in_request[i]) {
      rx.mode = RxMode::kPcreOnly;
      continue;
    }
    ++st.regexes;
    if (hs_available_regex(rs.regexes[i].pattern, kHsFlags)) {
      rx.mode = RxMode::kExact;
      ++st.hs_exact;
    } else if (hs_available_regex(rs.regexes[i].pattern, kHsFlags | HS_FLAG_PREFILTER)) {
      rx.mode = RxMode::kPrefilter;
      ++st.hs_prefilter;
    } else {
      rx.mode = RxMode::kPcreOnly;
      ++st.pcre_only;
    }
  }
  // One database per pipeline. A regex Hyperscan parses but cannot build (too large, ...) is
  // demoted (exact -> prefilter -> PCRE2 only) and the database built again.
  im.pipeline_db.resize(rs.pipelines.size());
  st.pipelines = rs.pipelines.size();
  for (size_t p = 0; p < rs.pipelines.size(); ++p) {
    for (;;) {
      std::vector<const char*> exprs;
      std::vector<unsigned> flags, ids;
      for (size_t i = 0; i < rs.regexes.size(); ++i) {
        const auto& ps = rs.regexes[i].pipelines;
        if (std::find(ps.begin(), ps.end(), static_cast<int>(p)) == ps.end() || !in_request[i])
          continue;
        const RxMode m = im.regexes[i].mode;
        if (m != RxMode::kExact && m != RxMode::kPrefilter) continue;
        exprs.push_back(rs.regexes[i].pattern.c_str());
        flags.push_back(kHsFlags | (m == RxMode::kPrefilter ? HS_FLAG_PREFILTER : 0u));
        ids.push_back(static_cast<unsigned>(i));
      }
      if (exprs.empty()) break;
      hs_compile_error_t* err = nullptr;
      const hs_error_t rc = hs_compile_multi(exprs.data(), flags.data(), ids.data(),
                                             static_cast<unsigned>(exprs.size()), HS_MODE_BLOCK,
                                             nullptr, &im.pipeline_db[p].db, &err);
      if (rc == HS_SUCCESS) {
        ++st.hs_databases;
        break;
      }
      const int bad = err != nullptr ? err->expression : -1;
      std::string msg = err != nullptr && err->message != nullptr ? err->message : "unknown error";
      if (err != nullptr) hs_free_compile_error(err);
      if (bad < 0) return make_error("Hyperscan: pipeline " + std::to_string(p) + ": " + msg);
      Regex& rx = im.regexes[ids[static_cast<size_t>(bad)]];
      if (rx.mode == RxMode::kExact) {
        rx.mode = RxMode::kPrefilter;
        --st.hs_exact;
        ++st.hs_prefilter;
      } else {
        rx.mode = RxMode::kPcreOnly;
        --st.hs_prefilter;
        ++st.pcre_only;
      }
    }
  }
  // Gated rules: an @rx (plain, not negated, not multiMatch) whose regex Hyperscan answers, on
  // request collections only (no TX, MATCHED_VAR, counts).
  im.pipeline_vars.assign(rs.pipelines.size(), 0);
  for (auto& r : rs.rules) {
    if (r->is_marker || r->phase > 2) continue;
    std::vector<Rule*> links;
    collect_links(*r, links);
    for (Rule* l : links) {
      if (l->op.op != Op::kRx || l->op.negated || l->op.param_has_macro || l->multi_match ||
          l->op.regex < 0 || l->op.param.empty())
        continue;
      const RxMode m = im.regexes[static_cast<size_t>(l->op.regex)].mode;
      if (m != RxMode::kExact && m != RxMode::kPrefilter) continue;
      bool dynamic = false;
      uint64_t vars = 0;
      for (const Target& t : l->targets) {
        if (t.exclude) continue;
        if (t.count || t.var == Var::kTx || t.var == Var::kMatchedVar ||
            t.var == Var::kMatchedVarName || t.var == Var::kMatchedVars ||
            t.var == Var::kMatchedVarsNames)
          dynamic = true;
        vars |= uint64_t{1} << static_cast<size_t>(t.var);
      }
      if (dynamic) continue;
      l->hs_gate = true;
      im.pipeline_vars[static_cast<size_t>(l->pipeline)] |= vars;
    }
  }
  for (auto& r : rs.rules) {
    if (r->is_marker) continue;
    for (const Rule* l = r.get(); l != nullptr; l = l->child.get())
      for (const Target& t : l->targets)
        if (t.var == Var::kXml && !t.selector.empty() &&
            std::find(im.xml_paths.begin(), im.xml_paths.end(), t.selector) == im.xml_paths.end())
          im.xml_paths.push_back(t.selector);
  }
  for (size_t i = 0; i < rs.rules.size(); ++i) {
    const Rule& r = *rs.rules[i];
    for (int phase = 1; phase <= 2; ++phase)
      if (r.is_marker || r.phase == phase) im.phase_rules[phase].push_back(i);
  }

  // Selector regexes (case-insensitive, as ModSecurity's).
  for (const std::string& s : rs.selector_regexes) {
    int err = 0;
    PCRE2_SIZE off = 0;
    im.selectors.push_back(
        pcre2_compile(reinterpret_cast<PCRE2_SPTR>(s.c_str()), PCRE2_ZERO_TERMINATED,
                      PCRE2_CASELESS | PCRE2_DOTALL | PCRE2_MULTILINE, &err, &off, nullptr));
  }
  // @pm phrase sets: case-insensitive literal databases.
  for (auto& r : rs.rules) {
    if (r->is_marker) continue;
    ++st.rules;
    if (r->phase <= 2) ++st.request_rules;
    std::vector<Rule*> links;
    collect_links(*r, links);
    for (Rule* l : links) {
      if (l->op.op != Op::kPm) continue;
      std::vector<const char*> exprs;
      std::vector<size_t> lens;
      std::vector<unsigned> flags, ids;
      for (const std::string& ph : l->op.phrases) {
        exprs.push_back(ph.data());
        lens.push_back(ph.size());
        flags.push_back(HS_FLAG_CASELESS | HS_FLAG_SINGLEMATCH);
        ids.push_back(0);
      }
      hs_database_t* db = nullptr;
      hs_compile_error_t* err = nullptr;
      if (hs_compile_lit_multi(exprs.data(), flags.data(), ids.data(), lens.data(),
                               static_cast<unsigned>(exprs.size()), HS_MODE_BLOCK, nullptr, &db,
                               &err) != HS_SUCCESS) {
        std::string msg =
            err != nullptr && err->message != nullptr ? err->message : "unknown error";
        if (err != nullptr) hs_free_compile_error(err);
        return make_error("Hyperscan: @pm of rule " + std::to_string(r->id) + ": " + msg);
      }
      l->op.pm_db = static_cast<int>(im.pm_db.size());
      im.pm_db.push_back({db});
    }
  }
  if (libinjection().sqli == nullptr || libinjection().xss == nullptr) {
    for (auto& r : rs.rules) {
      if (r->is_marker || r->phase > 2) continue;
      for (const Rule* l = r.get(); l != nullptr; l = l->child.get())
        if (l->op.op == Op::kDetectSqli || l->op.op == Op::kDetectXss)
          rs.notes.push_back({r->id, r->file + ":" + std::to_string(r->line),
                              "operator @" + l->op.name + " (no libinjection: " +
                                  std::string(kLibinjectionLibrary) + " not found)"});
    }
  }
  for (const RuleNote& n : rs.notes)
    if (n.why.find("response") == std::string::npos) ++st.unsupported;
  return e;
}

Outcome Engine::evaluate(const Request& req) const {
  Scratch& s = scratch_for(this, impl_->serial);
  if (s.md == nullptr) s.md = pcre2_match_data_create(kOvectorPairs, nullptr);
  if (s.hs == nullptr) {
    for (const HsDb& d : impl_->pipeline_db)
      if (d.db != nullptr) hs_alloc_scratch(d.db, &s.hs);
    for (const HsDb& d : impl_->pm_db)
      if (d.db != nullptr) hs_alloc_scratch(d.db, &s.hs);
  }
  Evaluator ev(rules_, *impl_, s);
  return ev.run(req, initial_);
}

Result<Ruleset> load_crs(const std::string& crs, const std::string& base) {
  RuleParser p;
  if (!base.empty())
    if (Status st = p.load_file(base); !st) return make_error(st.error());
  std::vector<std::string> files;
  if (is_dir(crs)) {
    if (is_file(crs + "/owasp-crs.load")) {
      files.push_back(crs + "/owasp-crs.load");
    } else {
      if (is_file(crs + "/crs-setup.conf")) files.push_back(crs + "/crs-setup.conf");
      files.push_back(crs + "/rules/*.conf");
    }
  } else {
    files.push_back(crs);
  }
  for (const std::string& f : files) {
    Status st = f.find('*') != std::string::npos ? p.load_text("Include " + f + "\n", "(crs)", crs)
                                                 : p.load_file(f);
    if (!st) return make_error(st.error());
  }
  return p.finish();
}

}  // namespace fulcrum::waf
