// The rule engine: rules compiled once (RuleSet, shared read-only by every worker) and matched
// per worker (Matcher: Hyperscan scratch and per-packet bookkeeping).
//
// Matching one packet (semantics in docs/ids.md):
//   1. prefilter: every content of every rule (positive and negated) is a literal of one
//      multi-pattern scan over the IP payload, with our Aho-Corasick DFA (Engine::kAhoCorasick,
//      caseless, case-sensitive contents verified by memcmp) or Hyperscan (Engine::kHyperscan,
//      exact); each occurrence is checked against its content's domain, offset and depth;
//   2. candidates: rules with an occurrence of a positive content, plus rules without positive
//      contents;
//   3. each candidate, in rules() order (the file's, flowbits rules first: RuleSet::compile):
//   protocol, addresses, ports (either direction for
//      `<>`), every positive content found, no negated content found, every pcre matching its
//      domain (one Hyperscan scan per domain and packet, only when a candidate needs it). A rule
//      with relative contents (distance, within) is a candidate when its positive contents
//      occur anywhere (the prefilter stays a prefilter); its contents are then searched again
//      in the domain as Suricata's recursive content inspection does, the next occurrence of a
//      content tried when the following content has `within` and the rest failed;
//   4. a matching rule with flowbits, noalert or a threshold (RuleRef::stateful) goes through
//      stateful_alert; other rules cost one flag test, and no flow or threshold table is read.
// With `flow:` rules, each packet's flow state (direction, established) is updated before its
// rules are evaluated (update_flow), and a rule's flow conditions are tested with its header.
// With stream reassembly (StateLimits::stream), a TCP segment first goes through the worker's
// StreamTable; tcp rules with contents or pcres (RuleRef::inspect) then inspect the window it
// returns (the lookback, then the bytes the segment made contiguous): a second prefilter scan of
// the window, and a rule alerts when it matches the window with a part of the match ending in
// the new bytes (a positive content's occurrence, the last content of a relative chain, or a
// pcre that matches the window but not the lookback alone): the packet completed the match
// (docs/ids.md, "Streams").
// Packets are matched in groups of AhoCorasick::kLanes so the DFA walks of a group interleave
// (Engine::kAhoCorasick), or of kScanGroup whose short payloads Hyperscan scans in one call
// (Engine::kHyperscan: prefilter_hyperscan).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/packet_reads.hh"
#include "core/result.hh"
#include "lib/ids/aho_corasick.hh"
#include "lib/ids/flow_bits.hh"
#include "lib/ids/hs_matcher.hh"
#include "lib/ids/packet_view.hh"
#include "lib/ids/rule.hh"
#include "lib/ids/stream.hh"
#include "lib/ids/threshold.hh"

