// DEPTH_TO_SPACE and SPACE_TO_DEPTH through the interpreter, on single-op ModelWriter models: options, element
// types, quantization and the errors with their messages.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/c_api.h"
#include "runtime/model/model_writer.h"
#include "tests/ops/wrapper_runner.h"

namespace kiln::ops {
namespace {

using wrapper_testing::ExpectErrorMentions;
using wrapper_testing::Runner;

// A one-op model from `in_shape` to `out_shape` of `type`; `params` the op's options.
template <typename Params>
ModelWriter SpaceModel(KilnBuiltinOperator code, KilnType type, const std::vector<int>& in_shape,
                       const std::vector<int>& out_shape, const Params& params, bool with_options = true) {
  ModelWriter w;
  const int x = w.AddTensor(type, in_shape, "x");
  const int y = w.AddTensor(type, out_shape, "y");
  if (with_options) {
    w.AddOp(code, {x}, {y}, params);
  } else {
    w.AddOp(code, {x}, {y});
  }
  w.SetInputs({x});
  w.SetOutputs({y});
  return w;
}

TEST(SpaceOpsTest, DepthToSpaceFloatDcrOrder) {
  ModelWriter w =
      SpaceModel(kKilnBuiltinDepthToSpace, kKilnFloat32, {1, 1, 2, 4}, {1, 2, 4, 1}, KilnDepthToSpaceParams{2});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const float in[] = {0, 1, 2, 3, 10, 11, 12, 13};
  r.SetInput(0, in, sizeof(in));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputDims(), (std::vector<int>{1, 2, 4, 1}));
  EXPECT_EQ(r.Output(), (std::vector<float>{0, 1, 10, 11, 2, 3, 12, 13}));
}

TEST(SpaceOpsTest, SpaceToDepthInt64AndInt8) {
  {
    ModelWriter w =
        SpaceModel(kKilnBuiltinSpaceToDepth, kKilnInt64, {1, 2, 4, 1}, {1, 1, 2, 4}, KilnSpaceToDepthParams{2});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int64_t big = int64_t{1} << 40;
    const int64_t in[] = {0, 1, 10, 11, 2, 3, 12, big};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{1, 1, 2, 4}));
    EXPECT_EQ(r.OutputAs<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 10, 11, 12, big}));
  }
  ModelWriter w;
  const int x = w.AddTensor(kKilnInt8, {1, 2, 2, 1}, "x");
  const int y = w.AddTensor(kKilnInt8, {1, 1, 1, 4}, "y");
  for (int t : {x, y}) w.SetQuantization(t, {0.5f}, {-3});
  w.AddOp(kKilnBuiltinSpaceToDepth, {x}, {y}, KilnSpaceToDepthParams{2});
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const int8_t in[] = {-128, 5, 0, 127};
  r.SetInput(0, in, sizeof(in));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputAs<int8_t>(), (std::vector<int8_t>{-128, 5, 0, 127}));
}

TEST(SpaceOpsTest, EmptyInputRuns) {
  ModelWriter w =
      SpaceModel(kKilnBuiltinDepthToSpace, kKilnUInt8, {0, 2, 2, 4}, {0, 4, 4, 1}, KilnDepthToSpaceParams{2});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputDims(), (std::vector<int>{0, 4, 4, 1}));
}

TEST(SpaceOpsTest, ShapeAndBlockErrors) {
  {
    ModelWriter w =
        SpaceModel(kKilnBuiltinDepthToSpace, kKilnFloat32, {1, 2, 2, 6}, {1, 4, 4, 1}, KilnDepthToSpaceParams{2});
    Runner r(w);
    ExpectErrorMentions(r, {"DEPTH_TO_SPACE", "input 'x'", "depth 6 is not a multiple of block_size squared (4)"});
  }
  {
    ModelWriter w =
        SpaceModel(kKilnBuiltinDepthToSpace, kKilnFloat32, {1, 2, 2, 4}, {1, 2, 2, 4}, KilnDepthToSpaceParams{0});
    Runner r(w);
    ExpectErrorMentions(r, {"DEPTH_TO_SPACE", "input 'x'", "block_size 0 must be at least 1"});
  }
  {
    ModelWriter w =
        SpaceModel(kKilnBuiltinSpaceToDepth, kKilnFloat32, {1, 3, 4, 1}, {1, 1, 2, 4}, KilnSpaceToDepthParams{2});
    Runner r(w);
    ExpectErrorMentions(r, {"SPACE_TO_DEPTH", "input 'x'", "height 3 and width 4 must be multiples of block_size 2"});
  }
  {
    ModelWriter w =
        SpaceModel(kKilnBuiltinSpaceToDepth, kKilnFloat32, {1, 4, 4, 1}, {1, 4, 4, 1}, KilnSpaceToDepthParams{-1});
    Runner r(w);
    ExpectErrorMentions(r, {"SPACE_TO_DEPTH", "block_size -1 must be at least 1"});
  }
  {
    ModelWriter w = SpaceModel(kKilnBuiltinSpaceToDepth, kKilnFloat32, {4, 4, 1}, {2, 2, 4}, KilnSpaceToDepthParams{2});
    Runner r(w);
    ExpectErrorMentions(r, {"SPACE_TO_DEPTH", "input 'x'"});
  }
  {
    ModelWriter w = SpaceModel(kKilnBuiltinDepthToSpace, kKilnFloat32, {1, 1, 1, 4}, {1, 2, 2, 1},
                               KilnDepthToSpaceParams{2}, /*with_options=*/false);
    Runner r(w);
    // No options table: block_size reads as 0, which LiteRT refuses too.
    ExpectErrorMentions(r, {"DEPTH_TO_SPACE", "block_size 0 must be at least 1"});
  }
}

