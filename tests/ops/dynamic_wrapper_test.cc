// WHERE and UNIQUE through the interpreter, on single-op ModelWriter models: dynamic outputs sized at Invoke
// (and a constant WHERE sized at Prepare), each type, empty tensors, and the errors with their messages.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api.h"
#include "runtime/model/model_writer.h"
#include "tests/ops/wrapper_runner.h"

namespace kiln::ops {
namespace {

using wrapper_testing::ExpectErrorMentions;
using wrapper_testing::Runner;

template <typename T>
void ExpectWhere(KilnType type, const std::vector<int>& dims, const std::vector<T>& values,
                 const std::vector<int64_t>& want, bool constant) {
  ModelWriter w;
  const int c = constant ? w.AddConstTensor(type, dims, "condition", values) : w.AddTensor(type, dims, "condition");
  const int y = w.AddTensor(kKilnInt64, {1, static_cast<int>(dims.size())}, "y");
  w.AddOp(kKilnBuiltinWhere, {c}, {y});
  w.SetInputs(constant ? std::vector<int>{} : std::vector<int>{c});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  if (!constant && !values.empty()) r.SetInput(0, values.data(), values.size() * sizeof(T));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  const int count = static_cast<int>(want.size() / dims.size());
  EXPECT_EQ(r.OutputDims(), (std::vector<int>{count, static_cast<int>(dims.size())}));
  EXPECT_EQ(r.OutputAs<int64_t>(), want);
}

TEST(WhereWrapperTest, TypesShapesConstantAndRunTime) {
  for (bool constant : {false, true}) {
    ExpectWhere<uint8_t>(kKilnBool, {2, 3}, {0, 1, 0, 9, 0, 255}, {0, 1, 1, 0, 1, 2}, constant);
    ExpectWhere<float>(kKilnFloat32, {4}, {0.0f, -0.0f, 2.5f, -1.0f}, {2, 3}, constant);
    ExpectWhere<int32_t>(kKilnInt32, {1, 2, 2}, {0, 5, 0, -3}, {0, 0, 1, 0, 1, 1}, constant);
    ExpectWhere<int64_t>(kKilnInt64, {3}, {0, 0, 0}, {}, constant);
    ExpectWhere<int8_t>(kKilnInt8, {1, 1, 1, 1, 1, 2}, {-1, 0}, {0, 0, 0, 0, 0, 0}, constant);
    ExpectWhere<uint8_t>(kKilnUInt8, {2, 1}, {3, 4}, {0, 0, 1, 0}, constant);
    ExpectWhere<uint32_t>(kKilnUInt32, {2}, {0, 7}, {1}, constant);
    if (!constant) ExpectWhere<uint8_t>(kKilnBool, {2, 0, 3}, {}, {}, constant);  // empty (a constant needs data)
  }
}

TEST(WhereWrapperTest, PrepareErrors) {
  {
    ModelWriter w;  // rank 0 (LiteRT fails it too)
    const int c = w.AddTensor(kKilnBool, {}, "cond0");
    const int y = w.AddTensor(kKilnInt64, {1, 0}, "y");
    w.AddOp(kKilnBuiltinWhere, {c}, {y});
    w.SetInputs({c});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"WHERE", "'cond0'", "rank 0"});
  }
  {
    ModelWriter w;  // int32 output
    const int c = w.AddTensor(kKilnBool, {3}, "c");
    const int y = w.AddTensor(kKilnInt32, {1, 1}, "coords");
    w.AddOp(kKilnBuiltinWhere, {c}, {y});
    w.SetInputs({c});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"WHERE", "'coords'", "int64"});
  }
  {
    ModelWriter w;  // int16 condition
    const int c = w.AddTensor(kKilnInt16, {3}, "c16");
    const int y = w.AddTensor(kKilnInt64, {1, 1}, "y");
    w.AddOp(kKilnBuiltinWhere, {c}, {y});
    w.SetInputs({c});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"WHERE", "'c16'", "int16"});
  }
}

template <typename T, typename I>
void ExpectUnique(KilnType type, KilnType index_type, const std::vector<T>& x, const std::vector<T>& values,
                  const std::vector<I>& idx) {
  ModelWriter w;
  const int in = w.AddTensor(type, {static_cast<int>(x.size())}, "x");
  const int y = w.AddTensor(type, {1}, "y");
  const int i = w.AddTensor(index_type, {static_cast<int>(x.size())}, "idx");
  w.AddOp(kKilnBuiltinUnique, {in}, {y, i});
  w.SetInputs({in});
  w.SetOutputs({y, i});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  if (!x.empty()) r.SetInput(0, x.data(), x.size() * sizeof(T));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputDims(0), std::vector<int>{static_cast<int>(values.size())});
  EXPECT_EQ(r.OutputAs<T>(0), values);
  EXPECT_EQ(r.OutputDims(1), std::vector<int>{static_cast<int>(x.size())});
  EXPECT_EQ(r.OutputAs<I>(1), idx);
}

