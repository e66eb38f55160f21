// ONE_HOT, GATHER_ND, SCATTER_ND and ADD_N through the interpreter, on single-op ModelWriter models: shapes,
// options, types, run-time and constant indices, empty tensors, and the errors with their messages.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api.h"
#include "runtime/model/model_writer.h"
#include "tests/ops/wrapper_runner.h"

namespace kiln::ops {
namespace {

using wrapper_testing::ExpectErrorMentions;
using wrapper_testing::Runner;

// ONE_HOT with constant indices (int32), depth, on and off values of type T.
template <typename T>
void BuildOneHot(ModelWriter& w, KilnType type, const std::vector<int>& index_dims, const std::vector<int32_t>& indices,
                 int32_t depth, T on, T off, int axis, const std::vector<int>& out_dims) {
  const int i = w.AddConstTensor(kKilnInt32, index_dims, "indices", indices);
  const int d = w.AddConstTensor(kKilnInt32, {}, "depth", std::vector<int32_t>{depth});
  const int a = w.AddConstTensor(type, {}, "on", std::vector<T>{on});
  const int b = w.AddConstTensor(type, {}, "off", std::vector<T>{off});
  const int y = w.AddTensor(type, out_dims, "y");
  KilnOneHotParams params{axis};
  w.AddOp(kKilnBuiltinOneHot, {i, d, a, b}, {y}, params);
  w.SetInputs({});
  w.SetOutputs({y});
}

TEST(OneHotWrapperTest, AxesAndTypes) {
  {
    ModelWriter w;
    BuildOneHot<float>(w, kKilnFloat32, {3}, {0, 2, 5}, 3, 1.5f, -1.0f, -1, {3, 3});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{3, 3}));
    EXPECT_EQ(r.Output(), (std::vector<float>{1.5f, -1, -1, -1, -1, 1.5f, -1, -1, -1}));
  }
  {
    ModelWriter w;  // axis 0: the depth dimension first
    BuildOneHot<int32_t>(w, kKilnInt32, {2}, {1, -1}, 2, 7, 0, 0, {2, 2});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int32_t>(), (std::vector<int32_t>{0, 0, 7, 0}));
  }
  {
    ModelWriter w;  // bool: a non-zero on byte other than 1 comes out as true (1)
    BuildOneHot<uint8_t>(w, kKilnBool, {2, 1}, {0, 1}, 2, 5, 0, 1, {2, 2, 1});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<uint8_t>(), (std::vector<uint8_t>{1, 0, 0, 1}));
  }
  {
    ModelWriter w;  // depth 0: an empty output
    BuildOneHot<int8_t>(w, kKilnInt8, {2}, {0, 1}, 0, 1, 0, -1, {2, 0});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 0}));
  }
}

