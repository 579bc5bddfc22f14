#!/usr/bin/env python3
"""End to end: what a new user or operator can get wrong, and what the disk can do to a run.

- Write failures: a tx capture and an IDS alert log written under a file-size limit (as a full
  disk would cut them short): the run reports the lost packets and alerts on stderr and in the
  summary, counts the packets as dropped (tx-write-failed) so the balance still holds, and exits
  with status 4.
- Jumbo frames: 9,000-byte frames go through every shipped CPU pipeline whole (no truncation,
  no misleading drop), frames longer than 16,128 bytes arriving as mbuf chains are dropped with
  reason multi-segment, never truncated.
- Input that used to be accepted although invalid: special files as tables, FixedFraction(nan),
  --seconds nan / 1e400, duplicate generator keys, `bench --seconds -1`, an alert log under /proc.
- No DPDK runtime directory is left behind by a run.
"""
import json
import os
import resource
import signal
import subprocess
import sys

from scapy.all import IP, UDP, Ether, Raw, rdpcap

import fulcrum_e2e as e2e

TIMEOUT_S = 120
LIMIT_BYTES = 256 * 1024  # the "disk" size for the write-failure runs
JUMBO = 9000
HUGE = 20000  # longer than any frame Fulcrum linearises (16,128)


def limited_run(cmd, limit):
    """Runs cmd with files limited to `limit` bytes (writes past it fail with EFBIG)."""
    def preexec():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, preexec_fn=preexec)


def udp_frame(i, size, dst="10.0.0.2", payload=None):
    base = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(src=f"10.1.{i // 250}.{1 + i % 250}", dst=dst) / UDP(sport=1000 + i % 5000, dport=80)
    body = payload if payload is not None else bytes((i + k) & 0xFF for k in range(max(0, size - len(base))))
    return bytes(base / Raw(body))


def fulcrum(args, **kw):
    return subprocess.run([e2e.FULCRUM, *args], capture_output=True, text=True, timeout=TIMEOUT_S, **kw)


def check_tx_pcap_full(work, failures):
    frames = [udp_frame(i, 1000) for i in range(2000)]  # ~2 MB of capture, 8x the limit
    rx = work.pcap("write-in.pcap", frames)
    empty = work.pcap("write-empty.pcap", [])
    out0, out1 = work.file("write-out0.pcap"), work.file("write-out1.pcap")
    stats = work.file("write-stats.json")
    cfg = os.path.join(e2e.SOURCE_DIR, "configs", "l2-echo.click")
    res = limited_run([e2e.FULCRUM, "run", cfg, "--quiet", "--stats-json", stats,
                       "--port", e2e.pcap_port(0, rx, out0), "--port", e2e.pcap_port(1, empty, out1)], LIMIT_BYTES)
    if res.returncode != 4:
        failures.append(f"tx pcap past the limit: exit {res.returncode}, expected 4\n{res.stdout}\n{res.stderr}")
        return
    s = json.load(open(stats))
    held = sum(1 for p in rdpcap(out0) if len(p) == len(frames[0]))  # complete records
    lost = s["drops"].get("runtime/tx-write-failed", 0)
    if not 0 < held < len(frames):
        failures.append(f"tx pcap: the capture holds {held} packets, expected it cut short")
    if lost != len(frames) - held or s["packets_out"] != held:
        failures.append(f"tx pcap: {lost} counted lost and {s['packets_out']} out, the capture holds {held} of {len(frames)}")
    if not s["balanced"]:
        failures.append("tx pcap: balance does not hold")
    if "could not be written" not in res.stderr or "tx pcap" not in res.stderr:
        failures.append(f"tx pcap: nothing on stderr: {res.stderr!r}")
    if "output lost: tx pcap" not in res.stdout:
        failures.append("tx pcap: the summary does not name the lost output")