namespace fulcrum::ids {

enum class Engine : uint8_t { kHyperscan, kAhoCorasick };

// Where a rule's contents and pcres look: the L4 payload (tcp, udp) or the IP payload (ip, icmp).
enum Domain : uint8_t { kDomainL4 = 0, kDomainIp = 1, kDomains = 2 };

class RuleSet {
 public:
  struct ContentRef {
    std::string bytes;
    uint32_t rule = 0;
    uint32_t offset = 0;
    uint32_t depth = 0;
    bool nocase = false;
    bool negated = false;
    Domain domain = kDomainL4;
    bool relative = false;  // distance or within (rule.hh's Content)
    bool has_distance = false, has_within = false, within_next = false;
    int32_t distance = 0, within = 0;
  };
  struct RuleRef {
    uint32_t first_content = 0, contents = 0;
    uint32_t first_pcre = 0, pcres = 0;
    Domain domain = kDomainL4;
    // Some content is relative: the contents are verified by inspect_contents (Suricata's
    // recursive content inspection) instead of one window test each.
    bool chained = false;
    // A threshold, detection_filter or flowbits decide whether a match alerts
    // (Matcher::stateful_alert).
    bool stateful = false;
    uint32_t first_flowbit = 0, flowbits = 0;  // in flowbits()
    // flow: conditions, kFlow* bits the packet's flow flags (Matcher::update_flow) must hold.
    uint8_t flow = 0;
    // What the rule's contents and pcres inspect (kInspect*).
    uint8_t inspect = 0;
    uint32_t last_positive = UINT32_MAX;  // its last positive content (contents() index)
  };
  // kInspectPacket: each packet's payload (udp, icmp, ip rules; tcp rules without contents and
  // pcres or with flow:no_stream). The others are tcp rules with contents or pcres: on a segment
  // taken into a reassembled stream they inspect the stream's window (docs/ids.md), on a packet
  // not taken (stream reassembly off, after a gap, a RST) its payload; kInspectStreamAndPacket
  // (some content has offset or depth: Suricata's SIG_FLAG_REQUIRE_PACKET) also its payload when
  // the window does not match; kInspectStreamOnly (flow:only_stream) the window only.
  static constexpr uint8_t kInspectPacket = 0, kInspectStream = 1, kInspectStreamAndPacket = 2,
                           kInspectStreamOnly = 3;
  // A packet's flow flags, and a rule's flow conditions: the bits it needs.
  static constexpr uint8_t kFlowHas = 1;  // part of a flow (not a non-first fragment)
  static constexpr uint8_t kFlowToServer = 2, kFlowToClient = 4;
  static constexpr uint8_t kFlowEstablished = 8, kFlowNotEstablished = 16;
  struct FlowbitRef {
    FlowbitCmd cmd = FlowbitCmd::kSet;
    uint32_t bit = 0;  // the name's index
  };

  // Orders the rules as Suricata evaluates them when some use flowbits (rules that only set
  // flowbits, then those that set and read, then those that read, each by sid; then the others
  // in file order), so that a bit set by a rule is seen by the rules after it on the same
  // packet. Compiles the rules: the DFA, the Hyperscan literal database and one regex database per
  // domain. A rule with a pcre Hyperscan does not support (backreferences, lookbehind of
  // variable length, an anchor inside the pattern...) fails the compile, naming the rule's sid;
  // with `skipped`, it is left out and listed there instead (feature "pcre: Hyperscan").
  static Result<std::shared_ptr<RuleSet>> compile(std::vector<Rule> rules,
                                                  std::vector<SkippedRule>* skipped = nullptr);

  const std::vector<Rule>& rules() const { return rules_; }
  const std::vector<RuleRef>& refs() const { return refs_; }
  const std::vector<ContentRef>& contents() const { return contents_; }
  // Rules with no positive content: candidates for every packet.
  const std::vector<uint32_t>& always() const { return always_; }
  const AhoCorasick& ac() const { return ac_; }
  const hs_database_t* literal_db() const { return literal_db_.get(); }
  const hs_database_t* regex_db(Domain d) const { return regex_db_[d].get(); }
  uint32_t pcres() const { return pcres_; }
  // Some rule keeps state between packets (threshold, detection_filter, flowbits): the Matcher
  // needs the time (Matcher::set_time) and keeps per-worker tables.
  bool stateful() const { return stateful_; }
  bool thresholds() const { return thresholds_; }  // some rule has a threshold
  const std::vector<FlowbitRef>& flowbits() const { return flowbits_; }
  // Some rule has flow: (each packet's flow flags are needed); some needs the flow state (a
  // direction or established: the flow table is updated for every packet).
  bool flow_rules() const { return flow_rules_; }
  bool flow_state() const { return flow_state_; }
  uint32_t flowbit_names() const { return flowbit_names_; }
  // Some rule inspects TCP streams (RuleRef::inspect); the bytes of a stream one match of such a
  // rule can span (its longest content; offset + depth; a chain of `within`s), the largest over
  // the rules, UINT32_MAX when a rule's is unbounded (a pcre, independent contents): the stream
  // lookback needed for a match split over segments to be found (capped by
  // StateLimits::stream_lookback).
  bool stream_rules() const { return stream_rules_; }
  uint32_t stream_span() const { return stream_span_; }

