#!/usr/bin/env python3
"""End to end: Fulcrum's WAF NF gives ModSecurity's verdicts (libmodsecurity 3 + OWASP CRS 3.3,
as Debian ships them) on a request corpus.

Starts nginx (non-root prefix in a temp dir, a free port, `master_process off`) with the
ModSecurity module: `modsecurity_rules_file` = the recommended modsecurity.conf with
SecRuleEngine On, then Debian's owasp-crs.load (crs-setup.conf + rules/*.conf), a JSON audit log
of every transaction. Everything ModSecurity lets through is proxied to a second server of the
same nginx (ModSecurity off there) that answers 200. Sends each request
of tests/data/waf/corpus.jsonl (raw bytes, one connection each), and keeps ModSecurity's status
and the ids of the rules it logged (the audit log's messages). Runs tests/tools/waf_verdicts
(the WAF NF on the same corpus, as l7::Message objects, same configuration files) and checks:
  * the status (200, or the denying rule's 403 / 400) is equal for every request, except the
    requests in KNOWN_DIFFERENCES (each with its reason; printed, never silent);
  * the sets of matched rule ids are equal, restricted to the rules Fulcrum runs exactly (those
    not in its unsupported list; the unsupported rule classes are printed).
Skips (exit 0, "SKIP") when nginx, the ModSecurity module or the CRS is not installed
(scripts/install-deps.sh installs them).
"""
import collections
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

from l7_backends import accepts
from waits import GUARD_S, wait_until