TEST(UniqueWrapperTest, TypesAndIndexTypes) {
  ExpectUnique<float, int32_t>(kKilnFloat32, kKilnInt32, {1.5f, -2.0f, 1.5f, 0.0f, -0.0f}, {1.5f, -2.0f, 0.0f},
                               {0, 1, 0, 2, 2});
  ExpectUnique<int8_t, int64_t>(kKilnInt8, kKilnInt64, {-128, 127, -128, 127, 0}, {-128, 127, 0}, {0, 1, 0, 1, 2});
  ExpectUnique<uint8_t, int32_t>(kKilnUInt8, kKilnInt32, {7, 7, 7}, {7}, {0, 0, 0});
  ExpectUnique<int16_t, int32_t>(kKilnInt16, kKilnInt32, {3, 2, 1}, {3, 2, 1}, {0, 1, 2});
  ExpectUnique<int32_t, int64_t>(kKilnInt32, kKilnInt64, {5, -5, 5, -5, 6}, {5, -5, 6}, {0, 1, 0, 1, 2});
  ExpectUnique<int64_t, int32_t>(kKilnInt64, kKilnInt32, {int64_t{1} << 40, 1, int64_t{1} << 40}, {int64_t{1} << 40, 1},
                                 {0, 1, 0});
  ExpectUnique<int32_t, int32_t>(kKilnInt32, kKilnInt32, {}, {}, {});  // empty
}

TEST(UniqueWrapperTest, PrepareErrors) {
  auto build = [](ModelWriter& w, KilnType type, const std::vector<int>& dims, KilnType value_type,
                  KilnType index_type) {
    const int in = w.AddTensor(type, dims, "x");
    const int y = w.AddTensor(value_type, {1}, "values");
    const int i = w.AddTensor(index_type, {1}, "idx");
    w.AddOp(kKilnBuiltinUnique, {in}, {y, i});
    w.SetInputs({in});
    w.SetOutputs({y, i});
  };
  {
    ModelWriter w;
    build(w, kKilnFloat32, {2, 2}, kKilnFloat32, kKilnInt32);
    Runner r(w);
    ExpectErrorMentions(r, {"UNIQUE", "'x'", "rank"});
  }
  {
    ModelWriter w;
    build(w, kKilnFloat32, {4}, kKilnFloat32, kKilnInt16);
    Runner r(w);
    ExpectErrorMentions(r, {"UNIQUE", "'idx'", "int32 or int64"});
  }
  {
    ModelWriter w;
    build(w, kKilnBool, {4}, kKilnBool, kKilnInt32);
    Runner r(w);
    ExpectErrorMentions(r, {"UNIQUE", "'x'", "bool"});
  }
  {
    ModelWriter w;
    build(w, kKilnInt32, {4}, kKilnFloat32, kKilnInt32);
    Runner r(w);
    ExpectErrorMentions(r, {"UNIQUE", "'values'", "float32"});
  }
}

// TILE multiples and BROADCAST_TO's shape computed at run time: the output is dynamic, sized at Invoke from the
// values; bad values fail Invoke naming the op and the input.
TEST(RunTimeShapeWrapperTest, TileAndBroadcastTo) {
  for (bool tile : {true, false}) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt32, {2, 1}, "x");
    const int v = w.AddTensor(kKilnInt64, {2}, tile ? "multiples" : "shape");
    const int y = w.AddTensor(kKilnInt32, {1, 1}, "y");
    const int op = w.AddOp(tile ? kKilnBuiltinTile : kKilnBuiltinBroadcastTo, {x, v}, {y});
    if (!tile) w.SetOpVersion(op, 2);
    w.SetInputs({x, v});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int32_t in[] = {4, 7};
    r.SetInput(0, in, sizeof(in));
    const int64_t first[] = {tile ? 1 : 2, 3};
    r.SetInput(1, first, sizeof(first));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 3}));
    EXPECT_EQ(r.OutputAs<int32_t>(), (std::vector<int32_t>{4, 4, 4, 7, 7, 7}));
    const int64_t second[] = {tile ? 2 : 2, tile ? 0 : 0};  // empty
    r.SetInput(1, second, sizeof(second));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{tile ? 4 : 2, 0}));
    const int64_t bad[] = {-1, 2};
    r.SetInput(1, bad, sizeof(bad));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find(tile ? "TILE: input 'x'" : "BROADCAST_TO: input 'x'"), std::string::npos) << r.errors();
  }
}

