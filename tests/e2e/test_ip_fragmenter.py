#!/usr/bin/env python3
"""End to end: IPFragmenter and ICMPError's "fragmentation needed", checked with scapy.

Packets of 28..4000 bytes, with and without DF, some with IP options (a copied one, LSRR, and
one that is not copied, Record Route), go through
  FromInput -> frag :: IPFragmenter(576) -> ToOutput; frag[1] -> ICMPError(.., 3, 4, MTU 576)
and
  * packets up to 576 bytes leave unchanged;
  * longer ones without DF leave as fragments of at most 576 bytes, offsets in 8-byte units,
    valid checksums, the first with every option and the others with the copied one only
    (RFC 791), and scapy's defragment() gives back the original datagram;
  * longer ones with DF come back as ICMP type 3 code 4 with next-hop MTU 576 (RFC 1191) to
    their source, quoting their header;
  * the balance holds: originals counted as `fragmented`, fragments as created packets;
  * IPReassembler behind IPFragmenter gives back every datagram byte for byte;
  * tshark finds nothing malformed in the output.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(__file__))
import fulcrum_e2e as e2e  # noqa: E402

from scapy.all import ICMP, IP, UDP, Ether, IPOption, Raw, defragment, rdpcap  # noqa: E402

MTU = 576
ROUTER = "192.0.2.254"
MACS = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
LSRR = IPOption(b"\x83\x07\x04\x0a\x00\x00\x09")  # copied flag set (131), 7 bytes
RR = IPOption(b"\x07\x07\x04\x00\x00\x00\x00")  # record route (7): not copied


def datagrams(rng):
    out = []
    for i in range(80):
        size = rng.choice([28, 100, 576, 577, 1000, 1500, 3000, 4000, rng.randint(28, 4000)])
        df = i % 5 == 4
        opts = [[], [LSRR], [RR], [RR, LSRR]][i % 4]
        hdr = IP(src=f"10.0.{i}.1", dst="10.9.0.1", id=500 + i, flags="DF" if df else 0,
                 options=opts, ttl=30)
        room = size - len(IP(bytes(hdr))) - 8
        pkt = hdr / UDP(sport=1000 + i, dport=7) / Raw(rng.randbytes(max(room, 0)))
        out.append(IP(bytes(pkt)))
    return out


def main():
    work = e2e.Workdir("ip-fragmenter")
    rng = random.Random(8)
    sent = datagrams(rng)
    frames = [Ether(**MACS) / p for p in sent]
    config = work.file("frag.click", f"frag :: IPFragmenter({MTU});\n"
                                     "FromInput -> frag -> ToOutput;\n"
                                     f"frag[1] -> ICMPError({ROUTER}, 3, 4, MTU {MTU}) -> ToOutput;\n")
    rx, tx = work.pcap("in.pcap", frames), work.file("out.pcap")
    res, stats = e2e.run_fulcrum(work, config, [e2e.pcap_port(0, rx, tx)])
    failures = []
    if stats is None:
        failures.append(f"fulcrum run failed ({res.returncode})")
        return work.finish(failures)
    got = [IP(bytes(f.payload)) for f in rdpcap(tx)]
    small = [p for p in sent if p.len <= MTU]
    cut = [p for p in sent if p.len > MTU and not p.flags.DF]
    df = [p for p in sent if p.len > MTU and p.flags.DF]
    icmps = [g for g in got if g.proto == 1]
    pieces = [g for g in got if g.proto != 1 and (g.flags.MF or g.frag > 0)]
    whole = [g for g in got if g.proto != 1 and not (g.flags.MF or g.frag > 0)]
    if [bytes(p) for p in whole] != [bytes(p) for p in small]:
        failures.append(f"{len(whole)} whole packets out, {len(small)} expected unchanged")
    for f in pieces:
        chk = f.chksum
        del f.chksum
        if f.len > MTU or (f.flags.MF and (f.len - f.ihl * 4) % 8) or IP(bytes(f)).chksum != chk:
            failures.append(f"fragment of id {f.id}: length {f.len}, offset {f.frag}, bad checksum "
                            f"or not a multiple of 8")
        f.chksum = chk
        want = [o for o in sent if o.id == f.id][0]
        want_opts = bytes(IP(options=want.options)).hex() if f.frag == 0 else bytes(
            IP(options=[o for o in want.options if o.copy_flag])).hex()
        if bytes(IP(options=f.options)).hex() != want_opts:
            failures.append(f"fragment of id {f.id} offset {f.frag}: options {f.options}")
    rebuilt = {p.id: p for p in defragment(pieces) if not (p.flags.MF or p.frag > 0)}
    for p in cut:
        back = rebuilt.get(p.id)
        if back is None or bytes(back.payload) != bytes(p.payload) or back.src != p.src:
            failures.append(f"datagram {p.id} ({p.len} B) not rebuilt from its fragments")
    if len(rebuilt) != len(cut):
        failures.append(f"{len(rebuilt)} datagrams rebuilt from fragments, {len(cut)} cut")
    if len(icmps) != len(df):
        failures.append(f"{len(icmps)} ICMP errors, {len(df)} DF packets too big")
    for err, p in zip(icmps, df):
        icmp = err[ICMP]
        if (err.src, err.dst, icmp.type, icmp.code, icmp.nexthopmtu) != (ROUTER, p.src, 3, 4, MTU):
            failures.append(f"ICMP {err.src}->{err.dst} {icmp.type}/{icmp.code} mtu "
                            f"{icmp.nexthopmtu} for {p.src}")
        if bytes(icmp.payload)[:20] != bytes(p)[:20]:
            failures.append(f"ICMP error for {p.src} does not quote its header")
    drops = e2e.drops_by_reason(stats)
    if drops != {"fragmented": len(cut)} or not stats["balanced"] or \
            stats["packets_created"] != len(pieces):
        failures.append(f"drops {drops}, balanced {stats['balanced']}, created "
                        f"{stats['packets_created']}, {len(pieces)} fragments out")
    if not e2e.require_tshark():
        failures.append("tshark is needed to check the output")
    elif problems := e2e.tshark_problems(tx):
        failures.append(f"tshark: {problems}")

    # IPReassembler behind IPFragmenter: every datagram comes back whole.
    config2 = work.file("round.click", f"FromInput -> IPFragmenter({MTU}) -> IPReassembler -> ToOutput;\n")
    no_df = [Ether(**MACS) / p for p in sent if not p.flags.DF]
    rx2, tx2 = work.pcap("in2.pcap", no_df), work.file("out2.pcap")
    res, stats2 = e2e.run_fulcrum(work, config2, [e2e.pcap_port(0, rx2, tx2)])
    back = sorted(bytes(f) for f in rdpcap(tx2)) if stats2 else []
    if back != sorted(bytes(f) for f in no_df):
        failures.append(f"fragment then reassemble: {len(back)} frames, not the {len(no_df)} sent")
    print(f"{len(small)} unchanged, {len(cut)} cut into {len(pieces)} fragments, "
          f"{len(df)} answered with ICMP fragmentation needed")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