def check_alert_log_full(work, failures):
    rules = work.file("rel.rules", 'alert udp any any -> any any (msg:"every datagram"; content:"|00 01|"; sid:9001;)\n')
    alerts = work.file("alerts.jsonl")
    cfg = work.file("ids-rel.click", f"FromInput -> ids :: IDSMatch({rules}, ALERTS {alerts}) -> ToOutput;\n")
    frames = [udp_frame(i, 200, payload=b"\x00\x01" * 60) for i in range(5000)]
    rx = work.pcap("ids-in.pcap", frames)
    stats = work.file("ids-stats.json")
    res = limited_run([e2e.FULCRUM, "run", cfg, "--quiet", "--stats-json", stats,
                       "--port", f"net_pcap0,rx_pcap={rx},tx_pcap=/dev/null"], LIMIT_BYTES)
    if res.returncode != 4:
        failures.append(f"alert log past the limit: exit {res.returncode}, expected 4\n{res.stdout}\n{res.stderr}")
        return
    s = json.load(open(stats))
    written = sum(1 for line in open(alerts) if line.endswith("\n"))
    ids = next(e for e in s["elements"] if e["class"] == "IDSMatch")
    lost = ids["counters"]["alerts_lost"]
    if ids["counters"]["alerts"] != len(frames) or written + lost != len(frames) or lost == 0:
        failures.append(f"alert log: {written} written + {lost} lost != {len(frames)} alerts")
    losses = s["output_losses"]
    if len(losses) != 1 or losses[0]["unit"] != "alerts" or losses[0]["lost"] != lost:
        failures.append(f"alert log: output_losses {losses}")
    if "alert log" not in res.stderr or "alerts are being lost" not in res.stderr:
        failures.append(f"alert log: nothing on stderr: {res.stderr!r}")


def check_jumbo(work, failures):
    """Every CPU pipeline takes 9,000-byte frames whole; longer chained frames are dropped."""
    frames = [udp_frame(i, JUMBO, dst=f"10.{i % 4}.0.{1 + i}") for i in range(40)]
    rx = work.pcap("jumbo-in.pcap", frames)
    empty = work.pcap("jumbo-empty.pcap", [])
    # l2-echo: byte-exact echo of jumbo frames; HUGE frames dropped as multi-segment.
    huge = [udp_frame(i, HUGE) for i in range(3)]
    rx_mixed = work.pcap("jumbo-mixed.pcap", frames[:10] + huge + frames[10:20])
    out = work.file("echo-out.pcap")
    res, s = e2e.run_fulcrum(work, os.path.join(e2e.SOURCE_DIR, "configs", "l2-echo.click"),
                             [e2e.pcap_port(0, rx_mixed, out)])
    if s is None:
        failures.append("l2-echo with jumbo frames failed to run")
    else:
        got = [bytes(p) for p in rdpcap(out)]
        want = []
        for f in frames[:20]:
            want.append(f[6:12] + f[0:6] + f[12:])  # EtherMirror swaps the MACs
        if got != want:
            failures.append(f"l2-echo: {len(got)} frames out, lengths {[len(g) for g in got[:3]]}..., expected 20 whole 9,000-byte frames")
        if s["drops"] != {"runtime/multi-segment": len(huge)} or not s["balanced"]:
            failures.append(f"l2-echo: drops {s['drops']}, expected {len(huge)} multi-segment")
    # Every shipped CPU pipeline: nothing truncated, no drop but the documented ones.
    for cfg in sorted(os.listdir(os.path.join(e2e.SOURCE_DIR, "configs"))):
        if not cfg.endswith(".click") or "offload" in cfg:
            continue
        outs = [work.file(f"j-{cfg}-{p}.pcap") for p in (0, 1)]
        res, s = e2e.run_fulcrum(work, os.path.join(e2e.SOURCE_DIR, "configs", cfg),
                                 [e2e.pcap_port(0, rx, outs[0]), e2e.pcap_port(1, empty, outs[1])])
        if s is None:
            failures.append(f"{cfg}: run with jumbo frames failed: {res.stderr.strip()[-300:]}")
            continue
        bad = {k: v for k, v in s["drops"].items()
               if any(r in k for r in ("truncated", "multi-segment", "bad-length", "not-ipv4", "too-long"))}
        if bad or not s["balanced"]:
            failures.append(f"{cfg}: jumbo frames dropped as {bad} (balanced {s['balanced']})")
        for o in outs:
            short = [len(p) for p in rdpcap(o) if len(p) < JUMBO - 64]
            if short:
                failures.append(f"{cfg}: frames left shortened to {short[:5]}")


