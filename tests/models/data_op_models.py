#!/usr/bin/env python3
"""Writes single-op .tflite models of the ops beyond the conv/pool/elementwise core (STRIDED_SLICE, SLICE,
EXPAND_DIMS, GATHER, EMBEDDING_LOOKUP, SPLIT, SPLIT_V, PACK, UNPACK, TILE, BROADCAST_TO, SHAPE, ARG_MAX, ARG_MIN,
CAST; DEPTH_TO_SPACE, SPACE_TO_DEPTH, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, PADV2, MIRROR_PAD, REVERSE_V2 in each
type LiteRT takes; the float32 math of one input: ABS, NEG, SQRT, RSQRT, SQUARE, LOG, SIN, COS, FLOOR, CEIL, ROUND;
the comparisons, logical ops, SELECT, SELECT_V2, ZEROS_LIKE, FILL, FLOOR_DIV, FLOOR_MOD, POW and SIGN; ONE_HOT,
GATHER_ND, SCATTER_ND, RANGE, TOPK_V2 and ADD_N; the
reductions REDUCE_MAX/MIN/PROD/ANY/ALL, MULTINOMIAL, CUMSUM, L2_POOL_2D (with MAX_POOL_2D and AVERAGE_POOL_2D also
over 1000x1000 windows), L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION, GELU
and BATCH_MATMUL; TFLite_Detection_PostProcess, DENSIFY with sparse constants, a FULLY_CONNECTED reading sparse
weights, CONV_3D and CONV_3D_TRANSPOSE; WHERE, UNIQUE, NON_MAX_SUPPRESSION_V4/V5, BROADCAST_ARGS, and run-time shape inputs of
STRIDED_SLICE, SLICE, EXPAND_DIMS, TILE, BROADCAST_TO, RESHAPE, FILL, RANGE, TOPK_V2, ONE_HOT, PAD, PADV2, MIRROR_PAD,
SPLIT, SPLIT_V, SCATTER_ND, UNSORTED_SEGMENT_SUM, TRANSPOSE, the reductions, RESIZE_*, SPACE_TO_BATCH_ND,
BATCH_TO_SPACE_ND and TRANSPOSE_CONV, whose outputs are dynamic) for litert_compare.py --generate,
so that Kiln's kernels are held to LiteRT op by op: float32 inputs (and int8 ones, quantized, for the ops that move
bytes), every index input constant (litert_bench draws random values for model inputs, which would be out of range
for GATHER's indices).

usage: data_op_models.py OUT_DIR   (run with the Python of the LiteRT environment bench/litert_env.sh makes)
"""
import os
import sys

import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as S

OPS = S.BuiltinOperator
TYPES = {np.float16: S.TensorType.FLOAT16, np.float32: S.TensorType.FLOAT32, np.int32: S.TensorType.INT32,
         np.int64: S.TensorType.INT64,
         np.int8: S.TensorType.INT8, np.uint8: S.TensorType.UINT8, np.int16: S.TensorType.INT16,
         np.bool_: S.TensorType.BOOL, np.uint16: S.TensorType.UINT16, np.uint32: S.TensorType.UINT32,
         np.float64: S.TensorType.FLOAT64, np.complex64: S.TensorType.COMPLEX64,
         np.complex128: S.TensorType.COMPLEX128}


class Model:
    """One operator; tensors added in order, constants given with data."""

    def __init__(self):
        self.tensors, self.buffers, self.inputs = [], [S.BufferT()], []

    def tensor(self, shape, dtype, name, data=None, quant=None, sparsity=None):
        """sparsity: an S.SparsityParametersT; `data` are then the stored values only."""
        t = S.TensorT()
        t.shape, t.type, t.name, t.buffer = list(shape), TYPES[dtype], name, 0
        t.sparsity = sparsity
        if quant is not None:
            q = S.QuantizationParametersT()
            q.scale, q.zeroPoint = [float(quant[0])], [int(quant[1])]
            t.quantization = q
        if data is not None:
            b = S.BufferT()
            b.data = list(np.asarray(data, dtype=dtype).reshape(-1).view(np.uint8).tobytes())
            self.buffers.append(b)
            t.buffer = len(self.buffers) - 1
        else:
            self.inputs.append(len(self.tensors))
        self.tensors.append(t)
        return len(self.tensors) - 1

    def output(self, shape, dtype, name, quant=None):
        index = self.tensor(shape, dtype, name, quant=quant)
        self.inputs.pop()
        return index

    def write_ops(self, out_dir, name, ops, outputs):
        """Several operators: ops is a list of (code, version, inputs, outputs, options_type, options)."""
        codes, operators = [], []
        for code, version, inputs, outs, options_type, options in ops:
            if (code, version) not in codes:
                codes.append((code, version))
            op = S.OperatorT()
            op.opcodeIndex, op.inputs, op.outputs = codes.index((code, version)), inputs, outs
            op.builtinOptionsType, op.builtinOptions = options_type, options
            operators.append(op)
        opcodes = []
        for code, version in codes:
            opcode = S.OperatorCodeT()
            opcode.builtinCode, opcode.deprecatedBuiltinCode, opcode.version = code, min(code, 127), version
            opcodes.append(opcode)
        graph = S.SubGraphT()
        graph.tensors, graph.inputs, graph.outputs, graph.operators = self.tensors, self.inputs, outputs, operators
        graph.name = "main"
        model = S.ModelT()
        model.version, model.operatorCodes, model.subgraphs, model.buffers = 3, opcodes, [graph], self.buffers
        model.description = "data_op_models.py"
        builder = flatbuffers.Builder(1024)
        builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
        with open(os.path.join(out_dir, name + ".tflite"), "wb") as f:
            f.write(builder.Output())

    def write(self, out_dir, name, code, version, inputs, outputs, options_type=0, options=None, custom=None,
              then=()):
        """custom: (custom op name, flexbuffer option bytes) for the first op when its code is OPS.CUSTOM. `then`:
        further ops (code, version, inputs, outputs) after the first; the model's outputs are the last op's."""
        opcodes, ops = [], []
        for code, version, inputs, outputs in [(code, version, inputs, outputs)] + list(then):
            opcode = S.OperatorCodeT()
            opcode.builtinCode, opcode.deprecatedBuiltinCode, opcode.version = code, min(code, 127), version
            op = S.OperatorT()
            op.opcodeIndex, op.inputs, op.outputs = len(opcodes), inputs, outputs
            if not ops:
                op.builtinOptionsType, op.builtinOptions = options_type, options
                if custom is not None:
                    opcode.customCode = custom[0]
                    op.customOptions, op.customOptionsFormat = list(custom[1]), S.CustomOptionsFormat.FLEXBUFFERS
            opcodes.append(opcode)
            ops.append(op)
        graph = S.SubGraphT()
        graph.tensors, graph.inputs, graph.outputs, graph.operators = self.tensors, self.inputs, outputs, ops
        graph.name = "main"
        model = S.ModelT()
        model.version, model.operatorCodes, model.subgraphs, model.buffers = 3, opcodes, [graph], self.buffers
        model.description = "data_op_models.py"
        builder = flatbuffers.Builder(1024)
        builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
        with open(os.path.join(out_dir, name + ".tflite"), "wb") as f:
            f.write(builder.Output())


def _write_ops(self, out_dir, name, ops, outputs):
    """Several operators: (code, version, inputs, outputs, options type, options) in execution order."""
    codes = []
    operators = []
    for code, version, inputs, outs, options_type, options in ops:
        if (code, version) not in codes:
            codes.append((code, version))
        op = S.OperatorT()
        op.opcodeIndex, op.inputs, op.outputs = codes.index((code, version)), inputs, outs
        op.builtinOptionsType, op.builtinOptions = options_type, options
        operators.append(op)
    opcodes = []
    for code, version in codes:
        opcode = S.OperatorCodeT()
        opcode.builtinCode, opcode.deprecatedBuiltinCode, opcode.version = code, min(code, 127), version
        opcodes.append(opcode)
    graph = S.SubGraphT()
    graph.tensors, graph.inputs, graph.outputs, graph.operators = self.tensors, self.inputs, outputs, operators
    graph.name = "main"
    model = S.ModelT()
    model.version, model.operatorCodes, model.subgraphs, model.buffers = 3, opcodes, [graph], self.buffers
    model.description = "data_op_models.py"
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    with open(os.path.join(out_dir, name + ".tflite"), "wb") as f:
        f.write(builder.Output())


Model.write_ops = _write_ops


def strided_slice(out_dir, name, shape, begin, end, strides, out_shape, masks=(0, 0, 0, 0, 0), offset=False,
                  dtype=np.float32):
    m = Model()
    quant = (0.05, -3) if dtype == np.int8 else None
    x = m.tensor(shape, dtype, "x", quant=quant)
    b = m.tensor([len(begin)], np.int32, "begin", begin)
    e = m.tensor([len(end)], np.int32, "end", end)
    s = m.tensor([len(strides)], np.int32, "strides", strides)
    y = m.output(out_shape, dtype, "y", quant=quant)
    o = S.StridedSliceOptionsT()
    o.beginMask, o.endMask, o.ellipsisMask, o.newAxisMask, o.shrinkAxisMask = masks
    o.offset = offset
    m.write(out_dir, name, OPS.STRIDED_SLICE, 4, [x, b, e, s], [y], S.BuiltinOptions.StridedSliceOptions, o)


def reductions(out_dir):
    """REDUCE_MAX, REDUCE_MIN, REDUCE_PROD, REDUCE_ANY and REDUCE_ALL over several axes and types."""
    cases = [  # name, op, version, dtype, quantization, shape, axes, keep_dims, output shape
        ("reduce_max", OPS.REDUCE_MAX, 1, np.float32, None, [3, 4, 5], [1], False, [3, 5]),
        ("reduce_max_keep_neg", OPS.REDUCE_MAX, 1, np.float32, None, [2, 3, 4, 5], [-1, 1], True, [2, 1, 4, 1]),
        ("reduce_max_all", OPS.REDUCE_MAX, 1, np.float32, None, [4, 6], [0, 1], False, []),
        ("reduce_max_int8", OPS.REDUCE_MAX, 2, np.int8, (0.05, -3), [2, 6, 7], [1, 2], True, [2, 1, 1]),
        ("reduce_max_uint8", OPS.REDUCE_MAX, 1, np.uint8, (0.02, 128), [5, 8], [0], False, [8]),
        ("reduce_max_int16", OPS.REDUCE_MAX, 3, np.int16, (0.001, 0), [3, 9], [1], False, [3]),
        ("reduce_max_int32", OPS.REDUCE_MAX, 1, np.int32, None, [4, 3, 2], [0, 2], False, [3]),
        ("reduce_min", OPS.REDUCE_MIN, 1, np.float32, None, [3, 4, 5], [2, 0], False, [4]),
        ("reduce_min_int8", OPS.REDUCE_MIN, 2, np.int8, (0.05, 7), [2, 5, 5, 3], [1, 2], True, [2, 1, 1, 3]),
        ("reduce_min_int64", OPS.REDUCE_MIN, 1, np.int64, None, [6, 4], [1], True, [6, 1]),
        ("reduce_prod", OPS.REDUCE_PROD, 1, np.float32, None, [3, 4, 5], [1], False, [3, 5]),
        ("reduce_prod_int32", OPS.REDUCE_PROD, 1, np.int32, None, [5, 3], [0], False, [3]),
        ("reduce_prod_int64", OPS.REDUCE_PROD, 1, np.int64, None, [2, 3, 4], [-1], True, [2, 3, 1]),
        ("reduce_any", OPS.REDUCE_ANY, 1, np.bool_, None, [4, 3, 2], [0, 2], False, [3]),
        ("reduce_any_keep", OPS.REDUCE_ANY, 1, np.bool_, None, [3, 5], [1], True, [3, 1]),
        ("reduce_all", OPS.REDUCE_ALL, 1, np.bool_, None, [2, 3, 2], [2], False, [2, 3]),
    ]
    for name, code, version, dtype, quant, shape, axes, keep_dims, out_shape in cases:
        m = Model()
        x = m.tensor(shape, dtype, "x", quant=quant)
        a = m.tensor([len(axes)], np.int32, "axes", axes)
        y = m.output(out_shape, dtype, "y", quant=quant)
        o = S.ReducerOptionsT()
        o.keepDims = keep_dims
        m.write(out_dir, name, code, version, [x, a], [y], S.BuiltinOptions.ReducerOptions, o)



def normalization_and_scans(out_dir):
    """L2_POOL_2D, L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION and CUMSUM (float32; CUMSUM also int32/int64)."""
    for name, shape, filt, stride, padding, out_shape in [
            ("l2_pool_valid", [1, 6, 7, 3], (2, 3), (2, 2), S.Padding.VALID, [1, 3, 3, 3]),
            ("l2_pool_same", [2, 5, 5, 4], (3, 3), (2, 1), S.Padding.SAME, [2, 3, 5, 4])]:
        m = Model()
        x = m.tensor(shape, np.float32, "x")
        y = m.output(out_shape, np.float32, "y")
        o = S.Pool2DOptionsT()
        o.filterHeight, o.filterWidth = filt
        o.strideH, o.strideW = stride
        o.padding = padding
        m.write(out_dir, name, OPS.L2_POOL_2D, 1, [x], [y], S.BuiltinOptions.Pool2DOptions, o)
    # Windows of 1000x1000 over 40x40 (issue #14): Kiln's separable pass (ops/reference/pooling.h) against LiteRT's.
    for op, name in [(OPS.MAX_POOL_2D, "max_pool_huge_window"), (OPS.AVERAGE_POOL_2D, "average_pool_huge_window"),
                     (OPS.L2_POOL_2D, "l2_pool_huge_window")]:
        m = Model()
        x = m.tensor([1, 40, 40, 2], np.float32, "x")
        y = m.output([1, 20, 40, 2], np.float32, "y")
        o = S.Pool2DOptionsT()
        o.filterHeight = o.filterWidth = 1000
        o.strideH, o.strideW = 2, 1
        o.padding = S.Padding.SAME
        m.write(out_dir, name, op, 1, [x], [y], S.BuiltinOptions.Pool2DOptions, o)
    for name, shape in [("l2_norm", [3, 8]), ("l2_norm_4d", [2, 3, 4, 5]), ("l2_norm_1d", [7])]:
        m = Model()
        x = m.tensor(shape, np.float32, "x")
        y = m.output(shape, np.float32, "y")
        m.write(out_dir, name, OPS.L2_NORMALIZATION, 1, [x], [y], S.BuiltinOptions.L2NormOptions, S.L2NormOptionsT())
    for name, radius, bias, alpha, beta in [("lrn", 2, 1.0, 0.5, 0.75), ("lrn_wide", 5, 2.0, 0.1, 0.5)]:
        m = Model()
        x = m.tensor([2, 3, 3, 9], np.float32, "x")
        y = m.output([2, 3, 3, 9], np.float32, "y")
        o = S.LocalResponseNormalizationOptionsT()
        o.radius, o.bias, o.alpha, o.beta = radius, bias, alpha, beta
        m.write(out_dir, name, OPS.LOCAL_RESPONSE_NORMALIZATION, 1, [x], [y],
                S.BuiltinOptions.LocalResponseNormalizationOptions, o)
    for name, dtype, shape, axis, exclusive, reverse in [
            ("cumsum", np.float32, [4, 6], 1, False, False),
            ("cumsum_exclusive_reverse", np.float32, [3, 5, 2], -2, True, True),
            ("cumsum_int32", np.int32, [5, 4], 0, False, True),
            ("cumsum_int64_exclusive", np.int64, [2, 3, 4], 2, True, False)]:
        m = Model()
        x = m.tensor(shape, dtype, "x")
        a = m.tensor([], np.int32, "axis", [axis])
        y = m.output(shape, dtype, "y")
        o = S.CumsumOptionsT()
        o.exclusive, o.reverse = exclusive, reverse
        m.write(out_dir, name, OPS.CUMSUM, 1, [x, a], [y], S.BuiltinOptions.CumsumOptions, o)



def gelu(out_dir):
    """GELU, exact and tanh-approximate: float32, and int8/uint8 through LiteRT's table."""
    for name, dtype, in_q, out_q in [("gelu", np.float32, None, None),
                                     ("gelu_int8", np.int8, (0.05, -4), (0.03, -100)),
                                     ("gelu_uint8", np.uint8, (0.04, 120), (0.025, 20))]:
        for approximate in (False, True):
            m = Model()
            x = m.tensor([3, 5, 7], dtype, "x", quant=in_q)
            y = m.output([3, 5, 7], dtype, "y", quant=out_q)
            o = S.GeluOptionsT()
            o.approximate = approximate
            m.write(out_dir, name + ("_approximate" if approximate else ""), OPS.GELU, 1 if dtype == np.float32 else 2,
                    [x], [y], S.BuiltinOptions.GeluOptions, o)



