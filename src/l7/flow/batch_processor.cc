#include "l7/flow/batch_processor.hh"

#include <algorithm>
#include <charconv>
#include <chrono>

#include "l7/flow/device_tables.hh"
#include "offload/discovery.hh"
#include "offload/emu/emu_device.hh"

namespace fulcrum::l7 {
namespace {

// While the device part runs, poll() asks to be called again this soon.
constexpr uint64_t kDevicePollNs = 20000;

}  // namespace

uint64_t l7_clock_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count() -
                               offload::emu_hidden_host_ns());
}

namespace {

uint64_t clock_ns() {
  return l7_clock_ns();
}

}  // namespace

// The round whose device part is in flight, and what the cost model learns from it.
struct BatchProcessor::Round {
  std::vector<FlowId> flows;
  std::vector<std::vector<Message>> messages;  // per device flow, in order
  uint64_t submitted_ns = 0;
  double gpu_ns = -1;  // measured device time (submit to completion), once seen
  double cpu_ns = -1;
  size_t n_gpu = 0, m = 0;
  uint64_t largest = 0, s_g = 0, s_c = 0;
  uint64_t count = 0;  // device messages
  // Bodies as they were before FlowNf::prepare_device changed them (by the round's message
  // index), so a fall-back round runs the CPU chain on what arrived.
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> unprepared;
};

Status BatchOptions::set_threshold(std::string_view text) {
  if (text == "auto") {
    dynamic_threshold = true;
    return {};
  }
  uint32_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v == 0)
    return make_error("threshold '" + std::string(text) + "': expected auto or a count >= 1");
  dynamic_threshold = false;
  threshold = v;
  return {};
}

Status BatchOptions::set_timeout(std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  const std::string_view unit(end, text.data() + text.size() - end);
  double scale = 0;
  if (unit == "s") scale = 1e9;
  if (unit == "ms") scale = 1e6;
  if (unit == "us") scale = 1e3;
  if (ec != std::errc() || scale == 0 || v < 0)
    return make_error("timeout '" + std::string(text) +
                      "': expected a duration (100ms, 250us, 1s)");
  timeout_ns = static_cast<uint64_t>(v * scale);
  return {};
}

Status BatchOptions::set_policy(std::string_view text) {
  Result<Policy> p = Policy::parse(text);
  if (!p) return make_error(p.error());
  policy = p.value();
  return {};
}

BatchProcessor::BatchProcessor(std::shared_ptr<Chain> chain,
                               std::shared_ptr<offload::Device> device, BatchOptions options)
    : chain_(std::move(chain)),
      device_(std::move(device)),
      opt_(options),
      flows_(*chain_),
      dynamic_(options.dynamic),
      meter_(options.period_ns),
      fit_(options.refit_rounds) {
  rule_.threshold = opt_.dynamic_threshold ? dynamic_.value() : opt_.threshold;
  rule_.timeout_ns = opt_.timeout_ns;
  model_.c = opt_.initial;
  model_.n_block = kL7GroupSize;
  if (opt_.policy.kind == PolicyKind::kCpu) {
    cpu_only_reason_ = "policy cpu";
  } else if (!device_) {
    cpu_only_reason_ = "no device";
  } else if (!chain_->offloadable()) {
    cpu_only_reason_ = "an NF of the chain has no device form";
  } else {
    model_.n_sm = std::max<uint32_t>(device_->info().compute_units, 1);
    Result<std::unique_ptr<DeviceChain>> dc = DeviceChain::create(*device_, *chain_);
    if (!dc) {
      cpu_only_reason_ = dc.error();
      return;
    }
    Result<std::unique_ptr<offload::Queue>> q = device_->create_queue();
    if (!q) {
      cpu_only_reason_ = "l7: " + q.error();
      return;
    }
    dchain_ = std::move(dc.value());
    queue_ = std::move(q.value());
    batch_ = std::make_unique<DeviceBatch>(*dchain_);
  }
}

BatchProcessor::~BatchProcessor() {
  if (round_ && queue_) (void)queue_->wait();  // the device may still write our buffers
}

void BatchProcessor::open_flow(FlowId id) {
  flows_.open(id);
}

void BatchProcessor::close_flow(FlowId id) {
  flows_.close(id);
}

void BatchProcessor::enter(uint64_t now) {
  if (last_exit_ns_ != 0 && now > last_exit_ns_) receive_ns_ += now - last_exit_ns_;
}

void BatchProcessor::submit(Message&& m) {
  const uint64_t t0 = clock_ns();
  enter(t0);
  if (m.arrival_ns == 0) m.arrival_ns = t0;
  if (flows_.unprocessed() == 0 || m.arrival_ns < oldest_ns_) oldest_ns_ = m.arrival_ns;
  flows_.enqueue(std::move(m));
  last_exit_ns_ = clock_ns();
  receive_ns_ += last_exit_ns_ - t0;
}

