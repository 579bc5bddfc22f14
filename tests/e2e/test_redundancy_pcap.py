#!/usr/bin/env python3
"""End to end: RedundancyElim over a pcap, its counters against an independent Python model.

scapy builds IPv4 UDP and TCP frames whose payloads are cut from a small pool of content
blocks at random offsets, so that content repeats across and inside packets at arbitrary
alignments, plus short payloads and frames that must be dropped. The model implements the
semantics documented in src/lib/re/redundancy.hh and chunker.hh from scratch: fingerprints are
hashlib.md5 digests, the fingerprint table a dict, the packet store the concatenated payload
stream of which the last STORE bytes are remembered; a chunk is redundant when its digest is
in the table and the remembered bytes equal it. Three configurations are run with net_pcap
ports (fixed 64-byte chunks and a large store, as configs/redundancy-elim.click; fixed 32-byte
chunks and a 128 KiB store that forgets; content-defined chunks), and configs/
redundancy-elim.click itself on built-in traffic. Every frame that is not dropped must come out
unchanged, drops must match by reason, and the buffer balance must hold.
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

from scapy.all import ARP, IP, TCP, UDP, Ether, Raw, rdpcap  # noqa: E402

FULCRUM = os.environ.get("FULCRUM_BIN", "build/fulcrum")
SOURCE = os.environ.get("FULCRUM_SOURCE_DIR", ".")
TIMEOUT_S = 120
MACS = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
MASK64 = (1 << 64) - 1
WINDOW, BASE, MIX = 16, 0x100000001B3, 0x9E3779B97F4A7C15


def fixed_chunks(payload, size):
    return [(off, size) for off in range(0, len(payload) - size + 1, size)]


def content_chunks(payload, size):
    """Content-defined boundaries, the rule of chunker.hh evaluated directly per position."""
    bits = size.bit_length() - 1
    lo, hi = size // 2, size * 4
    out, start = [], 0
    for e in range(1, len(payload) + 1):
        h = 0
        for b in payload[max(0, e - WINDOW):e]:
            h = (h * BASE + b) & MASK64
        if e - start >= hi or (e - start >= lo and ((h * MIX) & MASK64) >> (64 - bits) == 0):
            out.append((start, e - start))
            start = e
    if len(payload) - start >= lo:
        out.append((start, len(payload) - start))
    return out


def model(payloads, chunk_lists, store):
    table, stream = {}, bytearray()
    c = dict(chunks=0, redundant_chunks=0, redundant_bytes=0, payload_bytes=0, chunk_bytes=0)
    for p, chunks in zip(payloads, chunk_lists):
        base = len(stream)
        stream += p
        c["payload_bytes"] += len(p)
        for off, n in chunks:
            chunk = p[off:off + n]
            d = hashlib.md5(chunk).digest()
            hit = table.get(d)
            if hit is not None and len(stream) - hit <= store and stream[hit:hit + n] == chunk:
                c["redundant_chunks"] += 1
                c["redundant_bytes"] += n
            table[d] = base + off
            c["chunks"] += 1
            c["chunk_bytes"] += n
    return c


def make_frames(rng):
    blocks = [bytes(rng.randrange(256) for _ in range(rng.randrange(40, 400))) for _ in range(12)]
    pool = b"".join(blocks)
    frames, payloads, kept, drops = [], [], [], {}
    for i in range(900):
        n = rng.choice([3, 20, 63, 64, 65, 200, 700, 1400, rng.randrange(0, 1400)])
        start = rng.randrange(0, len(pool) - n)
        data = pool[start:start + n] if rng.random() < 0.8 else bytes(rng.randrange(256) for _ in range(n))
        if i % 4 == 0:
            p = Ether(**MACS) / IP(src="10.0.0.1", dst="10.0.0.2") / TCP(sport=80, dport=1000 + i) / Raw(data)
        else:
            p = Ether(**MACS) / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=4000, dport=1000 + i) / Raw(data)
        frames.append(bytes(p))
        kept.append(bytes(p))
        payloads.append(data)
        if i % 100 == 0:
            bad = [(bytes(Ether(**MACS) / ARP()), "not-ipv4"),
                   (bytes(p)[:len(bytes(p)) - 1] if n > 0 else bytes(p)[:30], "truncated"),
                   (bytes(Ether(**MACS) / IP(ihl=3, src="10.0.0.1", dst="10.0.0.2") / UDP() / Raw(data)), "bad-header")]
            for f, reason in bad:
                frames.append(f)
                drops[reason] = drops.get(reason, 0) + 1
    return frames, payloads, kept, drops


def write_pcap(path, frames):
    """Raw frames into a pcap file as they are (scapy would have to parse runts first)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", i, 0, len(fr), len(fr)) + fr)


