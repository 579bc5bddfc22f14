#!/usr/bin/env python3
"""End to end: IDSMatch on generated traffic against a brute-force Python reference.

Builds TCP, UDP, ICMP and ICMPv6 packets with scapy whose payloads are random bytes with planted
rule contents (random case, random positions, so offset/depth/nocase decide), hex bytes and regex
matches; IPv4 and IPv6 (with hop-by-hop, destination options, routing, fragment and AH extension
headers; non-first fragments), untagged, 802.1Q- and QinQ-tagged; plus malformed frames of every
drop reason (non-IP, truncated, bad TCP data offset, bad IPv6 extension chains, too many tags or
extension headers). Rules use IPv4 and IPv6 address lists. Runs `fulcrum run` with net_pcap
ports and the alert log, once per engine (hyperscan, ac), per packet (STREAM false: the random
TCP packets repeat sequence numbers; stream reassembly is test_ids_stream.py's), and checks:
  * the (packet index, sid) alert set equals the reference's, which parses the rule text on
    its own (addresses with Python's ipaddress), takes addresses, protocols and payloads from
    scapy's dissection, and evaluates every rule on every packet with bytes.find / re (rules
    with distance/within: its own transcription of Suricata's recursive content inspection;
    flow: rules with its own per-flow TCP handshake and UDP both-ways state, on TCP
    conversations with and without handshakes, RSTs and FINs, and UDP exchanges);
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

import ipaddress

from scapy.all import (ICMP, IP, TCP, UDP, Dot1AD, Dot1Q, Ether, ICMPv6EchoRequest,  # noqa: E402
                       IPv6, IPv6ExtHdrDestOpt, IPv6ExtHdrFragment, IPv6ExtHdrHopByHop,
                       IPv6ExtHdrRouting, Raw, rdpcap, wrpcap)
from scapy.layers.inet6 import _ICMPv6  # noqa: E402
from scapy.layers.ipsec import AH  # noqa: E402

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
alert tcp 2001:db8::/32 any -> any any (msg:"v6 get"; content:"GET "; sid:112;)
alert udp any any -> [2001:db8:1::/48,10.1.0.0/16] any (msg:"mixed list"; content:"x1"; sid:113;)
alert ip ![2001:db8:1::/48,10.2.0.0/16] any -> any any (msg:"negated mixed"; content:"PASS"; nocase; sid:114;)
alert ip [!2001:db8::1,2001:db8::/32] any <> any any (msg:"v6 minus one"; content:"USER"; sid:115;)
alert ip !10.1.0.0/16 any -> any any (msg:"v4 only negation"; content:"abc"; sid:116;)
alert icmpv6 any any -> any any (msg:"icmpv6 echo request"; content:"|80 00|"; depth:2; sid:117;)
alert icmpv4 any any -> 2001:db8::/32 any (msg:"never"; content:"PING"; sid:118;)
alert ip any any -> fe80::/10 any (msg:"link local"; content:"x"; sid:119;)
alert icmp any any -> any any (msg:"icmp both"; content:"xy"; sid:120;)
alert tcp any any -> any any (msg:"pass after user"; content:"USER"; content:"PASS"; distance:1; within:12; sid:121;)
alert udp any any -> any any (msg:"y soon after x1"; content:"x1"; content:"y"; distance:0; within:4; sid:122;)
alert ip any any -> any any (msg:"negative distance"; content:"SSH-"; content:"bS"; distance:-5; within:3; sid:123;)
alert tcp any any -> any any (msg:"abc without 9 after"; content:"abc"; nocase; content:!"9"; distance:0; within:5; sid:124;)
alert ip any any -> any any (msg:"three chained"; content:"a"; depth:40; content:"b"; within:3; content:"c"; distance:1; within:3; sid:125;)
alert udp any any -> any any (msg:"limit per source"; content:"x1"; threshold: type limit, track by_src, count 3, seconds 3600; sid:126;)
alert tcp any any -> any any (msg:"every 4th per destination"; content:"abc"; nocase; threshold: type threshold, track by_dst, count 4, seconds 3600; sid:127;)
alert ip any any -> any any (msg:"once after 5 per pair"; content:"PASS"; threshold: type both, track by_both, count 5, seconds 3600; sid:128;)
alert ip any any -> any any (msg:"after 10 per destination"; content:"USER"; detection_filter: track by_dst, count 10, seconds 3600; sid:129;)
alert tcp any any -> any any (msg:"pass after login"; content:"PASS"; flowbits:isset,login; sid:131;)
alert tcp any any -> any any (msg:"login seen"; content:"USER"; flowbits:set,login; flowbits:noalert; sid:130;)
alert ip any any -> any any (msg:"toggle on abc"; content:"abc"; flowbits:toggle,t; sid:132;)
alert ip any any -> any any (msg:"x1 while t unset"; content:"x1"; flowbits:isnotset,t; sid:133;)
alert udp any any -> any any (msg:"unset on HELLO"; content:"HELLO"; flowbits:unset,t; flowbits:noalert; sid:134;)
alert tcp any any -> any any (msg:"first GET of a flow"; content:"GET "; flowbits:isnotset,got; flowbits:set,got; sid:135;)
alert tcp any any -> any any (msg:"cmd to server"; flow:established,to_server; content:"CMD"; sid:140;)
alert tcp any any -> any any (msg:"resp to client"; flow:to_client; content:"RESP"; sid:141;)
alert udp any any -> any any (msg:"udp established"; flow:established; content:"x1"; sid:142;)
alert tcp any any -> any any (msg:"established, no cmd"; flow:established,from_client; content:!"CMD"; sid:143;)
alert tcp any any -> any any (msg:"not established from server"; flow:not_established,from_server; sid:144;)
alert ip any any -> any any (msg:"stateless mark"; flow:stateless; content:"PING-MARK"; sid:145;)
alert tcp any any -> any any (msg:"no_stream get"; flow:to_server,no_stream; content:"GET "; sid:146;)
alert udp any any -> any any (msg:"udp one way yet"; flow:not_established,to_server; content:"CMD"; sid:147;)
alert tcp any any -> any any (msg:"resp after cmd"; flow:established,to_client; content:"RESP"; flowbits:isset,cmd; sid:148;)
alert tcp any any -> any any (msg:"cmd seen"; flow:established,to_server; content:"CMD"; flowbits:set,cmd; flowbits:noalert; sid:149;)
"""
# Thresholds count per worker (one here) with the TSC; their windows (3600 s) outlast the run
# (TIMEOUT_S), so every match of a tracked address falls into one window.

