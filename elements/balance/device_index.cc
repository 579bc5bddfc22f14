#include "elements/balance/device_index.hh"

#include "offload/service.hh"

namespace fulcrum {

Result<size_t> run_devices(const InitContext& ctx, const std::string& who) {
  Result<std::shared_ptr<const offload::OffloadService>> svc =
      offload::OffloadService::get(ctx.shared);
  if (!svc) return make_error(svc.error());
  const size_t n = svc.value()->devices();
  if (n == 0 && ctx.worker == 0 && ctx.notes != nullptr)
    ctx.notes->push_back(who + ": no offload device in this run: its batches run on the CPU");
  return n;
}

Status check_device_index(int32_t device, size_t devices, const std::string& what) {
  if (devices == 0 || device < 0 || static_cast<size_t>(device) < devices) return {};
  return make_error(
      what + " is not a device of this run: it has " + std::to_string(devices) +
      (devices == 1 ? " device (index 0)" : " devices (0.." + std::to_string(devices - 1) + ")") +
      "; `fulcrum devices` lists them");
}

}  // namespace fulcrum
