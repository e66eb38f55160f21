// STRIDED_SLICE, SLICE, EXPAND_DIMS and GATHER through the interpreter, on single-op ModelWriter models:
// options as the reader parses them, constant and run-time index inputs, element types, quantization, and the
// errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kiln/c_api.h"
#include "runtime/model/model_writer.h"
#include "tests/ops/wrapper_runner.h"

namespace kiln::ops {
namespace {

using wrapper_testing::ExpectErrorMentions;
using wrapper_testing::Runner;

std::vector<float> Iota(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

TEST(SliceOpsTest, StridedSliceMasksAndNegativeStride) {
  // x[:, 1:, ::-2] of a [2, 3, 4] input.
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {2, 3, 4}, "x");
  const int b = w.AddConstTensor<int32_t>(kKilnInt32, {3}, "b", {0, 1, 0});
  const int e = w.AddConstTensor<int32_t>(kKilnInt32, {3}, "e", {0, 0, 0});
  const int s = w.AddConstTensor<int32_t>(kKilnInt32, {3}, "s", {1, 1, -2});
  const int y = w.AddTensor(kKilnFloat32, {2, 2, 2}, "y");
  w.AddOp(kKilnBuiltinStridedSlice, {x, b, e, s}, {y}, KilnStridedSliceParams{0b101, 0b111, 0, 0, 0, false});
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const std::vector<float> in = Iota(24);
  r.SetInput(0, in.data(), in.size() * 4);
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 2, 2}));
  EXPECT_EQ(r.Output(), (std::vector<float>{7, 5, 11, 9, 19, 17, 23, 21}));
}

TEST(SliceOpsTest, StridedSliceEllipsisNewAxisShrinkOnInt64) {
  // x[tf.newaxis, ..., -1] of a [2, 3] int64 input: [1, 2].
  ModelWriter w;
  const int x = w.AddTensor(kKilnInt64, {2, 3}, "x");
  const int b = w.AddConstTensor<int32_t>(kKilnInt32, {3}, "b", {0, 0, -1});
  const int e = w.AddConstTensor<int32_t>(kKilnInt32, {3}, "e", {0, 0, 0});
  const int s = w.AddConstTensor<int32_t>(kKilnInt32, {3}, "s", {1, 1, 1});
  const int y = w.AddTensor(kKilnInt64, {1, 2}, "y");
  w.AddOp(kKilnBuiltinStridedSlice, {x, b, e, s}, {y},
          KilnStridedSliceParams{0, 0, 0b010, 0b001, 0b100, false});
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const int64_t in[] = {10, 11, 1LL << 40, 13, 14, -(1LL << 40)};
  r.SetInput(0, in, sizeof(in));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputDims(), (std::vector<int>{1, 2}));
  EXPECT_EQ(r.OutputAs<int64_t>(), (std::vector<int64_t>{1LL << 40, -(1LL << 40)}));
}

