#!/usr/bin/env python3
"""End to end: the IPsec ESP tunnel gateway checked against scapy's independent ESP code.

Outbound: IPv4/UDP packets of many sizes (built with scapy) go through IPsecESPEncap ->
IPsecAES -> IPsecAuthHMACSHA1 over net_pcap; every output packet is verified (HMAC-SHA1-96)
and decrypted (AES-CTR, RFC 3686, on two SAs; AES-CBC, RFC 3602, on a third) by
scapy.layers.ipsec.SecurityAssociation and must equal the
input, with the right tunnel addresses, SPI and sequence numbers 1, 2, 3, ..
Inbound: scapy encrypts packets for the same SA; IPsecESPDecap must give back the originals,
and drops a tampered copy (bad-icv) and a replayed one (replayed).

scapy's AES-CTR needs the Python `cryptography` package.
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

try:
    import cryptography  # noqa: F401
except ImportError:
    print("the Python package 'cryptography' is missing (scapy's AES-CTR needs it): "
          "pip install cryptography, or apt-get install python3-cryptography", file=sys.stderr)
    sys.exit(1)

from scapy.all import IP, UDP, Ether, Raw, rdpcap, wrpcap  # noqa: E402
from scapy.layers.ipsec import ESP, SecurityAssociation  # noqa: E402

FULCRUM = os.environ.get("FULCRUM_BIN", "build/fulcrum")
TIMEOUT_S = 120

SPI_A, SPI_B = 0x1000, 0x2000
AES_KEY_A, NONCE_A = bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c"), bytes.fromhex("deadbeef")
AUTH_A = bytes.fromhex("0102030405060708090a0b0c0d0e0f1011121314")
AES_KEY_B, NONCE_B = bytes.fromhex("000102030405060708090a0b0c0d0e0f"), bytes.fromhex("cafe0001")
AUTH_B = bytes.fromhex("a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3")
SPI_C, AES_KEY_C = 0x3000, bytes.fromhex("06a9214036b8a15b512e03d534120006")  # AES-128-CBC
TUNNEL_SRC, TUNNEL_A, TUNNEL_B, TUNNEL_C = "192.0.2.1", "198.51.100.1", "198.51.100.2", "198.51.100.3"

SA_FILE = f"""# e2e SAs
{SPI_A} {TUNNEL_SRC} {TUNNEL_A} {(AES_KEY_A + NONCE_A).hex()} {AUTH_A.hex()} 10.0.0.0/8 DIR out
{SPI_B} {TUNNEL_SRC} {TUNNEL_B} {(AES_KEY_B + NONCE_B).hex()} {AUTH_B.hex()} 172.16.0.0/12 DIR out
{SPI_C} {TUNNEL_SRC} {TUNNEL_C} {AES_KEY_C.hex()} {AUTH_A.hex()} 192.168.0.0/16 DIR out
{SPI_A} {TUNNEL_SRC} {TUNNEL_A} {(AES_KEY_A + NONCE_A).hex()} {AUTH_A.hex()} 0.0.0.0/0 DIR in
{SPI_C} {TUNNEL_SRC} {TUNNEL_C} {AES_KEY_C.hex()} {AUTH_A.hex()} 0.0.0.0/0 DIR in
{SPI_B} {TUNNEL_SRC} {TUNNEL_B} {(AES_KEY_B + NONCE_B).hex()} {AUTH_B.hex()} 0.0.0.0/0 DIR in
"""

MACS = dict(src="02:aa:00:00:00:01", dst="02:bb:00:00:00:01")


TUNNEL = {"A": TUNNEL_A, "B": TUNNEL_B, "C": TUNNEL_C}
SPI = {"A": SPI_A, "B": SPI_B, "C": SPI_C}


def scapy_sa(which):
    if which == "C":
        return SecurityAssociation(ESP, spi=SPI_C, crypt_algo="AES-CBC", crypt_key=AES_KEY_C,
                                   auth_algo="HMAC-SHA1-96", auth_key=AUTH_A,
                                   tunnel_header=IP(src=TUNNEL_SRC, dst=TUNNEL_C))
    spi, key, nonce, auth, dst = ((SPI_A, AES_KEY_A, NONCE_A, AUTH_A, TUNNEL_A) if which == "A" else
                                  (SPI_B, AES_KEY_B, NONCE_B, AUTH_B, TUNNEL_B))
    return SecurityAssociation(ESP, spi=spi, crypt_algo="AES-CTR", crypt_key=key + nonce,
                               auth_algo="HMAC-SHA1-96", auth_key=auth,
                               tunnel_header=IP(src=TUNNEL_SRC, dst=dst))


def inner_packet(dst, total_len, rng):
    """An IPv4/UDP packet of exactly total_len bytes (>= 28) with a random payload."""
    payload = bytes(rng.getrandbits(8) for _ in range(total_len - 28))
    return IP(bytes(IP(src="10.9.9.9", dst=dst, ttl=rng.randint(1, 255), tos=rng.choice([0, 0x28])) /
                    UDP(sport=rng.randint(1024, 65535), dport=4500 + total_len % 7) / Raw(payload)))


def run_pipeline(work, name, elements, frames):
    click = os.path.join(work, f"{name}.click")
    with open(click, "w") as f:
        f.write("FromInput -> " + " -> ".join(elements) + " -> ToOutput;\n")
    inp, out, stats = (os.path.join(work, f"{name}-{x}") for x in ("in.pcap", "out.pcap", "stats.json"))
    wrpcap(inp, frames)
    cmd = [FULCRUM, "run", click, "--quiet", "--stats-json", stats,
           "--port", f"net_pcap0,rx_pcap={inp},tx_pcap={out}"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    if res.returncode != 0:
        raise RuntimeError(f"fulcrum run failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
    st = json.load(open(stats))
    drops = {}
    for k, v in st["drops"].items():
        reason = k.split("/", 1)[1]
        drops[reason] = drops.get(reason, 0) + v
    return st, drops, rdpcap(out) if os.path.getsize(out) > 0 else []


def outbound(work, sa_path, failures):
    rng = random.Random(1)
    sizes = [28, 29, 30, 31, 32, 46, 64, 100, 127, 128, 255, 256, 511, 512, 1000, 1400, 1499, 1500]
    sizes += [rng.randint(28, 1500) for _ in range(60)]
    sent = []
    for i, size in enumerate(sizes):
        which = "B" if i % 5 == 4 else "C" if i % 5 == 2 else "A"
        dst = {"A": f"10.{i % 256}.{i // 256}.{1 + i % 250}", "B": f"172.16.{i % 256}.{1 + i % 200}",
               "C": f"192.168.{i % 256}.{1 + i % 250}"}[which]
        sent.append((which, inner_packet(dst, size, rng)))
    frames = [Ether(**MACS) / p for _, p in sent]
    no_sa = Ether(**MACS) / IP(src="10.9.9.9", dst="8.8.8.8") / UDP() / Raw(b"x" * 30)
    frames.insert(7, no_sa)
    elements = [f'IPsecESPEncap("{sa_path}")', f'IPsecAES("{sa_path}")', f'IPsecAuthHMACSHA1("{sa_path}")']
    st, drops, got = run_pipeline(work, "encap", elements, frames)
    if not st["balanced"]:
        failures.append("encap: buffer balance does not hold")
    if drops != {"no-sa": 1}:
        failures.append(f"encap: drops {drops}, expected one no-sa")
    if len(got) != len(sent):
        failures.append(f"encap: {len(got)} packets out, expected {len(sent)}")
        return 0
    sas = {w: scapy_sa(w) for w in "ABC"}
    # The oracle is live: scapy rejects our first packet with one bit flipped.
    flipped = bytearray(bytes(got[0][IP]))
    flipped[-1] ^= 0x01
    try:
        sas[sent[0][0]].decrypt(IP(bytes(flipped)))
        failures.append("encap: scapy accepted a tampered packet (the check is not verifying ICVs)")
    except Exception:  # noqa: BLE001
        pass
    seqs = {"A": 0, "B": 0, "C": 0}
    for (which, inner), out in zip(sent, got):
        seqs[which] += 1
        outer = out[IP]
        esp = outer[ESP]
        want_dst, want_spi = TUNNEL[which], SPI[which]
        if (outer.src, outer.dst, outer.proto) != (TUNNEL_SRC, want_dst, 50):
            failures.append(f"encap: outer header {outer.src}->{outer.dst} proto {outer.proto}")
        if esp.spi != want_spi or esp.seq != seqs[which]:
            failures.append(f"encap: SPI {esp.spi:#x} seq {esp.seq}, expected {want_spi:#x} {seqs[which]}")
        chk = outer.chksum
        del outer.chksum
        if IP(bytes(outer)).chksum != chk:
            failures.append("encap: bad outer checksum")
        if (out.src, out.dst) != (MACS["src"], MACS["dst"]):
            failures.append("encap: Ethernet addresses changed")
        try:
            plain = sas[which].decrypt(IP(bytes(out[IP])))  # verifies the ICV first
        except Exception as e:  # noqa: BLE001 (scapy raises IPSecIntegrityError and others)
            failures.append(f"encap: scapy cannot verify/decrypt a {len(inner)}-byte packet: {e!r}")
            continue
        if bytes(plain) != bytes(inner):
            failures.append(f"encap: scapy's decryption of a {len(inner)}-byte packet differs from the input")
    if min(seqs.values()) == 0:
        failures.append(f"encap: an SA carried no packet ({seqs})")
    print(f"encap: packets per SA {seqs} (A, B: AES-CTR; C: AES-CBC)")
    return len(sent)


def inbound(work, sa_path, failures):
    rng = random.Random(2)
    sizes = [28, 29, 30, 31, 100, 512, 1400, 1500] + [rng.randint(28, 1500) for _ in range(40)]
    sas = {w: scapy_sa(w) for w in "ABC"}
    seqs = {"A": 0, "B": 0, "C": 0}
    originals, frames = [], []
    for i, size in enumerate(sizes):
        which = "ABC"[i % 3]
        inner = inner_packet(f"10.0.{i}.1", size, rng)
        seqs[which] += 1
        esp = sas[which].encrypt(inner, seq_num=seqs[which])
        originals.append(inner)
        frames.append(Ether(**MACS) / esp)
    tampered = bytearray(bytes(frames[3]))
    tampered[-20] ^= 0x01
    replayed = frames[0]
    frames_all = frames + [Ether(bytes(tampered)), replayed]
    st, drops, got = run_pipeline(work, "decap", [f'IPsecESPDecap("{sa_path}")'], frames_all)
    if not st["balanced"]:
        failures.append("decap: buffer balance does not hold")
    if drops != {"bad-icv": 1, "replayed": 1}:
        failures.append(f"decap: drops {drops}, expected one bad-icv and one replayed")
    if len(got) != len(originals):
        failures.append(f"decap: {len(got)} packets out, expected {len(originals)}")
        return 0
    for inner, out in zip(originals, got):
        if out.type != 0x0800 or (out.src, out.dst) != (MACS["src"], MACS["dst"]):
            failures.append("decap: Ethernet header wrong")
        if bytes(out.payload) != bytes(inner):
            failures.append(f"decap: a {len(inner)}-byte packet encrypted by scapy came back different")
    return len(originals)


def main():
    work = tempfile.mkdtemp(prefix="fulcrum-ipsec-")
    sa_path = os.path.join(work, "sa.txt")
    with open(sa_path, "w") as f:
        f.write(SA_FILE)
    failures = []
    n_out = outbound(work, sa_path, failures)
    n_in = inbound(work, sa_path, failures)
    shutil.rmtree(work)
    if failures:
        print("\n".join(failures[:40]), file=sys.stderr)
        return 1
    print(f"ok: {n_out} packets encapsulated by fulcrum and decrypted by scapy; "
          f"{n_in} packets encrypted by scapy and decapsulated by fulcrum; tamper and replay dropped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
