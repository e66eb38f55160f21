#!/usr/bin/env python3
"""Writes single-op uint8 and int16 .tflite models (legacy per-tensor uint8 models, 16-bit activations), for
litert_compare.py --generate (ctest litert_quant_ops): Kiln's kernels for these types held byte for byte to
LiteRT's reference resolver op by op. The int8 models are int8_op_models.py's, whose model writer this reuses.

usage: quant_op_models.py OUT_DIR   (run with the Python of the LiteRT environment bench/litert_env.sh makes)
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from int8_op_models import (ACTIVATIONS, OPS, S, OneOpModel, batch_matmul16_ops, binary, l2_norm_ops,  # noqa: E402
                            reduce_ops, resize_ops, unary)

U8 = np.uint8


def uint8_ops(out):
    """The uint8 kernels (legacy per-tensor models): zero points at both ends of [0, 255], scales 1e-5 to 3,
    broadcasting and fused activations, as the int8 models."""
    s4 = (2, 3, 4, 5)
    arithmetic = [((0.05, 131), (0.05, 121), (0.1, 128), s4, s4, "none"),
                  ((0.5, 0), (0.0039215, 255), (0.1, 123), s4, (1, 1, 4, 1), "none"),
                  ((1e-5, 128), (0.1, 138), (0.0078125, 255), s4, (5,), "relu6"),
                  ((0.02, 255), (2.0, 0), (3.0, 0), (3, 1, 5), (1, 4, 1), "relu"),
                  ((0.1, 128), (0.1, 128), (1e-3, 128), s4, (1,), "relu1")]
    for i, case in enumerate(arithmetic):
        for op, code in (("add", OPS.ADD), ("sub", OPS.SUB), ("mul", OPS.MUL)):
            binary(out, "qu8_%s_%d" % (op, i), code, 2, *case, dtype=U8)
    for i, (a_shape, b_shape) in enumerate([(s4, s4), (s4, (1, 3, 1, 5))]):
        for op, code in (("maximum", OPS.MAXIMUM), ("minimum", OPS.MINIMUM)):
            binary(out, "qu8_%s_%d" % (op, i), code, 2, (0.1, 125), (0.1, 125), (0.1, 125), a_shape, b_shape,
                   dtype=U8)
    for i, quant in enumerate([(0.1, 128), (0.02, 0), (1.0 / 16, 255), (0.5, 133)]):
        unary(out, "qu8_logistic_%d" % i, OPS.LOGISTIC, 1, quant, (1.0 / 256, 0), dtype=U8)
        unary(out, "qu8_tanh_%d" % i, OPS.TANH, 1, quant, (1.0 / 128, 128), dtype=U8)
    relus = [((0.1, 128), (0.1, 128)), ((0.1, 108), (0.05, 0)), ((0.03, 255), (0.07, 28)), ((2.0, 138), (0.01, 128))]
    for i, (in_quant, out_quant) in enumerate(relus):
        unary(out, "qu8_relu_%d" % i, OPS.RELU, 1, in_quant, out_quant, dtype=U8)
        unary(out, "qu8_relu6_%d" % i, OPS.RELU6, 1, in_quant, out_quant, dtype=U8)
        unary(out, "qu8_relun1to1_%d" % i, OPS.RELU_N1_TO_1, 1, in_quant, out_quant, dtype=U8)
    # QUANTIZE: float -> uint8, uint8 <-> int8 (one scale with zero points 128 apart: LiteRT's bit flip; and a
    # rescale) and uint8 -> uint8.
    quantizes = [(np.float32, (None, 0), U8, (0.01, 128)), (np.float32, (None, 0), U8, (0.5, 0)),
                 (U8, (0.1, 128), np.int8, (0.1, 0)), (np.int8, (0.1, 0), U8, (0.1, 128)),
                 (U8, (0.05, 3), np.int8, (0.2, -9)), (np.int8, (0.37, 3), U8, (0.11, 250)),
                 (U8, (0.1, 128), U8, (0.25, 100)), (U8, (1e-3, 255), U8, (1e-4, 0))]
    for i, (in_type, in_quant, out_type, out_quant) in enumerate(quantizes):
        unary(out, "qu8_quantize_%d" % i, OPS.QUANTIZE, 1 if in_type == np.float32 else 2, in_quant, out_quant,
              dtype=in_type, out_dtype=out_type)
    # Pools (output quantized as the input), with a fused activation.
    for i, (kind, code, padding, act) in enumerate([("avg", OPS.AVERAGE_POOL_2D, S.Padding.SAME, "none"),
                                                   ("avg", OPS.AVERAGE_POOL_2D, S.Padding.VALID, "relu6"),
                                                   ("max", OPS.MAX_POOL_2D, S.Padding.SAME, "none"),
                                                   ("max", OPS.MAX_POOL_2D, S.Padding.VALID, "relu")]):
        m = OneOpModel(out, U8)
        x = m.tensor((2, 7, 8, 3), 0.05, 120, "x")
        oh, ow = (4, 4) if padding == S.Padding.SAME else (3, 3)
        y = m.tensor((2, oh, ow, 3), 0.05, 120, "y", is_input=False)
        options = S.Pool2DOptionsT()
        options.padding, options.strideH, options.strideW, options.filterHeight, options.filterWidth = padding, 2, 2, 3, 3
        options.fusedActivationFunction = {"none": S.ActivationFunctionType.NONE, "relu": S.ActivationFunctionType.RELU,
                                           "relu6": S.ActivationFunctionType.RELU6}[act]
        m.write("qu8_%spool_%d" % (kind, i), code, 2, [x], y, S.BuiltinOptions.Pool2DOptions, options)
    for i, axis in enumerate([1, -1]):
        m = OneOpModel(out, U8)
        inputs = [m.tensor((2, 3, 4), 0.1, 137, name) for name in ("x", "y", "z")]
        shape = [2, 3, 4]
        shape[axis] *= 3
        y = m.tensor(shape, 0.1, 137, "out", is_input=False)
        options = S.ConcatenationOptionsT()
        options.axis = axis
        m.write("qu8_concat_%d" % i, OPS.CONCATENATION, 1, inputs, y, S.BuiltinOptions.ConcatenationOptions, options)


def conv_options(kind, padding, stride, depth_multiplier):
    """CONV_2D ("conv") or DEPTHWISE_CONV_2D options with a padding and stride: (options, code, options type)."""
    if kind == "conv":
        options = S.Conv2DOptionsT()
        code, options_type = OPS.CONV_2D, S.BuiltinOptions.Conv2DOptions
    else:
        options = S.DepthwiseConv2DOptionsT()
        options.depthMultiplier = depth_multiplier
        code, options_type = OPS.DEPTHWISE_CONV_2D, S.BuiltinOptions.DepthwiseConv2DOptions
    options.padding, options.strideH, options.strideW = padding, stride, stride
    return options, code, options_type


def uint8_weighted_ops(out):
    """FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D on uint8: asymmetric uint8 weights (zero points 0 to 255),
    int32 bias or none, fused activations, strides, paddings and dilation."""
    rng = np.random.default_rng(23)
    act = {"none": S.ActivationFunctionType.NONE, "relu": S.ActivationFunctionType.RELU,
           "relu6": S.ActivationFunctionType.RELU6}
    # (input quant, weights quant, output quant, activation, bias)
    quants = [((0.05, 128), (0.02, 120), (0.5, 100), "none", True), ((0.5, 0), (0.004, 255), (0.2, 10), "relu", True),
              ((0.02, 255), (0.1, 0), (1.0, 128), "relu6", False), ((1e-3, 77), (0.05, 133), (3e-3, 200), "none", True)]
    for i, (in_q, w_q, out_q, a, with_bias) in enumerate(quants):
        # FULLY_CONNECTED [3, 40] x [7, 40]
        m = OneOpModel(out, U8)
        x = m.tensor((3, 40), *in_q, "x")
        w = m.tensor((7, 40), *w_q, "w", data=rng.integers(0, 256, size=(7, 40)))
        inputs = [x, w]
        if with_bias:
            inputs.append(m.tensor((7,), None, 0, "b", data=rng.integers(-5000, 5000, size=7), dtype=np.int32))
        y = m.tensor((3, 7), *out_q, "y", is_input=False)
        options = S.FullyConnectedOptionsT()
        options.fusedActivationFunction = act[a]
        m.write("qu8_fc_%d" % i, OPS.FULLY_CONNECTED, 1, inputs, y, S.BuiltinOptions.FullyConnectedOptions, options)
        if i == 0:
            # Ties: scales 0.5 * 0.5 / 16 make the multiplier 2^-6 exactly, so one output in 64 lies half way
            # between two steps, where single and double rounding part (for negative sums).
            m = OneOpModel(out, U8)
            x = m.tensor((256, 1), 0.5, 128, "x")
            w = m.tensor((16, 1), 0.5, 128, "w", data=rng.integers(0, 256, size=(16, 1)))
            y = m.tensor((256, 16), 16.0, 128, "y", is_input=False)
            m.write("qu8_fc_ties", OPS.FULLY_CONNECTED, 1, [x, w], y, S.BuiltinOptions.FullyConnectedOptions,
                    S.FullyConnectedOptionsT())
        # CONV_2D 3x3 and DEPTHWISE_CONV_2D 3x3 (multiplier 2) on [1, 9, 8, 4]
        stride, padding, dilation = [(1, S.Padding.SAME, 1), (2, S.Padding.VALID, 1), (1, S.Padding.VALID, 2),
                                     (2, S.Padding.SAME, 1)][i]
        def out_size(n):
            eff = (3 - 1) * dilation + 1
            return (n + stride - 1) // stride if padding == S.Padding.SAME else (n - eff + stride) // stride
        oh, ow = out_size(9), out_size(8)
        for kind in ("conv", "depthwise"):
            m = OneOpModel(out, U8)
            x = m.tensor((1, 9, 8, 4), *in_q, "x")
            oc = 5 if kind == "conv" else 8
            fshape = (5, 3, 3, 4) if kind == "conv" else (1, 3, 3, 8)
            w = m.tensor(fshape, *w_q, "w", data=rng.integers(0, 256, size=fshape))
            # LiteRT's uint8 convolutions need the bias (CONV_2D refuses, DEPTHWISE_CONV_2D crashes without).
            inputs = [x, w, m.tensor((oc,), None, 0, "b", data=rng.integers(-5000, 5000, size=oc), dtype=np.int32)]
            y = m.tensor((1, oh, ow, oc), *out_q, "y", is_input=False)
            options, code, options_type = conv_options(kind, padding, stride, 2)
            options.dilationHFactor, options.dilationWFactor = dilation, dilation
            options.fusedActivationFunction = act[a]
            m.write("qu8_%s_%d" % (kind, i), code, 1 if dilation == 1 else 2, inputs, y, options_type, options)


def quantize_multiplier(real):
    """LiteRT's QuantizeMultiplier: (31-bit significand, exponent) of a real multiplier, in Python integers."""
    if real == 0:
        return 0, 0
    fraction, exponent = math.frexp(real)
    q = int(math.floor(fraction * 2 ** 31 + 0.5))
    if q == 2 ** 31:
        q, exponent = q // 2, exponent + 1
    if exponent < -31:
        return 0, 0
    return (2 ** 31 - 1, 30) if exponent > 30 else (q, exponent)


