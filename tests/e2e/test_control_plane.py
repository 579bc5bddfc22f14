#!/usr/bin/env python3
"""The control plane of `fulcrum run --http`, on the IPv4 router fed N packets by the generator
(into random destinations: some routed, the rest dropped with a reason):
  (a) /metrics is Prometheus text that prometheus_client's parser reads whole, with HELP and TYPE
      for every family, counters named *_total, nothing else so, and units in base units;
  (b) once the pipeline is still, /metrics holds the values of /api/stats's report, N packets
      came in, and the counters add up: received + created = transmitted + dropped + in flight,
      ports, workers and drops sum to the totals, each element's packets leave by an output or
      a drop, and what leaves an output enters the element it feeds;
  (c) /api/graph is the pipeline: its nodes, classes, edges and source locations;
  (d) an unknown path answers 404;
  (e) two scrapers at once, while packets flow, see every counter go up or stay, never down;
  (f) DPDK's telemetry socket answers dpdk-telemetry.py: /fulcrum/stats, /fulcrum/elements and
      /fulcrum/drops as /metrics has them, /fulcrum/info, /ethdev/list and /mempool/list.
Waits are bounded by a number of polls; nothing is asserted on time or rates."""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import threading

from live_run import LiveRun, router_ports, samples, value
from waits import GUARD_S, wait_until

PACKETS = 200000
# Slow enough that the scrapers see packets flow; the run is still after PACKETS / RATE seconds.
RATE = 20000
SCRAPE_GAP_S = 0.05
RISES_WANTED = 3       # a scraper stops once it has seen the received counter rise this often
TELEMETRY = shutil.which("dpdk-telemetry.py")
CONFIG = "configs/ipv4-router.click"
CLASSES = ["FromInput", "CheckIPHeader", "IPLookup", "DecIPTTL", "EtherRewrite", "ToOutput"]
NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
# Name parts that are units other than Prometheus's base units (seconds, bytes, ...).
NON_BASE_UNITS = {"milliseconds", "microseconds", "nanoseconds", "ms", "us", "ns", "minutes", "hours",
                  "days", "kilobytes", "megabytes", "gigabytes", "kb", "mb", "gb", "kib", "mib", "gib",
                  "bits", "kbps", "mbps", "gbps", "percent", "millis", "micros", "nanos", "hz", "khz",
                  "mhz", "ghz", "celsius_millidegrees", "cycles_per_second"}


class Check:
    def __init__(self):
        self.failures = []

    def eq(self, what, got, want):
        if got != want:
            self.failures.append(f"{what}: got {got!r}, expected {want!r}")

    def true(self, what, cond, detail=""):
        if not cond:
            self.failures.append(f"{what}{': ' + detail if detail else ''}")