  // Whether rule `r`'s header (protocol, addresses, ports) matches the packet.
  static bool header_matches(const Rule& r, const PacketView& v) {
    switch (r.proto) {
      case Proto::kTcp:
        if (v.proto != kIpProtoTcp || v.fragment) return false;
        break;
      case Proto::kUdp:
        if (v.proto != kIpProtoUdp || v.fragment) return false;
        break;
      case Proto::kIcmp:
        if ((v.proto != kIpProtoIcmp && v.proto != kIpProtoIcmpv6) || v.fragment) return false;
        break;
      case Proto::kIcmpv4:
        if (v.proto != kIpProtoIcmp || v.fragment) return false;
        break;
      case Proto::kIcmpv6:
        if (v.proto != kIpProtoIcmpv6 || v.fragment) return false;
        break;
      case Proto::kIp:
        break;
    }
    if (!v.ipv6()) [[likely]]
      return addresses_match(r, v.src, v.dst, v);
    return addresses_match(r, v.src6(), v.dst6(), v);
  }

 private:
  // The addresses and ports of `r` against the packet's, either way round for `<>`.
  template <class Addr>
  static bool addresses_match(const Rule& r, const Addr& src, const Addr& dst,
                              const PacketView& v) {
    auto one_way = [&r](const Addr& s, uint16_t sp, const Addr& d, uint16_t dp) {
      return r.src.contains(s) && r.dst.contains(d) && r.sport.contains(sp) && r.dport.contains(dp);
    };
    return one_way(src, v.sport, dst, v.dport) ||
           (r.bidirectional && one_way(dst, v.dport, src, v.sport));
  }

  std::vector<Rule> rules_;
  std::vector<RuleRef> refs_;
  std::vector<ContentRef> contents_;
  std::vector<uint32_t> always_;
  AhoCorasick ac_{/*caseless=*/true};
  HsDatabase literal_db_;
  HsDatabase regex_db_[kDomains];
  std::vector<Domain> pcre_domain_;
  uint32_t pcres_ = 0;
  bool stateful_ = false;
  bool thresholds_ = false;
  bool flow_rules_ = false;
  bool flow_state_ = false;
  std::vector<FlowbitRef> flowbits_;
  uint32_t flowbit_names_ = 0;
  bool stream_rules_ = false;
  uint32_t stream_span_ = 0;
};

struct MatchStats {
  uint64_t packets = 0;
  uint64_t bytes = 0;                // IP payload bytes scanned
  uint64_t hits = 0;                 // prefilter occurrences within their content's constraints
  uint64_t candidates = 0;           // rules evaluated
  uint64_t regex_scans = 0;          // Hyperscan regex scans
  uint64_t errors = 0;               // Hyperscan scan failures (none expected)
  uint64_t threshold_evictions = 0;  // threshold entries replaced in a full table bucket
  uint64_t flow_evictions = 0;       // flows (and their flowbits) replaced in a full bucket
  StreamStats stream;                // TCP stream reassembly (StreamTable)