def apply_double_rounding(x, multiplier):
    """gemmlowp's two roundings of x * multiplier (LiteRT's convolutions), for the exponents < 0 used here."""
    q, exponent = multiplier
    product = x * q
    nudge = 2 ** 30 if product >= 0 else 1 - 2 ** 30
    total = product + nudge
    high = total // 2 ** 31 if total >= 0 else -((-total) // 2 ** 31)  # C's division truncates toward zero
    shift = -exponent
    mask = (1 << shift) - 1
    threshold = (mask >> 1) + (1 if high < 0 else 0)
    return (high >> shift) + (1 if (high & mask) > threshold else 0)


def apply_single_rounding_away(x, multiplier):
    """One rounding of x * multiplier, ties away from zero (LiteRT's FULLY_CONNECTED)."""
    q, exponent = multiplier
    shift = 31 - exponent
    magnitude = (abs(x) * q + (1 << (shift - 1))) >> shift
    return magnitude if x >= 0 else -magnitude


def scale_product_sums(in_scale, w_scale, out_scale, out_zp, count, apply):
    """Sums (int32 accumulators) whose outputs tell apart the two ways LiteRT forms a weighted op's multiplier from
    float32 scales: the scales' product in double (int8, and uint8 FULLY_CONNECTED) or in float, widened and then
    divided in double (GetQuantizedConvolutionMultipler: uint8 CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV). The
    two multipliers differ by the float product's rounding, so outputs part only next to a rounding boundary: the
    sums are taken there, each one giving an output in [0, 255] that differs between the two when the multiplier is
    applied by `apply` (the op's rounding)."""
    f32 = np.float32
    as_double = float(f32(in_scale)) * float(f32(w_scale)) / float(f32(out_scale))
    as_float = float(f32(f32(in_scale) * f32(w_scale))) / float(f32(out_scale))
    m_double, m_float = quantize_multiplier(as_double), quantize_multiplier(as_float)
    assert m_double != m_float, "scales whose products agree in float and double"
    real = [q * 2.0 ** (e - 31) for q, e in (m_double, m_float)]
    sums = []
    for k in range(-out_zp, 255 - out_zp):
        # Between the two multipliers' boundaries of output k and k + 1.
        ends = [int((k + 0.5) / r) for r in real]
        for acc in range(min(ends) - 2, max(ends) + 3):
            a, b = apply(acc, m_double), apply(acc, m_float)
            if a != b and 0 <= a + out_zp <= 255 and 0 <= b + out_zp <= 255:
                sums.append(acc)
    assert len(sums) >= count, "only %d sums part the two multipliers" % len(sums)
    picks = np.linspace(0, len(sums) - 1, count).round().astype(int)
    return [sums[i] for i in picks]


