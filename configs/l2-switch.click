// A learning L2 switch: learns each source address on its input port and forwards by the
// destination address. Frames to unknown, broadcast or multicast destinations leave output 1,
// which is left unconnected here, so L2Switch drops them as unknown-destination; connect it to a
// flooding path to flood them instead. One MAC table of CAPACITY entries per worker.
//
//   build/fulcrum run configs/l2-switch.click \
//       --port net_pcap0,rx_pcap=a.pcap --port net_pcap1,rx_pcap=b.pcap
FromInput
  -> sw :: L2Switch(CAPACITY 1048576)
  -> ToOutput;
