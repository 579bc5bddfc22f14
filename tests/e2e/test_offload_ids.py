#!/usr/bin/env python3
"""End to end: the IDS with its content prefilter offloaded (configs/ids-offload.click).

The traffic and rules of test_ids_scapy.py (TCP, UDP, ICMP and ICMPv6 packets with planted
contents in random case and position, hex bytes, regex matches; IPv4 and IPv6 with extension
headers, untagged, 802.1Q and QinQ; IPv6 address rules; malformed frames of every drop reason:
the device scans the IP payload the shared parser finds behind tags and extension headers) go
through the pipeline
CPU-only, device-only (every batch on the first device of `fulcrum devices`: PoCL in CI) and
with a 50 % fixed split. The (packet index, sid) alert set of CPU-only must equal
the brute-force Python reference of test_ids_scapy.py (its own rule parser, bytes.find and re),
device-only's alert log must be CPU-only's line for line (results are applied in arrival
order), the split must raise the same alerts
(packet indices aside: a split reorders); clean packets leave unchanged on port 0, alerted ones
are counted and dropped behind output 1, malformed ones with their reason, and the buffer balance
holds. A split inspects packets in another order than they arrived, so for the rules with state
(thresholds, flowbits, flow: directions and established) it is not told which packets alert: a
packet that only such rules match may leave on either port, and the number of alerts must be the
reference's except for the rules that read flowbits (a reader may run before the setter) or
flow state (a packet may be inspected before the one that established its flow); every other
packet's port and every other rule's alerts are checked exactly.
"""
import collections
import json
import random
import sys

from scapy.all import rdpcap  # noqa: E402

import fulcrum_e2e as e2e
import test_ids_scapy as ref

DEMO_RULES = "ids-rules-demo.rules"
DEMO_LOG = "/tmp/fulcrum-ids-alerts.jsonl"
ELEMENT_ARGS = "AGGREGATE 32)"


def main():
    rng = random.Random(ref.SEED)
    work = e2e.Workdir("offload-ids")
    rules_path = work.file("e2e.rules", ref.RULES)
    rules = ref.parse_rules(ref.RULES)
    traffic, bad = ref.make_traffic(rng)
    work.pcap("in.pcap", traffic)
    work.pcap("empty.pcap", [])
    frames = rdpcap(work.file("in.pcap"))
    want, clean, state = set(), [], {}
    stateful = {r["sid"] for r in rules if ref.stateful(r)}
    readers = {r["sid"] for r in rules if ref.order_dependent(r)}
    sure_clean, maybe = collections.Counter(), collections.Counter()  # for the split
    for i, p in enumerate(frames):
        raw = bytes(p)
        if i in bad:
            continue
        sids = ref.reference_alerts(rules, p, state)
        want |= {(i, s) for s in sids}
        if not sids:
            clean.append(raw)
        unordered = ref.reference_alerts(rules, p, None)
        if not unordered:
            sure_clean[raw] += 1
        elif set(unordered) <= stateful:
            maybe[raw] += 1
    failures, logs = [], {}
    for name, balancer in (("cpu", "CPUOnly"), ("device", "DeviceOnly"),
                           ("split", "FixedFraction(0.5)")):
        log = work.file(f"alerts-{name}.jsonl")
        stats, counters, outs = e2e.run_offload_mode(
            work, name, "ids-offload.click",
            [("DeviceOnly", balancer), (DEMO_RULES, rules_path), (DEMO_LOG, log),
             (ELEMENT_ARGS, "AGGREGATE 4, FLUSH_US 0, STREAM false)")], "IDSMatchOffload")
        if stats is None:
            failures.append(f"{name}: the run failed")
            continue
        with open(log) as f:
            logs[name] = f.read()
        alerts = [json.loads(line) for line in logs[name].splitlines()]
        got = {(a["packet"], a["sid"]) for a in alerts}
        if name in ("cpu", "device") and got != want:
            failures.append(f"{name}: alerts differ from the reference: missing "
                            f"{sorted(want - got)[:10]}, extra {sorted(got - want)[:10]}")
        counted = [a["sid"] for a in alerts if name != "split" or a["sid"] not in readers]
        if sorted(counted) != sorted(s for _, s in want if name != "split" or s not in readers):
            failures.append(f"{name}: not the reference's sids")
        if not stats["balanced"]:
            failures.append(f"{name}: buffer balance does not hold")
        drops = e2e.drops_by_reason(stats)
        for reason, n in ref.MALFORMED.items():
            if drops.get(reason, 0) != n:
                failures.append(f"{name}: drop {reason}: {drops.get(reason, 0)}, expected {n}")
        out0 = [bytes(p) for p in outs[0]]
        if name != "split":
            if drops.get("discarded", 0) != len({i for i, _ in want}):
                failures.append(f"{name}: {drops.get('discarded', 0)} packets behind output 1")
            if out0 != clean:
                failures.append(f"{name}: port 0 sent {len(out0)} frames, expected {len(clean)} "
                                "clean")
        else:
            sent = collections.Counter(out0)
            if sure_clean - sent or (sent - sure_clean) - maybe:
                failures.append(f"split: port 0 sent {len(out0)} frames: not the clean ones "
                                f"({sum(sure_clean.values())}) and some of the {sum(maybe.values())} "
                                "only stateful rules match")
            if drops.get("discarded", 0) + len(out0) != len(frames) - len(bad):
                failures.append(f"split: {drops.get('discarded', 0)} packets behind output 1")
        if name == "device" and e2e.offload_devices() and counters.get("device_packets") != len(frames):
            failures.append(f"device: {counters.get('device_packets')} packets on the device, "
                            f"expected {len(frames)}")
    if "cpu" in logs and "device" in logs and logs["device"] != logs["cpu"]:
        failures.append("device-only alert log differs from CPU-only")
    if not failures:
        print(f"ok: {len(want)} alerts on {len(frames)} packets identical to the reference "
              "CPU-only, device-only and split; device-only alert log identical to CPU-only")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
