// SPLIT, SPLIT_V, PACK, UNPACK, TILE, BROADCAST_TO and SHAPE through the interpreter, on single-op
// ModelWriter models: options, element types, quantization and one error per op with its message.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/c_api.h"
#include "runtime/model/model_writer.h"
#include "tests/ops/wrapper_runner.h"

namespace kiln::ops {
namespace {

using wrapper_testing::ExpectErrorMentions;
using wrapper_testing::Runner;

TEST(SplitPackOpsTest, SplitNegativeAxisAndUnevenSplit) {
  for (int rows : {4, 5}) {
    ModelWriter w;
    const int axis = w.AddConstTensor<int32_t>(kKilnInt32, {}, "axis", {-1});
    const int x = w.AddTensor(kKilnFloat32, {2, rows}, "x");
    const int a = w.AddTensor(kKilnFloat32, {2, 2}, "a");
    const int b = w.AddTensor(kKilnFloat32, {2, 2}, "b");
    w.AddOp(kKilnBuiltinSplit, {axis, x}, {a, b}, KilnSplitParams{2});
    w.SetInputs({x});
    w.SetOutputs({a, b});
    Runner r(w);
    if (rows == 5) {
      ExpectErrorMentions(r, {"SPLIT", "input 'x'", "(size 5) does not split evenly into 2"});
      continue;
    }
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {0, 1, 2, 3, 4, 5, 6, 7};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.Output(0), (std::vector<float>{0, 1, 4, 5}));
    EXPECT_EQ(r.Output(1), (std::vector<float>{2, 3, 6, 7}));
  }
}

TEST(SplitPackOpsTest, SplitVInt8WithMinusOneAndRuntimeSizes) {
  for (bool constant : {true, false}) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt8, {5}, "x");
    const int sizes = constant ? w.AddConstTensor<int64_t>(kKilnInt64, {2}, "sizes", {1, -1})
                               : w.AddTensor(kKilnInt64, {2}, "sizes");
    const int axis = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "axis", {0});
    const int a = w.AddTensor(kKilnInt8, {1}, "a");
    const int b = w.AddTensor(kKilnInt8, {4}, "b");
    for (int t : {x, a, b}) w.SetQuantization(t, {0.1f}, {7});
    w.AddOp(kKilnBuiltinSplitV, {x, sizes, axis}, {a, b}, KilnSplitVParams{2});
    w.SetInputs(constant ? std::vector<int>{x} : std::vector<int>{x, sizes});
    w.SetOutputs({a, b});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int8_t in[] = {-128, -1, 0, 1, 127};
    r.SetInput(0, in, sizeof(in));
    const int64_t sizes_value[] = {1, -1};
    if (!constant) r.SetInput(1, sizes_value, sizeof(sizes_value));  // run-time sizes: dynamic outputs
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int8_t>(0), (std::vector<int8_t>{-128}));
    EXPECT_EQ(r.OutputAs<int8_t>(1), (std::vector<int8_t>{-1, 0, 1, 127}));
    if (constant) continue;
    const int64_t other[] = {3, 2};
    r.SetInput(1, other, sizeof(other));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(0), std::vector<int>{3});
    EXPECT_EQ(r.OutputAs<int8_t>(1), (std::vector<int8_t>{1, 127}));
    const int64_t bad[] = {3, 3};
    r.SetInput(1, bad, sizeof(bad));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("SPLIT_V: input 'x'"), std::string::npos) << r.errors();
  }
}

TEST(SplitPackOpsTest, SplitRuntimeAxis) {
  ModelWriter w;
  const int axis = w.AddTensor(kKilnInt32, {}, "axis");
  const int x = w.AddTensor(kKilnFloat32, {2, 4}, "x");
  const int a = w.AddTensor(kKilnFloat32, {1}, "a");
  const int b = w.AddTensor(kKilnFloat32, {1}, "b");
  w.AddOp(kKilnBuiltinSplit, {axis, x}, {a, b}, KilnSplitParams{2});
  w.SetInputs({axis, x});
  w.SetOutputs({a, b});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const float in[] = {0, 1, 2, 3, 4, 5, 6, 7};
  r.SetInput(1, in, sizeof(in));
  for (int32_t value : {0, -1}) {
    r.SetInput(0, &value, sizeof(value));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(0), value == 0 ? (std::vector<int>{1, 4}) : (std::vector<int>{2, 2}));
    EXPECT_EQ(r.Output(1), value == 0 ? (std::vector<float>{4, 5, 6, 7}) : (std::vector<float>{2, 3, 6, 7}));
  }
  const int32_t bad = 2;
  r.SetInput(0, &bad, sizeof(bad));
  EXPECT_NE(r.Invoke(), kKilnOk);
  EXPECT_NE(r.errors().find("SPLIT: input 'x'"), std::string::npos) << r.errors();
}

