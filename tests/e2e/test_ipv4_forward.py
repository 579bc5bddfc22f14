#!/usr/bin/env python3
"""End to end: the thesis' IPv4 forwarder (configs/ipv4-forward.click) over pcap ports.

Packets cross from port 0 to port 1 and back with TTL - 1, a valid checksum and the MAC
addresses of the port they leave by; packets whose TTL runs out come back to their sender as
ICMP Time Exceeded messages, built here independently with scapy (RFC 792: the original IP
header and 8 bytes of its payload) and compared field by field; the packets RFC 1812 forbids
answering (ICMP errors, multicast destinations, non-initial fragments, loopback sources) and
malformed ones are dropped by reason. tshark reads the outputs without complaint.
"""
import os
import sys

from scapy.all import ARP, ICMP, IP, TCP, UDP, Ether, IPOption_RR, Raw, rdpcap  # noqa: E402

import fulcrum_e2e as e2e

ROUTER = "10.0.0.1"
MAC = {0: ("02:00:00:00:00:10", "02:00:00:00:01:10"), 1: ("02:00:00:00:00:11", "02:00:00:00:01:11")}


def frame(src, dst, ttl=64, size=0, l4=None, **ip):
    l4 = l4 if l4 is not None else UDP(sport=4000, dport=5000)
    pkt = Ether(src="02:aa:00:00:00:01", dst="02:bb:00:00:00:02") / IP(src=src, dst=dst, ttl=ttl, **ip) / l4
    return pkt / Raw((bytes(range(256)) * 6)[:size - len(pkt)]) if size > len(pkt) else pkt


def traffic():
    forward = {0: [], 1: []}  # by input port
    expired = {0: [], 1: []}
    drops = {}
    for i in range(40):
        size = [60, 128, 590, 1514][i % 4]
        forward[0].append(frame(f"192.168.1.{i + 1}", f"172.16.0.{i + 1}", ttl=2 + i, size=size))
        forward[1].append(frame(f"172.16.0.{i + 1}", f"192.168.1.{i + 1}", size=size,
                                l4=TCP(sport=80, dport=1024 + i, flags="A")))
    for port in (0, 1):
        expired[port] += [frame("192.168.9.1", "172.16.9.9", ttl=1, size=100),
                          frame("192.168.9.2", "172.16.9.9", ttl=0, size=60),
                          frame("192.168.9.3", "172.16.9.9", ttl=1, l4=ICMP(type=8) / Raw(b"ping" * 10)),
                          frame("192.168.9.4", "172.16.9.9", ttl=1, options=[IPOption_RR(routers=["1.2.3.4"])],
                                size=200),
                          frame("192.168.9.5", "172.16.9.9", ttl=1, flags="MF", frag=0, size=300),
                          Ether() / IP(src="192.168.9.6", dst="172.16.9.9", ttl=1, proto=253)]
    drops["no-error-allowed"] = [
        frame("192.168.9.7", "172.16.9.9", ttl=1, l4=ICMP(type=3, code=1) / Raw(bytes(28))),
        frame("192.168.9.8", "224.0.0.5", ttl=1),
        frame("192.168.9.9", "172.16.9.9", ttl=1, frag=100),
        frame("127.0.0.1", "172.16.9.9", ttl=1),
    ]
    bad = frame("192.168.9.10", "172.16.9.9")
    bad[IP].chksum = 0x1234
    drops["bad-checksum"] = [bad]
    drops["truncated"] = [Ether(bytes(frame("192.168.9.11", "172.16.9.9"))[:30])]
    drops["not-ipv4"] = [Ether() / ARP()]
    built = lambda pkts: [Ether(bytes(p)) for p in pkts]  # noqa: E731 (fields as on the wire)
    return ({p: built(v) for p, v in forward.items()}, {p: built(v) for p, v in expired.items()},
            {r: built(v) for r, v in drops.items()})


def expected_icmp(orig):
    ip = orig[IP]
    quote = bytes(ip)[:ip.ihl * 4 + 8]
    return IP(src=ROUTER, dst=ip.src, ttl=64, tos=0xC0) / ICMP(type=11, code=0) / Raw(quote)


def check_forwarded(sent, got, port, failures):
    if len(got) != len(sent):
        failures.append(f"port {port}: {len(got)} forwarded packets, expected {len(sent)}")
        return
    for s, g in zip(sent, got):
        want = s[IP].copy()
        want.ttl -= 1
        want.chksum = None
        if bytes(g[IP]) != bytes(IP(bytes(want))):
            failures.append(f"port {port}: {s[IP].src} -> {s[IP].dst} not forwarded byte-exact with TTL-1")
        if (g.src, g.dst) != MAC[port]:
            failures.append(f"port {port}: MACs {g.src} {g.dst}, expected {MAC[port]}")


def check_icmp(sent, got, port, failures):
    if len(got) != len(sent):
        failures.append(f"port {port}: {len(got)} ICMP messages, expected {len(sent)}")
        return
    for s, g in zip(sent, got):
        want = IP(bytes(expected_icmp(s)))
        ip = g[IP]
        for field in ("src", "dst", "ttl", "tos", "proto", "len", "ihl"):
            if getattr(ip, field) != getattr(want, field):
                failures.append(f"ICMP about {s[IP].src}: IP {field} {getattr(ip, field)}, expected {getattr(want, field)}")
        icmp = g[ICMP]
        if (icmp.type, icmp.code) != (11, 0):
            failures.append(f"ICMP about {s[IP].src}: type/code {icmp.type}/{icmp.code}")
        if bytes(icmp) != bytes(want[ICMP]):
            failures.append(f"ICMP about {s[IP].src}: message differs from scapy's")
        if (g.src, g.dst) != MAC[port]:
            failures.append(f"ICMP about {s[IP].src}: MACs {g.src} {g.dst}, expected {MAC[port]}")


def main():
    if not e2e.require_tshark():
        return 1
    work = e2e.Workdir("ipv4-forward")
    forward, expired, drops = traffic()
    bad = [p for v in drops.values() for p in v]
    inputs = {0: forward[0] + expired[0] + bad, 1: forward[1] + expired[1]}
    outs = {p: work.file(f"out{p}.pcap") for p in (0, 1)}
    ports = [e2e.pcap_port(p, work.pcap(f"in{p}.pcap", inputs[p]), outs[p]) for p in (0, 1)]
    config = os.path.join(e2e.SOURCE_DIR, "configs", "ipv4-forward.click")
    res, stats = e2e.run_fulcrum(work, config, ports)
    if stats is None:
        return 1

    failures = []
    if not stats["balanced"]:
        failures.append("buffer balance does not hold")
    counted = e2e.drops_by_reason(stats)
    for reason, pkts in drops.items():
        if counted.get(reason, 0) != len(pkts):
            failures.append(f"drop reason {reason}: counted {counted.get(reason, 0)}, expected {len(pkts)}")
    for port in (0, 1):
        got = rdpcap(outs[port])
        icmp = [g for g in got if IP in g and g[IP].src == ROUTER]
        fwd = [g for g in got if not (IP in g and g[IP].src == ROUTER)]
        check_forwarded(forward[1 - port], fwd, port, failures)
        check_icmp(expired[port], icmp, port, failures)
        problem = e2e.tshark_problems(outs[port])
        if problem:
            failures.append(problem)
    if not failures:
        print(f"ok: {len(forward[0]) + len(forward[1])} forwarded, "
              f"{len(expired[0]) + len(expired[1])} answered with ICMP, {len(bad)} dropped by reason")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
