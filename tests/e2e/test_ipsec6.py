#!/usr/bin/env python3
"""End to end: IPsec ESP tunnels over IPv6 (4in6, 6in4, 6in6, and 4in4 beside them), checked
against scapy's independent ESP code (scapy.layers.ipsec.SecurityAssociation with an IPv4 or
IPv6 tunnel_header).

* Outbound, for AES-CTR + HMAC-SHA1-96, AES-CBC + HMAC-SHA1-96 and AES-GCM, each tunnel
  combination: IPsecESPEncap -> IPsecAES -> IPsecAuthHMACSHA1 over net_pcap; every packet's
  outer header (EtherType, family, next header / protocol 50, hop limit, traffic class copied
  from the inner packet, tunnel addresses) checked, and scapy verifies and decrypts it back to
  the input; tshark decodes the capture without malformed-packet or checksum warnings.
* Inbound: scapy encrypts for every SA; IPsecESPDecap gives back the inner packets with the
  inner EtherType; an outer destination-options header before ESP is walked; an outer IPv6
  fragment is dropped as `fragment`; RFC 6040 over IPv6 (outer CE marks an ECT(0) IPv6 inner
  packet CE, and a Not-ECT one is dropped as ecn-not-ect).
* IPsecPolicy with IPv6 selectors in front of the gateway: PROTECT decrypted by scapy, BYPASS
  unchanged, the rest discarded; IPv4 rules do not take IPv6 packets.
* IPsecESPEncap's MTU key: packets at the inner MTU leave encrypted (at most MTU bytes of outer
  IP); IPv4 DF packets over it become ICMP "fragmentation needed" carrying the inner MTU
  (ICMPError(MTU anno), the MTU computed here independently); IPv6 packets over it become
  ICMPv6 Packet Too Big (ICMP6Error(MTU anno), checksum checked by scapy, tshark clean); IPv4
  without DF is dropped as needs-fragmentation; IPv6 with output 1 open as mtu-exceeded.
* A bad SA line (tunnel endpoints of two families) stops the run with FILE:LINE.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(__file__))
import fulcrum_e2e as e2e  # noqa: E402
from test_ipsec_scapy import MACS  # noqa: E402

from scapy.all import (ICMP, IP, UDP, Ether, ICMPv6ND_NS, ICMPv6PacketTooBig, IPv6,  # noqa: E402
                       IPv6ExtHdrDestOpt, IPv6ExtHdrFragment, IPv6ExtHdrHopByHop, Raw,
                       fragment6, rdpcap)
from scapy.layers.ipsec import ESP, SecurityAssociation  # noqa: E402

T4 = ("192.0.2.1", "198.51.100.9")
T6 = ("2001:db8:ffff::1", "2001:db8:eeee::2")
HMAC_KEY = bytes.fromhex("0102030405060708090a0b0c0d0e0f1011121314")
ROUTER, ROUTER6 = "192.0.2.254", "2001:db8:ffff::fe"
# cipher: scapy's name, key material bytes (key + nonce/salt), IV, ICV, alignment
CIPHERS = {"aes-ctr": ("AES-CTR", 20, 8, 12, 4), "aes-cbc": ("AES-CBC", 16, 16, 12, 16),
           "aes-gcm": ("AES-GCM", 20, 8, 16, 4)}


class Sa:
    def __init__(self, index, cipher, outer6, inner6, rng):
        self.spi, self.cipher, self.outer6, self.inner6 = 0x1000 + index, cipher, outer6, inner6
        self.material = rng.randbytes(CIPHERS[cipher][1])
        self.net = index + 1
        self.selector = f"2001:db8:{self.net:x}::/48" if inner6 else f"10.{self.net}.0.0/16"
        self.name = f"{cipher} {'6' if inner6 else '4'}in{'6' if outer6 else '4'}"

    def lines(self):
        src, dst = T6 if self.outer6 else T4
        auth = "-" if self.cipher == "aes-gcm" else HMAC_KEY.hex()
        head = f"{self.spi} {src} {dst} {self.material.hex()} {auth}"
        return (f"{head} {self.selector} DIR out CIPHER {self.cipher}\n"
                f"{head} {'::/0' if self.net % 2 else '0.0.0.0/0'} DIR in CIPHER {self.cipher}\n")

    def scapy(self, tc=0, transport=False):
        """scapy's SA; transport=True: without tunnel header, so that decrypt() leaves the
        outer header with ESP's next header in it."""
        algo = CIPHERS[self.cipher][0]
        auth = dict(auth_algo="NULL") if self.cipher == "aes-gcm" else dict(
            auth_algo="HMAC-SHA1-96", auth_key=HMAC_KEY)
        src, dst = T6 if self.outer6 else T4
        tunnel = IPv6(src=src, dst=dst, tc=tc) if self.outer6 else IP(src=src, dst=dst, tos=tc)
        return SecurityAssociation(ESP, spi=self.spi, crypt_algo=algo, crypt_key=self.material,
                                   tunnel_header=None if transport else tunnel, **auth)

    def dst(self, k):
        return f"2001:db8:{self.net:x}::{k + 1:x}" if self.inner6 else f"10.{self.net}.{k % 250}.1"

    def inner(self, k, size, rng, tc=None):
        """An inner UDP packet of exactly `size` bytes to this SA's selector."""
        tc = rng.choice([0, 0x28, 0xB8 | 1, 0xB8 | 2]) if tc is None else tc
        hdr = 48 if self.inner6 else 28
        payload = Raw(rng.randbytes(size - hdr))
        udp = UDP(sport=rng.randint(1024, 65535), dport=4500 + k % 9)
        if self.inner6:
            return IPv6(bytes(IPv6(src="2001:db8:99::9", dst=self.dst(k), tc=tc,
                                   hlim=rng.randint(1, 255)) / udp / payload))
        return IP(bytes(IP(src="10.99.9.9", dst=self.dst(k), tos=tc, ttl=rng.randint(1, 255)) /
                        udp / payload))

    def inner_mtu(self, mtu):
        """The longest inner packet whose encapsulation fits `mtu` (RFC 4303's layout)."""
        _, _, iv, icv, align = CIPHERS[self.cipher]
        fixed = (40 if self.outer6 else 20) + 8 + iv + icv
        return (mtu - fixed) // align * align - 2