PLANTS = [b"GET ", b"/etc/passwd", b"admin", b"ADMIN", b"SSH-", b"\x03bad\x00", b"\x03BAD\x00",
          b"x12y", b"X1234Y", b"x1y", b"HELLO", b"PING-MARK", b"\x90\x90\x90\x90", b"USER",
          b"PASS", b"SeCrEt", b"secret", b"abc", b"aBbbC--d", b"abc\nxd", b"x1 y", b"x1y",
          b"abSSH-", b"ABC 9", b"a-b c"]
ADDRS = ["10.1.0.5", "10.1.2.3", "10.2.0.7", "192.168.1.1", "172.16.0.9"]
ADDRS6 = ["2001:db8::1", "2001:db8::2", "2001:db8:1::5", "2001:db8:1:0:ffff::1", "2001:dead::9",
          "fe80::1", "::ffff:10.1.0.5"]
PORTS = [21, 22, 53, 80, 1023, 1024, 2222, 5000, 40000]
MALFORMED = {"not-ip": 0, "truncated": 0, "bad-l4-header": 0, "bad-ipv6-ext": 0,
             "too-many-ipv6-ext": 0, "too-many-vlan-tags": 0}


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
        items.append((it.startswith("!"), ipaddress.ip_network(it.lstrip("!"), strict=False)))
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
    """Items are looked up per family: a list with no item of the address's family never holds
    it (Suricata's address groups); `any` holds both."""
    neg, items = spec
    a = ipaddress.ip_address(a)
    family = [i for i in items if i[1].version == a.version]
    if items and not family:
        return False
    return in_set((neg, family), a, lambda i, v: v in i[1])


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
                    dst=parse_addr(dst), dport=parse_ports(dport), contents=[], pcres=[],
                    flowbits=[], noalert=False, flow=None)
        last_is_pcre = False
        for opt in [o.strip() for o in body.split(";") if o.strip()]:
            name, _, value = opt.partition(":")
            if name == "content":
                neg = value.startswith("!")
                rule["contents"].append(dict(bytes=decode_content(value.lstrip("!")[1:-1]),
                                             neg=neg, nocase=False, offset=0, depth=None,
                                             distance=None, within=None, within_next=False,
                                             after_pcre=last_is_pcre))
                last_is_pcre = False
            elif name in ("nocase", "offset", "depth", "distance", "within"):
                rule["contents"][-1][name] = True if name == "nocase" else int(value)
                cs = rule["contents"]
                if name == "within" and len(cs) > 1 and not cs[-1]["after_pcre"]:
                    cs[-2]["within_next"] = True
            elif name == "pcre":
                body_, _, flags = value[1:-1][1:].rpartition("/")
                f = 0
                f |= re.I if "i" in flags else 0
                f |= re.S if "s" in flags else 0
                f |= re.M if "m" in flags else 0
                rule["pcres"].append(re.compile(body_.encode(), f))
                last_is_pcre = True
            elif name == "sid":
                rule["sid"] = int(value)
            elif name == "flowbits":
                cmd, _, bit = value.partition(",")
                if cmd.strip() == "noalert":
                    rule["noalert"] = True
                else:
                    rule["flowbits"].append((cmd.strip(), bit.strip()))
            elif name == "flow":
                fl = rule["flow"] = dict(dir=None, est=None)
                for item in (i.strip() for i in value.split(",")):
                    if item in ("to_server", "from_client", "to_client", "from_server"):
                        fl["dir"] = "server" if item in ("to_server", "from_client") else "client"
                    elif item in ("established", "not_established"):
                        fl["est"] = item == "established"
                    else:
                        assert item in ("stateless", "no_stream"), item
            elif name in ("threshold", "detection_filter"):
                th = dict(type="detection_filter") if name == "detection_filter" else {}
                for item in value.split(","):
                    k, v = item.split()
                    th[k] = int(v) if k in ("count", "seconds") else v
                rule["threshold"] = th
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


