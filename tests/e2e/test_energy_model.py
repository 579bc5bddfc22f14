#!/usr/bin/env python3
"""End to end: the energy figures of a run on a machine that measures nothing (no RAPL in these
VMs, no GPU). The generator's 64-byte frames through l2-echo.click, a fixed packet count:

1. The defaults: the summary and --stats-json say "modelled" for the run and its one device
   (the worker cores), with why it was not measured; joules, watts and J/Mbit positive and
   consistent with one another and the bytes transmitted; the CPU's joules are the documented
   polling core's 15 W over the run.
2. --energy-model FILE with a per-packet dynamic energy: the CPU's joules grow by exactly that
   energy times the packets handled.
3. A bad model file is refused before the run, naming the file and key.
"""
import json
import math
import os
import sys

import fulcrum_e2e as e2e

PACKETS = 200000
CORE_W = 15.0  # the default polling core, docs/adaptive.md "Energy"


def close(a, b, rel=1e-4):  # the JSON has 6 significant digits
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)


def check_report(stats, failures, tag):
    e = stats["energy"]
    bits = stats["bytes_out"] * 8
    if e["measured"] or e["basis"] != "modelled":
        failures.append(f"{tag}: not modelled: {e}")
    if len(e["devices"]) != 1 or e["devices"][0]["basis"] != "modelled":
        failures.append(f"{tag}: one modelled device expected: {e['devices']}")
        return None
    cpu = e["devices"][0]
    if not cpu["device"].startswith("cpu (1 worker core") or not cpu["why_not_measured"]:
        failures.append(f"{tag}: device entry: {cpu}")
    for k in ("joules", "watts", "joules_per_mbit"):
        if not e[k] > 0 or not cpu[k] > 0:
            failures.append(f"{tag}: {k} not positive: {e}")
    if not close(e["joules"], cpu["joules"]):
        failures.append(f"{tag}: total {e['joules']} != the device's {cpu['joules']}")
    if not close(e["joules_per_mbit"], e["joules"] / (bits / 1e6)):
        failures.append(f"{tag}: J/Mbit {e['joules_per_mbit']} != J / Mbit out")
    if not close(e["watts"], e["joules"] / stats["duration_s"]):
        failures.append(f"{tag}: W {e['watts']} != J / s")
    return cpu


def main():
    failures = []
    work = e2e.Workdir("energy-model")
    config = os.path.join(e2e.SOURCE_DIR, "configs", "l2-echo.click")
    gen = f"gen:size=64,flows=64,count={PACKETS}"
    res, stats = e2e.run_fulcrum(work, config, [gen], extra=["--packets", str(PACKETS)])
    if stats is None:
        return work.finish(["the default run failed"])
    if stats["packets_out"] != PACKETS:
        failures.append(f"packets out {stats['packets_out']} != {PACKETS}")
    cpu = check_report(stats, failures, "defaults")
    if cpu is not None and not close(cpu["joules"], CORE_W * stats["duration_s"]):
        failures.append(f"defaults: {cpu['joules']} J != 15 W x {stats['duration_s']} s")
    if "energy: modelled (" not in res.stdout or "not measured: " not in res.stdout:
        failures.append(f"summary lacks the modelled energy lines:\n{res.stdout}")
    print(res.stdout[res.stdout.find("energy:"):])

    j_per_packet = 2e-5
    model = work.file("model.json", json.dumps(
        {"comment": "test", "cpu_core": {"idle_w": 1, "busy_w": 2, "j_per_packet": j_per_packet}}))
    res, stats = e2e.run_fulcrum(work, config, [gen],
                                 extra=["--packets", str(PACKETS), "--energy-model", model])
    if stats is None:
        return work.finish(failures + ["the run with --energy-model failed"])
    cpu = check_report(stats, failures, "--energy-model")
    if cpu is not None:
        expected = 2 * stats["duration_s"] + j_per_packet * stats["packets_in"]
        if not close(cpu["joules"], expected):
            failures.append(f"--energy-model: {cpu['joules']} J != 2 W x T + 20 uJ x packets "
                            f"= {expected}")
        if cpu["source"] != "model " + model:
            failures.append(f"--energy-model: source {cpu['source']}")

    bad = work.file("bad.json", json.dumps({"cpu_core": {"busy_w": -1}}))
    res = e2e.run_cmd(["run", config, "--port", gen, "--energy-model", bad])
    if res.returncode == 0 or "bad.json" not in res.stderr or "busy_w" not in res.stderr:
        failures.append(f"a bad model file: rc {res.returncode}, {res.stderr}")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
