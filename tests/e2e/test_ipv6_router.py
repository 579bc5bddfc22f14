#!/usr/bin/env python3
"""End to end: a pcap through the IPv6 router and pcaps out, checked by scapy and tshark.

Builds IPv6 traffic with scapy (valid packets to several nested routes, hop limit expiry,
malformed headers, non-IPv6 frames), runs `fulcrum run` with net_pcap ports, then checks with
independent readers: every valid packet leaves through the port its route names with the hop
limit decremented, rewritten MACs and the payload untouched; malformed packets are dropped and
counted by reason; the buffer balance holds; tshark reads the outputs without warnings.
IP6Lookup runs with its default algorithm (the compressed trie) and again with ALGORITHM
bsearch, whose outputs must be identical.
"""
import ipaddress
import json
import os
import shutil
import subprocess
import sys
import tempfile

from scapy.all import ARP, IP, IPv6, UDP, Ether, Raw, rdpcap, wrpcap  # noqa: E402

FULCRUM = os.environ.get("FULCRUM_BIN", "build/fulcrum")

ROUTES = """# test routes
2001:db8::/32 0
2001:db8:1::/48 1
2001:db8:1:2::/64 0
2001:db8:1:2:8000::/65 1
2001:db8:1:2::200/128 0
2001:db8:ff00::/40 1
::/0 0
fd00::/8 1
"""
# A table without a default route, for the no-route drops.
ROUTES_NO_DEFAULT = "\n".join(line for line in ROUTES.splitlines() if not line.startswith("::/0"))

MAC = {0: ("02:00:00:00:00:10", "02:00:00:00:01:10"), 1: ("02:00:00:00:00:11", "02:00:00:00:01:11")}

PIPELINE = """
FromInput -> CheckIP6Header -> IP6Lookup("{routes}"{algo}) -> DecIP6HLim
  -> EtherRewrite(0 {m0s} {m0d}, 1 {m1s} {m1d})
  -> ToOutput;
"""


def expected_port(dst):
    """Longest-prefix match by hand with the ipaddress module, independent of our tables."""
    addr = ipaddress.IPv6Address(dst)
    best = None
    for line in ROUTES_NO_DEFAULT.splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        pfx, port = line.split()
        net = ipaddress.IPv6Network(pfx)
        if addr in net and (best is None or net.prefixlen > best[0]):
            best = (net.prefixlen, int(port))
    return None if best is None else best[1]


def base(dst, hlim=64, size=78, src="2001:db8:aaaa::1"):
    p = Ether(src="02:aa:00:00:00:01", dst="02:bb:00:00:00:01") / IPv6(src=src, dst=dst, hlim=hlim) / UDP(
        sport=40000, dport=40001)
    pad = max(0, size - len(p))
    return p / Raw(bytes((i * 7) & 0xFF for i in range(pad)))


def build_traffic():
    good = []
    dsts = ["2001:db8::1", "2001:db8:1::1", "2001:db8:1:2::1", "2001:db8:1:2:8000::1", "2001:db8:1:2::200",
            "2001:db8:1:2::201", "2001:db8:ff12::5", "2001:db8:1:3::", "fd12:3456::1", "2001:db8:1:2:ffff::"]
    for i, d in enumerate(dsts * 5):
        good.append(base(d, hlim=2 + i % 250, size=78 + (i * 37) % 1400))
    bad = {}
    bad["no-route"] = [base("3000::1"), base("::2"), base("ff02::1")]
    bad["hlim-expired"] = [base("2001:db8::9", hlim=1), base("2001:db8::9", hlim=0)]
    version = bytearray(bytes(base("2001:db8::1")))
    version[14] = 0x40  # version 4 in an IPv6 frame
    bad["bad-version"] = [Ether(bytes(version))]
    plen = bytearray(bytes(base("2001:db8::1")))
    plen[18:20] = (1500).to_bytes(2, "big")  # payload length beyond the frame
    bad["bad-length"] = [Ether(bytes(plen))]
    full = bytes(base("2001:db8::1"))
    bad["truncated"] = [Ether(full[:n]) for n in (14, 20, 53)]
    bad["not-ipv6"] = [Ether(src="02:aa:00:00:00:01", dst="ff:ff:ff:ff:ff:ff") / ARP(pdst="10.0.0.1"),
                       Ether(src="02:aa:00:00:00:01", dst="02:bb:00:00:00:01") / IP(dst="10.0.0.1") / UDP() /
                       Raw(b"x" * 40)]
    bad["bad-source"] = [base("2001:db8::1", src="ff02::1"), base("2001:db8::1", src="::")]
    return good, bad


