// FlowNf: one L7 network function, written once for the CPU and (optionally) for a device
// (paper 004 §V). The framework calls process() for each message of a flow in order, with the
// flow's state; the NF never decides where or when it runs. A chain of NFs is run per message in
// order (nf/chain.hh); on a device the whole chain is one fused kernel (kernels/l7_chain.cl)
// whose ops are listed in kernels/common/l7_ops.h.
//
// State is plain bytes of a fixed size per flow (state_bytes()): the same bytes the device
// kernel reads and writes, so a flow can move between CPU and device between batches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/args.hh"
#include "core/result.hh"
#include "kernels/common/l7_ops.h"
#include "l7/flow/message.hh"

namespace fulcrum::l7 {

// The device form of an NF: an op of kernels/common/l7_ops.h and the read-only table it reads
// (uploaded once per device), laid out as l7_ops.h documents for that op.
struct DeviceOp {
  uint32_t code = 0;
  std::vector<uint8_t> table;
  // The directions the op runs on (L7_ON_REQUESTS, L7_ON_RESPONSES); messages of the other
  // pass it untouched, as they pass process() of an NF that does not apply to them.
  uint32_t directions = L7_ON_REQUESTS | L7_ON_RESPONSES;
};

class FlowNf {
 public:
  virtual ~FlowNf() = default;
  virtual std::string_view name() const = 0;

  // Bytes of per-flow state; 0 for a stateless NF. Initialised by init_state when the flow opens.
  virtual size_t state_bytes() const { return 0; }
  virtual void init_state(std::span<uint8_t> state) const { (void)state; }

  // Processes one message (in flow order) on the CPU with the flow's state. Sets m.verdict to
  // answer, close or pick a backend; may rewrite m.body.
  virtual void process(Message& m, std::span<uint8_t> state) = 0;

  // The device form; nullopt when the NF runs on the CPU only (then a chain containing it runs
  // on the CPU).
  virtual std::optional<DeviceOp> device_op() const { return std::nullopt; }

  // Before the device runs this NF's op on `m` (the host calls it for each NF of the chain, in
  // order, before the launch): writes what the op expects to find in the message (the web
  // gateway's ENCRYPT: IV || plaintext || padding). Default: nothing.
  virtual void prepare_device(Message& m) { (void)m; }

  // After the device ran this NF's op on `m`: `out` is the op's output words for the message
  // (L7_OUT_WORDS, l7_ops.h), `state` the flow state after it. Turns them into the same verdict
  // (and body) that process() would have produced.
  virtual void finish_device(Message& m, std::span<uint8_t> state, std::span<const uint32_t> out) {
    (void)m;
    (void)state;
    (void)out;
  }
};

// NF classes by name, for configuration files: FULCRUM_REGISTER_NF(Name, factory) where
// factory is Result<std::unique_ptr<FlowNf>>(Args&). Args (core/args.hh) gives file:line errors
// and the manual.
using NfFactory = std::function<Result<std::unique_ptr<FlowNf>>(Args&)>;

class NfRegistry {
 public:
  static NfRegistry& instance() {
    static NfRegistry r;
    return r;
  }
  void add(std::string name, NfFactory f) { factories_[std::move(name)] = std::move(f); }
  const NfFactory* find(std::string_view name) const {
    auto it = factories_.find(name);
    return it == factories_.end() ? nullptr : &it->second;
  }
  const std::map<std::string, NfFactory, std::less<>>& all() const { return factories_; }

 private:
  std::map<std::string, NfFactory, std::less<>> factories_;
};

struct NfRegistration {
  NfRegistration(std::string name, NfFactory f) {
    NfRegistry::instance().add(std::move(name), std::move(f));
  }
};

#define FULCRUM_REGISTER_NF(NAME, FACTORY)                                    \
  inline const ::fulcrum::l7::NfRegistration fulcrum_nf_registration_##NAME { \
#NAME, FACTORY                                                            \
  }

}  // namespace fulcrum::l7
