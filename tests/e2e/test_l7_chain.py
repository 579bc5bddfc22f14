#!/usr/bin/env python3
"""`fulcrum proxy` with NF chains, end to end, against a Python echo backend:

* WebGateway -> StreamIDS (MODE block, requests): a client encrypts each request body
  (IV || AES-128-CBC, PKCS#7, python `cryptography` — not our code), the backend sees the
  plaintext, the response comes back encrypted with a fresh IV and decrypts to what was sent;
  a request whose plaintext completes "/bin/sh" across two pipelined requests of one connection
  is answered 403 and never reaches the backend; a broken padding is answered 400. The same
  traffic with the chain run per message (InlineProcessor) and batched (BatchProcessor,
  `--batch`) on the CPU, on the emulated device and on PoCL (OpenCL), where the fused kernel
  decrypts and scans: the same answers each time, and the device really ran (summary).
* WAF (OWASP CRS, Debian's modsecurity-crs) in front: a SQL injection is answered 403 with the
  rule ids in the log, a benign request passes (skipped when the CRS is absent).

Run directly or through ctest (e2e.test_l7_chain)."""
import os
import random
import re
import sys
import tempfile

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

sys.path.insert(0, os.path.dirname(__file__))
from l7_backends import EchoServer  # noqa: E402
from test_l7_proxy import Conn, Run, request  # noqa: E402

KEY = bytes(range(100, 116))
RULES = ('alert tcp any any -> any any (msg:"shell"; content:"/bin/sh"; sid:4001;)\n'
         'alert tcp any any -> any any (msg:"evil"; content:"EVIL"; nocase; sid:4002;)\n')
CRS = "/usr/share/modsecurity-crs"


def seal(plain, rng):
    iv = rng.randbytes(16)
    p = padding.PKCS7(128).padder()
    data = p.update(plain) + p.finalize()
    e = Cipher(algorithms.AES(KEY), modes.CBC(iv)).encryptor()
    return iv + e.update(data) + e.finalize()


def unseal(body):
    d = Cipher(algorithms.AES(KEY), modes.CBC(body[:16])).decryptor()
    data = d.update(body[16:]) + d.finalize()
    u = padding.PKCS7(128).unpadder()
    return u.update(data) + u.finalize()


def traffic(rng):
    """Per connection, a list of (plaintext, expected status); pipelined on one connection."""
    conns = []
    for c in range(12):
        reqs = []
        for k in range(rng.randint(3, 12)):
            plain = bytes(rng.choice(b"abcdefghij /") for _ in range(rng.randint(1, 3000)))
            plain = plain.replace(b"/bin/sh", b"/bin/xx")
            reqs.append([plain, 200])
        if c % 3 == 0:  # "/bin/sh" split over two requests: the second completes it
            k = rng.randrange(len(reqs) - 1)
            reqs[k][0] += b"xx /bi"
            reqs[k + 1][0] = b"n/sh" + reqs[k + 1][0]
            reqs[k + 1][1] = 403
            del reqs[k + 2:]  # the IDS has alerted on this flow; nothing after it to compare
        conns.append(reqs)
    return conns


def run_gateway_ids(run, work, echo, seed, extra, label):
    rng = random.Random(seed)
    with open(os.path.join(work, "key.hex"), "w") as f:
        f.write(KEY.hex())
    with open(os.path.join(work, "ids.rules"), "w") as f:
        f.write(RULES)
    cfg = (f"WebGateway({work}/key.hex) -> "
           f"StreamIDS({work}/ids.rules, MODE block, DIRECTION requests)\n")
    proc, port, stats = run.proxy(cfg, [echo.port], *extra, name=label)
    blocked = answered = 0
    for reqs in traffic(rng):
        c = Conn(port)
        c.send(b"".join(request("POST", "/echo", seal(p, rng)) for p, _ in reqs))
        for plain, want in reqs:
            status, _, body = c.response("POST")
            run.check(status == want, f"{label}: status {status}, expected {want}")
            if status == 200:
                run.check(unseal(body) == plain, f"{label}: the response does not decrypt to the "
                          "request's plaintext")
                answered += 1
            blocked += status == 403
        c.close()
    c = Conn(port)
    bad = bytearray(seal(b"hello", rng))
    bad[-1] ^= 0x55
    c.send(request("POST", "/echo", bytes(bad)))
    run.check(c.response("POST")[0] == 400, f"{label}: a broken padding is answered 400")
    c.close()
    st, out = run.stop(proc, stats)
    run.check(blocked >= 4, f"{label}: {blocked} requests blocked")
    return out, answered, blocked


def run_waf(run, work, echo):
    if not os.path.isdir(os.path.join(CRS, "rules")):
        print("SKIP WAF: no OWASP CRS in", CRS)
        return
    # Compiling the CRS takes ~10 s on an idle core (a minute or more under a sanitizer on a
    # loaded machine): the proxy listens only once it has, and run.proxy waits for that.
    proc, port, stats = run.proxy(f"WAF(CRS {CRS})\n", [echo.port], name="waf")
    c = Conn(port)
    c.send(request("GET", "/echo?id=1%20UNION%20SELECT%20password%20FROM%20users--"))
    status, _, body = c.response()
    run.check(status == 403, f"WAF: SQL injection answered {status}")
    c.send(request("POST", "/echo", b"a plain body"))
    status, _, body = c.response("POST")
    run.check(status == 200 and body == b"a plain body", f"WAF: a benign request got {status}")
    c.close()
    st, out = run.stop(proc, stats)
    run.check(re.search(r"WAF", out or "") is not None, "WAF: no verdict counts in the summary")


def main():
    fulcrum = os.environ.get("FULCRUM_BIN", "build/fulcrum")
    if not os.path.exists(fulcrum):
        print("SKIP: no", fulcrum)
        return 0
    work = tempfile.mkdtemp(prefix="fulcrum-e2e-l7chain-")
    run = Run(work)
    echo = EchoServer()
    try:
        runs = [([], "inline"),
                (["--batch", "--device", "none", "--threshold", "16", "--batch-timeout", "2ms"],
                 "batch-cpu"),
                (["--batch", "--device", "emu:units=8", "--policy", "device", "--threshold", "16",
                  "--batch-timeout", "2ms"], "batch-emu")]
        runs.append((["--batch", "--device", "opencl:0", "--policy", "device", "--threshold", "16",
                      "--batch-timeout", "2ms"], "batch-pocl"))
        results = []
        for extra, label in runs:
            try:
                out, answered, blocked = run_gateway_ids(run, work, echo, 7, extra, label)
            except RuntimeError as e:  # no OpenCL device on this machine: the proxy refuses
                if label == "batch-pocl" and "not found" in str(e):
                    print("SKIP PoCL:", e)
                    continue
                raise
            results.append((label, answered, blocked))
            if label in ("batch-emu", "batch-pocl"):
                m = re.search(r"messages (\d+) on the CPU / (\d+) on the device", out or "")
                run.check(m is not None and int(m.group(2)) > 0,
                          f"{label}: the device ran nothing: {out}")
        run.check(len({(a, b) for _, a, b in results}) == 1, f"different answers: {results}")
        run_waf(run, work, echo)
        print("runs:", results)
    finally:
        run.kill_all()
        echo.stop()
    return run.finish("ok: NF chains through the proxy answer the same inline, batched and on devices")


if __name__ == "__main__":
    sys.exit(main())
