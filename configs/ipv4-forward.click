// IPv4 forwarding as the thesis measures it (paper 001 §3.2): packets move from one interface to
// the other; the header is checked (corrupted packets dropped), the TTL decremented, the MAC
// addresses rewritten for the port they leave by. Packets whose TTL runs out are answered with an
// ICMP Time Exceeded message sent back to their source. Only headers are read or written.
//
//   fulcrum run configs/ipv4-forward.click --port gen:size=64,flows=1024 --port net_null0,no-rx=1

ttl :: DecIPTTL;
mac :: EtherRewrite(0 02:00:00:00:00:10 02:00:00:00:01:10,
                    1 02:00:00:00:00:11 02:00:00:00:01:11);

FromInput -> CheckIPHeader -> ttl -> CrossConnect(0 1) -> mac -> ToOutput;
ttl[1] -> ICMPError(10.0.0.1, 11, 0) -> mac;