TEST(SpaceOpsTest, TypeAndQuantizationErrors) {
  {
    // int16 and bool: LiteRT's kernels take neither.
    ModelWriter w =
        SpaceModel(kKilnBuiltinDepthToSpace, kKilnInt16, {1, 1, 1, 4}, {1, 2, 2, 1}, KilnDepthToSpaceParams{2});
    Runner r(w);
    ExpectErrorMentions(r, {"DEPTH_TO_SPACE", "input 'x' has type", "expected one of"});
  }
  {
    ModelWriter w =
        SpaceModel(kKilnBuiltinSpaceToDepth, kKilnBool, {1, 2, 2, 1}, {1, 1, 1, 4}, KilnSpaceToDepthParams{2});
    Runner r(w);
    ExpectErrorMentions(r, {"SPACE_TO_DEPTH", "input 'x' has type"});
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {1, 1, 1, 4}, "x");
    const int y = w.AddTensor(kKilnInt32, {1, 2, 2, 1}, "y");
    w.AddOp(kKilnBuiltinDepthToSpace, {x}, {y}, KilnDepthToSpaceParams{2});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"DEPTH_TO_SPACE", "output 'y'"});
  }
  ModelWriter w;
  const int x = w.AddTensor(kKilnUInt8, {1, 1, 1, 4}, "x");
  const int y = w.AddTensor(kKilnUInt8, {1, 2, 2, 1}, "y");
  w.SetQuantization(x, {0.5f}, {128});
  w.SetQuantization(y, {0.25f}, {128});
  w.AddOp(kKilnBuiltinDepthToSpace, {x}, {y}, KilnDepthToSpaceParams{2});
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ExpectErrorMentions(r, {"DEPTH_TO_SPACE", "'y'"});
}

TEST(SpaceOpsTest, SpaceToBatchPadsWithZeroPoint) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnUInt8, {1, 1, 2, 1}, "x");
  const int block = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "block", {1, 2});
  const int pads = w.AddConstTensor<int32_t>(kKilnInt32, {2, 2}, "pads", {0, 0, 1, 1});
  const int y = w.AddTensor(kKilnUInt8, {2, 1, 2, 1}, "y");
  for (int t : {x, y}) w.SetQuantization(t, {0.5f}, {100});
  w.AddOp(kKilnBuiltinSpaceToBatchNd, {x, block, pads}, {y});
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const uint8_t in[] = {7, 9};
  r.SetInput(0, in, sizeof(in));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 1, 2, 1}));
  // Padded row: [100, 7, 9, 100]; batch 0 takes the even columns, batch 1 the odd ones.
  EXPECT_EQ(r.OutputAs<uint8_t>(), (std::vector<uint8_t>{100, 9, 7, 100}));
}

TEST(SpaceOpsTest, BatchToSpaceRank3Float) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {2, 2, 1}, "x");
  const int block = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "block", {2});
  const int crops = w.AddConstTensor<int32_t>(kKilnInt32, {1, 2}, "crops", {1, 0});
  const int y = w.AddTensor(kKilnFloat32, {1, 3, 1}, "y");
  w.AddOp(kKilnBuiltinBatchToSpaceNd, {x, block, crops}, {y});
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const float in[] = {1, 3, 2, 4};
  r.SetInput(0, in, sizeof(in));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputDims(), (std::vector<int>{1, 3, 1}));
  EXPECT_EQ(r.Output(), (std::vector<float>{2, 3, 4}));
}

