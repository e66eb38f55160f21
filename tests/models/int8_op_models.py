#!/usr/bin/env python3
"""Writes single-op int8 .tflite models of the ops with int8 kernels, for litert_compare.py --generate: each op
over scales from 1e-5 to 2, zero points at both ends of int8, broadcasting and fused activations, so that Kiln's
int8 kernels are held byte for byte to LiteRT's reference resolver op by op, not only inside real models.

usage: int8_op_models.py OUT_DIR   (run with the Python of the LiteRT environment bench/litert_env.sh makes: it
                                    needs ai_edge_litert's flatbuffer schema and the flatbuffers package)

ELU is left out: LiteRT's reference resolver has no ELU kernel (Kiln's int8 ELU equals LiteRT's builtin kernel on
all 256 inputs for five input quantizations, checked once when it was written).
"""
import os
import sys

import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as S

OPS = S.BuiltinOperator
ACTIVATIONS = {"none": S.ActivationFunctionType.NONE, "relu": S.ActivationFunctionType.RELU,
               "relu6": S.ActivationFunctionType.RELU6, "relu1": S.ActivationFunctionType.RELU_N1_TO_1}


TYPES = {np.int8: S.TensorType.INT8, np.uint8: S.TensorType.UINT8, np.int16: S.TensorType.INT16,
         np.float32: S.TensorType.FLOAT32, np.int32: S.TensorType.INT32, np.int64: S.TensorType.INT64}


class OneOpModel:
    """A model of one operator on per-tensor quantized tensors (int8 unless `dtype` says otherwise)."""

    def __init__(self, out_dir, dtype=np.int8):
        self.out_dir = out_dir
        self.dtype = dtype
        self.tensors, self.buffers, self.inputs = [], [S.BufferT()], []

    def tensor(self, shape, scale, zero_point, name, data=None, is_input=True, dtype=None):
        """Adds a tensor; a constant when `data` is given, else a model input unless is_input is False. A scale of
        None leaves it unquantized."""
        dtype = dtype or self.dtype
        t = S.TensorT()
        if scale is not None:
            q = S.QuantizationParametersT()
            if np.ndim(scale):  # per channel along dimension 0, zero points 0
                q.scale, q.zeroPoint, q.quantizedDimension = [float(v) for v in scale], [0] * len(scale), 0
            else:
                q.scale, q.zeroPoint = [float(scale)], [int(zero_point)]
            t.quantization = q
        t.shape, t.type, t.name, t.buffer = list(shape), TYPES[dtype], name, 0
        if data is not None:
            b = S.BufferT()
            b.data = list(np.asarray(data, dtype=dtype).view(np.uint8).tobytes())
            self.buffers.append(b)
            t.buffer = len(self.buffers) - 1
        elif is_input:
            self.inputs.append(len(self.tensors))
        self.tensors.append(t)
        return len(self.tensors) - 1

    def int32_constant(self, values, name):
        """Adds a constant int32 tensor (axes, sizes), unquantized."""
        t = S.TensorT()
        values = np.asarray(values, dtype=np.int32)
        t.shape, t.type, t.name = list(values.shape), S.TensorType.INT32, name
        b = S.BufferT()
        b.data = list(values.tobytes())
        self.buffers.append(b)
        t.buffer = len(self.buffers) - 1
        self.tensors.append(t)
        return len(self.tensors) - 1

    def write(self, name, code, version, inputs, output, options_type=0, options=None):
        opcode = S.OperatorCodeT()
        opcode.builtinCode, opcode.deprecatedBuiltinCode, opcode.version = code, min(code, 127), version
        op = S.OperatorT()
        op.opcodeIndex, op.inputs, op.outputs = 0, inputs, [output]
        op.builtinOptionsType, op.builtinOptions = options_type, options
        graph = S.SubGraphT()
        graph.tensors, graph.inputs, graph.outputs, graph.operators = self.tensors, self.inputs, [output], [op]
        graph.name = "main"
        model = S.ModelT()
        model.version, model.operatorCodes, model.subgraphs, model.buffers = 3, [opcode], [graph], self.buffers
        model.description = "int8_op_models.py"
        builder = flatbuffers.Builder(1024)
        builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
        with open(os.path.join(self.out_dir, name + ".tflite"), "wb") as f:
            f.write(builder.Output())