def outer_ip(frame):
    return frame[IPv6] if frame.type == 0x86DD else frame[IP]


def run(work, name, config_text, frames):
    config = work.file(f"{name}.click", config_text)
    rx, tx = work.pcap(f"{name}-in.pcap", frames), work.file(f"{name}-out.pcap")
    res, stats = e2e.run_fulcrum(work, config, [e2e.pcap_port(0, rx, tx)])
    if stats is None:
        raise RuntimeError(f"fulcrum run {name} failed ({res.returncode}): {res.stderr}")
    got = rdpcap(tx) if os.path.getsize(tx) > 0 else []
    return stats, e2e.drops_by_reason(stats), got, tx


def gateway(sa_path, encap_args=""):
    q = f'"{sa_path}"'
    return (f"FromInput -> IPsecESPEncap({q}{encap_args}) -> IPsecAES({q}) -> "
            f"IPsecAuthHMACSHA1({q}) -> ToOutput;\n")


def decrypts_to(sa, out, inner):
    """'' when scapy verifies and decrypts `out` under `sa` to exactly `inner`, with ESP's next
    header 4 or 41 after the inner family; what is wrong otherwise."""
    packet = outer_ip(out).__class__(bytes(outer_ip(out)))
    try:
        plain = sa.scapy().decrypt(packet.copy())
        transport = sa.scapy(transport=True).decrypt(packet.copy())
    except Exception as e:  # noqa: BLE001 (scapy raises IPSecIntegrityError and others)
        return f"scapy cannot verify/decrypt: {e!r}"
    next_header = transport.nh if sa.outer6 else transport.proto
    if next_header != (41 if sa.inner6 else 4):
        return f"ESP next header {next_header}"
    return "" if bytes(plain) == bytes(inner) else "decrypted to other bytes"


