// `fulcrum check PIPELINE [--ports N | --port SPEC ...]`: everything a run loads and checks before
// its first packet (click-check, `suricata -T`), without opening a port or moving a packet.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.hh"
#include "cli/device_option.hh"
#include "cli/pipeline_options.hh"
#include "core/args.hh"
#include "core/shared_storage.hh"
#include "core/text_file.hh"
#include "io/eal.hh"
#include "io/mempool.hh"
#include "io/port.hh"
#include "runtime/runtime.hh"
#include "runtime/stages.hh"

namespace fulcrum::cli {
namespace {

constexpr const char* kCheckUsage =
    R"(usage: fulcrum check PIPELINE.click [NAME=VALUE ...] [--ports N | --port SPEC ...] [options]

  Loads the pipeline as `fulcrum run` would (arguments, route/name/SA tables, IDS rules, offload
  devices) and reports every problem with FILE:LINE:COL, without opening a port:
  unconnected outputs (connect them, or to Discard to drop on purpose), table entries and
  arguments naming ports the run does not have, input files that cannot be read and output
  files (--stats-json, tx_pcap=) that cannot be written.
  --ports N          the run's port count (without it and without --port, port numbers in
                     tables and arguments are not checked)
  --port SPEC        a port as `fulcrum run` takes it (checked, not opened); counts as one port
  --workers N        worker threads (1)
  --placement SPEC   the placement the run would use (clone | cut=ELEMENT,...,cores=N0+N1...,
                     docs/placement.md): its cuts and cores are checked against the pipeline
  --batch N          packets per batch (64)
  --stats-json FILE  the statistics file the run would write
  --strict-rules     an IDS rule Fulcrum cannot load is a problem (default: it is skipped, and
                     the rules skipped are counted by feature in a "note:" line)
Exit status: 0 no problem; 1 problems (listed on stderr); 2 usage.
)";

constexpr int kMaxPortCount = 1024;

// The placement's cuts and cores against the pipeline (on a copy: the check reports the
// pipeline as written); a pipelined one is described on stdout.
Status check_placement(PipelineConfig config, const RunOptions& opt) {
  if (opt.placement.automatic) return {};
  Result<StagePlan> plan = plan_stages(config, opt.placement, opt.workers);
  if (!plan) return make_error(plan.error());
  if (!plan.value().pipelined()) return {};
  std::printf("placement %s: %u stages\n", to_string(opt.placement).c_str(), plan.value().stages);
  for (unsigned s = 0; s < plan.value().stages; ++s) {
    std::string names;
    for (size_t e = 0; e < config.elements.size(); ++e)
      if (plan.value().reach[s][e]) names += " " + config.elements[e].name;
    std::printf("  stage %u (%zu worker%s):%s\n", s, plan.value().workers_of(s).size(),
                plan.value().workers_of(s).size() == 1 ? "" : "s", names.c_str());
  }
  return {};
}

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "fulcrum check: %s\n\n%s%s", msg.c_str(), kCheckUsage, kDeviceOptionHelp);
  return 2;
}

}  // namespace

int cmd_check(const std::vector<std::string>& args) {
  RunOptions opt;
  DeviceOption devices;
  std::string stats_json;
  int ports = -1;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string& out) { return option_value(args, i, out); };
    std::string v;
    if (a == "--help" || a == "-h") {
      std::printf("%s%s", kCheckUsage, kDeviceOptionHelp);
      return 0;
    } else if (a == "--ports") {
      if (!value(v) || !parse_value(v, ports) || ports < 1 || ports > kMaxPortCount)
        return usage_error("--ports needs an integer 1.." + std::to_string(kMaxPortCount));
    } else if (a == "--stats-json") {
      if (!value(stats_json)) return usage_error("--stats-json needs a file name");
    } else if (std::optional<std::string> e = shared_run_option(args, i, opt, devices)) {
      if (!e->empty()) return usage_error(*e);
    } else if (std::string e = positional_pipeline(
                   a, opt,
                   {"--ports", "--stats-json", "--help", "--port", "--workers", "--batch",
                    "--device", "--strict-rules", "--energy-model", "--placement"});
               !e.empty()) {
      return usage_error(e);
    }
  }
  if (opt.pipeline_file.empty()) return usage_error("no pipeline file given");
  if (ports > 0 && !opt.ports.empty() && static_cast<size_t>(ports) != opt.ports.size())
    return usage_error("--ports " + std::to_string(ports) + " but " +
                       std::to_string(opt.ports.size()) + " --port given");
  devices.apply();

  std::vector<std::string> problems;
  if (Status s = check_port_list(opt.ports); !s) problems.push_back(s.error());
  for (const std::string& spec : opt.ports)
    if (Status s = check_port_spec(spec); !s) problems.push_back(s.error());
  if (!stats_json.empty())
    if (Status s = check_output_file(stats_json, "--stats-json file"); !s)
      problems.push_back(s.error());

  Result<PipelineConfig> config = load_pipeline(opt);
  if (!config) {
    problems.push_back(config.error());
  } else {
    EalOptions eal;
    eal.workers = opt.workers;
    if (Status s = init_eal(eal); !s) {
      std::fprintf(stderr, "fulcrum check: %s\n", s.error().c_str());
      return 1;
    }
    Result<rte_mempool*> pool = create_packet_pool("check", kSourcePoolSize);
    if (!pool) {
      std::fprintf(stderr, "fulcrum check: %s\n", pool.error().c_str());
      return 1;
    }
    PoolHandle pool_handle(pool.value());
    SharedStorage shared;
    std::vector<std::string> notes;
    const int nports = opt.ports.empty() ? std::max(ports, 0) : static_cast<int>(opt.ports.size());
    Result<std::vector<std::string>> unconnected =
        check_pipeline(config.value(), opt, nports, shared, pool_handle.get(), &notes);
    if (!unconnected) {
      problems.push_back(unconnected.error());
    } else {
      for (const std::string& u : unconnected.value()) problems.push_back(u);
      std::printf("%s: %zu elements, %zu connections, ", opt.pipeline_file.c_str(),
                  config.value().elements.size(), config.value().connections.size());
      if (nports > 0)
        std::printf("checked against %d port%s\n", nports, nports == 1 ? "" : "s");
      else
        std::printf("no port count given (--ports N): port numbers not checked\n");
      for (const std::string& n : notes) std::printf("note: %s\n", n.c_str());
      if (Status s = check_placement(config.value(), opt); !s) problems.push_back(s.error());
    }
  }
  std::fflush(stdout);
  for (const std::string& p : problems) std::fprintf(stderr, "%s\n", p.c_str());
  if (!problems.empty()) {
    std::fprintf(stderr, "fulcrum check: %zu problem%s\n", problems.size(),
                 problems.size() == 1 ? "" : "s");
    return 1;
  }
  std::printf("ok\n");
  return 0;
}

}  // namespace fulcrum::cli