// RESHAPE with a run-time shape vector and no new_shape option: a dynamic output, shaped at Invoke.
TEST(RunTimeShapeWrapperTest, Reshape) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
  const int shape = w.AddTensor(kKilnInt32, {2}, "shape");
  const int y = w.AddTensor(kKilnFloat32, {1, 1}, "y");
  w.AddOp(kKilnBuiltinReshape, {x, shape}, {y});
  w.SetInputs({x, shape});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const float in[] = {1, 2, 3, 4, 5, 6};
  r.SetInput(0, in, sizeof(in));
  for (const auto& [s, want] : std::vector<std::pair<std::vector<int32_t>, std::vector<int>>>{
           {{3, 2}, {3, 2}}, {{-1, 1}, {6, 1}}, {{1, -1}, {1, 6}}}) {
    r.SetInput(1, s.data(), s.size() * 4);
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), want);
    EXPECT_EQ(r.Output(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  }
  const int32_t bad[] = {4, 2};
  r.SetInput(1, bad, sizeof(bad));
  EXPECT_NE(r.Invoke(), kKilnOk);
  EXPECT_NE(r.errors().find("RESHAPE: input 'x' with the run-time shape 'shape'"), std::string::npos) << r.errors();
}

// PAD and PADV2 with paddings computed at run time: a dynamic output, sized at Invoke; a negative padding fails there.
TEST(RunTimeShapeWrapperTest, PadAndPadV2) {
  for (bool v2 : {false, true}) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 2}, "x");
    const int pads = w.AddTensor(kKilnInt32, {2, 2}, "paddings");
    const int y = w.AddTensor(kKilnFloat32, {1, 1}, "y");
    std::vector<int> inputs = {x, pads};
    if (v2) inputs.push_back(w.AddConstTensor(kKilnFloat32, {}, "fill", std::vector<float>{9}));
    w.AddOp(v2 ? kKilnBuiltinPadv2 : kKilnBuiltinPad, inputs, {y});
    w.SetInputs({x, pads});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {1, 2, 3, 4};
    r.SetInput(0, in, sizeof(in));
    const int32_t p1[] = {1, 0, 0, 1};
    r.SetInput(1, p1, sizeof(p1));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{3, 3}));
    const float f = v2 ? 9.0f : 0.0f;
    EXPECT_EQ(r.Output(), (std::vector<float>{f, f, f, 1, 2, f, 3, 4, f}));
    const int32_t p2[] = {0, 0, 0, 0};
    r.SetInput(1, p2, sizeof(p2));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.Output(), (std::vector<float>{1, 2, 3, 4}));
    const int32_t bad[] = {0, -1, 0, 0};
    r.SetInput(1, bad, sizeof(bad));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("paddings 'paddings' has padding (0, -1) for dimension 0"), std::string::npos)
        << r.errors();
  }
}

// MIRROR_PAD with paddings computed at run time: sized at Invoke; paddings too large for the mode fail there.
TEST(RunTimeShapeWrapperTest, MirrorPad) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnInt32, {3}, "x");
  const int pads = w.AddTensor(kKilnInt64, {1, 2}, "pads");
  const int y = w.AddTensor(kKilnInt32, {1}, "y");
  w.AddOp(kKilnBuiltinMirrorPad, {x, pads}, {y}, KilnMirrorPadParams{kKilnMirrorPadReflect});
  w.SetInputs({x, pads});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const int32_t in[] = {1, 2, 3};
  r.SetInput(0, in, sizeof(in));
  const int64_t p1[] = {2, 1};
  r.SetInput(1, p1, sizeof(p1));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputAs<int32_t>(), (std::vector<int32_t>{3, 2, 1, 2, 3, 2}));
  const int64_t bad[] = {3, 0};
  r.SetInput(1, bad, sizeof(bad));
  EXPECT_NE(r.Invoke(), kKilnOk);
  EXPECT_NE(r.errors().find("MIRROR_PAD: input 'x' [3], paddings 'pads'"), std::string::npos) << r.errors();
}

