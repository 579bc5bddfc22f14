// IPsec ESP tunnel gateway, inbound: put fragmented ESP packets back together, verify the ICV,
// check the anti-replay window, decrypt, check the padding and strip the outer headers. SA
// file: configs/sa-demo.txt ("in" SAs).
//
//   fulcrum run configs/ipsec-decap.click --port net_pcap0,rx_pcap=esp.pcap,tx_pcap=inner.pcap

FromInput
  -> IPReassembler
  -> IPsecESPDecap(sa-demo.txt)
  -> ToOutput;
