#!/usr/bin/env python3
"""End to end: malformed traffic never crashes a worker and every drop has a named reason.

Builds a pcap of about 2000 frames with scapy: valid IPv4/UDP (with and without IP options and
Ethernet padding) mixed with frames truncated at every length 0..60, IHL 0..4, total lengths
past the frame or below the header, bad checksums, IP version 6 (and others) under the IPv4
ethertype, ARP/IPv6/VLAN/0x0000 ethertypes, TTL 0 and 1, bad source addresses and seeded random
garbage. Runs it through a router pipeline with a default route and checks: exit code 0, the
balance holds, every drop is attributed to a reason the dropping element declares, the drops
per reason match an independent Python classification (CheckIPHeader's documented check order),
and the output pcap holds exactly the valid frames with TTL > 1, in order, with TTL - 1, a
correct checksum and rewritten MACs. The same input through --workers 2 and --batch 7 must give
byte-identical output.
"""
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile

from scapy.all import IP, UDP, Dot1Q, Ether, IPv6, ARP, Raw, rdpcap

from waits import GUARD_S  # noqa: E402

FULCRUM = os.path.abspath(os.environ.get("FULCRUM_BIN", "build/fulcrum"))
TIMEOUT_S = GUARD_S  # a hang: a start under ASan on a loaded machine can take a minute

SRC_MAC, DST_MAC = "02:00:00:00:00:10", "02:00:00:00:01:10"
PIPELINE = """FromInput
  -> chk :: CheckIPHeader
  -> rt :: IPLookup({routes})
  -> ttl :: DecIPTTL
  -> rw :: EtherRewrite(0 {src} {dst})
  -> out :: ToOutput;
"""
RUNTIME_REASONS = {"no-such-port", "tx-full", "multi-segment", "tx-write-failed"}


