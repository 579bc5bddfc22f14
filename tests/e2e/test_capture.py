#!/usr/bin/env python3
"""End to end: capture taps. The IPv4 router of ip_router.py (its pipeline and traffic) from a
pcap, with `--capture` on two of its edges and, separately, with a Tee + ToDump pipeline, on one
worker and on two (two RX queues, both writing the one capture file).

Checks, with scapy as the independent reader and tshark for well-formedness: a capture holds
exactly the packets that crossed its edge (after EtherRewrite: what the output ports' pcaps
hold, in order on one worker, the same packets on two; after IPLookup: the input frames that
got a route, unchanged); snaplen and limit are honoured (the record keeps the whole length);
the Tee's copies count as created and the balance in --stats-json holds; a capture cut short by
a file size limit (a full disk) is reported as output lost (exit 4) and still reads; bad
--capture arguments and unwritable files are refused with did-you-mean and the file location.
"""
import json
import resource
import signal
import subprocess
import sys

from scapy.all import IP, UDP, Ether, Raw, rdpcap
from scapy.utils import RawPcapReader

import fulcrum_e2e as e2e
import ip_router

F = ip_router.IPV4
# ip_router.PIPELINE's elements are anonymous: FromInput@1 CheckIPHeader@2 IPLookup@3 DecIPTTL@4
# EtherRewrite@5 ToOutput@6.
REWRITE, LOOKUP = "EtherRewrite@5", "IPLookup@3"
SNAPLEN, LIMIT = 60, 25
REPEAT = 8
FSIZE_LIMIT = 256 * 1024  # the "disk" of the write-failure run
TIMEOUT_S = 120


def records(path):
    """(bytes, original length) of every record, as scapy reads them."""
    return [(bytes(data), meta.wirelen) for data, meta in RawPcapReader(path)]


class Router:
    def __init__(self, work):
        self.work = work
        self.good, self.bad, frames = ip_router.traffic(F)
        # Repeated: enough bytes that every worker hands the file several full buffers.
        self.frames = frames * REPEAT
        routes = work.file("routes.txt", F.routes)
        self.text = ip_router.PIPELINE.format(
            check=F.check, lookup=F.lookup, dec=F.dec, routes=routes, algo="",
            m0s=ip_router.MAC[0][0], m0d=ip_router.MAC[0][1], m1s=ip_router.MAC[1][0],
            m1d=ip_router.MAC[1][1])
        self.click = work.file("router.click", self.text)
        self.inp = work.pcap("in.pcap", self.frames)
        # Two workers: port 0 reads two files, one RX queue each, one queue per worker.
        self.halves = [work.pcap("in-a.pcap", self.frames[0::2]), work.pcap("in-b.pcap", self.frames[1::2])]
        self.empty = work.pcap("empty.pcap", [])
        routed = {bytes(f) for f in self.good + self.bad[F.expired_reason]}
        self.after_lookup = [bytes(f) for f in self.frames if bytes(f) in routed]

    def run(self, tag, workers, extra=(), click=None):
        """(process, stats or None, transmitted frames: port 0's then port 1's)."""
        out0, out1 = self.work.file(f"{tag}-out0.pcap"), self.work.file(f"{tag}-out1.pcap")
        rx = self.inp if workers == 1 else ",rx_pcap=".join(self.halves)
        ports = [e2e.pcap_port(0, rx, out0), e2e.pcap_port(1, self.empty, out1)]
        res, stats = e2e.run_fulcrum(self.work, click or self.click, ports,
                                     ["--workers", str(workers), *extra])
        sent = [[bytes(p) for p in rdpcap(o)] for o in (out0, out1)] if stats else [[], []]
        return res, stats, sent


def same_packets(label, got, want, ordered, failures):
    if (got if ordered else sorted(got)) != (want if ordered else sorted(want)):
        failures.append(f"{label}: {len(got)} packets, not the {len(want)} expected"
                        f"{' in order' if ordered else ''}")


def check_balance(label, stats, failures, created=0):
    s = stats
    if not s["balanced"] or s["packets_in"] + s["packets_created"] != s["packets_out"] + s["dropped"]:
        failures.append(f"{label}: balance: in {s['packets_in']} + created {s['packets_created']} "
                        f"!= out {s['packets_out']} + dropped {s['dropped']}")
    if s["packets_created"] != created:
        failures.append(f"{label}: {s['packets_created']} packets created, expected {created}")


