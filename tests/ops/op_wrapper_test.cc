// The builtin operators through the real interpreter: single-op models built with ModelWriter, checking the
// wrappers' shape logic, option handling, constant inputs, hybrid weights and error messages. The kernels'
// arithmetic is covered by the reference tests; here the numbers come from those same reference functions or
// from hand computation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdarg>
#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "kiln/c_api.h"
#include "kiln/operator.h"
#include "ops/builtin_ops.h"
#include "ops/reference/conv.h"
#include "ops/reference/dequantize.h"
#include "ops/reference/quantized_elementwise.h"
#include "runtime/model/model_writer.h"
#include "tests/ops/wrapper_runner.h"

namespace kiln::ops {
namespace {

using wrapper_testing::ExpectErrorMentions;
using wrapper_testing::Runner;
using wrapper_testing::CollectErrors;

TEST(BuiltinOpsTest, TableIsConsistent) {
  const std::set<int> expected = {kKilnBuiltinAdd,           kKilnBuiltinSub,
                                  kKilnBuiltinMul,           kKilnBuiltinDiv,
                                  kKilnBuiltinAtan2,         kKilnBuiltinFullyConnected,
                                  kKilnBuiltinConv2d,        kKilnBuiltinDepthwiseConv2d, kKilnBuiltinTransposeConv,
                                  kKilnBuiltinAveragePool2d, kKilnBuiltinMaxPool2d,
                                  kKilnBuiltinReshape,       kKilnBuiltinSqueeze,
                                  kKilnBuiltinSoftmax,       kKilnBuiltinLogSoftmax, kKilnBuiltinLogistic,
                                  kKilnBuiltinTanh,          kKilnBuiltinRelu,
                                  kKilnBuiltinRelu6,         kKilnBuiltinReluN1To1,
                                  kKilnBuiltinConcatenation, kKilnBuiltinMean, kKilnBuiltinSum,
                                  kKilnBuiltinPad,           kKilnBuiltinPadv2,        kKilnBuiltinTranspose,
                                  kKilnBuiltinDequantize,    kKilnBuiltinQuantize,
                                  kKilnBuiltinMaximum,
                                  kKilnBuiltinMinimum,       kKilnBuiltinSquaredDifference,
                                  kKilnBuiltinHardSwish,     kKilnBuiltinElu, kKilnBuiltinExp,
                                  kKilnBuiltinPrelu,         kKilnBuiltinLeakyRelu,
                                  kKilnBuiltinResizeBilinear, kKilnBuiltinResizeNearestNeighbor,
                                  kKilnBuiltinStridedSlice,  kKilnBuiltinSlice,
                                  kKilnBuiltinExpandDims,    kKilnBuiltinGather,
                                  kKilnBuiltinSplit,         kKilnBuiltinSplitV,
                                  kKilnBuiltinPack,          kKilnBuiltinUnpack,
                                  kKilnBuiltinTile,          kKilnBuiltinBroadcastTo,
                                  kKilnBuiltinShape,         kKilnBuiltinArgMax,
                                  kKilnBuiltinArgMin,        kKilnBuiltinCast,
                                  kKilnBuiltinAbs,           kKilnBuiltinNeg,
                                  kKilnBuiltinSqrt,          kKilnBuiltinRsqrt,
                                  kKilnBuiltinSquare,        kKilnBuiltinLog,
                                  kKilnBuiltinSin,           kKilnBuiltinCos,
                                  kKilnBuiltinFloor,         kKilnBuiltinCeil,
                                  kKilnBuiltinRound,         kKilnBuiltinReduceMax,
                                  kKilnBuiltinReduceMin,     kKilnBuiltinReduceProd,
                                  kKilnBuiltinReduceAny,     kKilnBuiltinReduceAll,
                                  kKilnBuiltinL2Pool2d,      kKilnBuiltinL2Normalization,
                                  kKilnBuiltinLocalResponseNormalization, kKilnBuiltinCumsum,
                                  kKilnBuiltinGelu,          kKilnBuiltinEmbeddingLookup,
                                  kKilnBuiltinBatchMatmul,
                                  kKilnBuiltinDepthToSpace,  kKilnBuiltinSpaceToDepth,
                                  kKilnBuiltinSpaceToBatchNd, kKilnBuiltinBatchToSpaceNd,
                                  kKilnBuiltinMirrorPad,     kKilnBuiltinReverseV2,

                                  kKilnBuiltinEqual,         kKilnBuiltinNotEqual,
                                  kKilnBuiltinLess,          kKilnBuiltinLessEqual,
                                  kKilnBuiltinGreater,       kKilnBuiltinGreaterEqual,
                                  kKilnBuiltinLogicalAnd,    kKilnBuiltinLogicalOr,
                                  kKilnBuiltinLogicalNot,    kKilnBuiltinSelect,
                                  kKilnBuiltinSelectV2,      kKilnBuiltinZerosLike,
                                  kKilnBuiltinFill,          kKilnBuiltinFloorDiv,
                                  kKilnBuiltinFloorMod,      kKilnBuiltinPow,
                                  kKilnBuiltinSign,          kKilnBuiltinOneHot,
                                  kKilnBuiltinGatherNd,      kKilnBuiltinScatterNd,
                                  kKilnBuiltinAddN,          kKilnBuiltinRange,
                                  kKilnBuiltinTopkV2,        kKilnBuiltinUnsortedSegmentSum,
                                  kKilnBuiltinUnsortedSegmentProd, kKilnBuiltinUnsortedSegmentMax,
                                  kKilnBuiltinUnsortedSegmentMin, kKilnBuiltinRank,
                                  kKilnBuiltinRelu0To1,
                                  // TFLite_Detection_PostProcess, served as LiteRT's resolver serves it
                                  kKilnBuiltinCustom, kKilnBuiltinDensify, kKilnBuiltinConv3d,
                                  kKilnBuiltinConv3dTranspose,
                                  kKilnBuiltinSegmentSum,    kKilnBuiltinMatrixDiag,
                                  kKilnBuiltinMatrixSetDiag, kKilnBuiltinDynamicUpdateSlice,
                                  kKilnBuiltinRightShift,    kKilnBuiltinBitwiseXor,
                                  kKilnBuiltinBitcast,       kKilnBuiltinReverseSequence,
                                  kKilnBuiltinSparseToDense, kKilnBuiltinBucketize,
                                  kKilnBuiltinFakeQuant,     kKilnBuiltinStablehloAdd,
                                  kKilnBuiltinStablehloMultiply, kKilnBuiltinStablehloMaximum,
                                  kKilnBuiltinStablehloMinimum, kKilnBuiltinStablehloAnd,
                                  kKilnBuiltinStablehloShiftLeft, kKilnBuiltinReal,
                                  kKilnBuiltinImag,          kKilnBuiltinComplexAbs,
                                  kKilnBuiltinRfft2d,        kKilnBuiltinEmbeddingLookupSparse,
                                  kKilnBuiltinRandomUniform, kKilnBuiltinRandomStandardNormal,
                                  kKilnBuiltinMultinomial,
                                  kKilnBuiltinUnidirectionalSequenceLstm, kKilnBuiltinLstm, kKilnBuiltinSvdf,
                                  kKilnBuiltinRnn, kKilnBuiltinUnidirectionalSequenceRnn,
                                  kKilnBuiltinBidirectionalSequenceLstm, kKilnBuiltinBidirectionalSequenceRnn,
                                  kKilnBuiltinWhere,         kKilnBuiltinUnique,
                                  kKilnBuiltinNonMaxSuppressionV4, kKilnBuiltinNonMaxSuppressionV5,
                                  kKilnBuiltinBroadcastArgs,
                                  kKilnBuiltinIf,            kKilnBuiltinWhile,
                                  kKilnBuiltinCallOnce,      kKilnBuiltinVarHandle,
                                  kKilnBuiltinReadVariable,  kKilnBuiltinAssignVariable};
  std::set<int> seen;
  for (const BuiltinOp& k : BuiltinOps()) {
    ASSERT_NE(k.op, nullptr) << k.builtin_code;
    EXPECT_EQ(KilnOperatorGetBuiltInCode(k.op), k.builtin_code);
    EXPECT_LE(1, k.min_version);
    EXPECT_LE(k.min_version, k.max_version);
    EXPECT_TRUE(seen.insert(k.builtin_code).second) << "duplicate entry for " << k.builtin_code;
  }
  EXPECT_EQ(seen, expected);
}

TEST(OpWrapperTest, AddBroadcastsWithActivation) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {2, 1, 3}, "x");
  const int k = w.AddConstTensor<float>(kKilnFloat32, {3}, "k", {1, -10, 0});
  const int y = w.AddTensor(kKilnFloat32, {2, 1, 3}, "y");
  w.AddOp(kKilnBuiltinAdd, {x, k}, {y}, KilnAddParams{kKilnActRelu, false});
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const float in[] = {1, 2, 3, -4, 5, -6};
  r.SetInput(0, in, sizeof(in));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 1, 3}));
  EXPECT_EQ(r.Output(), (std::vector<float>{2, 0, 3, 0, 0, 0}));
}