def embedding_lookup(out_dir):
    """EMBEDDING_LOOKUP: float32 rows, int8 rows copied, and int8/uint8 tables giving float32 (hybrid)."""
    rng = np.random.default_rng(7)
    cases = [("embedding_lookup", np.float32, None, np.float32, [0, 4, 2, 2, 5]),
             ("embedding_lookup_int8", np.int8, (0.05, 3), np.int8, [1, 0, 5]),
             ("embedding_lookup_hybrid_int8", np.int8, (0.02, 0), np.float32, [3, 3, 0, 1]),
             ("embedding_lookup_hybrid_uint8", np.uint8, (0.03, 0), np.float32, [2, 5, 4])]
    for name, dtype, quant, out_dtype, ids in cases:
        m = Model()
        lookup = m.tensor([len(ids)], np.int32, "lookup", ids)
        if dtype == np.float32:
            table = rng.uniform(-1, 1, size=(6, 3, 2)).astype(np.float32)
        else:
            info = np.iinfo(dtype)
            table = rng.integers(info.min, info.max, size=(6, 3, 2), endpoint=True).astype(dtype)
        value = m.tensor([6, 3, 2], dtype, "value", table, quant=quant)
        y = m.output([len(ids), 3, 2], out_dtype, "y", quant=quant if out_dtype == dtype else None)
        m.write(out_dir, name, OPS.EMBEDDING_LOOKUP, 1 if dtype == np.float32 else 3, [lookup, value], [y])



def index_models(out_dir):
    """ONE_HOT, GATHER_ND, SCATTER_ND, RANGE, TOPK_V2 and ADD_N in each type LiteRT takes; indices constant (some out of range for
    ONE_HOT, whose rows are then all off), duplicates for SCATTER_ND (which adds them)."""
    rng = np.random.default_rng(11)

    def values(dtype, shape):
        if dtype == np.float32:
            return rng.uniform(-2, 2, size=shape).astype(np.float32)
        if dtype == np.bool_:
            return rng.integers(0, 2, size=shape).astype(np.bool_)
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape, endpoint=True).astype(dtype)

    # ONE_HOT: indices, constant depth, on and off values; the new dimension at axis.
    for name, index_shape, index_type, indices, depth, dtype, on, off, axis in [
            ("one_hot_float", [6], np.int32, [0, 4, 2, -1, 5, 7], 5, np.float32, 1.5, -0.25, -1),
            ("one_hot_float_axis0", [2, 3], np.int64, [0, 1, 2, 3, 3, 9], 4, np.float32, 1.0, 0.0, 0),
            ("one_hot_int32_axis1", [2, 3], np.int32, [2, 0, 1, 1, -3, 2], 3, np.int32, 7, -2, 1),
            ("one_hot_int64", [3, 2], np.int64, [1, 1, 0, 2, 3, 0], 4, np.int64, 1 << 40, -5, 2),
            ("one_hot_int8", [5], np.int32, [0, 1, 2, 3, 4], 5, np.int8, 127, -128, -1),
            ("one_hot_uint8", [2, 2], np.int32, [3, 0, 1, 2], 4, np.uint8, 255, 3, 1),
            ("one_hot_bool", [2, 3], np.int32, [0, 1, 2, 2, 1, 0], 3, np.bool_, True, False, 0),
            ("one_hot_scalar", [], np.int32, [2], 4, np.float32, 3.0, 1.0, -1),
            ("one_hot_rank4", [2, 1, 2, 3], np.int32, list(range(12)), 6, np.float32, 1.0, 0.0, 2)]:
        m = Model()
        i = m.tensor(index_shape, index_type, "indices", np.asarray(indices).reshape(index_shape))
        d = m.tensor([], np.int32, "depth", depth)
        a = m.tensor([], dtype, "on_value", on)
        b = m.tensor([], dtype, "off_value", off)
        out_shape = list(index_shape)
        out_shape.insert(len(index_shape) if axis == -1 else axis, depth)
        y = m.output(out_shape, dtype, "y")
        o = S.OneHotOptionsT()
        o.axis = axis
        m.write(out_dir, name, OPS.ONE_HOT, 1, [i, d, a, b], [y], S.BuiltinOptions.OneHotOptions, o)
    # ONE_HOT with the indices a model input (random: mostly out of range, so rows of off).
    m = Model()
    i = m.tensor([4, 2], np.int32, "indices")
    d = m.tensor([], np.int32, "depth", 3)
    a = m.tensor([], np.float32, "on_value", 2.0)
    b = m.tensor([], np.float32, "off_value", -1.0)
    y = m.output([4, 2, 3], np.float32, "y")
    m.write(out_dir, "one_hot_input_indices", OPS.ONE_HOT, 1, [i, d, a, b], [y])

    # GATHER_ND: params (a model input), constant indices whose last dimension picks a slice.
    for name, dtype, quant, version, params_shape, indices, index_type in [
            ("gather_nd_float", np.float32, None, 1, [4, 3], [[0, 2], [3, 1], [1, 0]], np.int32),
            ("gather_nd_float_slices", np.float32, None, 1, [4, 3, 2], [[3], [0], [3]], np.int64),
            ("gather_nd_float_rank3_indices", np.float32, None, 1, [3, 4, 2], [[[0, 1], [2, 3]], [[1, 1], [2, 0]]],
             np.int32),
            ("gather_nd_full_depth", np.float32, None, 1, [2, 3, 4], [[1, 2, 3], [0, 0, 0]], np.int32),
            ("gather_nd_int8", np.int8, (0.05, -2), 1, [3, 4], [[2], [1]], np.int32),
            ("gather_nd_uint8", np.uint8, (0.1, 128), 1, [3, 4], [[2, 3], [0, 1]], np.int32),
            ("gather_nd_int32", np.int32, None, 1, [5, 2], [[4], [4], [0]], np.int32),
            ("gather_nd_int64", np.int64, None, 1, [2, 2, 2], [[1, 0]], np.int64),
            ("gather_nd_int16", np.int16, None, 1, [3, 3], [[2, 2], [0, 1]], np.int32),
            ("gather_nd_bool", np.bool_, None, 1, [4, 2], [[3], [1]], np.int32)]:
        idx = np.asarray(indices)
        m = Model()
        p = m.tensor(params_shape, dtype, "params", quant=quant)
        i = m.tensor(list(idx.shape), index_type, "indices", idx)
        out_shape = list(idx.shape[:-1]) + list(params_shape[idx.shape[-1]:])
        y = m.output(out_shape, dtype, "y", quant=quant)
        m.write(out_dir, name, OPS.GATHER_ND, version, [p, i], [y])

    # SCATTER_ND: constant indices and shape, updates a model input; duplicate indices add up.
    for name, dtype, indices, updates_shape, shape in [
            ("scatter_nd_float", np.float32, [[4], [3], [1], [7], [3]], [5], [8]),
            ("scatter_nd_float_slices", np.float32, [[0], [2], [0]], [3, 4, 4], [4, 4, 4]),
            ("scatter_nd_float_2d", np.float32, [[0, 1], [2, 2], [1, 0], [0, 1]], [4, 3], [3, 3, 3]),
            ("scatter_nd_int32", np.int32, [[1, 1], [0, 2], [1, 1]], [3], [2, 3]),
            ("scatter_nd_int64", np.int64, [[1], [0]], [2, 2], [3, 2]),
            ("scatter_nd_int8", np.int8, [[2], [0]], [2, 3], [3, 3]),
            ("scatter_nd_uint8", np.uint8, [[1], [1]], [2, 2], [2, 2]),
            ("scatter_nd_bool", np.bool_, [[0, 1], [1, 0]], [2], [2, 2])]:
        idx = np.asarray(indices)
        m = Model()
        i = m.tensor(list(idx.shape), np.int32, "indices", idx)
        u = m.tensor(updates_shape, dtype, "updates")
        s = m.tensor([len(shape)], np.int32, "shape", shape)
        y = m.output(shape, dtype, "y")
        m.write(out_dir, name, OPS.SCATTER_ND, 1, [i, u, s], [y])

    # RANGE: constant start, limit and delta (int32, int64, float32); counting down, a fractional float delta.
    for name, dtype, start, limit, delta, version in [("range_int32", np.int32, 3, 18, 4, 1),
                                                       ("range_int32_down", np.int32, 5, -7, -3, 1),
                                                       ("range_int64", np.int64, -(1 << 40), -(1 << 40) + 10, 3, 2),
                                                       ("range_float", np.float32, 0.0, 3.0, 0.1, 1),
                                                       ("range_float_down", np.float32, 2.5, -1.0, -0.75, 1)]:
        n = len(np.arange(start, limit, delta, dtype=np.float64 if dtype == np.float32 else dtype))
        if dtype == np.float32:
            n = int(np.ceil(np.abs((np.float32(limit) - np.float32(start)) / np.float32(delta))))
        m = Model()
        a = m.tensor([], dtype, "start", start)
        b = m.tensor([], dtype, "limit", limit)
        c = m.tensor([], dtype, "delta", delta)
        y = m.output([n], dtype, "y")
        m.write(out_dir, name, OPS.RANGE, version, [a, b, c], [y])

    # TOP_K_V2: a constant k; the input a constant with ties (lower index first) or a model input.
    for name, dtype, shape, k, const in [("topk_float", np.float32, [3, 8], 3, False),
                                         ("topk_float_ties", np.float32, [2, 6], 4, True),
                                         ("topk_float_rank3_all", np.float32, [2, 2, 5], 5, False),
                                         ("topk_int8", np.int8, [4, 6], 2, True),
                                         ("topk_uint8", np.uint8, [2, 7], 3, True),
                                         ("topk_int32", np.int32, [3, 5], 5, True),
                                         ("topk_int64", np.int64, [6], 1, True),
                                         ("topk_int16", np.int16, [2, 4], 2, True)]:
        m = Model()
        if const:
            data = values(dtype, shape)
            if name == "topk_float_ties":
                data = np.array([[1, 3, 3, 0, 3, 1], [2, 2, 2, 2, 2, 2]], np.float32)
            elif dtype != np.int64:
                data.reshape(-1)[1::3] = data.reshape(-1)[0]  # repeated values: ties
            x = m.tensor(shape, dtype, "x", data)
        else:
            x = m.tensor(shape, dtype, "x")
        kk = m.tensor([], np.int32, "k", k)
        out_shape = shape[:-1] + [k]
        v = m.output(out_shape, dtype, "values")
        i = m.output(out_shape, np.int32, "indices")
        m.write(out_dir, name, OPS.TOPK_V2, 1 if dtype in (np.float32, np.uint8, np.int32, np.int64) else 2,
                [x, kk], [v, i])

    # ADD_N: two to four inputs of one shape (float32, int32), a scalar, one constant input.
    for name, dtype, shape, n, const in [("add_n_float", np.float32, [3, 4], 2, False),
                                         ("add_n_float_4", np.float32, [2, 3, 4], 4, False),
                                         ("add_n_float_scalar", np.float32, [], 3, False),
                                         ("add_n_float_const", np.float32, [5], 3, True),
                                         ("add_n_int32", np.int32, [2, 5], 3, False),
                                         ("add_n_int32_const", np.int32, [4], 2, True)]:
        m = Model()
        inputs = [m.tensor(shape, dtype, "x%d" % k) for k in range(n - 1 if const else n)]
        if const:
            inputs.append(m.tensor(shape, dtype, "c", values(dtype, shape)))
        y = m.output(shape, dtype, "y")
        m.write(out_dir, name, OPS.ADD_N, 1, inputs, [y])


def batch_matmul(out_dir):
    """BATCH_MATMUL (float32): plain, transposed operands, broadcast batch dimensions, a constant rhs."""
    for name, lhs_shape, rhs_shape, adj_x, adj_y, out_shape, const_rhs in [
            ("batch_matmul", [2, 3, 4], [2, 4, 5], False, False, [2, 3, 5], False),
            ("batch_matmul_adj", [2, 4, 3], [2, 5, 4], True, True, [2, 3, 5], False),
            ("batch_matmul_broadcast", [3, 1, 2, 6], [4, 6, 3], False, False, [3, 4, 2, 3], False),
            ("batch_matmul_const_rhs", [5, 7], [7, 2], False, False, [5, 2], True)]:
        m = Model()
        a = m.tensor(lhs_shape, np.float32, "lhs")
        data = np.random.default_rng(3).uniform(-1, 1, size=rhs_shape).astype(np.float32) if const_rhs else None
        b = m.tensor(rhs_shape, np.float32, "rhs", data)
        y = m.output(out_shape, np.float32, "y")
        o = S.BatchMatMulOptionsT()
        o.adjX, o.adjY = adj_x, adj_y
        m.write(out_dir, name, OPS.BATCH_MATMUL, 1, [a, b], [y], S.BuiltinOptions.BatchMatMulOptions, o)



def unsorted_segments(out_dir):
    """UNSORTED_SEGMENT_SUM/PROD/MAX/MIN (float32, int32): constant ids, a dropped (negative) id, an empty segment."""
    for op_name, code in [("sum", OPS.UNSORTED_SEGMENT_SUM), ("prod", OPS.UNSORTED_SEGMENT_PROD),
                          ("max", OPS.UNSORTED_SEGMENT_MAX), ("min", OPS.UNSORTED_SEGMENT_MIN)]:
        for dtype, shape, ids, ids_shape, num in [
                (np.float32, [6, 3], [0, 2, 0, -1, 2, 4], [6], 5),
                (np.int32, [2, 3, 4], [1, 0, 1, 1, 0, 3], [2, 3], 4)]:
            m = Model()
            x = m.tensor(shape, dtype, "data")
            i = m.tensor(ids_shape, np.int32, "segment_ids", ids)
            n = m.tensor([1], np.int32, "num_segments", [num])
            y = m.output([num] + shape[len(ids_shape):], dtype, "y")
            name = "unsorted_segment_%s_%s" % (op_name, "float" if dtype == np.float32 else "int32")
            m.write(out_dir, name, code, 1, [x, i, n], [y])
    for name, dtype, in_q, out_q in [("relu_0_to_1", np.float32, None, None),
                                     ("relu_0_to_1_int8", np.int8, (0.02, 5), (1 / 200.0, -100)),
                                     ("relu_0_to_1_uint8", np.uint8, (0.03, 100), (1 / 250.0, 3))]:
        m = Model()
        x = m.tensor([4, 9], dtype, "x", quant=in_q)
        y = m.output([4, 9], dtype, "y", quant=out_q)
        m.write(out_dir, name, OPS.RELU_0_TO_1, 1, [x], [y])
    for name, shape in [("rank", [2, 5, 3]), ("rank_scalar", [])]:
        m = Model()
        x = m.tensor(shape, np.float32, "x")
        y = m.output([], np.int32, "y")
        m.write(out_dir, name, OPS.RANK, 1, [x], [y], S.BuiltinOptions.RankOptions, S.RankOptionsT())


