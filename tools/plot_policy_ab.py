#!/usr/bin/python3
"""PolicyBalancer settings side by side through the size step of the `adaptive_step` bench,
run with FULCRUM_BENCH_POLICY_ARGS variants (bench/adaptive_step_bench.cc) for docs/benchmarks.md.

    FULCRUM_BENCH_BALANCERS=policy FULCRUM_BENCH_STEPS=size \\
    FULCRUM_BENCH_POLICY_ARGS="SETTLED_PERSIST 0;;SETTLED_PERSIST 0;" \\
        fulcrum bench --only adaptive_step --out ab.json
    tools/plot_policy_ab.py OUT.png ab.json [ab2.json ...]

One column per variant (in the order first seen), one row per run of it: Mpps through the
balancer (blue) and the profile point in force (red) over time, the step dashed, the time to
re-converge shaded (none shaded: not re-converged), the settling time in the panel's title.
Needs python3-matplotlib (scripts/install-deps.sh installs it, for Debian's /usr/bin/python3).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from plot_adaptive import find_group  # noqa: E402


def size_runs(path):
    with open(path) as f:
        data = json.load(f)
    group = find_group(data, "adaptive_step") or {}
    for device in group.get("devices", []):
        for run in device.get("runs", []):
            if run["balancer"] == "PolicyBalancer" and run["step"] == "size":
                yield device["device"], run


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: tools/plot_policy_ab.py OUT.png BENCH.json [BENCH.json ...]")
    columns = {}
    device = ""
    for path in sys.argv[2:]:
        for device, run in size_runs(path):
            columns.setdefault(run.get("policy_args") or "defaults", []).append(run)
    if not columns:
        sys.exit("no PolicyBalancer size-step runs in " + " ".join(sys.argv[2:]))
    rows = max(len(runs) for runs in columns.values())
    fig, axes = plt.subplots(rows, len(columns), figsize=(5.5 * len(columns), 1.6 * rows),
                             sharex=True, squeeze=False)
    for c, (variant, runs) in enumerate(columns.items()):
        axes[0][c].annotate(variant, xy=(0.5, 1.35), xycoords="axes fraction", ha="center",
                            fontsize=11, weight="bold")
        for r in range(rows):
            ax = axes[r][c]
            if r >= len(runs):
                ax.axis("off")
                continue
            run = runs[r]
            t = [w[0] for w in run["trace"]]
            ax.plot(t, [w[2] for w in run["trace"]], color="tab:blue", lw=0.8)
            ax.set_ylim(0, None)
            ax.axvline(run["step_s"], color="k", ls="--", lw=0.8)
            settled = run["reconvergence_ms"]
            if run["reconverged"]:
                ax.axvspan(run["step_s"], run["step_s"] + settled / 1e3, color="tab:green",
                           alpha=0.25)
                title = "settled in %.0f ms" % settled
            else:
                title = "not re-converged"
            ax.set_title(title, fontsize=8, pad=2)
            ax.tick_params(labelsize=7)
            points = ax.twinx()
            points.step(t, [w[3] for w in run["trace"]], where="post", color="tab:red", lw=0.8)
            points.tick_params(labelsize=7)
    fig.suptitle("PolicyBalancer through 64 -> 1500 B on %s: Mpps (blue), profile point (red)"
                 % device, fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(sys.argv[1], dpi=80)


if __name__ == "__main__":
    main()
