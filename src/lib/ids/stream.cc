#include "lib/ids/stream.hh"

#include <algorithm>
#include <cstring>

namespace fulcrum::ids {

namespace {

constexpr uint32_t kTcpSeqOffset = 4;
constexpr uint32_t kTcpFlagsOffset = 13;
constexpr uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kAck = 0x10;
constexpr uint32_t kMaxSegment = 65535;  // an IP payload's largest length
constexpr uint32_t kBitsPerByte = 8;

bool bit(const uint8_t* bits, uint32_t pos) {
  return (bits[pos / kBitsPerByte] >> (pos % kBitsPerByte)) & 1;
}
void set_bit(uint8_t* bits, uint32_t pos) {
  bits[pos / kBitsPerByte] |= static_cast<uint8_t>(1u << (pos % kBitsPerByte));
}
void clear_bit(uint8_t* bits, uint32_t pos) {
  bits[pos / kBitsPerByte] &= static_cast<uint8_t>(~(1u << (pos % kBitsPerByte)));
}

uint32_t round_up_pow2(uint32_t n) {
  if (n == 0) return 0;
  uint32_t p = kBitsPerByte;  // at least one bitmap byte
  while (p < n) p <<= 1;
  return p;
}

}  // namespace

StreamTable::StreamTable(uint32_t flows, uint32_t lookback, uint32_t ooo_bytes)
    : enabled_(flows != 0),
      lookback_(lookback),
      ooo_(round_up_pow2(ooo_bytes)),
      per_dir_(size_t{lookback_} + ooo_ + ooo_ / kBitsPerByte),
      table_(flows) {
  if (!enabled_) return;
  bytes_.assign(size_t{table_.capacity()} * 2 * per_dir_, 0);
  scratch_.assign(size_t{lookback_} + kMaxSegment + ooo_, 0);
}

void StreamTable::restart(Half& h, uint32_t slot, uint32_t dir, uint32_t next) {
  if (h.held != 0) std::memset(held_bits(slot, dir), 0, ooo_ / kBitsPerByte);
  h = Half{};
  h.state = State::kOpen;
  h.next = next;
}

StreamTable::Outcome StreamTable::add(const PacketView& v) {
  const uint8_t* tcp = v.ip_payload;
  const uint8_t flags = tcp[kTcpFlagsOffset];
  uint32_t seq_be;
  std::memcpy(&seq_be, tcp + kTcpSeqOffset, sizeof seq_be);
  const uint32_t seq = rte_be_to_cpu_32(seq_be);
  const uint8_t* payload = tcp + v.l4_hdr_len;
  const uint32_t len = v.ip_payload_len - v.l4_hdr_len;
  bool src_first = false;
  const FlowKey key = flow_key(v, &src_first);
  const uint64_t hash = key.hash();
  const uint32_t dir = src_first ? 0 : 1;
  const bool syn = flags & kSyn;
  uint32_t slot = 0;
  if ((flags & kRst) || (!syn && len == 0)) {
    // A RST ends the stream; a segment without data or SYN creates none.
    Entry* found = table_.find(key, hash, &slot);
    if (found == nullptr) return Outcome::kNotTaken;
    if (flags & kRst) {
      table_.erase(slot);
      return Outcome::kNotTaken;
    }
    if (!(flags & kFin)) return Outcome::kNothingNew;
  }
  bool fresh = false;
  Entry& e = table_.get(key, hash, fresh, &slot);
  if (fresh) {  // an evicted entry may have left held bits
    std::memset(held_bits(slot, 0), 0, ooo_ / kBitsPerByte);
    std::memset(held_bits(slot, 1), 0, ooo_ / kBitsPerByte);
  }
  Half& h = e.half[dir];
  uint32_t data_seq = seq;
  if (syn) {
    data_seq = seq + 1;
    // A SYN starts its direction (a SYN without ACK: a new session, both directions), unless
    // the direction already took data (then it is a retransmission of the SYN).
    if (h.state != State::kOpen || !h.data) {
      restart(h, slot, dir, data_seq);
      if (!(flags & kAck)) {
        Half& other = e.half[1 - dir];
        if (other.held != 0) std::memset(held_bits(slot, 1 - dir), 0, ooo_ / kBitsPerByte);
        other = Half{};
      }
    }
  }
  if (h.state == State::kIdle) restart(h, slot, dir, data_seq);  // mid-connection pick-up
  if (h.state == State::kGapped) {
    if (len != 0) ++stats_.segments_dropped;
    return Outcome::kNotTaken;
  }
  if (h.state == State::kClosed) {
    if (len != 0) ++stats_.retransmissions;
    return Outcome::kNothingNew;
  }
  const Outcome out = len != 0 ? take(h, slot, dir, data_seq, payload, len) : Outcome::kNothingNew;
  if (out == Outcome::kNotTaken) return out;
  if (flags & kFin) {
    h.fin = true;
    h.fin_seq = data_seq + len;
  }
  if (h.fin && h.next == h.fin_seq) {
    h.state = State::kClosed;
    if (e.half[1 - dir].state == State::kClosed) table_.erase(slot);  // window_ stays valid
  }
  return out;
}

StreamTable::Outcome StreamTable::take(Half& h, uint32_t slot, uint32_t dir, uint32_t seq,
                                       const uint8_t* data, uint32_t len) {
  const auto ahead = static_cast<int32_t>(seq - h.next);  // modulo 2^32
  if (ahead <= 0) {
    const uint64_t old = static_cast<uint64_t>(-int64_t{ahead});
    if (old >= len) {
      ++stats_.retransmissions;
      return Outcome::kNothingNew;
    }
    append(h, slot, dir, data, static_cast<uint32_t>(old), len);
    return Outcome::kNewData;
  }
  if (uint64_t{static_cast<uint32_t>(ahead)} + len > ooo_) {
    // Past the out-of-order window: data is missing (or the segment is bogus). The direction
    // stops reassembling; its packets are inspected one by one from now on.
    ++stats_.gaps;
    ++stats_.segments_dropped;
    stats_.held_bytes_dropped += h.held;
    if (h.held != 0) std::memset(held_bits(slot, dir), 0, ooo_ / kBitsPerByte);
    h.held = 0;
    h.state = State::kGapped;
    return Outcome::kNotTaken;
  }
  uint8_t* held = held_buf(slot, dir);
  uint8_t* bits = held_bits(slot, dir);
  const uint32_t mask = ooo_ - 1;
  uint32_t added = 0;
  for (uint32_t i = 0; i < len; ++i) {
    const uint32_t pos = (seq + i) & mask;
    if (bit(bits, pos)) continue;  // the first bytes seen win
    set_bit(bits, pos);
    held[pos] = data[i];
    ++added;
  }
  h.held += added;
  if (added == 0)
    ++stats_.retransmissions;
  else
    ++stats_.segments_held;
  return Outcome::kNothingNew;
}

void StreamTable::append(Half& h, uint32_t slot, uint32_t dir, const uint8_t* data, uint32_t from,
                         uint32_t len) {
  uint8_t* w = scratch_.data();
  uint8_t* lb = lookback_buf(slot, dir);
  std::memcpy(w, lb, h.lookback);
  uint32_t n = h.lookback;
  const uint32_t count = len - from;
  std::memcpy(w + n, data + from, count);
  if (h.held != 0) {
    uint8_t* held = held_buf(slot, dir);
    uint8_t* bits = held_bits(slot, dir);
    const uint32_t mask = ooo_ - 1;
    for (uint32_t i = 0; i < std::min(count, ooo_) && h.held != 0; ++i) {
      const uint32_t pos = (h.next + i) & mask;
      if (!bit(bits, pos)) continue;
      w[n + i] = held[pos];  // held earlier: the first bytes seen win
      clear_bit(bits, pos);
      --h.held;
    }
    n += count;
    h.next += count;
    while (h.held != 0 && bit(bits, h.next & mask)) {
      const uint32_t pos = h.next & mask;
      w[n++] = held[pos];
      clear_bit(bits, pos);
      --h.held;
      ++h.next;
    }
  } else {
    n += count;
    h.next += count;
  }
  const uint32_t fresh = n - h.lookback;
  window_ = {w, n, h.lookback, h.offset - h.lookback};
  h.offset += fresh;
  h.data = true;
  stats_.bytes += fresh;
  const uint32_t keep = std::min(lookback_, n);
  std::memcpy(lb, w + n - keep, keep);
  h.lookback = keep;
}

}  // namespace fulcrum::ids
