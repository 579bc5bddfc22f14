#include "l7/nf/balancer.hh"

#include <strings.h>

#include <sstream>

namespace fulcrum::l7 {

namespace {

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The Host header without its port, lower-case.
std::string host_of(const HttpHead& h) {
  std::string host(h.header("host"));
  const size_t colon = host.find(':');
  if (colon != std::string::npos) host.resize(colon);
  for (char& c : host)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  return host;
}

}  // namespace

Result<std::unique_ptr<FlowNf>> L7Balancer::make(Args& a) {
  Result<std::unique_ptr<L7Balancer>> b = configure(a, BackendTable::global());
  if (!b) return make_error(b.error());
  return std::unique_ptr<FlowNf>(std::move(*b));
}

Result<std::unique_ptr<L7Balancer>> L7Balancer::configure(Args& a, BackendTable& table) {
  std::unique_ptr<L7Balancer> b(new L7Balancer(table));
  std::vector<std::string> pool_args, rule_args;
  for (;;) {
    std::string v;
    a.key("POOL", v, "a pool: NAME A.B.C.D:PORT ... (repeatable)");
    if (v.empty() || a.describing()) break;
    pool_args.push_back(v);
  }
  for (;;) {
    std::string v;
    a.key("RULE", v, "POOL HOST PATH-PREFIX (\"*\": any host), first match wins (repeatable)");
    if (v.empty() || a.describing()) break;
    rule_args.push_back(v);
  }
  std::string default_pool, hash = "flow";
  a.key("DEFAULT", default_pool, "pool when no rule matches (default: the first pool)")
      .key("HASH", hash, "key hashed within a pool: flow, path or header:NAME")
      .key("VNODES", b->vnodes_, "ring points per backend");
  if (Status st = a.finish(); !st) return make_error(st.error());
  if (pool_args.empty()) return a.error("expected at least one POOL name A.B.C.D:PORT ...");
  if (b->vnodes_ == 0) return a.error("VNODES must be at least 1");
  for (const std::string& p : pool_args) {
    std::vector<std::string> w = words(p);
    if (w.size() < 2) return a.error("POOL '" + p + "': expected NAME A.B.C.D:PORT ...");
    Pool pool;
    pool.name = w[0];
    for (size_t i = 1; i < w.size(); ++i) {
      Result<int> idx = table.add(w[i]);
      if (!idx) return a.error("POOL " + w[0] + ": " + idx.error());
      pool.backends.push_back(*idx);
      pool.ring.add(*idx, w[i], b->vnodes_);
    }
    for (const Pool& q : b->pools_)
      if (q.name == pool.name) return a.error("POOL " + pool.name + " defined twice");
    b->pools_.push_back(std::move(pool));
  }
  auto find_pool = [&](const std::string& n) -> int {
    for (size_t i = 0; i < b->pools_.size(); ++i)
      if (b->pools_[i].name == n) return static_cast<int>(i);
    return -1;
  };
  for (const std::string& r : rule_args) {
    std::vector<std::string> w = words(r);
    if (w.size() != 3) return a.error("RULE '" + r + "': expected POOL HOST PATH-PREFIX");
    const int p = find_pool(w[0]);
    if (p < 0) return a.error("RULE '" + r + "': no pool '" + w[0] + "'");
    Rule rule{static_cast<size_t>(p), w[1] == "*" ? "" : w[1], w[2] == "*" ? "" : w[2]};
    for (char& c : rule.host)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    b->rules_.push_back(std::move(rule));
  }
  if (!default_pool.empty()) {
    const int p = find_pool(default_pool);
    if (p < 0) return a.error("DEFAULT: no pool '" + default_pool + "'");
    b->default_pool_ = static_cast<size_t>(p);
  }
  if (hash == "flow") {
    b->key_ = Key::kFlow;
  } else if (hash == "path") {
    b->key_ = Key::kPath;
  } else if (hash.rfind("header:", 0) == 0 && hash.size() > 7) {
    b->key_ = Key::kHeader;
    b->key_header_ = hash.substr(7);
  } else {
    return a.error("HASH '" + hash + "': expected flow, path or header:NAME");
  }
  return b;
}

size_t L7Balancer::pool_for(const HttpHead& h) const {
  if (rules_.empty()) return default_pool_;
  const std::string host = host_of(h);
  for (const Rule& r : rules_) {
    if (!r.host.empty() && r.host != host) continue;
    if (h.target.compare(0, r.path_prefix.size(), r.path_prefix) != 0) continue;
    return r.pool;
  }
  return default_pool_;
}

uint64_t L7Balancer::key_of(const Message& m) const {
  switch (key_) {
    case Key::kPath:
      return hash64(m.head.target);
    case Key::kHeader: {
      const std::string_view v = m.head.header(key_header_);
      if (!v.empty()) return hash64(v);
      break;
    }
    case Key::kFlow:
      break;
  }
  return mix64(m.flow);
}

void L7Balancer::process(Message& m, std::span<uint8_t>) {
  if (m.dir != Direction::kRequest || !m.http) return;
  Pool& pool = pools_[pool_for(m.head)];
  ++pool.requests;
  const int b = pool.ring.pick(key_of(m), [this](int id) { return table_.up(id); });
  if (b < 0) {
    ++pool.unavailable;
    m.verdict.action = Action::kRespond;
    m.verdict.status = 502;
    m.verdict.reason = "L7Balancer: pool " + pool.name + " has no backend up";
    return;
  }
  m.verdict.backend = b;
}

FULCRUM_REGISTER_NF(L7Balancer, L7Balancer::make);

}  // namespace fulcrum::l7