// The float32 math ops, each against the C library written out here over ordinary values and the edges (signed
// zeros, infinities, NaN, ROUND's ties to even); an int8 input is refused naming the op and the tensor.
TEST(OpWrapperTest, FloatMathOps) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> in = {-2.5f, -1.5f, -0.5f, -0.0f, 0.0f, 0.5f, 1.5f, 2.5f, 0.3f, -7.25f, 100.0f, inf, -inf,
                                 nan};
  // Ties to even, the long way: LiteRT's ROUND.
  const auto round_half_even = [](float x) {
    float r = std::floor(x);
    const float d = x - r;
    if (d > 0.5f || (d == 0.5f && std::fmod(r, 2.0f) != 0.0f)) r += 1.0f;
    return r;
  };
  const std::vector<std::pair<KilnBuiltinOperator, std::function<float(float)>>> cases = {
      {kKilnBuiltinAbs, [](float x) { return x < 0 ? -x : x == 0 ? 0.0f : x; }},
      {kKilnBuiltinNeg, [](float x) { return -x; }},
      {kKilnBuiltinSqrt, [](float x) { return std::sqrt(x); }},
      {kKilnBuiltinRsqrt, [](float x) { return 1.0f / std::sqrt(x); }},
      {kKilnBuiltinSquare, [](float x) { return x * x; }},
      {kKilnBuiltinLog, [](float x) { return std::log(x); }},
      {kKilnBuiltinSin, [](float x) { return std::sin(x); }},
      {kKilnBuiltinCos, [](float x) { return std::cos(x); }},
      {kKilnBuiltinFloor, [](float x) { return std::floor(x); }},
      {kKilnBuiltinCeil, [](float x) { return std::ceil(x); }},
      {kKilnBuiltinRound, round_half_even},
  };
  for (const auto& [code, ref] : cases) {
    SCOPED_TRACE(KilnBuiltinOperatorGetName(code));
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, static_cast<int>(in.size()) / 2}, "x");
    const int y = w.AddTensor(kKilnFloat32, {2, static_cast<int>(in.size()) / 2}, "y");
    w.AddOp(code, {x}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    r.SetInput(0, in.data(), in.size() * sizeof(float));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    const std::vector<float> got = r.Output();
    ASSERT_EQ(got.size(), in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const float want = ref(in[i]);
      EXPECT_TRUE(got[i] == want || (std::isnan(got[i]) && std::isnan(want)))
          << "x = " << in[i] << ": got " << got[i] << ", want " << want;
    }
  }
  ModelWriter w;
  const int x = w.AddTensor(kKilnInt8, {4}, "q_in");
  const int y = w.AddTensor(kKilnInt8, {4}, "y");
  w.SetQuantization(x, {0.5f}, {0});
  w.SetQuantization(y, {0.5f}, {0});
  w.AddOp(kKilnBuiltinAbs, {x}, {y});
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ExpectErrorMentions(r, {"ABS", "q_in", "int8"});
}

TEST(OpWrapperTest, RejectsNonFloatInputNamingOpAndTensor) {
  ModelWriter w;
  const int a = w.AddTensor(kKilnInt8, {4}, "int8_in");
  const int b = w.AddTensor(kKilnInt8, {4}, "other");
  const int y = w.AddTensor(kKilnInt8, {4}, "y");
  w.SetQuantization(a, {0.5f}, {0});
  w.SetQuantization(b, {0.5f}, {0});
  w.SetQuantization(y, {0.5f}, {0});
  w.AddOp(kKilnBuiltinDiv, {a, b}, {y}, KilnMulParams{kKilnActNone});  // DIV has no int8 kernel
  w.SetInputs({a, b});
  w.SetOutputs({y});
  Runner r(w);
  ExpectErrorMentions(r, {"DIV", "int8_in", "int8", "float32"});
}

// int8 ADD through the interpreter: scales 0.5 and 0.25 into 0.5, with zero points at the type's limits.
TEST(OpWrapperTest, Int8AddRuns) {
  ModelWriter w;
  const int a = w.AddTensor(kKilnInt8, {4}, "a");
  const int b = w.AddTensor(kKilnInt8, {4}, "b");
  const int y = w.AddTensor(kKilnInt8, {4}, "y");
  w.SetQuantization(a, {0.5f}, {-128});
  w.SetQuantization(b, {0.25f}, {127});
  w.SetQuantization(y, {0.5f}, {0});
  w.AddOp(kKilnBuiltinAdd, {a, b}, {y}, KilnAddParams{kKilnActNone, false});
  w.SetInputs({a, b});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const int8_t av[4] = {-128, -120, 0, 127};  // 0, 4, 64, 127.5
  const int8_t bv[4] = {127, 119, 0, -128};   // 0, -2, -31.75, -63.75
  r.SetInput(0, av, 4);
  r.SetInput(1, bv, 4);
  ASSERT_EQ(r.Invoke(), kKilnOk);
  const KilnTensor* t = KilnInterpreterGetOutputTensor(r.interpreter(), 0);
  const int8_t* out = static_cast<const int8_t*>(KilnTensorData(t));
  // Sums 0, 2, 32.25, 63.75 in steps of 0.5: 0, 4, 64.5 -> 65 (half up), 127.5 -> clamped 127.
  EXPECT_EQ(std::vector<int>(out, out + 4), (std::vector<int>{0, 4, 65, 127}));
}

std::vector<int> Int8Output(const Runner& r, int index = 0) {
  const KilnTensor* t = KilnInterpreterGetOutputTensor(r.interpreter(), index);
  const int8_t* data = static_cast<const int8_t*>(KilnTensorData(t));
  return std::vector<int>(data, data + KilnTensorByteSize(t));
}

// A binary int8 op with input a [2, 3] (scale 0.5, zero point 10), b [3] (scale 0.25, zero point -3) or a
// constant alpha for PRELU, and output [2, 3] with the given quantization; runs it on `av` and `bv` (the stored
// values).
std::vector<int> RunBinaryInt8(KilnBuiltinOperator code, float output_scale, int64_t output_zero_point,
                               const std::vector<int8_t>& av, const std::vector<int8_t>& bv,
                               KilnFusedActivation activation = kKilnActNone, float b_scale = 0.25f,
                               int64_t b_zero_point = -3) {
  ModelWriter w;
  const int a = w.AddTensor(kKilnInt8, {2, 3}, "a");
  const bool constant_b = code == kKilnBuiltinPrelu;
  const int b = constant_b ? w.AddConstTensor<int8_t>(kKilnInt8, {3}, "b", bv) : w.AddTensor(kKilnInt8, {3}, "b");
  const int y = w.AddTensor(kKilnInt8, {2, 3}, "y");
  w.SetQuantization(a, {0.5f}, {10});
  w.SetQuantization(b, {b_scale}, {b_zero_point});
  w.SetQuantization(y, {output_scale}, {output_zero_point});
  if (code == kKilnBuiltinSub) {
    w.AddOp(code, {a, b}, {y}, KilnAddParams{activation, false});
  } else if (code == kKilnBuiltinMul) {
    w.AddOp(code, {a, b}, {y}, KilnMulParams{activation});
  } else {
    w.AddOp(code, {a, b}, {y});
  }
  w.SetInputs(constant_b ? std::vector<int>{a} : std::vector<int>{a, b});
  w.SetOutputs({y});
  Runner r(w);
  EXPECT_EQ(r.status(), kKilnOk) << r.errors();
  if (r.status() != kKilnOk) return {};
  r.SetInput(0, av.data(), av.size());
  if (!constant_b) r.SetInput(1, bv.data(), bv.size());
  EXPECT_EQ(r.Invoke(), kKilnOk) << r.errors();
  return Int8Output(r);
}

// SUB, MUL, MAXIMUM, MINIMUM and PRELU on int8 through the interpreter, with broadcasting; the expected values
// are computed by hand from the real values.
TEST(OpWrapperTest, Int8BinaryOpsRun) {
  // a = 0.5 * (q - 10): 5, -10, 15, 20, -25, 30; b = 0.25 * (q + 3): 1, 2, -1.
  const std::vector<int8_t> av = {20, -10, 40, 50, -40, 70};
  const std::vector<int8_t> bv = {1, 5, -7};
  // a - b in steps of 0.25 around zero point 4: 4, -12, 16, 19, -27, 31 -> 20, -44, 68, 80, -104, 128 -> clamped.
  EXPECT_EQ(RunBinaryInt8(kKilnBuiltinSub, 0.25f, 4, av, bv), (std::vector<int>{20, -44, 68, 80, -104, 127}));
  // With a fused RELU the negative differences become the zero point.
  EXPECT_EQ(RunBinaryInt8(kKilnBuiltinSub, 0.25f, 4, av, bv, kKilnActRelu),
            (std::vector<int>{20, 4, 68, 80, 4, 127}));
  // a * b in steps of 1 around -5: 5, -20, -15, 20, -50, -30.
  EXPECT_EQ(RunBinaryInt8(kKilnBuiltinMul, 1.0f, -5, av, bv), (std::vector<int>{0, -25, -20, 15, -55, -35}));
  // MAXIMUM and MINIMUM compare stored values: every tensor shares one quantization.
  {
    ModelWriter w;
    const int a = w.AddTensor(kKilnInt8, {2, 3}, "a");
    const int b = w.AddTensor(kKilnInt8, {3}, "b");
    const int mx = w.AddTensor(kKilnInt8, {2, 3}, "max");
    const int mn = w.AddTensor(kKilnInt8, {2, 3}, "min");
    for (int t : {a, b, mx, mn}) w.SetQuantization(t, {0.1f}, {-3});
    w.AddOp(kKilnBuiltinMaximum, {a, b}, {mx});
    w.AddOp(kKilnBuiltinMinimum, {a, b}, {mn});
    w.SetInputs({a, b});
    w.SetOutputs({mx, mn});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    r.SetInput(0, av.data(), av.size());
    r.SetInput(1, bv.data(), bv.size());
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(Int8Output(r, 0), (std::vector<int>{20, 5, 40, 50, 5, 70}));
    EXPECT_EQ(Int8Output(r, 1), (std::vector<int>{1, -10, -7, 1, -40, -7}));
  }
  // PRELU with a constant alpha (scale 0.25, zero point -3: 1, 2, -1): x for x >= 0, else alpha * x, in steps
  // of 0.5 around 0: 5, -10 * 2, 15, 20, -25 * 2, 30.
  EXPECT_EQ(RunBinaryInt8(kKilnBuiltinPrelu, 0.5f, 0, av, bv), (std::vector<int>{10, -40, 30, 40, -100, 60}));
}