def uint8_multiplier_ops(out):
    """The real multiplier of the uint8 weighted ops (scales 0.0219, 0.00073, 1.3: a multiplier near 1.23e-5, whose
    float product is 2^-26 off the double one): filters equal to their zero point, so that each output is its
    channel's bias alone, and the biases sit where the float and the double product give different outputs (all
    48 of each model), below 2^24 in magnitude."""
    in_q, w_q, out_q = (0.0219, 128), (0.00073, 131), (1.3, 128)
    for kind in ("conv", "depthwise", "transpose_conv", "fc"):
        apply = apply_single_rounding_away if kind == "fc" else apply_double_rounding
        bias = np.asarray(scale_product_sums(in_q[0], w_q[0], *out_q, 48, apply), dtype=np.int32)
        m = OneOpModel(out, U8)
        if kind == "transpose_conv":
            shape = m.int32_constant([1, 1, 1, 48], "output_shape")
            w = m.tensor((48, 1, 1, 1), *w_q, "w", data=np.full((48, 1, 1, 1), w_q[1]))
            x = m.tensor((1, 1, 1, 1), *in_q, "x")
            b = m.tensor((48,), None, 0, "b", data=bias, dtype=np.int32)
            y = m.tensor((1, 1, 1, 48), *out_q, "y", is_input=False)
            options = S.TransposeConvOptionsT()
            options.padding, options.strideH, options.strideW = S.Padding.VALID, 1, 1
            m.write("qu8_multiplier_transpose_conv", OPS.TRANSPOSE_CONV, 3, [shape, w, x, b], y,
                    S.BuiltinOptions.TransposeConvOptions, options)
            continue
        if kind == "fc":
            x = m.tensor((1, 1), *in_q, "x")
            w = m.tensor((48, 1), *w_q, "w", data=np.full((48, 1), w_q[1]))
            b = m.tensor((48,), None, 0, "b", data=bias, dtype=np.int32)
            y = m.tensor((1, 48), *out_q, "y", is_input=False)
            m.write("qu8_multiplier_fc", OPS.FULLY_CONNECTED, 1, [x, w, b], y, S.BuiltinOptions.FullyConnectedOptions,
                    S.FullyConnectedOptionsT())
            continue
        x = m.tensor((1, 1, 1, 1), *in_q, "x")
        fshape = (48, 1, 1, 1) if kind == "conv" else (1, 1, 1, 48)
        w = m.tensor(fshape, *w_q, "w", data=np.full(fshape, w_q[1]))
        b = m.tensor((48,), None, 0, "b", data=bias, dtype=np.int32)
        y = m.tensor((1, 1, 1, 48), *out_q, "y", is_input=False)
        options, code, options_type = conv_options(kind, S.Padding.VALID, 1, 48)
        m.write("qu8_multiplier_%s" % kind, code, 1, [x, w, b], y, options_type, options)


def large_sum_biases(in_scale, w_scale, out_scale, out_zp, count, lo=0, hi=255):
    """Biases above 2^27 whose outputs tell apart LiteRT's FULLY_CONNECTED reference arithmetic (the sum times the
    real multiplier in double, rounded half away from zero) from the fixed-point multiplier (31-bit significand,
    one rounding, ties away): next to a rounding boundary the significand's 2^-31 relative error, times a sum this
    large, moves the output one step. Each bias gives outputs in [lo, hi] that differ between the two."""
    f32 = np.float32
    real = float(f32(in_scale)) * float(f32(w_scale)) / float(f32(out_scale))
    fixed = quantize_multiplier(real)

    def in_double(acc):
        v = math.floor(abs(acc * real) + 0.5)
        return v if acc >= 0 else -v

    biases = []
    for k in range(lo - out_zp, hi - out_zp):
        edge = int((k + 0.5) / real)
        for acc in range(edge - 3, edge + 4):
            a, b = in_double(acc), apply_single_rounding_away(acc, fixed)
            if a != b and lo <= a + out_zp <= hi and lo <= b + out_zp <= hi and abs(acc) > 2 ** 27:
                biases.append(acc)
    assert len(biases) >= count, "only %d biases part the two" % len(biases)
    picks = np.linspace(0, len(biases) - 1, count).round().astype(int)
    return [biases[i] for i in picks]


def uint8_large_sum_ops(out):
    """FULLY_CONNECTED uint8 with sums above 2^27 (biases 1.3e8 to 4.5e8, weights equal to their zero point so that
    each output is its bias alone): every output of qu8_fc_large_sums lies where the double arithmetic of LiteRT's
    reference kernel and the fixed-point multiplier part; qu8_fc_large_sums_1 adds random weights."""
    # Output scale 28.4704895: a multiplier near 5.6e-7 whose significand is 3.9e-10 (relative) off, about the
    # most a 31-bit significand can be, so that many boundaries part the two.
    in_q, w_q, out_q = (0.0219, 128), (0.00073, 131), (28.470489501953125, 0)
    bias = np.asarray(large_sum_biases(in_q[0], w_q[0], *out_q, 16), dtype=np.int32)
    m = OneOpModel(out, U8)
    x = m.tensor((2, 3), *in_q, "x")
    w = m.tensor((16, 3), *w_q, "w", data=np.full((16, 3), w_q[1]))
    b = m.tensor((16,), None, 0, "b", data=bias, dtype=np.int32)
    y = m.tensor((2, 16), *out_q, "y", is_input=False)
    m.write("qu8_fc_large_sums", OPS.FULLY_CONNECTED, 1, [x, w, b], y, S.BuiltinOptions.FullyConnectedOptions,
            S.FullyConnectedOptionsT())
    rng = np.random.default_rng(41)
    m = OneOpModel(out, U8)
    x = m.tensor((64, 40), *in_q, "x")
    w = m.tensor((16, 40), *w_q, "w", data=rng.integers(0, 256, size=(16, 40)))
    b = m.tensor((16,), None, 0, "b", data=rng.integers(300_000_000, 400_000_000, size=16), dtype=np.int32)
    y = m.tensor((64, 16), *out_q, "y", is_input=False)
    m.write("qu8_fc_large_sums_1", OPS.FULLY_CONNECTED, 1, [x, w, b], y, S.BuiltinOptions.FullyConnectedOptions,
            S.FullyConnectedOptionsT())


