#!/usr/bin/env python3
"""End to end: a security policy database (IPsecPolicy, RFC 4301 4.4.1) in front of the IPsec
gateway, checked with scapy.

Packets built by scapy go through IPsecPolicy -> [PROTECT] IPsecESPEncap -> IPsecAES ->
IPsecAuthHMACSHA1 and [BYPASS] straight out, over net_pcap. PROTECT packets must come out as ESP
that scapy's independent ESP code verifies and decrypts to the input, under the SA the rule names
(SPI, read by IPsecESPEncap(POLICY_SPI true)) or else the destination's; BYPASS packets must come
out byte for byte unchanged; DISCARD packets (a DISCARD rule, and the default) must be counted
as drops with reason "discard", and nothing else dropped. The rules test order (IKE bypassed
ahead of the PROTECT rule for the same addresses), ports, protocol and ICMP type.

Then the same traffic with SA A under LIFE_PACKETS 2,4 (RFC 4301 4.4.2.1): its first 4 packets
come out as ESP, the rest are dropped as sa-expired (SA B's are not); the soft and hard events show in
--stats-json (IPsecESPEncap's soft-expired and hard-expired counters) and on stderr.

scapy's AES-CTR needs the Python `cryptography` package.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(__file__))
import fulcrum_e2e as e2e  # noqa: E402

from scapy.all import ICMP, IP, TCP, UDP, Ether, Raw, rdpcap  # noqa: E402
from scapy.layers.ipsec import ESP, SecurityAssociation  # noqa: E402

SPI_A, SPI_B = 0x1000, 0x2000
KEY_A, NONCE_A = bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c"), bytes.fromhex("deadbeef")
AUTH_A = bytes.fromhex("0102030405060708090a0b0c0d0e0f1011121314")
KEY_B, NONCE_B = bytes.fromhex("000102030405060708090a0b0c0d0e0f"), bytes.fromhex("cafe0001")
AUTH_B = bytes.fromhex("a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3")
TUNNEL_SRC, TUNNEL_A, TUNNEL_B = "192.0.2.1", "198.51.100.1", "198.51.100.2"
MACS = dict(src="02:aa:00:00:00:01", dst="02:bb:00:00:00:01")
SAS = {SPI_A: (KEY_A + NONCE_A, AUTH_A, TUNNEL_A), SPI_B: (KEY_B + NONCE_B, AUTH_B, TUNNEL_B)}


def sa_file(life_a=""):
    """SA A selects the protected traffic by destination; SA B (its selector matching none of
    the traffic) is reached only through the policy's SPI."""
    return (f"{SPI_A} {TUNNEL_SRC} {TUNNEL_A} {(KEY_A + NONCE_A).hex()} {AUTH_A.hex()} 10.2.0.0/16 DIR out {life_a}\n"
            f"{SPI_B} {TUNNEL_SRC} {TUNNEL_B} {(KEY_B + NONCE_B).hex()} {AUTH_B.hex()} 10.99.0.0/16 DIR out\n")


SPD_FILE = f"""# e2e policy
BYPASS  SRC 10.1.0.0/16 PROTO udp DPORT 500
DISCARD PROTO tcp DPORT 23
PROTECT SPI {SPI_B} SRC 10.1.0.0/16 DST 10.2.0.0/16 PROTO tcp DPORT 22
PROTECT SRC 10.1.0.0/16 DST 10.2.0.0/16
BYPASS  PROTO icmp TYPE 8
BYPASS  SRC 10.1.0.0/16 DST 192.168.0.0/16 PROTO tcp SPORT 1024-65535 DPORT 80-443
"""


def payload(rng, n):
    return Raw(bytes(rng.getrandbits(8) for _ in range(n)))


