#!/usr/bin/python3
"""Plots of the `l7` bench group (bench/l7_bench.cc) for docs/benchmarks.md.

    fulcrum bench --only l7 --out bench.json
    tools/plot_l7.py bench.json docs/img

l7-scheduling.png: FlowShader's Fig. 11 on this machine: for each device (the emulated GPU-like
device, labelled emulated, and the first real device), throughput (messages/s) of each policy
against the skewness ratio of the flow sizes, and under it the share of bytes the device took.
l7-threshold.png: the dynamic threshold (from 32, step 32) and the throughput over time.
Needs python3-matplotlib (scripts/install-deps.sh installs it, for Debian's /usr/bin/python3).
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_adaptive import find_group  # noqa: E402


def plot_scheduling(group, out_dir):
    devices = [d for d in group["devices"] if "ratios" in d]
    fig, axes = plt.subplots(2, len(devices), figsize=(6 * len(devices), 7), squeeze=False)
    for col, dev in enumerate(devices):
        top, bottom = axes[0][col], axes[1][col]
        ratios = [r["skewness_ratio"] for r in dev["ratios"]]
        policies = [p["policy"] for p in dev["ratios"][0]["policies"]]
        for k, policy in enumerate(policies):
            rate = [r["policies"][k]["messages_per_s"] / 1e3 for r in dev["ratios"]]
            share = [100 * r["policies"][k]["device_bytes_share"] for r in dev["ratios"]]
            style = "o-" if policy == "flowshader" else ".--"
            top.plot(ratios, rate, style, label=policy)
            bottom.plot(ratios, share, style, label=policy)
        title = dev["device"] + (" (EMULATED, virtual time)" if dev["emulated"] else " (wall clock)")
        top.set_title(title, fontsize=8)
        top.set_xscale("log")
        bottom.set_xscale("log")
        top.set_ylabel("throughput (K messages/s)")
        bottom.set_ylabel("bytes on the device (%)")
        bottom.set_xlabel("skewness ratio (largest flow / mean)")
        top.grid(alpha=0.3)
        bottom.grid(alpha=0.3)
        top.legend(fontsize=7)
    fig.suptitle("L7 flow scheduling (FlowShader Fig. 11): %d flows, %s" %
                 (group["flows"], group["chain"]), fontsize=10)
    fig.tight_layout()
    path = os.path.join(out_dir, "l7-scheduling.png")
    fig.savefig(path, dpi=110)
    print(path)


def plot_threshold(group, out_dir):
    tr = group["dynamic_threshold"]
    rows = tr["trace"]
    t = [r[0] for r in rows]
    th = [r[1] for r in rows]
    rate = [r[2] / 1e3 for r in rows]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    top.plot(t, th, "-")
    top.set_ylabel("unprocessed-message threshold")
    top.set_title("dynamic threshold, %s, ratio %g, %d flows (EMULATED device, virtual time)" %
                  ("flowshader", tr["skewness_ratio"], tr["flows"]), fontsize=8)
    bottom.plot(t, rate, "-")
    bottom.set_ylabel("throughput (K messages/s)")
    bottom.set_xlabel("time (s)")
    top.grid(alpha=0.3)
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    path = os.path.join(out_dir, "l7-threshold.png")
    fig.savefig(path, dpi=110)
    print(path)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        data = json.load(f)
    group = find_group(data, "l7")
    if group is None:
        sys.exit("no l7 group in " + sys.argv[1])
    plot_scheduling(group, sys.argv[2])
    plot_threshold(group, sys.argv[2])


if __name__ == "__main__":
    main()