def uint8_moving_ops(out):
    """PAD (filled with the zero point) and TRANSPOSE on uint8, the output quantized as the input."""
    pads = [((2, 3, 4, 5), [[0, 1], [2, 0], [1, 1], [0, 2]], (0.1, 137)), ((1, 5, 5, 3), [[0, 0], [1, 1], [2, 2], [0, 0]],
            (0.02, 0)), ((7, 9), [[3, 0], [0, 4]], (1.5, 255))]
    for i, (shape, paddings, quant) in enumerate(pads):
        m = OneOpModel(out, U8)
        x = m.tensor(shape, *quant, "x")
        p = m.int32_constant(paddings, "paddings")
        y = m.tensor([n + a + b for n, (a, b) in zip(shape, paddings)], *quant, "y", is_input=False)
        m.write("qu8_pad_%d" % i, OPS.PAD, 1, [x, p], y)
    transposes = [((2, 3, 4, 5), [0, 3, 1, 2], (0.1, 137)), ((3, 4, 5), [2, 0, 1], (0.02, 0)),
                  ((2, 3, 1, 4, 5), [4, 3, 2, 1, 0], (1.5, 255))]
    for i, (shape, perm, quant) in enumerate(transposes):
        m = OneOpModel(out, U8)
        x = m.tensor(shape, *quant, "x")
        p = m.int32_constant(perm, "perm")
        y = m.tensor([shape[d] for d in perm], *quant, "y", is_input=False)
        m.write("qu8_transpose_%d" % i, OPS.TRANSPOSE, 1 if len(shape) <= 4 else 5, [x, p], y)


def uint8_activation_ops(out):
    """LEAKY_RELU, PRELU and HARD_SWISH on uint8: the int8 models' quantizations with zero points moved into
    [0, 255] (both ends included)."""
    relus = [((0.1, 128), (0.1, 128)), ((0.1, 108), (0.05, 0)), ((0.03, 255), (0.07, 28)), ((2.0, 138), (0.01, 128)),
             ((1e-4, 128), (0.5, 131))]
    for i, (in_quant, out_quant) in enumerate(relus):
        for j, alpha in enumerate([0.2, -0.5, 1.7]):
            options = S.LeakyReluOptionsT()
            options.alpha = alpha
            unary(out, "qu8_leakyrelu_%d_%d" % (i, j), OPS.LEAKY_RELU, 2, in_quant, out_quant,
                  S.BuiltinOptions.LeakyReluOptions, options, dtype=U8)
    hard_swishes = [((0.05, 118), (0.03, 28)), ((0.1, 128), (0.1, 128)), ((0.02, 255), (0.5, 0)),
                    ((1e-3, 128), (1e-3, 133)), ((0.2, 0), (0.01, 128)), ((0.5, 131), (0.004, 0))]
    for i, (in_quant, out_quant) in enumerate(hard_swishes):
        unary(out, "qu8_hardswish_%d" % i, OPS.HARD_SWISH, 1, in_quant, out_quant, dtype=U8)
    rng = np.random.default_rng(31)
    prelus = [((0.1, 128), (0.01, 128), (0.1, 128), (1, 1, 8)), ((0.05, 108), (0.004, 0), (0.02, 158), (8,)),
              ((0.3, 255), (0.02, 178), (0.07, 0), (1, 4, 1, 8))]
    for i, (in_quant, alpha_quant, out_quant, alpha_shape) in enumerate(prelus):
        m = OneOpModel(out, U8)
        x = m.tensor((2, 4, 4, 8), *in_quant, "x")
        alpha = m.tensor(alpha_shape, *alpha_quant, "alpha", data=rng.integers(0, 256, size=alpha_shape))
        y = m.tensor((2, 4, 4, 8), *out_quant, "y", is_input=False)
        m.write("qu8_prelu_%d" % i, OPS.PRELU, 1, [x, alpha], y)


def uint8_transpose_conv_ops(out):
    """TRANSPOSE_CONV on uint8: asymmetric uint8 filters, int32 bias or none, SAME and VALID, strides 1-3, fused
    RELU/RELU6 (the int8 models' shapes). LiteRT refuses a uint8 model whose input scale * filter scale is more
    than 0.02 output scales from the bias scale (0 for these unquantized biases)."""
    rng = np.random.default_rng(37)
    # input shape, filter (out_c, h, w), strides (h, w), padding, output h, w, bias, activation, quantizations
    cases = [((1, 4, 4, 3), (5, 3, 3), (2, 2), "same", 8, 8, True, "none", ((0.05, 125), (0.01, 120), (0.2, 138))),
             ((2, 3, 5, 2), (4, 2, 3), (1, 1), "valid", 4, 7, False, "none", ((0.02, 255), (0.03, 0), (0.1, 0))),
             ((1, 5, 4, 4), (3, 3, 2), (3, 2), "valid", 15, 8, True, "relu", ((0.1, 0), (0.004, 255), (0.3, 133))),
             ((1, 2, 2, 8), (1, 4, 4), (2, 2), "same", 4, 4, True, "none", ((0.5, 128), (0.02, 131), (4.0, 128))),
             ((1, 6, 6, 2), (2, 5, 5), (2, 2), "same", 11, 12, True, "relu6", ((1e-3, 148), (0.03, 77), (2e-3, 28)))]
    for i, (in_shape, (oc, fh, fw), (sh, sw), padding, oh, ow, with_bias, activation, quants) in enumerate(cases):
        in_quant, w_quant, out_quant = quants
        m = OneOpModel(out, U8)
        shape = m.int32_constant([in_shape[0], oh, ow, oc], "output_shape")
        w = m.tensor((oc, fh, fw, in_shape[3]), *w_quant, "filter", data=rng.integers(0, 256, size=(oc, fh, fw, in_shape[3])))
        x = m.tensor(in_shape, *in_quant, "x")
        inputs = [shape, w, x]
        if with_bias:
            inputs.append(m.tensor((oc,), None, 0, "bias", data=rng.integers(-3000, 3000, size=oc), dtype=np.int32))
        y = m.tensor((in_shape[0], oh, ow, oc), *out_quant, "y", is_input=False)
        options = S.TransposeConvOptionsT()
        options.padding = S.Padding.SAME if padding == "same" else S.Padding.VALID
        options.strideH, options.strideW = sh, sw
        options.fusedActivationFunction = ACTIVATIONS[activation]
        version = 4 if activation != "none" else (3 if with_bias else 1)
        m.write("qu8_transpose_conv_%d" % i, OPS.TRANSPOSE_CONV, version, inputs, y, S.BuiltinOptions.TransposeConvOptions,
                options)