TEST(OneHotWrapperTest, Errors) {
  {
    ModelWriter w;
    BuildOneHot<float>(w, kKilnFloat32, {3}, {0, 2, 5}, 3, 1, 0, 2, {3, 3});
    Runner r(w);
    ExpectErrorMentions(r, {"ONE_HOT: indices 'indices', depth 'depth': axis 2 is out of range [-1, 1]"});
  }
  {
    ModelWriter w;
    BuildOneHot<float>(w, kKilnFloat32, {3}, {0, 2, 5}, -2, 1, 0, -1, {3, 3});
    Runner r(w);
    ExpectErrorMentions(r, {"ONE_HOT", "depth -2 is negative"});
  }
  {
    ModelWriter w;
    BuildOneHot<int16_t>(w, kKilnInt16, {3}, {0, 2, 5}, 3, 1, 0, -1, {3, 3});
    Runner r(w);
    ExpectErrorMentions(r, {"ONE_HOT: output 'y' has type int16; expected float32, int32, int64, int8, uint8 or bool"});
  }
  {
    ModelWriter w;  // a run-time depth
    const int i = w.AddConstTensor(kKilnInt32, {2}, "indices", std::vector<int32_t>{0, 1});
    const int d = w.AddTensor(kKilnInt32, {}, "depth");
    const int a = w.AddConstTensor(kKilnFloat32, {}, "on", std::vector<float>{1});
    const int b = w.AddConstTensor(kKilnInt32, {}, "off", std::vector<int32_t>{0});
    const int y = w.AddTensor(kKilnFloat32, {2, 2}, "y");
    w.AddOp(kKilnBuiltinOneHot, {i, d, a, b}, {y}, KilnOneHotParams{-1});
    w.SetInputs({d});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"ONE_HOT: off_value 'off' has type int32"});
  }
  {
    ModelWriter w;
    const int i = w.AddConstTensor(kKilnInt32, {2}, "indices", std::vector<int32_t>{0, 1});
    const int d = w.AddTensor(kKilnInt32, {}, "depth");
    const int a = w.AddConstTensor(kKilnFloat32, {}, "on", std::vector<float>{1});
    const int b = w.AddConstTensor(kKilnFloat32, {}, "off", std::vector<float>{0});
    const int y = w.AddTensor(kKilnFloat32, {2, 2}, "y");
    w.AddOp(kKilnBuiltinOneHot, {i, d, a, b}, {y}, KilnOneHotParams{-1});
    w.SetInputs({d});
    w.SetOutputs({y});
    Runner r(w);
    // A run-time depth: a dynamic output, sized at Invoke; a negative depth fails there naming it.
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int32_t depth = 3;
    r.SetInput(0, &depth, sizeof(depth));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 3}));
    EXPECT_EQ(r.Output(), (std::vector<float>{1, 0, 0, 0, 1, 0}));
    const int32_t bad = -1;
    r.SetInput(0, &bad, sizeof(bad));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("ONE_HOT: indices 'indices', depth 'depth'"), std::string::npos) << r.errors();
  }
  {
    ModelWriter w;
    const int i = w.AddConstTensor(kKilnFloat32, {2}, "indices", std::vector<float>{0, 1});
    const int d = w.AddConstTensor(kKilnInt32, {}, "depth", std::vector<int32_t>{2});
    const int a = w.AddConstTensor(kKilnFloat32, {2}, "on", std::vector<float>{1, 1});
    const int b = w.AddConstTensor(kKilnFloat32, {}, "off", std::vector<float>{0});
    const int y = w.AddTensor(kKilnFloat32, {2, 2}, "y");
    w.AddOp(kKilnBuiltinOneHot, {i, d, a, b}, {y}, KilnOneHotParams{-1});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"ONE_HOT: indices 'indices' has type float32; expected int32 or int64"});
  }
}

// GATHER_ND with params a model input and indices a model input (int64), so that Invoke sees them.
TEST(GatherNdWrapperTest, RunTimeIndicesAndErrors) {
  ModelWriter w;
  const int p = w.AddTensor(kKilnFloat32, {3, 2}, "params");
  const int i = w.AddTensor(kKilnInt64, {2, 1}, "indices");
  const int y = w.AddTensor(kKilnFloat32, {2, 2}, "y");
  w.AddOp(kKilnBuiltinGatherNd, {p, i}, {y});
  w.SetInputs({p, i});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const std::vector<float> params = {0, 1, 2, 3, 4, 5};
  r.SetInput(0, params.data(), params.size() * 4);
  std::vector<int64_t> indices = {2, 0};
  r.SetInput(1, indices.data(), indices.size() * 8);
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.Output(), (std::vector<float>{4, 5, 0, 1}));
  indices = {1, 3};
  r.SetInput(1, indices.data(), indices.size() * 8);
  EXPECT_NE(r.Invoke(), kKilnOk);
  EXPECT_NE(r.errors().find("GATHER_ND: index 3 at position 1 of indices 'indices' is out of range [0, 3) for "
                            "dimension 0 of params 'params'"),
            std::string::npos)
      << r.errors();
  indices = {-1, 0};
  r.SetInput(1, indices.data(), indices.size() * 8);
  EXPECT_NE(r.Invoke(), kKilnOk);
  EXPECT_NE(r.errors().find("index -1 at position 0"), std::string::npos) << r.errors();
}

