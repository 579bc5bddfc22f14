#!/usr/bin/env python3
"""End to end: `fulcrum check`, `fulcrum graph`, `fulcrum --version` and the run metadata.

check: every shipped configuration passes against 4 ports; each planted problem (an unconnected
output, a route to a port the run does not have, an L2 port beyond the port count, an unreadable
rx_pcap, a tx_pcap or --stats-json that cannot be written) is reported with its place and exit 1,
several at once; nothing is written (no capture file appears). Shipped configurations check from
any folder (their tables are found next to them); NAME=value parameters replace $NAME, with
define() defaults, and a mistyped one is an error. graph: the DOT text has one node
per element and one edge per connection (checked by Graphviz's own parser, which also lays it
out as SVG), with unconnected outputs marked. --version names the commit git reports, and a
run's --stats-json records the version, the commit, the page size and per-worker figures that
add up to the totals. --cores places the worker, and a run on a CPU another live run's worker
uses is warned about.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from fulcrum_e2e import FULCRUM, SOURCE_DIR, Workdir  # noqa: E402
from waits import GUARD_S, wait_until  # noqa: E402

CONFIGS = os.path.join(SOURCE_DIR, "configs")
BINARY = os.path.abspath(FULCRUM)


def run_cmd(args, timeout=300, cwd=SOURCE_DIR):
    """`fulcrum ARGS...`, from the source folder unless told otherwise."""
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd)


def check_shipped(work, failures):
    """Every shipped configuration passes, checked from a folder that is not the source tree:
    the tables they name are found next to them."""
    for name in sorted(os.listdir(CONFIGS)):
        if not name.endswith(".click"):
            continue
        res = run_cmd(["check", os.path.join(CONFIGS, name), "--ports", "4"], timeout=120,
                      cwd=work.path)
        if res.returncode != 0 or not res.stdout.strip().endswith("ok"):
            failures.append(f"check configs/{name}: exit {res.returncode}: {res.stderr.strip()!r}")


def relative_paths_and_parameters(work, failures):
    """A pipeline in a sub-folder names its route file relatively and takes the route file and a
    counter's name as NAME=value parameters with define() defaults; run from elsewhere."""
    sub = os.path.join(work.path, "site")
    os.mkdir(sub)
    with open(os.path.join(sub, "main.txt"), "w") as f:
        f.write("0.0.0.0/0 0\n")
    with open(os.path.join(sub, "other.txt"), "w") as f:
        f.write("0.0.0.0/0 1\n")
    click = os.path.join(sub, "router.click")
    with open(click, "w") as f:
        f.write("define($ROUTES main.txt);\n"
                "FromInput -> CheckIPHeader -> IPLookup($ROUTES) -> ToOutput;\n")
    gen = "gen:size=64,flows=16"
    for params, port in [([], 0), (["ROUTES=other.txt"], 1)]:
        stats = os.path.join(work.path, f"params-{port}.json")
        res = run_cmd(["run", click, *params, "--port", gen, "--port", "net_null0,no-rx=1",
                       "--packets", "1000", "--quiet", "--stats-json", stats], cwd="/")
        if res.returncode != 0:
            failures.append(f"run {params} from /: exit {res.returncode}: {res.stderr.strip()!r}")
            continue
        with open(stats) as f:
            ports = json.load(f)["ports"]
        if ports[port]["tx_packets"] != 1000:
            failures.append(f"run {params}: the routes should send all to port {port}: {ports}")
    res = run_cmd(["check", click, "ROUTE=other.txt"], cwd="/")
    if res.returncode != 1 or "parameter ROUTE= from the command line is not used in the pipeline " \
            "(did you mean 'ROUTES'?)" not in res.stderr:
        failures.append(f"a mistyped parameter: exit {res.returncode}, stderr {res.stderr!r}")


