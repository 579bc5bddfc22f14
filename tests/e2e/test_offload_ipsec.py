#!/usr/bin/env python3
"""End to end: the IPsec gateway with its crypto offloaded (configs/ipsec-gateway-offload.click).

IPv4/UDP packets of many sizes (28..1500 bytes) to SAs of every mode the device kernels take,
mixed in every batch (AES-128-CTR and AES-256-CTR with HMAC-SHA1-96, AES-128-GCM and
AES-256-GCM, each with and without ESN; two of them with an IPv6 tunnel, whose ESP region starts
after a 40-byte outer header), and one packet without an SA, go through
IPsecESPEncap -> balancer -> IPsecAESOffload -> IPsecAuthHMACSHA1Offload over net_pcap:
CPU-only, device-only fused (one kernel), device-only chained without fusion (FUSE false),
device-only in separate tasks (CHAIN false), a 50 % split with flow affinity, and device-only
with a device failure injected after 3 tasks. Every device-only ESP packet is verified and
decrypted by scapy's independent ESP code (HMAC-SHA1-96 and AES-CTR, RFC 3686; AES-GCM, RFC
4106; ESN with the high half 0) and must give back the inner packet; every GCM packet is also
opened by the Python `cryptography` package's AESGCM (nonce salt | IV, AAD SPI | sequence, or
SPI | 0 | sequence with ESN); every device-only capture must be byte for byte the CPU-only one;
the split and failure runs must hold the same packets; the counters must show the device did
the work (every ESP packet on it, in each device-only run).

scapy's AES-CTR and AES-GCM need the Python `cryptography` package.
"""
import os
import random
import struct
import sys

try:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
except ImportError:
    print("the Python package 'cryptography' is missing (scapy's AES-CTR needs it): "
          "pip install cryptography, or apt-get install python3-cryptography", file=sys.stderr)
    sys.exit(1)

from scapy.all import IP, UDP, Ether, IPv6, Raw  # noqa: E402
from scapy.layers.ipsec import ESP, SecurityAssociation  # noqa: E402

import fulcrum_e2e as e2e  # noqa: E402

CONFIG = "ipsec-gateway-offload.click"
OLD_ARGS = "sa-demo.txt, AGGREGATE 32"
TUNNEL_SRC, TUNNEL6_SRC = "192.0.2.1", "2001:db8:ffff::1"
AUTH = bytes.fromhex("0102030405060708090a0b0c0d0e0f1011121314")


class Sa:
    """One outbound SA: its line in the SA file and scapy's SecurityAssociation for it."""

    def __init__(self, spi, cipher, key, salt, esn, selector, first_octets, tunnel6=False):
        self.spi, self.cipher, self.key, self.salt, self.esn = spi, cipher, key, salt, esn
        self.selector, self.first_octets, self.tunnel6 = selector, first_octets, tunnel6

    def ends(self):
        if self.tunnel6:
            return TUNNEL6_SRC, f"2001:db8:eeee::{self.spi >> 12}"
        return TUNNEL_SRC, f"198.51.100.{self.spi >> 12}"

    def line(self):
        auth = "-" if self.cipher == "aes-gcm" else AUTH.hex()
        src, dst = self.ends()
        return (f"{self.spi} {src} {dst} {(self.key + self.salt).hex()} "
                f"{auth} {self.selector} DIR out CIPHER {self.cipher} ESN {'on' if self.esn else 'off'}")

    def scapy(self):
        gcm = self.cipher == "aes-gcm"
        auth = dict(auth_algo="NULL") if gcm else dict(auth_algo="HMAC-SHA1-96", auth_key=AUTH)
        src, dst = self.ends()
        return SecurityAssociation(ESP, spi=self.spi, crypt_algo="AES-GCM" if gcm else "AES-CTR",
                                   crypt_key=self.key + self.salt, esn_en=self.esn, esn=0,
                                   tunnel_header=(IPv6 if self.tunnel6 else IP)(src=src, dst=dst),
                                   **auth)