def relative(c):
    return c["distance"] is not None or c["within"] is not None


def find(window, c):
    pat = c["bytes"]
    if c["nocase"]:
        window, pat = window.lower(), pat.lower()
    return window.find(pat)


def inspect(cs, i, domain, st):
    """Suricata's recursive content inspection (DetectEngineContentInspection) of contents
    cs[i:]: 1 match, 0 no match, -1 give up. st["end"] is the end of the last positive match."""
    st["calls"] += 1
    if st["calls"] == 3000:  # detect.inspection-recursion-limit
        return -1
    c, last, base = cs[i], i + 1 == len(cs), st["end"]
    retry_from = None
    while True:
        if relative(c):
            dist = c["distance"] or 0
            lo = 0 if dist < 0 and -dist > base else base + dist
            hi = len(domain)
            if c["within"] is not None and base + c["within"] + dist < hi:
                hi = base + c["within"] + dist
                if hi < 0:  # 32-bit wrap-around in Suricata: past the end
                    hi = len(domain)
        else:
            lo = c["offset"]
            hi = len(domain) if c["depth"] is None else c["offset"] + c["depth"]
        if retry_from is not None:
            lo = retry_from
        hi = min(hi, len(domain))
        at = find(domain[lo:hi], c) if lo <= hi and hi != 0 else -1
        if at < 0:
            if not c["neg"]:
                return 0 if relative(c) else -1
            return 1 if last else inspect(cs, i + 1, domain, st)
        if c["neg"]:
            return 0 if relative(c) else -1
        st["end"] = lo + at + len(c["bytes"])
        if last:
            return 1
        r = inspect(cs, i + 1, domain, st)
        if r != 0:
            return r
        if not c["within_next"]:
            return -1
        retry_from = lo + at + 1


def contents_match(r, domain):
    if not any(relative(c) for c in r["contents"]):
        return all(content_found(c, domain) != c["neg"] for c in r["contents"])
    return not r["contents"] or inspect(r["contents"], 0, domain, dict(end=0, calls=0)) == 1


EXT6 = (IPv6ExtHdrHopByHop, IPv6ExtHdrDestOpt, IPv6ExtHdrRouting, IPv6ExtHdrFragment, AH)
L4_AFTER_AH = {6: TCP, 17: UDP}


