// L2Switch — a learning Ethernet switch: learns source addresses, forwards by destination.
//
// Ports:     input 0: Ethernet frames. output 0: frames whose destination was learned on another
//            port, or is a static entry, with out_port set to that port. output 1 (optional):
//            frames to flood, i.e. whose destination is unknown, aged out, broadcast or multicast;
//            when output 1 is not connected they are dropped as "unknown-destination". Drops:
//            truncated (frame under 14 bytes), same-port (destination learned on the port the frame
//            came in on: filtered, as real switches do), unknown-destination.
// Uses:      in_port.  Sets: out_port (output 0).
// Counters:  entries (addresses in the table), learn_failures (source addresses not learned
//            because the table was full), static_entries.
// Offload:   none.
// PREFETCH n|auto: keys per prefetch group in both passes (auto: paper 003's model, src/plan/).
//
// Per batch: one insert_bulk over the source addresses (learn or refresh; multicast sources are
// not learned), then one lookup_bulk over the destinations, both with group prefetch
// (src/lib/mac_table.hh). Learning of the whole batch thus precedes its forwarding.
//
// Static entries (STATIC file, as VPP's "l2fib add ... static"): looked up before the learned
// table, never aged, not moved by learning; one table shared by every worker, replaced while the
// run goes on (hot reload, core/table_slot.hh).
//
// The table is per worker replica (shared nothing): learning writes on every packet, and a
// shared table would need locks or atomics and bounce its cache lines between cores. With RSS
// a host's frames arrive on one queue, so each worker learns the hosts it serves; an address
// learned only by another worker is unknown here and flooded (output 1), which costs extra
// floods but never misdelivers. CAPACITY is per worker.
#pragma once

#include <rte_byteorder.h>
#include <rte_cycles.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "core/element.hh"
#include "core/location.hh"
#include "core/memory_profile.hh"
#include "core/registry.hh"
#include "core/table_slot.hh"
#include "lib/mac_table.hh"
#include "plan/lookup_probe.hh"

namespace fulcrum {

class L2Switch final : public ElementBase<L2Switch>, public MemoryProfiled {
 public:
  static constexpr DropReasons kDropReasons{"truncated", "same-port", "unknown-destination"};
  static constexpr int kFloodOutput = 1;
  static constexpr ElementTraits kTraits{"L2Switch", 1, 2, kDropReasons, 1u << kFloodOutput};

  static constexpr uint32_t kDefaultCapacity = 1u << 20;
  static constexpr uint32_t kEtherHeaderLen = 14;
  static constexpr uint32_t kSrcOffset = 6;
  static constexpr uint8_t kGroupBit = 0x01;  // I/G bit of the first address byte

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void counters(std::vector<Counter>& out) const override;
  TableSlotBase* table_slot() override { return static_.get(); }
  // The learned table (per worker), the buckets a packet reads, and the lookup's costs measured
  // once with its buckets in L1 (src/plan/lookup_probe.hh).
  MemoryProfile memory_profile() const override;

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

  const MacTable& table() const { return *table_; }

 private:
  static constexpr uint32_t kKeyShift = 16;  // an 8-byte big-endian load holds the MAC on top
  // Per packet: learning reads both buckets of the source (2 lines), forwarding the first
  // bucket of the destination and, for about half the keys, the second: two dependent passes.
  static constexpr double kLinesPerPacket = 3.5;
  static constexpr double kDependentPasses = 2;
  // Of them, the second buckets, prefetched within their group (MacTable::lookup_bulk).
  static constexpr double kWithinGroupLines = 0.5;
  // Per packet in a batch: keys, ports, slots (~40 bytes) and the mbuf and first data lines.
  static constexpr double kBatchStateBytes = 40 + 128;
  // A distinct address's lookups touch its two buckets and the line of its last-seen time.
  static constexpr double kBytesPerKey = 3.0 * MacTable::kBucketEntries * sizeof(uint64_t);
  static constexpr std::string_view kEntriesCounter = "entries";
  static constexpr uint64_t kProbeKeyBase = 0x0200000000F0ull;  // locally administered unicast

