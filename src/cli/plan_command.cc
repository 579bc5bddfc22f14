// `fulcrum plan`: the performance models of paper 002 (cloning vs pipelining) and paper 003
// (batch size and prefetch group) on this machine's calibration (src/plan/,
// docs/placement-model.md).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli/commands.hh"
#include "cli/pipeline_options.hh"
#include "core/args.hh"
#include "io/eal.hh"
#include "io/port.hh"
#include "plan/measure_machine.hh"
#include "plan/planner.hh"

namespace fulcrum::cli {
namespace {

constexpr unsigned kMaxPlanCores = 1024;

constexpr const char* kPlanUsage =
    R"(usage: fulcrum plan PIPELINE.click [NAME=VALUE ...] --cores N --port SPEC [...] [options]
       fulcrum plan --calibrate [PIPELINE.click --port SPEC ...] [--out FILE]

  Predicts the throughput of cloning, of every pipelining cut and of hybrids (a stage cloned
  over several cores) on N cores with paper 002's model, and the batch size and prefetch group of
  each lookup element with paper 003's; explains which stage bounds each placement and why.
  Each placement is printed in the form `fulcrum run --placement "..."` takes.
  --cores N           cores to place the pipeline on (default: this machine's CPUs)
  --calibration FILE  the calibration to use (fulcrum plan --calibrate); without it the machine
                      is measured now (about twenty seconds); the pipeline is run briefly on its
                      ports unless FILE holds a measurement of this pipeline
  --calibrate         measure this machine (sysfs caches, TSC, memory latency, ring hand-off,
                      the runtime hand-off on a reference pipeline cut over two workers)
                      and, with a pipeline, each element's cycles and tables; writes the
                      calibration (JSON, docs/placement-model.md) to --out or stdout
  --out FILE          where --calibrate writes
  --seconds S         how long the pipeline runs to be measured (0.5)
  --batch N           packets per batch (64)
  --json              the plan as JSON
  --verify S          then run each placement this build can run for S seconds on --cores
                      workers and print what it measured beside the prediction
)";

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "fulcrum plan: %s\n\n%s", msg.c_str(), kPlanUsage);
  return 2;
}

int fail(const std::string& msg) {
  std::fprintf(stderr, "fulcrum plan: %s\n", msg.c_str());
  return 1;
}

}  // namespace