TEST(GatherNdWrapperTest, ShapesTypesAndPrepareErrors) {
  {
    ModelWriter w;  // int8 with matching quantization, full-depth tuples, empty index prefix
    const int p = w.AddConstTensor(kKilnInt8, {2, 2}, "params", std::vector<int8_t>{1, 2, 3, 4});
    w.SetQuantization(p, {0.5f}, {1});
    const int i = w.AddConstTensor(kKilnInt32, {3, 2}, "indices", std::vector<int32_t>{1, 1, 0, 1, 1, 0});
    const int y = w.AddTensor(kKilnInt8, {3}, "y");
    w.SetQuantization(y, {0.5f}, {1});
    w.AddOp(kKilnBuiltinGatherNd, {p, i}, {y});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int8_t>(), (std::vector<int8_t>{4, 2, 3}));
  }
  {
    ModelWriter w;  // no tuples: an empty output
    const int p = w.AddConstTensor(kKilnInt32, {2}, "params", std::vector<int32_t>{1, 2});
    const int i = w.AddTensor(kKilnInt32, {0, 1}, "indices");
    const int y = w.AddTensor(kKilnInt32, {0}, "y");
    w.AddOp(kKilnBuiltinGatherNd, {p, i}, {y});
    w.SetInputs({i});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{0}));
  }
  {
    ModelWriter w;
    const int p = w.AddTensor(kKilnFloat32, {2}, "params");
    const int i = w.AddConstTensor(kKilnInt32, {1, 2}, "indices", std::vector<int32_t>{0, 0});
    const int y = w.AddTensor(kKilnFloat32, {1}, "y");
    w.AddOp(kKilnBuiltinGatherNd, {p, i}, {y});
    w.SetInputs({p});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"GATHER_ND: params 'params', indices 'indices': index depth 2 (the indices' last "
                            "dimension) exceeds the params' rank 1"});
  }
  {
    ModelWriter w;
    const int p = w.AddTensor(kKilnFloat32, {2}, "params");
    const int i = w.AddConstTensor(kKilnFloat32, {1, 1}, "indices", std::vector<float>{0});
    const int y = w.AddTensor(kKilnFloat32, {1}, "y");
    w.AddOp(kKilnBuiltinGatherNd, {p, i}, {y});
    w.SetInputs({p});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"GATHER_ND: indices 'indices' has type float32; expected int32 or int64"});
  }
}

TEST(ScatterNdWrapperTest, AddsDuplicatesAndFails) {
  ModelWriter w;
  const int i = w.AddTensor(kKilnInt32, {3, 1}, "indices");
  const int u = w.AddTensor(kKilnFloat32, {3, 2}, "updates");
  const int s = w.AddConstTensor(kKilnInt32, {2}, "shape", std::vector<int32_t>{4, 2});
  const int y = w.AddTensor(kKilnFloat32, {4, 2}, "y");
  w.AddOp(kKilnBuiltinScatterNd, {i, u, s}, {y});
  w.SetInputs({i, u});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  std::vector<int32_t> indices = {3, 0, 3};
  const std::vector<float> updates = {1, 2, 3, 4, 5, 6};
  r.SetInput(0, indices.data(), indices.size() * 4);
  r.SetInput(1, updates.data(), updates.size() * 4);
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.Output(), (std::vector<float>{3, 4, 0, 0, 0, 0, 6, 8}));
  indices = {0, 4, 1};
  r.SetInput(0, indices.data(), indices.size() * 4);
  EXPECT_NE(r.Invoke(), kKilnOk);
  EXPECT_NE(r.errors().find("SCATTER_ND: index 4 at position 1 of indices 'indices' is out of range [0, 4) for "
                            "dimension 0 of output 'y'"),
            std::string::npos)
      << r.errors();
}