def dissect(pkt):
    """What the rules see of an Ether/[VLAN]/IP or IPv6 packet, from scapy's dissection: (src,
    dst, protocol number, IP payload, L4 payload or None, sport, dport, non-first fragment)."""
    raw = bytes(pkt)

    def start(layer):  # bytes(layer) is the layer and everything after it, padding included
        return len(raw) - len(bytes(layer))
    if IP in pkt:
        ip = pkt[IP]
        proto, upper, end = ip.proto, ip.payload, start(ip) + ip.len
        fragment = ip.frag != 0
    else:
        ip = pkt[IPv6]
        upper, proto, fragment = ip.payload, ip.nh, False
        while isinstance(upper, EXT6):
            if isinstance(upper, IPv6ExtHdrFragment) and upper.offset != 0:
                fragment = True
            proto = upper.nh
            if isinstance(upper, AH) and isinstance(upper.payload, Raw) and \
                    proto in L4_AFTER_AH:  # scapy does not dissect past AH
                inner = L4_AFTER_AH[proto](bytes(upper.payload))
                upper.remove_payload()
                upper.add_payload(inner)
            upper = upper.payload
            if fragment:
                break
        end = start(ip) + 40 + ip.plen
        if proto == 59:  # No Next Header
            upper, end = None, 0
    ip_payload = raw[start(upper):end] if upper is not None else b""
    l4, sport, dport = None, 0, 0
    if isinstance(upper, TCP):
        l4, sport, dport = ip_payload[upper.dataofs * 4:], upper.sport, upper.dport
    elif isinstance(upper, UDP):
        l4, sport, dport = ip_payload[8:], upper.sport, upper.dport
    return dict(src=ip.src, dst=ip.dst, proto=proto, ip_payload=ip_payload, l4=l4, sport=sport,
                dport=dport, fragment=fragment, icmp4=isinstance(upper, ICMP),
                icmp6=isinstance(upper, _ICMPv6), tcp=isinstance(upper, TCP),
                udp=isinstance(upper, UDP),
                tcp_flags=int(upper.flags) if isinstance(upper, TCP) else 0)


def flow_state_rule(r):
    """Whether a rule's flow: conditions need the flow's state (a direction or established)."""
    return r["flow"] is not None and (r["flow"]["dir"] is not None or
                                      r["flow"]["est"] is not None)


def stateful(r):
    """Whether which packets a rule alerts on depends on the packets before (their order)."""
    return "threshold" in r or bool(r["flowbits"]) or flow_state_rule(r)


def order_dependent(r):
    """Whether even the number of a rule's alerts depends on the order of the packets."""
    return reads_flowbits(r) or flow_state_rule(r)


def reads_flowbits(r):
    """Whether even the number of a rule's alerts depends on the order of the packets."""
    return any(cmd in ("isset", "isnotset") for cmd, _ in r["flowbits"])


def evaluation_order(rules):
    """Suricata's order (detect-engine-sigorder.c): rules that only set flowbits, then those
    that set and read, then those that read, each by sid; then the rest as written."""
    def rank(r):
        reads = reads_flowbits(r)
        writes = any(cmd not in ("isset", "isnotset") for cmd, _ in r["flowbits"])
        klass = 4 if writes and not reads else 3 if writes else 2 if reads else 1
        return (-klass, r["sid"] if klass > 1 else 0)
    return sorted(rules, key=rank)  # stable: the rest keeps the file's order


def flow_of(d):
    """The packet's flow, the same both ways: protocol and the two (address, port) ends."""
    ends = frozenset([(ipaddress.ip_address(d["src"]), d["sport"]),
                      (ipaddress.ip_address(d["dst"]), d["dport"])])
    return (d["proto"], ends)


SYN, ACK, RST, FIN = 0x02, 0x10, 0x04, 0x01


def track_flow(d, state):
    """The packet's place in its flow after it was seen: (from the client, established); None
    for a non-first fragment (no flow). The first packet's sender is the client. TCP: a SYN
    without ACK where there is no session or it is closed starts one (its sender the client),
    the other end's SYN-ACK and the client's ACK complete the handshake (that ACK is
    established), a RST closes the session (unestablished during the handshake), a FIN from
    both ends closes it; once established a flow stays so until a new session starts. Other
    protocols: established once both ends sent."""
    if d["fragment"]:
        return None
    me = (ipaddress.ip_address(d["src"]), d["sport"])
    fl = state.setdefault(("conn", flow_of(d)),
                          dict(client=me, tcp="none", est=False, ends=set()))
    if d["tcp"]:
        f = d["tcp_flags"]
        syn, ack, rst, fin = f & SYN, f & ACK, f & RST, f & FIN
        if fl["tcp"] in ("none", "closed"):
            if syn and not ack and not rst:
                fl.update(client=me, tcp="syn_sent", est=False, ends=set())
        elif fl["tcp"] == "syn_sent":
            if rst:
                fl["tcp"] = "closed"
            elif syn and ack and me != fl["client"]:
                fl["tcp"] = "syn_recv"
        elif fl["tcp"] == "syn_recv":
            if rst:
                fl["tcp"] = "closed"
            elif ack and not syn and me == fl["client"]:
                fl["tcp"], fl["est"] = "established", True
        elif rst:
            fl["tcp"] = "closed"
        elif fin:
            fl["ends"].add(me)
            if len(fl["ends"]) == 2:
                fl["tcp"] = "closed"
    else:
        fl["ends"].add(me)
        fl["est"] = len(fl["ends"]) == 2
    return (me == fl["client"], fl["est"])


