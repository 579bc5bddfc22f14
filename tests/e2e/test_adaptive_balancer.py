#!/usr/bin/env python3
"""End to end: AdaptiveBalancer (NBA's adaptive load balancer) in front of the offloaded IPv4
lookup, on an emulated device (FULCRUM_EMU_DEVICES, FULCRUM_OFFLOAD_BACKEND=emu), so it runs the
same on any machine.

1. From a pcap, with AFFINITY: the same packets per port as the CPU-only run (whose output
   offload_router.py checks against an independent LPM), every flow in order, the balance line
   holding, and the device given packets (INITIAL 0.5 offloads from the first batch); the
   report's device section says the device is emulated and its task times follow the model.
2. From the generator for 1.5 s with 10 ms windows: windows pass and w moves (at least one of
   each: lower bounds a loaded machine cannot break), w stays within [0, 1000] per mille, and no
   packet is lost.
3. SCAN 4: the first windows scan w = 0, 0.25, ..., 1 in order; the balance line holds.
4. Two workers share one balancer: its figures (fraction, windows) are reported once, not added
   up over the replicas (with a window longer than the run, w stays at INITIAL 0.8: 800).
No assertion is about throughput: bench `adaptive` measures that.
"""
import os
import sys

import fulcrum_e2e as e2e
import offload_router

os.environ["FULCRUM_OFFLOAD_BACKEND"] = "emu"
os.environ["FULCRUM_EMU_DEVICES"] = "kernel_mpps=20,launch_us=5,lat_us=30"
ADAPTIVE = "AdaptiveBalancer(WINDOW_MS 10, INITIAL 0.5)"


def main():
    family = offload_router.IPV4
    work = e2e.Workdir("adaptive-balancer")
    routes_file, _, _ = offload_router.workload(work, family)
    lookup = (f"{family.demo_routes}, AGGREGATE 32", f"{routes_file}, AGGREGATE 4")
    failures, adaptive = offload_router.balanced_against_cpu(work, family, routes_file, ADAPTIVE)
    if adaptive[0] is None:
        return work.finish(failures)
    # The report names the device as emulated, and its task times follow the model: every task
    # is on the device at least lat_us (30 us), a lower bound no load can break.
    devices = [d for d in adaptive[0].get("devices", []) if d["tasks_ok"] > 0]
    if len(devices) != 1 or not devices[0]["emulated"] or devices[0]["device_us"] < 30:
        failures.append(f"device report: {adaptive[0].get('devices')}")
    elif abs(devices[0]["queue_us"] + devices[0]["device_us"] + devices[0]["return_us"] -
             devices[0]["task_us"]) > 0.05 * devices[0]["task_us"] + 1:
        failures.append(f"task time parts do not add up: {devices[0]}")

    text = open(os.path.join(e2e.SOURCE_DIR, "configs", family.config)).read()
    config = work.file(
        "gen.click", text.replace("DeviceOnly", ADAPTIVE).replace(lookup[0], lookup[1]))
    gen = f"gen:size=64,flows=1024,dst=routes,routes={routes_file}"
    _, stats = e2e.run_fulcrum(work, config, [gen, "net_null0,no-rx=1"], extra=["--seconds", "1.5"])
    if stats is None:
        return work.finish(failures + ["generator run failed"])
    c = e2e.counters_of(stats, "AdaptiveBalancer")
    if not stats["balanced"]:
        failures.append("generator run: the balance line does not hold")
    if c.get("windows", 0) < 1 or c.get("moves", 0) < 1:
        failures.append(f"the balancer never observed or moved: {c}")
    if not 0 <= c.get("fraction_permille", -1) <= 1000:
        failures.append(f"fraction out of range: {c}")
    if c.get("offloaded", 0) + c.get("kept", 0) == 0:
        failures.append(f"no batch decided: {c}")
    print(f"adaptive: {c}")

    # SCAN 4 (beyond NBA): the climb starts with w = 0, 0.25, 0.5, 0.75, 1, each observed for
    # SCAN_WINDOWS windows after SETTLE, in that order (checked when the run had the windows).
    trace = work.file("scan.trace")
    scan = work.file("scan.click", text.replace(
        "DeviceOnly", f"AdaptiveBalancer(WINDOW_MS 10, SCAN 4, MARGIN 1, TRACE {trace})")
        .replace(lookup[0], lookup[1]))
    _, stats = e2e.run_fulcrum(work, scan, [gen, "net_null0,no-rx=1"], extra=["--seconds", "1"])
    if stats is None:
        return work.finish(failures + ["SCAN run failed"])
    c = e2e.counters_of(stats, "AdaptiveBalancer")
    if not stats["balanced"] or c.get("scans", 0) < 1 or "noise_permille" not in c:
        failures.append(f"SCAN run: balanced {stats['balanced']}, counters {c}")
    rows = [line.split() for line in open(trace).read().splitlines()[1:]]
    scanned = []
    for row in rows[:20]:
        w = round(float(row[1]), 2)
        if not scanned or scanned[-1] != w:
            scanned.append(w)
    if len(rows) >= 20 and scanned[:5] != [0.0, 0.25, 0.5, 0.75, 1.0]:
        failures.append(f"SCAN run: first fractions {scanned}, expected 0, 0.25, 0.5, 0.75, 1")
    print(f"scan: {c}, first fractions {scanned[:6]}")

    still = work.file("still.click", text.replace("DeviceOnly", "AdaptiveBalancer(WINDOW_MS 100000, INITIAL 0.8)")
                      .replace(lookup[0], lookup[1]))
    _, stats = e2e.run_fulcrum(work, still, [gen, "net_null0,no-rx=1"],
                               extra=["--seconds", "0.5", "--workers", "2"])
    if stats is None:
        return work.finish(failures + ["two-worker run failed"])
    c = e2e.counters_of(stats, "AdaptiveBalancer")
    if c.get("fraction_permille") != 800 or c.get("windows") != 0:
        failures.append(f"two workers: fraction_permille {c.get('fraction_permille')} and windows "
                        f"{c.get('windows')}, expected 800 and 0 (shared figures reported once)")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
