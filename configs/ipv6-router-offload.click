// IPv6 router with the route lookup offloadable (NBA's IPv6 router with an offloadable lookup):
// the balancer decides per batch whether IP6LookupOffload walks the compressed trie of paper 003
// §3.6 on the CPU or on a device (`fulcrum devices` lists them; PoCL's OpenCL CPU device when
// there is no GPU). Swap the balancer: CPUOnly, DeviceOnly, FixedFraction(0.3); add
// AFFINITY true to IP6LookupOffload to keep each flow on one processor.
//
//   fulcrum run configs/ipv6-router-offload.click \
//     --port gen:proto=ipv6,size=78,flows=1024,dst=routes,routes=configs/routes6-demo.txt \
//     --port net_null0,no-rx=1

FromInput
  -> CheckIP6Header
  -> DeviceOnly
  -> IP6LookupOffload(routes6-demo.txt, AGGREGATE 32)
  -> DecIP6HLim
  -> EtherRewrite(0 02:00:00:00:00:10 02:00:00:00:01:10,
                  1 02:00:00:00:00:11 02:00:00:00:01:11)
  -> ToOutput;
