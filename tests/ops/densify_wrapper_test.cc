// DENSIFY and sparse constants through the interpreter: the reader densifies the constant, DENSIFY copies it (float32,
// int8, float16), an op reading a sparse weight directly (FULLY_CONNECTED) sees dense data, and the errors.
#include <gtest/gtest.h>

#include <cstdint>
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
using SparseDimension = ModelWriter::SparseDimension;

// [2, 4]: row 0 holds columns 1 and 3, row 1 column 0.
const std::vector<SparseDimension> kRows = {SparseDimension{false, 2, {}, {}},
                                            SparseDimension{true, 0, {0, 2, 3}, {1, 3, 0}}};

TEST(DensifyWrapperTest, Float32Int8AndFloat16) {
  {
    ModelWriter w;
    const int k = w.AddSparseConstTensor<float>(kKilnFloat32, {2, 4}, "k", {1.5f, -2, 3}, {0, 1}, {}, kRows);
    const int y = w.AddTensor(kKilnFloat32, {2, 4}, "y");
    w.AddOp(kKilnBuiltinDensify, {k}, {y});
    w.SetInputs({});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 4}));
    EXPECT_EQ(r.Output(), (std::vector<float>{0, 1.5f, 0, -2, 3, 0, 0, 0}));
  }
  {
    ModelWriter w;  // int8 in 1x2 blocks: row 0 block 1, row 1 block 0
    const int k = w.AddSparseConstTensor<int8_t>(
        kKilnInt8, {2, 4}, "k", {5, -6, 7, 0}, {0, 1, 2}, {1},
        {SparseDimension{false, 2, {}, {}}, SparseDimension{true, 0, {0, 1, 2}, {1, 0}, kKilnUInt8},
         SparseDimension{false, 2, {}, {}}});
    w.SetQuantization(k, {0.25f}, {0});
    const int y = w.AddTensor(kKilnInt8, {2, 4}, "y");
    w.SetQuantization(y, {0.25f}, {0});
    w.AddOp(kKilnBuiltinDensify, {k}, {y});
    w.SetInputs({});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int8_t>(), (std::vector<int8_t>{0, 0, 5, -6, 7, 0, 0, 0}));
  }
  {
    ModelWriter w;
    const int k = w.AddSparseConstTensor<uint16_t>(kKilnFloat16, {3}, "k", {0x3c00}, {0}, {},
                                                   {SparseDimension{true, 0, {0, 1}, {1}, kKilnUInt16}});
    const int y = w.AddTensor(kKilnFloat16, {3}, "y");
    w.AddOp(kKilnBuiltinDensify, {k}, {y});
    w.SetInputs({});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<uint16_t>(), (std::vector<uint16_t>{0, 0x3c00, 0}));
  }
}

TEST(DensifyWrapperTest, FullyConnectedReadsASparseWeightDensified) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {1, 4}, "x");
  const int k = w.AddSparseConstTensor<float>(kKilnFloat32, {2, 4}, "weights", {1.5f, -2, 3}, {0, 1}, {}, kRows);
  const int y = w.AddTensor(kKilnFloat32, {1, 2}, "y");
  w.AddOp(kKilnBuiltinFullyConnected, {x, k, -1}, {y},
          KilnFullyConnectedParams{kKilnActNone, kKilnFullyConnectedWeightsFormatDefault, false, false});
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const float in[] = {1, 2, 3, 4};
  r.SetInput(0, in, sizeof(in));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.Output(), (std::vector<float>{1.5f * 2 - 2 * 4, 3}));
}

TEST(DensifyWrapperTest, Errors) {
  {
    ModelWriter w;  // a run-time input is no sparse constant
    const int x = w.AddTensor(kKilnFloat32, {2, 4}, "x");
    const int y = w.AddTensor(kKilnFloat32, {2, 4}, "y");
    w.AddOp(kKilnBuiltinDensify, {x}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"DENSIFY", "'x'", "constant"});
  }
  {
    ModelWriter w;  // int32 is not a DENSIFY type
    const int k = w.AddSparseConstTensor<int32_t>(kKilnInt32, {2, 4}, "k", {1, 2, 3}, {0, 1}, {}, kRows);
    const int y = w.AddTensor(kKilnInt32, {2, 4}, "y");
    w.AddOp(kKilnBuiltinDensify, {k}, {y});
    w.SetInputs({});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"DENSIFY", "'k'", "int32"});
  }
  {
    ModelWriter w;  // output of another type
    const int k = w.AddSparseConstTensor<float>(kKilnFloat32, {2, 4}, "k", {1, 2, 3}, {0, 1}, {}, kRows);
    const int y = w.AddTensor(kKilnInt8, {2, 4}, "y");
    w.AddOp(kKilnBuiltinDensify, {k}, {y});
    w.SetInputs({});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"DENSIFY", "output"});
  }
}

}  // namespace
}  // namespace kiln::ops
