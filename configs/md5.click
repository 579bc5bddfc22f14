// Packet hashing (thesis §3.2, the "MD5 hashing" application): the MD5 of every IPv4 packet's
// L4 payload goes into its annotations (user[0..1]); the packet leaves unchanged through the
// port it came in on. Non-IPv4 and malformed frames are dropped with a named reason.
//
//   build/fulcrum run configs/md5.click --port gen:size=1500 --packets 10000000
//   build/fulcrum run configs/md5.click --port net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap
//
// MD5Digest(TRAILER true) also appends each digest to its frame, to check a capture offline.
FromInput -> MD5Digest -> ToOutput;
