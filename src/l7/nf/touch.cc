#include "l7/nf/touch.hh"

#include <cstring>
#include <memory>

#include "kernels/common/l7_ops.h"

namespace fulcrum::l7 {

void Touch::init_state(std::span<uint8_t> state) const {
  const uint32_t h = kFnvOffsetBasis;
  std::memcpy(state.data(), &h, sizeof h);
}

void Touch::verdict(Message& m, uint32_t hash) const {
  if (respond_mod_ == 0 || hash % respond_mod_ != 0) return;
  m.verdict.action = Action::kRespond;
  m.verdict.status = kTouchRespondStatus;
  m.verdict.reason = "Touch: hash";
}

void Touch::process(Message& m, std::span<uint8_t> state) {
  uint32_t h;
  std::memcpy(&h, state.data(), sizeof h);
  h = fnv1a(h, m.body);
  std::memcpy(state.data(), &h, sizeof h);
  verdict(m, h);
}

std::optional<DeviceOp> Touch::device_op() const {
  return DeviceOp{L7_OP_TOUCH, {}};
}

void Touch::finish_device(Message& m, std::span<uint8_t> state, std::span<const uint32_t> out) {
  (void)state;
  verdict(m, out[0]);
}

namespace {

Result<std::unique_ptr<FlowNf>> make_touch(Args& args) {
  uint32_t respond_mod = 0;
  args.key("RESPOND_MOD", respond_mod,
           "answer 403 when the flow's hash after a message is a multiple of it (0: never)");
  if (Status s = args.finish(); !s) return make_error(s.error());
  return std::unique_ptr<FlowNf>(std::make_unique<Touch>(respond_mod));
}

}  // namespace

FULCRUM_REGISTER_NF(Touch, make_touch);

}  // namespace fulcrum::l7
