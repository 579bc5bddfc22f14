// BatchProcessor: FlowShader's per-thread pipeline (paper 004 §III-IV) behind the Processor
// interface (processor.hh): the flow manager buffers each flow's messages (flow_manager.hh); the
// batch manager dispatches a round when the unprocessed messages reach the threshold (fixed, or
// FlowShader's dynamic threshold) or the oldest has waited the timeout (batch_manager.hh); the
// flow scheduler splits the round's flows between the CPU and the device (scheduler.hh, Alg. 1
// with the cost model refitted every 200 rounds); the device part runs as one fused kernel
// (device_batch.hh, kernels/l7_chain.cl), submitted asynchronously, while this thread processes
// the CPU part (§III-D), then polled. Each NF's finish_device turns the device's outputs into
// its verdict. Messages come back each flow in order.
//
// One round is in flight at a time: the next is dispatched when the device part of the last has
// finished, so a flow's messages never run on two sides at once.
//
// No device, a chain with an NF that has no device form, or policy cpu: everything on the CPU.
// A device call that fails marks the device down and the round's device part runs on the CPU
// from the flows' states before the round (nothing lost; counted in stats().fallback_*).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hh"
#include "l7/flow/batch_manager.hh"
#include "l7/flow/device_batch.hh"
#include "l7/flow/flow_manager.hh"
#include "l7/flow/processor.hh"
#include "l7/flow/scheduler.hh"
#include "offload/device.hh"

namespace fulcrum::l7 {

struct BatchOptions {
  Policy policy;
  bool dynamic_threshold = true;  // "auto"; false: `threshold` stays fixed
  uint32_t threshold = 32;
  DynamicThreshold::Params dynamic;
  uint64_t timeout_ns = kDefaultTimeoutNs;
  uint64_t period_ns = kDefaultPeriodNs;  // the dynamic threshold's measuring period
  bool refit = true;                      // refit the cost model online
  uint32_t refit_rounds = kDefaultRefitRounds;
  CostCoefficients initial;  // the cost model before its first fit

  // "auto" or a message count.
  Status set_threshold(std::string_view text);
  // A duration: "100ms", "5ms", "250us", "1s".
  Status set_timeout(std::string_view text);
  Status set_policy(std::string_view text);
};

struct BatchStats {
  uint64_t rounds = 0;
  uint64_t rounds_on_timeout = 0;  // dispatched by the timeout, not the threshold
  uint64_t device_rounds = 0;      // rounds with a device part
  uint64_t messages_cpu = 0, messages_device = 0;
  uint64_t flows_cpu = 0, flows_device = 0;  // flow-rounds on each side
  uint64_t bytes_cpu = 0, bytes_device = 0;
  uint64_t fallback_rounds = 0;    // device parts run on the CPU after a device failure
  uint64_t fallback_messages = 0;  // messages of those
  uint32_t fits = 0;               // cost-model refits so far
  // Sum over device rounds of the device flows' unevenness (largest / mean bytes; paper 004
  // Fig. 11's second row): divide by device_rounds.
  double device_unevenness_sum = 0;
};

class BatchProcessor final : public Processor {
 public:
  // `device` may be null (everything on the CPU).
  BatchProcessor(std::shared_ptr<Chain> chain, std::shared_ptr<offload::Device> device,
                 BatchOptions options = {});
  ~BatchProcessor() override;

  void open_flow(FlowId id) override;
  void close_flow(FlowId id) override;
  void submit(Message&& m) override;
  uint64_t poll(uint64_t now_ns, std::vector<Message>& out) override;

  // Processes everything held (regardless of threshold and timeout) and waits for the device:
  // on return every submitted message is in `out`.
  void flush(std::vector<Message>& out);

  // The flow's state record; null for an unknown (or expired) flow.
  const std::vector<uint8_t>* state(FlowId id);
  const BatchStats& stats() const { return stats_; }
  uint32_t threshold() const { return rule_.threshold; }
  const CostModel& model() const { return model_; }
  // Why the device is not used ("" when it is).
  const std::string& cpu_only_reason() const { return cpu_only_reason_; }
  uint64_t unprocessed() const { return flows_.unprocessed(); }

 private:
  struct Round;
  void run_round();
  // Calls each NF's prepare_device on a message going to the device (recording its body first
  // when that changes it).
  void prepare(Message& msg, Round& round, uint64_t k);
  // Copies the parts of a device state record its ops own (op_state_bytes) into the flow's.
  void take_device_state(std::span<const uint8_t> device, std::span<uint8_t> host);
  void enter(uint64_t now);  // counts the time since the last return as receiving
  bool device_usable() const;
  // Non-blocking check of the round in flight; finishes it when the device is done.
  void check_device(std::vector<Message>& out);
  void finish_device(std::vector<Message>& out);
  // Runs the in-flight device part on the CPU; returns the round's message count.
  uint64_t fall_back(std::vector<Message>& out);
  void round_done(uint64_t messages);

  std::shared_ptr<Chain> chain_;
  std::shared_ptr<offload::Device> device_;
  BatchOptions opt_;
  FlowManager flows_;
  DispatchRule rule_;
  DynamicThreshold dynamic_;
  ThroughputMeter meter_;
  CostModel model_;
  CostFit fit_;
  std::unique_ptr<DeviceChain> dchain_;
  std::unique_ptr<DeviceBatch> batch_;
  std::unique_ptr<offload::Queue> queue_;
  std::unique_ptr<Round> round_;  // the round whose device part is in flight
  std::string cpu_only_reason_;
  std::vector<Message> done_;  // CPU-finished messages not yet returned
  uint64_t oldest_ns_ = 0;     // arrival of the oldest unprocessed message
  // T_receive: the time since the last round spent outside poll() (the caller receiving and
  // parsing messages) and in submit().
  uint64_t receive_ns_ = 0;
  uint64_t last_exit_ns_ = 0;  // when submit() or poll() last returned
  BatchStats stats_;
};

// The clock BatchProcessor measures with: CLOCK_MONOTONIC, less the host time of emulated
// devices with host_free (offload/emu/emu_spec.hh; zero otherwise).
uint64_t l7_clock_ns();

// The device a BatchProcessor uses, by spec: "none" (CPU only), "auto" (the first device
// discovery finds, or none), or "BACKEND:N" (opencl:0, cuda:0, emu:0).
Result<std::shared_ptr<offload::Device>> select_l7_device(std::string_view spec);

}  // namespace fulcrum::l7
