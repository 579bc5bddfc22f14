#!/usr/bin/env python3
"""End to end: bad pipelines, route files and command lines fail cleanly and early.

Each case runs `fulcrum run` on a broken configuration and checks that it exits with 1 or 2 (not
a signal, not a crash), that stderr names the place (file:line:column for a pipeline, file:line
for a route file) and says what is wrong, and that nothing ran: no report on stdout and no
--stats-json file. Also checks `fulcrum elements` (the list, one manual, an unknown name).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from waits import GUARD_S  # noqa: E402

FULCRUM = os.path.abspath(os.environ.get("FULCRUM_BIN", "build/fulcrum"))
TIMEOUT_S = GUARD_S  # a hang: a start under ASan on a loaded machine can take a minute


def loc(text, needle, occurrence=1):
    """'LINE:COLUMN' (1-based) of the start of the occurrence-th `needle` in `text`."""
    pos = -1
    for _ in range(occurrence):
        pos = text.index(needle, pos + 1)
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"{line}:{column}"


class Runner:
    def __init__(self, work):
        self.work = work
        self.failures = []
        self.count = 0

    def path(self, name):
        return os.path.join(self.work, name)

    def write(self, name, text):
        with open(self.path(name), "w") as f:
            f.write(text)
        return self.path(name)

    def fulcrum(self, args):
        try:
            return subprocess.run([FULCRUM] + args, capture_output=True, text=True, timeout=TIMEOUT_S,
                                  cwd=self.work)
        except subprocess.TimeoutExpired:
            return None

    def expect_error(self, name, args, codes, needles):
        """Runs fulcrum with `args`; it must exit with one of `codes` before running anything and
        print every string of `needles` on stderr."""
        self.count += 1
        stats = self.path(f"stats-{self.count}.json")
        res = self.fulcrum(args[:1] + ["--stats-json", stats] + args[1:])
        if res is None:
            self.failures.append(f"{name}: no exit within {TIMEOUT_S} s: {' '.join(args)}")
            return None
        problems = []
        if res.returncode not in codes:
            problems.append(f"exit code {res.returncode}, expected one of {sorted(codes)}")
        for n in needles:
            if n not in res.stderr:
                problems.append(f"stderr lacks {n!r}")
        if "balance:" in res.stdout or res.stdout.strip():
            problems.append(f"something ran: stdout {res.stdout!r}")
        if os.path.exists(stats):
            problems.append("a --stats-json file was written")
        if problems:
            self.failures.append(f"{name}: {'; '.join(problems)}\n  command: fulcrum {' '.join(args)}\n"
                                 f"  stderr: {res.stderr.strip()!r}")
        return res

    def pipeline_error(self, name, text, needles, extra=()):
        """A pipeline that must be refused with exit code 1."""
        click = self.write(f"case{self.count + 1}.click", text)
        args = ["run", click, "--port", "net_null0", "--packets", "100", "--quiet"] + list(extra)
        return self.expect_error(name, args, {1}, needles)


def pipeline_cases(r):
    def click(n):
        """The pipeline file of case n (cases are numbered in the order they run)."""
        return r.path(f"case{n}.click")

    text = "FromInput\n  -> x :: Nope\n  -> Discard;\n"
    r.pipeline_error("unknown element class (declared)", text,
                     [f"{click(r.count + 1)}:{loc(text, 'Nope')}: unknown element class 'Nope'"])

    text = "FromInput -> Counter\n   -> Nope(1) -> Discard;\n"
    r.pipeline_error("unknown element class (anonymous)", text,
                     [f"{click(r.count + 1)}:{loc(text, 'Nope')}: unknown element class 'Nope'"])

    text = "a :: Counter;\nFromInput -> a -> b -> Discard;\n"
    r.pipeline_error("undeclared element name", text,
                     [f"{click(r.count + 1)}:{loc(text, 'b ->')}: unknown element class or undeclared "
                      "element 'b'"])

    text = "FromInput\n  -> Counter\n  -> ;\n"
    r.pipeline_error("dangling '->' before ';'", text,
                     [f"{click(r.count + 1)}:{loc(text, ';')}: expected element name or class, got ';'"])

    text = "FromInput -> Counter ->"
    r.pipeline_error("dangling '->' at end of file", text,
                     [f"{click(r.count + 1)}:1:", "expected element name or class, got end of file"])

    text = "FromInput -> CheckIPHeader(CHECKSUM false\n  -> Discard;\n"
    r.pipeline_error("unclosed argument list", text,
                     [f"{click(r.count + 1)}:3:1: expected ')' to close argument list opened at "
                      f"{loc(text, '(')}, got end of file"])

    text = "FromInput -> Counter;\n/* no end\nFromInput -> Discard;\n"
    r.pipeline_error("unterminated comment", text,
                     [f"{click(r.count + 1)}:4:1: unterminated comment started at {loc(text, '/*')}"])

    text = "c :: Classifier(12/0800);\nFromInput -> c;\nc[99999999999] -> Discard;\n"
    r.pipeline_error("port number too large", text,
                     [f"{click(r.count + 1)}:{loc(text, '99999999999')}: port number 99999999999 is too large"])

    text = "c :: Classifier(12/0800);\nFromInput -> c;\nc[3] -> Discard;\n"
    r.pipeline_error("output port out of range", text,
                     [f"{click(r.count + 1)}:{loc(text, '->', 2)}: output port 3 of 'c' (Classifier) "
                      "out of range: Classifier has 1 output"])

    text = "c :: Classifier(12/0800, -);\nFromInput -> c -> Discard;\n"
    r.pipeline_error("unconnected output", text,
                     [f"{click(r.count + 1)}:1:1: output 1 of 'c' (Classifier) is not connected",
                      "connect it to Discard"])

    text = "FromInput -> q :: Counter;\nq -> [1] d :: Discard;\n"
    r.pipeline_error("input port out of range", text,
                     [f"{click(r.count + 1)}:{loc(text, '->', 2)}: input port 1 of 'd' (Discard) out of "
                      "range: Discard has 1 input"])

    text = "FromInput -> c :: Counter;\nc -> Discard;\nc -> EtherMirror -> ToOutput;\n"
    r.pipeline_error("output port connected twice", text,
                     [f"{click(r.count + 1)}:{loc(text, '->', 3)}: output port 0 of 'c' (Counter) is "
                      "already connected to 'Discard@"])

    text = "FromInput -> a :: NoOp;\na -> b :: NoOp;\nb -> [0] c :: Classifier(12/0800, -);\nc[0] -> a;\n" \
           "c[1] -> Discard;\n"
    cycle_arrows = [loc(text, "-> b"), loc(text, "-> [0]"), loc(text, "-> a;")]
    res = r.pipeline_error("cycle", text, ["connection closes a cycle; pipelines must be acyclic"])
    if res is not None:
        m = re.search(re.escape(click(r.count)) + r":(\d+:\d+): connection closes a cycle", res.stderr)
        if m is None or m.group(1) not in cycle_arrows:
            r.failures.append(f"cycle: error not located at one of the cycle's arrows {cycle_arrows}: "
                              f"{res.stderr.strip()!r}")

    text = "FromInput\n  -> CheckIPHeader(FOO 1)\n  -> Discard;\n"
    r.pipeline_error("unknown keyword argument", text,
                     [f"{click(r.count + 1)}:{loc(text, 'CheckIPHeader')}: ", "CheckIPHeader",
                      "unknown keyword 'FOO'"])

    text = "FromInput -> s :: RandomSplit(2);\ns[0] -> Discard;\ns[1] -> Discard;\n"
    r.pipeline_error("argument out of range", text,
                     [f"{click(r.count + 1)}:{loc(text, 's ::')}: ", "RandomSplit",
                      "FRACTION must be between 0 and 1"])

    text = "FromInput -> s :: RandomSplit;\ns[0] -> Discard;\n"
    r.pipeline_error("missing required argument", text,
                     [f"{click(r.count + 1)}:{loc(text, 's ::')}: ", "FRACTION"])

    missing = r.path("no-such-routes.txt")
    text = f"FromInput\n  -> IPLookup({missing})\n  -> ToOutput;\n"
    r.pipeline_error("missing route file", text,
                     [f"{click(r.count + 1)}:{loc(text, 'IPLookup')}: ", f"cannot open route file {missing}",
                      "No such file or directory"])

    routes = r.write("bad-routes.txt", "# routes\n10.0.0.0/8 0\n\n10.1.0.0/16\n10.2.0.0/16 1\n")
    text = f"FromInput -> IPLookup({routes}) -> ToOutput;\n"
    r.pipeline_error("route file: line without a port", text,
                     [f"{routes}:4: expected 'A.B.C.D/LEN PORT', got '10.1.0.0/16'",
                      f"{click(r.count + 1)}:{loc(text, 'IPLookup')}: "])

    routes = r.write("bad-routes2.txt", "10.0.0.0/8 0\n# comment\n10.0.0.1/8 0\n")
    text = f"FromInput -> IPLookup({routes}) -> ToOutput;\n"
    r.pipeline_error("route file: host bits set", text, [f"{routes}:3: host bits set in 10.0.0.1/8"])

    routes = r.write("bad-routes3.txt", "10.0.0.0/8 0\n10.0.0.0/33 0\n")
    text = f"FromInput -> IPLookup({routes}) -> ToOutput;\n"
    r.pipeline_error("route file: prefix length", text, [f"{routes}:2: prefix length 33 out of range 0..32"])

    routes = r.write("bad-routes4.txt", "10.0.0.0/8 0\n11.0.0.0/8 0\n10.0.0.0/8 0\n")
    text = f"FromInput -> IPLookup({routes}) -> ToOutput;\n"
    r.pipeline_error("route file: duplicate route", text,
                     [f"{routes}:3: duplicate route 10.0.0.0/8 (first on line 1)"])

    routes = r.write("bad-routes5.txt", "10.0.0.0/8 0\n11.0.0.0/8 1\n")
    text = f"FromInput -> IPLookup({routes}) -> ToOutput;\n"
    r.pipeline_error("route file: a port the run lacks (one --port)", text,
                     [f"{routes}:2: port 1 out of range 0..0"])

    text = "FromInput -> Discard;\nFromInput -> EtherMirror -> ToOutput;\n"
    r.pipeline_error("two FromInput elements", text,
                     [f"{click(r.count + 1)}:{loc(text, 'FromInput', 2)}: a second FromInput; a pipeline has "
                      f"one entry point (first at {click(r.count + 1)}:1:1)"])

    r.pipeline_error("two FromInput elements (multi-worker)", "FromInput -> Discard;\nFromInput -> Discard;\n",
                     ["a second FromInput"], extra=["--workers", "2"])


def cli_cases(r):
    click = r.write("ok.click", "FromInput -> EtherMirror -> ToOutput;\n")
    r.expect_error("unknown option", ["run", click, "--port", "net_null0", "--bogus"], {2},
                   ["unknown option '--bogus'", "usage: fulcrum run"])
    r.expect_error("mistyped option", ["run", click, "--prot", "net_null0"], {2},
                   ["unknown option '--prot' (did you mean '--port'?)"])
    r.pipeline_error("mistyped element class", "FromInput -> EtherMirorr -> ToOutput;\n",
                     ["unknown element class or undeclared element 'EtherMirorr' (did you mean "
                      "'EtherMirror'?)"])
    r.expect_error("missing --port", ["run", click, "--packets", "10"], {2}, ["no --port given"])
    r.expect_error("missing pipeline file argument", ["run", "--port", "net_null0"], {2},
                   ["no pipeline file given"])
    missing = r.path("nope.click")
    r.expect_error("pipeline file does not exist", ["run", missing, "--port", "net_null0"], {1},
                   [f"cannot open pipeline file {missing}: No such file or directory"])
    r.expect_error("bad generator key", ["run", click, "--port", "gen:sizee=64", "--packets", "10"], {1, 2},
                   ["gen:sizee=64", "unknown generator key 'sizee' (did you mean 'size'?)"])
    for cmd, typo, meant in [("check", "--prots", "--ports"), ("graph", "--dto", "--dot"),
                             ("profile", "--fraction", "--fractions")]:
        res = r.fulcrum([cmd, click, typo])
        want = f"unknown option '{typo}' (did you mean '{meant}'?)"
        if res is None or res.returncode != 2 or want not in res.stderr:
            r.failures.append(f"mistyped {cmd} option: {res and (res.returncode, res.stderr)}")
    r.expect_error("--batch 0", ["run", click, "--port", "net_null0", "--batch", "0"], {2},
                   ["--batch needs an integer 1..256"])
    r.expect_error("--batch 257", ["run", click, "--port", "net_null0", "--batch", "257"], {2},
                   ["--batch needs an integer 1..256"])
    r.expect_error("--workers 0", ["run", click, "--port", "net_null0", "--workers", "0"], {2},
                   ["--workers needs a positive integer"])
    r.expect_error("--seconds -1", ["run", click, "--port", "net_null0", "--seconds", "-1"], {2},
                   ["--seconds needs a positive number"])
    r.expect_error("--branch bogus", ["run", click, "--port", "net_null0", "--branch", "both"], {2},
                   ["--branch is reuse or split"])
    r.expect_error("--port without a value", ["run", click, "--port"], {2}, ["--port needs a value"])
    r.expect_error("mistyped DPDK driver", ["run", click, "--port", "net_nul0", "--packets", "10"], {1},
                   ["--port net_nul0: cannot create virtual device 'net_nul0': no DPDK driver for a device "
                    "named 'net_nul0' (did you mean 'net_null0'?)"])
    r.expect_error("a kernel interface as a port", ["run", click, "--port", "lo", "--packets", "10"], {1},
                   ["'lo' is a kernel network interface, not a DPDK device",
                    "--port net_af_packet0,iface=lo"])
    r.expect_error("mistyped DPDK driver argument", ["run", click, "--port", "net_null0,norx=1"], {1},
                   ["driver net_null does not take 'norx' (did you mean 'no-rx'?); net_null takes: "
                    "size=<int> copy=<int> no-rx=0|1"])
    r.expect_error("one device as two ports", ["run", click, "--port", "net_null0", "--port", "net_null0,no-rx=1"],
                   {1}, ["--port net_null0,no-rx=1: device 'net_null0' is already port 0 (--port net_null0)"])
    setpriv = shutil.which("setpriv")
    if os.geteuid() == 0 and setpriv:
        # Root without CAP_NET_RAW: DPDK's own message and the missing capability.
        r.count += 1
        res = subprocess.run([setpriv, "--bounding-set=-net_raw", FULCRUM, "run", click, "--port",
                              "net_af_packet0,iface=lo", "--packets", "10"], capture_output=True, text=True,
                             timeout=TIMEOUT_S, cwd=r.work)
        for needle in ["Could not open AF_PACKET socket", "Operation not permitted", "CAP_NET_RAW"]:
            if res.returncode != 1 or needle not in res.stderr:
                r.failures.append(f"af_packet without CAP_NET_RAW: exit {res.returncode}, stderr lacks "
                                  f"{needle!r}: {res.stderr.strip()!r}")
                break
    rules = r.write("found.rules", 'alert tcp any any -> any any (msg:"a"; content:"abc"; sid:1;)\n'
                                   'alert tcp any any -> any any (flow:established,only_frag; content:"x"; sid:2;)\n')
    ids = r.write("ids.click", f"FromInput -> IDSMatch({rules}) -> ToOutput;\n")
    r.expect_error("--strict-rules refuses a rule set with an unsupported rule",
                   ["run", ids, "--port", "gen:size=64", "--packets", "10", "--strict-rules"], {1},
                   [f"{rules}:2: flow: only_frag needs reassembled fragments, which the IDS does not "
                    "track"])
    res = r.fulcrum(["check", ids])
    note = f"note: IDSMatch@2 (IDSMatch): {rules}: 1 rules loaded, 1 skipped (flow: only_frag 1)"
    if res is None or res.returncode != 0 or note not in res.stdout:
        r.failures.append(f"a rule set with an unsupported rule: check must pass with {note!r}: "
                          f"{res and (res.returncode, res.stdout, res.stderr)}")
    nowhere = r.path("no-such-folder/stats.json")
    r.expect_error("--stats-json into a missing folder (found before the run)",
                   ["run", click, "--port", "gen:size=64", "--packets", "10", "--stats-json", nowhere],
                   {1}, [f"cannot write --stats-json file {nowhere}: folder", "No such file or directory"])


def elements_cases(r):
    res = r.fulcrum(["elements"])
    if res is None or res.returncode != 0:
        r.failures.append(f"`fulcrum elements` failed: {res and res.stderr!r}")
    else:
        names = {line.split()[0] for line in res.stdout.splitlines() if line.strip()}
        for want in ("CheckIPHeader", "IPLookup", "Classifier", "FromInput", "ToOutput", "RandomSplit"):
            if want not in names:
                r.failures.append(f"`fulcrum elements` does not list {want}")
    res = r.fulcrum(["elements", "CheckIPHeader"])
    if res is None or res.returncode != 0:
        r.failures.append(f"`fulcrum elements CheckIPHeader` failed: {res and res.stderr!r}")
    else:
        for want in ("CheckIPHeader", "Ports:", "bad-checksum", "truncated", "Arguments",
                     "CHECKSUM  boolean, default true", "BADSRC"):
            if want not in res.stdout:
                r.failures.append(f"`fulcrum elements CheckIPHeader` manual lacks {want!r}")
    # What each class declares for the placement model: its reads and the annotation line.
    for cls, want in (("CheckIPHeader", "Reads: headers.\n"),
                      ("IPsecAES", "Reads: the whole frame. Annotation line: read."),
                      ("IPsecESPEncap", "Reads: headers. Annotation line: read and written."),
                      ("IDSMatch", "Reads: the whole frame, ahead.\n")):
        res = r.fulcrum(["elements", cls])
        if res is None or want not in res.stdout:
            r.failures.append(f"`fulcrum elements {cls}` lacks {want!r}: {res and res.stdout[-300:]!r}")
    res = r.fulcrum(["elements", "Nope"])
    if res is None or res.returncode == 0 or res.returncode < 0:
        r.failures.append(f"`fulcrum elements Nope` exit code {res and res.returncode}, expected non-zero")
    elif "Nope" not in res.stderr:
        r.failures.append(f"`fulcrum elements Nope` does not name the class: {res.stderr!r}")


def main():
    work = tempfile.mkdtemp(prefix="fulcrum-e2e-cli-")
    try:
        r = Runner(work)
        pipeline_cases(r)
        cli_cases(r)
        elements_cases(r)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if r.failures:
        print("\n".join(r.failures), file=sys.stderr)
        print(f"FAILED: {len(r.failures)} of {r.count + 3} checks", file=sys.stderr)
        return 1
    print(f"ok: {r.count} bad configurations refused with file:line:column and no run; elements ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
