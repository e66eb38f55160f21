// The compute API (kiln/compute.h) on kilnc-compiled modules, against plain C++ references.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kiln/c_api.h"
#include "kiln/compute.h"
#include "tests/kernels/kernel_test_util.h"

namespace kiln {
namespace {

using testing::KmodPath;
using testing::Messages;
using testing::UlpDistance;

class Compute : public ::testing::Test {
 protected:
  void SetUp() override {
    KilnContextOptions* options = KilnContextOptionsCreate();
    KilnContextOptionsSetErrorReporter(options, Messages::Report, &messages_);
    context_ = KilnContextCreate(options);
    KilnContextOptionsDelete(options);
    ASSERT_NE(context_, nullptr) << messages_.All();
  }
  void TearDown() override {
    for (KilnTensor* t : tensors_) KilnTensorDelete(t);
    for (KilnScript* s : scripts_) KilnScriptDelete(s);
    for (KilnModule* m : modules_) KilnModuleDelete(m);
    KilnContextDelete(context_);
  }
  KilnScript* Script(const std::string& kmod) {
    KilnModule* module = KilnModuleCreateFromFileWithErrorReporter(KmodPath(kmod).c_str(), Messages::Report, &messages_);
    if (module == nullptr) return nullptr;
    modules_.push_back(module);
    KilnScript* script = KilnScriptCreate(context_, module);
    if (script != nullptr) scripts_.push_back(script);
    return script;
  }
  KilnTensor* Tensor(KilnType type, const std::vector<int>& dims) {
    KilnTensor* t = KilnTensorCreate(context_, type, dims.data(), static_cast<int>(dims.size()));
    if (t != nullptr) tensors_.push_back(t);
    return t;
  }
  Messages messages_;
  KilnContext* context_ = nullptr;
  std::vector<KilnModule*> modules_;
  std::vector<KilnScript*> scripts_;
  std::vector<KilnTensor*> tensors_;
};

// atan in rs_fp_full: within kernel-math's documented bound for atan (5 ulp) of the double-precision result.
class AtanSizes : public Compute, public ::testing::WithParamInterface<std::vector<int>> {};

TEST_P(AtanSizes, MatchesReference) {
  KilnScript* script = Script("atan_op");
  ASSERT_NE(script, nullptr) << messages_.All();
  const float offset = 0.25f;
  ASSERT_EQ(KilnScriptSetGlobal(script, "offset", &offset, sizeof offset), kKilnOk) << messages_.All();
  const std::vector<int> dims = GetParam();
  KilnTensor* in = Tensor(kKilnFloat32, dims);
  KilnTensor* out = Tensor(kKilnFloat32, dims);
  ASSERT_TRUE(in && out);
  std::vector<float> x(KilnTensorByteSize(in) / 4);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-50.0f, 50.0f);
  for (float& v : x) v = dist(rng);
  ASSERT_EQ(KilnTensorCopyFromBuffer(in, x.data(), x.size() * 4), kKilnOk);
  ASSERT_EQ(KilnScriptForEach(script, "atan_op", &in, 1, out, nullptr), kKilnOk) << messages_.All();
  const float* y = static_cast<const float*>(KilnTensorData(out));
  int64_t worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = static_cast<float>(std::atan(static_cast<double>(x[i] + offset)));
    worst = std::max(worst, UlpDistance(y[i], want));
  }
  EXPECT_LE(worst, 5) << "worst ulp error over " << x.size() << " elements";
}

INSTANTIATE_TEST_SUITE_P(OddSizes, AtanSizes,
                         ::testing::Values(std::vector<int>{1}, std::vector<int>{7}, std::vector<int>{1000003},
                                           std::vector<int>{211, 317}, std::vector<int>{3, 5, 7, 11}));

TEST_F(Compute, GreyscaleOverRgbaImage) {
  KilnScript* script = Script("greyscale");
  ASSERT_NE(script, nullptr) << messages_.All();
  const int h = 211, w = 317;
  KilnTensor* in = Tensor(kKilnUInt8, {h, w, 4});
  KilnTensor* out = Tensor(kKilnUInt8, {h, w, 4});
  std::vector<uint8_t> px(static_cast<size_t>(h) * w * 4);
  std::mt19937 rng(1);
  for (uint8_t& v : px) v = static_cast<uint8_t>(rng());
  KilnTensorCopyFromBuffer(in, px.data(), px.size());
  ASSERT_EQ(KilnScriptForEach(script, "greyscale", &in, 1, out, nullptr), kKilnOk) << messages_.All();
  const uint8_t* o = static_cast<const uint8_t*>(KilnTensorData(out));
  int mismatches = 0;
  for (size_t p = 0; p < px.size(); p += 4) {
    const float luma = 0.299f * px[p] + 0.587f * px[p + 1] + 0.114f * px[p + 2];
    const int grey = static_cast<int>(std::min(std::max(luma + 0.5f, 0.0f), 255.0f));
    // rs_fp_relaxed: the kernel may round the weighted sum differently by one step.
    if (std::abs(o[p] - grey) > 1 || o[p] != o[p + 1] || o[p] != o[p + 2] || o[p + 3] != px[p + 3]) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0);
}

