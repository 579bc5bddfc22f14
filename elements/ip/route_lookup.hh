// RouteLookup<Derived, Table>: the per-batch longest-prefix-match element that IPLookup (IPv4)
// and IP6Lookup (IPv6) share. Derived provides:
//   using Addr = ...;                                  the address as Table::lookup_bulk takes it
//   static bool destination(Packet*, Addr& out);       false when the frame is not of its family
//   static Result<std::shared_ptr<Table>> build_table(const std::string& file, uint32_t max_port);
//                                                      routes to ports above max_port are errors
//   static constexpr std::string_view kStorageKey;     shared storage key prefix
//   static constexpr std::string_view kTableKind;      what the table holds ("IPv4 routes")
// and its kTraits with drop reasons in DropReason order. A Derived with more keys than FILE reads
// them in Status configure_keys(Args&), names the table they select in std::string
// table_variant() const (part of the shared storage key) and takes that variant as build_table's
// third argument. Table provides lookup_bulk(const Addr*, uint16_t*, n[, group]),
// working_set_bytes(), accesses_per_lookup() and sample_addresses(n) (addresses under its routes,
// of a type the size of Addr: the keys of PREFETCH auto's probe). The table is built once per
// process (and variant) and shared by every worker; it can be replaced while the run goes on
// (hot reload, core/table_slot.hh): a batch is looked up in one table.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/element.hh"
#include "core/memory_profile.hh"
#include "core/table_slot.hh"
#include "plan/lookup_probe.hh"

namespace fulcrum {

template <class Derived, class Table>
class RouteLookup : public ElementBase<Derived>, public MemoryProfiled {
 public:
  Status configure(Args& args) override {
    loc_ = args.loc();
    args.positional_file("FILE", file_, Derived::kFileHelp);
    if constexpr (requires(Derived & d) { d.configure_keys(args); })
      if (Status s = derived().configure_keys(args); !s) return s;
    prefetch_.read(args);
    if (Status s = prefetch_.check(args); !s) return s;
    return args.finish();
  }

  Status initialize(const InitContext& ctx) override {
    ports_ = static_cast<uint16_t>(std::clamp(ctx.ports, 0, int{Table::kMaxNextHop} + 1));
    // A route to a port the run does not have is a load-time error (FILE:LINE). Without ports
    // (a pipeline checked on its own) any port the table can hold is accepted.
    const uint32_t max_port = ports_ == 0 ? Table::kMaxNextHop : ports_ - 1u;
    std::string key(Derived::kStorageKey);
    if constexpr (requires(const Derived& d) { d.table_variant(); })
      key += derived().table_variant() + ":";
    key += std::to_string(max_port) + ":";
    // The builder outlives this element (reloads call it again, and the pipeline that first
    // built the table may be a check that is gone by then): it holds values only.
    typename TableSlot<Table>::Builder build;
    if constexpr (requires(const Derived& d) { d.table_variant(); })
      build = [max_port, variant = derived().table_variant()](const std::string& file) {
        return Derived::build_table(file, max_port, variant);
      };
    else
      build = [max_port](const std::string& file) { return Derived::build_table(file, max_port); };
    Result<std::shared_ptr<TableSlot<Table>>> slot = shared_table_slot<Table>(
        ctx.shared, key + file_, std::string(Derived::kTableKind), file_, std::move(build));
    if (!slot)
      return make_error(loc_.str() + ": " + this->name() +
                        " :: " + std::string(Derived::kTraits.class_name) + ": " + slot.error());
    slot_ = slot.value();
    if (Status s = prefetch_.resolve([&] { return memory_profile(); }, ctx.batch); !s)
      return make_error(loc_.str() + ": " + this->name() +
                        " :: " + std::string(Derived::kTraits.class_name) + ": " + s.error());
    return {};
  }

