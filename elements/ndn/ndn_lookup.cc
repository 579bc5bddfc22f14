#include "elements/ndn/ndn_lookup.hh"

#include <algorithm>
#include <sstream>
#include <vector>

#include "lib/table_file.hh"

namespace fulcrum {
namespace {

// A name routed to a port above max_port (the run's last port) is an error.
Result<std::shared_ptr<NameTable>> load_names(const std::string& file, uint32_t max_port) {
  Result<std::string> text = read_table_file(file, "name file");
  if (!text) return make_error(text.error());
  auto table = std::make_shared<NameTable>();
  std::istringstream in(text.value());
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    const std::string where = file + ":" + std::to_string(lineno) + ": ";
    line = line.substr(0, line.find('#'));
    std::istringstream fields(line);
    std::string uri, port_text, extra;
    if (!(fields >> uri)) continue;
    uint16_t port = 0;
    if (!(fields >> port_text) || !parse_value(port_text, port) || (fields >> extra))
      return make_error(where + "expected \"/name PORT\"");
    if (port > max_port)
      return make_error(where + "port " + port_text + " out of range 0.." +
                        std::to_string(max_port));
    if (Status s = table->add(uri, port); !s) return make_error(where + s.error());
  }
  if (Status s = table->build(); !s) return make_error(file + ": " + s.error());
  return table;
}

}  // namespace

Status NDNLookup::configure(Args& args) {
  loc_ = args.loc();
  args.positional_file("FILE", file_,
                       "name file, lines \"/a/b/c PORT\" (NDN URIs, %XX escapes, at most 16 "
                       "components; \"/\" is the default route) with # comments; loaded once "
                       "per process and shared by every worker");
  prefetch_.read(args);
  if (Status s = prefetch_.check(args); !s) return s;
  return args.finish();
}

MemoryProfile NDNLookup::memory_profile() const {
  if (!slot_) return {};
  const NameTable& t = table();
  if (!probed_) {
    // The table's own names (plan::ProbeDraws: 2048 draws of 256), as the batch sweep of
    // `fulcrum bench --only placement` probes; one name of one component without names.
    std::vector<ParsedName> names = t.sample_names(plan::ProbeDraws<ParsedName>::kDistinct);
    if (names.empty()) {
      static constexpr uint8_t kWire[] = {0x08, 0x01, 'a'};
      names.resize(1);
      NameTable::parse_name(kWire, sizeof kWire, names[0]);
    }
    plan::ProbeDraws<ParsedName> draws(names);
    alignas(64) uint16_t ports[kMaxBatch];
    plan::probe_lookup(
        [&](size_t n, unsigned g) {
          t.lookup_bulk(draws.next(n), ports, n, g);
          asm volatile("" : : "r"(ports) : "memory");
        },
        probe_);
    probed_ = true;
  }
  MemoryProfile m = probe_;
  m.working_set_bytes = t.memory_bytes();
  m.accesses_per_packet = NameTable::kPrefetchDepths;
  m.levels = 1;
  m.lines_per_level = NameTable::kPrefetchDepths;
  m.state_bytes_per_packet = sizeof(ParsedName) + sizeof(uint16_t) + kPacketStateBytes;
  m.prefetch_group = prefetch_.group;
  return m;
}

Status NDNLookup::initialize(const InitContext& ctx) {
  ports_ = static_cast<uint16_t>(std::clamp(ctx.ports, 0, int{NameTable::kMaxPort} + 1));
  const uint32_t max_port = ports_ == 0 ? NameTable::kMaxPort : ports_ - 1u;
  Result<std::shared_ptr<TableSlot<NameTable>>> slot = shared_table_slot<NameTable>(
      ctx.shared, "ndn-names:" + std::to_string(max_port) + ":" + file_, "NDN names", file_,
      [max_port](const std::string& file) { return load_names(file, max_port); });
  if (!slot) {
    const Args args({}, loc_, name(), kTraits.class_name);
    return args.error(slot.error());
  }
  slot_ = slot.value();
  if (Status s = prefetch_.resolve([&] { return memory_profile(); }, ctx.batch); !s) {
    const Args args({}, loc_, name(), kTraits.class_name);
    return args.error(s.error());
  }
  return {};
}

}  // namespace fulcrum