def check_exposition(check, run):
    """(a) The text format and the naming conventions."""
    status, headers, text = run.request("/metrics")
    check.eq("(a) /metrics status", status, 200)
    check.true("(a) /metrics content type", headers.get("Content-Type", "").startswith("text/plain; version=0.0.4"),
               headers.get("Content-Type", ""))
    try:
        metrics = samples(text)
    except ValueError as e:
        check.failures.append(f"(a) prometheus_client cannot parse /metrics: {e}")
        return
    helps, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name, _, doc = line[7:].partition(" ")
            helps[name] = doc
        elif line.startswith("# TYPE "):
            name, _, kind = line[7:].partition(" ")
            check.true(f"(a) {name}: one TYPE line", name not in types)
            types[name] = kind
        elif line and not line.startswith("#"):
            name = re.match(r"[^{ ]+", line).group(0)
            check.true(f"(a) sample {name} belongs to a family with a TYPE", name in types, line)
    check.eq("(a) families with HELP are those with TYPE", sorted(helps), sorted(types))
    for name, kind in types.items():
        check.true(f"(a) {name}: a valid name in the fulcrum_ namespace", NAME.match(name) and
                   name.startswith("fulcrum_"))
        check.true(f"(a) {name}: HELP text", helps.get(name, "").strip() != "")
        check.true(f"(a) {name}: type {kind}", kind in ("counter", "gauge", "untyped"))
        check.eq(f"(a) {name}: counters and only counters end in _total", name.endswith("_total"), kind == "counter")
        bad = NON_BASE_UNITS & set(name.split("_"))
        check.true(f"(a) {name}: base units only", not bad, f"has {sorted(bad)}")
    for (name, labels), v in metrics.items():
        check.true(f"(a) {name}: a family's sample", name in types, "no TYPE line for it")
        for k, _ in labels:
            check.true(f"(a) {name}: label name {k}", LABEL_NAME.match(k) and not k.startswith("__"))
        check.true(f"(a) {name}{dict(labels)}: finite", math.isfinite(v), repr(v))
        if types.get(name) == "counter":
            check.true(f"(a) {name}{dict(labels)}: a counter is a whole number >= 0", v >= 0 and v == int(v), repr(v))
    families = {name for name, _ in metrics}
    for required in ("fulcrum_packets_received_total", "fulcrum_port_received_packets_total",
                     "fulcrum_element_packets_total", "fulcrum_element_cycles_per_packet", "fulcrum_drops_total",
                     "fulcrum_uptime_seconds", "fulcrum_build_info", "fulcrum_mempool_size"):
        check.true(f"(a) /metrics has samples of {required}", required in families)


