#!/usr/bin/env python3
"""End to end: `fulcrum devices` lists the offload backends compiled in and the devices found.

Checks, against what the machine says independently of Fulcrum: with the OpenCL backend built
and PoCL's ICD registered (/etc/OpenCL/vendors/pocl.icd, installed by scripts/install-deps.sh),
a CPU OpenCL device is listed; with the CUDA backend built but no NVIDIA device node (/dev/nvidia0)
no CUDA device is listed and nothing is printed on stderr; each device's NUMA node is the one
sysfs gives its PCI bus id (-1 without one) and the listed nodes cover the online CPUs; the text
listing and the JSON agree; an unknown option exits 2. Emulated devices appear only when asked
(--device emu:..., FULCRUM_EMU_DEVICES), after the real ones, and say they are emulated; a bad
model is refused with the key named.
"""
import json
import os
import subprocess
import sys

from waits import GUARD_S  # noqa: E402

FULCRUM = os.path.abspath(os.environ.get("FULCRUM_BIN", "build/fulcrum"))
TIMEOUT_S = GUARD_S  # a hang: a start under ASan on a loaded machine can take a minute
POCL_ICD = "/etc/OpenCL/vendors/pocl.icd"


def run(*args, env=None):
    return subprocess.run([FULCRUM, "devices", *args], capture_output=True, text=True,
                          timeout=TIMEOUT_S, env=env)


def numa_node_of(bus_id):
    """The node sysfs gives a PCI device, None when unknown (no id, no file, or -1)."""
    path = f"/sys/bus/pci/devices/{bus_id}/numa_node"
    if bus_id is None or not os.path.exists(path):
        return None
    with open(path) as f:
        node = int(f.read())
    return node if node >= 0 else None


def online_cpus():
    """The number of online CPUs, from sysfs' cpulist ("0-3,8-11")."""
    with open("/sys/devices/system/cpu/online") as f:
        text = f.read().strip()
    count = 0
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        count += int(hi or lo) - int(lo) + 1
    return count


def main():
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    r = run("--json")
    check(r.returncode == 0, f"devices --json exited {r.returncode}: {r.stderr}")
    data = json.loads(r.stdout)
    backends = data["backends"]
    devices = data["devices"]
    check(set(backends) <= {"opencl", "cuda", "emu"}, f"unexpected backends {backends}")
    check("emu" in backends, f"the emulated backend is always compiled in: {backends}")
    check(not any(d["emulated"] for d in devices),
          f"emulated devices without --device emu or FULCRUM_EMU_DEVICES: {devices}")
    for d in devices:
        check(d["backend"] in backends, f"device of a backend not compiled in: {d}")
        check(d["kind"] in ("cpu", "gpu", "accelerator"), f"bad kind: {d}")
        check(d["name"] != "", f"device without a name: {d}")
        check(d["global_memory_bytes"] > 0 and d["compute_units"] > 0, f"empty device: {d}")
        check(isinstance(d["numa_node"], int) and d["numa_node"] >= -1, f"bad numa_node: {d}")
        sysfs_node = numa_node_of(d["pci_bus_id"])
        check(d["numa_node"] == (sysfs_node if sysfs_node is not None else -1),
              f"numa_node {d['numa_node']} but sysfs says {sysfs_node}: {d}")
    check(data["numa_nodes"] != [] and
          sum(n["cpus"] for n in data["numa_nodes"]) == online_cpus(),
          f"numa_nodes {data['numa_nodes']} do not cover the {online_cpus()} online CPUs")

    opencl = [d for d in devices if d["backend"] == "opencl"]
    cuda = [d for d in devices if d["backend"] == "cuda"]
    if "opencl" in backends and os.path.exists(POCL_ICD):
        check(any(d["kind"] == "cpu" for d in opencl),
              f"PoCL is registered ({POCL_ICD}) but no CPU OpenCL device is listed: {opencl}")
        check(any("pocl" in d["platform"].lower() for d in opencl),
              f"no device on the Portable Computing Language platform: {opencl}")
    if "cuda" in backends and not os.path.exists("/dev/nvidia0"):
        check(cuda == [], f"CUDA devices listed without /dev/nvidia0: {cuda}")
        check(r.stderr == "", f"stderr without a GPU: {r.stderr!r}")
    if "cuda" not in backends:
        check(cuda == [], "CUDA devices without the CUDA backend")

    t = run()
    check(t.returncode == 0, f"devices exited {t.returncode}")
    first = t.stdout.splitlines()[0] if t.stdout else ""
    check(first.startswith("backends compiled in:"), f"first line: {first!r}")
    for b in backends:
        check(b in first.split(), f"backend {b} missing from {first!r}")
    for d in devices:
        check(d["name"] in t.stdout, f"device {d['name']} missing from the listing")
    if not devices:
        check("run on the CPU" in t.stdout, "no-device case does not say the CPU runs it")

    env = dict(os.environ, FULCRUM_FAIL_DEVICE_AFTER="0")
    f = run("--json", env=env)
    check(f.returncode == 0 and len(json.loads(f.stdout)["devices"]) == len(devices),
          "failure injection changed device discovery")

    emu = run("--json", "--device", "emu:kernel_mpps=5,lat_us=40", "--device", "emu")
    listed = json.loads(emu.stdout)["devices"] if emu.returncode == 0 else []
    emulated = [d for d in listed if d["emulated"]]
    check(len(emulated) == 2 and all(d["backend"] == "emu" for d in emulated) and
          [d["index"] for d in emulated] == [0, 1] and len(listed) == len(devices) + 2,
          f"two --device emu: {emu.stdout} {emu.stderr}")
    check(all("emulated" in d["name"] and "not a measurement" in d["platform"] for d in emulated),
          f"emulated devices must say so: {emulated}")
    for spec, why in (("emu:kernel_mpps=0", "> 0"), ("emu:speed=3", "unknown key 'speed'"),
                      ("cuda:0", "expected emu")):
        b = run("--device", spec)
        check(b.returncode == 2 and why in b.stderr, f"--device {spec}: {b.returncode} {b.stderr}")
    env_bad = run(env=dict(os.environ, FULCRUM_EMU_DEVICES="lat_us=-1"))
    check(env_bad.returncode == 1 and "FULCRUM_EMU_DEVICES" in env_bad.stderr,
          f"bad FULCRUM_EMU_DEVICES: {env_bad.returncode} {env_bad.stderr}")

    bad = run("--frobnicate")
    check(bad.returncode == 2 and "--frobnicate" in bad.stderr, f"unknown option: {bad}")

    for msg in failures:
        print("FAIL:", msg)
    print(f"devices: {len(devices)} ({', '.join(d['backend'] + ' ' + d['name'] for d in devices)})"
          f", backends {backends}, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
