#!/usr/bin/env python3
"""End to end: the machinery of the step-change experiments (bench `adaptive_step`, issue 17).

1. The generator's size step (gen:...,step_after=S,step_size=1500): captured with ToDump and
   read back with scapy, the frames are 64 B, then 1500 B, never 64 B again (one worker, one
   queue); every 1500 B frame has the IPv4 total length, UDP length and header checksum of a
   1500 B frame (scapy recomputes the checksum). A size step keeps the rate (rate=, no
   step_rate). step_size without step_after, or out of 60..1514, is refused by name.
2. AdaptiveBalancer and PolicyBalancer (energy, on a profile written here) in front of the
   offloaded IPv4 lookup on an emulated device, each through a size step and a rate step
   (flat out -> 20 kpps): the run ends with the balance line holding (in = out + dropped +
   queued, queued 0), no packet dropped, the trace has windows after the step, and for the size
   step the bytes in say both sizes arrived.
No assertion is about throughput or timing: bench `adaptive_step` measures the re-convergence.
"""
import json
import os
import sys

import fulcrum_e2e as e2e
import offload_router

os.environ["FULCRUM_OFFLOAD_BACKEND"] = "emu"
os.environ["FULCRUM_EMU_DEVICES"] = "kernel_mpps=20,launch_us=5,lat_us=30"
STEP_S = 0.4
RUN_S = "1.0"
SIZE_RATE = 5000
# The size-step run ends after this many packets, not after a time: more than the generator can
# send before its step (SIZE_RATE * STEP_S and a burst), so the step has happened however slowly
# the machine ran.
SIZE_STEP_PACKETS = 3000


def size_step(work, failures):
    from scapy.all import IP, UDP, rdpcap  # noqa: E402 (scapy is slow to import)

    cap = work.file("step.pcap")
    config = work.file("dump.click", f"FromInput -> ToDump({cap});")
    gen = f"gen:size=64,flows=16,rate={SIZE_RATE},step_after={STEP_S},step_size=1500"
    _, stats = e2e.run_fulcrum(work, config, [gen], extra=["--packets", str(SIZE_STEP_PACKETS)])
    if stats is None:
        failures.append("size step capture run failed")
        return
    sizes = []
    bad = 0
    for p in rdpcap(cap):
        sizes.append(len(p))
        if len(p) == 1500:
            ip = p[IP]
            want = ip.chksum
            del ip.chksum
            if ip.len != 1486 or p[UDP].len != 1466 or IP(bytes(ip)).chksum != want:
                bad += 1
    first_large = sizes.index(1500) if 1500 in sizes else len(sizes)
    if set(sizes) != {64, 1500} or first_large == 0:
        failures.append(f"size step: frame sizes {sorted(set(sizes))}, first 1500 B at {first_large}")
    elif any(s != 64 for s in sizes[:first_large]) or any(s != 1500 for s in sizes[first_large:]):
        failures.append("size step: the sizes are not 64 B then 1500 B")
    if bad:
        failures.append(f"size step: {bad} 1500 B frames with a wrong length or checksum")
    print(f"size step: {first_large} frames of 64 B, {len(sizes) - first_large} of 1500 B")

    for spec, want in (("gen:size=64,step_size=1500", "need step_after"),
                       ("gen:size=64,step_after=1,step_size=2000", "step_size must be 60..1514")):
        res, _ = e2e.run_fulcrum(work, config, [spec], extra=["--seconds", "0.1"])
        if res.returncode == 0 or want not in res.stderr:
            failures.append(f"{spec}: expected an error with '{want}': {res.stderr[-300:]}")


def profile():
    def point(fraction, aggregate, pps, p99, power, idle):
        return {"device": 0, "fraction": fraction, "aggregate": aggregate, "throughput_pps": pps,
                "p50_us": p99 / 2, "p99_us": p99, "power_w": power, "idle_w": idle,
                "power_measured": False}
    return {"format": 1, "pipeline": "ipv4_router_offload", "traffic": "test",
            "devices": ["emu0"],
            "points": [point(0, 1, 1e5, 50, 40, 30), point(0.6, 2, 1e8, 400, 120, 60)]}


def balancer_steps(work, failures):
    family = offload_router.IPV4
    routes_file, _, _ = offload_router.workload(work, family)
    profile_file = work.file("profile.json", json.dumps(profile()))
    lookup = (f"{family.demo_routes}, AGGREGATE 32", f"{routes_file}, AGGREGATE 4")
    text = open(os.path.join(e2e.SOURCE_DIR, "configs", family.config)).read()
    gen = f"gen:size=64,flows=1024,dst=routes,routes={routes_file},step_after={STEP_S}"
    for name, balancer in (
            ("adaptive", "AdaptiveBalancer(WINDOW_MS 10, INITIAL 0.5, TRACE {trace})"),
            ("policy", f"PolicyBalancer({profile_file}, POLICY energy, WINDOW_MS 10, "
                       "TRACE {trace})")):
        for step in ("step_size=1500", "step_rate=20000"):
            label = f"{name} {step}"
            trace = work.file(f"{name}-{step.split('=')[0]}.trace")
            config = work.file(f"{name}.click", text.replace(
                "DeviceOnly", balancer.format(trace=trace)).replace(lookup[0], lookup[1]))
            _, stats = e2e.run_fulcrum(work, config, [f"{gen},{step}", "net_null0,no-rx=1"],
                                       extra=["--seconds", RUN_S])
            if stats is None:
                failures.append(f"{label}: run failed")
                continue
            lost = (stats["packets_in"] - stats["packets_out"] - stats["dropped"] -
                    stats["queued"])
            if not stats["balanced"] or lost != 0 or stats["dropped"] != 0:
                failures.append(f"{label}: in {stats['packets_in']} out {stats['packets_out']} "
                                f"dropped {stats['dropped']} queued {stats['queued']}")
            rows = [line.split() for line in open(trace).read().splitlines()[1:]]
            if not any(float(r[0]) > STEP_S for r in rows):
                failures.append(f"{label}: no window after the step in the trace ({len(rows)})")
            mean = stats["bytes_in"] / max(1, stats["packets_in"])
            if step.startswith("step_size") and not 64 < mean < 1500:
                failures.append(f"{label}: mean frame {mean:.0f} B: not both sizes")
            print(f"{label}: in {stats['packets_in']}, lost {lost}, {len(rows)} windows, "
                  f"mean frame {mean:.0f} B")


def main():
    work = e2e.Workdir("adaptive-step")
    failures = []
    size_step(work, failures)
    balancer_steps(work, failures)
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
