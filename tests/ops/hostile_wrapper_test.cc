// Hostile models through a real interpreter (issue #14): what the interpreter fuzzer found or was known to be
// missing. Each asks for absurd work or memory, or is empty, and must run or fail with a message, quickly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/builtin_ops.h"
#include "runtime/model/limits.h"
#include "runtime/model/model_writer.h"
#include "tests/ops/wrapper_runner.h"

namespace kiln::ops {
namespace {

using wrapper_testing::Runner;

// Lowers Kiln's one memory rule (MaxTensorBytes) for one test, as the interpreter fuzzer does.
class ScopedTensorLimit {
 public:
  explicit ScopedTensorLimit(uint64_t bytes) : saved_(MaxTensorBytes()) { SetMaxTensorBytes(bytes); }
  ~ScopedTensorLimit() { SetMaxTensorBytes(saved_); }

 private:
  uint64_t saved_;
};

// Prepare or Invoke fails (an op sized from constants may be dynamic, sized at Invoke), and the messages name
// each of `words`.
void ExpectRefused(Runner& r, const std::vector<std::string>& words) {
  bool failed = r.status() != kKilnOk;
  if (!failed) failed = r.Invoke() != kKilnOk;
  EXPECT_TRUE(failed) << "the model ran";
  for (const std::string& word : words) {
    EXPECT_NE(r.errors().find(word), std::string::npos) << "expected '" << word << "' in: " << r.errors();
  }
}

// Pooling windows of a billion rows and columns over a 3x3 input (a fuzzer's filter sizes): the work is bounded
// by what the output needs, on the fast path too (XNNPACK leaves such windows to the reference kernels, which
// visit only the part inside the input). SAME padding: every window covers the whole input.
TEST(HostileModelTest, HugePoolingWindowsFinishQuickly) {
  const float in[] = {1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6, 7, -7, 8, -8, 9, -9};  // [1, 3, 3, 2]
  const int huge = 1 << 30;
  for (KilnBuiltinOperator code : {kKilnBuiltinMaxPool2d, kKilnBuiltinAveragePool2d, kKilnBuiltinL2Pool2d}) {
    SCOPED_TRACE(static_cast<int>(code));
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {1, 3, 3, 2}, "x");
    const int y = w.AddTensor(kKilnFloat32, {1, 3, 3, 2}, "y");
    w.AddOp(code, {x}, {y}, KilnPoolParams{kKilnPaddingSame, 1, 1, huge, huge, kKilnActNone});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    const std::vector<float> out = r.Output();
    ASSERT_EQ(out.size(), 18u);
    float expected[2] = {0, 0};
    for (int c = 0; c < 2; ++c) {
      float max = -1e30f, sum = 0, squares = 0;
      for (int i = 0; i < 9; ++i) {
        const float v = in[2 * i + c];
        max = std::max(max, v);
        sum += v;
        squares += v * v;
      }
      expected[c] = code == kKilnBuiltinMaxPool2d  ? max
                    : code == kKilnBuiltinL2Pool2d ? std::sqrt(squares / 9)
                                                   : sum / 9;
    }
    for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], expected[i % 2], 1e-5f) << i;
  }
}

// A CONV_2D over an input of 0 channels (empty tensors are valid): no group count can be derived from it, and the
// shape check used to divide by that 0 (SIGFPE: found by the interpreter fuzzer's campaign of 2026-12-05). Now
// a clean refusal at Prepare, float and int8, on both paths.
TEST(HostileModelTest, ConvolutionOverZeroChannelsIsRefused) {
  for (bool reference : {false, true}) {
    SCOPED_TRACE(reference ? "reference kernels" : "fast path");
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {1, 2, 2, 0}, "x");
    const int f = w.AddConstTensor(kKilnFloat32, {4, 1, 1, 2}, "filter", std::vector<float>(8, 1.0f));
    const int y = w.AddTensor(kKilnFloat32, {1, 2, 2, 4}, "y");
    w.AddOp(kKilnBuiltinConv2d, {x, f, -1}, {y}, KilnConvParams{kKilnPaddingValid, 1, 1, 1, 1, kKilnActNone});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w, reference);
    EXPECT_NE(r.status(), kKilnOk);
    EXPECT_NE(r.errors().find("CONV_2D: filter 'filter'"), std::string::npos) << r.errors();
    EXPECT_NE(r.errors().find("does not fit input 'x' of shape [1, 2, 2, 0]"), std::string::npos) << r.errors();
  }
}

