#!/usr/bin/env python3
"""End to end: TCP stream reassembly in IDSMatch. A content split across segments alerts
exactly as the unsplit one.

Builds with scapy one capture of TCP connections (3-way handshake, the client's data, the
server's ACKs, FINs both ways) to port 4444 whose payloads hold rule contents: plain, nocase, hex,
a content pair with distance/within, offset/depth at the stream's start, content + pcre, a pcre
alone, two independent contents, a negated content, flow:established,to_server. Each message is
sent once unsplit, then, for every byte position k inside a matched region (a content, a pcre's
match, a chain), once cut at k into two segments in order and once with the two halves out of
order (the second half first). Runs `fulcrum run` (both engines) and checks:
  * the unsplit connections alert exactly the rules planted in their message, once each;
  * every split connection, in order and out of order, alerts the same (sid, count) multiset
    as its message's unsplit connection (the figure: N split connections, all equal);
  * with STREAM false (per packet), the split connections miss alerts (the test would notice a
    stream mode that did nothing);
  * the stream counters: the reassembled bytes are the payload bytes, one held segment per
    out-of-order connection, no gap, no eviction.
When `suricata` is installed it runs on the same capture and rules
(`suricata -r trace.pcap -S rules -k none`); its alerts per connection (sid multisets) are
compared with Fulcrum's; without it that comparison is skipped (printed).
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from scapy.all import IP, TCP, Ether, Raw, wrpcap  # noqa: E402

FULCRUM = os.environ.get("FULCRUM_BIN", "build/fulcrum")
TIMEOUT_S = 300
PORT = 4444
CLIENT, SERVER = "10.0.0.1", "10.0.0.2"

RULES = r"""# stream e2e rules
alert tcp any any -> any 4444 (msg:"plain"; content:"attack"; sid:1;)
alert tcp any any -> any 4444 (msg:"nocase"; content:"EVIL"; nocase; sid:2;)
alert tcp any any -> any 4444 (msg:"get passwd"; content:"GET"; depth:3; content:"/etc/passwd"; distance:1; within:11; sid:3;)
alert tcp any any -> any 4444 (msg:"content pcre"; content:"user="; pcre:"/user=[a-z]+\;/"; sid:4;)
alert tcp any any -> any 4444 (msg:"offset depth"; content:"HDR"; offset:4; depth:3; sid:5;)
alert tcp any any -> any 4444 (msg:"alpha omega"; content:"alpha"; content:"omega"; distance:0; within:20; sid:6;)
alert tcp any any -> any 4444 (msg:"pcre alone"; pcre:"/id=[0-9]{3}x/"; sid:7;)
alert tcp any any -> any 4444 (msg:"two contents"; content:"foo"; content:"bar"; sid:8;)
alert tcp any any -> any 4444 (msg:"hex"; content:"|de ad be ef|"; sid:9;)
alert tcp any any -> any 4444 (msg:"negated"; content:"clean"; content:!"dirty"; sid:10;)
alert tcp any any -> any 4444 (msg:"established"; flow:established,to_server; content:"token"; sid:11;)
"""

# (message, the sids it must raise, its matched regions as (start, end) byte ranges)
MESSAGES = [
    (b"GET /etc/passwd HTTP/1.0 attack\r\n", [1, 3], [(0, 15), (25, 31)]),
    (b"xxxxHDR user=root; EViL token.", [2, 4, 5, 11], [(4, 7), (8, 18), (19, 23), (24, 29)]),
    (b"alpha and omega; id=123x foo.bar!", [6, 7, 8], [(0, 15), (17, 24), (25, 32)]),
    (b"data \xde\xad\xbe\xef clean end", [9, 10], [(5, 9), (10, 15)]),
]


def connection(port, isn, pieces, t0):
    """A connection from client port `port`: handshake, the (offset, bytes) pieces in the order
    given, each ACKed by the server up to the contiguous data, then FINs both ways. Sequence
    numbers are taken modulo 2^32."""
    srv_isn = 777000 + port
    c = Ether() / IP(src=CLIENT, dst=SERVER)
    s = Ether() / IP(src=SERVER, dst=CLIENT)
    pkts = [c / TCP(sport=port, dport=PORT, flags="S", seq=isn),
            s / TCP(sport=PORT, dport=port, flags="SA", seq=srv_isn, ack=isn + 1),
            c / TCP(sport=port, dport=PORT, flags="A", seq=isn + 1, ack=srv_isn + 1)]
    total = sum(len(b) for _, b in pieces)
    have = set()
    for off, data in pieces:
        pkts.append(c / TCP(sport=port, dport=PORT, flags="PA", seq=isn + 1 + off,
                            ack=srv_isn + 1) / Raw(data))
        have |= set(range(off, off + len(data)))
        contiguous = 0
        while contiguous in have:
            contiguous += 1
        pkts.append(s / TCP(sport=PORT, dport=port, flags="A", seq=srv_isn + 1,
                            ack=isn + 1 + contiguous))
    fin = isn + 1 + total
    pkts += [c / TCP(sport=port, dport=PORT, flags="FA", seq=fin, ack=srv_isn + 1),
             s / TCP(sport=PORT, dport=port, flags="FA", seq=srv_isn + 1, ack=fin + 1),
             c / TCP(sport=port, dport=PORT, flags="A", seq=fin + 1, ack=srv_isn + 2)]
    for i, p in enumerate(pkts):
        p[TCP].seq &= 0xFFFFFFFF
        p[TCP].ack &= 0xFFFFFFFF
        p.time = t0 + i * 0.001
    return pkts


def build():
    """The capture and, per client port, (message index, variant)."""
    frames, flows = [], {}
    port = 10000
    for m, (msg, _, regions) in enumerate(MESSAGES):
        cuts = sorted({k for a, b in regions for k in range(a + 1, b)})
        variants = [("whole", [(0, msg)])]
        for k in cuts:
            variants.append((f"in-order@{k}", [(0, msg[:k]), (k, msg[k:])]))
            variants.append((f"reversed@{k}", [(k, msg[k:]), (0, msg[:k])]))
        for name, pieces in variants:
            # Sequence numbers near the wrap for a third of the connections.
            isn = (0xFFFFFFFF - len(msg) // 2) if port % 3 == 0 else 1000 * port
            frames += connection(port, isn, pieces, port * 0.01)
            flows[port] = (m, name)
            port += 1
    return frames, flows


def run(work, inp, engine, stream):
    click = os.path.join(work, f"ids-{engine}-{stream}.click")
    log = os.path.join(work, f"alerts-{engine}-{stream}.jsonl")
    with open(click, "w") as f:
        f.write(f'ids :: IDSMatch("{work}/stream.rules", ENGINE {engine}, ALERTS "{log}", '
                f"STREAM {stream});\nFromInput -> ids -> ToOutput;\nids[1] -> Discard;\n")
    empty = os.path.join(work, "empty.pcap")
    stats = os.path.join(work, f"stats-{engine}-{stream}.json")
    cmd = [FULCRUM, "run", click, "--quiet", "--stats-json", stats,
           "--port", f"net_pcap0,rx_pcap={inp},tx_pcap={work}/out0.pcap",
           "--port", f"net_pcap1,rx_pcap={empty},tx_pcap={work}/out1.pcap"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    if res.returncode != 0:
        raise RuntimeError(f"fulcrum exited {res.returncode}: {res.stdout} {res.stderr}")
    per_flow = collections.defaultdict(collections.Counter)
    with open(log) as f:
        for line in f:
            a = json.loads(line)
            fl = a["flow"]
            per_flow[fl["sport"] if fl["dport"] == PORT else fl["dport"]][a["sid"]] += 1
    counters = {}
    for e in json.load(open(stats)).get("elements", []):
        if e.get("class") == "IDSMatch":
            counters = e.get("counters", {})
    return per_flow, counters


def suricata(work, inp):
    """Suricata's alerts per client port (sid multisets), or None when it is not installed."""
    exe = shutil.which("suricata")
    if exe is None:
        return None
    out = os.path.join(work, "suricata")
    os.makedirs(out, exist_ok=True)
    res = subprocess.run([exe, "-r", inp, "-S", os.path.join(work, "stream.rules"), "-l", out,
                          "-k", "none"], capture_output=True, text=True, timeout=TIMEOUT_S)
    if res.returncode != 0:
        raise RuntimeError(f"suricata exited {res.returncode}: {res.stderr[-2000:]}")
    per_flow = collections.defaultdict(collections.Counter)
    with open(os.path.join(out, "eve.json")) as f:
        for line in f:
            e = json.loads(line)
            if e.get("event_type") != "alert":
                continue
            port = e["src_port"] if e["dest_port"] == PORT else e["dest_port"]
            per_flow[port][e["alert"]["signature_id"]] += 1
    return per_flow


