#!/usr/bin/env python3
"""End to end: IPReassembler against scapy's fragmentation, and in front of the IDS and ESP.

  * IPv4 datagrams cut by scapy's fragment() (2..8 fragments, shuffled, interleaved with other
    datagrams and with packets that are not fragments) come out byte-identical to the originals;
    IPv6 datagrams cut by fragment6() come out as the original without its fragment header; a
    datagram missing a fragment and one of 9 fragments (over DPDK's limit of 8) are dropped as
    `incomplete` when the input ends; every other fragment counts as `reassembled`, every
    datagram as a created packet, and the balance holds;
  * IDS: a rule whose content straddles a fragment boundary raises no alert on the fragments and
    one alert behind IPReassembler;
  * IPsec: an ESP packet fragmented on the way (scapy encrypts, then fragments) fails without
    reassembly (`fragment`) and decapsulates to the original behind IPReassembler.
"""
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(__file__))
import fulcrum_e2e as e2e  # noqa: E402

from scapy.all import (IP, UDP, Ether, IPv6, IPv6ExtHdrFragment, Raw, fragment,  # noqa: E402
                       fragment6, rdpcap)
from scapy.layers.ipsec import ESP, SecurityAssociation  # noqa: E402

MACS = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
SPLIT = b"EVIL-SPLIT-CONTENT-0123456789"


def frames_of(pkts):
    return [Ether(**MACS) / p for p in pkts]


def run(work, name, config, frames):
    conf = work.file(f"{name}.click", config)
    rx, tx = work.pcap(f"{name}-in.pcap", frames), work.file(f"{name}-out.pcap")
    res, stats = e2e.run_fulcrum(work, conf, [e2e.pcap_port(0, rx, tx)])
    if stats is None:
        raise RuntimeError(f"{name}: fulcrum run failed ({res.returncode})")
    return stats, e2e.drops_by_reason(stats), (rdpcap(tx) if os.path.getsize(tx) else [])