// NON_MAX_SUPPRESSION_V4/V5: boxes and scores at run time; max_output_size constant (sized in Prepare) or computed
// (a dynamic output); unused entries zero; valid_outputs a scalar; errors named.
void BuildNms(ModelWriter& w, bool v5, bool runtime_max, int32_t max_size, float sigma, int n = 3) {
  const int b = w.AddTensor(kKilnFloat32, {n, 4}, "boxes");
  const int s = w.AddTensor(kKilnFloat32, {n}, "scores");
  const int k = runtime_max ? w.AddTensor(kKilnInt32, {}, "max_output_size")
                            : w.AddConstTensor(kKilnInt32, {}, "max_output_size", std::vector<int32_t>{max_size});
  const int iou = w.AddConstTensor(kKilnFloat32, {}, "iou", std::vector<float>{0.3f});
  const int t = w.AddConstTensor(kKilnFloat32, {}, "threshold", std::vector<float>{0.0f});
  std::vector<int> inputs = {b, s, k, iou, t};
  if (v5) inputs.push_back(w.AddConstTensor(kKilnFloat32, {}, "sigma", std::vector<float>{sigma}));
  const int sel = w.AddTensor(kKilnInt32, {1}, "selected");
  std::vector<int> outputs = {sel};
  if (v5) outputs.push_back(w.AddTensor(kKilnFloat32, {1}, "selected_scores"));
  outputs.push_back(w.AddTensor(kKilnInt32, {}, "valid"));
  w.AddOp(v5 ? kKilnBuiltinNonMaxSuppressionV5 : kKilnBuiltinNonMaxSuppressionV4, inputs, outputs);
  w.SetInputs(runtime_max ? std::vector<int>{b, s, k} : std::vector<int>{b, s});
  w.SetOutputs(outputs);
}

TEST(NmsWrapperTest, ConstantAndRunTimeMaxOutputSize) {
  const float boxes[] = {0, 0, 1, 2, 0, 1, 1, 3, 5, 5, 6, 6};
  const float scores[] = {0.9f, 0.8f, 0.7f};
  for (bool v5 : {false, true}) {
    for (bool runtime_max : {false, true}) {
      ModelWriter w;
      BuildNms(w, v5, runtime_max, 4, 0.0f);
      Runner r(w);
      ASSERT_EQ(r.status(), kKilnOk) << r.errors();
      r.SetInput(0, boxes, sizeof(boxes));
      r.SetInput(1, scores, sizeof(scores));
      const int32_t max_size = 4;
      if (runtime_max) r.SetInput(2, &max_size, sizeof(max_size));
      ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
      EXPECT_EQ(r.OutputDims(0), std::vector<int>{4});
      EXPECT_EQ(r.OutputAs<int32_t>(0), (std::vector<int32_t>{0, 2, 0, 0}));  // box 1 overlaps box 0 by 1/3
      EXPECT_EQ(r.OutputDims(v5 ? 2 : 1), std::vector<int>{});
      EXPECT_EQ(r.OutputAs<int32_t>(v5 ? 2 : 1), std::vector<int32_t>{2});
      if (v5) { EXPECT_EQ(r.Output(1), (std::vector<float>{0.9f, 0.7f, 0, 0})); }
      if (runtime_max) {
        const int32_t one = 1;
        r.SetInput(2, &one, sizeof(one));
        ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
        EXPECT_EQ(r.OutputAs<int32_t>(0), std::vector<int32_t>{0});
        const int32_t negative = -1;
        r.SetInput(2, &negative, sizeof(negative));
        EXPECT_NE(r.Invoke(), kKilnOk);
        EXPECT_NE(r.errors().find("max_output_size 'max_output_size' is -1"), std::string::npos) << r.errors();
      }
    }
  }
}