TEST(SliceOpsTest, StridedSliceRuntimeInputsAndBadShrinkIndex) {
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {4}, "x");
    const int b = w.AddTensor(kKilnInt32, {1}, "runtime_begin");
    const int e = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "e", {3});
    const int s = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "s", {1});
    const int y = w.AddTensor(kKilnFloat32, {3}, "y");
    w.AddOp(kKilnBuiltinStridedSlice, {x, b, e, s}, {y}, KilnStridedSliceParams{});
    w.SetInputs({x, b});
    w.SetOutputs({y});
    Runner r(w);
    // A run-time begin makes the output dynamic: sized at Invoke from the values, checked there.
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {1, 2, 3, 4};
    r.SetInput(0, in, sizeof(in));
    for (const auto& [begin, want] : std::vector<std::pair<int32_t, std::vector<float>>>{
             {1, {2, 3}}, {-4, {1, 2, 3}}, {-1, {}}, {100, {}}, {-100, {1, 2, 3}}}) {
      r.SetInput(1, &begin, sizeof(begin));
      ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
      EXPECT_EQ(r.OutputDims(), std::vector<int>{static_cast<int>(want.size())}) << begin;
      EXPECT_EQ(r.Output(), want) << begin;
    }
  }
  {  // run-time begin, end and strides; a zero stride fails Invoke naming the op and the value
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt32, {2, 5}, "x");
    const int b = w.AddTensor(kKilnInt32, {2}, "b");
    const int e = w.AddTensor(kKilnInt32, {2}, "e");
    const int s = w.AddTensor(kKilnInt32, {2}, "s");
    const int y = w.AddTensor(kKilnInt32, {1, 1}, "y");
    w.AddOp(kKilnBuiltinStridedSlice, {x, b, e, s}, {y}, KilnStridedSliceParams{});
    w.SetInputs({x, b, e, s});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int32_t in[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    r.SetInput(0, in, sizeof(in));
    const int32_t begin[] = {0, 4}, end[] = {2, -6}, strides[] = {1, -2};
    r.SetInput(1, begin, sizeof(begin));
    r.SetInput(2, end, sizeof(end));
    r.SetInput(3, strides, sizeof(strides));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 3}));
    EXPECT_EQ(r.OutputAs<int32_t>(), (std::vector<int32_t>{4, 2, 0, 9, 7, 5}));
    const int32_t zero[] = {1, 0};
    r.SetInput(3, zero, sizeof(zero));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("STRIDED_SLICE: input 'x' with the run-time begin, end and strides: strides[1] is 0"),
              std::string::npos)
        << r.errors();
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {4}, "x");
    const int b = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "b", {4});
    const int e = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "e", {5});
    const int s = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "s", {1});
    const int y = w.AddTensor(kKilnFloat32, {}, "y");
    w.AddOp(kKilnBuiltinStridedSlice, {x, b, e, s}, {y}, KilnStridedSliceParams{0, 0, 0, 0, 1, false});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"STRIDED_SLICE", "input 'x'", "begin[0] = 4 is out of range"});
  }
  {
    // begin as int64: LiteRT takes int32 only.
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {4}, "x");
    const int b = w.AddConstTensor<int64_t>(kKilnInt64, {1}, "b64", {0});
    const int e = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "e", {2});
    const int s = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "s", {1});
    const int y = w.AddTensor(kKilnFloat32, {2}, "y");
    w.AddOp(kKilnBuiltinStridedSlice, {x, b, e, s}, {y}, KilnStridedSliceParams{});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"STRIDED_SLICE", "begin 'b64' has type int64; expected int32"});
  }
}

// Rank 6 is beyond LiteRT's STRIDED_SLICE and SLICE (5 dimensions at most); empty slices and empty gathers
// run and write nothing.
TEST(SliceOpsTest, RankSixRefusedAndEmptyOutputsRun) {
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {1, 1, 1, 1, 1, 2}, "x6");
    const int b = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "b", {0});
    const int e = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "e", {1});
    const int s = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "s", {1});
    const int y = w.AddTensor(kKilnFloat32, {1, 1, 1, 1, 1, 2}, "y");
    w.AddOp(kKilnBuiltinStridedSlice, {x, b, e, s}, {y}, KilnStridedSliceParams{});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"STRIDED_SLICE", "input 'x6' has rank 6", "expected rank 0 to 5"});
  }
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {3, 2}, "x");
  const int b = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "b", {2, 0});
  const int e = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "e", {1, 2});
  const int s = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "s", {1, 1});
  const int sliced = w.AddTensor(kKilnFloat32, {0, 2}, "sliced");
  const int idx = w.AddTensor(kKilnInt32, {0}, "no_indices");  // .tflite has no empty constants
  const int gathered = w.AddTensor(kKilnFloat32, {0, 2}, "gathered");
  w.AddOp(kKilnBuiltinStridedSlice, {x, b, e, s}, {sliced}, KilnStridedSliceParams{});
  w.AddOp(kKilnBuiltinGather, {x, idx}, {gathered}, KilnGatherParams{0, 0});
  w.SetInputs({x, idx});
  w.SetOutputs({sliced, gathered});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const float in[] = {1, 2, 3, 4, 5, 6};
  r.SetInput(0, in, sizeof(in));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputDims(0), (std::vector<int>{0, 2}));
  EXPECT_EQ(r.OutputDims(1), (std::vector<int>{0, 2}));
}

