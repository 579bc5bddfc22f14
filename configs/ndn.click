// An NDN forwarder: Interest and Data packets (EtherType 0x8624, NDN TLV format, see
// src/lib/ndn_wire.hh) leave by the longest name prefix in the name table; other frames are
// dropped as not-ndn.
//
//   build/fulcrum run configs/ndn.click \
//       --port net_pcap0,rx_pcap=interests.pcap,tx_pcap=out0.pcap \
//       --port net_pcap1,rx_pcap=empty.pcap,tx_pcap=out1.pcap
FromInput
  -> NDNLookup(ndn-names-demo.txt)
  -> ToOutput;
