#!/usr/bin/env python3
"""End to end: `fulcrum profile` on the offloaded IPv4 router with one emulated device.

1. Two shares x two device batch sizes, 0.2 s each, from the generator, and each at 30 % and
   60 % of its measured rate (--rates, 0.1 s each): the profile (format 3) holds the CPU point
   and four points per device in order, the emulated one labelled so, every point with
   throughput, p50 <= p99, power between its idle and loaded figures, and two rate samples
   offered at those shares of its throughput, each with throughput and p50 <= p99. Where RAPL cannot be
   read (here), power is the documented model: the CPU point is exactly cpu_busy per worker, and
   a device point costs more than the CPU point, its busy share of the device's range on top
   (for PoCL, a device on the host's cores: cpu_busy per CPU while busy, nothing idle).
2. PolicyBalancer runs with the file it wrote (read back: the same format), losing nothing.
3. --sizes 64,1500: the sweep once per size, each point with the mean length of the packets at
   the balancer (the 64 B points all one length, the 1500 B points another, ~1500); PolicyBalancer
   on that profile, the generator stepping from 64 to 1500 B, moves to the 1500 B points once
   (size_switches 1, size_class_bytes the 1500 B points' length) and loses nothing.
4. Mistakes: a pipeline without a balancer, and list values out of range (--fractions,
   --rates), are refused with the reason; no file is written.
No assertion is about how fast anything ran.
"""
import json
import os
import sys

import fulcrum_e2e as e2e

POWER = {"cpu_idle": 4, "cpu_busy": 12, "device_idle": 20, "device_busy": 200}