const std::vector<uint8_t>* BatchProcessor::state(FlowId id) {
  FlowOperator* f = flows_.find(id);
  return f ? &f->state : nullptr;
}

bool BatchProcessor::device_usable() const {
  return queue_ != nullptr && device_->is_up();
}

uint64_t BatchProcessor::poll(uint64_t now_ns, std::vector<Message>& out) {
  enter(clock_ns());
  if (round_) check_device(out);
  if (!round_ && rule_.due(flows_.unprocessed(), oldest_ns_, now_ns)) {
    if (flows_.unprocessed() < rule_.threshold) ++stats_.rounds_on_timeout;
    run_round();
    if (round_) check_device(out);
  }
  for (Message& m : done_) out.push_back(std::move(m));
  done_.clear();
  last_exit_ns_ = clock_ns();
  if (round_) return now_ns + kDevicePollNs;
  if (flows_.unprocessed() >= rule_.threshold) return now_ns;
  if (flows_.unprocessed() > 0) return rule_.deadline(oldest_ns_);
  return kNoDeadline;
}

void BatchProcessor::flush(std::vector<Message>& out) {
  while (round_ || flows_.unprocessed() > 0) {
    if (round_) {
      if (Status s = queue_->wait(); !s)
        round_done(fall_back(out));
      else
        finish_device(out);
      continue;
    }
    run_round();
  }
  for (Message& m : done_) out.push_back(std::move(m));
  done_.clear();
}

void BatchProcessor::run_round() {
  const uint64_t t0 = clock_ns();
  ++stats_.rounds;
  std::vector<FlowOperator*> pending;
  flows_.for_each([&](FlowOperator& f) {
    if (!f.queue.empty()) pending.push_back(&f);
  });
  std::sort(pending.begin(), pending.end(),
            [](const FlowOperator* a, const FlowOperator* b) { return a->id < b->id; });
  const size_t m = flows_.unprocessed();
  std::vector<uint64_t> sizes(pending.size());
  for (size_t i = 0; i < pending.size(); ++i) sizes[i] = pending[i]->queued_bytes;
  const std::vector<bool> on_device = device_usable() ? partition(opt_.policy, sizes, m, model_)
                                                      : std::vector<bool>(pending.size(), false);

  // The device part: packed and submitted first, so the device runs while the CPU works.
  auto round = std::make_unique<Round>();
  round->m = m;
  if (batch_) batch_->clear();
  for (size_t i = 0; i < pending.size(); ++i) {
    if (!on_device[i]) continue;
    FlowOperator& f = *pending[i];
    round->s_g += sizes[i];
    round->largest = std::max(round->largest, sizes[i]);
    round->flows.push_back(f.id);
    round->messages.push_back(flows_.take(f));
    f.in_flight = true;
    std::vector<const Message*> ptrs;
    for (Message& msg : round->messages.back()) {
      prepare(msg, *round, round->count + ptrs.size());
      ptrs.push_back(&msg);
    }
    round->count += ptrs.size();
    batch_->add_flow(f.state, ptrs);
  }
  round->n_gpu = round->flows.size();
  if (round->n_gpu > 0 && round->s_g > 0)
    stats_.device_unevenness_sum += static_cast<double>(round->largest) *
                                    static_cast<double>(round->n_gpu) /
                                    static_cast<double>(round->s_g);
  const uint64_t t_submit = clock_ns();
  if (round->n_gpu > 0) {
    round->submitted_ns = t_submit;
    round_ = std::move(round);
    ++stats_.device_rounds;
    if (Status s = batch_->submit(*queue_); !s) fall_back(done_);
  }
  const uint64_t t_batch = clock_ns() - t0;

  // The CPU part, checking between messages whether the device has finished (the device
  // time is then measured to within one message).
  uint64_t s_c = 0, cpu_messages = 0;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (on_device[i]) continue;
    FlowOperator& f = *pending[i];
    s_c += sizes[i];
    ++stats_.flows_cpu;
    for (Message& msg : flows_.take(f)) {
      chain_->process(msg, f.state);
      stats_.bytes_cpu += msg.body.size();
      done_.push_back(std::move(msg));
      ++cpu_messages;
      if (round_ && round_->gpu_ns < 0) {
        Result<bool> q = queue_->query();
        if (q && q.value()) round_->gpu_ns = static_cast<double>(clock_ns() - round_->submitted_ns);
      }
    }
    flows_.expire_if_done(f);
  }
  stats_.messages_cpu += cpu_messages;
  const double cpu_ns = static_cast<double>(receive_ns_ + t_batch + (clock_ns() - t0 - t_batch));
  receive_ns_ = 0;
  if (round_) {
    round_->cpu_ns = cpu_ns;
    round_->s_c = s_c;
  } else {
    fit_.add_round(model_, 0, 0, 0, m, s_c, -1, cpu_ns);
    round_done(m);
  }
}