// Each int8 activation over every stored value equals its reference kernel with the tensors' quantization.
TEST(OpWrapperTest, Int8ActivationsMatchReferenceKernels) {
  using reference::Activation;
  std::vector<int8_t> all(256);
  for (int i = 0; i < 256; ++i) all[static_cast<size_t>(i)] = static_cast<int8_t>(i - 128);
  const float si = 0.05f, so = 0.03f;
  const int32_t zi = -10, zo = -100;
  struct Case {
    KilnBuiltinOperator code;
    float output_scale;
    int32_t output_zero_point;
  };
  for (const Case& c : {Case{kKilnBuiltinRelu, so, zo}, Case{kKilnBuiltinRelu6, so, zo},
                        Case{kKilnBuiltinReluN1To1, so, zo}, Case{kKilnBuiltinLogistic, 1.0f / 256, -128},
                        Case{kKilnBuiltinTanh, 1.0f / 128, 0}, Case{kKilnBuiltinElu, so, zo},
                        Case{kKilnBuiltinExp, so, zo},
                        Case{kKilnBuiltinHardSwish, so, zo}, Case{kKilnBuiltinLeakyRelu, so, zo}}) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt8, {4, 64}, "x");
    const int y = w.AddTensor(kKilnInt8, {4, 64}, "y");
    w.SetQuantization(x, {si}, {zi});
    w.SetQuantization(y, {c.output_scale}, {c.output_zero_point});
    if (c.code == kKilnBuiltinLeakyRelu) {
      w.AddOp(c.code, {x}, {y}, KilnLeakyReluParams{0.2f});
    } else {
      w.AddOp(c.code, {x}, {y});
    }
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << c.code << ": " << r.errors();
    r.SetInput(0, all.data(), all.size());
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    std::vector<int8_t> expected(256);
    const float so_c = c.output_scale;
    const int32_t zo_c = c.output_zero_point;
    if (c.code == kKilnBuiltinRelu || c.code == kKilnBuiltinRelu6 || c.code == kKilnBuiltinReluN1To1) {
      const Activation clamp = c.code == kKilnBuiltinRelu    ? Activation::kRelu
                               : c.code == kKilnBuiltinRelu6 ? Activation::kRelu6
                                                             : Activation::kReluN1To1;
      reference::RequantizeClampInt8Params p;
      reference::PrepareReluInt8(static_cast<int>(clamp), si, so_c, zi, zo_c, &p);
      reference::RequantizeClampInt8(p, 256, all.data(), expected.data());
    } else if (c.code == kKilnBuiltinHardSwish) {
      reference::HardSwishInt8Params p;
      p.input_zero_point = zi;
      p.output_zero_point = zo_c;
      ASSERT_TRUE(reference::PrepareHardSwishInt8(si, so_c, &p));
      reference::HardSwishInt8(p, 256, all.data(), expected.data());
    } else if (c.code == kKilnBuiltinLeakyRelu) {
      reference::LeakyReluInt8Params p;
      p.input_zero_point = zi;
      p.output_zero_point = zo_c;
      reference::PrepareLeakyReluInt8(si, 0.2f, so_c, &p);
      reference::LeakyReluInt8(p, 256, all.data(), expected.data());
    } else {
      const reference::LookupFunction f = c.code == kKilnBuiltinLogistic ? reference::LookupFunction::kLogistic
                                          : c.code == kKilnBuiltinTanh   ? reference::LookupFunction::kTanh
                                          : c.code == kKilnBuiltinExp    ? reference::LookupFunction::kExp
                                                                         : reference::LookupFunction::kElu;
      reference::LookupTableInt8 table;
      reference::PrepareLookupTableInt8(f, si, zi, so_c, zo_c, &table);
      reference::LookupInt8(table, 256, all.data(), expected.data());
    }
    EXPECT_EQ(Int8Output(r), std::vector<int>(expected.begin(), expected.end())) << c.code;
  }
}

// CONCATENATION copies int8 values when every input is quantized as the output.
TEST(OpWrapperTest, Int8ConcatenationCopies) {
  ModelWriter w;
  const int a = w.AddTensor(kKilnInt8, {2, 1}, "a");
  const int b = w.AddTensor(kKilnInt8, {2, 2}, "b");
  const int y = w.AddTensor(kKilnInt8, {2, 3}, "y");
  for (int t : {a, b, y}) w.SetQuantization(t, {0.5f}, {7});
  w.AddOp(kKilnBuiltinConcatenation, {a, b}, {y}, KilnConcatenationParams{-1, kKilnActNone});
  w.SetInputs({a, b});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const int8_t av[] = {-128, 127};
  const int8_t bv[] = {1, 2, 3, 4};
  r.SetInput(0, av, sizeof(av));
  r.SetInput(1, bv, sizeof(bv));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(Int8Output(r), (std::vector<int>{-128, 1, 2, 127, 3, 4}));
}

// int8 quantization the kernels cannot honour fails at prepare, naming the op and the tensor.
TEST(OpWrapperTest, Int8ElementwiseRejectsUnsupportedQuantization) {
  const auto unary = [](KilnBuiltinOperator code, float output_scale, const std::vector<std::string>& words) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt8, {4}, "x");
    const int y = w.AddTensor(kKilnInt8, {4}, "y");
    w.SetQuantization(x, {0.5f}, {0});
    w.SetQuantization(y, {output_scale}, {-128});
    w.AddOp(code, {x}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, words);
  };
  unary(kKilnBuiltinLogistic, 0.01f, {"LOGISTIC", "'y'", "1/256"});
  unary(kKilnBuiltinHardSwish, 0.001f, {"HARD_SWISH", "'y'", "scale"});
  {
    ModelWriter w;
    const int a = w.AddTensor(kKilnInt8, {4}, "a");
    const int b = w.AddTensor(kKilnInt8, {4}, "b");
    const int y = w.AddTensor(kKilnInt8, {4}, "y");
    w.SetQuantization(a, {0.5f}, {0});
    w.SetQuantization(b, {0.5f}, {0});
    w.SetQuantization(y, {0.25f}, {0});
    w.AddOp(kKilnBuiltinMaximum, {a, b}, {y});
    w.SetInputs({a, b});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"MAXIMUM", "'y'", "quantization of input 0 'a'"});
  }
  for (int variant = 0; variant < 2; ++variant) {
    ModelWriter w;
    const int a = w.AddTensor(kKilnInt8, {2}, "a");
    const int b = w.AddTensor(kKilnInt8, {2}, "b");
    const int y = w.AddTensor(kKilnInt8, {4}, "y");
    w.SetQuantization(a, {0.5f}, {0});
    w.SetQuantization(b, {0.5f}, {variant == 0 ? 1 : 0});
    w.SetQuantization(y, {0.5f}, {0});
    w.AddOp(kKilnBuiltinConcatenation, {a, b}, {y},
            KilnConcatenationParams{0, variant == 0 ? kKilnActNone : kKilnActRelu});
    w.SetInputs({a, b});
    w.SetOutputs({y});
    Runner r(w);
    if (variant == 0) {
      ExpectErrorMentions(r, {"CONCATENATION", "input 1 'b'", "zero point 1", "quantization of output 'y'"});
    } else {
      ExpectErrorMentions(r, {"CONCATENATION", "'y'", "fused activation"});
    }
  }
}

TEST(OpWrapperTest, QuantizeFloatAndRequantize) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {5}, "x");
  const int q = w.AddTensor(kKilnInt8, {5}, "q");
  const int y = w.AddTensor(kKilnInt8, {5}, "y");
  w.SetQuantization(q, {0.5f}, {-1});
  w.SetQuantization(y, {0.25f}, {3});
  w.AddOp(kKilnBuiltinQuantize, {x}, {q});
  w.AddOp(kKilnBuiltinQuantize, {q}, {y});
  w.SetInputs({x});
  w.SetOutputs({q, y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const float xv[5] = {0.25f, -0.25f, 1.0f, 1000.0f, -1000.0f};
  r.SetInput(0, xv, sizeof(xv));
  ASSERT_EQ(r.Invoke(), kKilnOk);
  const int8_t* qv = static_cast<const int8_t*>(KilnTensorData(KilnInterpreterGetOutputTensor(r.interpreter(), 0)));
  const int8_t* yv = static_cast<const int8_t*>(KilnTensorData(KilnInterpreterGetOutputTensor(r.interpreter(), 1)));
  // round(x / 0.5) half away from zero, + (-1), clamped.
  EXPECT_EQ(std::vector<int>(qv, qv + 5), (std::vector<int>{0, -2, 1, 127, -128}));
  // (q + 1) * 2 + 3, clamped.
  EXPECT_EQ(std::vector<int>(yv, yv + 5), (std::vector<int>{5, 1, 7, 127, -128}));
}

// Bad quantization is refused when the model is read, before any op's Prepare (whose own checks stay for
// tensors an op adds), with a message naming the tensor by index and name.
TEST(OpWrapperTest, Int8BadQuantizationIsRefusedAtLoad) {
  struct Case {
    float scale;
    int64_t zero_point;
    std::vector<std::string> words;
  };
  const std::vector<Case> cases = {{0.0f, 0, {"tensor 1 'b'", "scale 0 is 0"}},
                                   {-0.5f, 0, {"tensor 1 'b'", "scale 0 is -0.5"}},
                                   {0.5f, 128, {"tensor 1 'b'", "zero point 0 is 128", "[-128, 127]"}},
                                   {0.5f, -129, {"tensor 1 'b'", "zero point 0 is -129"}}};
  for (const Case& c : cases) {
    ModelWriter w;
    w.set_unchecked(true);
    const int a = w.AddTensor(kKilnInt8, {4}, "a");
    const int b = w.AddTensor(kKilnInt8, {4}, "b");
    const int y = w.AddTensor(kKilnInt8, {4}, "y");
    w.SetQuantization(a, {0.5f}, {0});
    w.SetQuantization(b, {c.scale}, {c.zero_point});
    w.SetQuantization(y, {0.5f}, {0});
    w.AddOp(kKilnBuiltinAdd, {a, b}, {y}, KilnAddParams{kKilnActNone, false});
    w.SetInputs({a, b});
    w.SetOutputs({y});
    const std::vector<uint8_t> bytes = w.Finish();
    std::string errors;
    KilnModel* model = KilnModelCreateWithErrorReporter(bytes.data(), bytes.size(), &CollectErrors, &errors);
    EXPECT_EQ(model, nullptr);
    KilnModelDelete(model);
    for (const std::string& word : c.words) {
      EXPECT_NE(errors.find(word), std::string::npos) << word << " in: " << errors;
    }
  }
}

TEST(OpWrapperTest, Int8ConvRejectsAsymmetricFilterAndScaleCount) {
  for (int variant = 0; variant < 2; ++variant) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt8, {1, 3, 3, 2}, "x");
    const std::vector<int8_t> filter_data(3 * 1 * 1 * 2, 1);
    const int f = w.AddConstTensor(kKilnInt8, {3, 1, 1, 2}, "filter", filter_data);
    const int y = w.AddTensor(kKilnInt8, {1, 3, 3, 3}, "y");
    w.SetQuantization(x, {0.5f}, {0});
    if (variant == 0) {
      w.SetQuantization(f, {0.5f}, {4});
    } else {
      w.SetQuantization(f, {0.5f, 0.25f}, {0, 0}, 3);  // 2 scales along the input channels
    }
    w.SetQuantization(y, {0.5f}, {0});
    KilnConvParams options = {};
    options.padding = kKilnPaddingValid;
    options.stride_width = options.stride_height = 1;
    options.dilation_width_factor = options.dilation_height_factor = 1;
    options.activation = kKilnActNone;
    w.AddOp(kKilnBuiltinConv2d, {x, f}, {y}, options);
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    if (variant == 0) {
      ExpectErrorMentions(r, {"CONV_2D", "'filter'", "zero point 4", "symmetric"});
    } else {
      ExpectErrorMentions(r, {"CONV_2D", "'filter'", "2 scales", "dimension 3"});
    }
  }
}