def write_pcap(path, frames):
    """A classic little-endian Ethernet pcap of raw frames (any length, zero included)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, raw in enumerate(frames):
            f.write(struct.pack("<IIII", 1700000000 + i // 1000, (i % 1000) * 1000, len(raw), len(raw)))
            f.write(raw)


def ones_sum(data):
    if len(data) % 2:
        data += b"\x00"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def ip_checksum(header):
    """The checksum field value for `header` (its own checksum field taken as zero)."""
    h = bytearray(header)
    h[10:12] = b"\x00\x00"
    return (~ones_sum(bytes(h))) & 0xFFFF


def classify(raw):
    """What the router must do with a frame: ('out', None) or ('drop', 'element/reason').

    An independent reading of CheckIPHeader's checks in their documented order, then the
    default route (everything to port 0) and DecIPTTL."""
    n = len(raw)
    if n < 34:
        return "drop", "chk/truncated"
    if raw[12:14] != b"\x08\x00" or raw[14] >> 4 != 4:
        return "drop", "chk/not-ipv4"
    hlen = (raw[14] & 0x0F) * 4
    if hlen < 20 or hlen > n - 14:
        return "drop", "chk/bad-ihl"
    total = struct.unpack("!H", raw[16:18])[0]
    if total < hlen or total > n - 14:
        return "drop", "chk/bad-length"
    if ones_sum(raw[14:14 + hlen]) != 0xFFFF:
        return "drop", "chk/bad-checksum"
    src = raw[26:30]
    if src in (b"\x00\x00\x00\x00", b"\xff\xff\xff\xff") or 224 <= src[0] <= 239:
        return "drop", "chk/bad-source"
    if raw[22] <= 1:
        return "drop", "ttl/ttl-expired"
    return "out", None


def forwarded(raw):
    """The frame as the router must send it: TTL - 1, checksum recomputed, MACs rewritten."""
    b = bytearray(raw)
    hlen = (b[14] & 0x0F) * 4
    b[22] -= 1
    b[24:26] = struct.pack("!H", ip_checksum(bytes(b[14:14 + hlen])))
    b[0:6] = bytes.fromhex(DST_MAC.replace(":", ""))
    b[6:12] = bytes.fromhex(SRC_MAC.replace(":", ""))
    return bytes(b)


def fix_checksum(b):
    """Recomputes the IPv4 header checksum in place (for IHL >= 5 headers inside the frame)."""
    hlen = (b[14] & 0x0F) * 4
    b[24:26] = struct.pack("!H", ip_checksum(bytes(b[14:14 + hlen])))
    return b


def build_frames():
    rng = random.Random(20240611)

    def eth(dst="02:bb:00:00:00:01"):
        return Ether(src="02:aa:00:00:00:01", dst=dst)

    def udp(size=None, ttl=64, src="10.1.2.3", dst="198.51.100.7", options=b"", pad=0):
        p = eth() / IP(src=src, dst=dst, ttl=ttl, options=options)
        p = p / UDP(sport=rng.randint(1, 65535), dport=rng.randint(1, 65535))
        raw = bytes(p / Raw(rng.randbytes(size if size is not None else rng.randint(0, 200))))
        return raw + b"\x00" * pad

    groups = {}
    groups["valid"] = []
    for i in range(1000):
        opts = b""
        if i % 7 == 0:
            opts = b"\x01" * (4 * rng.randint(1, 10))  # NOP options: IHL 6..15
        pad = rng.choice([0, 0, 0, 6, 20])  # Ethernet padding past the IP total length
        groups["valid"].append(udp(ttl=rng.randint(2, 255), options=opts, pad=pad,
                                   src=f"{rng.randint(1, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.1"))
    groups["valid"].append(udp(src="240.0.0.1"))  # class E is not multicast
    groups["valid"].append(udp(size=0))
    base = udp(size=32)  # 74 bytes: total length 60, so every prefix up to 60 bytes is short
    groups["truncated"] = [base[:n] for n in range(0, 61)]
    groups["ihl"] = []
    for ihl in range(0, 5):
        for _ in range(4):
            b = bytearray(udp())
            b[14] = 0x40 | ihl
            groups["ihl"].append(bytes(b))
    b = bytearray(udp(size=0))  # IHL 15: header past a 42-byte frame
    b[14] = 0x4F
    groups["ihl"].append(bytes(b))
    groups["length"] = []
    for _ in range(20):
        b = bytearray(udp())
        b[16:18] = struct.pack("!H", len(b) - 14 + rng.randint(1, 2000))
        groups["length"].append(bytes(fix_checksum(b)))
    for total in (0, 1, 19):
        for _ in range(5):
            b = bytearray(udp())
            b[16:18] = struct.pack("!H", total)
            groups["length"].append(bytes(fix_checksum(b)))
    for _ in range(5):
        b = bytearray(udp(options=b"\x01" * 8))  # IHL 7: total 27 < 28-byte header
        b[16:18] = struct.pack("!H", 27)
        groups["length"].append(bytes(fix_checksum(b)))
    groups["checksum"] = []
    for _ in range(100):
        b = bytearray(udp())
        b[24:26] = struct.pack("!H", struct.unpack("!H", b[24:26])[0] ^ rng.randint(1, 0xFFFF))
        groups["checksum"].append(bytes(b))
    groups["version"] = []
    for version in (6, 6, 6, 0, 5, 15):
        for _ in range(5):
            b = bytearray(udp())
            b[14] = (version << 4) | 5
            groups["version"].append(bytes(fix_checksum(b)))
    groups["ethertype"] = []
    for _ in range(25):
        groups["ethertype"].append(bytes(eth("ff:ff:ff:ff:ff:ff") / ARP(psrc="10.0.0.2", pdst="10.0.0.1")))
        groups["ethertype"].append(bytes(eth() / IPv6(src="2001:db8::2", dst="2001:db8::1") / UDP()))
        groups["ethertype"].append(bytes(eth() / Dot1Q(vlan=rng.randint(1, 4094)) /
                                         IP(src="10.0.0.2", dst="198.51.100.1") / UDP()))
        b = bytearray(udp())
        b[12:14] = b"\x00\x00"
        groups["ethertype"].append(bytes(b))
    groups["ttl"] = [udp(ttl=ttl) for ttl in (0, 1) for _ in range(50)]
    groups["source"] = [udp(src=s) for s in ("0.0.0.0", "255.255.255.255", "224.0.0.1", "239.255.255.255",
                                             "230.1.2.3") for _ in range(8)]
    groups["garbage"] = []
    for i in range(400):
        raw = bytearray(rng.randbytes(rng.randint(0, 1514)))
        if i % 2 and len(raw) >= 34:
            raw[12:14] = b"\x08\x00"  # IPv4 ethertype, so the deeper checks see garbage
            raw[14] = 0x40 | (raw[14] & 0x0F)
        groups["garbage"].append(bytes(raw))
    frames = [f for fs in groups.values() for f in fs]
    rng.shuffle(frames)
    return frames, groups


def declared_reasons(classes):
    """Drop reasons each element class declares, from `fulcrum elements NAME`."""
    reasons = {}
    for cls in classes:
        res = subprocess.run([FULCRUM, "elements", cls], capture_output=True, text=True, timeout=TIMEOUT_S)
        m = re.search(r"Drop reasons: ([^.]*)\.", res.stdout)
        reasons[cls] = set(m.group(1).split(", ")) if m else set()
    return reasons


def run(failures, label, work, click, inp, extra):
    outp = os.path.join(work, f"out-{label.replace(' ', '-')}.pcap")
    stats = os.path.join(work, f"stats-{label.replace(' ', '-')}.json")
    cmd = [FULCRUM, "run", click, "--quiet", "--stats-json", stats,
           "--port", f"net_pcap0,rx_pcap={inp},tx_pcap={outp}"] + extra
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        failures.append(f"{label}: no exit within {TIMEOUT_S} s: {' '.join(cmd)}")
        return None, None
    if res.returncode != 0:
        failures.append(f"{label}: exit code {res.returncode} (expected 0)\n  command: {' '.join(cmd)}\n"
                        f"  stderr: {res.stderr.strip()}")
        return None, None
    with open(stats) as f:
        st = json.load(f)
    return st, [bytes(p) for p in rdpcap(outp)]


def check_run(failures, label, st, frames, reasons_by_class):
    def fail(msg):
        failures.append(f"{label}: {msg}")

    nonempty = [f for f in frames if len(f) > 0]
    if st["packets_in"] == len(frames):
        delivered = frames
    elif st["packets_in"] == len(nonempty):
        delivered = nonempty
    else:
        fail(f"packets_in {st['packets_in']}: expected {len(frames)} pcap records "
             f"({len(nonempty)} of them non-empty)")
        delivered = frames
    if not st["balanced"] or st["queued"] != 0:
        fail(f"not balanced: in {st['packets_in']} out {st['packets_out']} dropped {st['dropped']} "
             f"queued {st['queued']}")
    if sum(st["drops"].values()) != st["dropped"]:
        fail(f"drops by reason sum to {sum(st['drops'].values())}, dropped is {st['dropped']}")
    classes = {e["name"]: e["class"] for e in st["elements"]}
    for key in st["drops"]:
        name, _, reason = key.partition("/")
        allowed = RUNTIME_REASONS if name == "runtime" else reasons_by_class.get(classes.get(name), set())
        if reason not in allowed:
            fail(f"drop reason {key!r} is not one {name} declares ({sorted(allowed)})")
    for e in st["elements"]:
        if e["class"] != "ToOutput" and sum(e["out_packets"]) + sum(e["drops"].values()) != e["in_packets"]:
            fail(f"{e['name']}: in {e['in_packets']} != outputs {e['out_packets']} + drops {e['drops']}")

    want_drops = {}
    want_out = []
    for raw in delivered:
        verdict, reason = classify(raw)
        if verdict == "out":
            want_out.append(raw)
        else:
            want_drops[reason] = want_drops.get(reason, 0) + 1
    if st["packets_out"] != len(want_out):
        fail(f"packets_out {st['packets_out']}, expected {len(want_out)} valid frames with TTL > 1")
    if st["drops"] != want_drops:
        keys = sorted(set(st["drops"]) | set(want_drops))
        diff = ", ".join(f"{k}: got {st['drops'].get(k, 0)} want {want_drops.get(k, 0)}" for k in keys
                         if st["drops"].get(k, 0) != want_drops.get(k, 0))
        fail(f"drops by reason differ from the independent classification: {diff}")
    return [forwarded(raw) for raw in want_out]


def main():
    work = tempfile.mkdtemp(prefix="fulcrum-e2e-robust-")
    failures = []
    try:
        routes = os.path.join(work, "default.txt")
        with open(routes, "w") as f:
            f.write("0.0.0.0/0 0\n")
        click = os.path.join(work, "router.click")
        with open(click, "w") as f:
            f.write(PIPELINE.format(routes=routes, src=SRC_MAC, dst=DST_MAC))
        frames, groups = build_frames()
        inp = os.path.join(work, "in.pcap")
        write_pcap(inp, frames)
        reasons = declared_reasons(["FromInput", "CheckIPHeader", "IPLookup", "DecIPTTL", "EtherRewrite",
                                    "ToOutput"])

        outputs = {}
        for label, extra in (("1 worker", []), ("2 workers", ["--workers", "2"]), ("batch 7", ["--batch", "7"])):
            st, out = run(failures, label, work, click, inp, extra)
            if st is None:
                continue
            want = check_run(failures, label, st, frames, reasons)
            outputs[label] = out
            if len(out) != st["packets_out"]:
                failures.append(f"{label}: output pcap has {len(out)} frames, packets_out is {st['packets_out']}")
            if out != want:
                bad = next((i for i, (a, b) in enumerate(zip(out, want)) if a != b), min(len(out), len(want)))
                failures.append(f"{label}: output differs from the expected forwarded frames at frame {bad} "
                                f"({len(out)} frames, expected {len(want)})")
        if "1 worker" in outputs:
            for label in ("2 workers", "batch 7"):
                if label in outputs and outputs[label] != outputs["1 worker"]:
                    failures.append(f"{label}: output pcap differs from the 1-worker run")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    counts = ", ".join(f"{k} {len(v)}" for k, v in groups.items())
    print(f"ok: {len(frames)} frames ({counts}); malformed dropped by named reason, valid forwarded identically "
          "with 1 worker, 2 workers and batch 7")
    return 0


if __name__ == "__main__":
    sys.exit(main())
