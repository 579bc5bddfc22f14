#!/usr/bin/python3
"""A GPU's power and clock over time, from an nvidia-smi trace, with the moments of a run marked
(docs/benchmarks.md, "On a GPU: NVIDIA H200 — 2026-11-26, second session").

    nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm --format=csv,noheader -lms 200 > p.csv
    tools/plot_power.py p.csv marks.txt out.png [TITLE]

marks.txt: lines "MARK <unix seconds> <label>", or a line "=== ... <label>" followed by a line
holding the unix time alone (what the device scripts write). Times are UTC on both sides.
Needs python3-matplotlib (Debian's /usr/bin/python3).
"""
import datetime
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_trace(path):
    rows = []
    with open(path) as f:
        for line in f:
            p = [x.strip() for x in line.split(",")]
            try:
                t = datetime.datetime.strptime(p[0], "%Y/%m/%d %H:%M:%S.%f")
                watts = float(p[1].split()[0])
                mhz = float(p[2].split()[0])
            except (ValueError, IndexError):
                continue
            rows.append((t.replace(tzinfo=datetime.timezone.utc).timestamp(), watts, mhz))
    return rows


def read_marks(path):
    marks = []
    lines = open(path).read().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("MARK "):
            _, t, label = line.split(" ", 2)
            marks.append((float(t), label))
        elif line.startswith("===") and i + 1 < len(lines):
            try:
                marks.append((float(lines[i + 1]), line.split("] ", 1)[-1][:48]))
            except ValueError:
                pass
    return marks


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    rows, marks = read_trace(argv[1]), read_marks(argv[2])
    if not rows:
        sys.exit(f"{argv[1]}: no samples")
    t0 = marks[0][0] if marks else rows[0][0]
    fig, ax = plt.subplots(figsize=(11, 4.5))
    ax.plot([r[0] - t0 for r in rows], [r[1] for r in rows], color="tab:red", label="power (W)")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("board power (W)")
    ax2 = ax.twinx()
    ax2.plot([r[0] - t0 for r in rows], [r[2] for r in rows], color="tab:blue", alpha=0.4,
             label="SM clock (MHz)")
    ax2.set_ylabel("SM clock (MHz)")
    top = max(r[1] for r in rows)
    for k, (t, label) in enumerate(marks):
        ax.axvline(t - t0, color="gray", lw=0.8, ls="--")
        ax.text(t - t0, top * (0.98 - 0.06 * (k % 4)), " " + label, fontsize=7, va="top")
    ax.set_title(argv[4] if len(argv) > 4 else "GPU power over time")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(argv[3], dpi=90)


if __name__ == "__main__":
    main(sys.argv)
