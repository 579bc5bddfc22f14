// IDSMatch — matches packets against Snort/Suricata-style rules and logs an alert per match.
// IPv4 and IPv6 (extension headers walked), untagged or behind up to 3 VLAN tags (802.1Q, QinQ).
//
// Ports:     input 0: Ethernet frames. output 0: packets that raised no alert (and, when
//            output 1 is not connected and DROP is false, those that did: IDS mode).
//            output 1 (optional): packets that raised at least one alert.
//            Drops: not-ip (EtherType after the VLAN tags not IPv4 or IPv6, or IP version not
//            the EtherType's), truncated (frame ends inside a VLAN tag or the IP header or
//            before the IP total / payload length, or IHL / total length impossible),
//            bad-l4-header (TCP or UDP header does not fit in the IP payload, or TCP data
//            offset < 5), bad-udp-length (UDP length field not the IP payload length: invalid
//            for Suricata too, not inspected), bad-ipv6-ext (an IPv6 extension header does not
//            fit in the payload, or hop-by-hop is not the first), too-many-ipv6-ext (more than
//            8 extension headers), too-many-vlan-tags (more than 3 VLAN tags), alert (DROP
//            true, output 1 not connected: IPS mode).
// Uses:      nothing.  Sets: nothing.
// Counters:  alerts (rule matches), packets_alerted, bytes_scanned (IP payload bytes),
//            prefilter_hits (content occurrences within offset/depth), rules_evaluated,
//            regex_scans, scan_errors (Hyperscan failures), log_errors (failed log writes),
//            alerts_lost (alerts not written: the run reports them and exits with status 4),
//            threshold_evictions, flow_evictions (threshold entries, flows with flowbits or
//            flow state replaced in the full per-worker tables); TCP stream reassembly:
//            stream_bytes (bytes that became contiguous and were inspected as stream),
//            stream_segments_held (segments held out of order), stream_segments_dropped
//            (segments past the out-of-order window or after a gap: inspected as packets),
//            stream_held_bytes_dropped (held bytes discarded at a gap), stream_gaps (stream
//            directions that met a gap and stopped reassembling), stream_retransmissions
//            (segments with no new byte), stream_evictions (streams replaced in the full table).
// Offload:   none in this element; IDSMatchOffload runs the content prefilter (this DFA) on a
//            device and the rest of the matching here; the DFA is a flat table
//            (AhoCorasick::table/classes/out_begin/out_ids) ready to be copied to a device.
//
// Reload: the rule file can be replaced while the run goes on (hot reload); a worker adopts the
// new rules between batches (its matcher is rebuilt then; counters go on from where they were;
// threshold and flowbits state starts afresh).
//
// Streams (STREAM true, the default): tcp rules with contents or pcres inspect each TCP
// direction's reassembled stream, so a content split over segments (in order or not) matches,
// once, on the packet that completes it; offset and depth count from the stream's start;
// flow:no_stream rules inspect packets, flow:only_stream rules the stream only (docs/ids.md,
// "Streams"). STREAM false inspects every packet on its own (only_stream rules never match).
//
// State: threshold and detection_filter counts, flowbits, the flow keyword's state (client
// end, TCP handshake) and the TCP streams are per worker (docs/ids.md: a source whose flows RSS
// spreads over several workers is counted on each separately; a flow stays on one worker), in
// tables of ids::StateLimits entries with LRU eviction; windows and flow timeouts are timed with
// the worker's TSC, read once a batch and only when the rules have thresholds, flowbits or flow
// conditions.
//
// Per batch: parse every frame into a PacketView, match the views in groups of four
// (interleaved DFA walks with ENGINE ac), then write alerts and verdicts. The packet index in
// alert records counts every packet this element saw on its worker, dropped ones included.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/element.hh"
#include "core/location.hh"
#include "core/registry.hh"
#include "core/table_slot.hh"
#include "lib/ids/alert_log.hh"
#include "lib/ids/rule_engine.hh"

