#!/usr/bin/env python3
"""`fulcrum proxy` end to end, against nginx (Debian's) and a Python echo server as backends:

* 10k+ requests of mixed sizes (GET of files of 0 B ... 10 MB, HEAD, POST bodies with
  Content-Length and chunked, pipelined batches, keep-alive) give the same status, body and
  headers through the proxy as sent directly to the backend; 16 clients at once get the right
  answers; a few with curl;
* malformed requests get 400 (431 for an oversized head, 413 for an oversized body) and the
  connection is closed;
* a slow client (a head sent in pieces, stopped halfway; a client not reading a 10 MB response)
  does not stall other flows: their requests complete, in order, while it is stalled;
* a backend that refuses gives 502; with health checks, a pool stops choosing a dead backend;
* the connection limit, idle and header timeouts; SIGINT and SIGTERM end the proxy with its
  summary.

Run directly or through ctest (e2e.test_l7_proxy). nginx cannot echo request bodies, so POST
bodies go (by an L7Balancer path rule) to a threaded Python echo server."""
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from l7_backends import EchoServer, Nginx, free_port, wait_listening  # noqa: E402
from waits import GUARD_S, wait_until  # noqa: E402

FULCRUM = os.environ.get("FULCRUM_BIN", "build/fulcrum")
SEED = 12
TOTAL_REQUESTS = 10000
CONNECTIONS = 8
PIPELINE_BATCH = 100
MB = 1 << 20
SMALL_SIZES = [0, 1, 2, 100, 1000, 1023, 1024, 4096, 8191, 65536, 100000]
LARGE_SIZES = [262144, MB, 10 * MB]
COMPARED_HEADERS = ["content-type", "content-length", "etag", "last-modified", "x-method", "x-tag",
                    "transfer-encoding", "connection"]


class _Unclosable:
    """The connection's buffered reader, shared by the responses read from it in turn."""

    def __init__(self, f):
        self.f = f

    def __getattr__(self, name):
        return getattr(self.f, name)

    def close(self):
        pass


class _FileSock:
    def __init__(self, f):
        self.f = _Unclosable(f)

    def makefile(self, *args, **kwargs):
        return self.f


class Conn:
    """A keep-alive connection: raw requests out, responses read in order (pipelining). A read
    waits for the whole response; the socket timeout only bounds a hang."""

    def __init__(self, port, timeout=GUARD_S):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.f = self.sock.makefile("rb")

    def send(self, data):
        self.sock.sendall(data)

    def response(self, method="GET"):
        r = http.client.HTTPResponse(_FileSock(self.f), method=method)
        r.begin()
        body = r.read()
        headers = {k.lower(): v for k, v in r.getheaders()}
        return r.status, headers, body

    def closed_by_peer(self):
        try:
            return self.f.read(1) == b""
        except OSError:
            return True

    def close(self):
        self.f.close()
        self.sock.close()


def request(method, path, body=None, chunked=False, tag="", close=False):
    head = f"{method} {path} HTTP/1.1\r\nHost: test.local\r\nX-Tag: {tag}\r\n"
    if close:
        head += "Connection: close\r\n"
    data = b""
    if body is not None and chunked:
        head += "Transfer-Encoding: chunked\r\n"
        rng = random.Random(len(body))
        pos = 0
        while pos < len(body):
            n = rng.randint(1, 70000)
            piece = body[pos:pos + n]
            data += b"%x;ext=1\r\n" % len(piece) + piece + b"\r\n"
            pos += n
        data += b"0\r\nX-Trailer: t\r\n\r\n"
    elif body is not None:
        head += f"Content-Length: {len(body)}\r\n"
        data = body
    return (head + "\r\n").encode() + data


def semantic(resp, chunked_ok=True):
    """Status, body and the compared headers; a chunked response and one with the same body and a
    Content-Length are the same."""
    status, headers, body = resp
    h = {k: v for k, v in headers.items() if k in COMPARED_HEADERS}
    h.pop("transfer-encoding", None)
    h.pop("content-length", None)
    return status, h, body


