#!/usr/bin/env python3
"""`kiln run` with .npy inputs and outputs in a model's own integer types, and --dequantize-outputs.

1. For each of int8, uint8, int16, int32, int64, bool (and float32): a one-RESHAPE model ([2, 3] -> [3, 2]) of
   that type, written from JSON with flatc and Kiln's schema, runs on a NumPy-saved input; the output .npy
   must have the same dtype and equal x.reshape(3, 2). The int8 model's output is quantized per channel (two
   scales and zero points along dimension 1), so --dequantize-outputs must write output_0.dequantized.npy as
   float32 scale[c] * (q - zero_point[c]) and print that it wrote it. Random bool inputs are 0 or 1.
2. tm_hello_world_int8 (when the shared models are there): inputs -96, -63, -34, 0 (about 0.77, 1.57, 2.3,
   3.14; ../shared/models/MANIFEST.md); the dequantized output must be within 0.05 of sin of the input
   dequantized with the model's own input quantization, and equal to scale * (q - zero_point) of the int8
   output file.
3. --signature: a model of two subgraphs with a signature on each ("flat": [2, 3] -> [6] on subgraph 0,
   "unflat": [6] -> [3, 2] on subgraph 1); `kiln run --signature unflat` takes the input and prints the output
   by the signature's names; `kiln inspect` lists both; an unknown key fails, listing the keys.

4. An empty input: a one-ABS model ([2, 3] float32) run on a .npy of shape (0, 3) (LiteRT takes empty tensors)
   writes an output_0.npy of shape (0, 3).

Usage: check_run_npy.py KILN FLATC SCHEMA MODELS_DIR WORK_DIR
"""
import json
import os
import re
import subprocess
import sys

import numpy as np

from tool_checks import fail, write_model

TYPES = {"INT8": np.int8, "UINT8": np.uint8, "INT16": np.int16, "INT32": np.int32, "INT64": np.int64,
         "BOOL": np.bool_, "FLOAT32": np.float32}
RESHAPE = 22
# The int8 model's output quantization: two channels along dimension 1 of [3, 2].
SCALES = [0.5, 0.125]
ZERO_POINTS = [-3, 7]


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    print("$ " + " ".join(cmd))
    print(result.stdout + result.stderr)
    if result.returncode != 0:
        fail("%s exited %d" % (cmd[0], result.returncode))
    return result.stdout


def reshape_model(flatc, schema, work, type_name):
    tensor_type = {"type": type_name, "buffer": 0}
    output = dict(tensor_type, shape=[3, 2], name="y")
    if type_name == "INT8":
        output["quantization"] = {"scale": SCALES, "zero_point": ZERO_POINTS, "quantized_dimension": 1}
    model = {
        "version": 3,
        "operator_codes": [{"deprecated_builtin_code": RESHAPE, "builtin_code": "RESHAPE", "version": 1}],
        "subgraphs": [{
            "tensors": [dict(tensor_type, shape=[2, 3], name="x"), output],
            "inputs": [0], "outputs": [1],
            "operators": [{"opcode_index": 0, "inputs": [0], "outputs": [1],
                           "builtin_options_type": "ReshapeOptions", "builtin_options": {"new_shape": [3, 2]}}],
        }],
        "buffers": [{}],
    }
    return write_model(flatc, schema, work, "reshape_%s" % type_name.lower(), model)


