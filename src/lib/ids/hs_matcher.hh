// Hyperscan, wrapped: databases of literals (exact byte strings, optionally caseless, every
// occurrence reported like AhoCorasick) and of regexes (PCRE syntax, one match per pattern), and
// scratch space, one per worker (a database is shared read-only; scratch is not).
#pragma once

#include <hs/hs.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/result.hh"

namespace fulcrum::ids {

struct HsDatabaseFree {
  void operator()(hs_database_t* db) const { hs_free_database(db); }
};
struct HsScratchFree {
  void operator()(hs_scratch_t* s) const { hs_free_scratch(s); }
};
using HsDatabase = std::unique_ptr<hs_database_t, HsDatabaseFree>;
using HsScratch = std::unique_ptr<hs_scratch_t, HsScratchFree>;

struct HsLiteral {
  std::string bytes;
  bool caseless = false;
  uint32_t id = 0;
};

struct HsRegex {
  std::string expr;
  unsigned flags = 0;  // HS_FLAG_CASELESS, HS_FLAG_DOTALL, HS_FLAG_MULTILINE
  uint32_t id = 0;
};

// A block-mode database reporting every occurrence (id, end offset) of every literal.
Result<HsDatabase> compile_literals(const std::vector<HsLiteral>& literals);
// A block-mode database reporting each matching regex once (HS_FLAG_SINGLEMATCH). An error
// names the regex Hyperscan rejected (for instance a backreference).
Result<HsDatabase> compile_regexes(const std::vector<HsRegex>& regexes);
// Scratch for `db`, grown from `scratch` when given (one scratch may serve several databases).
Status alloc_scratch(const hs_database_t* db, HsScratch& scratch);

// Scans data[0, len) with `db`; on_match(id, end) for every match. Returns false when the scan
// failed (it never should with valid scratch).
template <class OnMatch>
bool hs_scan_block(const hs_database_t* db, hs_scratch_t* scratch, const uint8_t* data,
                   uint32_t len, OnMatch&& on_match) {
  using F = std::remove_reference_t<OnMatch>;
  auto cb = [](unsigned id, unsigned long long, unsigned long long to, unsigned, void* ctx) -> int {
    (*static_cast<F*>(ctx))(static_cast<uint32_t>(id), static_cast<uint32_t>(to));
    return 0;
  };
  return hs_scan(db, reinterpret_cast<const char*>(data), len, 0, scratch, cb,
                 const_cast<void*>(static_cast<const void*>(&on_match))) == HS_SUCCESS;
}

}  // namespace fulcrum::ids