  MatchStats& operator+=(const MatchStats& o) {
    stream.bytes += o.stream.bytes;
    stream.segments_held += o.stream.segments_held;
    stream.segments_dropped += o.stream.segments_dropped;
    stream.held_bytes_dropped += o.stream.held_bytes_dropped;
    stream.gaps += o.stream.gaps;
    stream.retransmissions += o.stream.retransmissions;
    stream.evictions += o.stream.evictions;
    packets += o.packets;
    bytes += o.bytes;
    hits += o.hits;
    candidates += o.candidates;
    regex_scans += o.regex_scans;
    errors += o.errors;
    threshold_evictions += o.threshold_evictions;
    flow_evictions += o.flow_evictions;
    return *this;
  }
};

// The per-worker state tables' sizes (entries; each rounded up to a power of two).
struct StateLimits {
  static constexpr uint32_t kDefaultThresholds = 1u << 16;
  static constexpr uint32_t kDefaultFlows = 1u << 16;
  static constexpr uint32_t kDefaultFlowTimeoutS = 600;
  static constexpr uint32_t kDefaultStreams = 1u << 12;
  static constexpr uint32_t kDefaultStreamLookback = 1024;
  static constexpr uint32_t kDefaultStreamOoo = 2048;
  uint32_t thresholds = kDefaultThresholds;  // (rule, tracked address) threshold entries
  uint32_t flows = kDefaultFlows;            // flows with flowbits or flow state
  // TCP stream reassembly (StreamTable), used when some rule inspects streams: off here, on in
  // IDSMatch (its STREAM key). `streams` TCP flows; each direction keeps the last
  // min(stream_lookback, RuleSet::stream_span()) bytes and holds up to stream_ooo bytes out of
  // order.
  bool stream = false;
  uint32_t streams = kDefaultStreams;
  uint32_t stream_lookback = kDefaultStreamLookback;
  uint32_t stream_ooo = kDefaultStreamOoo;
  // A flow no flowbits rule looked at for longer starts with no bits set; a flow without a
  // packet for longer starts afresh (flow state: its next packet's sender is the client).
  uint32_t flow_timeout_s = kDefaultFlowTimeoutS;
};

class Matcher {
 public:
  static Result<std::unique_ptr<Matcher>> create(std::shared_ptr<const RuleSet> rules,
                                                 Engine engine, StateLimits limits = {});

  // The time of the packets matched next, in nanoseconds (any epoch; it must not go back):
  // threshold windows are measured with it. Only needed when rules().stateful().
  void set_time(uint64_t now_ns) { now_ns_ = now_ns; }

  // Engine::kHyperscan: payloads of at most kJoinBytes are scanned kScanGroup at a time in one
  // call (prefilter_hyperscan).
  static constexpr uint32_t kScanGroup = 64;
  static constexpr uint32_t kJoinBytes = 256;

  // Matches views[0, n); on_alert(k, rule_index) for every rule matching packet k, in packet
  // order, then rules() order.
  template <class OnAlert>
  void match_batch(const PacketView* views, uint32_t n, OnAlert&& on_alert) {
    if (engine_ == Engine::kHyperscan) {
      for (uint32_t k = 0; k < n; k += kScanGroup) {
        const uint32_t group = std::min(kScanGroup, n - k);
        prefilter_hyperscan(views + k, group);
        for (uint32_t l = 0; l < group; ++l)
          evaluate(views[k + l], group_hits_[l], [&](uint32_t rule) { on_alert(k + l, rule); });
      }
      return;
    }
    for (uint32_t k = 0; k < n; k += AhoCorasick::kLanes) {
      const uint32_t lanes = std::min(AhoCorasick::kLanes, n - k);
      prefilter(views + k, lanes);
      for (uint32_t l = 0; l < lanes; ++l)
        evaluate(views[k + l], hits_[l], [&](uint32_t rule) { on_alert(k + l, rule); });
    }
  }

  // A prefilter occurrence: content index, offset one past its end in the IP payload.
  struct Hit {
    uint32_t content;
    uint32_t end;
  };

  // Matches one packet whose prefilter ran elsewhere (the ENGINE ac DFA on a device,
  // IDSMatchOffload): `hits` are the DFA's occurrences over v.ip_payload, in scan order.
  template <class OnAlert>
  void match_prefiltered(const PacketView& v, const std::vector<Hit>& hits, OnAlert&& on_alert) {
    ++stats_.packets;
    stats_.bytes += v.ip_payload_len;
    evaluate(v, hits, [&](uint32_t rule) { on_alert(rule); });
  }

