// waf_verdicts: runs Fulcrum's WAF NF on a request corpus and prints one JSON verdict per
// request (the Fulcrum side of tests/e2e/test_waf_modsecurity.py).
//
//   waf_verdicts [--crs DIR] [--base FILE] [--paranoia N] [--anomaly N] CORPUS.jsonl
//
// CORPUS: one request a line, {"method", "target", "headers": [[name, value], ...], "body",
// "version" (optional, "1.1")}. Each request becomes an l7::Message (no HTTP parsing) and goes
// through WafNf::process. Output: {"i", "status" (the answer: 200 when forwarded), "rules"
// (ids of the logged rules that matched), "score"}, then {"unsupported": [...], "stats": {...}}.
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "l7/nf/waf.hh"

using fulcrum::l7::Message;
using fulcrum::l7::WafNf;

int main(int argc, char** argv) {
  WafNf::Config cfg;
  std::string corpus;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : std::string(); };
    if (a == "--crs")
      cfg.crs = next();
    else if (a == "--base")
      cfg.base = next();
    else if (a == "--paranoia")
      cfg.paranoia = std::stoi(next());
    else if (a == "--anomaly")
      cfg.anomaly = std::stoi(next());
    else
      corpus = a;
  }
  if (corpus.empty()) {
    std::cerr
        << "usage: waf_verdicts [--crs DIR] [--base FILE] [--paranoia N] [--anomaly N] CORPUS\n";
    return 2;
  }
  auto nf = WafNf::create(cfg);
  if (!nf) {
    std::cerr << nf.error() << "\n";
    return 1;
  }
  std::ifstream in(corpus);
  if (!in) {
    std::cerr << corpus << ": cannot open\n";
    return 1;
  }
  size_t index = 0;
  for (std::string line; std::getline(in, line); ++index) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line);
    Message m;
    m.head.method = j.at("method").get<std::string>();
    m.head.target = j.at("target").get<std::string>();
    const std::string version = j.value("version", std::string("1.1"));
    m.head.version_minor = static_cast<uint8_t>(version.back() - '0');
    for (const auto& h : j.at("headers"))
      m.head.headers.emplace_back(h.at(0).get<std::string>(), h.at(1).get<std::string>());
    const std::string body = j.value("body", std::string());
    m.body.resize(body.size());
    if (!body.empty()) std::memcpy(m.body.data(), body.data(), body.size());
    const fulcrum::waf::Outcome out = (*nf)->inspect(m.head, m.body);
    (*nf)->process(m, {});
    nlohmann::json o;
    o["i"] = index;
    o["status"] = m.verdict.action == fulcrum::l7::Action::kForward ? 200 : m.verdict.status;
    o["reason"] = m.verdict.reason;
    o["rules"] = out.logged;
    o["score"] = out.anomaly_score;
    std::cout << o.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  const auto& st = (*nf)->engine().stats();
  nlohmann::json tail;
  tail["unsupported"] = (*nf)->unsupported();
  tail["ignored"] = (*nf)->ignored();
  tail["stats"] = {{"rules", st.rules},
                   {"request_rules", st.request_rules},
                   {"unsupported", st.unsupported},
                   {"regexes", st.regexes},
                   {"hs_exact", st.hs_exact},
                   {"hs_prefilter", st.hs_prefilter},
                   {"pcre_only", st.pcre_only},
                   {"pipelines", st.pipelines}};
  std::cout << tail.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return 0;
}
