// Fuzz target: the `fulcrum run --port SPEC` parsers (src/io/port.cc, src/io/gen_port.cc).
//
// `fulcrum run`'s own option loop (src/cli/run_command.cc, cmd_run) cannot be called without
// loading the pipeline file named on the command line and starting DPDK, so this target covers
// what the command hands each --port value to: eal_device_for (generator, capture replay, PCI
// address or DPDK virtual device), the generator's parse_gen_spec and the replay's
// parse_replay_spec (its capture is not read: the fuzzer must not open arbitrary files). A
// generator spec that parses is opened (GenPort::open) and a burst received from it and sent back,
// when its route file is one of the repository's demo tables (any other path is not read: the
// fuzzer must not open arbitrary files) and it asks for at most kMaxOpenedFlows flows (each open
// builds every flow's template).
//
// Input: one --port value. Checked: the built-in ports (gen:, replay:) and only they need no DPDK
// device; a parsed replay config names a file; a parsed generator config is within the documented
// ranges; received frames have the configured size; every mbuf taken from the pool comes back.
#include <rte_mbuf.h>

#include <cstdint>
#include <string>

#include "fuzz_support.hh"
#include "io/gen_port.hh"
#include "io/port.hh"
#include "io/replay_port.hh"

namespace {

using namespace fulcrum;

constexpr uint32_t kMaxOpenedFlows = 1 << 12;
constexpr uint16_t kBurst = 32;
constexpr uint32_t kMinFrame = 60, kMaxFrame = 1514;

bool demo_table(const std::string& path) {
  const std::string root = fuzz::source_dir();
  return path == "configs/routes-demo.txt" || path == "configs/routes6-demo.txt" ||
         path == root + "/configs/routes-demo.txt" || path == root + "/configs/routes6-demo.txt";
}

void open_and_receive(const std::string& spec, const GenConfig& c) {
  PortConfig pc;
  Result<std::unique_ptr<Port>> port = open_port(spec, pc);
  if (!port.ok()) return;
  Packet* pkts[kBurst];
  const uint16_t n = port.value()->rx_burst(0, pkts, kBurst);
  FUZZ_CHECK(n <= kBurst, "rx_burst returned " + std::to_string(n));
  for (uint16_t i = 0; i < n; ++i)
    FUZZ_CHECK(rte_pktmbuf_pkt_len(pkts[i]) == c.size,
               spec + ": frame of " + std::to_string(rte_pktmbuf_pkt_len(pkts[i])) + " bytes");
  const uint16_t sent = port.value()->tx_burst(0, pkts, n);
  FUZZ_CHECK(sent == n, spec + ": the generator refused frames sent to it");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::init_dpdk();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string spec(fuzz::as_text(data, size));
  const EalDevice d = eal_device_for(spec);
  FUZZ_CHECK(!(d.is_pci && d.is_vdev), "both PCI and vdev: " + spec);
  const bool gen = spec.rfind("gen:", 0) == 0 || spec == "gen";
  const bool replay = spec.rfind("replay:", 0) == 0 || spec == "replay";
  FUZZ_CHECK((gen || replay) == (!d.is_pci && !d.is_vdev), "built-in port misclassified: " + spec);
  if (replay) {
    Result<ReplayConfig> rc = parse_replay_spec(spec);
    FUZZ_CHECK(!rc.ok() || !rc.value().file.empty(), "a replay without a file parsed: " + spec);
    return 0;
  }
  if (!gen) return 0;
  Result<GenConfig> r = parse_gen_spec(spec);
  if (!r.ok()) return 0;
  const GenConfig& c = r.value();
  FUZZ_CHECK(c.size >= kMinFrame && c.size <= kMaxFrame, "size " + std::to_string(c.size));
  FUZZ_CHECK(c.flows > 0, "flows 0");
  FUZZ_CHECK(c.rate >= 0 && c.zipf > 0, "rate/zipf out of range: " + spec);
  FUZZ_CHECK(c.dst != GenConfig::Dst::kRoutes || !c.routes.empty(), "dst=routes without routes");
  if ((c.routes.empty() || demo_table(c.routes)) && c.flows <= kMaxOpenedFlows)
    open_and_receive(spec, c);
  return 0;
}