  const MatchStats& stats() const {
    stats_.threshold_evictions = thresholds_.evictions();
    stats_.flow_evictions = flows_.evictions();
    stats_.stream = streams_.stats();
    return stats_;
  }
  // Whether TCP segments are reassembled (StateLimits::stream and some rule inspects streams),
  // and the lookback each stream direction keeps.
  bool streaming() const { return streams_.enabled(); }
  uint32_t stream_lookback() const { return streams_.lookback(); }
  Engine engine() const { return engine_; }
  const RuleSet& rules() const { return *rules_; }

 private:
  Matcher(std::shared_ptr<const RuleSet> rules, Engine engine, StateLimits limits);

  // Hyperscan's prefilter over views[0, n) (n <= kScanGroup) into group_hits_: with n > 1, the
  // payloads of at most kJoinBytes are copied end to end and scanned in one hs_scan call (its
  // fixed cost per call is about twice the scan of a 30-byte payload), each occurrence given to
  // the payload it lies in and dropped when it starts in the one before; longer payloads, and a
  // single one, are scanned alone.
  void prefilter_hyperscan(const PacketView* v, uint32_t n);
  // The scan reads a payload line after line, each a miss when the frame was written on another
  // core (a pipelined cut, a NIC's DMA into the LLC): prefilter_hyperscan asks for the payload
  // kWholeFrameReadAhead packets ahead, its first kPayloadPrefetchLines lines.
  static constexpr uint32_t kPayloadPrefetchLines = 24;
  static void prefetch_payload(const PacketView& v);
  void prefilter(const PacketView* v, uint32_t lanes) {
    for (uint32_t l = 0; l < lanes; ++l) {
      hits_[l].clear();
      stats_.bytes += v[l].ip_payload_len;
    }
    stats_.packets += lanes;
    if (rules_->contents().empty()) return;
    if (engine_ == Engine::kAhoCorasick) {
      const uint8_t* data[AhoCorasick::kLanes];
      uint32_t len[AhoCorasick::kLanes];
      for (uint32_t l = 0; l < lanes; ++l) {
        data[l] = v[l].ip_payload;
        len[l] = v[l].ip_payload_len;
      }
      rules_->ac().scan_lanes(data, len, lanes, [this](uint32_t l, uint32_t id, uint32_t end) {
        hits_[l].push_back({id, end});
      });
    } else {
      for (uint32_t l = 0; l < lanes; ++l) {
        std::vector<Hit>& h = hits_[l];
        if (!hs_scan_block(rules_->literal_db(), scratch_.get(), v[l].ip_payload,
                           v[l].ip_payload_len, [&h](uint32_t id, uint32_t end) {
                             h.push_back({id, end});
                           }))
          ++stats_.errors;
      }
    }
  }

  // Whether occurrence `h` of its content is one the rule counts.
  bool hit_counts(const PacketView& v, const Hit& h) const {
    const RuleSet::ContentRef& c = rules_->contents()[h.content];
    const uint32_t n = static_cast<uint32_t>(c.bytes.size());
    const uint32_t base = c.domain == kDomainL4 ? v.l4_hdr_len : 0;
    if (h.end < base + n) return false;
    const uint32_t rel = h.end - n - base;
    if (rel < c.offset || (c.depth != 0 && rel + n > c.offset + c.depth)) return false;
    if (engine_ == Engine::kAhoCorasick && !c.nocase)  // the DFA matched caselessly
      return std::memcmp(v.ip_payload + h.end - n, c.bytes.data(), n) == 0;
    return true;
  }

