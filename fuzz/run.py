#!/usr/bin/env python3
"""Runs the libFuzzer targets of build-fuzz/ (make fuzz, make fuzz-smoke; docs/reliability.md).

For each target, one after the other (the machines are small and shared):
  1. replays every input under fuzz/regressions/<target>/ (each crash found once; must pass);
  2. fuzzes for --seconds, starting from build-fuzz/corpus/<target> (kept between runs, new inputs
     are added there) and the seeds (build-fuzz/seeds/<target>, from fuzz/make_seeds.py);
  3. prints executions, CPU seconds, corpus size, and the crashes (crash-, leak-, timeout-, oom-
     files libFuzzer left in build-fuzz/artifacts/<target>/).
--smoke (CI) fixes libFuzzer's random seed, so a fresh checkout always runs the same inputs.
Each target runs in its own empty directory (build-fuzz/work/<target>, removed after it): an
element configured with fuzzed arguments may create files named by them (element_args made
~1,300 a few seconds), which must not land in the checkout.
A summary goes to build-fuzz/fuzz-summary.json. Exit status 1 when any target crashed or a
regression input failed.

usage: run.py [--build DIR] [--seconds N] [--smoke] [--nice N] [--summary FILE] [TARGET ...]
"""
import argparse
import glob
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# Per-target libFuzzer options: the pipeline target takes several frames per input.
MAX_LEN = {"pipelines": 16384}
DEFAULT_MAX_LEN = 4096
# run_args calls `fulcrum run`, which prints a usage message per input.
EXTRA_OPTIONS = {"run_args": ["-close_fd_mask=3"]}
TIMEOUT_S = 30        # one input taking longer is reported as a hang
RSS_LIMIT_MB = 3072   # the pipeline target holds every shipped pipeline's tables
SMOKE_SEED = 1
ENV = {
    # An allocation above 1 GiB fails (returns null) as on a machine without that much memory:
    # the code must report it, not crash. (libFuzzer would stop at the first one, and elements
    # accept configurations whose tables take 16 GiB: RedundancyElim CAPACITY 2^30.)
    "ASAN_OPTIONS": "detect_leaks=1:print_summary=1:allocator_may_return_null=1:"
                    "max_allocation_size_mb=1024",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
    # Offload pipelines run CPU-only here; a slow PoCL device must not look like a failure.
    "FULCRUM_TASK_TIMEOUT_MS": "600000",
}


def symbolizer():
    """An llvm-symbolizer that runs (Debian's unversioned link may point at a missing one)."""
    names = ["/usr/lib/llvm-16/bin/llvm-symbolizer", "/usr/bin/llvm-symbolizer-16"]
    names += sorted(glob.glob("/usr/bin/llvm-symbolizer-*"), reverse=True) + ["/usr/bin/llvm-symbolizer"]
    for n in names:
        if os.path.isfile(n) and os.access(n, os.X_OK):
            return n
    return None


def targets(build):
    d = os.path.join(build, "fuzz")
    names = sorted(n[len("fuzz_"):] for n in os.listdir(d)
                   if n.startswith("fuzz_") and os.access(os.path.join(d, n), os.X_OK)
                   and os.path.isfile(os.path.join(d, n)))
    return names


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(cmd, log, nice, cwd):
    env = dict(os.environ, **{k: v for k, v in ENV.items() if k not in os.environ})
    if "ASAN_SYMBOLIZER_PATH" not in env and symbolizer():
        env["ASAN_SYMBOLIZER_PATH"] = symbolizer()
    with open(log, "w") as out:
        proc = subprocess.run(["nice", "-n", str(nice), *cmd], stdout=out, stderr=subprocess.STDOUT,
                              env=env, cwd=cwd)
    return proc.returncode


def tail(log, lines=40):
    with open(log, errors="replace") as f:
        return "".join(f.readlines()[-lines:])


def stat(log, key):
    with open(log, errors="replace") as f:
        m = re.findall(rf"stat::{key}:\s+(\d+)", f.read())
    return int(m[-1]) if m else 0


