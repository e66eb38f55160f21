#!/usr/bin/env python3
"""Runs a .tflite model with LiteRT (Google's TFLite runtime, Python package ai-edge-litert), the reference Kiln's
answers and speed are compared against.

usage: litert_bench.py MODEL [--threads N] [--runs N] [--warmup N] [--seed S] [--input [NAME=]FILE.npy]...
                             [--save-inputs DIR] [--save-outputs DIR]
                             [--reference-resolver | --builtin-resolver]

Run it with the Python of the environment bench/litert_env.sh makes (e.g. build/ci/litert-venv/bin/python).
The model runs through ai_edge_litert.interpreter.Interpreter(model_path=MODEL, num_threads=N) with LiteRT's
default delegate (XNNPACK). Inputs not given with --input are random, drawn in input order from
numpy.random.default_rng(SEED): float uniform in [-1, 1]; int8 and uint8 over their whole range (every value is
a valid quantized value); int16 uniform in [-32767, 32767]; int32 and int64 in [-128, 127] (small enough not to
overflow arithmetic); bool fair coin flips. --input takes the same forms as `kiln run --input`: NAME=FILE.npy
(NAME is the input tensor's name) or FILE.npy (the next input in order).

Prints the time to make the interpreter (init: construction, delegate and allocate_tensors) and, after the
warm-up runs, the minimum, median, mean and maximum wall-clock time of invoke() over --runs runs (inputs are set
once, before the warm-up).

--save-inputs DIR writes each input as DIR/<name>.npy (the tensor name with characters other than letters,
digits, '.', '_' and '-' replaced by '_') and DIR/inputs.json, and prints the `kiln run` arguments that feed Kiln
the same inputs. --save-outputs DIR writes each output as DIR/output_<i>.npy, the names `kiln run --output-dir`
uses, and DIR/outputs.json: per output its tensor name, dtype, shape, quantization, and `step`, one
quantization step in the output's own units (1 for an integer output; the scale of the quantized tensor a
float output is dequantized from; null for a float output of float arithmetic), and for the model whether it
computes on quantized values (`quantized`) and whether it is a hybrid model, quantized weights feeding float
activations, which LiteRT computes by quantizing the activations on the fly (`hybrid`).

Exit status: 0 ran; 2 bad arguments or inputs; 3 LiteRT cannot load or run this model (the message says why).

litert_bench.py --serve runs many such commands in one process, so that LiteRT is imported once
(tests/models/litert_compare.py): each line of standard input is a JSON list of the arguments above, and each
answer is one line of standard output, a JSON object {"rc": exit status, "stdout": ..., "stderr": ...}. What
LiteRT's own C++ code prints goes to standard error.
"""
import argparse
import contextlib
import importlib.metadata
import io
import json
import os
import re
import shlex
import statistics
import sys
import time

try:
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter
except ImportError as e:  # not the LiteRT environment's Python
    sys.exit("litert_bench: %s; run with the Python of the environment bench/litert_env.sh VENV makes "
             "(VENV/bin/python)" % e)

CANNOT_RUN = 3
# Random input ranges per dtype, inclusive.
INT_RANGES = {np.int8: (-128, 127), np.uint8: (0, 255), np.int16: (-32767, 32767), np.int32: (-128, 127),
              np.int64: (-128, 127)}
QUANTIZED_DTYPES = (np.int8, np.uint8, np.int16)


def sanitize(name):
    """A file name for a tensor name: what is not a letter, digit, '.', '_' or '-' becomes '_'."""
    s = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    return s if s.strip("._") else ""


def input_file_names(details):
    """<sanitised name>.npy per input, unique; input_<i> where a name is empty."""
    names, used = [], set()
    for i, d in enumerate(details):
        base = sanitize(d["name"]) or "input_%d" % i
        name = base if base not in used else "%s_%d" % (base, i)
        used.add(name)
        names.append(name + ".npy")
    return names


def random_input(rng, dtype, shape):
    dtype = np.dtype(dtype).type
    if dtype in (np.float32, np.float16, np.float64):
        return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
    if dtype in INT_RANGES:
        lo, hi = INT_RANGES[dtype]
        return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 1, size=shape, endpoint=True).astype(np.bool_)
    raise ValueError("no random values for dtype %s" % np.dtype(dtype).name)


def describe(d):
    return "%s[%s]" % (np.dtype(d["dtype"]).name, ", ".join(str(int(x)) for x in d["shape"]))


def first_values(a, n=6):
    flat = a.reshape(-1)
    text = ", ".join(("%.8g" % v) if a.dtype.kind == "f" else str(v) for v in flat[:n])
    return text + (", ..." if flat.size > n else "")


