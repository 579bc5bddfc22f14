#include "lib/ids/rule_engine.hh"

#include <algorithm>
#include <map>
#include <utility>

namespace fulcrum::ids {

namespace {

// Suricata's detect.inspection-recursion-limit default: a content inspection that recurses
// this often gives up (no match).
constexpr uint32_t kInspectionRecursionLimit = 3000;

bool same_byte(uint8_t a, uint8_t b, bool nocase) {
  constexpr uint8_t kCaseBit = 0x20;
  if (a == b) return true;
  if (!nocase || (a | kCaseBit) != (b | kCaseBit)) return false;
  const uint8_t lower = a | kCaseBit;
  return lower >= 'a' && lower <= 'z';
}

// The first occurrence of `needle` in hay[0, len), or -1.
int64_t find_bytes(const uint8_t* hay, uint32_t len, const std::string& needle, bool nocase) {
  const auto* n = reinterpret_cast<const uint8_t*>(needle.data());
  const auto it = std::search(hay, hay + len, n, n + needle.size(),
                              [nocase](uint8_t a, uint8_t b) { return same_byte(a, b, nocase); });
  return it == hay + len ? -1 : it - hay;
}

unsigned hs_flags(const Pcre& p) {
  unsigned flags = 0;
  if (p.caseless) flags |= HS_FLAG_CASELESS;
  if (p.dotall) flags |= HS_FLAG_DOTALL;
  if (p.multiline) flags |= HS_FLAG_MULTILINE;
  return flags;
}

// Suricata's flowbits classes (detect-engine-sigorder.c), evaluated highest first.
enum FlowbitsClass : uint8_t { kNotUsed = 1, kReads = 2, kSetsAndReads = 3, kSets = 4 };

FlowbitsClass flowbits_class(const Rule& r) {
  bool reads = false, writes = false;
  for (const Flowbit& f : r.flowbits) (f.reads() ? reads : writes) = true;
  if (reads && writes) return kSetsAndReads;
  if (writes) return kSets;
  return reads ? kReads : kNotUsed;
}

// The bytes of a stream one match of a stream-inspecting rule spans (RuleSet::stream_span).
uint32_t rule_stream_span(const Rule& r) {
  constexpr uint32_t kUnbounded = UINT32_MAX;
  if (!r.pcres.empty()) return kUnbounded;
  std::vector<const Content*> positive;
  for (const Content& c : r.contents)
    if (!c.negated) positive.push_back(&c);
  if (positive.empty()) return 0;
  const auto len = [](const Content* c) { return static_cast<uint64_t>(c->bytes.size()); };
  if (positive.size() == 1) return static_cast<uint32_t>(len(positive[0]));
  if (std::all_of(positive.begin(), positive.end(),
                  [](const Content* c) { return c->absolute && c->depth != 0; })) {
    uint64_t end = 0;  // every occurrence ends in the stream's first `end` bytes
    for (const Content* c : positive) end = std::max(end, uint64_t{c->offset} + c->depth);
    return static_cast<uint32_t>(std::min<uint64_t>(end, kUnbounded - 1));
  }
  // A chain: each content after the first ends at most distance + within past the one before.
  uint64_t span = len(positive[0]);
  for (size_t k = 1; k < positive.size(); ++k) {
    const Content* c = positive[k];
    if (!c->relative() || !c->has_within) return kUnbounded;
    span += static_cast<uint64_t>(std::max<int64_t>(0, int64_t{c->distance} + c->within));
  }
  return static_cast<uint32_t>(std::min<uint64_t>(span, kUnbounded - 1));
}

}  // namespace

Result<std::shared_ptr<RuleSet>> RuleSet::compile(std::vector<Rule> rules,
                                                  std::vector<SkippedRule>* skipped) {
  auto set = std::make_shared<RuleSet>();
  if (std::any_of(rules.begin(), rules.end(), [](const Rule& r) { return !r.flowbits.empty(); }))
    std::stable_sort(rules.begin(), rules.end(), [](const Rule& a, const Rule& b) {
      const FlowbitsClass ca = flowbits_class(a), cb = flowbits_class(b);
      if (ca != cb) return ca > cb;
      return ca != kNotUsed && a.sid < b.sid;
    });
  // Each regex alone first, so that an error names its rule.
  for (Rule& rule : rules) {
    std::string why;
    for (const Pcre& p : rule.pcres)
      if (Result<HsDatabase> alone = compile_regexes({HsRegex{p.expr, hs_flags(p), 0}}); !alone) {
        why = "sid " + std::to_string(rule.sid) + " (line " + std::to_string(rule.line) +
              "): " + alone.error();
        break;
      }
    if (why.empty()) {
      set->rules_.push_back(std::move(rule));
    } else if (skipped == nullptr) {
      return make_error(why);
    } else {
      skipped->push_back({rule.line, "pcre: Hyperscan", why});
    }
  }
  std::vector<HsLiteral> literals;
  std::vector<HsRegex> regexes[kDomains];
  std::map<std::string, uint32_t> bit_of;
  for (uint32_t r = 0; r < set->rules_.size(); ++r) {
    const Rule& rule = set->rules_[r];
    RuleRef ref;
    ref.domain = rule.proto == Proto::kTcp || rule.proto == Proto::kUdp ? kDomainL4 : kDomainIp;
    ref.first_content = static_cast<uint32_t>(set->contents_.size());
    ref.contents = static_cast<uint32_t>(rule.contents.size());
    ref.first_pcre = set->pcres_;
    ref.pcres = static_cast<uint32_t>(rule.pcres.size());
    ref.chained = rule.relative_contents();
    ref.stateful =
        rule.threshold.type != ThresholdType::kNone || !rule.flowbits.empty() || rule.noalert;
    set->stateful_ |= ref.stateful;
    set->thresholds_ |= rule.threshold.type != ThresholdType::kNone;
    if (rule.flow.given) {
      ref.flow = kFlowHas;
      if (rule.flow.dir == FlowDir::kToServer) ref.flow |= kFlowToServer;
      if (rule.flow.dir == FlowDir::kToClient) ref.flow |= kFlowToClient;
      if (rule.flow.established == FlowEstablished::kEstablished) ref.flow |= kFlowEstablished;
      if (rule.flow.established == FlowEstablished::kNotEstablished)
        ref.flow |= kFlowNotEstablished;
      set->flow_rules_ = true;
      set->flow_state_ |= rule.flow.stateful();
      set->stateful_ |= rule.flow.stateful();  // the flow timeout needs the time
    }
    if (rule.proto == Proto::kTcp && rule.flow.stream != FlowStream::kNoStream &&
        (!rule.contents.empty() || !rule.pcres.empty() ||
         rule.flow.stream == FlowStream::kOnlyStream)) {
      const bool absolute = std::any_of(rule.contents.begin(), rule.contents.end(),
                                        [](const Content& c) { return c.absolute; });
      ref.inspect = rule.flow.stream == FlowStream::kOnlyStream ? kInspectStreamOnly
                    : absolute                                  ? kInspectStreamAndPacket
                                                                : kInspectStream;
      set->stream_rules_ = true;
      set->stream_span_ = std::max(set->stream_span_, rule_stream_span(rule));
    }
    ref.first_flowbit = static_cast<uint32_t>(set->flowbits_.size());
    ref.flowbits = static_cast<uint32_t>(rule.flowbits.size());
    for (const Flowbit& f : rule.flowbits) {
      const auto [it, fresh] = bit_of.emplace(f.name, static_cast<uint32_t>(bit_of.size()));
      set->flowbits_.push_back({f.cmd, it->second});
    }
    bool positive = false;
    for (const Content& c : rule.contents) {
      const uint32_t id = static_cast<uint32_t>(set->contents_.size());
      if (!c.negated) ref.last_positive = id;
      set->contents_.push_back({c.bytes, r, c.offset, c.depth, c.nocase, c.negated, ref.domain,
                                c.relative(), c.has_distance, c.has_within, c.within_next,
                                c.distance, c.within});
      set->ac_.add(c.bytes, id);
      literals.push_back({c.bytes, c.nocase, id});
      positive |= !c.negated;
    }
    for (const Pcre& p : rule.pcres)
      regexes[ref.domain].push_back(HsRegex{p.expr, hs_flags(p), set->pcres_++});
    if (!positive) set->always_.push_back(r);
    set->refs_.push_back(ref);
  }
  set->flowbit_names_ = static_cast<uint32_t>(bit_of.size());
  if (Status s = set->ac_.build(); !s) return make_error(s.error());
  if (!literals.empty()) {
    Result<HsDatabase> db = compile_literals(literals);
    if (!db) return make_error(db.error());
    set->literal_db_ = std::move(db.value());
  }
  for (int d = 0; d < kDomains; ++d) {
    if (regexes[d].empty()) continue;
    Result<HsDatabase> db = compile_regexes(regexes[d]);
    if (!db) return make_error(db.error());
    set->regex_db_[d] = std::move(db.value());
  }
  return set;
}

Matcher::Matcher(std::shared_ptr<const RuleSet> rules, Engine engine, StateLimits limits)
    : rules_(std::move(rules)),
      engine_(engine),
      thresholds_(rules_->thresholds() ? limits.thresholds : 0),
      flows_(rules_->flowbits().empty() && !rules_->flow_state() ? 0 : limits.flows),
      streams_(limits.stream && rules_->stream_rules() ? limits.streams : 0,
               std::min(limits.stream_lookback, rules_->stream_span()), limits.stream_ooo) {
  constexpr uint64_t kNsPerSecond = 1'000'000'000;
  constexpr uint32_t kWordBits = 64;
  flow_timeout_ns_ = uint64_t{limits.flow_timeout_s} * kNsPerSecond;
  bit_words_ = (rules_->flowbit_names() + kWordBits - 1) / kWordBits;
  if (!rules_->flowbits().empty()) bits_.assign(size_t{flows_.capacity()} * bit_words_, 0);
  content_gen_.assign(rules_->contents().size(), 0);
  if (engine_ == Engine::kHyperscan) {
    joined_.resize(size_t{kScanGroup} * kJoinBytes);
    for (const RuleSet::ContentRef& c : rules_->contents())
      content_len_.push_back(static_cast<uint32_t>(c.bytes.size()));
  }
  rule_gen_.assign(rules_->rules().size(), 0);
  pcre_gen_.assign(rules_->pcres(), 0);
  if (streams_.enabled()) {
    win_content_gen_.assign(rules_->contents().size(), 0);
    new_content_gen_.assign(rules_->contents().size(), 0);
    win_pcre_gen_.assign(rules_->pcres(), 0);
    lb_pcre_gen_.assign(rules_->pcres(), 0);
  }
}

Result<std::unique_ptr<Matcher>> Matcher::create(std::shared_ptr<const RuleSet> rules,
                                                 Engine engine, StateLimits limits) {
  std::unique_ptr<Matcher> m(new Matcher(std::move(rules), engine, limits));
  const hs_database_t* dbs[] = {m->rules_->literal_db(), m->rules_->regex_db(kDomainL4),
                                m->rules_->regex_db(kDomainIp)};
  for (const hs_database_t* db : dbs) {
    if (db == nullptr) continue;
    if (Status s = alloc_scratch(db, m->scratch_); !s) return make_error(s.error());
  }
  return m;
}

void Matcher::next_generation() {
  if (++gen_ != 0) [[likely]]
    return;
  std::fill(content_gen_.begin(), content_gen_.end(), 0);
  std::fill(rule_gen_.begin(), rule_gen_.end(), 0);
  std::fill(pcre_gen_.begin(), pcre_gen_.end(), 0);
  std::fill(std::begin(regex_gen_), std::end(regex_gen_), 0);
  for (auto* v : {&win_content_gen_, &new_content_gen_, &win_pcre_gen_, &lb_pcre_gen_})
    std::fill(v->begin(), v->end(), 0);
  win_regex_gen_ = lb_regex_gen_ = 0;
  flow_gen_ = 0;
  bits_gen_ = 0;
  gen_ = 1;
}

bool Matcher::header_and_flow(uint32_t r, const PacketView& v) const {
  if (!RuleSet::header_matches(rules_->rules()[r], v)) return false;
  return (rules_->refs()[r].flow & ~flow_flags_) == 0;
}

bool Matcher::rule_matches(uint32_t r, const PacketView& v) {
  if (!header_and_flow(r, v)) return false;
  const Domain d = rules_->refs()[r].domain;
  const uint32_t base = d == kDomainL4 ? v.l4_hdr_len : 0;
  return payload_matches(r, v.ip_payload + base, v.ip_payload_len - base, 0, content_gen_.data(),
                         pcre_gen_.data(), regex_gen_[d]);
}

bool Matcher::payload_matches(uint32_t r, const uint8_t* buf, uint32_t len, uint64_t origin,
                              const uint32_t* cgen, uint32_t* pgen, uint32_t& rgen) {
  const RuleSet::RuleRef& ref = rules_->refs()[r];
  const auto& contents = rules_->contents();
  const uint32_t end = ref.first_content + ref.contents;
  if (!ref.chained) [[likely]] {
    for (uint32_t c = ref.first_content; c < end; ++c)
      if ((cgen[c] == gen_) == contents[c].negated) return false;
  } else {
    // Every positive content occurs in its window (anywhere, for a relative one): necessary.
    for (uint32_t c = ref.first_content; c < end; ++c)
      if (!contents[c].negated && cgen[c] != gen_) return false;
    uint32_t buffer_offset = 0, calls = 0;
    if (ref.contents != 0 && inspect_contents(ref.first_content, end, buf, len, origin, UINT32_MAX,
                                              0, buffer_offset, calls) != 1)
      return false;
  }
  if (ref.pcres == 0) return true;
  if (rgen != gen_) {
    rgen = gen_;
    ++stats_.regex_scans;
    if (!hs_scan_block(rules_->regex_db(ref.domain), scratch_.get(), buf, len,
                       [this, pgen](uint32_t id, uint32_t) { pgen[id] = gen_; }))
      ++stats_.errors;
  }
  for (uint32_t p = ref.first_pcre; p < ref.first_pcre + ref.pcres; ++p)
    if (pgen[p] != gen_) return false;
  return true;
}

void Matcher::prefetch_payload(const PacketView& v) {
  constexpr uintptr_t kLine = 64;
  const auto first = reinterpret_cast<uintptr_t>(v.ip_payload) & ~(kLine - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(v.ip_payload) +
                        std::min(v.ip_payload_len, kPayloadPrefetchLines * uint32_t{kLine});
  for (uintptr_t line = first; line < end; line += kLine)
    __builtin_prefetch(reinterpret_cast<const void*>(line));
}

void Matcher::prefilter_hyperscan(const PacketView* v, uint32_t n) {
  for (uint32_t k = 0; k < n; ++k) {
    group_hits_[k].clear();
    stats_.bytes += v[k].ip_payload_len;
  }
  stats_.packets += n;
  if (rules_->contents().empty()) return;
  const hs_database_t* db = rules_->literal_db();
  uint32_t joined = 0;  // payloads in joined_
  uint32_t at = 0;      // bytes in joined_
  for (uint32_t k = 0; k < std::min(n, kWholeFrameReadAhead); ++k) prefetch_payload(v[k]);
  for (uint32_t k = 0; k < n; ++k) {
    if (k + kWholeFrameReadAhead < n) prefetch_payload(v[k + kWholeFrameReadAhead]);
    const uint32_t len = v[k].ip_payload_len;
    if (len > kJoinBytes || n == 1) {  // too long, or nothing to share a call with
      std::vector<Hit>& h = group_hits_[k];
      if (!hs_scan_block(db, scratch_.get(), v[k].ip_payload, len, [&h](uint32_t id, uint32_t end) {
            h.push_back({id, end});
          }))
        ++stats_.errors;
      continue;
    }
    join_start_[joined] = at;
    join_packet_[joined++] = k;
    std::memcpy(joined_.data() + at, v[k].ip_payload, len);
    at += len;
  }
  if (joined == 0) return;
  join_start_[joined] = at;
  // The payload holding an occurrence's last byte (end > 0: contents are never empty): j with
  // join_start_[j] < end <= join_start_[j + 1]. Occurrences come mostly in end order: walk on
  // from the last one's payload, search when one comes back.
  uint32_t j = 0;
  auto on_match = [&](uint32_t id, uint32_t end) {
    if (end <= join_start_[j])
      j = static_cast<uint32_t>(std::upper_bound(join_start_, join_start_ + joined, end - 1) -
                                join_start_) -
          1;
    while (end > join_start_[j + 1]) ++j;
    const uint32_t local = end - join_start_[j];
    // It starts in the payload before: not an occurrence in this one (hit_counts would refuse
    // it too; the packet's hits are kept those of its own scan).
    if (local < content_len_[id]) return;
    group_hits_[join_packet_[j]].push_back({id, local});
  };
  if (!hs_scan_block(db, scratch_.get(), joined_.data(), at, on_match)) stats_.errors += joined;
}

void Matcher::stream_segment(const PacketView& v) {
  const StreamTable::Outcome out = streams_.add(v);
  stream_taken_ = out != StreamTable::Outcome::kNotTaken;
  window_ready_ = out == StreamTable::Outcome::kNewData;
  if (!window_ready_) return;
  const StreamTable::Window& w = streams_.window();
  window_hits_.clear();
  if (!rules_->contents().empty()) {
    if (engine_ == Engine::kAhoCorasick) {
      rules_->ac().scan(w.data, w.len, [this](uint32_t id, uint32_t end) {
        window_hits_.push_back({id, end});
      });
    } else if (!hs_scan_block(rules_->literal_db(), scratch_.get(), w.data, w.len,
                              [this](uint32_t id, uint32_t end) {
                                window_hits_.push_back({id, end});
                              })) {
      ++stats_.errors;
    }
  }
  const auto& contents = rules_->contents();
  for (const Hit& h : window_hits_) {
    const bool fresh = h.end > w.lookback;  // ends in the new bytes
    if ((win_content_gen_[h.content] == gen_ && (!fresh || new_content_gen_[h.content] == gen_)) ||
        !window_hit_counts(h, w.data, w.origin))
      continue;
    win_content_gen_[h.content] = gen_;
    if (fresh) new_content_gen_[h.content] = gen_;
    const RuleSet::ContentRef& c = contents[h.content];
    if (!c.negated && rule_gen_[c.rule] != gen_) {
      rule_gen_[c.rule] = gen_;
      candidates_.push_back(c.rule);
    }
  }
}

bool Matcher::stream_rule_matches(uint32_t r, const PacketView& v) {
  if (!header_and_flow(r, v)) return false;
  const RuleSet::RuleRef& ref = rules_->refs()[r];
  if (ref.contents == 0 && ref.pcres == 0) return true;  // only_stream, no payload options
  if (window_ready_ && window_matches(ref)) return true;
  if (ref.inspect != RuleSet::kInspectStreamAndPacket) return false;
  const uint32_t base = v.l4_hdr_len;
  return payload_matches(r, v.ip_payload + base, v.ip_payload_len - base, 0, content_gen_.data(),
                         pcre_gen_.data(), regex_gen_[kDomainL4]);
}

bool Matcher::window_matches(const RuleSet::RuleRef& ref) {
  const StreamTable::Window& w = streams_.window();
  const auto& contents = rules_->contents();
  const uint32_t end = ref.first_content + ref.contents;
  bool fresh = false;  // a part of the match ends in the new bytes
  if (!ref.chained) [[likely]] {
    for (uint32_t c = ref.first_content; c < end; ++c) {
      if ((win_content_gen_[c] == gen_) == contents[c].negated) return false;
      fresh |= !contents[c].negated && new_content_gen_[c] == gen_;
    }
  } else {
    for (uint32_t c = ref.first_content; c < end; ++c)
      if (!contents[c].negated && win_content_gen_[c] != gen_) return false;
    uint32_t buffer_offset = 0, calls = 0;
    fresh = inspect_contents(ref.first_content, end, w.data, w.len, w.origin, ref.last_positive,
                             w.lookback, buffer_offset, calls) == 1;
    buffer_offset = calls = 0;
    if (!fresh && inspect_contents(ref.first_content, end, w.data, w.len, w.origin, UINT32_MAX, 0,
                                   buffer_offset, calls) != 1)
      return false;
  }
  if (ref.pcres == 0) return fresh;
  auto scan = [this, &ref](const uint8_t* buf, uint32_t len, uint32_t* pgen, uint32_t& rgen) {
    if (rgen == gen_) return;
    rgen = gen_;
    ++stats_.regex_scans;
    if (!hs_scan_block(rules_->regex_db(ref.domain), scratch_.get(), buf, len,
                       [this, pgen](uint32_t id, uint32_t) { pgen[id] = gen_; }))
      ++stats_.errors;
  };
  scan(w.data, w.len, win_pcre_gen_.data(), win_regex_gen_);
  const uint32_t pend = ref.first_pcre + ref.pcres;
  for (uint32_t p = ref.first_pcre; p < pend; ++p)
    if (win_pcre_gen_[p] != gen_) return false;
  if (fresh || w.lookback == 0) return true;
  // A pcre that matches the window but not the lookback alone was completed by the new bytes.
  scan(w.data, w.lookback, lb_pcre_gen_.data(), lb_regex_gen_);
  for (uint32_t p = ref.first_pcre; p < pend; ++p)
    if (lb_pcre_gen_[p] != gen_) return true;
  return false;
}

FlowEntry& Matcher::packet_flow(const PacketView& v, bool& src_first) {
  if (flow_gen_ != gen_) {
    const FlowKey key = flow_key(v, &packet_src_first_);
    bool fresh = false;
    uint32_t slot = 0;
    packet_flow_ = &flows_.get(key, key.hash(), fresh, &slot);
    packet_bits_ = bits_.empty() ? nullptr : bits_.data() + size_t{slot} * bit_words_;
    if (fresh && packet_bits_ != nullptr) std::fill(packet_bits_, packet_bits_ + bit_words_, 0);
    flow_gen_ = gen_;
  }
  src_first = packet_src_first_;
  return *packet_flow_;
}

uint64_t* Matcher::flow_bits(const PacketView& v) {
  if (bits_gen_ == gen_) return packet_bits_;
  bool src_first = false;
  FlowEntry& e = packet_flow(v, src_first);
  if (now_ns_ > e.last_ns + flow_timeout_ns_) std::fill(packet_bits_, packet_bits_ + bit_words_, 0);
  e.last_ns = now_ns_;
  bits_gen_ = gen_;
  return packet_bits_;
}

namespace {

constexpr uint32_t kTcpFlagsOffset = 13;
constexpr uint8_t kTcpFin = 0x01, kTcpSyn = 0x02, kTcpRst = 0x04, kTcpAck = 0x10;

// A TCP packet from end `from` (FlowEntry::kEndA or kEndB) with `flags` moves its flow's
// session on, as far as `established` needs (docs/ids.md): a SYN without ACK where there is no
// session or it is closed starts one (its sender is the client); the server's SYN-ACK, then the
// client's ACK complete the handshake (that ACK is itself established); a RST closes the session,
// and so does a FIN from both ends once established. An established flow stays established
// after it closes (Suricata: every session state from ESTABLISHED on), until a new SYN.
void track_tcp(FlowEntry& e, uint8_t from, uint8_t flags) {
  const uint8_t client = e.client_first ? FlowEntry::kEndA : FlowEntry::kEndB;
  const bool syn = flags & kTcpSyn, ack = flags & kTcpAck, rst = flags & kTcpRst;
  switch (e.tcp) {
    case TcpState::kNone:
    case TcpState::kClosed:
      if (syn && !ack && !rst) {
        e.client_first = from == FlowEntry::kEndA;
        e.tcp = TcpState::kSynSent;
        e.established = false;
        e.ends = 0;
      }
      return;
    case TcpState::kSynSent:
      if (rst)
        e.tcp = TcpState::kClosed;
      else if (syn && ack && from != client)
        e.tcp = TcpState::kSynRecv;
      return;
    case TcpState::kSynRecv:
      if (rst) {
        e.tcp = TcpState::kClosed;
      } else if (ack && !syn && from == client) {
        e.tcp = TcpState::kEstablished;
        e.established = true;
      }
      return;
    case TcpState::kEstablished:
      if (rst) {
        e.tcp = TcpState::kClosed;
      } else if (flags & kTcpFin) {
        e.ends |= from;
        if (e.ends == (FlowEntry::kEndA | FlowEntry::kEndB)) e.tcp = TcpState::kClosed;
      }
      return;
  }
}

}  // namespace

void Matcher::update_flow(const PacketView& v) {
  if (v.fragment) {
    flow_flags_ = 0;  // a non-first fragment has no flow (its datagram is not reassembled)
    return;
  }
  if (!rules_->flow_state()) {
    flow_flags_ = RuleSet::kFlowHas;
    return;
  }
  bool src_first = false;
  FlowEntry& e = packet_flow(v, src_first);
  if (!e.started || now_ns_ > e.seen_ns + flow_timeout_ns_) {
    // A new flow (or one idle past the timeout): its first packet's sender is the client.
    e.started = true;
    e.client_first = src_first;
    e.established = false;
    e.tcp = TcpState::kNone;
    e.ends = 0;
  }
  e.seen_ns = now_ns_;
  const uint8_t from = src_first ? FlowEntry::kEndA : FlowEntry::kEndB;
  if (v.proto == kIpProtoTcp) {
    track_tcp(e, from, v.ip_payload[kTcpFlagsOffset]);
  } else {
    e.ends |= from;
    e.established = e.ends == (FlowEntry::kEndA | FlowEntry::kEndB);
  }
  flow_flags_ = RuleSet::kFlowHas |
                (src_first == e.client_first ? RuleSet::kFlowToServer : RuleSet::kFlowToClient) |
                (e.established ? RuleSet::kFlowEstablished : RuleSet::kFlowNotEstablished);
}

bool Matcher::stateful_alert(uint32_t r, const PacketView& v) {
  constexpr uint32_t kWordBits = 64;
  const RuleSet::RuleRef& ref = rules_->refs()[r];
  const Rule& rule = rules_->rules()[r];
  if (ref.flowbits != 0) {
    uint64_t* bits = flow_bits(v);
    const RuleSet::FlowbitRef* fb = rules_->flowbits().data() + ref.first_flowbit;
    auto is_set = [bits](uint32_t b) { return (bits[b / kWordBits] >> (b % kWordBits)) & 1; };
    for (uint32_t k = 0; k < ref.flowbits; ++k) {
      if (fb[k].cmd == FlowbitCmd::kIsset && !is_set(fb[k].bit)) return false;
      if (fb[k].cmd == FlowbitCmd::kIsnotset && is_set(fb[k].bit)) return false;
    }
    for (uint32_t k = 0; k < ref.flowbits; ++k) {
      const uint64_t mask = uint64_t{1} << (fb[k].bit % kWordBits);
      uint64_t& word = bits[fb[k].bit / kWordBits];
      if (fb[k].cmd == FlowbitCmd::kSet) word |= mask;
      if (fb[k].cmd == FlowbitCmd::kUnset) word &= ~mask;
      if (fb[k].cmd == FlowbitCmd::kToggle) word ^= mask;
    }
  }
  if (rule.noalert) return false;
  const Threshold& t = rule.threshold;
  if (t.type == ThresholdType::kNone) return true;
  if (t.type == ThresholdType::kThreshold && t.count == 1) return true;  // Suricata keeps no entry
  const TrackKey key = track_key(t.track, r, v);
  bool fresh = false;
  ThresholdEntry& e = thresholds_.get(key, key.hash(), fresh);
  return threshold_alerts(t, e, fresh, now_ns_);
}

int Matcher::inspect_contents(uint32_t c, uint32_t end, const uint8_t* buf, uint32_t len,
                              uint64_t origin, uint32_t last, uint32_t min_end,
                              uint32_t& buffer_offset, uint32_t& calls) const {
  if (++calls == kInspectionRecursionLimit) return -1;
  const RuleSet::ContentRef& cd = rules_->contents()[c];
  const bool is_last = c + 1 == end;
  const auto n = static_cast<uint32_t>(cd.bytes.size());
  const uint32_t prev_buffer_offset = buffer_offset;
  uint32_t prev_offset = 0;  // after a failed continuation: one past the last match's start
  while (true) {
    uint32_t offset = 0, depth = len;
    if (cd.relative) {
      offset = prev_buffer_offset;
      const int64_t distance = cd.has_distance ? cd.distance : 0;
      if (distance < 0 && static_cast<uint64_t>(-distance) > offset)
        offset = 0;
      else
        offset = static_cast<uint32_t>(offset + distance);
      if (cd.has_within) {
        const int64_t limit = int64_t{prev_buffer_offset} + cd.within + distance;
        // As Suricata (32-bit arithmetic): a limit below 0 wraps to past the domain's end.
        if (int64_t{depth} > limit) depth = static_cast<uint32_t>(limit);
      }
    } else {
      // Stream offsets: the window starts `origin` bytes into the stream.
      const int64_t lo = int64_t{cd.offset} - static_cast<int64_t>(origin);
      const int64_t hi =
          cd.depth != 0 ? int64_t{cd.offset} + cd.depth - static_cast<int64_t>(origin) : len;
      offset = static_cast<uint32_t>(std::clamp<int64_t>(lo, 0, len));
      depth = static_cast<uint32_t>(std::clamp<int64_t>(hi, 0, len));
    }
    if (prev_offset != 0) offset = prev_offset;
    if (c == last && min_end + 1 > n) offset = std::max(offset, min_end + 1 - n);
    depth = std::min(depth, len);
    int64_t at = -1;
    if (offset <= depth && depth != 0 && n <= depth - offset)
      at = find_bytes(buf + offset, depth - offset, cd.bytes, cd.nocase);
    if (at < 0) {
      if (!cd.negated) return cd.relative ? 0 : -1;  // an absolute content's failure is final
      return is_last ? 1
                     : inspect_contents(c + 1, end, buf, len, origin, last, min_end, buffer_offset,
                                        calls);
    }
    if (cd.negated) return cd.relative ? 0 : -1;
    const auto match_end = static_cast<uint32_t>(offset + at + n);
    buffer_offset = match_end;
    if (is_last) return 1;
    const int r =
        inspect_contents(c + 1, end, buf, len, origin, last, min_end, buffer_offset, calls);
    if (r != 0) return r;
    if (!cd.within_next) return -1;  // the next content does not depend on where this one is
    prev_offset = match_end - n + 1;
  }
}

}  // namespace fulcrum::ids
