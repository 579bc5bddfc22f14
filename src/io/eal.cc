#include "io/eal.hh"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include "io/cores.hh"

namespace fulcrum {
namespace {

std::once_flag g_once;
std::string g_runtime_dir;
Status g_status = make_error("EAL not initialised");
bool g_ready = false;
bool g_pci = false;

std::vector<std::string> g_warnings;

void announce(const std::vector<int>& cpus) {
  const std::filesystem::path dir(g_runtime_dir);
  if (Status s = publish_cores(g_runtime_dir, cpus); !s) g_warnings.push_back(s.error());
  for (const CoreNeighbour& n : core_neighbours(dir.parent_path().string(), g_runtime_dir, cpus))
    g_warnings.push_back("CPU " + format_core_list(n.shared) +
                         (n.shared.size() > 1 ? " are" : " is") +
                         " also a worker CPU of fulcrum pid " + std::to_string(n.pid) +
                         ": workers sharing a core run at a fraction of their rate; choose "
                         "others with --cores");
}

}  // namespace

unsigned worker_lcore(int w) {
  unsigned lcore = rte_get_next_lcore(-1, 1, 0);
  for (int i = 0; i < w && lcore < RTE_MAX_LCORE; ++i) lcore = rte_get_next_lcore(lcore, 1, 0);
  return lcore;
}

bool hugepages_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  long value = 0;
  while (in >> key >> value) {
    if (key == "HugePages_Free:") return value > 0;
    in.ignore(256, '\n');
  }
  return false;
}

Status init_eal(const EalOptions& options) {
  std::call_once(g_once, [&] {
    Result<CorePlan> plan = plan_cores(options.workers, options.cores);
    if (!plan) {
      g_status = make_error(plan.error());
      return;
    }
    std::vector<std::string> args = {"fulcrum", "--lcores", lcore_map(plan.value()),
                                     "--file-prefix", "fulcrum" + std::to_string(getpid())};
    // DPDK's telemetry socket stays on (dpdk-telemetry.py works; Fulcrum adds /fulcrum/*
    // commands, control/telemetry.hh) unless a command has no use for it.
    if (!options.telemetry) args.emplace_back("--no-telemetry");
    if (options.force_no_huge || !hugepages_available()) {
      args.insert(args.end(),
                  {"--no-huge", "--no-shconf", "-m", std::to_string(options.memory_mb)});
    } else {
      args.emplace_back("--in-memory");
    }
    if (options.pci.empty()) args.emplace_back("--no-pci");
    g_pci = !options.pci.empty();
    for (const std::string& p : options.pci) args.insert(args.end(), {"-a", p});
    if (options.quiet) args.emplace_back("--log-level=lib.*:warning");
    if (options.quiet) args.emplace_back("--log-level=lib.eal:error");
    if (options.quiet) args.emplace_back("--log-level=pmd.*:warning");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    // Quiet: what DPDK logs while it starts (the telemetry socket's notices...) is kept for
    // the error message, not printed.
    std::optional<DpdkLogCapture> log;
    if (options.quiet) log.emplace();
    int rc = rte_eal_init(static_cast<int>(args.size()), argv.data());
    const std::string said = log ? log->reason() : "";
    if (rc < 0) {
      g_status =
          make_error("DPDK EAL initialisation failed: " + std::string(rte_strerror(rte_errno)) +
                     (said.empty() ? "" : " (DPDK: " + said + ")"));
      return;
    }
    g_ready = true;
    g_status = Status{};
    // DPDK leaves its runtime directory (/var/run/dpdk/fulcrumPID) behind: one per run.
    g_runtime_dir = rte_eal_get_runtime_dir();
    std::atexit(remove_eal_runtime_dir);
    if (options.announce_cores) announce(plan.value().worker_cpus);
  });
  return g_status;
}

DpdkLogCapture::DpdkLogCapture() {
  stream_ = open_memstream(&buffer_, &size_);
  if (stream_ != nullptr) rte_openlog_stream(stream_);
}

DpdkLogCapture::~DpdkLogCapture() {
  restore();
  std::free(buffer_);
}

void DpdkLogCapture::restore() {
  if (stream_ == nullptr) return;
  rte_openlog_stream(nullptr);
  std::fclose(stream_);
  stream_ = nullptr;
}

std::string DpdkLogCapture::reason() {
  restore();
  if (buffer_ == nullptr) return "";
  std::string text(buffer_, size_), out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    // "VDEV: failed to ..." or "EAL:   ..." -> the message itself.
    if (size_t colon = line.find(": ");
        colon != std::string::npos && colon < 16 && line.find(' ') > colon)
      line.erase(0, colon + 2);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front())))
      line.erase(0, 1);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (line.empty()) continue;
    out += (out.empty() ? "" : "; ") + line;
  }
  if (out.size() > kMaxReason) out = out.substr(0, kMaxReason - 3) + "...";
  return out;
}

void remove_eal_runtime_dir() {
  if (g_runtime_dir.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(g_runtime_dir, ec);
  g_runtime_dir.clear();
}

const std::vector<std::string>& eal_warnings() {
  return g_warnings;
}

bool eal_ready() {
  return g_ready;
}

bool eal_has_pci() {
  return g_pci;
}

void init_eal_for_tests() {
  EalOptions opt;
  opt.memory_mb = 512;
  // Tests run in parallel processes: each takes its own memory instead of sharing hugepages.
  opt.force_no_huge = true;
  Status s = init_eal(opt);
  if (!s) {
    std::fprintf(stderr, "%s\n", s.error().c_str());
    std::abort();
  }
}

}  // namespace fulcrum