TEST(ScatterNdWrapperTest, PrepareErrors) {
  struct Case {
    KilnType index_type, update_type;
    std::vector<int> update_dims;
    std::vector<int32_t> shape;
    bool shape_constant;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {kKilnInt64, kKilnFloat32, {2}, {4}, true, "SCATTER_ND: indices 'indices' has type int64; expected int32"},
           {kKilnInt32, kKilnInt16, {2}, {4}, true, "SCATTER_ND: updates 'updates' have type int16"},
           {kKilnInt32,
            kKilnFloat32,
            {3},
            {4},
            true,
            "SCATTER_ND: shape 'shape', indices 'indices', updates 'updates': updates have shape [3]; indices and "
            "shape need [2]"},
           {kKilnInt32, kKilnFloat32, {2}, {-4}, true, "SCATTER_ND: shape 'shape' holds -4 at 0"}}) {
    ModelWriter w;
    const int i = w.AddTensor(c.index_type, {2, 1}, "indices");
    const int u = w.AddTensor(c.update_type, c.update_dims, "updates");
    const int s =
        c.shape_constant ? w.AddConstTensor(kKilnInt32, {1}, "shape", c.shape) : w.AddTensor(kKilnInt32, {1}, "shape");
    const int y = w.AddTensor(c.update_type, {4}, "y");
    w.AddOp(kKilnBuiltinScatterNd, {i, u, s}, {y});
    w.SetInputs(c.shape_constant ? std::vector<int>{i, u} : std::vector<int>{i, u, s});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {c.message});
  }
}

TEST(ScatterNdWrapperTest, RunTimeShape) {
  // A run-time shape: a dynamic output, sized at Invoke; indices out of the new shape fail there.
  ModelWriter w;
  const int i = w.AddConstTensor(kKilnInt32, {2, 1}, "indices", std::vector<int32_t>{1, 3});
  const int u = w.AddConstTensor(kKilnFloat32, {2}, "updates", std::vector<float>{5, 7});
  const int s = w.AddTensor(kKilnInt32, {1}, "shape");
  const int y = w.AddTensor(kKilnFloat32, {1}, "y");
  w.AddOp(kKilnBuiltinScatterNd, {i, u, s}, {y});
  w.SetInputs({s});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const int32_t five = 5;
  r.SetInput(0, &five, sizeof(five));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.Output(), (std::vector<float>{0, 5, 0, 7, 0}));
  const int32_t three = 3;
  r.SetInput(0, &three, sizeof(three));
  EXPECT_NE(r.Invoke(), kKilnOk);
  EXPECT_NE(r.errors().find("SCATTER_ND"), std::string::npos) << r.errors();
  const int32_t negative = -1;
  r.SetInput(0, &negative, sizeof(negative));
  EXPECT_NE(r.Invoke(), kKilnOk);
  EXPECT_NE(r.errors().find("SCATTER_ND: shape 'shape' holds -1 at 0"), std::string::npos) << r.errors();
}

TEST(AddNWrapperTest, SumsAndErrors) {
  {
    ModelWriter w;
    const int a = w.AddTensor(kKilnInt32, {2, 2}, "a");
    const int b = w.AddConstTensor(kKilnInt32, {2, 2}, "b", std::vector<int32_t>{1, 2, 3, 2147483647});
    const int c = w.AddTensor(kKilnInt32, {2, 2}, "c");
    const int y = w.AddTensor(kKilnInt32, {2, 2}, "y");
    w.AddOp(kKilnBuiltinAddN, {a, b, c}, {y});
    w.SetInputs({a, c});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const std::vector<int32_t> va = {10, 20, 30, 1}, vc = {-1, -2, -3, 0};
    r.SetInput(0, va.data(), 16);
    r.SetInput(1, vc.data(), 16);
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int32_t>(), (std::vector<int32_t>{10, 20, 30, -2147483647 - 1}));
  }
  {
    ModelWriter w;  // rank 0 float
    const int a = w.AddConstTensor(kKilnFloat32, {}, "a", std::vector<float>{1.5f});
    const int b = w.AddConstTensor(kKilnFloat32, {}, "b", std::vector<float>{-0.25f});
    const int y = w.AddTensor(kKilnFloat32, {}, "y");
    w.AddOp(kKilnBuiltinAddN, {a, b}, {y});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.Output(), (std::vector<float>{1.25f}));
  }
  struct Case {
    std::vector<KilnType> types;
    std::vector<std::vector<int>> dims;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{kKilnFloat32}, {{2}}, "ADD_N: has 1 inputs; expected at least 2"},
           {{kKilnFloat32, kKilnFloat32}, {{2}, {1}}, "ADD_N: input 1 'x1' has shape [1]; input 0 'x0' has [2]"},
           {{kKilnFloat32, kKilnInt32}, {{2}, {2}}, "ADD_N: input 1 'x1' has type int32; input 0 'x0' has float32"},
           {{kKilnInt64, kKilnInt64}, {{2}, {2}}, "ADD_N: input 0 'x0' has type int64; expected float32 or int32"}}) {
    ModelWriter w;
    std::vector<int> inputs;
    for (size_t k = 0; k < c.types.size(); ++k)
      inputs.push_back(w.AddTensor(c.types[k], c.dims[k], "x" + std::to_string(k)));
    const int y = w.AddTensor(c.types[0], c.dims[0], "y");
    w.AddOp(kKilnBuiltinAddN, inputs, {y});
    w.SetInputs(inputs);
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {c.message});
  }
}

