// StreamIDS: the stream intrusion detection NF (paper 004's stream IDS). Each direction of a flow
// is one byte stream (the message bodies, or raw chunks, in order); the packet IDS's rules
// (stream_rules.hh says which apply) are matched against it with Hyperscan in STREAMING mode, so
// a pattern split across messages is found on the message that completes it.
//
// Arguments:
//   RULES      file      the rule file (docs/ids.md's language); inapplicable rules are skipped
//                        and listed (skipped())
//   MODE       string    detect (default): alerts only; block: the message that raises an
//                        alert is answered 403 (HTTP; kRespond, reason "StreamIDS: sid N") or
//                        its connection closed (raw streams; kClose)
//   DIRECTION  string    requests, responses or both (default): which streams are scanned
//   LOG        string    a file for JSON-lines alerts ({"sid","msg","flow","dir","seq"}); none
//                        by default
// Semantics: a rule alerts at most once per flow and direction, on the message during which its
// last component is found (Verdict::alerts counts it there); its components may be found in
// any messages of that direction. The result equals the packet IDS's on the direction's bytes in
// one packet, however the bytes are split into messages (tests/l7_stream_ids_test.cc).
// Counters: counters() and alerts per rule (alerts_by_rule()).
//
// State (per flow, plain bytes): word 0 the device's carried DFA state, then one block per
// scanned direction: flags, the stream's byte count, found/alerted bits per component and rule,
// the last max_literal() bytes of the stream (the tail) and the Hyperscan stream, serialised
// with hs_compress_stream (expanded into one scratch stream per NF instance for each message),
// so the state is self-contained: no table of live streams to free when a flow ends, and a flow
// moves between workers or to a device and back as its bytes.
//
// Device form (L7_OP_IDS_AC, kernels/common/l7_ops.h), offered when every rule's components are
// literals (no pcre, no distance/within chains): the table is the literals' caseless
// Aho-Corasick DFA; finish_device expands the steps, trusts only occurrences wholly inside the
// message, finds those spanning the boundary by walking the DFA over the tail and the message's
// first bytes (so no result depends on the carried DFA state, which other-direction messages of
// the same batch may have advanced), confirms case-sensitive contents by their bytes and applies
// offset/depth with the stream's byte count. The Hyperscan stream is then behind: the next
// message processed on the CPU restarts it from the tail (occurrences ending in the tail
// ignored), which is exact for literals because what a literal rule has found lives in the
// found bits, not in Hyperscan's state. Overflowed outputs: the message is walked on the CPU.
// Not reentrant: one instance serves one thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/args.hh"
#include "l7/nf/nf.hh"
#include "l7/nf/stream_rules.hh"

namespace fulcrum::l7 {

class StreamIds final : public FlowNf {
 public:
  enum class Mode : uint8_t { kDetect, kBlock };
  static constexpr uint8_t kScanRequests = 1;
  static constexpr uint8_t kScanResponses = 2;

  struct Counters {
    uint64_t messages = 0;  // messages scanned (CPU or device)
    uint64_t bytes = 0;
    uint64_t alerts = 0;
    uint64_t blocked = 0;          // MODE block: messages answered 403 or closed
    uint64_t device_messages = 0;  // finished from device output
    uint64_t device_overflows = 0;
    uint64_t resumed = 0;    // Hyperscan streams restarted from the tail after device messages
    uint64_t hs_errors = 0;  // Hyperscan stream failures (none expected); the stream restarts
  };

  static Result<std::unique_ptr<StreamIds>> create(std::shared_ptr<const StreamRules> rules,
                                                   Mode mode, uint8_t scan,
                                                   const std::string& log_path = {});
  static Result<std::unique_ptr<FlowNf>> from_args(Args& a);
  ~StreamIds() override;

  std::string_view name() const override { return "StreamIDS"; }
  size_t state_bytes() const override { return kBlocksAt + block_bytes_ * blocks_; }
  void init_state(std::span<uint8_t> state) const override;
  void process(Message& m, std::span<uint8_t> state) override;
  std::optional<DeviceOp> device_op() const override;
  void finish_device(Message& m, std::span<uint8_t> state, std::span<const uint32_t> out) override;

  const StreamRules& rules() const { return *rules_; }
  const Counters& counters() const { return counters_; }
  const std::vector<uint64_t>& alerts_by_rule() const { return by_rule_; }
  // The sids raised by the last message processed or finished, in the order raised.
  const std::vector<uint32_t>& last_alerts() const { return last_; }

  // Per-direction block header (at the start of each block).
  struct BlockHeader {
    uint32_t flags;
    uint32_t hs_len;        // compressed Hyperscan stream bytes
    uint64_t stream_bytes;  // bytes of this direction so far
    uint64_t hs_base;       // stream offset of the Hyperscan stream's first byte
    uint32_t tail_len;
    uint32_t reserved;
  };
  static constexpr size_t kBlocksAt = 8;  // after the carried DFA state word

 private:
  StreamIds(std::shared_ptr<const StreamRules> rules, Mode mode, uint8_t scan);

  struct Scan;  // one message's scan context (stream_ids.cc)
  // The block of direction `d`; nullopt when `d` is not scanned.
  std::optional<std::span<uint8_t>> block(std::span<uint8_t> state, Direction d) const;
  void component_found(Scan& s, uint32_t c, uint64_t end);
  void advance_tail(std::span<uint8_t> blk, BlockHeader& h, std::span<const uint8_t> msg,
                    std::span<uint8_t> state) const;
  void conclude(Message& m);

  std::shared_ptr<const StreamRules> rules_;
  Mode mode_;
  uint8_t scan_;
  uint32_t blocks_ = 0;
  size_t found_bytes_ = 0, alerted_bytes_ = 0, tail_cap_ = 0, hs_cap_ = 0, block_bytes_ = 0;
  ids::HsScratch scratch_;
  HsStream work_;
  std::vector<uint8_t> seam_;
  std::vector<std::pair<uint32_t, uint32_t>> cands_;  // (end in message, component)
  Counters counters_;
  std::vector<uint64_t> by_rule_;
  std::vector<uint32_t> last_;
  std::vector<uint32_t> last_rules_;  // the rules of last_
  std::FILE* log_ = nullptr;
};

}  // namespace fulcrum::l7