  // The table's working set and accesses (paper 002's S(i), N(i)) and, measured once on the
  // table with its data in L1, the lookup's costs for paper 003's model.
  MemoryProfile memory_profile() const override {
    if (!slot_) return {};
    const Table& t = table();
    if (!probed_) {
      // Addresses under the table's own routes (plan::ProbeDraws: 2048 draws of 256), as the
      // batch sweep of `fulcrum bench --only placement` probes; one zero address without routes.
      using Addr = typename Derived::Addr;
      using Key = decltype(t.sample_addresses(0))::value_type;
      static_assert(sizeof(Key) == sizeof(Addr));
      std::vector<Key> keys = t.sample_addresses(plan::ProbeDraws<Key>::kDistinct);
      if (keys.empty()) keys.push_back(Key{});
      plan::ProbeDraws<Key> draws(keys);
      alignas(64) uint16_t hops[kMaxBatch];
      plan::probe_lookup(
          [&](size_t n, unsigned g) {
            t.lookup_bulk(reinterpret_cast<const Addr*>(draws.next(n)), hops, n, g);
            asm volatile("" : : "r"(hops) : "memory");
          },
          probe_);
      probed_ = true;
    }
    MemoryProfile m = probe_;
    m.working_set_bytes = t.working_set_bytes();
    m.accesses_per_packet = t.accesses_per_lookup();
    m.levels = t.accesses_per_lookup();
    if constexpr (requires { t.within_group_levels(); })
      m.within_group_levels = t.within_group_levels();
    m.lines_per_level = 1;
    m.state_bytes_per_packet =
        kPacketStateBytes + sizeof(typename Derived::Addr) + sizeof(uint16_t);
    m.prefetch_group = prefetch_.group;
    return m;
  }

  TableSlotBase* table_slot() override { return slot_.get(); }

  // Three passes so that the table accesses of all packets overlap: gather the destinations,
  // look them all up (lookup_bulk prefetches), then write the verdicts. A batch without
  // excluded slots takes plain loops over [0, count).
  void process_batch(PacketBatch& batch) override {
    if (!batch.has_mask()) [[likely]] {
      Packet* const* pkts = batch.data();
      const uint32_t n = batch.count();
      process(batch, [pkts, n](auto&& f) {
        for (uint32_t i = 0; i < n; ++i) f(i, pkts[i]);
      });
    } else {
      process(batch, [&batch](auto&& f) { batch.for_each(f); });
    }
  }

  const Table& table() const { return *slot_->current(); }
  const std::string& file() const { return file_; }

 private:
  Derived& derived() { return static_cast<Derived&>(*this); }
  const Derived& derived() const { return static_cast<const Derived&>(*this); }

  // Lookup result standing for "not of this family": above every next hop, below kNoRoute.
  static constexpr uint16_t kHopWrongFamily = Table::kNoRoute - 1;
  static_assert(kHopWrongFamily > Table::kMaxNextHop);
  static constexpr uint32_t kWordBits = 64;  // bits per word of the wrong-family slot mask

  template <class ForEachLive>
  void process(PacketBatch& batch, ForEachLive&& for_each_live) {
    using Addr = typename Derived::Addr;
    alignas(64) Addr addrs[kMaxBatch];
    alignas(64) uint16_t hops[kMaxBatch];
    uint64_t wrong_family[PacketBatch::kMaskWords] = {};
    const uint32_t n = batch.count();
    // Excluded slots are looked up too (the bulk lookup runs over [0, n)), as address 0.
    if (batch.has_mask()) std::memset(addrs, 0, n * sizeof(addrs[0]));
    for_each_live([&](uint32_t i, Packet* p) {
      const bool ok = Derived::destination(p, addrs[i]);
      wrong_family[i / kWordBits] |= uint64_t{!ok} << (i % kWordBits);
    });
    slot_->current()->lookup_bulk(addrs, hops, n, prefetch_.group);
    for (uint32_t w = 0; w < PacketBatch::kMaskWords; ++w)
      for (uint64_t bits = wrong_family[w]; bits != 0; bits &= bits - 1)
        hops[w * kWordBits + std::countr_zero(bits)] = kHopWrongFamily;
    Verdict* results = batch.results();
    const uint16_t ports = ports_;
    bool dropped = false;
    for_each_live([&](uint32_t i, Packet* p) {
      const uint16_t hop = hops[i];
      if (hop < ports) [[likely]] {
        set_out_port(p, hop);
        results[i] = Verdict::out(0);
      } else {
        dropped = true;
        results[i] = Verdict::drop(hop == Table::kNoRoute ? Derived::kDropReasons["no-route"]
                                   : hop == kHopWrongFamily
                                       ? Derived::kDropReasons[Derived::kWrongFamilyReason]
                                       : Derived::kDropReasons["no-such-port"]);
      }
    });
    batch.note_first_output(!dropped);
  }

  // Per packet in a batch besides the keys: its mbuf header line and its first data line.
  static constexpr size_t kPacketStateBytes = 128;

  std::string file_;
  plan::PrefetchOption prefetch_{Table::kDefaultPrefetch};
  mutable bool probed_ = false;
  mutable MemoryProfile probe_;
  SourceLoc loc_;
  std::shared_ptr<TableSlot<Table>> slot_;
  uint16_t ports_ = 0;
};

}  // namespace fulcrum
