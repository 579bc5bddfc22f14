#!/usr/bin/env python3
"""A/B throughput of the offloadable applications under two fulcrum binaries, alternated.

    tools/ab_offload.py OLD_BINARY NEW_BINARY [--seconds 1] [--repeats 3] [--only APP]

For each shipped *-offload.click config, device-only (DeviceOnly) and a 50 % split
(FixedFraction(0.5)) on the first device, generator in and net_null out: the two binaries run
alternately REPEATS times each, and the median Mpps of each and their ratio (new / old) are
printed as JSON. Alternating keeps a slow drift of the machine's load out of the ratio; the
spread of the repeats says how much noise there is.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = os.path.join(HERE, "..", "configs")
APPS = [
    ("ipv4-router", "ipv4-router-offload.click", "gen:size=64,flows=1024,dst=routes,routes={c}/routes-demo.txt"),
    ("ipv6-router", "ipv6-router-offload.click", "gen:proto=ipv6,size=78,flows=1024,dst=routes,routes={c}/routes6-demo.txt"),
    ("ipsec-gateway", "ipsec-gateway-offload.click", "gen:size=64,flows=1024"),
    ("md5", "md5-offload.click", "gen:size=64,flows=1024"),
    ("ids", "ids-offload.click", "gen:size=64,flows=1024"),
]
MODES = [("device-only", "DeviceOnly"), ("split-50", "FixedFraction(0.5)")]


def mpps(binary, config, port, seconds, work):
    stats = os.path.join(work, "stats.json")
    r = subprocess.run([binary, "run", config, "--quiet", "--stats-json", stats, "--seconds", str(seconds),
                        "--port", port, "--port", "net_null0,no-rx=1"], capture_output=True, text=True,
                       cwd=os.path.join(CONFIGS, ".."), timeout=300)
    if r.returncode != 0:
        sys.exit(f"{binary} {config}: exit {r.returncode}: {r.stderr}")
    with open(stats) as f:
        s = json.load(f)
    return s["packets_out"] / s["duration_s"] / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--seconds", type=float, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", help="one application (ipv4-router, ipv6-router, ipsec-gateway, md5, ids)")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ab-offload-")
    rows = []
    for name, config, port in APPS:
        if a.only and name != a.only:
            continue
        text = open(os.path.join(CONFIGS, config)).read()
        for mode, balancer in MODES:
            path = os.path.join(work, f"{name}-{mode}.click")
            with open(path, "w") as f:
                f.write(text.replace("DeviceOnly", balancer))
            old, new = [], []
            for _ in range(a.repeats):
                old.append(mpps(os.path.abspath(a.old), path, port.format(c="configs"), a.seconds, work))
                new.append(mpps(os.path.abspath(a.new), path, port.format(c="configs"), a.seconds, work))
            row = {"app": name, "mode": mode, "old_mpps": statistics.median(old),
                   "new_mpps": statistics.median(new), "old_runs": old, "new_runs": new}
            row["new_vs_old"] = row["new_mpps"] / row["old_mpps"] if row["old_mpps"] > 0 else 0
            rows.append(row)
            print(f"{name:14s} {mode:12s} old {row['old_mpps']:7.3f}  new {row['new_mpps']:7.3f}  "
                  f"new/old {row['new_vs_old']:.3f}", file=sys.stderr)
    ratios = [r["new_vs_old"] for r in rows if r["new_vs_old"] > 0]
    geomean = 1.0
    for x in ratios:
        geomean *= x ** (1 / len(ratios))
    print(json.dumps({"rows": rows, "geomean_new_vs_old": geomean}, indent=1))


if __name__ == "__main__":
    main()
