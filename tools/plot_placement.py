#!/usr/bin/python3
"""Predicted against measured throughput of every placement of `fulcrum bench --only
placement_verify` outputs, one panel per file, with the +-15 % band of issue 11's target.

    tools/plot_placement.py OUT.png LABEL=BENCH.json [LABEL=BENCH.json ...]

Each panel: cloned placements as circles, cuts as triangles, coloured by pipeline; the title
counts the placements within 15 %. Prints the same counts. Needs python3-matplotlib (Debian's
/usr/bin/python3).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BAND = 0.15


def rows_of(path):
    with open(path) as f:
        doc = json.load(f)
    out = []
    for p in doc["placement_verify"]["pipelines"]:
        for r in p["rows"]:
            out.append((p["pipeline"], r["kind"], r["measured_mpps"], r["predicted_mpps"]))
    return out


def main(argv):
    if len(argv) < 2 or any("=" not in a for a in argv[1:]):
        sys.exit(__doc__)
    out = argv[0]
    panels = [a.split("=", 1) for a in argv[1:]]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 5), squeeze=False)
    colours = {}
    for ax, (label, path) in zip(axes[0], panels):
        rows = rows_of(path)
        within = sum(1 for _, _, m, p in rows if m > 0 and abs(p / m - 1) <= BAND)
        cuts = [r for r in rows if r[1] != "clone"]
        cuts_within = sum(1 for _, _, m, p in cuts if m > 0 and abs(p / m - 1) <= BAND)
        print(f"{label}: {within} of {len(rows)} within 15 % ({cuts_within} of {len(cuts)} cuts)")
        top = max(max(m, p) for _, _, m, p in rows) * 1.3
        low = min(min(m, p) for _, _, m, p in rows) / 1.3
        xs = [low, top]
        ax.plot(xs, xs, color="black", linewidth=0.8)
        ax.fill_between(xs, [x * (1 - BAND) for x in xs], [x * (1 + BAND) for x in xs],
                        color="grey", alpha=0.2, label="within 15 %")
        for name, kind, m, p in rows:
            c = colours.setdefault(name, f"C{len(colours)}")
            ax.scatter(m, p, color=c, marker="o" if kind == "clone" else "^", s=36)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(low, top)
        ax.set_ylim(low, top)
        ax.set_xlabel("measured Mpps")
        ax.set_ylabel("predicted Mpps")
        ax.set_title(f"{label}: {within} of {len(rows)} within 15 %")
    handles = [plt.Line2D([], [], color=c, marker="s", linestyle="", label=n)
               for n, c in colours.items()]
    handles += [plt.Line2D([], [], color="black", marker="o", linestyle="", label="clone"),
                plt.Line2D([], [], color="black", marker="^", linestyle="", label="cut")]
    axes[0][-1].legend(handles=handles, fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1:])