def one(target, args):
    binary = os.path.join(args.build, "fuzz", f"fuzz_{target}")
    corpus = os.path.join(args.build, "corpus", target)
    seeds = os.path.join(args.build, "seeds", target)
    artifacts = os.path.join(args.build, "artifacts", target)
    logs = os.path.join(args.build, "logs")
    work = os.path.join(args.build, "work", target)
    shutil.rmtree(work, ignore_errors=True)
    for d in (corpus, artifacts, logs, work):
        os.makedirs(d, exist_ok=True)
    try:
        return fuzz_one(target, args, binary, corpus, seeds, artifacts, logs, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def fuzz_one(target, args, binary, corpus, seeds, artifacts, logs, work):
    result = {"target": target, "regressions": 0, "regressions_failed": 0}

    regressions = os.path.join(ROOT, "fuzz", "regressions", target)
    if os.path.isdir(regressions):
        inputs = sorted(os.path.join(regressions, n) for n in os.listdir(regressions))
        result["regressions"] = len(inputs)
        if inputs:
            log = os.path.join(logs, f"{target}-regressions.log")
            if run([binary, f"-timeout={TIMEOUT_S}", f"-rss_limit_mb={RSS_LIMIT_MB}",
                    *EXTRA_OPTIONS.get(target, []), *inputs],
                   log, args.nice, work) != 0:
                result["regressions_failed"] = 1
                print(f"{target}: a regression input fails again (log {log}):\n{tail(log)}")

    before = {n for n in os.listdir(artifacts)}
    log = os.path.join(logs, f"{target}.log")
    cmd = [binary, f"-max_total_time={args.seconds}", f"-timeout={TIMEOUT_S}",
           f"-rss_limit_mb={RSS_LIMIT_MB}", f"-max_len={MAX_LEN.get(target, DEFAULT_MAX_LEN)}",
           f"-artifact_prefix={artifacts}/", "-print_final_stats=1",
           *EXTRA_OPTIONS.get(target, []), corpus]
    if args.smoke:
        cmd.insert(1, f"-seed={SMOKE_SEED}")  # the same mutations every CI run
    if os.path.isdir(seeds):
        cmd.append(seeds)
    cpu0, wall0 = child_cpu(), time.monotonic()
    rc = run(cmd, log, args.nice, work)
    result["cpu_s"] = round(child_cpu() - cpu0, 1)
    result["wall_s"] = round(time.monotonic() - wall0, 1)
    result["executions"] = stat(log, "number_of_executed_units")
    result["peak_rss_mb"] = stat(log, "peak_rss_mb")
    result["corpus"] = len(os.listdir(corpus))
    new = sorted(n for n in os.listdir(artifacts) if n not in before)
    result["crashes"] = new
    result["exit"] = rc
    if rc != 0 and not new:
        result["crashes"] = [f"(exit {rc}, no artifact: see {log})"]
    if result["crashes"]:
        print(f"{target}: CRASH {', '.join(result['crashes'])} (log {log}):\n{tail(log)}")
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(ROOT, "build-fuzz"))
    p.add_argument("--seconds", type=int, default=60)
    p.add_argument("--smoke", action="store_true", help="CI: a fixed random seed")
    p.add_argument("--nice", type=int, default=19)
    p.add_argument("--summary", help="where the JSON summary goes (default BUILD/fuzz-summary.json)")
    p.add_argument("targets", nargs="*")
    args = p.parse_args()
    args.build = os.path.abspath(args.build)
    names = args.targets or targets(args.build)
    results = []
    print(f"{'target':<14} {'executions':>12} {'cpu s':>8} {'corpus':>7} {'regress':>8}  crashes")
    for t in names:
        r = one(t, args)
        results.append(r)
        print(f"{t:<14} {r['executions']:>12} {r['cpu_s']:>8} {r['corpus']:>7} "
              f"{r['regressions'] - r['regressions_failed']:>3}/{r['regressions']:<4}  "
              f"{len(r['crashes'])}", flush=True)
    total_exec = sum(r["executions"] for r in results)
    total_cpu = sum(r["cpu_s"] for r in results)
    bad = [r["target"] for r in results if r["crashes"] or r["regressions_failed"]]
    print(f"{'total':<14} {total_exec:>12} {round(total_cpu, 1):>8}  "
          f"{'FAILED: ' + ', '.join(bad) if bad else 'no crash, no hang, no sanitizer report'}")
    summary = args.summary or os.path.join(args.build, "fuzz-summary.json")
    with open(summary, "w") as f:
        json.dump({"seconds_per_target": args.seconds, "targets": results}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