TEST_F(Compute, ReductionsSumAndMinMax) {
  KilnScript* script = Script("sum_reduce");
  ASSERT_NE(script, nullptr) << messages_.All();
  for (int n : {1, 7, 1000003}) {
    KilnTensor* in = Tensor(kKilnInt32, {n});
    std::vector<int32_t> v(n);
    int64_t want = 0;
    for (int i = 0; i < n; ++i) want += v[i] = static_cast<int32_t>((int64_t{i} * 7919) % 1000) - 500;
    KilnTensorCopyFromBuffer(in, v.data(), v.size() * 4);
    int32_t got = 0;
    ASSERT_EQ(KilnScriptReduce(script, "addint", &in, 1, &got, sizeof got, nullptr), kKilnOk) << messages_.All();
    EXPECT_EQ(got, static_cast<int32_t>(want)) << n;
  }
  KilnTensor* f = Tensor(kKilnFloat32, {211, 317});
  std::vector<float> v(211 * 317);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1e3f, 1e3f);
  for (float& x : v) x = dist(rng);
  KilnTensorCopyFromBuffer(f, v.data(), v.size() * 4);
  float minmax[2] = {0, 0};
  ASSERT_EQ(KilnScriptReduce(script, "minmax", &f, 1, minmax, sizeof minmax, nullptr), kKilnOk) << messages_.All();
  EXPECT_EQ(minmax[0], *std::min_element(v.begin(), v.end()));
  EXPECT_EQ(minmax[1], *std::max_element(v.begin(), v.end()));
  int32_t wrong = 0;
  EXPECT_EQ(KilnScriptReduce(script, "minmax", &f, 1, &wrong, sizeof wrong, nullptr), kKilnInvalidArgument);
  EXPECT_EQ(KilnScriptReduce(script, "nope", &f, 1, minmax, sizeof minmax, nullptr), kKilnInvalidArgument);
}

TEST_F(Compute, ScriptStateInitInvokablesAndGlobals) {
  KilnScript* script = Script("script_state");
  ASSERT_NE(script, nullptr) << messages_.All();
  int32_t counter = 0;
  ASSERT_EQ(KilnScriptGetGlobal(script, "gCounter", &counter, sizeof counter), kKilnOk);
  EXPECT_EQ(counter, 10) << "init() runs at creation";
  struct {
    float scale;
    int32_t counter;
  } args = {3.0f, 5};
  ASSERT_EQ(KilnScriptInvoke(script, "setScale", &args, sizeof args), kKilnOk) << messages_.All();
  float scale = 0;
  KilnScriptGetGlobal(script, "gScale", &scale, sizeof scale);
  KilnScriptGetGlobal(script, "gCounter", &counter, sizeof counter);
  EXPECT_EQ(scale, 3.0f);
  EXPECT_EQ(counter, 47);
  ASSERT_EQ(KilnScriptInvoke(script, "bump", nullptr, 0), kKilnOk) << messages_.All();
  KilnScriptGetGlobal(script, "gCounter", &counter, sizeof counter);
  EXPECT_EQ(counter, 48);
  EXPECT_TRUE(messages_.Contains("bumped")) << "rsDebug reaches the error reporter: " << messages_.All();

  const int32_t limit = 1;
  EXPECT_EQ(KilnScriptSetGlobal(script, "kLimit", &limit, sizeof limit), kKilnInvalidArgument);
  EXPECT_TRUE(messages_.Contains("const")) << messages_.All();
  EXPECT_EQ(KilnScriptSetGlobal(script, "gScale", &limit, 2), kKilnInvalidArgument);
  EXPECT_EQ(KilnScriptSetGlobal(script, "sHidden", &scale, sizeof scale), kKilnInvalidArgument);
  EXPECT_EQ(KilnScriptInvoke(script, "setScale", &args, 4), kKilnInvalidArgument);

  // A kernel reading a bound allocation and x.
  KilnTensor* lookup = Tensor(kKilnFloat32, {4});
  const float table[4] = {100, 200, 300, 400};
  KilnTensorCopyFromBuffer(lookup, table, sizeof table);
  ASSERT_EQ(KilnScriptBindAllocation(script, "gLookup", lookup), kKilnOk) << messages_.All();
  KilnTensor* in = Tensor(kKilnFloat32, {10});
  KilnTensor* out = Tensor(kKilnFloat32, {10});
  std::vector<float> x(10);
  for (int i = 0; i < 10; ++i) x[i] = 0.5f * i;
  KilnTensorCopyFromBuffer(in, x.data(), 40);
  ASSERT_EQ(KilnScriptForEach(script, "scaled", &in, 1, out, nullptr), kKilnOk) << messages_.All();
  const float* y = static_cast<const float*>(KilnTensorData(out));
  for (int i = 0; i < 10; ++i) EXPECT_FLOAT_EQ(y[i], x[i] * 3.0f + i + table[i % 4]) << i;

  // A void kernel with an atomic on a global.
  KilnTensor* ints = Tensor(kKilnInt32, {1000});
  std::vector<int32_t> iv(1000);
  int positive = 0;
  for (int i = 0; i < 1000; ++i) positive += (iv[i] = (i * 37) % 11 - 5) > 0;
  KilnTensorCopyFromBuffer(ints, iv.data(), 4000);
  KilnScriptGetGlobal(script, "gCounter", &counter, sizeof counter);
  const int before = counter;
  ASSERT_EQ(KilnScriptForEach(script, "count_positive", &ints, 1, nullptr, nullptr), kKilnOk) << messages_.All();
  KilnScriptGetGlobal(script, "gCounter", &counter, sizeof counter);
  EXPECT_EQ(counter - before, positive);
}

