#include "elements/ids/ids_match_offload.hh"

#include <memory>

#include "core/shared_storage.hh"

namespace fulcrum {

Status IDSMatchOffload::configure(Args& args) {
  std::string rules, engine = "ac", alerts, alert_format = "fulcrum";
  bool drop = false;
  ids::StateLimits limits{.stream = true};
  args.positional_file("RULES", rules, IDSMatch::kRulesHelp)
      .key("ENGINE", engine, "only ac: the Aho-Corasick DFA is what the device runs")
      .key("ALERTS", alerts, IDSMatch::kAlertsHelp)
      .key("ALERT_FORMAT", alert_format, IDSMatch::kAlertFormatHelp)
      .key("DROP", drop, IDSMatch::kDropHelp)
      .key("THRESHOLDS", limits.thresholds, IDSMatch::kThresholdsHelp)
      .key("FLOWS", limits.flows, IDSMatch::kFlowsHelp)
      .key("FLOW_TIMEOUT", limits.flow_timeout_s, IDSMatch::kFlowTimeoutHelp)
      .key("STREAM", limits.stream, IDSMatch::kStreamHelp)
      .key("STREAMS", limits.streams, IDSMatch::kStreamsHelp)
      .key("STREAM_LOOKBACK", limits.stream_lookback, IDSMatch::kStreamLookbackHelp)
      .key("STREAM_OOO", limits.stream_ooo, IDSMatch::kStreamOooHelp);
  if (Status s = configure_offload(args); !s) return s;
  if (engine != "ac") return args.error("ENGINE: only ac runs on a device, got '" + engine + "'");
  std::vector<std::string> raw = {rules, "ENGINE ac",
                                  std::string("DROP ") + (drop ? "true" : "false")};
  if (!alerts.empty()) raw.push_back("ALERTS " + alerts);
  raw.push_back("ALERT_FORMAT " + alert_format);
  raw.push_back("THRESHOLDS " + std::to_string(limits.thresholds));
  raw.push_back("FLOWS " + std::to_string(limits.flows));
  raw.push_back("FLOW_TIMEOUT " + std::to_string(limits.flow_timeout_s));
  raw.push_back(std::string("STREAM ") + (limits.stream ? "true" : "false"));
  raw.push_back("STREAMS " + std::to_string(limits.streams));
  raw.push_back("STREAM_LOOKBACK " + std::to_string(limits.stream_lookback));
  raw.push_back("STREAM_OOO " + std::to_string(limits.stream_ooo));
  Args cpu_args(raw, args.loc(), name(), kTraits.class_name);
  return cpu_.configure(cpu_args);
}

Status IDSMatchOffload::initialize(const InitContext& ctx) {
  cpu_.set_name(name());
  cpu_.pin_rules();  // the device DFA is built from the rules loaded now
  if (output_connected(IDSMatch::kAlertOutput)) cpu_.set_output_connected(IDSMatch::kAlertOutput);
  if (Status s = cpu_.initialize(ctx); !s) return s;
  return initialize_offload(ctx);
}

Result<std::vector<offload::TaskArg>> IDSMatchOffload::device_args(const InitContext& ctx,
                                                                   size_t device) {
  offload::Device& dev = service().device(device);
  const std::string key = std::string(kDeviceKey) + dev.label() + ":" + cpu_.rules_file();
  Result<std::shared_ptr<const offload::IdsScanTables>> tables =
      shared_or_own<offload::IdsScanTables>(
          ctx.shared, key, [&]() -> Result<std::shared_ptr<offload::IdsScanTables>> {
            auto t = offload::IdsScanTables::upload(dev, cpu_.rules().ac());
            if (!t) return make_error(t.error());
            return std::shared_ptr<offload::IdsScanTables>(std::move(t.value()));
          });
  if (!tables) return make_error(tables.error());
  return tables.value()->args();
}

void IDSMatchOffload::counters(std::vector<Counter>& out) const {
  cpu_.counters(out);
  out.push_back({"device_rescans", rescans_});
  OffloadElement<IDSMatchOffload>::counters(out);
}

}  // namespace fulcrum
