#!/usr/bin/python3
"""Grouped bars of chosen figures from two `fulcrum bench` JSON files (before, after).

    tools/plot_before_after.py BEFORE.json AFTER.json OUT.png LABEL=PATH [LABEL=PATH ...]
        [--title TEXT] [--ylabel TEXT]

PATH walks the JSON: keys and list indices joined by '/', e.g.
`router_cost/this_process/router_cpu_mpps` or `noop_chain/points/9/mpps`. Prints each figure
before and after and their ratio. Needs python3-matplotlib (Debian's /usr/bin/python3).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def walk(doc, path):
    for part in path.split("/"):
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return float(doc)


def main(argv):
    opts = {"--title": "", "--ylabel": ""}
    rest = []
    i = 0
    while i < len(argv):
        if argv[i] in opts and i + 1 < len(argv):
            opts[argv[i]] = argv[i + 1]
            i += 2
        else:
            rest.append(argv[i])
            i += 1
    if len(rest) < 4:
        sys.exit(__doc__)
    before, after = (json.load(open(f)) for f in rest[:2])
    out, specs = rest[2], [s.split("=", 1) for s in rest[3:]]
    labels = [label for label, _ in specs]
    b = [walk(before, path) for _, path in specs]
    a = [walk(after, path) for _, path in specs]
    for label, x, y in zip(labels, b, a):
        print(f"{label}: {x:g} -> {y:g} ({y / x if x else float('nan'):.2f}x)")
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(labels)), 3.6))
    xs = range(len(labels))
    ax.bar([x - 0.2 for x in xs], b, 0.4, label="before")
    ax.bar([x + 0.2 for x in xs], a, 0.4, label="after")
    ax.set_xticks(list(xs), labels, fontsize=8)
    ax.set_ylabel(opts["--ylabel"])
    ax.set_title(opts["--title"])
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1:])
