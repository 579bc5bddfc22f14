#include "bench/offload_apps.hh"

#include <cstdlib>
#include <fstream>
#include <regex>
#include <utility>

#include "bench/measure.hh"
#include "core/registry.hh"
#include "io/cores.hh"
#include "lib/route6_table.hh"
#include "lib/route_table.hh"
#include "offload/service.hh"

namespace fulcrum::bench {
namespace {

const char* const kRewrite =
    "EtherRewrite(0 02:00:00:00:00:10 02:00:00:00:01:10, 1 02:00:00:00:00:11 02:00:00:00:01:11)";
const char* const kSaLine =
    "4096 192.0.2.1 198.51.100.1 2b7e151628aed2a6abf7158809cf4f3cdeadbeef "
    "0102030405060708090a0b0c0d0e0f1011121314 0.0.0.0/0 DIR out\n";
const char* const kRules =
    "alert udp any any -> any any (msg:\"sweep 1\"; content:\"fulcrum-ids-needle\"; sid:1;)\n"
    "alert udp any any -> any any (msg:\"sweep 2\"; content:\"GET /etc/passwd\"; sid:2;)\n"
    "alert udp any any -> any any (msg:\"sweep 3\"; content:\"evil\"; nocase; sid:3;)\n";

}  // namespace

Status write_files(const std::string& dir, Files& f) {
  f.routes4 = dir + "/sweep-routes4.txt";
  f.routes6 = dir + "/sweep-routes6.txt";
  f.sa = dir + "/sweep-sa.txt";
  f.rules = dir + "/sweep-ids.rules";
  if (Status s = write_routes4(f.routes4, generate_routes4(kRoutes, kSeed, 2)); !s) return s;
  if (Status s = write_routes6(f.routes6, generate_routes6(kRoutes, kSeed, 2)); !s) return s;
  std::ofstream(f.sa) << kSaLine;
  std::ofstream(f.rules) << kRules;
  return {};
}

const App kApps[] = {
    {"ipv4-router",
     {"IPLookupOffload"},
     {64, 512, 1500},
     "FromInput -> CheckIPHeader -> $B -> IPLookupOffload($ROUTES4, $AGG) -> DecIPTTL -> $REWRITE "
     "-> ToOutput;",
     "FromInput -> CheckIPHeader -> IPLookup($ROUTES4) -> DecIPTTL -> $REWRITE -> ToOutput;",
     Traffic::kIpv4Routes},
    {"ipv6-router",
     {"IP6LookupOffload"},
     {78, 512, 1500},
     "FromInput -> CheckIP6Header -> $B -> IP6LookupOffload($ROUTES6, $AGG) -> DecIP6HLim -> "
     "$REWRITE -> ToOutput;",
     "FromInput -> CheckIP6Header -> IP6Lookup($ROUTES6) -> DecIP6HLim -> $REWRITE -> ToOutput;",
     Traffic::kIpv6Routes},
    {"ipsec-gateway",
     {"IPsecAESOffload", "IPsecAuthHMACSHA1Offload"},
     {64, 512, 1500},
     "FromInput -> IPsecESPEncap($SA) -> $B -> IPsecAESOffload($SA, $AGG$CHAIN) -> "
     "IPsecAuthHMACSHA1Offload($SA, $AGG) -> ToOutput;",
     "FromInput -> IPsecESPEncap($SA) -> IPsecAES($SA) -> IPsecAuthHMACSHA1($SA) -> ToOutput;",
     Traffic::kUdp,
     true},
    {"md5",
     {"MD5DigestOffload"},
     {64, 512, 1500},
     "FromInput -> $B -> MD5DigestOffload($AGG) -> ToOutput;",
     "FromInput -> MD5Digest -> ToOutput;",
     Traffic::kUdp},
    {"ids",
     {"IDSMatchOffload"},
     {64, 512, 1500},
     "ids :: IDSMatchOffload($RULES, $AGG); FromInput -> $B -> ids -> ToOutput; ids[1] -> Discard;",
     "ids :: IDSMatch($RULES, ENGINE ac); FromInput -> ids -> ToOutput; ids[1] -> Discard;",
     Traffic::kUdp},
};

namespace {

std::string substitute(std::string text,
                       const std::vector<std::pair<std::string, std::string>>& vars) {
  for (const auto& [key, value] : vars)
    for (size_t at = text.find(key); at != std::string::npos;
         at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
  return text;
}

std::string quoted(const std::string& s) {
  return "\"" + s + "\"";
}

}  // namespace

// The pipeline text of template `tmpl` with its variables filled in.
std::string pipeline(const char* tmpl, const Files& f, const std::string& balancer,
                     uint32_t aggregate, const std::string& chain) {
  return substitute(tmpl, {{"$ROUTES4", quoted(f.routes4)},
                           {"$ROUTES6", quoted(f.routes6)},
                           {"$RULES", quoted(f.rules)},
                           {"$REWRITE", kRewrite},
                           {"$SA", quoted(f.sa)},
                           {"$AGG", "AGGREGATE " + std::to_string(aggregate)},
                           {"$CHAIN", chain},
                           {"$B", balancer}});
}

std::string traffic(const App& app, const Files& f, uint32_t size) {
  const std::string common = "size=" + std::to_string(size) + ",flows=" + std::to_string(kFlows);
  switch (app.traffic) {
    case Traffic::kIpv4Routes:
      return "gen:" + common + ",dst=routes,routes=" + f.routes4;
    case Traffic::kIpv6Routes:
      return "gen:proto=ipv6," + common + ",dst=routes,routes=" + f.routes6;
    case Traffic::kUdp:
      break;
  }
  return "gen:" + common + ",dst=uniform";
}

std::string fraction(double w) {
  return "FixedFraction(" + fmt(w) + ")";
}

OwnCore::OwnCore(bool on) : on_(on) {
  if (!on_) return;
  Result<CorePlan> plan = plan_cores(1, {});
  cpus_ = std::to_string(plan ? plan.value().control_cpu : 0);
  setenv(offload::kDeviceThreadCpusEnv, cpus_.c_str(), 1);
}

OwnCore::~OwnCore() {
  if (on_) unsetenv(offload::kDeviceThreadCpusEnv);
}

std::string own_core_pipeline(std::string text) {
  static const std::regex kAggregate("AGGREGATE ([0-9]+)");
  return std::regex_replace(text, kAggregate,
                            "AGGREGATE $1, FLUSH_US " + std::to_string(kOwnCoreFlushUs));
}

double gbps(double mpps, uint32_t size) {
  return mpps * size * kBitsPerByte / 1000;
}

std::span<const App> offload_apps() {
  return kApps;
}

const char* missing_class(const App& app) {
  for (const char* cls : app.needs)
    if (Registry::instance().find(cls) == nullptr) return cls;
  return nullptr;
}

// A comma-separated list in the environment variable `env` (FULCRUM_BENCH_PROFILES: device
// profiles; FULCRUM_BENCH_APPS: applications) picks what runs; unset: everything.
bool bench_selected(const char* env, std::string_view name) {
  const char* list = std::getenv(env);
  if (list == nullptr || *list == '\0') return true;
  std::string_view rest(list);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    if (rest.substr(0, comma) == name) return true;
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return false;
}

}  // namespace fulcrum::bench