def check_values(check, m, st, graph):
    """(b) /metrics against /api/stats's report, and the balance, of a still pipeline."""
    r = st["report"]
    check.eq("(b) packets received = N", value(m, "fulcrum_packets_received_total"), PACKETS)
    for name, key in (("fulcrum_packets_received_total", "packets_in"), ("fulcrum_packets_created_total",
                      "packets_created"), ("fulcrum_packets_transmitted_total", "packets_out"),
                      ("fulcrum_packets_dropped_total", "dropped"), ("fulcrum_packets_in_flight", "queued"),
                      ("fulcrum_workers", "workers"), ("fulcrum_batch_size", "batch")):
        check.eq(f"(b) {name} = report {key}", value(m, name), r[key])
    check.eq("(b) fulcrum_running", value(m, "fulcrum_running"), 1)
    check.eq("(b) fulcrum_tsc_hertz = report tsc_hz", value(m, "fulcrum_tsc_hertz"), r["tsc_hz"])
    check.eq("(b) build info", value(m, "fulcrum_build_info", version=r["version"], git_hash=r["git_hash"],
                                     pipeline=r["pipeline"]), 1)
    for i, p in enumerate(r["ports"]):
        port = {"port": str(i), "spec": p["spec"]}
        for name, key in (("received_packets", "rx_packets"), ("received_bytes", "rx_bytes"),
                          ("transmitted_packets", "tx_packets"), ("transmitted_bytes", "tx_bytes")):
            check.eq(f"(b) port {i} {name}", value(m, f"fulcrum_port_{name}_total", **port), p[key])
    for i, w in enumerate(r["per_worker"]):
        worker = {"worker": str(i), "cpu": str(w["cpu"])}
        for name, key in (("received", "rx_packets"), ("transmitted", "tx_packets"), ("dropped", "dropped")):
            check.eq(f"(b) worker {i} {name}", value(m, f"fulcrum_worker_{name}_packets_total", **worker), w[key])
    for e in r["elements"]:
        el = {"element": e["name"], "class": e["class"]}
        check.eq(f"(b) {e['name']} packets", value(m, "fulcrum_element_packets_total", **el), e["in_packets"])
        check.eq(f"(b) {e['name']} batches", value(m, "fulcrum_element_batches_total", **el), e["batches"])
        check.eq(f"(b) {e['name']} cycles", value(m, "fulcrum_element_cycles_total", **el), e["cycles"])
        check.eq(f"(b) {e['name']} cycles per packet", value(m, "fulcrum_element_cycles_per_packet", **el),
                 e["cycles"] / e["in_packets"] if e["in_packets"] else 0.0)
        for k, n in enumerate(e["out_packets"]):
            check.eq(f"(b) {e['name']} output {k}",
                     value(m, "fulcrum_element_output_packets_total", output=str(k), **el), n)
        for name, n in e["counters"].items():
            check.eq(f"(b) {e['name']} counter {name}", value(m, "fulcrum_element_counter", name=name, **el), n)
    drops = {f"{dict(ls)['element']}/{dict(ls)['reason']}": v for (n, ls), v in m.items() if n == "fulcrum_drops_total"}
    check.eq("(b) drops by element and reason", drops, r["drops"])
    pools = {dict(ls)["pool"]: v for (n, ls), v in m.items() if n == "fulcrum_mempool_size"}
    check.eq("(b) mempool sizes", pools, {p["name"]: p["size"] for p in st["mempools"]})
    check.eq("(b) seconds since the start", value(m, "fulcrum_uptime_seconds") >= st["elapsed_s"], True)

    def total(name, **labels):
        return sum(v for (n, ls), v in m.items() if n == name and set(labels.items()) <= ls)

    received, created = value(m, "fulcrum_packets_received_total"), value(m, "fulcrum_packets_created_total")
    sent, dropped = value(m, "fulcrum_packets_transmitted_total"), value(m, "fulcrum_packets_dropped_total")
    check.eq("(b) received + created = transmitted + dropped + in flight", received + created,
             sent + dropped + value(m, "fulcrum_packets_in_flight"))
    check.true("(b) some packets transmitted and some dropped", sent > 0 and dropped > 0, f"{sent}, {dropped}")
    check.eq("(b) ports' received = received", total("fulcrum_port_received_packets_total"), received)
    check.eq("(b) ports' transmitted = transmitted", total("fulcrum_port_transmitted_packets_total"), sent)
    check.eq("(b) ports' received bytes = report bytes_in", total("fulcrum_port_received_bytes_total"), r["bytes_in"])
    check.eq("(b) ports' sent bytes = report bytes_out", total("fulcrum_port_transmitted_bytes_total"), r["bytes_out"])
    check.eq("(b) workers' received = received", total("fulcrum_worker_received_packets_total"), received)
    check.eq("(b) workers' transmitted = transmitted", total("fulcrum_worker_transmitted_packets_total"), sent)
    check.eq("(b) workers' dropped = dropped", total("fulcrum_worker_dropped_packets_total"), dropped)
    check.eq("(b) drops by reason = dropped", total("fulcrum_drops_total"), dropped)
    into = {}
    for node in graph["nodes"]:
        name = node["name"]
        packets = total("fulcrum_element_packets_total", element=name)
        outs = total("fulcrum_element_output_packets_total", element=name)
        for k, o in enumerate(node["outputs"]):
            if o["to"] >= 0:
                to = graph["nodes"][o["to"]]["name"]
                into[to] = into.get(to, 0) + total("fulcrum_element_output_packets_total", element=name,
                                                   output=str(k))
        if node["outputs"]:
            check.eq(f"(b) {name}: packets = outputs + drops", packets,
                     outs + total("fulcrum_drops_total", element=name))
    for node in graph["nodes"]:
        name = node["name"]
        if node["class"] == "FromInput":
            check.eq(f"(b) {name}: packets = received", total("fulcrum_element_packets_total", element=name),
                     received)
        else:
            check.eq(f"(b) {name}: packets = what its inputs sent",
                     total("fulcrum_element_packets_total", element=name), into.get(name, 0))
    check.eq("(b) ToOutput packets = transmitted + runtime drops",
             total("fulcrum_element_packets_total", **{"class": "ToOutput"}),
             sent + total("fulcrum_drops_total", element="runtime"))


