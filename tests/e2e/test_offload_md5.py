#!/usr/bin/env python3
"""End to end: MD5 hashing with the digest offloaded (configs/md5-offload.click).

The capture of test_md5_pcap.py (scapy IPv4 UDP and TCP frames with payloads of 0..1458 bytes,
Ethernet padding, and frames that must be dropped) goes through the pipeline with TRAILER true
CPU-only, device-only (every batch on the first device of `fulcrum devices`: PoCL in CI) and
with a 50 % fixed split. Every frame that leaves must be the frame that went in followed by
hashlib.md5 of its payload (taken by scapy); device-only must be byte for byte the CPU-only
output; the drops must match by reason, the buffer balance must hold, and the counters must
show that the device hashed every valid frame in device-only mode.
"""
import hashlib
import random
import sys

import fulcrum_e2e as e2e
import test_md5_pcap as ref

ELEMENT = "MD5DigestOffload(AGGREGATE 32)"
ELEMENT_TEST = "MD5DigestOffload(TRAILER true, AGGREGATE 4, FLUSH_US 0)"


def main():
    rng = random.Random(11)
    work = e2e.Workdir("offload-md5")
    frames, expect = ref.make_frames(rng)
    work.pcap("in.pcap", frames)
    work.pcap("empty.pcap", [])
    want_drops, kept = {}, []
    for f, e in zip(frames, expect):
        if isinstance(e, str):
            want_drops[e] = want_drops.get(e, 0) + 1
        else:
            kept.append(f + hashlib.md5(e).digest())
    runs = {}
    for name, balancer in (("cpu", "CPUOnly"), ("device", "DeviceOnly"),
                           ("split", "FixedFraction(0.5)")):
        runs[name] = e2e.run_offload_mode(work, name, "md5-offload.click",
                                          [("DeviceOnly", balancer), (ELEMENT, ELEMENT_TEST)],
                                          "MD5DigestOffload")
    failures = []
    for name, (stats, counters, outs) in runs.items():
        if stats is None:
            failures.append(f"{name}: the run failed")
            continue
        got = [bytes(p) for p in outs[0]]
        if not stats["balanced"]:
            failures.append(f"{name}: buffer balance does not hold")
        if e2e.drops_by_reason(stats) != want_drops:
            failures.append(f"{name}: drops {e2e.drops_by_reason(stats)}, expected {want_drops}")
        if sorted(got) != sorted(kept):
            bad = len(set(kept) - set(got))
            failures.append(f"{name}: {bad} of {len(kept)} frames without the hashlib.md5 trailer")
        if name != "split" and got != kept:
            failures.append(f"{name}: frames out of order")
        if counters.get("bytes") != sum(len(e) for e in expect if not isinstance(e, str)):
            failures.append(f"{name}: bytes counter {counters.get('bytes')}")
    if not failures and [bytes(p) for p in runs["device"][2][0]] != [bytes(p) for p in runs["cpu"][2][0]]:
        failures.append("device-only output differs from CPU-only")
    have_devices = bool(e2e.offload_devices())
    dev_packets = runs["device"][1].get("device_packets", 0) if runs["device"][0] else 0
    if have_devices and dev_packets != len(kept):
        failures.append(f"device-only: {dev_packets} packets on the device, expected {len(kept)}")
    if not have_devices:
        print("no offload device: every mode ran on the CPU (checked against hashlib only)")
    if not failures:
        print(f"ok: {len(kept)} digests equal hashlib.md5 CPU-only, device-only ({dev_packets} on "
              f"the device) and split; drops by reason match")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