def check_tap(label, cap, sent, ordered, failures):
    """The capture after EtherRewrite holds what the ports transmitted."""
    recs = records(cap)
    if any(len(d) != n for d, n in recs):
        failures.append(f"{label}: a record lost bytes without a snaplen")
    got = [d for d, _ in recs]
    if ordered:  # per port, the capture's order is the transmit order
        for port in (0, 1):
            mine = [d for d in got if Ether(d).dst == ip_router.MAC[port][1]]
            same_packets(f"{label} port {port}", mine, sent[port], True, failures)
    same_packets(label, got, sent[0] + sent[1], False, failures)
    problems = e2e.tshark_problems(cap, F.tshark_options)
    if problems:
        failures.append(f"{label}: {problems}")
    return got


def check_runs(router, workers, failures):
    w = workers
    ordered = w == 1
    tap, lookup = router.work.file(f"tap-w{w}.pcap"), router.work.file(f"lookup-w{w}.pcap")
    res, st, sent = router.run(f"tap-w{w}", w, ["--capture", f"{REWRITE}={tap}",
                                                "--capture", f"{LOOKUP}[0]={lookup}"])
    if st is None:
        failures.append(f"--capture, {w} worker(s): the run failed: {res.stderr.strip()}")
        return
    if w == 2 and any(x["rx_packets"] == 0 for x in st["per_worker"]):
        failures.append(f"two workers: one received nothing ({st['per_worker']}): the file had one writer")
    check_balance(f"--capture, {w} worker(s)", st, failures)
    in_order = check_tap(f"--capture {REWRITE}, {w} worker(s)", tap, sent, ordered, failures)
    same_packets(f"--capture {LOOKUP}, {w} worker(s)", [d for d, _ in records(lookup)],
                 router.after_lookup, ordered, failures)

    # Tee + ToDump in the pipeline: the same packets, made as copies and dropped as dumped.
    cap = router.work.file(f"tee-w{w}.pcap")
    click = router.work.file(f"tee-w{w}.click", router.text.replace(
        "-> ToOutput;", f"-> t :: Tee -> ToOutput;\nt[1] -> ToDump({cap});"))
    res, st, sent = router.run(f"tee-w{w}", w, click=click)
    if st is None:
        failures.append(f"Tee + ToDump, {w} worker(s): the run failed: {res.stderr.strip()}")
        return
    copies = len(sent[0]) + len(sent[1])
    check_balance(f"Tee + ToDump, {w} worker(s)", st, failures, created=copies)
    if e2e.drops_by_reason(st).get("dumped", 0) != copies:
        failures.append(f"Tee + ToDump: {e2e.drops_by_reason(st)}, expected {copies} dumped")
    check_tap(f"Tee + ToDump, {w} worker(s)", cap, sent, ordered, failures)

    # snaplen and limit.
    snap = router.work.file(f"snap-w{w}.pcap")
    res, st, sent = router.run(f"snap-w{w}", w, ["--capture", f"{REWRITE}={snap},snaplen={SNAPLEN},limit={LIMIT}"])
    if st is None:
        failures.append(f"snaplen/limit, {w} worker(s): the run failed: {res.stderr.strip()}")
        return
    check_balance(f"snaplen/limit, {w} worker(s)", st, failures)
    want = [(d[:SNAPLEN], len(d)) for d in (in_order[:LIMIT] if ordered else sent[0] + sent[1])]
    got = records(snap)
    if len(got) != LIMIT or (ordered and got != want) or (not ordered and not set(got) <= set(want)):
        failures.append(f"snaplen {SNAPLEN} limit {LIMIT}, {w} worker(s): {len(got)} records, "
                        f"not the first {LIMIT} cut to {SNAPLEN} bytes with their lengths")
    problems = e2e.tshark_problems(snap, ())
    if problems:
        failures.append(f"snaplen/limit: {problems}")


def limited_run(cmd):
    """Runs cmd with files limited to FSIZE_LIMIT bytes (writes past it fail with EFBIG)."""
    def preexec():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE_LIMIT, FSIZE_LIMIT))
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, preexec_fn=preexec)