template <typename T>
void BuildRange(ModelWriter& w, KilnType type, T start, T limit, T delta, bool constant = true) {
  const int a = w.AddConstTensor(type, {}, "start", std::vector<T>{start});
  const int b = constant ? w.AddConstTensor(type, {}, "limit", std::vector<T>{limit}) : w.AddTensor(type, {}, "limit");
  const int c = w.AddConstTensor(type, {}, "delta", std::vector<T>{delta});
  const int y = w.AddTensor(type, {1}, "y");
  w.AddOp(kKilnBuiltinRange, {a, b, c}, {y});
  w.SetInputs(constant ? std::vector<int>{} : std::vector<int>{b});
  w.SetOutputs({y});
}

TEST(TopKWrapperTest, RunTimeK) {
  // A run-time k: dynamic outputs, sized at Invoke; k out of range fails there naming it.
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
  const int k = w.AddTensor(kKilnInt32, {}, "k");
  const int v = w.AddTensor(kKilnFloat32, {2, 1}, "values");
  const int i = w.AddTensor(kKilnInt32, {2, 1}, "indices");
  w.AddOp(kKilnBuiltinTopkV2, {x, k}, {v, i});
  w.SetInputs({x, k});
  w.SetOutputs({v, i});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const float in[] = {1, 5, 3, 9, 7, 8};
  r.SetInput(0, in, sizeof(in));
  const int32_t two = 2;
  r.SetInput(1, &two, sizeof(two));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputDims(0), (std::vector<int>{2, 2}));
  EXPECT_EQ(r.Output(0), (std::vector<float>{5, 3, 9, 8}));
  EXPECT_EQ(r.OutputAs<int32_t>(1), (std::vector<int32_t>{1, 2, 0, 2}));
  const int32_t zero = 0;
  r.SetInput(1, &zero, sizeof(zero));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputDims(1), (std::vector<int>{2, 0}));
  const int32_t four = 4;
  r.SetInput(1, &four, sizeof(four));
  EXPECT_NE(r.Invoke(), kKilnOk);
  EXPECT_NE(r.errors().find("TOPK_V2: k 'k' is 4; input 'x' has 3 values"), std::string::npos) << r.errors();
}

