// IPsec ESP tunnel gateway, outbound (NBA §4.1): encapsulate, encrypt (AES-128-CTR), authenticate
// (HMAC-SHA1-96). SA file: configs/sa-demo.txt (format in src/lib/ipsec_sa.hh).
//
//   fulcrum run configs/ipsec-gateway.click --port gen:size=64,flows=1024 --port net_null0,no-rx=1
//   fulcrum run configs/ipsec-gateway.click \
//     --port net_pcap0,rx_pcap=in.pcap,tx_pcap=esp.pcap

FromInput
  -> IPsecESPEncap(sa-demo.txt)
  -> IPsecAES(sa-demo.txt)
  -> IPsecAuthHMACSHA1(sa-demo.txt)
  -> ToOutput;