namespace fulcrum {

class IDSMatch final : public ElementBase<IDSMatch> {
 public:
  static constexpr DropReasons kDropReasons{
      "not-ip",       "truncated",         "bad-l4-header",      "bad-udp-length",
      "bad-ipv6-ext", "too-many-ipv6-ext", "too-many-vlan-tags", "alert"};
  static constexpr int kAlertOutput = 1;
  static constexpr ElementTraits kTraits{.class_name = "IDSMatch",
                                         .inputs = 1,
                                         .outputs = 2,
                                         .drop_reasons = kDropReasons,
                                         .optional_outputs = 1u << kAlertOutput,
                                         .reads = PacketReads::kWholeFrameAhead};
  static constexpr std::string_view kRulesHelp =
      "rule file (docs/ids.md); loaded and compiled once per process and shared by the workers "
      "and by IDSMatchOffload on the same file";
  static constexpr std::string_view kAlertsHelp =
      "alert log, JSON lines (src/lib/ids/alert_log.hh; its format: ALERT_FORMAT); with more "
      "than one worker, worker W writes ALERTS.W";
  static constexpr std::string_view kAlertFormatHelp =
      "fulcrum (one {sid, msg, packet, flow} object a line) or eve (Suricata's EVE JSON alert "
      "records, for tools that read eve.json)";
  static constexpr std::string_view kDropHelp =
      "drop alerted packets when output 1 is not connected";
  static constexpr std::string_view kThresholdsHelp =
      "threshold/detection_filter entries (rule, tracked address) per worker, 72 bytes each, "
      "allocated only when a rule has a threshold; the least recently used one of a full bucket "
      "is replaced (docs/ids.md)";
  static constexpr std::string_view kFlowsHelp =
      "flows with flowbits or flow state per worker, 80 bytes each plus 8 per 64 flowbit names, "
      "allocated only when a rule uses flowbits or flow:established/to_server/...; the least "
      "recently used one of a full bucket is replaced";
  static constexpr std::string_view kFlowTimeoutHelp =
      "seconds after which a flow no flowbits rule looked at starts again with no bit set, and a "
      "flow without a packet starts afresh (flow: rules)";
  static constexpr std::string_view kStreamHelp =
      "reassemble TCP streams: tcp rules with contents or pcres inspect each direction's stream "
      "(a content split over segments matches); false: every packet on its own";
  static constexpr std::string_view kStreamsHelp =
      "TCP streams per worker (both directions of a connection), each 2 x (lookback + "
      "STREAM_OOO + STREAM_OOO/8) bytes plus 64, allocated only when STREAM is true and a rule "
      "inspects streams; the least recently used one of a full bucket is replaced";
  static constexpr std::string_view kStreamLookbackHelp =
      "at most this many bytes of each stream direction kept to find a match that spans "
      "segments (the rule set's longest match span when it is shorter: its longest content, "
      "offset + depth, a within chain)";
  static constexpr std::string_view kStreamOooHelp =
      "out-of-order bytes held per stream direction (rounded up to a power of two); a segment "
      "ending further past the next expected byte is a gap: the direction is inspected per "
      "packet from then on";
  static constexpr uint32_t kMaxStateEntries = 1u << 24;
  static constexpr uint32_t kMaxStreamBytes = 1u << 20;

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  TableSlotBase* table_slot() override { return follow_reloads_ ? slot_.get() : nullptr; }
  // Keeps the rules loaded at initialize() for good (IDSMatchOffload: its device DFA is built
  // from them).
  void pin_rules() { follow_reloads_ = false; }
  void counters(std::vector<Counter>& out) const override;
  void finish() override {
    if (log_) log_->flush();
  }
  void output_losses(std::vector<OutputLoss>& out) const override;

  void process_batch(PacketBatch& batch) override {
    ids::PacketView* views = views_.data();
    uint16_t slot[kMaxBatch];
    uint64_t index[kMaxBatch];
    bool alerted[kMaxBatch];
    uint32_t n = 0;
    Verdict* results = batch.results();
    if (follow_reloads_ && slot_->current() != adopted_) [[unlikely]]
      adopt(slot_->current());
    if (rules_->stateful()) [[unlikely]]
      matcher_->set_time(clock_());
    batch.for_each([&](uint32_t i, Packet* p) {
      const uint64_t idx = seen_++;
      views[n] = ids::PacketView{};  // only the batch's packets: not kMaxBatch views each time
      const ids::ParseResult r = ids::parse_packet(data(p), length(p), views[n]);
      if (r != ids::ParseResult::kOk) [[unlikely]] {
        results[i] = Verdict::drop(drop_reason(r));
        return;
      }
      index[n] = idx;
      alerted[n] = false;
      slot[n++] = static_cast<uint16_t>(i);
    });
    matcher_->match_batch(views, n, [&](uint32_t k, uint32_t rule) {
      ++alerts_;
      alerted[k] = true;
      if (log_) {
        const ids::Rule& r = rules_->rules()[rule];
        log_->write(r, index[k], views[k]);
      }
    });
    for (uint32_t k = 0; k < n; ++k) {
      if (!alerted[k]) [[likely]] {
        results[slot[k]] = Verdict::out(0);
        continue;
      }
      ++packets_alerted_;
      results[slot[k]] = alerted_verdict_;
    }
  }