def flow_pass(r, d, where):
    """Rule r's flow: conditions on a packet at `where` (track_flow's answer; False: not
    tracked, every direction and state possible)."""
    fc = r["flow"]
    if fc is None:
        return True
    if d["fragment"]:
        return False
    if where is False:
        return True
    from_client, est = where
    return (fc["dir"] is None or (fc["dir"] == "server") == from_client) and \
        (fc["est"] is None or fc["est"] == est)


def flowbits_pass(r, d, state):
    """Rule r matched: its isset/isnotset conditions on the flow's bits, then its set, unset
    and toggle; whether it may alert (noalert aside)."""
    bits = state.setdefault(("flow", flow_of(d)), set())
    for cmd, bit in r["flowbits"]:
        if (cmd == "isset" and bit not in bits) or (cmd == "isnotset" and bit in bits):
            return False
    for cmd, bit in r["flowbits"]:
        if cmd == "set" or (cmd == "toggle" and bit not in bits):
            bits.add(bit)
        elif cmd == "unset" or cmd == "toggle":
            bits.discard(bit)
    return True


def threshold_passes(r, d, state):
    """Whether a match of rule r (with a threshold) alerts: the n-th match of its tracked
    address(es) in the window (one window: see RULES) alerts for limit when n <= count, for
    threshold when n is a multiple of count, for both when n == count, for detection_filter when
    n > count."""
    th = r["threshold"]
    track = {"by_src": (d["src"],), "by_dst": (d["dst"],), "by_both": (d["src"], d["dst"]),
             "by_rule": ()}[th["track"]]
    key = (r["sid"],) + track
    n = state[key] = state.get(key, 0) + 1
    count = th["count"]
    return {"limit": n <= count, "threshold": n % count == 0, "both": n == count,
            "detection_filter": n > count}[th["type"]]


def reference_alerts(rules, pkt, state):
    """The sids that match an Ether/[VLAN]/IP or IPv6 packet (scapy), in rule order. `state`
    (a dict) carries the threshold counts, the flows' bits and their flow state from packet to
    packet: packets are given in order; None: no state (thresholds let every match alert,
    flowbits conditions and flow directions and states hold, noalert rules stay silent)."""
    d = dissect(pkt)
    sids = []
    where = track_flow(d, state) if state is not None else False
    wanted = {"tcp": d["tcp"], "udp": d["udp"], "icmp": d["icmp4"] or d["icmp6"],
              "icmpv4": d["icmp4"], "icmpv6": d["icmp6"], "ip": True}
    for r in evaluation_order(rules):
        if not wanted[r["proto"]]:
            continue
        fwd = addr_in(r["src"], d["src"]) and addr_in(r["dst"], d["dst"]) and \
            port_in(r["sport"], d["sport"]) and port_in(r["dport"], d["dport"])
        rev = r["bidir"] and addr_in(r["src"], d["dst"]) and addr_in(r["dst"], d["src"]) and \
            port_in(r["sport"], d["dport"]) and port_in(r["dport"], d["sport"])
        if not (fwd or rev) or not flow_pass(r, d, where):
            continue
        domain = d["l4"] if r["proto"] in ("tcp", "udp") else d["ip_payload"]
        if not (contents_match(r, domain) and all(p.search(domain) for p in r["pcres"])):
            continue
        if r["flowbits"] and state is not None and not flowbits_pass(r, d, state):
            continue
        if r["noalert"]:
            continue
        if "threshold" in r and state is not None and not threshold_passes(r, d, state):
            continue
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


ETH = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def vlan(rng, ip_layer):
    """Ether, then no tag, an 802.1Q tag or a QinQ pair, then `ip_layer`."""
    k = rng.random()
    if k < 0.6:
        return Ether(**ETH) / ip_layer
    if k < 0.8:
        return Ether(**ETH) / Dot1Q(vlan=rng.randint(1, 4094)) / ip_layer
    return Ether(**ETH) / Dot1AD(vlan=rng.randint(1, 4094)) / Dot1Q(vlan=rng.randint(1, 4094)) / \
        ip_layer