def int16_ops(out):
    """The int16 kernels (16-bit activations, symmetric: zero point 0): ADD and SUB on LiteRT's general path
    (pot_scale_int16 false, or scales that are not powers of two), MUL, MAXIMUM, MINIMUM, the RELUs, LEAKY_RELU, the pools
    and QUANTIZE float -> int16, int16 -> int16, int8 <-> int16."""
    I16 = np.int16
    s4 = (2, 3, 4, 5)
    cases = [((0.001, 0), (0.002, 0), (0.003, 0), s4, s4, "none"), ((3e-5, 0), (1e-4, 0), (2e-4, 0), s4, (5,), "relu"),
             ((0.01, 0), (0.0005, 0), (0.02, 0), (3, 1, 5), (1, 4, 1), "relu6")]
    for i, case in enumerate(cases):
        for op, code, version in (("add", OPS.ADD, 3), ("sub", OPS.SUB, 3), ("mul", OPS.MUL, 4)):
            m = OneOpModel(out, I16)
            a = m.tensor(case[3], *case[0], "a")
            b = m.tensor(case[4], *case[1], "b")
            y = m.tensor(np.broadcast_shapes(case[3], case[4]), *case[2], "y", is_input=False)
            kind = {OPS.ADD: "Add", OPS.SUB: "Sub", OPS.MUL: "Mul"}[code]
            options = getattr(S, kind + "OptionsT")()
            options.fusedActivationFunction = {"none": S.ActivationFunctionType.NONE,
                                               "relu": S.ActivationFunctionType.RELU,
                                               "relu6": S.ActivationFunctionType.RELU6}[case[5]]
            if code != OPS.MUL:
                options.potScaleInt16 = False
            m.write("q16_%s_%d" % (op, i), code, version, [a, b], y, getattr(S.BuiltinOptions, kind + "Options"), options)
    for op, code in (("maximum", OPS.MAXIMUM), ("minimum", OPS.MINIMUM)):
        binary(out, "q16_%s" % op, code, 4, (0.001, 0), (0.001, 0), (0.001, 0), s4, (1, 3, 1, 5), dtype=I16)
    for i, (in_quant, out_quant) in enumerate([((0.001, 0), (0.001, 0)), ((0.001, 0), (0.0004, 0)), ((1e-4, 0), (3e-4, 0))]):
        unary(out, "q16_relu_%d" % i, OPS.RELU, 3, in_quant, out_quant, dtype=I16)
        unary(out, "q16_relu6_%d" % i, OPS.RELU6, 3, in_quant, out_quant, dtype=I16)
    # LEAKY_RELU int16 (symmetric, as LiteRT requires): alphas below and above 1 and negative.
    for i, (in_quant, out_quant) in enumerate([((0.001, 0), (0.001, 0)), ((0.001, 0), (0.0004, 0)),
                                               ((1e-4, 0), (3e-4, 0)), ((0.02, 0), (1e-3, 0))]):
        for j, alpha in enumerate([0.2, -0.5, 1.7]):
            options = S.LeakyReluOptionsT()
            options.alpha = alpha
            unary(out, "q16_leakyrelu_%d_%d" % (i, j), OPS.LEAKY_RELU, 2, in_quant, out_quant,
                  S.BuiltinOptions.LeakyReluOptions, options, dtype=I16)
    for i, (kind, code, padding) in enumerate([("avg", OPS.AVERAGE_POOL_2D, S.Padding.SAME),
                                              ("avg", OPS.AVERAGE_POOL_2D, S.Padding.VALID),
                                              ("max", OPS.MAX_POOL_2D, S.Padding.SAME)]):
        m = OneOpModel(out, I16)
        x = m.tensor((2, 7, 8, 3), 0.001, 0, "x")
        oh, ow = (4, 4) if padding == S.Padding.SAME else (3, 3)
        y = m.tensor((2, oh, ow, 3), 0.001, 0, "y", is_input=False)
        options = S.Pool2DOptionsT()
        options.padding, options.strideH, options.strideW, options.filterHeight, options.filterWidth = padding, 2, 2, 3, 3
        m.write("q16_%spool_%d" % (kind, i), code, 3, [x], y, S.BuiltinOptions.Pool2DOptions, options)
    for i, axis in enumerate([1, -1]):
        m = OneOpModel(out, I16)
        inputs = [m.tensor((2, 3, 4), 0.001, 0, name) for name in ("x", "y", "z")]
        shape = [2, 3, 4]
        shape[axis] *= 3
        y = m.tensor(shape, 0.001, 0, "out", is_input=False)
        options = S.ConcatenationOptionsT()
        options.axis = axis
        m.write("q16_concat_%d" % i, OPS.CONCATENATION, 3, inputs, y, S.BuiltinOptions.ConcatenationOptions, options)
    quantizes = [(np.float32, (None, 0), I16, (1e-3, 0)), (np.float32, (None, 0), I16, (3e-5, 0)),
                 (I16, (1e-3, 0), I16, (3e-3, 0)), (I16, (1e-3, 0), np.int8, (0.05, 3)),
                 (np.int8, (0.05, -3), I16, (1e-3, 0))]
    for i, (in_type, in_quant, out_type, out_quant) in enumerate(quantizes):
        unary(out, "q16_quantize_%d" % i, OPS.QUANTIZE, 3 if in_type != np.float32 else 1, in_quant, out_quant,
              dtype=in_type, out_dtype=out_type)