void BatchProcessor::prepare(Message& msg, Round& round, uint64_t k) {
  std::vector<uint8_t> before = msg.body;
  for (uint32_t op = 0; op < chain_->size(); ++op) chain_->nf(op).prepare_device(msg);
  if (msg.body != before) round.unprepared.emplace_back(k, std::move(before));
}

void BatchProcessor::take_device_state(std::span<const uint8_t> device, std::span<uint8_t> host) {
  for (uint32_t op = 0; op < dchain_->ops(); ++op) {
    const size_t at = chain_->state_offset(op);
    const size_t n = op_state_bytes(dchain_->code(op));
    std::copy(device.begin() + static_cast<long>(at), device.begin() + static_cast<long>(at + n),
              host.begin() + static_cast<long>(at));
  }
}

void BatchProcessor::check_device(std::vector<Message>& out) {
  Result<bool> q = queue_->query();
  if (!q) {
    round_done(fall_back(out));
    return;
  }
  if (!q.value()) return;
  if (round_->gpu_ns < 0) round_->gpu_ns = static_cast<double>(clock_ns() - round_->submitted_ns);
  finish_device(out);
}

void BatchProcessor::finish_device(std::vector<Message>& out) {
  std::unique_ptr<Round> r = std::move(round_);
  uint32_t k = 0;
  for (size_t i = 0; i < r->flows.size(); ++i) {
    FlowOperator* f = flows_.find(r->flows[i]);
    for (Message& msg : r->messages[i]) {
      if (dchain_->transforms()) {
        const std::span<const uint8_t> b = batch_->message_bytes(k);
        std::copy(b.begin(), b.end(), msg.body.begin());
      }
      take_device_state(batch_->state_after(k), f->state);
      for (uint32_t op = 0; op < chain_->size(); ++op) {
        chain_->nf(op).finish_device(msg, chain_->part(f->state, op), batch_->output(k, op));
        if (msg.verdict.action != Action::kForward) break;
      }
      stats_.bytes_device += msg.body.size();
      out.push_back(std::move(msg));
      ++k;
    }
    take_device_state(batch_->final_state(static_cast<uint32_t>(i)), f->state);
    f->in_flight = false;
    flows_.expire_if_done(*f);
  }
  stats_.flows_device += r->flows.size();
  stats_.messages_device += r->count;
  fit_.add_round(model_, r->n_gpu, r->largest, r->s_g, r->m, r->s_c, r->gpu_ns, r->cpu_ns);
  round_done(r->m);
}

uint64_t BatchProcessor::fall_back(std::vector<Message>& out) {
  std::unique_ptr<Round> r = std::move(round_);
  device_->mark_down();
  cpu_only_reason_ = "the device failed";
  ++stats_.fallback_rounds;
  uint64_t k = 0;
  size_t next = 0;
  for (size_t i = 0; i < r->flows.size(); ++i) {
    FlowOperator* f = flows_.find(r->flows[i]);
    for (Message& msg : r->messages[i]) {
      if (next < r->unprepared.size() && r->unprepared[next].first == k) {
        msg.body = std::move(r->unprepared[next++].second);
        msg.verdict = Verdict{};
      }
      ++k;
      chain_->process(msg, f->state);
      stats_.bytes_cpu += msg.body.size();
      out.push_back(std::move(msg));
      ++stats_.fallback_messages;
      ++stats_.messages_cpu;
    }
    f->in_flight = false;
    flows_.expire_if_done(*f);
  }
  return r->m;
}

void BatchProcessor::round_done(uint64_t messages) {
  stats_.fits = fit_.fits();
  if (opt_.refit) fit_.maybe_refit(model_);
  if (!opt_.dynamic_threshold) return;
  const double rate = meter_.add(clock_ns(), messages);
  if (rate >= 0) {
    dynamic_.update(rate);
    rule_.threshold = dynamic_.value();
  }
}

Result<std::shared_ptr<offload::Device>> select_l7_device(std::string_view spec) {
  if (spec == "none") return std::shared_ptr<offload::Device>();
  std::vector<std::unique_ptr<offload::Device>> all = offload::discover_devices();
  if (spec == "auto" || spec.empty()) {
    if (all.empty()) return std::shared_ptr<offload::Device>();
    return std::shared_ptr<offload::Device>(std::move(all.front()));
  }
  const size_t colon = spec.find(':');
  const std::string_view backend = spec.substr(0, colon);
  int index = -1;
  if (colon != std::string_view::npos) {
    const std::string_view n = spec.substr(colon + 1);
    const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), index);
    if (ec != std::errc() || end != n.data() + n.size()) index = -1;
  }
  for (auto& d : all)
    if (offload::backend_name(d->info().backend) == backend && d->index() == index)
      return std::shared_ptr<offload::Device>(std::move(d));
  return make_error("device '" + std::string(spec) +
                    "': not found (expected none, auto or BACKEND:N as `fulcrum devices` lists)");
}

}  // namespace fulcrum::l7
