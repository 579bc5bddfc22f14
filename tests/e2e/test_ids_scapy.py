#!/usr/bin/env python3
"""End to end: IDSMatch on generated traffic against a brute-force Python reference.

Builds TCP, UDP and ICMP packets with scapy whose payloads are random bytes with planted rule
contents (random case, random positions, so offset/depth/nocase decide), hex bytes and regex
matches, plus malformed frames (non-IP, truncated, bad TCP data offset). Runs `fulcrum run`
with net_pcap ports and the alert log, once per engine (hyperscan, ac), and checks:
  * the (packet index, sid) alert set equals the reference's, which parses the rule text on
    its own and evaluates every rule on every packet with bytes.find / re;
  * clean packets leave unchanged on port 0, alerted ones are dropped by Discard behind
    output 1, malformed ones with their named reason; the buffer balance holds.
"""
import datetime
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

from scapy.all import ICMP, IP, TCP, UDP, Ether, Raw, rdpcap, wrpcap  # noqa: E402

FULCRUM = os.environ.get("FULCRUM_BIN", "build/fulcrum")
TIMEOUT_S = 120
PACKETS = 1500
SEED = 4

RULES = r"""# e2e rules
alert tcp any any -> any 80 (msg:"get passwd"; content:"GET "; depth:4; content:"/etc/passwd"; sid:101;)
alert tcp any any -> any any (msg:"admin nocase"; content:"AdMiN"; nocase; offset:3; depth:20; sid:102;)
alert tcp 10.1.0.0/16 any <> any [22,2222] (msg:"ssh banner hex"; content:"|53 53 48 2d|"; sid:103;)
alert udp any any -> any 53 (msg:"dns bad"; content:"|03|bad|00|"; nocase; sid:104;)
alert udp any !53 -> any any (msg:"udp regex"; pcre:"/x[0-9]{2,4}y/i"; sid:105;)
alert udp any any -> any any (msg:"udp anchored"; pcre:"/^HELLO/"; sid:106;)
alert icmp any any -> any any (msg:"icmp mark"; content:"PING-MARK"; sid:107;)
alert ip any any -> ![10.2.0.0/16] any (msg:"nop sled"; content:"|90 90 90 90|"; sid:108;)
alert tcp any any -> any 21 (msg:"pass without user"; content:!"USER"; depth:8; content:"PASS"; sid:109;)
alert tcp any any -> any any (msg:"case sensitive"; content:"SeCrEt"; offset:2; sid:110;)
alert tcp any 1024: -> any :1023 (msg:"both"; content:"abc"; nocase; pcre:"/ab+c.{0,3}d/si"; sid:111;)
"""

PLANTS = [b"GET ", b"/etc/passwd", b"admin", b"ADMIN", b"SSH-", b"\x03bad\x00", b"\x03BAD\x00",
          b"x12y", b"X1234Y", b"x1y", b"HELLO", b"PING-MARK", b"\x90\x90\x90\x90", b"USER",
          b"PASS", b"SeCrEt", b"secret", b"abc", b"aBbbC--d", b"abc\nxd"]
ADDRS = ["10.1.0.5", "10.1.2.3", "10.2.0.7", "192.168.1.1", "172.16.0.9"]
PORTS = [21, 22, 53, 80, 1023, 1024, 2222, 5000, 40000]
MALFORMED = {"not-ipv4": 0, "truncated": 0, "bad-l4-header": 0}


# ---- the reference: its own rule parser and a brute-force evaluator --------------------------

def decode_content(text):
    out, i = b"", 0
    while i < len(text):
        if text[i] == "|":
            j = text.index("|", i + 1)
            out += bytes.fromhex(text[i + 1:j].replace(" ", ""))
            i = j + 1
        else:
            out += text[i].encode()
            i += 1
    return out


def parse_addr(s):
    neg = s.startswith("!")
    s = s.lstrip("!")
    if s == "any":
        return (neg, [])
    items = []
    for it in s.strip("[]").split(","):
        n = it.startswith("!")
        net, _, ln = it.lstrip("!").partition("/")
        ln = int(ln or 32)
        a = int.from_bytes(bytes(int(x) for x in net.split(".")), "big")
        mask = (0xFFFFFFFF << (32 - ln)) & 0xFFFFFFFF
        items.append((n, a & mask, mask))
    return (neg, items)