def detection_postprocess(out_dir):
    """TFLite_Detection_PostProcess (the custom op LiteRT's builtin resolver serves): fast and regular NMS, with and
    without a background class, longer box codes, float32 and uint8 inputs. The anchors (constant) lie on a grid
    with neighbours overlapping (IoU about 0.2 before decoding), so that NMS suppresses some boxes; the options make
    LiteRT write every output slot (its fast NMS leaves slots past the detections unwritten). Regular NMS has at
    most 2 classes here: LiteRT 2.3.0 runs its classes on a thread pool whose workers, after their first class,
    move on with ++next_col from num_threads, which skips class num_threads (3 classes at 2 threads drop the third;
    at 1 thread all are run, and Kiln agrees there too)."""
    from flatbuffers import flexbuffers

    def options(**kw):
        fbb = flexbuffers.Builder()
        with fbb.Map():
            for key, value in sorted(kw.items()):
                if isinstance(value, bool):
                    fbb.Bool(key, value)
                elif isinstance(value, int):
                    fbb.Int(key, value)
                else:
                    fbb.Float(key, value)
        return bytes(fbb.Finish())

    def anchors(n):
        side = int(np.ceil(np.sqrt(n)))
        rows = [[0.1 + 0.1 * (i // side), 0.1 + 0.1 * (i % side), 0.15, 0.15] for i in range(n)]
        return np.array(rows, dtype=np.float32)

    cases = [  # name, boxes, code size, classes (with background), options, box dtype, score dtype
        ("detection_fast", 24, 4, 4, dict(num_classes=3, max_detections=5, max_classes_per_detection=1,
                                          nms_score_threshold=-0.5, nms_iou_threshold=0.15), np.float32, np.float32),
        ("detection_fast_2_classes", 30, 4, 5, dict(num_classes=4, max_detections=6, max_classes_per_detection=2,
                                                    nms_score_threshold=-0.9, nms_iou_threshold=0.25),
         np.float32, np.float32),
        ("detection_fast_no_background", 20, 6, 3, dict(num_classes=3, max_detections=4, max_classes_per_detection=3,
                                                        nms_score_threshold=-1.0, nms_iou_threshold=0.6),
         np.float32, np.float32),
        ("detection_regular", 24, 4, 3, dict(num_classes=2, max_detections=6, max_classes_per_detection=1,
                                             detections_per_class=4, use_regular_nms=True,
                                             nms_score_threshold=0.0, nms_iou_threshold=0.15), np.float32, np.float32),
        ("detection_regular_few", 16, 5, 2, dict(num_classes=2, max_detections=10, max_classes_per_detection=1,
                                                 detections_per_class=2, use_regular_nms=True,
                                                 nms_score_threshold=0.7, nms_iou_threshold=0.3),
         np.float32, np.float32),
        ("detection_regular_default_per_class", 12, 4, 2, dict(num_classes=2, max_detections=8,
                                                               max_classes_per_detection=1, use_regular_nms=True,
                                                               nms_score_threshold=-0.2, nms_iou_threshold=0.5),
         np.float32, np.float32),
        ("detection_fast_uint8", 24, 4, 4, dict(num_classes=3, max_detections=5, max_classes_per_detection=1,
                                                nms_score_threshold=0.1, nms_iou_threshold=0.2), np.uint8, np.uint8),
        ("detection_regular_uint8", 24, 4, 3, dict(num_classes=2, max_detections=7, max_classes_per_detection=1,
                                                   detections_per_class=3, use_regular_nms=True,
                                                   nms_score_threshold=0.5, nms_iou_threshold=0.2),
         np.uint8, np.float32),
    ]
    for name, n, code, classes, opts, box_dtype, score_dtype in cases:
        for key, value in (("y_scale", 10.0), ("x_scale", 10.0), ("h_scale", 5.0), ("w_scale", 5.0)):
            opts.setdefault(key, value)
        m = Model()
        box_quant = (0.02, 128) if box_dtype == np.uint8 else None
        score_quant = (1.0 / 255, 0) if score_dtype == np.uint8 else None
        boxes = m.tensor([1, n, code], box_dtype, "box_encodings", quant=box_quant)
        scores = m.tensor([1, n, classes], score_dtype, "class_predictions", quant=score_quant)
        a = anchors(n)
        if box_dtype == np.uint8:
            anchor_quant = (1.0 / 256, 0)
            a = np.clip(np.round(a * 256), 0, 255).astype(np.uint8)
            anchor_tensor = m.tensor([n, 4], np.uint8, "anchors", a, quant=anchor_quant)
        else:
            anchor_tensor = m.tensor([n, 4], np.float32, "anchors", a)
        slots = opts["max_detections"] * opts["max_classes_per_detection"]
        outs = [m.output([1, slots, 4], np.float32, "detection_boxes"),
                m.output([1, slots], np.float32, "detection_classes"),
                m.output([1, slots], np.float32, "detection_scores"),
                m.output([1], np.float32, "num_detections")]
        m.write(out_dir, name, OPS.CUSTOM, 1, [boxes, scores, anchor_tensor], outs,
                custom=(b"TFLite_Detection_PostProcess", options(**opts)))


def sparse_encode(dense, formats, block=None, index_type=np.int32):
    """The stored values and S.SparsityParametersT of `dense` with the levels in their natural order, `formats`
    ("D" DENSE or "C" SPARSE_CSR per level) and, with `block` B, the last dimension split into blocks of B (one more
    level, DENSE), as LiteRT's converter writes them: a CSR level lists only the entries under which something is
    not zero."""
    rank = dense.ndim
    expanded = dense
    if block is not None:
        expanded = dense.reshape(dense.shape[:-1] + (dense.shape[-1] // block, block))
    levels = expanded.ndim
    segments, indices, values = [[0] for _ in range(levels)], [[] for _ in range(levels)], []

    def visit(level, coord):
        if level == levels:
            values.append(expanded[coord])
            return
        for i in range(expanded.shape[level]):
            if formats[level] == "C" and not np.any(expanded[coord + (i,)] != 0):
                continue
            if formats[level] == "C":
                indices[level].append(i)
            visit(level + 1, coord + (i,))
        if formats[level] == "C":
            segments[level].append(len(indices[level]))

    visit(0, ())
    vector_types = {np.int32: (S.Int32VectorT, S.SparseIndexVector.Int32Vector),
                    np.uint16: (S.Uint16VectorT, S.SparseIndexVector.Uint16Vector),
                    np.uint8: (S.Uint8VectorT, S.SparseIndexVector.Uint8Vector)}
    make, kind = vector_types[index_type]
    sp = S.SparsityParametersT()
    sp.traversalOrder = list(range(levels))
    sp.blockMap = [rank - 1] if block is not None else []
    sp.dimMetadata = []
    for level in range(levels):
        m = S.DimensionMetadataT()
        if formats[level] == "D":
            m.format, m.denseSize = S.DimensionType.DENSE, expanded.shape[level]
        else:
            m.format = S.DimensionType.SPARSE_CSR
            seg, idx = make(), make()
            seg.values, idx.values = [int(v) for v in segments[level]], [int(v) for v in indices[level]]
            m.arraySegmentsType, m.arraySegments, m.arrayIndicesType, m.arrayIndices = kind, seg, kind, idx
        sp.dimMetadata.append(m)
    return np.array(values, dtype=dense.dtype), sp


def densify_models(out_dir):
    """DENSIFY of sparse constants (float32, int8, float16; CSR levels, 1x4 blocks, int32/uint16/uint8 index
    vectors) added to a random input, and a FULLY_CONNECTED whose sparse weights it reads directly."""
    rng = np.random.default_rng(5)

    def sparse_values(shape, dtype, density=0.35):
        values = rng.uniform(-2, 2, size=shape) * (rng.uniform(size=shape) < density)
        if dtype == np.int8:
            return np.round(values * 30).astype(np.int8)
        return values.astype(dtype)

    cases = [  # name, dense shape, dtype, level formats, block, index type
        ("densify_csr", [4, 6], np.float32, "DC", None, np.int32),
        ("densify_3d_two_csr", [3, 4, 5], np.float32, "DCC", None, np.uint16),
        ("densify_block_1x4", [5, 8], np.float32, "DCD", 4, np.uint8),
        ("densify_all_dense", [2, 3], np.float32, "DD", None, np.int32),
        ("densify_int8_block", [3, 8], np.int8, "DCD", 4, np.int32),
        ("densify_float16", [4, 5], np.float16, "DC", None, np.uint8),
    ]
    for name, shape, dtype, formats, block, index_type in cases:
        dense = sparse_values(shape, dtype)
        values, sp = sparse_encode(dense, formats, block, index_type)
        m = Model()
        quant = (0.05, 0) if dtype == np.int8 else None
        w = m.tensor(shape, dtype, "sparse_weights", values, quant=quant, sparsity=sp)
        d = m.output(shape, dtype, "dense", quant=quant)
        ops = [(OPS.DENSIFY, 1, [w], [d], 0, None)]
        if dtype != np.float32:  # DEQUANTIZE to float32, then add
            f = m.output(shape, np.float32, "dequantized")
            ops.append((OPS.DEQUANTIZE, 2 if dtype == np.int8 else 3, [d], [f], 0, None))
            d = f
        x = m.tensor(shape, np.float32, "x")
        y = m.output(shape, np.float32, "y")
        ops.append((OPS.ADD, 1, [x, d], [y], S.BuiltinOptions.AddOptions, S.AddOptionsT()))
        m.write_ops(out_dir, name, ops, [y])
    # FULLY_CONNECTED reading a sparse float32 weight directly (1x16 blocks). With 1x4 blocks or plain CSR rows
    # LiteRT 2.3.0's sparse FULLY_CONNECTED returns garbage (NaN, 1e28, values shifted by a column) where DENSIFY of
    # the same weights agrees with Kiln, so those are not compared.
    dense = sparse_values([8, 32], np.float32)
    values, sp = sparse_encode(dense, "DCD", 16)
    m = Model()
    x = m.tensor([2, 32], np.float32, "x")
    w = m.tensor([8, 32], np.float32, "sparse_weights", values, sparsity=sp)
    y = m.output([2, 8], np.float32, "y")
    o = S.FullyConnectedOptionsT()
    m.write(out_dir, "fully_connected_sparse_weights", OPS.FULLY_CONNECTED, 1, [x, w, -1], [y],
            S.BuiltinOptions.FullyConnectedOptions, o)


def conv3d_models(out_dir):
    """CONV_3D (float32): VALID and SAME padding, strides and dilations per dimension, with and without bias,
    fused activations, batch 2."""
    rng = np.random.default_rng(9)
    A = S.ActivationFunctionType
    cases = [  # name, input shape, filter shape, padding, strides (d, h, w), dilations (d, h, w), bias, activation
        ("conv3d_valid", [1, 4, 5, 6, 2], [2, 3, 2, 2, 3], S.Padding.VALID, (1, 1, 1), (1, 1, 1), True, A.NONE),
        ("conv3d_same_stride", [2, 5, 6, 7, 3], [3, 3, 3, 3, 4], S.Padding.SAME, (2, 1, 2), (1, 1, 1), True, A.RELU),
        ("conv3d_dilated", [1, 6, 7, 5, 2], [2, 2, 3, 2, 2], S.Padding.SAME, (1, 2, 1), (2, 1, 2), False, A.RELU6),
        ("conv3d_valid_dilated_stride", [1, 7, 6, 6, 1], [3, 2, 2, 1, 3], S.Padding.VALID, (2, 2, 3), (2, 3, 1),
         True, A.RELU_N1_TO_1),
    ]
    for name, in_shape, f_shape, padding, strides, dilations, has_bias, act in cases:
        m = Model()
        x = m.tensor(in_shape, np.float32, "x")
        f = m.tensor(f_shape, np.float32, "filter", rng.uniform(-1, 1, size=f_shape).astype(np.float32))
        inputs = [x, f]
        if has_bias:
            inputs.append(m.tensor([f_shape[4]], np.float32, "bias",
                                   rng.uniform(-1, 1, size=[f_shape[4]]).astype(np.float32)))
        out = []
        for axis in range(3):
            size, k, st, dl = in_shape[1 + axis], f_shape[axis], strides[axis], dilations[axis]
            eff = (k - 1) * dl + 1
            out.append((size + st - 1) // st if padding == S.Padding.SAME else (size - eff + st) // st)
        y = m.output([in_shape[0]] + out + [f_shape[4]], np.float32, "y")
        o = S.Conv3DOptionsT()
        o.padding, o.fusedActivationFunction = padding, act
        o.strideD, o.strideH, o.strideW = strides
        o.dilationDFactor, o.dilationHFactor, o.dilationWFactor = dilations
        m.write(out_dir, name, OPS.CONV_3D, 1, inputs, [y], S.BuiltinOptions.Conv3DOptions, o)


def conv3d_transpose_models(out_dir):
    """CONV_3D_TRANSPOSE (float32): a constant output shape, VALID and SAME, strides, dilation, bias, activation."""
    rng = np.random.default_rng(10)
    A = S.ActivationFunctionType
    cases = [  # name, input shape, filter [D, H, W, out_c, in_c], output shape, padding, strides, dilations, bias, act
        ("conv3d_transpose_valid", [1, 3, 4, 3, 2], [2, 2, 3, 3, 2], [1, 4, 5, 5, 3], S.Padding.VALID, (1, 1, 1),
         (1, 1, 1), True, A.NONE),
        ("conv3d_transpose_same_stride", [2, 2, 3, 3, 3], [3, 3, 2, 2, 3], [2, 4, 6, 5, 2], S.Padding.SAME,
         (2, 2, 2), (1, 1, 1), True, A.RELU),
        ("conv3d_transpose_valid_stride", [1, 2, 3, 2, 1], [2, 3, 2, 2, 1], [1, 5, 7, 5, 2], S.Padding.VALID,
         (3, 2, 2), (1, 1, 1), False, A.RELU6),
        ("conv3d_transpose_dilated", [1, 3, 2, 3, 2], [2, 2, 2, 2, 2], [1, 4, 4, 5, 2], S.Padding.VALID, (1, 1, 1),
         (1, 2, 2), True, A.NONE),
    ]
    for name, in_shape, f_shape, out_shape, padding, strides, dilations, has_bias, act in cases:
        m = Model()
        shape = m.tensor([5], np.int32, "output_shape", out_shape)
        f = m.tensor(f_shape, np.float32, "filter", rng.uniform(-1, 1, size=f_shape).astype(np.float32))
        x = m.tensor(in_shape, np.float32, "x")
        inputs = [shape, f, x]
        if has_bias:
            inputs.append(m.tensor([f_shape[3]], np.float32, "bias",
                                   rng.uniform(-1, 1, size=[f_shape[3]]).astype(np.float32)))
        y = m.output(out_shape, np.float32, "y")
        o = S.Conv3DOptionsT()
        o.padding, o.fusedActivationFunction = padding, act
        o.strideD, o.strideH, o.strideW = strides
        o.dilationDFactor, o.dilationHFactor, o.dilationWFactor = dilations
        m.write(out_dir, name, OPS.CONV_3D_TRANSPOSE, 1, inputs, [y], S.BuiltinOptions.Conv3DOptions, o)


def small_ops(out_dir):
    """SEGMENT_SUM (float32, int32; constant sorted ids), MATRIX_DIAG and MATRIX_SET_DIAG (each moved type, batched
    and rectangular; not bool, which LiteRT's kernels mishandle), DYNAMIC_UPDATE_SLICE (each moved type, int32 and int64 starts, clamped starts), RIGHT_SHIFT and
    BITWISE_XOR (each integer type, broadcast up to 6-D; uint16/uint32 from constants, which litert_bench draws no
    values for), BITCAST (wider, narrower and equal element sizes)."""
    for name, dtype, shape, ids in [("segment_sum", np.float32, [6, 3], [0, 0, 1, 2, 2, 2]),
                                    ("segment_sum_1d", np.float32, [5], [0, 1, 1, 1, 2]),
                                    ("segment_sum_int32", np.int32, [4, 2, 3], [0, 1, 1, 2]),
                                    ("segment_sum_one", np.int32, [3, 4], [0, 0, 0])]:
        m = Model()
        x = m.tensor(shape, dtype, "data")
        i = m.tensor([len(ids)], np.int32, "segment_ids", ids)
        y = m.output([ids[-1] + 1] + shape[1:], dtype, "y")
        m.write(out_dir, name, OPS.SEGMENT_SUM, 1, [x, i], [y])
    moved = [(np.float32, None), (np.int32, None), (np.int64, None), (np.int8, (0.05, -3)), (np.uint8, (0.02, 128)),
             (np.int16, (0.001, 0)), (np.bool_, None)]
    for dtype, quant in moved:
        suffix = "" if dtype == np.float32 else "_" + np.dtype(dtype).name
        diag_shapes = [] if dtype == np.bool_ else [("", [3, 4]), ("_1d", [5])]  # LiteRT's bool kernel is broken
        for tag, shape in diag_shapes:
            m = Model()
            x = m.tensor(shape, dtype, "x", quant=quant)
            y = m.output(shape + [shape[-1]], dtype, "y", quant=quant)
            m.write(out_dir, "matrix_diag" + tag + suffix, OPS.MATRIX_DIAG, 1, [x], [y])
        set_shapes = [] if dtype == np.bool_ else [("", [2, 3, 4]), ("_tall", [5, 2]), ("_batched", [2, 1, 3, 3, 3])]
        for tag, shape in set_shapes:
            m = Model()
            x = m.tensor(shape, dtype, "x", quant=quant)
            d = m.tensor(shape[:-2] + [min(shape[-2:])], dtype, "diagonal", quant=quant)
            y = m.output(shape, dtype, "y", quant=quant)
            m.write(out_dir, "matrix_set_diag" + tag + suffix, OPS.MATRIX_SET_DIAG, 1, [x, d], [y])
        for tag, shape, ushape, starts, itype in [("", [4, 5], [2, 3], [1, 2], np.int32),
                                                  ("_clamped", [3, 4, 2], [2, 2, 1], [5, -3, 1], np.int64),
                                                  ("_full", [2, 3], [2, 3], [1, 1], np.int32),
                                                  ("_runtime", [3, 5, 4], [1, 2, 3], None, np.int32)]:
            if starts is None and dtype not in (np.float32, np.int8):
                continue
            m = Model()  # run-time start indices: random values, clamped into range
            x = m.tensor(shape, dtype, "operand", quant=quant)
            u = m.tensor(ushape, dtype, "update", quant=quant)
            s = m.tensor([len(shape)], itype, "start_indices", None if starts is None else np.array(starts, dtype=itype))
            y = m.output(shape, dtype, "y", quant=quant)
            m.write(out_dir, "dynamic_update_slice" + tag + suffix, OPS.DYNAMIC_UPDATE_SLICE, 1, [x, u, s], [y])
    rng = np.random.default_rng(11)
    for dtype in [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32]:
        info = np.iinfo(dtype)
        bits = info.bits
        for op_name, code in [("right_shift", OPS.RIGHT_SHIFT), ("bitwise_xor", OPS.BITWISE_XOR)]:
            for tag, a_shape, b_shape in [("", [3, 4], [3, 4]), ("_bcast", [2, 1, 3], [4, 1]),
                                          ("_6d", [2, 1, 2, 1, 2, 1], [1, 2, 1, 2, 1, 2]), ("_scalar", [5], [])]:
                m = Model()
                const = dtype in (np.uint16, np.uint32)
                a_data = rng.integers(info.min, info.max, size=a_shape, endpoint=True, dtype=dtype) if const else None
                if op_name == "right_shift":  # shifts below 0 and past the width clamp
                    b_data = rng.integers(-3 if info.min < 0 else 0, bits + 4, size=b_shape, endpoint=True)
                else:
                    b_data = rng.integers(info.min, info.max, size=b_shape, endpoint=True, dtype=dtype)
                a = m.tensor(a_shape, dtype, "a", a_data)
                b = m.tensor(b_shape, dtype, "b", np.asarray(b_data).astype(dtype))
                out_shape = list(np.broadcast_shapes(tuple(a_shape), tuple(b_shape)))
                y = m.output(out_shape, dtype, "y")
                m.write(out_dir, "%s%s_%s" % (op_name, tag, np.dtype(dtype).name), code, 1, [a, b], [y])
    for tag, in_dtype, in_shape, out_dtype, out_shape in [("float_to_int32", np.float32, [3, 4], np.int32, [3, 4]),
                                                          ("float_to_uint8", np.float32, [2, 3], np.uint8, [2, 3, 4]),
                                                          ("int8_to_float", np.int8, [3, 4], np.float32, [3]),
                                                          ("int16_to_int32", np.int16, [2], np.int32, []),
                                                          ("int32_to_int64", np.int32, [5, 2], np.int64, [5]),
                                                          ("int64_to_int16", np.int64, [3], np.int16, [3, 4])]:
        m = Model()
        x = m.tensor(in_shape, in_dtype, "x")
        y = m.output(out_shape, out_dtype, "y")
        m.write(out_dir, "bitcast_" + tag, OPS.BITCAST, 1, [x], [y])


def small_ops_with_options(out_dir):
    """REVERSE_SEQUENCE (its five types, seq_dim before and after batch_dim, int64 lengths, 0 and full lengths),
    SPARSE_TO_DENSE (its types, 1-D and 2-D indices, a scalar value, int64 indices and shape, a duplicate index),
    BUCKETIZE (float32, float64, int32, int64; duplicate boundaries, none at all) and FAKE_QUANT (ranges that nudge
    each way, 4 to 16 bits)."""
    for dtype, quant in [(np.float32, None), (np.int32, None), (np.int64, None), (np.uint8, (0.02, 128)),
                         (np.int16, (0.001, 0))]:
        suffix = "" if dtype == np.float32 else "_" + np.dtype(dtype).name
        for tag, shape, seq_dim, batch_dim, lengths, ltype in [
                ("", [3, 5], 1, 0, [0, 5, 3], np.int32),
                ("_seq_first", [4, 3, 2], 0, 1, [2, 4, 1], np.int64),
                ("_5d", [2, 3, 1, 4, 2], 3, 1, [4, 1, 3], np.int32)]:
            m = Model()
            x = m.tensor(shape, dtype, "x", quant=quant)
            l = m.tensor([len(lengths)], ltype, "seq_lengths", np.array(lengths, dtype=ltype))
            y = m.output(shape, dtype, "y", quant=quant)
            o = S.ReverseSequenceOptionsT()
            o.seqDim, o.batchDim = seq_dim, batch_dim
            m.write(out_dir, "reverse_sequence" + tag + suffix, OPS.REVERSE_SEQUENCE, 1, [x, l], [y],
                    S.BuiltinOptions.ReverseSequenceOptions, o)
    for dtype, quant in [(np.float32, None), (np.int32, None), (np.int64, None), (np.int8, (0.05, -3)),
                         (np.uint8, (0.02, 128))]:
        suffix = "" if dtype == np.float32 else "_" + np.dtype(dtype).name
        for tag, itype, indices, ishape, shape, values_scalar in [
                ("", np.int32, [0, 1, 2, 0, 3, 3, 0, 1], [4, 2], [4, 4], False),
                ("_1d", np.int64, [5, 0, 2], [3], [7], False),
                ("_scalar_value", np.int32, [1, 0, 1, 0, 0, 0, 1, 2, 1], [3, 3], [2, 3, 2], True)]:
            m = Model()
            i = m.tensor(ishape, itype, "indices", np.array(indices, dtype=itype))
            s = m.tensor([len(shape)], itype, "output_shape", np.array(shape, dtype=itype))
            v = m.tensor([] if values_scalar else [ishape[0]], dtype, "values", quant=quant)
            d = m.tensor([], dtype, "default_value", quant=quant)
            y = m.output(shape, dtype, "y", quant=quant)
            m.write(out_dir, "sparse_to_dense" + tag + suffix, OPS.SPARSE_TO_DENSE, 3 if tag == "" else 1,
                    [i, s, v, d], [y], S.BuiltinOptions.SparseToDenseOptions, S.SparseToDenseOptionsT())
    for dtype in [np.float32, np.float64, np.int32, np.int64]:
        for tag, shape, boundaries in [("", [4, 6], [-0.5, -0.1, 0.0, 0.0, 0.3, 0.9]),
                                       ("_wide", [20], [-100.0, -3.5, 0.0, 2.0, 50.0, 126.5]),
                                       ("_none", [3], [])]:
            m = Model()
            x = m.tensor(shape, dtype, "x")
            y = m.output(shape, np.int32, "y")
            o = S.BucketizeOptionsT()
            o.boundaries = boundaries
            m.write(out_dir, "bucketize%s_%s" % (tag, np.dtype(dtype).name), OPS.BUCKETIZE, 1, [x], [y],
                    S.BuiltinOptions.BucketizeOptions, o)
    for tag, lo, hi, bits in [("", -1.0, 1.0, 8), ("_positive", 0.0, 6.0, 8), ("_shifted", -0.3, 0.7, 4),
                              ("_above_zero", 0.2, 0.9, 8), ("_below_zero", -0.9, -0.1, 8), ("_16bit", -1.0, 1.0, 16)]:
        m = Model()
        x = m.tensor([5, 8], np.float32, "x")
        y = m.output([5, 8], np.float32, "y")
        o = S.FakeQuantOptionsT()
        o.min, o.max, o.numBits, o.narrowRange = lo, hi, bits, False
        m.write(out_dir, "fake_quant" + tag, OPS.FAKE_QUANT, 2 if tag == "" else 1, [x], [y],
                S.BuiltinOptions.FakeQuantOptions, o)


def stablehlo_models(out_dir):
    """STABLEHLO_ADD, _MULTIPLY, _MAXIMUM, _MINIMUM (every type LiteRT takes), _AND (integers, bool) and _SHIFT_LEFT
    (int8, int16, int32: counts constant within [0, bits), LiteRT's result being undefined outside, where it
    differs by element position); one shape per model pair (StableHLO does not broadcast), rank 0 to 6; uint16/uint32
    and int32 overflow from constants."""
    rng = np.random.default_rng(12)
    ops = [("add", OPS.STABLEHLO_ADD), ("multiply", OPS.STABLEHLO_MULTIPLY), ("maximum", OPS.STABLEHLO_MAXIMUM),
           ("minimum", OPS.STABLEHLO_MINIMUM), ("and", OPS.STABLEHLO_AND), ("shift_left", OPS.STABLEHLO_SHIFT_LEFT)]
    types = [np.float32, np.int32, np.int64, np.int8, np.uint8, np.int16, np.uint16, np.uint32, np.bool_]
    for op_name, code in ops:
        for dtype in types:
            if op_name == "and" and dtype == np.float32:
                continue
            if op_name == "shift_left" and dtype not in (np.int8, np.int16, np.int32):
                continue
            shapes = [("", [3, 4]), ("_6d", [2, 1, 3, 1, 2, 2]), ("_scalar", [])]
            if dtype in (np.int32, np.int8, np.float32):
                shapes.append(("_const", [7]))
            for tag, shape in shapes:
                m = Model()
                data = [None, None]
                if tag == "_const" or dtype in (np.uint16, np.uint32):
                    for k in range(2):
                        if dtype == np.float32:
                            data[k] = rng.uniform(-3, 3, size=shape).astype(dtype)
                        else:
                            info = np.iinfo(dtype)
                            data[k] = rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
                if op_name == "shift_left":
                    bits = np.iinfo(dtype).bits
                    data[1] = rng.integers(0, bits - 1, size=shape, endpoint=True).astype(dtype)
                a = m.tensor(shape, dtype, "a", data[0])
                b = m.tensor(shape, dtype, "b", data[1])
                y = m.output(shape, dtype, "y")
                m.write(out_dir, "stablehlo_%s%s_%s" % (op_name, tag, np.dtype(dtype).name), code, 1, [a, b], [y])


def complex_models(out_dir):
    """REAL, IMAG and COMPLEX_ABS of constant complex64 and complex128 tensors (litert_bench draws no complex
    values), and RFFT2D (cropping, zero-padding, batches, fft lengths 1 to 128; width 1, where LiteRT is wrong, is
    refused) followed by REAL or IMAG, since the comparison reads float outputs."""
    rng = np.random.default_rng(13)
    for dtype, out_dtype in [(np.complex64, np.float32), (np.complex128, np.float64)]:
        for shape in [[3, 5], [2, 1, 4], []]:
            values = (rng.uniform(-4, 4, size=shape) + 1j * rng.uniform(-4, 4, size=shape)).astype(dtype)
            for op_name, code in [("real", OPS.REAL), ("imag", OPS.IMAG), ("complex_abs", OPS.COMPLEX_ABS)]:
                m = Model()
                x = m.tensor(shape, dtype, "x", values)
                y = m.output(shape, out_dtype, "y")
                m.write(out_dir, "%s_%s_%dd" % (op_name, np.dtype(dtype).name, len(shape)), code, 1, [x], [y])
    for tag, shape, fft in [("", [8, 8], [8, 8]), ("_padded", [3, 5], [4, 8]), ("_cropped", [2, 6, 9], [4, 4]),
                            ("_wide", [4, 16], [2, 16]), ("_one_row", [3, 3], [1, 2]),
                            ("_large", [4, 64, 128], [64, 128])]:
        for part, code in [("real", OPS.REAL), ("imag", OPS.IMAG)]:
            m = Model()
            x = m.tensor(shape, np.float32, "x")
            l = m.tensor([2], np.int32, "fft_length", fft)
            out_shape = shape[:-2] + [fft[0], fft[1] // 2 + 1]
            spectrum = m.output(out_shape, np.complex64, "spectrum")
            y = m.output(out_shape, np.float32, "y")
            m.write(out_dir, "rfft2d%s_%s" % (tag, part), OPS.RFFT2D, 1, [x, l], [spectrum],
                    then=[(code, 1, [spectrum], [y])])


def embedding_lookup_sparse(out_dir):
    """EMBEDDING_LOOKUP_SPARSE with each combiner: constant ids, indices and dense_shape (2-D and 3-D), run-time
    weights and params (rank 2 and 3), an empty output row, and a row met again after another (LiteRT restarts its
    sums there)."""
    cases = [  # name, ids, indices, dense_shape, params shape
        ("", [0, 3, 1, 2, 2], [[0, 0], [0, 1], [1, 0], [3, 0], [3, 1]], [4, 2], [5, 3]),
        ("_3d", [1, 0, 4, 2], [[0, 0, 0], [0, 1, 0], [1, 1, 1], [1, 2, 0]], [2, 3, 2], [6, 2, 2]),
        ("_revisit", [1, 2, 3, 0], [[0, 0], [1, 0], [0, 1], [1, 1]], [2, 2], [4, 3]),
    ]
    for combiner_name, combiner in [("sum", S.CombinerType.SUM), ("mean", S.CombinerType.MEAN),
                                    ("sqrtn", S.CombinerType.SQRTN)]:
        for tag, ids, indices, dense_shape, params_shape in cases:
            m = Model()
            i = m.tensor([len(ids)], np.int32, "ids", ids)
            x = m.tensor([len(ids), len(dense_shape)], np.int32, "indices", indices)
            d = m.tensor([len(dense_shape)], np.int32, "dense_shape", dense_shape)
            w = m.tensor([len(ids)], np.float32, "weights")
            p = m.tensor(params_shape, np.float32, "params")
            y = m.output(dense_shape[:-1] + params_shape[1:], np.float32, "y")
            o = S.EmbeddingLookupSparseOptionsT()
            o.combiner = combiner
            m.write(out_dir, "embedding_lookup_sparse%s_%s" % (tag, combiner_name), OPS.EMBEDDING_LOOKUP_SPARSE, 1,
                    [i, x, d, w, p], [y], S.BuiltinOptions.EmbeddingLookupSparseOptions, o)


def random_models(out_dir):
    """RANDOM_UNIFORM and RANDOM_STANDARD_NORMAL with fixed seeds (LiteRT's Philox sequence; both seeds 0 would draw
    them at random): sizes that end mid-block, negative seeds and one past 32 bits (LiteRT keeps the low 32)."""
    for op_name, code in [("random_uniform", OPS.RANDOM_UNIFORM),
                          ("random_standard_normal", OPS.RANDOM_STANDARD_NORMAL)]:
        for tag, shape, seed, seed2 in [("", [5], 1, 2), ("_2d", [3, 7], -1, 2 ** 40), ("_3d", [2, 2, 2], 7, 0),
                                        ("_seed2_only", [9], 0, 123456789)]:
            m = Model()
            s = m.tensor([len(shape)], np.int32, "shape", shape)
            y = m.output(shape, np.float32, "y")
            o = S.RandomOptionsT()
            o.seed, o.seed2 = seed, seed2
            m.write(out_dir, op_name + tag, code, 1, [s], [y], S.BuiltinOptions.RandomOptions, o)
    # RANDOM_* with the shape computed at run time (FLOOR_DIV of constants by 1): a dynamic output.
    for op_name, code in [("random_uniform", OPS.RANDOM_UNIFORM),
                          ("random_standard_normal", OPS.RANDOM_STANDARD_NORMAL)]:
        m = Model()
        a = m.tensor([2], np.int32, "shape_a", [3, 5])
        one = m.tensor([2], np.int32, "shape_one", [1, 1])
        s = m.output([2], np.int32, "shape")
        y = m.output([1, 1], np.float32, "y")
        o = S.RandomOptionsT()
        o.seed, o.seed2 = 5, -9
        m.write_ops(out_dir, op_name + "_runtime_shape", [(OPS.FLOOR_DIV, 1, [a, one], [s], 0, None),
                                                          (code, 1, [s], [y], S.BuiltinOptions.RandomOptions, o)], [y])
    # MULTINOMIAL (Philox draws from a copy of the generator, two uint32 per draw, LiteRT's skip-ahead): logits a
    # model input (random floats) or constant (with -inf and NaN, skipped), int64 or int32 output, odd sample counts
    # (blocks carried across rows), num_samples constant or computed at run time.
    for tag, logits_shape, logits, samples, out_type, seed, seed2, run_time in [
            ("", [3, 5], None, 7, np.int64, 1, 2, False),
            ("_int32", [2, 4], None, 9, np.int32, -7, 3, False),
            ("_const_logits", [2, 4], [[0.0, -np.inf, 2.0, 1.0], [np.nan, 3.0, 3.0, -1.0]], 11, np.int64, 42, 0,
             False),
            ("_one_class", [4, 1], None, 3, np.int64, 3, 4, False),
            ("_wide", [1, 300], None, 64, np.int32, 123, 456, False),
            ("_runtime_num_samples", [2, 6], None, 5, np.int64, 9, 8, True)]:
        m = Model()
        x = m.tensor(logits_shape, np.float32, "logits", logits)
        ops = []
        if run_time:
            a = m.tensor([], np.int32, "num_samples_a", samples)
            one = m.tensor([], np.int32, "num_samples_one", 1)
            n = m.output([], np.int32, "num_samples")
            ops.append((OPS.FLOOR_DIV, 1, [a, one], [n], 0, None))
        else:
            n = m.tensor([], np.int32, "num_samples", samples)
        y = m.output([logits_shape[0], samples], out_type, "y")
        o = S.RandomOptionsT()
        o.seed, o.seed2 = seed, seed2
        ops.append((OPS.MULTINOMIAL, 1, [x, n], [y], S.BuiltinOptions.RandomOptions, o))
        m.write_ops(out_dir, "multinomial" + tag, ops, [y])


def dynamic_models(out_dir):
    """WHERE and UNIQUE: outputs whose shape depends on the values (dynamic tensors, sized at Invoke). The declared
    output shape is a placeholder; LiteRT and Kiln both report the shape the values give. (Rank 0, which LiteRT's
    WHERE refuses, and empty inputs, which litert_bench cannot feed, are in tests/ops/dynamic_wrapper_test.cc.)"""
    # WHERE of a model input (random values: bool half true, int8/int32 some zeros, float none) and of constants.
    for dtype, shape in [(np.bool_, [4, 5]), (np.bool_, [2, 3, 2, 2]), (np.int8, [300]), (np.int32, [3, 40]),
                         (np.float32, [2, 3]), (np.uint8, [2, 2, 2, 2, 2, 2]), (np.int64, [64])]:
        m = Model()
        x = m.tensor(shape, dtype, "condition")
        y = m.output([1, len(shape)], np.int64, "coordinates")
        name = "where_%s_rank%d" % (np.dtype(dtype).name, len(shape))
        m.write(out_dir, name, OPS.WHERE, 2 if dtype in (np.int8, np.uint8, np.int64) else 1, [x], [y])
    for name, dtype, data in [("where_const_float", np.float32, [[0.0, 1.5, -0.0], [2.0, 0.0, -3.0]]),
                              ("where_const_bool_none", np.bool_, [[False, False], [False, False]])]:
        m = Model()
        x = m.tensor(np.shape(data), dtype, "condition", data)
        y = m.output([1, 2], np.int64, "coordinates")
        m.write(out_dir, name, OPS.WHERE, 1, [x], [y])
    # UNIQUE of a model input (int8 over its range, int32 in [-128, 127]: many repeats) with int32 and int64 idx.
    for dtype, n, idx_type in [(np.int8, 500, np.int32), (np.int32, 200, np.int64), (np.float32, 7, np.int32),
                               (np.uint8, 600, np.int64), (np.int16, 50, np.int32), (np.int64, 300, np.int32)]:
        m = Model()
        x = m.tensor([n], dtype, "x")
        y = m.output([1], dtype, "y")
        idx = m.output([n], idx_type, "idx")
        o = S.UniqueOptionsT()
        o.idxOutType = TYPES[idx_type]
        m.write(out_dir, "unique_%s_idx_%s_%d" % (np.dtype(dtype).name, np.dtype(idx_type).name, n), OPS.UNIQUE, 1,
                [x], [y, idx], S.BuiltinOptions.UniqueOptions, o)

    # Shape inputs computed at run time: each is a FLOOR_DIV of constants by 1 (so it is no constant of the model,
    # and its values are fixed), which makes the op's output dynamic in LiteRT and in Kiln. LiteRT's SLICE wants
    # the declared output rank right, so every placeholder shape has the final rank.
    def computed(m, name, values, dtype=np.int32, scalar=False, shape=None):
        shape = shape if shape is not None else [] if scalar else [len(values)]
        a = m.tensor(shape, dtype, name + "_a", np.reshape(values, shape))
        one = m.tensor(shape, dtype, name + "_one", np.ones(shape, dtype))
        t = m.output(shape, dtype, name)
        return t, (OPS.FLOOR_DIV, 1, [a, one], [t], 0, None)

    for name, shape, begin, end, strides, masks in [
            ("strided_slice_runtime", [3, 4, 5], [0, 1, -1], [3, 4, 0], [1, 2, -2], (0, 0, 0, 0, 0)),
            ("strided_slice_runtime_masks", [4, 6], [1, 5], [0, -7], [2, -1], (0b01, 0b01, 0, 0, 0)),
            ("strided_slice_runtime_shrink", [2, 3, 4], [1, 0, 1], [2, 3, 3], [1, 1, 1], (0, 0, 0, 0, 0b001))]:
        m = Model()
        x = m.tensor(shape, np.float32, "x")
        b, add_b = computed(m, "begin", begin)
        e, add_e = computed(m, "end", end)
        st, add_s = computed(m, "strides", strides)
        y = m.output([1] * (len(shape) - bin(masks[4]).count("1")), np.float32, "y")
        o = S.StridedSliceOptionsT()
        o.beginMask, o.endMask, o.ellipsisMask, o.newAxisMask, o.shrinkAxisMask = masks
        m.write_ops(out_dir, name, [add_b, add_e, add_s,
                                    (OPS.STRIDED_SLICE, 1, [x, b, e, st], [y], S.BuiltinOptions.StridedSliceOptions,
                                     o)], [y])
    # (LiteRT 2.3.0's SLICE then checks the output's declared shape against the one it computes: declared right.)
    for name, dtype, shape, begin, size, out in [
            ("slice_runtime_size", np.float32, [3, 4], [1, 0], [2, -1], [2, 4]),
            ("slice_runtime_int8", np.int8, [2, 3, 4], [0, 1, 1], [-1, 2, 3], [2, 2, 3])]:
        m = Model()
        quant = (0.05, -3) if dtype == np.int8 else None
        x = m.tensor(shape, dtype, "x", quant=quant)
        b, add_b = computed(m, "begin", begin)
        sz, add_s = computed(m, "size", size)
        y = m.output(out, dtype, "y", quant=quant)
        m.write_ops(out_dir, name, [add_b, add_s, (OPS.SLICE, 1, [x, b, sz], [y], 0, None)], [y])
    for name, axis in [("expand_dims_runtime_last", -1), ("expand_dims_runtime_first", 0)]:
        m = Model()
        x = m.tensor([2, 3], np.float32, "x")
        a, add_a = computed(m, "axis", [axis])
        y = m.output([1, 1, 1], np.float32, "y")
        m.write_ops(out_dir, name, [add_a, (OPS.EXPAND_DIMS, 1, [x, a], [y], 0, None)], [y])
    m = Model()
    x = m.tensor([2, 1, 3], np.float32, "x")
    mul, add_m = computed(m, "multiples", [2, 3, 1])
    y = m.output([1, 1, 1], np.float32, "y")
    m.write_ops(out_dir, "tile_runtime", [add_m, (OPS.TILE, 1, [x, mul], [y], 0, None)], [y])
    m = Model()
    x = m.tensor([3, 1], np.int32, "x")
    sh, add_s = computed(m, "shape", [2, 3, 4])
    y = m.output([1, 1, 1], np.int32, "y")
    m.write_ops(out_dir, "broadcast_to_runtime", [add_s, (OPS.BROADCAST_TO, 2, [x, sh], [y], 0, None)], [y])
    for name, shape in [("reshape_runtime_shape", [3, -1]), ("reshape_runtime_flat", [-1])]:
        m = Model()
        x = m.tensor([2, 3, 2], np.float32, "x")
        sh, add_s = computed(m, "shape", shape)
        y = m.output([1] * len(shape), np.float32, "y")
        m.write_ops(out_dir, name, [add_s, (OPS.RESHAPE, 1, [x, sh], [y], 0, None)], [y])
    for name, dtype, dims_type, dims in [("fill_runtime_dims_float32", np.float32, np.int32, [2, 3, 4]),
                                         ("fill_runtime_dims_int32", np.int32, np.int32, [5, 1])]:
        m = Model()
        d, add_d = computed(m, "dims", dims, dims_type)
        v = m.tensor([], dtype, "value")
        y = m.output([1] * len(dims), dtype, "y")
        m.write_ops(out_dir, name, [add_d, (OPS.FILL, 1, [d, v], [y], 0, None)], [y])
    for name, start, limit, delta in [("range_runtime_up", 2, 11, 3), ("range_runtime_down", 5, -4, -2)]:
        m = Model()
        a, add_a = computed(m, "start", [start], scalar=True)
        b, add_b = computed(m, "limit", [limit], scalar=True)
        c, add_c = computed(m, "delta", [delta], scalar=True)
        y = m.output([1], np.int32, "y")
        m.write_ops(out_dir, name, [add_a, add_b, add_c, (OPS.RANGE, 1, [a, b, c], [y], 0, None)], [y])
    m = Model()
    x = m.tensor([3, 7], np.float32, "x")
    k, add_k = computed(m, "k", [3], scalar=True)
    v = m.output([3, 1], np.float32, "values")
    i = m.output([3, 1], np.int32, "indices")
    m.write_ops(out_dir, "topk_v2_runtime_k", [add_k, (OPS.TOPK_V2, 1, [x, k], [v, i], 0, None)], [v, i])
    m = Model()
    i = m.tensor([2, 3], np.int32, "indices", [[0, 3, 1], [2, -1, 4]])
    d, add_d = computed(m, "depth", [4], scalar=True)
    a = m.tensor([], np.float32, "on_value", 2.0)
    b = m.tensor([], np.float32, "off_value", -1.0)
    y = m.output([1, 1, 1], np.float32, "y")
    o = S.OneHotOptionsT()
    o.axis = 1
    m.write_ops(out_dir, "one_hot_runtime_depth", [add_d, (OPS.ONE_HOT, 1, [i, d, a, b], [y],
                                                           S.BuiltinOptions.OneHotOptions, o)], [y])
    for name, code, version in [("pad_runtime_paddings", OPS.PAD, 1), ("padv2_runtime_paddings", OPS.PADV2, 1),
                                ("mirror_pad_runtime_paddings", OPS.MIRROR_PAD, 1)]:
        m = Model()
        x = m.tensor([2, 3, 3], np.float32, "x")
        p, add_p = computed(m, "paddings", [0, 1, 2, 1, 1, 0], shape=[3, 2])
        inputs = [x, p]
        if code == OPS.PADV2:
            inputs.append(m.tensor([], np.float32, "constant_values", 4.5))
        y = m.output([1, 1, 1], np.float32, "y")
        options_type, options = 0, None
        if code == OPS.MIRROR_PAD:
            options_type, options = S.BuiltinOptions.MirrorPadOptions, S.MirrorPadOptionsT()
            options.mode = S.MirrorPadMode.SYMMETRIC
        m.write_ops(out_dir, name, [add_p, (code, version, inputs, [y], options_type, options)], [y])
    m = Model()
    a, add_a = computed(m, "axis", [-1], scalar=True)
    x = m.tensor([2, 6], np.float32, "x")
    outs = [m.output([1, 1], np.float32, "y%d" % k) for k in range(3)]
    o = S.SplitOptionsT()
    o.numSplits = 3
    m.write_ops(out_dir, "split_runtime_axis", [add_a, (OPS.SPLIT, 1, [a, x], outs, S.BuiltinOptions.SplitOptions, o)],
                outs)
    m = Model()
    x = m.tensor([5, 2], np.float32, "x")
    sz, add_s = computed(m, "size_splits", [2, -1])
    a, add_a = computed(m, "axis", [0], scalar=True)
    outs = [m.output([1, 1], np.float32, "y%d" % k) for k in range(2)]
    o = S.SplitVOptionsT()
    o.numSplits = 2
    m.write_ops(out_dir, "split_v_runtime_sizes", [add_s, add_a, (OPS.SPLIT_V, 1, [x, sz, a], outs,
                                                                  S.BuiltinOptions.SplitVOptions, o)], outs)
    m = Model()
    i = m.tensor([3, 2], np.int32, "indices", [[0, 1], [2, 0], [0, 1]])
    u = m.tensor([3, 4], np.float32, "updates")
    sh, add_s = computed(m, "shape", [3, 2, 4])
    y = m.output([1, 1, 1], np.float32, "y")
    m.write_ops(out_dir, "scatter_nd_runtime_shape", [add_s, (OPS.SCATTER_ND, 1, [i, u, sh], [y], 0, None)], [y])
    m = Model()
    d = m.tensor([5, 3], np.float32, "data")
    ids = m.tensor([5], np.int32, "segment_ids", [0, 3, 0, -1, 2])
    num, add_n = computed(m, "num_segments", [4])
    y = m.output([1, 1], np.float32, "y")
    m.write_ops(out_dir, "unsorted_segment_sum_runtime_num", [add_n, (OPS.UNSORTED_SEGMENT_SUM, 1, [d, ids, num], [y],
                                                                      0, None)], [y])
    # BROADCAST_ARGS of constant shapes, alone and feeding BROADCAST_TO (whose output is then dynamic).
    for name, dtype, s0, s1 in [("broadcast_args_int32", np.int32, [2, 1, 3], [4, 1]),
                                ("broadcast_args_int64", np.int64, [1], [5, 1, 2])]:
        m = Model()
        a = m.tensor([len(s0)], dtype, "s0", s0)
        b = m.tensor([len(s1)], dtype, "s1", s1)
        y = m.output([max(len(s0), len(s1))], dtype, "shape")
        m.write(out_dir, name, OPS.BROADCAST_ARGS, 1, [a, b], [y])
    m = Model()
    x = m.tensor([3, 1], np.float32, "x")
    a = m.tensor([2], np.int32, "s0", [3, 1])
    b = m.tensor([3], np.int32, "s1", [2, 1, 4])
    sh = m.output([3], np.int32, "shape")
    y = m.output([1, 1, 1], np.float32, "y")
    m.write_ops(out_dir, "broadcast_args_to_runtime", [(OPS.BROADCAST_ARGS, 1, [a, b], [sh], 0, None),
                                                       (OPS.BROADCAST_TO, 2, [x, sh], [y], 0, None)], [y])
    # NON_MAX_SUPPRESSION_V4/V5 on random boxes and scores (model inputs), max_output_size constant or computed.
    for name, v5, n, max_size, iou, threshold, sigma, runtime in [
            ("nms_v4", False, 40, 10, 0.3, 0.0, 0.0, False), ("nms_v4_all", False, 12, 20, 0.5, -2.0, 0.0, False),
            ("nms_v4_runtime_max", False, 30, 6, 0.2, 0.1, 0.0, True),
            ("nms_v5_hard", True, 40, 10, 0.4, 0.0, 0.0, False), ("nms_v5_soft", True, 40, 12, 1.0, 0.05, 0.5, False),
            ("nms_v5_soft_runtime_max", True, 25, 8, 0.6, -0.5, 0.3, True)]:
        m = Model()
        b = m.tensor([n, 4], np.float32, "boxes")
        sc = m.tensor([n], np.float32, "scores")
        ops = []
        if runtime:
            k, op_k = computed(m, "max_output_size", [max_size], scalar=True)
            ops.append(op_k)
        else:
            k = m.tensor([], np.int32, "max_output_size", max_size)
        i = m.tensor([], np.float32, "iou_threshold", iou)
        t = m.tensor([], np.float32, "score_threshold", threshold)
        inputs = [b, sc, k, i, t]
        if v5:
            inputs.append(m.tensor([], np.float32, "soft_nms_sigma", sigma))
        sel = m.output([max_size], np.int32, "selected_indices")
        outs = [sel]
        if v5:
            outs.append(m.output([max_size], np.float32, "selected_scores"))
        outs.append(m.output([], np.int32, "valid_outputs"))
        ops.append((OPS.NON_MAX_SUPPRESSION_V5 if v5 else OPS.NON_MAX_SUPPRESSION_V4, 1, inputs, outs, 0, None))
        m.write_ops(out_dir, name, ops, outs)
    # A dynamic chain: WHERE's coordinates pick elements of params (GATHER_ND), prepared again at Invoke.
    m = Model()
    c = m.tensor([3, 4], np.bool_, "condition")
    p = m.tensor([3, 4, 2], np.float32, "params")
    w = m.output([1, 2], np.int64, "coordinates")
    y = m.output([1, 2], np.float32, "picked")
    m.write_ops(out_dir, "where_gather_nd_chain", [(OPS.WHERE, 1, [c], [w], 0, None),
                                                   (OPS.GATHER_ND, 1, [p, w], [y], 0, None)], [y])



class Graph:
    """One subgraph of a multi-subgraph model (control_flow_models): tensors, inputs, outputs, operators."""

    def __init__(self, model_buffers, name):
        self.buffers, self.name = model_buffers, name
        self.tensors, self.inputs, self.outputs, self.ops = [], [], [], []

    def tensor(self, shape, dtype, name, data=None):
        t = S.TensorT()
        t.shape, t.name, t.buffer = list(shape), name, 0
        t.type = S.TensorType.RESOURCE if dtype == "resource" else TYPES[dtype]
        if data is not None:
            b = S.BufferT()
            b.data = list(np.asarray(data, dtype=dtype).reshape(-1).view(np.uint8).tobytes())
            self.buffers.append(b)
            t.buffer = len(self.buffers) - 1
        self.tensors.append(t)
        return len(self.tensors) - 1

    def op(self, code, inputs, outputs, options_type=0, options=None):
        self.ops.append((code, inputs, outputs, options_type, options))


def write_graphs(out_dir, name, graphs, buffers):
    """A model of several subgraphs (graphs[0] is main); every op at version 1."""
    codes = []
    model_graphs = []
    for g in graphs:
        ops = []
        for code, inputs, outputs, options_type, options in g.ops:
            if code not in codes:
                codes.append(code)
            op = S.OperatorT()
            op.opcodeIndex, op.inputs, op.outputs = codes.index(code), inputs, outputs
            op.builtinOptionsType, op.builtinOptions = options_type, options
            ops.append(op)
        sg = S.SubGraphT()
        sg.tensors, sg.inputs, sg.outputs, sg.operators, sg.name = g.tensors, g.inputs, g.outputs, ops, g.name
        model_graphs.append(sg)
    opcodes = []
    for code in codes:
        oc = S.OperatorCodeT()
        oc.builtinCode, oc.deprecatedBuiltinCode, oc.version = code, min(code, 127), 1
        opcodes.append(oc)
    model = S.ModelT()
    model.version, model.operatorCodes, model.subgraphs, model.buffers = 3, opcodes, model_graphs, buffers
    model.description = "data_op_models.py"
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    with open(os.path.join(out_dir, name + ".tflite"), "wb") as f:
        f.write(builder.Output())


def if_options(then_index, else_index):
    o = S.IfOptionsT()
    o.thenSubgraphIndex, o.elseSubgraphIndex = then_index, else_index
    return S.BuiltinOptions.IfOptions, o


def while_options(cond_index, body_index):
    o = S.WhileOptionsT()
    o.condSubgraphIndex, o.bodySubgraphIndex = cond_index, body_index
    return S.BuiltinOptions.WhileOptions, o


def unary_graph(buffers, name, shape, square):
    """A subgraph from float32 a to a + a (or a * a where square)."""
    g = Graph(buffers, name)
    a = g.tensor(shape, np.float32, "a")
    b = g.tensor(shape, np.float32, "b")
    if square:
        g.op(OPS.MUL, [a, a], [b], S.BuiltinOptions.MulOptions, S.MulOptionsT())
    else:
        g.op(OPS.ADD, [a, a], [b], S.BuiltinOptions.AddOptions, S.AddOptionsT())
    g.inputs, g.outputs = [a], [b]
    return g


def counting_graphs(buffers, shape, limit, body_if=None):
    """WHILE's cond (i < limit) and body (i + 1, acc * 0.5 + acc; or acc through an IF on i < 2 over subgraphs
    body_if) over float32 loop variables i (scalar) and acc (shape)."""
    cond = Graph(buffers, "cond")
    ci, ca = cond.tensor([], np.float32, "ci"), cond.tensor(shape, np.float32, "ca")
    lim = cond.tensor([], np.float32, "limit", [limit])
    go = cond.tensor([], np.bool_, "go")
    cond.op(OPS.LESS, [ci, lim], [go])
    cond.inputs, cond.outputs = [ci, ca], [go]
    body = Graph(buffers, "body")
    bi, ba = body.tensor([], np.float32, "bi"), body.tensor(shape, np.float32, "ba")
    one = body.tensor([], np.float32, "one", [1.0])
    bi2, ba2 = body.tensor([], np.float32, "bi2"), body.tensor(shape, np.float32, "ba2")
    body.op(OPS.ADD, [bi, one], [bi2], S.BuiltinOptions.AddOptions, S.AddOptionsT())
    if body_if is None:
        half = body.tensor([], np.float32, "half", [0.5])
        scaled = body.tensor(shape, np.float32, "scaled")
        body.op(OPS.MUL, [ba, half], [scaled], S.BuiltinOptions.MulOptions, S.MulOptionsT())
        body.op(OPS.ADD, [scaled, ba], [ba2], S.BuiltinOptions.AddOptions, S.AddOptionsT())
    else:
        two = body.tensor([], np.float32, "two", [2.0])
        small = body.tensor([], np.bool_, "small")
        body.op(OPS.LESS, [bi, two], [small])
        body.op(OPS.IF, [small, ba], [ba2], *if_options(*body_if))
    body.inputs, body.outputs = [bi, ba], [bi2, ba2]
    return cond, body


def runtime_shape_models(out_dir):
    """TRANSPOSE, the reductions, RESIZE_*, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, TRANSPOSE_CONV, ARG_MAX/ARG_MIN,
    CUMSUM, REVERSE_V2, SEGMENT_SUM, SPARSE_TO_DENSE, RFFT2D, EMBEDDING_LOOKUP_SPARSE and CONV_3D_TRANSPOSE with their
    shape-deciding input computed at run time (a FLOOR_DIV of constants by 1: no constant of the model, fixed
    values), which makes the output dynamic in LiteRT and in Kiln; quantized variants too."""
    def computed(m, name, values, shape=None):
        shape = shape if shape is not None else [len(values)]
        a = m.tensor(shape, np.int32, name + "_a", np.reshape(values, shape))
        one = m.tensor(shape, np.int32, name + "_one", np.ones(shape, np.int32))
        t = m.output(shape, np.int32, name)
        return t, (OPS.FLOOR_DIV, 1, [a, one], [t], 0, None)

    q8 = {np.int8: (0.05, -3), np.uint8: (0.05, 120), np.int16: (0.01, 0)}
    for dtype, shape, perm, version in [(np.float32, [2, 3, 4], [2, 0, 1], 1), (np.int8, [2, 3, 4, 5], [3, 1, 0, 2], 2),
                                        (np.uint8, [3, 1, 2, 2, 2], [4, 3, 2, 1, 0], 5),
                                        (np.float32, [2, 1, 2, 3, 1, 2], [5, 0, 4, 1, 3, 2], 6)]:
        m = Model()
        x = m.tensor(shape, dtype, "x", quant=q8.get(dtype))
        p, add_p = computed(m, "perm", perm)
        y = m.output([1] * len(shape), dtype, "y", quant=q8.get(dtype))
        m.write_ops(out_dir, "transpose_runtime_perm_%s_rank%d" % (np.dtype(dtype).name, len(shape)),
                    [add_p, (OPS.TRANSPOSE, version, [x, p], [y], 0, None)], [y])
    for name, code, version, dtype, shape, axes, keep_dims in [
            ("mean", OPS.MEAN, 1, np.float32, [2, 3, 4], [0, 2], False),
            ("mean_keep", OPS.MEAN, 1, np.float32, [2, 3, 4], [-1], True),
            ("mean_int8_hw", OPS.MEAN, 2, np.int8, [1, 4, 5, 3], [1, 2], True),
            ("mean_uint8", OPS.MEAN, 2, np.uint8, [2, 4, 3], [1], False),
            ("sum", OPS.SUM, 1, np.float32, [3, 2, 4], [1, 0], True),
            ("sum_int8_litert_builtin_", OPS.SUM, 2, np.int8, [2, 5, 3], [2], False),  # LiteRT's reference is broken
            ("reduce_max", OPS.REDUCE_MAX, 1, np.float32, [4, 3, 2], [0, 2], False),
            ("reduce_max_int8", OPS.REDUCE_MAX, 2, np.int8, [4, 3, 2], [1], True),
            ("reduce_min_int32", OPS.REDUCE_MIN, 3, np.int32, [4, 3], [-2], False),
            ("reduce_prod", OPS.REDUCE_PROD, 1, np.float32, [2, 3, 2], [1], False),
            ("reduce_any", OPS.REDUCE_ANY, 1, np.bool_, [4, 3, 2], [0, 2], False),
            ("reduce_all", OPS.REDUCE_ALL, 1, np.bool_, [3, 4], [1], True)]:
        m = Model()
        quant = {np.int8: (0.05, -3), np.uint8: (0.05, 120)}.get(dtype)
        x = m.tensor(shape, dtype, "x", quant=quant)
        a, add_a = computed(m, "axes", axes)
        y = m.output([1], dtype, "y", quant=quant)
        o = S.ReducerOptionsT()
        o.keepDims = keep_dims
        name = name[:-len("_litert_builtin_")] + "_runtime_axes_litert_builtin" if name.endswith("_") else \
            name + "_runtime_axes"
        m.write_ops(out_dir, name, [add_a, (code, version, [x, a], [y],
                                                              S.BuiltinOptions.ReducerOptions, o)], [y])
    for name, code, version, dtype, shape, size, align, half in [
            ("resize_bilinear", OPS.RESIZE_BILINEAR, 1, np.float32, [1, 3, 4, 2], [5, 7], False, False),
            ("resize_bilinear_half", OPS.RESIZE_BILINEAR, 3, np.float32, [2, 4, 3, 1], [3, 8], False, True),
            ("resize_bilinear_int8", OPS.RESIZE_BILINEAR, 2, np.int8, [1, 3, 3, 2], [6, 5], True, False),
            ("resize_nearest", OPS.RESIZE_NEAREST_NEIGHBOR, 1, np.float32, [1, 3, 4, 2], [7, 5], False, False),
            ("resize_nearest_uint8", OPS.RESIZE_NEAREST_NEIGHBOR, 3, np.uint8, [2, 4, 4, 1], [2, 3], False, True)]:
        m = Model()
        x = m.tensor(shape, dtype, "x", quant=q8.get(dtype))
        sz, add_s = computed(m, "size", size)
        y = m.output([1, 1, 1, 1], dtype, "y", quant=q8.get(dtype))
        if code == OPS.RESIZE_BILINEAR:
            options_type, o = S.BuiltinOptions.ResizeBilinearOptions, S.ResizeBilinearOptionsT()
        else:
            options_type, o = S.BuiltinOptions.ResizeNearestNeighborOptions, S.ResizeNearestNeighborOptionsT()
        o.alignCorners, o.halfPixelCenters = align, half
        m.write_ops(out_dir, name + "_runtime_size", [add_s, (code, version, [x, sz], [y], options_type, o)], [y])
    for name, code, version, dtype, shape, block, pads in [
            ("space_to_batch_nd", OPS.SPACE_TO_BATCH_ND, 1, np.float32, [2, 3, 5, 2], [2, 3], [[1, 0], [0, 1]]),
            ("space_to_batch_nd_int8", OPS.SPACE_TO_BATCH_ND, 2, np.int8, [1, 4, 4, 3], [2, 2], [[0, 2], [2, 0]]),
            ("space_to_batch_nd_rank3", OPS.SPACE_TO_BATCH_ND, 1, np.float32, [2, 5, 3], [3], [[2, 2]]),
            ("batch_to_space_nd", OPS.BATCH_TO_SPACE_ND, 1, np.float32, [12, 2, 2, 2], [2, 3], [[1, 0], [0, 1]]),
            ("batch_to_space_nd_int8", OPS.BATCH_TO_SPACE_ND, 2, np.int8, [4, 3, 2, 1], [2, 2], [[0, 1], [1, 0]])]:
        m = Model()
        x = m.tensor(shape, dtype, "x", quant=q8.get(dtype))
        b, add_b = computed(m, "block_shape", block)
        p, add_p = computed(m, "paddings", np.reshape(pads, [-1]), shape=[len(pads), 2])
        y = m.output([1] * len(shape), dtype, "y", quant=q8.get(dtype))
        m.write_ops(out_dir, name + "_runtime_block", [add_b, add_p, (code, version, [x, b, p], [y], 0, None)], [y])
    # ARG_MAX/ARG_MIN (a dynamic output), CUMSUM and REVERSE_V2 (the input's shape, the axis read at Invoke).
    for name, code, version, dtype, shape, axis, out_type in [
            ("arg_max", OPS.ARG_MAX, 1, np.float32, [3, 4, 5], [1], np.int64),
            ("arg_max_int8", OPS.ARG_MAX, 2, np.int8, [4, 6], [-1], np.int32),
            ("arg_min", OPS.ARG_MIN, 1, np.float32, [2, 3, 4], [0], np.int32),
            ("cumsum", OPS.CUMSUM, 1, np.float32, [3, 4, 2], [1], None),
            ("cumsum_int32", OPS.CUMSUM, 1, np.int32, [5, 3], [-1], None),
            ("reverse_v2", OPS.REVERSE_V2, 1, np.float32, [2, 3, 4], [1], None),
            ("reverse_v2_two_axes", OPS.REVERSE_V2, 2, np.int8, [2, 3, 4], [1, 2], None)]:
        m = Model()
        x = m.tensor(shape, dtype, "x", quant=q8.get(dtype) if code == OPS.REVERSE_V2 or out_type else None)
        a, add_a = computed(m, "axis", axis)
        options_type, o = 0, None
        if code == OPS.ARG_MAX:
            options_type, o = S.BuiltinOptions.ArgMaxOptions, S.ArgMaxOptionsT()
            o.outputType = TYPES[out_type]
        elif code == OPS.ARG_MIN:
            options_type, o = S.BuiltinOptions.ArgMinOptions, S.ArgMinOptionsT()
            o.outputType = TYPES[out_type]
        elif code == OPS.CUMSUM:
            options_type, o = S.BuiltinOptions.CumsumOptions, S.CumsumOptionsT()
            o.exclusive, o.reverse = False, True
        y = m.output([1] if out_type else shape, out_type or dtype, "y",
                     quant=q8.get(dtype) if code == OPS.REVERSE_V2 else None)
        m.write_ops(out_dir, name + "_runtime_axis", [add_a, (code, version, [x, a], [y], options_type, o)], [y])
    # SEGMENT_SUM's ids, SPARSE_TO_DENSE's output_shape, RFFT2D's fft_length, EMBEDDING_LOOKUP_SPARSE's dense_shape
    # and CONV_3D_TRANSPOSE's output shape computed at run time: dynamic outputs.
    for dtype in (np.float32, np.int32):
        m = Model()
        x = m.tensor([5, 3], dtype, "data")
        ids, add_ids = computed(m, "segment_ids", [0, 0, 1, 2, 2])
        y = m.output([1, 3], dtype, "y")
        m.write_ops(out_dir, "segment_sum_%s_runtime_ids" % np.dtype(dtype).name,
                    [add_ids, (OPS.SEGMENT_SUM, 1, [x, ids], [y], 0, None)], [y])
    m = Model()
    indices = m.tensor([3, 2], np.int32, "indices", [[0, 1], [2, 0], [1, 1]])
    shape, add_shape = computed(m, "output_shape", [3, 4])
    values = m.tensor([3], np.float32, "values")
    fill = m.tensor([], np.float32, "default_value", -2.5)
    y = m.output([1, 1], np.float32, "y")
    m.write_ops(out_dir, "sparse_to_dense_runtime_shape",
                [add_shape, (OPS.SPARSE_TO_DENSE, 1, [indices, shape, values, fill], [y], 0, None)], [y])
    m = Model()
    x = m.tensor([2, 4, 6], np.float32, "x")
    length, add_length = computed(m, "fft_length", [4, 8])
    spectrum = m.output([1, 1, 1], np.complex64, "spectrum")
    re = m.output([1, 1, 1], np.float32, "real")
    im = m.output([1, 1, 1], np.float32, "imag")
    m.write_ops(out_dir, "rfft2d_runtime_fft_length",
                [add_length, (OPS.RFFT2D, 1, [x, length], [spectrum], 0, None),
                 (OPS.REAL, 1, [spectrum], [re], 0, None), (OPS.IMAG, 1, [spectrum], [im], 0, None)], [re, im])
    m = Model()
    ids = m.tensor([3], np.int32, "ids", [1, 0, 3])
    indices = m.tensor([3, 2], np.int32, "indices", [[0, 0], [0, 1], [1, 0]])
    dense, add_dense = computed(m, "dense_shape", [3, 2])
    weights = m.tensor([3], np.float32, "weights", [0.5, 2.0, -1.0])
    params = m.tensor([4, 3], np.float32, "params")
    y = m.output([1, 1], np.float32, "y")
    o = S.EmbeddingLookupSparseOptionsT()
    o.combiner = S.CombinerType.MEAN
    m.write_ops(out_dir, "embedding_lookup_sparse_runtime_dense_shape",
                [add_dense, (OPS.EMBEDDING_LOOKUP_SPARSE, 1, [ids, indices, dense, weights, params], [y],
                             S.BuiltinOptions.EmbeddingLookupSparseOptions, o)], [y])
    m = Model()
    out_shape, add_out = computed(m, "output_shape", [1, 4, 6, 4, 3])
    filt = m.tensor([2, 2, 2, 3, 2], np.float32, "filter", np.random.default_rng(5).uniform(-1, 1, [2, 2, 2, 3, 2]))
    x = m.tensor([1, 2, 3, 2, 2], np.float32, "x")
    y = m.output([1, 1, 1, 1, 1], np.float32, "y")
    o = S.Conv3DOptionsT()
    o.padding = S.Padding.SAME
    o.strideD, o.strideH, o.strideW = 2, 2, 2
    o.dilationDFactor, o.dilationHFactor, o.dilationWFactor = 1, 1, 1
    m.write_ops(out_dir, "conv3d_transpose_runtime_output_shape",
                [add_out, (OPS.CONV_3D_TRANSPOSE, 1, [out_shape, filt, x], [y], S.BuiltinOptions.Conv3DOptions, o)],
                [y])
    rng = np.random.default_rng(11)
    for name, dtype, version, in_shape, filt, out_shape, stride, padding in [
            ("transpose_conv", np.float32, 1, [1, 3, 4, 2], [3, 3, 3, 2], [1, 6, 8, 3], 2, S.Padding.SAME),
            ("transpose_conv_valid", np.float32, 1, [2, 2, 3, 1], [2, 2, 2, 1], [2, 4, 7, 2], 2, S.Padding.VALID),
            ("transpose_conv_int8", np.int8, 2, [1, 3, 3, 2], [2, 3, 3, 2], [1, 5, 6, 2], 2, S.Padding.SAME)]:
        m = Model()
        s, add_s = computed(m, "output_shape", out_shape)
        if dtype == np.int8:
            w = m.tensor(filt, np.int8, "filter", rng.integers(-100, 100, filt), quant=(0.02, 0))
        else:
            w = m.tensor(filt, np.float32, "filter", rng.uniform(-1, 1, filt))
        x = m.tensor(in_shape, dtype, "x", quant=(0.05, -2) if dtype == np.int8 else None)
        y = m.output([1, 1, 1, 1], dtype, "y", quant=(0.1, 3) if dtype == np.int8 else None)
        o = S.TransposeConvOptionsT()
        o.padding, o.strideW, o.strideH = padding, stride, stride
        m.write_ops(out_dir, name + "_runtime_output_shape",
                    [add_s, (OPS.TRANSPOSE_CONV, version, [s, w, x], [y], S.BuiltinOptions.TransposeConvOptions, o)],
                    [y])


def control_flow_models(out_dir):
    """IF (constant and random conditions), WHILE (counting, zero iterations, an IF nested in the body) and the
    CALL_ONCE + VAR_HANDLE/READ_VARIABLE/ASSIGN_VARIABLE pattern the TF converter emits for a stateful model."""
    for name, shape, cond_value in [("if_then", [2, 3], True), ("if_else", [2, 3], False), ("if_random", [4], None),
                                    ("if_scalar_else", [], False), ("if_rank5", [1, 2, 1, 2, 3], True)]:
        buffers = [S.BufferT()]
        main = Graph(buffers, "main")
        c = main.tensor([], np.bool_, "cond", None if cond_value is None else [cond_value])
        x = main.tensor(shape, np.float32, "x")
        y = main.tensor(shape, np.float32, "y")
        main.op(OPS.IF, [c, x], [y], *if_options(1, 2))
        main.inputs = ([c] if cond_value is None else []) + [x]
        main.outputs = [y]
        write_graphs(out_dir, name, [main, unary_graph(buffers, "then", shape, False),
                                     unary_graph(buffers, "else", shape, True)], buffers)
    for name, shape, start, limit, nested in [("while_count", [2, 3], 0.0, 5.0, False),
                                              ("while_zero_iterations", [4], 7.0, 5.0, False),
                                              ("while_scalar", [], -3.0, 2.0, False),
                                              ("while_nested_if", [3], 0.0, 4.0, True)]:
        buffers = [S.BufferT()]
        main = Graph(buffers, "main")
        i = main.tensor([], np.float32, "i", [start])
        acc = main.tensor(shape, np.float32, "acc")
        i_out, acc_out = main.tensor([], np.float32, "i_out"), main.tensor(shape, np.float32, "acc_out")
        main.op(OPS.WHILE, [i, acc], [i_out, acc_out], *while_options(1, 2))
        main.inputs, main.outputs = [acc], [i_out, acc_out]
        cond, body = counting_graphs(buffers, shape, limit, (3, 4) if nested else None)
        graphs = [main, cond, body]
        if nested:
            graphs += [unary_graph(buffers, "then", shape, False), unary_graph(buffers, "else", shape, True)]
        write_graphs(out_dir, name, graphs, buffers)
    # CALL_ONCE(init) assigns the variable [10, 20, 30]; main reads it, adds x, outputs and assigns the sum.
    buffers = [S.BufferT()]
    main = Graph(buffers, "main")
    x = main.tensor([3], np.float32, "x")
    h = main.tensor([], "resource", "handle")
    v = main.tensor([3], np.float32, "v")
    y = main.tensor([3], np.float32, "y")
    once = S.CallOnceOptionsT()
    once.initSubgraphIndex = 1
    main.op(OPS.CALL_ONCE, [], [], S.BuiltinOptions.CallOnceOptions, once)
    handle = S.VarHandleOptionsT()
    handle.container, handle.sharedName = "", "total"
    main.op(OPS.VAR_HANDLE, [], [h], S.BuiltinOptions.VarHandleOptions, handle)
    main.op(OPS.READ_VARIABLE, [h], [v])
    main.op(OPS.ADD, [v, x], [y], S.BuiltinOptions.AddOptions, S.AddOptionsT())
    main.op(OPS.ASSIGN_VARIABLE, [h, y], [])
    main.inputs, main.outputs = [x], [y]
    init = Graph(buffers, "init")
    ih = init.tensor([], "resource", "init_handle")
    k = init.tensor([3], np.float32, "k", [10.0, 20.0, 30.0])
    init.op(OPS.VAR_HANDLE, [], [ih], S.BuiltinOptions.VarHandleOptions, handle)
    init.op(OPS.ASSIGN_VARIABLE, [ih, k], [])
    write_graphs(out_dir, "call_once_variable", [main, init], buffers)


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    detection_postprocess(out_dir)
    densify_models(out_dir)
    conv3d_models(out_dir)
    conv3d_transpose_models(out_dir)
    random_models(out_dir)
    embedding_lookup_sparse(out_dir)
    complex_models(out_dir)
    stablehlo_models(out_dir)
    small_ops(out_dir)
    small_ops_with_options(out_dir)
    dynamic_models(out_dir)
    runtime_shape_models(out_dir)
    reductions(out_dir)
    normalization_and_scans(out_dir)
    gelu(out_dir)
    embedding_lookup(out_dir)
    batch_matmul(out_dir)
    unsorted_segments(out_dir)
    index_models(out_dir)
    # STRIDED_SLICE: masks, negative strides and indices, ellipsis, new axis, shrink.
    strided_slice(out_dir, "strided_slice_masks_reverse", [2, 3, 4], [0, 1, 0], [0, 0, 0], [1, 1, -2], [2, 2, 2],
                  (0b101, 0b111, 0, 0, 0))
    strided_slice(out_dir, "strided_slice_negative", [5, 6], [-4, -1], [-1, -7], [2, -2], [2, 3])
    strided_slice(out_dir, "strided_slice_ellipsis_shrink", [2, 3, 4, 5], [1, 0, -2], [2, 0, -1], [1, 1, 1], [3, 4],
                  (0, 0, 0b010, 0, 0b101))
    strided_slice(out_dir, "strided_slice_new_axis", [3, 4], [0, 1, 0], [0, 3, 0], [1, 1, 1], [1, 2, 4],
                  (0, 0b100, 0, 0b001, 0))
    strided_slice(out_dir, "strided_slice_int8", [4, 6], [1, 0], [3, 6], [1, 3], [2, 2], dtype=np.int8)
    # offset: end counts from begin (forwards and backwards).
    strided_slice(out_dir, "strided_slice_offset", [6, 4], [1, 3], [3, -2], [1, -1], [3, 2], offset=True)
    # SLICE with -1.
    m = Model()
    x = m.tensor([3, 4, 5], np.float32, "x")
    b = m.tensor([3], np.int32, "begin", [1, 0, 2])
    sz = m.tensor([3], np.int32, "size", [2, -1, 2])
    y = m.output([2, 4, 2], np.float32, "y")
    m.write(out_dir, "slice_minus_one", OPS.SLICE, 1, [x, b, sz], [y], S.BuiltinOptions.SliceOptions,
            S.SliceOptionsT())
    # EXPAND_DIMS at a negative axis.
    m = Model()
    x = m.tensor([2, 3], np.float32, "x")
    a = m.tensor([1], np.int32, "axis", [-2])
    y = m.output([2, 1, 3], np.float32, "y")
    m.write(out_dir, "expand_dims", OPS.EXPAND_DIMS, 1, [x, a], [y], S.BuiltinOptions.ExpandDimsOptions,
            S.ExpandDimsOptionsT())
    # GATHER: axis 1 with 2-D indices; batch_dims 1.
    for name, shape, idx, idx_shape, axis, batch, out_shape in [
            ("gather_axis1", [3, 5, 2], [4, 0, 2, 2, 1, 3], [2, 3], 1, 0, [3, 2, 3, 2]),
            ("gather_batch_dims", [2, 4, 3], [3, 0, 1, 1], [2, 2], 1, 1, [2, 2, 3])]:
        m = Model()
        x = m.tensor(shape, np.float32, "x")
        i = m.tensor(idx_shape, np.int32, "indices", idx)
        y = m.output(out_shape, np.float32, "y")
        o = S.GatherOptionsT()
        o.axis, o.batchDims = axis, batch
        m.write(out_dir, name, OPS.GATHER, 1 if batch == 0 else 5, [x, i], [y], S.BuiltinOptions.GatherOptions, o)
    # SPLIT and SPLIT_V.
    m = Model()
    a = m.tensor([], np.int32, "axis", [-1])
    x = m.tensor([2, 6], np.float32, "x")
    outs = [m.output([2, 2], np.float32, "y%d" % k) for k in range(3)]
    o = S.SplitOptionsT()
    o.numSplits = 3
    m.write(out_dir, "split_three", OPS.SPLIT, 1, [a, x], outs, S.BuiltinOptions.SplitOptions, o)
    m = Model()
    x = m.tensor([5, 2], np.float32, "x")
    sz = m.tensor([3], np.int32, "size_splits", [1, -1, 2])
    a = m.tensor([], np.int32, "axis", [0])
    outs = [m.output([n, 2], np.float32, "y%d" % k) for k, n in enumerate([1, 2, 2])]
    o = S.SplitVOptionsT()
    o.numSplits = 3
    m.write(out_dir, "split_v_minus_one", OPS.SPLIT_V, 1, [x, sz, a], outs, S.BuiltinOptions.SplitVOptions, o)
    # PACK and UNPACK.
    m = Model()
    xs = [m.tensor([2, 3], np.float32, "x%d" % k) for k in range(3)]
    y = m.output([2, 3, 3], np.float32, "y")
    o = S.PackOptionsT()
    o.valuesCount, o.axis = 3, -1
    m.write(out_dir, "pack_last_axis", OPS.PACK, 1, xs, [y], S.BuiltinOptions.PackOptions, o)
    m = Model()
    x = m.tensor([2, 3, 4], np.float32, "x")
    outs = [m.output([2, 4], np.float32, "y%d" % k) for k in range(3)]
    o = S.UnpackOptionsT()
    o.num, o.axis = 3, 1
    m.write(out_dir, "unpack_middle", OPS.UNPACK, 1, [x], outs, S.BuiltinOptions.UnpackOptions, o)
    # TILE and BROADCAST_TO.
    m = Model()
    x = m.tensor([2, 1, 3], np.float32, "x")
    mult = m.tensor([3], np.int32, "multiples", [2, 3, 1])
    y = m.output([4, 3, 3], np.float32, "y")
    m.write(out_dir, "tile", OPS.TILE, 1, [x, mult], [y], S.BuiltinOptions.TileOptions, S.TileOptionsT())
    m = Model()
    x = m.tensor([3, 1], np.float32, "x")
    shape = m.tensor([3], np.int32, "shape", [2, 3, 4])
    y = m.output([2, 3, 4], np.float32, "y")
    m.write(out_dir, "broadcast_to", OPS.BROADCAST_TO, 2, [x, shape], [y], S.BuiltinOptions.BroadcastToOptions,
            S.BroadcastToOptionsT())
    # SHAPE, ARG_MAX, ARG_MIN, CAST.
    m = Model()
    x = m.tensor([2, 5, 3], np.float32, "x")
    y = m.output([3], np.int32, "y")
    o = S.ShapeOptionsT()
    o.outType = S.TensorType.INT32
    m.write(out_dir, "shape", OPS.SHAPE, 1, [x], [y], S.BuiltinOptions.ShapeOptions, o)
    for name, code, cls, opt in [("arg_max", OPS.ARG_MAX, S.ArgMaxOptionsT, S.BuiltinOptions.ArgMaxOptions),
                                 ("arg_min", OPS.ARG_MIN, S.ArgMinOptionsT, S.BuiltinOptions.ArgMinOptions)]:
        m = Model()
        x = m.tensor([3, 7, 2], np.float32, "x")
        a = m.tensor([1], np.int32, "axis", [1])
        y = m.output([3, 2], np.int32, "y")
        o = cls()
        o.outputType = S.TensorType.INT32
        m.write(out_dir, name, code, 1, [x, a], [y], opt, o)
    m = Model()
    x = m.tensor([4, 5], np.float32, "x")
    y = m.output([4, 5], np.int32, "y")
    o = S.CastOptionsT()
    o.inDataType, o.outDataType = S.TensorType.FLOAT32, S.TensorType.INT32
    m.write(out_dir, "cast_float_to_int", OPS.CAST, 1, [x], [y], S.BuiltinOptions.CastOptions, o)
    # The float32 math of one input (no options).
    for name, code in [("abs", OPS.ABS), ("neg", OPS.NEG), ("sqrt", OPS.SQRT), ("rsqrt", OPS.RSQRT),
                       ("square", OPS.SQUARE), ("log", OPS.LOG), ("sin", OPS.SIN), ("cos", OPS.COS),
                       ("floor", OPS.FLOOR), ("ceil", OPS.CEIL), ("round", OPS.ROUND)]:
        m = Model()
        x = m.tensor([3, 5, 7], np.float32, "x")
        y = m.output([3, 5, 7], np.float32, "y")
        m.write(out_dir, name, code, 1, [x], [y])
    space_models(out_dir)
    from sequence_op_models import sequence_models  # LSTM, SVDF, RNN: tests/models/sequence_op_models.py
    sequence_models(out_dir)
    control_flow_models(out_dir)


# Quantization each quantized type gets in the space ops' models (input and output alike).
SPACE_QUANT = {np.int8: (0.05, -3), np.uint8: (0.04, 120)}
SPACE_DTYPES = [np.float32, np.int8, np.uint8, np.int32, np.int64]
TYPES.setdefault(np.uint8, S.TensorType.UINT8)
TYPES.setdefault(np.int16, S.TensorType.INT16)


def space_models(out_dir):
    """DEPTH_TO_SPACE and SPACE_TO_DEPTH: several shapes and block sizes, each type LiteRT takes."""
    for dtype in SPACE_DTYPES:
        suffix = np.dtype(dtype).name
        quant = SPACE_QUANT.get(dtype)
        for name, shape, block, out_shape in [
                ("depth_to_space_b2", [1, 2, 3, 8], 2, [1, 4, 6, 2]),
                ("depth_to_space_b3", [2, 2, 1, 9], 3, [2, 6, 3, 1]),
                ("depth_to_space_b1", [1, 3, 2, 5], 1, [1, 3, 2, 5])]:
            m = Model()
            x = m.tensor(shape, dtype, "x", quant=quant)
            y = m.output(out_shape, dtype, "y", quant=quant)
            o = S.DepthToSpaceOptionsT()
            o.blockSize = block
            # Version 1 even for int8: LiteRT's reference resolver registers DEPTH_TO_SPACE v1 only (its default
            # one v1-v2, as Kiln), and its kernel takes int8 at either.
            m.write(out_dir, "%s_%s" % (name, suffix), OPS.DEPTH_TO_SPACE, 1, [x], [y],
                    S.BuiltinOptions.DepthToSpaceOptions, o)
        for name, shape, block, out_shape in [
                ("space_to_depth_b2", [1, 4, 6, 3], 2, [1, 2, 3, 12]),
                ("space_to_depth_b3", [2, 3, 6, 1], 3, [2, 1, 2, 9]),
                ("space_to_depth_b1", [1, 2, 3, 4], 1, [1, 2, 3, 4])]:
            m = Model()
            x = m.tensor(shape, dtype, "x", quant=quant)
            y = m.output(out_shape, dtype, "y", quant=quant)
            o = S.SpaceToDepthOptionsT()
            o.blockSize = block
            m.write(out_dir, "%s_%s" % (name, suffix), OPS.SPACE_TO_DEPTH, 2 if dtype == np.int8 else 1, [x], [y],
                    S.BuiltinOptions.SpaceToDepthOptions, o)

    # SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND: rank 4 and rank 3, padding and crops, each type LiteRT takes (int16
    # too, symmetric). Version 1 throughout: LiteRT's kernels do not read it and its reference resolver stops at 3.
    quants = dict(SPACE_QUANT)
    quants[np.int16] = (0.001, 0)
    for dtype in SPACE_DTYPES + [np.int16]:
        suffix = np.dtype(dtype).name
        quant = quants.get(dtype)
        for name, code, shape, block, pads, out_shape in [
                ("space_to_batch_nd_pad", OPS.SPACE_TO_BATCH_ND, [2, 3, 5, 2], [2, 3], [[1, 0], [0, 1]], [12, 2, 2, 2]),
                ("space_to_batch_nd_plain", OPS.SPACE_TO_BATCH_ND, [1, 4, 4, 3], [2, 2], [[0, 0], [0, 0]],
                 [4, 2, 2, 3]),
                ("space_to_batch_nd_rank3", OPS.SPACE_TO_BATCH_ND, [2, 5, 3], [3], [[2, 2]], [6, 3, 3]),
                ("batch_to_space_nd_crop", OPS.BATCH_TO_SPACE_ND, [12, 2, 2, 2], [2, 3], [[1, 0], [0, 1]],
                 [2, 3, 5, 2]),
                ("batch_to_space_nd_plain", OPS.BATCH_TO_SPACE_ND, [4, 2, 3, 1], [2, 2], [[0, 0], [0, 0]],
                 [1, 4, 6, 1]),
                ("batch_to_space_nd_rank3", OPS.BATCH_TO_SPACE_ND, [6, 3, 3], [3], [[1, 2]], [2, 6, 3])]:
            m = Model()
            x = m.tensor(shape, dtype, "x", quant=quant)
            b = m.tensor([len(block)], np.int32, "block_shape", block)
            p = m.tensor([len(pads), 2], np.int32, "paddings" if code == OPS.SPACE_TO_BATCH_ND else "crops", pads)
            y = m.output(out_shape, dtype, "y", quant=quant)
            if code == OPS.SPACE_TO_BATCH_ND:
                opt, o = S.BuiltinOptions.SpaceToBatchNDOptions, S.SpaceToBatchNDOptionsT()
            else:
                opt, o = S.BuiltinOptions.BatchToSpaceNDOptions, S.BatchToSpaceNDOptionsT()
            m.write(out_dir, "%s_%s" % (name, suffix), code, 1, [x, b, p], [y], opt, o)

    # PADV2: a constant fill value (float32, int8 and uint8 quantized as the output), one fill given at run time,
    # and none (pads with 0 / the zero point).
    for dtype, value, value_const in [(np.float32, 2.5, True), (np.int8, 17, True), (np.uint8, 3, True),
                                      (np.float32, None, True), (np.int8, None, True), (np.float32, 0.0, False)]:
        suffix = np.dtype(dtype).name + ("" if value is not None else "_no_value") + ("" if value_const else "_runtime")
        quant = SPACE_QUANT.get(dtype)
        m = Model()
        x = m.tensor([2, 3, 2], dtype, "x", quant=quant)
        p = m.tensor([3, 2], np.int32, "paddings", [[1, 0], [0, 2], [1, 1]])
        inputs = [x, p]
        if value is not None:
            inputs.append(m.tensor([], dtype, "constant_values", [value] if value_const else None, quant=quant))
        y = m.output([3, 5, 4], dtype, "y", quant=quant)
        m.write(out_dir, "padv2_%s" % suffix, OPS.PADV2, 1, inputs, [y], S.BuiltinOptions.PadV2Options,
                S.PadV2OptionsT())

    # MIRROR_PAD: REFLECT and SYMMETRIC at their limits (dim - 1, dim), rank 1 to 4, each type LiteRT takes, int32
    # and int64 paddings.
    for dtype in SPACE_DTYPES + [np.int16]:
        suffix = np.dtype(dtype).name
        quant = quants.get(dtype)
        for name, mode, shape, pads, pad_type in [
                ("reflect", S.MirrorPadMode.REFLECT, [3, 4], [[2, 1], [3, 0]], np.int32),
                ("symmetric", S.MirrorPadMode.SYMMETRIC, [3, 4], [[3, 1], [0, 4]], np.int64),
                ("reflect_rank4", S.MirrorPadMode.REFLECT, [1, 3, 3, 2], [[0, 0], [1, 2], [2, 1], [0, 1]], np.int32),
                ("symmetric_rank1", S.MirrorPadMode.SYMMETRIC, [5], [[2, 5]], np.int32)]:
            out_shape = [d + a + b for d, (a, b) in zip(shape, pads)]
            m = Model()
            x = m.tensor(shape, dtype, "x", quant=quant)
            p = m.tensor([len(pads), 2], pad_type, "paddings", pads)
            y = m.output(out_shape, dtype, "y", quant=quant)
            o = S.MirrorPadOptionsT()
            o.mode = mode
            m.write(out_dir, "mirror_pad_%s_%s" % (name, suffix), OPS.MIRROR_PAD, 1, [x, p], [y],
                    S.BuiltinOptions.MirrorPadOptions, o)

    # REVERSE_V2: one axis, a negative one, two consecutive ones, none; each type LiteRT takes (bool too).
    for dtype in SPACE_DTYPES + [np.int16, np.bool_]:
        suffix = np.dtype(dtype).name
        quant = quants.get(dtype)
        for name, shape, axes in [("axis1", [2, 3, 4], [1]), ("negative", [3, 5], [-1]),
                                  ("two_axes", [2, 3, 4, 2], [2, 1]), ("rank1", [7], [0])]:
            m = Model()
            x = m.tensor(shape, dtype, "x", quant=quant)
            a = m.tensor([len(axes)], np.int32, "axis", axes)
            y = m.output(shape, dtype, "y", quant=quant)
            m.write(out_dir, "reverse_v2_%s_%s" % (name, suffix), OPS.REVERSE_V2, 1, [x, a], [y],
                    S.BuiltinOptions.ReverseV2Options, S.ReverseV2OptionsT())

    compare_logic_models(out_dir)


def binary(out_dir, name, code, version, a_shape, b_shape, out_shape, dtype, out_dtype, a_quant=None, b_quant=None,
           b_data=None, a_data=None):
    m = Model()
    a = m.tensor(a_shape, dtype, "a", a_data, quant=a_quant)
    b = m.tensor(b_shape, dtype, "b", b_data, quant=b_quant)
    y = m.output(out_shape, out_dtype, "y")
    m.write(out_dir, name, code, version, [a, b], [y])


def compare_logic_models(out_dir):
    """The comparison, logical, select, fill and integer-aware arithmetic ops (ops/compare_logic_ops.cc)."""
    rng = np.random.default_rng(7)
    comparisons = [("equal", OPS.EQUAL), ("not_equal", OPS.NOT_EQUAL), ("less", OPS.LESS),
                   ("less_equal", OPS.LESS_EQUAL), ("greater", OPS.GREATER), ("greater_equal", OPS.GREATER_EQUAL)]
    for name, code in comparisons:
        # float32 broadcast (rank 3 against rank 1), against a constant holding some of the drawn values' kind.
        binary(out_dir, name + "_float_bcast", code, 1, [2, 3, 4], [4], [2, 3, 4], np.float32, np.bool_,
               b_data=[-0.5, 0.0, 0.25, 1.0])
        binary(out_dir, name + "_float_both", code, 1, [3, 1, 5], [1, 4, 1], [3, 4, 5], np.float32, np.bool_)
        # int32 / int64 with small values (equalities happen), 6-D broadcast and a scalar.
        binary(out_dir, name + "_int32_6d", code, 2, [2, 1, 3, 1, 2, 2], [1, 2, 1, 2, 1, 2], [2, 2, 3, 2, 2, 2],
               np.int32, np.bool_, b_data=rng.integers(-128, 128, size=8))
        binary(out_dir, name + "_int64_scalar", code, 2, [4, 5], [], [4, 5], np.int64, np.bool_, b_data=[3])
        # int8 and uint8 quantized: the same and different quantizations (LiteRT rescales both).
        binary(out_dir, name + "_int8_same_q", code, 2, [3, 6], [6], [3, 6], np.int8, np.bool_,
               a_quant=(0.05, -3), b_quant=(0.05, -3), b_data=rng.integers(-128, 128, size=6))
        binary(out_dir, name + "_int8_diff_q", code, 2, [4, 8], [4, 8], [4, 8], np.int8, np.bool_,
               a_quant=(0.05, 10), b_quant=(0.1, -7))
        binary(out_dir, name + "_int8_tiny_scale", code, 2, [4, 8], [4, 8], [4, 8], np.int8, np.bool_,
               a_quant=(0.0007, 0), b_quant=(0.0009, 3))
        binary(out_dir, name + "_int8_coarse", code, 2, [3, 5], [1, 5], [3, 5], np.int8, np.bool_,
               a_quant=(0.5, -1), b_quant=(0.75, 4))
        if code != OPS.NOT_EQUAL:  # int16, quantized and not (NOT_EQUAL int16 is refused)
            v = 2 if code in (OPS.GREATER, OPS.LESS_EQUAL) else 3
            binary(out_dir, name + "_int16_diff_q", code, v, [4, 8], [8], [4, 8], np.int16, np.bool_,
                   a_quant=(0.001, 0), b_quant=(0.0007, 5), b_data=rng.integers(-32767, 32768, size=8))
            binary(out_dir, name + "_int16_raw", code, v, [4, 8], [8], [4, 8], np.int16, np.bool_,
                   b_data=rng.integers(-32767, 32768, size=8))
        binary(out_dir, name + "_uint8_diff_q", code, 2, [2, 3, 4], [3, 1], [2, 3, 4], np.uint8, np.bool_,
               a_quant=(0.02, 128), b_quant=(0.03, 100), b_data=[90, 100, 150])
    for name, code in comparisons[:2]:
        binary(out_dir, name + "_bool", code, 3, [3, 4], [4], [3, 4], np.bool_, np.bool_,
               b_data=[True, False, True, False])
    # LOGICAL_AND / LOGICAL_OR (broadcast), LOGICAL_NOT.
    for name, code in [("logical_and", OPS.LOGICAL_AND), ("logical_or", OPS.LOGICAL_OR)]:
        binary(out_dir, name, code, 1, [2, 3, 4], [3, 1], [2, 3, 4], np.bool_, np.bool_)
        binary(out_dir, name + "_scalar", code, 1, [5], [], [5], np.bool_, np.bool_, b_data=[True])
    m = Model()
    x = m.tensor([3, 4, 2], np.bool_, "x")
    y = m.output([3, 4, 2], np.bool_, "y")
    m.write(out_dir, "logical_not", OPS.LOGICAL_NOT, 1, [x], [y])
    # SELECT: same shapes, rank-1 and scalar condition; SELECT_V2: broadcasting all three.
    select_types = [np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_]
    for dtype in select_types:
        t = np.dtype(dtype).name
        quant = (0.1, 2) if dtype in (np.int8, np.uint8) else None
        for name, code, version, c_shape, x_shape, y_shape, out_shape in [
                ("select_same_" + t, OPS.SELECT, 1, [3, 4], [3, 4], [3, 4], [3, 4]),
                ("select_v2_bcast_" + t, OPS.SELECT_V2, 1, [3, 1, 4], [2, 1, 1, 4], [5, 1], [2, 3, 5, 4])]:
            m = Model()
            c = m.tensor(c_shape, np.bool_, "cond")
            xx = m.tensor(x_shape, dtype, "x", quant=quant)
            yy = m.tensor(y_shape, dtype, "y", quant=quant)
            out = m.output(out_shape, dtype, "out", quant=quant)
            m.write(out_dir, name, code, version, [c, xx, yy], [out])
    for name, c_shape in [("select_rank1_cond", [3]), ("select_scalar_cond", [])]:
        m = Model()
        c = m.tensor(c_shape, np.bool_, "cond")
        xx = m.tensor([3, 2, 4], np.float32, "x")
        yy = m.tensor([3, 2, 4], np.float32, "y")
        out = m.output([3, 2, 4], np.float32, "out")
        m.write(out_dir, name, OPS.SELECT, 1, [c, xx, yy], [out])
    m = Model()
    c = m.tensor([1, 2, 1, 3, 1, 2], np.bool_, "cond")
    xx = m.tensor([2, 1, 1, 3, 2, 1], np.float32, "x")
    yy = m.tensor([2], np.float32, "y")
    out = m.output([2, 2, 1, 3, 2, 2], np.float32, "out")
    m.write(out_dir, "select_v2_6d", OPS.SELECT_V2, 1, [c, xx, yy], [out])
    # ZEROS_LIKE.
    for dtype in (np.float32, np.int32, np.int64):
        m = Model()
        x = m.tensor([2, 3, 5], dtype, "x")
        y = m.output([2, 3, 5], dtype, "y")
        m.write(out_dir, "zeros_like_" + np.dtype(dtype).name, OPS.ZEROS_LIKE, 1, [x], [y])
    # FILL: constant dims (int32, int64), a scalar value of each type (a model input: random).
    for dtype, dims_type in [(np.float32, np.int32), (np.int32, np.int64), (np.int64, np.int32),
                             (np.bool_, np.int32)]:
        m = Model()
        d = m.tensor([3], dims_type, "dims", [2, 3, 4])
        v = m.tensor([], dtype, "value")
        y = m.output([2, 3, 4], dtype, "y")
        m.write(out_dir, "fill_%s_dims_%s" % (np.dtype(dtype).name, np.dtype(dims_type).name), OPS.FILL, 1, [d, v],
                [y])
    for dtype, quant in [(np.int8, (0.05, -3)), (np.uint8, (0.02, 128)), (np.int16, (0.001, 0))]:
        m = Model()
        d = m.tensor([2], np.int32, "dims", [3, 5])
        v = m.tensor([], dtype, "value", quant=quant)
        y = m.output([3, 5], dtype, "y", quant=quant)
        m.write(out_dir, "fill_" + np.dtype(dtype).name, OPS.FILL, 3, [d, v], [y])
    # FLOOR_DIV, FLOOR_MOD: divisors constant and nonzero (negative ones too); POW; SIGN.
    for name, code in [("floor_div", OPS.FLOOR_DIV), ("floor_mod", OPS.FLOOR_MOD)]:
        binary(out_dir, name + "_float", code, 1, [3, 4], [4], [3, 4], np.float32, np.float32,
               b_data=[0.3, -0.7, 2.5, -0.1])
        binary(out_dir, name + "_int32", code, 1, [2, 3, 4], [3, 1], [2, 3, 4], np.int32, np.int32,
               b_data=[7, -3, 1])
        binary(out_dir, name + "_int8", code, 2, [4, 5], [5], [4, 5], np.int8, np.int8,
               b_data=[5, -2, 9, -128, 127])
        binary(out_dir, name + "_int16", code, 2, [2, 5], [2, 1], [2, 5], np.int16, np.int16, b_data=[-300, 7])
    binary(out_dir, "floor_mod_int64", OPS.FLOOR_MOD, 2, [4, 5], [5], [4, 5], np.int64, np.int64,
           b_data=[5, -2, 9, -128, 127])
    binary(out_dir, "pow_float", OPS.POW, 1, [3, 4], [4], [3, 4], np.float32, np.float32,
           b_data=[2.0, 0.5, 3.0, -1.0])
    binary(out_dir, "pow_float_bcast", OPS.POW, 1, [2, 1, 3], [1, 4, 1], [2, 4, 3], np.float32, np.float32,
           a_data=rng.uniform(0.1, 2.0, size=6))
    binary(out_dir, "pow_int32", OPS.POW, 1, [3, 4], [4], [3, 4], np.int32, np.int32, b_data=[0, 1, 2, 3])
    for dtype in (np.float32, np.int32):
        m = Model()
        x = m.tensor([3, 5], dtype, "x")
        y = m.output([3, 5], dtype, "y")
        m.write(out_dir, "sign_" + np.dtype(dtype).name, OPS.SIGN, 1, [x], [y])


if __name__ == "__main__":
    main()
