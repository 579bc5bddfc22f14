#!/usr/bin/env python3
"""Ctrl-C (SIGINT) and SIGTERM end an open-ended run cleanly: exit 0, summary printed, stats
written, the buffer balance holds, and a pcap output is closed so an independent reader
(scapy) can read every packet that was counted as transmitted. The signal is sent once the run
has taken packets in (its control plane says so), whatever the machine's load."""
import json
import os
import shutil
import signal
import sys
import tempfile

from scapy.all import rdpcap

from live_run import LiveRun, received
from waits import wait_until


def run_and_signal(work, sig):
    click = os.path.join(work, "echo.click")
    with open(click, "w") as f:
        f.write("FromInput -> L2Forward(PORT 1) -> ToOutput;\n")
    out = os.path.join(work, f"out-{sig}.pcap")
    stats = os.path.join(work, f"stats-{sig}.json")
    # Open-ended: no --seconds, no --packets and no pcap input (a drained one ends a run), so
    # only the signal ends it.
    ports = ["gen:size=64,flows=16,rate=20000", f"net_pcap0,tx_pcap={out}"]
    run = LiveRun(click, ports, seconds=None, extra=["--stats-json", stats])
    if not wait_until(lambda: received(run) > 0, proc=run.proc):
        run.stop(signal.SIGKILL)
        return [f"signal {sig}: the run took no packet in: {run.stderr()}"]
    if run.proc.poll() is not None:
        return [f"signal {sig}: the run ended before the signal: {run.stderr()}"]
    code = run.stop(sig)
    if code == -signal.SIGKILL:
        return [f"signal {sig}: the run did not stop"]
    failures = []
    if code != 0:
        failures.append(f"signal {sig}: exit code {code}: {run.stderr()}")
        return failures
    if "balance:" not in run.stdout():
        failures.append(f"signal {sig}: no summary printed")
    st = json.load(open(stats))
    if not st["balanced"]:
        failures.append(f"signal {sig}: balance does not hold")
    if st["packets_in"] == 0:
        failures.append(f"signal {sig}: nothing received before the signal")
    written = len(rdpcap(out))
    if written != st["ports"][1]["tx_packets"]:
        failures.append(f"signal {sig}: pcap holds {written} packets, {st['ports'][1]['tx_packets']} counted")
    return failures


def main():
    work = tempfile.mkdtemp(prefix="fulcrum-sig-")
    failures = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        failures += run_and_signal(work, sig)
    shutil.rmtree(work)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    print("ok: SIGINT and SIGTERM stop the run cleanly")
    return 0


if __name__ == "__main__":
    sys.exit(main())
