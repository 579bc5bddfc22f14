// The device side of one batching round (paper 004 §III-C, Fig. 4): the flows given to the
// device, packed into the L7 chain kernel's batch layout (kernels/l7_chain.cl), submitted
// asynchronously on an offload Queue (copy in, launch, copy out, record; §III-D), polled, and
// read back.
//
//   DeviceChain   a chain's device form on one device: the ops' tables packed and uploaded once,
//                 the op list, the kernel. create() fails when an NF has no device form.
//   DeviceBatch   one round: add_flow() per flow (its state record and its messages in order),
//                 submit(), then query() until done, then the results per message and flow.
//
// Buffers grow to the largest round seen and are reused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/result.hh"
#include "l7/flow/message.hh"
#include "l7/nf/chain.hh"
#include "offload/device.hh"

namespace fulcrum::l7 {

inline constexpr const char* kL7ChainKernel = "l7_chain";
// Message offsets in the batch (AES blocks start aligned).
inline constexpr size_t kL7MessageAlign = 16;
// Work items per group in a launch (FlowShader's N_block, §IV-B: 64).
inline constexpr uint32_t kL7GroupSize = 64;

class DeviceChain {
 public:
  static Result<std::unique_ptr<DeviceChain>> create(offload::Device& device, const Chain& chain);

  offload::Device& device() const { return device_; }
  uint32_t ops() const { return static_cast<uint32_t>(codes_.size()); }
  uint32_t code(uint32_t op) const { return codes_[op]; }
  // True when an op rewrites message bytes (the bytes are then copied back).
  bool transforms() const { return transforms_; }
  size_t state_bytes() const { return state_bytes_; }
  const offload::Kernel& kernel() const { return *kernel_; }
  const offload::DeviceBuffer& chain_buffer() const { return *chain_; }
  const offload::DeviceBuffer& tables_buffer() const { return *tables_; }

 private:
  DeviceChain(offload::Device& device) : device_(device) {}
  offload::Device& device_;
  std::vector<uint32_t> codes_;
  bool transforms_ = false;
  size_t state_bytes_ = 0;
  const offload::Kernel* kernel_ = nullptr;
  std::unique_ptr<offload::DeviceBuffer> chain_;
  std::unique_ptr<offload::DeviceBuffer> tables_;
};

class DeviceBatch {
 public:
  explicit DeviceBatch(DeviceChain& chain) : chain_(chain) {}

  void clear();
  // Appends a flow: its chain state record and its messages, in flow order.
  void add_flow(std::span<const uint8_t> state, std::span<const Message* const> messages);
  uint32_t flows() const { return static_cast<uint32_t>(flow_words_.size() / kFlowWords); }
  uint32_t messages() const { return static_cast<uint32_t>(msg_words_.size() / kMsgWords); }
  // Bytes copied to the device (S_g of the cost model: messages and states).
  size_t bytes_in() const { return bytes_.size() + states_.size(); }

  // Copies in, launches, copies out and records on `queue`; returns at once.
  Status submit(offload::Queue& queue);

  // After completion: message k's bytes (rewritten by transforming ops; its original length),
  // its op outputs (L7_OUT_WORDS per op), the chain state after it; flow f's final state.
  std::span<const uint8_t> message_bytes(uint32_t k) const;
  std::span<const uint32_t> output(uint32_t k, uint32_t op) const;
  std::span<const uint8_t> state_after(uint32_t k) const;
  std::span<const uint8_t> final_state(uint32_t f) const;

 private:
  static constexpr size_t kMsgWords = 3;
  static constexpr size_t kFlowWords = 3;
  struct Slot {
    std::unique_ptr<offload::HostBuffer> host;
    std::unique_ptr<offload::DeviceBuffer> dev;
  };
  Status reserve(Slot& s, size_t bytes);

  DeviceChain& chain_;
  std::vector<uint8_t> bytes_;
  std::vector<uint32_t> msg_words_;
  std::vector<uint32_t> flow_words_;
  std::vector<uint8_t> states_;
  // bytes, msgs, flows, states, out, msg_states
  Slot slots_[6];
};

}  // namespace fulcrum::l7
