#!/usr/bin/env python3
"""End to end: pipelined and hybrid placements (docs/placement.md) forward what the cloned run
forwards.

The IPv4 router and the IPv6 router (configs/), and a pipeline whose branches merge again
(Classifier: IPv4 routed, ARP mirrored, into one ToOutput), each run on a scapy-built pcap of
many flows (every packet carries its flow and sequence number in the payload) and a few
packets the router drops, once cloned on one worker (the reference) and then with
--placement: cloned on two workers; a 1+1 pipeline cut at each of several elements; with 3
workers (--oversubscribe where the machine has fewer CPUs) a 3-stage cut and the hybrids 1+2
and 2+1; and a 1+1 cut over rings of 63 packets, where every full batch waits (back-pressure).
Checks: with one worker transmitting (clone 1, a cut of a linear pipeline with one worker a
stage) each output port's packets are byte-identical to the reference, in the same order;
otherwise (several workers transmit) the same packets per port and every flow in order; drops
by reason as the reference; the balance holds; the rings report every packet they carried
(enqueued = dequeued = the packets entering the stage after), and each worker its stage. Where
branches merge, packets of different branches may interleave otherwise than in the cloned run
(a branch left in stage 0 transmits from the stage-0 worker; a cut element with several input
edges gets a ring for each); each flow stays in order. A run with a packet budget takes exactly
the budget. A placement that does not fit the pipeline or the workers is refused with a message
naming the problem, by run and by check.
"""
import ipaddress
import os
import random
import struct
import sys

from scapy.all import ARP, IP, UDP, Ether, IPv6, Raw, rdpcap

import fulcrum_e2e as e2e

FLOWS = 48
PER_FLOW = 40
CPUS = len(os.sched_getaffinity(0))


def prefixes(routes_file, count):
    out = []
    for line in open(routes_file):
        line = line.split("#")[0].strip()
        if line:
            out.append(ipaddress.ip_network(line.split()[0]))
        if len(out) == count:
            break
    return out


def flow_frames(family, dsts):
    """FLOWS flows of PER_FLOW packets, interleaved at random; payload = (flow, seq)."""
    rng = random.Random(11)
    left = [PER_FLOW] * FLOWS
    seq = [0] * FLOWS
    frames = []
    while any(left):
        f = rng.choice([i for i in range(FLOWS) if left[i]])
        left[f] -= 1
        dst = str(dsts[f % len(dsts)].network_address + 1)
        if family == 4:
            l3 = IP(src=f"192.168.{f // 250}.{f % 250 + 1}", dst=dst, ttl=64)
        else:
            l3 = IPv6(src=f"2001:db8::{f + 1:x}", dst=dst, hlim=64)
        payload = struct.pack("!II", f, seq[f]) + bytes(rng.randrange(0, 40))
        frames.append(Ether(src="02:aa:00:00:00:01", dst="02:bb:00:00:00:01") / l3 /
                      UDP(sport=1000 + f, dport=2000) / Raw(payload))
        seq[f] += 1
        if len(frames) % 97 == 0:  # a packet the router drops: TTL / hop limit expired
            ttl = {"ttl": 1} if family == 4 else {"hlim": 1}
            frames.append(Ether(src="02:aa:00:00:00:01", dst="02:bb:00:00:00:01") /
                          (IP if family == 4 else IPv6)(dst=dst, **ttl) / UDP() / Raw(b"x" * 8))
        if family == 4 and len(frames) % 89 == 0:  # ARP (mirrored by the merge pipeline)
            frames.append(Ether(dst="ff:ff:ff:ff:ff:ff", src="02:aa:00:00:00:02") /
                          ARP(pdst="10.0.0.1", psrc="10.0.0.2"))
    return frames


def flow_seq(raw, family):
    """(flow, seq) from a routed UDP packet's payload, None for another packet."""
    p = Ether(raw)
    layer = IP if family == 4 else IPv6
    if layer not in p or UDP not in p:
        return None
    data = bytes(p[UDP].payload)
    return struct.unpack("!II", data[:8]) if len(data) >= 8 else None