// With the offset option the output is ceil(end / stride) long whatever begin is, so begin may be computed at
// run time; a begin that would run past the input fails Invoke instead of reading out of bounds.
TEST(SliceOpsTest, StridedSliceOffsetTakesRuntimeBegin) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {5}, "x");
  const int b = w.AddTensor(kKilnInt32, {1}, "begin");
  const int e = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "e", {3});
  const int s = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "s", {1});
  const int y = w.AddTensor(kKilnFloat32, {3}, "y");
  w.AddOp(kKilnBuiltinStridedSlice, {x, b, e, s}, {y}, KilnStridedSliceParams{0, 0, 0, 0, 0, true});
  w.SetInputs({x, b});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const std::vector<float> in = Iota(5);
  r.SetInput(0, in.data(), in.size() * 4);
  int32_t begin = 2;
  r.SetInput(1, &begin, 4);
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.Output(), (std::vector<float>{2, 3, 4}));
  begin = 3;
  r.SetInput(1, &begin, 4);
  EXPECT_NE(r.Invoke(), kKilnOk);
  EXPECT_NE(r.errors().find("gives output shape [2], not the [3]"), std::string::npos) << r.errors();
}

TEST(SliceOpsTest, StridedSliceInt8KeepsQuantizationOrNamesOutput) {
  for (bool same : {true, false}) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt8, {4}, "x");
    const int b = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "b", {1});
    const int e = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "e", {3});
    const int s = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "s", {1});
    const int y = w.AddTensor(kKilnInt8, {2}, "y");
    w.SetQuantization(x, {0.5f}, {-3});
    w.SetQuantization(y, {same ? 0.5f : 0.25f}, {-3});
    w.AddOp(kKilnBuiltinStridedSlice, {x, b, e, s}, {y}, KilnStridedSliceParams{});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    if (!same) {
      ExpectErrorMentions(r, {"STRIDED_SLICE", "int8 output 'y'", "scale 0.25", "quantization of input 'x'"});
      continue;
    }
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int8_t in[] = {-128, 5, 127, 0};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int8_t>(), (std::vector<int8_t>{5, 127}));
  }
}

TEST(SliceOpsTest, SliceWithMinusOneAndRuntimeBegin) {
  {
    // int64 begin and size; size -1 runs to the end. uint8 data.
    ModelWriter w;
    const int x = w.AddTensor(kKilnUInt8, {3, 4}, "x");
    const int b = w.AddConstTensor<int64_t>(kKilnInt64, {2}, "b", {1, 1});
    const int sz = w.AddConstTensor<int64_t>(kKilnInt64, {2}, "size", {-1, 2});
    const int y = w.AddTensor(kKilnUInt8, {2, 2}, "y");
    w.AddOp(kKilnBuiltinSlice, {x, b, sz}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    std::vector<uint8_t> in(12);
    for (int i = 0; i < 12; ++i) in[static_cast<size_t>(i)] = static_cast<uint8_t>(200 + i);
    r.SetInput(0, in.data(), in.size());
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 2}));
    EXPECT_EQ(r.OutputAs<uint8_t>(), (std::vector<uint8_t>{205, 206, 209, 210}));
  }
  {
    // A run-time begin with a constant size: checked at Invoke.
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt32, {5}, "x");
    const int b = w.AddTensor(kKilnInt32, {1}, "begin");
    const int sz = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "size", {2});
    const int y = w.AddTensor(kKilnInt32, {2}, "y");
    w.AddOp(kKilnBuiltinSlice, {x, b, sz}, {y});
    w.SetInputs({x, b});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int32_t in[] = {1, 2, 3, 4, 5};
    r.SetInput(0, in, sizeof(in));
    int32_t begin = 3;
    r.SetInput(1, &begin, 4);
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int32_t>(), (std::vector<int32_t>{4, 5}));
    begin = 4;
    r.SetInput(1, &begin, 4);
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("begin[0] + size[0] = 4 + 2 exceeds dimension 0 of size 5"), std::string::npos)
        << r.errors();
  }
}