def check_write_failure(work, failures):
    frames = [bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(dst="10.0.0.2") /
                    UDP(sport=1000 + i) / Raw(bytes(958))) for i in range(2000)]  # ~2 MB
    cap, stats = work.file("full.pcap"), work.file("full-stats.json")
    click = work.file("full.click", f"FromInput -> d :: ToDump({cap});\n")
    res = limited_run([e2e.FULCRUM, "run", click, "--quiet", "--stats-json", stats,
                       "--port", f"net_pcap0,rx_pcap={work.pcap('full-in.pcap', frames)},tx_pcap=/dev/null"])
    if res.returncode != 4:
        failures.append(f"capture past the size limit: exit {res.returncode}, expected 4\n{res.stdout}\n{res.stderr}")
        return
    s = json.load(open(stats))
    held = [d for d, _ in records(cap)]
    lost = next(e for e in s["elements"] if e["class"] == "ToDump")["counters"]["lost"]
    if not 0 < len(held) < len(frames) or len(held) + lost != len(frames) or not set(held) <= set(frames):
        failures.append(f"capture past the size limit: {len(held)} whole records + {lost} lost != {len(frames)}")
    losses = s["output_losses"]
    if len(losses) != 1 or losses[0]["unit"] != "packets" or losses[0]["lost"] != lost:
        failures.append(f"capture past the size limit: output_losses {losses}")
    if f"capture {cap}: {lost} packets could not be written" not in res.stderr:
        failures.append(f"capture past the size limit: stderr {res.stderr!r}")
    if f"output lost: capture {cap}" not in res.stdout or not s["balanced"]:
        failures.append("capture past the size limit: the summary does not name it, or the balance fails")
    problems = e2e.tshark_problems(cap, ())
    if problems:
        failures.append(f"capture past the size limit: {problems}")


def check_errors(router, failures):
    cases = [
        ("unknown element", [f"EtherRewrit@5={router.work.file('x.pcap')}"], 1,
         ["--capture EtherRewrit@5=", "no element 'EtherRewrit@5'", "(did you mean 'EtherRewrite@5'?)"]),
        ("unknown output", [f"{REWRITE}[1]=x.pcap"], 1,
         [f"output 1 of '{REWRITE}' (EtherRewrite) leads nowhere; its connected outputs: 0"]),
        ("unknown key", [f"{REWRITE}=x.pcap,snaplne=5"], 2, ["unknown key 'snaplne' (did you mean 'snaplen'?)"]),
        ("no file", [f"{REWRITE}="], 2, ["no FILE after '='"]),
        ("bad port", [f"{REWRITE}[x]=a.pcap"], 2, ["expected ELEMENT[PORT] with PORT an output number"]),
        ("twice", [f"{REWRITE}=a.pcap", "--capture", f"{REWRITE}[0]=b.pcap"], 1,
         [f"output 0 of '{REWRITE}' is captured twice"]),
        ("unwritable", [f"{REWRITE}=/nonexistent-dir/x.pcap"], 1,
         [f"{router.click}:", "ToDump: cannot write capture /nonexistent-dir/x.pcap: No such file or directory"]),
    ]
    for label, args, code, wants in cases:
        res = e2e.run_cmd(["run", router.click, "--quiet", "--port", "net_null0", "--port", "net_null1",
                           "--capture", *args])
        if res.returncode != code or any(w not in res.stderr for w in wants):
            failures.append(f"--capture {label}: exit {res.returncode} (expected {code}), stderr {res.stderr!r}, "
                            f"expected {wants}")
    # ToDump in a pipeline file: the error names the file, line and column.
    click = router.work.file("bad-dump.click", "FromInput\n  -> ToDump(/nonexistent-dir/y.pcap)\n  -> ToOutput;\n")
    res = e2e.run_cmd(["run", click, "--quiet", "--port", "net_null0"])
    want = f"{click}:2:6: ToDump@2 :: ToDump: cannot write capture /nonexistent-dir/y.pcap"
    if res.returncode != 1 or want not in res.stderr:
        failures.append(f"ToDump with an unwritable file: exit {res.returncode}, stderr {res.stderr!r}, expected {want!r}")
    for cls, want in (("Tee", "Tee — sends each packet out of output 0"), ("ToDump", "SNAPLEN")):
        res = e2e.run_cmd(["elements", cls])
        if res.returncode != 0 or want not in res.stdout:
            failures.append(f"fulcrum elements {cls}: {res.stdout!r}")


def main():
    if not e2e.require_tshark():
        return 1
    work = e2e.Workdir("capture")
    router = Router(work)
    failures = []
    for workers in (1, 2):
        check_runs(router, workers, failures)
    check_write_failure(work, failures)
    check_errors(router, failures)
    if not failures:
        print(f"ok: captures on edges and through Tee hold exactly the packets that crossed them "
              f"({len(router.frames)} frames in, 1 and 2 workers), snaplen and limit honoured, "
              f"losses reported, bad taps refused")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