def check_problems(work, failures):
    routes = work.file("routes.txt", "10.0.0.0/8 0\n192.168.0.0/16 3\n")
    router = work.file("router.click",
                       f"FromInput -> CheckIPHeader\n"
                       f"  -> IPLookup({routes}) -> ToOutput;\n")
    res = run_cmd(["check", router, "--ports", "4"])
    if res.returncode != 0:
        failures.append(f"a router with routes to ports 0 and 3 fails against 4 ports: {res.stderr!r}")
    res = run_cmd(["check", router, "--ports", "2"])
    if res.returncode != 1 or f"{routes}:2" not in res.stderr:
        failures.append(f"a route to port 3 with 2 ports: exit {res.returncode}, stderr {res.stderr!r} "
                        f"(expected {routes}:2)")
    res = run_cmd(["check", router])
    if res.returncode != 0 or "port numbers not checked" not in res.stdout:
        failures.append(f"without a port count: exit {res.returncode}, stdout {res.stdout!r}")

    text = "c :: Classifier(12/0800, -);\nFromInput -> c -> L2Forward(PORT 5) -> ToOutput;\n"
    several = work.file("several.click", text)
    missing_in = os.path.join(work.path, "missing.pcap")
    tx = os.path.join(work.path, "no-such-folder", "out.pcap")
    stats = os.path.join(work.path, "stats-folder")
    os.mkdir(stats)
    res = run_cmd(["check", several, "--port", f"net_pcap0,rx_pcap={missing_in}",
                   "--port", f"net_pcap1,tx_pcap={tx}", "--stats-json", stats])
    expected = [f"--port net_pcap0,rx_pcap={missing_in}: cannot read pcap file",
                f"cannot write capture file {tx}: folder",
                f"cannot write --stats-json file {stats}: it is a directory"]
    if res.returncode != 1:
        failures.append(f"several problems: exit {res.returncode}")
    for e in expected:
        if e not in res.stderr:
            failures.append(f"several problems: stderr lacks {e!r}: {res.stderr!r}")
    # The port problem stops the build at L2Forward; the unconnected output needs a good build.
    if f"{several}:2:" not in res.stderr or "PORT 5 is not a port (2 ports)" not in res.stderr:
        failures.append(f"L2Forward PORT 5 with 2 ports not reported with its place: {res.stderr!r}")
    res = run_cmd(["check", several, "--ports", "8"])
    if res.returncode != 1 or f"{several}:1:1: output 1 of 'c' (Classifier) is not connected" not in res.stderr:
        failures.append(f"unconnected output: exit {res.returncode}, stderr {res.stderr!r}")

    res = run_cmd(["check", os.path.join("configs", "l2-echo.click"), "--port", "net_nul0",
                   "--port", "net_null1,norx=1", "--port", "net_null1"])
    for e in ["--port net_nul0: no DPDK driver for a device named 'net_nul0' (did you mean 'net_null0'?)",
              "--port net_null1,norx=1: driver net_null does not take 'norx' (did you mean 'no-rx'?)",
              "--port net_null1: device 'net_null1' is already port 1"]:
        if res.returncode != 1 or e not in res.stderr:
            failures.append(f"device strings DPDK would refuse: exit {res.returncode}, stderr lacks {e!r}: "
                            f"{res.stderr!r}")

    out = work.file("written.pcap")
    res = run_cmd(["check", os.path.join("configs", "l2-echo.click"),
                   "--port", f"net_pcap0,rx_pcap={work.file('in.pcap', '')},tx_pcap={out}"])
    if os.path.exists(out):
        failures.append("check created the tx_pcap file: it must not open ports")


def graph(work, failures):
    config = os.path.join("configs", "ipv4-router.click")
    res = run_cmd(["graph", config, "--dot"])
    if res.returncode != 0:
        failures.append(f"graph --dot: exit {res.returncode}: {res.stderr!r}")
        return
    dot = res.stdout
    nodes = re.findall(r"^  n(\d+) \[label=", dot, re.M)
    edges = re.findall(r"^  n\d+ -> n\d+", dot, re.M)
    checked = run_cmd(["check", config, "--ports", "4"]).stdout
    m = re.search(r"(\d+) elements, (\d+) connections", checked)
    if not m or (len(nodes), len(edges)) != (int(m.group(1)), int(m.group(2))):
        failures.append(f"graph has {len(nodes)} nodes, {len(edges)} edges; check says {checked!r}")
    if "DecIPTTL" not in dot or "IPLookup" not in dot:
        failures.append(f"graph lacks the element classes: {dot!r}")
    unconnected = work.file("unconnected.click", "c :: Classifier(12/0800, -);\nFromInput -> c -> Discard;\n")
    dot2 = run_cmd(["graph", unconnected]).stdout
    if "out 1: unconnected" not in dot2 or "color=red" not in dot2:
        failures.append(f"the unconnected output is not marked: {dot2!r}")
    if shutil.which("dot") is None:
        failures.append("Graphviz's dot is missing: scripts/install-deps.sh installs graphviz")
        return
    svg = work.file("router.svg")
    res = run_cmd(["graph", config, "--svg", "--out", svg])
    if res.returncode != 0 or not os.path.exists(svg):
        failures.append(f"graph --svg: exit {res.returncode}: {res.stderr!r}")
        return
    text = open(svg).read()
    if "<svg" not in text or text.count('class="node"') != len(nodes) or text.count('class="edge"') != len(edges):
        failures.append(f"the SVG does not hold {len(nodes)} nodes and {len(edges)} edges")


