// IPv6 router (NBA's IPv6 sample application): header check, longest-prefix match on the
// compressed trie of paper 003 §3.6 (IP6Lookup's default; ALGORITHM bsearch picks binary search
// on prefix lengths over per-length hash tables), hop limit, MAC rewrite per output port.
//
//   build/fulcrum run configs/ipv6-router.click \
//       --port gen:proto=ipv6,size=78,flows=1024,dst=routes,routes=configs/routes6-demo.txt \
//       --port net_null0,no-rx=1 --packets 10000000
FromInput
  -> CheckIP6Header
  -> IP6Lookup(routes6-demo.txt)
  -> DecIP6HLim
  -> EtherRewrite(0 02:00:00:00:00:10 02:00:00:00:01:10,
                  1 02:00:00:00:00:11 02:00:00:00:01:11)
  -> ToOutput;
