"""The IPv4 and IPv6 routers end to end, one script over a table of the two families: a pcap of
scapy-built traffic through `fulcrum run` with net_pcap ports, and pcaps out, checked by
independent readers.

Traffic: valid packets to several nested routes (sizes up to 1,400 B), TTL / hop limit expiry,
malformed headers, frames of another protocol. Checks: every valid packet leaves through the
port its route names (a longest-prefix match by Python's ipaddress module, not ours), in order,
with TTL / hop limit decremented, rewritten MACs, its length and payload unchanged and its
checksum valid (scapy recomputes the IPv4 header checksum; the UDP checksum over IPv6 must
still verify); malformed packets are dropped and counted by reason and nothing else is; the
buffer balance holds; tshark reads the outputs without warnings; every lookup algorithm of the
family gives byte-identical outputs; with a default route the unroutable packets leave too; a
route to a port the run lacks stops the run at load time, naming the file and line.
"""
import ipaddress
from dataclasses import dataclass, field

from scapy.all import ARP, IP, IPv6, UDP, Ether, Raw, rdpcap

import fulcrum_e2e as e2e

MAC = {0: ("02:00:00:00:00:10", "02:00:00:00:01:10"), 1: ("02:00:00:00:00:11", "02:00:00:00:01:11")}

PIPELINE = """
FromInput -> {check} -> {lookup}("{routes}"{algo}) -> {dec}
  -> EtherRewrite(0 {m0s} {m0d}, 1 {m1s} {m1d})
  -> ToOutput;
"""


@dataclass
class Family:
    name: str
    layer: type                  # scapy's IP or IPv6
    check: str                   # the pipeline's header check, lookup and TTL elements
    lookup: str
    dec: str
    ttl_field: str               # "ttl" or "hlim"
    expired_reason: str
    routes: str                  # without a default route
    default_route: str           # a line that adds one
    missing_port_route: str      # a route to port 7
    dsts: list
    unroutable: list
    build_bad: object            # base -> {reason: [frames]}
    tshark_options: tuple
    algorithms: list = field(default_factory=lambda: [None])  # None: the default
    base_size: int = 64
    src: str = ""

    def base(self, dst, ttl=64, size=None, src=None):
        l3 = self.layer(src=src or self.src, dst=dst, **{self.ttl_field: ttl})
        p = Ether(src="02:aa:00:00:00:01", dst="02:bb:00:00:00:01") / l3 / UDP(sport=40000, dport=40001)
        pad = max(0, (size or self.base_size) - len(p))
        return p / Raw(bytes((i * 7) & 0xFF for i in range(pad)))

    def expected_port(self, dst, routes):
        addr = ipaddress.ip_address(dst)
        best = None
        for line in routes.splitlines():
            line = line.split("#")[0].strip()
            if not line:
                continue
            pfx, port = line.split()
            net = ipaddress.ip_network(pfx)
            if addr in net and (best is None or net.prefixlen > best[0]):
                best = (net.prefixlen, int(port))
        return None if best is None else best[1]


def patched(f, dst, at, data):
    """A valid frame to `dst` with `data` written over its bytes from offset `at`."""
    raw = bytearray(bytes(f.base(dst)))
    raw[at:at + len(data)] = data
    return Ether(bytes(raw))


def ipv4_bad(f):
    full = bytes(f.base("10.0.0.1"))
    return {
        "no-route": [f.base(d) for d in f.unroutable],
        "ttl-expired": [f.base("10.0.0.9", ttl=1), f.base("10.0.0.9", ttl=0)],
        "bad-checksum": [patched(f, "10.0.0.1", 24, bytes([full[24] ^ 0xFF]))],
        "bad-ihl": [patched(f, "10.0.0.1", 14, b"\x44")],                         # IHL 4
        "bad-length": [patched(f, "10.0.0.1", 16, (1500).to_bytes(2, "big"))],  # past the frame
        "truncated": [Ether(full[:n]) for n in (14, 20, 33)],
        "not-ipv4": [Ether(src="02:aa:00:00:00:01", dst="ff:ff:ff:ff:ff:ff") / ARP(pdst="10.0.0.1"),
                     Ether(src="02:aa:00:00:00:01", dst="02:bb:00:00:00:01") / IPv6(dst="::1") / UDP()],
        "bad-source": [f.base("10.0.0.1", src="224.0.0.1")],
    }


