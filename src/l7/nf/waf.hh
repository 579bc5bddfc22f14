// WAF — a web application firewall NF: the OWASP Core Rule Set (Debian's modsecurity-crs, CRS
// 3.3) run on each HTTP request the way ModSecurity 3 runs it, with the CRS's anomaly scoring
// (paper 004's WAF network function). A request whose inbound anomaly score reaches the
// threshold is answered 403 and logged with the ids of the rules that matched.
//
// Messages:  HTTP requests (responses and raw chunks pass untouched).
// Config:    CRS (string, default /usr/share/modsecurity-crs): a directory with Debian's
//            owasp-crs.load (which Includes /etc/modsecurity/crs/crs-setup.conf and
//            rules/*.conf), or with crs-setup.conf and rules/, or one .conf file.
//            BASE (string, default none): a ModSecurity configuration read first (the
//            recommended modsecurity.conf, e.g. /etc/nginx/modsecurity.conf).
//            PARANOIA (integer, default 1): the CRS paranoia level (tx.paranoia_level).
//            ANOMALY (integer, default 5): the inbound anomaly score threshold
//            (tx.inbound_anomaly_score_threshold; the CRS default).
//            MODE (block|detect, default block): detect only counts and logs.
// Verdict:   kRespond with the status of the rule that denied (403 for the CRS's 949110;
//            400 for the recommended config's body checks), reason "WAF: <matched rule ids>";
//            kClose for a `drop` rule; in detect mode kForward with alerts = matched rules.
// Counters:  requests, blocked, detected (requests a rule denied, in either mode), per rule
//            id the requests it matched (rule_hits()).
// Offload:   none (CPU only: Hyperscan + PCRE2); a chain holding WAF runs on the CPU.
// Unsupported rule classes (operators such as @detectSQLi, variables such as FILES or XML,
// ctl: actions) are listed by unsupported(); docs/l7-waf.md has the whole list.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "l7/nf/nf.hh"
#include "lib/waf/engine.hh"

namespace fulcrum::l7 {

class WafNf : public FlowNf {
 public:
  struct Config {
    std::string crs = "/usr/share/modsecurity-crs";
    std::string base;
    int paranoia = 1;
    int anomaly = 5;
    std::string mode = "block";
  };

  static Result<std::unique_ptr<WafNf>> create(const Config& cfg);

  std::string_view name() const override { return "WAF"; }
  void process(Message& m, std::span<uint8_t> state) override;

  // The outcome of the rules on a request head and body (what process() decides from).
  waf::Outcome inspect(const HttpHead& head, std::span<const uint8_t> body) const;

  const waf::Engine& engine() const { return *engine_; }
  // "id file:line: why" for each request rule the engine cannot run exactly.
  std::vector<std::string> unsupported() const;
  // "id file:line: what" for each rule whose persistent-collection actions (setvar ip.*,
  // initcol, expirevar) are ignored: they do not change this request's verdict.
  std::vector<std::string> ignored() const;

  uint64_t requests() const { return requests_.load(std::memory_order_relaxed); }
  uint64_t blocked() const { return blocked_.load(std::memory_order_relaxed); }
  uint64_t detected() const { return detected_.load(std::memory_order_relaxed); }
  // Rule id -> requests it matched.
  std::map<uint32_t, uint64_t> rule_hits() const;

 private:
  WafNf() = default;
  std::unique_ptr<waf::Engine> engine_;
  bool block_ = true;
  std::map<uint32_t, size_t> rule_index_;
  std::unique_ptr<std::atomic<uint64_t>[]> hits_;
  std::atomic<uint64_t> requests_{0}, blocked_{0}, detected_{0};
};

}  // namespace fulcrum::l7
