#include "elements/l2/l2_switch.hh"

#include <string>

namespace fulcrum {

Status L2Switch::configure(Args& args) {
  loc_ = args.loc();
  if (Status s = args.key("CAPACITY", capacity_,
                          "MAC table entries (1..268435456); a full table learns nothing new "
                          "(counted as learn_failures)")
                     .key("AGING_S", aging_s_,
                          "seconds after which an address not seen as a source is treated as "
                          "unknown; 0: no aging (and no last-seen array: 8 bytes per slot)")
                     .finish();
      !s)
    return s;
  if (capacity_ == 0 || capacity_ > MacTable::kMaxCapacity)
    return args.error("CAPACITY: expected 1.." + std::to_string(MacTable::kMaxCapacity) + ", got " +
                      std::to_string(capacity_));
  return {};
}

Status L2Switch::initialize(const InitContext&) {
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
  return {};
}

void L2Switch::counters(std::vector<Counter>& out) const {
  out.push_back({"entries", table_ ? table_->size() : 0});
  out.push_back({"learn_failures", learn_failures_});
}

}  // namespace fulcrum