TEST(SpaceOpsTest, BatchSpaceErrors) {
  struct Case {
    KilnBuiltinOperator code;
    KilnType type;
    std::vector<int> shape;
    std::vector<int32_t> block, pads;
    bool block_constant;
    int64_t zero_point;
    std::vector<std::string> words;
  };
  const std::vector<Case> cases = {
      {kKilnBuiltinSpaceToBatchNd,
       kKilnFloat32,
       {1, 3, 4, 1},
       {2, 2},
       {0, 0, 0, 0},
       true,
       0,
       {"SPACE_TO_BATCH_ND", "input 'x'", "padded spatial dimension 0 (3) is not a multiple of block_shape[0] 2"}},
      {kKilnBuiltinSpaceToBatchNd,
       kKilnBool,
       {1, 4, 4, 1},
       {2, 2},
       {0, 0, 0, 0},
       true,
       0,
       {"SPACE_TO_BATCH_ND", "input 'x' has type"}},
      {kKilnBuiltinSpaceToBatchNd,
       kKilnInt16,
       {1, 4, 4, 1},
       {2, 2},
       {0, 0, 0, 0},
       true,
       3,
       {"SPACE_TO_BATCH_ND", "int16 output 'y' has zero point 3"}},
      {kKilnBuiltinBatchToSpaceNd,
       kKilnFloat32,
       {3, 2, 2, 1},
       {2, 2},
       {0, 0, 0, 0},
       true,
       0,
       {"BATCH_TO_SPACE_ND", "input 'x'", "input batch 3 is not a multiple"}},
      {kKilnBuiltinBatchToSpaceNd,
       kKilnFloat32,
       {4, 2, 2, 1},
       {0, 2},
       {0, 0, 0, 0},
       true,
       0,
       {"BATCH_TO_SPACE_ND", "block_shape[0] is 0"}},
      {kKilnBuiltinBatchToSpaceNd,
       kKilnFloat32,
       {4, 2, 2, 1},
       {2},
       {0, 0},
       true,
       0,
       {"BATCH_TO_SPACE_ND", "block_shape 'block' has shape [1]", "expected [2] and [2, 2]"}},
      {kKilnBuiltinBatchToSpaceNd,
       kKilnFloat32,
       {4, 2, 2, 2, 1},
       {2, 2, 1},
       {0, 0, 0, 0, 0, 0},
       true,
       0,
       {"BATCH_TO_SPACE_ND", "input 'x'"}},
  };
  for (const Case& c : cases) {
    ModelWriter w;
    const int x = w.AddTensor(c.type, c.shape, "x");
    const int n = static_cast<int>(c.block.size());
    const int block = c.block_constant ? w.AddConstTensor<int32_t>(kKilnInt32, {n}, "block", c.block)
                                       : w.AddTensor(kKilnInt32, {n}, "block");
    const int pads = w.AddConstTensor<int32_t>(kKilnInt32, {static_cast<int>(c.pads.size()) / 2, 2}, "pads", c.pads);
    const int y = w.AddTensor(c.type, {1, 1, 1, 1}, "y");
    if (c.type == kKilnInt16) {
      for (int t : {x, y}) w.SetQuantization(t, {0.5f}, {c.zero_point});
    }
    w.AddOp(c.code, {x, block, pads}, {y});
    w.SetInputs(c.block_constant ? std::vector<int>{x} : std::vector<int>{x, block});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, c.words);
  }
}

TEST(SpaceOpsTest, MirrorPadModesTypesAndErrors) {
  for (KilnMirrorPadMode mode : {kKilnMirrorPadReflect, kKilnMirrorPadSymmetric}) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt16, {3}, "x");
    const int pads = w.AddConstTensor<int64_t>(kKilnInt64, {1, 2}, "pads", {2, 1});
    const int y = w.AddTensor(kKilnInt16, {6}, "y");
    for (int t : {x, y}) w.SetQuantization(t, {0.5f}, {0});
    w.AddOp(kKilnBuiltinMirrorPad, {x, pads}, {y}, KilnMirrorPadParams{mode});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int16_t in[] = {1, 2, -32768};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int16_t>(), mode == kKilnMirrorPadReflect
                                         ? (std::vector<int16_t>{-32768, 2, 1, 2, -32768, 2})
                                         : (std::vector<int16_t>{2, 1, 1, 2, -32768, -32768}));
  }
  struct Case {
    KilnType type;
    std::vector<int> shape;
    std::vector<int32_t> pads;
    int mode;
    bool constant;
    std::vector<std::string> words;
  };
  const std::vector<Case> cases = {
      {kKilnFloat32,
       {3},
       {3, 0},
       0,
       true,
       {"MIRROR_PAD", "input 'x'", "paddings (3, 0) for dimension 0 of size 3 must be in [0, 2]"}},
      {kKilnFloat32, {3}, {0, 4}, 1, true, {"MIRROR_PAD", "must be in [0, 3] (SYMMETRIC: dim)"}},
      {kKilnFloat32, {3, 2}, {1, 1}, 1, true, {"MIRROR_PAD", "paddings 'pads' has shape [1, 2]; expected [2, 2]"}},
      {kKilnBool, {3}, {1, 1}, 1, true, {"MIRROR_PAD", "input 'x' has type"}},
  };
  for (const Case& c : cases) {
    ModelWriter w;
    const int x = w.AddTensor(c.type, c.shape, "x");
    const std::vector<int> pad_shape = {static_cast<int>(c.pads.size()) / 2, 2};
    const int pads = c.constant ? w.AddConstTensor<int32_t>(kKilnInt32, pad_shape, "pads", c.pads)
                                : w.AddTensor(kKilnInt32, pad_shape, "pads");
    const int y = w.AddTensor(c.type, {8}, "y");
    w.AddOp(kKilnBuiltinMirrorPad, {x, pads}, {y}, KilnMirrorPadParams{static_cast<KilnMirrorPadMode>(c.mode)});
    w.SetInputs(c.constant ? std::vector<int>{x} : std::vector<int>{x, pads});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, c.words);
  }
}

