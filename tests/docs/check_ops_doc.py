#!/usr/bin/env python3
"""Holds docs/ops.md to Kiln's builtin op table, so the page cannot drift from the code.

`kiln ops` prints every builtin op Kiln serves with its version range; `kiln ops --missing` the .tflite schema's
builtin ops it does not serve. This checks that
  - the "Op table" of docs/ops.md has exactly one row naming each served op ("ADD, SUB" rows name several), with
    the served versions in its Versions column, and no row for an op Kiln does not serve;
  - the generated list between the "BEGIN kiln ops --missing" and "END kiln ops --missing" markers is what
    `kiln ops --missing` prints now.
Exit 0 when both hold, 1 with each difference named otherwise. --update rewrites the generated list in place
(the table's rows are prose and stay hand-written).

usage: check_ops_doc.py --kiln KILN --doc docs/ops.md [--update]
"""
import argparse
import re
import subprocess
import sys

BEGIN = "<!-- BEGIN kiln ops --missing"
END = "<!-- END kiln ops --missing -->"
WIDTH = 116


def kiln_lines(kiln, *args):
    out = subprocess.run([kiln, "ops", *args], check=True, capture_output=True, text=True).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def table_rows(text):
    """(op name, versions text, line number) for every op each row of the "Op table" section names."""
    rows, in_section = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("## "):
            in_section = line.strip() == "## Op table"
            continue
        if not in_section or not line.startswith("|") or line.startswith("|----") or line.startswith("| Op |"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2:
            continue
        for name in cells[0].split(","):
            rows.append((name.strip(), cells[1], number))
    return rows


def missing_block(names):
    lines, line = [], ""
    for name in names:
        item = "`%s`" % name
        candidate = item if not line else line + ", " + item
        if len(candidate) + 1 > WIDTH and line:
            lines.append(line + ",")
            line = item
        else:
            line = candidate
    if line:
        lines.append(line)
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--doc", required=True)
    parser.add_argument("--update", action="store_true")
    args = parser.parse_args()

    served = {}
    for line in kiln_lines(args.kiln):
        name, versions = line.split()
        served[name] = versions
    missing = kiln_lines(args.kiln, "--missing")
    with open(args.doc, encoding="utf-8") as f:
        text = f.read()

    problems = []
    seen = {}
    for name, versions, number in table_rows(text):
        if name in seen:
            problems.append("%s:%d: %s has a second row (first at line %d)" % (args.doc, number, name, seen[name]))
            continue
        seen[name] = number
        if name not in served:
            problems.append("%s:%d: %s is in the op table, but Kiln does not serve it" % (args.doc, number, name))
        elif versions != served[name]:
            problems.append("%s:%d: %s versions %s in the table, Kiln serves %s" %
                            (args.doc, number, name, versions, served[name]))
    for name, versions in served.items():
        if name not in seen:
            problems.append("%s: %s (versions %s) is served but has no row in the op table" %
                            (args.doc, name, versions))

    begin, end = text.find(BEGIN), text.find(END)
    if begin < 0 or end < begin:
        problems.append("%s: no generated list between '%s' and '%s'" % (args.doc, BEGIN, END))
    else:
        start = text.index("\n", begin) + 1
        want = missing_block(sorted(missing)) + "\n"
        if text[start:end] != want:
            if args.update:
                text = text[:start] + want + text[end:]
                with open(args.doc, "w", encoding="utf-8") as f:
                    f.write(text)
                print("check_ops_doc: rewrote the list of ops not yet served (%d ops)" % len(missing))
            else:
                have = set(re.findall(r"`([A-Z0-9_]+)`", text[start:end]))
                stale = sorted(have - set(missing))
                absent = sorted(set(missing) - have)
                problems.append("%s: the list of ops not yet served is stale (now served or unknown: %s; missing "
                                "from it: %s); run %s --kiln KILN --doc %s --update" %
                                (args.doc, ", ".join(stale) or "none", ", ".join(absent) or "none", sys.argv[0],
                                 args.doc))
    for p in problems:
        print(p)
    if problems:
        return 1
    print("check_ops_doc: %d served ops match the op table; %d not yet served are listed" % (len(served),
                                                                                           len(missing)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