int cmd_plan(const std::vector<std::string>& args) {
  RunOptions opt;
  DeviceOption devices;
  std::string calibration_file, out;
  bool calibrate = false, as_json = false;
  unsigned cores = 0;
  double seconds = plan::kDefaultMeasureSeconds, verify_seconds = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string v;
    if (a == "--help" || a == "-h") {
      std::printf("%s", kPlanUsage);
      return 0;
    } else if (a == "--calibrate") {
      calibrate = true;
    } else if (a == "--json") {
      as_json = true;
    } else if (a == "--calibration") {
      if (!option_value(args, i, calibration_file))
        return usage_error("--calibration needs a file");
    } else if (a == "--out") {
      if (!option_value(args, i, out)) return usage_error("--out needs a file name");
    } else if (a == "--cores") {
      if (!option_value(args, i, v) || !parse_value(v, cores) || cores == 0 ||
          cores > kMaxPlanCores)
        return usage_error("--cores needs a number from 1 to " + std::to_string(kMaxPlanCores));
    } else if (a == "--verify") {
      if (!option_value(args, i, v) || !parse_value(v, verify_seconds) || verify_seconds <= 0)
        return usage_error("--verify needs a positive number of seconds");
    } else if (a == "--seconds") {
      if (!option_value(args, i, v) || !parse_value(v, seconds) || seconds <= 0)
        return usage_error("--seconds needs a positive number");
    } else if (std::optional<std::string> e = shared_run_option(args, i, opt, devices)) {
      if (!e->empty()) return usage_error(*e);
    } else if (std::string e =
                   positional_pipeline(a, opt,
                                       {"--cores", "--calibration", "--calibrate", "--out",
                                        "--seconds", "--batch", "--json", "--port", "--help"});
               !e.empty()) {
      return usage_error(e);
    }
  }
  const bool have_pipeline = !opt.pipeline_file.empty();
  if (!calibrate && !have_pipeline) return usage_error("no pipeline file given");
  if (calibrate && !calibration_file.empty())
    return usage_error("--calibrate measures anew: it takes no --calibration");
  if (!out.empty() && !calibrate) return usage_error("--out goes with --calibrate");
  if (have_pipeline && opt.ports.empty() && calibrate) return usage_error("no --port given");

  Result<PipelineConfig> config = make_error("");
  if (have_pipeline) {
    config = load_pipeline(opt);
    if (!config) {
      std::fprintf(stderr, "%s\n", config.error().c_str());
      return 1;
    }
  }
  Result<plan::Calibration> cal = make_error("");
  if (!calibration_file.empty()) {
    cal = plan::read_calibration(calibration_file);
    if (!cal) return fail(cal.error());
  }
  const bool need_run =
      calibrate ? have_pipeline : !cal || !plan::calibration_matches(cal.value(), config.value());
  if (verify_seconds > 0 && (calibrate || opt.ports.empty()))
    return usage_error("--verify runs the pipeline: it needs --port and no --calibrate");
  if (need_run && opt.ports.empty())
    return usage_error("no --port given (the pipeline is measured on its ports: the calibration " +
                       std::string(cal ? "holds no measurement of it" : "was not given") + ")");

  if (cores == 0 && verify_seconds > 0)
    cores = std::max(1u, static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN)));
  EalOptions eal;
  // Two workers at least where the machine has two CPUs: the calibration's hand-off runs a
  // reference pipeline cut over two workers (plan/measure_handoff.hh).
  const int calibration_workers = sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2 : 1;
  eal.workers = verify_seconds > 0 ? std::max(static_cast<int>(cores), calibration_workers)
                                   : calibration_workers;
  for (const std::string& p : opt.ports)
    if (eal_device_for(p).is_pci) eal.pci.push_back(p);
  if (Status s = init_eal(eal); !s) return fail(s.error());
  devices.apply();
  if (!cal) {
    cal = plan::calibrate_machine(opt.batch);
    if (!cal) return fail(cal.error());
  }
  if (need_run) {
    Result<plan::PipelineMeasure> m = plan::measure_pipeline(opt, seconds);
    if (!m) return fail(m.error());
    cal.value().pipeline = m.value();
  }
  if (calibrate) {
    if (out.empty()) {
      std::fputs(plan::calibration_json(cal.value()).c_str(), stdout);
    } else {
      if (Status s = plan::write_calibration(cal.value(), out); !s) return fail(s.error());
      std::fprintf(stderr, "fulcrum plan: wrote the calibration to %s\n", out.c_str());
    }
    return 0;
  }
  Result<plan::Chain> chain = plan::chain_of(config.value(), cal.value());
  if (!chain) return fail(chain.error());
  if (cores == 0) cores = cal.value().machine.cpus;
  // The ring now: the hand-off follows the machine's cross-CPU regime (it can change between
  // the calibration and this plan).
  Result<plan::RingCost> ring_now = plan::measure_ring(opt.batch, cal.value().machine.cpus);
  if (!ring_now) return fail(ring_now.error());
  plan::Plan p = plan::make_plan(cal.value(), chain.value(), cores, &ring_now.value());
  if (verify_seconds > 0)
    if (Result<size_t> ran = plan::verify_plan(p, opt, verify_seconds); !ran)
      return fail(ran.error());
  std::fputs(as_json ? plan::plan_json(p).c_str() : plan::plan_text(p).c_str(), stdout);
  return 0;
}

}  // namespace fulcrum::cli