def ipv6_bad(f):
    full = bytes(f.base("2001:db8::1"))
    return {
        "no-route": [f.base(d) for d in f.unroutable],
        "hlim-expired": [f.base("2001:db8::9", ttl=1), f.base("2001:db8::9", ttl=0)],
        "bad-version": [patched(f, "2001:db8::1", 14, b"\x40")],                  # version 4
        "bad-length": [patched(f, "2001:db8::1", 18, (1500).to_bytes(2, "big"))],  # past the frame
        "truncated": [Ether(full[:n]) for n in (14, 20, 53)],
        "not-ipv6": [Ether(src="02:aa:00:00:00:01", dst="ff:ff:ff:ff:ff:ff") / ARP(pdst="10.0.0.1"),
                     Ether(src="02:aa:00:00:00:01", dst="02:bb:00:00:00:01") / IP(dst="10.0.0.1") / UDP() /
                     Raw(b"x" * 40)],
        "bad-source": [f.base("2001:db8::1", src="ff02::1"), f.base("2001:db8::1", src="::")],
    }


IPV4 = Family(
    name="ipv4", layer=IP, check="CheckIPHeader", lookup="IPLookup", dec="DecIPTTL", ttl_field="ttl",
    expired_reason="ttl-expired",
    routes="# test routes\n10.0.0.0/8 0\n10.1.0.0/16 1\n10.1.2.0/24 0\n10.1.2.128/25 1\n"
           "10.1.2.200/32 0\n192.168.0.0/16 1\n",
    default_route="0.0.0.0/0 0\n", missing_port_route="172.16.0.0/12 7\n",
    dsts=["10.0.0.1", "10.1.0.1", "10.1.2.3", "10.1.2.130", "10.1.2.200", "10.200.1.1", "192.168.7.7",
          "10.1.2.255", "10.1.3.0"],
    unroutable=["8.8.8.8", "1.2.3.4"], build_bad=ipv4_bad, tshark_options=("ip.check_checksum:TRUE",),
    base_size=64, src="10.9.9.9")

IPV6 = Family(
    name="ipv6", layer=IPv6, check="CheckIP6Header", lookup="IP6Lookup", dec="DecIP6HLim", ttl_field="hlim",
    expired_reason="hlim-expired",
    routes="# test routes\n2001:db8::/32 0\n2001:db8:1::/48 1\n2001:db8:1:2::/64 0\n"
           "2001:db8:1:2:8000::/65 1\n2001:db8:1:2::200/128 0\n2001:db8:ff00::/40 1\nfd00::/8 1\n",
    default_route="::/0 0\n", missing_port_route="2001:db8:7::/48 7\n",
    dsts=["2001:db8::1", "2001:db8:1::1", "2001:db8:1:2::1", "2001:db8:1:2:8000::1", "2001:db8:1:2::200",
          "2001:db8:1:2::201", "2001:db8:ff12::5", "2001:db8:1:3::", "fd12:3456::1", "2001:db8:1:2:ffff::"],
    unroutable=["3000::1", "::2", "ff02::1"], build_bad=ipv6_bad, tshark_options=("udp.check_checksum:TRUE",),
    algorithms=[None, "bsearch"], base_size=78, src="2001:db8:aaaa::1")


def traffic(f):
    """(good, bad by reason, every frame): good and bad interleaved so that drops happen in the
    middle of batches."""
    good = [f.base(d, ttl=2 + i % 60, size=f.base_size + (i * 37) % 1400) for i, d in enumerate(f.dsts * 5)]
    bad = f.build_bad(f)
    bad_list = [p for v in bad.values() for p in v]
    frames = []
    for i, g in enumerate(good):
        frames.append(g)
        if i < len(bad_list):
            frames.append(bad_list[i])
    frames.extend(bad_list[len(good):])
    return good, bad, frames


def run_router(f, work, routes_text, tag, inp, empty, algorithm=None):
    """(process, stats or None, out0, out1) of the router over `inp` with `routes_text`."""
    routes = work.file(f"routes-{tag}.txt", routes_text)
    algo = f", ALGORITHM {algorithm}" if algorithm else ""
    click = work.file(f"router-{tag}.click", PIPELINE.format(
        check=f.check, lookup=f.lookup, dec=f.dec, routes=routes, algo=algo,
        m0s=MAC[0][0], m0d=MAC[0][1], m1s=MAC[1][0], m1d=MAC[1][1]))
    out0, out1 = work.file(f"out0-{tag}.pcap"), work.file(f"out1-{tag}.pcap")
    res, stats = e2e.run_fulcrum(work, click, [e2e.pcap_port(0, inp, out0), e2e.pcap_port(1, empty, out1)])
    return res, stats, out0, out1


