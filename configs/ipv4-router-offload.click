// IPv4 router with the route lookup offloadable (NBA Fig. 8a with an offloadable IPlookup): the
// balancer decides per batch whether IPLookupOffload runs the DIR-24-8 lookup on the CPU or on a
// device (`fulcrum devices` lists them; PoCL's OpenCL CPU device when there is no GPU).
// Swap the balancer: CPUOnly, DeviceOnly, FixedFraction(0.3); add AFFINITY true to
// IPLookupOffload to keep each flow on one processor.
//
//   fulcrum run configs/ipv4-router-offload.click \
//     --port gen:size=64,flows=1024,dst=routes,routes=configs/routes-demo.txt \
//     --port net_null0,no-rx=1

FromInput
  -> CheckIPHeader
  -> DeviceOnly
  -> IPLookupOffload(routes-demo.txt, AGGREGATE 32)
  -> DecIPTTL
  -> EtherRewrite(0 02:00:00:00:00:10 02:00:00:00:01:10,
                  1 02:00:00:00:00:11 02:00:00:00:01:11)
  -> ToOutput;