MERGE_PIPELINE = """c :: Classifier(12/0800, 12/0806, -);
FromInput -> c;
c[0] -> chk :: CheckIPHeader -> rt :: IPLookup({routes}) -> ttl :: DecIPTTL -> out :: ToOutput;
c[1] -> arp :: Counter -> mirror :: EtherMirror -> out;
c[2] -> rest :: Discard;
"""

CASES = [
    # name, config, family, cuts for 1+1 (and whether one worker transmits everything, in the
    # order of the cloned run: not when a branch that stays in stage 0 merges with one after the
    # cut, nor when the cut element has several input edges, a ring each), a 3-stage cut
    ("ipv4-router", os.path.join(e2e.SOURCE_DIR, "configs", "ipv4-router.click"), 4,
     [("IPLookup", True), ("CheckIPHeader", True), ("ToOutput", True)], "cut=IPLookup,cut=EtherRewrite"),
    ("ipv6-router", os.path.join(e2e.SOURCE_DIR, "configs", "ipv6-router.click"), 6,
     [("IP6Lookup", True), ("DecIP6HLim", True)], "cut=CheckIP6Header,cut=DecIP6HLim"),
    ("merge", None, 4, [("rt", False), ("out", False)], "cut=rt,cut=out"),
]


def outputs(work, tag):
    return [work.file(f"{tag}-out{p}.pcap") for p in (0, 1)]


def run(work, config, tag, workers, placement, extra=()):
    outs = outputs(work, tag)
    ports = [e2e.pcap_port(0, work.file("in.pcap"), outs[0]), e2e.pcap_port(1, work.file("empty.pcap"), outs[1])]
    extra = ["--workers", str(workers), *extra]
    if placement:
        extra += ["--placement", placement]
    res, stats = e2e.run_fulcrum(work, config, ports, extra)
    frames = [[bytes(p) for p in rdpcap(o)] for o in outs] if stats else None
    return res, stats, frames


def check_rings(name, stats, placement, failures):
    if stats["placement"] != (placement or "clone"):
        failures.append(f"{name}: placement reported as {stats['placement']!r}")
    if not placement or placement == "clone":
        if stats["rings"]:
            failures.append(f"{name}: a cloned run reports rings")
        return
    cores = [int(n) for n in placement.split("cores=")[1].split("+")]
    if stats["stages"] != len(cores):
        failures.append(f"{name}: {stats['stages']} stages reported, {len(cores)} expected")
    stage_of = [w["stage"] for w in stats["per_worker"]]
    want = [s for s, n in enumerate(cores) for _ in range(n)]
    if stage_of != want:
        failures.append(f"{name}: worker stages {stage_of}, expected {want}")
    for r in stats["rings"]:
        if r["enqueued"] != r["dequeued"]:
            failures.append(f"{name}: ring {r} did not give back what it took")
        if r["max_occupancy"] > r["capacity"]:
            failures.append(f"{name}: ring {r} held more than its capacity")
        if r["dequeued"] > 0 and not r["dequeue_cycles_per_packet"] > 0:
            failures.append(f"{name}: ring {r} took packets in no time")
    for w, ws in enumerate(stats["per_worker"]):
        if ws["cpu_s"] <= 0:
            failures.append(f"{name}: worker {w} reports no CPU time")
        into = sum(r["dequeued"] for r in stats["rings"] if r["consumer"] == w)
        if ws["stage"] > 0 and (ws["rx_packets"] != 0 or ws["stage_packets"] != into):
            failures.append(f"{name}: worker {w} of stage {ws['stage']} received {ws['rx_packets']} "
                            f"from ports, stage_packets {ws['stage_packets']} != {into} from its rings")
        if ws["stage"] > 0 and into > 0 and not ws["busy_cycles"] > 0:
            failures.append(f"{name}: worker {w} of stage {ws['stage']} took {into} packets from its "
                            f"rings in no busy loop iteration")
    if not any(r["enqueued"] for r in stats["rings"]):
        failures.append(f"{name}: no packet crossed a ring")


