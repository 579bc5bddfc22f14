#!/usr/bin/python3
"""The runtime hand-off across this VM's two cross-CPU regimes, from `fulcrum bench --only
placement_verify` outputs (docs/placement-model.md, "Regimes"):

1. per regime of the points' ring (fast below 30 cycles of enqueue + dequeue, slow from 60,
   between: "mid"), the median (range) and count of: each side at the smallest frame over its
   ring; and, from calibrations whose points are all of one regime, what the larger frame, the
   spread reference and the scan reference cost beyond the smallest point (in cycles);
2. per file, the rounds of the pipelined placements whose ring was of the calibration's regime
   and of the other one: how many were predicted within 15 % (predicted / measured per round).

    tools/handoff_regimes.py FILE.json [...]
"""
import json
import sys

TARGET = 0.15


def regime(ring):
    return "fast" if ring < 30 else "slow" if ring >= 60 else "mid"


def summary(values):
    v = sorted(values)
    return "%.2f (%.2f..%.2f), %d" % (v[len(v) // 2], v[0], v[-1], len(v))


def shares(paths):
    stats = {}

    def add(key, reg, value):
        stats.setdefault((key, reg), []).append(value)

    for path in paths:
        with open(path) as f:
            pipelines = json.load(f)["placement_verify"]["pipelines"]
        for p in pipelines:
            points = p.get("handoff", [])
            if not points or points[0].get("ring_cycles", 0) <= 0:
                continue
            first = points[0]
            reg = regime(first["ring_cycles"])
            add("consumer / ring", reg, first["consumer_cycles_per_packet"] / first["ring_cycles"])
            add("producer / ring", reg, first["producer_cycles_per_packet"] / first["ring_cycles"])
            if any(regime(x.get("ring_cycles", 0)) != reg for x in points) or len(points) < 2:
                continue
            last = points[-1]
            add("producer, largest - smallest", reg,
                last["producer_cycles_per_packet"] - first["producer_cycles_per_packet"])
            add("consumer, largest - smallest", reg,
                last["consumer_cycles_per_packet"] - first["consumer_cycles_per_packet"])
            if p.get("handoff_spread_consumer_cycles"):
                add("spread consumer - smallest", reg,
                    p["handoff_spread_consumer_cycles"] - first["consumer_cycles_per_packet"])
            if p.get("handoff_scan_consumer_cycles"):
                add("scan consumer - largest", reg,
                    p["handoff_scan_consumer_cycles"] - last["consumer_cycles_per_packet"])
    for key in sorted({k for k, _ in stats}):
        row = ["%-30s" % key]
        for reg in ("fast", "mid", "slow"):
            row.append("%s: %s" % (reg, summary(stats[(key, reg)])) if (key, reg) in stats else "")
        print("  ".join(r for r in row if r))


def rounds(path):
    with open(path) as f:
        pipelines = json.load(f)["placement_verify"]["pipelines"]
    same, other = [], []
    for p in pipelines:
        points = p.get("handoff", [])
        if not points:
            continue
        calibrated = regime(points[0]["ring_cycles"])
        for row in p["rows"]:
            if row["placement"] == "clone":
                continue
            for r in row["rounds"]:
                if r["mpps"] <= 0:
                    continue
                q = r["predicted_mpps"] / r["mpps"]
                here = regime(r["ring_cycles_before"]) == calibrated
                (same if here else other).append((q, p["pipeline"]))

    def text(v):
        if not v:
            return "none"
        hits = sum(1 for q, _ in v if abs(q - 1) <= TARGET)
        return "%d of %d within 15 %% (%.2f..%.2f)" % (
            hits, len(v), min(q for q, _ in v), max(q for q, _ in v))

    names = ",".join(sorted({n for _, n in other}))
    print("%s: calibration's regime %s; the other regime %s%s" % (
        path, text(same), text(other), " [" + names + "]" if names else ""))


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    shares(argv[1:])
    for path in argv[1:]:
        rounds(path)


if __name__ == "__main__":
    main(sys.argv)