def quantization_info(interp):
    """What the model computes on: (quantized, hybrid, steps). quantized: some op makes quantized (int8, uint8,
    int16 with a scale) values. hybrid: some op takes quantized constant weights and makes float values (LiteRT
    then quantizes the float activations on the fly, so its results are approximate). steps: one quantization
    step per output, in the output's units (see the module's doc)."""
    tensors = {t["index"]: t for t in interp.get_tensor_details()}
    try:
        ops = [op for op in interp._get_ops_details() if op["op_name"] != "DELEGATE"]
    except Exception:  # a private call; without it only the outputs' own types tell
        ops = []

    def quantized(index):
        t = tensors.get(int(index))
        if t is None or np.dtype(t["dtype"]).type not in QUANTIZED_DTYPES:
            return False
        # Per-channel parameters leave the legacy (scale, zero point) pair at (0, 0).
        return t["quantization"][0] > 0 or len(t.get("quantization_parameters", {}).get("scales", [])) > 0

    produced = {int(o) for op in ops for o in op["outputs"]}
    model_quantized = any(quantized(o) for op in ops for o in op["outputs"])
    hybrid = any(op["op_name"] not in ("DEQUANTIZE", "QUANTIZE")
                 and any(np.dtype(t).kind == "f" for t in op["result_types"])
                 and any(int(i) >= 0 and int(i) not in produced and quantized(i) for i in op["inputs"])
                 for op in ops)
    producer = {int(o): op for op in ops for o in op["outputs"]}
    steps = []
    for d in interp.get_output_details():
        step = None
        if np.dtype(d["dtype"]).kind in "iub":
            step = 1.0 if np.dtype(d["dtype"]).type in QUANTIZED_DTYPES else 0.0
            model_quantized = model_quantized or quantized(d["index"])
        else:
            op = producer.get(int(d["index"]))
            if op is not None and op["op_name"] == "DEQUANTIZE" and quantized(op["inputs"][0]):
                step = float(tensors[int(op["inputs"][0])]["quantization"][0])
        steps.append(step)
    return model_quantized, hybrid, steps


def load_inputs(specs, details):
    """--input values as {input index: array}; raises ValueError with a message."""
    given = {}
    for s, spec in enumerate(specs):
        name, sep, path = spec.partition("=")
        if not sep:
            name, path, index = "", spec, s
        else:
            matches = [i for i, d in enumerate(details) if d["name"] == name]
            if not matches:
                raise ValueError("--input %s: the model has no input named '%s' (inputs: %s)" % (
                    spec, name, ", ".join("'%s'" % d["name"] for d in details)))
            index = matches[0]
        if index >= len(details):
            raise ValueError("--input %s: the model has only %d inputs" % (spec, len(details)))
        a = np.load(path)
        want = np.dtype(details[index]["dtype"])
        if a.dtype != want:
            raise ValueError("%s is %s, but input %d ('%s') is %s" % (path, a.dtype.name, index,
                                                                      details[index]["name"], want.name))
        given[index] = a
    return given