SOURCE_DIR = os.environ.get("FULCRUM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
VERDICTS = os.environ.get("WAF_VERDICTS_BIN", "build/tests/waf_verdicts")
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
MODULE = "/usr/lib/nginx/modules/ngx_http_modsecurity_module.so"
CRS = "/usr/share/modsecurity-crs"
BASE_CANDIDATES = ["/etc/modsecurity/modsecurity.conf-recommended", "/etc/nginx/modsecurity.conf",
                   "/usr/share/nginx/docs/modsecurity/modsecurity.conf"]
CORPUS = os.path.join(SOURCE_DIR, "tests", "data", "waf", "corpus.jsonl")

# (family, method, target) -> why Fulcrum's result differs from ModSecurity's. Empty is the goal;
# an entry here is reported on every run and in docs/l7-waf.md.
KNOWN_DIFFERENCES = {}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def write_crs_conf(path):
    """The CRS as Debian's owasp-crs.load lists it, with Include only (libmodsecurity 3 has no
    IncludeOptional): read by both sides."""
    files = ["/etc/modsecurity/crs/crs-setup.conf", "/etc/modsecurity/crs/REQUEST-900-EXCLUSION-RULES-BEFORE-CRS.conf",
             f"{CRS}/rules/*.conf", "/etc/modsecurity/crs/RESPONSE-999-EXCLUSION-RULES-AFTER-CRS.conf"]
    with open(path, "w") as f:
        for name in files:
            if "*" in name or os.path.exists(name):
                f.write(f"Include {name}\n")


def start_nginx(tmp, base):
    port, backend = free_port(), free_port()
    audit = os.path.join(tmp, "audit.log")
    with open(os.path.join(tmp, "main.conf"), "w") as f:
        f.write(f"Include {base}\n"
                "SecRuleEngine On\n"
                "SecAuditEngine On\n"
                "SecAuditLogFormat JSON\n"
                "SecAuditLogType Serial\n"
                "SecAuditLogParts ABHZ\n"
                f"SecAuditLog {audit}\n"
                f"Include {tmp}/crs.conf\n")
    temps = "".join(f"  {k}_temp_path {tmp}/{k};\n" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    conf = os.path.join(tmp, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"load_module {MODULE};\n"
                "daemon off;\nmaster_process off;\nworker_processes 1;\n"
                f"error_log {tmp}/error.log warn;\npid {tmp}/nginx.pid;\n"
                "events { worker_connections 64; }\n"
                "http {\n  access_log off;\n" + temps +
                f"  server {{\n    listen 127.0.0.1:{port};\n    server_name localhost;\n"
                f"    modsecurity on;\n    modsecurity_rules_file {tmp}/main.conf;\n"
                f"    location / {{ proxy_pass http://127.0.0.1:{backend}; }}\n  }}\n"
                f"  server {{\n    listen 127.0.0.1:{backend};\n    modsecurity off;\n"
                "    location / { return 200 \"ok\\n\"; }\n  }\n}\n")
    proc = subprocess.Popen([NGINX, "-p", tmp, "-c", conf, "-e", f"{tmp}/error.log"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # nginx listens once ModSecurity has loaded the CRS (seconds on a loaded machine).
    if wait_until(lambda: accepts(port), proc=proc):
        return proc, port, audit
    if proc.poll() is not None:
        raise RuntimeError("nginx exited: " + proc.stderr.read().decode(errors="replace") +
                           open(f"{tmp}/error.log", errors="replace").read())
    proc.kill()
    raise RuntimeError(f"nginx did not start listening within {GUARD_S} s")


def raw_request(r):
    line = f"{r['method']} {r['target']} HTTP/{r['version']}\r\n"
    head = "".join(f"{k}: {v}\r\n" for k, v in r["headers"])
    return (line + head + "\r\n").encode() + r["body"].encode()


def send(port, r):
    with socket.create_connection(("127.0.0.1", port), timeout=GUARD_S) as s:
        s.sendall(raw_request(r))
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    first = data.split(b"\r\n", 1)[0].decode(errors="replace")
    parts = first.split()
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else -1


def read_new_audit(audit, offset):
    """The next transaction of the audit log after `offset`: (record, new offset); (None,
    offset) if none comes (nginx answered without ModSecurity: a failure the caller names).
    ModSecurity writes the record after the response, at its own pace on a loaded machine."""
    def next_line():
        if not os.path.exists(audit):
            return None
        with open(audit, "rb") as f:
            f.seek(offset)
            data = f.read()
        nl = data.find(b"\n")
        return data[:nl + 1] if nl >= 0 else None
    line = wait_until(next_line, poll_s=0.01)
    if line is None:
        return None, offset
    return json.loads(line[:-1].decode(errors="replace")), offset + len(line)


def modsecurity_verdicts(corpus, base, tmp):
    proc, port, audit = start_nginx(tmp, base)
    results = []
    try:
        offset = 0
        for r in corpus:
            status = send(port, r)
            rec, offset = read_new_audit(audit, offset)
            if rec is None:
                results.append({"status": status, "rules": None})
                continue
            msgs = rec.get("transaction", {}).get("messages", [])
            ids = sorted({int(m["details"]["ruleId"]) for m in msgs if m.get("details", {}).get("ruleId")})
            results.append({"status": status, "rules": ids,
                            "uri": rec.get("transaction", {}).get("request", {}).get("uri")})
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
    return results


def fulcrum_verdicts(base, crs_conf):
    out = subprocess.run([VERDICTS, "--crs", crs_conf, "--base", base, "--paranoia", "1", "--anomaly", "5", CORPUS],
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"waf_verdicts failed: {out.stderr}")
    lines = [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
    return lines[:-1], lines[-1]


def main():
    base = next((b for b in BASE_CANDIDATES if os.path.exists(b)), None)
    for what, ok in (("nginx", os.path.exists(NGINX)), ("the ModSecurity nginx module", os.path.exists(MODULE)),
                     ("the OWASP CRS", os.path.isdir(CRS)), ("ModSecurity's recommended config", base is not None)):
        if not ok:
            print(f"SKIP: {what} is not installed (scripts/install-deps.sh installs it)")
            return 0
    corpus = [json.loads(l) for l in open(CORPUS) if l.strip()]
    tmp = tempfile.mkdtemp(prefix="fulcrum-e2e-waf-")
    crs_conf = os.path.join(tmp, "crs.conf")
    write_crs_conf(crs_conf)
    ours, tail = fulcrum_verdicts(base, crs_conf)
    theirs = modsecurity_verdicts(corpus, base, tmp)
    unsupported = {int(u.split()[0]): u for u in tail["unsupported"]}
    failures, known = [], []
    same_status = same_rules = 0
    blocked = collections.Counter()
    for i, (r, a, b) in enumerate(zip(corpus, ours, theirs)):
        label = f"#{i} {r['family']} {r['method']} {r['target'][:90]}"
        if b["rules"] is None:
            failures.append(f"{label}: no ModSecurity transaction (nginx answered {b['status']} itself)")
            continue
        key = (r["family"], r["method"], r["target"])
        if b["status"] == 403:
            blocked[r["family"].split("-")[0]] += 1
        if a["status"] == b["status"]:
            same_status += 1
        elif key in KNOWN_DIFFERENCES:
            known.append(f"{label}: Fulcrum {a['status']}, ModSecurity {b['status']}: {KNOWN_DIFFERENCES[key]}")
        else:
            failures.append(f"{label}: status Fulcrum {a['status']} ModSecurity {b['status']} "
                            f"(rules Fulcrum {a['rules']} ModSecurity {b['rules']})")
        ra = {x for x in a["rules"] if x not in unsupported}
        rb = {x for x in b["rules"] if x not in unsupported}
        if ra == rb:
            same_rules += 1
        elif key in KNOWN_DIFFERENCES:
            known.append(f"{label}: rules only Fulcrum {sorted(ra - rb)}, only ModSecurity "
                         f"{sorted(rb - ra)}: {KNOWN_DIFFERENCES[key]}")
        else:
            failures.append(f"{label}: rules only Fulcrum {sorted(ra - rb)}, only ModSecurity {sorted(rb - ra)}")
    seen = set()
    for a, b in zip(ours, theirs):
        seen.update(a["rules"])
        seen.update(b["rules"] or [])
    left_out = sorted(x for x in seen if x in unsupported)
    print(f"rules matched on either side: {len(seen)}; of those without a Fulcrum note: "
          f"{len(seen) - len(left_out)}; left out of the rule-id comparison: {left_out}")
    if len(ours) != len(corpus) or len(theirs) != len(corpus):
        failures.append(f"result counts differ: corpus {len(corpus)}, Fulcrum {len(ours)}, ModSecurity {len(theirs)}")
    classes = collections.Counter()
    for u in tail["unsupported"]:
        why = u.split(": ", 1)[1]
        if "response" in why:
            classes["response-phase rule"] += 1
        else:
            for part in {p.split(" (")[0].split("=")[0] for p in why.split("; ")}:
                classes[part] += 1
    print(f"corpus: {len(corpus)} requests; ModSecurity blocked {sum(blocked.values())} ({dict(blocked)})")
    print(f"status equal: {same_status}/{len(corpus)}; matched-rule sets equal (supported rules): "
          f"{same_rules}/{len(corpus)}")
    print(f"engine: {json.dumps(tail['stats'])}")
    print(f"rules whose persistent-collection actions (IP reputation) are ignored: {len(tail['ignored'])}")
    print("rules Fulcrum does not run exactly (left out of the rule-id comparison), by class: " +
          ", ".join(f"{k} x{v}" for k, v in sorted(classes.items(), key=lambda kv: -kv[1])))
    for k in known:
        print("known difference: " + k)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        print(f"(files kept in {tmp})", file=sys.stderr)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    print("ok: Fulcrum's WAF gives ModSecurity's verdicts on every request of the corpus")
    return 0


if __name__ == "__main__":
    sys.exit(main())