def main():
    work = tempfile.mkdtemp(prefix="fulcrum-ids-stream-")
    with open(os.path.join(work, "stream.rules"), "w") as f:
        f.write(RULES)
    frames, flows = build()
    inp = os.path.join(work, "trace.pcap")
    wrpcap(inp, frames)
    wrpcap(os.path.join(work, "empty.pcap"), [])
    failures, missed_by = [], {}
    unsplit = {m: port for port, (m, name) in flows.items() if name == "whole"}
    splits = [p for p, (_, name) in flows.items() if name != "whole"]
    payload_bytes = sum(len(MESSAGES[m][0]) for m, _ in flows.values())
    reversed_flows = sum(1 for _, name in flows.values() if name.startswith("reversed"))
    for engine in ("hyperscan", "ac"):
        got, counters = run(work, inp, engine, "true")
        for m, port in unsplit.items():
            want = collections.Counter(MESSAGES[m][1])
            if got[port] != want:
                failures.append(f"{engine}: message {m} unsplit alerts {dict(got[port])}, "
                                f"expected {dict(want)}")
        differ = [p for p in splits if got[p] != got[unsplit[flows[p][0]]]]
        for p in differ[:10]:
            m, name = flows[p]
            failures.append(f"{engine}: message {m} {name}: {dict(got[p])}, unsplit "
                            f"{dict(got[unsplit[m]])}")
        expect_counters = {"stream_bytes": payload_bytes, "stream_segments_held": reversed_flows,
                           "stream_gaps": 0, "stream_evictions": 0, "stream_segments_dropped": 0}
        for k, v in expect_counters.items():
            if counters.get(k) != v:
                failures.append(f"{engine}: counter {k} = {counters.get(k)}, expected {v}")
        per_packet, _ = run(work, inp, engine, "false")
        missed = sum(1 for p in splits if per_packet[p] != per_packet[unsplit[flows[p][0]]])
        missed_by[engine] = missed
        if missed == 0:
            failures.append(f"{engine}: per packet, no split connection lost an alert")
    suri = suricata(work, inp)
    suri_note = "suricata not installed: comparison skipped"
    if suri is not None:
        mismatch = [p for p in flows if set(suri[p]) != set(got[p])]
        for p in mismatch[:10]:
            m, name = flows[p]
            failures.append(f"suricata: message {m} {name}: suricata {dict(suri[p])}, "
                            f"fulcrum {dict(got[p])}")
        same_counts = sum(1 for p in flows if suri[p] == got[p])
        suri_note = (f"suricata: {len(flows) - len(mismatch)} of {len(flows)} connections raise "
                     f"the same rules, {same_counts} the same number of times (Suricata may "
                     "alert an offset/depth rule twice: on the packet and on the stream)")
    shutil.rmtree(work)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    print(f"ok: {len(splits)} split connections ({len(splits) // 2} byte positions, in order and "
          f"out of order) of {len(MESSAGES)} messages, {len(frames)} packets: all alert as their "
          f"unsplit connection, both engines; per packet (STREAM false) {missed_by['hyperscan']} "
          f"of them alert otherwise; {suri_note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