TEST(RangeWrapperTest, ValuesAndErrors) {
  {
    ModelWriter w;
    BuildRange<int64_t>(w, kKilnInt64, 7, -2, -3);
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{3}));
    EXPECT_EQ(r.OutputAs<int64_t>(), (std::vector<int64_t>{7, 4, 1}));
  }
  {
    ModelWriter w;
    BuildRange<float>(w, kKilnFloat32, 0.5f, 2.0f, 0.5f);
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.Output(), (std::vector<float>{0.5f, 1.0f, 1.5f}));
  }
  {
    ModelWriter w;  // an empty range
    BuildRange<int32_t>(w, kKilnInt32, 3, 3, 1);
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{0}));
  }
  {
    ModelWriter w;
    BuildRange<int32_t>(w, kKilnInt32, 0, 5, 0);
    Runner r(w);
    ExpectErrorMentions(r, {"RANGE: start 'start', limit 'limit', delta 'delta': start 0, limit 5, delta 0: delta "
                            "must not be zero"});
  }
  {
    ModelWriter w;
    BuildRange<int32_t>(w, kKilnInt32, 0, 5, -1);
    Runner r(w);
    ExpectErrorMentions(r, {"RANGE", "delta's sign points away from limit"});
  }
  {
    ModelWriter w;
    BuildRange<int32_t>(w, kKilnInt32, 0, 5, 1, false);
    Runner r(w);
    // A run-time limit: a dynamic output, counted at Invoke; a limit behind start fails there.
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    for (int32_t limit : {3, 0, 6}) {
      r.SetInput(0, &limit, sizeof(limit));
      ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
      std::vector<int32_t> want;
      for (int32_t v = 0; v < limit; ++v) want.push_back(v);
      EXPECT_EQ(r.OutputAs<int32_t>(), want);
      EXPECT_EQ(r.OutputDims(), std::vector<int>{limit});
    }
    const int32_t bad = -2;
    r.SetInput(0, &bad, sizeof(bad));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("delta's sign points away from limit"), std::string::npos) << r.errors();
  }
  {
    ModelWriter w;
    BuildRange<int16_t>(w, kKilnInt16, 0, 5, 1);
    Runner r(w);
    ExpectErrorMentions(r, {"RANGE: start 'start' has type int16; expected int32, int64 or float32"});
  }
  {
    ModelWriter w;
    const int a = w.AddConstTensor(kKilnInt32, {1}, "start", std::vector<int32_t>{0});
    const int b = w.AddConstTensor(kKilnInt32, {}, "limit", std::vector<int32_t>{3});
    const int c = w.AddConstTensor(kKilnInt32, {}, "delta", std::vector<int32_t>{1});
    const int y = w.AddTensor(kKilnInt32, {3}, "y");
    w.AddOp(kKilnBuiltinRange, {a, b, c}, {y});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"RANGE", "start 'start'"});
  }
}

TEST(TopKWrapperTest, ValuesIndicesAndErrors) {
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt8, {2, 4}, "x");
    const int k = w.AddConstTensor(kKilnInt32, {1}, "k", std::vector<int32_t>{2});
    const int v = w.AddTensor(kKilnInt8, {2, 2}, "values");
    const int i = w.AddTensor(kKilnInt32, {2, 2}, "indices");
    w.AddOp(kKilnBuiltinTopkV2, {x, k}, {v, i});
    w.SetInputs({x});
    w.SetOutputs({v, i});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const std::vector<int8_t> in = {1, 5, 5, -3, -128, -1, -1, -2};
    r.SetInput(0, in.data(), in.size());
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int8_t>(0), (std::vector<int8_t>{5, 5, -1, -1}));
    EXPECT_EQ(r.OutputAs<int32_t>(1), (std::vector<int32_t>{1, 2, 1, 2}));
  }
  struct Case {
    KilnType input_type, k_type;
    std::vector<int> dims;
    int32_t k;
    bool k_constant;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{{kKilnFloat32,
                                          kKilnInt32,
                                          {2, 3},
                                          4,
                                          true,
                                          "TOPK_V2: k 'k' is 4; input 'x' has 3 values along its last dimension"},
                                         {kKilnFloat32, kKilnInt32, {2, 3}, -1, true, "TOPK_V2: k 'k' is -1"},
                                         {kKilnFloat32, kKilnInt64, {2, 3}, 1, true, "TOPK_V2: k 'k' has type int64"},
                                         {kKilnBool, kKilnInt32, {2, 3}, 1, true, "TOPK_V2: input 'x' has type bool"},
                                         {kKilnFloat32, kKilnInt32, {}, 1, true, "TOPK_V2: input 'x'"}}) {
    ModelWriter w;
    const int x = w.AddTensor(c.input_type, c.dims, "x");
    const int k = !c.k_constant            ? w.AddTensor(c.k_type, {}, "k")
                  : c.k_type == kKilnInt64 ? w.AddConstTensor(c.k_type, {}, "k", std::vector<int64_t>{c.k})
                                           : w.AddConstTensor(c.k_type, {}, "k", std::vector<int32_t>{c.k});
    const int v = w.AddTensor(c.input_type, {2, 1}, "values");
    const int i = w.AddTensor(kKilnInt32, {2, 1}, "indices");
    w.AddOp(kKilnBuiltinTopkV2, {x, k}, {v, i});
    w.SetInputs(c.k_constant ? std::vector<int>{x} : std::vector<int>{x, k});
    w.SetOutputs({v, i});
    Runner r(w);
    ExpectErrorMentions(r, {c.message});
  }
}

