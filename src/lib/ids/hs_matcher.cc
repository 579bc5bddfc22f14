#include "lib/ids/hs_matcher.hh"

namespace fulcrum::ids {
namespace {

Result<HsDatabase> finish(hs_error_t rc, hs_database_t* db, hs_compile_error_t* err,
                          const std::string& what) {
  if (rc == HS_SUCCESS) return HsDatabase(db);
  std::string msg = err != nullptr && err->message != nullptr ? err->message : "unknown error";
  const int which = err != nullptr ? err->expression : -1;
  hs_free_compile_error(err);
  return make_error("Hyperscan rejected " + what +
                    (which >= 0 ? " #" + std::to_string(which) : std::string()) + ": " + msg);
}

}  // namespace

Result<HsDatabase> compile_literals(const std::vector<HsLiteral>& literals) {
  if (literals.empty()) return make_error("no literals to compile");
  std::vector<const char*> exprs;
  std::vector<size_t> lens;
  std::vector<unsigned> flags, ids;
  for (const HsLiteral& l : literals) {
    exprs.push_back(l.bytes.data());
    lens.push_back(l.bytes.size());
    flags.push_back(l.caseless ? HS_FLAG_CASELESS : 0);
    ids.push_back(l.id);
  }
  hs_database_t* db = nullptr;
  hs_compile_error_t* err = nullptr;
  const hs_error_t rc =
      hs_compile_lit_multi(exprs.data(), flags.data(), ids.data(), lens.data(),
                           static_cast<unsigned>(exprs.size()), HS_MODE_BLOCK, nullptr, &db, &err);
  return finish(rc, db, err, "literal");
}

Result<HsDatabase> compile_regexes(const std::vector<HsRegex>& regexes) {
  if (regexes.empty()) return make_error("no regexes to compile");
  std::vector<const char*> exprs;
  std::vector<unsigned> flags, ids;
  for (const HsRegex& r : regexes) {
    exprs.push_back(r.expr.c_str());
    flags.push_back(r.flags | HS_FLAG_SINGLEMATCH | HS_FLAG_ALLOWEMPTY);
    ids.push_back(r.id);
  }
  hs_database_t* db = nullptr;
  hs_compile_error_t* err = nullptr;
  const hs_error_t rc =
      hs_compile_multi(exprs.data(), flags.data(), ids.data(), static_cast<unsigned>(exprs.size()),
                       HS_MODE_BLOCK, nullptr, &db, &err);
  if (rc != HS_SUCCESS && err != nullptr && err->expression >= 0 &&
      static_cast<size_t>(err->expression) < regexes.size()) {
    const std::string expr = regexes[static_cast<size_t>(err->expression)].expr;
    std::string msg = err->message != nullptr ? err->message : "unknown error";
    hs_free_compile_error(err);
    return make_error("Hyperscan rejected regex /" + expr + "/: " + msg);
  }
  return finish(rc, db, err, "regex");
}

Status alloc_scratch(const hs_database_t* db, HsScratch& scratch) {
  hs_scratch_t* s = scratch.release();
  if (hs_alloc_scratch(db, &s) != HS_SUCCESS) {
    scratch.reset(s);
    return make_error("Hyperscan could not allocate scratch space");
  }
  scratch.reset(s);
  return {};
}

}  // namespace fulcrum::ids