TEST(OpWrapperTest, RejectsShapesThatDoNotBroadcast) {
  ModelWriter w;
  const int a = w.AddTensor(kKilnFloat32, {2, 3}, "a");
  const int b = w.AddTensor(kKilnFloat32, {4}, "b");
  const int y = w.AddTensor(kKilnFloat32, {2, 3}, "y");
  w.AddOp(kKilnBuiltinSub, {a, b}, {y}, KilnAddParams{kKilnActNone, false});
  w.SetInputs({a, b});
  w.SetOutputs({y});
  Runner r(w);
  ExpectErrorMentions(r, {"SUB", "[2, 3]", "[4]", "do not broadcast"});
}

TEST(OpWrapperTest, ReshapeFromConstantShapeFromOptionsAndRuntimeShape) {
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3, 2}, "x");
    const int shape = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "shape", {-1, 6});
    const int y = w.AddTensor(kKilnFloat32, {2, 6}, "y");
    w.AddOp(kKilnBuiltinReshape, {x, shape}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    std::vector<float> in(12);
    for (int i = 0; i < 12; ++i) in[i] = static_cast<float>(i);
    r.SetInput(0, in.data(), 48);
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 6}));
    EXPECT_EQ(r.Output(), in);
  }
  {
    // The second input absent: the shape comes from the options.
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int y = w.AddTensor(kKilnFloat32, {3, 2}, "y");
    KilnReshapeParams params = {};
    params.num_dimensions = 2;
    params.shape[0] = 3;
    params.shape[1] = -1;
    w.AddOp(kKilnBuiltinReshape, {x, -1}, {y}, params);
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{3, 2}));
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int shape = w.AddTensor(kKilnInt32, {2}, "runtime_shape");
    const int y = w.AddTensor(kKilnFloat32, {3, 2}, "y");
    w.AddOp(kKilnBuiltinReshape, {x, shape}, {y});
    w.SetInputs({x, shape});
    w.SetOutputs({y});
    Runner r(w);
    // A run-time shape without the option: a dynamic output, shaped at Invoke (dynamic_wrapper_test.cc).
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int shape = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "shape", {4, 2});
    const int y = w.AddTensor(kKilnFloat32, {4, 2}, "y");
    w.AddOp(kKilnBuiltinReshape, {x, shape}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"RESHAPE", "6 elements", "[4, 2]"});
  }
}

TEST(OpWrapperTest, HybridConvDequantizesPerChannelFilterOnce) {
  // int8 filter [2, 2, 2, 1] quantized per output channel; the result must equal a float conv with the
  // dequantized filter.
  const std::vector<int8_t> q = {1, -2, 3, 4, 5, 6, -7, 8};
  const std::vector<float> scales = {0.5f, 0.25f};
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {1, 3, 3, 1}, "x");
  const int f = w.AddConstTensor<int8_t>(kKilnInt8, {2, 2, 2, 1}, "filter_q", q);
  w.SetQuantization(f, scales, {0, 0}, 0);
  const int b = w.AddConstTensor<float>(kKilnFloat32, {2}, "bias", {0.5f, -1});
  const int y = w.AddTensor(kKilnFloat32, {1, 3, 3, 2}, "y");
  w.AddOp(kKilnBuiltinConv2d, {x, f, b}, {y}, KilnConvParams{kKilnPaddingSame, 1, 1, 1, 1, kKilnActNone});
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const std::vector<float> in = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  r.SetInput(0, in.data(), in.size() * 4);
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  // The oracle, written out here rather than taken from the kernel under test: SAME padding of a 2x2 window
  // over 3x3 pads one row below and one column to the right; weight = q * scale of its output channel.
  const float bias[] = {0.5f, -1};
  std::vector<float> expected(18);
  for (int oy = 0; oy < 3; ++oy) {
    for (int ox = 0; ox < 3; ++ox) {
      for (int oc = 0; oc < 2; ++oc) {
        double sum = bias[oc];
        for (int ky = 0; ky < 2; ++ky) {
          for (int kx = 0; kx < 2; ++kx) {
            const int iy = oy + ky, ix = ox + kx;
            if (iy >= 3 || ix >= 3) continue;
            sum += double(in[iy * 3 + ix]) * q[oc * 4 + ky * 2 + kx] * scales[oc];
          }
        }
        expected[(oy * 3 + ox) * 2 + oc] = static_cast<float>(sum);
      }
    }
  }
  EXPECT_EQ(r.OutputDims(), (std::vector<int>{1, 3, 3, 2}));
  const std::vector<float> got = r.Output();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-5f) << i;
}

TEST(OpWrapperTest, ConvRejectsFilterLargerThanValidInput) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {1, 2, 2, 1}, "x");
  const int f = w.AddConstTensor<float>(kKilnFloat32, {1, 5, 5, 1}, "f", std::vector<float>(25, 1.0f));
  const int y = w.AddTensor(kKilnFloat32, {1, 1, 1, 1}, "y");
  w.AddOp(kKilnBuiltinConv2d, {x, f, -1}, {y}, KilnConvParams{kKilnPaddingValid, 1, 1, 1, 1, kKilnActNone});
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ExpectErrorMentions(r, {"CONV_2D", "invalid window", "filter 5x5"});
}

TEST(OpWrapperTest, FullyConnectedWithoutBiasKeepsDims) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {2, 3, 2}, "x");
  const int wt = w.AddConstTensor<float>(kKilnFloat32, {1, 2}, "w", {1, -1});
  const int y = w.AddTensor(kKilnFloat32, {2, 3, 1}, "y");
  w.AddOp(kKilnBuiltinFullyConnected, {x, wt, -1}, {y},
          KilnFullyConnectedParams{kKilnActNone, kKilnFullyConnectedWeightsFormatDefault, true, false});
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const float in[] = {1, 2, 5, 3, 0, 0, -1, 1, 4, 4, 2, 7};
  r.SetInput(0, in, sizeof(in));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 3, 1}));
  EXPECT_EQ(r.Output(), (std::vector<float>{-1, 2, 0, -2, 0, -5}));
}

TEST(OpWrapperTest, MeanWithNegativeAndDuplicateAxes) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {2, 2, 3}, "x");
  const int axes = w.AddConstTensor<int32_t>(kKilnInt32, {3}, "axes", {-1, 1, -1});
  const int y = w.AddTensor(kKilnFloat32, {2, 1, 1}, "y");
  w.AddOp(kKilnBuiltinMean, {x, axes}, {y}, KilnReducerParams{true});
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const float in[] = {1, 2, 3, 4, 5, 6, 10, 10, 10, 20, 20, 20};
  r.SetInput(0, in, sizeof(in));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 1, 1}));
  EXPECT_EQ(r.Output(), (std::vector<float>{3.5f, 15}));
}

// SUM float drops the reduced axes without keep_dims; int8 MEAN and SUM run over any axes.
TEST(OpWrapperTest, SumAndInt8ReductionsRun) {
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 2, 3}, "x");
    const int axes = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "axes", {0, -1});
    const int y = w.AddTensor(kKilnFloat32, {2}, "y");
    w.AddOp(kKilnBuiltinSum, {x, axes}, {y}, KilnReducerParams{false});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {1, 2, 3, 4, 5, 6, 10, 10, 10, 20, 20, 20};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{2}));
    EXPECT_EQ(r.Output(), (std::vector<float>{36, 75}));
  }
  for (KilnBuiltinOperator code : {kKilnBuiltinMean, kKilnBuiltinSum}) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt8, {2, 3}, "x");
    const int axes = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "axes", {1});
    const int y = w.AddTensor(kKilnInt8, {2}, "y");
    w.SetQuantization(x, {0.5f}, {1});
    w.SetQuantization(y, {0.5f}, {1});
    w.AddOp(code, {x, axes}, {y}, KilnReducerParams{false});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int8_t in[] = {1, 3, 5, -9, -10, -20};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    // Real values (x - 1) / 2: rows {0, 1, 2} and {-5, -5.5, -10.5}; mean 1 and -7, sum 3 and -21.
    EXPECT_EQ(Int8Output(r), code == kKilnBuiltinMean ? (std::vector<int>{3, -13}) : (std::vector<int>{7, -41}));
  }
}

