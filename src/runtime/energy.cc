#include "runtime/energy.hh"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace fulcrum {
namespace {

constexpr double kJoulesPerMicrojoule = 1e-6;

bool read_u64(const std::string& path, uint64_t& out, std::string* error) {
  std::ifstream in(path);
  if (!(in >> out)) {
    if (error != nullptr) *error = "cannot read " + path + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace

RaplMeter RaplMeter::open(const std::string& root) {
  RaplMeter m;
  std::error_code ec;
  std::vector<std::filesystem::path> dirs;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    // Top-level zones only ("intel-rapl:0"), not their subzones ("intel-rapl:0:0": core, dram).
    if (name.rfind("intel-rapl:", 0) == 0 && name.find(':', 11) == std::string::npos)
      dirs.push_back(entry.path());
  }
  if (dirs.empty()) {
    m.why_not_ = "no RAPL zones under " + root;
    return m;
  }
  std::sort(dirs.begin(), dirs.end());
  for (const auto& dir : dirs) {
    Zone z;
    std::ifstream(dir / "name") >> z.name;
    z.energy_file = (dir / "energy_uj").string();
    uint64_t probe = 0;
    if (!read_u64((dir / "max_energy_range_uj").string(), z.range_uj, &m.why_not_) ||
        !read_u64(z.energy_file, probe, &m.why_not_)) {
      m.zones_.clear();
      return m;
    }
    m.zones_.push_back(std::move(z));
  }
  return m;
}

std::string RaplMeter::zones() const {
  std::string out;
  for (const Zone& z : zones_) out += (out.empty() ? "" : ", ") + z.name;
  return out;
}

std::vector<uint64_t> RaplMeter::read() const {
  std::vector<uint64_t> out(zones_.size());
  for (size_t i = 0; i < zones_.size(); ++i)
    if (!read_u64(zones_[i].energy_file, out[i], nullptr)) return {};
  return out;
}

double RaplMeter::joules(const std::vector<uint64_t>& from, const std::vector<uint64_t>& to) const {
  if (from.size() != zones_.size() || to.size() != zones_.size()) return 0;
  double uj = 0;
  for (size_t i = 0; i < zones_.size(); ++i)
    uj += static_cast<double>(to[i] >= from[i] ? to[i] - from[i]
                                               : zones_[i].range_uj - from[i] + to[i]);
  return uj * kJoulesPerMicrojoule;
}

}  // namespace fulcrum
