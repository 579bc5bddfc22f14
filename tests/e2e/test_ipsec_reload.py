#!/usr/bin/env python3
"""IPsec SAs replaced while the gateway encapsulates on two workers (POST /api/reload).

The new SA file keeps SA A as it was (same SPI and keys, another selector line order) and
rekeys SA B (same SPI, new keys). Checked on the capture, with scapy's independent ESP code on
samples: no packet lost; SA A's sequence numbers never repeat and go on past the reload (a
number used twice with the same keys would reuse a CTR keystream); SA B's packets before the
reload verify and decrypt with the old keys, after it with the new ones, numbered from 1 again;
every sampled packet decrypts to an inner packet with the generator's addresses."""
import ipaddress
import json
import os
import struct
import sys
import time

from scapy.all import IP
from scapy.layers.ipsec import ESP, SecurityAssociation

sys.path.insert(0, os.path.dirname(__file__))
from fulcrum_e2e import Workdir  # noqa: E402
from live_run import LiveRun, check_lossless_reloads, pcap_frames, received  # noqa: E402
from waits import GUARD_S  # noqa: E402

SPI_A, SPI_B = 0x1000, 0x2000
KEY_A, NONCE_A = bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c"), bytes.fromhex("deadbeef")
AUTH_A = bytes.fromhex("0102030405060708090a0b0c0d0e0f1011121314")
KEY_B1, NONCE_B1 = bytes.fromhex("000102030405060708090a0b0c0d0e0f"), bytes.fromhex("cafe0001")
KEY_B2, NONCE_B2 = bytes.fromhex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"), bytes.fromhex("cafe0002")
AUTH_B1 = bytes.fromhex("a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3")
AUTH_B2 = bytes.fromhex("c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3")
SRC, DST_A, DST_B = "192.0.2.1", "198.51.100.1", "198.51.100.2"
RESERVE = 1 << 20  # SaTable::kSeqReserve
POLL_S = 0.05
MAX_POLLS = int(GUARD_S / POLL_S)  # a bound on every wait (a hang), not a timing assertion
RUN_BOUND_S = 900  # --seconds: the run ends by SIGINT long before
AFTER_RELOAD = 20000  # packets to see after the reload before stopping
SAMPLE = 25


def sa_line(spi, dst, key, nonce, auth, selector):
    return f"{spi} {SRC} {dst} {(key + nonce).hex()} {auth.hex()} {selector} DIR out\n"


def scapy_sa(spi, dst, key, nonce, auth):
    return SecurityAssociation(ESP, spi=spi, crypt_algo="AES-CTR", crypt_key=key + nonce,
                               auth_algo="HMAC-SHA1-96", auth_key=auth,
                               tunnel_header=IP(src=SRC, dst=dst))


def read_esp(path):
    """(spi, seq, ip_bytes) of every frame of an Ethernet pcap, in file order."""
    return [(*struct.unpack_from(">II", frame, 34), frame[14:]) for frame in pcap_frames(path)]