  // Whether occurrence `h` in the stream window `buf` (whose first byte is at stream offset
  // `origin`) is one a stream-inspecting rule counts: offset and depth are stream offsets.
  bool window_hit_counts(const Hit& h, const uint8_t* buf, uint64_t origin) const {
    const RuleSet::ContentRef& c = rules_->contents()[h.content];
    if (rules_->refs()[c.rule].inspect == RuleSet::kInspectPacket) return false;
    const auto n = static_cast<uint32_t>(c.bytes.size());
    if (h.end < n) return false;
    const uint64_t rel = origin + h.end - n;
    if (rel < c.offset || (c.depth != 0 && rel + n > uint64_t{c.offset} + c.depth)) return false;
    if (engine_ == Engine::kAhoCorasick && !c.nocase)
      return std::memcmp(buf + h.end - n, c.bytes.data(), n) == 0;
    return true;
  }

  template <class OnRule>
  void evaluate(const PacketView& v, const std::vector<Hit>& hits, OnRule&& on_rule) {
    next_generation();
    if (rules_->flow_rules()) [[unlikely]]
      update_flow(v);
    candidates_.clear();
    stream_taken_ = false;
    if (v.proto == kIpProtoTcp && streams_.enabled() && !v.fragment) [[unlikely]]
      stream_segment(v);
    const auto& contents = rules_->contents();
    for (const Hit& h : hits) {
      if (content_gen_[h.content] == gen_ || !hit_counts(v, h)) continue;
      ++stats_.hits;
      content_gen_[h.content] = gen_;
      const RuleSet::ContentRef& c = contents[h.content];
      if (!c.negated && rule_gen_[c.rule] != gen_) {
        rule_gen_[c.rule] = gen_;
        candidates_.push_back(c.rule);
      }
    }
    if (!rules_->always().empty()) {
      candidates_.insert(candidates_.end(), rules_->always().begin(), rules_->always().end());
      std::sort(candidates_.begin(), candidates_.end());
    } else if (candidates_.size() > 1) {
      std::sort(candidates_.begin(), candidates_.end());
    }
    const auto& refs = rules_->refs();
    for (uint32_t r : candidates_) {
      ++stats_.candidates;
      const uint8_t inspect = refs[r].inspect;
      if (inspect == RuleSet::kInspectPacket || !stream_taken_) [[likely]] {
        if (inspect == RuleSet::kInspectStreamOnly || !rule_matches(r, v)) continue;
      } else if (!stream_rule_matches(r, v)) {
        continue;
      }
      if (refs[r].stateful && !stateful_alert(r, v)) [[unlikely]]
        continue;
      on_rule(r);
    }
  }

  bool rule_matches(uint32_t r, const PacketView& v);
  // Rule r's header and flow conditions against the packet.
  bool header_and_flow(uint32_t r, const PacketView& v) const;
  // Rule r's contents and pcres over buf[0, len), a domain whose first byte is at stream offset
  // `origin` (0 for a packet): `cgen` the contents found there (gen_), `pgen` and `rgen` the
  // pcre marks and whether the domain's regexes were scanned.
  bool payload_matches(uint32_t r, const uint8_t* buf, uint32_t len, uint64_t origin,
                       const uint32_t* cgen, uint32_t* pgen, uint32_t& rgen);
  // A stream-inspecting rule on a segment taken into its stream: it matches the window with a
  // part ending in the new bytes (or, kInspectStreamAndPacket, the packet's payload).
  bool stream_rule_matches(uint32_t r, const PacketView& v);
  // The contents and pcres of `ref` over the stream window, a part ending in its new bytes.
  bool window_matches(const RuleSet::RuleRef& ref);
  // The segment into the stream table; on new data, the window's prefilter scan: its
  // occurrences marked (win_content_gen_) and their rules made candidates.
  void stream_segment(const PacketView& v);
  // After rule r's header, contents and pcres matched the packet: its flowbits conditions, then
  // its flowbits actions, noalert and threshold (Suricata's order): whether it alerts.
  bool stateful_alert(uint32_t r, const PacketView& v);
  // The packet's flow's bits (looked up once a packet, on the first flowbits rule).
  uint64_t* flow_bits(const PacketView& v);
  // The packet's flow entry, looked up once a packet (a fresh entry's bits cleared);
  // `src_first` receives whether the packet's source is the key's first end.
  FlowEntry& packet_flow(const PacketView& v, bool& src_first);
  // Updates the packet's flow state (before its rules are evaluated, as Suricata's flow and
  // stream engines run before detection) and sets flow_flags_ (RuleSet::kFlow*).
  void update_flow(const PacketView& v);
  // Suricata's recursive content inspection of the contents [c, end) of one rule over its domain
  // buf[0, len): 1 match, 0 no match, -1 no match and stop (DetectEngineContentInspection).
  // `buffer_offset` is the end of the last positive match (relative contents start from it);
  // `calls` counts the recursion against kInspectionRecursionLimit.
  // `origin`: the stream offset of buf[0] (absolute contents' offset and depth count from the
  // stream's start); `last` and `min_end`: content `last`'s occurrence must end past
  // buf[min_end] (the window's new bytes; 0: anywhere).
  int inspect_contents(uint32_t c, uint32_t end, const uint8_t* buf, uint32_t len, uint64_t origin,
                       uint32_t last, uint32_t min_end, uint32_t& buffer_offset,
                       uint32_t& calls) const;
  // A new stamp for the per-packet marks (content_gen_, rule_gen_, pcre_gen_, regex_gen_);
  // on wrap-around every mark is cleared so that no stale one reads as current.
  void next_generation();

