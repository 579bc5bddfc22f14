// L7Balancer and its ring: the same key keeps its backend, a backend marked down loses only its
// own keys (the others stay), down backends are never chosen, Host/path rules pick the pool, a
// pool with nothing up answers 502; and the configuration format's errors name file:line:col.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "l7/config.hh"
#include "l7/nf/balancer.hh"
#include "l7/nf/hash_ring.hh"
#include "l7/proxy/backends.hh"

namespace fulcrum::l7 {
namespace {

constexpr int kKeys = 20000;
constexpr int kBackends = 5;

std::unique_ptr<L7Balancer> make_balancer(BackendTable& table, std::vector<std::string> args) {
  Args a(args, SourceLoc{"test.l7", 1, 1}, "L7Balancer@1", "L7Balancer");
  Result<std::unique_ptr<L7Balancer>> b = L7Balancer::configure(a, table);
  EXPECT_TRUE(b.ok()) << (b.ok() ? "" : b.error());
  return b.ok() ? std::move(*b) : nullptr;
}

Message request(FlowId flow, std::string host, std::string target) {
  Message m;
  m.flow = flow;
  m.head.method = "GET";
  m.head.target = std::move(target);
  m.head.headers = {{"Host", std::move(host)}};
  return m;
}

TEST(L7HashRing, KeysKeepTheirMemberAndOnlyTheDownMembersKeysMove) {
  HashRing ring;
  for (int i = 0; i < kBackends; ++i) ring.add(i, "10.0.0." + std::to_string(i) + ":80", 160);
  std::vector<bool> up(kBackends, true);
  auto is_up = [&](int id) { return up[static_cast<size_t>(id)]; };
  std::vector<int> before(kKeys);
  std::map<int, int> load;
  for (int k = 0; k < kKeys; ++k) {
    before[static_cast<size_t>(k)] = ring.pick(mix64(static_cast<uint64_t>(k)), is_up);
    ++load[before[static_cast<size_t>(k)]];
  }
  ASSERT_EQ(load.size(), static_cast<size_t>(kBackends));
  for (const auto& [id, n] : load) EXPECT_GT(n, kKeys / kBackends / 2) << "member " << id;
  up[2] = false;
  std::map<int, int> moved_to;
  for (int k = 0; k < kKeys; ++k) {
    const int now = ring.pick(mix64(static_cast<uint64_t>(k)), is_up);
    EXPECT_NE(now, 2);
    if (before[static_cast<size_t>(k)] != 2)
      EXPECT_EQ(now, before[static_cast<size_t>(k)]) << "key " << k << " moved";
    else
      ++moved_to[now];
  }
  EXPECT_GE(moved_to.size(), 3u);  // the lost keys spread over the others
  up.assign(kBackends, false);
  EXPECT_EQ(ring.pick(1, is_up), -1);
}

TEST(L7Balancer, RulesPickThePoolAndHashingIsStable) {
  BackendTable table;
  auto b = make_balancer(
      table, {"POOL web 127.0.0.1:9000 127.0.0.1:9001 127.0.0.1:9002", "POOL api 127.0.0.1:9100",
              "RULE api API.example /api/", "DEFAULT web"});
  ASSERT_TRUE(b);
  EXPECT_EQ(table.size(), 4u);
  EXPECT_EQ(b->pool_for(request(1, "api.example:8080", "/api/v1").head), 1u);
  EXPECT_EQ(b->pool_for(request(1, "api.example", "/other").head), 0u);
  EXPECT_EQ(b->pool_for(request(1, "www.example", "/api/v1").head), 0u);
  std::vector<uint8_t> state;
  Message api = request(7, "api.example", "/api/x");
  b->process(api, state);
  EXPECT_EQ(api.verdict.backend, 3);
  std::map<int, int> seen;
  for (FlowId f = 1; f <= 300; ++f) {
    Message m1 = request(f, "www", "/"), m2 = request(f, "www", "/b");
    b->process(m1, state);
    b->process(m2, state);
    EXPECT_EQ(m1.verdict.backend, m2.verdict.backend);  // HASH flow: the connection sticks
    ++seen[m1.verdict.backend];
  }
  EXPECT_EQ(seen.size(), 3u);
}

TEST(L7Balancer, DownBackendsAreSkippedAndAnEmptyPoolAnswers502) {
  BackendTable table;
  auto b = make_balancer(table, {"POOL web 127.0.0.1:9000 127.0.0.1:9001", "HASH header:X-User"});
  ASSERT_TRUE(b);
  std::vector<uint8_t> state;
  table.set_up(0, false);
  for (int u = 0; u < 100; ++u) {
    Message m = request(1, "h", "/");
    m.head.headers.push_back({"X-User", "user" + std::to_string(u)});
    b->process(m, state);
    EXPECT_EQ(m.verdict.action, Action::kForward);
    EXPECT_EQ(m.verdict.backend, 1);
  }
  table.set_up(1, false);
  Message m = request(1, "h", "/");
  b->process(m, state);
  EXPECT_EQ(m.verdict.action, Action::kRespond);
  EXPECT_EQ(m.verdict.status, 502);
  // The proxy's reports: `fails` consecutive failures mark down, one success marks up.
  table.report_success(0);
  EXPECT_TRUE(table.up(0));
  table.report_failure(0, 2);
  EXPECT_TRUE(table.up(0));
  table.report_failure(0, 2);
  EXPECT_FALSE(table.up(0));
}

TEST(L7Balancer, BadArgumentsAreErrors) {
  BackendTable table;
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{},
                                             {"POOL web"},
                                             {"POOL web 1.2.3:80"},
                                             {"POOL web 127.0.0.1:1", "RULE api * /"},
                                             {"POOL web 127.0.0.1:1", "HASH cookie"},
                                             {"POOL web 127.0.0.1:1", "DEFAULT x"}}) {
    Args a(args, SourceLoc{"b.l7", 3, 1}, "L7Balancer@1", "L7Balancer");
    Result<std::unique_ptr<L7Balancer>> b = L7Balancer::configure(a, table);
    ASSERT_FALSE(b.ok());
    EXPECT_NE(b.error().find("b.l7:3:1"), std::string::npos) << b.error();
  }
}

