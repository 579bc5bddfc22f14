// SharedBalancerElement: what the adaptive balancers (AdaptiveBalancer, PolicyBalancer) have in
// common. Every replica (one per worker) of one element shares one SharedBalancer<Controller>
// (runtime/balancing/shared_balancer.hh); per batch, a replica draws the device decision with
// the shared probability, stamps the shared device batch size, counts the batch (and with
// count_bytes its bytes) in its own slot and, every 8 batches, lets the clock close a window; when
// the shared balancer samples latency (enable_latency), it also stamps one packet in so many
// batches for it, at the interval the shared balancer gives. Worker 0's replica writes the TRACE
// file at the end (Derived::kTraceHeader, Derived::trace_row), and a write failure is reported as
// output lost.
#pragma once

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/element.hh"
#include "core/output_loss.hh"
#include "core/shared_storage.hh"
#include "elements/balance/batch_draw.hh"
#include "runtime/balancing/shared_balancer.hh"
#include "runtime/latency.hh"

namespace fulcrum {

template <class Derived, class Controller>
class SharedBalancerElement : public ElementBase<Derived> {
 public:
  using Shared = SharedBalancer<Controller>;
  using TracePoint = typename Shared::TracePoint;

  void process_batch(PacketBatch& batch) override {
    const bool offload = draw_below(state_, shared_->threshold());
    const int32_t device = shared_->device();
    batch.anno().device = offload ? (device < 0 ? device_ : device) : kRunOnCpu;
    batch.anno().aggregate = static_cast<uint16_t>(shared_->aggregate());
    ++(offload ? offloaded_ : kept_);
    uint64_t bytes = 0;
    if (count_bytes_) batch.for_each([&](uint32_t, const Packet* p) { bytes += length(p); });
    shared_->count(slot_, batch.live(), bytes, batch.count() >= full_batch_);
    if (sample_every_ != 0) sample_latency(batch);
    if ((++batches_ & kClockEvery) == 0) {
      shared_->tick(now_ns());
      if (sample_every_ != 0) sample_every_ = shared_->sample_every();
    }
  }

  void finish() override {
    if (!writes_trace_) return;
    const std::vector<TracePoint> trace = shared_->trace();
    std::FILE* f = std::fopen(trace_file_.c_str(), "w");
    bool ok = f != nullptr && std::fprintf(f, "%s\n", Derived::kTraceHeader) > 0;
    for (size_t i = 0; ok && i < trace.size(); ++i) ok = Derived::trace_row(f, trace[i]) > 0;
    const int err = errno;
    if (f != nullptr && std::fclose(f) != 0) ok = false;
    if (!ok)
      trace_loss_ = OutputLoss{"balancer trace " + trace_file_, "windows", trace.size() + 1,
                               std::strerror(err != 0 ? err : errno)};
  }

  void output_losses(std::vector<OutputLoss>& out) const override {
    if (trace_loss_) out.push_back(*trace_loss_);
  }

 protected:
  // The replica's share of the balancer, built by `make` the first time (key: this element).
  Status attach(const InitContext& ctx, const std::string& kind,
                const std::function<Result<std::shared_ptr<Shared>>()>& make) {
    Result<std::shared_ptr<const Shared>> shared =
        shared_or_own<Shared>(ctx.shared, kind + ":" + this->name(), make);
    if (!shared) return make_error(shared.error());
    shared_ = shared.value();
    slot_ = shared_->attach();
    if (shared_->samples_latency()) sample_every_ = shared_->sample_every();
    full_batch_ = ctx.batch;
    writes_trace_ = !trace_file_.empty() && ctx.worker == 0;
    if (!trace_file_.empty()) shared_->enable_trace();
    // Each worker draws its own sequence.
    state_ += static_cast<uint64_t>(ctx.worker) * 0x9E3779B97F4A7C15ull;
    if (state_ == 0) state_ = 1;
    return {};
  }

  // The batch counts (this replica's), then f(controller, last window, windows) under the shared
  // lock: the controller's figures, the same for every replica (Counter::shared).
  template <class F>
  void counters_with(std::vector<Counter>& out, F&& f) const {
    out.push_back({"offloaded", offloaded_});
    out.push_back({"kept", kept_});
    const size_t first_shared = out.size();
    if (shared_) shared_->inspect(f);
    for (size_t i = first_shared; i < out.size(); ++i) out[i].shared = true;
  }

  void set_seed(uint32_t seed) { state_ = seed == 0 ? 1 : seed; }
  // Sum the packets' lengths into the shared windows (BalanceWindow::frame_bytes): one load per
  // packet, so only for a controller that reads it.
  void count_bytes(bool on) { count_bytes_ = on; }

  int32_t device_ = 0;  // where a choice without a device (-1) offloads to: the DEVICE argument
  std::string trace_file_;

 private:
  static constexpr uint64_t kClockEvery = 7;  // read the clock every 8 batches
  static uint64_t now_ns() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
  }

  // The worker's sampled latencies since the last batch go to the shared balancer; every
  // sample_every_-th batch (the shared balancer's interval, read with the clock), its first
  // packet is stamped with the batch's RX time (runtime/latency.hh, LatencyTap). Off a worker
  // (tests) there is no tap: nothing happens.
  void sample_latency(PacketBatch& batch) {
    LatencyTap* tap = t_latency_tap;
    if (tap == nullptr) return;
    tap->wanted = true;
    for (uint32_t i = 0; i < tap->count; ++i) shared_->record_latency(slot_, tap->samples[i]);
    tap->count = 0;
    if (++unsampled_ < sample_every_ || batch.count() == 0 || batch.excluded(0) ||
        batch.anno().rx_tsc == 0)
      return;
    unsampled_ = 0;
    set_timestamp_ns(batch.at(0), static_cast<uint64_t>(static_cast<double>(batch.anno().rx_tsc) *
                                                        tap->ns_per_tsc));
  }

  uint64_t state_ = 1;
  uint32_t sample_every_ = 0;
  uint32_t unsampled_ = 0;
  bool count_bytes_ = false;
  std::shared_ptr<const Shared> shared_;
  uint32_t slot_ = 0;
  uint32_t full_batch_ = kDefaultBatch;
  bool writes_trace_ = false;  // worker 0's replica writes it
  std::optional<OutputLoss> trace_loss_;
  uint64_t batches_ = 0;
  uint64_t offloaded_ = 0;
  uint64_t kept_ = 0;
};

}  // namespace fulcrum
