// Redundancy elimination analysis (thesis §3.2; packet caches, SIGCOMM'08): 64-byte chunks of
// every IPv4 payload are fingerprinted with MD5 and looked up in a fingerprint table; hits are
// verified byte for byte in a 16 MiB packet store. The element's counters (redundant_bytes,
// redundant_chunks, ...) are in the run summary and in --stats-json; each packet's redundant
// byte count is in user[2]. Packets leave unchanged through the port they came in on.
//
//   build/fulcrum run configs/redundancy-elim.click --port gen:size=1500 --packets 1000000
//   build/fulcrum run configs/redundancy-elim.click \
//       --port net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap
//
// MODE content picks chunk boundaries by content (a rolling hash) instead of every 64 bytes.
FromInput
  -> RedundancyElim(CHUNK 64, MODE fixed, CAPACITY 1048576, STORE 16777216)
  -> ToOutput;
