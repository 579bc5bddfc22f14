// IPsec ESP tunnel gateway, outbound, with the crypto offloadable (NBA §4.1, Fig. 8c): the
// balancer decides per batch whether IPsecAESOffload and IPsecAuthHMACSHA1Offload run on the CPU
// (intel-ipsec-mb) or on a device (`fulcrum devices` lists them; PoCL's OpenCL CPU device when
// there is no GPU). The two share the ESP region on the device (chain key "esp-region"): one
// task, one fused kernel (ipsec_aes_hmac_fused); CHAIN false or FUSE false on IPsecAESOffload
// turn either off. Swap the balancer: CPUOnly, DeviceOnly, FixedFraction(0.3).
// SA file: configs/sa-demo.txt (format in src/lib/ipsec_sa.hh).
//
//   fulcrum run configs/ipsec-gateway-offload.click --port gen:size=64,flows=1024 \
//     --port net_null0,no-rx=1

FromInput
  -> IPsecESPEncap(sa-demo.txt)
  -> DeviceOnly
  -> IPsecAESOffload(sa-demo.txt, AGGREGATE 32)
  -> IPsecAuthHMACSHA1Offload(sa-demo.txt, AGGREGATE 32)
  -> ToOutput;