TEST(SliceOpsTest, SliceErrors) {
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {3}, "x");
    const int b = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "b", {2});
    const int sz = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "size", {2});
    const int y = w.AddTensor(kKilnFloat32, {2}, "y");
    w.AddOp(kKilnBuiltinSlice, {x, b, sz}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"SLICE", "input 'x'", "exceeds dimension 0 of size 3"});
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {3}, "x");
    const int b = w.AddTensor(kKilnInt32, {1}, "begin");
    const int sz = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "size", {-1});
    const int y = w.AddTensor(kKilnFloat32, {2}, "y");
    w.AddOp(kKilnBuiltinSlice, {x, b, sz}, {y});
    w.SetInputs({x, b});
    w.SetOutputs({y});
    Runner r(w);
    // A run-time begin with -1 in size: a dynamic output, sized at Invoke; a begin past the input fails there.
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {1, 2, 3};
    r.SetInput(0, in, sizeof(in));
    for (const auto& [begin, want] :
         std::vector<std::pair<int32_t, std::vector<float>>>{{0, {1, 2, 3}}, {2, {3}}, {3, {}}}) {
      r.SetInput(1, &begin, sizeof(begin));
      ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
      EXPECT_EQ(r.Output(), want) << begin;
    }
    const int32_t bad = 4;
    r.SetInput(1, &bad, sizeof(bad));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("SLICE: input 'x' with the run-time begin and size"), std::string::npos) << r.errors();
  }
  {  // a run-time size (int64)
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt8, {2, 3}, "x");
    w.SetQuantization(x, {0.5f}, {0});
    const int b = w.AddConstTensor<int64_t>(kKilnInt64, {2}, "begin", {0, 1});
    const int sz = w.AddTensor(kKilnInt64, {2}, "size");
    const int y = w.AddTensor(kKilnInt8, {1, 1}, "y");
    w.SetQuantization(y, {0.5f}, {0});
    w.AddOp(kKilnBuiltinSlice, {x, b, sz}, {y});
    w.SetInputs({x, sz});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int8_t in[] = {1, 2, 3, 4, 5, 6};
    r.SetInput(0, in, sizeof(in));
    const int64_t size[] = {-1, 2};
    r.SetInput(1, size, sizeof(size));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 2}));
    EXPECT_EQ(r.OutputAs<int8_t>(), (std::vector<int8_t>{2, 3, 5, 6}));
    const int64_t too_big[] = {1, 3};
    r.SetInput(1, too_big, sizeof(too_big));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("SLICE: input 'x'"), std::string::npos) << r.errors();
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {3}, "x");
    const int b = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "b", {0});
    const int sz = w.AddConstTensor<int64_t>(kKilnInt64, {1}, "size", {1});
    const int y = w.AddTensor(kKilnFloat32, {1}, "y");
    w.AddOp(kKilnBuiltinSlice, {x, b, sz}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"SLICE", "must have the same type"});
  }
}