TEST_F(Compute, TwoScriptsHaveTheirOwnGlobals) {
  KilnScript* a = Script("atan_op");
  KilnScript* b = Script("atan_op");
  ASSERT_TRUE(a && b);
  const float one = 1.0f;
  KilnScriptSetGlobal(a, "offset", &one, 4);
  float got = -1;
  KilnScriptGetGlobal(b, "offset", &got, 4);
  EXPECT_EQ(got, 0.0f);
}

TEST_F(Compute, LaunchErrorsAreReportedNotCrashes) {
  KilnScript* script = Script("atan_op");
  KilnTensor* f = Tensor(kKilnFloat32, {8});
  KilnTensor* i = Tensor(kKilnInt32, {8});
  KilnTensor* small = Tensor(kKilnFloat32, {3});
  EXPECT_EQ(KilnScriptForEach(script, "atan_op", &i, 1, f, nullptr), kKilnInvalidArgument);
  EXPECT_TRUE(messages_.Contains("takes float elements but the tensor is int32")) << messages_.All();
  EXPECT_EQ(KilnScriptForEach(script, "atan_op", &f, 1, small, nullptr), kKilnInvalidArgument);
  EXPECT_EQ(KilnScriptForEach(script, "atan_op", &f, 1, nullptr, nullptr), kKilnInvalidArgument);
  EXPECT_EQ(KilnScriptForEach(script, "missing", &f, 1, f, nullptr), kKilnInvalidArgument);
  EXPECT_EQ(KilnScriptForEach(script, "atan_op", &f, 2, f, nullptr), kKilnInvalidArgument);
  KilnLaunchOptions range = {sizeof(KilnLaunchOptions), 2, 5, 0, 0, 0, 0};
  std::vector<float> x(8, 1.0f);
  KilnTensorCopyFromBuffer(f, x.data(), 32);
  KilnTensor* out = Tensor(kKilnFloat32, {8});
  ASSERT_EQ(KilnScriptForEach(script, "atan_op", &f, 1, out, &range), kKilnOk) << messages_.All();
  const float* y = static_cast<const float*>(KilnTensorData(out));
  for (int k = 0; k < 8; ++k) EXPECT_EQ(y[k] != 0.0f, k >= 2 && k < 5) << k;
  KilnLaunchOptions bad = {sizeof(KilnLaunchOptions), 5, 99, 0, 0, 0, 0};
  EXPECT_EQ(KilnScriptForEach(script, "atan_op", &f, 1, out, &bad), kKilnInvalidArgument);
}

TEST(ComputeModules, BadModulesGiveClearErrors) {
  Messages messages;
  std::FILE* f = std::fopen(KmodPath("atan_op").c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::vector<uint8_t> bytes(1 << 16);
  bytes.resize(std::fread(bytes.data(), 1, bytes.size(), f));
  std::fclose(f);
  for (size_t cut : {size_t{3}, size_t{16}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_EQ(KilnModuleCreateWithErrorReporter(bytes.data(), cut, Messages::Report, &messages), nullptr) << cut;
  }
  std::vector<uint8_t> wrong = bytes;
  for (size_t k = 0; k + 4 <= wrong.size(); ++k) {
    if (std::memcmp(wrong.data() + k, "KMOD", 4) == 0) {
      std::memcpy(wrong.data() + k, "XMOD", 4);
      break;
    }
  }
  messages.lines.clear();
  EXPECT_EQ(KilnModuleCreateWithErrorReporter(wrong.data(), wrong.size(), Messages::Report, &messages), nullptr);
  EXPECT_TRUE(messages.Contains("KMOD")) << messages.All();
  EXPECT_EQ(KilnModuleCreateFromFileWithErrorReporter("/nonexistent.kmod", Messages::Report, &messages), nullptr);
  EXPECT_TRUE(messages.Contains("/nonexistent.kmod")) << messages.All();
}

TEST(ComputeModules, TensorCreateRejectsBadShapes) {
  KilnContext* context = KilnContextCreate(nullptr);
  ASSERT_NE(context, nullptr);
  const int bad[2] = {3, -1};
  EXPECT_EQ(KilnTensorCreate(context, kKilnFloat32, bad, 2), nullptr);
  EXPECT_EQ(KilnTensorCreate(context, kKilnString, bad, 1), nullptr);
  KilnTensor* t = KilnTensorCreate(context, kKilnInt8, bad, 1);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(KilnTensorByteSize(t), 3u);
  KilnTensorDelete(t);
  KilnContextDelete(context);
}

}  // namespace
}  // namespace kiln