def main(argv=None):
    p = argparse.ArgumentParser(description="Run a .tflite model with LiteRT and time it.")
    p.add_argument("model")
    p.add_argument("--threads", type=int, default=1, help="num_threads for the interpreter (default 1)")
    p.add_argument("--runs", type=int, default=10, help="timed runs (default 10)")
    p.add_argument("--warmup", type=int, default=2, help="untimed runs first (default 2)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--input", action="append", default=[], metavar="[NAME=]FILE.npy",
                   help="an input from a .npy file, as `kiln run --input` takes it")
    p.add_argument("--save-inputs", metavar="DIR", help="write the inputs used as DIR/<tensor name>.npy")
    p.add_argument("--save-outputs", metavar="DIR", help="write the outputs as DIR/output_<i>.npy")
    p.add_argument("--reference-resolver", action="store_true",
                   help="LiteRT's reference kernels (OpResolverType.BUILTIN_REF, no delegate) instead of its default")
    p.add_argument("--builtin-resolver", action="store_true",
                   help="LiteRT's builtin kernels without its default delegate "
                        "(OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)")
    args = p.parse_args(argv)
    if args.runs < 1 or args.warmup < 0:
        p.error("--runs must be at least 1 and --warmup at least 0")

    version = importlib.metadata.version("ai-edge-litert")
    print("model: %s (%d bytes)" % (args.model, os.path.getsize(args.model)))
    print("litert: ai-edge-litert %s, %d thread%s, default delegate (XNNPACK)" % (
        version, args.threads, "" if args.threads == 1 else "s"))
    sys.stdout.flush()
    start = time.perf_counter()
    try:
        if args.reference_resolver:
            from ai_edge_litert.interpreter import OpResolverType
            interp = Interpreter(model_path=args.model, num_threads=args.threads,
                                 experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
        elif args.builtin_resolver:
            from ai_edge_litert.interpreter import OpResolverType
            interp = Interpreter(model_path=args.model, num_threads=args.threads,
                                 experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
        else:
            interp = Interpreter(model_path=args.model, num_threads=args.threads)
        interp.allocate_tensors()
    except Exception as e:  # LiteRT raises RuntimeError or ValueError with its error reporter's text
        print("litert_bench: LiteRT cannot load %s: %s" % (args.model, " ".join(str(e).split())), file=sys.stderr)
        return CANNOT_RUN
    init_ms = (time.perf_counter() - start) * 1e3

    details = interp.get_input_details()
    try:
        given = load_inputs(args.input, details)
    except (ValueError, OSError) as e:
        print("litert_bench: %s" % e, file=sys.stderr)
        return 2
    rng = np.random.default_rng(args.seed)
    inputs = []
    try:
        for i, d in enumerate(details):
            if i in given:
                a, origin = given[i], "file"
                if tuple(a.shape) != tuple(int(x) for x in d["shape"]):
                    interp.resize_tensor_input(d["index"], list(a.shape))
                    interp.allocate_tensors()
            else:
                a = random_input(rng, d["dtype"], [int(x) for x in d["shape"]])
                origin = "random (seed %d)" % args.seed
            inputs.append(a)
            print("input %d '%s': %s <- %s" % (i, d["name"], describe({"dtype": a.dtype, "shape": a.shape}), origin))
        for d, a in zip(interp.get_input_details(), inputs):
            interp.set_tensor(d["index"], a)
    except (ValueError, RuntimeError) as e:
        print("litert_bench: LiteRT cannot take the inputs of %s: %s" % (args.model, " ".join(str(e).split())),
              file=sys.stderr)
        return CANNOT_RUN

    times = []
    try:
        for r in range(args.warmup + args.runs):
            t0 = time.perf_counter()
            interp.invoke()
            t1 = time.perf_counter()
            if r >= args.warmup:
                times.append((t1 - t0) * 1e3)
    except RuntimeError as e:
        print("litert_bench: LiteRT cannot run %s: %s" % (args.model, " ".join(str(e).split())), file=sys.stderr)
        return CANNOT_RUN

    print("init: %.3f ms (Interpreter, delegate, allocate_tensors)" % init_ms)
    print("inference: %d runs after %d warm-up: min %.3f ms, median %.3f ms, mean %.3f ms, max %.3f ms" % (
        len(times), args.warmup, min(times), statistics.median(times), statistics.fmean(times), max(times)))
    out_details = interp.get_output_details()
    outputs = [interp.get_tensor(d["index"]) for d in out_details]
    for i, (d, a) in enumerate(zip(out_details, outputs)):
        print("output %d '%s': %s = [%s]" % (i, d["name"], describe(d), first_values(a)))

    if args.save_inputs:
        os.makedirs(args.save_inputs, exist_ok=True)
        files = input_file_names(details)
        meta = []
        for i, (d, a, f) in enumerate(zip(details, inputs, files)):
            np.save(os.path.join(args.save_inputs, f), a)
            meta.append({"index": i, "name": d["name"], "file": f, "dtype": a.dtype.name, "shape": list(a.shape),
                         "quantization": [float(d["quantization"][0]), int(d["quantization"][1])]})
        with open(os.path.join(args.save_inputs, "inputs.json"), "w") as fp:
            json.dump({"model": os.path.abspath(args.model), "seed": args.seed, "inputs": meta}, fp, indent=1)
        # kiln matches NAME exactly and splits NAME=FILE at the first '=': names it cannot take go by position.
        names = [d["name"] for d in details]
        by_name = all(n and "=" not in n for n in names) and len(set(names)) == len(names)
        kiln_args = []
        for n, f in zip(names, files):
            path = os.path.join(args.save_inputs, f)
            kiln_args += ["--input", "%s=%s" % (n, path) if by_name else path]
        print("inputs saved in %s; the same inputs for Kiln: kiln run %s %s" % (
            args.save_inputs, shlex.quote(args.model), shlex.join(kiln_args)))
    if args.save_outputs:
        os.makedirs(args.save_outputs, exist_ok=True)
        model_quantized, hybrid, steps = quantization_info(interp)
        meta = []
        for i, (d, a, step) in enumerate(zip(out_details, outputs, steps)):
            f = "output_%d.npy" % i
            np.save(os.path.join(args.save_outputs, f), a)
            meta.append({"index": i, "name": d["name"], "file": f, "dtype": a.dtype.name, "shape": list(a.shape),
                         "quantization": [float(d["quantization"][0]), int(d["quantization"][1])], "step": step})
        with open(os.path.join(args.save_outputs, "outputs.json"), "w") as fp:
            json.dump({"model": os.path.abspath(args.model), "litert": version, "threads": args.threads,
                       "quantized": model_quantized, "hybrid": hybrid, "outputs": meta}, fp, indent=1)
        print("outputs saved in %s" % args.save_outputs)
    return 0


def serve():
    """--serve: one command per line of standard input, one JSON answer per line (see the top of the file)."""
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # C++ output must not mix with the answers
    for line in sys.stdin:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(json.loads(line))
            except SystemExit as e:  # argparse errors, sys.exit("message")
                if isinstance(e.code, int) or e.code is None:
                    rc = e.code or 0
                else:
                    print(e.code, file=sys.stderr)
                    rc = 1
            except Exception as e:  # what would end a single run with a traceback ends this command only
                print("litert_bench: %s: %s" % (type(e).__name__, e), file=sys.stderr)
                rc = 1
        answers.write(json.dumps({"rc": rc, "stdout": out.getvalue(), "stderr": err.getvalue()}) + "\n")
        answers.flush()
    return 0


if __name__ == "__main__":
    sys.exit(serve() if sys.argv[1:] == ["--serve"] else main())
