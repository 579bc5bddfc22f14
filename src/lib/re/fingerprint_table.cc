#include "lib/re/fingerprint_table.hh"

#include <bit>
#include <string>

namespace fulcrum::re {

Result<std::unique_ptr<FingerprintTable>> FingerprintTable::create(size_t capacity,
                                                                   const char* name) {
  if (capacity < kMinCapacity || capacity > kMaxCapacity)
    return make_error("fingerprint table capacity " + std::to_string(capacity) + " out of range " +
                      std::to_string(kMinCapacity) + ".." + std::to_string(kMaxCapacity));
  const size_t buckets = std::bit_ceil(capacity) / kBucketEntries;
  std::unique_ptr<FingerprintTable> t(new FingerprintTable());
  t->mem_ = TableMemory::allocate(buckets * sizeof(Bucket), name);
  if (!t->mem_)
    return make_error(
        TableMemory::allocation_error(buckets * sizeof(Bucket), "the fingerprint table"));
  t->buckets_ = static_cast<Bucket*>(t->mem_->data());
  t->mask_ = buckets - 1;
  return t;
}

}  // namespace fulcrum::re
