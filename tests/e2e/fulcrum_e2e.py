"""Shared helpers for the end-to-end tests: a scratch directory, pcap ports, running `fulcrum
run` with --stats-json, drops by reason, tshark's verdict on a capture, and the comparison of
an offloadable pipeline's modes (CPU-only, device-only, split, injected failure)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from scapy.utils import PcapWriter, rdpcap

FULCRUM = os.environ.get("FULCRUM_BIN", "build/fulcrum")
SOURCE_DIR = os.environ.get("FULCRUM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
# Offload tasks on a loaded machine (PoCL on the CPU) can take seconds; a test about results must
# not see a slow device as a silent one (the timeout path is tested with TASK_TIMEOUT_MS).
os.environ.setdefault("FULCRUM_TASK_TIMEOUT_MS", "600000")


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


def counters_of(stats, cls):
    """The counters of the first element of class `cls` in a run's statistics."""
    for el in stats.get("elements", []):
        if el["class"] == cls:
            return el.get("counters", {})
    return {}


def run_cmd(args, timeout=300):
    """Runs `fulcrum ARGS...`; returns the completed process (stdout and stderr as text)."""
    return subprocess.run([FULCRUM, *args], capture_output=True, text=True, timeout=timeout)


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


def offload_devices():
    """The devices `fulcrum devices --json` lists."""
    out = subprocess.run([FULCRUM, "devices", "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["devices"]


def run_offload_mode(work, name, config, replacements, element_class, env_extra=None):
    """Runs a copy of configs/CONFIG with the (old, new) text replacements applied, on port 0
    reading in.pcap and port 1 reading empty.pcap (both in `work`). Returns (stats, counters of
    the first `element_class` element, [packets out of port 0, of port 1]); stats is None when
    the run failed."""
    text = open(os.path.join(SOURCE_DIR, "configs", config)).read()
    for old, new in replacements:
        text = text.replace(old, new)
    path = work.file(f"{name}.click", text)
    outs = [work.file(f"{name}-out{p}.pcap") for p in (0, 1)]
    ports = [pcap_port(0, work.file("in.pcap"), outs[0]), pcap_port(1, work.file("empty.pcap"), outs[1])]
    saved = os.environ.copy()
    os.environ.update(env_extra or {})
    try:
        _, stats = run_fulcrum(work, path, ports)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    counters = {}
    for el in (stats or {}).get("elements", []):
        if el["class"] == element_class:
            counters = el.get("counters", {})
            break
    return stats, counters, [rdpcap(o) if stats else [] for o in outs]


def check_offload_modes(cpu, device, split, failure, flow_and_seq, device_packets, have_devices):
    """Failures of the offload modes against the CPU-only run (each a run_offload_mode result):
    device-only output byte-identical to CPU-only; the split (with AFFINITY) and the injected
    failure the same packets per port, the split with every flow in order (flow_and_seq(frame)
    gives both); balance and drops as CPU-only; and, when a device exists, counters showing it
    took `device_packets` packets in device-only mode, some in the split, and failed tasks re-run."""
    failures = []
    runs = {"device": device, "split": split, "failure": failure}
    if any(r[0] is None for r in runs.values()):
        return ["a run failed"]
    for name, (stats, _, _) in runs.items():
        if not stats["balanced"]:
            failures.append(f"{name}: buffer balance does not hold")
        if stats["dropped"] != cpu[0]["dropped"]:
            failures.append(f"{name}: {stats['dropped']} dropped, CPU-only {cpu[0]['dropped']}")
    for port in (0, 1):
        if [bytes(g) for g in device[2][port]] != [bytes(g) for g in cpu[2][port]]:
            failures.append(f"device-only port {port}: output differs from CPU-only")
        for name in ("split", "failure"):
            if sorted(bytes(g) for g in runs[name][2][port]) != sorted(bytes(g) for g in cpu[2][port]):
                failures.append(f"{name} port {port}: not the same packets as CPU-only")
        flows = {}
        for g in split[2][port]:
            flow, seq = flow_and_seq(g)
            flows.setdefault(flow, []).append(seq)
        if any(s != sorted(s) for s in flows.values()):
            failures.append(f"split port {port}: a flow was reordered despite AFFINITY")
    dev_c, split_c, fail_c = device[1], split[1], failure[1]
    if not have_devices:
        print("no offload device: every mode ran on the CPU (checked for identical output only)")
    elif dev_c.get("device_packets", 0) != device_packets:
        failures.append(f"device-only: {dev_c.get('device_packets')} packets on the device, expected {device_packets}")
    elif not 0 < split_c.get("device_packets", 0) <= device_packets:
        failures.append(f"split: {split_c.get('device_packets')} packets on the device")
    elif fail_c.get("tasks_failed", 0) == 0 or fail_c.get("no_device_batches", 0) == 0:
        failures.append(f"failure: counters {fail_c} show no failed task re-run on the CPU")
    if not failures:
        print(f"ok: device-only identical to CPU-only; split and failure lose nothing "
              f"(device packets {dev_c.get('device_packets')}/{split_c.get('device_packets')}, "
              f"failed tasks re-run {fail_c.get('tasks_failed')})")
    return failures


def offload_modes(work, config, lookup_old, lookup_new, element_class):
    """The four runs check_offload_modes compares: CPU-only, device-only, a 50 % split with
    AFFINITY, device-only with a failure injected after 3 tasks."""
    def mode(name, balancer, extra="", env=None):
        return run_offload_mode(work, name, config, [("DeviceOnly", balancer), (lookup_old, lookup_new + extra)],
                                element_class, env)
    return (mode("cpu", "CPUOnly"), mode("device", "DeviceOnly"),
            mode("split", "FixedFraction(0.5)", ", AFFINITY true"),
            mode("failure", "DeviceOnly", env={"FULCRUM_FAIL_DEVICE_AFTER": "3"}))