def check_graph(check, graph, m):
    """(c) /api/graph is configs/ipv4-router.click."""
    nodes = graph["nodes"]
    check.eq("(c) node classes", [n["class"] for n in nodes], CLASSES)
    check.eq("(c) node ids", [n["id"] for n in nodes], list(range(len(CLASSES))))
    elements = sorted(dict(ls)["element"] for (n, ls), _ in m.items() if n == "fulcrum_element_packets_total")
    check.eq("(c) node names are the elements of /metrics", sorted(n["name"] for n in nodes), elements)
    edges = [(i, k, o["to"], o["port"]) for i, n in enumerate(nodes) for k, o in enumerate(n["outputs"]) if o["to"] >= 0]
    check.eq("(c) edges: a chain", edges, [(i, 0, i + 1, 0) for i in range(len(CLASSES) - 1)])
    check.eq("(c) the sink has no output", nodes[-1]["outputs"], [])
    for n in nodes:
        check.true(f"(c) {n['name']}: source location", n["loc"].startswith(CONFIG + ":"), n["loc"])
    lookup = nodes[CLASSES.index("IPLookup")]
    check.true("(c) IPLookup names its drop reason no-route", "no-route" in lookup["drop_reasons"],
               f"{lookup['drop_reasons']}")


def check_http(check, run):
    """(d) Unknown paths; the health endpoint."""
    for path in ("/no-such-page", "/api/no-such-endpoint", "/metrics/extra"):
        status, _ = run.get(path)
        check.eq(f"(d) GET {path}", status, 404)
    check.eq("(d) /api/health", run.get("/api/health"), (200, "ok\n"))


def scrape(run, seen):
    """(e) One scraper: /metrics until the received counter has risen RISES_WANTED times, or
    has reached PACKETS (no rise can follow; check_scrapes judges what was seen)."""
    rises, last = 0, None

    def enough():
        nonlocal rises, last
        status, body = run.get("/metrics")
        if status != 200:
            return False
        m = samples(body)
        seen.append(m)
        now = value(m, "fulcrum_packets_received_total")
        if last is not None and now > last:
            rises += 1
        last = now
        return rises >= RISES_WANTED or now >= PACKETS
    wait_until(enough, poll_s=SCRAPE_GAP_S, proc=run.proc)


def check_scrapes(check, runs):
    for i, seen in enumerate(runs):
        check.true(f"(e) scraper {i}: read /metrics", len(seen) >= 2, f"{len(seen)} scrapes")
        rose = False
        for before, after in zip(seen, seen[1:]):
            for key, v in after.items():
                name = key[0]
                if (name.endswith("_total") or name == "fulcrum_snapshot_sequence") and key in before:
                    if v < before[key]:
                        check.failures.append(f"(e) scraper {i}: {name}{dict(key[1])} went down "
                                              f"from {before[key]} to {v}")
            rose |= value(after, "fulcrum_packets_received_total") > value(before, "fulcrum_packets_received_total")
        check.true(f"(e) scraper {i}: saw packets flow", rose)


def telemetry(pid, commands):
    """{command: answer} from dpdk-telemetry.py for the run's file prefix (fulcrumPID)."""
    res = subprocess.run([TELEMETRY, "-f", f"fulcrum{pid}"], input="\n".join(commands) + "\n",
                         capture_output=True, text=True, timeout=GUARD_S)
    out = {}
    for line in res.stdout.splitlines():
        try:
            out.update(json.loads(line))
        except json.JSONDecodeError:
            raise RuntimeError(f"dpdk-telemetry.py -f fulcrum{pid}: {res.stdout}{res.stderr}")
    return out


