// CONV_3D through the interpreter: options from the model, shapes, bias, activation, and the errors.
#include <gtest/gtest.h>

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

KilnConv3DParams Params(KilnPadding padding, int stride, int dilation, KilnFusedActivation activation) {
  return KilnConv3DParams{padding, stride, stride, stride, dilation, dilation, dilation, activation};
}

TEST(Conv3DWrapperTest, SameStridedWithBias) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {1, 3, 3, 3, 1}, "x");
  const int f = w.AddConstTensor<float>(kKilnFloat32, {1, 1, 1, 1, 2}, "filter", {1.0f, -1.0f});
  const int b = w.AddConstTensor<float>(kKilnFloat32, {2}, "bias", {0.5f, 0.0f});
  const int y = w.AddTensor(kKilnFloat32, {1, 2, 2, 2, 2}, "y");
  w.AddOp(kKilnBuiltinConv3d, {x, f, b}, {y}, Params(kKilnPaddingSame, 2, 1, kKilnActRelu));
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  std::vector<float> in(27);
  for (int i = 0; i < 27; ++i) in[i] = static_cast<float>(i);
  r.SetInput(0, in.data(), in.size() * 4);
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputDims(), (std::vector<int>{1, 2, 2, 2, 2}));
  // 1x1x1 filter, stride 2: samples (z, y, x) in {0, 2}^3; channel 0 = v + 0.5, channel 1 = relu(-v) = 0.
  const std::vector<float> got = r.Output();
  const int picks[] = {0, 2, 6, 8, 18, 20, 24, 26};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(got[2 * i], picks[i] + 0.5f) << i;
    EXPECT_EQ(got[2 * i + 1], 0.0f) << i;
  }
}

TEST(Conv3DWrapperTest, Errors) {
  const auto check = [](const std::vector<int>& in, const std::vector<int>& filter, KilnType type,
                        const KilnConv3DParams& params, const std::vector<std::string>& words, bool bad_bias = false) {
    ModelWriter w;
    const int x = w.AddTensor(type, in, "x");
    size_t n = 1;
    for (int d : filter) n *= static_cast<size_t>(d);
    const int f = w.AddConstTensor<float>(kKilnFloat32, filter, "filter", std::vector<float>(n, 1.0f));
    std::vector<int> inputs = {x, f};
    if (bad_bias) inputs.push_back(w.AddConstTensor<float>(kKilnFloat32, {7}, "bias", std::vector<float>(7, 0.0f)));
    const int y = w.AddTensor(type, {1, 1, 1, 1, 1}, "y");
    w.AddOp(kKilnBuiltinConv3d, inputs, {y}, params);
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    std::vector<std::string> all = words;
    all.push_back("CONV_3D");
    ExpectErrorMentions(r, all);
  };
  const KilnConv3DParams valid = Params(kKilnPaddingValid, 1, 1, kKilnActNone);
  check({1, 2, 2, 2, 3}, {1, 1, 1, 2, 1}, kKilnFloat32, valid, {"'filter'", "channels"});
  check({1, 2, 2, 2}, {1, 1, 1, 2, 1}, kKilnFloat32, valid, {"'x'", "rank"});
  check({1, 2, 2, 2, 2}, {1, 1, 2, 1}, kKilnFloat32, valid, {"'filter'", "rank"});
  check({1, 2, 2, 2, 2}, {1, 1, 1, 2, 1}, kKilnInt8, valid, {"'x'", "int8"});
  check({1, 2, 2, 2, 2}, {1, 1, 1, 2, 1}, kKilnFloat32, valid, {"'bias'", "[1]"}, true);
  check({1, 2, 2, 2, 2}, {3, 1, 1, 2, 1}, kKilnFloat32, Params(kKilnPaddingValid, 1, 2, kKilnActNone),
        {"depth", "dilation 2"});
}

