#include "io/cores.hh"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/text_file.hh"

namespace fulcrum {
namespace {

constexpr int kMaxCpu = 4095;

bool parse_cpu(std::string_view s, int& out) {
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size() && out >= 0 && out <= kMaxCpu;
}

bool process_alive(int pid) {
  return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
}

}  // namespace

Result<std::vector<int>> parse_core_list(std::string_view text) {
  std::vector<int> cpus;
  auto bad = [&](std::string_view item, const std::string& why) {
    return make_error("--cores " + std::string(text) + ": " + quote_excerpt(item) + " " + why);
  };
  if (text.empty()) return make_error("--cores needs a CPU list such as 2,3 or 2-5");
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view item = text.substr(pos, comma - pos);
    pos = comma + 1;
    const size_t dash = item.find('-');
    int first = 0, last = 0;
    if (dash == std::string_view::npos) {
      if (!parse_cpu(item, first))
        return bad(item, "is not a CPU number 0.." + std::to_string(kMaxCpu));
      last = first;
    } else if (!parse_cpu(item.substr(0, dash), first) || !parse_cpu(item.substr(dash + 1), last)) {
      return bad(item, "is not a range A-B of CPU numbers");
    } else if (last < first) {
      return bad(item, "is a reversed range");
    }
    for (int c = first; c <= last; ++c) {
      if (std::find(cpus.begin(), cpus.end(), c) != cpus.end())
        return bad(item, "names CPU " + std::to_string(c) + " a second time");
      cpus.push_back(c);
    }
  }
  return cpus;
}

std::string format_core_list(std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

Result<CorePlan> plan_cores(int workers, const std::vector<int>& requested,
                            const std::vector<int>& allowed) {
  CorePlan plan;
  if (allowed.empty()) return make_error("no CPU is available to this process");
  if (requested.empty()) {
    plan.control_cpu = allowed.front();
    for (int w = 1; w <= workers; ++w)
      plan.worker_cpus.push_back(allowed[static_cast<size_t>(w) % allowed.size()]);
    return plan;
  }
  for (int c : requested)
    if (std::find(allowed.begin(), allowed.end(), c) == allowed.end())
      return make_error("--cores: CPU " + std::to_string(c) +
                        " is not available to this process (it may use " +
                        format_core_list(allowed) + ")");
  if (static_cast<int>(requested.size()) != workers)
    return make_error("--cores names " + std::to_string(requested.size()) + " CPUs for " +
                      std::to_string(workers) + " workers (one CPU per worker)");
  plan.worker_cpus = requested;
  plan.control_cpu = requested.front();
  for (int c : allowed)
    if (std::find(requested.begin(), requested.end(), c) == requested.end()) {
      plan.control_cpu = c;
      break;
    }
  return plan;
}

std::string lcore_map(const CorePlan& plan) {
  std::string map = "0@" + std::to_string(plan.control_cpu);
  for (size_t w = 0; w < plan.worker_cpus.size(); ++w)
    map += "," + std::to_string(w + 1) + "@" + std::to_string(plan.worker_cpus[w]);
  return map;
}

std::vector<CoreNeighbour> core_neighbours(const std::string& runtime_parent,
                                           const std::string& self, const std::vector<int>& cpus) {
  std::vector<CoreNeighbour> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(runtime_parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("fulcrum", 0) != 0 || entry.path() == std::filesystem::path(self)) continue;
    Result<std::string> text = read_input_file((entry.path() / "cores").string(), "cores", 4096);
    if (!text) continue;
    std::istringstream in(text.value());
    CoreNeighbour n;
    std::string list;
    if (!(in >> n.pid >> list) || !process_alive(n.pid) || n.pid == ::getpid()) continue;
    Result<std::vector<int>> theirs = parse_core_list(list);
    if (!theirs) continue;
    for (int c : cpus)
      if (std::find(theirs->begin(), theirs->end(), c) != theirs->end() &&
          std::find(n.shared.begin(), n.shared.end(), c) == n.shared.end())
        n.shared.push_back(c);
    if (!n.shared.empty()) out.push_back(std::move(n));
  }
  std::sort(out.begin(), out.end(),
            [](const CoreNeighbour& a, const CoreNeighbour& b) { return a.pid < b.pid; });
  return out;
}

Status publish_cores(const std::string& dir, const std::vector<int>& cpus) {
  std::ofstream out(dir + "/cores");
  out << ::getpid() << " " << format_core_list(cpus) << "\n";
  out.close();
  if (!out) return make_error("cannot write " + dir + "/cores");
  return {};
}

}  // namespace fulcrum
