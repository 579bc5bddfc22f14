#!/usr/bin/env python3
"""End to end: NDN Interests from a pcap through NDNLookup, out through pcaps.

Builds Interest frames (EtherType 0x8624, NDN TLV: Interest > Name > GenericNameComponents) by
hand, runs `fulcrum run` with net_pcap ports, and checks that every routable Interest leaves
unchanged through the port of its longest name prefix (computed here independently), that
the others are dropped with the right reason and that the buffer balance holds.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from scapy.all import Ether, Raw, rdpcap, wrpcap  # noqa: E402

FULCRUM = os.environ.get("FULCRUM_BIN", "build/fulcrum")
NDN_ETHERTYPE = 0x8624

NAMES = """# test names
/a 0
/a/b 1
/a/b/c 0
/video%2Fhd 1
"""
# With two ports, a name routed to port 7 must stop the run at load time, naming the file and line.
NAME_TO_MISSING_PORT = "/far 7\n"


def var(n):
    if n < 253:
        return bytes([n])
    if n <= 0xFFFF:
        return bytes([253]) + n.to_bytes(2, "big")
    return bytes([254]) + n.to_bytes(4, "big")


def tlv(t, value):
    return var(t) + var(len(value)) + value


def interest(components):
    name = tlv(0x07, b"".join(tlv(0x08, c) for c in components))
    return Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02", type=NDN_ETHERTYPE) / Raw(tlv(0x05, name))


def table():
    out = {}
    for line in NAMES.splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        uri, port = line.split()
        comps = tuple(c.replace("%2F", "/").encode() for c in uri.strip("/").split("/"))
        out[comps] = int(port)
    return out


def expected(names, components):
    for n in range(len(components), 0, -1):
        if tuple(components[:n]) in names:
            return names[tuple(components[:n])]
    return None


def main():
    work = tempfile.mkdtemp(prefix="fulcrum-e2e-ndn-")
    names_file = os.path.join(work, "names.txt")
    with open(names_file, "w") as f:
        f.write(NAMES)
    click = os.path.join(work, "ndn.click")
    with open(click, "w") as f:
        f.write(f'FromInput -> NDNLookup("{names_file}") -> ToOutput;\n')
    names = table()
    queries = [[b"a"], [b"a", b"b"], [b"a", b"b", b"c", b"d"], [b"a", b"x"], [b"video/hd", b"1"],
               [b"video"], [b"zzz"], [b"far", b"away"], [b"a", b"b" * 300]]
    frames, routed = [], {0: [], 1: []}
    drops = {"no-route": 0, "not-ndn": 0, "malformed": 0}
    for i in range(5):
        for q in queries:
            p = interest(q)
            frames.append(p)
            port = expected(names, q)
            if port is None:
                drops["no-route"] += 1
            else:
                routed[port].append(bytes(p))
        frames.append(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02", type=0x0800) / Raw(b"\x00" * 46))
        drops["not-ndn"] += 1
        good = bytes(interest([b"a", b"b"]))
        frames.append(Ether(good[:-1]))
        drops["malformed"] += 1
    inp = os.path.join(work, "in.pcap")
    wrpcap(inp, frames)
    empty = os.path.join(work, "empty.pcap")
    wrpcap(empty, [])
    out0, out1 = os.path.join(work, "out0.pcap"), os.path.join(work, "out1.pcap")
    stats = os.path.join(work, "stats.json")
    cmd = [FULCRUM, "run", click, "--quiet", "--stats-json", stats,
           "--port", f"net_pcap0,rx_pcap={inp},tx_pcap={out0}",
           "--port", f"net_pcap1,rx_pcap={empty},tx_pcap={out1}"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if res.returncode != 0:
        print(res.stdout, res.stderr, file=sys.stderr)
        return 1
    failures = []
    st = json.load(open(stats))
    if not st["balanced"]:
        failures.append("buffer balance does not hold")
    got_drops = {}
    for k, v in st["drops"].items():
        reason = k.split("/", 1)[1]
        got_drops[reason] = got_drops.get(reason, 0) + v
    for reason, n in drops.items():
        if got_drops.get(reason, 0) != n:
            failures.append(f"drop reason {reason}: counted {got_drops.get(reason, 0)}, expected {n}")
    for port, path in ((0, out0), (1, out1)):
        got = [bytes(p) for p in rdpcap(path)]
        if got != routed[port]:
            failures.append(f"port {port}: {len(got)} frames, expected {len(routed[port])} (or content differs)")
    with open(names_file, "a") as f:
        f.write(NAME_TO_MISSING_PORT)
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    want = f"{names_file}:{len(NAMES.splitlines()) + 1}: port 7 out of range 0..1"
    if res.returncode == 0 or want not in res.stderr:
        failures.append(f"a name to a missing port: exit {res.returncode}, stderr {res.stderr!r}, expected {want!r}")
    shutil.rmtree(work)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    print(f"ok: {len(routed[0]) + len(routed[1])} Interests forwarded by name, drops by reason match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
