#!/usr/bin/env python3
"""End to end: every packet a run receives is accounted for, whatever the run options.

Runs `fulcrum run` with the generator, net_null and pcap ports and checks --stats-json: the
packet budget is met exactly, the balance (in = out + dropped, nothing queued) holds, port
counters add up to the totals, drops by reason add up to `dropped`, and the per-element counts
chain along the pipeline's edges (what leaves an output enters the element it is connected to;
what enters an element leaves by an output or is dropped by a named reason). Covers several
workers, batch sizes 1 and 256, both branch modes, a time-limited run and Classifier demux of a
scapy-built pcap.
"""
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time

from scapy.all import ARP, IP, UDP, Ether, IPv6, Raw, rdpcap

from waits import GUARD_S

FULCRUM = os.path.abspath(os.environ.get("FULCRUM_BIN", "build/fulcrum"))
SOURCE_DIR = os.environ.get("FULCRUM_SOURCE_DIR", os.getcwd())
TIMEOUT_S = GUARD_S  # a hang; a run under ASan on a loaded machine can take a minute

ROUTER_PORTS = ["--port", "gen:size=64,flows=4096,dst=routes,routes=configs/routes-demo.txt",
                "--port", "net_null0,no-rx=1"]
ROUTER_EDGES = [("FromInput@1", 0, "CheckIPHeader@2"), ("CheckIPHeader@2", 0, "IPLookup@3"),
                ("IPLookup@3", 0, "DecIPTTL@4"), ("DecIPTTL@4", 0, "EtherRewrite@5"),
                ("EtherRewrite@5", 0, "ToOutput@6")]

SPLIT_PIPELINE = "FromInput -> s :: RandomSplit(0.3);\ns[0] -> m :: EtherMirror -> t :: ToOutput;\n" \
                 "s[1] -> c :: Counter -> d :: Discard;\n"
SPLIT_EDGES = [("FromInput@1", 0, "s"), ("s", 0, "m"), ("m", 0, "t"), ("s", 1, "c"), ("c", 0, "d")]

CLASSIFY_PIPELINE = """c :: Classifier(12/0800, 12/0806, -);
FromInput -> b :: DropBroadcasts -> c;
c[0] -> chk :: CheckIPHeader -> rt :: IPLookup({routes}) -> ttl :: DecIPTTL -> out :: ToOutput;
c[1] -> arp :: Counter -> mirror :: EtherMirror -> out;
c[2] -> rest :: Discard;
"""
CLASSIFY_EDGES = [("FromInput@1", 0, "b"), ("b", 0, "c"), ("c", 0, "chk"), ("chk", 0, "rt"), ("rt", 0, "ttl"),
                  ("ttl", 0, "out"), ("c", 1, "arp"), ("arp", 0, "mirror"), ("mirror", 0, "out"),
                  ("c", 2, "rest")]