def compare(name, family, ref, got, ordered, failures):
    for port in (0, 1):
        a, b = ref[port], got[port]
        if ordered:
            if a != b:
                first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
                failures.append(f"{name}: port {port} differs from the cloned run at packet {first} "
                                f"({len(b)} packets, {len(a)} expected)")
            continue
        if sorted(a) != sorted(b):
            failures.append(f"{name}: port {port} does not carry the cloned run's packets "
                            f"({len(b)} packets, {len(a)} expected)")
        last = {}
        for raw in b:
            fs = flow_seq(raw, family)
            if fs is None:
                continue
            if fs[1] <= last.get(fs[0], -1):
                failures.append(f"{name}: port {port}: flow {fs[0]} packet {fs[1]} after {last[fs[0]]}")
                break
            last[fs[0]] = fs[1]


def check_case(work, case, failures):
    name, config, family, cuts, three = case
    if config is None:
        config = work.file("merge.click", MERGE_PIPELINE.format(
            routes=os.path.join(e2e.SOURCE_DIR, "configs", "routes-demo.txt")))
    routes = os.path.join(e2e.SOURCE_DIR, "configs", "routes-demo.txt" if family == 4 else "routes6-demo.txt")
    work.pcap("in.pcap", flow_frames(family, prefixes(routes, 64)))
    work.pcap("empty.pcap", [])
    _, ref_stats, ref = run(work, config, f"{name}-ref", 1, None)
    if ref_stats is None:
        failures.append(f"{name}: the cloned reference run failed")
        return
    routed = sum(1 for port in ref for raw in port if flow_seq(raw, family))
    if routed < FLOWS * PER_FLOW // 2 or ref_stats["dropped"] == 0:
        failures.append(f"{name}: the reference routed {routed} and dropped {ref_stats['dropped']}: "
                        "the traffic does not exercise the router")
    placements = [(2, "clone", False, ())] + [(2, f"cut={c},cores=1+1", one_edge, ()) for c, one_edge in cuts]
    # A ring of 63 packets: a batch of 64 never fits at once, so the producer waits (back-pressure)
    # and still loses nothing.
    placements.append((2, f"cut={cuts[0][0]},cores=1+1", cuts[0][1], ("--ring-size", "64")))
    # Three workers: on fewer CPUs they share them (--oversubscribe), slower but just as correct.
    more = ("--oversubscribe",) if CPUS < 3 else ()
    placements += [(3, f"{three},cores=1+1+1", cuts[0][1], more),
                   (3, f"cut={cuts[0][0]},cores=1+2", False, more),
                   (3, f"cut={cuts[0][0]},cores=2+1", False, more)]
    for i, (workers, placement, ordered, extra) in enumerate(placements):
        tag = f"{name} --workers {workers} --placement {placement} {' '.join(extra)}"
        res, stats, got = run(work, config, f"{name}-{i}", workers, placement, extra)
        if stats is None:
            failures.append(f"{tag}: run failed ({res.returncode}): {res.stderr.strip()[-400:]}")
            continue
        if not stats["balanced"] or stats["queued"] != 0:
            failures.append(f"{tag}: balance does not hold: {stats['packets_in']} in, "
                            f"{stats['packets_out']} out, {stats['dropped']} dropped, {stats['queued']} queued")
        if stats["drops"] != ref_stats["drops"]:
            failures.append(f"{tag}: drops {stats['drops']} != cloned {ref_stats['drops']}")
        check_rings(tag, stats, placement, failures)
        if "--ring-size" in extra and not any(r["back_pressure"] > 0 and r["capacity"] == 63
                                              for r in stats["rings"]):
            failures.append(f"{tag}: no back-pressure counted on a ring of 63: {stats['rings']}")
        compare(tag, family, ref, got, ordered, failures)


