#!/usr/bin/env python3
"""End to end: a pcap through the IPv4 router and pcaps out, checked by scapy and tshark.

Builds traffic with scapy (valid packets to several routes, TTL expiry, malformed headers,
non-IPv4 frames), runs `fulcrum run` with net_pcap ports, then checks with independent readers:
every valid packet leaves through the port its route names with TTL-1, a correct checksum (scapy
recomputes it) and rewritten MACs; malformed packets are dropped and counted by reason; the
buffer balance holds; tshark reads the outputs without malformed-packet warnings.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from scapy.all import ARP, IP, IPv6, UDP, Ether, Raw, rdpcap, wrpcap  # noqa: E402

FULCRUM = os.environ.get("FULCRUM_BIN", "build/fulcrum")

ROUTES = """# test routes
10.0.0.0/8 0
10.1.0.0/16 1
10.1.2.0/24 0
10.1.2.128/25 1
10.1.2.200/32 0
192.168.0.0/16 1
"""
# With two ports, a route to port 7 must stop the run at load time, naming the file and line.
ROUTE_TO_MISSING_PORT = "172.16.0.0/12 7\n"

MAC = {0: ("02:00:00:00:00:10", "02:00:00:00:01:10"), 1: ("02:00:00:00:00:11", "02:00:00:00:01:11")}

PIPELINE = """
FromInput -> CheckIPHeader -> IPLookup("{routes}") -> DecIPTTL
  -> EtherRewrite(0 {m0s} {m0d}, 1 {m1s} {m1d})
  -> ToOutput;
