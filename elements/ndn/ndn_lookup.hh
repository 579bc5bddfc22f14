// NDNLookup — forwards NDN Interest and Data packets by longest-name-prefix match.
//
// Ports:     input 0: Ethernet frames. output 0: NDN packets whose name has a route to an
//            existing port. Drops: not-ndn (frame under 14 bytes or EtherType not 0x8624),
//            malformed (the Interest/Data, Name or component TLVs do not parse or overrun the
//            frame), no-route (no prefix of the name is in the table and there is no "/" route),
//            no-such-port (the name's port is not below the number of --port flags: only
//            without ports, since a name routed to a port the run lacks is a load-time error).
// Uses:      nothing.  Sets: out_port (the matching name's port).
// Counters:  none (the graph counts packets per port and drops per reason).
// Offload:   none.
// PREFETCH n|auto: names per prefetch group (the table's lookup_bulk; auto: paper 003's model).
//
// Wire format: Ethernet, then an NDN Packet Format v0.3 Interest (0x05) or Data (0x06) TLV whose
// first element is the Name (0x07); see src/lib/ndn_wire.hh. Components after the 16th are not
// parsed (no table name is longer). Per batch: parse every name and hash all its prefixes, then
// one NameTable::lookup_bulk (one hash table per component count, group prefetch), then the
// verdicts.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "core/element.hh"
#include "core/location.hh"
#include "core/memory_profile.hh"
#include "core/registry.hh"
#include "core/table_slot.hh"
#include "lib/name_table.hh"
#include "plan/lookup_probe.hh"

namespace fulcrum {

class NDNLookup final : public ElementBase<NDNLookup>, public MemoryProfiled {
 public:
  static constexpr DropReasons kDropReasons{"not-ndn", "malformed", "no-route", "no-such-port"};
  static constexpr ElementTraits kTraits{"NDNLookup", 1, 1, kDropReasons};
  static constexpr uint32_t kCacheLine = 64;
  // Per packet in a batch besides its parsed name: the mbuf header line and the first data line.
  static constexpr size_t kPacketStateBytes = 2 * kCacheLine;

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  TableSlotBase* table_slot() override { return slot_.get(); }
  // The name tables' bytes, the candidate buckets prefetched per name, and the lookup's costs
  // measured once on a name whose buckets are in L1 (src/plan/lookup_probe.hh).
  MemoryProfile memory_profile() const override;

  void process_batch(PacketBatch& batch) override {
    alignas(64) ParsedName names[kMaxBatch];
    alignas(64) uint16_t ports[kMaxBatch];
    uint16_t slot[kMaxBatch];
    uint32_t n = 0;
    Verdict* results = batch.results();
    // The frames are parsed byte by byte: fetch the batch's first two lines of each first.
    batch.for_each([](uint32_t, Packet* p) {
      __builtin_prefetch(data(p));
      __builtin_prefetch(data(p) + kCacheLine);
    });
    batch.for_each([&](uint32_t i, Packet* p) {
      const NameTable::Parse r = NameTable::parse_frame(data(p), length(p), names[n]);
      if (r == NameTable::Parse::kOk) [[likely]] {
        slot[n++] = static_cast<uint16_t>(i);
      } else {
        results[i] = Verdict::drop(r == NameTable::Parse::kNotNdn ? kDropReasons["not-ndn"]
                                                                  : kDropReasons["malformed"]);
      }
    });
    slot_->current()->lookup_bulk(names, ports, n, prefetch_.group);
    for (uint32_t k = 0; k < n; ++k) {
      const uint32_t i = slot[k];
      const uint16_t port = ports[k];
      if (port < ports_) [[likely]] {
        set_out_port(batch.at(i), port);
        results[i] = Verdict::out(0);
      } else {
        results[i] = Verdict::drop(port == NameTable::kNoRoute ? kDropReasons["no-route"]
                                                               : kDropReasons["no-such-port"]);
      }
    }
  }

  const NameTable& table() const { return *slot_->current(); }

 private:
  std::string file_;
  plan::PrefetchOption prefetch_{NameTable::kDefaultPrefetch};
  mutable bool probed_ = false;
  mutable MemoryProfile probe_;
  SourceLoc loc_;
  std::shared_ptr<TableSlot<NameTable>> slot_;
  uint16_t ports_ = 0;
};

FULCRUM_REGISTER_ELEMENT(NDNLookup);

}  // namespace fulcrum