// REDUCE_MAX/MIN on int8 keep the stored values and the quantization; PROD over int32; ANY/ALL over bool; a
// quantized PROD, a changed quantization, runtime axes and an axis out of range fail Prepare naming the tensor.
TEST(OpWrapperTest, ElementReductionsRunAndRefuseClearly) {
  for (KilnBuiltinOperator code : {kKilnBuiltinReduceMax, kKilnBuiltinReduceMin}) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt8, {2, 3}, "x");
    const int axes = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "axes", {-1});
    const int y = w.AddTensor(kKilnInt8, {2, 1}, "y");
    w.SetQuantization(x, {0.5f}, {1});
    w.SetQuantization(y, {0.5f}, {1});
    w.AddOp(code, {x, axes}, {y}, KilnReducerParams{true});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int8_t in[] = {1, 3, -5, -128, 127, 0};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 1}));
    EXPECT_EQ(Int8Output(r), code == kKilnBuiltinReduceMax ? (std::vector<int>{3, 127}) : (std::vector<int>{-5, -128}));
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt32, {2, 3}, "x");
    const int axes = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "axes", {0});
    const int y = w.AddTensor(kKilnInt32, {3}, "y");
    w.AddOp(kKilnBuiltinReduceProd, {x, axes}, {y}, KilnReducerParams{false});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int32_t in[] = {2, -3, 65536, 5, 7, 65536};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int32_t>(), (std::vector<int32_t>{10, -21, 0}));
  }
  for (KilnBuiltinOperator code : {kKilnBuiltinReduceAny, kKilnBuiltinReduceAll}) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnBool, {2, 2}, "x");
    const int axes = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "axes", {1});
    const int y = w.AddTensor(kKilnBool, {2}, "y");
    w.AddOp(code, {x, axes}, {y}, KilnReducerParams{false});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const bool in[] = {true, false, true, true};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    const auto out = r.OutputAs<uint8_t>();
    EXPECT_EQ(out, code == kKilnBuiltinReduceAny ? (std::vector<uint8_t>{1, 1}) : (std::vector<uint8_t>{0, 1}));
  }
  {  // int8 PROD without quantization (LiteRT's plain wrapping product) is refused; quantized int8 and int16
     // run LiteRT's rescaled product (int16_wrapper_test.cc).
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt8, {2, 3}, "x");
    const int axes = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "axes", {1});
    const int y = w.AddTensor(kKilnInt8, {2}, "y");
    w.AddOp(kKilnBuiltinReduceProd, {x, axes}, {y}, KilnReducerParams{false});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"REDUCE_PROD", "input 'x' has type int8", "expected one of float32, int32, int64"});
  }
  {  // MAX with a different output quantization (LiteRT fails Invoke on the scale)
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt8, {2, 3}, "x");
    const int axes = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "axes", {1});
    const int y = w.AddTensor(kKilnInt8, {2}, "y");
    w.SetQuantization(x, {0.5f}, {1});
    w.SetQuantization(y, {0.25f}, {1});
    w.AddOp(kKilnBuiltinReduceMax, {x, axes}, {y}, KilnReducerParams{false});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"REDUCE_MAX", "output 'y'", "must have the quantization of input 'x'"});
  }
  {  // axes computed at run time, and an axis out of range
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int axes = w.AddTensor(kKilnInt32, {1}, "axes");
    const int y = w.AddTensor(kKilnFloat32, {2}, "y");
    w.AddOp(kKilnBuiltinReduceMin, {x, axes}, {y}, KilnReducerParams{false});
    w.SetInputs({x, axes});
    w.SetOutputs({y});
    Runner r(w);
    // A dynamic output, sized at Invoke (runtime_shapes_wrapper_test.cc runs more); a bad axis fails there.
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {1, 2, 3, 4, 5, 6};
    r.SetInput(0, in, sizeof(in));
    const int32_t bad[] = {2};
    r.SetInput(1, bad, sizeof(bad));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("REDUCE_MIN: axes 'axes': axis 2 is out of range for rank 2"), std::string::npos)
        << r.errors();
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int axes = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "axes", {-3});
    const int y = w.AddTensor(kKilnFloat32, {2}, "y");
    w.AddOp(kKilnBuiltinReduceMax, {x, axes}, {y}, KilnReducerParams{false});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"REDUCE_MAX", "axes 'axes'", "axis -3 is out of range for rank 2"});
  }
}

// L2_POOL_2D, L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION and CUMSUM through the interpreter, and their
// refusals: a fused activation on L2_NORMALIZATION, its int8/uint8 output quantized other than LiteRT requires,
// rank 5, int16 input, a negative LRN radius, LRN off rank 4, a CUMSUM
// axis out of range or computed at run time.
TEST(OpWrapperTest, NormalizationAndCumsumRunAndRefuseClearly) {
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 2}, "x");
    const int y = w.AddTensor(kKilnFloat32, {2, 2}, "y");
    w.AddOp(kKilnBuiltinL2Normalization, {x}, {y}, KilnL2NormParams{kKilnActNone});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {3, 4, 0, 0};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.Output(), (std::vector<float>{0.6f, 0.8f, 0, 0}));
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {1, 1, 1, 3}, "x");
    const int y = w.AddTensor(kKilnFloat32, {1, 1, 1, 3}, "y");
    w.AddOp(kKilnBuiltinLocalResponseNormalization, {x}, {y}, KilnLocalResponseNormParams{1, 1.0f, 1.0f, 1.0f});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {1, 2, 3};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    // x / (1 + sum of squares within 1 channel): 1/6, 2/15, 3/14.
    const auto out = r.Output();
    EXPECT_FLOAT_EQ(out[0], 1.0f / 6);
    EXPECT_FLOAT_EQ(out[1], 2.0f / 15);
    EXPECT_FLOAT_EQ(out[2], 3.0f / 14);
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {1, 2, 2, 1}, "x");
    const int y = w.AddTensor(kKilnFloat32, {1, 1, 1, 1}, "y");
    w.AddOp(kKilnBuiltinL2Pool2d, {x}, {y}, KilnPoolParams{kKilnPaddingValid, 2, 2, 2, 2, kKilnActNone});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {1, 1, 1, 1};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.Output(), (std::vector<float>{1}));
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt32, {2, 3}, "x");
    const int axis = w.AddConstTensor<int32_t>(kKilnInt32, {}, "axis", {-1});
    const int y = w.AddTensor(kKilnInt32, {2, 3}, "y");
    w.AddOp(kKilnBuiltinCumsum, {x, axis}, {y}, KilnCumsumParams{true, true});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int32_t in[] = {1, 2, 3, 10, 20, 30};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int32_t>(), (std::vector<int32_t>{5, 3, 0, 50, 30, 0}));
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 2}, "x");
    const int y = w.AddTensor(kKilnFloat32, {2, 2}, "y");
    w.AddOp(kKilnBuiltinL2Normalization, {x}, {y}, KilnL2NormParams{kKilnActRelu});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"L2_NORMALIZATION", "fused activation", "only NONE"});
  }
  // int8 and uint8: rows (3, 4) and all zero point; out = 128 * x / 5 (76.8, 102.4) plus the output zero point.
  for (KilnType type : {kKilnInt8, kKilnUInt8}) {
    ModelWriter w;
    const int x = w.AddTensor(type, {2, 2}, "x");
    const int y = w.AddTensor(type, {2, 2}, "y");
    const int zp = type == kKilnInt8 ? -7 : 10, out_zp = type == kKilnInt8 ? 0 : 128;
    w.SetQuantization(x, {0.5f}, {zp});
    w.SetQuantization(y, {1.0f / 128}, {out_zp});
    w.AddOp(kKilnBuiltinL2Normalization, {x}, {y}, KilnL2NormParams{kKilnActNone});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const uint8_t in[] = {static_cast<uint8_t>(zp + 3), static_cast<uint8_t>(zp + 4), static_cast<uint8_t>(zp),
                          static_cast<uint8_t>(zp)};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    const auto out = r.OutputAs<uint8_t>();
    const std::vector<int> want = {out_zp + 77, out_zp + 102, out_zp, out_zp};
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(type == kKilnInt8 ? static_cast<int>(static_cast<int8_t>(out[i])) : static_cast<int>(out[i]),
                want[i])
          << KilnTypeGetName(type) << " " << i;
    }
  }
  const auto refused = [](KilnType type, std::vector<int> dims, float out_scale, int out_zp,
                          const std::vector<std::string>& words) {
    ModelWriter w;
    const int x = w.AddTensor(type, dims, "x");
    const int y = w.AddTensor(type, dims, "y");
    w.SetQuantization(x, {0.5f}, {0});
    w.SetQuantization(y, {out_scale}, {out_zp});
    w.AddOp(kKilnBuiltinL2Normalization, {x}, {y}, KilnL2NormParams{kKilnActNone});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, words);
  };
  refused(kKilnInt8, {2, 2}, 1.0f / 64, 0, {"L2_NORMALIZATION", "output 'y'", "1/128", "and 0"});
  refused(kKilnUInt8, {2, 2}, 1.0f / 128, 0, {"L2_NORMALIZATION", "uint8 output 'y'", "zero point 0", "and 128"});
  refused(kKilnInt8, {1, 1, 1, 1, 2}, 1.0f / 128, 0, {"L2_NORMALIZATION", "'x'", "rank"});
  refused(kKilnInt16, {2, 2}, 1.0f / 128, 0, {"L2_NORMALIZATION", "'x'", "float32"});
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {1, 2, 2, 3}, "x");
    const int y = w.AddTensor(kKilnFloat32, {1, 2, 2, 3}, "y");
    w.AddOp(kKilnBuiltinLocalResponseNormalization, {x}, {y}, KilnLocalResponseNormParams{-1, 1.0f, 1.0f, 0.5f});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"LOCAL_RESPONSE_NORMALIZATION", "radius -1 is negative"});
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int y = w.AddTensor(kKilnFloat32, {2, 3}, "y");
    w.AddOp(kKilnBuiltinLocalResponseNormalization, {x}, {y}, KilnLocalResponseNormParams{1, 1.0f, 1.0f, 0.5f});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"LOCAL_RESPONSE_NORMALIZATION", "'x'", "rank"});
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int axis = w.AddConstTensor<int32_t>(kKilnInt32, {}, "axis", {2});
    const int y = w.AddTensor(kKilnFloat32, {2, 3}, "y");
    w.AddOp(kKilnBuiltinCumsum, {x, axis}, {y}, KilnCumsumParams{false, false});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"CUMSUM", "axis 'axis' holds [2]; it must be one value in [-2, 2)", "'x' of rank 2"});
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int axis = w.AddTensor(kKilnInt32, {}, "axis");
    const int y = w.AddTensor(kKilnFloat32, {2, 3}, "y");
    w.AddOp(kKilnBuiltinCumsum, {x, axis}, {y}, KilnCumsumParams{false, false});
    w.SetInputs({x, axis});
    w.SetOutputs({y});
    Runner r(w);
    // An axis computed at run time: read at Invoke (runtime_shapes_wrapper_test.cc runs it); out of range fails there.
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int32_t bad[] = {-3};
    r.SetInput(1, bad, sizeof(bad));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("CUMSUM: axis 'axis' holds [-3]; it must be one value in [-2, 2)"), std::string::npos)
        << r.errors();
  }
}

