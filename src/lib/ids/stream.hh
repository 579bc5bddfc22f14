// TCP stream reassembly for the IDS (docs/ids.md, "Streams"): per flow and direction, the next
// expected sequence number, the last `lookback` bytes of the stream and up to `ooo_bytes` bytes of
// out-of-order data, in a per-worker table of `flows` entries with the flow table's buckets and
// LRU replacement (BoundedTable). Each TCP segment goes through add(), which returns the bytes a
// stream rule inspects on this packet: the lookback followed by the bytes this segment made
// contiguous (its own new bytes and any held bytes they reach), or that there are none.
//
// Policy:
//   * A direction starts at its SYN (the next byte is ISN + 1) or, without one, at the first
//     segment with data that is seen (the capture started mid-connection).
//   * Overlaps and retransmissions: the first data seen for a sequence number wins (Suricata's
//     IDS-mode behaviour: a segment's bytes never replace bytes already in the stream or held);
//     a segment with nothing new adds nothing (kNothingNew).
//   * Out of order: a segment that starts after the next expected byte and ends at most
//     ooo_bytes past it is held; one that ends further is a gap: the direction stops reassembling
//     (held bytes are discarded, counted) and its segments from then on are not taken
//     (kNotTaken: the IDS inspects them as packets) until the stream ends.
//   * Sequence numbers compare modulo 2^32 (wrap-around).
//   * A RST frees the flow's entry; a FIN closes its direction once the bytes before it are in,
//     and the entry is freed when both directions are closed. A closed direction takes no more
//     data (kNothingNew: a late retransmission).
#pragma once

#include <cstdint>
#include <vector>

#include "lib/ids/bounded_table.hh"
#include "lib/ids/flow_bits.hh"
#include "lib/ids/packet_view.hh"

namespace fulcrum::ids {

struct StreamStats {
  uint64_t bytes = 0;               // bytes that became contiguous (inspected on the stream)
  uint64_t segments_held = 0;       // segments held out of order
  uint64_t segments_dropped = 0;    // segments not taken: past the out-of-order window, after a gap
  uint64_t held_bytes_dropped = 0;  // held bytes discarded at a gap
  uint64_t gaps = 0;                // directions that met a gap and stopped reassembling
  uint64_t retransmissions = 0;     // segments that brought nothing new
  uint64_t evictions = 0;           // streams replaced in a full bucket
};

class StreamTable {
 public:
  // What add() made of a segment.
  enum class Outcome : uint8_t {
    kNotTaken,    // not part of a reassembled stream: inspect the packet's own payload
    kNothingNew,  // taken, but no byte became contiguous (held, retransmitted, no payload)
    kNewData,     // window() holds lookback bytes then new bytes
  };
  struct Window {
    const uint8_t* data = nullptr;
    uint32_t len = 0;
    uint32_t lookback = 0;  // data[0, lookback) was inspected before; the rest is new
    uint64_t origin = 0;    // the stream offset of data[0] (bytes of the stream before it)
  };

  // `flows` entries (rounded up as BoundedTable does; 0: no table), `lookback` bytes kept per
  // direction, `ooo_bytes` bytes of out-of-order data held per direction (rounded up to a power
  // of two).
  StreamTable(uint32_t flows, uint32_t lookback, uint32_t ooo_bytes);

  // Adds the TCP segment of `v` (not a fragment; TCP header parsed).
  Outcome add(const PacketView& v);
  const Window& window() const { return window_; }

  const StreamStats& stats() const {
    stats_.evictions = table_.evictions();
    return stats_;
  }
  uint32_t lookback() const { return lookback_; }
  uint32_t ooo_bytes() const { return ooo_; }
  bool enabled() const { return enabled_; }

 private:
  enum class State : uint8_t { kIdle, kOpen, kClosed, kGapped };
  struct Half {
    uint32_t next = 0;      // the next expected sequence number
    uint32_t fin_seq = 0;   // with fin: the sequence number of the FIN
    uint32_t lookback = 0;  // bytes in the lookback buffer
    uint32_t held = 0;      // out-of-order bytes held
    uint64_t offset = 0;    // the stream offset of `next`
    State state = State::kIdle;
    bool fin = false;
    bool data = false;  // bytes were taken (a SYN no longer restarts the direction)
  };
  struct Entry {
    Half half[2];  // [0]: sent by FlowKey's end a, [1]: by end b
  };

  // The buffers of direction `dir` of slot `slot`: lookback, held bytes, held-byte bitmap.
  uint8_t* lookback_buf(uint32_t slot, uint32_t dir) {
    return &bytes_[(size_t{slot} * 2 + dir) * per_dir_];
  }
  uint8_t* held_buf(uint32_t slot, uint32_t dir) { return lookback_buf(slot, dir) + lookback_; }
  uint8_t* held_bits(uint32_t slot, uint32_t dir) { return held_buf(slot, dir) + ooo_; }

  // Resets direction `h` to start at sequence number `next` with nothing held.
  void restart(Half& h, uint32_t slot, uint32_t dir, uint32_t next);
  // The segment data[0, len) at sequence number `seq` into direction `h`.
  Outcome take(Half& h, uint32_t slot, uint32_t dir, uint32_t seq, const uint8_t* data,
               uint32_t len);
  // Appends the contiguous bytes of `h` starting with data[from, len) (held bytes win where both
  // have one), then the held bytes they reach, to window_ after the lookback.
  void append(Half& h, uint32_t slot, uint32_t dir, const uint8_t* data, uint32_t from,
              uint32_t len);

  bool enabled_ = false;
  uint32_t lookback_ = 0;
  uint32_t ooo_ = 0;  // power of two, or 0
  size_t per_dir_ = 0;
  BoundedTable<FlowKey, Entry> table_;
  std::vector<uint8_t> bytes_;  // capacity × 2 × per_dir_
  std::vector<uint8_t> scratch_;
  Window window_;
  mutable StreamStats stats_;
};

}  // namespace fulcrum::ids
