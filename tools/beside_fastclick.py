#!/usr/bin/python3
"""Fulcrum's router and L2 echo beside FastClick's, on the same inputs, ports and core (issue 16).

    tools/beside_fastclick.py run --click FASTCLICK/bin/click --fulcrum build/fulcrum --out DIR \
        [--rounds 3] [--pages 4k,huge] [--seconds 3]
    tools/beside_fastclick.py summary DIR [--plot OUT.png]

`run` takes the capture and the 16,384 routes from `fulcrum bench --only router_cost --keep`,
writes FastClick's configurations (docs/benchmarks.md "Beside FastClick" has how FastClick was
built), then alternates in rounds: `fulcrum bench --only router_cost,l2_echo`, then FastClick's
I/O (`FromDPDKDevice -> ToDPDKDevice`), its router with RangeIPLookup and with DirectIPLookup,
and its echo, one worker on CPU 1 each. FastClick's rate is the difference of `fd.count` between
two Script prints (after one second of warm-up) over the process's CPU time between them
(utime + stime; its only busy thread is the worker) and over the wall time. Hugepage rounds
reserve 1024 pages through /proc/sys/vm/nr_hugepages (root) and give them back after.
`summary` prints the medians per page size: cost above I/O (1/rate(router) - 1/rate(I/O), per
CPU second) of both and their ratio, and the echo rates; with --plot, a bar chart.
"""
import argparse
import ipaddress
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time

PREFIX = "fcbench"
ROUTES = "cost-routes-16384.txt"
PCAP = "cost-router.pcap"
HEADER = """define($SECS 3);
DPDKInfo(NB_MBUF 262143);
fd :: FromDPDKDevice(0, BURST 64, MAXTHREADS 1);
Script(TYPE ACTIVE, wait 1s, print "A $(fd.count)", wait $SECS, print "B $(fd.count)", stop);
"""
CONFIGS = ("io", "router-range", "router-direct", "echo")


def write_configs(inputs, out):
    routes = []
    for line in open(os.path.join(inputs, ROUTES)):
        line = line.split("#", 1)[0].strip()
        if line:
            prefix, port = line.split()
            net = ipaddress.IPv4Network(prefix, strict=False)
            routes.append(f"{net.network_address}/{net.prefixlen} {int(port)}")
    router = ("rt :: {}(" + ", ".join(routes) + ");\n"
              "fd -> ch :: CheckIPHeader(OFFSET 14) -> rt;\nch[1] -> Discard;\n"
              "rt[0] -> d0 :: DecIPTTL -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:00:02)"
              " -> ToDPDKDevice(0, BURST 64);\nd0[1] -> Discard;\n"
              "rt[1] -> d1 :: DecIPTTL -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:00:02)"
              " -> ToDPDKDevice(1, BURST 64);\nd1[1] -> Discard;\n")
    bodies = {"io": "fd -> ToDPDKDevice(0, BURST 64);\n",
              "router-range": router.format("RangeIPLookup"),
              "router-direct": router.format("DirectIPLookup"),
              "echo": "fd -> EtherMirror -> ToDPDKDevice(0, BURST 64);\n"}
    os.makedirs(out, exist_ok=True)
    for name, body in bodies.items():
        with open(os.path.join(out, name + ".click"), "w") as f:
            f.write(HEADER + body)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_fastclick(click, config, pages, inputs, log):
    """One FastClick run; returns its rates between the Script's two prints."""
    memory = ["--in-memory"] if pages == "huge" else ["--no-huge", "-m", "2048"]
    if os.path.basename(config) == "echo.click":
        devices = ["--vdev", "net_null0"]
    else:
        devices = ["--vdev", f"net_pcap0,rx_pcap={os.path.join(inputs, PCAP)},infinite_rx=1",
                   "--vdev", "net_null1,no-rx=1"]
    cmd = (["taskset", "-c", "1", click, "--dpdk", "-l", "1", "--no-pci", "--file-prefix", PREFIX]
           + memory + devices + ["--", config, "SECS=2"])
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1)
    marks = {}

    def read():
        for line in proc.stdout:
            log.write(line)
            parts = line.split()
            if len(parts) == 2 and parts[0] in ("A", "B") and parts[1].isdigit():
                marks.setdefault(parts[0], (int(parts[1]), time.monotonic(), cpu_seconds(proc.pid)))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        proc.wait(timeout=300)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    reader.join()
    shutil.rmtree(f"/var/run/dpdk/{PREFIX}", ignore_errors=True)
    if "A" not in marks or "B" not in marks:
        sys.exit(f"beside_fastclick: {config} ({pages}) printed no rate; see the log")
    (ca, wa, pa), (cb, wb, pb) = marks["A"], marks["B"]
    packets = cb - ca
    return {"config": os.path.basename(config)[:-len(".click")], "pages": pages,
            "packets": packets, "wall_s": wb - wa, "cpu_s": pb - pa,
            "mpps_wall": packets / (wb - wa) / 1e6, "mpps_cpu": packets / max(pb - pa, 1e-9) / 1e6}


