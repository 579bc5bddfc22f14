// Ethertype demultiplexing: IPv4 to the router path, ARP counted and echoed, the rest dropped.
//
//   fulcrum run configs/classify.click --port net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap

c :: Classifier(12/0800, 12/0806, -);
FromInput -> DropBroadcasts -> c;
c[0] -> CheckIPHeader -> IPLookup(routes-demo.txt) -> DecIPTTL -> ToOutput;
c[1] -> arp :: Counter -> EtherMirror -> ToOutput;
c[2] -> Discard;