// GELU reads its `approximate` option (the two forms differ at x = -2); int16 runs LiteRT's interpolated table.
TEST(OpWrapperTest, GeluFormsAndInt16) {
  std::vector<float> results;
  for (bool approximate : {false, true}) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2}, "x");
    const int y = w.AddTensor(kKilnFloat32, {2}, "y");
    w.AddOp(kKilnBuiltinGelu, {x}, {y}, KilnGeluParams{approximate});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {-2, 1};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    const auto out = r.Output();
    EXPECT_NEAR(out[1], 0.8413, 2e-4);
    results.push_back(out[0]);
  }
  EXPECT_NEAR(results[0], -0.045500, 1e-5);  // exact: -2 * Phi(-2)
  EXPECT_NEAR(results[1], -0.045402, 1e-5);  // tanh form
  ModelWriter w;
  const int x = w.AddTensor(kKilnInt16, {2}, "x");
  const int y = w.AddTensor(kKilnInt16, {2}, "y");
  w.SetQuantization(x, {0.001f}, {0});
  w.SetQuantization(y, {0.001f}, {0});
  w.AddOp(kKilnBuiltinGelu, {x}, {y}, KilnGeluParams{false});
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const int16_t in[] = {-2000, 1000};  // -2 and 1
  r.SetInput(0, in, sizeof(in));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  const auto out = r.OutputAs<int16_t>();
  EXPECT_NEAR(out[0], -45.5, 1.0);
  EXPECT_NEAR(out[1], 841.3, 1.0);
}

// EMBEDDING_LOOKUP: rows copied (ids computed at run time), per-row scales of an int8 table giving float32, and the
// refusals: an id out of range at Invoke (naming it and its position), a non-zero zero point, int64 ids.
TEST(OpWrapperTest, EmbeddingLookupRowsHybridAndRefusals) {
  {
    ModelWriter w;
    const int ids = w.AddTensor(kKilnInt32, {3}, "ids");
    const int table = w.AddConstTensor<float>(kKilnFloat32, {3, 2}, "table", {1, 2, 3, 4, 5, 6});
    const int y = w.AddTensor(kKilnFloat32, {3, 2}, "y");
    w.AddOp(kKilnBuiltinEmbeddingLookup, {ids, table}, {y});
    w.SetInputs({ids});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int32_t in[] = {2, 0, 2};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.Output(), (std::vector<float>{5, 6, 1, 2, 5, 6}));
    const int32_t bad[] = {1, 3, 0};
    r.SetInput(0, bad, sizeof(bad));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("index 3 at position 1 of lookup 'ids' is out of range [0, 3)"), std::string::npos)
        << r.errors();
  }
  {
    ModelWriter w;
    const int ids = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "ids", {1, 0});
    const int table = w.AddConstTensor<int8_t>(kKilnInt8, {2, 2}, "table", {10, -20, 30, -128});
    w.SetQuantization(table, {0.5f, 0.25f}, {0, 0}, 0);
    const int x = w.AddTensor(kKilnFloat32, {2, 2}, "x");
    const int rows = w.AddTensor(kKilnFloat32, {2, 2}, "rows");
    const int y = w.AddTensor(kKilnFloat32, {2, 2}, "y");
    w.AddOp(kKilnBuiltinEmbeddingLookup, {ids, table}, {rows});
    w.AddOp(kKilnBuiltinAdd, {rows, x}, {y}, KilnAddParams{kKilnActNone, false});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float zeros[] = {0, 0, 0, 0};
    r.SetInput(0, zeros, sizeof(zeros));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.Output(), (std::vector<float>{7.5f, -32, 5, -10}));  // row 1 by 0.25, row 0 by 0.5
  }
  {
    ModelWriter w;
    const int ids = w.AddTensor(kKilnInt32, {2}, "ids");
    const int table = w.AddConstTensor<uint8_t>(kKilnUInt8, {2, 2}, "table", {1, 2, 3, 4});
    w.SetQuantization(table, {0.5f}, {128});
    const int y = w.AddTensor(kKilnFloat32, {2, 2}, "y");
    w.AddOp(kKilnBuiltinEmbeddingLookup, {ids, table}, {y});
    w.SetInputs({ids});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"EMBEDDING_LOOKUP", "value 'table' has zero point 128", "symmetric"});
  }
  {
    ModelWriter w;
    const int ids = w.AddTensor(kKilnInt64, {2}, "ids");
    const int table = w.AddConstTensor<float>(kKilnFloat32, {2, 1}, "table", {1, 2});
    const int y = w.AddTensor(kKilnFloat32, {2, 1}, "y");
    w.AddOp(kKilnBuiltinEmbeddingLookup, {ids, table}, {y});
    w.SetInputs({ids});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"EMBEDDING_LOOKUP", "lookup", "'ids'"});
  }
}

// BATCH_MATMUL broadcasts batch dimensions (lhs [2, 1, 1, 2] x rhs [3, 2, 1] -> [2, 3, 1, 1]) and refuses a summed
// dimension that differs, batch dimensions that do not broadcast, int8 and rank 6, naming the tensors.
TEST(OpWrapperTest, BatchMatMulBroadcastsAndRefusesClearly) {
  {
    ModelWriter w;
    const int a = w.AddTensor(kKilnFloat32, {2, 1, 1, 2}, "a");
    const int b = w.AddConstTensor<float>(kKilnFloat32, {3, 2, 1}, "b", {1, 0, 0, 1, 1, 1});
    const int y = w.AddTensor(kKilnFloat32, {2, 3, 1, 1}, "y");
    w.AddOp(kKilnBuiltinBatchMatmul, {a, b}, {y}, KilnBatchMatMulParams{false, false, false});
    w.SetInputs({a});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {2, 3, 5, 7};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 3, 1, 1}));
    EXPECT_EQ(r.Output(), (std::vector<float>{2, 3, 5, 5, 7, 12}));
  }
  const auto refused = [](std::vector<int> a_dims, std::vector<int> b_dims, KilnType type, bool adj_y,
                          const std::vector<std::string>& words) {
    ModelWriter w;
    const int a = w.AddTensor(type, a_dims, "a");
    const int b = w.AddTensor(type, b_dims, "b");
    const int y = w.AddTensor(type, {1}, "y");
    if (type == kKilnUInt8) {
      for (int t : {a, b, y}) w.SetQuantization(t, {0.5f}, {0});
    }
    w.AddOp(kKilnBuiltinBatchMatmul, {a, b}, {y}, KilnBatchMatMulParams{false, adj_y, false});
    w.SetInputs({a, b});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, words);
  };
  refused({2, 3}, {4, 5}, kKilnFloat32, false, {"BATCH_MATMUL", "lhs 'a' [2, 3]", "disagree on the summed", "3 and 4"});
  refused({2, 3}, {4, 3}, kKilnFloat32, false, {"disagree on the summed dimension"});
  refused({2, 3, 4}, {3, 4, 5}, kKilnFloat32, false, {"batch dimensions", "do not broadcast"});
  refused({2, 3}, {3, 2}, kKilnUInt8, false, {"BATCH_MATMUL", "'a'", "float32"});
  refused({1, 1, 1, 1, 2, 3}, {3, 2}, kKilnFloat32, false, {"BATCH_MATMUL", "'a'", "rank"});
}

