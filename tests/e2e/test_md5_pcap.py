#!/usr/bin/env python3
"""End to end: MD5Digest over a pcap, each digest checked against Python's hashlib.

Builds IPv4 UDP and TCP frames with scapy (payloads of 0..1458 bytes, TCP options, Ethernet
padding), plus frames that must be dropped (ARP, IPv6, IHL < 5, a total length past the frame,
a TCP header cut short, runt frames). Runs MD5Digest(TRAILER true) with net_pcap ports: every
IPv4 frame must come out as it went in followed by the MD5 of its L4 payload, where the payload
is taken by scapy and hashed by hashlib.md5; the drops must match by reason and the buffer
balance must hold. Then runs configs/md5.click itself on the same capture (frames unchanged)
and on built-in traffic.
"""
import hashlib
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

from scapy.all import ARP, IP, IPv6, TCP, UDP, Ether, Raw, rdpcap  # noqa: E402

FULCRUM = os.environ.get("FULCRUM_BIN", "build/fulcrum")
SOURCE = os.environ.get("FULCRUM_SOURCE_DIR", ".")
TIMEOUT_S = 120
MACS = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def make_frames(rng):
    frames, expect = [], []  # expect: payload bytes (kept) or a drop reason
    for i in range(300):
        n = rng.choice([0, 1, 5, 22, 55, 64, 100, 512, 1000, 1458, rng.randrange(0, 1459)])
        data = bytes(rng.randrange(256) for _ in range(n))
        if i % 3 == 0:
            opts = [("MSS", 1460), ("NOP", None), ("WScale", 7)] if i % 2 else []
            p = Ether(**MACS) / IP(src="10.0.0.1", dst="10.0.0.2") / TCP(sport=80, dport=i + 1000, options=opts) / Raw(data)
            payload = bytes(p[TCP].payload)
        else:
            p = Ether(**MACS) / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=4000, dport=i + 1000) / Raw(data)
            payload = bytes(p[UDP].payload)
        frames.append(bytes(p))
        expect.append(payload)
    # A short UDP payload padded by Ethernet to 60 bytes: the padding is not payload.
    p = Ether(**MACS) / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1, dport=2) / Raw(b"hi")
    frames.append(bytes(p) + b"\xee" * (60 - len(p)))
    expect.append(b"hi")
    drops = [
        (bytes(Ether(**MACS) / ARP()), "not-ipv4"),
        (bytes(Ether(**MACS) / IPv6() / UDP() / Raw(b"x" * 30)), "not-ipv4"),
        (bytes(Ether(**MACS) / IP(ihl=4, src="10.0.0.1", dst="10.0.0.2") / UDP() / Raw(b"y" * 40)), "bad-header"),
        (bytes(Ether(**MACS) / IP(src="10.0.0.1", dst="10.0.0.2") / UDP() / Raw(b"z" * 100))[:-10], "truncated"),
        (bytes(Ether(**MACS) / IP(src="10.0.0.1", dst="10.0.0.2", len=30, proto=6) / Raw(b"\x00" * 30)), "truncated"),
        (bytes(Ether(**MACS) / IP(src="10.0.0.1", dst="10.0.0.2") / UDP())[:30], "truncated"),
        (bytes(Ether(**MACS))[:10], "truncated"),
    ]
    for f, reason in drops:
        frames.append(f)
        expect.append(reason)
    order = list(range(len(frames)))
    rng.shuffle(order)
    return [frames[i] for i in order], [expect[i] for i in order]


def write_pcap(path, frames):
    """Raw frames into a pcap file as they are (scapy would have to parse runts first)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", i, 0, len(fr), len(fr)) + fr)


def run(work, click_text_or_file, inp, tag):
    if os.path.exists(click_text_or_file):
        click = click_text_or_file
    else:
        click = os.path.join(work, f"{tag}.click")
        with open(click, "w") as f:
            f.write(click_text_or_file)
    out = os.path.join(work, f"{tag}-out.pcap")
    stats = os.path.join(work, f"{tag}-stats.json")
    cmd = [FULCRUM, "run", click, "--quiet", "--stats-json", stats,
           "--port", f"net_pcap0,rx_pcap={inp},tx_pcap={out}"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    if res.returncode != 0:
        raise RuntimeError(f"{tag}: exit {res.returncode}\n{res.stdout}\n{res.stderr}")
    return [bytes(p) for p in rdpcap(out)], json.load(open(stats))


def drops_by_reason(st):
    got = {}
    for k, v in st["drops"].items():
        reason = k.split("/", 1)[1]
        got[reason] = got.get(reason, 0) + v
    return got


def main():
    rng = random.Random(11)
    work = tempfile.mkdtemp(prefix="fulcrum-e2e-md5-")
    frames, expect = make_frames(rng)
    inp = os.path.join(work, "in.pcap")
    write_pcap(inp, frames)
    failures = []
    want_drops = {}
    kept = []
    for f, e in zip(frames, expect):
        if isinstance(e, str):
            want_drops[e] = want_drops.get(e, 0) + 1
        else:
            kept.append((f, e))

    got, st = run(work, "FromInput -> MD5Digest(TRAILER true) -> ToOutput;\n", inp, "trailer")
    if not st["balanced"]:
        failures.append("trailer run: buffer balance does not hold")
    if drops_by_reason(st) != want_drops:
        failures.append(f"trailer run: drops {drops_by_reason(st)}, expected {want_drops}")
    if len(got) != len(kept):
        failures.append(f"trailer run: {len(got)} frames out, expected {len(kept)}")
    bad = 0
    for out, (f, payload) in zip(got, kept):
        if out != f + hashlib.md5(payload).digest():
            bad += 1
    if bad:
        failures.append(f"trailer run: {bad} of {len(kept)} frames without the right MD5 trailer")
    counters = {}
    for e in st["elements"]:
        if e["class"] == "MD5Digest":
            counters = e["counters"]
    if counters.get("bytes") != sum(len(p) for _, p in kept):
        failures.append(f"trailer run: bytes counter {counters.get('bytes')}, expected "
                        f"{sum(len(p) for _, p in kept)}")

    got, st = run(work, os.path.join(SOURCE, "configs", "md5.click"), inp, "config")
    if not st["balanced"] or got != [f for f, _ in kept] or drops_by_reason(st) != want_drops:
        failures.append("configs/md5.click on the capture: frames or drops differ")

    stats = os.path.join(work, "gen-stats.json")
    res = subprocess.run([FULCRUM, "run", os.path.join(SOURCE, "configs", "md5.click"), "--quiet",
                          "--port", "gen:size=1500,flows=64", "--packets", "20000",
                          "--stats-json", stats], capture_output=True, text=True, timeout=TIMEOUT_S)
    if res.returncode != 0:
        failures.append(f"configs/md5.click on gen: exit {res.returncode}: {res.stderr}")
    else:
        st = json.load(open(stats))
        if not st["balanced"] or st["packets_in"] < 20000 or st["dropped"] != 0:
            failures.append(f"configs/md5.click on gen: in {st['packets_in']}, dropped "
                            f"{st['dropped']}, balanced {st['balanced']}")
    shutil.rmtree(work)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    print(f"ok: {len(kept)} payload digests equal hashlib.md5, drops by reason match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