def check_types(kiln, flatc, schema, work):
    rng = np.random.default_rng(7)
    for type_name, dtype in TYPES.items():
        model = reshape_model(flatc, schema, work, type_name)
        if dtype == np.bool_:
            x = rng.integers(0, 2, size=(2, 3)).astype(np.bool_)
        elif dtype == np.float32:
            x = rng.standard_normal((2, 3)).astype(np.float32)
        else:
            info = np.iinfo(dtype)
            x = rng.integers(info.min, info.max, size=(2, 3), dtype=dtype, endpoint=True)
        x_path = os.path.join(work, "x_%s.npy" % type_name.lower())
        np.save(x_path, x)
        out_dir = os.path.join(work, "out_%s" % type_name.lower())
        stdout = run([kiln, "run", model, "--input", "x=" + x_path, "--output-dir", out_dir, "--dequantize-outputs"])
        y = np.load(os.path.join(out_dir, "output_0.npy"))
        if y.dtype != dtype or y.shape != (3, 2) or not np.array_equal(y, x.reshape(3, 2)):
            fail("%s: output_0.npy is %s%s %s, expected %s%s %s" % (type_name, y.dtype, y.shape, y.tolist(),
                                                                  np.dtype(dtype), (3, 2), x.reshape(3, 2).tolist()))
        if dtype == np.bool_:
            # Random bools (no --input) are bytes 0 or 1, the only bytes NumPy and the kernels take as bools.
            random_dir = os.path.join(work, "out_bool_random")
            run([kiln, "run", model, "--output-dir", random_dir, "--seed", "3"])
            raw = np.load(os.path.join(random_dir, "output_0.npy")).view(np.uint8)
            if raw.max() > 1:
                fail("BOOL: random input bytes %s are not all 0 or 1" % raw.tolist())
        dequantized_path = os.path.join(out_dir, "output_0.dequantized.npy")
        if type_name != "INT8":
            if os.path.exists(dequantized_path) or "dequantized" in stdout:
                fail("%s: an output that is not quantized was dequantized" % type_name)
            continue
        if "wrote " + dequantized_path not in stdout:
            fail("INT8: kiln run did not say it wrote %s" % dequantized_path)
        real = np.load(dequantized_path)
        expected = (np.array(SCALES, np.float64) * (y.astype(np.float64) - np.array(ZERO_POINTS))).astype(np.float32)
        if real.dtype != np.float32 or not np.array_equal(real, expected):
            fail("INT8: dequantized %s %s, expected per-channel %s" % (real.dtype, real.tolist(), expected.tolist()))
        print("ok: %s round trip, per-channel dequantized %s" % (type_name, real.tolist()))


def check_empty_input(kiln, flatc, schema, work):
    model = {
        "version": 3,
        "operator_codes": [{"deprecated_builtin_code": 101, "builtin_code": "ABS", "version": 1}],
        "subgraphs": [{
            "tensors": [{"type": "FLOAT32", "buffer": 0, "shape": [2, 3], "name": "x"},
                        {"type": "FLOAT32", "buffer": 0, "shape": [2, 3], "name": "y"}],
            "inputs": [0], "outputs": [1],
            "operators": [{"opcode_index": 0, "inputs": [0], "outputs": [1]}],
        }],
        "buffers": [{}],
    }
    model_path = write_model(flatc, schema, work, "abs_empty", model)
    x_path = os.path.join(work, "x_empty.npy")
    np.save(x_path, np.zeros((0, 3), np.float32))
    out_dir = os.path.join(work, "out_empty")
    run([kiln, "run", model_path, "--input", "x=" + x_path, "--output-dir", out_dir])
    y = np.load(os.path.join(out_dir, "output_0.npy"))
    if y.dtype != np.float32 or y.shape != (0, 3):
        fail("empty input: output_0.npy is %s%s, expected float32 (0, 3)" % (y.dtype, y.shape))
    print("ok: an empty (0, 3) input gives an empty (0, 3) output")


def check_signatures(kiln, flatc, schema, work):
    """--signature runs a signature's subgraph (1 here), by the signature's input and output names."""
    def reshape_graph(in_shape, out_shape, in_name, out_name):
        return {"tensors": [{"type": "FLOAT32", "buffer": 0, "shape": in_shape, "name": in_name},
                            {"type": "FLOAT32", "buffer": 0, "shape": out_shape, "name": out_name}],
                "inputs": [0], "outputs": [1],
                "operators": [{"opcode_index": 0, "inputs": [0], "outputs": [1],
                               "builtin_options_type": "ReshapeOptions", "builtin_options": {"new_shape": out_shape}}]}
    model = {
        "version": 3,
        "operator_codes": [{"deprecated_builtin_code": RESHAPE, "builtin_code": "RESHAPE", "version": 1}],
        "subgraphs": [reshape_graph([2, 3], [6], "x", "y"), reshape_graph([6], [3, 2], "a", "b")],
        "buffers": [{}],
        "signature_defs": [
            {"signature_key": "flat", "subgraph_index": 0, "inputs": [{"name": "grid", "tensor_index": 0}],
             "outputs": [{"name": "row", "tensor_index": 1}]},
            {"signature_key": "unflat", "subgraph_index": 1, "inputs": [{"name": "row_in", "tensor_index": 0}],
             "outputs": [{"name": "pairs", "tensor_index": 1}]}],
    }
    path = write_model(flatc, schema, work, "two_signatures", model)
    x = np.arange(6, dtype=np.float32) * 1.5
    x_path = os.path.join(work, "row.npy")
    np.save(x_path, x)
    out_dir = os.path.join(work, "out_signature")
    stdout = run([kiln, "run", path, "--signature", "unflat", "--input", "row_in=" + x_path, "--output-dir", out_dir])
    if "output 0 'pairs': float32[3, 2]" not in stdout:
        fail("--signature unflat: the output is not printed as 'pairs' float32[3, 2]")
    y = np.load(os.path.join(out_dir, "output_0.npy"))
    if y.shape != (3, 2) or not np.array_equal(y, x.reshape(3, 2)):
        fail("--signature unflat: output %s%s, expected %s" % (y.shape, y.tolist(), x.reshape(3, 2).tolist()))
    stdout = run([kiln, "inspect", path])
    if "signature 1: 'unflat' (subgraph 1)" not in stdout or "input 'row_in' (tensor 0)" not in stdout:
        fail("kiln inspect does not list the signatures")
    bad = subprocess.run([kiln, "run", path, "--signature", "nope"], capture_output=True, text=True)
    if bad.returncode == 0 or "the model's signatures are: 'flat', 'unflat'" not in bad.stderr:
        fail("--signature nope: exit %d, stderr %s" % (bad.returncode, bad.stderr))
    print("ok: --signature runs subgraph 1 by the signature's names; inspect lists the signatures")