def traffic(rng):
    """(expected outcome, scapy IP packet): 'protect A', 'protect B', 'bypass' or 'discard'."""
    out = []
    for i in range(40):
        src, dst = f"10.1.{i}.{1 + i % 200}", f"10.2.{i % 7}.{1 + i}"
        kind = i % 8
        if kind == 0:    # IKE between the sites: bypassed, though the PROTECT rule matches too
            out.append(("bypass", IP(src=src, dst=dst) / UDP(sport=500, dport=500) / payload(rng, 40)))
        elif kind == 1:  # telnet between the sites: discarded ahead of the PROTECT rule
            out.append(("discard", IP(src=src, dst=dst) / TCP(sport=40000 + i, dport=23)))
        elif kind == 2:  # ICMP echo request from outside: bypassed
            out.append(("bypass", IP(src="203.0.113.5", dst=dst) / ICMP(type=8) / payload(rng, 16)))
        elif kind == 3:  # ICMP echo reply from outside: no rule, the default discards it
            out.append(("discard", IP(src="203.0.113.5", dst=dst) / ICMP(type=0)))
        elif kind == 4:  # web to the third network: bypassed by ports
            out.append(("bypass", IP(src=src, dst=f"192.168.0.{1 + i}") /
                        TCP(sport=1024 + i, dport=80 + i) / payload(rng, 10)))
        elif kind == 5:  # the same with a low source port: no rule matches
            out.append(("discard", IP(src=src, dst=f"192.168.0.{1 + i}") / TCP(sport=99, dport=80)))
        else:            # between the sites: protected, ssh under SA B (by SPI), the rest under A
            l4 = UDP(sport=1000 + i, dport=4500 + i) if kind == 6 else TCP(sport=2000 + i, dport=22)
            out.append(("protect A" if kind == 6 else "protect B",
                        IP(src=src, dst=dst, tos=0x28) / l4 / payload(rng, rng.randint(0, 1400))))
    return [(want, IP(bytes(p))) for want, p in out]


def run(work, name, sa_text, sent):
    """Runs the policy and gateway over `sent`; returns (process, stats or None, output frames)."""
    sa = work.file(f"{name}-sa.txt", sa_text)
    spd = work.file(f"{name}-spd.txt", SPD_FILE)
    config = work.file(f"{name}.click", f"""spd :: IPsecPolicy("{spd}");
FromInput -> spd;
spd[0] -> IPsecESPEncap("{sa}", POLICY_SPI true) -> IPsecAES("{sa}") -> IPsecAuthHMACSHA1("{sa}")
       -> ToOutput;
spd[1] -> ToOutput;
""")
    frames = [Ether(**MACS) / p for _, p in sent]
    inp, out = work.pcap(f"{name}-in.pcap", frames), work.file(f"{name}-out.pcap")
    res, stats = e2e.run_fulcrum(work, config, [e2e.pcap_port(0, inp, out)])
    return res, stats, rdpcap(out) if stats is not None and os.path.getsize(out) > 0 else []


def check_esp(spi, esp, inner_packets, failures):
    """One SA's ESP frames (in sequence order) against the inner packets scapy must decrypt them
    to."""
    key, auth, tunnel = SAS[spi]
    if len(esp) != len(inner_packets):
        failures.append(f"SA {spi:#x}: {len(esp)} ESP packets out, expected {len(inner_packets)}")
    sa_scapy = SecurityAssociation(ESP, spi=spi, crypt_algo="AES-CTR", crypt_key=key,
                                   auth_algo="HMAC-SHA1-96", auth_key=auth,
                                   tunnel_header=IP(src=TUNNEL_SRC, dst=tunnel))
    for k, (f, inner) in enumerate(zip(esp, inner_packets)):
        outer = f[IP]
        if (outer.src, outer.dst, outer[ESP].seq) != (TUNNEL_SRC, tunnel, k + 1):
            failures.append(f"SA {spi:#x}: outer {outer.src}->{outer.dst} seq {outer[ESP].seq}, "
                            f"expected {TUNNEL_SRC}->{tunnel} seq {k + 1}")
        try:
            plain = sa_scapy.decrypt(IP(bytes(outer)))  # verifies the ICV first
        except Exception as e:  # noqa: BLE001 (scapy raises IPSecIntegrityError and others)
            failures.append(f"SA {spi:#x}: scapy cannot verify/decrypt packet {k}: {e!r}")
            continue
        if bytes(plain) != bytes(inner):
            failures.append(f"SA {spi:#x}: packet {k} decrypts to something else than the input")


