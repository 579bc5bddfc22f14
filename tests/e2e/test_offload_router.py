#!/usr/bin/env python3
"""End to end: the IPv4 router with its lookup offloaded (configs/ipv4-router-offload.click).

The same pcap goes through the router four times: CPU-only, device-only (every batch on the
first device of `fulcrum devices`: PoCL in CI), a 50 % fixed split with flow affinity, and
device-only with a device failure injected after 3 tasks (FULCRUM_FAIL_DEVICE_AFTER). The
CPU-only output must be right by an independent LPM computed here (each packet out of the port
of its longest matching route, TTL - 1, checksum valid per scapy); device-only must be byte for
byte the same pcaps; the split and the failure runs must hold the same packets per port, with
every flow's packets in their original order under affinity; and the counters must show that
the device did the work (or, after the failure, that its tasks were re-run on the CPU).
"""
import ipaddress
import json
import os
import random
import subprocess
import sys

from scapy.all import IP, UDP, Ether, Raw, rdpcap  # noqa: E402

import fulcrum_e2e as e2e

FLOWS = 200
PACKETS = 6000


def routes_text(rng):
    nets = {}
    while len(nets) < 400:
        length = rng.choice([8, 16, 20, 24, 24, 28, 32])
        nets[ipaddress.ip_network((rng.getrandbits(32) >> (32 - length) << (32 - length), length))] = rng.randrange(2)
    return "".join(f"{net} {port}\n" for net, port in nets.items())


def lpm(table, addr):
    a = ipaddress.ip_address(addr)
    best = None
    for net, port in table:
        if a in net and (best is None or net.prefixlen > best[0]):
            best = (net.prefixlen, port)
    return None if best is None else best[1]


def parse_routes(text):
    table = {}
    for line in text.splitlines():
        net, port = line.split()
        table[ipaddress.ip_network(net)] = int(port)
    return list(table.items())


def traffic(rng, routes):
    nets = [ipaddress.ip_network(l.split()[0]) for l in routes.splitlines()]
    dsts = []
    for _ in range(FLOWS):
        n = rng.choice(nets)
        host = rng.getrandbits(32 - n.prefixlen) if n.prefixlen < 32 else 0
        dsts.append(str(ipaddress.ip_address(int(n.network_address) + host)) if rng.random() < 0.9
                    else str(ipaddress.ip_address(rng.getrandbits(32))))
    frames = []
    for i in range(PACKETS):
        f = i % FLOWS
        frames.append(Ether(src="02:aa:00:00:00:01", dst="02:bb:00:00:00:02") /
                      IP(src=f"10.1.{f >> 8}.{f & 0xFF}", dst=dsts[f], ttl=64) /
                      UDP(sport=1000 + f, dport=2000) / Raw(i.to_bytes(4, "big") + bytes(14)))
    return frames


def seq(frame):
    return int.from_bytes(bytes(frame[Raw])[:4], "big")


def run(work, name, routes_file, balancer, lookup_extra="", env_extra=None):
    config = open(os.path.join(e2e.SOURCE_DIR, "configs", "ipv4-router-offload.click")).read()
    config = config.replace("DeviceOnly", balancer).replace("configs/routes-demo.txt, AGGREGATE 32",
                                                            f"{routes_file}, AGGREGATE 4{lookup_extra}")
    path = work.file(f"{name}.click", config)
    outs = [work.file(f"{name}-out{p}.pcap") for p in (0, 1)]
    ports = [e2e.pcap_port(0, work.file("in.pcap"), outs[0]),
             e2e.pcap_port(1, work.file("empty.pcap"), outs[1])]
    env = dict(os.environ, **(env_extra or {}))
    old = os.environ.copy()
    os.environ.update(env)
    try:
        _, stats = e2e.run_fulcrum(work, path, ports)
    finally:
        os.environ.clear()
        os.environ.update(old)
    counters = {}
    if stats is not None:
        for el in stats["elements"]:
            if el["class"] == "IPLookupOffload":
                counters = el.get("counters", {})
    return stats, counters, [rdpcap(o) if stats else [] for o in outs]


