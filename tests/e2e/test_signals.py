#!/usr/bin/env python3
"""Ctrl-C (SIGINT) and SIGTERM end an open-ended run cleanly: exit 0, summary printed, stats
written, the buffer balance holds, and a pcap output is closed so an independent reader
(scapy) can read every packet that was counted as transmitted."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from scapy.all import rdpcap, wrpcap

FULCRUM = os.environ.get("FULCRUM_BIN", "build/fulcrum")


def run_and_signal(work, sig):
    click = os.path.join(work, "echo.click")
    with open(click, "w") as f:
        f.write("FromInput -> L2Forward(PORT 1) -> ToOutput;\n")
    out = os.path.join(work, f"out-{sig}.pcap")
    stats = os.path.join(work, f"stats-{sig}.json")
    cmd = [FULCRUM, "run", click, "--quiet", "--stats-json", stats,
           "--port", "gen:size=64,flows=16,rate=20000", "--port", f"net_pcap0,tx_pcap={out},rx_pcap="
           + os.path.join(work, "empty.pcap")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    proc.send_signal(sig)
    try:
        stdout, stderr = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        return [f"signal {sig}: the run did not stop"]
    failures = []
    if proc.returncode != 0:
        failures.append(f"signal {sig}: exit code {proc.returncode}: {stderr}")
        return failures
    if "balance:" not in stdout:
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
    wrpcap(os.path.join(work, "empty.pcap"), [], linktype=1)
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