TEST(NmsWrapperTest, Errors) {
  {
    ModelWriter w;
    BuildNms(w, false, false, -2, 0.0f);
    Runner r(w);
    ExpectErrorMentions(r, {"NON_MAX_SUPPRESSION_V4", "max_output_size 'max_output_size' is -2"});
  }
  {
    ModelWriter w;
    BuildNms(w, true, false, 2, -0.5f);
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float boxes[12] = {};
    const float scores[3] = {1, 1, 1};
    r.SetInput(0, boxes, sizeof(boxes));
    r.SetInput(1, scores, sizeof(scores));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("NON_MAX_SUPPRESSION_V5: soft_nms_sigma 'sigma' is -0.5"), std::string::npos)
        << r.errors();
  }
  {
    ModelWriter w;  // boxes [3, 3]
    const int b = w.AddTensor(kKilnFloat32, {3, 3}, "bad_boxes");
    const int s = w.AddTensor(kKilnFloat32, {3}, "scores");
    const int k = w.AddConstTensor(kKilnInt32, {}, "k", std::vector<int32_t>{2});
    const int f = w.AddConstTensor(kKilnFloat32, {}, "f", std::vector<float>{0.5f});
    const int sel = w.AddTensor(kKilnInt32, {2}, "selected");
    const int valid = w.AddTensor(kKilnInt32, {}, "valid");
    w.AddOp(kKilnBuiltinNonMaxSuppressionV4, {b, s, k, f, f}, {sel, valid});
    w.SetInputs({b, s});
    w.SetOutputs({sel, valid});
    Runner r(w);
    ExpectErrorMentions(r, {"NON_MAX_SUPPRESSION_V4", "boxes 'bad_boxes' has shape [3, 3]"});
  }
  {
    ModelWriter w;  // 4 scores for 3 boxes
    const int b = w.AddTensor(kKilnFloat32, {3, 4}, "boxes");
    const int s = w.AddTensor(kKilnFloat32, {4}, "scores4");
    const int k = w.AddConstTensor(kKilnInt32, {}, "k", std::vector<int32_t>{2});
    const int f = w.AddConstTensor(kKilnFloat32, {}, "f", std::vector<float>{0.5f});
    const int sel = w.AddTensor(kKilnInt32, {2}, "selected");
    const int valid = w.AddTensor(kKilnInt32, {}, "valid");
    w.AddOp(kKilnBuiltinNonMaxSuppressionV4, {b, s, k, f, f}, {sel, valid});
    w.SetInputs({b, s});
    w.SetOutputs({sel, valid});
    Runner r(w);
    ExpectErrorMentions(r, {"NON_MAX_SUPPRESSION_V4", "scores 'scores4' has 4 values for 3 boxes"});
  }
}

// BROADCAST_ARGS at run time, feeding BROADCAST_TO (whose output is then dynamic); shapes that do not broadcast
// fail Invoke naming both tensors.
TEST(BroadcastArgsWrapperTest, FeedsBroadcastTo) {
  ModelWriter w;
  const int a = w.AddTensor(kKilnInt64, {2}, "s0");
  const int b = w.AddTensor(kKilnInt64, {3}, "s1");
  const int shape = w.AddTensor(kKilnInt64, {3}, "shape");
  const int x = w.AddTensor(kKilnInt32, {2, 1}, "x");
  const int y = w.AddTensor(kKilnInt32, {1, 1, 1}, "y");
  w.AddOp(kKilnBuiltinBroadcastArgs, {a, b}, {shape});
  const int to = w.AddOp(kKilnBuiltinBroadcastTo, {x, shape}, {y});
  w.SetOpVersion(to, 2);
  w.SetInputs({a, b, x});
  w.SetOutputs({shape, y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const int64_t s0[] = {2, 1}, s1[] = {3, 1, 4};
  const int32_t in[] = {5, 6};
  r.SetInput(0, s0, sizeof(s0));
  r.SetInput(1, s1, sizeof(s1));
  r.SetInput(2, in, sizeof(in));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputAs<int64_t>(0), (std::vector<int64_t>{3, 2, 4}));
  EXPECT_EQ(r.OutputDims(1), (std::vector<int>{3, 2, 4}));
  std::vector<int32_t> want;
  for (int i = 0; i < 3; ++i) {
    for (int v : {5, 6}) want.insert(want.end(), 4, v);
  }
  EXPECT_EQ(r.OutputAs<int32_t>(1), want);
  const int64_t bad[] = {3, 5, 4};
  r.SetInput(1, bad, sizeof(bad));
  EXPECT_NE(r.Invoke(), kKilnOk);
  EXPECT_NE(r.errors().find("BROADCAST_ARGS: shapes s0 's0' and s1 's1' do not broadcast"), std::string::npos)
      << r.errors();
}

TEST(BroadcastArgsWrapperTest, PrepareErrors) {
  ModelWriter w;
  const int a = w.AddTensor(kKilnInt32, {2}, "s0");
  const int b = w.AddTensor(kKilnInt64, {3}, "s1");
  const int y = w.AddTensor(kKilnInt32, {3}, "y");
  w.AddOp(kKilnBuiltinBroadcastArgs, {a, b}, {y});
  w.SetInputs({a, b});
  w.SetOutputs({y});
  Runner r(w);
  ExpectErrorMentions(r, {"BROADCAST_ARGS", "s1 's1' has type int64"});
}

}  // namespace
}  // namespace kiln::ops