// BATCH_MATMUL int8: per-tensor quantized operands with zero points, a broadcast batch, and the refusals of a
// mixed-type rhs, a per-channel rhs and an unquantized output, each naming the tensor.
TEST(OpWrapperTest, BatchMatMulInt8RunsAndRefusesClearly) {
  {
    ModelWriter w;
    const int a = w.AddTensor(kKilnInt8, {2, 1, 2}, "a");
    const int b = w.AddConstTensor<int8_t>(kKilnInt8, {2, 1}, "b", {3, 1});
    const int y = w.AddTensor(kKilnInt8, {2, 1, 1}, "y");
    w.SetQuantization(a, {0.5f}, {1});
    w.SetQuantization(b, {0.25f}, {-1});
    w.SetQuantization(y, {0.125f}, {-3});
    w.AddOp(kKilnBuiltinBatchMatmul, {a, b}, {y}, KilnBatchMatMulParams{false, false, false});
    w.SetInputs({a});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int8_t in[] = {3, 5, -1, 120};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 1, 1}));
    // multiplier 0.5 * 0.25 / 0.125 = 1: (3-1)*(3+1) + (5-1)*(1+1) = 16 -> 13; (-2)*4 + 119*2 = 230 -> 227 -> 127.
    EXPECT_EQ(r.OutputAs<int8_t>(), (std::vector<int8_t>{13, 127}));
  }
  // Empty operands: a summed dimension of 0 gives the output zero point everywhere; no rows gives an empty output.
  for (int rows : {2, 0}) {
    ModelWriter w;
    const int a = w.AddTensor(kKilnInt8, {rows, rows == 0 ? 4 : 0}, "a");
    const int b = w.AddTensor(kKilnInt8, {rows == 0 ? 4 : 0, 3}, "b");
    const int y = w.AddTensor(kKilnInt8, {rows, 3}, "y");
    w.SetQuantization(a, {0.5f}, {4});
    w.SetQuantization(b, {0.5f}, {-4});
    w.SetQuantization(y, {0.5f}, {-9});
    w.AddOp(kKilnBuiltinBatchMatmul, {a, b}, {y}, KilnBatchMatMulParams{false, false, false});
    w.SetInputs({a, b});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{rows, 3}));
    EXPECT_EQ(r.OutputAs<int8_t>(), std::vector<int8_t>(static_cast<size_t>(rows * 3), int8_t{-9}));
  }
  const auto refused = [](KilnType rhs_type, bool per_channel, bool quantized_output,
                          const std::vector<std::string>& words) {
    ModelWriter w;
    const int a = w.AddTensor(kKilnInt8, {2, 3}, "a");
    const int b = w.AddTensor(rhs_type, {3, 2}, "b");
    const int y = w.AddTensor(kKilnInt8, {2, 2}, "y");
    w.SetQuantization(a, {0.5f}, {0});
    if (per_channel) {
      w.SetQuantization(b, {0.5f, 0.25f}, {0, 0}, 1);
    } else {
      w.SetQuantization(b, {0.5f}, {0});
    }
    if (quantized_output) w.SetQuantization(y, {0.5f}, {0});
    w.AddOp(kKilnBuiltinBatchMatmul, {a, b}, {y}, KilnBatchMatMulParams{false, false, false});
    w.SetInputs({a, b});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, words);
  };
  refused(kKilnUInt8, false, true, {"BATCH_MATMUL", "rhs", "'b'", "int8"});
  refused(kKilnInt8, true, true, {"BATCH_MATMUL", "rhs", "'b'", "2 scales"});
  refused(kKilnInt8, false, false, {"BATCH_MATMUL", "output", "'y'", "no quantization"});
  // int16: symmetric, the multiplier 0.5 * 0.25 / 0.125 = 1; rows (2, 4) and (-3, 5) times the columns (1, -1) and
  // (-32768, 32767), the second past int16 to show the clamp.
  {
    ModelWriter w;
    const int a = w.AddTensor(kKilnInt16, {2, 2}, "a");
    const int b = w.AddConstTensor<int16_t>(kKilnInt16, {2, 2}, "b", {1, -32768, -1, 32767});
    const int y = w.AddTensor(kKilnInt16, {2, 2}, "y");
    w.SetQuantization(a, {0.5f}, {0});
    w.SetQuantization(b, {0.25f}, {0});
    w.SetQuantization(y, {0.125f}, {0});
    w.AddOp(kKilnBuiltinBatchMatmul, {a, b}, {y}, KilnBatchMatMulParams{false, false, false});
    w.SetInputs({a});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int16_t in[] = {2, 4, -3, 5};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    // (2 - 4, 2 * -32768 + 4 * 32767 = 65532 -> 32767), (-3 - 5, 98304 + 163835 -> 32767).
    EXPECT_EQ(r.OutputAs<int16_t>(), (std::vector<int16_t>{-2, 32767, -8, 32767}));
  }
  {  // an int16 zero point is refused (LiteRT's int16 kernel needs symmetric tensors)
    ModelWriter w;
    const int a = w.AddTensor(kKilnInt16, {2, 2}, "a");
    const int b = w.AddTensor(kKilnInt16, {2, 2}, "b");
    const int y = w.AddTensor(kKilnInt16, {2, 2}, "y");
    w.SetQuantization(a, {0.5f}, {0});
    w.SetQuantization(b, {0.5f}, {3});
    w.SetQuantization(y, {0.5f}, {0});
    w.AddOp(kKilnBuiltinBatchMatmul, {a, b}, {y}, KilnBatchMatMulParams{false, false, false});
    w.SetInputs({a, b});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"BATCH_MATMUL", "rhs", "'b'", "zero point"});
  }
}

// RELU_0_TO_1: float clamps to [0, 1]; int8 requantizes and clamps at 1 quantized as the output; int16 refused.
TEST(OpWrapperTest, Relu0To1FloatInt8AndInt16Refused) {
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {5}, "x");
    const int y = w.AddTensor(kKilnFloat32, {5}, "y");
    w.AddOp(kKilnBuiltinRelu0To1, {x}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {-2, 0, 0.25f, 1, 7};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.Output(), (std::vector<float>{0, 0, 0.25f, 1, 1}));
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt8, {4}, "x");
    const int y = w.AddTensor(kKilnInt8, {4}, "y");
    w.SetQuantization(x, {0.02f}, {0});
    w.SetQuantization(y, {0.01f}, {-100});
    w.AddOp(kKilnBuiltinRelu0To1, {x}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int8_t in[] = {-10, 0, 25, 100};  // -0.2, 0, 0.5, 2.0
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(Int8Output(r), (std::vector<int>{-100, -100, -50, 0}));  // 0, 0, 0.5, 1 at scale 0.01, zp -100
  }
  ModelWriter w;
  const int x = w.AddTensor(kKilnInt16, {4}, "x");
  const int y = w.AddTensor(kKilnInt16, {4}, "y");
  w.SetQuantization(x, {0.01f}, {0});
  w.SetQuantization(y, {0.01f}, {0});
  w.AddOp(kKilnBuiltinRelu0To1, {x}, {y});
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ExpectErrorMentions(r, {"RELU_0_TO_1", "int16 input 'x'"});
}

TEST(OpWrapperTest, TransposeAndPadWithConstantsAndRuntimePaddings) {
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int perm = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "perm", {1, 0});
    const int t = w.AddTensor(kKilnFloat32, {3, 2}, "t");
    const int pads = w.AddConstTensor<int32_t>(kKilnInt32, {2, 2}, "pads", {0, 1, 1, 0});
    const int y = w.AddTensor(kKilnFloat32, {4, 3}, "y");
    w.AddOp(kKilnBuiltinTranspose, {x, perm}, {t});
    w.AddOp(kKilnBuiltinPad, {t, pads}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {1, 2, 3, 4, 5, 6};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{4, 3}));
    EXPECT_EQ(r.Output(), (std::vector<float>{0, 1, 4, 0, 2, 5, 0, 3, 6, 0, 0, 0}));
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int pads = w.AddTensor(kKilnInt32, {2, 2}, "runtime_pads");
    const int y = w.AddTensor(kKilnFloat32, {2, 3}, "y");
    w.AddOp(kKilnBuiltinPad, {x, pads}, {y});
    w.SetInputs({x, pads});
    w.SetOutputs({y});
    Runner r(w);
    // Run-time paddings: a dynamic output, sized at Invoke (dynamic_wrapper_test.cc tests the values).
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  }
}

TEST(OpWrapperTest, PadV2FillValues) {
  // float32: a constant fill, a fill given at run time, and none (0).
  for (int mode : {0, 1, 2}) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {1, 2}, "x");
    const int pads = w.AddConstTensor<int32_t>(kKilnInt32, {2, 2}, "pads", {1, 0, 0, 1});
    std::vector<int> inputs = {x, pads};
    if (mode == 0) inputs.push_back(w.AddConstTensor<float>(kKilnFloat32, {}, "value", {-1.5f}));
    if (mode == 1) inputs.push_back(w.AddTensor(kKilnFloat32, {1}, "value"));
    const int y = w.AddTensor(kKilnFloat32, {2, 3}, "y");
    w.AddOp(kKilnBuiltinPadv2, inputs, {y});
    w.SetInputs(mode == 1 ? std::vector<int>{x, inputs[2]} : std::vector<int>{x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {1, 2};
    r.SetInput(0, in, sizeof(in));
    const float fill = mode == 2 ? 0.0f : mode == 0 ? -1.5f : 7.0f;
    if (mode == 1) r.SetInput(1, &fill, sizeof(fill));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.Output(), (std::vector<float>{fill, fill, fill, 1, 2, fill}));
  }
  // int8: the fill's stored value, quantized as the output.
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt8, {2}, "x");
    const int pads = w.AddConstTensor<int32_t>(kKilnInt32, {1, 2}, "pads", {1, 1});
    const int value = w.AddConstTensor<int8_t>(kKilnInt8, {}, "value", {-100});
    const int y = w.AddTensor(kKilnInt8, {4}, "y");
    for (int t : {x, value, y}) w.SetQuantization(t, {0.5f}, {3});
    w.AddOp(kKilnBuiltinPadv2, {x, pads, value}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int8_t in[] = {5, -6};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int8_t>(), (std::vector<int8_t>{-100, 5, -6, -100}));
  }
  // Errors: the fill quantized differently, of another type, or of more than one element.
  for (int bad : {0, 1, 2}) {
    ModelWriter w;
    const KilnType type = bad == 0 ? kKilnUInt8 : kKilnFloat32;
    const int x = w.AddTensor(type, {2}, "x");
    const int pads = w.AddConstTensor<int32_t>(kKilnInt32, {1, 2}, "pads", {1, 1});
    int value;
    if (bad == 0) {
      value = w.AddConstTensor<uint8_t>(kKilnUInt8, {}, "value", {9});
      w.SetQuantization(value, {0.25f}, {128});
    } else if (bad == 1) {
      value = w.AddConstTensor<int32_t>(kKilnInt32, {}, "value", {9});
    } else {
      value = w.AddConstTensor<float>(kKilnFloat32, {2}, "value", {1, 2});
    }
    const int y = w.AddTensor(type, {4}, "y");
    if (bad == 0) {
      for (int t : {x, y}) w.SetQuantization(t, {0.5f}, {128});
    }
    w.AddOp(kKilnBuiltinPadv2, {x, pads, value}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    if (bad == 0) ExpectErrorMentions(r, {"PADV2", "constant_values 'value'", "must have the quantization of output"});
    if (bad == 1) ExpectErrorMentions(r, {"PADV2", "constant_values", "'value'"});
    if (bad == 2) ExpectErrorMentions(r, {"PADV2", "constant_values 'value' has 2 elements; expected 1"});
  }
}

