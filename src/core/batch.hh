// PacketBatch: a fixed-capacity array of packets with per-packet results, an exclusion mask and
// per-batch annotations (NBA §3.2). Arrays, not lists, so elements can prefetch and a device
// layer can gather a batch into one contiguous buffer.
//
// Layout (kMaxBatch = 256):
//   pkts_[256]      rte_mbuf*        the packets, slots [0, count_)
//   results_[256]   Verdict (i16)    next output per slot, written by the element
//   mask_[4]        u64 bitmap       1 = slot excluded (dropped or moved to another batch)
//   count_, live_   u16              used slots / slots not excluded
//   created_        u16              slots holding packets made while the batch was filled
//   first_output_   bool             every verdict is known to be output 0 (no scan needed)
//   anno_           BatchAnno        per-batch annotations (device decision, ...)
//   tx_             TxSummary        the transmit path's figures, learnt by the element before it
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <span>

#include "core/packet.hh"

namespace fulcrum {

inline constexpr uint32_t kMaxBatch = 256;
inline constexpr uint32_t kDefaultBatch = 64;

// What an element decided for one packet: an output port (>= 0) or a drop with a reason index
// into the element's declared drop reasons.
struct Verdict {
  int16_t v;
  static constexpr Verdict out(int port) { return Verdict{static_cast<int16_t>(port)}; }
  static constexpr Verdict drop(int reason = 0) {
    return Verdict{static_cast<int16_t>(-1 - reason)};
  }
  constexpr bool is_drop() const { return v < 0; }
  constexpr int port() const { return v; }
  constexpr int reason() const { return -1 - v; }
};
static_assert(sizeof(Verdict) == 2);

// Where the batch runs. Set by a load-balancer element, read by offloadable elements.
inline constexpr int32_t kRunOnCpu = -1;

struct BatchAnno {
  int32_t device = kRunOnCpu;  // load-balancer decision: kRunOnCpu or a device index
  // Load-balancer request: batches per device task, at most the offloadable element's
  // AGGREGATE; 0: that AGGREGATE.
  uint16_t aggregate = 0;
  uint16_t in_port = kNoPort;  // RX port of the batch (all packets of an RX batch share it)
  uint16_t in_queue = 0;
  uint64_t batch_id = 0;
  // TSC when the batch was received: read when it enters the pipeline (Pipeline::inject), or by
  // the worker at rx_burst when it measures latency.
  uint64_t rx_tsc = 0;
  // Set by an offloadable element whose device tasks also did the work of the elements it
  // chained to (offload/stage/chaining.cc): they pass these packets on with the verdicts it
  // computed.
  const void* chained = nullptr;
};

// What the transmit path needs of a batch, learnt by the element whose output 0 leads to it in
// the pass that element makes anyway (PacketElement, Element::feeds_sink): the frames' bytes and
// their transmit ports (effective_out_port) ORed and ANDed, equal when every packet leaves by one
// port. It describes slots [0, count) as they were then; PacketBatch::tx_summary gives it only
// while the batch still holds exactly those slots, every one live.
struct TxSummary {
  uint64_t bytes = 0;
  uint16_t port_or = 0;
  uint16_t port_and = 0xFFFF;
  uint16_t count = 0;  // slots described; 0: none
  void add(const Packet* p) {
    bytes += p->pkt_len;
    const uint16_t port = effective_out_port(p);
    port_or |= port;
    port_and &= port;
  }
  bool one_port() const { return port_or == port_and; }
};

class PacketBatch {
 public:
  static constexpr uint32_t kMaskWords = kMaxBatch / 64;

  PacketBatch() { clear(); }

  void clear() {
    count_ = 0;
    live_ = 0;
    created_ = 0;
    first_output_ = true;
    mask_.fill(0);
    anno_ = BatchAnno{};
    tx_.count = 0;
  }

  uint32_t count() const { return count_; }  // used slots, masked ones included
  uint32_t live() const { return live_; }    // slots still carrying a packet
  bool empty() const { return live_ == 0; }
  bool full() const { return count_ == kMaxBatch; }
  bool has_mask() const { return live_ != count_; }

