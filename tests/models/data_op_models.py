#!/usr/bin/env python3
"""Writes single-op .tflite models of the data-moving and index ops (STRIDED_SLICE, SLICE, EXPAND_DIMS, GATHER,
SPLIT, SPLIT_V, PACK, UNPACK, TILE, BROADCAST_TO, SHAPE, ARG_MAX, ARG_MIN, CAST, and the float32 math of one input:
ABS, NEG, SQRT, RSQRT, SQUARE, LOG, SIN, COS, FLOOR, CEIL, ROUND; the comparisons, logical ops, SELECT, SELECT_V2,
ZEROS_LIKE, FILL, FLOOR_DIV, FLOOR_MOD, POW and SIGN) for litert_compare.py --generate,
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
TYPES = {np.float32: S.TensorType.FLOAT32, np.int32: S.TensorType.INT32, np.int64: S.TensorType.INT64,
         np.int8: S.TensorType.INT8, np.uint8: S.TensorType.UINT8, np.int16: S.TensorType.INT16,
         np.bool_: S.TensorType.BOOL}


class Model:
    """One operator; tensors added in order, constants given with data."""

    def __init__(self):
        self.tensors, self.buffers, self.inputs = [], [S.BufferT()], []

    def tensor(self, shape, dtype, name, data=None, quant=None):
        t = S.TensorT()
        t.shape, t.type, t.name, t.buffer = list(shape), TYPES[dtype], name, 0
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

    def write(self, out_dir, name, code, version, inputs, outputs, options_type=0, options=None):
        opcode = S.OperatorCodeT()
        opcode.builtinCode, opcode.deprecatedBuiltinCode, opcode.version = code, min(code, 127), version
        op = S.OperatorT()
        op.opcodeIndex, op.inputs, op.outputs = 0, inputs, outputs
        op.builtinOptionsType, op.builtinOptions = options_type, options
        graph = S.SubGraphT()
        graph.tensors, graph.inputs, graph.outputs, graph.operators = self.tensors, self.inputs, outputs, [op]
        graph.name = "main"
        model = S.ModelT()
        model.version, model.operatorCodes, model.subgraphs, model.buffers = 3, [opcode], [graph], self.buffers
        model.description = "data_op_models.py"
        builder = flatbuffers.Builder(1024)
        builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
        with open(os.path.join(out_dir, name + ".tflite"), "wb") as f:
            f.write(builder.Output())


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


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
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
