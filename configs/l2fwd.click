// NBA's L2 forwarder: swap MACs and spread frames round-robin over all ports.
//
//   fulcrum run configs/l2fwd.click --port net_null0 --port net_null1 --seconds 5

FromInput -> L2Forward(METHOD roundrobin) -> ToOutput;