def check_hello_world(kiln, flatc, schema, models, work):
    model = os.path.join(models, "tm_hello_world_int8.tflite")
    if not os.path.exists(model):
        if os.environ.get("KILN_REQUIRE_SHARED_DATA", "0") not in ("", "0"):
            fail("%s is absent, and KILN_REQUIRE_SHARED_DATA says the shared models must be there" % model)
        print("skipped: %s is absent (the shared models folder is not there)" % model)
        return False
    # The input's own quantization, read from the file through flatc's JSON (6 digits are plenty here).
    subprocess.run([flatc, "--json", "--strict-json", "--defaults-json", "--raw-binary", "-o", work, schema, "--",
                    model], check=True)
    with open(os.path.join(work, "tm_hello_world_int8.json")) as f:
        graph = json.load(f)["subgraphs"][0]
    quantization = graph["tensors"][graph["inputs"][0]]["quantization"]
    in_scale, in_zero_point = quantization["scale"][0], quantization["zero_point"][0]
    for q_in in (-96, -63, -34, 0):
        x_path = os.path.join(work, "hello_%d.npy" % q_in)
        np.save(x_path, np.array([[q_in]], dtype=np.int8))
        out_dir = os.path.join(work, "hello_out_%d" % q_in)
        stdout = run([kiln, "run", model, "--input", x_path, "--output-dir", out_dir, "--dequantize-outputs"])
        match = re.search(r"dequantized \(scale ([0-9.eE+-]+), zero point (-?\d+)\)", stdout)
        if match is None:
            fail("hello_world: no dequantized line")
        scale, zero_point = float(match.group(1)), int(match.group(2))
        q = np.load(os.path.join(out_dir, "output_0.npy"))
        real = np.load(os.path.join(out_dir, "output_0.dequantized.npy"))
        if q.dtype != np.int8 or real.dtype != np.float32 or real.shape != q.shape:
            fail("hello_world: output files are %s%s and %s%s" % (q.dtype, q.shape, real.dtype, real.shape))
        if abs(float(real[0, 0]) - scale * (int(q[0, 0]) - zero_point)) > 1e-6:
            fail("hello_world: dequantized %g is not %g * (%d - %d)" % (real[0, 0], scale, q[0, 0], zero_point))
        x_real = in_scale * (q_in - in_zero_point)
        if abs(float(real[0, 0]) - np.sin(x_real)) > 0.05:
            fail("hello_world: input %d (x = %.3f): dequantized output %.4f is not within 0.05 of sin(x) = %.4f"
                 % (q_in, x_real, real[0, 0], np.sin(x_real)))
        print("ok: hello_world x = %.3f: %.4f vs sin(x) = %.4f" % (x_real, real[0, 0], np.sin(x_real)))
    return True


def main():
    kiln, flatc, schema, models, work = sys.argv[1:6]
    os.makedirs(work, exist_ok=True)
    check_types(kiln, flatc, schema, work)
    check_signatures(kiln, flatc, schema, work)
    check_empty_input(kiln, flatc, schema, work)
    check_hello_world(kiln, flatc, schema, models, work)
    print("passed")


if __name__ == "__main__":
    main()
