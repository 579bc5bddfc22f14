#!/usr/bin/env python3
"""Generates element_docs.cc: class name -> the doc block at the top of its header.

An element header starts with a block of `//` comment lines; the first line is
"ClassName — one-line summary". That block is the element's manual (`fulcrum elements NAME`).
"""
import re
import sys


def doc_block(path):
    lines = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("//"):
                lines.append(line[3:].rstrip("\n") if line.startswith("// ") else line[2:].rstrip("\n"))
            elif lines:
                break
    return lines


def main():
    out = sys.argv[1]
    entries = []
    for path in sorted(sys.argv[2:]):
        lines = doc_block(path)
        if not lines:
            continue
        m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\s", lines[0])
        if not m:
            continue
        entries.append((m.group(1), "\n".join(lines) + "\n"))
    with open(out, "w", encoding="utf-8") as f:
        f.write('#include <string_view>\n#include "core/registry.hh"\n\nnamespace fulcrum {\n')
        f.write("std::string_view element_doc(std::string_view class_name) {\n")
        for name, text in entries:
            f.write(f'  if (class_name == "{name}") return R"FULCRUMDOC({text})FULCRUMDOC";\n')
        f.write('  return {};\n}\n}  // namespace fulcrum\n')


if __name__ == "__main__":
    main()