TEST(Conv3DTransposeWrapperTest, ScatterWithStrideAndBias) {
  // Input 1x1x1x2x1 (values 1, 2), filter 1x1x2x1x1 (3, 5), stride 2 along width, VALID: output width 4 =
  // [1*3, 1*5, 2*3, 2*5] + bias 0.5.
  ModelWriter w;
  const int shape = w.AddConstTensor<int32_t>(kKilnInt32, {5}, "output_shape", {1, 1, 1, 4, 1});
  const int f = w.AddConstTensor<float>(kKilnFloat32, {1, 1, 2, 1, 1}, "filter", {3.0f, 5.0f});
  const int x = w.AddTensor(kKilnFloat32, {1, 1, 1, 2, 1}, "x");
  const int b = w.AddConstTensor<float>(kKilnFloat32, {1}, "bias", {0.5f});
  const int y = w.AddTensor(kKilnFloat32, {1, 1, 1, 4, 1}, "y");
  w.AddOp(kKilnBuiltinConv3dTranspose, {shape, f, x, b}, {y},
          KilnConv3DParams{kKilnPaddingValid, 2, 1, 1, 1, 1, 1, kKilnActNone});
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const float in[] = {1, 2};
  r.SetInput(0, in, sizeof(in));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputDims(), (std::vector<int>{1, 1, 1, 4, 1}));
  EXPECT_EQ(r.Output(), (std::vector<float>{3.5f, 5.5f, 6.5f, 10.5f}));
}

TEST(Conv3DTransposeWrapperTest, Errors) {
  const auto check = [](const std::vector<int32_t>& out_shape, const std::vector<int>& filter,
                        const std::vector<int>& in, KilnType type, const std::vector<std::string>& words,
                        bool shape_input = false) {
    ModelWriter w;
    const int shape = shape_input ? w.AddTensor(kKilnInt32, {5}, "output_shape")
                                  : w.AddConstTensor<int32_t>(kKilnInt32, {static_cast<int>(out_shape.size())},
                                                              "output_shape", out_shape);
    size_t n = 1;
    for (int d : filter) n *= static_cast<size_t>(d);
    const int f = w.AddConstTensor<float>(kKilnFloat32, filter, "filter", std::vector<float>(n, 1.0f));
    const int x = w.AddTensor(type, in, "x");
    const int y = w.AddTensor(type, {1, 1, 1, 1, 1}, "y");
    w.AddOp(kKilnBuiltinConv3dTranspose, {shape, f, x}, {y},
            KilnConv3DParams{kKilnPaddingValid, 1, 1, 1, 1, 1, 1, kKilnActNone});
    w.SetInputs(shape_input ? std::vector<int>{shape, x} : std::vector<int>{x});
    w.SetOutputs({y});
    Runner r(w);
    std::vector<std::string> all = words;
    all.push_back("CONV_3D_TRANSPOSE");
    ExpectErrorMentions(r, all);
  };
  // Input 1x2x2x2x1 from output 1x3x3x3x1 with a 2x2x2 filter, VALID, stride 1 is consistent; each check breaks one.
  check({1, 3, 3, 3, 1}, {2, 2, 2, 1, 1}, {1, 2, 2, 3, 1}, kKilnFloat32, {"'x'", "gives [2, 2, 2]"});
  check({1, 3, 3, 3, 2}, {2, 2, 2, 1, 1}, {1, 2, 2, 2, 1}, kKilnFloat32, {"'filter'", "disagree"});
  check({2, 3, 3, 3, 1}, {2, 2, 2, 1, 1}, {1, 2, 2, 2, 1}, kKilnFloat32, {"batches"});
  check({1, 3, 3, 3}, {2, 2, 2, 1, 1}, {1, 2, 2, 2, 1}, kKilnFloat32, {"'output_shape'", "5 values"});
  check({1, 3, 3, 3, 1}, {2, 2, 2, 1, 1}, {1, 2, 2, 2, 1}, kKilnInt8, {"'x'", "int8"});
  check({1, -3, 3, 3, 1}, {2, 2, 2, 1, 1}, {1, 2, 2, 2, 1}, kKilnFloat32, {"negative"});
}

}  // namespace
}  // namespace kiln::ops