def run_router(work, routes_text, frames, tag, algorithm=None, errors=None):
    routes = os.path.join(work, f"routes-{tag}.txt")
    with open(routes, "w") as f:
        f.write(routes_text)
    click = os.path.join(work, f"router-{tag}.click")
    with open(click, "w") as f:
        algo = f", ALGORITHM {algorithm}" if algorithm else ""
        f.write(PIPELINE.format(routes=routes, algo=algo, m0s=MAC[0][0], m0d=MAC[0][1], m1s=MAC[1][0],
                                m1d=MAC[1][1]))
    inp = os.path.join(work, f"in-{tag}.pcap")
    wrpcap(inp, frames)
    empty = os.path.join(work, "empty.pcap")
    wrpcap(empty, [])
    out0, out1 = os.path.join(work, f"out0-{tag}.pcap"), os.path.join(work, f"out1-{tag}.pcap")
    stats = os.path.join(work, f"stats-{tag}.json")
    cmd = [FULCRUM, "run", click, "--quiet", "--stats-json", stats,
           "--port", f"net_pcap0,rx_pcap={inp},tx_pcap={out0}",
           "--port", f"net_pcap1,rx_pcap={empty},tx_pcap={out1}"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    print(res.stdout)
    if res.returncode != 0:
        if errors is not None:
            errors.append(res.stderr)
        else:
            print(res.stderr, file=sys.stderr)
        return None
    return json.load(open(stats)), out0, out1


def drops_by_reason(st):
    drops = {}
    for k, v in st["drops"].items():
        reason = k.split("/", 1)[1]
        drops[reason] = drops.get(reason, 0) + v
    return drops


def main():
    if shutil.which("tshark") is None:
        print("tshark missing: install with scripts/install-deps.sh", file=sys.stderr)
        return 1
    work = tempfile.mkdtemp(prefix="fulcrum-e2e-ip6-")
    good, bad = build_traffic()
    # Interleave good and bad so drops happen in the middle of batches.
    frames = []
    bad_list = [p for v in bad.values() for p in v]
    for i, g in enumerate(good):
        frames.append(g)
        if i < len(bad_list):
            frames.append(bad_list[i])
    frames.extend(bad_list[len(good):])

    failures = []
    ran = run_router(work, ROUTES_NO_DEFAULT, frames, "nodefault")
    if ran is None:
        return 1
    st, out0, out1 = ran
    if not st["balanced"]:
        failures.append("buffer balance does not hold")
    if st["packets_in"] != len(frames):
        failures.append(f"packets_in {st['packets_in']} != {len(frames)} frames sent")
    drops = drops_by_reason(st)
    for reason, pkts in bad.items():
        if drops.get(reason, 0) != len(pkts):
            failures.append(f"drop reason {reason}: counted {drops.get(reason, 0)}, expected {len(pkts)}")
    if sum(drops.values()) != len(bad_list):
        failures.append(f"{sum(drops.values())} drops in all, expected {len(bad_list)}: {drops}")

    outs = {0: rdpcap(out0), 1: rdpcap(out1)}
    expect = {0: [], 1: []}
    for g in good:
        expect[expected_port(g[IPv6].dst)].append(g)
    if not expect[0] or not expect[1]:
        failures.append("test traffic should reach both ports")
    for port in (0, 1):
        got = outs[port]
        if len(got) != len(expect[port]):
            failures.append(f"port {port}: {len(got)} packets, expected {len(expect[port])}")
            continue
        for sent, recv in zip(expect[port], got):
            ip = recv[IPv6]
            if ip.dst != sent[IPv6].dst or ip.src != sent[IPv6].src:
                failures.append(f"port {port}: order or content differs ({ip.dst} vs {sent[IPv6].dst})")
                break
            if ip.hlim != sent[IPv6].hlim - 1:
                failures.append(f"port {port}: hop limit {ip.hlim}, expected {sent[IPv6].hlim - 1}")
            if (recv.src, recv.dst) != MAC[port]:
                failures.append(f"port {port}: MACs {recv.src} {recv.dst}, expected {MAC[port]}")
            if bytes(recv[IPv6].payload) != bytes(sent[IPv6].payload):
                failures.append(f"port {port}: payload changed")
            if len(recv) != len(sent):
                failures.append(f"port {port}: length {len(recv)}, expected {len(sent)}")
            # The UDP checksum covers the addresses, not the hop limit: it must still verify.
            udp = recv[UDP]
            c = udp.chksum
            del udp.chksum
            if IPv6(bytes(recv[IPv6]))[UDP].chksum != c:
                failures.append(f"port {port}: UDP checksum {c:#06x} no longer verifies")

    for path in (out0, out1):
        tsh = subprocess.run(["tshark", "-r", path, "-o", "udp.check_checksum:TRUE", "-z", "expert,warn", "-q"],
                             capture_output=True, text=True)
        if tsh.returncode != 0:
            failures.append(f"tshark cannot read {path}: {tsh.stderr}")
        elif "Malformed" in tsh.stdout or "Bad checksum" in tsh.stdout:
            failures.append(f"tshark reports problems in {path}:\n{tsh.stdout}")
        fields = subprocess.run(["tshark", "-r", path, "-T", "fields", "-e", "ipv6.dst", "-e", "ipv6.hlim"],
                                capture_output=True, text=True)
        if fields.returncode != 0 or not fields.stdout.strip():
            failures.append(f"tshark reads no IPv6 fields from {path}")

    # The other lookup algorithm (binary search on prefix lengths; the default is the trie) must
    # send the same packets out of the same ports and drop the same ones.
    ran = run_router(work, ROUTES_NO_DEFAULT, frames, "bsearch", algorithm="bsearch")
    if ran is None:
        return 1
    st3, b0, b1 = ran
    if drops_by_reason(st3) != drops:
        failures.append(f"ALGORITHM bsearch drops {drops_by_reason(st3)}, the trie {drops}")
    for port, (a, b) in enumerate(((out0, b0), (out1, b1))):
        if [bytes(p) for p in rdpcap(a)] != [bytes(p) for p in rdpcap(b)]:
            failures.append(f"port {port}: ALGORITHM bsearch output differs from the trie's")

    # With the default route every good packet and the no-route ones go out, the rest still drop.
    ran = run_router(work, ROUTES, frames, "default")
    if ran is None:
        return 1
    st2, d0, d1 = ran
    drops2 = drops_by_reason(st2)
    if drops2.get("no-route", 0) != 0:
        failures.append(f"with ::/0, {drops2.get('no-route')} packets dropped for no route")
    if len(rdpcap(d0)) + len(rdpcap(d1)) != len(good) + len(bad["no-route"]):
        failures.append("with ::/0, the unroutable packets should leave through port 0")
    if not st2["balanced"]:
        failures.append("buffer balance does not hold with ::/0")

    # With two ports, a route to port 7 stops the run at load time, naming the file and line.
    errors = []
    missing = ROUTES + "2001:db8:7::/48 7\n"
    if run_router(work, missing, frames, "missing-port", errors=errors) is not None:
        failures.append("a route to port 7 with two ports was accepted")
    want = f"routes-missing-port.txt:{len(missing.splitlines())}: port 7 out of range 0..1"
    if not errors or want not in errors[0]:
        failures.append(f"a route to a missing port: stderr {errors!r}, expected {want!r}")

    shutil.rmtree(work)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    print(f"ok: {len(good)} routed, {len(bad_list)} malformed/unroutable dropped by reason, balance holds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
