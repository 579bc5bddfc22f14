#!/usr/bin/env python3
"""Summarises tools/clone_scaling.sh output: per build and pipeline, the clone's rate over the sum
of the two one-worker rates (median, range), split by the recorded regime figure (at or above
--slow: the slow regime). Usage: clone_scaling_table.py [--slow CYCLES] FILE.jsonl..."""
import argparse
import json
import statistics


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--slow", type=float, default=300)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    rows = {}
    for f in a.files:
        for line in open(f):
            if not line.strip():
                continue
            r = json.loads(line)
            regime = r.get("regime")
            kind = "?" if regime is None else ("slow" if regime >= a.slow else "fast")
            rows.setdefault((r["pipeline"], r["build"]), {}).setdefault(kind, []).append(
                r["clone_over_two_ones"])
    print("| pipeline | build | fast regime: median (range), n | slow regime: median (range), n |")
    print("|---|---|---|---|")
    for (pipe, build), by in sorted(rows.items()):
        cells = []
        for kind in ("fast", "slow"):
            v = by.get(kind, [])
            cells.append("%.3f (%.3f–%.3f), %d" % (statistics.median(v), min(v), max(v), len(v))
                         if v else "–")
        print("| %s | %s | %s | %s |" % (pipe, build, cells[0], cells[1]))


if __name__ == "__main__":
    main()
