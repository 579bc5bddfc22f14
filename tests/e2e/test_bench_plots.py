#!/usr/bin/env python3
"""End to end: `fulcrum bench --list` and `--only` take exact group names (an unknown one is an
error with the closest name), and tools/plot_bench.py turns a bench's JSON into PNG plots;
tools/plot_power.py turns an nvidia-smi power trace and its marks into one (a synthetic trace:
no GPU here), and an empty trace is an error.

Runs two short groups (noop_chain, branch) at 0.05 s per point: figures are not checked (this
is not a performance test), only that the JSON has the groups asked for and nothing else, and
that each gives at least one well-formed PNG (checked by its signature and IHDR size).
"""
import json
import os
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from fulcrum_e2e import FULCRUM, SOURCE_DIR, Workdir  # noqa: E402

PLOTTER = os.path.join(SOURCE_DIR, "tools", "plot_bench.py")
POWER_PLOTTER = os.path.join(SOURCE_DIR, "tools", "plot_power.py")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def fulcrum(args, cwd):
    return subprocess.run([os.path.abspath(FULCRUM), *args], capture_output=True, text=True,
                          timeout=600, cwd=cwd)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != PNG_SIGNATURE or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def main():
    work = Workdir("bench-plots")
    failures = []
    res = fulcrum(["bench", "--list"], work.path)
    groups = res.stdout.split()
    if res.returncode != 0 or "noop_chain" not in groups or "offload_sweep" not in groups:
        failures.append(f"--list: exit {res.returncode}, {groups}")
    res = fulcrum(["bench", "--only", "noop_chian"], work.path)
    if res.returncode != 2 or "no group 'noop_chian' (did you mean 'noop_chain'?)" not in res.stderr:
        failures.append(f"--only with a typo: exit {res.returncode}, stderr {res.stderr!r}")
    res = fulcrum(["bench", "--only", "offload"], work.path)
    if res.returncode != 2:
        failures.append(f"--only offload (a prefix, not a group) must be an error: exit {res.returncode}")

    out = os.path.join(work.path, "bench.json")
    res = fulcrum(["bench", "--only", "noop_chain,branch", "--seconds", "0.05", "--small",
                   "--out", out], work.path)
    if res.returncode != 0:
        failures.append(f"bench: exit {res.returncode}: {res.stderr[-2000:]}")
        return work.finish(failures)
    with open(out) as f:
        data = json.load(f)
    ran = [k for k, v in data.items() if isinstance(v, (dict, list))]
    if ran != ["noop_chain", "branch"]:
        failures.append(f"--only noop_chain,branch ran {ran}")
    if data.get("complete") is not True:
        failures.append(f"a finished run must say \"complete\": true, not {data.get('complete')!r}")
    if os.path.exists(out + ".part"):
        failures.append("the file written after each group was left behind (.part)")

    plots = os.path.join(work.path, "plots")
    res = subprocess.run([PLOTTER, out, plots], capture_output=True, text=True, timeout=300)
    if res.returncode != 0:
        failures.append(f"plot_bench: exit {res.returncode}: {res.stderr[-2000:]}")
        return work.finish(failures)
    files = res.stdout.split()
    for group in ("noop_chain", "branch"):
        mine = [f for f in files if os.path.basename(f).startswith(group)]
        if not mine:
            failures.append(f"no plot for {group}: {files} {res.stderr}")
        for f in mine:
            size = png_size(f)
            if size is None or size[0] < 200 or size[1] < 100:
                failures.append(f"{f} is not a PNG plot (IHDR {size})")
    failures += power_plot(work.path)
    if not failures:
        print(f"ok: --list, exact --only, {len(files)} plots for noop_chain and branch, power plot")
    return work.finish(failures)


def power_plot(path):
    """tools/plot_power.py on a synthetic nvidia-smi trace: 80 W idle, 125 W with a context."""
    failures = []
    trace, marks = os.path.join(path, "power.csv"), os.path.join(path, "marks.txt")
    t0 = 1795666180.0
    with open(trace, "w") as f:
        f.write("garbage line\n")
        for i in range(50):
            t = t0 + 0.2 * i
            stamp = time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}"
            watts, mhz = (125.0, 1980) if 10 <= i < 40 else (80.5, 345)
            f.write(f"{stamp}, {watts:.2f} W, {mhz} MHz, P0, 0 %\n")
    with open(marks, "w") as f:
        f.write(f"MARK {t0 + 2:.3f} context created\n=== [6 s] context destroyed\n{t0 + 8:.3f}\n")
    png = os.path.join(path, "power.png")
    res = subprocess.run([POWER_PLOTTER, trace, marks, png, "synthetic"], capture_output=True,
                         text=True, timeout=300)
    size = png_size(png) if res.returncode == 0 and os.path.exists(png) else None
    if size is None or size[0] < 200 or size[1] < 100:
        failures.append(f"plot_power: exit {res.returncode}, IHDR {size}: {res.stderr[-1000:]}")
    empty = os.path.join(path, "empty.csv")
    open(empty, "w").close()
    res = subprocess.run([POWER_PLOTTER, empty, marks, png], capture_output=True, text=True,
                         timeout=300)
    if res.returncode == 0 or "no samples" not in res.stderr:
        failures.append(f"plot_power on an empty trace: exit {res.returncode}, {res.stderr!r}")
    return failures


if __name__ == "__main__":
    sys.exit(main())
