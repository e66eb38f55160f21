#!/usr/bin/env python3
"""An independent NumPy implementation of the float .tflite ops, to check Kiln on real models.

It reads a model through `flatc --json` with Kiln's schema, evaluates the graph with NumPy (convolutions as
sums of shifted slices, pooling with explicit valid-cell counts: none of Kiln's code), runs `kiln run` on the
same seeded inputs, and compares every output to 1e-4 relative.

usage: numpy_reference.py --kiln KILN --flatc FLATC --schema tflite.fbs MODEL.tflite...
Prints one line per model and ends with 'N passed, N failed'.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

DTYPES = {"FLOAT32": np.float32, "INT32": np.int32, "INT8": np.int8, "UINT8": np.uint8, "INT64": np.int64,
          "INT16": np.int16, "FLOAT16": np.float16, "BOOL": np.bool_}


def builtin_names(schema):
    text = open(schema).read()
    block = re.search(r"enum BuiltinOperator\s*:\s*int\s*{(.*?)}", text, re.S).group(1)
    return {int(v): k for k, v in re.findall(r"(\w+)\s*=\s*(-?\d+)", block)}


def exact_scales(flatc, schema, model, workdir):
    """Quantization scales as the float32 values stored in the file (flatc's JSON rounds floats to 6 digits,
    which is too coarse for dequantized weights). Read with FlatBuffers' Python runtime and code flatc generates
    from the same schema."""
    gen = os.path.join(workdir, "py")
    subprocess.run([flatc, "--python", "-o", gen, schema], check=True, capture_output=True)
    sys.path.insert(0, gen)
    try:
        import importlib
        Model = importlib.import_module("kiln.tflite.Model").Model
        with open(model, "rb") as f:
            buf = f.read()
        g = Model.GetRootAs(buf, 0).Subgraphs(0)
        scales = {}
        for i in range(g.TensorsLength()):
            q = g.Tensors(i).Quantization()
            if q is not None and q.ScaleLength() > 0:
                scales[i] = q.ScaleAsNumpy().astype(np.float64)
        return scales
    finally:
        sys.path.remove(gen)
        for name in [n for n in sys.modules if n == "kiln" or n.startswith("kiln.")]:
            del sys.modules[name]


def load_model(flatc, schema, model, workdir):
    subprocess.run([flatc, "--json", "--strict-json", "--defaults-json", "--raw-binary", "-o", workdir, schema,
                    "--", model], check=True, capture_output=True)
    name = os.path.splitext(os.path.basename(model))[0] + ".json"
    with open(os.path.join(workdir, name)) as f:
        return json.load(f)


def activation(x, name):
    if name in (None, "NONE"):
        return x
    if name == "RELU":
        return np.maximum(x, 0)
    if name == "RELU6":
        return np.clip(x, 0, 6)
    if name == "RELU_N1_TO_1":
        return np.clip(x, -1, 1)
    if name == "TANH":
        return np.tanh(x)
    raise NotImplementedError("activation " + name)


def same_or_valid(padding, size, kernel, stride, dilation):
    effective = (kernel - 1) * dilation + 1
    if padding == "SAME":
        out = (size + stride - 1) // stride
        total = max((out - 1) * stride + effective - size, 0)
        return out, total // 2, total - total // 2
    return (size - effective) // stride + 1, 0, 0


def windows(x, kh, kw, o, pad_value):
    """Pads NHWC `x` for options `o` and yields (ky, kx, slice) for each kernel tap; returns (OH, OW)."""
    sh, sw = o.get("stride_h", 1), o.get("stride_w", 1)
    dh, dw = o.get("dilation_h_factor", 1), o.get("dilation_w_factor", 1)
    oh, top, bottom = same_or_valid(o["padding"], x.shape[1], kh, sh, dh)
    ow, left, right = same_or_valid(o["padding"], x.shape[2], kw, sw, dw)
    xp = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=pad_value)
    taps = []
    for ky in range(kh):
        for kx in range(kw):
            y0, x0 = ky * dh, kx * dw
            taps.append((ky, kx, xp[:, y0:y0 + (oh - 1) * sh + 1:sh, x0:x0 + (ow - 1) * sw + 1:sw, :]))
    return taps


def conv2d(x, w, b, o):
    out = None
    for ky, kx, s in windows(x.astype(np.float64), w.shape[1], w.shape[2], o, 0.0):
        term = np.einsum("nhwi,oi->nhwo", s, w[:, ky, kx, :].astype(np.float64))
        out = term if out is None else out + term
    if b is not None:
        out = out + b
    return activation(out, o.get("fused_activation_function"))


def depthwise(x, w, b, o):
    m = o.get("depth_multiplier", 1) or w.shape[3] // x.shape[3]
    xr = np.repeat(x.astype(np.float64), m, axis=3)
    out = None
    for ky, kx, s in windows(xr, w.shape[1], w.shape[2], o, 0.0):
        term = s * w[0, ky, kx, :]
        out = term if out is None else out + term
    if b is not None:
        out = out + b
    return activation(out, o.get("fused_activation_function"))


def pool(x, o, kind):
    kh, kw = o["filter_height"], o["filter_width"]
    if kind == "max":
        taps = windows(x, kh, kw, o, -np.inf)
        out = np.max(np.stack([t for _, _, t in taps]), axis=0)
    else:
        taps = windows(x.astype(np.float64), kh, kw, o, 0.0)
        ones = windows(np.ones_like(x, dtype=np.float64), kh, kw, o, 0.0)
        out = sum(t for _, _, t in taps) / sum(t for _, _, t in ones)
    return activation(out, o.get("fused_activation_function"))


class Graph:
    def __init__(self, model, names, scales=None):
        self.model = model
        self.scales = scales or {}
        self.g = model["subgraphs"][0]
        self.names = names

    def const(self, index):
        t = self.g["tensors"][index]
        buf = self.model["buffers"][t.get("buffer", 0)]
        data = buf.get("data")
        if not data:
            return None
        value = np.frombuffer(bytes(data), dtype=DTYPES[t["type"]]).reshape(t.get("shape", []))
        q = t.get("quantization") or {}
        if t["type"] in ("INT8", "UINT8", "INT16") and q.get("scale"):
            # Hybrid models keep float activations and quantized weights: dequantize the weights.
            shape = [1] * value.ndim
            if len(q["scale"]) > 1:
                shape[q.get("quantized_dimension", 0)] = -1
            scale = self.scales.get(index, np.array(q["scale"], dtype=np.float64)).reshape(shape)
            zero = np.array(q.get("zero_point") or [0], dtype=np.float64).reshape(shape if len(q["scale"]) > 1 else [1])
            value = (value.astype(np.float64) - zero) * scale
        return value

    def op_name(self, op):
        code = self.model["operator_codes"][op.get("opcode_index", 0)]
        b = code.get("builtin_code", "ADD")
        b = b if isinstance(b, int) else [k for k, v in self.names.items() if v == b][0]
        return self.names[max(b, code.get("deprecated_builtin_code", 0))]

    def run(self, inputs):
        values = {}
        for i, t in enumerate(self.g["inputs"]):
            values[t] = inputs[i]
        get = lambda i: None if i < 0 else (values[i] if i in values else self.const(i))
        for op in self.g["operators"]:
            name = self.op_name(op)
            ins = [get(i) for i in op["inputs"]]
            o = op.get("builtin_options") or {}
            out_t = self.g["tensors"][op["outputs"][0]]
            if name == "CONV_2D":
                y = conv2d(ins[0], ins[1], ins[2] if len(ins) > 2 else None, o)
            elif name == "DEPTHWISE_CONV_2D":
                y = depthwise(ins[0], ins[1], ins[2] if len(ins) > 2 else None, o)
            elif name == "AVERAGE_POOL_2D":
                y = pool(ins[0], o, "avg")
            elif name == "MAX_POOL_2D":
                y = pool(ins[0], o, "max")
            elif name == "FULLY_CONNECTED":
                w = ins[1].astype(np.float64)
                y = ins[0].astype(np.float64).reshape(-1, w.shape[1]) @ w.T
                if len(ins) > 2 and ins[2] is not None:
                    y = y + ins[2]
                y = activation(y, o.get("fused_activation_function"))
                if o.get("keep_num_dims"):
                    y = y.reshape(list(ins[0].shape[:-1]) + [w.shape[0]])
            elif name in ("RESHAPE", "SQUEEZE"):
                shape = [d for d in out_t.get("shape", [])]
                y = ins[0].reshape(shape) if shape else ins[0].reshape([])
            elif name == "SOFTMAX":
                z = ins[0].astype(np.float64) * o.get("beta", 1.0)
                z = np.exp(z - z.max(axis=-1, keepdims=True))
                y = z / z.sum(axis=-1, keepdims=True)
            elif name in ("ADD", "SUB", "MUL", "DIV"):
                a, b = ins[0].astype(np.float64), ins[1].astype(np.float64)
                y = {"ADD": a + b, "SUB": a - b, "MUL": a * b, "DIV": a / b}[name]
                y = activation(y, o.get("fused_activation_function"))
            elif name == "CONCATENATION":
                y = activation(np.concatenate(ins, axis=o.get("axis", 0)), o.get("fused_activation_function"))
            elif name == "LOGISTIC":
                y = 1 / (1 + np.exp(-ins[0].astype(np.float64)))
            elif name == "TANH":
                y = np.tanh(ins[0].astype(np.float64))
            elif name == "RELU":
                y = np.maximum(ins[0], 0)
            elif name == "RELU6":
                y = np.clip(ins[0], 0, 6)
            elif name == "MEAN":
                axes = tuple(int(a) % ins[0].ndim for a in np.atleast_1d(ins[1]))
                y = ins[0].astype(np.float64).mean(axis=axes, keepdims=bool(o.get("keep_dims")))
            elif name == "PAD":
                y = np.pad(ins[0], [tuple(p) for p in ins[1]])
            elif name == "TRANSPOSE":
                y = np.transpose(ins[0], ins[1])
            else:
                raise NotImplementedError(name)
            values[op["outputs"][0]] = np.asarray(y, dtype=np.float32)
        return [values[t] for t in self.g["outputs"]]


def check(model_path, args, names):
    with tempfile.TemporaryDirectory() as work:
        graph = Graph(load_model(args.flatc, args.schema, model_path, work), names,
                      exact_scales(args.flatc, args.schema, model_path, work))
        rng = np.random.default_rng(1234)
        inputs, cmd = [], [args.kiln, "run", model_path, "--output-dir", work]
        for i, t in enumerate(graph.g["inputs"]):
            tensor = graph.g["tensors"][t]
            if tensor["type"] != "FLOAT32":
                return "skipped (non-float input)"
            x = rng.uniform(-1, 1, size=tensor.get("shape", [])).astype(np.float32)
            np.save(os.path.join(work, "in%d.npy" % i), x)
            cmd += ["--input", os.path.join(work, "in%d.npy" % i)]
            inputs.append(x)
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            raise AssertionError("kiln run failed:\n" + run.stdout + run.stderr)
        want = graph.run(inputs)
        for i, ref in enumerate(want):
            got = np.load(os.path.join(work, "output_%d.npy" % i))
            if got.shape != ref.shape:
                raise AssertionError("output %d shape %s, numpy %s" % (i, got.shape, ref.shape))
            err = np.abs(got.astype(np.float64) - ref) - (1e-4 * np.abs(ref) + 1e-6)
            if np.any(~(err <= 0)):
                k = int(np.argmax(err))
                raise AssertionError("output %d[%d] = %r, numpy %r" % (i, k, got.flat[k], ref.flat[k]))
        return "ok (%d outputs)" % len(want)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kiln", required=True)
    p.add_argument("--flatc", required=True)
    p.add_argument("--schema", required=True)
    p.add_argument("models", nargs="+")
    args = p.parse_args()
    names = builtin_names(args.schema)
    passed = failed = skipped = 0
    for m in args.models:
        if not os.path.exists(m):
            if os.environ.get("KILN_REQUIRE_SHARED_DATA", "0") not in ("", "0"):
                print("%s: FAILED: not found, and KILN_REQUIRE_SHARED_DATA says ../shared/models is there" % m)
                failed += 1
                continue
            print("%s: skipped: not found (../shared/models absent?)" % m)
            skipped += 1
            continue
        try:
            result = check(m, args, names)
            print("%s: %s" % (os.path.basename(m), result))
            if result.startswith("skipped"):
                skipped += 1
            else:
                passed += 1
        except Exception as e:  # report every model, then fail
            print("%s: FAILED: %s" % (os.path.basename(m), e))
            failed += 1
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    if failed:
        return 1
    return 77 if passed == 0 else 0  # nothing checked (no models here): a skip, not a pass


if __name__ == "__main__":
    sys.exit(main())
