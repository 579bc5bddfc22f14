#!/usr/bin/python3
"""Plots of the `adaptive` and `adaptive_step` bench groups (bench/adaptive_bench.cc,
bench/adaptive_step_bench.cc) for docs/benchmarks.md.

    fulcrum bench --only adaptive,adaptive_step --out bench.json
    tools/plot_adaptive.py bench.json docs/img [NAME ...]   # only those plots

`adaptive`: for each device profile, one PNG per application (NAME: PROFILE-APP-BYTES):
throughput against the offload fraction w (the static sweep) with the adaptive balancer's
steady state marked at the mean w it settled at (and PolicyBalancer's, where the run has it),
and under it AdaptiveBalancer's w and throughput over time from its trace (every 20 ms window);
where the run has them, AdaptiveBalancer with SCAN 4, MARGIN 1 and PolicyBalancer too (point
and w over time).
`adaptive_step`: one PNG per device profile (NAME: step-PROFILE), a panel per balancer and step
(64 -> 1500 B; flat out -> 20 %): w and throughput over time, the step marked, the time to
re-converge shaded.
Needs python3-matplotlib (scripts/install-deps.sh installs it, for Debian's /usr/bin/python3).
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
    """[[time_s, w, Mpps, ...], ...] as three lists."""
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


def plot(profile, app, out_dir):
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 7))
    ws = [p["offload_fraction"] for p in app["static"]]
    mpps = [p["mpps"] for p in app["static"]]
    top.plot(ws, mpps, "o-", label="static FixedFraction(w)")
    top.plot([app["adaptive_mean_fraction_steady"]], [app["adaptive_mpps"]], "r*", markersize=14,
             label=f"AdaptiveBalancer ({app['adaptive_vs_best_static'] * 100:.0f} % of best)")
    if app.get("scan_mpps"):
        top.plot([app["scan_mean_fraction_steady"]], [app["scan_mpps"]], "m^", markersize=10,
                 label=f"AdaptiveBalancer SCAN 4, MARGIN 1 "
                       f"({app['scan_vs_best_static'] * 100:.0f} % of best)")
    if app.get("policy_mpps"):
        top.plot([app["policy_mean_fraction_steady"]], [app["policy_mpps"]], "gD", markersize=9,
                 label=f"PolicyBalancer ({app['policy_vs_best_static'] * 100:.0f} % of best)")
    top.set_xlabel("offload fraction w")
    top.set_ylabel("Mpps transmitted")
    kind = "emulated device" if profile["emulated"] else "device"
    top.set_title(f"{app['app']} {app['frame_bytes']} B, {kind}: {profile['device']}", fontsize=9)
    top.legend(fontsize=8)
    top.grid(alpha=0.3)
    t, w, rate = read_trace(app["trace"])
    bottom.plot(t, w, "r-", label="w")
    if app.get("scan_trace"):
        st, sw, _ = read_trace(app["scan_trace"])
        bottom.plot(st, sw, "m--", label="w, SCAN 4, MARGIN 1")
    if app.get("policy_trace"):
        pt, pw, _ = read_trace(app["policy_trace"])
        bottom.plot(pt, pw, "g:", label="w, PolicyBalancer")
    if app.get("scan_trace") or app.get("policy_trace"):
        bottom.legend(fontsize=8, loc="upper right")
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


def plot_step(device, out_dir):
    runs = [r for r in device.get("runs", []) if "trace" in r]
    steps = sorted({r["step"] for r in runs}, key=lambda s: s != "size")
    balancers = sorted({r["balancer"] for r in runs}, key=lambda b: b != "AdaptiveBalancer")
    if not runs:
        return None
    fig, axes = plt.subplots(len(steps), len(balancers), figsize=(6 * len(balancers),
                                                                  3.6 * len(steps)),
                             squeeze=False)
    for run in runs:
        ax = axes[steps.index(run["step"])][balancers.index(run["balancer"])]
        t = [row[0] for row in run["trace"]]
        ax.step(t, [row[1] for row in run["trace"]], "r-", where="post", label="w")
        ax.set_ylim(-0.02, 1.02)
        ax.set_ylabel("offload fraction w")
        ax.set_xlabel("time (s)")
        ax.axvline(run["step_s"], color="k", linestyle="--", linewidth=1)
        if run["reconverged"]:
            ax.axvspan(run["step_s"], run["step_s"] + run["reconvergence_ms"] / 1000,
                       color="g", alpha=0.25)
            verdict = f"re-converged in {run['reconvergence_ms']:.0f} ms"
        else:
            verdict = "not re-converged in the run"
        right = ax.twinx()
        right.plot(t, [row[2] for row in run["trace"]], "b-", alpha=0.4)
        right.set_ylabel("Mpps through the balancer")
        right.set_ylim(bottom=0)
        what = ("64 -> 1500 B" if run["step"] == "size"
                else f"flat out -> {run['to_pps'] / 1e6:.2f} Mpps")
        ax.set_title(f"{run['balancer']}, {what}: {verdict}; lost {run['lost']}", fontsize=9)
        ax.grid(alpha=0.3)
    kind = "emulated device" if device["emulated"] else "device"
    fig.suptitle(f"IPsec gateway, {kind}: {device['device']} (w red, Mpps blue, step dashed, "
                 "re-convergence shaded)", fontsize=9)
    fig.tight_layout()
    name = f"adaptive-step-{device['profile']}.png"
    fig.savefig(os.path.join(out_dir, name), dpi=80)
    plt.close(fig)
    return name


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    only = set(sys.argv[3:])
    with open(sys.argv[1]) as f:
        data = json.load(f)
    group = find_group(data, "adaptive")
    steps = find_group(data, "adaptive_step")
    if (group is None or "profiles" not in group) and (steps is None or "devices" not in steps):
        print(f"{sys.argv[1]}: no adaptive or adaptive_step group results", file=sys.stderr)
        return 1
    os.makedirs(sys.argv[2], exist_ok=True)
    for profile in (group or {}).get("profiles", []):
        for app in profile.get("apps", []):
            if only and f"{profile['profile']}-{app['app']}-{app['frame_bytes']}" not in only:
                continue
            print(plot(profile, app, sys.argv[2]))
    for device in (steps or {}).get("devices", []):
        if "runs" not in device or (only and f"step-{device['profile']}" not in only):
            continue
        name = plot_step(device, sys.argv[2])
        if name:
            print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