def ext_chain(rng, nh):
    """0 to 5 IPv6 extension headers (hop-by-hop first if any), ending with next header `nh`:
    the first one's number (`nh` when there are none) and the scapy layers, stacked."""
    kinds = [k for k in ("dest", "routing", "frag", "ah") if rng.random() < 0.3]
    rng.shuffle(kinds)
    if rng.random() < 0.3:
        kinds.insert(0, "hbh")
    if "ah" in kinds:  # last, and before TCP or UDP only: scapy does not dissect past AH
        kinds.remove("ah")
        if nh in L4_AFTER_AH:
            kinds.append("ah")
    layers = []
    nxt = {"hbh": 0, "dest": 60, "routing": 43, "frag": 44, "ah": 51}
    for i, k in enumerate(kinds):
        after = nxt[kinds[i + 1]] if i + 1 < len(kinds) else nh
        if k == "hbh":
            layers.append(IPv6ExtHdrHopByHop(nh=after))
        elif k == "dest":
            layers.append(IPv6ExtHdrDestOpt(nh=after))
        elif k == "routing":
            layers.append(IPv6ExtHdrRouting(nh=after))
        elif k == "frag":
            layers.append(IPv6ExtHdrFragment(nh=after, offset=0, m=0, id=rng.randint(0, 1 << 31)))
        else:  # AH, 12 bytes + a 4-byte ICV: payloadlen (16 / 4) - 2
            layers.append(AH(nh=after, payloadlen=2, spi=0x100, seq=1, icv=b"\x00" * 4))
    out = None
    for layer in layers:
        out = layer if out is None else out / layer
    return (nxt[kinds[0]] if kinds else nh), out


def ip6_packet(rng, nh, upper):
    first, chain = ext_chain(rng, nh)
    ip = IPv6(src=rng.choice(ADDRS6), dst=rng.choice(ADDRS6), nh=first)
    return ip / upper if chain is None else ip / chain / upper


def l4(rng, kind, data, six):
    if kind < 0.45:
        return 6, TCP(sport=rng.choice(PORTS), dport=rng.choice(PORTS), seq=0, ack=0,
                      window=0) / Raw(data)
    if kind < 0.85:
        return 17, UDP(sport=rng.choice(PORTS), dport=rng.choice(PORTS)) / Raw(data)
    if six:
        return 58, ICMPv6EchoRequest(id=0, seq=0, data=data)
    return 1, ICMP(id=0, seq=0) / Raw(data)


def malformed(rng, which, data):
    full = bytes(vlan(rng, IP(src=rng.choice(ADDRS), dst=rng.choice(ADDRS)) /
                      TCP(sport=80, dport=80) / Raw(data)))
    full6 = bytes(Ether(**ETH) / IPv6(src=rng.choice(ADDRS6), dst=rng.choice(ADDRS6)) /
                  IPv6ExtHdrDestOpt() / UDP(sport=53, dport=53) / Raw(data))
    if which == "not-ip":
        return rng.choice([Ether(type=0x0806, **ETH) / Raw(b"\x00" * 46),
                           Ether(**ETH) / Dot1Q(type=0x0806) / Raw(b"\x00" * 46),
                           Ether(full6[:14] + b"\x40" + full6[15:])])  # version 4 in IPv6
    if which == "truncated":
        f = rng.choice([full, full6])
        return Ether(f[:rng.randint(14 + 20, len(f) - 1)])
    if which == "bad-l4-header":
        f = bytearray(bytes(Ether(**ETH) / IP() / TCP(sport=80, dport=80) / Raw(data)))
        f[14 + 20 + 12] = 0x30  # TCP data offset 3 words
        return Ether(bytes(f))
    if which == "bad-ipv6-ext":
        if rng.random() < 0.5:
            f = bytearray(full6)
            f[14 + 40 + 1] = 0xFF  # a destination options header of 2 KiB
            return Ether(bytes(f))
        return Ether(**ETH) / IPv6() / IPv6ExtHdrDestOpt() / IPv6ExtHdrHopByHop() / UDP() / \
            Raw(data)
    if which == "too-many-ipv6-ext":
        chain = IPv6ExtHdrDestOpt()
        for _ in range(8):
            chain = chain / IPv6ExtHdrRouting()
        return Ether(**ETH) / IPv6() / chain / UDP() / Raw(data)
    tags = Dot1Q(vlan=1) / Dot1Q(vlan=2) / Dot1Q(vlan=3) / Dot1Q(vlan=4)
    return Ether(**ETH) / tags / IP() / UDP() / Raw(data)


