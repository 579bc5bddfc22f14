#!/usr/bin/env python3
"""Bounded soak run (`make soak`): the IPv4 router on built-in traffic with 2 workers for
SOAK_SECONDS (default 600), sampling the process's resident memory every second. Passes when
the run exits 0 with its packet balance holding and the RSS after warm-up stays flat (grows by
less than --max-growth-mib over the rest of the run). Prints a JSON summary.

    tools/soak.py [--seconds 600] [--workers 2] [--bin build/fulcrum] [--max-growth-mib 8]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
WARMUP_FRACTION = 0.1  # RSS grows while pools, tables and caches fill; flat after that


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=float(os.environ.get("SOAK_SECONDS", 600)))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "fulcrum"))
    ap.add_argument("--max-growth-mib", type=float, default=8)
    a = ap.parse_args()
    if not a.seconds > 0:
        ap.error("--seconds must be positive")
    stats = tempfile.NamedTemporaryFile(prefix="fulcrum-soak-", suffix=".json", delete=False).name
    cmd = [a.bin, "run", "configs/ipv4-router.click", "--quiet", "--workers", str(a.workers),
           "--seconds", str(a.seconds), "--stats-json", stats,
           "--port", "gen:size=64,flows=65536,dst=routes,routes=configs/routes-demo.txt",
           "--port", "net_null0,no-rx=1"]
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    start, samples = time.monotonic(), []
    while p.poll() is None:
        kib = rss_kib(p.pid)
        if kib is not None:
            samples.append((time.monotonic() - start, kib))
        time.sleep(1)
    out, err = p.communicate()
    failures = []
    if p.returncode != 0:
        failures.append(f"exit status {p.returncode}: {err.strip()[-500:]}")
    report = json.load(open(stats)) if os.path.getsize(stats) > 0 else {}
    os.unlink(stats)
    if report and not report.get("balanced"):
        failures.append("the packet balance does not hold")
    settled = [kib for t, kib in samples if t >= a.seconds * WARMUP_FRACTION]
    growth_mib = (max(settled) - settled[0]) / 1024 if len(settled) >= 2 else None
    if growth_mib is None:
        failures.append("too few RSS samples after warm-up")
    elif growth_mib >= a.max_growth_mib:
        failures.append(f"RSS grew {growth_mib:.1f} MiB after warm-up")
    print(json.dumps({
        "seconds": a.seconds, "workers": a.workers, "packets_in": report.get("packets_in"),
        "mpps_in": report.get("mpps_in"), "balanced": report.get("balanced"),
        "rss_mib_after_warmup": settled[0] / 1024 if settled else None,
        "rss_mib_max": max(settled) / 1024 if settled else None,
        "rss_growth_mib": growth_mib, "failures": failures}, indent=2))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
