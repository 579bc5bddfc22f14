// IPsec ESP tunnel gateway with a security policy database in front (RFC 4301 §4.4.1):
// IPsecPolicy sends PROTECT traffic through encapsulation, encryption and authentication,
// BYPASS traffic out unchanged, and drops DISCARD traffic (reason "discard"). Policy file:
// configs/spd-demo.txt (format in src/lib/ipsec_spd.hh); SA file: configs/sa-demo.txt. The SA is
// the one a PROTECT rule names with SPI (POLICY_SPI true), else the one whose selector matches
// the inner destination, as in ipsec-gateway.click. Both files can be reloaded at run time.
//
//   fulcrum run configs/ipsec-gateway-spd.click \
//     --port net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap

spd :: IPsecPolicy(spd-demo.txt);
FromInput -> spd;
spd[0]
  -> IPsecESPEncap(sa-demo.txt, POLICY_SPI true)
  -> IPsecAES(sa-demo.txt)
  -> IPsecAuthHMACSHA1(sa-demo.txt)
  -> ToOutput;
spd[1] -> ToOutput;