def run(work, click_text, inp, tag):
    click = click_text
    if not os.path.exists(click_text):
        click = os.path.join(work, f"{tag}.click")
        with open(click, "w") as f:
            f.write(click_text)
    out = os.path.join(work, f"{tag}-out.pcap")
    stats = os.path.join(work, f"{tag}-stats.json")
    cmd = [FULCRUM, "run", click, "--quiet", "--stats-json", stats,
           "--port", f"net_pcap0,rx_pcap={inp},tx_pcap={out}"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    if res.returncode != 0:
        raise RuntimeError(f"{tag}: exit {res.returncode}\n{res.stdout}\n{res.stderr}")
    st = json.load(open(stats))
    counters = next(e["counters"] for e in st["elements"] if e["class"] == "RedundancyElim")
    drops = {}
    for k, v in st["drops"].items():
        reason = k.split("/", 1)[1]
        drops[reason] = drops.get(reason, 0) + v
    return [bytes(p) for p in rdpcap(out)], st, counters, drops


def main():
    rng = random.Random(5)
    work = tempfile.mkdtemp(prefix="fulcrum-e2e-re-")
    frames, payloads, kept, want_drops = make_frames(rng)
    inp = os.path.join(work, "in.pcap")
    write_pcap(inp, frames)
    failures = []
    cases = [
        ("default", os.path.join(SOURCE, "configs", "redundancy-elim.click"),
         lambda p: fixed_chunks(p, 64), 1 << 24),
        ("small-store", "FromInput -> RedundancyElim(CHUNK 32, STORE 131072) -> ToOutput;\n",
         lambda p: fixed_chunks(p, 32), 1 << 17),
        ("content", "FromInput -> RedundancyElim(MODE content, CHUNK 64, STORE 131072) -> ToOutput;\n",
         lambda p: content_chunks(p, 64), 1 << 17),
    ]
    for tag, click, chunker, store in cases:
        chunk_lists = [chunker(p) for p in payloads]
        want = model(payloads, chunk_lists, store)
        got, st, counters, drops = run(work, click, inp, tag)
        if not st["balanced"]:
            failures.append(f"{tag}: buffer balance does not hold")
        if drops != want_drops:
            failures.append(f"{tag}: drops {drops}, expected {want_drops}")
        if got != kept:
            failures.append(f"{tag}: {len(got)} frames out, expected {len(kept)} unchanged")
        for k, v in want.items():
            if counters.get(k) != v:
                failures.append(f"{tag}: counter {k} = {counters.get(k)}, model {v}")
        if counters.get("evictions") != 0:
            failures.append(f"{tag}: {counters.get('evictions')} evictions in a large table")
        if store < want["payload_bytes"] and model(payloads, chunk_lists, 1 << 40) == want:
            failures.append(f"{tag}: the store never forgets anything in this traffic")
        if want["redundant_chunks"] == 0 or want["redundant_chunks"] == want["chunks"]:
            failures.append(f"{tag}: the traffic does not exercise both outcomes ({want})")
        print(f"{tag}: {want['chunks']} chunks, {want['redundant_bytes']} of "
              f"{want['payload_bytes']} payload bytes redundant")

    stats = os.path.join(work, "gen-stats.json")
    res = subprocess.run([FULCRUM, "run", os.path.join(SOURCE, "configs", "redundancy-elim.click"),
                          "--quiet", "--port", "gen:size=1024,flows=64", "--packets", "20000",
                          "--stats-json", stats], capture_output=True, text=True, timeout=TIMEOUT_S)
    if res.returncode != 0:
        failures.append(f"configs/redundancy-elim.click on gen: exit {res.returncode}: {res.stderr}")
    else:
        st = json.load(open(stats))
        c = next(e["counters"] for e in st["elements"] if e["class"] == "RedundancyElim")
        if not st["balanced"] or st["dropped"] != 0 or c["chunks"] != st["packets_in"] * 15:
            failures.append(f"configs/redundancy-elim.click on gen: in {st['packets_in']}, "
                            f"dropped {st['dropped']}, chunks {c['chunks']}")
    shutil.rmtree(work)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    print("ok: RedundancyElim counters equal the hashlib.md5 model in all configurations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