def int16_activation_ops(out):
    """LOGISTIC, TANH and SOFTMAX int16 (symmetric; the output quantized 2^-15 as LiteRT requires): input scales
    across the range, the power-of-two ones LiteRT's kernels take directly (LOGISTIC 2^-12, TANH 2^-12 and 2^-11)
    and others it rescales; the inputs are drawn over the whole int16 range."""
    I16 = np.int16
    # LOGISTIC and TANH: 1024 inputs each; 2^-10 and 2^-13 are powers of two the tables do not take directly.
    scales = [2.0 ** -12, 2.0 ** -11, 2.0 ** -10, 2.0 ** -13, 2.0 ** -15, 1e-3, 3e-4, 1e-5, 3.1e-7, 0.01, 0.1, 1.0,
              4.5]
    # At the scales the tables take directly, LiteRT's default path runs another kernel (its optimized gemmlowp
    # one): Kiln's default path is held to LiteRT's reference kernels there (litert_compare.py's
    # REFERENCE_ONLY_SUFFIX).
    def suffix(code, scale):
        direct = [2.0 ** -12] if code == OPS.LOGISTIC else [2.0 ** -12, 2.0 ** -11]
        return "_litert_ref_only" if scale in direct else ""

    for i, scale in enumerate(scales):
        for name, code in (("logistic", OPS.LOGISTIC), ("tanh", OPS.TANH)):
            unary(out, "q16_%s_%d%s" % (name, i, suffix(code, scale)), code, 3, (scale, 0), (1.0 / 32768, 0), dtype=I16)
    # TANH's output scale need only be 2^-15 within LiteRT's CheckedLog2 tolerance.
    unary(out, "q16_tanh_near_pot_output", OPS.TANH, 3, (1e-3, 0), (1.0 / 32768 * 1.0002, 0), dtype=I16)
    for i, shape in enumerate([(7,), (3, 5, 2, 9), (2, 1, 1, 1)]):
        for name, code in (("logistic", OPS.LOGISTIC), ("tanh", OPS.TANH)):
            m = OneOpModel(out, I16)
            scale = 2.0 ** -12 if i != 1 else 7e-4
            x = m.tensor(shape, scale, 0, "x")
            y = m.tensor(shape, 1.0 / 32768, 0, "y", is_input=False)
            m.write("q16_%s_shape_%d%s" % (name, i, suffix(code, scale)), code, 3, [x], y)
    # GELU: LiteRT's 513-entry table of the float function (both forms); zero points too (the table spans the
    # output range they move, without adding them, as LiteRT's).
    gelus = [((1e-3, 0), (1e-3, 0)), ((3e-4, 0), (2e-4, 0)), ((0.01, 0), (0.005, 0)), ((1e-4, 0), (5e-5, 0)),
             ((2e-3, 100), (1e-3, -50)), ((0.2, 0), (0.3, 0))]
    for i, (in_quant, out_quant) in enumerate(gelus):
        for approximate in (False, True):
            options = S.GeluOptionsT()
            options.approximate = approximate
            unary(out, "q16_gelu_%d%s" % (i, "_approx" if approximate else ""), OPS.GELU, 2, in_quant, out_quant,
                  S.BuiltinOptions.GeluOptions, options, dtype=I16)
    # SOFTMAX int8 / uint8 -> int16 (LiteRT's reference gemmlowp kernel), the output quantized 1/65536, -32768: the
    # quantization that kernel writes whatever the output says (its default path honours other ones, so Kiln
    # refuses them).
    to16 = [(np.int8, (0.1, -3), (4, 16, 16), 1.0), (np.int8, (0.02, 127), (8, 128), 1.0),
            (np.int8, (1e-3, 0), (2, 300), 1.0), (np.uint8, (0.05, 128), (64, 16), 1.0),
            (np.uint8, (0.5, 0), (16, 64), 0.5), (np.int8, (0.25, -128), (100, 3), 2.0),
            (np.int8, (0.1, 0), (8, 64), 1.0)]
    for i, (dtype, in_quant, shape, beta) in enumerate(to16):
        m = OneOpModel(out, dtype)
        x = m.tensor(shape, *in_quant, "x")
        y = m.tensor(shape, 1.0 / 65536, -32768, "y", is_input=False, dtype=I16)
        options = S.SoftmaxOptionsT()
        options.beta = beta
        m.write("q8_softmax_to16_%d" % i, OPS.SOFTMAX, 2, [x], y, S.BuiltinOptions.SoftmaxOptions, options)
    # SOFTMAX: the output quantized 1/32768 (LiteRT allows 0.1% off), betas 1, 0.5 and 2, ranks 1 to 4.
    softmaxes = [(1e-5, (4, 16, 16), 1.0), (1e-4, (8, 128), 1.0), (1e-3, (2, 1000), 1.0), (2.0 ** -10, (64, 16), 1.0),
                 (0.01, (3, 5, 7, 4), 1.0), (0.1, (37,), 1.0), (1.0, (16, 8), 1.0), (3e-4, (16, 64), 0.5),
                 (3e-4, (16, 64), 2.0), (2e-5, (1, 1, 1, 300), 1.0), (5e-4, (200, 1), 1.0), (1e-4, (4, 2048), 1.0)]
    for i, (scale, shape, beta) in enumerate(softmaxes):
        m = OneOpModel(out, I16)
        x = m.tensor(shape, scale, 0, "x")
        y = m.tensor(shape, 1.0 / 32768 if i != 3 else 1.0 / 32768 * 1.0005, 0, "y", is_input=False)
        options = S.SoftmaxOptionsT()
        options.beta = beta
        m.write("q16_softmax_%d" % i, OPS.SOFTMAX, 3, [x], y, S.BuiltinOptions.SoftmaxOptions, options)


def int16_reduce_ops(out):
    """MEAN and SUM on int16 (symmetric, as LiteRT requires): LiteRT's int16 MEAN is its QuantizedMeanOrSum for every
    axes case (the keep_dims height-and-width one too); axes negative, repeated, all; equal and different scales."""
    I16 = np.int16
    s4 = (2, 3, 4, 5)
    # (input shape, input scale, output scale, axes, keep_dims)
    cases = [(s4, 1e-3, 5e-4, [1, 2], False), (s4, 1e-3, 1e-3, [-1], True), (s4, 3e-5, 1e-4, [0, 2], False),
             (s4, 0.02, 0.005, [1, 3], True), (s4, 1e-4, 2e-4, [0, 1, 2, 3], False), (s4, 1e-5, 2.0, [2], False),
             (s4, 0.3, 0.01, [3, 1, 3], False), ((1, 7, 9, 8), 2.0 ** -10, 2.0 ** -12, [1, 2], True),
             ((2, 16, 16, 3), 1e-3, 1e-3, [2, 1], True), ((3, 300, 40), 1e-4, 3e-5, [1], False),
             ((5,), 0.01, 0.02, [0], False), ((4, 1), 1e-3, 1e-3, [-2], True)]
    for i, (shape, in_scale, out_scale, axes, keep_dims) in enumerate(cases):
        for op, code in (("mean", OPS.MEAN), ("sum", OPS.SUM)):
            m = OneOpModel(out, I16)
            x = m.tensor(shape, in_scale, 0, "x")
            a = m.int32_constant(axes, "axes")
            rank = len(shape)
            reduced = {(ax + rank) % rank for ax in axes}
            oshape = [1 if d in reduced else n for d, n in enumerate(shape) if keep_dims or d not in reduced]
            count = int(np.prod([shape[d] for d in reduced]))
            # A sum needs a coarser output scale to stay in range.
            q = out_scale * (max(1.0, count ** 0.5) if op == "sum" else 1.0)
            y = m.tensor(oshape, q, 0, "y", is_input=False)
            options = S.ReducerOptionsT()
            options.keepDims = keep_dims
            # SUM is held to LiteRT's builtin kernel, as for int8 (its reference SUM is broken for int8).
            name = "q16_%s_%d" % (op, i) + ("_litert_builtin" if op == "sum" else "")
            m.write(name, code, 2, [x, a], y, S.BuiltinOptions.ReducerOptions, options)