TEST(SpaceOpsTest, ReverseV2AxesAndErrors) {
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnBool, {2, 3}, "x");
    const int axis = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "axis", {-1});
    const int y = w.AddTensor(kKilnBool, {2, 3}, "y");
    w.AddOp(kKilnBuiltinReverseV2, {x, axis}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const uint8_t in[] = {1, 0, 0, 0, 1, 1};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<uint8_t>(), (std::vector<uint8_t>{0, 0, 1, 1, 1, 0}));
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 2, 2}, "x");
    const int axis = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "axis", {2, 1});
    const int y = w.AddTensor(kKilnFloat32, {2, 2, 2}, "y");
    w.AddOp(kKilnBuiltinReverseV2, {x, axis}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {0, 1, 2, 3, 4, 5, 6, 7};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.Output(), (std::vector<float>{3, 2, 1, 0, 7, 6, 5, 4}));
  }
  struct Case {
    KilnType type;
    std::vector<int32_t> axes;
    bool constant;
    std::vector<std::string> words;
  };
  const std::vector<Case> cases = {
      {kKilnFloat32, {3}, true, {"REVERSE_V2", "axis 'axis' holds 3, outside [-3, 3) for input 'x'"}},
      {kKilnFloat32, {0, 2}, true, {"REVERSE_V2", "names dimensions 0 and 2", "consecutive"}},
      {kKilnFloat32, {1, 1}, true, {"REVERSE_V2", "names dimensions 1 and 1"}},
      {kKilnFloat32, {0, 1, 2, 0}, true, {"REVERSE_V2", "has 4 entries, more than input 'x' has dimensions (3)"}},
      {kKilnFloat16, {0}, true, {"REVERSE_V2", "input 'x' has type"}},
  };
  for (const Case& c : cases) {
    ModelWriter w;
    const int x = w.AddTensor(c.type, {2, 3, 4}, "x");
    const int n = static_cast<int>(c.axes.size());
    const int axis =
        c.constant ? w.AddConstTensor<int32_t>(kKilnInt32, {n}, "axis", c.axes) : w.AddTensor(kKilnInt32, {n}, "axis");
    const int y = w.AddTensor(c.type, {2, 3, 4}, "y");
    w.AddOp(kKilnBuiltinReverseV2, {x, axis}, {y});
    w.SetInputs(c.constant ? std::vector<int>{x} : std::vector<int>{x, axis});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, c.words);
  }
}

TEST(SpaceOpsTest, MirrorPadUnknownModeFailsToLoad) {
  for (int mode : {1, 7}) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {3}, "x");
    const int pads = w.AddConstTensor<int32_t>(kKilnInt32, {1, 2}, "pads", {1, 1});
    const int y = w.AddTensor(kKilnFloat32, {5}, "y");
    KilnMirrorPadParams params{};
    std::memcpy(&params.mode, &mode, sizeof(mode));  // 7 is no KilnMirrorPadMode: set its bytes, never convert
    w.AddOp(kKilnBuiltinMirrorPad, {x, pads}, {y}, params);
    w.SetInputs({x});
    w.SetOutputs({y});
    const std::vector<uint8_t> bytes = w.Finish();
    ASSERT_FALSE(bytes.empty()) << w.error();
    KilnModel* model = KilnModelCreate(bytes.data(), bytes.size());
    EXPECT_EQ(model != nullptr, mode == 1) << "mode " << mode;
    KilnModelDelete(model);
  }
}

}  // namespace
}  // namespace kiln::ops
