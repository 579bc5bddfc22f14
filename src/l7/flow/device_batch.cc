#include "l7/flow/device_batch.hh"

#include <algorithm>
#include <cstring>
#include <string>

#include "kernels/common/l7_ops.h"

namespace fulcrum::l7 {
namespace {

constexpr size_t kTableAlign = 16;
constexpr size_t kChainWords = 3;
enum SlotIndex : size_t { kBytes, kMsgs, kFlows, kStates, kOut, kMsgStates };

size_t align_up(size_t n, size_t a) {
  return (n + a - 1) / a * a;
}

}  // namespace

Result<std::unique_ptr<DeviceChain>> DeviceChain::create(offload::Device& device,
                                                         const Chain& chain) {
  if (chain.size() == 0 || chain.size() > L7_MAX_OPS)
    return make_error("l7 device chain: " + std::to_string(chain.size()) + " NFs (1 to " +
                      std::to_string(L7_MAX_OPS) + " run on a device)");
  std::unique_ptr<DeviceChain> dc(new DeviceChain(device));
  std::vector<uint32_t> words;
  std::vector<uint8_t> tables;
  for (size_t i = 0; i < chain.size(); ++i) {
    std::optional<DeviceOp> op = chain.nf(i).device_op();
    if (!op)
      return make_error("l7 device chain: NF " + std::string(chain.nf(i).name()) +
                        " has no device form");
    const size_t at = align_up(tables.size(), kTableAlign);
    tables.resize(at + op->table.size());
    if (!op->table.empty()) std::memcpy(tables.data() + at, op->table.data(), op->table.size());
    words.push_back(op->code | op->directions);
    words.push_back(static_cast<uint32_t>(at));
    words.push_back(static_cast<uint32_t>(chain.state_offset(i)));
    dc->codes_.push_back(op->code);
    dc->transforms_ |= op->code == L7_OP_AES128_CBC_DECRYPT ||
                       op->code == L7_OP_AES128_CBC_ENCRYPT || op->code == L7_OP_AES128_CBC_GATEWAY;
  }
  dc->state_bytes_ = chain.state_bytes();
  tables.resize(std::max<size_t>(tables.size(), kTableAlign));
  Result<const offload::Kernel*> k = device.kernel(kL7ChainKernel);
  if (!k) return make_error("l7 device chain: " + k.error());
  dc->kernel_ = k.value();
  auto c = device.alloc(words.size() * sizeof(uint32_t));
  auto t = device.alloc(tables.size());
  if (!c) return make_error("l7 device chain: " + c.error());
  if (!t) return make_error("l7 device chain: " + t.error());
  if (Status s = device.upload(*c.value(), words.data(), words.size() * sizeof(uint32_t)); !s)
    return make_error("l7 device chain: " + s.error());
  if (Status s = device.upload(*t.value(), tables.data(), tables.size()); !s)
    return make_error("l7 device chain: " + s.error());
  dc->chain_ = std::move(c.value());
  dc->tables_ = std::move(t.value());
  static_assert(kChainWords == 3, "kernels/l7_chain.cl L7_CHAIN_WORDS");
  return dc;
}

void DeviceBatch::clear() {
  bytes_.clear();
  msg_words_.clear();
  flow_words_.clear();
  states_.clear();
}

void DeviceBatch::add_flow(std::span<const uint8_t> state, std::span<const Message* const> msgs) {
  const uint32_t flow = flows();
  flow_words_.push_back(messages());
  flow_words_.push_back(static_cast<uint32_t>(msgs.size()));
  flow_words_.push_back(static_cast<uint32_t>(states_.size()));
  const size_t at = states_.size();
  states_.resize(at + chain_.state_bytes());
  if (!state.empty()) std::memcpy(states_.data() + at, state.data(), state.size());
  for (const Message* m : msgs) {
    const size_t off = align_up(bytes_.size(), kL7MessageAlign);
    bytes_.resize(off + m->body.size());
    if (!m->body.empty()) std::memcpy(bytes_.data() + off, m->body.data(), m->body.size());
    msg_words_.push_back(static_cast<uint32_t>(off));
    msg_words_.push_back(static_cast<uint32_t>(m->body.size()));
    msg_words_.push_back(flow | (m->dir == Direction::kResponse ? L7_MSG_RESPONSE : 0u));
  }
}

Status DeviceBatch::reserve(Slot& s, size_t bytes) {
  bytes = std::max<size_t>(bytes, kL7MessageAlign);
  if (s.host && s.host->size() >= bytes) return {};
  const size_t cap = std::max(bytes, s.host ? 2 * s.host->size() : bytes);
  auto h = chain_.device().alloc_host(cap);
  if (!h) return make_error(h.error());
  auto d = chain_.device().alloc(cap);
  if (!d) return make_error(d.error());
  s.host = std::move(h.value());
  s.dev = std::move(d.value());
  return {};
}

Status DeviceBatch::submit(offload::Queue& queue) {
  const size_t nmsg = messages();
  const size_t out_bytes = nmsg * chain_.ops() * L7_OUT_WORDS * sizeof(uint32_t);
  const size_t snap_bytes = nmsg * chain_.state_bytes();
  const size_t sizes[6] = {bytes_.size(),
                           msg_words_.size() * sizeof(uint32_t),
                           flow_words_.size() * sizeof(uint32_t),
                           states_.size(),
                           out_bytes,
                           snap_bytes};
  for (size_t k = 0; k < 6; ++k)
    if (Status s = reserve(slots_[k], sizes[k]); !s) return s;
  const void* src[4] = {bytes_.data(), msg_words_.data(), flow_words_.data(), states_.data()};
  for (size_t k = 0; k < 4; ++k) {
    if (sizes[k] == 0) continue;
    std::memcpy(slots_[k].host->data(), src[k], sizes[k]);
    if (Status s = queue.copy_to_device(*slots_[k].dev, 0, *slots_[k].host, 0, sizes[k]); !s)
      return s;
  }
  const offload::KernelArg args[] = {
      offload::KernelArg::of(*slots_[kBytes].dev),
      offload::KernelArg::of(*slots_[kMsgs].dev),
      offload::KernelArg::of(*slots_[kFlows].dev),
      offload::KernelArg::of(*slots_[kStates].dev),
      offload::KernelArg::of(chain_.chain_buffer()),
      offload::KernelArg::of(chain_.tables_buffer()),
      offload::KernelArg::of(*slots_[kOut].dev),
      offload::KernelArg::of(*slots_[kMsgStates].dev),
      offload::KernelArg::of(chain_.ops()),
      offload::KernelArg::of(static_cast<uint32_t>(chain_.state_bytes())),
      offload::KernelArg::of(flows())};
  if (flows() > 0) {
    const offload::LaunchDims dims{flows(), kL7GroupSize};
    if (Status s = queue.launch(chain_.kernel(), dims, args); !s) return s;
  }
  for (size_t k : {kStates, kOut, kMsgStates}) {
    if (sizes[k] == 0) continue;
    if (Status s = queue.copy_to_host(*slots_[k].host, 0, *slots_[k].dev, 0, sizes[k]); !s)
      return s;
  }
  if (chain_.transforms() && sizes[kBytes] > 0)
    if (Status s =
            queue.copy_to_host(*slots_[kBytes].host, 0, *slots_[kBytes].dev, 0, sizes[kBytes]);
        !s)
      return s;
  return queue.record();
}

std::span<const uint8_t> DeviceBatch::message_bytes(uint32_t k) const {
  const uint8_t* base =
      chain_.transforms() ? slots_[kBytes].host->as<const uint8_t>() : bytes_.data();
  return {base + msg_words_[k * kMsgWords], msg_words_[k * kMsgWords + 1]};
}

std::span<const uint32_t> DeviceBatch::output(uint32_t k, uint32_t op) const {
  return {slots_[kOut].host->as<const uint32_t>() +
              (static_cast<size_t>(k) * chain_.ops() + op) * L7_OUT_WORDS,
          L7_OUT_WORDS};
}

std::span<const uint8_t> DeviceBatch::state_after(uint32_t k) const {
  return {slots_[kMsgStates].host->as<const uint8_t>() + k * chain_.state_bytes(),
          chain_.state_bytes()};
}

std::span<const uint8_t> DeviceBatch::final_state(uint32_t f) const {
  return {slots_[kStates].host->as<const uint8_t>() + flow_words_[f * kFlowWords + 2],
          chain_.state_bytes()};
}

}  // namespace fulcrum::l7
