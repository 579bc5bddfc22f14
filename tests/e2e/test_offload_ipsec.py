#!/usr/bin/env python3
"""End to end: the IPsec gateway with its crypto offloaded (configs/ipsec-gateway-offload.click).

IPv4/UDP packets of many sizes (three AES-CTR SAs, one of them with an IPv6 tunnel: its ESP
region starts after a 40-byte outer header; and one packet without an SA) go through
IPsecESPEncap -> balancer -> IPsecAESOffload -> IPsecAuthHMACSHA1Offload over net_pcap:
CPU-only, device-only fused (one kernel), device-only chained without fusion (FUSE false),
device-only in separate tasks (CHAIN false), a 50 % split with flow affinity, and device-only
with a device failure injected after 3 tasks. Every device-only ESP packet is verified
(HMAC-SHA1-96) and decrypted (AES-CTR, RFC 3686) by scapy's independent ESP code and must give
back the inner packet; every device-only capture must be byte for byte the CPU-only one; the
split and failure runs must hold the same packets; the counters must show the device did the work.

scapy's AES-CTR needs the Python `cryptography` package.
"""
import os
import random
import sys

try:
    import cryptography  # noqa: F401
except ImportError:
    print("the Python package 'cryptography' is missing (scapy's AES-CTR needs it): "
          "pip install cryptography, or apt-get install python3-cryptography", file=sys.stderr)
    sys.exit(1)

from scapy.all import IP, UDP, Ether, IPv6, Raw  # noqa: E402
from scapy.layers.ipsec import ESP, SecurityAssociation  # noqa: E402

import fulcrum_e2e as e2e  # noqa: E402

CONFIG = "ipsec-gateway-offload.click"
OLD_ARGS = "sa-demo.txt, AGGREGATE 32"
SPI_A, SPI_B = 0x1000, 0x2000
KEY_A, NONCE_A = bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c"), bytes.fromhex("deadbeef")
AUTH_A = bytes.fromhex("0102030405060708090a0b0c0d0e0f1011121314")
KEY_B, NONCE_B = bytes.fromhex("000102030405060708090a0b0c0d0e0f"), bytes.fromhex("cafe0001")
AUTH_B = bytes.fromhex("a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3")
TUNNEL_SRC, TUNNEL_A, TUNNEL_B = "192.0.2.1", "198.51.100.1", "198.51.100.2"
SPI_C, KEY_C, NONCE_C = 0x3000, bytes.fromhex("7e24067817fae0d743d6ce1f32539163"), bytes.fromhex("006cb6db")
TUNNEL6_SRC, TUNNEL6_C = "2001:db8:ffff::1", "2001:db8:eeee::3"

SA_FILE = f"""# e2e SAs (AES-128-CTR)
{SPI_A} {TUNNEL_SRC} {TUNNEL_A} {(KEY_A + NONCE_A).hex()} {AUTH_A.hex()} 10.0.0.0/8 DIR out
{SPI_B} {TUNNEL_SRC} {TUNNEL_B} {(KEY_B + NONCE_B).hex()} {AUTH_B.hex()} 172.16.0.0/12 DIR out
{SPI_C} {TUNNEL6_SRC} {TUNNEL6_C} {(KEY_C + NONCE_C).hex()} {AUTH_A.hex()} 192.168.0.0/16 DIR out
"""
MACS = dict(src="02:aa:00:00:00:01", dst="02:bb:00:00:00:01")


def scapy_sas():
    return {SPI_A: SecurityAssociation(ESP, spi=SPI_A, crypt_algo="AES-CTR", crypt_key=KEY_A + NONCE_A,
                                       auth_algo="HMAC-SHA1-96", auth_key=AUTH_A,
                                       tunnel_header=IP(src=TUNNEL_SRC, dst=TUNNEL_A)),
            SPI_B: SecurityAssociation(ESP, spi=SPI_B, crypt_algo="AES-CTR", crypt_key=KEY_B + NONCE_B,
                                       auth_algo="HMAC-SHA1-96", auth_key=AUTH_B,
                                       tunnel_header=IP(src=TUNNEL_SRC, dst=TUNNEL_B)),
            SPI_C: SecurityAssociation(ESP, spi=SPI_C, crypt_algo="AES-CTR", crypt_key=KEY_C + NONCE_C,
                                       auth_algo="HMAC-SHA1-96", auth_key=AUTH_A,
                                       tunnel_header=IPv6(src=TUNNEL6_SRC, dst=TUNNEL6_C))}


def outer(frame):
    """The outer IP packet of an ESP frame, as scapy's SecurityAssociation.decrypt takes it."""
    return IPv6(bytes(frame[IPv6])) if frame.type == 0x86DD else IP(bytes(frame[IP]))