def outbound(work, sas, sa_path, failures):
    rng = random.Random(3)
    sent = []
    for sa in sas:
        for k, size in enumerate([48, 49, 50, 51, 64, 255, 256, 1000, 1400, 1486]):
            sent.append((sa, sa.inner(k, size, rng)))
    stats, drops, got, tx = run(work, "encap", gateway(sa_path),
                                [Ether(**MACS) / p for _, p in sent])
    if not stats["balanced"] or drops:
        failures.append(f"encap: balanced {stats['balanced']}, drops {drops}")
    if len(got) != len(sent):
        failures.append(f"encap: {len(got)} packets out of {len(sent)}")
        return
    seqs = {}
    for (sa, inner), out in zip(sent, got):
        seqs[sa.spi] = seqs.get(sa.spi, 0) + 1
        tc = inner.tc if sa.inner6 else inner.tos
        src, dst = T6 if sa.outer6 else T4
        o = outer_ip(out)
        if sa.outer6:
            fields = (out.type, o.nh, o.hlim, o.tc, o.fl, o.src, o.dst, o.plen)
            want = (0x86DD, 50, 64, tc, 0, src, dst, len(out) - 14 - 40)
        else:
            fields = (out.type, o.proto, o.ttl, o.tos, o.src, o.dst, o.len)
            want = (0x0800, 50, 64, tc, src, dst, len(out) - 14)
        if fields != want:
            failures.append(f"encap {sa.name}: outer {fields}, expected {want}")
        if (out[ESP].spi, out[ESP].seq) != (sa.spi, seqs[sa.spi]):
            failures.append(f"encap {sa.name}: SPI {out[ESP].spi:#x} seq {out[ESP].seq}")
        if err := decrypts_to(sa, out, inner):
            failures.append(f"encap {sa.name} {len(inner)} B: {err}")
    if problems := e2e.tshark_problems(tx):
        failures.append(f"encap: {problems}")
    print(f"encap: {len(got)} packets over {len(sas)} SAs verified by scapy and tshark")


def inbound(work, sas, sa_path, failures):
    rng = random.Random(4)
    frames, want, expect_drops = [], [], {}
    for sa in sas:
        for seq in range(1, 6):
            inner = sa.inner(seq, rng.randint(48, 1400), rng)
            frames.append(Ether(**MACS) / sa.scapy().encrypt(inner, seq_num=seq))
            want.append(inner)
    six = [sa for sa in sas if sa.outer6 and sa.inner6]
    # A destination options header before ESP is walked.
    for n, sa in enumerate(six):
        inner = sa.inner(50 + n, 300, rng)
        enc = sa.scapy().encrypt(inner, seq_num=50 + n)
        frames.append(Ether(**MACS) / IPv6(src=enc.src, dst=enc.dst) / IPv6ExtHdrDestOpt(nh=50) /
                      Raw(bytes(enc[ESP])))
        want.append(inner)
    # An outer IPv6 fragment: named (IPReassembler goes in front), not a bad ICV.
    enc = six[0].scapy().encrypt(six[0].inner(60, 1400, rng), seq_num=60)
    whole = IPv6(src=enc.src, dst=enc.dst) / IPv6ExtHdrFragment(nh=50) / Raw(bytes(enc[ESP]))
    for frag in fragment6(whole, 800):
        frames.append(Ether(**MACS) / frag)
        expect_drops["fragment"] = expect_drops.get("fragment", 0) + 1
    # RFC 6040 with IPv6 on both sides: outer CE over ECT(0) -> CE; over Not-ECT -> dropped.
    sa = six[0]
    ect0 = sa.inner(70, 200, rng, tc=0xB8 | 2)
    marked = ect0.copy()
    marked.tc = 0xB8 | 3
    frames.append(Ether(**MACS) / sa.scapy(tc=3).encrypt(ect0, seq_num=70))
    want.append(IPv6(bytes(marked)))
    frames.append(Ether(**MACS) / sa.scapy(tc=3).encrypt(sa.inner(71, 200, rng, tc=0xB8),
                                                         seq_num=71))
    expect_drops["ecn-not-ect"] = 1
    q = f'"{sa_path}"'
    stats, drops, got, _ = run(work, "decap", f"FromInput -> IPsecESPDecap({q}) -> ToOutput;\n",
                               frames)
    if not stats["balanced"] or drops != expect_drops:
        failures.append(f"decap: balanced {stats['balanced']}, drops {drops}, "
                        f"expected {expect_drops}")
    if len(got) != len(want):
        failures.append(f"decap: {len(got)} packets out, expected {len(want)}")
        return
    for inner, out in zip(want, got):
        etype = 0x86DD if inner.version == 6 else 0x0800
        if out.type != etype or bytes(out.payload) != bytes(inner):
            failures.append(f"decap: {inner.dst}: EtherType {out.type:#x}, bytes differ")
    print(f"decap: {len(got)} packets back, drops {drops}")


