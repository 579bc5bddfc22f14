#include "elements/balance/fixed_fraction.hh"

#include <string>

#include "elements/balance/device_index.hh"

namespace fulcrum {

Status FixedFraction::configure(Args& args) {
  double w = 0;
  uint32_t device = 0, seed = 1, aggregate = 0;
  args.positional("W", w, "share of batches offloaded, in [0, 1]")
      .key("DEVICE", device, "device index for them (`fulcrum devices` order)")
      .key("AGGREGATE", aggregate,
           "batches per device task for the offloadable elements downstream, at most their own "
           "AGGREGATE (0: theirs; `fulcrum profile` sweeps it)")
      .key("SEED", seed, "seed of the per-batch draw")
      .key("COUNT_BYTES", count_bytes_,
           "count the bytes of the packets it passes (counter bytes; one load a packet)");
  if (Status s = args.finish(); !s) return s;
  if (w < 0 || w > 1) return args.error("W must be between 0 and 1");
  constexpr uint32_t kMaxAggregate = 256;
  if (aggregate > kMaxAggregate) return args.error("AGGREGATE must be 0..256");
  aggregate_ = static_cast<uint16_t>(aggregate);
  constexpr uint32_t kMaxDevice = 63;
  if (device > kMaxDevice) return args.error("DEVICE must be 0..63");
  constexpr double kScale = 4294967296.0;
  threshold_ = w >= 1 ? (uint64_t{1} << 32) : static_cast<uint64_t>(w * kScale);
  device_ = static_cast<int32_t>(device);
  state_ = seed == 0 ? 1 : seed;
  return {};
}

Status FixedFraction::initialize(const InitContext& ctx) {
  if (threshold_ == 0) return {};
  Result<size_t> devices = run_devices(ctx, name());
  if (!devices) return make_error(devices.error());
  return check_device_index(device_, devices.value(), "DEVICE " + std::to_string(device_));
}

}  // namespace fulcrum