def fused_options(code, activation):
    if code in (OPS.ADD, OPS.SUB, OPS.MUL):
        kind = {OPS.ADD: "Add", OPS.SUB: "Sub", OPS.MUL: "Mul"}[code]
        options = getattr(S, kind + "OptionsT")()
        options.fusedActivationFunction = ACTIVATIONS[activation]
        return getattr(S.BuiltinOptions, kind + "Options"), options
    return 0, None


def binary(out_dir, name, code, version, a_quant, b_quant, out_quant, a_shape, b_shape, activation="none",
           dtype=np.int8):
    m = OneOpModel(out_dir, dtype)
    a = m.tensor(a_shape, *a_quant, "a")
    b = m.tensor(b_shape, *b_quant, "b")
    y = m.tensor(np.broadcast_shapes(a_shape, b_shape), *out_quant, "y", is_input=False)
    m.write(name, code, version, [a, b], y, *fused_options(code, activation))


def unary(out_dir, name, code, version, in_quant, out_quant, options_type=0, options=None, dtype=np.int8,
          out_dtype=None):
    # 1024 random inputs (litert_compare draws them over the whole int8 range) reach almost every stored value.
    m = OneOpModel(out_dir, dtype)
    x = m.tensor((4, 16, 16), *in_quant, "x")
    y = m.tensor((4, 16, 16), *out_quant, "y", is_input=False, dtype=out_dtype)
    m.write(name, code, version, [x], y, options_type, options)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    s4 = (2, 3, 4, 5)
    # (a scale, zp), (b scale, zp), (output scale, zp), a shape, b shape, fused activation
    arithmetic = [((0.05, 3), (0.05, -7), (0.1, 0), s4, s4, "none"),
                  ((0.5, -128), (0.0039215, 127), (0.1, -5), s4, (1, 1, 4, 1), "none"),
                  ((1e-5, 0), (0.1, 10), (0.0078125, 127), s4, (5,), "relu6"),
                  ((0.02, 127), (2.0, -128), (3.0, -128), (3, 1, 5), (1, 4, 1), "relu"),
                  ((0.1, 0), (0.1, 0), (1e-3, 0), s4, (1,), "relu1")]
    for i, case in enumerate(arithmetic):
        for op, code in (("add", OPS.ADD), ("sub", OPS.SUB), ("mul", OPS.MUL)):
            binary(out, "q8_%s_%d" % (op, i), code, 2, *case)
    for i, (a_shape, b_shape) in enumerate([(s4, s4), (s4, (1, 3, 1, 5)), ((7,), (1,))]):
        for op, code in (("maximum", OPS.MAXIMUM), ("minimum", OPS.MINIMUM)):
            binary(out, "q8_%s_%d" % (op, i), code, 2, (0.1, -3), (0.1, -3), (0.1, -3), a_shape, b_shape)

    for i, quant in enumerate([(0.1, 0), (0.02, -128), (1.0 / 16, 127), (0.5, 5), (1e-3, -20)]):
        unary(out, "q8_logistic_%d" % i, OPS.LOGISTIC, 2, quant, (1.0 / 256, -128))
        unary(out, "q8_tanh_%d" % i, OPS.TANH, 2, quant, (1.0 / 128, 0))
    unary(out, "q8_tanh_5", OPS.TANH, 2, (0.05, 0), (0.01, -7))  # TANH takes any output quantization
    # LOG_SOFTMAX: the output quantization LiteRT requires; input scales from fine to coarse (1e-5 to 31: from 16 up
    # the input multiplier's exponent is 31), rows of 1 to 1000.
    for i, (in_quant, shape) in enumerate([((0.1, 0), (4, 16, 16)), ((0.02, -128), (8, 128)), ((1.0 / 16, 127), (2, 1000)),
                                           ((0.5, 5), (64, 16)), ((1e-3, -20), (32, 32)), ((0.25, 0), (100, 1)),
                                           ((3.0, 0), (16, 64)), ((1e-5, -128), (8, 64)), ((16.0, 127), (16, 64)),
                                           ((31.0, -100), (8, 64))]):
        m = OneOpModel(out)
        x = m.tensor(shape, *in_quant, "x")
        y = m.tensor(shape, 16.0 / 256, 127, "y", is_input=False)
        m.write("q8_log_softmax_%d" % i, OPS.LOG_SOFTMAX, 2, [x], y)
        if i < 3:
            m = OneOpModel(out, np.float32)
            x = m.tensor(shape, None, 0, "x")
            y = m.tensor(shape, None, 0, "y", is_input=False)
            m.write("f32_log_softmax_%d" % i, OPS.LOG_SOFTMAX, 1, [x], y)
    # EXP: a table of exp; outputs that saturate (kept below 2^31 steps: beyond, LiteRT's float-to-int conversion
    # is undefined, where Kiln saturates).
    exps = [((0.05, 0), (2.5, -128)), ((0.02, 127), (0.01, -128)), ((0.1, -128), (100.0, -128)),
            ((1e-3, 0), (0.004, -128)), ((0.05, 0), (0.5, 0)), ((0.03, -60), (0.05, 100))]
    for i, (in_quant, out_quant) in enumerate(exps):
        unary(out, "q8_exp_%d" % i, OPS.EXP, 2, in_quant, out_quant)
    relus = [((0.1, 0), (0.1, 0)), ((0.1, -20), (0.05, -128)), ((0.03, 127), (0.07, -100)), ((2.0, 10), (0.01, 0)),
             ((1e-4, 0), (0.5, 3))]
    for i, (in_quant, out_quant) in enumerate(relus):
        unary(out, "q8_relu_%d" % i, OPS.RELU, 2, in_quant, out_quant)
        unary(out, "q8_relu6_%d" % i, OPS.RELU6, 2, in_quant, out_quant)
        unary(out, "q8_relun1to1_%d" % i, OPS.RELU_N1_TO_1, 1, in_quant, out_quant)
        for j, alpha in enumerate([0.2, -0.5, 1.7]):
            options = S.LeakyReluOptionsT()
            options.alpha = alpha
            unary(out, "q8_leakyrelu_%d_%d" % (i, j), OPS.LEAKY_RELU, 2, in_quant, out_quant,
                  S.BuiltinOptions.LeakyReluOptions, options)
    hard_swishes = [((0.05, -10), (0.03, -100)), ((0.1, 0), (0.1, 0)), ((0.02, 127), (0.5, -128)),
                    ((1e-3, 0), (1e-3, 5)), ((0.2, -128), (0.01, 0)), ((0.5, 3), (0.004, -128))]
    for i, (in_quant, out_quant) in enumerate(hard_swishes):
        unary(out, "q8_hardswish_%d" % i, OPS.HARD_SWISH, 1, in_quant, out_quant)
    # QUANTIZE int8 -> int8; ratio 0.25 with zero point 0 meets ties on negative values, where roundings differ.
    requantizes = [((0.1, 0), (0.2, 0)), ((0.05, 0), (0.2, 127)), ((0.37, 3), (0.11, -9)), ((1e-3, 10), (1e-4, 0))]
    for i, (in_quant, out_quant) in enumerate(requantizes):
        unary(out, "q8_requantize_%d" % i, OPS.QUANTIZE, 2, in_quant, out_quant)

    # PRELU with a constant alpha, broadcast along the channels.
    rng = np.random.default_rng(3)
    prelus = [((0.1, 0), (0.01, 0), (0.1, 0), (1, 1, 8)), ((0.05, -20), (0.004, -128), (0.02, 30), (8,)),
              ((0.3, 127), (0.02, 50), (0.07, -128), (1, 4, 1, 8))]
    for i, (in_quant, alpha_quant, out_quant, alpha_shape) in enumerate(prelus):
        m = OneOpModel(out)
        x = m.tensor((2, 4, 4, 8), *in_quant, "x")
        alpha = m.tensor(alpha_shape, *alpha_quant, "alpha", data=rng.integers(-128, 128, size=alpha_shape))
        y = m.tensor((2, 4, 4, 8), *out_quant, "y", is_input=False)
        m.write("q8_prelu_%d" % i, OPS.PRELU, 1, [x, alpha], y)

    # CONCATENATION of three inputs quantized as the output.
    for i, axis in enumerate([1, -1, 0]):
        m = OneOpModel(out)
        inputs = [m.tensor((2, 3, 4), 0.1, 7, name) for name in ("x", "y", "z")]
        shape = [2, 3, 4]
        shape[axis] *= 3
        y = m.tensor(shape, 0.1, 7, "out", is_input=False)
        options = S.ConcatenationOptionsT()
        options.axis = axis
        m.write("q8_concat_%d" % i, OPS.CONCATENATION, 2, inputs, y, S.BuiltinOptions.ConcatenationOptions, options)

    reduce_ops(out)
    # FULLY_CONNECTED with a multiplier of exactly 2^-6 (scales 0.5 * 0.5 / 16): every 64th output is a tie, which
    # tells LiteRT's rounding apart (ties away from zero; half up and gemmlowp's double rounding both differ).
    m = OneOpModel(out)
    x = m.tensor((256, 1), 0.5, 0, "x")
    w = m.tensor((16, 1), 0.5, 0, "w", data=np.random.default_rng(5).integers(-127, 128, size=(16, 1)))
    y = m.tensor((256, 16), 16.0, 0, "y", is_input=False)
    m.write("q8_fc_ties", OPS.FULLY_CONNECTED, 4, [x, w], y, S.BuiltinOptions.FullyConnectedOptions,
            S.FullyConnectedOptionsT())
    fc_large_sum_ops(out)
    transpose_conv_ops(out)
    resize_ops(out, np.int8, "q8")
    batch_matmul_ops(out)
    l2_norm_ops(out, np.int8, "q8")


