#include "offload_testing.hh"

#include <gtest/gtest.h>
#include <rte_cycles.h>

#include <algorithm>

#include "core/config/ast.hh"
#include "core/graph.hh"
#include "core/registry.hh"
#include "core/shared_storage.hh"
#include "offload/discovery.hh"
#include "offload/emu/emu_spec.hh"
#include "offload/service.hh"
#include "testing.hh"

namespace fulcrum::testing {
namespace {

class Sink final : public PacketSink {
 public:
  void transmit(PacketBatch& batch) override {
    batch.for_each([&](uint32_t, Packet* p) {
      sent.push_back({in_port(p), out_port(p)});
      frames.push_back(packet_bytes(p));
      user01.push_back({anno(p).user[0], anno(p).user[1]});
      rte_pktmbuf_free(p);
    });
    batch.set_count(0);
  }
  std::vector<Sent> sent;
  std::vector<std::vector<uint8_t>> frames;
  std::vector<std::array<uint64_t, 2>> user01;
};

uint64_t now_ns() {
  return static_cast<uint64_t>(static_cast<double>(rte_rdtsc()) * 1e9 /
                               static_cast<double>(rte_get_tsc_hz()));
}

}  // namespace

PipelineOutcome run_pipeline(const std::string& text,
                             const std::vector<std::vector<uint8_t>>& frames, int ports,
                             const std::string& counted, uint32_t burst) {
  SharedStorage shared;
  Sink sink;
  Result<PipelineConfig> cfg = parse_pipeline(text, "test.click", [](std::string_view n) {
    return Registry::instance().find(n) != nullptr;
  });
  EXPECT_TRUE(cfg.ok()) << cfg.error();
  PipelineOutcome r;
  if (!cfg.ok()) return r;
  InitContext ctx;
  ctx.ports = ports;
  ctx.shared = &shared;
  ctx.sink = &sink;
  ctx.pool = test_pool();
  auto p = Pipeline::build(cfg.value(), ctx, BranchMode::kReuse);
  EXPECT_TRUE(p.ok()) << p.error();
  if (!p.ok()) return r;
  Pipeline& pipe = *p.value();
  PacketBatch b;
  for (size_t first = 0; first < frames.size(); first += burst) {
    b.clear();
    for (size_t i = first; i < std::min(frames.size(), first + burst); ++i)
      b.push(make_packet(frames[i], static_cast<uint16_t>(i)));
    pipe.inject(b);
    pipe.poll_deferred(now_ns());
  }
  while (pipe.held() > 0) pipe.poll_deferred(now_ns());
  r.sent = sink.sent;
  r.frames = sink.frames;
  r.user01 = sink.user01;
  r.dropped = pipe.dropped();
  for (const Node& n : pipe.nodes()) {
    if (n.element->name() != counted) continue;
    std::vector<Counter> cs;
    n.element->counters(cs);
    for (const Counter& c : cs) r.counters[c.name] = c.value;
  }
  auto svc = offload::OffloadService::get(&shared);
  if (svc.ok() && svc.value()->devices() > 0) r.device_up = svc.value()->device(0).is_up();
  return r;
}

bool have_offload_device() {
  static const bool found = !offload::discover_devices().empty();
  return found;
}

bool backend_built(bool cuda) {
  return offload::backend_compiled(cuda ? offload::Backend::kCuda : offload::Backend::kOpenCL);
}

ScopedEmulatedDevice::ScopedEmulatedDevice() {
  offload::set_emulated_devices({offload::EmuSpec{}});
}

ScopedEmulatedDevice::~ScopedEmulatedDevice() {
  offload::set_emulated_devices({});
}

bool ScopedEmulatedDevice::found() const {
  offload::DiscoverOptions only;
  only.only = offload::Backend::kEmu;
  return offload::discover_devices(only).size() == 1;
}

bool backend_has_device(bool cuda) {
  offload::DiscoverOptions only;
  only.only = cuda ? offload::Backend::kCuda : offload::Backend::kOpenCL;
  return !offload::discover_devices(only).empty();
}

std::shared_ptr<offload::Device> first_device(offload::Backend backend) {
  offload::DiscoverOptions only;
  only.only = backend;
  auto all = offload::discover_devices(only);
  if (all.empty()) return nullptr;
  return std::shared_ptr<offload::Device>(std::move(all.front()));
}

}  // namespace fulcrum::testing
