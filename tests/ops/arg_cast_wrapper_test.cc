// ARG_MAX, ARG_MIN and CAST through the interpreter, on single-op ModelWriter models: options, index and
// element types, and the errors with their messages.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kiln/c_api.h"
#include "runtime/model/model_writer.h"
#include "tests/ops/wrapper_runner.h"

namespace kiln::ops {
namespace {

using wrapper_testing::ExpectErrorMentions;
using wrapper_testing::Runner;

TEST(ArgCastOpsTest, ArgMaxAndArgMinAlongNegativeAxis) {
  for (bool is_max : {true, false}) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int axis = w.AddConstTensor<int64_t>(kKilnInt64, {1}, "axis", {-1});
    const int y = w.AddTensor(is_max ? kKilnInt64 : kKilnInt32, {2}, "y");
    if (is_max) {
      w.AddOp(kKilnBuiltinArgMax, {x, axis}, {y}, KilnArgMaxParams{kKilnInt64});
    } else {
      w.AddOp(kKilnBuiltinArgMin, {x, axis}, {y}, KilnArgMinParams{kKilnInt32});
    }
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {1, 5, 5, -2, -7, -7};  // ties keep the first index
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{2}));
    if (is_max) {
      EXPECT_EQ(r.OutputAs<int64_t>(), (std::vector<int64_t>{1, 0}));
    } else {
      EXPECT_EQ(r.OutputAs<int32_t>(), (std::vector<int32_t>{0, 1}));
    }
  }
}

TEST(ArgCastOpsTest, ArgMaxErrors) {
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int axis = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "axis", {0});
    const int y = w.AddTensor(kKilnInt32, {3}, "y");
    w.AddOp(kKilnBuiltinArgMax, {x, axis}, {y}, KilnArgMaxParams{kKilnInt64});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"ARG_MAX", "output_type option is int64 but output 'y' has type int32"});
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int axis = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "axis", {2});
    const int y = w.AddTensor(kKilnInt32, {2}, "y");
    w.AddOp(kKilnBuiltinArgMin, {x, axis}, {y}, KilnArgMinParams{kKilnNoType});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"ARG_MIN", "input 'x'", "axis 2 is out of range [-2, 2)"});
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt16, {3}, "x16");
    const int axis = w.AddTensor(kKilnInt32, {1}, "axis");
    const int y = w.AddTensor(kKilnInt32, {}, "y");
    w.AddOp(kKilnBuiltinArgMax, {x, axis}, {y}, KilnArgMaxParams{kKilnInt32});
    w.SetInputs({x, axis});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"ARG_MAX", "input 'x16' has type int16"});
  }
}

TEST(ArgCastOpsTest, CastFloatToIntSaturatesAndToBool) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {5}, "x");
  const int i = w.AddTensor(kKilnInt8, {5}, "i");
  const int b = w.AddTensor(kKilnBool, {5}, "b");
  w.AddOp(kKilnBuiltinCast, {x}, {i});
  w.AddOp(kKilnBuiltinCast, {x}, {b});
  w.SetInputs({x});
  w.SetOutputs({i, b});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const float in[] = {-1.9f, 0.0f, 300.0f, std::numeric_limits<float>::quiet_NaN(), -1e9f};
  r.SetInput(0, in, sizeof(in));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputAs<int8_t>(0), (std::vector<int8_t>{-1, 0, 127, 0, -128}));
  EXPECT_EQ(r.OutputAs<uint8_t>(1), (std::vector<uint8_t>{1, 0, 1, 1, 1}));
}

TEST(ArgCastOpsTest, CastInt64ToFloatAndUnsupportedType) {
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt64, {2}, "x");
    const int y = w.AddTensor(kKilnFloat32, {2}, "y");
    w.AddOp(kKilnBuiltinCast, {x}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int64_t in[] = {-3, int64_t{1} << 40};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.Output(), (std::vector<float>{-3.0f, std::ldexp(1.0f, 40)}));
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2}, "x");
    const int y = w.AddTensor(kKilnFloat16, {2}, "half");
    w.AddOp(kKilnBuiltinCast, {x}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"CAST", "output 'half' has type float16"});
  }
}

}  // namespace
}  // namespace kiln::ops
