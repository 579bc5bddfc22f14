// An IDS (NBA §4.1, Snort/Suricata rule subset, docs/ids.md): IPv4 and IPv6 fragments are put
// back together first (IPReassembler, as Suricata's defrag does), TCP streams are reassembled
// inside IDSMatch (STREAM true), and every packet is matched against the rules; alerts go to
// /tmp/fulcrum-ids-alerts.jsonl (JSON lines) and alerted packets leave through output 1, here
// counted and dropped; clean packets go out as they came.
//
//   build/fulcrum run configs/ids.click --port gen:size=512,flows=1024 \
//       --port net_null0,no-rx=1 --seconds 5
//   build/fulcrum run configs/ids.click \
//       --port net_pcap0,rx_pcap=traffic.pcap,tx_pcap=clean.pcap \
//       --port net_pcap1,rx_pcap=empty.pcap,tx_pcap=out1.pcap
//
// The generator's UDP payloads are zeros, so built-in traffic raises no alert.
ids :: IDSMatch(ids-rules-demo.rules, ENGINE hyperscan,
                ALERTS /tmp/fulcrum-ids-alerts.jsonl);
FromInput -> IPReassembler -> ids -> ToOutput;
ids[1] -> Counter -> Discard;