def reduce_prod_ops(out):
    """REDUCE_PROD on quantized int8 (any zero point) and int16 (symmetric): LiteRT's rescaled product, over 1 to 6
    elements per output, axes negative and repeated, keep_dims; scales so the products land in and beyond range."""
    s4 = (2, 3, 4, 5)
    # (dtype, input shape, input quant, output quant, axes, keep_dims)
    cases = [(np.int8, s4, (0.05, -3), (0.5, 2), [1], False), (np.int8, s4, (0.02, 127), (0.01, -128), [-1], True),
             (np.int8, s4, (0.1, 0), (2.0, 10), [0, 2], False), (np.int8, (6, 2), (0.01, -128), (1e-4, 0), [0], False),
             (np.int8, (3, 1, 4), (0.2, 5), (0.2, 5), [1], True), (np.int8, s4, (1.0, 0), (64.0, 0), [3, 1, 3], False),
             (np.int16, s4, (1e-4, 0), (1e-4, 0), [1], False), (np.int16, s4, (3e-3, 0), (0.05, 0), [-1, 0], True),
             (np.int16, (6, 3), (1e-3, 0), (1e-6, 0), [0], False),
             (np.int16, (4, 2, 2), (0.01, 0), (0.2, 0), [1, 2], False)]
    for i, (dtype, shape, in_quant, out_quant, axes, keep_dims) in enumerate(cases):
        m = OneOpModel(out, dtype)
        x = m.tensor(shape, *in_quant, "x")
        a = m.int32_constant(axes, "axes")
        rank = len(shape)
        reduced = {(ax + rank) % rank for ax in axes}
        oshape = [1 if d in reduced else n for d, n in enumerate(shape) if keep_dims or d not in reduced]
        y = m.tensor(oshape, *out_quant, "y", is_input=False)
        options = S.ReducerOptionsT()
        options.keepDims = keep_dims
        prefix = "q8" if dtype == np.int8 else "q16"
        m.write("%s_reduce_prod_%d" % (prefix, i), OPS.REDUCE_PROD, 2, [x, a], y, S.BuiltinOptions.ReducerOptions,
                options)


def hybrid_batch_matmul_ops(out):
    """Hybrid BATCH_MATMUL: float32 lhs and output, a constant int8 rhs (per tensor, or per channel along its
    columns), adj_x / adj_y and batch broadcast. LiteRT quantizes the lhs on the fly; Kiln dequantizes the rhs
    and computes in float (litert_compare's hybrid bound)."""
    rng = np.random.default_rng(41)
    # (lhs shape, rhs shape, adj_x, adj_y, rhs scale (one, or one per column))
    cases = [((2, 3, 4), (2, 4, 5), False, False, 0.01), ((2, 4, 3), (2, 5, 4), True, True, 0.02),
             ((3, 1, 2, 6), (4, 6, 3), False, False, 0.005), ((5, 7), (7, 2), False, False, [0.004, 0.012]),
             ((1, 8, 16), (16, 4), False, False, 0.002), ((4, 3), (5, 3), False, True, [0.01, 0.02, 0.005, 0.04, 0.01])]
    for i, (lhs_shape, rhs_shape, adj_x, adj_y, rhs_scale) in enumerate(cases):
        m = OneOpModel(out, np.float32)
        x = m.tensor(lhs_shape, None, 0, "lhs")
        if np.ndim(rhs_scale):
            # Per channel along the columns: OneOpModel's per-channel tensors use dimension 0, so set it here.
            w = m.tensor(rhs_shape, rhs_scale, 0, "rhs", data=rng.integers(-127, 128, size=rhs_shape), dtype=np.int8)
            m.tensors[w].quantization.quantizedDimension = len(rhs_shape) - (2 if adj_y else 1)
        else:
            w = m.tensor(rhs_shape, rhs_scale, 0, "rhs", data=rng.integers(-127, 128, size=rhs_shape), dtype=np.int8)
        rows = lhs_shape[-1] if adj_x else lhs_shape[-2]
        cols = rhs_shape[-2] if adj_y else rhs_shape[-1]
        batch = np.broadcast_shapes(lhs_shape[:-2], rhs_shape[:-2])
        y = m.tensor(tuple(batch) + (rows, cols), None, 0, "y", is_input=False)
        options = S.BatchMatMulOptionsT()
        options.adjX, options.adjY = adj_x, adj_y
        m.write("hybrid_batch_matmul_%d" % i, OPS.BATCH_MATMUL, 4, [x, w], y, S.BuiltinOptions.BatchMatMulOptions,
                options)