def set_hugepages(n):
    with open("/proc/sys/vm/nr_hugepages", "w") as f:
        f.write(str(n))


def run(args):
    out = os.path.abspath(args.out)
    inputs, configs = os.path.join(out, "inputs"), os.path.join(out, "click")
    subprocess.run([args.fulcrum, "bench", "--only", "router_cost", "--seconds", "0.1",
                    "--no-other-pages", "--no-huge", "--keep", inputs, "--out",
                    os.path.join(out, "inputs.json")], check=True)
    write_configs(inputs, configs)
    log = open(os.path.join(out, "fastclick.log"), "w")
    for pages in args.pages.split(","):
        if pages == "huge":
            set_hugepages(1024)
        try:
            for r in range(1, args.rounds + 1):
                print(f"beside_fastclick: {pages} round {r} (load {os.getloadavg()[0]:.2f})",
                      file=sys.stderr)
                subprocess.run([args.fulcrum, "bench", "--only", "router_cost,l2_echo",
                                "--seconds", str(args.seconds), "--no-other-pages"]
                               + (["--no-huge"] if pages == "4k" else [])
                               + ["--out", os.path.join(out, f"fulcrum-{pages}-{r}.json")],
                               check=True)
                with open(os.path.join(out, f"fastclick-{pages}.jsonl"), "a") as f:
                    for c in CONFIGS:
                        f.write(json.dumps(run_fastclick(args.click, os.path.join(configs, c + ".click"),
                                                         pages, inputs, log)) + "\n")
        finally:
            if pages == "huge":
                set_hugepages(0)
    summary(argparse.Namespace(dir=out, plot=None))


def summary(args):
    med = statistics.median
    result = {}
    for pages in ("4k", "huge"):
        runs = [json.load(open(os.path.join(args.dir, f)))
                for f in sorted(os.listdir(args.dir)) if f.startswith(f"fulcrum-{pages}-")]
        fc_file = os.path.join(args.dir, f"fastclick-{pages}.jsonl")
        if not runs or not os.path.exists(fc_file):
            continue
        fc = {}
        for line in open(fc_file):
            x = json.loads(line)
            fc.setdefault(x["config"], []).append(x["mpps_cpu"])
        cost = [r["router_cost"]["this_process"] for r in runs]
        fulcrum = med(c["cpu_ns_per_packet_above_io"] for c in cost)
        rounds = min(len(fc["io"]), len(fc["router-range"]), len(fc["router-direct"]))
        theirs = {name: med(1e3 / fc["router-" + name][i] - 1e3 / fc["io"][i] for i in range(rounds))
                  for name in ("range", "direct")}
        best = min(theirs.values())
        result[pages] = {
            "rounds": len(runs), "packet_pools": cost[0].get("packet_pools", ""),
            "fulcrum_ns_above_io": fulcrum,
            "fulcrum_router_mpps": med(c["router_cpu_mpps"] for c in cost),
            "fulcrum_io_mpps": med(c["io_cpu_mpps"] for c in cost),
            "fastclick_ns_above_io": theirs,
            "fastclick_router_mpps": {n: med(fc["router-" + n]) for n in ("range", "direct")},
            "fastclick_io_mpps": med(fc["io"]),
            "ratio_to_fastclick_best": fulcrum / best,
            "fulcrum_echo_mpps": med(r["l2_echo"]["cpu_mpps"] for r in runs),
            "bare_loop_mpps": med(r["l2_echo"]["raw_loop_cpu_mpps"] for r in runs),
            "fastclick_echo_mpps": med(fc["echo"]),
        }
    print(json.dumps(result, indent=2))
    if args.plot and result:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(7, 3.6))
        labels = list(result)
        xs = range(len(labels))
        bars = (("Fulcrum", lambda v: v["fulcrum_ns_above_io"]),
                ("FastClick RangeIPLookup", lambda v: v["fastclick_ns_above_io"]["range"]),
                ("FastClick DirectIPLookup", lambda v: v["fastclick_ns_above_io"]["direct"]))
        for k, (name, get) in enumerate(bars):
            ax.bar([x + (k - 1) * 0.27 for x in xs], [get(result[p]) for p in labels], 0.27,
                   label=name)
        ax.set_xticks(list(xs), [("4 KiB pages" if p == "4k" else "hugepages") for p in labels])
        ax.set_ylabel("ns a packet above I/O (per CPU second)")
        ax.set_title("IPv4 router, 16k routes, pcap replay: cost above FromInput -> ToOutput")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"beside_fastclick: wrote {args.plot}", file=sys.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--click", required=True)
    r.add_argument("--fulcrum", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--rounds", type=int, default=3)
    r.add_argument("--pages", default="4k,huge")
    r.add_argument("--seconds", type=float, default=3)
    s = sub.add_parser("summary")
    s.add_argument("dir")
    s.add_argument("--plot")
    args = p.parse_args()
    (run if args.cmd == "run" else summary)(args)


if __name__ == "__main__":
    main()
