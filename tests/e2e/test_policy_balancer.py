#!/usr/bin/env python3
"""End to end: PolicyBalancer (the thesis' policy scheduler) in front of the offloaded IPv4
lookup, on an emulated device, with a profile written here: "CPU only" (claimed 100 kpps, 30 W
idle, 40 W loaded) and "60 % to the device, 2 batches per task" (claimed 100 Mpps, 60/120 W).

1. From a pcap, POLICY throughput: the device mix (the fastest) from the first batch; the same
   packets per port as the CPU-only run (whose output offload_router.py checks against an
   independent LPM), every flow in order under AFFINITY, the balance line holding, the device
   given packets, and the counters naming the configuration in force.
2. From the generator, POLICY energy: 20 kpps for 0.6 s (the CPU alone carries it and costs
   less), then flat out (the CPU is backlogged: only the mix carries it). The trace must show
   the CPU chosen in most windows of the first phase (a loaded machine may stall a window into a
   backlog; the next one reverts) and the mix in the last window; no packet lost.
3. Online latency: in that run the balancer timed sampled packets (p99_ns, and the profile's
   prediction for it, predicted_p99_ns, in its counters; the trace's p99_us column).
   The energy policy releases the unused device (RELEASE_IDLE_MS 50: the light phase leaves it
   idle for longer) and the flat-out phase takes it back; the throughput run, whose device is
   never idle for long and whose policy leaves the release off, releases nothing.
   `--release-idle-ms` releases the device of a CPUOnly run; a bad value is a usage error.
4. A device index the run does not have (one emulated device here) is a configuration error
   naming the file and line: a profile point's (PolicyBalancer) and FixedFraction's DEVICE.
No assertion is about throughput or timing.
"""
import json
import os
import sys

import fulcrum_e2e as e2e
import offload_router

os.environ["FULCRUM_OFFLOAD_BACKEND"] = "emu"
os.environ["FULCRUM_EMU_DEVICES"] = "kernel_mpps=20,launch_us=5,lat_us=30"
STEP_S = 0.6


def profile():
    def point(fraction, aggregate, pps, p99, power, idle):
        return {"device": 0, "fraction": fraction, "aggregate": aggregate, "throughput_pps": pps,
                "p50_us": p99 / 2, "p99_us": p99, "power_w": power, "idle_w": idle,
                "power_measured": False}
    return {"format": 1, "pipeline": "ipv4_router_offload", "traffic": "test",
            "devices": ["emu0"],
            "points": [point(0, 1, 1e5, 50, 40, 30), point(0.6, 2, 1e8, 400, 120, 60)]}


def main():
    family = offload_router.IPV4
    work = e2e.Workdir("policy-balancer")
    routes_file, _, _ = offload_router.workload(work, family)
    profile_file = work.file("profile.json", json.dumps(profile()))
    lookup = (f"{family.demo_routes}, AGGREGATE 32", f"{routes_file}, AGGREGATE 4")
    balancer = f"PolicyBalancer({profile_file}, POLICY throughput, WINDOW_MS 10)"
    failures, policy = offload_router.balanced_against_cpu(work, family, routes_file, balancer)
    if policy[0] is None:
        return work.finish(failures)
    c = e2e.counters_of(policy[0], "PolicyBalancer")
    if c.get("config") != 1 or c.get("fraction_permille") != 600 or c.get("offloaded", 0) == 0:
        failures.append(f"throughput policy: not on the device mix: {c}")

    text = open(os.path.join(e2e.SOURCE_DIR, "configs", family.config)).read()
    trace = work.file("trace.txt")
    energy = (f"PolicyBalancer({profile_file}, POLICY energy, WINDOW_MS 20, RELEASE_IDLE_MS 50, "
              f"TRACE {trace})")
    config = work.file("gen.click",
                       text.replace("DeviceOnly", energy).replace(lookup[0], lookup[1]))
    gen = (f"gen:size=64,flows=1024,dst=routes,routes={routes_file},rate=20000,"
           f"step_after={STEP_S},step_rate=0")
    _, stats = e2e.run_fulcrum(work, config, [gen, "net_null0,no-rx=1"], extra=["--seconds", "1.2"])
    if stats is None:
        return work.finish(failures + ["generator run failed"])
    if not stats["balanced"]:
        failures.append("generator run: the balance line does not hold")
    rows = [line.split() for line in open(trace).read().splitlines()[1:]]
    # time_s rate_pps full_share fraction device aggregate config p99_us
    before = [float(r[3]) for r in rows if float(r[0]) < STEP_S - 0.05]
    if len(before) < 5 or sum(1 for f in before if f == 0) < 0.8 * len(before):
        failures.append(f"light load: the CPU not chosen in most windows: {before}")
    if not rows or float(rows[-1][3]) != 0.6:
        failures.append(f"flat out: the last window did not choose the device mix: {rows[-3:]}")
    c = e2e.counters_of(stats, "PolicyBalancer")
    if c.get("switches", 0) < 1 or c.get("offloaded", 0) == 0 or c.get("kept", 0) == 0:
        failures.append(f"energy policy: expected a switch, both processors used: {c}")
    print(f"energy: {c}")
    if c.get("p99_ns", 0) <= 0 or c.get("predicted_p99_ns", 0) <= 0:
        failures.append(f"online latency: no p99 measured or predicted: {c}")
    if not any(float(r[7]) > 0 for r in rows):
        failures.append("online latency: no window of the trace carries a p99")
    dev = stats["devices"][0]
    if dev["releases"] < 1 or dev["reacquires"] < 1 or dev["released_s"] <= 0:
        failures.append(f"energy policy: the idle device not released and taken back: {dev}")
    if policy[0]["devices"][0]["releases"] != 0:
        failures.append(f"throughput policy released its device: {policy[0]['devices']}")

    cpu_only = work.file("cpu-only.click",
                         text.replace("DeviceOnly", "CPUOnly").replace(lookup[0], lookup[1]))
    _, stats = e2e.run_fulcrum(work, cpu_only, [gen, "net_null0,no-rx=1"],
                               extra=["--seconds", "0.4", "--release-idle-ms", "20"])
    if stats is None or stats["devices"][0]["releases"] < 1:
        failures.append(f"--release-idle-ms 20: the unused device not released: {stats}")
    res, _ = e2e.run_fulcrum(work, cpu_only, [gen, "net_null0,no-rx=1"],
                             extra=["--release-idle-ms", "soon"])
    if res.returncode != 2 or "--release-idle-ms needs milliseconds" not in res.stderr:
        failures.append(f"--release-idle-ms soon: {res.returncode} {res.stderr}")

    bad = profile()
    bad["points"][1]["device"] = 3
    bad_file = work.file("bad-device.json", json.dumps(bad))
    for name, element, expect in (
            ("policy", f"PolicyBalancer({bad_file})",
             f"{bad_file}: point 1: device 3 is not a device of this run: it has 1 device"),
            ("fixed", "FixedFraction(0.5, DEVICE 2)",
             "DEVICE 2 is not a device of this run: it has 1 device")):
        cfg = work.file(f"{name}-device.click", text.replace("DeviceOnly", element))
        res, _ = e2e.run_fulcrum(work, cfg, [gen, "net_null0,no-rx=1"], extra=["--seconds", "0.2"])
        line = next(i + 1 for i, l in enumerate(text.splitlines())
                    if "DeviceOnly" in l and not l.lstrip().startswith("//"))
        if res.returncode == 0 or expect not in res.stderr or f"{cfg}:{line}:" not in res.stderr:
            failures.append(f"{name}: device index past the run's: {res.returncode} {res.stderr}")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