def int16x8_ops(out):
    """16x8 FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D: int16 activations (zero point 0), int8 weights per
    tensor or per channel, int64 bias or none, fused activations."""
    rng = np.random.default_rng(29)
    act = {"none": S.ActivationFunctionType.NONE, "relu": S.ActivationFunctionType.RELU,
           "relu6": S.ActivationFunctionType.RELU6}
    cases = [(1e-3, 0.01, 4e-3, "none", True, False), (3e-4, 0.002, 1e-2, "relu", True, True),
             (2e-3, 0.05, 0.5, "relu6", False, True)]
    for i, (si, sw, so, a, with_bias, per_channel) in enumerate(cases):
        for kind in ("fc", "conv", "depthwise"):
            m = OneOpModel(out, np.int16)
            if kind == "fc":
                in_shape, w_shape, out_shape, oc = (3, 40), (7, 40), (3, 7), 7
            elif kind == "conv":
                in_shape, w_shape, out_shape, oc = (1, 6, 5, 4), (5, 3, 3, 4), (1, 6, 5, 5), 5
            else:
                in_shape, w_shape, out_shape, oc = (1, 6, 5, 4), (1, 3, 3, 8), (1, 6, 5, 8), 8
            x = m.tensor(in_shape, si, 0, "x")
            scales = rng.uniform(0.5 * sw, 1.5 * sw, size=oc) if per_channel else sw
            w = m.tensor(w_shape, scales, 0, "w", data=rng.integers(-127, 128, size=w_shape), dtype=np.int8)
            if kind == "depthwise" and per_channel:
                m.tensors[w].quantization.quantizedDimension = 3
            inputs = [x, w]
            if with_bias or kind == "conv":  # LiteRT's 16x8 CONV_2D needs the bias
                inputs.append(m.tensor((oc,), None, 0, "b", data=rng.integers(-40000, 40000, size=oc), dtype=np.int64))
            y = m.tensor(out_shape, so, 0, "y", is_input=False)
            if kind == "fc":
                options = S.FullyConnectedOptionsT()
                code, version, options_type = OPS.FULLY_CONNECTED, 7, S.BuiltinOptions.FullyConnectedOptions
            else:
                options, code, options_type = conv_options(kind, S.Padding.SAME, 1, 2)
                version = 4 if kind == "conv" else 5
            options.fusedActivationFunction = act[a]
            m.write("q16_%s_%d" % (kind, i), code, version, inputs, y, options_type, options)


def int16x8_transpose_conv_ops(out):
    """16x8 TRANSPOSE_CONV: int16 input and output (zero point 0), int8 filter per tensor or per channel, int64
    bias or none, SAME and VALID, strides 1-3, fused RELU/RELU6 (the uint8 models' shapes)."""
    rng = np.random.default_rng(43)
    # input shape, filter (out_c, h, w), strides, padding, output h, w, bias, per channel, activation, scales
    cases = [((1, 4, 4, 3), (5, 3, 3), (2, 2), "same", 8, 8, True, False, "none", (1e-3, 0.01, 4e-3)),
             ((2, 3, 5, 2), (4, 2, 3), (1, 1), "valid", 4, 7, False, True, "none", (3e-4, 0.002, 1e-3)),
             ((1, 5, 4, 4), (3, 3, 2), (3, 2), "valid", 15, 8, True, True, "relu", (2e-3, 0.05, 0.05)),
             ((1, 2, 2, 8), (1, 4, 4), (2, 2), "same", 4, 4, True, False, "none", (0.01, 0.02, 0.02)),
             ((1, 6, 6, 2), (2, 5, 5), (2, 2), "same", 11, 12, True, True, "relu6", (1e-5, 0.03, 2e-4))]
    for i, (in_shape, (oc, fh, fw), (sh, sw), padding, oh, ow, with_bias, per_channel, activation, (si, sw_, so)) in \
            enumerate(cases):
        m = OneOpModel(out, np.int16)
        shape = m.int32_constant([in_shape[0], oh, ow, oc], "output_shape")
        fshape = (oc, fh, fw, in_shape[3])
        scales = rng.uniform(0.5 * sw_, 1.5 * sw_, size=oc) if per_channel else sw_
        w = m.tensor(fshape, scales, 0, "filter", data=rng.integers(-127, 128, size=fshape), dtype=np.int8)
        x = m.tensor(in_shape, si, 0, "x")
        inputs = [shape, w, x]
        if with_bias:
            inputs.append(m.tensor((oc,), None, 0, "bias", data=rng.integers(-40000, 40000, size=oc), dtype=np.int64))
        y = m.tensor((in_shape[0], oh, ow, oc), so, 0, "y", is_input=False)
        options = S.TransposeConvOptionsT()
        options.padding = S.Padding.SAME if padding == "same" else S.Padding.VALID
        options.strideH, options.strideW = sh, sw
        options.fusedActivationFunction = ACTIVATIONS[activation]
        version = 4 if activation != "none" else 3
        m.write("q16_transpose_conv_%d" % i, OPS.TRANSPOSE_CONV, version, inputs, y,
                S.BuiltinOptions.TransposeConvOptions, options)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    resize_ops(out, np.uint8, "qu8")
    l2_norm_ops(out, np.uint8, "qu8")
    batch_matmul16_ops(out)
    resize_ops(out, np.int16, "q16")
    uint8_ops(out)
    uint8_weighted_ops(out)
    uint8_multiplier_ops(out)
    uint8_large_sum_ops(out)
    uint8_moving_ops(out)
    uint8_activation_ops(out)
    uint8_transpose_conv_ops(out)
    reduce_ops(out, U8, "qu8")
    int16_ops(out)
    int16_activation_ops(out)
    int16_reduce_ops(out)
    reduce_prod_ops(out)
    hybrid_batch_matmul_ops(out)
    int16x8_ops(out)
    int16x8_transpose_conv_ops(out)
    # SOFTMAX uint8: the output quantization the converter writes (1/256, 0); beta 1 and 0.5.
    for i, (in_quant, shape, beta) in enumerate([((0.1, 128), (4, 16, 16), 1.0), ((0.02, 0), (8, 128), 1.0),
                                                 ((1.0 / 16, 255), (2, 1000), 0.5), ((0.5, 133), (64, 16), 1.0)]):
        m = OneOpModel(out, U8)
        x = m.tensor(shape, *in_quant, "x")
        y = m.tensor(shape, 1.0 / 256, 0, "y", is_input=False)
        options = S.SoftmaxOptionsT()
        options.beta = beta
        m.write("qu8_softmax_%d" % i, OPS.SOFTMAX, 1, [x], y, S.BuiltinOptions.SoftmaxOptions, options)
    # LOG_SOFTMAX uint8: the output quantization LiteRT requires (16/256, 255); the int8 models' input scales and
    # rows, zero points moved into [0, 255].
    for i, (in_quant, shape) in enumerate([((0.1, 128), (4, 16, 16)), ((0.02, 0), (8, 128)), ((1.0 / 16, 255), (2, 1000)),
                                           ((0.5, 133), (64, 16)), ((1e-3, 108), (32, 32)), ((0.25, 128), (100, 1)),
                                           ((3.0, 128), (16, 64)), ((1e-5, 0), (8, 64)), ((16.0, 255), (16, 64)),
                                           ((31.0, 28), (8, 64))]):
        m = OneOpModel(out, U8)
        x = m.tensor(shape, *in_quant, "x")
        y = m.tensor(shape, 16.0 / 256, 255, "y", is_input=False)
        m.write("qu8_log_softmax_%d" % i, OPS.LOG_SOFTMAX, 1, [x], y)


if __name__ == "__main__":
    main()