TEST(L7Config, EmptyChainAndErrorsWithTheirPlace) {
  Result<std::unique_ptr<Chain>> empty = parse_chain("# nothing\n\n// here\n", "p.l7");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)->size(), 0u);
  Result<std::unique_ptr<Chain>> one = parse_chain(
      "# pools\nL7Balancer(POOL web 127.0.0.1:9000,  # the web pool\n"
      "           HASH path)\n",
      "c.l7");
  ASSERT_TRUE(one.ok()) << one.error();
  EXPECT_EQ((*one)->size(), 1u);
  struct Bad {
    std::string text, where, what;
  };
  for (const Bad& bad : std::vector<Bad>{
           {"\n  L7Balancr(POOL a 127.0.0.1:1)", "x.l7:2:3", "did you mean 'L7Balancer'"},
           {"L7Balancer(POOL a 127.0.0.1:1", "x.l7:1:11", "expected ')'"},
           {"L7Balancer(POOL a 127.0.0.1:1) ->", "x.l7:1:", "expected an NF name after '->'"},
           {"\n\nL7Balancer(POOL a 127.0.0.1:1) ?", "x.l7:3:", "expected '->'"},
           {"L7Balancer(POOL a 127.0.0.1:1, NOPE 1)", "x.l7:1:1", "NOPE"},
       }) {
    Result<std::unique_ptr<Chain>> c = parse_chain(bad.text, "x.l7");
    ASSERT_FALSE(c.ok()) << bad.text;
    EXPECT_NE(c.error().find(bad.where), std::string::npos) << c.error();
    EXPECT_NE(c.error().find(bad.what), std::string::npos) << c.error();
  }
}

TEST(L7Config, TheSampleConfigurationsLoad) {
  const char* src = std::getenv("FULCRUM_SOURCE_DIR");
  const std::string dir = std::string(src ? src : ".") + "/configs/l7/";
  for (const char* name : {"passthrough.l7", "balancer.l7", "web-gateway.l7"}) {
    Result<std::unique_ptr<Chain>> c = load_chain(dir + name);
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ((*c)->size(), std::string(name) == "passthrough.l7" ? 0u
                            : std::string(name) == "balancer.l7"  ? 1u
                                                                  : 2u);
    if (std::string(name) == "web-gateway.l7") {
      EXPECT_TRUE((*c)->offloadable());
    }
  }
}

}  // namespace
}  // namespace fulcrum::l7