def check_rejected_inputs(work, failures):
    ok_click = work.file("ok.click", "FromInput -> EtherMirror -> ToOutput;\n")
    fifo = os.path.join(work.path, "routes.fifo")
    os.mkfifo(fifo)
    cases = [
        ("route table /dev/zero", ["run", work.file("z.click", "FromInput -> IPLookup(/dev/zero) -> ToOutput;\n"),
                                   "--port", "net_null0", "--packets", "1"], "is not a regular file"),
        ("route table FIFO", ["run", work.file("f.click", f"FromInput -> IPLookup({fifo}) -> ToOutput;\n"),
                              "--port", "net_null0", "--packets", "1"], "is not a regular file"),
        ("NDN names directory", ["run", work.file("n.click", f"FromInput -> NDNLookup({work.path}) -> ToOutput;\n"),
                                 "--port", "net_null0", "--packets", "1"], "is a directory"),
        ("SA file /dev/zero", ["run", work.file("s.click", "FromInput -> IPsecESPEncap(/dev/zero) -> ToOutput;\n"),
                               "--port", "net_null0", "--packets", "1"], "is not a regular file"),
        ("FixedFraction(nan)", ["run", work.file("ff.click", "FromInput -> FixedFraction(nan) -> ToOutput;\n"),
                                "--port", "net_null0", "--packets", "1"], "W"),
        ("--seconds nan", ["run", ok_click, "--port", "net_null0", "--seconds", "nan"], "--seconds needs a positive number"),
        ("--seconds 1e400", ["run", ok_click, "--port", "net_null0", "--seconds", "1e400"], "--seconds needs a positive number"),
        ("duplicate generator key", ["run", ok_click, "--port", "gen:size=64,size=128", "--packets", "1"], "given twice"),
        ("alert log under /proc", ["run", work.file("p.click", "FromInput -> IDSMatch(" + os.path.join(e2e.SOURCE_DIR, "configs", "ids-rules-demo.rules")
                                                    + ", ALERTS /proc/self/comm) -> ToOutput;\n"),
                                   "--port", "net_null0", "--packets", "1"], "kernel pseudo file system"),
        ("bench --seconds -1", ["bench", "--seconds", "-1", "--only", "nothing"], "--seconds needs a positive number"),
    ]
    for name, args, expected in cases:
        res = fulcrum(args)
        if res.returncode == 0 or expected not in res.stderr:
            failures.append(f"{name}: exit {res.returncode}, stderr {res.stderr.strip()[-300:]!r}; expected an error with {expected!r}")


def check_runtime_dir(work, failures):
    cmd = [e2e.FULCRUM, "run", work.file("rd.click", "FromInput -> EtherMirror -> ToOutput;\n"),
           "--quiet", "--port", "gen:size=64", "--packets", "1000"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.communicate(timeout=TIMEOUT_S)
    left = f"/var/run/dpdk/fulcrum{p.pid}"
    if p.returncode != 0:
        failures.append(f"runtime dir run: exit {p.returncode}")
    elif os.path.exists(left):
        failures.append(f"{left} was left behind")


def main():
    work = e2e.Workdir("reliability")
    os.chdir(e2e.SOURCE_DIR)  # the shipped pipelines name their tables relative to it
    failures = []
    check_tx_pcap_full(work, failures)
    check_alert_log_full(work, failures)
    check_jumbo(work, failures)
    check_rejected_inputs(work, failures)
    check_runtime_dir(work, failures)
    if not failures:
        print("ok: write failures counted and reported (exit 4), jumbo frames whole, invalid inputs refused, "
              "no runtime directory left")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
