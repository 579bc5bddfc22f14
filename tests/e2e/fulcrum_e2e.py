"""Shared helpers for the end-to-end tests: a scratch directory, pcap ports, running `fulcrum
run` with --stats-json, drops by reason and tshark's verdict on a capture."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from scapy.utils import PcapWriter

FULCRUM = os.environ.get("FULCRUM_BIN", "build/fulcrum")
SOURCE_DIR = os.environ.get("FULCRUM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


class Workdir:
    """A scratch directory removed on success; kept (and named) when the test fails."""

    def __init__(self, name):
        self.path = tempfile.mkdtemp(prefix=f"fulcrum-e2e-{name}-")

    def file(self, name, text=None):
        path = os.path.join(self.path, name)
        if text is not None:
            with open(path, "w") as f:
                f.write(text)
        return path

    def pcap(self, name, frames):
        """An Ethernet capture of `frames` (scapy packets or bytes, any length)."""
        path = self.file(name)
        with PcapWriter(path, linktype=1) as w:  # DLT_EN10MB
            for f in frames:
                w.write(bytes(f))
        return path

    def finish(self, failures):
        if failures:
            print("\n".join(failures), file=sys.stderr)
            print(f"(files kept in {self.path})", file=sys.stderr)
            return 1
        shutil.rmtree(self.path)
        return 0


def pcap_port(index, rx, tx):
    return f"net_pcap{index},rx_pcap={rx},tx_pcap={tx}"


def run_fulcrum(work, config, ports, extra=(), timeout=120):
    """Runs `fulcrum run CONFIG` over the given --port specs; returns (process, stats or None)."""
    stats = work.file("stats.json")
    cmd = [FULCRUM, "run", config, "--quiet", "--stats-json", stats, *extra]
    for p in ports:
        cmd += ["--port", p]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if res.returncode != 0:
        print(res.stdout)
        print(res.stderr, file=sys.stderr)
        return res, None
    with open(stats) as f:
        return res, json.load(f)


def drops_by_reason(stats):
    """Drops summed per reason over all elements ("Element/reason" keys)."""
    out = {}
    for key, count in stats["drops"].items():
        reason = key.split("/", 1)[1]
        out[reason] = out.get(reason, 0) + count
    return out


def tshark_problems(path, options=("ip.check_checksum:TRUE",)):
    """tshark's complaints about a capture (malformed packets, bad checksums); '' when clean."""
    cmd = ["tshark", "-r", path, "-z", "expert,warn", "-q"]
    for o in options:
        cmd += ["-o", o]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        return f"tshark cannot read {path}: {res.stderr}"
    if "Malformed" in res.stdout or "Bad checksum" in res.stdout:
        return f"tshark reports problems in {path}:\n{res.stdout}"
    return ""


def require_tshark():
    if shutil.which("tshark") is None:
        print("tshark missing: install with scripts/install-deps.sh", file=sys.stderr)
        return False
    return True
