#include "l7/flow/scheduler.hh"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

namespace fulcrum::l7 {
namespace {

constexpr size_t kGpuFeatures = 3;  // R * M, S_g, 1
constexpr size_t kCpuFeatures = 4;  // m, S_g, S_c, 1
// The ridge: relative to each feature's own sum of squares (so the fit is scale free: 1e-3 of
// the unit diagonal after scaling), so that directions the rounds barely determine (features
// that hardly varied, or varied together) stay near the previous fit instead of amplifying
// noise; plus an absolute floor for features with no variance at all.
constexpr double kRidgeRelative = 1e-3;
constexpr double kRidgeFloor = 1e-12;
constexpr double kPercent = 100;

}  // namespace

double CostModel::waves(size_t n_flows) const {
  return std::ceil(static_cast<double>(n_flows) / n_block / std::max<uint32_t>(n_sm, 1));
}

double CostModel::gpu_ns(size_t n_flows, uint64_t largest, uint64_t s_g) const {
  if (n_flows == 0) return 0;
  return c.k2 * waves(n_flows) * static_cast<double>(largest) +
         2 * c.k1 * static_cast<double>(s_g) + 2 * c.b1;
}

double CostModel::cpu_ns(size_t m, uint64_t s_g, uint64_t s_c) const {
  return c.k3 * static_cast<double>(m) + c.k4 * static_cast<double>(s_g) +
         c.k5 * static_cast<double>(s_c) + c.b2;
}

double total_ns(std::span<const uint64_t> sizes, size_t m, size_t p, const CostModel& model) {
  const uint64_t s_g = std::accumulate(sizes.begin(), sizes.begin() + p, uint64_t{0});
  const uint64_t s_c = std::accumulate(sizes.begin() + p, sizes.end(), uint64_t{0});
  const uint64_t largest = p == 0 ? 0 : sizes[p - 1];
  return std::max(model.cpu_ns(m, s_g, s_c), model.gpu_ns(p, largest, s_g));
}

size_t schedule_flows(std::span<const uint64_t> sizes, size_t m, const CostModel& model) {
  const size_t n = sizes.size();
  uint64_t s_g = std::accumulate(sizes.begin(), sizes.end(), uint64_t{0});
  uint64_t s_c = 0;
  size_t best = n;
  double t_min = std::max(model.cpu_ns(m, s_g, s_c), model.gpu_ns(n, n ? sizes[n - 1] : 0, s_g));
  for (size_t p = n; p-- > 0;) {  // flow p moves to the CPU
    s_g -= sizes[p];
    s_c += sizes[p];
    const double t =
        std::max(model.cpu_ns(m, s_g, s_c), model.gpu_ns(p, p ? sizes[p - 1] : 0, s_g));
    if (t >= t_min) break;
    t_min = t;
    best = p;
  }
  return best;
}

Result<Policy> Policy::parse(std::string_view text) {
  Policy p;
  if (text == "flowshader") return p;
  if (text == "cpu") return Policy{PolicyKind::kCpu, 0};
  if (text == "device" || text == "gpu") return Policy{PolicyKind::kDevice, 0};
  if (text == "round-robin") return Policy{PolicyKind::kRoundRobin, 0};
  if (text.starts_with("fixed:")) {
    const std::string_view v = text.substr(6);
    double x = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (ec == std::errc() && end == v.data() + v.size() && x >= 0 && x <= kPercent)
      return Policy{PolicyKind::kFixed, x};
  }
  return make_error("policy '" + std::string(text) +
                    "': expected flowshader, cpu, device, fixed:X (0..100) or round-robin");
}

std::string Policy::name() const {
  switch (kind) {
    case PolicyKind::kFlowShader:
      return "flowshader";
    case PolicyKind::kCpu:
      return "cpu";
    case PolicyKind::kDevice:
      return "device";
    case PolicyKind::kRoundRobin:
      return "round-robin";
    case PolicyKind::kFixed:
      break;
  }
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, cpu_percent);
  return "fixed:" + std::string(buf, r.ptr);
}

std::vector<bool> partition(const Policy& policy, std::span<const uint64_t> sizes, size_t m,
                            const CostModel& model) {
  const size_t n = sizes.size();
  std::vector<bool> dev(n, false);
  if (policy.kind == PolicyKind::kCpu) return dev;
  if (policy.kind == PolicyKind::kDevice) return std::vector<bool>(n, true);
  if (policy.kind == PolicyKind::kRoundRobin) {
    for (size_t i = 0; i < n; i += 2) dev[i] = true;
    return dev;
  }
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return sizes[a] < sizes[b]; });
  size_t p;
  if (policy.kind == PolicyKind::kFixed) {
    p = n -
        static_cast<size_t>(std::llround(static_cast<double>(n) * policy.cpu_percent / kPercent));
  } else {
    std::vector<uint64_t> sorted(n);
    for (size_t i = 0; i < n; ++i) sorted[i] = sizes[order[i]];
    p = schedule_flows(sorted, m, model);
  }
  for (size_t i = 0; i < p; ++i) dev[order[i]] = true;
  return dev;
}

