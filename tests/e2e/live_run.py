"""A `fulcrum run --http 127.0.0.1:0` under test: started in the background, its control plane's
URL read from stderr, its endpoints fetched, /metrics parsed with prometheus_client's own parser,
and the run stopped (SIGINT, then SIGKILL) when the test is done. Each wait ends on its condition;
its bound is the tests' deadlock guard (waits.py), never a timing assertion."""
import json
import os
import queue
import re
import signal
import struct
import subprocess
import threading
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from waits import GUARD_S, wait_until

FULCRUM = os.path.abspath(os.environ.get("FULCRUM_BIN", "build/fulcrum"))
SOURCE_DIR = os.path.abspath(os.environ.get("FULCRUM_SOURCE_DIR",
                                            os.path.join(os.path.dirname(__file__), "..", "..")))
POLL_S = 0.2
URL_LINE = re.compile(r"fulcrum: control plane at (http://\S+/)")


def router_ports(count, dst="routes", rate=0):
    """The IPv4 router's ports: a generator of `count` packets into the demo routes, a sink."""
    gen = f"gen:size=64,flows=1024,dst={dst},routes=configs/routes-demo.txt,count={count}"
    if rate:
        gen += f",rate={rate}"
    return [gen, "net_null0,no-rx=1"]


class LiveRun:
    """`fulcrum run CONFIG --port P... --http 127.0.0.1:0 --seconds SECONDS` in SOURCE_DIR
    (seconds None: no --seconds, the run ends on a signal)."""

    def __init__(self, config, ports, seconds=120, extra=(), env=None):
        cmd = [FULCRUM, "run", config, "--quiet", "--http", "127.0.0.1:0", *extra]
        if seconds is not None:
            cmd += ["--seconds", str(seconds)]
        for p in ports:
            cmd += ["--port", p]
        self.cmd = cmd
        self.stderr_lines = []
        self.stdout_parts = []
        self._lines = queue.Queue()
        self.proc = subprocess.Popen(cmd, cwd=SOURCE_DIR, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env={**os.environ, **(env or {})})
        threading.Thread(target=self._read_stderr, daemon=True).start()
        self._stdout_reader = threading.Thread(
            target=lambda: self.stdout_parts.append(self.proc.stdout.read()), daemon=True)
        self._stdout_reader.start()
        self.url = self._wait_for_url()

    def _read_stderr(self):
        for line in self.proc.stderr:
            self.stderr_lines.append(line)
            self._lines.put(line)

    def _wait_for_url(self):
        """The control plane's URL, printed once the run has started (a 500k-route table loads
        first: a minute under ASan on a loaded machine)."""
        def url():
            try:
                m = URL_LINE.search(self._lines.get(timeout=POLL_S))
            except queue.Empty:
                return None
            return m.group(1) if m else None
        found = wait_until(url, poll_s=0, proc=self.proc)
        if found:
            return found
        self.stop()
        raise RuntimeError(f"no control plane URL from: {' '.join(self.cmd)}\n{''.join(self.stderr_lines)}")

    @property
    def pid(self):
        return self.proc.pid

    def request(self, path, method="GET", body=None, timeout=GUARD_S):
        """(status, headers, body text) of PATH on the control plane; `body` is sent as JSON."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path.lstrip("/"), data=data, method=method,
                                     headers={} if data is None else {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as res:
                return res.status, res.headers, res.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read().decode()

    def get(self, path):
        """(status, body text) of GET PATH."""
        status, _, body = self.request(path)
        return status, body

    def json(self, path):
        status, body = self.get(path)
        if status != 200:
            raise RuntimeError(f"GET {path}: HTTP {status}: {body}")
        return json.loads(body)

    def stats(self):
        """/api/stats as JSON; None before the first live state (HTTP 503)."""
        status, body = self.get("/api/stats")
        if status == 503:
            return None
        if status != 200:
            raise RuntimeError(f"GET /api/stats: HTTP {status}: {body}")
        return json.loads(body)

    def reload(self, body, timeout=GUARD_S):
        """(HTTP status, JSON answer) of POST /api/reload with `body`."""
        status, _, text = self.request("/api/reload", "POST", body, timeout)
        return status, json.loads(text)

    def stderr(self):
        return "".join(self.stderr_lines)

    def metrics_text(self):
        status, body = self.get("/metrics")
        if status != 200:
            raise RuntimeError(f"GET /metrics: HTTP {status}: {body}")
        return body

    def metrics(self):
        """The /metrics samples as {(name, frozenset of label pairs): value}."""
        return samples(self.metrics_text())

    def wait_still(self, packets):
        """Polls /api/stats until `packets` packets came in, none is in flight and two states in
        a row (different sequence numbers) hold the same counters; returns that state."""
        last, seen = None, "no state (HTTP 503: not live yet)"

        def still():
            nonlocal last, seen
            status, body = self.get("/api/stats")
            if status != 200:
                return None
            st = json.loads(body)
            seen = json.dumps(st["report"])[:2000]
            r = st["report"]
            if r["packets_in"] == packets and r["queued"] == 0:
                if last is not None and last["seq"] != st["seq"] and counters(last) == counters(st):
                    return st
                last = st
            return None
        st = wait_until(still, poll_s=POLL_S, proc=self.proc)
        if st:
            return st
        raise RuntimeError(f"the pipeline did not become still with {packets} packets in: last report {seen}")

    def stop(self, sig=signal.SIGINT):
        """Ends the run (sig, SIGKILL if it does not exit); returns its exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=GUARD_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=GUARD_S)
        return self.proc.returncode

    def stdout(self):
        """What the run printed on stdout (call once it has exited)."""
        self._stdout_reader.join(timeout=GUARD_S)
        return "".join(self.stdout_parts)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def received(run):
    """Packets the run has taken in so far (0 before its first statistics)."""
    s = run.stats()
    return s["report"]["packets_in"] if s is not None else 0


def pcap_frames(path):
    """The frames of a pcap file written by ToDump or net_pcap, in file order (bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    pos = 24
    while pos + 16 <= len(data):
        incl = struct.unpack_from("<I", data, pos + 8)[0]
        yield data[pos + 16:pos + 16 + incl]
        pos += 16 + incl


def check_lossless_reloads(st, reloads, failures):
    """A run's statistics after reloads under traffic: balanced, nothing dropped, `reloads` done."""
    if not st["balanced"] or st["dropped"] != 0:
        failures.append(f"balance {st['balanced']}, dropped {st['dropped']}: {st['drops']}")
    if st["reloads"] != reloads:
        failures.append(f"reloads: {st['reloads']}, expected {reloads}")


def counters(state):
    """What must not move in a still pipeline: the report less its clocks and rates."""
    r = dict(state["report"])
    for k in ("duration_s", "mpps_in", "mpps_out", "gbps_in", "gbps_out", "energy"):
        r.pop(k, None)
    return r


def samples(text):
    """Every sample of a Prometheus text exposition, parsed by prometheus_client."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            key = (s.name, frozenset(s.labels.items()))
            if key in out:
                raise ValueError(f"duplicate sample {s.name}{s.labels}")
            out[key] = s.value
    return out


def value(metrics, name, **labels):
    """The one sample NAME whose labels include `labels`."""
    found = [v for (n, ls), v in metrics.items() if n == name and set(labels.items()) <= ls]
    if len(found) != 1:
        raise KeyError(f"{len(found)} samples {name}{labels}")
    return found[0]