def write_pcap(path, frames):
    """A classic little-endian Ethernet pcap of raw frames (any length, even under 14 bytes)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, raw in enumerate(frames):
            f.write(struct.pack("<IIII", 1700000000 + i // 1000, (i % 1000) * 1000, len(raw), len(raw)))
            f.write(raw)


class Check:
    def __init__(self):
        self.failures = []

    def eq(self, what, got, want):
        if got != want:
            self.failures.append(f"{what}: got {got}, expected {want}")

    def true(self, what, cond, detail=""):
        if not cond:
            self.failures.append(f"{what}{': ' + detail if detail else ''}")


def run(check, label, args, work, cwd=None):
    """Runs fulcrum with --stats-json; returns (stats dict or None, stdout, wall seconds)."""
    stats = os.path.join(work, f"{label.replace(' ', '_').replace('/', '_')}.json")
    cmd = [FULCRUM, "run"] + args + ["--quiet", "--stats-json", stats]
    start = time.monotonic()
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=cwd or work)
    except subprocess.TimeoutExpired:
        check.failures.append(f"{label}: no exit within {TIMEOUT_S} s: {' '.join(cmd)}")
        return None, "", TIMEOUT_S
    wall = time.monotonic() - start
    if res.returncode != 0:
        check.failures.append(f"{label}: exit code {res.returncode}\n  command: {' '.join(cmd)}\n"
                              f"  stderr: {res.stderr.strip()}")
        return None, res.stdout, wall
    with open(stats) as f:
        return json.load(f), res.stdout, wall


def element(st, name):
    for e in st["elements"]:
        if e["name"] == name:
            return e
    raise KeyError(f"no element {name} in the report: {[e['name'] for e in st['elements']]}")


def check_balance(check, label, st, stdout):
    """The invariants every finished run must satisfy, whatever its pipeline."""
    check.true(f"{label}: balanced", st["balanced"] is True, f"balanced={st['balanced']}")
    check.eq(f"{label}: queued", st["queued"], 0)
    check.eq(f"{label}: packets_out + dropped", st["packets_out"] + st["dropped"], st["packets_in"])
    check.eq(f"{label}: sum of port rx", sum(p["rx_packets"] for p in st["ports"]), st["packets_in"])
    check.eq(f"{label}: sum of port tx", sum(p["tx_packets"] for p in st["ports"]), st["packets_out"])
    check.eq(f"{label}: sum of port rx bytes", sum(p["rx_bytes"] for p in st["ports"]), st["bytes_in"])
    check.eq(f"{label}: sum of port tx bytes", sum(p["tx_bytes"] for p in st["ports"]), st["bytes_out"])
    check.eq(f"{label}: sum of drops by reason", sum(st["drops"].values()), st["dropped"])
    per_element = {}
    for e in st["elements"]:
        for reason, n in e["drops"].items():
            per_element[f"{e['name']}/{reason}"] = n
    runtime = {k: v for k, v in st["drops"].items() if k.startswith("runtime/")}
    check.eq(f"{label}: drops by element/reason", {k: v for k, v in st["drops"].items() if k not in runtime},
             per_element)
    for e in st["elements"]:
        if e["class"] == "ToOutput":
            continue
        check.eq(f"{label}: {e['name']} in = outputs + drops", sum(e["out_packets"]) + sum(e["drops"].values()),
                 e["in_packets"])
    to_outputs = [e for e in st["elements"] if e["class"] == "ToOutput"]
    check.eq(f"{label}: ToOutput in = transmitted + runtime drops",
             sum(e["in_packets"] for e in to_outputs), st["packets_out"] + sum(runtime.values()))
    inputs = [e for e in st["elements"] if e["class"] == "FromInput"]
    check.eq(f"{label}: FromInput in", sum(e["in_packets"] for e in inputs), st["packets_in"])
    want = (f"balance: in {st['packets_in']} = out {st['packets_out']} + dropped {st['dropped']} "
            f"+ queued {st['queued']}  [ok]")
    check.true(f"{label}: text summary agrees with the JSON", want in stdout, f"no line {want!r} in:\n{stdout}")


def check_edges(check, label, st, edges):
    """What leaves each output enters the element it is connected to (summed over fan-in)."""
    into = {}
    for src, port, dst in edges:
        outs = element(st, src)["out_packets"]
        check.true(f"{label}: {src} has output {port}", port < len(outs), f"outputs {outs}")
        if port < len(outs):
            into[dst] = into.get(dst, 0) + outs[port]
    for dst, n in into.items():
        check.eq(f"{label}: {dst} in = what its predecessors sent", element(st, dst)["in_packets"], n)


def router_runs(check, work):
    for workers in (1, 2):
        label = f"router, {workers} worker(s)"
        st, out, _ = run(check, label, ["configs/ipv4-router.click"] + ROUTER_PORTS +
                         ["--packets", "1000000", "--workers", str(workers)], work, cwd=SOURCE_DIR)
        if st is None:
            continue
        check.eq(f"{label}: packets_in", st["packets_in"], 1000000)
        check.eq(f"{label}: workers", st["workers"], workers)
        check.eq(f"{label}: generator rx", st["ports"][0]["rx_packets"], 1000000)
        check.eq(f"{label}: no-rx port rx", st["ports"][1]["rx_packets"], 0)
        check.eq(f"{label}: bytes_in (64-byte frames)", st["bytes_in"], 64 * 1000000)
        check_balance(check, label, st, out)
        check_edges(check, label, st, ROUTER_EDGES)
        check.true(f"{label}: Mpps > 0", st["mpps_in"] > 0 and st["mpps_out"] > 0,
                   f"mpps_in {st['mpps_in']}, mpps_out {st['mpps_out']}")
        check.true(f"{label}: duration > 0", st["duration_s"] > 0, f"{st['duration_s']}")
        # Every generated destination lies inside a route to port 0 or 1: nothing is dropped.
        check.eq(f"{label}: dropped", st["dropped"], 0)
        check.true(f"{label}: both ports transmit", all(p["tx_packets"] > 0 for p in st["ports"]),
                   f"{[p['tx_packets'] for p in st['ports']]}")


def split_runs(check, work):
    click = os.path.join(work, "split.click")
    with open(click, "w") as f:
        f.write(SPLIT_PIPELINE)
    variants = {"batch 1": ["--batch", "1"], "batch 256": ["--batch", "256"], "branch split": ["--branch", "split"],
                "branch reuse": ["--branch", "reuse"]}
    totals = {}
    for name, extra in variants.items():
        label = f"RandomSplit, {name}"
        st, out, _ = run(check, label, [click, "--port", "net_null0", "--packets", "200000"] + extra, work)
        if st is None:
            continue
        check.eq(f"{label}: packets_in", st["packets_in"], 200000)
        check_balance(check, label, st, out)
        check_edges(check, label, st, SPLIT_EDGES)
        s, c, d = element(st, "s"), element(st, "c"), element(st, "d")
        share = s["out_packets"][1] / st["packets_in"]
        check.true(f"{label}: RandomSplit(0.3) output 1 share", abs(share - 0.3) <= 0.02, f"{share:.4f}")
        check.eq(f"{label}: Discard drops", d["drops"], {"discarded": s["out_packets"][1]})
        check.eq(f"{label}: Counter count", dict(c["counters"]).get("count"), s["out_packets"][1])
        check.eq(f"{label}: Counter bytes", dict(c["counters"]).get("bytes"), 64 * s["out_packets"][1])
        check.eq(f"{label}: transmitted = RandomSplit output 0", st["packets_out"], s["out_packets"][0])
        batch = int(extra[1]) if extra[0] == "--batch" else 64
        check.eq(f"{label}: batch in the report", st["batch"], batch)
        fi = element(st, "FromInput@1")
        check.true(f"{label}: FromInput batches hold at most {batch} packets",
                   fi["batches"] * batch >= fi["in_packets"], f"{fi['batches']} batches, {fi['in_packets']} packets")
        if batch == 1:
            check.eq(f"{label}: FromInput batches", fi["batches"], fi["in_packets"])
        totals[name] = (st["packets_out"], st["dropped"],
                        [(e["name"], e["in_packets"], e["out_packets"], e["drops"]) for e in st["elements"]])
    if "branch split" in totals and "branch reuse" in totals:
        check.eq("RandomSplit: split mode forwards what reuse mode forwards", totals["branch split"],
                 totals["branch reuse"])
    for name in ("batch 1", "batch 256"):
        if name in totals and "branch reuse" in totals:
            check.eq(f"RandomSplit: {name} forwards what batch 64 forwards", totals[name], totals["branch reuse"])


def timed_run(check, work):
    click = os.path.join(work, "echo.click")
    with open(click, "w") as f:
        f.write("FromInput -> EtherMirror -> ToOutput;\n")
    label = "--seconds 0.5"
    # The run ends by itself (TIMEOUT_S guards a hang) and not before the time asked; how long
    # after depends on the machine's load, so no upper bound but the process's own lifetime.
    st, out, wall = run(check, label, [click, "--port", "net_null0", "--seconds", "0.5"], work)
    if st is None:
        return
    check.true(f"{label}: duration_s", 0.4 <= st["duration_s"] <= wall,
               f"{st['duration_s']} (process lived {wall:.2f} s)")
    check.true(f"{label}: packets flowed", st["packets_in"] > 0, f"{st['packets_in']}")
    check_balance(check, label, st, out)


def step_run(check, work):
    """The generator's step (rate=2000, flat out after 0.3 s: more packets than 2000 pps could
    give), and the cycles per element every report carries."""
    click = os.path.join(work, "echo.click")
    label = "gen step"
    st, out, _ = run(check, label, [click, "--port", "gen:rate=2000,step_after=0.3,step_rate=0",
                                    "--seconds", "1"], work)
    if st is None:
        return
    check.true(f"{label}: the rate stepped up", st["packets_in"] > 2000 * st["duration_s"] + 512,
               f"{st['packets_in']} packets in {st['duration_s']} s")
    check_balance(check, label, st, out)
    mirror = [e for e in st["elements"] if e["class"] == "EtherMirror"]
    check.true(f"{label}: EtherMirror reported", len(mirror) == 1, f"{st['elements']}")
    for e in mirror:
        check.true(f"{label}: cycles counted", e["cycles"] > 0 and e["cycles_per_packet"] > 0 and
                   e["cycles_per_batch"] >= e["cycles_per_packet"] and e["ns_per_packet"] > 0, f"{e}")
    check.true(f"{label}: cycles in the summary", "cyc/pkt" in out, out)


def build_classify_traffic():
    """Frames of every kind, shuffled; returns (frames, expected demux counts)."""
    rng = random.Random(7)
    src, dst = "02:aa:00:00:00:01", "02:bb:00:00:00:02"
    kinds = {"ipv4": [], "arp-broadcast": [], "arp-unicast": [], "ipv6": [], "garbage": [], "short": []}
    for i in range(300):
        kinds["ipv4"].append(bytes(Ether(src=src, dst=dst) / IP(src=f"10.0.{i // 200}.{i % 200 + 1}",
                                                                dst="192.0.2.1", ttl=64) /
                                   UDP(sport=1000 + i, dport=53) / Raw(b"x" * (i % 50))))
    for i in range(70):
        kinds["arp-broadcast"].append(bytes(Ether(src=src, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, pdst=f"10.1.0.{i}")))
    for i in range(45):
        kinds["arp-unicast"].append(bytes(Ether(src=src, dst=dst) / ARP(op=2, psrc=f"10.1.0.{i}", hwdst=dst)))
    for i in range(60):
        kinds["ipv6"].append(bytes(Ether(src=src, dst=dst) / IPv6(dst=f"2001:db8::{i + 1:x}") / UDP(dport=9)))
    for _ in range(80):
        kinds["garbage"].append(rng.randbytes(rng.randint(14, 200)))
    for n in range(1, 14):
        kinds["short"].append(rng.randbytes(n))
    frames = [(k, f) for k, fs in kinds.items() for f in fs]
    rng.shuffle(frames)
    expect = {"broadcast": 0, "truncated": 0, "c0": 0, "c1": 0, "c2": 0}
    for _, raw in frames:
        if len(raw) < 14:
            expect["truncated"] += 1
        elif raw[:6] == b"\xff" * 6:
            expect["broadcast"] += 1
        elif raw[12:14] == b"\x08\x00":
            expect["c0"] += 1
        elif raw[12:14] == b"\x08\x06":
            expect["c1"] += 1
        else:
            expect["c2"] += 1
    return [f for _, f in frames], kinds, expect


def classify_run(check, work):
    routes = os.path.join(work, "default-route.txt")
    with open(routes, "w") as f:
        f.write("0.0.0.0/0 0\n")
    click = os.path.join(work, "classify.click")
    with open(click, "w") as f:
        f.write(CLASSIFY_PIPELINE.format(routes=routes))
    frames, kinds, expect = build_classify_traffic()
    inp, outp = os.path.join(work, "classify-in.pcap"), os.path.join(work, "classify-out.pcap")
    write_pcap(inp, frames)
    label = "Classifier demux"
    st, out, _ = run(check, label, [click, "--port", f"net_pcap0,rx_pcap={inp},tx_pcap={outp}"], work)
    if st is None:
        return
    check.eq(f"{label}: packets_in", st["packets_in"], len(frames))
    check_balance(check, label, st, out)
    check_edges(check, label, st, CLASSIFY_EDGES)
    check.eq(f"{label}: DropBroadcasts drops", element(st, "b")["drops"],
             {k: v for k, v in (("broadcast", expect["broadcast"]), ("truncated", expect["truncated"])) if v})
    check.eq(f"{label}: Classifier outputs", element(st, "c")["out_packets"], [expect["c0"], expect["c1"], expect["c2"]])
    check.eq(f"{label}: Classifier drops", element(st, "c")["drops"], {})
    check.eq(f"{label}: ARP Counter count", dict(element(st, "arp")["counters"]).get("count"), expect["c1"])
    check.eq(f"{label}: ARP Counter bytes", dict(element(st, "arp")["counters"]).get("bytes"),
             sum(len(f) for f in kinds["arp-unicast"]))
    check.eq(f"{label}: Discard drops", element(st, "rest")["drops"], {"discarded": expect["c2"]} if expect["c2"] else {})
    check.eq(f"{label}: IPv4 frames routed", element(st, "ttl")["out_packets"][0], len(kinds["ipv4"]))
    check.eq(f"{label}: packets_out", st["packets_out"], len(kinds["ipv4"]) + len(kinds["arp-unicast"]))
    sent = rdpcap(outp)
    check.eq(f"{label}: frames in the output pcap", len(sent), st["packets_out"])
    arps = [p for p in sent if ARP in p]
    check.eq(f"{label}: ARP replies echoed", len(arps), len(kinds["arp-unicast"]))
    check.true(f"{label}: echoed ARP MACs swapped",
               all(p.src == "02:bb:00:00:00:02" and p.dst == "02:aa:00:00:00:01" for p in arps))
    check.true(f"{label}: routed IPv4 TTL decremented", all(p[IP].ttl == 63 for p in sent if IP in p))


def main():
    work = tempfile.mkdtemp(prefix="fulcrum-e2e-acct-")
    check = Check()
    try:
        router_runs(check, work)
        split_runs(check, work)
        timed_run(check, work)
        step_run(check, work)
        classify_run(check, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if check.failures:
        print("\n".join(check.failures), file=sys.stderr)
        return 1
    print("ok: budgets met, balance holds, ports/elements/drops add up in every run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
