#!/usr/bin/python3
"""Paper 003's batch model against its measured sweep, from `fulcrum bench --only placement`
outputs: per lookup table and size, the measured cycles of the model's point over the sweep's
best (and, where the bench rematched the two points, that ratio too), one marker per file, with
issue 11's 5 % line; and, for the first AFTER file, measured and predicted cycles per lookup over
the prefetch group at batch 256 for the tables far beyond the caches.

    tools/plot_batch_sweep.py OUT.png BEFORE=a.json,b.json AFTER=c.json,d.json

Prints the count within 5 % per file. Needs python3-matplotlib (Debian's /usr/bin/python3).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TARGET = 1.05


def lookups_of(path):
    with open(path) as f:
        return json.load(f)["placement"]["lookups"]


def main(argv):
    if len(argv) < 2 or any("=" not in a for a in argv[1:]):
        sys.exit(__doc__)
    out = argv[0]
    series = [(label, files.split(",")) for label, files in (a.split("=", 1) for a in argv[1:])]
    fig, (ratios, curves) = plt.subplots(1, 2, figsize=(13, 5))
    names = []
    colours = ["tab:red", "tab:blue", "tab:green", "tab:purple"]
    for si, (label, files) in enumerate(series):
        for fi, path in enumerate(files):
            rows = lookups_of(path)
            if not names:
                names = [f"{r['table']}\n{r['size']}" for r in rows]
            xs = [i + (si - (len(series) - 1) / 2) * 0.3 for i in range(len(rows))]
            sweep = [r["model_over_best"] for r in rows]
            ratios.scatter(xs, sweep, color=colours[si], marker="o", s=28,
                           label=f"{label}: model / sweep's best" if fi == 0 else None)
            within = sum(r <= TARGET for r in sweep)
            line = f"{label} {path}: {within} of {len(rows)} within 5 %"
            if all("model_over_best_rematched" in r for r in rows):
                rematched = [r["model_over_best_rematched"] for r in rows]
                ratios.scatter(xs, rematched, color=colours[si], marker="x", s=36,
                               label=f"{label}: the two points rematched" if fi == 0 else None)
                line += f" ({sum(r <= TARGET for r in rematched)} rematched)"
            print(line)
    ratios.axhline(TARGET, color="grey", linestyle="--", linewidth=1)
    ratios.set_xticks(range(len(names)))
    ratios.set_xticklabels(names, fontsize=7)
    ratios.set_ylabel("cycles per lookup at the model's point / at the best")
    ratios.set_title("model's choice against the measured sweep (dashed: 5 %)")
    ratios.legend(fontsize=7)

    after = series[-1][1][0]
    for i, r in enumerate(r for r in lookups_of(after) if r["size"] == "large"):
        points = sorted((p["group"], p) for p in r["sweep"] if p["batch"] == 256)
        groups = [g for g, _ in points]
        curves.plot(groups, [p["measured_cycles"] for _, p in points], color=colours[i % 4],
                    marker="o", label=f"{r['table']} measured")
        curves.plot(groups, [p["predicted_cycles"] for _, p in points], color=colours[i % 4],
                    linestyle="--", label=f"{r['table']} predicted")
    curves.set_xscale("log", base=2)
    curves.set_yscale("log")
    curves.set_xlabel("prefetch group (batch 256)")
    curves.set_ylabel("cycles per lookup")
    curves.set_title(f"tables beyond the caches ({series[-1][0]}, first file)")
    curves.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1:])