def batch_matmul16_ops(out):
    """BATCH_MATMUL int16 (zero points 0): batch broadcast, adj_x / adj_y, a constant rhs, sums past int32 (k = 64
    and 256 over the whole int16 range)."""
    cases = [((2, 3, 4), (2, 4, 5), False, False, 0.001, 0.002, 0.01, False),
             ((3, 4), (2, 4, 5), False, False, 0.05, 0.0001, 0.001, False),
             ((2, 1, 4, 3), (1, 3, 5, 4), True, True, 0.0003, 0.0007, 0.002, False),
             ((1, 2, 6, 7), (7, 3), False, False, 0.013, 0.011, 4.0, True),
             ((4, 64), (64, 3), False, False, 0.002, 0.003, 0.5, False),
             ((2, 256), (256, 2), False, False, 0.5, 0.5, 2.0 ** 14, False)]
    for i, (a_shape, b_shape, adj_x, adj_y, a_s, b_s, y_s, const_rhs) in enumerate(cases):
        m = OneOpModel(out, np.int16)
        a = m.tensor(a_shape, a_s, 0, "lhs")
        data = np.random.default_rng(40 + i).integers(-32768, 32768, size=b_shape) if const_rhs else None
        b = m.tensor(b_shape, b_s, 0, "rhs", data=data)
        rows = a_shape[-1] if adj_x else a_shape[-2]
        cols = b_shape[-2] if adj_y else b_shape[-1]
        batch = np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
        y = m.tensor(tuple(batch) + (rows, cols), y_s, 0, "y", is_input=False)
        options = S.BatchMatMulOptionsT()
        options.adjX, options.adjY = adj_x, adj_y
        m.write("q16_batch_matmul_%d" % i, OPS.BATCH_MATMUL, 3, [a, b], y, S.BuiltinOptions.BatchMatMulOptions,
                options)