def check_telemetry(check, run, m):
    """(f) DPDK's telemetry socket, through DPDK's own client."""
    run_dir = os.environ.get("RUNTIME_DIRECTORY") or ("/var/run" if os.getuid() == 0 else
                                                      os.environ.get("XDG_RUNTIME_DIR", "/tmp"))
    socket_path = os.path.join(run_dir, "dpdk", f"fulcrum{run.pid}", "dpdk_telemetry.v2")
    check.true("(f) the telemetry socket", os.path.exists(socket_path), f"no {socket_path}")
    try:
        t = telemetry(run.pid, ["/fulcrum/stats", "/fulcrum/info", "/ethdev/list", "/mempool/list",
                                "/fulcrum/elements", "/fulcrum/drops"])
    except RuntimeError as e:
        check.failures.append(f"(f) {e}")
        return
    stats = t.get("/fulcrum/stats") or {}
    for key, name in (("packets_received", "fulcrum_packets_received_total"),
                      ("packets_created", "fulcrum_packets_created_total"),
                      ("packets_transmitted", "fulcrum_packets_transmitted_total"),
                      ("packets_dropped", "fulcrum_packets_dropped_total"),
                      ("packets_in_flight", "fulcrum_packets_in_flight")):
        check.eq(f"(f) /fulcrum/stats {key}", stats.get(key), value(m, name))
    info = t.get("/fulcrum/info") or {}
    build = next(dict(ls) for (n, ls), _ in m.items() if n == "fulcrum_build_info")
    check.eq("(f) /fulcrum/info version, pipeline", (info.get("version"), info.get("pipeline")),
             (build["version"], build["pipeline"]))
    check.eq("(f) /fulcrum/info workers, running", (info.get("workers"), info.get("running")),
             (value(m, "fulcrum_workers"), 1))
    # Element names and drop reasons as DPDK's dict keys take them ('@', '-' become '_').
    tel_key = lambda text: re.sub(r"[^A-Za-z0-9_/]", "_", text)  # noqa: E731
    elements = {tel_key(dict(ls)["element"]): v for (n, ls), v in m.items()
                if n == "fulcrum_element_packets_total"}
    check.eq("(f) /fulcrum/elements = fulcrum_element_packets_total", t.get("/fulcrum/elements"), elements)
    drops = {tel_key(dict(ls)["element"] + "/" + dict(ls)["reason"]): v for (n, ls), v in m.items()
             if n == "fulcrum_drops_total"}
    check.true("(f) drops to compare", len(drops) > 0, "the run dropped nothing")
    check.eq("(f) /fulcrum/drops = fulcrum_drops_total", t.get("/fulcrum/drops"), drops)
    ethdevs = t.get("/ethdev/list")
    check.true("(f) /ethdev/list lists net_null0", isinstance(ethdevs, list) and len(ethdevs) >= 1, f"{ethdevs!r}")
    pools = {dict(ls)["pool"] for (n, ls), _ in m.items() if n == "fulcrum_mempool_size"}
    check.eq("(f) /mempool/list = the pools of /metrics", set(t.get("/mempool/list") or []), pools)


def main():
    if TELEMETRY is None:
        print("dpdk-telemetry.py missing: it is in Debian's dpdk-dev (scripts/install-deps.sh)", file=sys.stderr)
        return 1
    check = Check()
    try:
        with LiveRun(CONFIG, router_ports(PACKETS, dst="uniform", rate=RATE)) as run:
            seen = [[], []]
            scrapers = [threading.Thread(target=scrape, args=(run, s)) for s in seen]
            for t in scrapers:
                t.start()
            for t in scrapers:
                t.join()
            check_scrapes(check, seen)
            st = run.wait_still(PACKETS)
            m = run.metrics()
            graph = run.json("/api/graph")
            check_exposition(check, run)
            check_values(check, m, st, graph)
            check_graph(check, graph, m)
            check_http(check, run)
            check_telemetry(check, run, m)
            code = run.stop()
            check.eq("exit code after SIGINT", code, 0)
    except (RuntimeError, KeyError, OSError, subprocess.TimeoutExpired) as e:
        check.failures.append(f"{type(e).__name__}: {e}")
    if check.failures:
        print("\n".join(check.failures), file=sys.stderr)
        return 1
    print(f"ok: /metrics parses and follows the conventions, equals /api/stats on a still pipeline of "
          f"{PACKETS} packets and adds up; /api/graph is the pipeline; 404s; scrapers see counters only rise; "
          f"DPDK telemetry agrees")
    return 0


if __name__ == "__main__":
    sys.exit(main())