def split_output(got):
    """({SPI: its ESP frames in sequence order}, the other frames as bytes): the two paths merge
    at the output, so the order between them is not the input's."""
    esp = {SPI_A: [], SPI_B: []}
    clear = []
    for f in got:
        if IP in f and f[IP].proto == 50:
            esp.setdefault(f[ESP].spi, []).append(f)
        else:
            clear.append(bytes(f))
    for frames in esp.values():
        frames.sort(key=lambda f: f[ESP].seq)
    return esp, clear


def policy(work, sent, want, failures):
    res, stats, got = run(work, "policy", sa_file(), sent)
    if stats is None:
        failures.append(f"policy: fulcrum run failed ({res.returncode})")
        return
    if not stats["balanced"]:
        failures.append("policy: buffer balance does not hold")
    drops = e2e.drops_by_reason(stats)
    if drops != {"discard": len(want["discard"])}:
        failures.append(f"policy: drops {drops}, expected {{'discard': {len(want['discard'])}}}")
    esp, clear = split_output(got)
    if sorted(clear) != sorted(bytes(Ether(**MACS) / p) for p in want["bypass"]):
        failures.append(f"bypass: {len(clear)} clear packets out, not the {len(want['bypass'])} "
                        "bypassed ones unchanged")
    if set(esp) != {SPI_A, SPI_B}:
        failures.append(f"policy: ESP with SPIs {sorted(esp)}")
    check_esp(SPI_A, esp[SPI_A], want["protect A"], failures)
    check_esp(SPI_B, esp[SPI_B], want["protect B"], failures)
    if not failures:
        print(f"policy: {len(esp[SPI_A])} + {len(esp[SPI_B])} PROTECT packets decrypted by scapy "
              f"(SA by destination + SA named by SPI), {len(clear)} BYPASS packets unchanged, "
              f"{len(want['discard'])} DISCARD packets dropped as discard")


def lifetimes(work, sent, want, failures):
    soft, hard = 2, 4
    res, stats, got = run(work, "life", sa_file(f"LIFE_PACKETS {soft},{hard}"), sent)
    if stats is None:
        failures.append(f"lifetimes: fulcrum run failed ({res.returncode})")
        return
    expired = len(want["protect A"]) - hard
    drops = e2e.drops_by_reason(stats)
    if drops != {"discard": len(want["discard"]), "sa-expired": expired}:
        failures.append(f"lifetimes: drops {drops}, expected {len(want['discard'])} discard and "
                        f"{expired} sa-expired")
    counters = e2e.counters_of(stats, "IPsecESPEncap")
    if counters != {"soft-expired": 1, "hard-expired": 1}:
        failures.append(f"lifetimes: IPsecESPEncap counters {counters}, expected one soft and one hard")
    for line in (f"SA {SPI_A} (line 1) reached its soft lifetime", f"SA {SPI_A} (line 1) expired"):
        if line not in res.stderr:
            failures.append(f"lifetimes: stderr lacks '{line}': {res.stderr!r}")
    esp, _ = split_output(got)
    check_esp(SPI_A, esp[SPI_A], want["protect A"][:hard], failures)
    check_esp(SPI_B, esp[SPI_B], want["protect B"], failures)
    if not failures:
        print(f"lifetimes: SA A {len(esp[SPI_A])} packets under LIFE_PACKETS {soft},{hard}, "
              f"{expired} sa-expired, soft and hard events counted; SA B {len(esp[SPI_B])} packets")


def main():
    work = e2e.Workdir("ipsec-spd")
    sent = traffic(random.Random(4301))
    want = {k: [p for w, p in sent if w == k] for k in ("protect A", "protect B", "bypass", "discard")}
    failures = []
    policy(work, sent, want, failures)
    lifetimes(work, sent, want, failures)
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
