#!/usr/bin/env python3
"""End to end: the IPsec modes deployments use, checked against scapy's independent ESP code.

SAs: AES-128-GCM and AES-256-GCM (RFC 4106, 16-byte ICV), AES-256-CTR and AES-256-CBC with
HMAC-SHA1-96, extended sequence numbers (RFC 4303 §2.2.1: the high half in the ICV or the GCM
AAD), a 1024-packet anti-replay window.

Outbound: IPsecESPEncap -> IPsecAES -> IPsecAuthHMACSHA1 over net_pcap; scapy verifies and
decrypts every packet (with ESN where the SA has it) and must get the input back.
Inbound: scapy encrypts; IPsecESPDecap must give back the originals and
  * ESN: the sequence numbers run over 2^32 (scapy's high half goes 0 -> 1) and the window
    follows; a packet from before the wrap sent again is replayed, one signed with the wrong high
    half fails its ICV;
  * REPLAY 1024: 1000 behind the top is accepted, 1100 behind replayed; the default 64 rejects 80;
  * a fragmented ESP packet is dropped as `fragment` (reassembly is not built);
  * ECN (RFC 6040 §4.2): the outer ECN field combined into the inner header, checked against
    RFC 6040's table written out here, the inner checksum recomputed by scapy; outer CE over a
    Not-ECT packet dropped as ecn-not-ect.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(__file__))
import fulcrum_e2e as e2e  # noqa: E402
from test_ipsec_scapy import MACS, inner_packet  # noqa: E402

from scapy.all import IP, Ether, fragment, rdpcap  # noqa: E402
from scapy.layers.ipsec import ESP, SecurityAssociation  # noqa: E402

SRC = "192.0.2.1"
HMAC_KEY = bytes.fromhex("0102030405060708090a0b0c0d0e0f1011121314")


class Sa:
    def __init__(self, name, spi, cipher, key, salt, esn, selector, dst, replay=None):
        self.name, self.spi, self.cipher, self.key, self.salt = name, spi, cipher, key, salt
        self.esn, self.selector, self.dst, self.replay = esn, selector, dst, replay

    def lines(self):
        auth = "-" if self.cipher == "aes-gcm" else HMAC_KEY.hex()
        opts = f"CIPHER {self.cipher} ESN {'on' if self.esn else 'off'}"
        material = (self.key + self.salt).hex()
        out = f"{self.spi} {SRC} {self.dst} {material} {auth} {self.selector} DIR out {opts}"
        inb = f"{self.spi} {SRC} {self.dst} {material} {auth} 0.0.0.0/0 DIR in {opts}"
        if self.replay:
            inb += f" REPLAY {self.replay}"
        return out + "\n" + inb + "\n"

    def scapy(self, tos=0):
        algo = {"aes-gcm": "AES-GCM", "aes-ctr": "AES-CTR", "aes-cbc": "AES-CBC"}[self.cipher]
        auth = dict(auth_algo="NULL") if self.cipher == "aes-gcm" else dict(
            auth_algo="HMAC-SHA1-96", auth_key=HMAC_KEY)
        return SecurityAssociation(ESP, spi=self.spi, crypt_algo=algo,
                                   crypt_key=self.key + self.salt, esn_en=self.esn, esn=0,
                                   tunnel_header=IP(src=SRC, dst=self.dst, tos=tos), **auth)


rng0 = random.Random(7)
SAS = [
    Sa("gcm128", 0x4000, "aes-gcm", rng0.randbytes(16), rng0.randbytes(4), False, "10.0.0.0/8",
       "198.51.100.4"),
    Sa("gcm256-esn", 0x5000, "aes-gcm", rng0.randbytes(32), rng0.randbytes(4), True,
       "172.16.0.0/12", "198.51.100.5"),
    Sa("ctr256-esn", 0x6000, "aes-ctr", rng0.randbytes(32), rng0.randbytes(4), True,
       "192.168.0.0/16", "198.51.100.6"),
    Sa("cbc256", 0x7000, "aes-cbc", rng0.randbytes(32), b"", False, "100.64.0.0/10",
       "198.51.100.7", replay=1024),
    Sa("cbc128-esn", 0x8000, "aes-cbc", rng0.randbytes(16), b"", True, "198.18.0.0/15",
       "198.51.100.8"),
]
DSTS = {"gcm128": "10.1.{}.{}", "gcm256-esn": "172.16.{}.{}", "ctr256-esn": "192.168.{}.{}",
        "cbc256": "100.64.{}.{}", "cbc128-esn": "198.18.{}.{}"}

# RFC 6040 §4.2, Figure 4 (normal mode): the inner ECN field after decapsulation, by inner
# (rows) and outer (columns) field; None: drop. 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE.
RFC6040 = {0: {0: 0, 2: 0, 1: 0, 3: None},
           2: {0: 2, 2: 2, 1: 1, 3: 3},
           1: {0: 1, 2: 1, 1: 1, 3: 3},
           3: {0: 3, 2: 3, 1: 3, 3: 3}}


def run(work, name, element, sa_path, frames):
    config = work.file(f"{name}.click", "FromInput -> " + " -> ".join(
        f'{e}("{sa_path}")' for e in element) + " -> ToOutput;\n")
    rx, tx = work.pcap(f"{name}-in.pcap", frames), work.file(f"{name}-out.pcap")
    res, stats = e2e.run_fulcrum(work, config, [e2e.pcap_port(0, rx, tx)])
    if stats is None:
        raise RuntimeError(f"fulcrum run failed ({res.returncode})")
    got = rdpcap(tx) if os.path.getsize(tx) > 0 else []
    return stats, e2e.drops_by_reason(stats), got


def outbound(work, sa_path, failures):
    rng = random.Random(3)
    sent = []
    for i, size in enumerate([28, 29, 31, 64, 255, 256, 1400, 1500] * len(SAS)):
        sa = SAS[i % len(SAS)]
        dst = DSTS[sa.name].format(i % 256, 1 + i % 250)
        sent.append((sa, inner_packet(dst, size if i % 3 else rng.randint(28, 1500), rng)))
    stats, drops, got = run(work, "encap", ["IPsecESPEncap", "IPsecAES", "IPsecAuthHMACSHA1"],
                            sa_path, [Ether(**MACS) / p for _, p in sent])
    if not stats["balanced"] or drops:
        failures.append(f"encap: balanced {stats['balanced']}, drops {drops}")
    if len(got) != len(sent):
        failures.append(f"encap: {len(got)} packets out of {len(sent)}")
        return
    seqs = {}
    for (sa, inner), out in zip(sent, got):
        seqs[sa.name] = seqs.get(sa.name, 0) + 1
        esp = out[ESP]
        if (esp.spi, esp.seq, out[IP].dst) != (sa.spi, seqs[sa.name], sa.dst):
            failures.append(f"encap {sa.name}: SPI {esp.spi:#x} seq {esp.seq} to {out[IP].dst}")
        try:
            plain = sa.scapy().decrypt(IP(bytes(out[IP])))
        except Exception as e:  # noqa: BLE001 (scapy raises IPSecIntegrityError and others)
            failures.append(f"encap {sa.name}: scapy cannot verify/decrypt {len(inner)} B: {e!r}")
            continue
        if bytes(plain) != bytes(inner):
            failures.append(f"encap {sa.name}: {len(inner)} B decrypted differently")
    # The oracle is live: told there is no high half, scapy rejects an ESN SA's packets (the
    # high half is in their ICV); and it rejects a GCM packet with one bit flipped.
    for sa, out in ((sa, out) for (sa, _), out in zip(sent, got) if sa.esn):
        no_esn = Sa(sa.name, sa.spi, sa.cipher, sa.key, sa.salt, False, sa.selector, sa.dst)
        if _accepts(no_esn.scapy(), out):
            failures.append(f"encap {sa.name}: scapy verified it without ESN (ESN not in the ICV)")
    flipped = bytearray(bytes(got[0][IP]))
    flipped[-1] ^= 1
    if _accepts(SAS[0].scapy(), IP(bytes(flipped))):
        failures.append("encap: scapy accepted a tampered GCM packet")
    print(f"encap: packets per SA {seqs}")


def _accepts(scapy_sa, pkt):
    try:
        scapy_sa.decrypt(IP(bytes(pkt[IP])))
        return True
    except Exception:  # noqa: BLE001
        return False


def inbound(work, sa_path, failures):
    rng = random.Random(4)
    by = {s.name: s for s in SAS}
    frames, want, expect_drops = [], [], {}

    def send(sa, seq, esn=0, tos=0, inner=None, expect=True):
        inner = inner if inner is not None else inner_packet(f"10.2.{seq % 256}.1",
                                                             rng.randint(28, 1500), rng)
        f = Ether(**MACS) / sa.scapy(tos).encrypt(inner, seq_num=seq, esn_en=sa.esn, esn=esn)
        frames.append(f)
        want.append(inner if expect is True else expect)
        return f

    def drop(reason):
        want[-1] = None
        expect_drops[reason] = expect_drops.get(reason, 0) + 1

    for sa in SAS:
        for seq in range(1, 6):
            send(sa, seq)
    # ESN: over 2^32 and on; the window follows the high half.
    for name in ("gcm256-esn", "ctr256-esn", "cbc128-esn"):
        sa = by[name]
        for seq in range(0xFFFFFFF0, 0x100000000):
            send(sa, seq, esn=0)
        kept = frames[-3]
        for seq in range(1, 6):
            send(sa, seq, esn=1)
        frames.append(kept)  # 0xFFFFFFFD again, after the wrap: the window has it
        want.append(kept)
        drop("replayed")
        send(sa, 6, esn=0)  # signed with the old high half: the receiver infers 1
        drop("bad-icv")
    # REPLAY 1024 against the default 64.
    send(by["cbc256"], 2000)
    send(by["cbc256"], 1000)
    send(by["cbc256"], 900)
    drop("replayed")
    send(by["gcm128"], 200)
    send(by["gcm128"], 120)
    drop("replayed")
    # A fragmented ESP packet: named, not a bad ICV (reassembly is not built).
    big = send(by["cbc256"], 3000, inner=inner_packet("10.4.0.1", 1400, rng))
    frames.pop()
    want.pop()
    for frag in fragment(big[IP], fragsize=800):
        frames.append(Ether(**MACS) / frag)
        want.append(None)
        drop("fragment")
    # ECN: every inner x outer combination.
    seq = 300
    for inner_ecn in (0, 1, 2, 3):
        for outer_ecn in (0, 1, 2, 3):
            seq += 1
            inner = inner_packet(f"10.3.{inner_ecn}.{outer_ecn + 1}", 100, rng)
            inner.tos = 0x28 | inner_ecn
            del inner.chksum
            inner = IP(bytes(inner))
            after = RFC6040[inner_ecn][outer_ecn]
            if after is None:
                send(by["gcm128"], seq, tos=0x48 | outer_ecn, inner=inner)
                drop("ecn-not-ect")
                continue
            expected = inner.copy()
            expected.tos = 0x28 | after
            del expected.chksum
            send(by["gcm128"], seq, tos=0x48 | outer_ecn, inner=inner,
                 expect=IP(bytes(expected)))

    stats, drops, got = run(work, "decap", ["IPsecESPDecap"], sa_path, frames)
    kept = [w for w in want if w is not None]
    if not stats["balanced"]:
        failures.append("decap: buffer balance does not hold")
    if drops != expect_drops:
        failures.append(f"decap: drops {drops}, expected {expect_drops}")
    if len(got) != len(kept):
        failures.append(f"decap: {len(got)} packets out, expected {len(kept)}")
        return
    for inner, out in zip(kept, got):
        if out.type != 0x0800 or bytes(out.payload) != bytes(inner):
            failures.append(f"decap: {inner.dst} tos {inner.tos:#x}: got tos "
                            f"{IP(bytes(out.payload)).tos:#x}, bytes differ")
    print(f"decap: {len(got)} packets back, drops {drops}")


def main():
    work = e2e.Workdir("ipsec-modes")
    sa_path = work.file("sa.txt", "".join(sa.lines() for sa in SAS))
    failures = []
    outbound(work, sa_path, failures)
    inbound(work, sa_path, failures)
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
