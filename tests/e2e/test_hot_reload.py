#!/usr/bin/env python3
"""Hot reload under full load: the IPv4 router on 2 workers, fed as fast as the generator goes,
has its 500k-route table replaced 20 times through POST /api/reload, once by SIGHUP, and once
with a broken file. Checks: no packet lost (the balance holds, nothing dropped), every packet
routed by the old table or the new one, never by a mix (the tables are made so that a lookup
mixing them, or reading a freed one, ends on a poison port or as no-route), once a reload has
returned the old table routes nothing more, and a broken file is refused with FILE:LINE while
the table in service stays."""
import json
import os
import random
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from fulcrum_e2e import Workdir  # noqa: E402
from live_run import LiveRun  # noqa: E402
from waits import GUARD_S  # noqa: E402

ROUTES = 500_000
BLOCKS = 1024           # /24 blocks the traffic goes to (10.B.C.0/24)
HOSTS_PER_BLOCK = 4     # /32 destinations per block
RELOADS = 20
# Ports: 0 the generator, 1 = table A's answer, 2 = table B's answer, 3 = poison (filler routes).
PORT_A, PORT_B, POISON = 1, 2, 3
POLL_S = 0.05
MAX_POLLS = int(GUARD_S / POLL_S)  # a bound on every wait (a hang), not a timing assertion
RUN_BOUND_S = 900       # --seconds: the run ends by SIGINT long before


def block(i):
    return f"10.{i // 256}.{i % 256}"


def filler(rng, count, first_octets, shortest, longest):
    """`count` distinct prefixes with first octet in first_octets, to the poison port."""
    seen = set()
    while len(seen) < count:
        length = rng.randint(shortest, longest)
        addr = rng.choice(first_octets) << 24 | rng.getrandbits(24)
        addr &= (0xFFFFFFFF << (32 - length)) & 0xFFFFFFFF
        seen.add((addr, length))
    return [f"{a >> 24}.{a >> 16 & 255}.{a >> 8 & 255}.{a & 255}/{n} {POISON}" for a, n in seen]


def make_tables(work):
    rng = random.Random(7)
    hosts = [f"{block(b)}.{1 + 16 * h}" for b in range(BLOCKS) for h in range(HOSTS_PER_BLOCK)]
    # Table A: every destination by its own /32 (a TBL8 group per block) to port A.
    a = [f"{h}/32 {PORT_A}" for h in hosts]
    a += filler(rng, ROUTES - len(a), list(range(20, 60)), 12, 24)
    # Table B: every destination block as a /24 (TBL24 only) to port B, and filler /32s in other
    # blocks first, so that B's TBL8 groups where A's point hold poison or nothing.
    b = [f"{block(i)}.0/24 {PORT_B}" for i in range(BLOCKS)]
    b += [f"11.{i // 256}.{i % 256}.9/32 {POISON}" for i in range(2 * BLOCKS)]
    b = b[BLOCKS:] + b[:BLOCKS]
    b += filler(rng, ROUTES - len(b), list(range(60, 100)), 12, 24)
    paths = {}
    for name, lines in (("a", a), ("b", b)):
        paths[name] = work.file(f"routes-{name}.txt", "\n".join(lines) + "\n")
    paths["dst"] = work.file("dst.txt", "".join(f"{h}/32 {PORT_A}\n" for h in hosts))
    paths["broken"] = work.file("broken.txt", f"{block(0)}.0/24 {PORT_B}\n# fine so far\n10.0.0/24 1\n")
    return paths


RELOAD_TIMEOUT_S = 120  # one reload of 500k routes (seconds under a sanitizer)


def start_run(work, paths):
    """The router on two workers, the generator as fast as it goes, the control plane on."""
    config = work.file("router.click",
                       f"FromInput -> CheckIPHeader -> rt :: IPLookup({work.file('current.txt')}) "
                       "-> DecIPTTL -> ToOutput;\n")
    with open(paths["a"]) as f, open(work.file("current.txt"), "w") as out:
        out.write(f.read())
    ports = [f"gen:size=64,flows=4096,dst=routes,routes={paths['dst']}"]
    ports += [f"net_null{i},no-rx=1" for i in range(3)]
    return LiveRun(config, ports, seconds=RUN_BOUND_S,
                   extra=["--workers", "2", "--stats-json", work.file("stats.json")])


