// IPv4 longest-prefix match on a DIR-24-8 table (src/lib/dir24_8.hh has the layout): one work
// item per address. Addresses are in host byte order; results are next hops or 0xFFFF.

#define DIR24_8_SEGMENT_FLAG 0x8000u
#define DIR24_8_MAX_SEGMENTS 0x7FFFu
#define DIR24_8_SEGMENT_BITS 8u
#define DIR24_8_SEGMENT_MASK 0xFFu

__kernel void ipv4_dir24_8_lookup(__global const uint* addrs, __global ushort* next_hops,
                                  __global const ushort* tbl24, __global const ushort* tbllong,
                                  uint count) {
  const uint i = get_global_id(0);
  if (i >= count) return;
  const uint addr = addrs[i];
  const ushort e = tbl24[addr >> DIR24_8_SEGMENT_BITS];
  const uint segment = (uint)e - DIR24_8_SEGMENT_FLAG;
  ushort hop = e;
  if (e >= DIR24_8_SEGMENT_FLAG && segment < DIR24_8_MAX_SEGMENTS)
    hop = tbllong[(segment << DIR24_8_SEGMENT_BITS) | (addr & DIR24_8_SEGMENT_MASK)];
  next_hops[i] = hop;
}
