#include "elements/l2/l2_switch.hh"

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "lib/table_file.hh"

namespace fulcrum {
namespace {

// A static entries file: "MAC PORT" a line, # comments; ports above max_port are errors.
Result<std::shared_ptr<MacTable>> load_static(const std::string& file, uint32_t max_port) {
  Result<std::string> text = read_table_file(file, "static MAC file");
  if (!text) return make_error(text.error());
  std::vector<std::pair<uint64_t, uint16_t>> entries;
  std::map<uint64_t, int> first_line;
  std::istringstream in(text.value());
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    const std::string where = file + ":" + std::to_string(lineno) + ": ";
    std::istringstream fields(line.substr(0, line.find('#')));
    std::string mac_text, port_text, extra;
    if (!(fields >> mac_text)) continue;
    MacAddr mac{};
    uint16_t port = 0;
    if (!parse_value(mac_text, mac) || !(fields >> port_text) || !parse_value(port_text, port) ||
        (fields >> extra))
      return make_error(where + "expected \"MAC PORT\" (02:00:00:00:00:01 1)");
    if (port > max_port)
      return make_error(where + "port " + port_text + " out of range 0.." +
                        std::to_string(max_port));
    const uint64_t key = MacTable::mac_key(mac.b);
    if (auto [it, fresh] = first_line.emplace(key, lineno); !fresh)
      return make_error(where + "duplicate address " + mac_text + " (first on line " +
                        std::to_string(it->second) + ")");
    entries.emplace_back(key, port);
  }
  // Room to spare: a cuckoo table cannot always place its last entries when it is full.
  constexpr size_t kHeadroom = 2;
  Result<std::unique_ptr<MacTable>> table =
      MacTable::create(std::max<size_t>(entries.size() * kHeadroom, 1), false, "l2switch-static");
  if (!table) return make_error(file + ": " + table.error());
  for (const auto& [key, port] : entries)
    if (table.value()->insert(key, port) == MacTable::InsertResult::kFull)
      return make_error(file + ": the table of " + std::to_string(entries.size()) +
                        " entries could not hold them all");
  return std::shared_ptr<MacTable>(std::move(table.value()));
}

}  // namespace

Status L2Switch::configure(Args& args) {
  loc_ = args.loc();
  if (Status s = args.key("CAPACITY", capacity_,
                          "MAC table entries (1..268435456); a full table learns nothing new "
                          "(counted as learn_failures)")
                     .key("AGING_S", aging_s_,
                          "seconds after which an address not seen as a source is treated as "
                          "unknown; 0: no aging (and no last-seen array: 8 bytes per slot)")
                     .key_file("STATIC", static_file_,
                               "static entries, lines \"MAC PORT\" with # comments: looked up "
                               "before the learned table, never aged; shared by the workers and "
                               "replaceable while the run goes on (hot reload)")
                     .key("PREFETCH", prefetch_.text, plan::PrefetchOption::kHelp)
                     .finish();
      !s)
    return s;
  if (Status s = prefetch_.check(args); !s) return s;
  if (capacity_ == 0 || capacity_ > MacTable::kMaxCapacity)
    return args.error("CAPACITY: expected 1.." + std::to_string(MacTable::kMaxCapacity) + ", got " +
                      std::to_string(capacity_));
  return {};
}

Status L2Switch::initialize(const InitContext& ctx) {
  flood_ = output_connected(kFloodOutput);
  tsc_hz_ = rte_get_tsc_hz();
  if (tsc_hz_ == 0) tsc_hz_ = 1;
  const std::string table_name = "l2switch:" + name();
  Result<std::unique_ptr<MacTable>> table =
      MacTable::create(capacity_, aging_s_ != 0, table_name.c_str());
  if (!table) {
    const Args args({}, loc_, name(), kTraits.class_name);
    return args.error(table.error());
  }
  table_ = std::move(table.value());
  if (Status s = prefetch_.resolve([&] { return memory_profile(); }, ctx.batch); !s) {
    const Args args({}, loc_, name(), kTraits.class_name);
    return args.error(s.error());
  }
  if (static_file_.empty()) return {};
  const uint32_t max_port =
      ctx.ports > 0 ? static_cast<uint32_t>(ctx.ports) - 1 : uint32_t{MacTable::kMaxPort};
  Result<std::shared_ptr<TableSlot<MacTable>>> slot = shared_table_slot<MacTable>(
      ctx.shared, "l2-static:" + std::to_string(max_port) + ":" + static_file_,
      "static MAC entries", static_file_,
      [max_port](const std::string& file) { return load_static(file, max_port); });
  if (!slot) {
    const Args args({}, loc_, name(), kTraits.class_name);
    return args.error(slot.error());
  }
  static_ = slot.value();
  return {};
}

MemoryProfile L2Switch::memory_profile() const {
  if (!table_) return {};
  if (!probed_) {
    // Learned addresses looked up in an order the branch predictor cannot learn (some sit in
    // their second bucket), in a table of their own at half load: the switch's table is empty
    // when it initializes. Without memory for it, addresses not in the switch's table (both
    // buckets read every time).
    std::vector<uint64_t> learned(plan::ProbeDraws<uint64_t>::kDistinct);
    for (size_t i = 0; i < learned.size(); ++i) learned[i] = kProbeKeyBase + i;
    Result<std::unique_ptr<MacTable>> scratch =
        MacTable::create(2 * learned.size(), false, "l2switch-probe");
    const MacTable* probed = table_.get();
    if (scratch) {
      const std::vector<uint16_t> ports(learned.size(), 0);
      (void)scratch.value()->insert_bulk(learned.data(), ports.data(), learned.size());
      probed = scratch.value().get();
    }
    plan::ProbeDraws<uint64_t> draws(learned);
    alignas(64) uint16_t found[kMaxBatch];
    plan::probe_lookup(
        [&](size_t n, unsigned g) {
          probed->lookup_bulk(draws.next(n), found, n, nullptr, g);
          asm volatile("" : : "r"(found) : "memory");
        },
        probe_);
    probed_ = true;
  }
  MemoryProfile m = probe_;
  m.working_set_bytes = table_->memory_bytes();
  m.per_worker = true;
  m.bytes_per_key = kBytesPerKey;
  m.keys_counter = kEntriesCounter;
  m.accesses_per_packet = kLinesPerPacket;
  m.levels = kDependentPasses;
  m.lines_per_level = kLinesPerPacket / kDependentPasses;
  m.within_group_levels = kWithinGroupLines / m.lines_per_level;
  m.state_bytes_per_packet = kBatchStateBytes;
  m.prefetch_group = prefetch_.group;
  return m;
}

void L2Switch::counters(std::vector<Counter>& out) const {
  out.push_back({std::string(kEntriesCounter), table_ ? table_->size() : 0});
  out.push_back({"learn_failures", learn_failures_});
  out.push_back({"static_entries", static_ ? static_->current()->size() : 0, true});
}

}  // namespace fulcrum