def conversations(rng):
    """TCP conversations (with a handshake, data both ways, FINs or a RST and a new session;
    without a SYN; from a SYN-ACK; a handshake completed by a data packet; a RST answering the
    SYN) and UDP exchanges, IPv4 and IPv6, interleaved; on ports no random packet uses."""
    S, SA, A, PA, FA, R = "S", "SA", "A", "PA", "FA", "R"
    shapes = [
        [("c", S, b""), ("s", SA, b""), ("c", A, b""), ("c", PA, b"CMD"), ("s", PA, b"RESP"),
         ("c", PA, b"CMD"), ("c", FA, b""), ("s", A, b""), ("s", FA, b""), ("c", A, b""),
         ("c", PA, b"CMD")],
        [("c", S, b""), ("s", SA, b""), ("c", A, b""), ("s", PA, b"RESP"), ("s", R, b""),
         ("c", PA, b"CMD"), ("c", S, b""), ("s", PA, b"RESP"), ("s", SA, b""),
         ("c", PA, b"CMD"), ("s", PA, b"RESP")],
        [("s", PA, b"RESP"), ("c", PA, b"CMD"), ("c", A, b""), ("s", PA, b"RESP")],
        [("s", SA, b""), ("c", A, b""), ("c", PA, b"CMD"), ("s", PA, b"RESP")],
        [("c", S, b""), ("c", S, b""), ("s", SA, b""), ("c", PA, b"CMD"), ("s", PA, b"RESP")],
        [("c", S, b""), ("s", R, b""), ("c", A, b""), ("c", PA, b"CMD")],
        [("c", "udp", b"CMD"), ("c", "udp", b"CMD"), ("s", "udp", b"RESP"),
         ("c", "udp", b"CMD")],
        [("s", "udp", b"RESP"), ("c", "udp", b"CMD"), ("s", "udp", b"RESP")],
    ]
    convs = []
    for k in range(2 * len(shapes)):
        six = k >= len(shapes)
        client, server = rng.sample(ADDRS6 if six else ADDRS, 2)
        cport, sport = 41000 + k, rng.choice([80, 443, 8080])
        pkts = []
        for who, flags, tag in shapes[k % len(shapes)]:
            src, dst, sp, dp = (client, server, cport, sport) if who == "c" else \
                (server, client, sport, cport)
            body = tag + b" " + payload(rng) if tag else b""
            if flags == "udp":
                upper = UDP(sport=sp, dport=dp) / Raw(body)
            else:
                upper = TCP(sport=sp, dport=dp, flags=flags, seq=0, ack=0, window=0) / Raw(body)
            ip_layer = IPv6(src=src, dst=dst) / upper if six else IP(src=src, dst=dst) / upper
            pkts.append(vlan(rng, ip_layer))
        convs.append(pkts)
    out = []
    while any(convs):
        c = rng.choice([c for c in convs if c])
        out.append(c.pop(0))
    return out


def make_traffic(rng):
    """The frames, and the indices of the malformed ones."""
    frames, bad = [], set()
    for _ in range(PACKETS):
        kind = rng.random()
        data = payload(rng)
        six = rng.random() < 0.35
        if kind < 0.95:
            nh, upper = l4(rng, kind, data, six)
            if six:
                ip_layer = ip6_packet(rng, nh, upper)
            else:
                ip_layer = IP(src=rng.choice(ADDRS), dst=rng.choice(ADDRS)) / upper
            if rng.random() < 0.04:  # a non-first fragment: its bytes are data
                if six:
                    frag = IPv6ExtHdrFragment(nh=nh, offset=rng.randint(1, 100),
                                              m=rng.randint(0, 1))
                    ip_layer = IPv6(src=rng.choice(ADDRS6), dst=rng.choice(ADDRS6)) / frag / \
                        Raw(data)
                else:
                    ip_layer = IP(src=rng.choice(ADDRS), dst=rng.choice(ADDRS), proto=nh,
                                  frag=rng.randint(1, 100)) / Raw(data)
            p = vlan(rng, ip_layer)
        else:
            which = rng.choice(list(MALFORMED))
            p = malformed(rng, which, data)
            MALFORMED[which] += 1
            bad.add(len(frames))
        frames.append(p)
    frames += conversations(random.Random(SEED + 1))
    return frames, bad