  std::shared_ptr<const RuleSet> rules_;
  Engine engine_;
  HsScratch scratch_;
  uint32_t gen_ = 0;
  std::vector<uint32_t> content_gen_;
  std::vector<uint32_t> rule_gen_;
  std::vector<uint32_t> pcre_gen_;
  uint32_t regex_gen_[kDomains] = {};
  std::vector<uint32_t> candidates_;
  std::vector<Hit> hits_[AhoCorasick::kLanes];
  // The Hyperscan prefilter's groups: occurrences per packet, the joined payloads and where
  // each one starts in them (the packet's index in the group beside it).
  std::vector<Hit> group_hits_[kScanGroup];
  std::vector<uint8_t> joined_;
  uint32_t join_start_[kScanGroup + 1] = {};
  uint32_t join_packet_[kScanGroup] = {};
  std::vector<uint32_t> content_len_;  // bytes of each content
  mutable MatchStats stats_;
  uint64_t now_ns_ = 0;
  BoundedTable<TrackKey, ThresholdEntry> thresholds_;
  BoundedTable<FlowKey, FlowEntry> flows_;
  uint64_t flow_timeout_ns_ = 0;
  uint32_t bit_words_ = 0;      // 64-bit words of flowbits a flow
  std::vector<uint64_t> bits_;  // flows_.capacity() × bit_words_
  uint32_t flow_gen_ = 0;       // gen_ of the packet packet_flow_ and packet_bits_ belong to
  FlowEntry* packet_flow_ = nullptr;
  bool packet_src_first_ = false;
  uint64_t* packet_bits_ = nullptr;
  uint32_t bits_gen_ = 0;   // gen_ of the packet whose bits' timeout was checked
  uint8_t flow_flags_ = 0;  // the packet's RuleSet::kFlow* flags (with flow rules)
  // Stream reassembly: the table, whether the packet's segment was taken into a stream and
  // whether it brought new bytes (streams_.window()), the window's occurrences, the contents
  // found in the window and those found ending in its new bytes, the pcres matching the window
  // and its lookback alone (as content_gen_, pcre_gen_, regex_gen_).
  StreamTable streams_;
  bool stream_taken_ = false;
  bool window_ready_ = false;
  std::vector<Hit> window_hits_;
  std::vector<uint32_t> win_content_gen_, new_content_gen_;
  std::vector<uint32_t> win_pcre_gen_, lb_pcre_gen_;
  uint32_t win_regex_gen_ = 0, lb_regex_gen_ = 0;
};

}  // namespace fulcrum::ids