def reassembly(work, failures):
    rng = random.Random(5)
    originals, pieces, plain = [], [], []
    for i in range(40):
        size = rng.randint(600, 5000)
        if i % 4 == 3:
            size += 1000  # over every fragment size below: at least two fragments
            dgram = IPv6(src="2001:db8::1", dst=f"2001:db8::{i:x}") / IPv6ExtHdrFragment(id=i) / \
                UDP(sport=i, dport=53) / Raw(rng.randbytes(size))
            frags = fragment6(dgram, rng.choice([1000, 1280, 1500]))
            want = IPv6(bytes(IPv6(src=dgram.src, dst=dgram.dst) / dgram[UDP]))
        else:
            want = IP(bytes(IP(src="10.0.0.1", dst=f"10.1.{i}.1", id=1000 + i, ttl=9) /
                            UDP(sport=i, dport=53) / Raw(rng.randbytes(size))))
            pieces_wanted = rng.randint(2, 8)
            per = -(-(size + 8) // pieces_wanted)  # UDP header and payload, rounded up
            frags = fragment(want, fragsize=-(-per // 8) * 8)
        frags = list(frags)
        assert 2 <= len(frags) <= 8, len(frags)
        rng.shuffle(frags)
        originals.append(Ether(**MACS) / want)
        pieces.append(frags)
    # Interleave the datagrams' fragments with one another and with whole packets.
    stream = []
    while any(pieces):
        k = rng.randrange(len(pieces))
        if pieces[k]:
            stream.append(pieces[k].pop())
        if rng.random() < 0.3:
            p = IP(src="10.9.9.9", dst="10.8.8.8") / UDP() / Raw(rng.randbytes(rng.randint(1, 900)))
            plain.append(Ether(**MACS) / p)
            stream.append(p)
    missing = list(fragment(IP(dst="10.2.0.1", id=77) / UDP() / Raw(b"m" * 3000), fragsize=1000))
    too_many = list(fragment(IP(dst="10.2.0.2", id=78) / UDP() / Raw(b"t" * 4000), fragsize=440))
    assert len(too_many) > 8
    stream += missing[:-1] + too_many
    frames = [Ether(**MACS) / f for f in stream]
    stats, drops, got = run(work, "reasm", "FromInput -> IPReassembler -> ToOutput;\n", frames)
    n_frags = len(frames) - len(plain)
    want_drops = {"reassembled": n_frags - (len(missing) - 1) - len(too_many),
                  "incomplete": len(missing) - 1 + len(too_many)}
    if drops != want_drops:
        failures.append(f"reassembly: drops {drops}, expected {want_drops}")
    if not stats["balanced"] or stats["packets_created"] != len(originals):
        failures.append(f"reassembly: balanced {stats['balanced']}, created "
                        f"{stats['packets_created']}, expected {len(originals)}")
    want = sorted(bytes(f) for f in originals + plain)
    have = sorted(bytes(f) for f in got)
    if have != want:
        extra = [h for h in have if h not in want]
        failures.append(f"reassembly: {len(have)} frames out, {len(want)} expected; "
                        f"{len(extra)} not among the expected, e.g. {extra[:1]!r:.200}")
    order = [bytes(f) for f in got if bytes(f) in {bytes(p) for p in plain}]
    if order != [bytes(p) for p in plain]:
        failures.append("reassembly: packets that are not fragments changed order")
    print(f"reassembly: {len(originals)} datagrams from {n_frags} fragments, {drops}")


def ids(work, failures):
    rules = work.file("split.rules", f'alert udp any any -> any any (msg:"split"; '
                                     f'content:"{SPLIT.decode()}"; sid:9001;)\n')
    payload = b"a" * 1460 + SPLIT + b"z" * 500  # the content straddles the 1480-byte boundary
    frags = frames_of(fragment(IP(src="10.0.0.1", dst="10.0.0.2") / UDP(dport=9) / Raw(payload),
                               fragsize=1480))
    for name, head in (("ids-frags", "FromInput"), ("ids-reasm", "FromInput -> IPReassembler")):
        alerts = work.file(f"{name}.jsonl")
        config = (f'ids :: IDSMatch("{rules}", ALERTS "{alerts}");\n'
                  f"{head} -> ids -> ToOutput;\nids[1] -> Discard;\n")
        run(work, name, config, frags)
        sids = [json.loads(line)["sid"] for line in open(alerts) if line.strip()]
        want = [9001] if name == "ids-reasm" else []
        if sids != want:
            failures.append(f"ids {name}: alerts {sids}, expected {want}")


def esp(work, failures):
    key, auth = bytes(range(16)) + b"\x01\x02\x03\x04", bytes(range(20))
    sa_file = work.file("sa.txt", f"4096 192.0.2.1 198.51.100.1 {key.hex()} {auth.hex()} "
                                  f"0.0.0.0/0 DIR in\n")
    sa = SecurityAssociation(ESP, spi=4096, crypt_algo="AES-CTR", crypt_key=key,
                             auth_algo="HMAC-SHA1-96", auth_key=auth,
                             tunnel_header=IP(src="192.0.2.1", dst="198.51.100.1"))
    inner = IP(bytes(IP(src="10.0.0.1", dst="10.0.0.2") / UDP() / Raw(bytes(range(256)) * 5)))
    frags = frames_of(fragment(sa.encrypt(inner, seq_num=1), fragsize=800))
    for name, head, want in (("esp-frags", "FromInput", None),
                             ("esp-reasm", "FromInput -> IPReassembler", inner)):
        config = f'{head} -> IPsecESPDecap("{sa_file}") -> ToOutput;\n'
        _, drops, got = run(work, name, config, frags)
        if want is None:
            if drops != {"fragment": len(frags)} or got:
                failures.append(f"esp {name}: drops {drops}, {len(got)} out")
        elif len(got) != 1 or bytes(got[0].payload) != bytes(want):
            failures.append(f"esp {name}: {len(got)} out, drops {drops}")


def main():
    work = e2e.Workdir("ip-reassembly")
    failures = []
    reassembly(work, failures)
    ids(work, failures)
    esp(work, failures)
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
