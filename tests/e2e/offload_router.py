"""The IPv4 and IPv6 routers with their lookup offloaded, one test over per-family cases (run by
test_offload_router.py and test_offload_ipv6_router.py).

The same pcap goes through the router four times: CPU-only, device-only (every batch on the
first device of `fulcrum devices`: PoCL in CI), a 50 % fixed split with flow affinity, and
device-only with a device failure injected after 3 tasks (FULCRUM_FAIL_DEVICE_AFTER). The
CPU-only output must be right by an independent LPM computed here with the ipaddress module
(each packet out of the port of its longest matching route, TTL or hop limit - 1, and for IPv4
the checksum valid per scapy); device-only must be byte for byte the same pcaps; the split and
the failure runs must hold the same packets per port, with every flow's packets in their
original order under affinity; and the counters must show that the device did the work (or,
after the failure, that its tasks were re-run on the CPU).
"""
import ipaddress
import random
from dataclasses import dataclass
from typing import Callable

from scapy.all import IP, IPv6, UDP, Ether, Raw  # noqa: E402

import fulcrum_e2e as e2e

FLOWS = 200


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


def seq(frame):
    return int.from_bytes(bytes(frame[Raw])[:4], "big")


# ---- IPv4 -------------------------------------------------------------------------------------

def ipv4_routes(rng):
    nets = {}
    while len(nets) < 400:
        length = rng.choice([8, 16, 20, 24, 24, 28, 32])
        nets[ipaddress.ip_network((rng.getrandbits(32) >> (32 - length) << (32 - length), length))] = rng.randrange(2)
    return "".join(f"{net} {port}\n" for net, port in nets.items())


def ipv4_destination(rng, table):
    n = rng.choice([net for net, _ in table])
    host = rng.getrandbits(32 - n.prefixlen) if n.prefixlen < 32 else 0
    return (str(ipaddress.ip_address(int(n.network_address) + host)) if rng.random() < 0.9
            else str(ipaddress.ip_address(rng.getrandbits(32))))


def ipv4_frame(f, dst, i):
    return (Ether(src="02:aa:00:00:00:01", dst="02:bb:00:00:00:02") /
            IP(src=f"10.1.{f >> 8}.{f & 0xFF}", dst=dst, ttl=64) /
            UDP(sport=1000 + f, dport=2000) / Raw(i.to_bytes(4, "big") + bytes(14)))


def ipv4_output_problem(port, frames):
    for g in frames[:50]:
        fresh = g[IP].copy()
        fresh.chksum = None
        if g[IP].ttl != 63 or IP(bytes(fresh)).chksum != g[IP].chksum:
            return f"CPU-only port {port}: bad TTL or checksum"
    return None


# ---- IPv6 -------------------------------------------------------------------------------------

def ipv6_routes(rng):
    """Routes /48../64 under 2001:db8::/32, and shorter ones (/32../47) covering some of them."""
    nets = {}
    while len(nets) < 300:
        length = rng.randint(48, 64)
        base = (0x20010DB8 << 96) | (rng.getrandbits(32) << 64)
        net = ipaddress.ip_network((base >> (128 - length) << (128 - length), length))
        nets[net] = rng.randrange(2)
        if rng.random() < 0.15:
            shorter = rng.randint(32, 47)
            nets[net.supernet(new_prefix=shorter)] = rng.randrange(2)
    return "".join(f"{net} {port}\n" for net, port in nets.items())


def ipv6_destination(rng, table):
    net = rng.choice(table)[0]
    host = rng.getrandbits(128 - net.prefixlen)
    inside = int(net.network_address) + host
    return str(ipaddress.ip_address(inside if rng.random() < 0.85
                                    else (0x20010DB9 << 96) | rng.getrandbits(96)))


def ipv6_frame(f, dst, i):
    return (Ether(src="02:aa:00:00:00:01", dst="02:bb:00:00:00:02") /
            IPv6(src=f"fd00::{f:x}", dst=dst, hlim=64) /
            UDP(sport=1000 + f, dport=2000) / Raw(i.to_bytes(4, "big") + bytes(12)))


def ipv6_output_problem(port, frames):
    if any(g[IPv6].hlim != 63 for g in frames):
        return f"CPU-only port {port}: hop limit not decremented"
    return None