// Outputs sized from constants that ask for absurd memory fail before anything is allocated, naming the op and
// the tensor and the limit (MaxTensorBytes: 64 GiB by default).
TEST(HostileModelTest, OutputsSizedFromConstantsAreCapped) {
  const std::vector<int32_t> huge_shape = {1 << 20, 1 << 20, 1 << 10};  // 2^50 elements
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt32, {2, 3}, "x");
    const int m = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "multiples", {1 << 20, 1 << 20});
    const int y = w.AddTensor(kKilnInt32, {2, 3}, "y");
    w.AddOp(kKilnBuiltinTile, {x, m}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectRefused(r, {"TILE", "'y'", "the limit on one tensor"});
  }
  {
    ModelWriter w;
    const int dims = w.AddConstTensor<int32_t>(kKilnInt32, {3}, "dims", huge_shape);
    const int v = w.AddTensor(kKilnFloat32, {}, "value");
    const int y = w.AddTensor(kKilnFloat32, {1}, "y");
    w.AddOp(kKilnBuiltinFill, {dims, v}, {y});
    w.SetInputs({v});
    w.SetOutputs({y});
    Runner r(w);
    ExpectRefused(r, {"FILL", "'y'", "the limit on one tensor"});
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {1}, "x");
    const int shape = w.AddConstTensor<int32_t>(kKilnInt32, {3}, "shape", huge_shape);
    const int y = w.AddTensor(kKilnFloat32, {1}, "y");
    w.SetOpVersion(w.AddOp(kKilnBuiltinBroadcastTo, {x, shape}, {y}), 2);
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectRefused(r, {"BROADCAST_TO", "'y'", "the limit on one tensor"});
  }
  {
    ModelWriter w;
    const int indices = w.AddTensor(kKilnInt32, {1 << 10}, "indices");
    const int depth = w.AddConstTensor<int32_t>(kKilnInt32, {}, "depth", {1 << 30});
    const int on = w.AddConstTensor<float>(kKilnFloat32, {}, "on", {1});
    const int off = w.AddConstTensor<float>(kKilnFloat32, {}, "off", {0});
    const int y = w.AddTensor(kKilnFloat32, {1}, "y");
    w.AddOp(kKilnBuiltinOneHot, {indices, depth, on, off}, {y}, KilnOneHotParams{-1});
    w.SetInputs({indices});
    w.SetOutputs({y});
    Runner r(w);
    ExpectRefused(r, {"ONE_HOT", "'y'", "the limit on one tensor"});
  }
  {
    ModelWriter w;
    const int indices = w.AddConstTensor<int32_t>(kKilnInt32, {1, 3}, "indices", {0, 0, 0});
    const int shape = w.AddConstTensor<int32_t>(kKilnInt32, {3}, "output_shape", huge_shape);
    const int values = w.AddTensor(kKilnFloat32, {1}, "values");
    const int fill = w.AddConstTensor<float>(kKilnFloat32, {}, "default", {0});
    const int y = w.AddTensor(kKilnFloat32, {1}, "y");
    w.AddOp(kKilnBuiltinSparseToDense, {indices, shape, values, fill}, {y});
    w.SetInputs({values});
    w.SetOutputs({y});
    Runner r(w);
    ExpectRefused(r, {"SPARSE_TO_DENSE", "'y'", "the limit on one tensor"});
  }
  {
    ModelWriter w;
    const int shape = w.AddConstTensor<int32_t>(kKilnInt32, {3}, "shape", huge_shape);
    const int y = w.AddTensor(kKilnFloat32, {1}, "y");
    w.AddOp(kKilnBuiltinRandomUniform, {shape}, {y}, KilnRandomParams{1, 2});
    w.SetOutputs({y});
    Runner r(w);
    ExpectRefused(r, {"RANDOM_UNIFORM", "'y'", "the limit on one tensor"});
  }
  {
    // A stride of 2^20 along depth, height and width makes a 1x1x1 input into a 2^60-element output.
    ModelWriter w;
    const int shape = w.AddConstTensor<int32_t>(kKilnInt32, {5}, "output_shape", {1, 1 << 20, 1 << 20, 1 << 20, 1});
    const int f = w.AddConstTensor<float>(kKilnFloat32, {1, 1, 1, 1, 1}, "filter", {1});
    const int x = w.AddTensor(kKilnFloat32, {1, 1, 1, 1, 1}, "x");
    const int y = w.AddTensor(kKilnFloat32, {1, 1, 1, 1, 1}, "y");
    w.AddOp(kKilnBuiltinConv3dTranspose, {shape, f, x}, {y},
            KilnConv3DParams{kKilnPaddingSame, 1 << 20, 1 << 20, 1 << 20, 1, 1, 1, kKilnActNone});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectRefused(r, {"CONV_3D_TRANSPOSE", "'y'"});
  }
}

