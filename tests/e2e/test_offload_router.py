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
import random
import sys

from scapy.all import IP, UDP, Ether, Raw  # noqa: E402

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


def main():
    rng = random.Random(11)
    work = e2e.Workdir("offload-router")
    routes = routes_text(rng)
    routes_file = work.file("routes.txt", routes)
    frames = traffic(rng, routes)
    work.pcap("in.pcap", frames)
    work.pcap("empty.pcap", [])
    failures = []

    cpu, device, split, failure = e2e.offload_modes(
        work, "ipv4-router-offload.click", "configs/routes-demo.txt, AGGREGATE 32",
        f"{routes_file}, AGGREGATE 4", "IPLookupOffload")
    if cpu[0] is None:
        return 1
    expect = {0: [], 1: [], None: []}
    table = parse_routes(routes)
    for f in frames:
        expect[lpm(table, f[IP].dst)].append(seq(f))
    for port in (0, 1):
        got = [seq(g) for g in cpu[2][port]]
        if got != expect[port]:
            failures.append(f"CPU-only port {port}: {len(got)} packets, independent LPM says {len(expect[port])}")
        for g in cpu[2][port][:50]:
            fresh = g[IP].copy()
            fresh.chksum = None
            if g[IP].ttl != 63 or IP(bytes(fresh)).chksum != g[IP].chksum:
                failures.append(f"CPU-only port {port}: bad TTL or checksum")
                break
    # Every IPv4 frame goes to the device in device-only mode, routed or not.
    failures += e2e.check_offload_modes(cpu, device, split, failure, lambda g: (g[UDP].sport, seq(g)),
                                        PACKETS, bool(e2e.offload_devices()))
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
