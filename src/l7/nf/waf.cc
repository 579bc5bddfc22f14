#include "l7/nf/waf.hh"

namespace fulcrum::l7 {

Result<std::unique_ptr<WafNf>> WafNf::create(const Config& cfg) {
  if (cfg.mode != "block" && cfg.mode != "detect")
    return make_error("WAF: MODE must be block or detect, not " + cfg.mode);
  if (cfg.paranoia < 1 || cfg.paranoia > 4) return make_error("WAF: PARANOIA must be 1..4");
  if (cfg.anomaly < 1) return make_error("WAF: ANOMALY must be at least 1");
  auto rules = waf::load_crs(cfg.crs, cfg.base);
  if (!rules) return make_error("WAF: " + rules.error());
  // As crs-setup.conf's 900000 / 900110 would: the CRS's 901 rules keep values already set.
  std::vector<std::pair<std::string, std::string>> initial = {
      {"paranoia_level", std::to_string(cfg.paranoia)},
      {"executing_paranoia_level", std::to_string(cfg.paranoia)},
      {"inbound_anomaly_score_threshold", std::to_string(cfg.anomaly)},
  };
  auto engine = waf::Engine::create(std::move(*rules), std::move(initial));
  if (!engine) return make_error("WAF: " + engine.error());
  std::unique_ptr<WafNf> nf(new WafNf());
  nf->engine_ = std::move(*engine);
  nf->block_ = cfg.mode == "block";
  for (const auto& r : nf->engine_->ruleset().rules)
    if (!r->is_marker) nf->rule_index_.emplace(r->id, nf->rule_index_.size());
  nf->hits_ = std::make_unique<std::atomic<uint64_t>[]>(nf->rule_index_.size());
  return nf;
}

waf::Outcome WafNf::inspect(const HttpHead& head, std::span<const uint8_t> body) const {
  waf::Request req;
  req.method = head.method;
  req.target = head.target;
  const std::string version = "1." + std::to_string(head.version_minor);
  req.version = version;
  req.headers = &head.headers;
  req.body = std::string_view(reinterpret_cast<const char*>(body.data()), body.size());
  return engine_->evaluate(req);
}

void WafNf::process(Message& m, std::span<uint8_t> state) {
  (void)state;
  if (!m.http || m.dir != Direction::kRequest) return;
  requests_.fetch_add(1, std::memory_order_relaxed);
  const waf::Outcome out = inspect(m.head, m.body);
  for (uint32_t id : out.matched) {
    auto it = rule_index_.find(id);
    if (it != rule_index_.end()) hits_[it->second].fetch_add(1, std::memory_order_relaxed);
  }
  if (!out.disrupted) return;
  detected_.fetch_add(1, std::memory_order_relaxed);
  std::string ids;
  for (uint32_t id : out.logged) ids += (ids.empty() ? "" : " ") + std::to_string(id);
  if (!block_) {
    m.verdict.alerts += static_cast<uint32_t>(out.logged.size());
    return;
  }
  blocked_.fetch_add(1, std::memory_order_relaxed);
  m.verdict.action = out.drop ? Action::kClose : Action::kRespond;
  m.verdict.status = static_cast<uint16_t>(out.status);
  m.verdict.reason = "WAF: " + ids;
  m.verdict.alerts += static_cast<uint32_t>(out.logged.size());
}

std::vector<std::string> WafNf::unsupported() const {
  std::vector<std::string> out;
  for (const waf::RuleNote& n : engine_->ruleset().notes)
    out.push_back(std::to_string(n.id) + " " + n.where + ": " + n.why);
  return out;
}

std::vector<std::string> WafNf::ignored() const {
  std::vector<std::string> out;
  for (const waf::RuleNote& n : engine_->ruleset().ignored)
    out.push_back(std::to_string(n.id) + " " + n.where + ": " + n.why);
  return out;
}

std::map<uint32_t, uint64_t> WafNf::rule_hits() const {
  std::map<uint32_t, uint64_t> out;
  for (const auto& [id, i] : rule_index_) {
    const uint64_t n = hits_[i].load(std::memory_order_relaxed);
    if (n != 0) out[id] = n;
  }
  return out;
}

namespace {

Result<std::unique_ptr<FlowNf>> make_waf(Args& a) {
  WafNf::Config c;
  a.key("CRS", c.crs, "CRS directory (owasp-crs.load or crs-setup.conf + rules/) or .conf file")
      .key("BASE", c.base, "ModSecurity configuration read before the CRS")
      .key("PARANOIA", c.paranoia, "CRS paranoia level 1..4")
      .key("ANOMALY", c.anomaly, "inbound anomaly score threshold")
      .key("MODE", c.mode, "block or detect");
  if (Status s = a.finish(); !s) return make_error(s.error());
  auto nf = WafNf::create(c);
  if (!nf) return Error{a.error(nf.error()).message};
  return std::unique_ptr<FlowNf>(std::move(*nf));
}

}  // namespace

FULCRUM_REGISTER_NF(WAF, make_waf);

}  // namespace fulcrum::l7
