#include "runtime/placement.hh"

#include <algorithm>
#include <charconv>

namespace fulcrum {
namespace {

constexpr std::string_view kForm =
    "clone | auto | cut=ELEMENT[,cut=ELEMENT...],cores=N0+N1[+N2...]";

std::string expected(const std::string& what) {
  return "--placement: " + what + " (expected " + std::string(kForm) + ")";
}

// "N0+N1+..." into `out`; an error names the item that is not a positive integer.
Status parse_cores(std::string_view text, std::vector<unsigned>& out) {
  size_t start = 0;
  for (;;) {
    const size_t plus = text.find('+', start);
    const std::string_view item =
        text.substr(start, plus == std::string_view::npos ? std::string_view::npos : plus - start);
    unsigned n = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size())
      return make_error(expected("cores=" + std::string(text) + ": '" + std::string(item) +
                                 "' is not a number of cores"));
    if (n == 0)
      return make_error(expected("cores=" + std::string(text) + ": stage " +
                                 std::to_string(out.size()) + " has no cores"));
    out.push_back(n);
    if (plus == std::string_view::npos) return {};
    start = plus + 1;
  }
}

}  // namespace

Result<Placement> parse_placement(std::string_view spec) {
  Placement p;
  if (spec == "clone") return p;
  if (spec == "auto") {
    p.automatic = true;
    return p;
  }
  if (spec.empty()) return make_error(expected("empty"));
  bool have_cores = false;
  size_t start = 0;
  while (start <= spec.size()) {
    const size_t comma = spec.find(',', start);
    const std::string_view item = spec.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    start = comma == std::string_view::npos ? spec.size() + 1 : comma + 1;
    const size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? "" : item.substr(eq + 1);
    if (key == "cut" && eq != std::string_view::npos) {
      if (value.empty()) return make_error(expected("cut= names no element"));
      if (std::find(p.cuts.begin(), p.cuts.end(), value) != p.cuts.end())
        return make_error(expected("cut=" + std::string(value) + " given twice"));
      p.cuts.emplace_back(value);
    } else if (key == "cores" && eq != std::string_view::npos) {
      if (have_cores) return make_error(expected("cores= given twice"));
      have_cores = true;
      if (Status s = parse_cores(value, p.cores); !s) return make_error(s.error());
    } else {
      return make_error(expected("'" + std::string(item) + "' is not clone, auto, cut= or cores="));
    }
  }
  if (p.cuts.empty()) return make_error(expected("no cut= (a pipelined placement needs one)"));
  if (!have_cores)
    return make_error(expected("no cores= (the workers of each of the " +
                               std::to_string(p.stages()) + " stages)"));
  if (p.cores.size() != p.stages())
    return make_error(expected(
        std::to_string(p.cuts.size()) + " cut" + (p.cuts.size() == 1 ? "" : "s") + " make " +
        std::to_string(p.stages()) + " stages but cores= names " + std::to_string(p.cores.size())));
  return p;
}

std::string to_string(const Placement& p) {
  if (p.automatic) return "auto";
  if (p.cuts.empty()) return "clone";
  std::string out;
  for (const std::string& c : p.cuts) out += "cut=" + c + ",";
  out += "cores=";
  for (size_t i = 0; i < p.cores.size(); ++i)
    out += (i == 0 ? "" : "+") + std::to_string(p.cores[i]);
  return out;
}

}  // namespace fulcrum
