// The op tables of the L7 chain kernel (kernels/common/l7_ops.h), built on the host from what
// the NFs hold: an NF's device_op() returns one of these as its DeviceOp::table.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/common/l7_ops.h"
#include "lib/ids/aho_corasick.hh"

namespace fulcrum::l7 {

inline constexpr size_t kAes128KeyBytes = 16;
inline constexpr size_t kAes128ScheduleWords = 44;

// The bytes at the start of an NF's state slice that its op reads and writes (kernels/common/
// l7_ops.h); the rest of the slice is the NF's own on the host, and a device round leaves it as
// the NF's finish_device sets it.
inline size_t op_state_bytes(uint32_t code) {
  return code == L7_OP_TOUCH || code == L7_OP_IDS_AC ? sizeof(uint32_t) : 0;
}

// L7_OP_AES128_CBC_{DECRYPT,ENCRYPT}: the 44 encryption round-key words of `key` (FIPS-197
// §5.2) then the 44 decryption round-key words of the equivalent inverse cipher (§5.3.5), each
// word in host order (the kernel reads uint32 words) with FIPS-197's big-endian byte order.
std::vector<uint8_t> aes128_cbc_table(std::span<const uint8_t, kAes128KeyBytes> key);

// L7_OP_IDS_AC: the automaton's 256 byte classes, then its transition entries as uint32 words
// (kernels/common/ids_ac_layout.h). `ac` must be built.
std::vector<uint8_t> ids_ac_table(const ids::AhoCorasick& ac);

}  // namespace fulcrum::l7
