#!/usr/bin/python3
"""Plots of the `adaptive` bench group (bench/adaptive_bench.cc) for docs/benchmarks.md.

    fulcrum bench --only adaptive --out bench.json
    tools/plot_adaptive.py bench.json docs/img [PROFILE-APP-BYTES ...]   # only those plots

For each device profile, one PNG per application: throughput against the offload fraction w
(the static sweep) with the adaptive balancer's steady state marked at the mean w it settled at,
and under it w and throughput over time from its trace (every 20 ms window). Needs
python3-matplotlib (scripts/install-deps.sh installs it, for Debian's /usr/bin/python3).
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def find_group(data, name):
    """The object of bench group `name` wherever the bench output nests it."""
    if isinstance(data, dict):
        if name in data and isinstance(data[name], dict):
            return data[name]
        for v in data.values():
            g = find_group(v, name)
            if g is not None:
                return g
    if isinstance(data, list):
        for v in data:
            g = find_group(v, name)
            if g is not None:
                return g
    return None


def read_trace(rows):
    """[[time_s, w, Mpps], ...] as three lists."""
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


def plot(profile, app, out_dir):
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 7))
    ws = [p["offload_fraction"] for p in app["static"]]
    mpps = [p["mpps"] for p in app["static"]]
    top.plot(ws, mpps, "o-", label="static FixedFraction(w)")
    top.plot([app["adaptive_mean_fraction_steady"]], [app["adaptive_mpps"]], "r*", markersize=14,
             label=f"AdaptiveBalancer ({app['adaptive_vs_best_static'] * 100:.0f} % of best)")
    top.set_xlabel("offload fraction w")
    top.set_ylabel("Mpps transmitted")
    kind = "emulated device" if profile["emulated"] else "device"
    top.set_title(f"{app['app']} {app['frame_bytes']} B, {kind}: {profile['device']}", fontsize=9)
    top.legend(fontsize=8)
    top.grid(alpha=0.3)
    t, w, rate = read_trace(app["trace"])
    bottom.plot(t, w, "r-", label="w")
    bottom.set_xlabel("time (s)")
    bottom.set_ylabel("offload fraction w")
    bottom.set_ylim(-0.02, 1.02)
    right = bottom.twinx()
    right.plot(t, rate, "b-", alpha=0.4, label="Mpps (window)")
    right.set_ylabel("Mpps through the balancer")
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    name = f"adaptive-{profile['profile']}-{app['app']}-{app['frame_bytes']}.png"
    fig.savefig(os.path.join(out_dir, name), dpi=80)
    plt.close(fig)
    return name


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    only = set(sys.argv[3:])
    with open(sys.argv[1]) as f:
        group = find_group(json.load(f), "adaptive")
    if group is None or "profiles" not in group:
        print(f"{sys.argv[1]}: no adaptive group results", file=sys.stderr)
        return 1
    os.makedirs(sys.argv[2], exist_ok=True)
    for profile in group["profiles"]:
        for app in profile.get("apps", []):
            if only and f"{profile['profile']}-{app['app']}-{app['frame_bytes']}" not in only:
                continue
            print(plot(profile, app, sys.argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