// RANGE cannot exceed 2^31 elements (8 GiB of int32), under the default limit; with the limit lowered, as in the
// interpreter fuzzer, it is refused the same way.
TEST(HostileModelTest, RangeIsCappedByTheSameRule) {
  ScopedTensorLimit limit(1 << 20);
  ModelWriter w;
  const int start = w.AddConstTensor<int32_t>(kKilnInt32, {}, "start", {0});
  const int end = w.AddConstTensor<int32_t>(kKilnInt32, {}, "limit", {1 << 20});
  const int delta = w.AddConstTensor<int32_t>(kKilnInt32, {}, "delta", {1});
  const int y = w.AddTensor(kKilnInt32, {1}, "y");
  w.AddOp(kKilnBuiltinRange, {start, end, delta}, {y});
  w.SetOutputs({y});
  Runner r(w);
  ExpectRefused(r, {"RANGE", "'y'", "needs more than 1048576 bytes, the limit on one tensor"});
}

// The arena as a whole is held to the same limit: two tensors under it, together over it.
TEST(HostileModelTest, ArenaIsCappedByTheSameRule) {
  ScopedTensorLimit limit(1 << 20);
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {1 << 17}, "x");  // 512 KiB each, live at once
  const int y = w.AddTensor(kKilnFloat32, {1 << 17}, "y");
  const int z = w.AddTensor(kKilnFloat32, {1 << 17}, "z");
  w.AddOp(kKilnBuiltinAdd, {x, y}, {z}, KilnAddParams{kKilnActNone, false});
  w.SetInputs({x, y});
  w.SetOutputs({z});
  Runner r(w);
  EXPECT_NE(r.status(), kKilnOk);
  EXPECT_NE(r.errors().find("the tensor arena needs"), std::string::npos) << r.errors();
  EXPECT_NE(r.errors().find("more than the limit of 1048576 bytes"), std::string::npos) << r.errors();
}

// An empty constant (shape with a 0, no data: LiteRT takes it) runs: CONCATENATION with it is a copy.
TEST(HostileModelTest, EmptyConstantRuns) {
  for (bool zero_byte_buffer : {false, true}) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int e = zero_byte_buffer ? w.AddConstTensor(kKilnFloat32, {0, 3}, "e", nullptr, 0)
                                   : w.AddTensor(kKilnFloat32, {0, 3}, "e");
    const int y = w.AddTensor(kKilnFloat32, {2, 3}, "y");
    w.AddOp(kKilnBuiltinConcatenation, {e, x, e}, {y}, KilnConcatenationParams{0, kKilnActNone});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {1, 2, 3, 4, 5, 6};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.Output(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  }
}

// An empty input (KilnTensorCopyFromBuffer of 0 bytes from a null pointer, as `kiln run` passes an empty .npy)
// is taken, and an empty output is copied out.
TEST(HostileModelTest, EmptyInputCopiesTakeNull) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {0, 3}, "x");
  const int y = w.AddTensor(kKilnFloat32, {0, 3}, "y");
  w.AddOp(kKilnBuiltinAbs, {x}, {y});
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  EXPECT_EQ(KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(r.interpreter(), 0), nullptr, 0), kKilnOk);
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(KilnTensorCopyToBuffer(KilnInterpreterGetOutputTensor(r.interpreter(), 0), nullptr, 0), kKilnOk);
  EXPECT_EQ(r.OutputDims(), (std::vector<int>{0, 3}));
  float one = 0;
  EXPECT_EQ(KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(r.interpreter(), 0), &one, 4), kKilnInvalidArgument);
}

}  // namespace
}  // namespace kiln::ops