def main():
    rng = random.Random(11)
    work = e2e.Workdir("offload-router")
    routes = routes_text(rng)
    routes_file = work.file("routes.txt", routes)
    frames = traffic(rng, routes)
    work.pcap("in.pcap", frames)
    work.pcap("empty.pcap", [])
    devices = json.loads(subprocess.run([e2e.FULCRUM, "devices", "--json"], capture_output=True,
                                        text=True, check=True).stdout)["devices"]
    failures = []

    cpu_stats, _, cpu_out = run(work, "cpu", routes_file, "CPUOnly")
    if cpu_stats is None:
        return 1
    expect = {0: [], 1: [], None: []}
    table = parse_routes(routes)
    for f in frames:
        expect[lpm(table, f[IP].dst)].append(seq(f))
    for port in (0, 1):
        got = [seq(g) for g in cpu_out[port]]
        if got != expect[port]:
            failures.append(f"CPU-only port {port}: {len(got)} packets, independent LPM says {len(expect[port])}")
        for g in cpu_out[port][:50]:
            fresh = g[IP].copy()
            fresh.chksum = None
            if g[IP].ttl != 63 or IP(bytes(fresh)).chksum != g[IP].chksum:
                failures.append(f"CPU-only port {port}: bad TTL or checksum")
                break

    dev_stats, dev_c, dev_out = run(work, "device", routes_file, "DeviceOnly")
    split_stats, split_c, split_out = run(work, "split", routes_file, "FixedFraction(0.5)", ", AFFINITY true")
    fail_stats, fail_c, fail_out = run(work, "failure", routes_file, "DeviceOnly",
                                       env_extra={"FULCRUM_FAIL_DEVICE_AFTER": "3"})
    if None in (dev_stats, split_stats, fail_stats):
        return work.finish(failures + ["a run failed"])
    for name, stats in (("device", dev_stats), ("split", split_stats), ("failure", fail_stats)):
        if not stats["balanced"]:
            failures.append(f"{name}: buffer balance does not hold")
        if stats["dropped"] != cpu_stats["dropped"]:
            failures.append(f"{name}: {stats['dropped']} dropped, CPU-only {cpu_stats['dropped']}")
    for port in (0, 1):
        if [bytes(g) for g in dev_out[port]] != [bytes(g) for g in cpu_out[port]]:
            failures.append(f"device-only port {port}: output differs from CPU-only")
        for name, out in (("split", split_out), ("failure", fail_out)):
            if sorted(bytes(g) for g in out[port]) != sorted(bytes(g) for g in cpu_out[port]):
                failures.append(f"{name} port {port}: not the same packets as CPU-only")
        flows = {}
        for g in split_out[port]:
            flows.setdefault(g[UDP].sport, []).append(seq(g))
        if any(s != sorted(s) for s in flows.values()):
            failures.append(f"split port {port}: a flow was reordered despite AFFINITY")

    if devices:
        routed = len(expect[0]) + len(expect[1])
        if dev_c.get("device_packets", 0) < routed:
            failures.append(f"device-only: {dev_c.get('device_packets')} packets on the device, expected all {routed}")
        if not 0 < split_c.get("device_packets", 0) < PACKETS:
            failures.append(f"split: {split_c.get('device_packets')} packets on the device")
        if fail_c.get("tasks_failed", 0) == 0 or fail_c.get("no_device_batches", 0) == 0:
            failures.append(f"failure: counters {fail_c} show no failed task re-run on the CPU")
    else:
        print("no offload device: every mode ran on the CPU (checked for identical output only)")
    if not failures:
        print(f"ok: {PACKETS} packets, device-only identical to CPU-only; split and failure lose nothing "
              f"(device packets {dev_c.get('device_packets')}/{split_c.get('device_packets')}, "
              f"failed tasks re-run {fail_c.get('tasks_failed')})")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