class Run:
    def __init__(self, work):
        self.work = work
        self.failures = []
        self.procs = []

    def check(self, cond, what):
        if not cond:
            self.failures.append(what)
        return cond

    def proxy(self, config_text, backends, *extra, name="proxy"):
        """`fulcrum proxy` started on a free port; returned once it accepts connections (it
        listens only when its chains are built, which takes a minute for the WAF under ASan)."""
        cfg = os.path.join(self.work, f"{name}.l7")
        with open(cfg, "w") as f:
            f.write(config_text)
        port = free_port()
        stats = os.path.join(self.work, f"{name}.json")
        cmd = [FULCRUM, "proxy", cfg, "--listen", f"127.0.0.1:{port}", "--stats-json", stats]
        for b in backends:
            cmd += ["--backend", f"127.0.0.1:{b}"]
        cmd += list(extra)
        # The proxy's idle and header timeouts as long as the guard unless the test sets them: a
        # client descheduled for seconds on a loaded machine is not an idle one.
        for flag in ("--idle-timeout-ms", "--header-timeout-ms"):
            if flag not in extra:
                cmd += [flag, str(GUARD_S * 1000)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(proc)
        if not wait_listening(port, proc):
            if proc.poll() is None:  # still loading: stop it, or reading its stderr never ends
                proc.kill()
            raise RuntimeError(f"{name} did not start: {proc.communicate()[1]}")
        return proc, port, stats

    def kill_all(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()

    def finish(self, ok_message):
        """The test's exit status: failures listed (the work files kept), or the message."""
        if self.failures:
            print("\n".join(self.failures), file=sys.stderr)
            print(f"(files kept in {self.work})", file=sys.stderr)
            return 1
        shutil.rmtree(self.work)
        print(ok_message)
        return 0

    def stop(self, proc, stats, sig=signal.SIGINT):
        proc.send_signal(sig)
        try:
            out, err = proc.communicate(timeout=GUARD_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            self.failures.append("the proxy did not stop on SIGINT")
            return None, ""
        self.check(proc.returncode == 0, f"proxy exit code {proc.returncode}: {err}")
        self.check("requests:" in out, "no summary printed")
        with open(stats) as f:
            return json.load(f), out


def mixed_requests(rng, files, count):
    """(method, path, body, chunked) in a mix: GETs of every size (10 MB seldom), HEADs,
    nginx's own answers, 404s, POST/PUT bodies with Content-Length or chunked."""
    small = [n for n in files if len(files[n]) <= 65536]
    out = []
    for _ in range(count):
        r = rng.random()
        if r < 0.45:
            out.append(("GET", "/" + rng.choice(small), None, False))
        elif r < 0.50:
            out.append(("GET", "/" + rng.choice([f"f{s}" for s in (100000, 262144)]), None, False))
        elif r < 0.55:
            out.append(("HEAD", "/" + rng.choice(list(files)), None, False))
        elif r < 0.60:
            out.append(("GET", rng.choice(["/return", "/nocontent", "/missing"]), None, False))
        else:
            n = rng.choice([0, 1, 10, 100, 1000, 5000, 20000, 70000])
            body = rng.randbytes(n)
            out.append((rng.choice(["POST", "PUT"]), "/echo/x", body, rng.random() < 0.4))
    return out


def run_mixed(run, port_proxy, nginx, echo, files, rng):
    """The mix over keep-alive connections, sequential and in pipelined batches; each response
    compared with the backend's own answer to the same request."""
    sent = 0
    direct_n = Conn(nginx.port)
    direct_e = Conn(echo.port)
    conns = [Conn(port_proxy) for _ in range(CONNECTIONS)]
    reqs = mixed_requests(rng, files, TOTAL_REQUESTS - 200)
    mismatches = 0
    # Pipelined batches: one send of PIPELINE_BATCH requests, then the answers in order.
    batches = [reqs[i:i + PIPELINE_BATCH] for i in range(0, 2000, PIPELINE_BATCH)]
    rest = reqs[2000:]
    for bi, batch in enumerate(batches):
        c = conns[bi % CONNECTIONS]
        data = b"".join(request(m, p, b, ch, tag=f"p{bi}.{i}") for i, (m, p, b, ch) in enumerate(batch))
        # Sent while the answers are read: a client that sends megabytes of pipelined bodies
        # without reading blocks any server.
        sender = threading.Thread(target=c.send, args=(data,))
        sender.start()
        got = [c.response(m) for (m, p, b, ch) in batch]
        sender.join()
        for i, ((m, p, b, ch), resp) in enumerate(zip(batch, got)):
            d = direct_e if p.startswith("/echo") else direct_n
            d.send(request(m, p, b, ch, tag=f"p{bi}.{i}"))
            if semantic(resp) != semantic(d.response(m)):
                mismatches += 1
                if mismatches < 5:
                    run.failures.append(f"pipelined {m} {p}: {semantic(resp)[:2]} != direct")
        sent += len(batch)
    for i, (m, p, b, ch) in enumerate(rest):
        c = conns[i % CONNECTIONS]
        c.send(request(m, p, b, ch, tag=str(i)))
        resp = c.response(m)
        d = direct_e if p.startswith("/echo") else direct_n
        d.send(request(m, p, b, ch, tag=str(i)))
        if semantic(resp) != semantic(d.response(m)):
            mismatches += 1
            if mismatches < 5:
                run.failures.append(f"{m} {p} (body {len(b or b'')}): {semantic(resp)[:2]} != direct")
        sent += 1
    # Every large size, 10 MB included, and large uploads (both framings).
    for n in LARGE_SIZES + SMALL_SIZES:
        for c in conns[:2]:
            c.send(request("GET", f"/f{n}"))
            direct_n.send(request("GET", f"/f{n}"))
            run.check(semantic(c.response()) == semantic(direct_n.response()), f"GET /f{n} differs")
            sent += 1
    for n, chunked in [(MB, False), (MB + 17, True), (10 * MB, True), (3 * MB, False)]:
        body = rng.randbytes(n)
        conns[0].send(request("POST", "/echo/big", body, chunked))
        status, _, got = conns[0].response()
        run.check(status == 200 and got == body, f"POST {n} B (chunked {chunked}) not echoed intact")
        sent += 1
    # The balancer switching backends inside one pipelined batch and one connection.
    c = conns[1]
    c.send(request("GET", "/f1000") + request("POST", "/echo/a", b"xyz") + request("GET", "/f1"))
    a, b2, c3 = c.response(), c.response(), c.response()
    run.check(a[2] == files["f1000"] and b2[2] == b"xyz" and c3[2] == files["f1"],
              "backend switch inside a pipelined batch")
    sent += 3
    run.check(mismatches == 0, f"{mismatches} responses differ from the backend's own")
    for c in conns:
        c.close()
    direct_n.close()
    direct_e.close()
    return sent


def run_concurrent(run, port_proxy, files, threads=16, each=40):
    """Many connections at once (both workers busy): every answer is the right file or echo."""
    names = [n for n in files if len(files[n]) <= 262144]
    bad = []

    def client(k):
        rng = random.Random(k)
        c = Conn(port_proxy)
        try:
            for i in range(each):
                if i % 3 == 2:
                    body = rng.randbytes(rng.randint(0, 30000))
                    c.send(request("POST", "/echo/c", body, chunked=i % 2 == 0))
                    ok = c.response()[2] == body
                else:
                    name = rng.choice(names)
                    c.send(request("GET", "/" + name))
                    ok = c.response()[2] == files[name]
                if not ok:
                    bad.append(f"client {k} request {i}")
        except (OSError, http.client.HTTPException) as e:
            bad.append(f"client {k}: {e!r}")
        finally:
            c.close()

    ts = [threading.Thread(target=client, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    run.check(not bad, f"concurrent clients: {bad[:3]}")
    return threads * each


def run_curl(run, port_proxy, nginx, echo, files):
    if not shutil.which("curl"):
        print("curl not found: its checks are skipped")
        return 0
    n = 0
    for name in ["f0", "f4096", "f1048576", "f10485760"]:
        outs = []
        for port in (port_proxy, nginx.port):
            out = os.path.join(run.work, f"curl-{name}-{port}")
            code = subprocess.run(["curl", "-s", "-o", out, "-w", "%{http_code}",
                                   f"http://127.0.0.1:{port}/{name}"], capture_output=True,
                                  text=True, timeout=GUARD_S).stdout
            outs.append((code, open(out, "rb").read()))
        run.check(outs[0] == outs[1] and outs[0][1] == files[name], f"curl GET /{name} differs")
        n += 1
    upload = os.path.join(run.work, "upload.bin")
    with open(upload, "wb") as f:
        f.write(random.Random(3).randbytes(2 * MB + 5))
    for extra in (["-H", "Transfer-Encoding: chunked"], ["-H", "Expect: 100-continue"]):
        out = os.path.join(run.work, "curl-echo")
        code = subprocess.run(["curl", "-s", "-o", out, "-w", "%{http_code}", "--data-binary",
                               "@" + upload, *extra, f"http://127.0.0.1:{port_proxy}/echo/curl"],
                              capture_output=True, text=True, timeout=GUARD_S).stdout
        run.check(code == "200" and open(out, "rb").read() == open(upload, "rb").read(),
                  f"curl upload {extra} not echoed intact ({code})")
        n += 1
    return n


def run_malformed(run, port_proxy, files):
    cases = [
        (b"GARBAGE\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost x\r\n\r\n", 400),
        (b"POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
        (b"GET / HTTP/1.1\r\nX-Big: " + b"a" * 70000 + b"\r\n\r\n", 431),
        (b"POST /echo HTTP/1.1\r\nContent-Length: 999999999\r\n\r\nabc", 413),
    ]
    for data, status in cases:
        c = Conn(port_proxy)
        c.send(data)
        got = c.response()[0]
        run.check(got == status, f"malformed {data[:30]!r}: status {got}, expected {status}")
        run.check(c.closed_by_peer(), f"malformed {data[:30]!r}: connection not closed")
        c.close()
    # Valid requests before the bad one are answered first, in order.
    c = Conn(port_proxy)
    c.send(request("GET", "/f100") + request("GET", "/f1") + b"BAD REQUEST LINE\r\n\r\n")
    r1, r2, r3 = c.response(), c.response(), c.response()
    run.check(r1[2] == files["f100"] and r2[2] == files["f1"] and r3[0] == 400,
              "answers before a malformed request, then 400")
    run.check(c.closed_by_peer(), "connection not closed after the 400")
    c.close()
    return len(cases) + 1


def run_slow_clients(run, port_proxy, files):
    """A client stopped halfway through its head and one not reading a 10 MB response; others
    complete meanwhile."""
    slow = Conn(port_proxy)
    req = request("GET", "/f4096")
    for i in range(20):  # byte by byte, then stalled
        slow.send(req[i:i + 1])
    stuck = Conn(port_proxy)
    stuck.send(request("GET", "/f10485760"))  # and reads nothing yet
    others = [Conn(port_proxy) for _ in range(4)]
    done = 0
    for i in range(200):
        c = others[i % 4]
        name = ["f0", "f100", "f65536", "f1000"][i % 4]
        c.send(request("GET", "/" + name, tag=str(i)))
        status, h, body = c.response()
        done += status == 200 and body == files[name] and h.get("x-tag") is None
    run.check(done == 200, f"only {done}/200 requests completed while two clients were stalled")
    # The stalled ones still get their answers, intact.
    for i in range(20, len(req)):
        slow.send(req[i:i + 1])
    run.check(slow.response()[2] == files["f4096"], "the byte-by-byte client's answer")
    run.check(stuck.response()[2] == files["f10485760"], "the non-reading client's 10 MB answer")
    for c in [slow, stuck] + others:
        c.close()
    return 202


def status_unless_idle(port, data):
    """The status of one request on a new connection; None when the proxy closed it first: with
    a short --idle-timeout-ms, a client descheduled between connect and send is an idle one."""
    c = Conn(port)
    try:
        c.send(data)
        return c.response()[0]
    except (OSError, http.client.HTTPException):
        return None
    finally:
        c.close()


def run_backend_down(run, work, nginx, files):
    dead = free_port()
    proc, port, stats = run.proxy("# empty chain\n", [dead], "--idle-timeout-ms", "600",
                                  "--header-timeout-ms", "200", name="down")
    for _ in range(3):
        status = wait_until(lambda: status_unless_idle(port, request("GET", "/f100")), poll_s=0)
        run.check(status == 502, f"a refused backend gives 502, not {status}")
    # Idle and header timeouts close the connection (the socket timeout only bounds a hang).
    idle = Conn(port)
    run.check(idle.closed_by_peer(), "idle connection not closed")
    idle.close()
    partial = Conn(port)
    partial.send(b"GET /f100 HTTP/1.1\r\nHo")
    run.check(partial.response()[0] == 408, "a head not completed in time gets 408")
    partial.close()
    st, _ = run.stop(proc, stats, signal.SIGTERM)
    if st:
        run.check(st["errors"].get("backend-refused", 0) >= 3, f"backend-refused not counted: {st}")
        run.check(st["errors"].get("idle-timeout", 0) >= 1 and st["errors"].get("header-timeout", 0) >= 1,
                  f"timeouts not counted: {st['errors']}")
        run.check(st["status"]["5xx"] >= 3, "5xx not counted")
    # Health checks: the pool stops choosing its dead backend.
    cfg = f"L7Balancer(POOL p 127.0.0.1:{nginx.port} 127.0.0.1:{dead})\n"
    proc, port, stats = run.proxy(cfg, [nginx.port], "--health-interval-ms", "50",
                                  "--health-fails", "1", name="health")
    # Requests until 40 in a row are answered (the health checker has marked the dead one down).
    ok_in_a_row = 0

    def forty_in_a_row():
        nonlocal ok_in_a_row
        c = Conn(port)
        c.send(request("GET", "/f1", close=True))
        ok_in_a_row = ok_in_a_row + 1 if c.response()[0] == 200 else 0
        c.close()
        return ok_in_a_row == 40
    run.check(wait_until(forty_in_a_row, poll_s=0), "with health checks, the dead backend is still chosen")
    st, out = run.stop(proc, stats)
    run.check(f"backend 127.0.0.1:{dead}: down" in out, "the dead backend not reported down")
    return 3


def served_connection(port):
    """A new connection whose GET was answered 200, kept open; None (closed) when it was refused
    (over the connection limit)."""
    c = Conn(port)
    try:
        c.send(request("GET", "/f1"))
        if c.response()[0] == 200:
            return c
    except (OSError, http.client.HTTPException):
        pass
    c.close()
    return None


def run_conn_limit(run, nginx, files):
    proc, port, stats = run.proxy("", [nginx.port], "--max-conns", "3", "--workers", "2",
                                  name="limit")
    # The start-up probe's connection counts until the proxy has seen it close: a connection
    # refused for the limit is retried until the proxy has.
    held = []
    for _ in range(3):
        c = wait_until(lambda: served_connection(port), poll_s=0.02)
        if c:
            held.append(c)
    run.check(len(held) == 3, "connections within the limit")
    extra = Conn(port)
    try:
        extra.send(request("GET", "/f1"))
        status = extra.response()[0]
    except (OSError, http.client.HTTPException):
        status = None
    run.check(status in (503, None), f"a connection over the limit was served ({status})")
    extra.close()
    held.pop().close()
    # Refused until the proxy has seen that close.
    c = wait_until(lambda: served_connection(port), poll_s=0.02)
    run.check(c is not None, "a connection freed under the limit is not reused")
    if c:
        c.close()
    for c in held:
        c.close()
    st, _ = run.stop(proc, stats)
    if st:
        run.check(st["errors"].get("conn-limit", 0) >= 1, "conn-limit not counted")


def run_cli_errors(run):
    """Configuration errors stop the proxy before it listens, with file:line:column."""
    bad = os.path.join(run.work, "bad.l7")
    with open(bad, "w") as f:
        f.write("# a typo\nL7Balancer(POOL web 127.0.0.1:1) -> Nope(1)\n")
    res = subprocess.run([FULCRUM, "proxy", bad, "--backend", "127.0.0.1:1"], capture_output=True,
                         text=True, timeout=GUARD_S)
    run.check(res.returncode == 2 and f"{bad}:2:37: unknown NF 'Nope'" in res.stderr,
              f"config error: {res.returncode} {res.stderr}")
    res = subprocess.run([FULCRUM, "proxy", bad], capture_output=True, text=True, timeout=GUARD_S)
    run.check(res.returncode == 2 and "--backend" in res.stderr, "missing --backend accepted")


def main():
    work = tempfile.mkdtemp(prefix="fulcrum-e2e-l7proxy-")
    rng = random.Random(SEED)
    files = {f"f{n}": rng.randbytes(n) for n in SMALL_SIZES + LARGE_SIZES}
    run = Run(work)
    nginx = echo = None
    try:
        run_cli_errors(run)
        nginx = Nginx(work, files, workers=2)
        echo = EchoServer()
        cfg = (f"# files from nginx, bodies echoed by the Python server\n"
               f"L7Balancer(POOL files 127.0.0.1:{nginx.port}, POOL echo 127.0.0.1:{echo.port},\n"
               f"           RULE echo * /echo, DEFAULT files)\n")
        proc, port, stats = run.proxy(cfg, [nginx.port], "--workers", "2",
                                      "--max-body-bytes", str(16 * MB))
        t0 = time.monotonic()
        sent = run_mixed(run, port, nginx, echo, files, rng)
        sent += run_concurrent(run, port, files)
        t1 = time.monotonic()
        sent += run_curl(run, port, nginx, echo, files)
        t2 = time.monotonic()
        bad = run_malformed(run, port, files)
        sent += run_slow_clients(run, port, files)
        t3 = time.monotonic()
        print(f"(mixed and concurrent {t1 - t0:.1f} s, curl {t2 - t1:.1f} s, malformed and slow {t3 - t2:.1f} s)")
        # The echo backend gone: a new connection to it is refused, the client gets 502.
        echo.stop()
        echo = None
        c = Conn(port)
        c.send(request("POST", "/echo/x", b"abc"))
        run.check(c.response()[0] == 502, "a request for a stopped backend gets 502")
        c.close()
        st, out = run.stop(proc, stats)
        if st:
            run.check(st["requests"] >= sent, f"{st['requests']} requests counted, {sent} sent")
            run.check(st["errors"].get("parse-error", 0) >= 4, f"parse errors: {st['errors']}")
            run.check(st["status"]["4xx"] >= bad, "4xx not counted")
            run.check(st["status"]["5xx"] >= 1, "5xx not counted")
        run_backend_down(run, work, nginx, files)
        run_conn_limit(run, nginx, files)
        print(f"{sent} requests compared, {bad} malformed")
    finally:
        run.kill_all()
        if echo:
            echo.stop()
        if nginx:
            nginx.stop()
    return run.finish("ok: the L7 proxy answers as the backends do, and its limits hold")


if __name__ == "__main__":
    sys.exit(main())