def tx(run, seq_after=0):
    """Per-port transmitted packets from the first live state numbered above seq_after."""
    for _ in range(MAX_POLLS):
        s = run.stats()
        if s is not None and s["seq"] > seq_after:
            return s["seq"], [p["tx_packets"] for p in s["report"]["ports"]]
        time.sleep(POLL_S)
    raise RuntimeError("the live state did not move")


def settled_tx(run):
    """Counters from a state whose snapshots were all asked for after this call."""
    seq, _ = tx(run)
    return tx(run, seq + 1)


def check_switch(run, new_port, old_port, what, failures):
    """After a reload has returned: the old table's port receives nothing more, the new one does."""
    seq, before = settled_tx(run)
    for _ in range(MAX_POLLS):
        seq, after = tx(run, seq)
        if after[new_port] > before[new_port]:
            break
    if after[old_port] != before[old_port]:
        failures.append(f"{what}: port {old_port} still got {after[old_port] - before[old_port]} "
                        "packets after the reload returned")
    if after[new_port] <= before[new_port]:
        failures.append(f"{what}: port {new_port} got nothing after the reload")


def main():
    work = Workdir("reload")
    paths = make_tables(work)
    run = start_run(work, paths)
    failures = []
    try:
        settled_tx(run)
        took = []
        for i in range(RELOADS):
            to_b = i % 2 == 0
            status, out = run.reload({"element": "rt", "file": paths["b" if to_b else "a"]},
                                     RELOAD_TIMEOUT_S)
            if status != 200 or not out.get("ok"):
                failures.append(f"reload {i}: HTTP {status}: {out}")
                break
            took += [int(m) for m in re.findall(r"\((\d+) ms", out["reloaded"])]
            new, old = (PORT_B, PORT_A) if to_b else (PORT_A, PORT_B)
            check_switch(run, new, old, f"reload {i}", failures)
        print(f"{len(took)} reloads of {ROUTES} routes: {min(took, default=0)}..{max(took, default=0)} ms each")

        status, out = run.reload({"element": "rt", "file": paths["broken"]}, RELOAD_TIMEOUT_S)
        if status != 400 or f"{paths['broken']}:3" not in out.get("error", ""):
            failures.append(f"broken file: expected HTTP 400 naming {paths['broken']}:3, got {status}: {out}")
        status, out = run.reload({"element": "nosuch"})
        if status != 400 or "rt" not in out.get("error", ""):
            failures.append(f"unknown element: expected 400 listing rt, got {status}: {out}")
        check_switch(run, PORT_A, PORT_B, "after the refused reload (A stays)", failures)

        # SIGHUP re-reads the file the table came from: current.txt, now holding table B.
        status, out = run.reload({"element": "rt", "file": work.file("current.txt")},
                                 RELOAD_TIMEOUT_S)
        if status != 200:
            failures.append(f"reload of current.txt: HTTP {status}: {out}")
        with open(paths["b"]) as f, open(work.file("current.txt"), "w") as cur:
            cur.write(f.read())
        run.proc.send_signal(signal.SIGHUP)
        for _ in range(MAX_POLLS):
            if "reload (SIGHUP) done" in run.stderr():
                break
            time.sleep(POLL_S)
        else:
            failures.append(f"SIGHUP: no reload reported: {run.stderr()}")
        check_switch(run, PORT_B, PORT_A, "SIGHUP", failures)
    finally:
        code = run.stop()

    if code != 0:
        return work.finish(failures + [f"exit status {code}: {run.stderr()}"])
    with open(work.file("stats.json")) as f:
        stats = json.load(f)
    tx = [p["tx_packets"] for p in stats["ports"]]
    print(f"packets in {stats['packets_in']}, out {stats['packets_out']}, per port {tx}, "
          f"dropped {stats['dropped']}, reloads {stats['reloads']}, refused {stats['reload_failures']}")
    if not stats["balanced"]:
        failures.append("the packet balance does not hold")
    if stats["dropped"] != 0:
        failures.append(f"{stats['dropped']} packets dropped: {stats['drops']}")
    if tx[POISON] != 0:
        failures.append(f"{tx[POISON]} packets routed by neither table (a mix or a freed table)")
    if stats["packets_out"] != tx[PORT_A] + tx[PORT_B]:
        failures.append("packets left by ports other than the two tables' ports")
    if stats["reloads"] != RELOADS + 2 or stats["reload_failures"] != 1:
        failures.append(f"reload counts {stats['reloads']}/{stats['reload_failures']}, "
                        f"expected {RELOADS + 2}/1")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
