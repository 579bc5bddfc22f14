#!/usr/bin/env python3
"""End to end: the IPv6 router with its lookup offloaded (configs/ipv6-router-offload.click).

The same pcap of scapy IPv6 packets goes through the router four times: CPU-only, device-only
(every batch on the first device of `fulcrum devices`: PoCL in CI), a 50 % fixed split with
flow affinity, and device-only with a device failure injected after 3 tasks
(FULCRUM_FAIL_DEVICE_AFTER). The CPU-only output must be right by an independent LPM computed
here with the ipaddress module (each packet out of the port of its longest matching route, hop
limit - 1); device-only must be byte for byte the same pcaps; the split and the failure runs
must hold the same packets per port, with every flow's packets in their original order under
affinity; and the counters must show that the device did the work (or, after the failure, that
its tasks were re-run on the CPU).
"""
import ipaddress
import random
import sys

from scapy.all import IPv6, UDP, Ether, Raw  # noqa: E402

import fulcrum_e2e as e2e

FLOWS = 200
PACKETS = 3000
ROUTES = 300


def routes_text(rng):
    """Routes /48../64 under 2001:db8::/32, and shorter ones (/32../47) covering some of them."""
    nets = {}
    while len(nets) < ROUTES:
        length = rng.randint(48, 64)
        base = (0x20010DB8 << 96) | (rng.getrandbits(32) << 64)
        net = ipaddress.ip_network((base >> (128 - length) << (128 - length), length))
        nets[net] = rng.randrange(2)
        if rng.random() < 0.15:
            shorter = rng.randint(32, 47)
            nets[net.supernet(new_prefix=shorter)] = rng.randrange(2)
    return "".join(f"{net} {port}\n" for net, port in nets.items())


def parse_routes(text):
    table = {}
    for line in text.splitlines():
        net, port = line.split()
        table[ipaddress.ip_network(net)] = int(port)
    return list(table.items())


def lpm(table, addr):
    a = ipaddress.ip_address(addr)
    best = None
    for net, port in table:
        if a in net and (best is None or net.prefixlen > best[0]):
            best = (net.prefixlen, port)
    return None if best is None else best[1]


def traffic(rng, table):
    dsts = []
    for _ in range(FLOWS):
        net = rng.choice(table)[0]
        host = rng.getrandbits(128 - net.prefixlen)
        inside = int(net.network_address) + host
        dsts.append(str(ipaddress.ip_address(inside if rng.random() < 0.85
                                             else (0x20010DB9 << 96) | rng.getrandbits(96))))
    frames = []
    for i in range(PACKETS):
        f = i % FLOWS
        frames.append(Ether(src="02:aa:00:00:00:01", dst="02:bb:00:00:00:02") /
                      IPv6(src=f"fd00::{f:x}", dst=dsts[f], hlim=64) /
                      UDP(sport=1000 + f, dport=2000) / Raw(i.to_bytes(4, "big") + bytes(12)))
    return frames


def seq(frame):
    return int.from_bytes(bytes(frame[Raw])[:4], "big")


def main():
    rng = random.Random(13)
    work = e2e.Workdir("offload-ipv6-router")
    routes = routes_text(rng)
    routes_file = work.file("routes6.txt", routes)
    table = parse_routes(routes)
    frames = traffic(rng, table)
    work.pcap("in.pcap", frames)
    work.pcap("empty.pcap", [])
    failures = []

    cpu, device, split, failure = e2e.offload_modes(
        work, "ipv6-router-offload.click", "configs/routes6-demo.txt, AGGREGATE 32",
        f"{routes_file}, AGGREGATE 4", "IP6LookupOffload")
    if cpu[0] is None:
        return 1
    expect = {0: [], 1: [], None: []}
    port_of = {}
    for f in frames:
        dst = f[IPv6].dst
        if dst not in port_of:
            port_of[dst] = lpm(table, dst)
        expect[port_of[dst]].append(seq(f))
    if not expect[None] or not expect[0] or not expect[1]:
        failures.append("test traffic does not reach both ports and miss too")
    for port in (0, 1):
        got = [seq(g) for g in cpu[2][port]]
        if got != expect[port]:
            failures.append(f"CPU-only port {port}: {len(got)} packets, independent LPM says {len(expect[port])}")
        if any(g[IPv6].hlim != 63 for g in cpu[2][port]):
            failures.append(f"CPU-only port {port}: hop limit not decremented")

    failures += e2e.check_offload_modes(cpu, device, split, failure, lambda g: (g[UDP].sport, seq(g)),
                                        PACKETS, bool(e2e.offload_devices()))
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
