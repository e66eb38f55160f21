// Writes seed models for interpreter_fuzzer at build time: one small single-op model per builtin op that the
// shared models do not use (reductions, scans, normalisations, the float math ops), so that each smoke run
// prepares and invokes those kernels and mutates around their options and constant inputs. Needs no shared data.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/builtin_ops.h"
#include "runtime/model/model_writer.h"

namespace {

using kiln::ModelWriter;

// x (float32 [2, 3, 4]) -> op(x[, axes]) -> y, its output shape left for Prepare to set.
template <typename Params>
ModelWriter UnaryWithAxes(KilnBuiltinOperator code, KilnType type, std::vector<int32_t> axes, const Params& params) {
  ModelWriter w;
  const int x = w.AddTensor(type, {2, 3, 4}, "x");
  std::vector<int> inputs = {x};
  if (!axes.empty()) {
    inputs.push_back(w.AddConstTensor<int32_t>(kKilnInt32, {static_cast<int>(axes.size())}, "axes", axes));
  }
  const int y = w.AddTensor(type, {2, 3, 4}, "y");
  w.AddOp(code, inputs, {y}, params);
  w.SetInputs({x});
  w.SetOutputs({y});
  return w;
}

ModelWriter Plain(KilnBuiltinOperator code) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {2, 3, 4}, "x");
  const int y = w.AddTensor(kKilnFloat32, {2, 3, 4}, "y");
  w.AddOp(code, {x}, {y});
  w.SetInputs({x});
  w.SetOutputs({y});
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  struct Seed {
    const char* name;
    ModelWriter writer;
  };
  std::vector<Seed> seeds;
  seeds.push_back({"reduce_max", UnaryWithAxes(kKilnBuiltinReduceMax, kKilnFloat32, {1, -1}, KilnReducerParams{true})});
  seeds.push_back({"reduce_min", UnaryWithAxes(kKilnBuiltinReduceMin, kKilnInt32, {0}, KilnReducerParams{false})});
  seeds.push_back({"reduce_prod", UnaryWithAxes(kKilnBuiltinReduceProd, kKilnInt64, {2}, KilnReducerParams{false})});
  seeds.push_back({"reduce_any", UnaryWithAxes(kKilnBuiltinReduceAny, kKilnBool, {0, 2}, KilnReducerParams{true})});
  seeds.push_back({"reduce_all", UnaryWithAxes(kKilnBuiltinReduceAll, kKilnBool, {1}, KilnReducerParams{false})});
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3, 4}, "x");
    const int axis = w.AddConstTensor<int32_t>(kKilnInt32, {}, "axis", {1});
    const int y = w.AddTensor(kKilnFloat32, {2, 3, 4}, "y");
    w.AddOp(kKilnBuiltinCumsum, {x, axis}, {y}, KilnCumsumParams{true, true});
    w.SetInputs({x});
    w.SetOutputs({y});
    seeds.push_back({"cumsum", std::move(w)});
  }
  seeds.push_back({"l2_normalization", UnaryWithAxes(kKilnBuiltinL2Normalization, kKilnFloat32, {},
                                                     KilnL2NormParams{kKilnActNone})});
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {1, 3, 4, 5}, "x");
    const int y = w.AddTensor(kKilnFloat32, {1, 3, 4, 5}, "y");
    w.AddOp(kKilnBuiltinLocalResponseNormalization, {x}, {y}, KilnLocalResponseNormParams{2, 1.0f, 0.5f, 0.75f});
    const int z = w.AddTensor(kKilnFloat32, {1, 2, 2, 5}, "z");
    w.AddOp(kKilnBuiltinL2Pool2d, {y}, {z}, KilnPoolParams{kKilnPaddingValid, 2, 2, 2, 2, kKilnActRelu});
    w.SetInputs({x});
    w.SetOutputs({z});
    seeds.push_back({"lrn_l2_pool", std::move(w)});
  }
  {
    ModelWriter w;
    const int a = w.AddTensor(kKilnFloat32, {2, 3, 4}, "a");
    const int b = w.AddConstTensor<float>(kKilnFloat32, {4, 2}, "b", {1, 2, 3, 4, 5, 6, 7, 8});
    const int y = w.AddTensor(kKilnFloat32, {2, 3, 2}, "y");
    w.AddOp(kKilnBuiltinBatchMatmul, {a, b}, {y}, KilnBatchMatMulParams{false, false, false});
    const int ids = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "ids", {1, 0});
    const int rows = w.AddTensor(kKilnFloat32, {2, 3, 2}, "rows");
    w.AddOp(kKilnBuiltinEmbeddingLookup, {ids, y}, {rows});
    w.SetInputs({a});
    w.SetOutputs({rows});
    seeds.push_back({"batch_matmul_embedding", std::move(w)});
  }
  {  // int8 BATCH_MATMUL with zero points and a broadcast batch
    ModelWriter w;
    const int a = w.AddTensor(kKilnInt8, {2, 3, 4}, "a");
    const int b = w.AddTensor(kKilnInt8, {4, 2}, "b");
    const int y = w.AddTensor(kKilnInt8, {2, 3, 2}, "y");
    w.SetQuantization(a, {0.05f}, {3});
    w.SetQuantization(b, {0.02f}, {-7});
    w.SetQuantization(y, {0.1f}, {-1});
    w.AddOp(kKilnBuiltinBatchMatmul, {a, b}, {y}, KilnBatchMatMulParams{false, false, false});
    w.SetInputs({a, b});
    w.SetOutputs({y});
    seeds.push_back({"batch_matmul_int8", std::move(w)});
  }
  {  // int8 L2_NORMALIZATION (output 1/128, zero point 0)
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt8, {2, 3, 5}, "x");
    const int y = w.AddTensor(kKilnInt8, {2, 3, 5}, "y");
    w.SetQuantization(x, {0.05f}, {-3});
    w.SetQuantization(y, {1.0f / 128}, {0});
    w.AddOp(kKilnBuiltinL2Normalization, {x}, {y}, KilnL2NormParams{kKilnActNone});
    w.SetInputs({x});
    w.SetOutputs({y});
    seeds.push_back({"l2_normalization_int8", std::move(w)});
  }
  {  // int16 LOGISTIC, TANH, SOFTMAX and MEAN on one symmetric input (outputs 2^-15 as LiteRT requires)
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt16, {2, 3, 4}, "x");
    w.SetQuantization(x, {7e-4f}, {0});
    std::vector<int> outputs;
    for (KilnBuiltinOperator code : {kKilnBuiltinLogistic, kKilnBuiltinTanh, kKilnBuiltinSoftmax}) {
      const int y = w.AddTensor(kKilnInt16, {2, 3, 4}, "y" + std::to_string(outputs.size()));
      w.SetQuantization(y, {1.0f / 32768}, {0});
      if (code == kKilnBuiltinSoftmax) {
        w.AddOp(code, {x}, {y}, KilnSoftmaxParams{1.0f});
      } else {
        w.AddOp(code, {x}, {y});
      }
      outputs.push_back(y);
    }
    const int axes = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "axes", {1});
    const int mean = w.AddTensor(kKilnInt16, {2, 4}, "mean");
    w.SetQuantization(mean, {1e-3f}, {0});
    w.AddOp(kKilnBuiltinMean, {x, axes}, {mean}, KilnReducerParams{false});
    outputs.push_back(mean);
    w.SetInputs({x});
    w.SetOutputs(outputs);
    seeds.push_back({"int16_activations", std::move(w)});
  }
  {  // bools from the fuzzer's bytes: a comparison, LOGICAL_AND/NOT and SELECT_V2 on them
    ModelWriter w;
    const int a = w.AddTensor(kKilnFloat32, {2, 3}, "a");
    const int b = w.AddConstTensor<float>(kKilnFloat32, {3}, "b", {0, 0.5f, -1});
    const int flags = w.AddTensor(kKilnBool, {2, 3}, "flags");
    const int less = w.AddTensor(kKilnBool, {2, 3}, "less");
    w.AddOp(kKilnBuiltinLess, {a, b}, {less});
    const int both = w.AddTensor(kKilnBool, {2, 3}, "both");
    w.AddOp(kKilnBuiltinLogicalAnd, {less, flags}, {both});
    const int neither = w.AddTensor(kKilnBool, {2, 3}, "neither");
    w.AddOp(kKilnBuiltinLogicalNot, {both}, {neither});
    const int picked = w.AddTensor(kKilnFloat32, {2, 3}, "picked");
    w.AddOp(kKilnBuiltinSelectV2, {flags, a, b}, {picked});
    const int same = w.AddTensor(kKilnBool, {2, 3}, "same");
    w.AddOp(kKilnBuiltinEqual, {flags, neither}, {same});
    w.SetInputs({a, flags});
    w.SetOutputs({picked, same});
    seeds.push_back({"compare_logic_select", std::move(w)});
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {1, 4, 4, 2}, "x");
    const int d = w.AddTensor(kKilnFloat32, {1, 2, 2, 8}, "d");
    w.AddOp(kKilnBuiltinSpaceToDepth, {x}, {d}, KilnSpaceToDepthParams{2});
    const int axis = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "axis", {-1});
    const int r = w.AddTensor(kKilnFloat32, {1, 2, 2, 8}, "r");
    w.AddOp(kKilnBuiltinReverseV2, {d, axis}, {r});
    const int pads = w.AddConstTensor<int32_t>(kKilnInt32, {4, 2}, "pads", {0, 0, 1, 1, 1, 0, 0, 0});
    const int m = w.AddTensor(kKilnFloat32, {1, 4, 3, 8}, "m");
    w.AddOp(kKilnBuiltinMirrorPad, {r, pads}, {m}, KilnMirrorPadParams{kKilnMirrorPadReflect});
    w.SetInputs({x});
    w.SetOutputs({m});
    seeds.push_back({"space_reverse_mirror", std::move(w)});
  }
  {  // run-time indices from the fuzzer's bytes (mostly out of range): ONE_HOT, GATHER_ND, SCATTER_ND, ADD_N,
     // TOPK_V2 (NaN and ties from the bytes), RANGE
    ModelWriter w;
    const int indices = w.AddTensor(kKilnInt32, {3, 1}, "indices");
    const int params = w.AddTensor(kKilnFloat32, {4, 2}, "params");
    const int depth = w.AddConstTensor<int32_t>(kKilnInt32, {}, "depth", {4});
    const int on = w.AddConstTensor<float>(kKilnFloat32, {}, "on", {1});
    const int off = w.AddConstTensor<float>(kKilnFloat32, {}, "off", {0});
    const int hot = w.AddTensor(kKilnFloat32, {3, 1, 4}, "hot");
    w.AddOp(kKilnBuiltinOneHot, {indices, depth, on, off}, {hot}, KilnOneHotParams{-1});
    const int picked = w.AddTensor(kKilnFloat32, {3, 2}, "picked");
    w.AddOp(kKilnBuiltinGatherNd, {params, indices}, {picked});
    const int shape = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "shape", {4, 2});
    const int scattered = w.AddTensor(kKilnFloat32, {4, 2}, "scattered");
    w.AddOp(kKilnBuiltinScatterNd, {indices, picked, shape}, {scattered});
    const int sum = w.AddTensor(kKilnFloat32, {4, 2}, "sum");
    w.AddOp(kKilnBuiltinAddN, {scattered, params, params}, {sum});
    const int k = w.AddConstTensor<int32_t>(kKilnInt32, {}, "k", {2});
    const int top = w.AddTensor(kKilnFloat32, {4, 2}, "top");
    const int top_indices = w.AddTensor(kKilnInt32, {4, 2}, "top_indices");
    w.AddOp(kKilnBuiltinTopkV2, {sum, k}, {top, top_indices});
    const int start = w.AddConstTensor<float>(kKilnFloat32, {}, "start", {0});
    const int limit = w.AddConstTensor<float>(kKilnFloat32, {}, "limit", {1});
    const int delta = w.AddConstTensor<float>(kKilnFloat32, {}, "delta", {0.25f});
    const int steps = w.AddTensor(kKilnFloat32, {4}, "steps");
    w.AddOp(kKilnBuiltinRange, {start, limit, delta}, {steps});
    w.SetInputs({indices, params});
    w.SetOutputs({hot, top, top_indices, steps});
    seeds.push_back({"index_ops", std::move(w)});
  }
  {
    ModelWriter w;
    const int data = w.AddTensor(kKilnFloat32, {4, 3}, "data");
    const int ids = w.AddTensor(kKilnInt32, {4}, "ids");
    const int num = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "num", {3});
    const int y = w.AddTensor(kKilnFloat32, {3, 3}, "y");
    w.AddOp(kKilnBuiltinUnsortedSegmentSum, {data, ids, num}, {y});
    const int ids2 = w.AddConstTensor<int32_t>(kKilnInt32, {3}, "ids2", {1, -1, 0});
    const int z = w.AddTensor(kKilnFloat32, {2, 3}, "z");
    const int num2 = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "num2", {2});
    w.AddOp(kKilnBuiltinUnsortedSegmentMax, {y, ids2, num2}, {z});
    w.SetInputs({data, ids});
    w.SetOutputs({z});
    seeds.push_back({"unsorted_segment", std::move(w)});
  }
  {  // TFLite_Detection_PostProcess (served without registration): boxes and scores from the fuzzer's bytes (NaN,
     // inf, ties), regular NMS; the fuzzer also mutates the flexbuffer options
    ModelWriter w;
    const int boxes = w.AddTensor(kKilnFloat32, {1, 4, 4}, "box_encodings");
    const int scores = w.AddTensor(kKilnFloat32, {1, 4, 3}, "class_predictions");
    const int anchors = w.AddConstTensor<float>(kKilnFloat32, {4, 4}, "anchors",
                                                {0.2f, 0.2f, 0.3f, 0.3f, 0.3f, 0.2f, 0.3f, 0.3f, 0.7f, 0.7f, 0.2f, 0.2f,
                                                 0.7f, 0.8f, 0.2f, 0.4f});
    const int out_boxes = w.AddTensor(kKilnFloat32, {1, 3, 4}, "detection_boxes");
    const int classes = w.AddTensor(kKilnFloat32, {1, 3}, "detection_classes");
    const int out_scores = w.AddTensor(kKilnFloat32, {1, 3}, "detection_scores");
    const int count = w.AddTensor(kKilnFloat32, {1}, "num_detections");
    w.AddCustomOp("TFLite_Detection_PostProcess", {boxes, scores, anchors}, {out_boxes, classes, out_scores, count},
                  kiln::FlexMap()
                      .Int("max_detections", 3)
                      .Int("max_classes_per_detection", 1)
                      .Int("detections_per_class", 2)
                      .Int("num_classes", 2)
                      .Bool("use_regular_nms", true)
                      .Float("nms_score_threshold", 0.0f)
                      .Float("nms_iou_threshold", 0.5f)
                      .Float("y_scale", 10.0f)
                      .Float("x_scale", 10.0f)
                      .Float("h_scale", 5.0f)
                      .Float("w_scale", 5.0f)
                      .Finish());
    w.SetInputs({boxes, scores});
    w.SetOutputs({out_boxes, classes, out_scores, count});
    seeds.push_back({"detection_postprocess", std::move(w)});
  }
  {  // sparse constants (the reader densifies them; the fuzzer mutates segments and indices): DENSIFY of a float32
     // [4, 8] in 1x4 blocks with int32 indices, a FULLY_CONNECTED reading it directly, an int8 one with uint8 indices
    using SparseDimension = kiln::ModelWriter::SparseDimension;
    ModelWriter w;
    const int k = w.AddSparseConstTensor<float>(
        kKilnFloat32, {4, 8}, "sparse", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {0, 1, 2}, {1},
        {SparseDimension{false, 4, {}, {}}, SparseDimension{true, 0, {0, 1, 1, 2, 3}, {1, 0, 1}},
         SparseDimension{false, 4, {}, {}}});
    const int x = w.AddTensor(kKilnFloat32, {4, 8}, "x");
    const int dense = w.AddTensor(kKilnFloat32, {4, 8}, "dense");
    w.AddOp(kKilnBuiltinDensify, {k}, {dense});
    const int sum = w.AddTensor(kKilnFloat32, {4, 8}, "sum");
    w.AddOp(kKilnBuiltinAdd, {x, dense}, {sum}, KilnAddParams{kKilnActNone, false});
    const int fc = w.AddTensor(kKilnFloat32, {4, 4}, "fc");
    w.AddOp(kKilnBuiltinFullyConnected, {sum, k, -1}, {fc},
            KilnFullyConnectedParams{kKilnActNone, kKilnFullyConnectedWeightsFormatDefault, false, false});
    const int q = w.AddSparseConstTensor<int8_t>(kKilnInt8, {3, 4}, "sparse_int8", {5, -7, 9}, {0, 1}, {},
                                                 {SparseDimension{false, 3, {}, {}},
                                                  SparseDimension{true, 0, {0, 2, 2, 3}, {0, 3, 2}, kKilnUInt8}});
    w.SetQuantization(q, {0.5f}, {0});
    const int dq = w.AddTensor(kKilnInt8, {3, 4}, "dense_int8");
    w.SetQuantization(dq, {0.5f}, {0});
    w.AddOp(kKilnBuiltinDensify, {q}, {dq});
    w.SetInputs({x});
    w.SetOutputs({fc, dq});
    seeds.push_back({"densify_sparse", std::move(w)});
  }
  {  // CONV_3D then CONV_3D_TRANSPOSE back to the input's shape (SAME, stride 2, bias, activation)
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {1, 4, 4, 4, 2}, "x");
    const int f = w.AddConstTensor<float>(kKilnFloat32, {2, 2, 2, 2, 3}, "filter", std::vector<float>(48, 0.25f));
    const int b = w.AddConstTensor<float>(kKilnFloat32, {3}, "bias", {0.5f, -0.5f, 1.0f});
    const int y = w.AddTensor(kKilnFloat32, {1, 2, 2, 2, 3}, "y");
    w.AddOp(kKilnBuiltinConv3d, {x, f, b}, {y}, KilnConv3DParams{kKilnPaddingSame, 2, 2, 2, 1, 1, 1, kKilnActRelu});
    const int shape = w.AddConstTensor<int32_t>(kKilnInt32, {5}, "output_shape", {1, 4, 4, 4, 2});
    const int g = w.AddConstTensor<float>(kKilnFloat32, {2, 2, 2, 2, 3}, "filter_t", std::vector<float>(48, -0.5f));
    const int z = w.AddTensor(kKilnFloat32, {1, 4, 4, 4, 2}, "z");
    w.AddOp(kKilnBuiltinConv3dTranspose, {shape, g, y}, {z},
            KilnConv3DParams{kKilnPaddingSame, 2, 2, 2, 1, 1, 1, kKilnActNone});
    w.SetInputs({x});
    w.SetOutputs({z});
    seeds.push_back({"conv3d", std::move(w)});
  }
  {
    // SEGMENT_SUM -> MATRIX_DIAG -> MATRIX_SET_DIAG -> DYNAMIC_UPDATE_SLICE (run-time starts), and RIGHT_SHIFT ->
    // BITWISE_XOR -> BITCAST.
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {4, 3}, "x");
    const int ids = w.AddConstTensor<int32_t>(kKilnInt32, {4}, "ids", {0, 0, 1, 1});
    const int sums = w.AddTensor(kKilnFloat32, {2, 3}, "sums");
    w.AddOp(kKilnBuiltinSegmentSum, {x, ids}, {sums});
    const int diag = w.AddTensor(kKilnFloat32, {2, 3, 3}, "diag");
    w.AddOp(kKilnBuiltinMatrixDiag, {sums}, {diag});
    const int set = w.AddTensor(kKilnFloat32, {2, 3, 3}, "set");
    w.AddOp(kKilnBuiltinMatrixSetDiag, {diag, sums}, {set});
    const int update = w.AddConstTensor<float>(kKilnFloat32, {1, 2, 2}, "update", {1, 2, 3, 4});
    const int starts = w.AddTensor(kKilnInt32, {3}, "starts");
    const int updated = w.AddTensor(kKilnFloat32, {2, 3, 3}, "updated");
    w.AddOp(kKilnBuiltinDynamicUpdateSlice, {set, update, starts}, {updated});
    const int a = w.AddTensor(kKilnInt32, {5}, "a");
    const int shift = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "shift", {3});
    const int shifted = w.AddTensor(kKilnInt32, {5}, "shifted");
    w.AddOp(kKilnBuiltinRightShift, {a, shift}, {shifted});
    const int mixed = w.AddTensor(kKilnInt32, {5}, "mixed");
    w.AddOp(kKilnBuiltinBitwiseXor, {shifted, a}, {mixed});
    const int bits = w.AddTensor(kKilnInt8, {5, 4}, "bits");
    w.AddOp(kKilnBuiltinBitcast, {mixed}, {bits});
    w.SetInputs({x, starts, a});
    w.SetOutputs({updated, bits});
    seeds.push_back({"small_ops", std::move(w)});
  }
  {
    // REVERSE_SEQUENCE -> FAKE_QUANT -> BUCKETIZE, and SPARSE_TO_DENSE.
    static const float kBoundaries[] = {-0.5f, 0.0f, 0.5f};
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {3, 4}, "x");
    const int lengths = w.AddConstTensor<int32_t>(kKilnInt32, {3}, "lengths", {0, 4, 2});
    const int reversed = w.AddTensor(kKilnFloat32, {3, 4}, "reversed");
    w.AddOp(kKilnBuiltinReverseSequence, {x, lengths}, {reversed}, KilnReverseSequenceParams{1, 0});
    const int quantized = w.AddTensor(kKilnFloat32, {3, 4}, "quantized");
    w.AddOp(kKilnBuiltinFakeQuant, {reversed}, {quantized}, KilnFakeQuantParams{-1.0f, 1.0f, 8, false});
    const int buckets = w.AddTensor(kKilnInt32, {3, 4}, "buckets");
    w.AddOp(kKilnBuiltinBucketize, {quantized}, {buckets}, KilnBucketizeParams{kBoundaries, 3});
    const int indices = w.AddConstTensor<int32_t>(kKilnInt32, {2, 2}, "indices", {0, 1, 2, 2});
    const int shape = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "shape", {3, 3});
    const int values = w.AddConstTensor<float>(kKilnFloat32, {2}, "values", {1, 2});
    const int fill = w.AddConstTensor<float>(kKilnFloat32, {}, "fill", {0});
    const int dense = w.AddTensor(kKilnFloat32, {3, 3}, "dense");
    w.AddOp(kKilnBuiltinSparseToDense, {indices, shape, values, fill}, {dense});
    w.SetInputs({x});
    w.SetOutputs({buckets, dense});
    seeds.push_back({"small_ops_options", std::move(w)});
  }
  {
    // The StableHLO elementwise ops: float ADD -> MULTIPLY -> MAXIMUM -> MINIMUM, int32 AND -> SHIFT_LEFT.
    ModelWriter w;
    const int a = w.AddTensor(kKilnFloat32, {2, 3}, "a");
    const int b = w.AddTensor(kKilnFloat32, {2, 3}, "b");
    int previous = a;
    const KilnBuiltinOperator chain[] = {kKilnBuiltinStablehloAdd, kKilnBuiltinStablehloMultiply,
                                         kKilnBuiltinStablehloMaximum, kKilnBuiltinStablehloMinimum};
    for (KilnBuiltinOperator code : chain) {
      const int next = w.AddTensor(kKilnFloat32, {2, 3}, "f" + std::to_string(static_cast<int>(code)));
      w.AddOp(code, {previous, b}, {next});
      previous = next;
    }
    const int i = w.AddTensor(kKilnInt32, {4}, "i");
    const int mask = w.AddConstTensor<int32_t>(kKilnInt32, {4}, "mask", {0xff, -1, 7, 0x7fffffff});
    const int masked = w.AddTensor(kKilnInt32, {4}, "masked");
    w.AddOp(kKilnBuiltinStablehloAnd, {i, mask}, {masked});
    const int counts = w.AddConstTensor<int32_t>(kKilnInt32, {4}, "counts", {0, 5, 31, 40});
    const int shifted = w.AddTensor(kKilnInt32, {4}, "shifted");
    w.AddOp(kKilnBuiltinStablehloShiftLeft, {masked, counts}, {shifted});
    w.SetInputs({a, b, i});
    w.SetOutputs({previous, shifted});
    seeds.push_back({"stablehlo", std::move(w)});
  }
  {
    // RFFT2D -> REAL, IMAG, COMPLEX_ABS.
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3, 4}, "x");
    const int length = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "length", {4, 4});
    const int spectrum = w.AddTensor(kKilnComplex64, {2, 4, 3}, "spectrum");
    w.AddOp(kKilnBuiltinRfft2d, {x, length}, {spectrum});
    const int re = w.AddTensor(kKilnFloat32, {2, 4, 3}, "re");
    const int im = w.AddTensor(kKilnFloat32, {2, 4, 3}, "im");
    const int abs = w.AddTensor(kKilnFloat32, {2, 4, 3}, "abs");
    w.AddOp(kKilnBuiltinReal, {spectrum}, {re});
    w.AddOp(kKilnBuiltinImag, {spectrum}, {im});
    w.AddOp(kKilnBuiltinComplexAbs, {spectrum}, {abs});
    w.SetInputs({x});
    w.SetOutputs({re, im, abs});
    seeds.push_back({"complex", std::move(w)});
  }
  {
    ModelWriter w;  // EMBEDDING_LOOKUP_SPARSE, mean
    const int ids = w.AddConstTensor<int32_t>(kKilnInt32, {4}, "ids", {0, 2, 1, 1});
    const int indices = w.AddConstTensor<int32_t>(kKilnInt32, {4, 2}, "indices", {0, 0, 0, 1, 1, 0, 2, 0});
    const int shape = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "shape", {3, 2});
    const int weights = w.AddTensor(kKilnFloat32, {4}, "weights");
    const int params = w.AddTensor(kKilnFloat32, {3, 4}, "params");
    const int y = w.AddTensor(kKilnFloat32, {3, 4}, "y");
    w.AddOp(kKilnBuiltinEmbeddingLookupSparse, {ids, indices, shape, weights, params}, {y},
            KilnEmbeddingLookupSparseParams{kKilnCombinerMean});
    w.SetInputs({weights, params});
    w.SetOutputs({y});
    seeds.push_back({"embedding_lookup_sparse", std::move(w)});
  }
  {
    ModelWriter w;  // RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL and MULTINOMIAL, fixed seeds
    const int shape = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "shape", {3, 5});
    const int uniform = w.AddTensor(kKilnFloat32, {3, 5}, "uniform");
    const int normal = w.AddTensor(kKilnFloat32, {3, 5}, "normal");
    w.AddOp(kKilnBuiltinRandomUniform, {shape}, {uniform}, KilnRandomParams{1, 2});
    w.AddOp(kKilnBuiltinRandomStandardNormal, {shape}, {normal}, KilnRandomParams{-3, 4});
    // MULTINOMIAL of logits from the fuzzer's bytes (NaN, infinities), the count a constant scalar.
    const int logits = w.AddTensor(kKilnFloat32, {2, 3}, "logits");
    const int count = w.AddConstTensor<int32_t>(kKilnInt32, {}, "num_samples", {5});
    const int samples = w.AddTensor(kKilnInt64, {2, 5}, "samples");
    w.AddOp(kKilnBuiltinMultinomial, {logits, count}, {samples}, KilnRandomParams{1, 2});
    w.SetInputs({logits});
    w.SetOutputs({uniform, normal, samples});
    seeds.push_back({"random", std::move(w)});
  }
  {  // dynamic shapes from the fuzzer's bytes: WHERE -> GATHER_ND -> ADD (prepared at Invoke), UNIQUE, NMS
    ModelWriter w;
    const int c = w.AddTensor(kKilnBool, {3, 4}, "c");
    const int x = w.AddTensor(kKilnFloat32, {3, 4}, "x");
    const int where = w.AddTensor(kKilnInt64, {1, 2}, "where");
    w.AddOp(kKilnBuiltinWhere, {c}, {where});
    const int picked = w.AddTensor(kKilnFloat32, {1}, "picked");
    w.AddOp(kKilnBuiltinGatherNd, {x, where}, {picked});
    const int sum = w.AddTensor(kKilnFloat32, {1}, "sum");
    w.AddOp(kKilnBuiltinAdd, {picked, picked}, {sum}, KilnAddParams{kKilnActNone, false});
    const int ids = w.AddTensor(kKilnInt32, {6}, "ids");
    const int values = w.AddTensor(kKilnInt32, {1}, "values");
    const int idx = w.AddTensor(kKilnInt32, {6}, "idx");
    w.AddOp(kKilnBuiltinUnique, {ids}, {values, idx});
    // NMS with boxes, scores and max_output_size from the fuzzer's bytes (NaN, negative sizes, ties).
    const int boxes = w.AddTensor(kKilnFloat32, {5, 4}, "boxes");
    const int scores = w.AddTensor(kKilnFloat32, {5}, "scores");
    const int max_size = w.AddTensor(kKilnInt32, {}, "max_size");
    const int iou = w.AddConstTensor<float>(kKilnFloat32, {}, "iou", {0.5f});
    const int threshold = w.AddConstTensor<float>(kKilnFloat32, {}, "threshold", {0.0f});
    const int sigma = w.AddConstTensor<float>(kKilnFloat32, {}, "sigma", {0.5f});
    const int selected = w.AddTensor(kKilnInt32, {1}, "selected");
    const int selected_scores = w.AddTensor(kKilnFloat32, {1}, "selected_scores");
    const int valid = w.AddTensor(kKilnInt32, {}, "valid");
    w.AddOp(kKilnBuiltinNonMaxSuppressionV5, {boxes, scores, max_size, iou, threshold, sigma},
            {selected, selected_scores, valid});
    w.SetInputs({c, x, ids, boxes, scores, max_size});
    w.SetOutputs({sum, values, idx, selected, selected_scores, valid});
    seeds.push_back({"dynamic_where_unique", std::move(w)});
  }
  {  // shape-deciding inputs computed at run time (FLOOR_DIV of constants by 1: mutations change the values, which
     // Invoke reads): TRANSPOSE, MEAN, REDUCE_MAX, RESIZE_BILINEAR, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND,
     // TRANSPOSE_CONV, ARG_MAX, CUMSUM, REVERSE_V2, SEGMENT_SUM, SPARSE_TO_DENSE
    ModelWriter w;
    auto computed = [&](std::vector<int> shape, std::vector<int32_t> values, const char* name) {
      const int a = w.AddConstTensor<int32_t>(kKilnInt32, shape, name, values);
      const int one = w.AddConstTensor<int32_t>(kKilnInt32, shape, "one", std::vector<int32_t>(values.size(), 1));
      const int t = w.AddTensor(kKilnInt32, shape, name);
      w.AddOp(kKilnBuiltinFloorDiv, {a, one}, {t});
      return t;
    };
    const int x = w.AddTensor(kKilnFloat32, {2, 3, 4}, "x");
    const int transposed = w.AddTensor(kKilnFloat32, {1, 1, 1}, "transposed");
    w.AddOp(kKilnBuiltinTranspose, {x, computed({3}, {2, 0, 1}, "perm")}, {transposed});
    const int mean = w.AddTensor(kKilnFloat32, {1}, "mean");
    w.AddOp(kKilnBuiltinMean, {transposed, computed({2}, {0, -1}, "axes")}, {mean}, KilnReducerParams{true});
    const int max = w.AddTensor(kKilnFloat32, {1}, "max");
    w.AddOp(kKilnBuiltinReduceMax, {x, computed({1}, {1}, "max_axes")}, {max}, KilnReducerParams{false});
    const int image = w.AddTensor(kKilnFloat32, {1, 4, 4, 2}, "image");
    const int resized = w.AddTensor(kKilnFloat32, {1, 1, 1, 2}, "resized");
    w.AddOp(kKilnBuiltinResizeBilinear, {image, computed({2}, {6, 2}, "size")}, {resized},
            KilnResizeBilinearParams{false, true});
    const int batched = w.AddTensor(kKilnFloat32, {1, 1, 1, 2}, "batched");
    w.AddOp(kKilnBuiltinSpaceToBatchNd,
            {image, computed({2}, {2, 2}, "block"), computed({2, 2}, {0, 0, 1, 1}, "paddings")}, {batched});
    const int unbatched = w.AddTensor(kKilnFloat32, {1, 1, 1, 2}, "unbatched");
    w.AddOp(kKilnBuiltinBatchToSpaceNd,
            {batched, computed({2}, {2, 2}, "block2"), computed({2, 2}, {0, 0, 1, 1}, "crops")}, {unbatched});
    const int filter = w.AddConstTensor<float>(kKilnFloat32, {3, 2, 2, 2}, "filter", std::vector<float>(24, 0.5f));
    const int deconv = w.AddTensor(kKilnFloat32, {1, 1, 1, 3}, "deconv");
    w.AddOp(kKilnBuiltinTransposeConv, {computed({4}, {1, 8, 8, 3}, "output_shape"), filter, image}, {deconv},
            KilnTransposeConvParams{kKilnPaddingSame, 2, 2, kKilnActNone});
    const int arg = w.AddTensor(kKilnInt64, {1}, "arg");
    w.AddOp(kKilnBuiltinArgMax, {x, computed({1}, {-1}, "arg_axis")}, {arg}, KilnArgMaxParams{kKilnInt64});
    const int sums = w.AddTensor(kKilnFloat32, {2, 3, 4}, "sums");
    w.AddOp(kKilnBuiltinCumsum, {x, computed({}, {1}, "cumsum_axis")}, {sums}, KilnCumsumParams{true, false});
    const int reversed = w.AddTensor(kKilnFloat32, {2, 3, 4}, "reversed");
    w.AddOp(kKilnBuiltinReverseV2, {sums, computed({2}, {2, 1}, "reverse_axes")}, {reversed});
    const int segments = w.AddTensor(kKilnFloat32, {1, 3, 4}, "segments");
    w.AddOp(kKilnBuiltinSegmentSum, {x, computed({2}, {0, 1}, "segment_ids")}, {segments});
    const int dense = w.AddTensor(kKilnFloat32, {1, 1}, "dense");
    w.AddOp(kKilnBuiltinSparseToDense,
            {w.AddConstTensor<int32_t>(kKilnInt32, {2, 2}, "indices", {0, 1, 2, 0}),
             computed({2}, {3, 2}, "dense_shape"), w.AddConstTensor<float>(kKilnFloat32, {2}, "values", {1.5f, -2.0f}),
             w.AddConstTensor<float>(kKilnFloat32, {}, "default", {0.0f})},
            {dense});
    w.SetInputs({x, image});
    w.SetOutputs({mean, max, unbatched, deconv, arg, reversed, segments, dense});
    seeds.push_back({"runtime_shapes", std::move(w)});
  }
  seeds.push_back({"gelu", UnaryWithAxes(kKilnBuiltinGelu, kKilnFloat32, {}, KilnGeluParams{true})});
  {
    // The recurrent ops, their state in variable tensors: UNIDIRECTIONAL_SEQUENCE_LSTM with every optional part
    // (peephole, projection, layer norm), LSTM (CIFG), SVDF, RNN, UNIDIRECTIONAL_SEQUENCE_RNN, and the two
    // bidirectional ops (time-major LSTM with two outputs, batch-major merged RNN), and LSTM's basic kernel.
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3, 4}, "x");
    const int x2 = w.AddTensor(kKilnFloat32, {2, 4}, "x2");
    auto weights = [&](std::vector<int> shape, const char* name) {
      size_t n = 1;
      for (int d : shape) n *= static_cast<size_t>(d);
      std::vector<float> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = 0.1f * static_cast<float>(static_cast<int>(i % 7) - 3);
      return w.AddConstTensor(kKilnFloat32, shape, name, v);
    };
    auto variable = [&](std::vector<int> shape, const char* name) {
      const int t = w.AddTensor(kKilnFloat32, shape, name);
      w.SetVariable(t);
      return t;
    };
    std::vector<int> lstm = {x};
    for (int g = 0; g < 4; ++g) lstm.push_back(weights({5, 4}, "w"));
    for (int g = 0; g < 4; ++g) lstm.push_back(weights({5, 3}, "r"));
    for (int g = 0; g < 3; ++g) lstm.push_back(weights({5}, "peephole"));
    for (int g = 0; g < 4; ++g) lstm.push_back(weights({5}, "bias"));
    lstm.push_back(weights({3, 5}, "projection"));
    lstm.push_back(weights({3}, "projection_bias"));
    lstm.push_back(variable({2, 3}, "output_state"));
    lstm.push_back(variable({2, 5}, "cell_state"));
    for (int g = 0; g < 4; ++g) lstm.push_back(weights({5}, "layer_norm"));
    const int y_lstm = w.AddTensor(kKilnFloat32, {2, 3, 3}, "y_lstm");
    w.AddOp(kKilnBuiltinUnidirectionalSequenceLstm, lstm, {y_lstm},
            KilnUnidirectionalSequenceLSTMParams{kKilnActTanh, 3.0f, 2.0f, false, false, false});
    std::vector<int> cifg = {x2, -1};
    for (int g = 0; g < 3; ++g) cifg.push_back(weights({4, 4}, "w"));
    cifg.push_back(-1);
    for (int g = 0; g < 3; ++g) cifg.push_back(weights({4, 4}, "r"));
    for (int g = 0; g < 3; ++g) cifg.push_back(-1);
    cifg.push_back(-1);
    for (int g = 0; g < 3; ++g) cifg.push_back(weights({4}, "bias"));
    cifg.push_back(-1);
    cifg.push_back(-1);
    cifg.push_back(variable({2, 4}, "lstm_output_state"));
    cifg.push_back(variable({2, 4}, "lstm_cell_state"));
    const int y_cifg = w.AddTensor(kKilnFloat32, {2, 4}, "y_cifg");
    w.AddOp(kKilnBuiltinLstm, cifg, {y_cifg}, KilnLSTMParams{kKilnActTanh, 0.0f, 0.0f, kKilnLSTMFullKernel, false});
    const int y_svdf = w.AddTensor(kKilnFloat32, {2, 3}, "y_svdf");
    w.AddOp(kKilnBuiltinSvdf,
            {x2, weights({6, 4}, "weights_feature"), weights({6, 5}, "weights_time"), weights({3}, "svdf_bias"),
             variable({2, 30}, "svdf_state")},
            {y_svdf}, KilnSVDFParams{2, kKilnActRelu, false});
    const int y_rnn = w.AddTensor(kKilnFloat32, {2, 3}, "y_rnn");
    w.AddOp(kKilnBuiltinRnn,
            {x2, weights({3, 4}, "rnn_w"), weights({3, 3}, "rnn_r"), weights({3}, "rnn_b"), variable({2, 3}, "rnn_h")},
            {y_rnn}, KilnRNNParams{kKilnActTanh, false});
    const int y_seq_rnn = w.AddTensor(kKilnFloat32, {2, 3, 3}, "y_seq_rnn");
    w.AddOp(kKilnBuiltinUnidirectionalSequenceRnn,
            {x, weights({3, 4}, "seq_rnn_w"), weights({3, 3}, "seq_rnn_r"), weights({3}, "seq_rnn_b"),
             variable({3, 3}, "seq_rnn_h")},
            {y_seq_rnn}, KilnSequenceRNNParams{true, kKilnActRelu, false});
    std::vector<int> bidi_lstm = {x};
    for (int d = 0; d < 2; ++d) {
      for (int g = 0; g < 4; ++g) bidi_lstm.push_back(weights({2, 4}, "bidi_w"));
      for (int g = 0; g < 4; ++g) bidi_lstm.push_back(weights({2, 2}, "bidi_r"));
      for (int g = 0; g < 3; ++g) bidi_lstm.push_back(-1);
      for (int g = 0; g < 4; ++g) bidi_lstm.push_back(weights({2}, "bidi_b"));
      bidi_lstm.push_back(-1);
      bidi_lstm.push_back(-1);
    }
    for (int d = 0; d < 4; ++d) bidi_lstm.push_back(variable({3, 2}, "bidi_lstm_state"));
    for (int i = 0; i < 9; ++i) bidi_lstm.push_back(-1);
    const int y_bidi_fw = w.AddTensor(kKilnFloat32, {2, 3, 2}, "y_bidi_fw");
    const int y_bidi_bw = w.AddTensor(kKilnFloat32, {2, 3, 2}, "y_bidi_bw");
    w.AddOp(kKilnBuiltinBidirectionalSequenceLstm, bidi_lstm, {y_bidi_fw, y_bidi_bw},
            KilnBidirectionalSequenceLSTMParams{kKilnActTanh, 0.0f, 0.0f, false, true, false});
    const int y_bidi_rnn = w.AddTensor(kKilnFloat32, {2, 3, 5}, "y_bidi_rnn");
    w.AddOp(kKilnBuiltinBidirectionalSequenceRnn,
            {x, weights({3, 4}, "bidi_rnn_fw_w"), weights({3, 3}, "bidi_rnn_fw_r"), weights({3}, "bidi_rnn_fw_b"),
             variable({2, 3}, "bidi_rnn_fw_h"), weights({2, 4}, "bidi_rnn_bw_w"), weights({2, 2}, "bidi_rnn_bw_r"),
             weights({2}, "bidi_rnn_bw_b"), variable({2, 2}, "bidi_rnn_bw_h"), -1, -1, -1},
            {y_bidi_rnn}, KilnBidirectionalSequenceRNNParams{false, kKilnActTanh, true, false});
    // LSTM's basic kernel, its state in two graph inputs that it writes back.
    const int prev_h = w.AddTensor(kKilnFloat32, {2, 3}, "basic_prev_activation");
    const int prev_c = w.AddTensor(kKilnFloat32, {2, 3}, "basic_prev_state");
    std::vector<int> basic_outputs;
    for (std::vector<int> shape : {std::vector<int>{2, 3}, {2, 3}, {2, 7}, {2, 12}}) {
      basic_outputs.push_back(w.AddTensor(kKilnFloat32, shape, "basic_out"));
    }
    w.AddOp(kKilnBuiltinLstm, {x2, prev_h, weights({12, 7}, "basic_w"), weights({12}, "basic_b"), prev_c},
            basic_outputs, KilnLSTMParams{kKilnActTanh, 0.0f, 0.0f, kKilnLSTMBasicKernel, false});
    w.SetInputs({x, x2, prev_h, prev_c});
    w.SetOutputs({y_lstm, y_cifg, y_svdf, y_rnn, y_seq_rnn, y_bidi_fw, y_bidi_bw, y_bidi_rnn, basic_outputs[0],
                  basic_outputs[1], basic_outputs[2], basic_outputs[3]});
    seeds.push_back({"sequence_ops", std::move(w)});
  }
  const struct {
    const char* name;
    KilnBuiltinOperator code;
  } math[] = {{"abs", kKilnBuiltinAbs},     {"neg", kKilnBuiltinNeg},     {"sqrt", kKilnBuiltinSqrt},
              {"rsqrt", kKilnBuiltinRsqrt}, {"square", kKilnBuiltinSquare}, {"log", kKilnBuiltinLog},
              {"sin", kKilnBuiltinSin},     {"cos", kKilnBuiltinCos},     {"floor", kKilnBuiltinFloor},
              {"ceil", kKilnBuiltinCeil},   {"round", kKilnBuiltinRound}};
  for (const auto& m : math) seeds.push_back({m.name, Plain(m.code)});

  {
    // Control flow and resource variables over six subgraphs: CALL_ONCE(init 5) assigns variable "v";
    // IF(cond, x) doubles (1) or squares (2) x; WHILE(i, y) runs body 4 (i + 1, y + y) while cond 3 (i < 3);
    // the variable is read, added to the loop's result and assigned back.
    ModelWriter w;
    const KilnAddParams add{kKilnActNone, false};
    const KilnMulParams mul{kKilnActNone};
    const int cond = w.AddTensor(kKilnBool, {}, "cond");
    const int x = w.AddTensor(kKilnFloat32, {2}, "x");
    const int y = w.AddTensor(kKilnFloat32, {2}, "y");
    const int i = w.AddConstTensor<float>(kKilnFloat32, {}, "i", {0.0f});
    const int i_out = w.AddTensor(kKilnFloat32, {}, "i_out");
    const int acc = w.AddTensor(kKilnFloat32, {2}, "acc");
    const int h = w.AddTensor(kKilnResource, {}, "h");
    const int v = w.AddTensor(kKilnFloat32, {2}, "v");
    const int z = w.AddTensor(kKilnFloat32, {2}, "z");
    w.AddOp(kKilnBuiltinCallOnce, {}, {}, KilnCallOnceParams{5});
    w.AddOp(kKilnBuiltinIf, {cond, x}, {y}, KilnIfParams{1, 2});
    w.AddOp(kKilnBuiltinWhile, {i, y}, {i_out, acc}, KilnWhileParams{3, 4});
    w.AddOp(kKilnBuiltinVarHandle, {}, {h}, KilnVarHandleParams{"", "v"});
    w.AddOp(kKilnBuiltinReadVariable, {h}, {v});
    w.AddOp(kKilnBuiltinAdd, {v, acc}, {z}, add);
    w.AddOp(kKilnBuiltinAssignVariable, {h, z}, {});
    w.SetInputs({cond, x});
    w.SetOutputs({i_out, z});
    for (int square = 0; square < 2; ++square) {  // subgraphs 1 and 2
      w.AddSubgraph(square ? "else" : "then");
      const int a = w.AddTensor(kKilnFloat32, {2}, "a");
      const int b = w.AddTensor(kKilnFloat32, {2}, "b");
      if (square) {
        w.AddOp(kKilnBuiltinMul, {a, a}, {b}, mul);
      } else {
        w.AddOp(kKilnBuiltinAdd, {a, a}, {b}, add);
      }
      w.SetInputs({a});
      w.SetOutputs({b});
    }
    w.AddSubgraph("cond");  // 3
    {
      const int ci = w.AddTensor(kKilnFloat32, {}, "ci");
      const int ca = w.AddTensor(kKilnFloat32, {2}, "ca");
      const int limit = w.AddConstTensor<float>(kKilnFloat32, {}, "limit", {3.0f});
      const int go = w.AddTensor(kKilnBool, {}, "go");
      w.AddOp(kKilnBuiltinLess, {ci, limit}, {go});
      w.SetInputs({ci, ca});
      w.SetOutputs({go});
    }
    w.AddSubgraph("body");  // 4
    {
      const int bi = w.AddTensor(kKilnFloat32, {}, "bi");
      const int ba = w.AddTensor(kKilnFloat32, {2}, "ba");
      const int one = w.AddConstTensor<float>(kKilnFloat32, {}, "one", {1.0f});
      const int bi2 = w.AddTensor(kKilnFloat32, {}, "bi2");
      const int ba2 = w.AddTensor(kKilnFloat32, {2}, "ba2");
      w.AddOp(kKilnBuiltinAdd, {bi, one}, {bi2}, add);
      w.AddOp(kKilnBuiltinAdd, {ba, ba}, {ba2}, add);
      w.SetInputs({bi, ba});
      w.SetOutputs({bi2, ba2});
    }
    w.AddSubgraph("init");  // 5
    {
      const int ih = w.AddTensor(kKilnResource, {}, "ih");
      const int k = w.AddConstTensor<float>(kKilnFloat32, {2}, "k", {10.0f, 20.0f});
      w.AddOp(kKilnBuiltinVarHandle, {}, {ih}, KilnVarHandleParams{"", "v"});
      w.AddOp(kKilnBuiltinAssignVariable, {ih, k}, {});
      w.SetInputs({});
      w.SetOutputs({});
    }
    seeds.push_back({"control_flow", std::move(w)});
  }
  {
    // Issue #14's hostile cases in one graph: a MAX_POOL_2D window of 2^30 over a 3x3 input (runs, bounded by
    // the output), an empty constant (0 elements, no data) concatenated, and a TILE by constant multiples, which
    // mutations grow past the memory rule (refused at Prepare).
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {1, 3, 3, 2}, "x");
    const int pooled = w.AddTensor(kKilnFloat32, {1, 3, 3, 2}, "pooled");
    const int empty = w.AddTensor(kKilnFloat32, {0, 3, 3, 2}, "empty");
    const int joined = w.AddTensor(kKilnFloat32, {1, 3, 3, 2}, "joined");
    const int multiples = w.AddConstTensor<int32_t>(kKilnInt32, {4}, "multiples", {2, 1, 1, 1});
    const int tiled = w.AddTensor(kKilnFloat32, {2, 3, 3, 2}, "tiled");
    w.AddOp(kKilnBuiltinMaxPool2d, {x}, {pooled},
            KilnPoolParams{kKilnPaddingSame, 1, 1, 1 << 30, 1 << 30, kKilnActNone});
    w.AddOp(kKilnBuiltinConcatenation, {empty, pooled}, {joined}, KilnConcatenationParams{0, kKilnActNone});
    w.AddOp(kKilnBuiltinTile, {joined, multiples}, {tiled});
    w.SetInputs({x});
    w.SetOutputs({tiled});
    seeds.push_back({"hostile", std::move(w)});
  }
  for (Seed& seed : seeds) {
    const std::vector<uint8_t> bytes = seed.writer.Finish();
    if (bytes.empty()) {
      std::fprintf(stderr, "op_seeds: %s: %s\n", seed.name, seed.writer.error().c_str());
      return 1;
    }
    const std::string path = std::string(argv[1]) + "/op_" + seed.name + ".tflite";
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) {
      std::fprintf(stderr, "op_seeds: cannot write %s\n", path.c_str());
      return 1;
    }
  }
  return 0;
}
