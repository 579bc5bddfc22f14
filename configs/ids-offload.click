// The IDS (NBA §4.1) with its content prefilter offloadable: the balancer decides per batch
// whether IDSMatchOffload walks the Aho-Corasick DFA over the IP payloads on the CPU or on a
// device (the ids_ac_scan kernel; PoCL's OpenCL CPU device when there is no GPU); the rule
// engine runs on the CPU either way, so the alerts are those of IDSMatch with ENGINE ac. Alerts
// go to /tmp/fulcrum-ids-alerts.jsonl; alerted packets leave through output 1, here counted and
// dropped. Swap the balancer: CPUOnly, DeviceOnly, FixedFraction(0.3).
//
//   build/fulcrum run configs/ids-offload.click --port gen:size=512,flows=1024 \
//       --port net_null0,no-rx=1 --seconds 5
ids :: IDSMatchOffload(ids-rules-demo.rules, ALERTS /tmp/fulcrum-ids-alerts.jsonl,
                       AGGREGATE 32);
FromInput -> DeviceOnly -> ids -> ToOutput;
ids[1] -> Counter -> Discard;
