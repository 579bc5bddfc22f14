// Packet hashing (thesis §3.2) with the MD5 offloadable: the balancer decides per batch whether
// MD5DigestOffload hashes the L4 payloads on the CPU (OpenSSL) or on a device (the md5_digest
// kernel; `fulcrum devices` lists them, PoCL's OpenCL CPU device when there is no GPU). The
// digest goes into user[0..1]; the packet leaves unchanged through the port it came in on.
// Swap the balancer: CPUOnly, DeviceOnly, FixedFraction(0.3); TRAILER true appends each digest.
//
//   fulcrum run configs/md5-offload.click --port gen:size=1500 --packets 1000000
//   fulcrum run configs/md5-offload.click --port net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap

FromInput
  -> DeviceOnly
  -> MD5DigestOffload(AGGREGATE 32)
  -> ToOutput;