def version_and_meta(work, failures):
    res = run_cmd(["--version"])
    m = re.fullmatch(r"fulcrum (\d+\.\d+\.\d+) \(git ([0-9a-f]{12}(-dirty)?|unknown)\)\n", res.stdout)
    if res.returncode != 0 or not m:
        failures.append(f"--version: {res.stdout!r}")
        return
    head = subprocess.run(["git", "-C", SOURCE_DIR, "rev-parse", "--short=12", "HEAD"],
                          capture_output=True, text=True)
    if head.returncode == 0 and not m.group(2).startswith(head.stdout.strip()):
        failures.append(f"--version says {m.group(2)}, git says {head.stdout.strip()}")
    stats = work.file("stats.json")
    res = run_cmd(["run", os.path.join("configs", "l2-echo.click"), "--port", "gen:size=64",
                   "--workers", "2", "--packets", "200000", "--quiet", "--stats-json", stats])
    if res.returncode != 0:
        failures.append(f"run: exit {res.returncode}: {res.stderr!r}")
        return
    s = json.load(open(stats))
    if (s.get("version"), s.get("git_hash")) != (m.group(1), m.group(2)):
        failures.append(f"stats version {s.get('version')} {s.get('git_hash')} differ from --version")
    if s.get("pages") not in ("hugepages", "4 KiB pages"):
        failures.append(f"stats pages: {s.get('pages')!r}")
    # A generator port copies frames: without hugepages its pools are Fulcrum's packed ones.
    pools = "hugepages" if s.get("pages") == "hugepages" else "packed on transparent huge pages"
    if s.get("packet_pools") != pools:
        failures.append(f"stats packet_pools: {s.get('packet_pools')!r}, expected {pools!r}")
    workers = s.get("per_worker", [])
    if len(workers) != 2 or sum(w["rx_packets"] for w in workers) != s["packets_in"] \
            or sum(w["tx_packets"] for w in workers) != s["packets_out"] \
            or len({w["lcore"] for w in workers}) != 2:
        failures.append(f"per-worker figures do not add up: {workers}, in {s['packets_in']}, out {s['packets_out']}")
    if f"fulcrum {m.group(1)} (git {m.group(2)})" not in res.stdout or "workers:" not in res.stdout:
        failures.append(f"the summary lacks the version line or the workers: {res.stdout!r}")


def runtime_parent():
    """Where DPDK puts the runs' runtime folders (rte_eal_get_runtime_dir)."""
    if os.geteuid() == 0:
        return "/var/run/dpdk"
    return os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")


def cores(work, failures):
    """--cores puts the worker on the CPU named (per_worker cpu); a second run on a CPU a live
    run's worker uses is warned about, naming the other run's pid; --workers and --cores must
    agree."""
    res = run_cmd(["run", os.path.join(CONFIGS, "l2-echo.click"), "--port", "gen:size=64",
                   "--workers", "2", "--cores", "1"])
    if res.returncode != 2 or "--workers 2 but --cores names 1 CPUs" not in res.stderr:
        failures.append(f"--workers 2 --cores 1: exit {res.returncode}, stderr {res.stderr!r}")
    if len(os.sched_getaffinity(0)) < 2 or 1 not in os.sched_getaffinity(0):
        print("skip: --cores 1 needs CPU 1")
        return
    first = subprocess.Popen([BINARY, "run", os.path.join(CONFIGS, "l2-echo.click"), "--port",
                              "gen:size=64,rate=1000", "--cores", "1", "--seconds", "300", "--quiet"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        published = os.path.join(runtime_parent(), f"fulcrum{first.pid}", "cores")
        if not wait_until(lambda: os.path.exists(published), proc=first):
            failures.append(f"the first run never published its cores in {published}")
            return
        stats = os.path.join(work.path, "cores.json")
        res = run_cmd(["run", os.path.join(CONFIGS, "l2-echo.click"), "--port", "gen:size=64",
                       "--cores", "1", "--packets", "2000", "--quiet", "--stats-json", stats])
        warning = f"warning: CPU 1 is also a worker CPU of fulcrum pid {first.pid}"
        if res.returncode != 0 or warning not in res.stderr:
            failures.append(f"a second run on CPU 1: exit {res.returncode}, stderr lacks {warning!r}: "
                            f"{res.stderr!r}")
        else:
            with open(stats) as f:
                workers = json.load(f)["per_worker"]
            if [w["cpu"] for w in workers] != [1]:
                failures.append(f"--cores 1: the worker ran on {[w['cpu'] for w in workers]}")
    finally:
        first.send_signal(signal.SIGINT)
        first.wait(timeout=GUARD_S)


def main():
    work = Workdir("check")
    failures = []
    check_shipped(work, failures)
    relative_paths_and_parameters(work, failures)
    check_problems(work, failures)
    graph(work, failures)
    version_and_meta(work, failures)
    cores(work, failures)
    if not failures:
        print("ok: check, graph, --version and run metadata")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
