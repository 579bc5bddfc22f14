#!/usr/bin/env python3
"""End to end: install like other software.

`cmake --install` into a fresh prefix puts the binary, the man pages, bash completion, the
configurations and the docs in place; the installed binary checks an installed configuration
from another directory (its tables are found next to it). `cpack` builds a Debian package whose
dependencies dpkg-shlibdeps derived; unpacked into an empty directory with dpkg-deb, its binary
runs and its man pages render with no groff warning. Bash completion completes commands and
options.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from fulcrum_e2e import FULCRUM, Workdir  # noqa: E402

BUILD = os.path.dirname(os.path.abspath(FULCRUM))


def sh(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=600, **kw)


def check_tree(root, share, failures, label):
    for rel in ["bin/fulcrum", "share/man/man1/fulcrum.1", "share/man/man7/fulcrum-elements.7",
                "share/bash-completion/completions/fulcrum", "share/fulcrum/configs/ipv4-router.click",
                "share/fulcrum/configs/routes-demo.txt", "share/doc/fulcrum/README.md",
                "share/doc/fulcrum/ids.md"]:
        if not os.path.exists(os.path.join(root, rel)):
            failures.append(f"{label}: {rel} not installed")
    res = sh([os.path.join(root, "bin", "fulcrum"), "check",
              os.path.join(share, "fulcrum", "configs", "ipv4-router.click"), "--ports", "2"], cwd="/")
    if res.returncode != 0:
        failures.append(f"{label}: the installed binary fails on the installed router config: {res.stderr!r}")
    for page in ["man1/fulcrum.1", "man7/fulcrum-elements.7"]:
        res = sh(["groff", "-man", "-Tutf8", "-ww", os.path.join(root, "share", "man", page)])
        if res.returncode != 0 or res.stderr.strip() or len(res.stdout) < 2000:
            failures.append(f"{label}: {page} does not render cleanly: {res.stderr[:500]!r}")


def main():
    work = Workdir("install")
    failures = []
    prefix = os.path.join(work.path, "prefix")
    res = sh(["cmake", "--install", BUILD, "--prefix", prefix])
    if res.returncode != 0:
        failures.append(f"cmake --install: {res.stderr[-2000:]}")
        return work.finish(failures)
    check_tree(prefix, os.path.join(prefix, "share"), failures, "cmake --install")

    completion = os.path.join(prefix, "share", "bash-completion", "completions", "fulcrum")
    script = (f"source {completion}; COMP_WORDS=(fulcrum ch); COMP_CWORD=1; _fulcrum; echo ${{COMPREPLY[@]}};"
              "COMP_WORDS=(fulcrum run x.click --str); COMP_CWORD=3; _fulcrum; echo ${COMPREPLY[@]}")
    res = sh(["bash", "-c", script])
    if res.stdout.split("\n")[:2] != ["check", "--strict-rules"]:
        failures.append(f"bash completion: {res.stdout!r} {res.stderr!r}")

    pkg = os.path.join(work.path, "pkg")
    res = sh(["cpack", "-G", "DEB", "-B", pkg, "--config", os.path.join(BUILD, "CPackConfig.cmake")])
    debs = [f for f in os.listdir(pkg) if f.endswith(".deb")] if os.path.isdir(pkg) else []
    if res.returncode != 0 or len(debs) != 1:
        failures.append(f"cpack: exit {res.returncode}, {debs}: {res.stdout[-1500:]} {res.stderr[-1500:]}")
        return work.finish(failures)
    deb = os.path.join(pkg, debs[0])
    info = sh(["dpkg-deb", "-f", deb, "Package", "Version", "Depends"]).stdout
    for needle in ["Package: fulcrum", "Version: 0.", "libc6", "librte-"]:
        if needle not in info:
            failures.append(f"the package's control lacks {needle!r}: {info!r}")
    root = os.path.join(work.path, "root")
    res = sh(["dpkg-deb", "-x", deb, root])
    if res.returncode != 0:
        failures.append(f"dpkg-deb -x: {res.stderr}")
    else:
        check_tree(os.path.join(root, "usr"), os.path.join(root, "usr", "share"), failures, "package")
        res = sh([os.path.join(root, "usr", "bin", "fulcrum"), "--version"])
        if res.returncode != 0 or not res.stdout.startswith("fulcrum 0."):
            failures.append(f"the packaged binary: {res.stdout!r} {res.stderr!r}")
    if not failures:
        print(f"ok: cmake --install and {debs[0]} ({info.splitlines()[-1][:80]}...)")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