  void push(Packet* m) {
    pkts_[count_] = m;
    results_[count_] = Verdict::out(0);
    ++count_;
    ++live_;
  }
  // A packet that the element filling the batch made (a copy) rather than took in: the graph
  // counts it in Pipeline::created, so the packet balance holds.
  void push_created(Packet* m) {
    push(m);
    ++created_;
  }
  uint32_t created() const { return created_; }

  Packet* at(uint32_t i) const { return pkts_[i]; }
  std::span<Packet* const> packets() const { return {pkts_.data(), count_}; }
  // Raw arrays for bulk operations (rx/tx bursts, device gathers).
  Packet** data() { return pkts_.data(); }
  // Takes slots [0, n) as filled through data(); every verdict starts as output 0.
  void set_count(uint32_t n) {
    count_ = static_cast<uint16_t>(n);
    live_ = static_cast<uint16_t>(n);
    created_ = 0;
    first_output_ = true;
    mask_.fill(0);
    tx_.count = 0;
    std::fill_n(results_.begin(), n, Verdict::out(0));
  }

  bool excluded(uint32_t i) const { return (mask_[i >> 6] >> (i & 63)) & 1; }
  // Masks slot i. Its verdict is reset to output 0 so all_first_output() can ignore the mask.
  void exclude(uint32_t i) {
    mask_[i >> 6] |= uint64_t{1} << (i & 63);
    results_[i] = Verdict::out(0);
    --live_;
  }

  Verdict result(uint32_t i) const { return results_[i]; }
  void set_result(uint32_t i, Verdict v) {
    results_[i] = v;
    first_output_ = false;
  }
  // The verdicts for writing in bulk; the batch no longer knows them all to be output 0 until
  // the writer says so with note_first_output.
  Verdict* results() {
    first_output_ = false;
    return results_.data();
  }
  // The writer of the verdicts (through results()) tells whether every verdict it wrote is
  // output 0, sparing all_first_output its scan: the scan reads verdicts just stored one by one,
  // a store-forwarding stall (~40 % of Pipeline::forward's samples in the router).
  void note_first_output(bool all_first) { first_output_ = all_first; }

  // True when every live slot's verdict is output 0 (known, or a few SIMD ORs; excluded slots
  // read 0).
  bool all_first_output() const {
    if (first_output_) return true;
    int16_t acc = 0;
    for (uint32_t i = 0; i < count_; ++i) acc |= results_[i].v;
    return acc == 0;
  }

  BatchAnno& anno() { return anno_; }
  const BatchAnno& anno() const { return anno_; }

  // Set by the element before the transmit path (see TxSummary), for the slots the batch holds.
  void set_tx_summary(const TxSummary& sum) {
    tx_ = sum;
    tx_.count = count_;
  }
  // The summary, when it still describes the batch: nullptr after a slot was excluded or added.
  const TxSummary* tx_summary() const {
    return tx_.count == count_ && count_ > 0 && !has_mask() ? &tx_ : nullptr;
  }

  // Calls f(index, packet) for every live slot. The no-mask case is a plain loop.
  template <class F>
  void for_each(F&& f) const {
    // The count in a register: f's verdict stores (16-bit, like count_) would have it reloaded.
    const uint32_t n = count_;
    if (!has_mask()) {
      for (uint32_t i = 0; i < n; ++i) f(i, pkts_[i]);
      return;
    }
    for (uint32_t w = 0; w * 64 < n; ++w) {
      uint64_t bits = ~mask_[w];
      if (w * 64 + 64 > n) bits &= (uint64_t{1} << (n - w * 64)) - 1;
      while (bits) {
        uint32_t i = w * 64 + std::countr_zero(bits);
        bits &= bits - 1;
        f(i, pkts_[i]);
      }
    }
  }

 private:
  std::array<Packet*, kMaxBatch> pkts_;
  std::array<Verdict, kMaxBatch> results_;
  std::array<uint64_t, kMaskWords> mask_;
  uint16_t count_;
  uint16_t live_;
  uint16_t created_;
  bool first_output_;
  BatchAnno anno_;
  TxSummary tx_;
};

static_assert(sizeof(PacketBatch) <= 64 * 48, "PacketBatch should stay within 48 cache lines");

}  // namespace fulcrum
