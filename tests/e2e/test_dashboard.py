#!/usr/bin/env python3
"""The dashboard draws what /metrics says. Runs pipelines with --http on a generator of N
packets, waits until they are still (N packets in, nothing in flight), loads the dashboard in
headless Chromium (--dump-dom: the DOM once its fetches are done), reads every figure tagged
with data-metric / data-labels / data-value (the scheme at the top of
src/control/dashboard/dashboard.js) and compares each with the sample of /metrics, parsed by
prometheus_client: equal values, integers drawn exactly, and every sample drawn somewhere. The
pipeline graph must have the nodes and edges of /api/graph.

Pipelines: configs/classify.click (branches, a Counter's counters, drops by two elements) and
the offload router on an emulated device (offload devices, tasks and their times)."""
import html.parser
import os
import re
import shutil
import subprocess
import sys
import tempfile

from live_run import LiveRun, router_ports, samples

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_TIMEOUT_S = 180
VIRTUAL_TIME_MS = 8000
PACKETS = 100000
# Samples that move while the pipeline is still: the dashboard drew them before /metrics was
# read, so they may only be behind.
MOVING = {"fulcrum_uptime_seconds", "fulcrum_snapshot_sequence"}
# /metrics families the dashboard does not draw. Empty: it draws every sample; a new family
# fails this test until dashboard.js draws it (or it is named here).
NOT_DRAWN = set()
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)')
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

SCENARIOS = [
    ("classify", "configs/classify.click", router_ports(PACKETS, dst="uniform"), {}),
    ("offload router, emulated device", "configs/ipv4-router-offload.click",
     router_ports(PACKETS, dst="uniform"),
     {"FULCRUM_OFFLOAD_BACKEND": "emu", "FULCRUM_EMU_DEVICES": "kernel_mpps=40,lat_us=20"}),
]


class Tagged(html.parser.HTMLParser):
    """Every element with data-metric (its attributes and text), and the SVG graph's nodes and
    edge labels."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.nodes, self.edge_labels = [], [], []
        self.stack = []  # [tag, attrs, text parts or None]

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class", "").split()
        if tag == "g" and "node" in cls:
            self.nodes.append(a)
        if tag == "g" and "edge-label" in cls:
            self.edge_labels.append(a)
        if tag in VOID:
            return
        self.stack.append([tag, a, [] if "data-metric" in a else None])

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_endtag(self, tag):
        while self.stack:
            t, a, text = self.stack.pop()
            if text is not None:
                self.tags.append((a, "".join(text)))
            if t == tag:
                break

    def handle_data(self, data):
        for _, _, text in self.stack:
            if text is not None:
                text.append(data)


def unescape(v):
    return re.sub(r'\\(.)', lambda m: "\n" if m.group(1) == "n" else m.group(1), v)


def parse_labels(text):
    out, pos = {}, 0
    for m in LABEL.finditer(text):
        if m.start() != pos:
            raise ValueError(f"bad data-labels {text!r}")
        out[m.group(1)] = unescape(m.group(2))
        pos = m.end()
    if pos != len(text):
        raise ValueError(f"bad data-labels {text!r}")
    return out


def dump_dom(url, profile):
    cmd = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
           f"--virtual-time-budget={VIRTUAL_TIME_MS}", "--dump-dom", url]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT_S)
    if res.returncode != 0 or "<html" not in res.stdout:
        raise RuntimeError(f"chromium failed ({res.returncode}): {' '.join(cmd)}\n{res.stderr[-3000:]}")
    return res.stdout


def check_tags(label, dom, metrics):
    """Failures of the drawn figures against the /metrics samples."""
    failures, drawn = [], set()
    if not dom.tags:
        return [f"{label}: no figure tagged with data-metric in the dashboard's DOM"]
    for attrs, text in dom.tags:
        name, value = attrs["data-metric"], attrs.get("data-value")
        where = f"{label}: drawn {name}{{{attrs.get('data-labels', '')}}}"
        try:
            want = parse_labels(attrs.get("data-labels", ""))
        except ValueError as e:
            failures.append(f"{where}: {e}")
            continue
        found = [(k, v) for k, v in metrics.items() if k[0] == name and set(want.items()) <= k[1]]
        if len(found) != 1:
            failures.append(f"{where}: matches {len(found)} samples of /metrics, expected 1")
            continue
        key, sample = found[0]
        drawn.add(key)
        if value is None:
            failures.append(f"{where}: no data-value")
            continue
        got = float(value)
        if name in MOVING:
            if not got <= sample:
                failures.append(f"{where}: drew {value}, /metrics read later has {sample}")
        elif got != sample:
            failures.append(f"{where}: drew {value}, /metrics has {sample!r}")
        if re.fullmatch(r"[0-9]+", value):
            digits = text.replace(",", "").strip()
            is_number = re.fullmatch(r"[0-9]+", digits) is not None
            if name.endswith("_total") and not is_number:
                failures.append(f"{where}: a counter drawn as {text!r}, not as its integer")
            elif is_number and digits != value:
                failures.append(f"{where}: text {text!r} is not its data-value {value}")
    for key in metrics:
        if key not in drawn and key[0] not in NOT_DRAWN:
            failures.append(f"{label}: /metrics sample {key[0]}{dict(key[1])} is not drawn "
                            f"(src/control/dashboard/dashboard.js)")
    return failures


def check_graph(label, dom, graph):
    failures = []
    names = [n["name"] for n in graph["nodes"]]
    if len(dom.nodes) != len(names):
        failures.append(f"{label}: the graph draws {len(dom.nodes)} nodes, /api/graph has {len(names)}")
    edges = sum(1 for n in graph["nodes"] for o in n["outputs"] if o["to"] >= 0)
    if len(dom.edge_labels) != edges:
        failures.append(f"{label}: {len(dom.edge_labels)} edge labels, /api/graph has {edges} edges")
    return failures


def scenario(label, config, ports, env, profile):
    with LiveRun(config, ports, env=env) as run:
        st = run.wait_still(PACKETS)
        graph = run.json("/api/graph")
        dom = Tagged()
        dom.feed(dump_dom(run.url, profile))
        metrics = samples(run.metrics_text())
        failures = check_tags(label, dom, metrics) + check_graph(label, dom, graph)
        if label.startswith("offload") and not st["report"]["devices"]:
            failures.append(f"{label}: no offload device in the report")
        if not failures:
            print(f"ok: {label}: {len(dom.tags)} drawn figures equal /metrics ({len(metrics)} samples), "
                  f"{len(dom.nodes)} nodes")
        return failures


def main():
    if CHROMIUM is None:
        print("SKIP: chromium is not installed (scripts/install-deps.sh installs it)")
        return 0
    profile = tempfile.mkdtemp(prefix="fulcrum-dashboard-chromium-")
    failures = []
    try:
        for label, config, ports, env in SCENARIOS:
            try:
                failures += scenario(label, config, ports, env, profile)
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                failures.append(f"{label}: {e}")
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    print("ok: the dashboard draws exactly what /metrics serves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
