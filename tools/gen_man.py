#!/usr/bin/env python3
"""Man pages from the binary's own help and element manuals, so they never drift from it.

    tools/gen_man.py FULCRUM OUTDIR

Writes OUTDIR/fulcrum.1 (the commands: `fulcrum --help` and each command's --help) and
OUTDIR/fulcrum-elements.7 (every element class: `fulcrum elements NAME`). The text is kept as
the binary prints it (in .nf blocks), escaped for roff.
"""
import os
import subprocess
import sys

COMMANDS = ["run", "check", "graph", "profile", "plan", "pcap", "bench", "devices", "elements", "proxy"]


def roff(text):
    """Text as roff source: backslashes escaped, other than ASCII as \\[uXXXX], lines starting
    with . or ' protected."""
    out = []
    for line in text.rstrip("\n").split("\n"):
        line = line.replace("\\", "\\e")
        line = "".join(c if ord(c) < 128 else f"\\[u{ord(c):04X}]" for c in line)
        if line.startswith((".", "'")):
            line = "\\&" + line
        out.append(line)
    return "\n".join(out)


def help_text(binary, args):
    res = subprocess.run([binary, *args], capture_output=True, text=True, timeout=60)
    return (res.stdout + res.stderr).strip()


def header(name, section, title, version):
    return (f'.TH {name.upper()} {section} "" "fulcrum {version}" "{title}"\n'
            ".SH NAME\n")


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, outdir = argv[1], argv[2]
    os.makedirs(outdir, exist_ok=True)
    version = help_text(binary, ["--version"]).split()[1]

    page = header("fulcrum", 1, "Fulcrum manual", version)
    page += "fulcrum \\- packet and flow processing on CPUs and accelerators\n"
    page += ".SH SYNOPSIS\n.nf\n" + roff(help_text(binary, ["--help"])) + "\n.fi\n"
    page += (".SH DESCRIPTION\nFulcrum runs Click-style pipelines of elements over DPDK ports, "
             "batching packets and splitting work between CPU cores and offload devices. "
             "A pipeline is a file in the Click configuration language; "
             "\\fBfulcrum-elements\\fR(7) describes every element class.\n")
    for cmd in COMMANDS:
        page += f".SH fulcrum {cmd}\n.nf\n" + roff(help_text(binary, [cmd, "--help"])) + "\n.fi\n"
    page += ".SH SEE ALSO\n\\fBfulcrum-elements\\fR(7)\n"
    with open(os.path.join(outdir, "fulcrum.1"), "w") as f:
        f.write(page)

    classes = [line.split()[0] for line in help_text(binary, ["elements"]).splitlines()
               if line and not line.startswith(" ")]
    page = header("fulcrum-elements", 7, "Fulcrum elements", version)
    page += "fulcrum-elements \\- the element classes of Fulcrum pipelines\n"
    page += (".SH DESCRIPTION\nEach section is the manual `fulcrum elements CLASS` prints: what "
             "the element does, its ports, drop reasons, counters, offload and arguments.\n")
    for cls in classes:
        page += f".SH {cls}\n.nf\n" + roff(help_text(binary, ["elements", cls])) + "\n.fi\n"
    page += ".SH SEE ALSO\n\\fBfulcrum\\fR(1)\n"
    with open(os.path.join(outdir, "fulcrum-elements.7"), "w") as f:
        f.write(page)
    print(f"{outdir}/fulcrum.1, {outdir}/fulcrum-elements.7 ({len(classes)} elements)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
