#include "l7/nf/stream_ids.hh"

#include <algorithm>
#include <cstring>

#include "kernels/common/l7_ops.h"
#include "l7/flow/device_tables.hh"
#include "lib/ids/rule_parser.hh"

namespace fulcrum::l7 {
namespace {

constexpr uint32_t kStarted = 1;  // the block holds a compressed Hyperscan stream
constexpr uint32_t kStale = 2;    // device messages advanced the stream past it: resume from tail
constexpr uint32_t kMaxSteps = (L7_OUT_WORDS - 1) / 2;
constexpr size_t kHsSlack = 64;  // room beyond hs_stream_size for the compressed form

size_t round8(size_t n) {
  return (n + 7) & ~size_t{7};
}

uint8_t dir_bit(Direction d) {
  return d == Direction::kRequest ? StreamIds::kScanRequests : StreamIds::kScanResponses;
}

void json_escaped(std::FILE* f, std::string_view s) {
  for (char c : s) {
    if (c == '"' || c == '\\')
      std::fprintf(f, "\\%c", c);
    else if (static_cast<unsigned char>(c) < 0x20)
      std::fprintf(f, "\\u%04x", static_cast<unsigned>(c));
    else
      std::fputc(c, f);
  }
}

}  // namespace

struct StreamIds::Scan {
  StreamIds* nf;
  uint8_t* blk;
  uint8_t dir;
  uint64_t base;     // stream offset of the Hyperscan stream's byte 0
  uint64_t min_end;  // occurrences ending at or before this stream offset were seen already
};

StreamIds::StreamIds(std::shared_ptr<const StreamRules> rules, Mode mode, uint8_t scan)
    : rules_(std::move(rules)), mode_(mode), scan_(scan) {}

StreamIds::~StreamIds() {
  if (log_ != nullptr) std::fclose(log_);
}

Result<std::unique_ptr<StreamIds>> StreamIds::create(std::shared_ptr<const StreamRules> rules,
                                                     Mode mode, uint8_t scan,
                                                     const std::string& log_path) {
  if ((scan & (kScanRequests | kScanResponses)) == 0)
    return make_error("StreamIDS: no direction to scan");
  std::unique_ptr<StreamIds> nf(new StreamIds(std::move(rules), mode, scan));
  const StreamRules& r = *nf->rules_;
  size_t stream_size = 0;
  if (hs_stream_size(r.db(), &stream_size) != HS_SUCCESS)
    return make_error("StreamIDS: Hyperscan: no stream size");
  if (Status s = ids::alloc_scratch(r.db(), nf->scratch_); !s) return make_error(s.error());
  hs_stream_t* work = nullptr;
  if (hs_open_stream(r.db(), 0, &work) != HS_SUCCESS)
    return make_error("StreamIDS: Hyperscan: cannot open a stream");
  nf->work_.reset(work);
  nf->blocks_ = (scan & kScanRequests ? 1 : 0) + (scan & kScanResponses ? 1 : 0);
  nf->found_bytes_ = (r.components().size() + 7) / 8;
  nf->alerted_bytes_ = (r.rules().size() + 7) / 8;
  nf->tail_cap_ = r.literals_only() ? r.max_literal() : 0;
  nf->hs_cap_ = stream_size + kHsSlack;
  nf->block_bytes_ = round8(sizeof(BlockHeader) + nf->found_bytes_ + nf->alerted_bytes_ +
                            nf->tail_cap_ + nf->hs_cap_);
  nf->by_rule_.assign(r.rules().size(), 0);
  if (!log_path.empty()) {
    nf->log_ = std::fopen(log_path.c_str(), "w");
    if (nf->log_ == nullptr) return make_error("StreamIDS: cannot open LOG " + log_path);
  }
  return nf;
}

Result<std::unique_ptr<FlowNf>> StreamIds::from_args(Args& a) {
  std::string file, mode = "detect", direction = "both", log;
  a.positional_file("RULES", file, "the rule file (docs/ids.md's rule language)")
      .key("MODE", mode, "detect: alert only; block: answer 403 (HTTP) or close (raw streams)")
      .key("DIRECTION", direction, "the streams scanned: requests, responses or both")
      .key("LOG", log, "a file for JSON-lines alerts");
  if (Status s = a.finish(); !s) return make_error(s.error());
  if (mode != "detect" && mode != "block")
    return make_error(a.error("MODE must be detect or block, not '" + mode + "'").message);
  uint8_t scan = 0;
  if (direction == "requests")
    scan = kScanRequests;
  else if (direction == "responses")
    scan = kScanResponses;
  else if (direction == "both")
    scan = kScanRequests | kScanResponses;
  else
    return make_error(a.error("DIRECTION must be requests, responses or both").message);
  Result<ids::RuleFile> parsed = ids::load_rule_file(file, /*strict=*/false);
  if (!parsed) return make_error(parsed.error());
  Result<std::shared_ptr<const StreamRules>> rules = StreamRules::compile(std::move(*parsed));
  if (!rules) return make_error(file + ": " + rules.error());
  if (!rules.value()->skipped().empty())
    std::fprintf(stderr, "StreamIDS: %s: %zu rules loaded, %zu skipped (%s)\n", file.c_str(),
                 rules.value()->rules().size(), rules.value()->skipped().size(),
                 ids::skipped_summary(rules.value()->skipped()).c_str());
  Result<std::unique_ptr<StreamIds>> nf =
      create(rules.value(), mode == "block" ? Mode::kBlock : Mode::kDetect, scan, log);
  if (!nf) return make_error(nf.error());
  return std::unique_ptr<FlowNf>(std::move(nf.value()));
}

void StreamIds::init_state(std::span<uint8_t> state) const {
  std::fill(state.begin(), state.end(), uint8_t{0});
}

std::optional<std::span<uint8_t>> StreamIds::block(std::span<uint8_t> state, Direction d) const {
  const uint8_t bit = dir_bit(d);
  if ((scan_ & bit) == 0) return std::nullopt;
  const size_t index = bit == kScanResponses && (scan_ & kScanRequests) ? 1 : 0;
  return state.subspan(kBlocksAt + index * block_bytes_, block_bytes_);
}

void StreamIds::component_found(Scan& s, uint32_t c, uint64_t end) {
  if (end <= s.min_end) return;
  uint8_t* found = s.blk + sizeof(BlockHeader);
  const uint8_t bit = static_cast<uint8_t>(1u << (c & 7));
  if (found[c >> 3] & bit) return;
  const StreamComponent& k = rules_->components()[c];
  if (k.kind == StreamComponent::Kind::kLiteral && !rules_->content_counts(c, end)) return;
  found[c >> 3] |= bit;
  const StreamRule& r = rules_->rules()[k.rule];
  if ((r.dirs & s.dir) == 0) return;
  uint8_t* alerted = found + found_bytes_;
  const uint8_t rbit = static_cast<uint8_t>(1u << (k.rule & 7));
  if (alerted[k.rule >> 3] & rbit) return;
  for (uint32_t i = r.first; i < r.first + r.count; ++i)
    if ((found[i >> 3] & (1u << (i & 7))) == 0) return;
  alerted[k.rule >> 3] |= rbit;
  last_.push_back(r.sid);
  last_rules_.push_back(k.rule);
}

void StreamIds::advance_tail(std::span<uint8_t> blk, BlockHeader& h, std::span<const uint8_t> msg,
                             std::span<uint8_t> state) const {
  if (tail_cap_ == 0) return;
  uint8_t* t = blk.data() + sizeof(BlockHeader) + found_bytes_ + alerted_bytes_;
  if (msg.size() >= tail_cap_) {
    std::memcpy(t, msg.data() + msg.size() - tail_cap_, tail_cap_);
    h.tail_len = static_cast<uint32_t>(tail_cap_);
  } else {
    const size_t keep = std::min<size_t>(h.tail_len, tail_cap_ - msg.size());
    std::memmove(t, t + h.tail_len - keep, keep);
    if (!msg.empty()) std::memcpy(t + keep, msg.data(), msg.size());
    h.tail_len = static_cast<uint32_t>(keep + msg.size());
  }
  // The carried DFA state: the walk of the tail from the root is the walk of the whole stream
  // (an Aho-Corasick state is at most max_literal() bytes deep).
  const auto& ac = rules_->ac();
  const uint32_t* table = ac.table().data();
  const uint8_t* classes = ac.classes().data();
  uint32_t st = 0;
  for (uint32_t i = 0; i < h.tail_len; ++i) st = table[st + classes[t[i]]] & IDS_AC_STATE_MASK;
  std::memcpy(state.data(), &st, sizeof st);
}

void StreamIds::process(Message& m, std::span<uint8_t> state) {
  last_.clear();
  last_rules_.clear();
  const auto blk = block(state, m.dir);
  if (!blk) return;
  BlockHeader h;
  std::memcpy(&h, blk->data(), sizeof h);
  ++counters_.messages;
  counters_.bytes += m.body.size();
  uint8_t* hs = blk->data() + sizeof(BlockHeader) + found_bytes_ + alerted_bytes_ + tail_cap_;
  const uint8_t* tail = hs - tail_cap_;
  Scan s{this, blk->data(), dir_bit(m.dir), h.hs_base, h.stream_bytes};
  auto on_match = [](unsigned id, unsigned long long, unsigned long long to, unsigned,
                     void* ctx) -> int {
    Scan& sc = *static_cast<Scan*>(ctx);
    sc.nf->component_found(sc, id, sc.base + to);
    return 0;
  };
  bool resume = (h.flags & kStarted) == 0 || (h.flags & kStale) != 0;
  if (!resume && hs_reset_and_expand_stream(work_.get(), reinterpret_cast<const char*>(hs),
                                            h.hs_len, nullptr, nullptr, nullptr) != HS_SUCCESS) {
    ++counters_.hs_errors;
    resume = true;
    h.flags |= kStale;
  }
  if (resume) {
    hs_reset_stream(work_.get(), 0, nullptr, nullptr, nullptr);
    // After device messages (or a failure), restart from the tail when the tail is enough
    // (literal rules); occurrences ending in it were reported before (min_end).
    const uint32_t prime = (h.flags & kStale) && tail_cap_ != 0 ? h.tail_len : 0;
    h.hs_base = h.stream_bytes - prime;
    s.base = h.hs_base;
    if (prime != 0) {
      ++counters_.resumed;
      if (hs_scan_stream(work_.get(), reinterpret_cast<const char*>(tail), prime, 0, scratch_.get(),
                         on_match, &s) != HS_SUCCESS)
        ++counters_.hs_errors;
    }
    h.flags &= ~kStale;
  }
  if (!m.body.empty() && hs_scan_stream(work_.get(), reinterpret_cast<const char*>(m.body.data()),
                                        static_cast<unsigned>(m.body.size()), 0, scratch_.get(),
                                        on_match, &s) != HS_SUCCESS)
    ++counters_.hs_errors;
  h.stream_bytes += m.body.size();
  size_t used = 0;
  if (hs_compress_stream(work_.get(), reinterpret_cast<char*>(hs), hs_cap_, &used) == HS_SUCCESS) {
    h.hs_len = static_cast<uint32_t>(used);
    h.flags |= kStarted;
  } else {
    ++counters_.hs_errors;
    h.flags = (h.flags & ~kStarted) | kStale;
  }
  advance_tail(*blk, h, m.body, state);
  std::memcpy(blk->data(), &h, sizeof h);
  conclude(m);
}

std::optional<DeviceOp> StreamIds::device_op() const {
  if (!rules_->literals_only()) return std::nullopt;
  DeviceOp op;
  op.code = L7_OP_IDS_AC;
  op.table = ids_ac_table(rules_->ac());
  op.directions = ((scan_ & kScanRequests) ? L7_ON_REQUESTS : 0u) |
                  ((scan_ & kScanResponses) ? L7_ON_RESPONSES : 0u);
  return op;
}

void StreamIds::finish_device(Message& m, std::span<uint8_t> state, std::span<const uint32_t> out) {
  if (!rules_->literals_only()) {  // no device form: the op never ran for this NF
    process(m, state);
    return;
  }
  last_.clear();
  last_rules_.clear();
  const auto blk = block(state, m.dir);
  if (!blk) return;
  BlockHeader h;
  std::memcpy(&h, blk->data(), sizeof h);
  ++counters_.messages;
  ++counters_.device_messages;
  counters_.bytes += m.body.size();
  const uint8_t* tail = blk->data() + sizeof(BlockHeader) + found_bytes_ + alerted_bytes_;
  const uint8_t* msg = m.body.data();
  const auto len = static_cast<uint32_t>(m.body.size());
  const auto& ac = rules_->ac();
  const auto& comps = rules_->components();
  const uint32_t* table = ac.table().data();
  const uint8_t* classes = ac.classes().data();
  const uint32_t* out_begin = ac.out_begin().data();
  const uint32_t* out_ids = ac.out_ids().data();
  // The walk from the root over the tail and then msg[0, upto): with `spanning`, only the
  // occurrences that start in the tail; otherwise every occurrence ending in the message.
  cands_.clear();
  auto walk = [&](uint32_t upto, bool spanning) {
    uint32_t st = 0;
    for (uint32_t i = 0; i < h.tail_len; ++i) st = table[st + classes[tail[i]]] & IDS_AC_STATE_MASK;
    for (uint32_t i = 0; i < upto; ++i) {
      const uint32_t e = table[st + classes[msg[i]]];
      st = e & IDS_AC_STATE_MASK;
      if ((e & IDS_AC_MATCH_BIT) == 0) continue;
      const uint32_t q = st / ac.stride();
      for (uint32_t o = out_begin[q]; o < out_begin[q + 1]; ++o)
        if (!spanning || i + 1 < comps[out_ids[o]].bytes.size())
          cands_.emplace_back(i + 1, out_ids[o]);
    }
  };
  if (out.empty() || out[0] > kMaxSteps || out.size() < 1 + 2 * size_t{out[0]}) {
    ++counters_.device_overflows;
    walk(len, false);
  } else {
    for (uint32_t k = 0; k < out[0]; ++k) {
      const uint32_t q = out[1 + 2 * k] / ac.stride();
      const uint32_t end = out[2 + 2 * k];
      for (uint32_t o = out_begin[q]; o < out_begin[q + 1]; ++o)
        if (end >= comps[out_ids[o]].bytes.size() && end <= len)
          cands_.emplace_back(end, out_ids[o]);
    }
    walk(std::min<uint32_t>(len, static_cast<uint32_t>(tail_cap_ == 0 ? 0 : tail_cap_ - 1)), true);
    std::sort(cands_.begin(), cands_.end());
  }
  Scan s{this, blk->data(), dir_bit(m.dir), h.stream_bytes, h.stream_bytes};
  for (const auto& [end, c] : cands_) {
    const StreamComponent& k = comps[c];
    if (!k.nocase) {  // the DFA is caseless: confirm the bytes
      const auto n = static_cast<int64_t>(k.bytes.size());
      bool same = true;
      for (int64_t j = 0; j < n && same; ++j) {
        const int64_t at = static_cast<int64_t>(end) - n + j;  // < 0: in the tail
        const uint8_t b = at < 0 ? tail[h.tail_len + at] : msg[at];
        same = b == static_cast<uint8_t>(k.bytes[static_cast<size_t>(j)]);
      }
      if (!same) continue;
    }
    component_found(s, c, h.stream_bytes + end);
  }
  h.stream_bytes += len;
  h.flags |= kStale;
  advance_tail(*blk, h, m.body, state);
  std::memcpy(blk->data(), &h, sizeof h);
  conclude(m);
}

void StreamIds::conclude(Message& m) {
  if (last_.empty()) return;
  m.verdict.alerts += static_cast<uint32_t>(last_.size());
  counters_.alerts += last_.size();
  for (size_t i = 0; i < last_.size(); ++i) {
    ++by_rule_[last_rules_[i]];
    if (log_ == nullptr) continue;
    std::fprintf(log_, "{\"sid\":%u,\"msg\":\"", last_[i]);
    json_escaped(log_, rules_->rules()[last_rules_[i]].msg);
    std::fprintf(log_, "\",\"flow\":%llu,\"dir\":\"%s\",\"seq\":%llu}\n",
                 static_cast<unsigned long long>(m.flow),
                 m.dir == Direction::kRequest ? "request" : "response",
                 static_cast<unsigned long long>(m.seq));
  }
  if (mode_ != Mode::kBlock || m.verdict.action != Action::kForward) return;
  ++counters_.blocked;
  m.verdict.action = m.http ? Action::kRespond : Action::kClose;
  m.verdict.status = m.http ? uint16_t{403} : uint16_t{0};
  m.verdict.reason = "StreamIDS: sid " + std::to_string(last_.front());
}

FULCRUM_REGISTER_NF(StreamIDS, StreamIds::from_args);

}  // namespace fulcrum::l7
