#include "elements/ids/ids_match.hh"

#include "core/shared_storage.hh"
#include "lib/ids/rule_parser.hh"

namespace fulcrum {

Status IDSMatch::configure(Args& args) {
  loc_ = args.loc();
  Status s = args.positional_file("RULES", rules_file_, kRulesHelp)
                 .key("ENGINE", engine_name_,
                      "content prefilter: hyperscan (Hyperscan literal database) or ac (our "
                      "Aho-Corasick DFA, src/lib/ids); pcre options always run on Hyperscan")
                 .key("ALERTS", alerts_file_, kAlertsHelp)
                 .key("DROP", drop_, kDropHelp)
                 .finish();
  if (!s) return s;
  if (engine_name_ == "hyperscan") {
    engine_ = ids::Engine::kHyperscan;
  } else if (engine_name_ == "ac") {
    engine_ = ids::Engine::kAhoCorasick;
  } else {
    return args.error("ENGINE: expected hyperscan or ac, got '" + engine_name_ + "'");
  }
  return {};
}

Status IDSMatch::initialize(const InitContext& ctx) {
  const Args args({}, loc_, name(), kTraits.class_name);
  Result<std::shared_ptr<const ids::RuleSet>> rules = shared_or_own<ids::RuleSet>(
      ctx.shared, "ids-rules:" + rules_file_, [this]() -> Result<std::shared_ptr<ids::RuleSet>> {
        Result<std::vector<ids::Rule>> parsed = ids::load_rules(rules_file_);
        if (!parsed) return make_error(parsed.error());
        Result<std::shared_ptr<ids::RuleSet>> set = ids::RuleSet::compile(std::move(*parsed));
        if (!set) return make_error(rules_file_ + ": " + set.error());
        return set;
      });
  if (!rules) return args.error(rules.error());
  rules_ = rules.value();
  Result<std::unique_ptr<ids::Matcher>> m = ids::Matcher::create(rules_, engine_);
  if (!m) return args.error(m.error());
  matcher_ = std::move(m.value());
  if (!alerts_file_.empty()) {
    const std::string path =
        ctx.workers > 1 ? alerts_file_ + "." + std::to_string(ctx.worker) : alerts_file_;
    Result<std::unique_ptr<ids::AlertLog>> log = ids::AlertLog::open(path);
    if (!log) return args.error(log.error());
    log_ = std::move(log.value());
  }
  alerted_verdict_ = output_connected(kAlertOutput) ? Verdict::out(kAlertOutput)
                     : drop_                        ? Verdict::drop(kDropReasons["alert"])
                                                    : Verdict::out(0);
  return {};
}

void IDSMatch::output_losses(std::vector<OutputLoss>& out) const {
  if (log_ && log_->lost() > 0)
    out.push_back({"alert log " + log_->path(), "alerts", log_->lost(), log_->first_error()});
}

void IDSMatch::counters(std::vector<Counter>& out) const {
  out.push_back({"alerts", alerts_});
  out.push_back({"packets_alerted", packets_alerted_});
  if (!matcher_) return;
  const ids::MatchStats& s = matcher_->stats();
  out.push_back({"bytes_scanned", s.bytes});
  out.push_back({"prefilter_hits", s.hits});
  out.push_back({"rules_evaluated", s.candidates});
  out.push_back({"regex_scans", s.regex_scans});
  out.push_back({"scan_errors", s.errors});
  out.push_back({"log_errors", log_ ? log_->errors() : 0});
  out.push_back({"alerts_lost", log_ ? log_->lost() : 0});
}

}  // namespace fulcrum
