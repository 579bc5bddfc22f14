#include "elements/standard/random_split.hh"

namespace fulcrum {

Status RandomSplit::configure(Args& args) {
  double fraction = 0;
  uint32_t seed = 1;
  args.positional("FRACTION", fraction, "share sent to output 1, in [0, 1]")
      .key("SEED", seed, "generator seed");
  if (Status s = args.finish(); !s) return s;
  if (fraction < 0 || fraction > 1) return args.error("FRACTION must be between 0 and 1");
  constexpr double kScale = 4294967296.0;
  threshold_ = static_cast<uint64_t>(fraction * kScale);
  state_ = seed == 0 ? 1 : seed;
  return {};
}

}  // namespace fulcrum
