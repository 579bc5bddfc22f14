// IPv4 header checksum (RFC 1071) of each packet's region: one work item per packet.
// regions: per packet {uint offset into bytes, uint length}; ok: per packet 1 when the
// ones'-complement sum of the header's 16-bit words is 0xFFFF, else 0.
__kernel void ip_checksum_verify(__global const uchar* bytes, __global const uint* regions,
                                 __global uint* ok, uint count) {
  const uint i = get_global_id(0);
  if (i >= count) return;
  __global const uchar* h = bytes + regions[2 * (size_t)i];
  const uint len = regions[2 * (size_t)i + 1];
  uint sum = 0;
  for (uint k = 0; k + 1 < len; k += 2) sum += ((uint)h[k] << 8) | h[k + 1];
  while (sum >> 16) sum = (sum & 0xFFFFu) + (sum >> 16);
  ok[i] = sum == 0xFFFFu ? 1u : 0u;
}