def l2_norm_ops(out, dtype, prefix):
    """L2_NORMALIZATION int8 / uint8 (output 1/128, zero point 0 or 128, as LiteRT requires): rows of 1 to 300,
    input zero points at both ends of the type, ranks 1 to 4."""
    lo = -128 if dtype == np.int8 else 0
    out_zp = 0 if dtype == np.int8 else 128
    # shape, input scale, input zero point (offset from the type's minimum)
    cases = [((2, 3, 8), 0.05, 128), ((4, 16), 0.5, 0), ((1, 2, 3, 100), 0.01, 178), ((5, 1), 1.0, 128),
             ((3, 7), 2.0, 255), ((6, 300), 0.003, 120), ((37,), 0.1, 100)]
    for i, (shape, scale, zp) in enumerate(cases):
        m = OneOpModel(out, dtype)
        x = m.tensor(shape, scale, lo + zp, "x")
        y = m.tensor(shape, 1.0 / 128, out_zp, "y", is_input=False)
        options = S.L2NormOptionsT()
        m.write("%s_l2_norm_%d" % (prefix, i), OPS.L2_NORMALIZATION, 2 if dtype == np.int8 else 1, [x], y,
                S.BuiltinOptions.L2NormOptions, options)


def batch_matmul_ops(out):
    """BATCH_MATMUL int8: batch broadcast both ways, adj_x / adj_y, a constant rhs, zero points at both ends of
    int8, a long summed dimension, and a multiplier of exactly 2^-8 (0.5 * 0.5 / 64) where ties are frequent."""
    # lhs shape, rhs shape, adj_x, adj_y, (lhs scale, zp), (rhs scale, zp), (output scale, zp), constant rhs
    cases = [((2, 3, 4), (2, 4, 5), False, False, (0.05, 3), (0.02, -7), (0.1, 0), False),
             ((3, 4), (2, 4, 5), False, False, (0.5, -128), (0.0039215, 127), (0.3, -5), False),
             ((2, 1, 3, 4), (1, 3, 4, 5), False, False, (0.01, 0), (0.02, 10), (0.005, 127), False),
             ((2, 4, 3), (2, 5, 4), True, True, (0.1, -20), (0.07, 5), (0.9, 12), False),
             ((1, 2, 6, 7), (7, 3), False, False, (0.013, 9), (0.011, -3), (0.02, -128), True),
             ((2, 3, 2, 5), (3, 3, 5), False, True, (1e-3, 0), (2.0, 0), (0.05, 0), False),
             ((4, 256), (256, 3), False, False, (0.02, -1), (0.03, 2), (1.7, 1), False),
             ((64, 2), (2, 16), False, False, (0.5, 0), (0.5, 0), (64.0, 0), False)]
    for i, (a_shape, b_shape, adj_x, adj_y, a_q, b_q, y_q, const_rhs) in enumerate(cases):
        m = OneOpModel(out)
        a = m.tensor(a_shape, *a_q, "lhs")
        data = np.random.default_rng(20 + i).integers(-128, 128, size=b_shape) if const_rhs else None
        b = m.tensor(b_shape, *b_q, "rhs", data=data)
        rows = a_shape[-1] if adj_x else a_shape[-2]
        cols = b_shape[-2] if adj_y else b_shape[-1]
        batch = np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
        y = m.tensor(tuple(batch) + (rows, cols), *y_q, "y", is_input=False)
        options = S.BatchMatMulOptionsT()
        options.adjX, options.adjY = adj_x, adj_y
        m.write("q8_batch_matmul_%d" % i, OPS.BATCH_MATMUL, 2, [a, b], y, S.BuiltinOptions.BatchMatMulOptions,
                options)