def check_outputs(f, good, outs, failures):
    expect = {0: [], 1: []}
    for g in good:
        expect[f.expected_port(g[f.layer].dst, f.routes)].append(g)
    if not expect[0] or not expect[1]:
        failures.append("test traffic should reach both ports")
    for port in (0, 1):
        got = rdpcap(outs[port])
        if len(got) != len(expect[port]):
            failures.append(f"port {port}: {len(got)} packets, expected {len(expect[port])}")
            continue
        for sent, recv in zip(expect[port], got):
            ip, sip = recv[f.layer], sent[f.layer]
            if ip.dst != sip.dst or ip.src != sip.src:
                failures.append(f"port {port}: order or content differs ({ip.dst} vs {sip.dst})")
                break
            if getattr(ip, f.ttl_field) != getattr(sip, f.ttl_field) - 1:
                failures.append(f"port {port}: {f.ttl_field} {getattr(ip, f.ttl_field)}, expected "
                                f"{getattr(sip, f.ttl_field) - 1}")
            if (recv.src, recv.dst) != MAC[port]:
                failures.append(f"port {port}: MACs {recv.src} {recv.dst}, expected {MAC[port]}")
            if bytes(recv[UDP].payload) != bytes(sent[UDP].payload) or len(recv) != len(sent):
                failures.append(f"port {port}: payload or length changed")
            if f.layer is IP:
                fresh = IP(bytes(ip))
                del fresh.chksum
                if IP(bytes(fresh)).chksum != ip.chksum:
                    failures.append(f"port {port}: bad IPv4 checksum {ip.chksum:#06x} for {ip.dst}")
            else:  # the UDP checksum covers the addresses, not the hop limit: it must still verify
                udp = recv[UDP]
                c = udp.chksum
                del udp.chksum
                if IPv6(bytes(recv[IPv6]))[UDP].chksum != c:
                    failures.append(f"port {port}: UDP checksum {c:#06x} no longer verifies")
        problems = e2e.tshark_problems(outs[port], f.tshark_options)
        if problems:
            failures.append(problems)


def main(f):
    if not e2e.require_tshark():
        return 1
    work = e2e.Workdir(f"{f.name}-router")
    good, bad, frames = traffic(f)
    inp, empty = work.pcap("in.pcap", frames), work.pcap("empty.pcap", [])
    bad_count = sum(len(v) for v in bad.values())
    failures = []

    first = None
    for algorithm in f.algorithms:
        label = algorithm or "default"
        res, st, out0, out1 = run_router(f, work, f.routes, label, inp, empty, algorithm)
        if st is None:
            return work.finish(failures + [f"the {label} run failed: {res.stderr.strip()}"])
        drops = e2e.drops_by_reason(st)
        if first is None:
            first = (drops, out0, out1)
            if not st["balanced"]:
                failures.append("buffer balance does not hold")
            if st["packets_in"] != len(frames):
                failures.append(f"packets_in {st['packets_in']} != {len(frames)} frames sent")
            for reason, pkts in bad.items():
                if drops.get(reason, 0) != len(pkts):
                    failures.append(f"drop reason {reason}: counted {drops.get(reason, 0)}, expected {len(pkts)}")
            if sum(drops.values()) != bad_count:
                failures.append(f"{sum(drops.values())} drops in all, expected {bad_count}: {drops}")
            check_outputs(f, good, (out0, out1), failures)
            continue
        # Every other algorithm sends the same packets out of the same ports, drops the same ones.
        if drops != first[0]:
            failures.append(f"ALGORITHM {algorithm} drops {drops}, the default {first[0]}")
        for port, (a, b) in enumerate(((first[1], out0), (first[2], out1))):
            if [bytes(p) for p in rdpcap(a)] != [bytes(p) for p in rdpcap(b)]:
                failures.append(f"port {port}: ALGORITHM {algorithm} output differs from the default's")

    # With a default route the unroutable packets leave through port 0; the rest still drop.
    res, st, out0, out1 = run_router(f, work, f.routes + f.default_route, "with-default", inp, empty)
    if st is None:
        failures.append(f"the run with a default route failed: {res.stderr.strip()}")
    else:
        if e2e.drops_by_reason(st).get("no-route", 0) != 0:
            failures.append("with a default route, packets dropped for no route")
        if len(rdpcap(out0)) + len(rdpcap(out1)) != len(good) + len(bad["no-route"]):
            failures.append("with a default route, the unroutable packets should leave through port 0")
        if not st["balanced"]:
            failures.append("buffer balance does not hold with a default route")

    # With two ports, a route to port 7 stops the run at load time, naming the file and line.
    missing = f.routes + f.missing_port_route
    res, st, _, _ = run_router(f, work, missing, "missing-port", inp, empty)
    want = f"routes-missing-port.txt:{len(missing.splitlines())}: port 7 out of range 0..1"
    if st is not None or res.returncode == 0 or want not in res.stderr:
        failures.append(f"a route to a missing port: exit {res.returncode}, stderr {res.stderr!r}, "
                        f"expected {want!r}")

    if not failures:
        print(f"ok: {len(good)} routed, {bad_count} malformed/unroutable dropped by reason, balance holds")
    return work.finish(failures)