def main():
    work = Workdir("ipsec-reload")
    failures = []
    sa_a = sa_line(SPI_A, DST_A, KEY_A, NONCE_A, AUTH_A, "10.0.0.0/8")
    first = work.file("sa-1.txt", sa_a + sa_line(SPI_B, DST_B, KEY_B1, NONCE_B1, AUTH_B1, "172.16.0.0/12"))
    second = work.file("sa-2.txt", sa_line(SPI_B, DST_B, KEY_B2, NONCE_B2, AUTH_B2, "172.16.0.0/12") + sa_a)
    routes = work.file("dst.txt", "10.0.0.0/8 1\n172.16.0.0/12 1\n")
    config = work.file("gw.click", f"FromInput -> enc :: IPsecESPEncap({first}) -> IPsecAES({first}) "
                       f"-> IPsecAuthHMACSHA1({first}) -> L2Forward(PORT 1) -> ToOutput;\n")
    out = work.file("out.pcap")
    stats = work.file("stats.json")
    run = LiveRun(config, [f"gen:size=128,flows=512,dst=routes,routes={routes},rate=100000",
                           f"net_pcap0,tx_pcap={out}"],
                  seconds=RUN_BOUND_S, extra=["--workers", "2", "--stats-json", stats])
    try:
        for _ in range(MAX_POLLS):
            if received(run) > AFTER_RELOAD:
                break
            time.sleep(POLL_S)
        status, body = run.reload({"element": "enc", "file": second})
        if status != 200:
            failures.append(f"reload: HTTP {status}: {body}")
        at_reload = received(run)
        for _ in range(MAX_POLLS):
            if received(run) > at_reload + AFTER_RELOAD:
                break
            time.sleep(POLL_S)
    finally:
        code = run.stop()
    if code != 0:
        return work.finish(failures + [f"exit status {code}: {run.stderr()}"])
    st = json.load(open(stats))
    check_lossless_reloads(st, 1, failures)

    esp = read_esp(out)
    if len(esp) != st["ports"][1]["tx_packets"]:
        failures.append(f"capture holds {len(esp)} packets, {st['ports'][1]['tx_packets']} sent")
    a = [(seq, ip) for spi, seq, ip in esp if spi == SPI_A]
    b = [(seq, ip) for spi, seq, ip in esp if spi == SPI_B]
    a_seqs = [s for s, _ in a]
    if len(set(a_seqs)) != len(a_seqs):
        failures.append(f"SA A: {len(a_seqs) - len(set(a_seqs))} sequence numbers used twice")
    resumed = [s for s in a_seqs if s > RESERVE]
    if not resumed or len(resumed) == len(a_seqs):
        failures.append(f"SA A: {len(resumed)} of {len(a_seqs)} packets past the reserve "
                        "(expected some before the reload and some after)")
    sas = {"A": scapy_sa(SPI_A, DST_A, KEY_A, NONCE_A, AUTH_A),
           "B1": scapy_sa(SPI_B, DST_B, KEY_B1, NONCE_B1, AUTH_B1),
           "B2": scapy_sa(SPI_B, DST_B, KEY_B2, NONCE_B2, AUTH_B2)}

    def decrypts(name, ip):
        try:
            inner = sas[name].decrypt(IP(ip))
        except Exception:  # noqa: BLE001 (bad ICV or padding)
            return False
        if IP not in inner:
            return False
        dst = ipaddress.ip_address(inner[IP].dst)
        return any(dst in ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12"))

    samples = a[:SAMPLE] + a[-SAMPLE:] + [x for x in a if x[0] > RESERVE][:SAMPLE]
    bad = sum(not decrypts("A", ip) for _, ip in samples)
    if bad:
        failures.append(f"SA A: {bad} of {len(samples)} sampled packets do not verify with A's keys")
    # SA B: each packet verifies with exactly one of its two key sets; the new keys start at 1.
    keyed = {"B1": [], "B2": []}
    for seq, ip in b[:SAMPLE] + b[len(b) // 2 - SAMPLE:len(b) // 2 + SAMPLE] + b[-SAMPLE:]:
        ok = [k for k in ("B1", "B2") if decrypts(k, ip)]
        if len(ok) != 1:
            failures.append(f"SA B seq {seq}: verifies with {ok or 'neither key'}")
            break
        keyed[ok[0]].append(seq)
    if not keyed["B1"] or not keyed["B2"]:
        failures.append(f"SA B: samples under the old keys {len(keyed['B1'])}, new {len(keyed['B2'])}")
    # Where SA B's numbers fall back: the first packet under the new keys, numbered from 1 again
    # (two workers share the SA, so a few numbers around it may come out of order, and a worker
    # descheduled between encrypting and transmitting can put an early old-key packet late in the
    # capture: a fall-back counts only where the packet verifies with the new keys).
    top, restart = 0, None
    for i, (seq, ip) in enumerate(b):
        if top > SAMPLE * 4 and seq < top // 2 and decrypts("B2", ip):
            restart = i
            break
        top = max(top, seq)
    if restart is None:
        failures.append("SA B: its sequence numbers never start over")
    else:
        seq, ip = b[restart]
        if seq > SAMPLE * 4 or not decrypts("B2", ip) or decrypts("B1", ip):
            failures.append(f"SA B after the reload: seq {seq}, expected a small one under the new keys")
    print(f"{len(esp)} ESP packets: SA A {len(a_seqs)} ({len(resumed)} after the reload), "
          f"SA B {len(b)}; samples verified with scapy: A {len(samples)}, "
          f"B old keys {len(keyed['B1'])}, new keys {len(keyed['B2'])}")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