def policy(work, sas, sa_path, failures):
    """IPsecPolicy with IPv6 selectors in front of the gateway."""
    by = {(sa.cipher, sa.outer6, sa.inner6): sa for sa in sas}
    s66, s44 = by[("aes-gcm", True, True)], by[("aes-ctr", False, False)]
    net6 = s66.selector.split("/")[0]
    spd = work.file("spd.txt", f"""BYPASS  PROTO icmp6 TYPE 135-136
PROTECT SRC 2001:db8:99::/48 DST {net6}/48 PROTO udp DPORT 4500-4599
DISCARD DST {net6}/48
PROTECT DST {s44.selector}
BYPASS  PROTO udp DPORT 53
DEFAULT DISCARD
""")
    rng = random.Random(5)
    prot6 = [s66.inner(k, 200, rng) for k in range(3)]
    prot4 = [s44.inner(k, 200, rng) for k in range(3)]
    # Behind a hop-by-hop header: the policy reads the UDP ports after it.
    hbh = IPv6(bytes(IPv6(src="2001:db8:99::9", dst=s66.dst(7)) / IPv6ExtHdrHopByHop() /
                     UDP(sport=1234, dport=4501) / Raw(b"h" * 64)))
    prot6.append(hbh)
    bypass = [IPv6(bytes(IPv6(src="2001:db8:5::1", dst="2001:db8:6::1") / UDP(dport=53) /
                         Raw(b"q" * 30))),
              IP(bytes(IP(src="10.99.0.1", dst="8.8.8.8") / UDP(dport=53) / Raw(b"q" * 30))),
              IPv6(bytes(IPv6(src="fe80::1", dst="ff02::1:ff00:1") /
                         ICMPv6ND_NS(tgt="2001:db8::1")))]
    discard = [IPv6(bytes(IPv6(src="2001:db8:99::9", dst=s66.dst(1)) / UDP(dport=80) /
                          Raw(b"d" * 20))),
               # the IPv4 rule's addresses written as IPv4-mapped IPv6: not the same family
               IPv6(bytes(IPv6(src="2001:db8:99::9", dst="::ffff:" + s44.dst(1)) /
                          UDP(dport=80) / Raw(b"d" * 20)))]
    frames = [Ether(**MACS) / p for p in prot6 + prot4 + bypass + discard]
    rng.shuffle(frames)
    q = f'"{sa_path}"'
    config = (f'pol :: IPsecPolicy("{spd}");\nFromInput -> pol;\n'
              f"pol[0] -> IPsecESPEncap({q}) -> IPsecAES({q}) -> IPsecAuthHMACSHA1({q}) "
              f"-> ToOutput;\npol[1] -> ToOutput;\n")
    stats, drops, got, _ = run(work, "policy", config, frames)
    if drops != {"discard": len(discard)}:
        failures.append(f"policy: drops {drops}, expected {len(discard)} discard")
    esp = [g for g in got if ESP in g]
    clear = sorted(bytes(g.payload) for g in got if ESP not in g)
    if clear != sorted(bytes(p) for p in bypass):
        failures.append("policy: the BYPASS packets did not leave unchanged")
    decrypted = []
    for g in esp:
        sa = s66 if g.type == 0x86DD else s44
        try:
            decrypted.append(bytes(sa.scapy().decrypt(outer_ip(g).__class__(bytes(outer_ip(g))))))
        except Exception as e:  # noqa: BLE001
            failures.append(f"policy: scapy cannot decrypt a PROTECT packet: {e!r}")
    if sorted(decrypted) != sorted(bytes(p) for p in prot6 + prot4):
        failures.append(f"policy: {len(decrypted)} PROTECT packets decrypted, "
                        f"expected the {len(prot6) + len(prot4)} sent")
    print(f"policy: {len(esp)} protected, {len(clear)} bypassed, drops {drops}")