TEST(SplitPackOpsTest, PackAlongLastAxisAndShapeMismatch) {
  for (bool same : {true, false}) {
    ModelWriter w;
    const int a = w.AddTensor(kKilnInt32, {2}, "a");
    const int b = w.AddTensor(kKilnInt32, {same ? 2 : 3}, "b");
    const int y = w.AddTensor(kKilnInt32, {2, 2}, "y");
    w.AddOp(kKilnBuiltinPack, {a, b}, {y}, KilnPackParams{2, -1});
    w.SetInputs({a, b});
    w.SetOutputs({y});
    Runner r(w);
    if (!same) {
      ExpectErrorMentions(r, {"PACK", "input 1 'b' has shape [3]; input 0 'a' has [2]"});
      continue;
    }
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int32_t in_a[] = {1, 2}, in_b[] = {10, 20};
    r.SetInput(0, in_a, sizeof(in_a));
    r.SetInput(1, in_b, sizeof(in_b));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 2}));
    EXPECT_EQ(r.OutputAs<int32_t>(), (std::vector<int32_t>{1, 10, 2, 20}));
  }
}

TEST(SplitPackOpsTest, UnpackBoolAndNumMismatch) {
  for (int num : {3, 2}) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnBool, {2, 3}, "x");
    std::vector<int> outs;
    for (int i = 0; i < num; ++i) outs.push_back(w.AddTensor(kKilnBool, {2}, "o" + std::to_string(i)));
    w.AddOp(kKilnBuiltinUnpack, {x}, outs, KilnUnpackParams{num, -1});
    w.SetInputs({x});
    w.SetOutputs(outs);
    Runner r(w);
    if (num == 2) {
      ExpectErrorMentions(r, {"UNPACK", "input 'x'", "has size 3, not num 2"});
      continue;
    }
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const uint8_t in[] = {1, 0, 0, 0, 1, 1};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<uint8_t>(0), (std::vector<uint8_t>{1, 0}));
    EXPECT_EQ(r.OutputAs<uint8_t>(1), (std::vector<uint8_t>{0, 1}));
    EXPECT_EQ(r.OutputAs<uint8_t>(2), (std::vector<uint8_t>{0, 1}));
  }
}

TEST(SplitPackOpsTest, TileInt64AndNegativeMultiple) {
  for (int32_t m : {2, -1}) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt64, {1, 2}, "x");
    const int mult = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "multiples", {m, 2});
    const int y = w.AddTensor(kKilnInt64, {2, 4}, "y");
    w.AddOp(kKilnBuiltinTile, {x, mult}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    if (m < 0) {
      ExpectErrorMentions(r, {"TILE", "input 'x'", "multiples[0] is -1"});
      continue;
    }
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int64_t in[] = {7, -(1LL << 50)};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 4}));
    const int64_t big = -(1LL << 50);
    EXPECT_EQ(r.OutputAs<int64_t>(), (std::vector<int64_t>{7, big, 7, big, 7, big, 7, big}));
  }
}

TEST(SplitPackOpsTest, BroadcastToAndIncompatibleShape) {
  for (int32_t cols : {3, 4}) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {3}, "x");
    const int shape = w.AddConstTensor<int64_t>(kKilnInt64, {2}, "shape", {2, cols});
    const int y = w.AddTensor(kKilnFloat32, {2, cols}, "y");
    w.AddOp(kKilnBuiltinBroadcastTo, {x, shape}, {y});
    w.SetOpVersion(0, 2);
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    if (cols == 4) {
      ExpectErrorMentions(r, {"BROADCAST_TO", "input 'x'", "[3] does not broadcast to shape [2, 4]"});
      continue;
    }
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {1, 2, 3};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.Output(), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  }
}

TEST(SplitPackOpsTest, ShapeInt64AndOutTypeMismatch) {
  for (KilnType out_type : {kKilnInt64, kKilnNoType, kKilnInt32}) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt8, {2, 0, 5}, "x");
    const int y = w.AddTensor(kKilnInt64, {3}, "y");
    w.AddOp(kKilnBuiltinShape, {x}, {y}, KilnShapeParams{out_type});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    if (out_type == kKilnInt32) {
      ExpectErrorMentions(r, {"SHAPE", "out_type option is int32 but output 'y' has type int64"});
      continue;
    }
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int64_t>(), (std::vector<int64_t>{2, 0, 5}));
  }
}

// RANK: an int32 scalar, for rank 0 to 6 (an empty tensor too); an output of another type is refused.
TEST(SplitPackOpsTest, RankOfEveryRankAndOutputType) {
  for (int rank = 0; rank <= 6; ++rank) {
    ModelWriter w;
    std::vector<int> dims(static_cast<size_t>(rank), 2);
    if (rank == 3) dims[1] = 0;
    const int x = w.AddTensor(kKilnFloat32, dims, "x");
    const int y = w.AddTensor(kKilnInt32, {}, "y");
    w.AddOp(kKilnBuiltinRank, {x}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_TRUE(r.OutputDims().empty());
    EXPECT_EQ(r.OutputAs<int32_t>(), (std::vector<int32_t>{rank}));
  }
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {2}, "x");
  const int y = w.AddTensor(kKilnInt64, {}, "y");
  w.AddOp(kKilnBuiltinRank, {x}, {y});
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ExpectErrorMentions(r, {"RANK", "output 'y'", "int64"});
}

}  // namespace
}  // namespace kiln::ops
