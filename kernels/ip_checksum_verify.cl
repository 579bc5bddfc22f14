// IPv4 header checksum (RFC 1071) of each packet's region: one work item per packet.
// regions: per packet {uint32 offset into bytes, uint32 length}; ok: per packet 1 when the
// ones'-complement sum of the header's 16-bit words is 0xFFFF, else 0.
#include "common/portable.h"

KERNEL void ip_checksum_verify(GLOBAL const uint8_t* RESTRICT bytes,
                               GLOBAL const uint32_t* RESTRICT regions,
                               GLOBAL uint32_t* RESTRICT ok, uint32_t count) {
  const uint32_t i = GLOBAL_ID();
  if (i >= count) return;
  GLOBAL const uint8_t* h = bytes + regions[2 * (size_t)i];
  const uint32_t len = regions[2 * (size_t)i + 1];
  uint32_t sum = 0;
  for (uint32_t k = 0; k + 1 < len; k += 2) sum += ((uint32_t)h[k] << 8) | h[k + 1];
  while (sum >> 16) sum = (sum & 0xFFFFu) + (sum >> 16);
  ok[i] = sum == 0xFFFFu ? 1u : 0u;
}