  // The MacTable key of the 6 bytes at `p` (8 bytes must be readable).
  static uint64_t load_mac(const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, sizeof v);
    return rte_be_to_cpu_64(v) >> kKeyShift;
  }

  uint32_t now_s() const {
    return aging_s_ == 0 ? 0 : static_cast<uint32_t>(rte_get_tsc_cycles() / tsc_hz_);
  }

  template <class ForEachLive>
  void process(PacketBatch& batch, ForEachLive&& for_each_live) {
    alignas(64) uint64_t learn_keys[kMaxBatch];
    alignas(64) uint16_t learn_ports[kMaxBatch];
    alignas(64) uint64_t dst_keys[kMaxBatch];
    alignas(64) uint16_t found[kMaxBatch];
    alignas(64) uint32_t seen[kMaxBatch];
    uint16_t slot[kMaxBatch];
    uint16_t arrived[kMaxBatch];
    uint8_t group[kMaxBatch];
    uint32_t nlearn = 0, nfwd = 0;
    Verdict* results = batch.results();
    for_each_live([&](uint32_t i, Packet* p) {
      if (length(p) < kEtherHeaderLen) [[unlikely]] {
        results[i] = Verdict::drop(kDropReasons["truncated"]);
        return;
      }
      const uint8_t* d = data(p);
      const uint16_t port = in_port(p);
      learn_keys[nlearn] = load_mac(d + kSrcOffset);
      learn_ports[nlearn] = port;
      nlearn += (d[kSrcOffset] & kGroupBit) == 0;
      dst_keys[nfwd] = load_mac(d);
      group[nfwd] = d[0] & kGroupBit;
      arrived[nfwd] = port;
      slot[nfwd++] = static_cast<uint16_t>(i);
    });
    const uint32_t now = now_s();
    learn_failures_ += table_->insert_bulk(learn_keys, learn_ports, nlearn, now, prefetch_.group);
    table_->lookup_bulk(dst_keys, found, nfwd, aging_s_ != 0 ? seen : nullptr, prefetch_.group);
    alignas(64) uint16_t fixed[kMaxBatch];
    if (static_) [[unlikely]] {
      static_->current()->lookup_bulk(dst_keys, fixed, nfwd);
      for (uint32_t k = 0; k < nfwd; ++k) {
        if (fixed[k] == MacTable::kNotFound) continue;
        found[k] = fixed[k];
        if (aging_s_ != 0) seen[k] = now;  // static entries never age
      }
    }
    const Verdict unknown =
        flood_ ? Verdict::out(kFloodOutput) : Verdict::drop(kDropReasons["unknown-destination"]);
    for (uint32_t k = 0; k < nfwd; ++k) {
      const uint16_t port = found[k];
      const uint32_t i = slot[k];
      if (port == MacTable::kNotFound || group[k] != 0 ||
          (aging_s_ != 0 && now - seen[k] > aging_s_)) [[unlikely]] {
        results[i] = unknown;
      } else if (port == arrived[k]) [[unlikely]] {
        results[i] = Verdict::drop(kDropReasons["same-port"]);
      } else {
        set_out_port(batch.at(i), port);
        results[i] = Verdict::out(0);
      }
    }
  }

  uint32_t capacity_ = kDefaultCapacity;
  uint32_t aging_s_ = 0;
  uint64_t tsc_hz_ = 1;
  bool flood_ = false;
  uint64_t learn_failures_ = 0;
  std::unique_ptr<MacTable> table_;
  plan::PrefetchOption prefetch_{MacTable::kDefaultPrefetch};
  mutable bool probed_ = false;
  mutable MemoryProfile probe_;
  std::string static_file_;
  std::shared_ptr<TableSlot<MacTable>> static_;
  SourceLoc loc_;
};

FULCRUM_REGISTER_ELEMENT(L2Switch);

}  // namespace fulcrum
