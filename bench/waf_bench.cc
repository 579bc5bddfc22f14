// WAF benchmark: the WAF NF (OWASP CRS 3.3 at paranoia level 1, ModSecurity's recommended
// config) on the comparison corpus (tests/data/waf/corpus.jsonl: benign requests of many
// shapes and attacks of every CRS family), one core: requests/s and MB/s of request bytes
// (request line, headers, body) over the whole corpus, the benign part and the attack part;
// the time to load and compile the rules. Needs the CRS (modsecurity-crs) and the corpus (found
// from FULCRUM_SOURCE_DIR or the working directory); without them the group is null.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/measure.hh"
#include "core/median.hh"
#include "l7/nf/waf.hh"

namespace fulcrum::bench {
namespace {

constexpr double kMega = 1e6;
constexpr const char* kCorpus = "tests/data/waf/corpus.jsonl";
constexpr const char* kBaseConfigs[] = {"/etc/modsecurity/modsecurity.conf-recommended",
                                        "/etc/nginx/modsecurity.conf"};

struct Item {
  l7::Message m;
  size_t bytes = 0;
  bool benign = false;
};

std::vector<Item> load_corpus() {
  std::vector<std::string> paths = {kCorpus};
  if (const char* src = std::getenv("FULCRUM_SOURCE_DIR"))
    paths.insert(paths.begin(), std::string(src) + "/" + kCorpus);
  std::vector<Item> out;
  for (const std::string& p : paths) {
    std::ifstream in(p);
    if (!in) continue;
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      const auto j = nlohmann::json::parse(line);
      Item it;
      it.m.head.method = j.at("method").get<std::string>();
      it.m.head.target = j.at("target").get<std::string>();
      const std::string version = j.value("version", std::string("1.1"));
      it.m.head.version_minor = static_cast<uint8_t>(version.back() - '0');
      it.bytes = it.m.head.method.size() + it.m.head.target.size() + sizeof(" HTTP/1.1\r\n") - 1;
      for (const auto& h : j.at("headers")) {
        it.m.head.headers.emplace_back(h.at(0).get<std::string>(), h.at(1).get<std::string>());
        it.bytes +=
            it.m.head.headers.back().first.size() + it.m.head.headers.back().second.size() + 4;
      }
      const std::string body = j.value("body", std::string());
      it.m.body.resize(body.size());
      if (!body.empty()) std::memcpy(it.m.body.data(), body.data(), body.size());
      it.bytes += 2 + body.size();
      it.benign = j.value("family", std::string()).starts_with("benign");
      out.push_back(std::move(it));
    }
    break;
  }
  return out;
}

struct Rate {
  double rps = 0;
  double mbps = 0;
  double cpu_us = 0;  // thread CPU time per request (less sensitive to a loaded machine)
};

// Runs the NF over `items` (those `pick` selects) again and again for `seconds`.
template <class Pick>
Rate rate(l7::WafNf& nf, std::vector<Item>& items, double seconds, Pick pick) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const double cpu0 = thread_cpu_seconds();
  uint64_t n = 0, bytes = 0;
  double elapsed = 0;
  do {
    for (Item& it : items) {
      if (!pick(it)) continue;
      it.m.verdict = {};
      nf.process(it.m, {});
      ++n;
      bytes += it.bytes;
    }
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < seconds);
  const double cpu = thread_cpu_seconds() - cpu0;
  return {static_cast<double>(n) / elapsed, static_cast<double>(bytes) / elapsed / kMega,
          n > 0 ? cpu / static_cast<double>(n) * kMega : 0};
}

std::string bench_waf(const BenchContext& ctx) {
  std::vector<Item> items = load_corpus();
  if (items.empty()) {
    std::fprintf(stderr, "bench: l7_waf: no corpus (%s; set FULCRUM_SOURCE_DIR): skipped\n",
                 kCorpus);
    return "null";
  }
  l7::WafNf::Config cfg;
  for (const char* b : kBaseConfigs)
    if (std::ifstream(b)) {
      cfg.base = b;
      break;
    }
  const auto t0 = std::chrono::steady_clock::now();
  auto nf = l7::WafNf::create(cfg);
  const double load_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!nf) {
    std::fprintf(stderr, "bench: l7_waf: %s: skipped\n", nf.error().c_str());
    return "null";
  }
  // Warm up (per-thread scratch), then count the verdicts of one pass.
  rate(**nf, items, 0, [](const Item&) { return true; });
  uint64_t blocked = 0, benign = 0;
  for (Item& it : items) {
    it.m.verdict = {};
    (*nf)->process(it.m, {});
    blocked += it.m.verdict.action != l7::Action::kForward;
    benign += it.benign;
  }
  std::vector<double> all, all_mb, good, bad, cpu_us;
  for (int r = 0; r < kRepeats; ++r) {
    const Rate a = rate(**nf, items, ctx.seconds, [](const Item&) { return true; });
    all.push_back(a.rps);
    all_mb.push_back(a.mbps);
    cpu_us.push_back(a.cpu_us);
    good.push_back(rate(**nf, items, ctx.seconds / 2, [](const Item& i) { return i.benign; }).rps);
    bad.push_back(rate(**nf, items, ctx.seconds / 2, [](const Item& i) { return !i.benign; }).rps);
  }
  const auto& st = (*nf)->engine().stats();
  std::fprintf(stderr,
               "bench: l7_waf: %zu requests (%llu benign, %llu blocked): %.0f req/s, %.1f MB/s "
               "(%.0f us CPU/request); benign %.0f req/s, attacks %.0f req/s; rules loaded in "
               "%.2f s\n",
               items.size(), static_cast<unsigned long long>(benign),
               static_cast<unsigned long long>(blocked), median(all), median(all_mb),
               median(cpu_us), median(good), median(bad), load_s);
  return Obj()
      .str("what",
           "WAF NF (OWASP CRS 3.3.4, paranoia 1, threshold 5; Hyperscan per transformation "
           "pipeline + PCRE2) on the WAF comparison corpus, one core")
      .count("requests", items.size())
      .count("benign", benign)
      .count("blocked", blocked)
      .num("requests_per_s", median(all))
      .num("mbytes_per_s", median(all_mb))
      .num("cpu_us_per_request", median(cpu_us))
      .num("benign_requests_per_s", median(good))
      .num("attack_requests_per_s", median(bad))
      .num("rule_load_s", load_s)
      .count("request_rules", st.request_rules)
      .count("regexes", st.regexes)
      .count("hs_exact", st.hs_exact)
      .count("hs_prefilter", st.hs_prefilter)
      .count("pcre_only", st.pcre_only)
      .count("pipelines", st.pipelines)
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(99, "l7_waf", bench_waf);

}  // namespace fulcrum::bench
