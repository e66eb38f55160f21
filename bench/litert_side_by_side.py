#!/usr/bin/env python3
"""Kiln beside LiteRT on the same models, same machine, same moment: the table docs/performance.md reports.

usage: litert_side_by_side.py --kiln KILN --venv VENV [--threads 1,2] [--rounds 3] [--runs 200]
                              [--reference-kernels] MODEL.tflite...

For each model and thread count it alternates `kiln benchmark` (Kiln's default path, or its reference kernels
with --reference-kernels) and bench/litert_bench.py (LiteRT's Interpreter with its default XNNPACK delegate, run
by the venv's Python; bench/litert_env.sh makes the venv) for --rounds rounds, each of --runs timed runs after a
warm-up, and keeps the median of each side's per-round medians. Alternating spreads any load from other work on
the machine over both sides. Prints a Markdown table: Kiln's and LiteRT's medians and the ratio Kiln / LiteRT
(below 1: Kiln is faster). Speed is measured here, never asserted in a test.

Exit status: 0 measured; 77 the venv has no LiteRT (run bench/litert_env.sh VENV first); 1 a run failed.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def median_ms(pattern, text, what):
    match = re.search(pattern, text)
    if match is None:
        sys.exit("litert_side_by_side: no median in the output of %s:\n%s" % (what, text[-2000:]))
    return float(match.group(1))


def kiln_median(args, model, threads):
    command = [args.kiln, "benchmark", "--graph=" + model, "--num_threads=%d" % threads,
               "--num_runs=%d" % args.runs, "--warmup_runs=%d" % max(1, args.runs // 10), "--min_secs=0"]
    if args.reference_kernels:
        command.append("--reference_kernels=true")
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("litert_side_by_side: %s failed (%d):\n%s" % (" ".join(command), run.returncode, run.stderr))
    return median_ms(r"Inference: .*median=([0-9.]+) ms", run.stdout + run.stderr, "kiln benchmark")


def litert_median(args, model, threads):
    python = os.path.join(args.venv, "bin", "python")
    command = [python, os.path.join(HERE, "litert_bench.py"), model, "--threads", str(threads),
               "--runs", str(args.runs), "--warmup", str(max(1, args.runs // 10))]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        return None  # LiteRT cannot run this model; the table says so
    return median_ms(r"median ([0-9.]+) ms", run.stdout, "litert_bench.py")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kiln", required=True, help="the kiln CLI")
    parser.add_argument("--venv", required=True, help="the LiteRT environment bench/litert_env.sh made")
    parser.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=200, help="timed runs per round and side")
    parser.add_argument("--reference-kernels", action="store_true", help="time Kiln's reference kernels")
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    python = os.path.join(args.venv, "bin", "python")
    if subprocess.run([python, "-c", "import ai_edge_litert.interpreter"], capture_output=True).returncode != 0:
        print("litert_side_by_side: %s has no ai_edge_litert; run bench/litert_env.sh %s first" %
              (args.venv, args.venv), file=sys.stderr)
        return 77
    threads = [int(t) for t in args.threads.split(",")]
    print("| model | threads | Kiln | LiteRT | Kiln / LiteRT |")
    print("|---|---|---|---|---|")
    for model in args.models:
        for t in threads:
            kiln, litert = [], []
            for _ in range(args.rounds):
                kiln.append(kiln_median(args, model, t))
                litert.append(litert_median(args, model, t))
            k = statistics.median(kiln)
            if None in litert:
                print("| %s | %d | %.3f ms | (LiteRT cannot run it) | |" % (os.path.basename(model), t, k))
                continue
            l = statistics.median(litert)
            print("| %s | %d | %.3f ms | %.3f ms | %.2f |" % (os.path.basename(model), t, k, l, k / l),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
