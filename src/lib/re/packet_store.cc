#include "lib/re/packet_store.hh"

#include <bit>
#include <string>

namespace fulcrum::re {

Result<std::unique_ptr<PacketStore>> PacketStore::create(size_t bytes, const char* name) {
  if (bytes < kMinSize || bytes > kMaxSize)
    return make_error("packet store size " + std::to_string(bytes) + " out of range " +
                      std::to_string(kMinSize) + ".." + std::to_string(kMaxSize));
  const size_t size = std::bit_ceil(bytes);
  std::unique_ptr<PacketStore> s(new PacketStore());
  s->mem_ = TableMemory::allocate(size, name);
  if (!s->mem_) return make_error(TableMemory::allocation_error(size, "the packet store"));
  s->ring_ = static_cast<uint8_t*>(s->mem_->data());
  s->mask_ = size - 1;
  return s;
}

}  // namespace fulcrum::re
