#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into OUT/<target>/ (make fuzz: build-fuzz/seeds).

Seeds come from the repository itself: the shipped configurations and tables (configs/), the
element argument lists they use, small text seeds (fuzz/seeds/<target>/, committed) and frames
built with scapy the way the end-to-end tests build theirs (tests/e2e): IPv4/IPv6/ARP/VLAN, TCP,
UDP, ICMP, IP options, truncated and bad-length headers, ESP packets encrypted with the demo SAs
(scapy's own ESP), NDN Interests, and payloads that trigger the demo IDS rules. Nothing binary is
committed; the script is deterministic.

usage: make_seeds.py OUT
"""
import hashlib
import os
import random
import re
import struct
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def write(out, target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def configs():
    d = os.path.join(ROOT, "configs")
    return sorted(n for n in os.listdir(d) if n.endswith(".click"))


def table_seeds(out, target, rel, lines=40):
    """The first `lines` table lines of a shipped table, and a few slices of it."""
    text = read(rel).splitlines()
    write(out, target, "\n".join(text[:lines]) + "\n")
    body = [l for l in text if l and not l.startswith("#")]
    for start in range(0, len(body), max(1, len(body) // 8)):
        write(out, target, "\n".join(body[start:start + 8]) + "\n")


def committed(out):
    """fuzz/seeds/<target>/*: small hand-written seeds (edge cases of each format)."""
    base = os.path.join(ROOT, "fuzz", "seeds")
    for target in sorted(os.listdir(base)):
        for name in sorted(os.listdir(os.path.join(base, target))):
            with open(os.path.join(base, target, name), "rb") as f:
                write(out, target, f.read())


def element_classes():
    """Registered element classes in registry order (std::map: byte-wise sorted names)."""
    names = set()
    for top in ("elements", "src"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for n in files:
                if n.endswith(".hh"):
                    with open(os.path.join(dirpath, n), encoding="utf-8") as f:
                        names.update(re.findall(r'kTraits\{\s*"(\w+)"', f.read()))
    return sorted(names)


def config_args():
    """(class, [args]) of every element written with arguments in the shipped configurations."""
    out = []
    for name in configs():
        text = re.sub(r"//[^\n]*", "", read(os.path.join("configs", name)))
        for m in re.finditer(r"([A-Z][A-Za-z0-9]*)\s*\(([^()]*)\)", text):
            out.append((m.group(1), [a.strip() for a in m.group(2).split(",")]))
    return out


EXTRA_ARGS = {
    "CheckIPHeader": [["CHECKSUM false"], ["BADSRC 10.0.0.0/8"]],
    "Classifier": [["12/0800", "12/86dd", "-"], ["12/0806 20/0001", "-"], ["23/11"]],
    "L2Switch": [["CAPACITY 64", "AGING_S 1"]],
    "L2Forward": [["METHOD echo"], ["METHOD roundrobin", "PORT 1"]],
    "RandomSplit": [["0.5", "SEED 7"]],
    "FixedFraction": [["0.25", "SEED 3"], ["1", "DEVICE 0"]],
    "TimedSource": [["INTERVAL_US 10", "BURST 4", "LIMIT 8", "SIZE 60", "DST 10.0.0.1", "PORT 1"]],
    "MD5Digest": [["TRAILER true"]],
    "RedundancyElim": [["CHUNK 64", "MODE content", "CAPACITY 1024", "STORE 65536"]],
    "ICMPError": [["10.0.0.1", "3", "1"]],
    "IP6Lookup": [["configs/routes6-demo.txt", "ALGORITHM trie"]],
    "IPLookupOffload": [["configs/routes-demo.txt", "AGGREGATE 4", "FLUSH_US 10", "CHAIN false"]],
    "DeviceOnly": [["DEVICE 0"]],
    "EtherRewrite": [["0 02:00:00:00:00:10 02:00:00:00:01:10", "DEFAULT 02:00:00:00:00:01 02:00:00:00:00:02"]],
    "CrossConnect": [["0 1", "1 0"]],
}


def element_args_seeds(out):
    classes = element_classes()
    index = {c: i for i, c in enumerate(classes)}
    pairs = config_args() + [(c, a) for c, lists in EXTRA_ARGS.items() for a in lists]
    pairs += [(c, []) for c in classes]
    for cls, args in pairs:
        if cls in index:
            write(out, "element_args", bytes([index[cls]]) + "\n".join(args).encode())


def frames():
    """Frames for the pipeline target, built with scapy like the end-to-end tests build theirs."""
    from scapy.all import ARP, ICMP, IP, TCP, UDP, Dot1Q, Ether, IPv6, Raw
    from scapy.layers.inet6 import ICMPv6EchoRequest

    rng = random.Random(20261101)

    def eth(dst="02:bb:00:00:00:01", **kw):
        return Ether(src="02:aa:00:00:00:01", dst=dst, **kw)

    def route4(i):
        lines = [l.split()[0] for l in read("configs/routes-demo.txt").splitlines()
                 if l and not l.startswith("#")]
        net = lines[i * 997 % len(lines)].split("/")[0]
        return net[: net.rfind(".")] + ".7"

    out = []
    for i in range(6):
        out.append(bytes(eth() / IP(src="10.1.2.3", dst=route4(i), ttl=64 - i) / UDP(sport=1000 + i, dport=53)
                         / Raw(rng.randbytes(rng.randint(0, 64)))))
    out.append(bytes(eth() / IP(dst=route4(7), ttl=1) / UDP() / Raw(b"x" * 18)))
    out.append(bytes(eth() / IP(dst=route4(8), options=b"\x01" * 8) / UDP()))
    out.append(bytes(eth("ff:ff:ff:ff:ff:ff") / ARP(psrc="10.0.0.2", pdst="10.0.0.1")))
    out.append(bytes(eth() / Dot1Q(vlan=5) / IP(dst=route4(9)) / UDP()))
    out.append(bytes(eth() / IP(dst=route4(10)) / ICMP() / Raw(b"PING-MARK")))
    out.append(bytes(eth() / IP(dst="198.51.100.7") / TCP(dport=80, flags="PA") / Raw(b"GET /etc/passwd HTTP/1.0\r\n")))
    out.append(bytes(eth() / IP(dst="198.51.100.7") / TCP(dport=8080) / Raw(b"POST /login user=admin&pass=x&")))
    out.append(bytes(eth() / IP(dst="198.51.100.7") / UDP(dport=53) / Raw(b"\x07example\x03bad\x00")))
    out.append(bytes(eth() / IP(src="10.9.9.9", dst="8.8.8.8") / UDP() / Raw(b"\x90" * 16 + b"/bin/sh")))
    out.append(bytes(eth() / IP(dst="198.51.100.7") / TCP(dport=21) / Raw(b"PASS secret")))
    v6 = [l.split()[0].split("/")[0] for l in read("configs/routes6-demo.txt").splitlines()
          if l and not l.startswith("#")]
    for i in range(4):
        out.append(bytes(eth() / IPv6(src="2001:db8::1", dst=v6[i * 31 % len(v6)] + "1", hlim=64 - 62 * (i == 3))
                         / UDP() / Raw(b"v6")))
    out.append(bytes(eth() / IPv6(dst="2001:db8::1") / ICMPv6EchoRequest()))
    base = bytes(eth() / IP(dst=route4(11)) / UDP() / Raw(b"y" * 32))
    out += [base[:n] for n in (0, 13, 14, 20, 33, 34, 41)]
    b = bytearray(base)
    b[16:18] = struct.pack("!H", 1400)
    out.append(bytes(b))
    b = bytearray(base)
    b[14] = 0x4F
    out.append(bytes(b))
    out += ndn_frames() + esp_frames()
    return out


def ndn_frames():
    from scapy.all import Ether, Raw

    def var(n):
        return bytes([n]) if n < 253 else bytes([253]) + n.to_bytes(2, "big")

    def tlv(t, value):
        return var(t) + var(len(value)) + value

    def interest(components):
        name = tlv(0x07, b"".join(tlv(0x08, c) for c in components))
        return bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02", type=0x8624) / Raw(tlv(0x05, name)))

    return [interest([b"edu", b"ucla", b"cs", b"x"]), interest([b"com", b"example", b"video", b"hd"]),
            interest([b"org", b"ndn", b"testbed/routers"]), interest([]), interest([b"nowhere"])]


def esp_frames():
    """ESP packets for the demo SAs (configs/sa-demo.txt), encrypted by scapy."""
    try:
        from scapy.all import IP, UDP, Ether, Raw
        from scapy.layers.ipsec import ESP, SecurityAssociation
    except ImportError:
        return []
    try:
        return esp_encrypt(IP, UDP, Ether, Raw, ESP, SecurityAssociation)
    except Exception as e:  # scapy's ESP needs the `cryptography` module
        print(f"seeds: no ESP frames ({e})", file=sys.stderr)
        return []


def esp_encrypt(IP, UDP, Ether, Raw, ESP, SecurityAssociation):
    out = []
    for line in read("configs/sa-demo.txt").splitlines():
        f = line.split("#")[0].split()
        if len(f) < 7 or f[-1] != "in":
            continue
        spi, src, dst, enc, auth = int(f[0]), f[1], f[2], bytes.fromhex(f[3]), bytes.fromhex(f[4])
        sa = SecurityAssociation(ESP, spi=spi, crypt_algo="AES-CTR", crypt_key=enc,
                                 auth_algo="HMAC-SHA1-96", auth_key=auth,
                                 tunnel_header=IP(src=src, dst=dst))
        for seq, size in ((1, 0), (2, 40), (3, 300)):
            inner = IP(src="10.1.0.1", dst="10.2.0.1") / UDP(sport=5000, dport=5001) / Raw(b"z" * size)
            sa.seq_num = seq
            out.append(bytes(Ether(src="02:aa:00:00:00:01", dst="02:bb:00:00:00:01") / sa.encrypt(inner)))
    return out


RUN_ARGS = [
    ["ipv4-router.click", "--port", "gen:size=64,flows=1024,dst=uniform", "--port", "net_null0,no-rx=1",
     "--packets", "50000000", "--stats-json", "stats.json"],
    ["x.click", "--port", "net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap", "--workers", "2", "--batch", "256",
     "--seconds", "1.5", "--branch", "split", "--quiet", "--watchdog", "0"],
    ["--help"],
    ["x.click", "--port", "0000:01:00.0", "--seconds", "nan", "--batch", "0"],
]


def pipeline_seeds(out):
    n = len(configs())
    fs = frames()
    for p in range(n):
        for i, f in enumerate(fs):
            write(out, "pipelines", bytes([p]) + bytes([i % 2]) + struct.pack("!H", len(f)) + f)
        burst = b"".join(bytes([i % 4]) + struct.pack("!H", len(f)) + f for i, f in enumerate(fs[:24]))
        write(out, "pipelines", bytes([p]) + burst)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    for name in configs():
        write(out, "config", read(os.path.join("configs", name)))
    table_seeds(out, "routes4", "configs/routes-demo.txt")
    table_seeds(out, "routes6", "configs/routes6-demo.txt")
    table_seeds(out, "ipsec_sa", "configs/sa-demo.txt")
    table_seeds(out, "ids_rules", "configs/ids-rules-demo.rules")
    table_seeds(out, "ndn_names", "configs/ndn-names-demo.txt")
    element_args_seeds(out)
    for args in RUN_ARGS:
        write(out, "run_args", "\0".join(args))
    committed(out)
    pipeline_seeds(out)
    for t in sorted(os.listdir(out)):
        print(f"seeds: {t}: {len(os.listdir(os.path.join(out, t)))}")


if __name__ == "__main__":
    main()
