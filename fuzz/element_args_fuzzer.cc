// Fuzz target: element argument parsing (src/core/args.*) through every registered element
// class's configure(), and initialize() for the classes that open no file and no device.
//
// Input: the first byte picks the class (index into the registry, modulo its size); the rest is
// the argument list, one argument a line ("OFFSET 12", "routes.txt", ...), as the configuration
// parser would hand it over after splitting on top-level commas.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/args.hh"
#include "core/registry.hh"
#include "core/shared_storage.hh"
#include "fuzz_support.hh"

namespace {

using namespace fulcrum;

// Classes whose initialize() reads a table file named by an argument (or creates an alert log),
// and the offload elements, which start the offload devices: configured only.
constexpr std::string_view kConfigureOnly[] = {"IPLookup", "IP6Lookup",         "NDNLookup",
                                               "IDSMatch", "IPsecESPEncap",     "IPsecESPDecap",
                                               "IPsecAES", "IPsecAuthHMACSHA1", "IPsecPolicy"};
constexpr std::string_view kOffloadSuffix = "Offload";
constexpr int kPorts = 4;

bool initialize_allowed(std::string_view cls) {
  if (cls.ends_with(kOffloadSuffix)) return false;
  for (std::string_view c : kConfigureOnly)
    if (c == cls) return false;
  return true;
}

class NullSink final : public PacketSink {
 public:
  void transmit(PacketBatch& batch) override {
    batch.for_each([](uint32_t, Packet* p) { rte_pktmbuf_free(p); });
    batch.set_count(0);
  }
};

std::vector<const ElementClassInfo*>& classes() {
  static std::vector<const ElementClassInfo*> all = [] {
    std::vector<const ElementClassInfo*> v;
    for (const auto& [name, info] : Registry::instance().all()) v.push_back(&info);
    return v;
  }();
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::packet_pool();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const ElementClassInfo& info = *classes()[data[0] % classes().size()];
  const std::string_view cls = info.traits->class_name;
  std::vector<std::string> raw = fuzz::split(fuzz::as_text(data + 1, size - 1), '\n');
  std::unique_ptr<Element> e = info.create();
  e->set_name("fuzzed");
  Args args(raw, SourceLoc{"fuzz.click", 1, 1}, "fuzzed", cls);
  Status s = e->configure(args);
  if (!s.ok()) {
    FUZZ_CHECK(s.error().find("fuzz.click:1:1") != std::string::npos,
               "error without the element's location: " + s.error());
    return 0;
  }
  FUZZ_CHECK(e->noutputs() >= 0 && e->noutputs() <= kMaxOutputs,
             std::string(cls) + ": output count " + std::to_string(e->noutputs()));
  if (!initialize_allowed(cls)) return 0;
  for (int p = 0; p < e->noutputs(); ++p) e->set_output_connected(p);
  SharedStorage shared;
  NullSink sink;
  InitContext ctx;
  ctx.ports = kPorts;
  ctx.shared = &shared;
  ctx.sink = &sink;
  ctx.pool = fuzz::packet_pool();
  (void)e->initialize(ctx);
  return 0;
}