def run(engine, work, inp, empty, alert_format="fulcrum", replay=False):
    """One run over `inp`: through net_pcap (its output captured), or with `replay` from the
    capture preloaded in memory (`replay:file=...,loops=1`, which discards what it is sent)."""
    click = os.path.join(work, f"ids-{engine}-{alert_format}.click")
    log = os.path.join(work, f"alerts-{engine}-{alert_format}.jsonl")
    with open(click, "w") as f:
        f.write(f'ids :: IDSMatch("{work}/e2e.rules", ENGINE {engine}, ALERTS "{log}", '
                f'ALERT_FORMAT {alert_format}, STREAM false);\n'
                "FromInput -> ids -> ToOutput;\nids[1] -> Discard;\n")
    out0, out1 = os.path.join(work, f"out0-{engine}.pcap"), os.path.join(work, f"out1-{engine}.pcap")
    stats = os.path.join(work, f"stats-{engine}.json")
    cmd = [FULCRUM, "run", click, "--quiet", "--stats-json", stats,
           "--port", f"replay:file={inp},loops=1" if replay else f"net_pcap0,rx_pcap={inp},tx_pcap={out0}",
           "--port", f"net_pcap1,rx_pcap={empty},tx_pcap={out1}"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    if res.returncode != 0:
        raise RuntimeError(f"fulcrum exited {res.returncode}: {res.stdout} {res.stderr}")
    with open(log) as f:
        alerts = [json.loads(line) for line in f]
    return alerts, json.load(open(stats)), [] if replay else [bytes(p) for p in rdpcap(out0)]


def addr_text(a):
    """An address in its standard text form: RFC 5952 for IPv6, with an IPv4-mapped address's
    last 32 bits dotted (its section 5, as inet_ntop and Python >= 3.13 write it)."""
    a = ipaddress.ip_address(a)
    if a.version == 6 and a.ipv4_mapped is not None:
        return f"::ffff:{a.ipv4_mapped}"
    return str(a)


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
    names = {6: "TCP", 17: "UDP", 1: "ICMP", 58: "IPv6-ICMP"}
    for r in records:
        d = dissect(frames[r["pkt_index"]])
        a = r["alert"]
        expected = {"event_type": "alert", "src_ip": addr_text(d["src"]),
                    "dest_ip": addr_text(d["dst"]),
                    "proto": names.get(d["proto"], str(d["proto"]))}
        if d["tcp"] or d["udp"]:
            expected.update(src_port=d["sport"], dest_port=d["dport"])
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
    frames, bad = make_traffic(rng)
    inp, empty = os.path.join(work, "in.pcap"), os.path.join(work, "empty.pcap")
    wrpcap(inp, frames)
    wrpcap(empty, [])
    frames = rdpcap(inp)  # what fulcrum reads, re-dissected

    want, clean = set(), []
    flows, state = {}, {}
    for i, p in enumerate(frames):
        raw = bytes(p)
        if i in bad:
            continue
        sids = reference_alerts(rules, p, state)
        want |= {(i, s) for s in sids}
        if sids:
            d = dissect(p)
            flows[i] = (addr_text(d["src"]), addr_text(d["dst"]), d["proto"])
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
    alerts, st, _ = run("hyperscan", work, inp, empty, replay=True)
    got = {(a["packet"], a["sid"]) for a in alerts}
    if got != want:
        failures.append(f"replay input: alerts differ from the reference: missing "
                        f"{sorted(want - got)[:10]}, extra {sorted(got - want)[:10]}")
    if st["packets_in"] != len(frames) or not st["balanced"]:
        failures.append(f"replay input: {st['packets_in']} packets in (expected {len(frames)}), "
                        f"balanced {st['balanced']}")
    shutil.rmtree(work)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    ipv6 = sum(1 for i, p in enumerate(frames) if i not in bad and IPv6 in p)
    tagged = sum(1 for i, p in enumerate(frames) if i not in bad and Dot1Q in p)
    print(f"ok: {len(frames)} packets ({ipv6} IPv6, {tagged} VLAN-tagged), {len(want)} alerts on "
          f"{len({i for i, _ in want})} packets identical to the reference for both engines; "
          f"malformed {MALFORMED}; the same alerts as Suricata EVE records and from the "
          f"in-memory replay input")
    return 0


if __name__ == "__main__":
    sys.exit(main())
