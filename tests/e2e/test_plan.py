#!/usr/bin/env python3
"""End to end: `fulcrum plan` (docs/placement-model.md) on the IPv4 router.

1. `plan --calibrate` with the pipeline writes the calibration: the machine (caches, TSC),
   memory latencies and the group reads, the ring hand-off (the spread and scan references
   too), the ports the router's packets leave by (2), and every element's cycles; IPLookup's lookup profile
   (its prefetch group and the 6 x 7 grid of hot cycles). Without a pipeline: the machine only.
2. `plan --cores 2` from that file prints cloning and every single cut (one per element between
   FromInput and ToOutput) in the --placement form, each with its stages and its bottleneck, the
   batch/prefetch advice and the scaling table labelled as predictions; --json holds the same
   placements, a best one among them, and predictions for 1..64 cores. With 4 cores: every cut
   set of at most 4 stages, each placement's cores summing to 4.
3. PREFETCH: a power of two and auto load (auto with the calibration named by
   FULCRUM_CALIBRATION) and the run loses nothing; 12 is refused naming the key.
4. Mistakes: a calibration that is not JSON (FILE:LINE:COL), one with a field missing (its path),
   no pipeline, --cores 0.
5. `--verify` runs every placement on 2 workers and reports a measured throughput beside each
   prediction.
6. Every printed placement runs under `fulcrum run --placement` and loses nothing; `--placement
   auto` (the calibration from FULCRUM_CALIBRATION) runs the plan's best placement, says which,
   and loses nothing.
No assertion is about how fast anything ran.
"""
import json
import os
import re
import sys

import fulcrum_e2e as e2e


