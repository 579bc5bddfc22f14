#include <unistd.h>

#include <atomic>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "cli/commands.hh"
#include "cli/device_option.hh"
#include "cli/pipeline_options.hh"
#include "control/http_server.hh"
#include "control/telemetry.hh"
#include "core/args.hh"
#include "core/text_file.hh"
#include "io/cores.hh"
#include "io/eal.hh"
#include "io/port.hh"
#include "offload/service.hh"
#include "plan/planner.hh"
#include "runtime/runtime.hh"
#include "runtime/stages.hh"

namespace fulcrum::cli {
namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<bool> g_summary{false};
std::atomic<bool> g_reload{false};

// The first SIGINT/SIGTERM stops the run cleanly (drained, summary); a second one while it
// drains ends the process at once (the shell's usual double Ctrl-C).
void on_signal(int sig) {
  if (g_interrupted.exchange(true)) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}

void on_summary_signal(int) {
  g_summary.store(true);
}

void on_reload_signal(int) {
  g_reload.store(true);
}

// The live view outlives every reader: DPDK telemetry callbacks cannot be unregistered.
LiveView g_live;

constexpr int kExitUnbalanced = 3;
constexpr int kExitOutputLost = 4;
constexpr int kExitStalled = 5;

constexpr const char* kRunUsage =
    R"(usage: fulcrum run PIPELINE.click [NAME=VALUE ...] --port SPEC [--port SPEC ...] [options]