def traffic(rng):
    """(inner packets in order, frames): sizes 28..1500, short and odd ones included."""
    sizes = [28, 29, 30, 31, 32, 33, 46, 47, 63, 64, 65, 100, 127, 128, 255, 511, 1000, 1499, 1500]
    sizes += [rng.randint(28, 90) for _ in range(400)] + [rng.randint(28, 1500) for _ in range(1000)]
    inners, frames = [], []
    for i, size in enumerate(sizes):
        dst = (f"192.168.{i % 256}.{1 + i % 250}" if i % 5 == 4 else
               f"10.{i % 256}.1.{1 + i % 250}" if i % 3 else f"172.16.{i % 256}.{1 + i % 200}")
        payload = bytes(rng.getrandbits(8) for _ in range(size - 28))
        inner = IP(bytes(IP(src="10.9.9.9", dst=dst, ttl=64) /
                         UDP(sport=1024 + i % 50, dport=4500) / Raw(payload)))
        inners.append(inner)
        frames.append(Ether(**MACS) / inner)
    frames.insert(5, Ether(**MACS) / IP(src="10.9.9.9", dst="8.8.8.8") / UDP() / Raw(b"x" * 30))
    return inners, frames


def check_decrypts(name, inners, got, failures):
    """scapy verifies every ICV and decrypts every packet back to its inner packet."""
    if len(got) != len(inners):
        failures.append(f"{name}: {len(got)} packets out, expected {len(inners)}")
        return
    sas = scapy_sas()
    flipped = bytearray(bytes(outer(got[0])))
    flipped[-1] ^= 0x01
    try:
        sas[got[0][ESP].spi].decrypt(outer(got[0]).__class__(bytes(flipped)))
        failures.append(f"{name}: scapy accepted a tampered packet (the check is not verifying ICVs)")
    except Exception:  # noqa: BLE001
        pass
    for inner, out in zip(inners, got):
        try:
            plain = sas[out[ESP].spi].decrypt(outer(out))
        except Exception as e:  # noqa: BLE001 (scapy raises IPSecIntegrityError and others)
            failures.append(f"{name}: scapy cannot verify/decrypt a {len(inner)}-byte packet: {e!r}")
            continue
        if bytes(plain) != bytes(inner):
            failures.append(f"{name}: scapy's decryption of a {len(inner)}-byte packet differs from the input")


def main():
    rng = random.Random(7)
    work = e2e.Workdir("offload-ipsec")
    sa_path = work.file("sa.txt", SA_FILE)
    inners, frames = traffic(rng)
    work.pcap("in.pcap", frames)
    work.pcap("empty.pcap", [])
    failures = []
    new_args = f"{sa_path}, AGGREGATE 2, TASK_TIMEOUT_MS 10000"
    # The runs read a copy of the configuration whose IPsecESPEncap uses our SA file too.
    with open(os.path.join(e2e.SOURCE_DIR, "configs", CONFIG)) as f:
        text = f.read().replace("IPsecESPEncap(sa-demo.txt)", f"IPsecESPEncap({sa_path})")
    os.makedirs(work.file("configs"))
    work.file(os.path.join("configs", CONFIG), text)
    e2e.SOURCE_DIR = work.path

    cpu, device, split, failure = e2e.offload_modes(work, CONFIG, OLD_ARGS, new_args, "IPsecAESOffload")
    if cpu[0] is None:
        return 1
    if e2e.drops_by_reason(cpu[0]) != {"no-sa": 1}:
        failures.append(f"CPU-only: drops {e2e.drops_by_reason(cpu[0])}, expected one no-sa")
    check_decrypts("device-only", inners, device[2][0], failures)
    if sum(1 for g in device[2][0] if g.type == 0x86DD and ESP in g) == 0:
        failures.append("device-only: no packet of the IPv6 tunnel")
    failures += e2e.check_offload_modes(cpu, device, split, failure,
                                        lambda g: (g[ESP].spi, g[ESP].seq), len(inners),
                                        bool(e2e.offload_devices()))
    # The same device-only run with the two kernels back to back, and in separate tasks.
    for name, aes_extra in (("unfused", ", FUSE false"), ("unchained", ", CHAIN false")):
        stats, counters, outs = e2e.run_offload_mode(
            work, name, CONFIG, [(f"IPsecAESOffload({OLD_ARGS}", f"IPsecAESOffload({new_args}{aes_extra}"),
                                 (OLD_ARGS, new_args)], "IPsecAESOffload")
        if stats is None:
            failures.append(f"{name}: the run failed")
            continue
        if [bytes(g) for g in outs[0]] != [bytes(g) for g in cpu[2][0]] or outs[1]:
            failures.append(f"{name}: device-only output differs from CPU-only")
        if e2e.offload_devices() and counters.get("device_packets", 0) != len(inners):
            failures.append(f"{name}: {counters.get('device_packets')} packets on the device")
    if not failures:
        print(f"ok: {len(inners)} ESP packets decrypted by scapy; fused, unfused, unchained, "
              "split and failure runs identical to CPU-only")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