def main():
    work = e2e.Workdir("plan")
    failures = []
    routes = os.path.join(e2e.SOURCE_DIR, "configs", "routes-demo.txt")
    text = open(os.path.join(e2e.SOURCE_DIR, "configs", "ipv4-router.click")).read()
    config = work.file("router.click", text.replace("routes-demo.txt", routes))
    gen = f"gen:size=64,flows=1024,dst=routes,routes={routes}"
    ports = ["--port", gen, "--port", "net_null0,no-rx=1"]
    cal_path = work.file("cal.json")

    res = e2e.run_cmd(["plan", "--calibrate", config, *ports, "--seconds", "0.2",
                       "--out", cal_path])
    if res.returncode != 0:
        return work.finish([f"calibrate failed: {res.stderr}"])
    cal = json.load(open(cal_path))
    m, mem, ring = cal["machine"], cal["memory"], cal["ring"]
    if not (m["cpus"] >= 1 and m["tsc_hz"] > 0 and 0 < m["l1d_bytes"] <= m["l2_bytes"] <=
            m["llc_bytes"] <= m["llc_sysfs_bytes"]):
        failures.append(f"machine: {m}")
    if not (0 < mem["l1_cycles"] <= mem["l2_cycles"] <= mem["llc_cycles"] <= mem["dram_cycles"]
            and mem["parallel_misses"] >= 1):
        failures.append(f"memory: {mem}")
    # The group reads: cycles per line in groups of 1..64, prefetched ahead and within.
    for key in ("group_ahead_line_cycles", "group_within_line_cycles"):
        row = mem.get(key, [])
        if not (len(row) == 7 and all(x > 0 for x in row)):
            failures.append(f"memory.{key}: {row}")
    if not (ring["batch"] == 64 and ring["enqueue_cycles_per_packet"] > 0 and
            ring["dequeue_cycles_per_packet"] > 0):
        failures.append(f"ring: {ring}")
    # The hand-off through the runtime (format 2): a reference pipeline cloned against cut on
    # 1+1 at 64 and 512 B; where this machine could not run it (one CPU), no points and the
    # model falls back to the ring.
    handoff = cal.get("handoff", {})
    points = handoff.get("points", [])
    if cal.get("format") != 2 or handoff.get("batch") != 64 or (
            points and ([p["frame_bytes"] for p in points] != [64, 512] or
                        handoff.get("attempts", 0) < 1 or
                        not all(p["ring_cycles"] > 0 for p in points))):
        failures.append(f"handoff: format {cal.get('format')}, {handoff}")
    # With the points, the spread reference (each flow routed to one of two ports) at 64 B.
    spread = handoff.get("spread", {})
    if points and not (spread.get("frame_bytes") == 64 and spread.get("ring_cycles", 0) > 0):
        failures.append(f"handoff spread point: {spread}")
    # And the scan reference (an IDSMatch scanning every payload) at 512 B.
    scan = handoff.get("scan", {})
    if points and not (scan.get("frame_bytes") == 512 and scan.get("ring_cycles", 0) > 0 and
                       scan.get("consumer_cycles_per_packet", -1) >= 0):
        failures.append(f"handoff scan point: {scan}")
    if not cal["pipeline"].get("frame_bytes", 0) > 0:
        failures.append(f"pipeline frame bytes: {cal['pipeline']}")
    # The router's routes send about half the packets out of each of the two ports.
    if cal["pipeline"].get("out_ports") != 2:
        failures.append(f"pipeline out ports: {cal['pipeline'].get('out_ports')}")
    elements = cal["pipeline"]["elements"]
    classes = [e["class"] for e in elements]
    if classes != ["FromInput", "CheckIPHeader", "IPLookup", "DecIPTTL", "EtherRewrite",
                   "ToOutput"]:
        failures.append(f"elements: {classes}")
    lookup = next((e for e in elements if e["class"] == "IPLookup"), {})
    lk = lookup.get("memory", {}).get("lookup", {})
    if not (lk.get("prefetch_group") == 16 and len(lk.get("hot_cycles", [])) == 6 and
            all(len(row) == 7 for row in lk["hot_cycles"]) and
            lookup["memory"]["working_set_bytes"] > 0 and lookup["cycles_per_packet"] > 0):
        failures.append(f"IPLookup's profile: {lookup}")

    res = e2e.run_cmd(["plan", "--calibrate"])
    if res.returncode != 0 or json.loads(res.stdout)["pipeline"]["elements"] != []:
        failures.append(f"machine-only calibration: {res.returncode} {res.stderr}")

    names = {e["class"]: e["name"] for e in elements}
    cuts = [names[c] for c in ("CheckIPHeader", "IPLookup", "DecIPTTL", "EtherRewrite")]
    res = e2e.run_cmd(["plan", config, "--cores", "2", *ports, "--calibration", cal_path])
    if res.returncode != 0:
        failures.append(f"plan failed: {res.stderr}")
    out = res.stdout
    print(out)
    expected = ["clone"] + [f"cut={c},cores=1+1" for c in cuts]
    for p in expected:
        if not re.search(r"^\s+\d+\s+\w+\s+[\d.]+\s+" + re.escape(p) + "$", out, re.M):
            failures.append(f"placement {p} not printed")
    for word in ("bottleneck", "PREDICTIONS", "assumptions:", "best: --placement", "PREFETCH",
                 "memory lines read in groups of 1..64"):
        if word not in out:
            failures.append(f"'{word}' not in the plan")

    res = e2e.run_cmd(["plan", config, "--cores", "2", *ports, "--calibration", cal_path,
                       "--json"])
    plan = json.loads(res.stdout) if res.returncode == 0 else {}
    got = sorted(p["placement"] for p in plan.get("placements", []))
    if got != sorted(expected):
        failures.append(f"JSON placements: {got}")
    if plan.get("best") not in expected:
        failures.append(f"best: {plan.get('best')}")
    mpps = [p["mpps"] for p in plan.get("placements", [])]
    if mpps != sorted(mpps, reverse=True) or not all(x > 0 for x in mpps):
        failures.append(f"placements not best first: {mpps}")
    if [s["cores"] for s in plan.get("scaling", [])] != [1, 2, 4, 8, 16, 32, 64] or \
            not all(s["prediction"] for s in plan["scaling"]):
        failures.append(f"scaling: {plan.get('scaling')}")
    advice = plan.get("lookups", [])
    if len(advice) != 1 or advice[0]["best"]["group"] not in (1, 2, 4, 8, 16, 32, 64) or \
            advice[0]["now"]["group"] != 16:
        failures.append(f"batch/prefetch advice: {advice}")

    res = e2e.run_cmd(["plan", config, "--cores", "4", *ports, "--calibration", cal_path,
                       "--json"])
    plan4 = json.loads(res.stdout) if res.returncode == 0 else {"placements": []}
    # Cut sets of 4 cut points with at most 3 cuts: 4 + 6 + 4, and cloning.
    if len(plan4["placements"]) != 15:
        failures.append(f"4 cores: {len(plan4['placements'])} placements")
    for p in plan4["placements"]:
        total = sum(s["cores"] for s in p["stages"])
        if total != 4 or (p["kind"] != "clone" and
                          p["placement"].split("cores=")[1] !=
                          "+".join(str(s["cores"]) for s in p["stages"])):
            failures.append(f"4 cores: {p['placement']} has {total} cores")

    # --verify: every placement runs and gets a measurement beside its prediction.
    res = e2e.run_cmd(["plan", config, "--cores", "2", *ports, "--calibration", cal_path,
                       "--json", "--verify", "0.2"])
    verified = json.loads(res.stdout) if res.returncode == 0 else {"placements": []}
    measured = sorted(p["placement"] for p in verified["placements"]
                      if (p.get("measured_mpps") or 0) > 0)
    if res.returncode != 0 or measured != sorted(expected):
        failures.append(f"--verify: {res.returncode} {res.stderr} measured {measured}")

    prefetch = work.file("prefetch.click", text.replace(
        "IPLookup(routes-demo.txt)", f"IPLookup({routes}, PREFETCH 8)"))
    res = e2e.run_cmd(["check", prefetch, "--ports", "2"])
    if res.returncode != 0:
        failures.append(f"PREFETCH 8 refused: {res.stderr}")
    bad = work.file("bad-prefetch.click", text.replace(
        "IPLookup(routes-demo.txt)", f"IPLookup({routes}, PREFETCH 12)"))
    res = e2e.run_cmd(["check", bad, "--ports", "2"])
    if res.returncode == 0 or "PREFETCH: expected auto or a power of two from 1 to 64, got '12'" \
            not in res.stderr:
        failures.append(f"PREFETCH 12: {res.returncode} {res.stderr}")
    auto = work.file("auto.click", text.replace(
        "IPLookup(routes-demo.txt)", f"IPLookup({routes}, PREFETCH auto)"))
    os.environ["FULCRUM_CALIBRATION"] = cal_path
    _, stats = e2e.run_fulcrum(work, auto, [gen, "net_null0,no-rx=1"], extra=["--seconds", "0.2"])
    if stats is None or not stats["balanced"] or stats["packets_out"] == 0:
        failures.append("PREFETCH auto: the run failed or lost packets")
    os.environ["FULCRUM_CALIBRATION"] = work.file("missing.json")
    res = e2e.run_cmd(["check", auto, "--ports", "2"])
    if res.returncode == 0 or "PREFETCH auto: cannot open calibration" not in res.stderr:
        failures.append(f"PREFETCH auto without its calibration: {res.returncode} {res.stderr}")
    del os.environ["FULCRUM_CALIBRATION"]

    broken = work.file("broken.json", "{\n  \"format\": 1,\n  \"machine\": {,}\n}\n")
    res = e2e.run_cmd(["plan", config, *ports, "--calibration", broken])
    if res.returncode != 1 or f"{broken}:3:15: not JSON" not in res.stderr:
        failures.append(f"broken calibration: {res.returncode} {res.stderr}")
    missing = dict(cal)
    missing["memory"] = {k: v for k, v in cal["memory"].items() if k != "dram_cycles"}
    missing_path = work.file("missing-field.json", json.dumps(missing))
    res = e2e.run_cmd(["plan", config, *ports, "--calibration", missing_path])
    if res.returncode != 1 or "field memory.dram_cycles: missing" not in res.stderr:
        failures.append(f"missing field: {res.returncode} {res.stderr}")
    res = e2e.run_cmd(["plan", "--cores", "2"])
    if res.returncode != 2 or "no pipeline file given" not in res.stderr:
        failures.append(f"no pipeline: {res.returncode} {res.stderr}")
    res = e2e.run_cmd(["plan", config, *ports, "--cores", "0"])
    if res.returncode != 2 or "--cores" not in res.stderr:
        failures.append(f"--cores 0: {res.returncode} {res.stderr}")

    # Every placement printed runs and loses nothing.
    for p in expected:
        _, stats = e2e.run_fulcrum(work, config, [gen, "net_null0,no-rx=1"],
                                   extra=["--workers", "2", "--placement", p, "--seconds", "0.3"])
        if stats is None or not stats["balanced"] or stats["packets_out"] == 0:
            failures.append(f"--placement {p}: the run failed or lost packets")
    # --placement auto runs the plan's best placement for 2 workers and names it.
    os.environ["FULCRUM_CALIBRATION"] = cal_path
    res, stats = e2e.run_fulcrum(work, config, [gen, "net_null0,no-rx=1"],
                                 extra=["--workers", "2", "--placement", "auto",
                                        "--seconds", "0.3"])
    del os.environ["FULCRUM_CALIBRATION"]
    chose = re.search(r"--placement auto chose (\S+)", res.stderr)
    if stats is None or not stats["balanced"] or stats["packets_out"] == 0 or chose is None \
            or chose.group(1) not in expected or stats.get("placement") != chose.group(1):
        failures.append(f"--placement auto: {res.stderr} {stats and stats.get('placement')}")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