def parse_ports(s):
    neg = s.startswith("!")
    s = s.lstrip("!")
    if s == "any":
        return (neg, [])
    items = []
    for it in s.strip("[]").split(","):
        n = it.startswith("!")
        it = it.lstrip("!")
        if ":" in it:
            lo, hi = it.split(":")
            items.append((n, int(lo or 0), int(hi or 65535)))
        else:
            items.append((n, int(it), int(it)))
    return (neg, items)


def in_set(spec, value, member):
    neg, items = spec
    pos = [i for i in items if not i[0]]
    ok = (not pos or any(member(i, value) for i in pos)) and \
        not any(member(i, value) for i in items if i[0])
    return ok != neg


def addr_in(spec, a):
    return in_set(spec, int.from_bytes(bytes(int(x) for x in a.split(".")), "big"),
                  lambda i, v: v & i[2] == i[1])


def port_in(spec, p):
    return in_set(spec, p, lambda i, v: i[1] <= v <= i[2])


def parse_rules(text):
    rules = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.match(r"alert (\w+) (\S+) (\S+) (->|<>) (\S+) (\S+) \((.*)\)$", line)
        proto, src, sport, d, dst, dport, body = m.groups()
        rule = dict(proto=proto, src=parse_addr(src), sport=parse_ports(sport), bidir=d == "<>",
                    dst=parse_addr(dst), dport=parse_ports(dport), contents=[], pcres=[])
        for opt in [o.strip() for o in body.split(";") if o.strip()]:
            name, _, value = opt.partition(":")
            if name == "content":
                neg = value.startswith("!")
                rule["contents"].append(dict(bytes=decode_content(value.lstrip("!")[1:-1]),
                                             neg=neg, nocase=False, offset=0, depth=None))
            elif name in ("nocase", "offset", "depth"):
                rule["contents"][-1][name] = True if name == "nocase" else int(value)
            elif name == "pcre":
                body_, _, flags = value[1:-1][1:].rpartition("/")
                f = 0
                f |= re.I if "i" in flags else 0
                f |= re.S if "s" in flags else 0
                f |= re.M if "m" in flags else 0
                rule["pcres"].append(re.compile(body_.encode(), f))
            elif name == "sid":
                rule["sid"] = int(value)
        rules.append(rule)
    return rules


def content_found(c, domain):
    window = domain[c["offset"]:]
    if c["depth"] is not None:
        window = window[:c["depth"]]
    pat = c["bytes"]
    if c["nocase"]:
        window, pat = window.lower(), pat.lower()
    return window.find(pat) >= 0


def reference_alerts(rules, pkt):
    """The sids that match an Ether/IP packet (scapy), in rule order."""
    ip = pkt[IP]
    ip_payload = bytes(ip.payload)[:ip.len - ip.ihl * 4]
    l4 = None
    sport = dport = 0
    if TCP in pkt:
        l4, sport, dport = ip_payload[pkt[TCP].dataofs * 4:], pkt[TCP].sport, pkt[TCP].dport
    elif UDP in pkt:
        l4, sport, dport = ip_payload[8:], pkt[UDP].sport, pkt[UDP].dport
    sids = []
    for r in rules:
        if r["proto"] == "tcp" and TCP not in pkt or r["proto"] == "udp" and UDP not in pkt or \
                r["proto"] == "icmp" and ICMP not in pkt:
            continue
        fwd = addr_in(r["src"], ip.src) and addr_in(r["dst"], ip.dst) and \
            port_in(r["sport"], sport) and port_in(r["dport"], dport)
        rev = r["bidir"] and addr_in(r["src"], ip.dst) and addr_in(r["dst"], ip.src) and \
            port_in(r["sport"], dport) and port_in(r["dport"], sport)
        if not (fwd or rev):
            continue
        domain = l4 if r["proto"] in ("tcp", "udp") else ip_payload
        if all(content_found(c, domain) != c["neg"] for c in r["contents"]) and \
                all(p.search(domain) for p in r["pcres"]):
            sids.append(r["sid"])
    return sids


# ---- traffic ---------------------------------------------------------------------------------