"""


def expected_port(dst):
    """Longest-prefix match by hand, independent of our DIR-24-8."""
    a = [int(x) for x in dst.split(".")]
    v = (a[0] << 24) | (a[1] << 16) | (a[2] << 8) | a[3]
    best = None
    for line in ROUTES.splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        pfx, port = line.split()
        net, ln = pfx.split("/")
        n = [int(x) for x in net.split(".")]
        nv = (n[0] << 24) | (n[1] << 16) | (n[2] << 8) | n[3]
        ln = int(ln)
        mask = 0 if ln == 0 else (0xFFFFFFFF << (32 - ln)) & 0xFFFFFFFF
        if v & mask == nv and (best is None or ln > best[0]):
            best = (ln, int(port))
    return None if best is None else best[1]


def base(dst, ttl=64, size=64):
    p = Ether(src="02:aa:00:00:00:01", dst="02:bb:00:00:00:01") / IP(src="10.9.9.9", dst=dst, ttl=ttl) / UDP(
        sport=40000, dport=40001)
    pad = max(0, size - len(p))
    return p / Raw(b"\x00" * pad)


def build_traffic():
    good = []
    dsts = ["10.0.0.1", "10.1.0.1", "10.1.2.3", "10.1.2.130", "10.1.2.200", "10.200.1.1", "192.168.7.7",
            "10.1.2.255", "10.1.3.0"]
    for i, d in enumerate(dsts * 5):
        good.append(base(d, ttl=2 + i % 60, size=64 + (i * 37) % 1400))
    bad = {}
    bad["no-route"] = [base("8.8.8.8"), base("1.2.3.4")]
    bad["ttl-expired"] = [base("10.0.0.9", ttl=1), base("10.0.0.9", ttl=0)]
    chk = base("10.0.0.1")
    raw = bytearray(bytes(chk))
    raw[24] ^= 0xFF  # corrupt the header checksum
    bad["bad-checksum"] = [Ether(bytes(raw))]
    ihl = bytearray(bytes(base("10.0.0.1")))
    ihl[14] = 0x44  # IHL 4
    bad["bad-ihl"] = [Ether(bytes(ihl))]
    tl = bytearray(bytes(base("10.0.0.1")))
    tl[16:18] = (1500).to_bytes(2, "big")  # total length beyond the frame
    bad["bad-length"] = [Ether(bytes(tl))]
    full = bytes(base("10.0.0.1"))
    bad["truncated"] = [Ether(full[:n]) for n in (14, 20, 33)]
    bad["not-ipv4"] = [Ether(src="02:aa:00:00:00:01", dst="ff:ff:ff:ff:ff:ff") / ARP(pdst="10.0.0.1"),
                       Ether(src="02:aa:00:00:00:01", dst="02:bb:00:00:00:01") / IPv6(dst="::1") / UDP()]
    bad["bad-source"] = [Ether() / IP(src="224.0.0.1", dst="10.0.0.1") / UDP() / Raw(b"x" * 20)]
    return good, bad


def main():
    if shutil.which("tshark") is None:
        print("tshark missing: install with scripts/install-deps.sh", file=sys.stderr)
        return 1
    work = tempfile.mkdtemp(prefix="fulcrum-e2e-")
    routes = os.path.join(work, "routes.txt")
    with open(routes, "w") as f:
        f.write(ROUTES)
    click = os.path.join(work, "router.click")
    with open(click, "w") as f:
        f.write(PIPELINE.format(routes=routes, m0s=MAC[0][0], m0d=MAC[0][1], m1s=MAC[1][0], m1d=MAC[1][1]))
    good, bad = build_traffic()
    # Interleave good and bad so drops happen in the middle of batches.
    frames = []
    bad_list = [p for v in bad.values() for p in v]
    for i, g in enumerate(good):
        frames.append(g)
        if i < len(bad_list):
            frames.append(bad_list[i])
    frames.extend(bad_list[len(good):])
    inp = os.path.join(work, "in.pcap")
    wrpcap(inp, frames)
    out0, out1 = os.path.join(work, "out0.pcap"), os.path.join(work, "out1.pcap")
    stats = os.path.join(work, "stats.json")
    cmd = [FULCRUM, "run", click, "--quiet", "--stats-json", stats,
           "--port", f"net_pcap0,rx_pcap={inp},tx_pcap={out0}",
           "--port", f"net_pcap1,rx_pcap={os.path.join(work, 'empty.pcap')},tx_pcap={out1}"]
    wrpcap(os.path.join(work, "empty.pcap"), [])
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    print(res.stdout)
    if res.returncode != 0:
        print(res.stderr, file=sys.stderr)
        return 1

    failures = []
    st = json.load(open(stats))
    if not st["balanced"]:
        failures.append("buffer balance does not hold")
    if st["packets_in"] != len(frames):
        failures.append(f"packets_in {st['packets_in']} != {len(frames)} frames sent")

    drops = {}
    for k, v in st["drops"].items():
        reason = k.split("/", 1)[1]
        drops[reason] = drops.get(reason, 0) + v
    for reason, pkts in bad.items():
        if drops.get(reason, 0) != len(pkts):
            failures.append(f"drop reason {reason}: counted {drops.get(reason, 0)}, expected {len(pkts)}")

    outs = {0: rdpcap(out0), 1: rdpcap(out1)}
    expect = {0: [], 1: []}
    for g in good:
        expect[expected_port(g[IP].dst)].append(g)
    for port in (0, 1):
        got = outs[port]
        if len(got) != len(expect[port]):
            failures.append(f"port {port}: {len(got)} packets, expected {len(expect[port])}")
            continue
        for sent, recv in zip(expect[port], got):
            ip = recv[IP]
            if ip.dst != sent[IP].dst:
                failures.append(f"port {port}: order or content differs ({ip.dst} vs {sent[IP].dst})")
                break
            if ip.ttl != sent[IP].ttl - 1:
                failures.append(f"port {port}: TTL {ip.ttl}, expected {sent[IP].ttl - 1}")
            c = ip.chksum
            ip2 = IP(bytes(ip))
            del ip2.chksum
            if IP(bytes(ip2)).chksum != c:
                failures.append(f"port {port}: bad checksum {c:#06x} for {ip.dst}")
            if (recv.src, recv.dst) != MAC[port]:
                failures.append(f"port {port}: MACs {recv.src} {recv.dst}, expected {MAC[port]}")
            if bytes(recv[UDP].payload) != bytes(sent[UDP].payload):
                failures.append(f"port {port}: payload changed")

    for path in (out0, out1):
        tsh = subprocess.run(["tshark", "-r", path, "-o", "ip.check_checksum:TRUE", "-z", "expert,warn", "-q"], capture_output=True, text=True)
        if tsh.returncode != 0:
            failures.append(f"tshark cannot read {path}: {tsh.stderr}")
        elif "Malformed" in tsh.stdout or "Bad checksum" in tsh.stdout:
            failures.append(f"tshark reports problems in {path}:\n{tsh.stdout}")

    with open(routes, "a") as f:
        f.write(ROUTE_TO_MISSING_PORT)
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    line = len(ROUTES.splitlines()) + 1
    want = f"{routes}:{line}: port 7 out of range 0..1"
    if res.returncode == 0 or want not in res.stderr:
        failures.append(f"a route to a missing port: exit {res.returncode}, stderr {res.stderr!r}, expected {want!r}")

    shutil.rmtree(work)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    print(f"ok: {len(good)} routed, {len(bad_list)} malformed/unroutable dropped by reason, balance holds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