def main():
    work = e2e.Workdir("profile-command")
    routes = os.path.join(e2e.SOURCE_DIR, "configs", "routes-demo.txt")
    text = open(os.path.join(e2e.SOURCE_DIR, "configs", "ipv4-router-offload.click")).read()
    text = text.replace("routes-demo.txt, AGGREGATE 32", f"{routes}, AGGREGATE 32")
    config = work.file("router.click", text)
    gen = f"gen:size=64,flows=1024,dst=routes,routes={routes}"
    ports = ["--port", gen, "--port", "net_null0,no-rx=1"]
    out = work.file("router.profile.json")
    power = ",".join(f"{k}={v}" for k, v in POWER.items())
    res = e2e.run_cmd(["profile", config, *ports, "--out", out, "--fractions", "0.5,1",
                       "--aggregates", "2,8", "--seconds", "0.2", "--power", power,
                       "--rates", "0.3,0.6", "--rate-seconds", "0.1",
                       "--device", "emu:kernel_mpps=30,lat_us=20"])
    failures = []
    if res.returncode != 0:
        return work.finish([f"profile failed: {res.stderr}"])
    print(res.stdout)
    prof = json.load(open(out))
    points = prof["points"]
    # Every device found (PoCL's CPU device too, where it is installed), the emulated one last.
    expected = [(0, 0, 1)] + [(d, f, a) for d in range(len(prof["devices"]))
                              for f in (0.5, 1) for a in (2, 8)]
    got = [(p["device"], p["fraction"], p["aggregate"]) for p in points]
    if prof["format"] != 3 or got != expected:
        failures.append(f"points: {got}")
    if not prof["devices"] or "emulated" not in prof["devices"][-1]:
        failures.append(f"devices not labelled emulated: {prof['devices']}")
    for p in points:
        if not (p["throughput_pps"] > 0 and 0 < p["p50_us"] <= p["p99_us"] and
                p["idle_w"] <= p["power_w"]):
            failures.append(f"point out of shape: {p}")
        offered = sorted(r["offered_pps"] / p["throughput_pps"] for r in p.get("rates", []))
        if len(offered) != 2 or abs(offered[0] - 0.3) > 1e-3 or abs(offered[1] - 0.6) > 1e-3:
            failures.append(f"rates not offered at 0.3 and 0.6 of the throughput: {p}")
        for r in p.get("rates", []):
            if not (r["throughput_pps"] > 0 and 0 < r["p50_us"] <= r["p99_us"]):
                failures.append(f"rate sample out of shape: {r}")
    if not points[0]["power_measured"]:
        cpu = points[0]
        if cpu["power_w"] != POWER["cpu_busy"] or cpu["idle_w"] != POWER["cpu_idle"]:
            failures.append(f"CPU point's modelled power: {cpu}")
        # A device point: the CPU plus the device's idle and busy share (a discrete device), or
        # plus cpu_busy per online CPU while busy and nothing idle (a device on the host's
        # cores, PoCL: docs/adaptive.md, "Energy").
        host_busy = POWER["cpu_busy"] * (os.cpu_count() or 1)
        for p in points[1:]:
            discrete = (POWER["cpu_busy"] + POWER["device_idle"] <= p["power_w"] <=
                        POWER["cpu_busy"] + POWER["device_busy"])
            on_host = (prof["devices"][p["device"]].startswith("opencl:") and
                       POWER["cpu_busy"] <= p["power_w"] <= POWER["cpu_busy"] + host_busy)
            if not (discrete or on_host):
                failures.append(f"device point's modelled power: {p}")

    balanced = work.file("policy.click", text.replace("DeviceOnly", f"PolicyBalancer({out})"))
    _, stats = e2e.run_fulcrum(work, balanced, [gen, "net_null0,no-rx=1"],
                               extra=["--seconds", "0.5", "--device", "emu:kernel_mpps=30,lat_us=20"])
    if stats is None or not stats["balanced"]:
        failures.append("PolicyBalancer with the written profile: the run failed or lost packets")

    sized = work.file("sized.profile.json")
    res = e2e.run_cmd(["profile", config, *ports, "--out", sized, "--fractions", "1",
                       "--aggregates", "8", "--seconds", "0.2", "--rates", "none",
                       "--sizes", "64,1500", "--device", "emu:kernel_mpps=30,lat_us=20"])
    if res.returncode != 0:
        failures.append(f"profile --sizes failed: {res.stderr}")
    else:
        spoints = json.load(open(sized))["points"]
        per_size = 1 + len(prof["devices"])
        small = {p["frame_bytes"] for p in spoints[:per_size]}
        large = {p["frame_bytes"] for p in spoints[per_size:]}
        if len(spoints) != 2 * per_size or len(small) != 1 or len(large) != 1 or \
                not 40 <= min(small) <= 80 or not 1400 <= min(large) <= 1520:
            failures.append(f"--sizes points: {[(p['device'], p['frame_bytes']) for p in spoints]}")
        else:
            step = gen + ",step_after=0.3,step_size=1500"
            on_sized = work.file("sized.click", text.replace("DeviceOnly", f"PolicyBalancer({sized})"))
            _, stats = e2e.run_fulcrum(work, on_sized, [step, "net_null0,no-rx=1"],
                                       extra=["--seconds", "1", "--device",
                                              "emu:kernel_mpps=30,lat_us=20"])
            c = e2e.counters_of(stats, "PolicyBalancer") if stats else {}
            if stats is None or not stats["balanced"] or c.get("size_switches") != 1 or \
                    c.get("size_class_bytes") != round(min(large)):
                failures.append(f"PolicyBalancer on the sized profile through a size step: {c}")

    no_balancer = work.file("nb.click", text.replace("-> DeviceOnly\n", ""))
    res = e2e.run_cmd(["profile", no_balancer, *ports, "--out", work.file("nb.json")])
    if res.returncode == 0 or "exactly one balancer" not in res.stderr:
        failures.append(f"no balancer: {res.returncode} {res.stderr}")
    res = e2e.run_cmd(["profile", config, *ports, "--out", work.file("bad.json"),
                       "--fractions", "0.5,1.5"])
    if res.returncode != 2 or "--fractions" not in res.stderr:
        failures.append(f"bad fraction: {res.returncode} {res.stderr}")
    res = e2e.run_cmd(["profile", config, *ports, "--out", work.file("bad.json"),
                       "--rates", "0.5,1"])
    if res.returncode != 2 or "--rates" not in res.stderr:
        failures.append(f"bad rate: {res.returncode} {res.stderr}")
    res = e2e.run_cmd(["profile", config, *ports, "--out", work.file("bad.json"),
                       "--sizes", "64,big"])
    if res.returncode != 2 or "--sizes" not in res.stderr:
        failures.append(f"bad size: {res.returncode} {res.stderr}")
    if os.path.exists(work.file("nb.json")) or os.path.exists(work.file("bad.json")):
        failures.append("a refused profile run wrote a file")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