rng0 = random.Random(5)
SAS = [
    Sa(0x1000, "aes-ctr", bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c"), bytes.fromhex("deadbeef"),
       False, "10.0.0.0/8", "10"),
    Sa(0x2000, "aes-ctr", rng0.randbytes(32), rng0.randbytes(4), False, "172.16.0.0/12", "172.16"),
    Sa(0x3000, "aes-ctr", rng0.randbytes(16), rng0.randbytes(4), True, "192.168.0.0/16", "192.168", tunnel6=True),
    Sa(0x4000, "aes-ctr", rng0.randbytes(32), rng0.randbytes(4), True, "100.64.0.0/10", "100.64"),
    Sa(0x5000, "aes-gcm", rng0.randbytes(16), rng0.randbytes(4), False, "11.0.0.0/8", "11"),
    Sa(0x6000, "aes-gcm", rng0.randbytes(32), rng0.randbytes(4), False, "12.0.0.0/8", "12"),
    Sa(0x7000, "aes-gcm", rng0.randbytes(16), rng0.randbytes(4), True, "13.0.0.0/8", "13", tunnel6=True),
    Sa(0x8000, "aes-gcm", rng0.randbytes(32), rng0.randbytes(4), True, "14.0.0.0/8", "14"),
]
BY_SPI = {sa.spi: sa for sa in SAS}
SA_FILE = "# e2e SAs: every mode the device kernels take\n" + "\n".join(sa.line() for sa in SAS) + "\n"
MACS = dict(src="02:aa:00:00:00:01", dst="02:bb:00:00:00:01")


def scapy_sas():
    return {sa.spi: sa.scapy() for sa in SAS}


def outer(frame):
    """The outer IP packet of an ESP frame, as scapy's SecurityAssociation.decrypt takes it."""
    return IPv6(bytes(frame[IPv6])) if frame.type == 0x86DD else IP(bytes(frame[IP]))


def traffic(rng):
    """(inner packets in order, frames): sizes 28..1500, short and odd ones included, to the SAs
    in turn."""
    sizes = [28, 29, 30, 31, 32, 33, 46, 47, 63, 64, 65, 100, 127, 128, 255, 511, 1000, 1499, 1500]
    sizes += [rng.randint(28, 90) for _ in range(400)] + [rng.randint(28, 1500) for _ in range(1000)]
    inners, frames = [], []
    for i, size in enumerate(sizes):
        prefix = SAS[i % len(SAS)].first_octets
        host = [str(i % 256), str(1 + i % 250), "7"][: 4 - len(prefix.split("."))]
        dst = ".".join([prefix] + host)
        payload = bytes(rng.getrandbits(8) for _ in range(size - 28))
        inner = IP(bytes(IP(src="10.9.9.9", dst=dst, ttl=64) /
                         UDP(sport=1024 + i % 50, dport=4500) / Raw(payload)))
        inners.append(inner)
        frames.append(Ether(**MACS) / inner)
    frames.insert(5, Ether(**MACS) / IP(src="10.9.9.9", dst="8.8.8.8") / UDP() / Raw(b"x" * 30))
    return inners, frames


def aesgcm_opens(frame, inner):
    """The `cryptography` package's AES-GCM verifies the tag and decrypts the payload of one GCM
    frame to the inner packet followed by the ESP trailer."""
    raw = bytes(frame)
    esp = raw[14 + (40 if raw[12:14] == b"\x86\xdd" else 20):]  # Ethernet, outer IPv6 or IPv4
    spi = struct.unpack("!I", esp[:4])[0]
    sa = BY_SPI[spi]
    aad = esp[:4] + (b"\0" * 4 if sa.esn else b"") + esp[4:8]
    try:
        plain = AESGCM(sa.key).decrypt(sa.salt + esp[8:16], esp[16:], aad)
    except Exception:  # noqa: BLE001 (InvalidTag)
        return False
    pad = plain[-2]
    return plain[: len(plain) - 2 - pad] == bytes(inner) and plain[-1] == 4


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
        if BY_SPI[out[ESP].spi].cipher == "aes-gcm" and not aesgcm_opens(out, inner):
            failures.append(f"{name}: AESGCM cannot open a {len(inner)}-byte GCM packet")
    first_gcm = next(i for i, out in enumerate(got) if BY_SPI[out[ESP].spi].cipher == "aes-gcm")
    tampered = bytearray(bytes(got[first_gcm]))
    tampered[-1] ^= 0x01
    if aesgcm_opens(tampered, inners[first_gcm]):
        failures.append(f"{name}: AESGCM accepted a tampered tag (the check is not verifying)")


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
    check_decrypts("CPU-only", inners, cpu[2][0], failures)
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
        print(f"ok: {len(inners)} ESP packets of {len(SAS)} SAs decrypted by scapy (GCM ones by "
              "AESGCM too); fused, unfused, unchained, split and failure runs identical to CPU-only")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
