#include "lib/ids/rule_engine.hh"

#include <algorithm>
#include <utility>

namespace fulcrum::ids {

namespace {

unsigned hs_flags(const Pcre& p) {
  unsigned flags = 0;
  if (p.caseless) flags |= HS_FLAG_CASELESS;
  if (p.dotall) flags |= HS_FLAG_DOTALL;
  if (p.multiline) flags |= HS_FLAG_MULTILINE;
  return flags;
}

}  // namespace

Result<std::shared_ptr<RuleSet>> RuleSet::compile(std::vector<Rule> rules,
                                                  std::vector<SkippedRule>* skipped) {
  auto set = std::make_shared<RuleSet>();
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
  for (uint32_t r = 0; r < set->rules_.size(); ++r) {
    const Rule& rule = set->rules_[r];
    RuleRef ref;
    ref.domain = rule.proto == Proto::kTcp || rule.proto == Proto::kUdp ? kDomainL4 : kDomainIp;
    ref.first_content = static_cast<uint32_t>(set->contents_.size());
    ref.contents = static_cast<uint32_t>(rule.contents.size());
    ref.first_pcre = set->pcres_;
    ref.pcres = static_cast<uint32_t>(rule.pcres.size());
    bool positive = false;
    for (const Content& c : rule.contents) {
      const uint32_t id = static_cast<uint32_t>(set->contents_.size());
      set->contents_.push_back({c.bytes, r, c.offset, c.depth, c.nocase, c.negated, ref.domain});
      set->ac_.add(c.bytes, id);
      literals.push_back({c.bytes, c.nocase, id});
      positive |= !c.negated;
    }
    for (const Pcre& p : rule.pcres)
      regexes[ref.domain].push_back(HsRegex{p.expr, hs_flags(p), set->pcres_++});
    if (!positive) set->always_.push_back(r);
    set->refs_.push_back(ref);
  }
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

Matcher::Matcher(std::shared_ptr<const RuleSet> rules, Engine engine)
    : rules_(std::move(rules)), engine_(engine) {
  content_gen_.assign(rules_->contents().size(), 0);
  rule_gen_.assign(rules_->rules().size(), 0);
  pcre_gen_.assign(rules_->pcres(), 0);
}

Result<std::unique_ptr<Matcher>> Matcher::create(std::shared_ptr<const RuleSet> rules,
                                                 Engine engine) {
  std::unique_ptr<Matcher> m(new Matcher(std::move(rules), engine));
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
  gen_ = 1;
}

bool Matcher::rule_matches(uint32_t r, const PacketView& v) {
  const Rule& rule = rules_->rules()[r];
  if (!RuleSet::header_matches(rule, v)) return false;
  const RuleSet::RuleRef& ref = rules_->refs()[r];
  const auto& contents = rules_->contents();
  for (uint32_t c = ref.first_content; c < ref.first_content + ref.contents; ++c)
    if ((content_gen_[c] == gen_) == contents[c].negated) return false;
  if (ref.pcres == 0) return true;
  const Domain d = ref.domain;
  if (regex_gen_[d] != gen_) {
    regex_gen_[d] = gen_;
    ++stats_.regex_scans;
    const uint32_t base = d == kDomainL4 ? v.l4_hdr_len : 0;
    if (!hs_scan_block(rules_->regex_db(d), scratch_.get(), v.ip_payload + base,
                       v.ip_payload_len - base,
                       [this](uint32_t id, uint32_t) { pcre_gen_[id] = gen_; }))
      ++stats_.errors;
  }
  for (uint32_t p = ref.first_pcre; p < ref.first_pcre + ref.pcres; ++p)
    if (pcre_gen_[p] != gen_) return false;
  return true;
}

}  // namespace fulcrum::ids