def fc_large_sum_ops(out):
    """FULLY_CONNECTED with sums above 2^27 (weights 0, so that each output is its bias alone), the biases where
    LiteRT's reference arithmetic (the sum times the real multiplier in double, rounded half away from zero) and
    the fixed-point multiplier part: per tensor, and per channel with two filter scales in turn."""
    from quant_op_models import large_sum_biases  # noqa: E402 (quant_op_models imports this module)
    in_q, out_q = (0.0219, -7), (28.470489501953125, -128)
    for name, scales in (("q8_fc_large_sums", [0.00073]), ("q8_fc_large_sums_pc", [0.00073, 0.0004011022])):
        per_scale = [large_sum_biases(in_q[0], s, *out_q, 8, lo=-128, hi=127) for s in scales]
        bias = np.asarray([per_scale[c % len(scales)][c // len(scales)] for c in range(8 * len(scales))],
                          dtype=np.int32)
        units = len(bias)
        m = OneOpModel(out)
        x = m.tensor((2, 3), *in_q, "x")
        w_scale = scales[0] if len(scales) == 1 else [scales[c % len(scales)] for c in range(units)]
        w = m.tensor((units, 3), w_scale, 0, "w", data=np.zeros((units, 3)))
        b = m.tensor((units,), None, 0, "b", data=bias, dtype=np.int32)
        y = m.tensor((2, units), *out_q, "y", is_input=False)
        m.write(name, OPS.FULLY_CONNECTED, 4, [x, w, b], y, S.BuiltinOptions.FullyConnectedOptions,
                S.FullyConnectedOptionsT())


def reduce_ops(out, dtype=np.int8, prefix="q8"):
    """MEAN (every case but the keep_dims height-and-width one real models use) and SUM: axes (negative, repeated,
    all), keep_dims, equal and different quantizations, extreme scales."""
    s4 = (2, 3, 4, 5)
    # (input quant, output quant, axes, keep_dims)
    cases = [((0.1, 3), (0.05, -7), [1, 2], False), ((0.1, -3), (0.1, -3), [-1], True),
             ((0.1, -3), (0.1, -3), [0, 2], False), ((0.02, 127), (0.005, -128), [1, 3], True),
             ((0.5, -128), (0.0039215, 127), [0, 1, 2, 3], False), ((1e-5, 0), (2.0, 10), [2], False),
             ((0.3, 20), (0.01, 0), [3, 1, 3], False), ((0.07, 5), (0.03, -2), [1, 2], True)]
    if dtype == np.uint8:  # the same cases with zero points moved into [0, 255]
        cases = [((si, zi + 128), (so, zo + 128), axes, keep) for (si, zi), (so, zo), axes, keep in cases]
    for i, (in_quant, out_quant, axes, keep_dims) in enumerate(cases):
        for op, code, version in (("mean", OPS.MEAN, 2), ("sum", OPS.SUM, 2)):
            if op == "sum" and i == 1:
                out_quant = in_quant
            m = OneOpModel(out, dtype)
            x = m.tensor(s4, *in_quant, "x")
            a = m.int32_constant(axes, "axes")
            rank = len(s4)
            reduced = {(ax + rank) % rank for ax in axes}
            shape = [1 if d in reduced else n for d, n in enumerate(s4) if keep_dims or d not in reduced]
            q = out_quant
            if op == "sum" and in_quant != out_quant:
                # A sum needs a coarser output scale to stay in range.
                q = (out_quant[0] * 4, out_quant[1])
            y = m.tensor(shape, *q, "y", is_input=False)
            options = S.ReducerOptionsT()
            options.keepDims = keep_dims
            # LiteRT's reference SUM kernel for int8 writes garbage (-1, 0, ...) in the package: SUM is held to its
            # builtin kernel (litert_compare.py's BUILTIN_SUFFIX).
            name = "%s_%s_%d" % (prefix, op, i) + ("_litert_builtin" if op == "sum" else "")
            m.write(name, code, version, [x, a], y, S.BuiltinOptions.ReducerOptions, options)


def transpose_conv_ops(out):
    """TRANSPOSE_CONV int8 (per-tensor and per-channel filters, int32 bias or none, SAME and VALID, strides 1-3,
    fused RELU) and the same shapes in float32."""
    rng = np.random.default_rng(17)
    # input shape, filter (out_c, h, w), strides (h, w), padding, output h, w, bias, activation
    cases = [((1, 4, 4, 3), (5, 3, 3), (2, 2), "same", 8, 8, True, "none"),
             ((2, 3, 5, 2), (4, 2, 3), (1, 1), "valid", 4, 7, False, "none"),
             ((1, 5, 4, 4), (3, 3, 2), (3, 2), "valid", 15, 8, True, "relu"),
             ((1, 2, 2, 8), (1, 4, 4), (2, 2), "same", 4, 4, True, "none"),
             ((1, 6, 6, 2), (2, 5, 5), (2, 2), "same", 11, 12, True, "relu6")]
    for i, (in_shape, (oc, fh, fw), (sh, sw), padding, oh, ow, with_bias, activation) in enumerate(cases):
        ic = in_shape[3]
        for kind in ("q8", "f32"):
            m = OneOpModel(out, np.int8 if kind == "q8" else np.float32)
            shape = m.int32_constant([in_shape[0], oh, ow, oc], "output_shape")
            if kind == "q8":
                scales = rng.uniform(0.002, 0.05, size=oc) if i % 2 == 0 else 0.01
                w = m.tensor((oc, fh, fw, ic), scales, 0, "filter", data=rng.integers(-127, 128, size=(oc, fh, fw, ic)))
                in_quant, out_quant = [((0.05, -3), (0.2, 10)), ((0.02, 127), (0.1, -128)), ((0.1, -128), (0.3, 5)),
                                       ((0.5, 0), (4.0, 0)), ((1e-3, 20), (2e-3, -100))][i]
                x = m.tensor(in_shape, *in_quant, "x")
                inputs = [shape, w, x]
                if with_bias:
                    bias_scale = in_quant[0] * np.asarray(scales)
                    b = m.tensor((oc,), None, 0, "bias", data=rng.integers(-3000, 3000, size=oc), dtype=np.int32)
                    inputs.append(b)
                y = m.tensor((in_shape[0], oh, ow, oc), *out_quant, "y", is_input=False)
            else:
                w = m.tensor((oc, fh, fw, ic), None, 0, "filter", data=rng.standard_normal((oc, fh, fw, ic)))
                x = m.tensor(in_shape, None, 0, "x")
                inputs = [shape, w, x]
                if with_bias:
                    inputs.append(m.tensor((oc,), None, 0, "bias", data=rng.standard_normal(oc)))
                y = m.tensor((in_shape[0], oh, ow, oc), None, 0, "y", is_input=False)
            options = S.TransposeConvOptionsT()
            options.padding = S.Padding.SAME if padding == "same" else S.Padding.VALID
            options.strideH, options.strideW = sh, sw
            options.fusedActivationFunction = ACTIVATIONS[{"relu6": "relu6", "relu": "relu", "none": "none"}[activation]]
            version = 4 if activation != "none" else (3 if with_bias else 2)
            m.write("%s_transpose_conv_%d" % (kind, i), OPS.TRANSPOSE_CONV, version, inputs, y,
                    S.BuiltinOptions.TransposeConvOptions, options)


def resize_ops(out, dtype, prefix):
    """RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR (output quantized as the input): up and down, odd sizes,
    align_corners, half_pixel_centers and neither."""
    sizes = [((1, 4, 5, 3), (7, 9)), ((2, 6, 7, 2), (3, 4)), ((1, 1, 3, 2), (5, 1)), ((1, 5, 5, 1), (16, 13))]
    flags = [(False, False), (True, False), (False, True)]
    quant = {np.int8: (0.05, -3), np.uint8: (0.05, 128), np.int16: (0.001, 0), np.float32: (None, 0)}[dtype]
    for i, (shape, (h, w)) in enumerate(sizes):
        for j, (align, half) in enumerate(flags):
            for op, code, version, kind in (("bilinear", OPS.RESIZE_BILINEAR, 4, "ResizeBilinear"),
                                            ("nearest", OPS.RESIZE_NEAREST_NEIGHBOR, 4, "ResizeNearestNeighbor")):
                m = OneOpModel(out, dtype)
                x = m.tensor(shape, *quant, "x")
                size = m.int32_constant([h, w], "size")
                y = m.tensor((shape[0], h, w, shape[3]), *quant, "y", is_input=False)
                options = getattr(S, kind + "OptionsT")()
                options.alignCorners, options.halfPixelCenters = align, half
                m.write("%s_resize_%s_%d_%d" % (prefix, op, i, j), code, version, [x, size], y,
                        getattr(S.BuiltinOptions, kind + "Options"), options)


if __name__ == "__main__":
    main()
