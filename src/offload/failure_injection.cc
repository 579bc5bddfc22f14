#include "offload/failure_injection.hh"

#include <atomic>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

namespace fulcrum::offload {
namespace {

// The state shared by a failing device and its queues: launches so far and the limit.
struct FailState {
  uint64_t limit = 0;
  std::atomic<uint64_t> launches{0};
  std::atomic<bool> tripped{false};

  Status check() const {
    if (tripped.load(std::memory_order_acquire))
      return make_error("device failed (injected by " + std::string(kFailAfterEnv) + ")");
    return {};
  }
};

class FailingQueue final : public Queue {
 public:
  FailingQueue(std::unique_ptr<Queue> inner, std::shared_ptr<FailState> state)
      : inner_(std::move(inner)), state_(std::move(state)) {}

  Status copy_to_device(DeviceBuffer& dst, size_t dst_offset, const HostBuffer& src,
                        size_t src_offset, size_t bytes) override {
    if (Status s = state_->check(); !s) return s;
    return inner_->copy_to_device(dst, dst_offset, src, src_offset, bytes);
  }
  Status copy_to_host(HostBuffer& dst, size_t dst_offset, const DeviceBuffer& src,
                      size_t src_offset, size_t bytes) override {
    if (Status s = state_->check(); !s) return s;
    return inner_->copy_to_host(dst, dst_offset, src, src_offset, bytes);
  }
  Status launch(const Kernel& kernel, LaunchDims dims, std::span<const KernelArg> args) override {
    if (state_->launches.fetch_add(1, std::memory_order_acq_rel) >= state_->limit)
      state_->tripped.store(true, std::memory_order_release);
    if (Status s = state_->check(); !s) return s;
    return inner_->launch(kernel, dims, args);
  }
  Status record() override {
    if (Status s = state_->check(); !s) return s;
    return inner_->record();
  }
  Result<bool> query() override {
    Result<bool> r = inner_->query();
    if (Status s = state_->check(); !s) return make_error(s.error());
    return r;
  }
  Status wait() override {
    Status w = inner_->wait();
    if (Status s = state_->check(); !s) return s;
    return w;
  }

 private:
  std::unique_ptr<Queue> inner_;
  std::shared_ptr<FailState> state_;
};

class FailingDevice final : public Device {
 public:
  FailingDevice(std::unique_ptr<Device> inner, uint64_t fail_after)
      : inner_(std::move(inner)), state_(std::make_shared<FailState>()) {
    state_->limit = fail_after;
    set_index(inner_->index());
  }

  const DeviceInfo& info() const override { return inner_->info(); }
  Result<std::unique_ptr<DeviceBuffer>> alloc(size_t bytes) override {
    if (Status s = state_->check(); !s) return make_error(s.error());
    return inner_->alloc(bytes);
  }
  Result<std::unique_ptr<HostBuffer>> alloc_host(size_t bytes) override {
    if (Status s = state_->check(); !s) return make_error(s.error());
    return inner_->alloc_host(bytes);
  }
  Result<std::unique_ptr<Queue>> create_queue() override {
    if (Status s = state_->check(); !s) return make_error(s.error());
    Result<std::unique_ptr<Queue>> q = inner_->create_queue();
    if (!q) return q;
    return std::unique_ptr<Queue>(std::make_unique<FailingQueue>(std::move(q.value()), state_));
  }
  Result<const Kernel*> kernel(std::string_view name) override { return inner_->kernel(name); }
  Status upload(DeviceBuffer& dst, const void* src, size_t bytes) override {
    if (Status s = state_->check(); !s) return s;
    return inner_->upload(dst, src, bytes);
  }
  bool releasable() const override { return inner_->releasable(); }
  bool released() const override { return inner_->released(); }
  Status release() override { return inner_->release(); }
  Status reacquire() override {
    if (Status s = state_->check(); !s) return s;
    return inner_->reacquire();
  }

 private:
  std::unique_ptr<Device> inner_;
  std::shared_ptr<FailState> state_;
};

}  // namespace

std::optional<uint64_t> fail_after_from_env() {
  const char* v = std::getenv(kFailAfterEnv);
  if (v == nullptr) return std::nullopt;
  uint64_t n = 0;
  const char* end = v + std::strlen(v);
  auto [ptr, ec] = std::from_chars(v, end, n);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return n;
}

std::unique_ptr<Device> make_failing_device(std::unique_ptr<Device> inner, uint64_t fail_after) {
  return std::make_unique<FailingDevice>(std::move(inner), fail_after);
}

}  // namespace fulcrum::offload
