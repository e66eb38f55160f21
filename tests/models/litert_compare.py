#!/usr/bin/env python3
"""Kiln against LiteRT on every real model both can run: the same seeded inputs, outputs compared element by element.

Bounds, with a = Kiln's value and b = LiteRT's:
  float models      |a - b| <= 1e-4 * max(1, |b|)     (1e-4 relative, 1e-4 absolute near zero)
  quantized models  Kiln's reference kernels (--reference-kernels) byte for byte equal to LiteRT's reference
                    kernels (litert_bench.py --reference-resolver: OpResolverType.BUILTIN_REF) on the same
                    inputs; the notes say how many elements differ and by how much otherwise.
                    Kiln's default path (XNNPACK's int8 operators where they apply) within 1 quantization step of
                    LiteRT's default path (its XNNPACK delegate), the same library's arithmetic (integer
                    outputs: 1; a float output dequantized from a quantized tensor: that tensor's scale). The
                    notes say how many elements differ from each of LiteRT's paths: XNNPACK rounds each op's
                    requantization in float, LiteRT's reference kernels in fixed point, and over tens of layers
                    the two drift apart by several steps (as LiteRT's own two paths do).
  hybrid models     |a - b| <= 1e-2 * max(1, |b|)     (see below)
A model is quantized when LiteRT's op list shows quantized (int8/uint8/int16 with a scale) activations; float
models with float16 or float32 weights are float. NaN matches NaN.

Hybrid models (int8 weights, float activations; here mt_kws_dscnn_float) are not held to the float bound:
LiteRT runs them by quantizing each activation to int8 on the fly, so its answer is itself an approximation of
the float arithmetic Kiln does (XNNPACK and LiteRT's builtin kernels differ from each other by 2.5e-3 on
mt_kws_dscnn_float, and XNNPACK from Kiln by up to 1.9e-3 over seeds 1-8). The 1e-2 bound still catches wrong
arithmetic; tests/models/numpy_reference.py holds these models to 1e-4 against float64 NumPy.

For each .tflite in the models folder: bench/litert_bench.py (in the LiteRT environment bench/litert_env.sh makes)
draws the inputs from --seed, runs LiteRT and saves inputs and outputs; `kiln run` gets the same inputs as .npy
files, once as it runs by default and, where the CLI has --reference-kernels, once more on the reference kernels
alone (row "MODEL (reference kernels)"): Kiln's XNNPACK fast path and its plain C++ kernels are both held to
LiteRT. A model LiteRT cannot load or run is skipped ("skipped: litert: ..."), and so is one `kiln run` refuses
with an error before it runs ("skipped: kiln: <its first error line>"); a Kiln crash, sanitizer report, usage
error or failure while running fails. Prints a table per kind and exits 1 if any model both run disagrees or
fails, 77 (skip) when the models folder is absent or LiteRT cannot be installed (PyPI unreachable), else 0.
Models named *_litert_builtin are held to LiteRT's builtin kernels instead of its reference resolver, and models
named *_litert_ref_only hold Kiln's default path, too, to LiteRT's reference kernels (see the constants below).

Models are compared --jobs at a time; each of those threads keeps one LiteRT process (litert_bench.py --serve), so
LiteRT is imported once per thread rather than once per model.

--generate SCRIPT first writes the models folder with SCRIPT (ctest litert_int8_ops: the single-op int8 models of
tests/models/int8_op_models.py).

usage: litert_compare.py --kiln KILN --models-dir DIR --venv DIR [--python PY] [--bench-dir DIR] [--threads N]
                         [--seed S] [--work DIR] [--jobs N] [--generate SCRIPT] [MODEL_NAME...]
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import types

import numpy as np

SKIP = 77
FLOAT_RTOL = 1e-4
HYBRID_RTOL = 1e-2
# A sanitizer's report (ASan builds) is a failure, whatever kiln's exit status.
SANITIZER_REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "WARNING: ThreadSanitizer")
HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.normpath(os.path.join(HERE, "..", "..", "bench"))


class LiteRTWorkers:
    """One `litert_bench.py --serve` process per thread: LiteRT is imported once per thread, not once per model
    (that import was most of the time of a comparison). A worker that dies (LiteRT crashed on a model) fails that
    command, exit status and all, and is started again for the next."""

    def __init__(self, venv_python, bench_dir):
        self.command = [venv_python, os.path.join(bench_dir, "litert_bench.py"), "--serve"]
        self.local = threading.local()
        self.lock = threading.Lock()
        self.all = []

    def run(self, argv):
        """litert_bench.py ARGV in this thread's worker: an object with .returncode and .stderr."""
        proc = getattr(self.local, "proc", None)
        if proc is None or proc.poll() is not None:
            proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True)
            self.local.proc = proc
            with self.lock:
                self.all.append(proc)
        try:
            proc.stdin.write(json.dumps(argv) + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        if line:
            answer = json.loads(line)
            return types.SimpleNamespace(returncode=answer["rc"], stderr=answer["stderr"])
        status = proc.wait()
        self.local.proc = None
        return types.SimpleNamespace(returncode=status or 1,
                                     stderr="litert_bench: the LiteRT process ended (status %s) on this model" % status)

    def close(self):
        for proc in self.all:
            if proc.poll() is None:
                proc.stdin.close()
                proc.wait()


class Result:
    def __init__(self, model):
        self.model = model
        self.kind = "float"      # or "quantized", "hybrid"
        self.verdict = None      # "ok", "DISAGREE", "FAILED" or "skipped: ..."
        self.abs_diff = None     # None until outputs are compared
        self.rel_diff = None     # float: max |a-b| / max(1, |b|); quantized: max |a-b| in steps
        self.notes = []


def first_error_line(text):
    """The first line of an error message (LiteRT's INFO lines left out), and how many more there are."""
    lines = [l.strip() for l in text.splitlines() if l.strip() and not l.startswith("INFO: ")]
    more = " (+%d more lines)" % (len(lines) - 1) if len(lines) > 1 else ""
    return (lines[0] + more) if lines else "no message"


def kiln_input_args(inputs_dir):
    """The `kiln run` arguments for the inputs litert_bench saved: by name where kiln can match every name
    (kiln splits NAME=FILE at the first '='), else by position."""
    with open(os.path.join(inputs_dir, "inputs.json")) as f:
        meta = json.load(f)["inputs"]
    names = [m["name"] for m in meta]
    by_name = all(n and "=" not in n for n in names) and len(set(names)) == len(names)
    args = []
    for m in meta:
        path = os.path.join(inputs_dir, m["file"])
        args += ["--input", "%s=%s" % (m["name"], path) if by_name else path]
    return args


def compare_output(r, got, want, step):
    """Updates r's figures for one output; returns whether it is within the bound."""
    if got.shape != want.shape:
        r.notes.append("shape %s, LiteRT %s" % (list(got.shape), list(want.shape)))
        return False
    if got.dtype != want.dtype:
        r.notes.append("dtype %s, LiteRT %s" % (got.dtype.name, want.dtype.name))
        return False
    a, b = got.astype(np.float64).reshape(-1), want.astype(np.float64).reshape(-1)
    both_nan = np.isnan(a) & np.isnan(b)
    diff = np.where(both_nan, 0.0, np.abs(a - b))
    diff = np.where(np.isnan(diff), np.inf, diff)  # NaN on one side only
    r.abs_diff = r.abs_diff or 0.0
    r.rel_diff = r.rel_diff or 0.0
    if diff.size == 0:
        return True
    r.abs_diff = max(r.abs_diff, float(diff.max()))
    if r.kind == "quantized" and step is not None:
        if step == 0:  # an exact integer output (int32, bool)
            r.rel_diff = max(r.rel_diff, float(diff.max()))
            return bool(np.all(diff == 0))
        steps = diff / step
        r.rel_diff = max(r.rel_diff, float(steps.max()))
        # The dequantized float carries its own rounding: allow 1e-3 of a step beyond the bound.
        return bool(np.all(steps <= 1.0 + 1e-3))
    rel = diff / np.maximum(1.0, np.abs(np.where(np.isnan(b), 0.0, b)))
    r.rel_diff = max(r.rel_diff, float(rel.max()))
    return bool(np.all(rel <= (HYBRID_RTOL if r.kind == "hybrid" else FLOAT_RTOL)))


def check_model(path, args, venv_python, work):
    """Results for one model: one per Kiln variant (see kiln_variants), or one saying why it was skipped."""
    name = os.path.splitext(os.path.basename(path))[0]
    inputs_dir = os.path.join(work, name, "inputs")
    litert_dir = os.path.join(work, name, "litert")
    bench = args.litert.run(
        [path, "--threads", str(args.threads), "--runs", "1", "--warmup", "0", "--seed", str(args.seed),
         "--save-inputs", inputs_dir, "--save-outputs", litert_dir])
    if bench.returncode == 3:
        r = Result(name)
        # "litert_bench: LiteRT cannot load MODEL: why" -> "cannot load: why"
        reason = first_error_line(bench.stderr).replace("litert_bench: LiteRT ", "").replace(" " + path, "")
        r.verdict = "skipped: litert: " + reason
        return [r]
    if bench.returncode != 0:
        r = Result(name)
        r.verdict = "FAILED"
        r.notes.append("litert_bench exited %d: %s" % (bench.returncode, first_error_line(bench.stderr)))
        return [r]
    with open(os.path.join(litert_dir, "outputs.json")) as f:
        meta = json.load(f)
    results = []
    for label, flags in args.variants:
        r = Result(name + (" (%s)" % label if label else ""))
        r.kind = "quantized" if meta["quantized"] else "hybrid" if meta.get("hybrid") else "float"
        kiln_dir = os.path.join(work, name, "kiln" + ("-" + label.replace(" ", "-") if label else ""))
        if r.kind == "quantized":
            # The reference kernels against LiteRT's, byte for byte; the default path against LiteRT's default
            # path, within a step. Both report their distance from the other LiteRT path.
            ref_dir = os.path.join(work, name, "litert-ref")
            if not os.path.isdir(ref_dir) and not run_litert_reference(r, path, args, venv_python, inputs_dir,
                                                                        ref_dir):
                results.append(r)
                continue
            if "--reference-kernels" in flags or name.endswith(REFERENCE_ONLY_SUFFIX):
                if "--reference-kernels" not in flags:
                    r.notes.append("default path held to LiteRT's reference kernels: LiteRT's default path runs "
                                   "another kernel for this op")
                run_kiln(r, path, flags, inputs_dir, kiln_dir, ref_dir, meta, args)
                if r.verdict == "ok":
                    check_exact(r, kiln_dir, meta, ref_dir)
                    note_distance(r, kiln_dir, meta, litert_dir, "LiteRT's default XNNPACK path")
            else:
                run_kiln(r, path, flags, inputs_dir, kiln_dir, litert_dir, meta, args)
                if r.verdict == "ok":
                    note_distance(r, kiln_dir, meta, litert_dir, "LiteRT's default XNNPACK path")
                    note_distance(r, kiln_dir, meta, ref_dir, "LiteRT's reference kernels")
        else:
            run_kiln(r, path, flags, inputs_dir, kiln_dir, litert_dir, meta, args)
        results.append(r)
    if len({r.verdict for r in results}) == 1 and results[0].verdict.startswith("skipped"):
        results[0].model = name  # refused the same way on every path: one line
        return results[:1]
    return results


# Models whose name ends in this are held to LiteRT's builtin kernels (no delegate) instead of its reference
# resolver, whose kernel for the op is broken in the package (SUM int8 writes garbage: docs/ops.md).
BUILTIN_SUFFIX = "_litert_builtin"
# Models whose name ends in this hold Kiln's default path, too, byte for byte to LiteRT's reference kernels: LiteRT's
# default path runs another kernel for the op, whose arithmetic Kiln's default path does not copy (int16 LOGISTIC
# and TANH at the power-of-two input scales: LiteRT's optimized gemmlowp 16-bit kernel, up to 12 steps from the
# function where its reference kernel is within 1; docs/ops.md).
REFERENCE_ONLY_SUFFIX = "_litert_ref_only"


def run_litert_reference(r, path, args, venv_python, inputs_dir, ref_dir):
    """LiteRT's reference resolver (litert_bench.py --reference-resolver) on the saved inputs into ref_dir."""
    resolver = "--reference-resolver"
    if os.path.splitext(os.path.basename(path))[0].endswith(BUILTIN_SUFFIX):
        resolver = "--builtin-resolver"
        r.notes.append("held to LiteRT's builtin kernels: its reference kernel for this op is broken")
    bench = args.litert.run(
        [path, "--threads", str(args.threads), "--runs", "1", "--warmup", "0", resolver, "--save-outputs", ref_dir,
         *kiln_input_args(inputs_dir)])
    if bench.returncode != 0:
        r.verdict = "FAILED"
        r.notes.append("LiteRT's reference resolver did not run: %s" % first_error_line(bench.stderr))
        return False
    return True


def check_exact(r, kiln_dir, meta, ref_dir):
    """Quantized models: Kiln's outputs byte for byte LiteRT's reference resolver's on the same inputs."""
    for out in meta["outputs"]:
        got = np.load(os.path.join(kiln_dir, out["file"]))
        want = np.load(os.path.join(ref_dir, out["file"]))
        if got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes():
            continue
        r.verdict = "DISAGREE"
        if got.shape != want.shape or got.dtype != want.dtype:
            r.notes.append("output %d: %s%s vs LiteRT reference %s%s" % (out["index"], got.dtype.name, list(got.shape),
                                                                      want.dtype.name, list(want.shape)))
            continue
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        r.notes.append("output %d: %d of %d elements differ from LiteRT's reference kernels, by up to %g"
                       % (out["index"], int((diff != 0).sum()), diff.size, float(diff.max())))
    if r.verdict == "ok":
        r.notes.append("byte-exact with LiteRT's reference kernels")


def note_distance(r, kiln_dir, meta, other_dir, label):
    """How far the outputs in other_dir (one of LiteRT's paths) are from Kiln's, in steps: a note only."""
    worst, count, total = 0.0, 0, 0
    for out in meta["outputs"]:
        got = np.load(os.path.join(kiln_dir, out["file"])).astype(np.float64)
        want = np.load(os.path.join(other_dir, out["file"])).astype(np.float64)
        if got.shape != want.shape:
            continue
        diff = np.abs(got - want) / (out["step"] or 1.0)
        worst, count, total = max(worst, float(diff.max(initial=0))), count + int((diff > 1e-6).sum()), total + diff.size
    r.notes.append("%s: %d of %d elements differ, by up to %.3g steps" % (label, count, total, worst))


def run_kiln(r, path, flags, inputs_dir, kiln_dir, litert_dir, meta, args):
    """Runs `kiln run` on the inputs LiteRT had and sets r's verdict and figures."""
    cmd = [args.kiln, "run", path, *kiln_input_args(inputs_dir), "--output-dir", kiln_dir,
           "--threads", str(args.threads), "--seed", str(args.seed), *flags]
    run = subprocess.run(cmd, capture_output=True, text=True)
    sanitizer = [l for l in run.stderr.splitlines() if any(s in l for s in SANITIZER_REPORTS)]
    if sanitizer:
        r.verdict = "FAILED"
        r.notes.append("kiln: %s" % sanitizer[0].strip())
        return
    if run.returncode < 0 or run.returncode > 125:
        r.verdict = "FAILED"
        r.notes.append("kiln crashed (exit %d): %s" % (run.returncode, first_error_line(run.stderr)))
        return
    if run.returncode != 0:
        line = first_error_line(run.stderr or run.stdout)
        # kiln run refuses a model (exit 1) while making the interpreter or in AllocateTensors, before it prints
        # its inputs; exit 2 is a usage error, and a failure after the inputs are set is a failed run.
        if run.returncode == 1 and not any(l.startswith("input ") for l in run.stdout.splitlines()):
            r.verdict = "skipped: kiln: " + (line[len("kiln: "):] if line.startswith("kiln: ") else line)
        else:
            r.verdict = "FAILED"
            r.notes.append("kiln run exited %d: %s" % (run.returncode, line))
        return
    ok = True
    kiln_names = {}
    for line in run.stdout.splitlines():
        if line.startswith("output ") and "'" in line:
            index, _, rest = line[len("output "):].partition(" ")
            kiln_names[int(index)] = rest.split("'")[1]
    for out in meta["outputs"]:
        got_path = os.path.join(kiln_dir, out["file"])
        if not os.path.exists(got_path):
            r.notes.append("kiln wrote no %s" % out["file"])
            ok = False
            continue
        if kiln_names.get(out["index"], out["name"]) != out["name"]:
            r.notes.append("output %d is '%s' in Kiln, '%s' in LiteRT" % (out["index"], kiln_names[out["index"]],
                                                                          out["name"]))
        want = np.load(os.path.join(litert_dir, out["file"]))
        if not compare_output(r, np.load(got_path), want, out["step"]):
            ok = False
    extra = len([k for k in kiln_names if k >= len(meta["outputs"])])
    if extra:
        r.notes.append("Kiln has %d more outputs than LiteRT" % extra)
        ok = False
    r.verdict = "ok" if ok else "DISAGREE"


def kiln_variants(kiln):
    """The ways to run Kiln's CPU path: its default, and, where this kiln has the flag, its reference kernels
    alone (--reference-kernels: the builtin ops' plain C++ kernels instead of the XNNPACK fast path)."""
    usage = subprocess.run([kiln, "--help"], capture_output=True, text=True).stdout
    variants = [("", [])]
    if "--reference-kernels" in usage:
        variants.append(("reference kernels", ["--reference-kernels"]))
    return variants


def print_table(title, results, rel_header):
    if not results:
        return
    print(title)
    width = max(len("model"), *(len(r.model) for r in results))
    print("  %-*s  %14s  %14s  %s" % (width, "model", "max abs diff", rel_header, "verdict"))
    for r in results:
        note = ("  (" + "; ".join(r.notes) + ")") if r.notes else ""
        figures = ["-" if v is None else "%.3g" % v for v in (r.abs_diff, r.rel_diff)]
        print("  %-*s  %14s  %14s  %s%s" % (width, r.model, figures[0], figures[1], r.verdict, note))
    print()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kiln", required=True, help="the kiln CLI")
    p.add_argument("--models-dir", required=True, help="folder of .tflite models (KILN_MODELS_DIR)")
    p.add_argument("--venv", required=True, help="the LiteRT environment, made or reused by bench/litert_env.sh")
    p.add_argument("--python", default=sys.executable, help="the Python the environment is made from")
    p.add_argument("--bench-dir", default=BENCH, help="folder of litert_env.sh and litert_bench.py")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--work", help="keep inputs and outputs here (default: a temporary folder)")
    p.add_argument("--jobs", type=int, default=2, help="models compared at once (default 2)")
    p.add_argument("--generate", metavar="SCRIPT",
                   help="first write the models into --models-dir with SCRIPT, run by the LiteRT environment's "
                        "Python (tests/models/int8_op_models.py)")
    p.add_argument("models", nargs="*", help="only these models (file names without .tflite)")
    args = p.parse_args()
    if args.jobs < 1:
        p.error("--jobs must be at least 1")
    start = time.monotonic()

    print("bounds: float |kiln - litert| <= %g * max(1, |litert|); quantized: reference kernels byte-exact, "
          "default path |kiln - litert| <= 1 step; "
          "hybrid |kiln - litert| <= %g * max(1, |litert|)" % (FLOAT_RTOL, HYBRID_RTOL))
    if not args.generate and not os.path.isdir(args.models_dir):
        print("skipped: the models folder %s is absent (real models live in ../shared/models beside the "
              "checkout)" % args.models_dir)
        # CI always has the folder (.ci/run sets KILN_REQUIRE_SHARED_DATA): there, its absence is a failure.
        return 1 if os.environ.get("KILN_REQUIRE_SHARED_DATA", "0") not in ("", "0") else SKIP
    if not os.access(args.kiln, os.X_OK):
        print("FAILED: no kiln CLI at %s" % args.kiln)
        return 1
    env = subprocess.run([os.path.join(args.bench_dir, "litert_env.sh"), args.venv, args.python],
                         capture_output=True, text=True)
    sys.stdout.write(env.stdout)
    sys.stdout.write(env.stderr)
    if env.returncode == SKIP:
        print("skipped: LiteRT is not available here")
        return SKIP
    if env.returncode != 0:
        print("FAILED: bench/litert_env.sh exited %d" % env.returncode)
        return 1
    venv_python = env.stdout.strip().splitlines()[-1]
    if args.generate:
        made = subprocess.run([venv_python, args.generate, args.models_dir], capture_output=True, text=True)
        if made.returncode != 0:
            print("FAILED: %s exited %d: %s" % (args.generate, made.returncode, first_error_line(made.stderr)))
            return 1
    args.variants = kiln_variants(args.kiln)

    models = sorted(f for f in os.listdir(args.models_dir) if f.endswith(".tflite"))
    if args.models:
        models = [m for m in models if os.path.splitext(m)[0] in args.models]
    args.litert = LiteRTWorkers(venv_python, args.bench_dir)
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        work = args.work or tmp
        try:
            per_model = pool.map(lambda m: check_model(os.path.join(args.models_dir, m), args, venv_python, work),
                                 models)
            results = [r for rs in per_model for r in rs]
        finally:
            args.litert.close()

    ran = [r for r in results if not r.verdict.startswith("skipped")]
    print_table("float models (bound %g relative):" % FLOAT_RTOL, [r for r in ran if r.kind == "float"],
                "max rel diff")
    print_table("hybrid models, int8 weights and float activations (bound %g relative, LiteRT quantizes the "
                "activations):" % HYBRID_RTOL, [r for r in ran if r.kind == "hybrid"], "max rel diff")
    print_table("quantized models (reference kernels: byte for byte LiteRT's reference kernels; default path: "
                "1 step of LiteRT's default path):", [r for r in ran if r.kind == "quantized"], "max steps")
    skipped = [r for r in results if r.verdict.startswith("skipped")]
    if skipped:
        print("skipped:")
        for r in skipped:
            print("  %s  %s" % (r.model, r.verdict))
        print()
    bad = [r for r in ran if r.verdict != "ok"]
    failed = [r for r in bad if r.verdict == "FAILED"]
    print("%d agree, %d disagree, %d failed, %d skipped (%d models; Kiln's %s; LiteRT and Kiln at %d threads, "
          "seed %d, %d at once, %.0f s)" % (len(ran) - len(bad), len(bad) - len(failed), len(failed), len(skipped),
                                            len(models), " and ".join(l or "default path" for l, _ in args.variants),
                                            args.threads, args.seed, args.jobs, time.monotonic() - start))
    if bad:
        print("FAILED: " + ", ".join(r.model for r in bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