def random_case(b, rng):
    return bytes(c ^ 0x20 if chr(c).isascii() and chr(c).isalpha() and rng.random() < 0.5 else c
                 for c in b)


def payload(rng):
    body = bytearray(rng.choice(b"abcxyz019 -\n") for _ in range(rng.randint(0, 120)))
    for _ in range(rng.randint(0, 3)):
        plant = rng.choice(PLANTS)
        if rng.random() < 0.3:
            plant = random_case(plant, rng)
        pos = rng.randint(0, len(body))
        body[pos:pos] = plant
    if rng.random() < 0.3:  # plants at the start, where depth and ^ look
        body[0:0] = rng.choice([b"HELLO", b"GET /etc/passwd", b"PASS x", b"USER a PASS b",
                                b"GET /index"])
    return bytes(body)


def make_traffic(rng):
    frames = []
    for _ in range(PACKETS):
        eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
        ip = IP(src=rng.choice(ADDRS), dst=rng.choice(ADDRS))
        kind = rng.random()
        data = payload(rng)
        if kind < 0.45:
            p = eth / ip / TCP(sport=rng.choice(PORTS), dport=rng.choice(PORTS), seq=0, ack=0,
                               window=0) / Raw(data)
        elif kind < 0.85:
            p = eth / ip / UDP(sport=rng.choice(PORTS), dport=rng.choice(PORTS)) / Raw(data)
        elif kind < 0.95:
            p = eth / ip / ICMP(id=0, seq=0) / Raw(data)
        else:
            which = rng.choice(list(MALFORMED))
            full = bytes(eth / ip / TCP(sport=80, dport=80) / Raw(data))
            if which == "not-ipv4":
                p = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02", type=0x0806) / \
                    Raw(b"\x00" * 46)
            elif which == "truncated":
                p = Ether(full[:rng.randint(14 + 20, len(full) - 1)])
            else:
                f = bytearray(full)
                f[14 + 20 + 12] = 0x30  # TCP data offset 3 words
                p = Ether(bytes(f))
            MALFORMED[which] += 1
        frames.append(p)
    return frames


