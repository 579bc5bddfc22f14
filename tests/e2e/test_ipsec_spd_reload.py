#!/usr/bin/env python3
"""An IPsec security policy replaced while the gateway runs on two workers (POST /api/reload).

The first policy protects the generator's traffic to 10.0.0.0/8 and bypasses the rest; the
second bypasses everything. Checked on the capture: no packet lost or dropped; before the reload
10.0.0.0/8 leaves as ESP and the rest in the clear, after it everything in the clear; a policy
file with an error is refused with FILE:LINE and the policy in service stays."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from fulcrum_e2e import Workdir  # noqa: E402
from live_run import LiveRun, check_lossless_reloads, pcap_frames, received  # noqa: E402
from waits import GUARD_S  # noqa: E402

SA = ("4096 192.0.2.1 198.51.100.1 2b7e151628aed2a6abf7158809cf4f3cdeadbeef "
      "0102030405060708090a0b0c0d0e0f1011121314 0.0.0.0/0 DIR out\n")
POLL_S = 0.05
MAX_POLLS = int(GUARD_S / POLL_S)  # a bound on every wait (a hang), not a timing assertion
RUN_BOUND_S = 900  # --seconds: the run ends by SIGINT long before
PHASE = 20000      # packets to see before and after the reload
ESP = 50
TEN = 10           # first octet of the protected prefix


def frames(path):
    """(IP protocol, inner or outer destination's first octet) of every frame of a pcap."""
    return [(frame[23], frame[30]) for frame in pcap_frames(path)]


def wait_for(run, count):
    for _ in range(MAX_POLLS):
        if received(run) > count:
            return
        time.sleep(POLL_S)


def main():
    work = Workdir("ipsec-spd-reload")
    failures = []
    sa = work.file("sa.txt", SA)
    first = work.file("spd-1.txt", "PROTECT DST 10.0.0.0/8\nDEFAULT BYPASS\n")
    second = work.file("spd-2.txt", "DEFAULT BYPASS\n")
    broken = work.file("spd-3.txt", "BYPASS\nPROTECT PROTO udp TYPE 3\n")
    routes = work.file("dst.txt", "10.0.0.0/8 1\n172.16.0.0/12 1\n")
    config = work.file("gw.click", f"""spd :: IPsecPolicy({first});
FromInput -> spd;
spd[0] -> IPsecESPEncap({sa}) -> IPsecAES({sa}) -> IPsecAuthHMACSHA1({sa}) -> L2Forward(PORT 1)
       -> ToOutput;
spd[1] -> L2Forward(PORT 1) -> ToOutput;
""")
    out = work.file("out.pcap")
    stats = work.file("stats.json")
    run = LiveRun(config, [f"gen:size=128,flows=512,dst=routes,routes={routes},rate=100000",
                           f"net_pcap0,tx_pcap={out}"],
                  seconds=RUN_BOUND_S, extra=["--workers", "2", "--stats-json", stats])
    try:
        wait_for(run, PHASE)
        status, body = run.reload({"element": "spd", "file": broken})
        if status == 200 or f"{broken}:2: TYPE and CODE need PROTO icmp" not in str(body):
            failures.append(f"broken policy: HTTP {status}: {body}")
        wait_for(run, received(run) + PHASE)
        status, body = run.reload({"element": "spd", "file": second})
        if status != 200:
            failures.append(f"reload: HTTP {status}: {body}")
        wait_for(run, received(run) + PHASE)
    finally:
        code = run.stop()
    if code != 0:
        return work.finish(failures + [f"exit status {code}: {run.stderr()}"])
    st = json.load(open(stats))
    check_lossless_reloads(st, 1, failures)
    got = frames(out)
    if len(got) != st["ports"][1]["tx_packets"]:
        failures.append(f"capture holds {len(got)} packets, {st['ports'][1]['tx_packets']} sent")
    # ESP frames' outer destination is the tunnel's (198); the clear ones keep theirs.
    last_esp = max((i for i, (proto, _) in enumerate(got) if proto == ESP), default=-1)
    before, after = got[:last_esp + 1], got[last_esp + 1:]
    clear_ten_before = sum(1 for proto, octet in before if proto != ESP and octet == TEN)
    esp_before = sum(1 for proto, _ in before if proto == ESP)
    ten_after = sum(1 for proto, octet in after if proto != ESP and octet == TEN)
    # Two workers: a few clear 10/8 packets of the other worker may precede its last ESP one.
    if esp_before < PHASE // 4 or clear_ten_before > len(before) // 100:
        failures.append(f"before the reload: {esp_before} ESP, {clear_ten_before} of 10/8 in the clear")
    if ten_after < PHASE // 4:
        failures.append(f"after the reload: {ten_after} packets to 10/8 in the clear")
    if not failures:
        print(f"{len(got)} packets: {esp_before} ESP before the policy reload, {ten_after} to 10/8 in "
              f"the clear after it; a broken policy refused; nothing dropped")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
