#!/usr/bin/env python3
"""`kiln benchmark` on a real model: its timing lines, its operator profile and its trace.

Runs the CLI with --enable_op_profiling and --trace, then checks that
  - the report has init, warm-up and inference lines with min <= median <= max;
  - the profile's rows cover every node that runs (folded constants aside), each with the count of timed runs;
  - the trace is valid JSON in Chrome's trace-event format, with one "Invoke" slice per timed run and, per
    run, one slice per profile row, each on the track of its engine, inside that run's Invoke slice;
  - the memory report splits resident memory into what init allocated, the model file's pages and the
    libraries' pages; with --model-pages-below=F, the model file's pages resident after init are under that
    fraction of the file (the pages of weights packed at init were given back).
Exits 77 (skipped) when the model is absent.

Usage: check_benchmark.py KILN MODEL WORK_DIR [--model-pages-below=F] [extra kiln benchmark flags...]
"""
import json
import os
import re
import subprocess
import sys

from tool_checks import fail


def main():
    kiln, model, work = sys.argv[1], sys.argv[2], sys.argv[3]
    extra = sys.argv[4:]
    pages_below = None
    for arg in list(extra):
        if arg.startswith("--model-pages-below="):
            pages_below = float(arg.split("=", 1)[1])
            extra.remove(arg)
    if not os.path.exists(model):
        if os.environ.get("KILN_REQUIRE_SHARED_DATA", "0") not in ("", "0"):
            fail("%s is absent, and KILN_REQUIRE_SHARED_DATA says the shared models must be there" % model)
        print("skipped: %s is absent (the shared models folder is not there)" % model)
        sys.exit(77)
    os.makedirs(work, exist_ok=True)
    trace_path = os.path.join(work, "trace.json")
    cmd = [kiln, "benchmark", "--graph=" + model, "--num_runs=5", "--min_secs=0", "--warmup_runs=1",
           "--enable_op_profiling=true", "--report_peak_memory_footprint=true", "--trace=" + trace_path] + extra
    result = subprocess.run(cmd, capture_output=True, text=True)
    print(result.stdout)
    if result.returncode != 0:
        fail("kiln benchmark exited %d: %s" % (result.returncode, result.stderr))
    out = result.stdout
    m = re.search(r"Inference: count=(\d+) min=([\d.]+) ms avg=([\d.]+) ms median=([\d.]+) ms max=([\d.]+) ms", out)
    if not m:
        fail("no inference line")
    runs = int(m.group(1))
    lo, median, hi = float(m.group(2)), float(m.group(4)), float(m.group(5))
    if runs < 5 or not (0 < lo <= median <= hi):
        fail("inference statistics out of order: %s" % m.group(0))
    for needle in ("Initialized session in", "Warm-up: count=", "Memory footprint: model file",
                   "Resident memory:"):
        if needle not in out:
            fail("no '%s' line" % needle)
    m = re.search(r"anonymous \+([\d.]+) MB, the model file's pages ([\d.]+) MB, libraries' pages \+([\d.]+) MB", out)
    size = re.search(r"Memory footprint: model file ([\d.]+) MB", out)
    if not m or not size:
        fail("no split of resident memory (anonymous, model file's pages, libraries' pages)")
    model_pages, file_mb = float(m.group(2)), float(size.group(1))
    if model_pages > file_mb + 0.01:
        fail("the model file's resident pages (%.3f MB) pass the file's size (%.3f MB)" % (model_pages, file_mb))
    if pages_below is not None and model_pages > pages_below * file_mb:
        fail("the model file's pages resident after init, %.3f MB, are over %.0f%% of the file (%.3f MB): the "
             "pages of the weights packed at init were not given back" % (model_pages, 100 * pages_below, file_mb))
    if not re.search(r"Resident for the model: after init [\d.]+ MB, after the runs [\d.]+ MB", out):
        fail("no 'Resident for the model' line")

    rows = re.findall(r"^(\d+)(?:-(\d+))?\s+(\S+)\s+([\d.]+)\s+([\d.]+)%\s+(\d+)\s+(.+)$", out, re.M)
    if not rows:
        fail("no operator profile rows")
    covered = set()
    for first, last, engine, avg, share, count, op in rows:
        first = int(first)
        last = int(last) if last else first
        if int(count) != runs:
            fail("profile row %d-%d counted %s times, not once per timed run (%d)" % (first, last, count, runs))
        covered.update(range(first, last + 1))
    share_total = sum(float(r[4]) for r in rows)
    if abs(share_total - 100.0) > 0.5:
        fail("profile shares add up to %.2f%%" % share_total)

    with open(trace_path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    tracks = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M"}
    invokes = [e for e in events if e.get("ph") == "X" and e["name"] == "Invoke"]
    if len(invokes) != runs:
        fail("%d Invoke slices for %d timed runs" % (len(invokes), runs))
    slices = [e for e in events if e.get("ph") == "X" and e["name"] != "Invoke"]
    if len(slices) != runs * len(rows):
        fail("%d slices, expected %d (one per profile row per run)" % (len(slices), runs * len(rows)))
    for s in slices:
        run = invokes[s["args"]["run"]]
        if tracks.get(s["tid"]) != s["cat"]:
            fail("slice %s of engine %s sits on track %s" % (s["name"], s["cat"], tracks.get(s["tid"])))
        if s["ts"] < run["ts"] - 1 or s["ts"] + s["dur"] > run["ts"] + run["dur"] + 1:
            fail("slice %s of run %d lies outside its Invoke" % (s["name"], s["args"]["run"]))
    print("ok: %d runs, %d profile rows covering %d nodes, %d trace slices on %d tracks"
          % (runs, len(rows), len(covered), len(slices), len(tracks)))


if __name__ == "__main__":
    main()