def mtu(work, sas, failures):
    """IPsecESPEncap(MTU 1280): output 1 to ICMPError / ICMP6Error(MTU anno), and left open."""
    by = {(sa.cipher, sa.outer6, sa.inner6): sa for sa in sas}
    s46, s66 = by[("aes-ctr", True, False)], by[("aes-cbc", True, True)]
    sa_path = work.file("sa-mtu.txt", s46.lines() + s66.lines())
    limit, rng = 1280, random.Random(6)
    m46, m66 = s46.inner_mtu(limit), s66.inner_mtu(limit)

    def with_df(p):
        p = p.copy()
        p.flags = "DF"
        del p.chksum
        return IP(bytes(p))

    fits = with_df(s46.inner(1, m46, rng))
    over_df = with_df(s46.inner(2, m46 + 1, rng))
    over = s46.inner(3, m46 + 1, rng)
    at, above = s66.inner(1, m66, rng), s66.inner(2, m66 + 1, rng)
    # docs/ipsec.md's configuration: output 1 split by family between the two ICMP elements.
    q = f'"{sa_path}"'
    config = (f"enc :: IPsecESPEncap({q}, MTU {limit});\n"
              f"too_big :: Classifier(12/0800, 12/86dd);\n"
              f"FromInput -> enc -> IPsecAES({q}) -> IPsecAuthHMACSHA1({q}) -> ToOutput;\n"
              f"enc[1] -> too_big;\n"
              f"too_big[0] -> ICMPError({ROUTER}, 3, 4, MTU anno) -> ToOutput;\n"
              f"too_big[1] -> ICMP6Error({ROUTER6}, 2, 0, MTU anno) -> ToOutput;\n")
    stats, drops, got, tx = run(work, "mtu", config, [Ether(**MACS) / p for p in
                                                      (fits, over_df, over, at, above)])
    if drops != {"needs-fragmentation": 1} or len(got) != 4:
        failures.append(f"mtu: drops {drops}, {len(got)} packets out (expected 4)")
        return
    esp4 = [g for g in got if ESP in g and g[ESP].spi == s46.spi]
    icmp = [g for g in got if ICMP in g]
    if len(esp4) != 1 or len(outer_ip(esp4[0])) > limit or decrypts_to(s46, esp4[0], fits):
        failures.append(f"mtu: the packet at the inner MTU {m46} did not leave encrypted within "
                        f"{limit} bytes")
    if len(icmp) != 1:
        failures.append("mtu: no ICMP error for the DF packet over the MTU")
    else:
        ic = icmp[0]
        raw = bytes(ic[ICMP])
        next_hop_mtu = int.from_bytes(raw[6:8], "big")
        if (ic[ICMP].type, ic[ICMP].code, next_hop_mtu, ic[IP].dst) != (3, 4, m46, fits.src):
            failures.append(f"mtu: ICMP {ic[ICMP].type}/{ic[ICMP].code} MTU {next_hop_mtu} to "
                            f"{ic[IP].dst}, expected 3/4 MTU {m46} to {fits.src}")
    # IPv6: Packet Too Big with the inner MTU, its checksum checked by scapy.
    ptb = [g for g in got if ICMPv6PacketTooBig in g]
    if len(ptb) != 1:
        failures.append("mtu6: no Packet Too Big for the IPv6 packet over the MTU")
    else:
        p = ptb[0][IPv6]
        sent_sum = p[ICMPv6PacketTooBig].cksum
        del p[ICMPv6PacketTooBig].cksum
        fields = (p.src, p.dst, p.nh, p[ICMPv6PacketTooBig].mtu, p.plen,
                  IPv6(bytes(p))[ICMPv6PacketTooBig].cksum)
        want = (ROUTER6, at.src, 58, m66, 8 + len(above), sent_sum)
        if fields != want:
            failures.append(f"mtu6: Packet Too Big {fields}, expected {want}")
        if bytes(ptb[0][ICMPv6PacketTooBig].payload) != bytes(above):
            failures.append("mtu6: Packet Too Big does not quote the packet")
    esp6 = [g for g in got if ESP in g and g[ESP].spi == s66.spi]
    if len(esp6) != 1 or len(outer_ip(esp6[0])) > limit or decrypts_to(s66, esp6[0], at):
        failures.append(f"mtu6: the packet at the inner MTU {m66} did not fit {limit} bytes")
    if problems := e2e.tshark_problems(tx):
        failures.append(f"mtu: {problems}")
    stats, drops, got, _ = run(work, "mtu6-open", gateway(sa_path, f", MTU {limit}"),
                               [Ether(**MACS) / at, Ether(**MACS) / above])
    if drops != {"mtu-exceeded": 1} or len(got) != 1:
        failures.append(f"mtu6-open: drops {drops}, {len(got)} packets out (expected 1)")
    print(f"mtu: inner MTU {m46} (4in6 CTR), {m66} (6in6 CBC) for MTU {limit}")