TEST(OpWrapperTest, DequantizePerChannelInt8) {
  ModelWriter w;
  const int q = w.AddConstTensor<int8_t>(kKilnInt8, {2, 2}, "q", {2, -4, 6, 8});
  w.SetQuantization(q, {0.5f, 2.0f}, {0, 1}, 1);
  const int y = w.AddTensor(kKilnFloat32, {2, 2}, "y");
  w.AddOp(kKilnBuiltinDequantize, {q}, {y});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.Output(), (std::vector<float>{1, -10, 3, 14}));
}

TEST(OpWrapperTest, ConcatenationNegativeAxisAndSoftmax) {
  ModelWriter w;
  const int a = w.AddTensor(kKilnFloat32, {1, 2}, "a");
  const int b = w.AddConstTensor<float>(kKilnFloat32, {1, 1}, "b", {0});
  const int c = w.AddTensor(kKilnFloat32, {1, 3}, "c");
  const int y = w.AddTensor(kKilnFloat32, {1, 3}, "y");
  w.AddOp(kKilnBuiltinConcatenation, {a, b}, {c}, KilnConcatenationParams{-1, kKilnActNone});
  w.AddOp(kKilnBuiltinSoftmax, {c}, {y}, KilnSoftmaxParams{1.0f});
  w.SetInputs({a});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const float in[] = {std::log(2.0f), std::log(5.0f)};
  r.SetInput(0, in, sizeof(in));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  const std::vector<float> out = r.Output();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_NEAR(out[0], 0.25, 1e-6);
  EXPECT_NEAR(out[1], 0.625, 1e-6);
  EXPECT_NEAR(out[2], 0.125, 1e-6);
}

// RESHAPE and SQUEEZE copy bytes: int8, uint8 and int16 data pass through unchanged.
TEST(OpWrapperTest, ReshapeAndSqueezeCopyQuantizedData) {
  for (KilnType type : {kKilnInt8, kKilnUInt8, kKilnInt16}) {
    ModelWriter w;
    const int x = w.AddTensor(type, {1, 2, 3}, "x");
    const int shape = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "shape", {3, 2});
    const int r = w.AddTensor(type, {3, 2}, "r");
    const int s = w.AddTensor(type, {2, 3}, "s");
    for (int t : {x, r, s}) w.SetQuantization(t, {0.5f}, {type == kKilnInt8 ? -3 : 0});
    w.AddOp(kKilnBuiltinReshape, {x, shape}, {r});
    w.AddOp(kKilnBuiltinSqueeze, {x}, {s}, KilnSqueezeParams{});
    w.SetInputs({x});
    w.SetOutputs({r, s});
    Runner runner(w);
    ASSERT_EQ(runner.status(), kKilnOk) << runner.errors();
    const size_t bytes = type == kKilnInt16 ? 12 : 6;
    std::vector<uint8_t> in(bytes);
    for (size_t i = 0; i < bytes; ++i) in[i] = static_cast<uint8_t>(0xF0 + i);
    runner.SetInput(0, in.data(), in.size());
    ASSERT_EQ(runner.Invoke(), kKilnOk) << runner.errors();
    EXPECT_EQ(runner.OutputDims(0), (std::vector<int>{3, 2}));
    EXPECT_EQ(runner.OutputDims(1), (std::vector<int>{2, 3}));
    for (int o = 0; o < 2; ++o) {
      const KilnTensor* t = KilnInterpreterGetOutputTensor(runner.interpreter(), o);
      ASSERT_EQ(KilnTensorByteSize(t), bytes);
      const uint8_t* data = static_cast<const uint8_t*>(KilnTensorData(t));
      EXPECT_EQ(std::vector<uint8_t>(data, data + bytes), in) << KilnTypeGetName(type);
    }
  }
}

TEST(OpWrapperTest, SqueezeRejectsNonUnitDimension) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {1, 3}, "x");
  const int y = w.AddTensor(kKilnFloat32, {3}, "y");
  KilnSqueezeParams params = {};
  params.num_squeeze_dims = 1;
  params.squeeze_dims[0] = 1;
  w.AddOp(kKilnBuiltinSqueeze, {x}, {y}, params);
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ExpectErrorMentions(r, {"SQUEEZE", "size 3"});
}

// PAD and TRANSPOSE on uint8: PAD fills with the zero point; the output must be quantized as the input.
TEST(OpWrapperTest, Uint8PadAndTransposeMoveStoredValues) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnUInt8, {2, 3}, "x");
  const int paddings = w.AddConstTensor<int32_t>(kKilnInt32, {2, 2}, "paddings", {1, 0, 0, 1});
  const int perm = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "perm", {1, 0});
  const int p = w.AddTensor(kKilnUInt8, {3, 4}, "p");
  const int t = w.AddTensor(kKilnUInt8, {3, 2}, "t");
  for (int id : {x, p, t}) w.SetQuantization(id, {0.5f}, {200});
  w.AddOp(kKilnBuiltinPad, {x, paddings}, {p});
  w.AddOp(kKilnBuiltinTranspose, {x, perm}, {t});
  w.SetInputs({x});
  w.SetOutputs({p, t});
  Runner runner(w);
  ASSERT_EQ(runner.status(), kKilnOk) << runner.errors();
  const std::vector<uint8_t> in = {0, 1, 2, 253, 254, 255};
  runner.SetInput(0, in.data(), in.size());
  ASSERT_EQ(runner.Invoke(), kKilnOk) << runner.errors();
  const auto output = [&](int o) {
    const KilnTensor* tensor = KilnInterpreterGetOutputTensor(runner.interpreter(), o);
    const uint8_t* data = static_cast<const uint8_t*>(KilnTensorData(tensor));
    return std::vector<uint8_t>(data, data + KilnTensorByteSize(tensor));
  };
  EXPECT_EQ(output(0), (std::vector<uint8_t>{200, 200, 200, 200, 0, 1, 2, 200, 253, 254, 255, 200}));
  EXPECT_EQ(output(1), (std::vector<uint8_t>{0, 253, 1, 254, 2, 255}));

  ModelWriter bad;
  const int bx = bad.AddTensor(kKilnUInt8, {2, 3}, "x");
  const int bp = bad.AddConstTensor<int32_t>(kKilnInt32, {2, 2}, "paddings", {1, 0, 0, 1});
  const int by = bad.AddTensor(kKilnUInt8, {3, 4}, "padded");
  bad.SetQuantization(bx, {0.5f}, {200});
  bad.SetQuantization(by, {0.5f}, {128});
  bad.AddOp(kKilnBuiltinPad, {bx, bp}, {by});
  bad.SetInputs({bx});
  bad.SetOutputs({by});
  Runner bad_runner(bad);
  ExpectErrorMentions(bad_runner, {"PAD", "uint8", "padded", "zero point 128"});
}

// A type an op has no kernel for fails Prepare naming the op, the tensor and the type: never a silently wrong
// result. (uint8 and int16 take only the ops docs/ops.md lists.)
TEST(OpWrapperTest, UnsupportedQuantizedTypesFailNamingOpTensorAndType) {
  const auto unary = [](KilnBuiltinOperator code, KilnType type, const std::vector<std::string>& words) {
    ModelWriter w;
    const int x = w.AddTensor(type, {4}, "q_in");
    const int y = w.AddTensor(type, {4}, "q_out");
    w.SetQuantization(x, {1.0f / 256}, {0});
    w.SetQuantization(y, {1.0f / 256}, {0});
    w.AddOp(code, {x}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, words);
  };
  // int16 LOGISTIC and TANH run, with the output quantized 2^-15 (LiteRT's requirement).
  unary(kKilnBuiltinLogistic, kKilnInt16, {"LOGISTIC", "q_out", "int16", "2^-15"});
  unary(kKilnBuiltinTanh, kKilnInt16, {"TANH", "q_out", "int16", "2^-15"});
  unary(kKilnBuiltinHardSwish, kKilnInt16, {"HARD_SWISH", "q_in", "int16"});
  unary(kKilnBuiltinElu, kKilnInt16, {"ELU", "q_in", "int16"});
  {
    // int16 LEAKY_RELU runs, on symmetric tensors only (LiteRT's requirement).
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt16, {4}, "l16_in");
    const int y = w.AddTensor(kKilnInt16, {4}, "l16_out");
    w.SetQuantization(x, {0.001f}, {0});
    w.SetQuantization(y, {0.001f}, {7});
    w.AddOp(kKilnBuiltinLeakyRelu, {x}, {y}, KilnLeakyReluParams{0.2f});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"LEAKY_RELU", "l16_out", "zero point 7"});
  }
  unary(kKilnBuiltinElu, kKilnUInt8, {"ELU", "q_in", "uint8"});
  unary(kKilnBuiltinExp, kKilnUInt8, {"EXP", "q_in", "uint8"});
  // uint8 LOG_SOFTMAX runs, with the output quantization LiteRT requires (16/256, 255).
  unary(kKilnBuiltinLogSoftmax, kKilnUInt8, {"LOG_SOFTMAX", "q_out", "uint8", "255"});
  {
    // int16 tensors must be symmetric.
    ModelWriter w;
    const int a = w.AddTensor(kKilnInt16, {4}, "a16");
    const int b = w.AddTensor(kKilnInt16, {4}, "b16");
    const int y = w.AddTensor(kKilnInt16, {4}, "y16");
    w.SetQuantization(a, {0.001f}, {5});
    w.SetQuantization(b, {0.001f}, {0});
    w.SetQuantization(y, {0.002f}, {0});
    w.AddOp(kKilnBuiltinAdd, {a, b}, {y}, KilnAddParams{kKilnActNone, false});
    w.SetInputs({a, b});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"ADD", "a16", "zero point 5"});
  }
}

}  // namespace
}  // namespace kiln::ops