@dataclass
class Family:
    name: str
    seed: int
    packets: int
    routes_name: str  # the route file's name in the scratch directory
    config: str  # configs/CONFIG, its lookup's FILE is `demo_routes`
    demo_routes: str
    element: str
    layer: type  # scapy's IP or IPv6
    routes: Callable  # rng -> route file text
    destination: Callable  # (rng, table) -> a flow's destination
    frame: Callable  # (flow, destination, packet index) -> frame
    output_problem: Callable  # (port, CPU-only frames out of it) -> failure or None
    # The traffic must reach both ports and miss every route too.
    needs_every_outcome: bool


IPV4 = Family("offload-router", 11, 6000, "routes.txt", "ipv4-router-offload.click",
              "routes-demo.txt", "IPLookupOffload", IP, ipv4_routes, ipv4_destination,
              ipv4_frame, ipv4_output_problem, False)
IPV6 = Family("offload-ipv6-router", 13, 3000, "routes6.txt", "ipv6-router-offload.click",
              "routes6-demo.txt", "IP6LookupOffload", IPv6, ipv6_routes, ipv6_destination,
              ipv6_frame, ipv6_output_problem, True)


def workload(work, family):
    """Writes the family's random routes, in.pcap (FLOWS flows routed by them) and empty.pcap
    into `work`; returns (routes file, parsed table, frames)."""
    rng = random.Random(family.seed)
    routes = family.routes(rng)
    routes_file = work.file(family.routes_name, routes)
    table = parse_routes(routes)
    dsts = [family.destination(rng, table) for _ in range(FLOWS)]
    frames = [family.frame(i % FLOWS, dsts[i % FLOWS], i) for i in range(family.packets)]
    work.pcap("in.pcap", frames)
    work.pcap("empty.pcap", [])
    return routes_file, table, frames


def balanced_against_cpu(work, family, routes_file, balancer):
    """The router from in.pcap CPU-only and with `balancer` in place of DeviceOnly (AFFINITY on
    the offloaded lookup). Returns (failures, the balanced run as run_offload_mode gives it):
    not the same packets per port as CPU-only, a flow reordered, the balance line broken, or no
    packet on the device."""
    lookup = (f"{family.demo_routes}, AGGREGATE 32", f"{routes_file}, AGGREGATE 4")
    cpu = e2e.run_offload_mode(work, "cpu", family.config, [("DeviceOnly", "CPUOnly"), lookup],
                               family.element)
    run = e2e.run_offload_mode(
        work, "balanced", family.config,
        [("DeviceOnly", balancer), (lookup[0], lookup[1] + ", AFFINITY true")], family.element)
    if cpu[0] is None or run[0] is None:
        return ["a run failed"], run
    failures = []
    if not run[0]["balanced"]:
        failures.append("pcap run: the balance line does not hold")
    for port in (0, 1):
        if sorted(bytes(g) for g in run[2][port]) != sorted(bytes(g) for g in cpu[2][port]):
            failures.append(f"port {port}: not the same packets as CPU-only")
        seqs = {}
        for g in run[2][port]:
            seqs.setdefault(g[UDP].sport, []).append(seq(g))
        if any(s != sorted(s) for s in seqs.values()):
            failures.append(f"port {port}: a flow was reordered despite AFFINITY")
    if run[1].get("device_packets", 0) == 0:
        failures.append(f"no packet reached the device: {run[1]}")
    return failures, run


def main(family):
    work = e2e.Workdir(family.name)
    routes_file, table, frames = workload(work, family)
    failures = []

    cpu, device, split, failure = e2e.offload_modes(
        work, family.config, f"{family.demo_routes}, AGGREGATE 32", f"{routes_file}, AGGREGATE 4",
        family.element)
    if cpu[0] is None:
        return 1
    expect = {0: [], 1: [], None: []}
    port_of = {}
    for f in frames:
        dst = f[family.layer].dst
        if dst not in port_of:
            port_of[dst] = lpm(table, dst)
        expect[port_of[dst]].append(seq(f))
    if family.needs_every_outcome and (not expect[None] or not expect[0] or not expect[1]):
        failures.append("test traffic does not reach both ports and miss too")
    for port in (0, 1):
        got = [seq(g) for g in cpu[2][port]]
        if got != expect[port]:
            failures.append(f"CPU-only port {port}: {len(got)} packets, independent LPM says {len(expect[port])}")
        problem = family.output_problem(port, cpu[2][port])
        if problem:
            failures.append(problem)
    # Every IP frame goes to the device in device-only mode, routed or not.
    failures += e2e.check_offload_modes(cpu, device, split, failure, lambda g: (g[UDP].sport, seq(g)),
                                        family.packets, bool(e2e.offload_devices()))
    return work.finish(failures)
