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
  seeds.push_back({"gelu", UnaryWithAxes(kKilnBuiltinGelu, kKilnFloat32, {}, KilnGeluParams{true})});
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