  // One packet whose content prefilter ran elsewhere (IDSMatchOffload: the DFA on a device).
  // hits(view, out) fills out with the occurrences over the view's IP payload, in scan order,
  // or returns false when they must be found here (the device's result overflowed). Counts,
  // logs and decides as process_batch does; the packet takes the next packet index.
  template <class Hits>
  Verdict process_prefiltered(Packet* p, Hits&& hits) {
    const uint64_t idx = seen_++;
    ids::PacketView v;
    const ids::ParseResult r = ids::parse_packet(data(p), length(p), v);
    if (r != ids::ParseResult::kOk) [[unlikely]]
      return Verdict::drop(drop_reason(r));
    bool alerted = false;
    auto on_rule = [&](uint32_t rule) {
      ++alerts_;
      alerted = true;
      if (log_) {
        const ids::Rule& rl = rules_->rules()[rule];
        log_->write(rl, idx, v);
      }
    };
    hits_.clear();
    if (rules_->stateful()) [[unlikely]]
      matcher_->set_time(clock_());
    if (hits(v, hits_))
      matcher_->match_prefiltered(v, hits_, on_rule);
    else
      matcher_->match_batch(&v, 1, [&](uint32_t, uint32_t rule) { on_rule(rule); });
    if (!alerted) [[likely]]
      return Verdict::out(0);
    ++packets_alerted_;
    return alerted_verdict_;
  }

  const ids::Matcher& matcher() const { return *matcher_; }
  // The clock of threshold windows and flow timeouts, in nanoseconds; the worker's TSC by
  // default. Tests set one.
  void set_clock(std::function<uint64_t()> clock) { clock_ = std::move(clock); }
  const ids::RuleSet& rules() const { return *rules_; }
  const std::string& rules_file() const { return rules_file_; }

 private:
  // "ids (IDSMatch): FILE: N rules loaded, M skipped (byte_test 3, ...); first skipped: ...".
  // `element` is the element's name.
  static std::string skipped_note(const std::string& element, const std::string& file,
                                  size_t loaded, std::vector<ids::SkippedRule> skipped);
  // The rules a slot holds, with the note on skipped rules of their first load.
  struct Rules {
    std::shared_ptr<const ids::RuleSet> set;
    std::string note;
  };
  static Result<std::shared_ptr<Rules>> load_rules(const std::string& file, bool strict,
                                                   const std::string& element);
  // Takes the rules in service: a new matcher (the old one's counts are kept).
  void adopt(const Rules* rules);
  static int drop_reason(ids::ParseResult r) {
    switch (r) {
      case ids::ParseResult::kNotIp:
        return kDropReasons["not-ip"];
      case ids::ParseResult::kBadL4Header:
        return kDropReasons["bad-l4-header"];
      case ids::ParseResult::kBadUdpLength:
        return kDropReasons["bad-udp-length"];
      case ids::ParseResult::kBadIpv6Ext:
        return kDropReasons["bad-ipv6-ext"];
      case ids::ParseResult::kTooManyIpv6Ext:
        return kDropReasons["too-many-ipv6-ext"];
      case ids::ParseResult::kTooManyVlanTags:
        return kDropReasons["too-many-vlan-tags"];
      case ids::ParseResult::kTruncated:
      case ids::ParseResult::kOk:
        break;
    }
    return kDropReasons["truncated"];
  }
  static_assert(ids::kMaxIpv6ExtHeaders == 8 && ids::kMaxVlanTags == 3,
                "the drop reasons above name these limits");

  std::string rules_file_;
  std::string engine_name_ = "hyperscan";
  std::string alerts_file_;
  std::string alert_format_ = "fulcrum";
  bool drop_ = false;
  SourceLoc loc_;
  ids::Engine engine_ = ids::Engine::kHyperscan;
  ids::StateLimits limits_{.stream = true};  // STREAM: on by default, as Suricata
  Verdict alerted_verdict_ = Verdict::out(0);
  std::shared_ptr<TableSlot<Rules>> slot_;
  const Rules* adopted_ = nullptr;  // the slot's rules rules_ comes from
  bool follow_reloads_ = true;
  std::shared_ptr<const ids::RuleSet> rules_;
  std::unique_ptr<ids::Matcher> matcher_;
  ids::MatchStats retired_;  // counts of matchers replaced by reloads
  uint64_t adopt_errors_ = 0;
  std::unique_ptr<ids::AlertLog> log_;
  std::vector<ids::Matcher::Hit> hits_;  // process_prefiltered's occurrences
  std::function<uint64_t()> clock_;
  // process_batch's views, a member so that a batch does not construct kMaxBatch of them.
  alignas(64) std::array<ids::PacketView, kMaxBatch> views_{};
  uint64_t seen_ = 0;
  uint64_t alerts_ = 0;
  uint64_t packets_alerted_ = 0;
};

FULCRUM_REGISTER_ELEMENT(IDSMatch);

}  // namespace fulcrum