  --port SPEC        a port, in order (port index = position): a DPDK device string
                     (net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap | net_null0 | net_ring0 |
                     net_af_packet0,iface=veth0 | a PCI address) or the built-in generator
                     gen:size=64,flows=1024,dst=uniform|routes|zipf,routes=FILE,rate=PPS,seed=N
                     (+ step_after=S,step_rate=PPS,step_size=BYTES: a step change after S s)
                     or a capture replayed from memory replay:file=in.pcap[,loops=N] (read once;
                     every packet its own copy; loops=N ends the input after N passes)
  --workers N        worker threads, each pinned to a core with its own pipeline replica (1)
  --cores LIST       the CPUs the workers run on, in worker order (2,3 or 2-5); sets --workers
                     to their number. Default: the CPUs after the first one this process may use
  --placement SPEC   how the pipeline is laid out over the workers (docs/placement.md):
                     clone (default: every worker runs all of it) | cut=ELEMENT[,cut=...],
                     cores=N0+N1[+...]: stages beginning at each cut element (a name, or a
                     class the pipeline has once), joined by rings, N0 workers for stage 0 (the
                     RX side), N1 for stage 1, ...; a stage of several workers is a hybrid (flows
                     spread by hash, each flow in order). The cores add up to --workers |
                     auto: the placement fulcrum plan predicts fastest for --workers cores
                     (calibration from $FULCRUM_CALIBRATION, else measured first: the machine,
                     then the pipeline for a moment on its ports; docs/placement-model.md)
  --ring-size N      entries of each ring between two stages, a power of two 64..16384 (1024)
  --oversubscribe    allow more workers than CPUs (they share CPUs, each at a fraction of its
                     rate: for testing placements that need more workers than the machine has)
  --batch N          packets per batch, 1..256 (64)
  --packets N        stop after N received packets
  --seconds S        stop after S seconds
  --branch MODE      reuse (default: reuse the batch for the majority output) | split
  --watchdog S       report a worker that makes no progress for S seconds (10; 0: off)
  --stats-json FILE  write the run statistics as JSON
  --release-idle-ms N
                     give an offload device back to its driver after N ms with nothing to do
                     (a CUDA context held idle keeps a GPU at full power); the next task takes
                     it back (0: never, the default; PolicyBalancer POLICY energy turns it on for
                     its devices: RELEASE_IDLE_MS). Wins over $FULCRUM_DEVICE_RELEASE_MS
  --energy-model FILE
                     the energy model for what RAPL and NVML do not measure (JSON:
                     docs/adaptive.md, "Energy"; `fulcrum profile --energy-out` calibrates one)
  --capture ELEMENT[PORT]=FILE[,snaplen=N][,limit=N]
                     record the packets leaving output PORT (0) of ELEMENT in the pcap FILE,
                     one file for all workers, the pipeline file left as it is (a pass-through
                     ToDump goes on that edge; docs/capture.md); snaplen: bytes kept a packet
                     (0: all), limit: packets in all (0: no limit). Repeatable. Quote it in a
                     shell: --capture 'rt[1]=out.pcap'
  --strict-rules     an IDS rule file with a rule Fulcrum cannot load is an error (default: such
                     rules are skipped and counted by feature, as Suricata does)
  --quiet            no live progress line
  --http ADDR:PORT   serve the control plane on ADDR:PORT (0: any free port; the URL is printed):
                     /metrics (Prometheus), /api/stats, /api/graph, /api/reload and the
                     dashboard at /; the DPDK telemetry socket also answers /fulcrum/* commands
NAME=VALUE replaces $NAME in the pipeline's arguments (define($NAME default) in the file gives
a default). Files a pipeline reads (routes, rules, SAs, names, profiles) are found relative to
the pipeline file's folder.
The run ends at --packets or --seconds, when every finite input (a pcap, replay:...,loops=N)
is drained, or on Ctrl-C (SIGINT/SIGTERM), whichever comes first; Ctrl-C stops it cleanly
with the summary (a second one ends it at once).
SIGUSR1 prints the summary so far and the run goes on. SIGHUP reloads every table (routes, IDS
rules, NDN names, L2 static entries, IPsec SAs) from its file while packets flow, as POST /api/reload does; a file
that does not load is reported and the table in service stays.
Exit status: 0 done; 1 error; 2 usage; 3 the packet balance does not hold; 4 output lost (a
capture or alert log could not be written); 5 the watchdog reported a stalled worker.
)";

template <class T>
bool parse_num(const std::string& s, T& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "fulcrum run: %s\n\n%s%s", msg.c_str(), kRunUsage, kDeviceOptionHelp);
  return 2;
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  RunOptions opt;
  DeviceOption devices;
  std::string stats_json;
  std::vector<int> cores;
  std::string http;
  bool quiet = false;
  bool oversubscribe = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string& out) { return option_value(args, i, out); };
    std::string v;
    if (a == "--help" || a == "-h") {
      std::printf("%s%s", kRunUsage, kDeviceOptionHelp);
      return 0;
    } else if (a == "--packets") {
      if (!value(v) || !parse_num(v, opt.packets)) return usage_error("--packets needs an integer");
    } else if (a == "--seconds") {
      if (!value(v) || !parse_value(v, opt.seconds) || opt.seconds <= 0)
        return usage_error("--seconds needs a positive number");
    } else if (a == "--watchdog") {
      if (!value(v) || !parse_value(v, opt.watchdog_s) || opt.watchdog_s < 0)
        return usage_error("--watchdog needs a number of seconds (0: off)");
    } else if (a == "--branch") {
      if (!value(v) || (v != "reuse" && v != "split"))
        return usage_error("--branch is reuse or split");
      opt.branch = v == "reuse" ? BranchMode::kReuse : BranchMode::kSplit;
    } else if (a == "--ring-size") {
      if (!value(v) || !parse_num(v, opt.stage_ring_size) ||
          opt.stage_ring_size < kMinStageRingSize || opt.stage_ring_size > kMaxStageRingSize ||
          (opt.stage_ring_size & (opt.stage_ring_size - 1)) != 0)
        return usage_error("--ring-size needs a power of two " + std::to_string(kMinStageRingSize) +
                           ".." + std::to_string(kMaxStageRingSize));
    } else if (a == "--stats-json") {
      if (!value(stats_json)) return usage_error("--stats-json needs a file name");
    } else if (a == "--release-idle-ms") {
      uint32_t ms = 0;
      if (!value(v) || !parse_num(v, ms))
        return usage_error("--release-idle-ms needs milliseconds (0: never)");
      offload::set_device_release_ms(ms);
    } else if (a == "--capture") {
      if (std::string e = capture_option(args, i, opt); !e.empty()) return usage_error(e);
    } else if (a == "--cores") {
      if (!value(v)) return usage_error("--cores needs a CPU list such as 2,3 or 2-5");
      Result<std::vector<int>> list = parse_core_list(v);
      if (!list) return usage_error(list.error());
      cores = list.value();
    } else if (a == "--quiet") {
      quiet = true;
    } else if (a == "--oversubscribe") {
      oversubscribe = true;
    } else if (a == "--http") {
      if (!value(http)) return usage_error("--http needs ADDR:PORT, e.g. 127.0.0.1:9090");
    } else if (std::optional<std::string> e = shared_run_option(args, i, opt, devices)) {
      if (!e->empty()) return usage_error(*e);
    } else if (std::string e = positional_pipeline(
                   a, opt,
                   {"--port",         "--workers",       "--batch",           "--packets",
                    "--seconds",      "--branch",        "--watchdog",        "--stats-json",
                    "--capture",      "--quiet",         "--device",          "--cores",
                    "--strict-rules", "--http",          "--energy-model",    "--placement",
                    "--ring-size",    "--oversubscribe", "--release-idle-ms", "--help"});
               !e.empty()) {
      return usage_error(e);
    }
  }
  if (opt.pipeline_file.empty()) return usage_error("no pipeline file given");
  if (!cores.empty()) {
    const bool workers_given = std::find(args.begin(), args.end(), "--workers") != args.end();
    if (workers_given && static_cast<size_t>(opt.workers) != cores.size())
      return usage_error("--workers " + std::to_string(opt.workers) + " but --cores names " +
                         std::to_string(cores.size()) + " CPUs (one CPU per worker)");
    opt.workers = static_cast<int>(cores.size());
  }
  devices.apply();
  if (opt.ports.empty()) return usage_error("no --port given");
  opt.progress = !quiet && isatty(STDERR_FILENO);
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (opt.workers > cpus && !oversubscribe)
    return usage_error("--workers " + std::to_string(opt.workers) + ": this machine has " +
                       std::to_string(cpus) +
                       " CPUs (one worker per core; --oversubscribe shares them)");

  // An output that cannot be written is found now, not after the run.
  if (!stats_json.empty())
    if (Status s = check_output_file(stats_json, "--stats-json file"); !s) {
      std::fprintf(stderr, "fulcrum run: %s\n", s.error().c_str());
      return 1;
    }
  std::optional<control::ListenAddress> listen;
  if (!http.empty()) {
    Result<control::ListenAddress> a = control::parse_listen_address(http);
    if (!a) return usage_error(a.error());
    listen = a.value();
  }
  // Configuration errors are reported before any device is touched.
  Result<PipelineConfig> config = load_pipeline(opt);
  if (!config) {
    std::fprintf(stderr, "%s\n", config.error().c_str());
    return 1;
  }

  EalOptions eal;
  eal.workers = opt.workers;
  eal.cores = cores;
  eal.announce_cores = true;
  for (const std::string& p : opt.ports)
    if (eal_device_for(p).is_pci) eal.pci.push_back(p);
  if (Status s = init_eal(eal); !s) {
    std::fprintf(stderr, "fulcrum run: %s\n", s.error().c_str());
    return 1;
  }
  for (const std::string& w : eal_warnings())
    std::fprintf(stderr, "fulcrum run: warning: %s\n", w.c_str());
  // --placement auto: the planner's best placement for these workers, from the calibration named
  // by $FULCRUM_CALIBRATION, or one measured now (machine, then the pipeline briefly on its ports).
  if (opt.placement.automatic) {
    const char* file = std::getenv("FULCRUM_CALIBRATION");
    Result<Placement> chosen =
        plan::auto_placement(opt, static_cast<unsigned>(opt.workers), file != nullptr ? file : "");
    if (!chosen) {
      std::fprintf(stderr, "fulcrum run: --placement auto: %s\n", chosen.error().c_str());
      return 1;
    }
    opt.placement = chosen.value();
    std::fprintf(stderr, "fulcrum run: --placement auto chose %s\n",
                 to_string(opt.placement).c_str());
  }
  // Ctrl-C or SIGTERM ends the run cleanly: workers stop, pcap outputs are closed, the summary
  // is printed.
  opt.interrupt = &g_interrupted;
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  opt.summary_signal = &g_summary;
  std::signal(SIGUSR1, on_summary_signal);
  opt.reload_signal = &g_reload;
  std::signal(SIGHUP, on_reload_signal);
  // The control plane runs on the control core (threads started here inherit its affinity).
  std::unique_ptr<control::ControlServer> server;
  if (listen) {
    Result<std::unique_ptr<control::ControlServer>> s =
        control::ControlServer::start(*listen, g_live);
    if (!s) {
      std::fprintf(stderr, "fulcrum run: %s\n", s.error().c_str());
      return 1;
    }
    server = std::move(s.value());
    control::register_telemetry(g_live);
    opt.live = &g_live;
    std::fprintf(stderr, "fulcrum: control plane at %s\n", server->url().c_str());
  }
  Result<RunReport> report = run(opt);
  server.reset();
  if (!report) {
    std::fprintf(stderr, "%s\n", report.error().c_str());
    return 1;
  }
  std::fputs(report_text(report.value()).c_str(), stdout);
  if (!stats_json.empty()) {
    std::ofstream out(stats_json);
    out << report_json(report.value());
    if (!out) {
      std::fprintf(stderr, "fulcrum run: cannot write %s\n", stats_json.c_str());
      return 1;
    }
  }
  for (const OutputLoss& l : report.value().output_losses)
    std::fprintf(stderr, "fulcrum run: %s: %llu %s could not be written%s\n", l.what.c_str(),
                 static_cast<unsigned long long>(l.lost), l.unit.c_str(),
                 l.error.empty() ? "" : (": " + l.error).c_str());
  if (!report.value().balanced()) return kExitUnbalanced;
  if (!report.value().output_losses.empty()) return kExitOutputLost;
  return report.value().stalls > 0 ? kExitStalled : 0;
}

}  // namespace fulcrum::cli