// UNSORTED_SEGMENT_MAX through the interpreter (ids at run time, a dropped id, an empty segment), and the
// refusals: an id past num_segments at Invoke, a run-time num_segments (sized at Invoke), ids that do not begin
// data's shape.
TEST(UnsortedSegmentWrapperTest, RunsAndRefusesClearly) {
  {
    ModelWriter w;
    const int data = w.AddTensor(kKilnFloat32, {4, 2}, "data");
    const int ids = w.AddTensor(kKilnInt32, {4}, "ids");
    const int num = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "num", {3});
    const int y = w.AddTensor(kKilnFloat32, {3, 2}, "y");
    w.AddOp(kKilnBuiltinUnsortedSegmentMax, {data, ids, num}, {y});
    w.SetInputs({data, ids});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float values[] = {1, 8, 5, 6, 3, 4, 7, 2};
    const int32_t segment_ids[] = {0, -1, 0, 2};
    r.SetInput(0, values, sizeof(values));
    r.SetInput(1, segment_ids, sizeof(segment_ids));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    const float lowest = std::numeric_limits<float>::lowest();
    EXPECT_EQ(r.Output(), (std::vector<float>{3, 8, lowest, lowest, 7, 2}));
    const int32_t past[] = {0, 3, 0, 2};
    r.SetInput(1, past, sizeof(past));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("segment id 3 at position 1 of segment_ids 'ids' is not below num_segments 3"),
              std::string::npos)
        << r.errors();
  }
  {
    ModelWriter w;
    const int data = w.AddTensor(kKilnFloat32, {4, 2}, "data");
    const int ids = w.AddConstTensor<int32_t>(kKilnInt32, {4}, "ids", {0, 1, 0, 1});
    const int num = w.AddTensor(kKilnInt32, {1}, "num");
    const int y = w.AddTensor(kKilnFloat32, {2, 2}, "y");
    w.AddOp(kKilnBuiltinUnsortedSegmentSum, {data, ids, num}, {y});
    w.SetInputs({data, num});
    w.SetOutputs({y});
    Runner r(w);
    // A run-time num_segments: a dynamic output sized at Invoke; too few segments for the ids fail there.
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {1, 2, 3, 4, 5, 6, 7, 8};
    r.SetInput(0, in, sizeof(in));
    const int32_t three = 3;
    r.SetInput(1, &three, sizeof(three));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{3, 2}));
    EXPECT_EQ(r.Output(), (std::vector<float>{6, 8, 10, 12, 0, 0}));
    const int32_t one = 1;
    r.SetInput(1, &one, sizeof(one));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("is not below num_segments 1"), std::string::npos) << r.errors();
    const int32_t negative = -2;
    r.SetInput(1, &negative, sizeof(negative));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("UNSORTED_SEGMENT_SUM: num_segments 'num' is -2"), std::string::npos) << r.errors();
  }
  {
    ModelWriter w;
    const int data = w.AddTensor(kKilnInt32, {4, 2}, "data");
    const int ids = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "ids", {0, 1});
    const int num = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "num", {2});
    const int y = w.AddTensor(kKilnInt32, {2, 2}, "y");
    w.AddOp(kKilnBuiltinUnsortedSegmentProd, {data, ids, num}, {y});
    w.SetInputs({data});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"UNSORTED_SEGMENT_PROD", "segment_ids 'ids' [2]", "leading part of data 'data'"});
  }
}

}  // namespace
}  // namespace kiln::ops
