#!/usr/bin/env python3
"""End to end: the learning switch (configs/l2-switch.click) on three pcap ports.

Hosts send frames from their ports to known, unknown, broadcast and multicast addresses, some
hosts move to another port half way, and a few frames are truncated. With one worker and
`--batch 8` the runtime's order is fixed: each round it reads a burst of 8 from port 0, then
port 1, then port 2, and L2Switch learns a whole batch's sources before forwarding it. A model of
a learning switch written here replays that order and predicts, for every frame, the port it
leaves by or its drop reason; the output pcaps must hold exactly the predicted frames, in order.
"""
import os
import random
import sys

from scapy.all import Ether, Raw, rdpcap  # noqa: E402

import fulcrum_e2e as e2e

PORTS = 3
BATCH = 8
FRAMES_PER_PORT = 240
HOSTS = 24
BROADCAST = "ff:ff:ff:ff:ff:ff"
MULTICAST = "01:00:5e:00:00:fb"


def mac(i):
    return f"02:00:00:00:{i >> 8:02x}:{i & 0xFF:02x}"


def traffic(rng):
    home = {h: h % PORTS for h in range(HOSTS)}
    moved = {h: (h + 1) % PORTS for h in rng.sample(range(HOSTS), 4)}
    per_port = {p: [] for p in range(PORTS)}
    for p in range(PORTS):
        for i in range(FRAMES_PER_PORT):
            where = {h: (moved.get(h, home[h]) if i >= FRAMES_PER_PORT // 2 else home[h]) for h in home}
            local = [h for h, q in where.items() if q == p]
            roll = rng.random()
            if roll < 0.02:
                per_port[p].append(Raw(bytes(rng.randrange(1, 14))))
                continue
            dst = BROADCAST if roll < 0.08 else MULTICAST if roll < 0.1 else \
                mac(HOSTS + rng.randrange(8)) if roll < 0.15 else mac(rng.randrange(HOSTS))
            src = mac(rng.choice(local)) if local else mac(100 + p)
            payload = f"port {p} frame {i}".encode().ljust(rng.randrange(46, 200), b".")
            per_port[p].append(Ether(src=src, dst=dst, type=0x88B5) / Raw(payload))
    return {p: [bytes(f) for f in frames] for p, frames in per_port.items()}


def is_group(addr):
    return addr[0] & 1 == 1


def model(inputs):
    """The frames each port sends, in order, and the drops by reason."""
    table, out, drops = {}, {p: [] for p in range(PORTS)}, {}
    for first in range(0, FRAMES_PER_PORT, BATCH):
        for port in range(PORTS):
            batch = inputs[port][first:first + BATCH]
            for f in batch:
                if len(f) >= 14 and not is_group(f[6:12]):
                    table[f[6:12]] = port
            for f in batch:
                if len(f) < 14:
                    reason = "truncated"
                elif is_group(f[0:6]) or f[0:6] not in table:
                    reason = "unknown-destination"
                elif table[f[0:6]] == port:
                    reason = "same-port"
                else:
                    out[table[f[0:6]]].append(f)
                    continue
                drops[reason] = drops.get(reason, 0) + 1
    return out, drops


def main():
    work = e2e.Workdir("l2-switch")
    inputs = traffic(random.Random(7))
    outs = {p: work.file(f"out{p}.pcap") for p in range(PORTS)}
    ports = [e2e.pcap_port(p, work.pcap(f"in{p}.pcap", inputs[p]), outs[p])
             for p in range(PORTS)]
    config = os.path.join(e2e.SOURCE_DIR, "configs", "l2-switch.click")
    _, stats = e2e.run_fulcrum(work, config, ports, extra=["--workers", "1", "--batch", str(BATCH)])
    if stats is None:
        return 1
    expect, drops = model(inputs)
    failures = []
    if not stats["balanced"]:
        failures.append("buffer balance does not hold")
    counted = e2e.drops_by_reason(stats)
    if counted != drops:
        failures.append(f"drops {counted}, model predicts {drops}")
    for p in range(PORTS):
        got = [bytes(f) for f in rdpcap(outs[p])]
        if got != expect[p]:
            failures.append(f"port {p}: {len(got)} frames out, model predicts {len(expect[p])}"
                            + ("" if len(got) != len(expect[p]) else " (contents or order differ)"))
    if not failures:
        sent = sum(len(v) for v in expect.values())
        print(f"ok: {sent} frames switched, drops {drops}")
    return work.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