def run(engine, work, inp, empty, alert_format="fulcrum"):
    click = os.path.join(work, f"ids-{engine}-{alert_format}.click")
    log = os.path.join(work, f"alerts-{engine}-{alert_format}.jsonl")
    with open(click, "w") as f:
        f.write(f'ids :: IDSMatch("{work}/e2e.rules", ENGINE {engine}, ALERTS "{log}", '
                f'ALERT_FORMAT {alert_format});\n'
                "FromInput -> ids -> ToOutput;\nids[1] -> Discard;\n")
    out0, out1 = os.path.join(work, f"out0-{engine}.pcap"), os.path.join(work, f"out1-{engine}.pcap")
    stats = os.path.join(work, f"stats-{engine}.json")
    cmd = [FULCRUM, "run", click, "--quiet", "--stats-json", stats,
           "--port", f"net_pcap0,rx_pcap={inp},tx_pcap={out0}",
           "--port", f"net_pcap1,rx_pcap={empty},tx_pcap={out1}"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    if res.returncode != 0:
        raise RuntimeError(f"fulcrum exited {res.returncode}: {res.stdout} {res.stderr}")
    with open(log) as f:
        alerts = [json.loads(line) for line in f]
    return alerts, json.load(open(stats)), [bytes(p) for p in rdpcap(out0)]


def eve_problems(records, want, frames):
    """Suricata's EVE alert records: the same (packet, sid) pairs as the reference, each with the
    packet's addresses, protocol name and ports as Suricata writes them, the rule's sid, rev and
    msg, and a timestamp in Suricata's format."""
    rules = {}
    for line in RULES.splitlines():
        sid = re.search(r"sid:(\d+);", line)
        if sid:
            msg = re.search(r'msg:"([^"]*)";', line)
            rev = re.search(r"rev:(\d+);", line)
            rules[int(sid.group(1))] = (msg.group(1) if msg else "", int(rev.group(1)) if rev else 0)
    got = {(r.get("pkt_index"), r.get("alert", {}).get("signature_id")) for r in records}
    if got != want:
        return [f"eve: alerts differ from the reference: missing {sorted(want - got)[:5]}, "
                f"extra {sorted(got - want)[:5]}"]
    names = {6: "TCP", 17: "UDP", 1: "ICMP"}
    for r in records:
        p = frames[r["pkt_index"]]
        a = r["alert"]
        expected = {"event_type": "alert", "src_ip": p[IP].src, "dest_ip": p[IP].dst,
                    "proto": names.get(p[IP].proto, str(p[IP].proto))}
        if p[IP].proto in (6, 17) and p[IP].frag == 0:
            l4 = p[TCP] if TCP in p else p[UDP]
            expected.update(src_port=l4.sport, dest_port=l4.dport)
        else:
            expected.update(src_port=None, dest_port=None)
        for k, v in expected.items():
            if r.get(k) != v:
                return [f"eve: {k} is {r.get(k)!r}, expected {v!r}: {r}"]
        msg, rev = rules[a["signature_id"]]
        if (a.get("signature"), a.get("rev"), a.get("gid"), a.get("action")) != (msg, rev, 1, "allowed"):
            return [f"eve: alert fields differ from the rule {a['signature_id']}: {a}"]
        try:
            datetime.datetime.strptime(r["timestamp"], "%Y-%m-%dT%H:%M:%S.%f%z")
        except (KeyError, ValueError):
            return [f"eve: timestamp not in Suricata's format: {r.get('timestamp')!r}"]
    return []


def main():
    rng = random.Random(SEED)
    work = tempfile.mkdtemp(prefix="fulcrum-e2e-ids-")
    with open(os.path.join(work, "e2e.rules"), "w") as f:
        f.write(RULES)
    rules = parse_rules(RULES)
    frames = make_traffic(rng)
    inp, empty = os.path.join(work, "in.pcap"), os.path.join(work, "empty.pcap")
    wrpcap(inp, frames)
    wrpcap(empty, [])
    frames = rdpcap(inp)  # what fulcrum reads, re-dissected

    want, clean = set(), []
    flows = {}
    for i, p in enumerate(frames):
        raw = bytes(p)
        ok = IP in p and len(raw) >= 14 + p[IP].len and \
            not (TCP in p and p[TCP].dataofs < 5)
        if not ok:
            continue
        sids = reference_alerts(rules, p)
        want |= {(i, s) for s in sids}
        if sids:
            flows[i] = (p[IP].src, p[IP].dst, p[IP].proto)
        else:
            clean.append(raw)
    failures = []
    for engine in ("hyperscan", "ac"):
        alerts, st, out0 = run(engine, work, inp, empty)
        got = {(a["packet"], a["sid"]) for a in alerts}
        if got != want:
            failures.append(f"{engine}: alerts differ from the reference: missing "
                            f"{sorted(want - got)[:10]}, extra {sorted(got - want)[:10]}")
        for a in alerts:
            fl = a["flow"]
            if flows.get(a["packet"]) != (fl["src"], fl["dst"], fl["proto"]):
                failures.append(f"{engine}: alert {a} names the wrong flow")
                break
        if not st["balanced"]:
            failures.append(f"{engine}: buffer balance does not hold")
        drops = {}
        for k, v in st["drops"].items():
            reason = k.split("/", 1)[1]
            drops[reason] = drops.get(reason, 0) + v
        for reason, n in MALFORMED.items():
            if drops.get(reason, 0) != n:
                failures.append(f"{engine}: drop {reason}: {drops.get(reason, 0)}, expected {n}")
        alerted = len({i for i, _ in want})
        if drops.get("discarded", 0) != alerted:
            failures.append(f"{engine}: {drops.get('discarded', 0)} packets to output 1, "
                            f"expected {alerted}")
        if out0 != clean:
            failures.append(f"{engine}: port 0 sent {len(out0)} frames, expected {len(clean)} "
                            "clean ones unchanged")
    eve, _, _ = run("hyperscan", work, inp, empty, "eve")
    failures += eve_problems(eve, want, frames)
    shutil.rmtree(work)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    print(f"ok: {len(frames)} packets, {len(want)} alerts on "
          f"{len({i for i, _ in want})} packets identical to the reference for both engines; "
          f"malformed {MALFORMED}; the same alerts as Suricata EVE records")
    return 0


if __name__ == "__main__":
    sys.exit(main())