std::vector<double> fit_linear(std::span<const double> x, std::span<const double> y,
                               std::span<const double> prior) {
  const size_t k = prior.size();
  std::vector<double> a(k * k, 0), b(k, 0);
  for (size_t r = 0; r < y.size(); ++r) {
    const double* row = x.data() + r * k;
    for (size_t i = 0; i < k; ++i) {
      b[i] += row[i] * y[r];
      for (size_t j = 0; j < k; ++j) a[i * k + j] += row[i] * row[j];
    }
  }
  for (size_t i = 0; i < k; ++i) {
    const double ridge = kRidgeRelative * a[i * k + i] + kRidgeFloor;
    a[i * k + i] += ridge;
    b[i] += ridge * prior[i];
  }
  // Columns scaled to a unit diagonal (bytes and counts differ by orders of magnitude), then
  // Gaussian elimination with partial pivoting.
  std::vector<double> scale(k);
  for (size_t i = 0; i < k; ++i) scale[i] = 1 / std::sqrt(a[i * k + i]);
  for (size_t i = 0; i < k; ++i) {
    b[i] *= scale[i];
    for (size_t j = 0; j < k; ++j) a[i * k + j] *= scale[i] * scale[j];
  }
  for (size_t c = 0; c < k; ++c) {
    size_t piv = c;
    for (size_t r = c + 1; r < k; ++r)
      if (std::abs(a[r * k + c]) > std::abs(a[piv * k + c])) piv = r;
    if (piv != c) {
      for (size_t j = 0; j < k; ++j) std::swap(a[c * k + j], a[piv * k + j]);
      std::swap(b[c], b[piv]);
    }
    for (size_t r = c + 1; r < k; ++r) {
      const double f = a[r * k + c] / a[c * k + c];
      for (size_t j = c; j < k; ++j) a[r * k + j] -= f * a[c * k + j];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> beta(k, 0);
  for (size_t c = k; c-- > 0;) {
    double s = b[c];
    for (size_t j = c + 1; j < k; ++j) s -= a[c * k + j] * beta[j];
    beta[c] = s / a[c * k + c];
  }
  for (size_t i = 0; i < k; ++i) beta[i] *= scale[i];
  return beta;
}

void CostFit::add_round(const CostModel& model, size_t n_flows_gpu, uint64_t largest_gpu,
                        uint64_t s_g, size_t m, uint64_t s_c, double gpu_ns, double cpu_ns) {
  ++rounds_;
  if (gpu_ns >= 0 && n_flows_gpu > 0) {
    gx_.insert(gx_.end(), {model.waves(n_flows_gpu) * static_cast<double>(largest_gpu),
                           static_cast<double>(s_g), 1.0});
    gy_.push_back(gpu_ns);
  }
  if (cpu_ns >= 0) {
    cx_.insert(cx_.end(),
               {static_cast<double>(m), static_cast<double>(s_g), static_cast<double>(s_c), 1.0});
    cy_.push_back(cpu_ns);
  }
}

bool CostFit::maybe_refit(CostModel& model) {
  if (rounds_ < refit_rounds_) return false;
  CostCoefficients& c = model.c;
  if (!gy_.empty()) {
    const double prior[kGpuFeatures] = {c.k2, 2 * c.k1, 2 * c.b1};
    const std::vector<double> g = fit_linear(gx_, gy_, prior);
    c.k2 = std::max(g[0], 0.0);
    c.k1 = std::max(g[1] / 2, 0.0);
    c.b1 = std::max(g[2] / 2, 0.0);
  }
  if (!cy_.empty()) {
    const double prior[kCpuFeatures] = {c.k3, c.k4, c.k5, c.b2};
    const std::vector<double> p = fit_linear(cx_, cy_, prior);
    c.k3 = std::max(p[0], 0.0);
    c.k4 = std::max(p[1], 0.0);
    c.k5 = std::max(p[2], 0.0);
    c.b2 = std::max(p[3], 0.0);
  }
  rounds_ = 0;
  ++fits_;
  gx_.clear();
  gy_.clear();
  cx_.clear();
  cy_.clear();
  return true;
}

}  // namespace fulcrum::l7
