#!/usr/bin/python3
"""Plots of every `fulcrum bench` group, for people to look at (docs/benchmarks.md).

    fulcrum bench --out bench.json          # or make bench, which calls this
    tools/plot_bench.py bench.json OUTDIR [GROUP ...]

Writes OUTDIR/GROUP.png (and GROUP-N.png when a group has several series) and prints one line
per file. The plots are read from the JSON's shape, so a new group gets plots without code here:

  * a list of points (objects sharing numeric fields) becomes a line plot against the field that
    varies along it (noops, frame size, offload fraction w, aggregate, batch, routes, ...): the
    throughput fields (Mpps, Gbps) on the left, ratios and ns figures on a second panel;
  * a list of results without such a field becomes grouped bars, labelled by their text fields
    (a single result: one bar per throughput field, e.g. the router against its ceilings);
  * an object of ratio_* figures becomes bars of those ratios with the line at 1.

Needs python3-matplotlib (scripts/install-deps.sh installs it, for Debian's /usr/bin/python3).
The adaptive group's traces have their own plots (tools/plot_adaptive.py).
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

X_FIELDS = ("noops", "elements", "w", "fraction", "offload_fraction", "size", "bytes", "frame_bytes",
            "payload_bytes", "aggregate", "batch", "routes", "entries", "rules", "names", "k",
            "branches", "outputs", "rate_mpps", "offered_mpps", "seconds", "t_s")


def numeric(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_throughput(key):
    return "mpps" in key or "gbps" in key or "mlookups" in key


def is_secondary(key):
    return key.startswith("ratio") or "_vs_" in key or key.endswith("_ratio") or "ns_per" in key \
        or key.endswith("_ns")


def series(node, path=()):
    """(path, list of dicts) for every list of at least two objects anywhere in `node`."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from series(v, path + (k,))
    elif isinstance(node, list):
        objs = [x for x in node if isinstance(x, dict)]
        if objs and len(objs) == len(node):
            yield path, objs
        for i, x in enumerate(node):
            if isinstance(x, (dict, list)):
                yield from series(x, path + (str(i),))


def ratio_dicts(node, path=()):
    """(path, {key: value}) for objects holding at least two ratio figures."""
    if isinstance(node, dict):
        ratios = {k: v for k, v in node.items() if numeric(v) and k.startswith("ratio")}
        if len(ratios) >= 2:
            yield path, ratios
        for k, v in node.items():
            yield from ratio_dicts(v, path + (k,))
    elif isinstance(node, list):
        for i, x in enumerate(node):
            yield from ratio_dicts(x, path + (str(i),))


def x_field(points):
    keys = [k for k in X_FIELDS if all(numeric(p.get(k)) for p in points)]
    for k in keys:
        if len({p[k] for p in points}) > 1:
            return k
    return None


def labels(points):
    """A label per point: its text fields joined ("99/1 reuse"), else the first varying or
    identifying number ("routes=16384"), else its index."""
    texts = [" ".join(str(v) for k, v in p.items() if isinstance(v, str) and k != "what")
             for p in points]
    if all(texts):
        return texts
    for k in X_FIELDS:
        if all(numeric(p.get(k)) for p in points):
            return [f"{k}={p[k]}" for p in points]
    return [str(i) for i in range(len(points))]


def plot_points(title, points, out):
    common = [k for k in points[0] if all(numeric(p.get(k)) for p in points)]
    x = x_field(points) if len(points) > 1 else None
    first = [k for k in common if is_throughput(k) and k != x]
    second = [k for k in common if is_secondary(k) and k != x and k not in first]
    if not first and not second:
        return False
    panels = [ys for ys in (first, second) if ys]
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 3.2 * len(panels)), squeeze=False)
    names = labels(points)
    for ax, ys in zip(axes[:, 0], panels):
        if x:
            for y in ys:
                pts = sorted((p[x], p[y]) for p in points)
                ax.plot([a for a, _ in pts], [b for _, b in pts], marker="o", label=y)
            ax.set_xlabel(x)
        elif len(points) == 1:
            ax.bar(range(len(ys)), [points[0][y] for y in ys])
            ax.set_xticks(range(len(ys)))
            ax.set_xticklabels(ys, rotation=20, ha="right", fontsize=7)
            ax.set_xlabel(names[0])
        else:
            n = len(ys)
            width = 0.8 / n
            for i, y in enumerate(ys):
                ax.bar([j + i * width for j in range(len(points))], [p[y] for p in points], width,
                       label=y)
            ax.set_xticks([j + 0.4 - width / 2 for j in range(len(points))])
            ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
        if ys is second and any(k.startswith("ratio") or "_vs_" in k for k in ys):
            ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
        ax.grid(alpha=0.3)
        if x or len(points) > 1:
            ax.legend(fontsize=7)
    axes[0, 0].set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return True


def plot_ratios(title, ratios, out):
    fig, ax = plt.subplots(figsize=(8, 3.2))
    names = list(ratios)
    ax.bar(range(len(names)), [ratios[n] for n in names])
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return True


def plot_group(name, group, outdir):
    written = []
    what = group.get("what", "") if isinstance(group, dict) else ""
    figures = [(p, pts, plot_points) for p, pts in series(group)]
    if not figures:
        figures = [(p, r, plot_ratios) for p, r in ratio_dicts(group)]
    for path, data, fn in figures:
        title = " / ".join((name,) + path) + (f"\n{what}" if what else "")
        out = os.path.join(outdir, f"{name}.png" if not written else f"{name}-{len(written)}.png")
        if fn(title[:160], data, out):
            written.append(out)
    return written


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        data = json.load(f)
    os.makedirs(argv[2], exist_ok=True)
    wanted = set(argv[3:])
    groups = {k: v for k, v in data.items() if isinstance(v, (dict, list))}
    unknown = wanted - set(groups)
    if unknown:
        print(f"plot_bench: no group {sorted(unknown)} in {argv[1]} (it has {sorted(groups)})",
              file=sys.stderr)
        return 2
    for name, group in groups.items():
        if wanted and name not in wanted:
            continue
        files = plot_group(name, group, argv[2])
        for f in files:
            print(f)
        if not files:
            print(f"plot_bench: {name}: nothing to plot", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
