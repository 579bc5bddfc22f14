// Touch: the "bare" L7 NF of the benchmarks and the chain tests (paper 004 §VI-B's "bare metal"
// NF, given one pass over the bytes so that its cost grows with the flow's size): a rolling
// 32-bit FNV-1a hash of the flow's bytes so far, in the flow's state. Device form L7_OP_TOUCH
// (kernels/common/l7_ops.h); several Touch NFs in a chain make one fused kernel with that many
// passes per byte.
//
// Configuration:
//   RESPOND_MOD  integer, default 0   when > 0, a message after which the flow's hash is a
//                                     multiple of it is answered 403 (a verdict the tests can
//                                     compare between CPU and device); 0: always forward
// State: uint32 hash, FNV-1a offset basis at flow start. Verdict: kForward, or kRespond 403
// "Touch: hash" as above.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "l7/nf/nf.hh"

namespace fulcrum::l7 {

inline constexpr uint32_t kFnvOffsetBasis = 2166136261u;
inline constexpr uint32_t kFnvPrime = 16777619u;
inline constexpr uint16_t kTouchRespondStatus = 403;

inline uint32_t fnv1a(uint32_t h, std::span<const uint8_t> bytes) {
  for (uint8_t b : bytes) h = (h ^ b) * kFnvPrime;
  return h;
}

class Touch final : public FlowNf {
 public:
  explicit Touch(uint32_t respond_mod = 0) : respond_mod_(respond_mod) {}

  std::string_view name() const override { return "Touch"; }
  size_t state_bytes() const override { return sizeof(uint32_t); }
  void init_state(std::span<uint8_t> state) const override;
  void process(Message& m, std::span<uint8_t> state) override;
  std::optional<DeviceOp> device_op() const override;
  void finish_device(Message& m, std::span<uint8_t> state, std::span<const uint32_t> out) override;

 private:
  void verdict(Message& m, uint32_t hash) const;
  uint32_t respond_mod_;
};

}  // namespace fulcrum::l7
