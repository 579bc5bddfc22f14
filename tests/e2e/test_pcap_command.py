#!/usr/bin/env python3
"""End to end: `fulcrum pcap` writes the generator's frames as a capture that scapy reads (the
count, the size, IPv4 addressed by the route file's prefixes), and README step 4 replays it:
every frame in is routed out of port 0 or 1 with the balance holding.
"""
import ipaddress
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from fulcrum_e2e import FULCRUM, SOURCE_DIR, Workdir  # noqa: E402
from scapy.all import IP, rdpcap  # noqa: E402

ROUTES = os.path.join(SOURCE_DIR, "configs", "routes-demo.txt")


def fulcrum(args, cwd):
    return subprocess.run([os.path.abspath(FULCRUM), *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def main():
    work = Workdir("pcap")
    failures = []
    res = fulcrum(["pcap", "in.pcap", f"gen:size=64,flows=64,dst=routes,routes={ROUTES}",
                   "--packets", "3000"], work.path)
    res0 = fulcrum(["pcap", "empty.pcap", "--packets", "0"], work.path)
    if res.returncode != 0 or res0.returncode != 0:
        failures.append(f"fulcrum pcap: {res.stderr!r} {res0.stderr!r}")
        return work.finish(failures)
    frames = rdpcap(os.path.join(work.path, "in.pcap"))
    nets = [ipaddress.ip_network(line.split()[0]) for line in open(ROUTES)
            if line.strip() and not line.startswith("#")]
    if len(frames) != 3000 or any(len(f) != 64 or IP not in f for f in frames):
        failures.append(f"in.pcap: {len(frames)} frames, sizes {sorted({len(f) for f in frames})}")
    else:
        dsts = {ipaddress.ip_address(f[IP].dst) for f in frames}
        sample = sorted(dsts)[:50]
        if any(not any(d in n for n in nets) for d in sample):
            failures.append("dst=routes frames are not addressed into the route file's prefixes")
    if len(rdpcap(os.path.join(work.path, "empty.pcap"))) != 0:
        failures.append("--packets 0 did not write an empty capture")
    res = fulcrum(["pcap", "x.pcap", "gen:sizee=64"], work.path)
    if res.returncode == 0 or "unknown generator key 'sizee'" not in res.stderr:
        failures.append(f"a bad generator spec: exit {res.returncode}, {res.stderr!r}")

    stats = os.path.join(work.path, "stats.json")
    res = fulcrum(["run", os.path.join(SOURCE_DIR, "configs", "ipv4-router.click"), "--quiet",
                   "--stats-json", stats,
                   "--port", "net_pcap0,rx_pcap=in.pcap,tx_pcap=out0.pcap",
                   "--port", "net_pcap1,rx_pcap=empty.pcap,tx_pcap=out1.pcap"], work.path)
    if res.returncode != 0:
        failures.append(f"README step 4: exit {res.returncode}: {res.stderr!r}")
    else:
        s = json.load(open(stats))
        if s["packets_in"] != 3000 or not s["balanced"] or s["packets_out"] == 0:
            failures.append(f"README step 4: in {s['packets_in']}, out {s['packets_out']}, "
                            f"balanced {s['balanced']}")
    if not failures:
        print("ok: fulcrum pcap wrote 3000 routed frames and an empty capture; the replay balances")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