def bad_sa_file(work, failures):
    keys = f"{bytes(20).hex()} {HMAC_KEY.hex()}"
    sa_path = work.file("bad-sa.txt", f"4096 {T6[0]} {T6[1]} {keys} 2001:db8::/32\n"
                                      f"4097 {T4[0]} {T6[1]} {keys} 10.0.0.0/8\n")
    config = work.file("bad.click", gateway(sa_path))
    res, stats = e2e.run_fulcrum(work, config, [e2e.pcap_port(0, work.pcap("none.pcap", []),
                                                                work.file("none-out.pcap"))])
    want = (f"{sa_path}:2: tunnel source '{T4[0]}' and destination '{T6[1]}' are not the same "
            f"address family")
    if stats is not None or want not in res.stderr:
        failures.append(f"bad SA file: exit {res.returncode}, stderr {res.stderr!r}")


def main():
    if not e2e.require_tshark():
        return 1
    rng = random.Random(7)
    sas = [Sa(i * 4 + j, cipher, outer6, inner6, rng)
           for i, cipher in enumerate(CIPHERS)
           for j, (outer6, inner6) in enumerate([(False, False), (True, False), (False, True),
                                                 (True, True)])]
    work = e2e.Workdir("ipsec6")
    sa_path = work.file("sa.txt", "".join(sa.lines() for sa in sas))
    failures = []
    outbound(work, sas, sa_path, failures)
    inbound(work, sas, sa_path, failures)
    policy(work, sas, work.file("sa-policy.txt", "".join(sa.lines() for sa in sas)), failures)
    mtu(work, sas, failures)
    bad_sa_file(work, failures)
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