TEST(SliceOpsTest, ExpandDimsNegativeAxisAndErrors) {
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt16, {2, 3}, "x");
    const int axis = w.AddConstTensor<int64_t>(kKilnInt64, {1}, "axis", {-1});
    const int y = w.AddTensor(kKilnInt16, {2, 3, 1}, "y");
    w.SetQuantization(x, {0.125f}, {0});
    w.SetQuantization(y, {0.125f}, {0});
    w.AddOp(kKilnBuiltinExpandDims, {x, axis}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int16_t in[] = {-32768, 1, 2, 3, 4, 32767};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 3, 1}));
    EXPECT_EQ(r.OutputAs<int16_t>(), (std::vector<int16_t>{-32768, 1, 2, 3, 4, 32767}));
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int axis = w.AddConstTensor<int32_t>(kKilnInt32, {}, "axis", {3});
    const int y = w.AddTensor(kKilnFloat32, {2, 3, 1}, "y");
    w.AddOp(kKilnBuiltinExpandDims, {x, axis}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"EXPAND_DIMS", "axis 'axis'", "axis 3 is out of range [-3, 2]"});
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2}, "x");
    const int axis = w.AddTensor(kKilnInt32, {1}, "axis_in");
    const int y = w.AddTensor(kKilnFloat32, {1, 2}, "y");
    w.AddOp(kKilnBuiltinExpandDims, {x, axis}, {y});
    w.SetInputs({x, axis});
    w.SetOutputs({y});
    Runner r(w);
    // A run-time axis: a dynamic output shaped at Invoke; an axis out of range fails there naming it.
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {5, 6};
    r.SetInput(0, in, sizeof(in));
    for (const auto& [axis, want] :
         std::vector<std::pair<int32_t, std::vector<int>>>{{0, {1, 2}}, {1, {2, 1}}, {-1, {2, 1}}, {-2, {1, 2}}}) {
      r.SetInput(1, &axis, sizeof(axis));
      ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
      EXPECT_EQ(r.OutputDims(), want) << axis;
      EXPECT_EQ(r.Output(), (std::vector<float>{5, 6}));
    }
    const int32_t bad = 3;
    r.SetInput(1, &bad, sizeof(bad));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("EXPAND_DIMS: axis 'axis_in': axis 3 is out of range"), std::string::npos) << r.errors();
  }
}

TEST(SliceOpsTest, GatherBatchDimsNegativeAxisAndBadIndex) {
  // input [2, 3] (batch 2), indices [2, 2] int64, axis -1, batch_dims 1: out[b][i] = x[b][idx[b][i]].
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
  const int idx = w.AddTensor(kKilnInt64, {2, 2}, "idx");
  const int y = w.AddTensor(kKilnFloat32, {2, 2}, "y");
  w.AddOp(kKilnBuiltinGather, {x, idx}, {y}, KilnGatherParams{-1, 1});
  w.SetInputs({x, idx});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const float in[] = {10, 11, 12, 20, 21, 22};
  r.SetInput(0, in, sizeof(in));
  int64_t indices[] = {2, 0, 1, 1};
  r.SetInput(1, indices, sizeof(indices));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 2}));
  EXPECT_EQ(r.Output(), (std::vector<float>{12, 10, 21, 21}));
  indices[3] = 3;
  r.SetInput(1, indices, sizeof(indices));
  EXPECT_NE(r.Invoke(), kKilnOk);
  EXPECT_NE(
      r.errors().find("GATHER: index 3 at position 3 of indices 'idx' is out of range [0, 3) for axis 1 of "
                      "input 'x'"),
      std::string::npos)
      << r.errors();
  indices[3] = -1;
  r.SetInput(1, indices, sizeof(indices));
  EXPECT_NE(r.Invoke(), kKilnOk);
  EXPECT_NE(r.errors().find("index -1 at position 3"), std::string::npos) << r.errors();
}

TEST(SliceOpsTest, GatherTypesAndErrors) {
  {
    // bool data, constant int32 indices, scalar index drops the axis.
    ModelWriter w;
    const int x = w.AddTensor(kKilnBool, {2, 2}, "x");
    const int idx = w.AddConstTensor<int32_t>(kKilnInt32, {}, "idx", {1});
    const int y = w.AddTensor(kKilnBool, {2}, "y");
    w.AddOp(kKilnBuiltinGather, {x, idx}, {y}, KilnGatherParams{1, 0});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const uint8_t in[] = {0, 1, 1, 0};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<uint8_t>(), (std::vector<uint8_t>{1, 0}));
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat16, {2}, "half");
    const int idx = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "idx", {1});
    const int y = w.AddTensor(kKilnFloat16, {1}, "y");
    w.AddOp(kKilnBuiltinGather, {x, idx}, {y}, KilnGatherParams{0, 0});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"GATHER", "input 'half' has type float16"});
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int idx = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "idx", {0});
    const int y = w.AddTensor(kKilnFloat32, {1, 3}, "y");
    w.AddOp(kKilnBuiltinGather, {x, idx}, {y}, KilnGatherParams{2, 0});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"GATHER", "input 'x', indices 'idx'", "axis 2 is out of range"});
  }
}

}  // namespace
}  // namespace kiln::ops