def check_budget(work, failures):
    """--packets with the generator: stage 0 takes exactly the budget, the later stage drains
    every ring before the run ends."""
    config = os.path.join(e2e.SOURCE_DIR, "configs", "ipv4-router.click")
    routes = os.path.join(e2e.SOURCE_DIR, "configs", "routes-demo.txt")
    ports = [f"gen:size=64,flows=4096,dst=routes,routes={routes}", "net_null0,no-rx=1"]
    budget = 300000
    res, stats = e2e.run_fulcrum(work, config, ports, ["--workers", "2", "--packets", str(budget),
                                                       "--placement", "cut=DecIPTTL,cores=1+1"])
    if stats is None:
        failures.append(f"generator run with --packets failed ({res.returncode}): {res.stderr[-400:]}")
        return
    if stats["packets_in"] != budget or not stats["balanced"] or stats["queued"] != 0:
        failures.append(f"generator run: {stats['packets_in']} in (budget {budget}), balanced "
                        f"{stats['balanced']}, queued {stats['queued']}")
    crossed = sum(r["dequeued"] for r in stats["rings"])
    if crossed != stats["packets_out"] + stats["dropped"] - sum(
            v for k, v in stats["drops"].items() if k.startswith("CheckIPHeader")):
        failures.append(f"generator run: {crossed} packets crossed the ring, {stats['packets_out']} out, "
                        f"drops {stats['drops']}")
    check_rings("generator run", stats, "cut=DecIPTTL,cores=1+1", failures)


def check_errors(work, failures):
    config = os.path.join(e2e.SOURCE_DIR, "configs", "ipv4-router.click")
    ports = ["--port", e2e.pcap_port(0, work.file("in.pcap"), work.file("e0.pcap")),
             "--port", e2e.pcap_port(1, work.file("empty.pcap"), work.file("e1.pcap"))]
    cases = [
        (["--workers", "2", "--placement", "cut=IPLokup,cores=1+1"], 1,
         "has no element 'IPLokup' (did you mean 'IPLookup"),
        (["--workers", "2", "--placement", "cut=IPLookup,cores=2+1"], 1,
         "cores=2+1 adds up to 3 workers but the run has 2 (--workers)"),
        (["--workers", "2", "--placement", "cut=IPLookup,cores=2+0"], 2, "stage 1 has no cores"),
        (["--workers", "2", "--placement", "cut=IPLookup"], 2, "no cores="),
        (["--workers", "2", "--placement", "cut=FromInput@1,cores=1+1"], 1, "ipv4-router.click:"),
        (["--workers", "2", "--placement", "cut=IPLookup,cores=1+1", "--ring-size", "100"], 2,
         "--ring-size needs a power of two 64..16384"),
    ]
    for extra, code, want in cases:
        res = e2e.run_cmd(["run", config, "--quiet", *ports, *extra])
        if res.returncode != code or want not in res.stderr:
            failures.append(f"run {' '.join(extra)}: exit {res.returncode} (want {code}), stderr "
                            f"without {want!r}: {res.stderr.strip()[:300]}")
    res = e2e.run_cmd(["check", config, "--ports", "2", "--workers", "2", "--placement", "cut=IPLookup,cores=1+1"])
    if res.returncode != 0 or "stage 1 (1 worker): IPLookup@3 DecIPTTL@4 EtherRewrite@5 ToOutput@6 " \
            "IPLookup@3/ring" not in res.stdout:
        failures.append(f"check --placement: exit {res.returncode}: {res.stdout} {res.stderr}")
    res = e2e.run_cmd(["check", config, "--ports", "2", "--workers", "3", "--placement", "cut=IPLookup,cores=1+2"])
    if res.returncode != 0 or "stage 1 (2 workers): IPLookup@3" not in res.stdout:
        failures.append(f"check of a hybrid: exit {res.returncode}: {res.stdout} {res.stderr}")
    res = e2e.run_cmd(["check", config, "--ports", "2", "--workers", "3", "--placement", "cut=IPLookup,cores=1+1"])
    if res.returncode != 1 or "adds up to 2 workers but the run has 3" not in res.stderr:
        failures.append(f"check with cores not adding up: exit {res.returncode}: {res.stderr}")
    res = e2e.run_cmd(["check", config, "--ports", "2", "--workers", "3", "--placement",
                       "cut=EtherRewrite,cut=IPLookup,cores=1+1+1"])
    if res.returncode != 1 or "list the cuts in the order packets reach them" not in res.stderr \
            or "ipv4-router.click:" not in res.stderr:
        failures.append(f"check with cuts out of order: exit {res.returncode}: {res.stderr}")


def main():
    work = e2e.Workdir("placement")
    failures = []
    for case in CASES:
        check_case(work, case, failures)
    check_budget(work, failures)
    check_errors(work, failures)
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
