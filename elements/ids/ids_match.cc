#include "elements/ids/ids_match.hh"

#include <rte_cycles.h>

#include <algorithm>
#include <string>
#include <utility>

#include "lib/ids/rule_parser.hh"

namespace fulcrum {

Status IDSMatch::configure(Args& args) {
  loc_ = args.loc();
  Status s = args.positional_file("RULES", rules_file_, kRulesHelp)
                 .key("ENGINE", engine_name_,
                      "content prefilter: hyperscan (Hyperscan literal database) or ac (our "
                      "Aho-Corasick DFA, src/lib/ids); pcre options always run on Hyperscan")
                 .key("ALERTS", alerts_file_, kAlertsHelp)
                 .key("ALERT_FORMAT", alert_format_, kAlertFormatHelp)
                 .key("DROP", drop_, kDropHelp)
                 .key("THRESHOLDS", limits_.thresholds, kThresholdsHelp)
                 .key("FLOWS", limits_.flows, kFlowsHelp)
                 .key("FLOW_TIMEOUT", limits_.flow_timeout_s, kFlowTimeoutHelp)
                 .key("STREAM", limits_.stream, kStreamHelp)
                 .key("STREAMS", limits_.streams, kStreamsHelp)
                 .key("STREAM_LOOKBACK", limits_.stream_lookback, kStreamLookbackHelp)
                 .key("STREAM_OOO", limits_.stream_ooo, kStreamOooHelp)
                 .finish();
  if (!s) return s;
  for (const auto& [key, value] :
       {std::pair{"THRESHOLDS", limits_.thresholds}, std::pair{"FLOWS", limits_.flows},
        std::pair{"STREAMS", limits_.streams}})
    if (value == 0 || value > kMaxStateEntries)
      return args.error(std::string(key) + ": expected 1 to " + std::to_string(kMaxStateEntries) +
                        " entries, got " + std::to_string(value));
  for (const auto& [key, value] : {std::pair{"STREAM_LOOKBACK", limits_.stream_lookback},
                                   std::pair{"STREAM_OOO", limits_.stream_ooo}})
    if (value > kMaxStreamBytes)
      return args.error(std::string(key) + ": expected 0 to " + std::to_string(kMaxStreamBytes) +
                        " bytes, got " + std::to_string(value));
  if (alert_format_ != "fulcrum" && alert_format_ != "eve")
    return args.error("ALERT_FORMAT: expected fulcrum or eve, got '" + alert_format_ + "'");
  if (engine_name_ == "hyperscan") {
    engine_ = ids::Engine::kHyperscan;
  } else if (engine_name_ == "ac") {
    engine_ = ids::Engine::kAhoCorasick;
  } else {
    return args.error("ENGINE: expected hyperscan or ac, got '" + engine_name_ + "'");
  }
  return {};
}

std::string IDSMatch::skipped_note(const std::string& element, const std::string& file,
                                   size_t loaded, std::vector<ids::SkippedRule> skipped) {
  std::sort(skipped.begin(), skipped.end(),
            [](const ids::SkippedRule& a, const ids::SkippedRule& b) { return a.line < b.line; });
  const ids::SkippedRule& first = skipped.front();
  return element + " (" + std::string(kTraits.class_name) + "): " + file + ": " +
         std::to_string(loaded) + " rules loaded, " + std::to_string(skipped.size()) +
         " skipped (" + ids::skipped_summary(skipped) + "); first skipped: line " +
         std::to_string(first.line) + ": " + first.reason +
         ". --strict-rules refuses the file instead; docs/ids.md lists what is supported";
}

Result<std::shared_ptr<IDSMatch::Rules>> IDSMatch::load_rules(const std::string& file, bool strict,
                                                              const std::string& element) {
  Result<ids::RuleFile> parsed = ids::load_rule_file(file, strict);
  if (!parsed) return make_error(parsed.error());
  std::vector<ids::SkippedRule> skipped = std::move(parsed->skipped);
  Result<std::shared_ptr<ids::RuleSet>> set =
      ids::RuleSet::compile(std::move(parsed->rules), strict ? nullptr : &skipped);
  if (!set) return make_error(file + ": " + set.error());
  if (set.value()->rules().empty() && !skipped.empty())
    return make_error(file + ": none of its " + std::to_string(skipped.size()) +
                      " rules can be loaded (" + ids::skipped_summary(skipped) +
                      "); docs/ids.md lists what is supported");
  auto rules = std::make_shared<Rules>();
  if (!skipped.empty())
    rules->note = skipped_note(element, file, set.value()->rules().size(), skipped);
  rules->set = std::move(set.value());
  return rules;
}

void IDSMatch::adopt(const Rules* rules) {
  Result<std::unique_ptr<ids::Matcher>> m = ids::Matcher::create(rules->set, engine_, limits_);
  adopted_ = rules;
  if (!m) {
    ++adopt_errors_;  // the matcher in use stays (scratch space could not be allocated)
    return;
  }
  retired_ += matcher_->stats();
  rules_ = rules->set;
  matcher_ = std::move(m.value());
}

Status IDSMatch::initialize(const InitContext& ctx) {
  const Args args({}, loc_, name(), kTraits.class_name);
  // The builder outlives this element (reloads call it again, and the pipeline that first built
  // the rules may be a check that is gone by then): it holds values only.
  Result<std::shared_ptr<TableSlot<Rules>>> slot = shared_table_slot<Rules>(
      ctx.shared, "ids-rules:" + rules_file_, "IDS rules", rules_file_,
      [strict = ctx.strict_rules, element = name()](const std::string& file) {
        return load_rules(file, strict, element);
      });
  if (!slot) return args.error(slot.error());
  slot_ = slot.value();
  adopted_ = slot_->current();
  if (ctx.notes != nullptr && ctx.worker == 0 && !adopted_->note.empty())
    ctx.notes->push_back(adopted_->note);
  rules_ = adopted_->set;
  Result<std::unique_ptr<ids::Matcher>> m = ids::Matcher::create(rules_, engine_, limits_);
  if (!m) return args.error(m.error());
  matcher_ = std::move(m.value());
  if (!alerts_file_.empty()) {
    const std::string path =
        ctx.workers > 1 ? alerts_file_ + "." + std::to_string(ctx.worker) : alerts_file_;
    Result<std::unique_ptr<ids::AlertLog>> log = ids::AlertLog::open(
        path, alert_format_ == "eve" ? ids::AlertFormat::kEve : ids::AlertFormat::kJsonLines);
    if (!log) return args.error(log.error());
    log_ = std::move(log.value());
  }
  if (!clock_) {
    const double ns_per_tsc = 1e9 / static_cast<double>(rte_get_tsc_hz());
    clock_ = [ns_per_tsc] {
      return static_cast<uint64_t>(static_cast<double>(rte_rdtsc()) * ns_per_tsc);
    };
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
  ids::MatchStats s = retired_;  // matchers replaced by reloads, then the one in use
  s += matcher_->stats();
  out.push_back({"bytes_scanned", s.bytes});
  out.push_back({"prefilter_hits", s.hits});
  out.push_back({"rules_evaluated", s.candidates});
  out.push_back({"regex_scans", s.regex_scans});
  out.push_back({"scan_errors", s.errors + adopt_errors_});
  out.push_back({"log_errors", log_ ? log_->errors() : 0});
  out.push_back({"alerts_lost", log_ ? log_->lost() : 0});
  out.push_back({"threshold_evictions", s.threshold_evictions});
  out.push_back({"flow_evictions", s.flow_evictions});
  out.push_back({"stream_bytes", s.stream.bytes});
  out.push_back({"stream_segments_held", s.stream.segments_held});
  out.push_back({"stream_segments_dropped", s.stream.segments_dropped});
  out.push_back({"stream_held_bytes_dropped", s.stream.held_bytes_dropped});
  out.push_back({"stream_gaps", s.stream.gaps});
  out.push_back({"stream_retransmissions", s.stream.retransmissions});
  out.push_back({"stream_evictions", s.stream.evictions});
}

}  // namespace fulcrum
