// IPv4 router (NBA Fig. 8a, RFC 1812 fast path): validate, route, decrement TTL, rewrite MACs.
// Route file: one "A.B.C.D/LEN PORT" a line; PORT is the index of the --port it leaves by.
//
//   fulcrum run configs/ipv4-router.click \
//     --port gen:size=64,flows=1024,dst=routes,routes=configs/routes-demo.txt --port net_null0,no-rx=1

FromInput
  -> CheckIPHeader
  -> IPLookup(routes-demo.txt)
  -> DecIPTTL
  -> EtherRewrite(0 02:00:00:00:00:10 02:00:00:00:01:10,
                  1 02:00:00:00:00:11 02:00:00:00:01:11)
  -> ToOutput;
