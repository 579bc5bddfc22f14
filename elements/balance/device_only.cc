#include "elements/balance/device_only.hh"

namespace fulcrum {

Status DeviceOnly::configure(Args& args) {
  uint32_t device = 0;
  if (Status s =
          args.key("DEVICE", device, "index of the device (`fulcrum devices` order)").finish();
      !s)
    return s;
  constexpr uint32_t kMaxDevice = 63;
  if (device > kMaxDevice) return args.error("DEVICE must be 0..63");
  device_ = static_cast<int32_t>(device);
  return {};
}

}  // namespace fulcrum
