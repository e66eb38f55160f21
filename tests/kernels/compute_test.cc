// The compute API (kiln/compute.h) on kilnc-compiled modules, against plain C++ references.
#include "kiln/compute.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

#include "kiln/c_api.h"
#include "kiln/device.h"
#include "tests/kernels/kernel_test_util.h"
#ifdef KILN_VULKAN_DRIVER
#include "tests/vulkan_probe.h"
#endif

namespace kiln {
namespace {

using testing::KmodPath;
using testing::Messages;
using testing::UlpDistance;

class Compute : public ::testing::Test {
 protected:
  void SetUp() override { Open(kKilnDeviceAuto, nullptr); }
  // A context with `policy`, loading drivers from `driver_path` when it is not NULL.
  void Open(KilnDevicePolicy policy, const char* driver_path) {
    KilnContextOptions* options = KilnContextOptionsCreate();
    KilnContextOptionsSetErrorReporter(options, Messages::Report, &messages_);
    KilnContextOptionsSetDevicePolicy(options, policy);
    if (driver_path != nullptr) KilnContextOptionsSetDriverPath(options, driver_path);
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
    KilnModule* module =
        KilnModuleCreateFromFileWithErrorReporter(KmodPath(kmod).c_str(), Messages::Report, &messages_);
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
  // Deletes a tensor of Tensor() now rather than at TearDown.
  void DeleteTensor(KilnTensor* t) {
    tensors_.erase(std::remove(tensors_.begin(), tensors_.end(), t), tensors_.end());
    KilnTensorDelete(t);
  }
  // The decision log, one "[kind] message" a line.
  std::string Decisions() const {
    std::string text;
    for (int i = 0; i < KilnContextGetDecisionCount(context_); ++i) {
      KilnDecisionKind kind;
      const char* message = nullptr;
      if (KilnContextGetDecision(context_, i, &kind, nullptr, &message) == kKilnOk) {
        text += std::string("[") + KilnDecisionKindName(kind) + "] " + message + "\n";
      }
    }
    return text;
  }
  // Memory of the test's own, freed after TearDown has deleted the tensors over it.
  float* HostFloats(size_t alignment, size_t count) {
    host_memory_.emplace_back(std::aligned_alloc(alignment, count * sizeof(float)), &std::free);
    return static_cast<float*>(host_memory_.back().get());
  }
  std::vector<std::unique_ptr<void, void (*)(void*)>> host_memory_;
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
                         ::testing::Values(std::vector<int>{1}, std::vector<int>{7},
                                           std::vector<int>{1000003}, std::vector<int>{211, 317},
                                           std::vector<int>{3, 5, 7, 11}));

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
    if (std::abs(o[p] - grey) > 1 || o[p] != o[p + 1] || o[p] != o[p + 2] || o[p + 3] != px[p + 3])
      ++mismatches;
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
    ASSERT_EQ(KilnScriptReduce(script, "addint", &in, 1, &got, sizeof got, nullptr), kKilnOk)
        << messages_.All();
    EXPECT_EQ(got, static_cast<int32_t>(want)) << n;
  }
  KilnTensor* f = Tensor(kKilnFloat32, {211, 317});
  std::vector<float> v(211 * 317);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1e3f, 1e3f);
  for (float& x : v) x = dist(rng);
  KilnTensorCopyFromBuffer(f, v.data(), v.size() * 4);
  float minmax[2] = {0, 0};
  ASSERT_EQ(KilnScriptReduce(script, "minmax", &f, 1, minmax, sizeof minmax, nullptr), kKilnOk)
      << messages_.All();
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
  ASSERT_EQ(KilnScriptForEach(script, "count_positive", &ints, 1, nullptr, nullptr), kKilnOk)
      << messages_.All();
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

// A tensor's bindings end with it: KilnTensorDelete unbinds it from every script of its context that binds
// it, on the CPU and on the accelerator, as binding NULL would. Each test runs with the CPU only and, where
// the Vulkan driver is built, with the GPU policy on it (lavapipe on machines without a GPU).
class BindingLifetime : public Compute, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "cpu") {
      Open(kKilnDeviceCpuOnly, nullptr);
      return;
    }
#ifdef KILN_VULKAN_DRIVER
    Open(kKilnDevicePreferGpu, KILN_VULKAN_DRIVER);
    if (::testing::Test::HasFatalFailure()) return;
    KILN_SKIP_UNLESS_VULKAN_USED(Decisions().find("device 0 of kiln-vulkan") != std::string::npos,
                                 Decisions() << messages_.All());
#endif
  }
  bool OnGpu() const { return GetParam() != "cpu"; }

  // A float [n] tensor holding `values`.
  KilnTensor* Floats(const std::vector<float>& values) {
    KilnTensor* t = Tensor(kKilnFloat32, {static_cast<int>(values.size())});
    if (t != nullptr) KilnTensorCopyFromBuffer(t, values.data(), values.size() * sizeof(float));
    return t;
  }
  // Indices 0..n-1, the input of bound_table's kernels.
  KilnTensor* Indices(int n) {
    KilnTensor* t = Tensor(kKilnUInt32, {n});
    std::vector<uint32_t> v(n);
    for (int i = 0; i < n; ++i) v[i] = static_cast<uint32_t>(i);
    if (t != nullptr) KilnTensorCopyFromBuffer(t, v.data(), v.size() * sizeof(uint32_t));
    return t;
  }
  // Whether `script` has a tensor bound to gWeights (on the CPU instance; see bound_table.rs).
  bool WeightsBound(KilnScript* script) {
    KilnTensor* in = Indices(1);
    KilnTensor* result = Tensor(kKilnInt32, {1});
    int32_t bound = -1;
    if (in != nullptr && result != nullptr &&
        KilnScriptForEach(script, "weights_bound", &in, 1, result, nullptr) == kKilnOk) {
      KilnTensorCopyToBuffer(result, &bound, sizeof bound);
    }
    DeleteTensor(in);
    DeleteTensor(result);
    EXPECT_TRUE(bound == 0 || bound == 1) << messages_.All();
    return bound == 1;
  }
  // Runs lookup over `n` cells on `script`, whose gTable lost its tensor to KilnTensorDelete, and on a script
  // of the same module whose gTable was never bound: the two must behave alike, and never read the deleted
  // tensor. The CPU fails the launch (an element access through a NULL allocation), and the runtime names the
  // global. A GPU driver may instead read an unbound allocation as zeros (kiln/spirv_abi.h, "Faults"; a
  // driver that reports the fault fails the launch, which the CPU then redoes and fails).
  void ExpectLookupAsUnbound(KilnScript* script, int n) {
    messages_.lines.clear();
    std::vector<float> got, reference;
    const KilnStatus status = Run(script, "lookup", n, &got);
    const std::string messages = messages_.All();
    if (status != kKilnOk) {
      EXPECT_NE(messages.find("NULL allocation"), std::string::npos) << messages;
      EXPECT_NE(messages.find("'gTable'"), std::string::npos) << messages;
      EXPECT_NE(messages.find("deleted (KilnTensorDelete) while bound"), std::string::npos) << messages;
    } else {
      EXPECT_TRUE(OnGpu()) << "the CPU ran a kernel that reads an unbound allocation: " << messages;
    }
    KilnScript* never_bound = Script("bound_table");
    ASSERT_NE(never_bound, nullptr) << messages_.All();
    messages_.lines.clear();
    EXPECT_EQ(status, Run(never_bound, "lookup", n, &reference)) << messages << messages_.All();
    if (status != kKilnOk) {
      EXPECT_NE(messages_.All().find("bound_table.kmod: note: rs_allocation global 'gTable', which the script reads "
                                     "or writes, has never had a tensor bound (bind one with "
                                     "KilnScriptBindAllocation)"),
                std::string::npos)
          << messages_.All();
    }
    EXPECT_EQ(got, reference) << "after the delete, lookup read " << ::testing::PrintToString(got);
    // The kernel's own bad access is not the device's fault (kiln/hal.h, "Launches"): redone on the CPU, it
    // quarantines nothing and counts no device fault, however often it happens; the context keeps its device.
    if (OnGpu()) {
      const std::string log = Decisions();
      EXPECT_EQ(log.find("runs there from now on"), std::string::npos) << "a bad access quarantined: " << log;
      EXPECT_EQ(log.find("device fault"), std::string::npos) << "a bad access counted as a device fault: " << log;
      EXPECT_EQ(log.find("gives the device up"), std::string::npos) << log;
      if (status != kKilnOk) {
        EXPECT_NE(log.find("(the kernel's own access failed, not the device: nothing moves off it)"),
                  std::string::npos)
            << log;
      }
    }
  }
  // Runs weigh, the weight_sum reduction and the read_weight invokable on `script`, whose gWeights has no
  // tensor (never bound, unbound, or deleted while bound when `deleted`): the runtime refuses each before any
  // driver runs it (on the CPU the generated code would dereference NULL), naming the global, and the script
  // stays usable.
  void ExpectWeighRefused(KilnScript* script, int n, bool deleted) {
    const std::string unbound = std::string("reads pointer global 'gWeights', which is not bound") +
                                (deleted ? ": its tensor was deleted (KilnTensorDelete) while bound" : "") +
                                " (bind a tensor with KilnScriptBindAllocation)";
    messages_.lines.clear();
    std::vector<float> got;
    EXPECT_EQ(Run(script, "weigh", n, &got), kKilnInvalidArgument);
    EXPECT_NE(messages_.All().find("bound_table.kmod: kernel 'weigh' " + unbound), std::string::npos)
        << messages_.All();
    EXPECT_TRUE(got.empty());

    messages_.lines.clear();
    KilnTensor* in = Indices(n);
    ASSERT_NE(in, nullptr);
    float sum = -1.0f;
    EXPECT_EQ(KilnScriptReduce(script, "weight_sum", &in, 1, &sum, sizeof sum, nullptr),
              kKilnInvalidArgument);
    EXPECT_NE(messages_.All().find("bound_table.kmod: reduction 'weight_sum' " + unbound), std::string::npos)
        << messages_.All();
    EXPECT_EQ(sum, -1.0f) << "a refused reduction wrote its result";
    DeleteTensor(in);

    messages_.lines.clear();
    const uint32_t index = 0;
    EXPECT_EQ(KilnScriptInvoke(script, "read_weight", &index, sizeof index), kKilnInvalidArgument);
    EXPECT_NE(messages_.All().find("bound_table.kmod: invokable 'read_weight' " + unbound), std::string::npos)
        << messages_.All();

    // What does not read through gWeights still runs.
    messages_.lines.clear();
    EXPECT_FALSE(WeightsBound(script));
    EXPECT_TRUE(messages_.lines.empty()) << messages_.All();
  }
  // Runs `kernel` of bound_table over `n` indices; its output in `*out` when it succeeds.
  KilnStatus Run(KilnScript* script, const char* kernel, int n, std::vector<float>* out) {
    KilnTensor* in = Indices(n);
    KilnTensor* result = Tensor(kKilnFloat32, {n});
    if (in == nullptr || result == nullptr) return kKilnError;
    const KilnStatus s = KilnScriptForEach(script, kernel, &in, 1, result, nullptr);
    if (s == kKilnOk) {
      out->resize(n);
      KilnTensorCopyToBuffer(result, out->data(), out->size() * sizeof(float));
    }
    DeleteTensor(in);
    DeleteTensor(result);
    return s;
  }
};

// A tensor whose type differs from what the script reads through the global (gTable's rsGetElementAt_float,
// gWeights' float*) is bound with a warning naming both types; a tensor of the read type binds silently.
TEST_P(BindingLifetime, BindingAnotherElementTypeWarns) {
  KilnScript* script = Script("bound_table");
  ASSERT_NE(script, nullptr) << messages_.All();
  KilnTensor* floats = Floats({1, 2, 3, 4});
  KilnTensor* ints = Indices(4);  // uint32
  ASSERT_TRUE(floats && ints);
  messages_.lines.clear();
  ASSERT_EQ(KilnScriptBindAllocation(script, "gTable", floats), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptBindAllocation(script, "gWeights", floats), kKilnOk) << messages_.All();
  EXPECT_EQ(messages_.All(), "");
  ASSERT_EQ(KilnScriptBindAllocation(script, "gTable", ints), kKilnOk) << messages_.All();
  EXPECT_NE(messages_.All().find("bound_table.kmod: warning: 'gTable' is read and written as float32 (its "
                                 "rsGetElementAt_/rsSetElementAt_ accessors), but the tensor bound to it holds "
                                 "uint32: its bytes will be taken as float32"),
            std::string::npos)
      << messages_.All();
  messages_.lines.clear();
  ASSERT_EQ(KilnScriptBindAllocation(script, "gWeights", ints), kKilnOk) << messages_.All();
  EXPECT_NE(messages_.All().find("warning: 'gWeights' is read and written as float32 (its pointee type), but the "
                                 "tensor bound to it holds uint32"),
            std::string::npos)
      << messages_.All();
  KilnScriptBindAllocation(script, "gTable", nullptr);
  KilnScriptBindAllocation(script, "gWeights", nullptr);
  DeleteTensor(floats);
  DeleteTensor(ints);
}

TEST_P(BindingLifetime, DeletedTensorLeavesItsGlobalsUnbound) {
  KilnScript* script = Script("bound_table");
  ASSERT_NE(script, nullptr) << messages_.All();
  KilnTensor* table = Floats({10, 20, 30, 40});
  KilnTensor* weights = Floats({0.5f, 1.5f, 2.5f, 3.5f});
  ASSERT_TRUE(table && weights);
  ASSERT_EQ(KilnScriptBindAllocation(script, "gTable", table), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptBindAllocation(script, "gWeights", weights), kKilnOk) << messages_.All();
  std::vector<float> got;
  ASSERT_EQ(Run(script, "lookup", 4, &got), kKilnOk) << messages_.All();
  EXPECT_EQ(got, (std::vector<float>{10, 20, 30, 40}));
  if (OnGpu()) {
    EXPECT_NE(Decisions().find("kernel lookup (bound_table.kmod) runs on kiln-vulkan"), std::string::npos)
        << Decisions();
  }

  // The tensor goes while still bound: the next launch reads an unbound allocation, never the freed tensor.
  DeleteTensor(table);
  ExpectLookupAsUnbound(script, 4);
  // The other global keeps its tensor.
  ASSERT_EQ(Run(script, "weigh", 4, &got), kKilnOk) << messages_.All();
  EXPECT_EQ(got, (std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f}));

  // The same for a pointer global: the script no longer points at the tensor, launches that do not read it
  // run, and one that reads it is refused (ExpectWeighRefused).
  EXPECT_TRUE(WeightsBound(script));
  DeleteTensor(weights);
  EXPECT_FALSE(WeightsBound(script));
  ExpectWeighRefused(script, 4, /*deleted=*/true);

  // A new tensor binds as usual afterwards.
  KilnTensor* other = Floats({-1, -2, -3, -4});
  ASSERT_NE(other, nullptr);
  ASSERT_EQ(KilnScriptBindAllocation(script, "gTable", other), kKilnOk) << messages_.All();
  ASSERT_EQ(Run(script, "lookup", 4, &got), kKilnOk) << messages_.All();
  EXPECT_EQ(got, (std::vector<float>{-1, -2, -3, -4}));
}

TEST_P(BindingLifetime, EveryScriptBindingTheTensorForgetsIt) {
  KilnScript* a = Script("bound_table");
  KilnScript* b = Script("bound_table");
  ASSERT_TRUE(a && b) << messages_.All();
  KilnTensor* shared = Floats({1, 2, 3});
  KilnTensor* kept = Floats({7, 8, 9});
  ASSERT_TRUE(shared && kept);
  // `shared` is bound twice in `a` (both globals) and once in `b`; `kept` only in `b`.
  ASSERT_EQ(KilnScriptBindAllocation(a, "gTable", shared), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptBindAllocation(a, "gWeights", shared), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptBindAllocation(b, "gTable", shared), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptBindAllocation(b, "gWeights", kept), kKilnOk) << messages_.All();
  std::vector<float> got;
  for (KilnScript* s : {a, b}) {
    ASSERT_EQ(Run(s, "lookup", 3, &got), kKilnOk) << messages_.All();
    EXPECT_EQ(got, (std::vector<float>{1, 2, 3}));
  }
  EXPECT_TRUE(WeightsBound(a));
  DeleteTensor(shared);
  ExpectLookupAsUnbound(a, 3);
  EXPECT_FALSE(WeightsBound(a));
  ExpectLookupAsUnbound(b, 3);
  EXPECT_TRUE(WeightsBound(b));
  ASSERT_EQ(Run(b, "weigh", 3, &got), kKilnOk) << messages_.All();
  EXPECT_EQ(got, (std::vector<float>{7, 8, 9}));
  ExpectWeighRefused(a, 3, /*deleted=*/true);
}

TEST_P(BindingLifetime, UnboundTensorsDeleteAndRebindAsBefore) {
  KilnScript* script = Script("bound_table");
  ASSERT_NE(script, nullptr) << messages_.All();
  KilnTensor* first = Floats({5, 6});
  KilnTensor* never_bound = Floats({0, 0});
  ASSERT_TRUE(first && never_bound);
  ASSERT_EQ(KilnScriptBindAllocation(script, "gTable", first), kKilnOk) << messages_.All();
  // Deleting a tensor no script binds touches no binding, and says nothing.
  DeleteTensor(never_bound);
  std::vector<float> got;
  ASSERT_EQ(Run(script, "lookup", 2, &got), kKilnOk) << messages_.All();
  EXPECT_EQ(got, (std::vector<float>{5, 6}));
  // Unbound first (NULL), then deleted: as before.
  ASSERT_EQ(KilnScriptBindAllocation(script, "gTable", nullptr), kKilnOk) << messages_.All();
  DeleteTensor(first);
  KilnTensor* second = Floats({11, 12});
  ASSERT_NE(second, nullptr);
  ASSERT_EQ(KilnScriptBindAllocation(script, "gTable", second), kKilnOk) << messages_.All();
  ASSERT_EQ(Run(script, "lookup", 2, &got), kKilnOk) << messages_.All();
  EXPECT_EQ(got, (std::vector<float>{11, 12}));
  EXPECT_TRUE(messages_.lines.empty()) << messages_.All();
  // Rebinding a global to another tensor ends the old binding: deleting the old tensor leaves the new one.
  KilnTensor* third = Floats({21, 22});
  ASSERT_NE(third, nullptr);
  ASSERT_EQ(KilnScriptBindAllocation(script, "gTable", third), kKilnOk) << messages_.All();
  DeleteTensor(second);
  ASSERT_EQ(Run(script, "lookup", 2, &got), kKilnOk) << messages_.All();
  EXPECT_EQ(got, (std::vector<float>{21, 22}));
  // A script deleted before the tensors it binds: the tensors delete as usual.
  KilnScript* gone = Script("bound_table");
  ASSERT_NE(gone, nullptr) << messages_.All();
  ASSERT_EQ(KilnScriptBindAllocation(gone, "gTable", third), kKilnOk) << messages_.All();
  scripts_.erase(std::remove(scripts_.begin(), scripts_.end(), gone), scripts_.end());
  KilnScriptDelete(gone);
  DeleteTensor(third);
  ExpectLookupAsUnbound(script, 2);
}

// A pointer global read with no tensor ever bound, or bound and then unbound with NULL: refused, not a NULL
// dereference; binding a tensor afterwards makes the same launches run.
TEST_P(BindingLifetime, UnboundPointerGlobalIsRefused) {
  KilnScript* script = Script("bound_table");
  ASSERT_NE(script, nullptr) << messages_.All();
  ExpectWeighRefused(script, 4, /*deleted=*/false);

  KilnTensor* weights = Floats({0.5f, 1.5f, 2.5f, 3.5f});
  ASSERT_NE(weights, nullptr);
  ASSERT_EQ(KilnScriptBindAllocation(script, "gWeights", weights), kKilnOk) << messages_.All();
  std::vector<float> got;
  ASSERT_EQ(Run(script, "weigh", 4, &got), kKilnOk) << messages_.All();
  EXPECT_EQ(got, (std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f}));
  KilnTensor* in = Indices(4);
  ASSERT_NE(in, nullptr);
  float sum = 0.0f;
  ASSERT_EQ(KilnScriptReduce(script, "weight_sum", &in, 1, &sum, sizeof sum, nullptr), kKilnOk)
      << messages_.All();
  // On the GPU too: a reduction whose shader reads an allocation also declares the fault record (binding 27).
  EXPECT_EQ(sum, 8.0f) << messages_.All() << Decisions();
  const uint32_t index = 2;
  ASSERT_EQ(KilnScriptInvoke(script, "read_weight", &index, sizeof index), kKilnOk) << messages_.All();
  float last = 0.0f;
  ASSERT_EQ(KilnScriptGetGlobal(script, "gLastWeight", &last, sizeof last), kKilnOk) << messages_.All();
  EXPECT_EQ(last, 2.5f);

  // Unbinding with NULL is the same as never binding (the tensor lives on: not "deleted").
  ASSERT_EQ(KilnScriptBindAllocation(script, "gWeights", nullptr), kKilnOk) << messages_.All();
  ExpectWeighRefused(script, 4, /*deleted=*/false);
}

// Deleting the bound tensor, with no other tensor bound to anything: the next launches are refused and say
// why.
TEST_P(BindingLifetime, PointerGlobalOfDeletedTensorIsRefused) {
  KilnScript* script = Script("bound_table");
  ASSERT_NE(script, nullptr) << messages_.All();
  KilnTensor* weights = Floats({4, 3, 2, 1});
  ASSERT_NE(weights, nullptr);
  ASSERT_EQ(KilnScriptBindAllocation(script, "gWeights", weights), kKilnOk) << messages_.All();
  std::vector<float> got;
  ASSERT_EQ(Run(script, "weigh", 4, &got), kKilnOk) << messages_.All();
  EXPECT_EQ(got, (std::vector<float>{4, 3, 2, 1}));
  DeleteTensor(weights);
  ExpectWeighRefused(script, 4, /*deleted=*/true);
  // A new tensor ends the refusal.
  KilnTensor* other = Floats({9, 8, 7, 6});
  ASSERT_NE(other, nullptr);
  ASSERT_EQ(KilnScriptBindAllocation(script, "gWeights", other), kKilnOk) << messages_.All();
  ASSERT_EQ(Run(script, "weigh", 4, &got), kKilnOk) << messages_.All();
  EXPECT_EQ(got, (std::vector<float>{9, 8, 7, 6}));
}

INSTANTIATE_TEST_SUITE_P(Devices, BindingLifetime,
                         ::testing::Values(std::string("cpu")
#ifdef KILN_VULKAN_DRIVER
                                               ,
                                           std::string("vulkan")
#endif
                                               ),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// One tensor, one memory (issue #12): a launch's input or output that is also bound to a global of the same
// script, or a tensor bound to two globals, shows the same bytes afterwards on every device. On lavapipe the
// tensors of KilnTensorCreate are copied, not wrapped (64-byte aligned; wrapping needs 4096), which is the
// path where a launch and a binding could be two memories.
class OneMemory : public BindingLifetime {
 protected:
  std::vector<float> Values(KilnTensor* t) {
    std::vector<float> v(KilnTensorByteSize(t) / sizeof(float));
    KilnTensorCopyToBuffer(t, v.data(), v.size() * sizeof(float));
    return v;
  }
  // Whether the last launches ran on the Vulkan driver, from the decision log.
  void ExpectOnGpuWhereAsked(const char* kernel) {
    if (!OnGpu()) return;
    const std::string log = Decisions();
    EXPECT_NE(log.find(std::string("kernel ") + kernel + " (one_memory.kmod) runs on kiln-vulkan"), std::string::npos)
        << log;
  }
};

TEST_P(OneMemory, BoundOutputShowsTheLaunchResult) {
  KilnScript* script = Script("one_memory");
  ASSERT_NE(script, nullptr) << messages_.All();
  KilnTensor* in = Floats({1, 2, 3, 4, 5, 6, 7});
  KilnTensor* out = Floats({0, 0, 0, 0, 0, 0, 0});
  ASSERT_EQ(KilnScriptBindAllocation(script, "gOut", out), kKilnOk) << messages_.All();
  for (int round = 0; round < 2; ++round) {
    ASSERT_EQ(KilnScriptForEach(script, "twice", &in, 1, out, nullptr), kKilnOk) << messages_.All();
    EXPECT_EQ(Values(out), (std::vector<float>{2, 4, 6, 8, 10, 12, 14})) << "round " << round << "\n"
                                                                          << Decisions();
    ASSERT_EQ(KilnScriptForEach(script, "twice", &out, 1, in, nullptr), kKilnOk) << messages_.All();
    ASSERT_EQ(KilnScriptForEach(script, "twice", &in, 1, out, nullptr), kKilnOk) << messages_.All();
    EXPECT_EQ(Values(out), (std::vector<float>{8, 16, 24, 32, 40, 48, 56})) << "round " << round;
    KilnTensorCopyFromBuffer(in, std::vector<float>{1, 2, 3, 4, 5, 6, 7}.data(), 7 * sizeof(float));
  }
  ExpectOnGpuWhereAsked("twice");
}

TEST_P(OneMemory, BoundInputAndOutputTogether) {
  KilnScript* script = Script("one_memory");
  ASSERT_NE(script, nullptr) << messages_.All();
  KilnTensor* in = Floats({1.5f, -2, 3, 100});
  KilnTensor* out = Floats({9, 9, 9, 9});
  ASSERT_EQ(KilnScriptBindAllocation(script, "gIn", in), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptForEach(script, "plus_bound_input", &in, 1, out, nullptr), kKilnOk) << messages_.All();
  EXPECT_EQ(Values(out), (std::vector<float>{3, -4, 6, 200}));
  ASSERT_EQ(KilnScriptBindAllocation(script, "gOut", out), kKilnOk) << messages_.All();
  KilnTensorCopyFromBuffer(in, std::vector<float>{1, 2, 3, 4}.data(), 4 * sizeof(float));
  ASSERT_EQ(KilnScriptForEach(script, "plus_bound_input", &in, 1, out, nullptr), kKilnOk) << messages_.All();
  EXPECT_EQ(Values(out), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(Values(in), (std::vector<float>{1, 2, 3, 4}));
  ExpectOnGpuWhereAsked("plus_bound_input");
}

TEST_P(OneMemory, TensorBoundToTwoGlobals) {
  KilnScript* script = Script("one_memory");
  ASSERT_NE(script, nullptr) << messages_.All();
  KilnTensor* in = Floats({10, 20, 30});
  KilnTensor* out = Floats({0, 0, 0});
  KilnTensor* shared = Floats({-1, -1, -1});
  ASSERT_EQ(KilnScriptBindAllocation(script, "gA", shared), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptBindAllocation(script, "gB", shared), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptForEach(script, "store_through_a", &in, 1, out, nullptr), kKilnOk) << messages_.All();
  EXPECT_EQ(Values(shared), (std::vector<float>{11, 21, 31})) << Decisions();
  EXPECT_EQ(Values(out), (std::vector<float>{10, 20, 30}));
  ExpectOnGpuWhereAsked("store_through_a");
}

// The same with tensors of a page or more, which KilnTensorCreate page-aligns: lavapipe wraps them (the wrap
// path) unless KILN_VULKAN_FORCE_STAGING=1 (the vulkan_staged ctest), where the device copies them.
TEST_P(OneMemory, LargeBoundTensorsOnEitherPath) {
  KilnScript* script = Script("one_memory");
  ASSERT_NE(script, nullptr) << messages_.All();
  const int n = 3000;
  std::vector<float> x(n), zeros(n, 0.0f);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 97) - 40.0f;
  KilnTensor* in = Floats(x);
  KilnTensor* out = Floats(zeros);
  KilnTensor* shared = Floats(zeros);
  ASSERT_EQ(reinterpret_cast<uintptr_t>(KilnTensorData(in)) % 4096, 0u) << "a page or more is page-aligned";
  ASSERT_EQ(KilnScriptBindAllocation(script, "gOut", out), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptBindAllocation(script, "gIn", in), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptForEach(script, "plus_bound_input", &in, 1, out, nullptr), kKilnOk) << messages_.All();
  std::vector<float> twice(n), plus_one(n);
  for (int i = 0; i < n; ++i) twice[i] = 2 * x[i], plus_one[i] = x[i] + 1;
  EXPECT_EQ(Values(out), twice);
  ASSERT_EQ(KilnScriptBindAllocation(script, "gA", shared), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptBindAllocation(script, "gB", shared), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptForEach(script, "store_through_a", &in, 1, out, nullptr), kKilnOk) << messages_.All();
  EXPECT_EQ(Values(shared), plus_one);
  EXPECT_EQ(Values(out), x);
  ExpectOnGpuWhereAsked("store_through_a");
}

// The caller's memory as tensors (KilnTensorCreateFromHostMemory): launches and bindings read and write it in
// place, and the caller sees every result in its own arrays, on each device: the CPU driver uses the memory as
// it is, lavapipe wraps the page-aligned arrays and copies the 64-byte-aligned one.
TEST_P(OneMemory, HostMemoryTensorsAreTheCallersArrays) {
  KilnScript* script = Script("one_memory");
  ASSERT_NE(script, nullptr) << messages_.All();
  const int n = 1024;  // one page of floats
  float* in = HostFloats(4096, n);
  float* out = HostFloats(4096, n);
  float* small = HostFloats(64, 16);
  for (int i = 0; i < n; ++i) in[i] = static_cast<float>(i % 31) - 7.0f, out[i] = -1.0f;
  for (int i = 0; i < 16; ++i) small[i] = static_cast<float>(i);
  const int dims[1] = {n}, small_dims[1] = {16};
  KilnTensor* tin = KilnTensorCreateFromHostMemory(context_, kKilnFloat32, dims, 1, in, n * sizeof(float));
  KilnTensor* tout = KilnTensorCreateFromHostMemory(context_, kKilnFloat32, dims, 1, out, n * sizeof(float));
  KilnTensor* tsmall = KilnTensorCreateFromHostMemory(context_, kKilnFloat32, small_dims, 1, small, 64);
  ASSERT_TRUE(tin && tout && tsmall) << messages_.All();
  tensors_.insert(tensors_.end(), {tin, tout, tsmall});
  EXPECT_EQ(KilnTensorData(tin), in) << "the tensor is the caller's memory, not a copy";
  ASSERT_EQ(KilnScriptBindAllocation(script, "gIn", tin), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptForEach(script, "plus_bound_input", &tin, 1, tout, nullptr), kKilnOk) << messages_.All();
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], 2 * in[i]) << i << "\n" << Decisions();
  // A write by the caller after binding is what the next launch reads.
  in[5] = 1000.0f;
  ASSERT_EQ(KilnScriptForEach(script, "plus_bound_input", &tin, 1, tout, nullptr), kKilnOk) << messages_.All();
  EXPECT_EQ(out[5], 2000.0f);
  ASSERT_EQ(KilnScriptForEach(script, "twice", &tsmall, 1, tsmall, nullptr), kKilnOk) << messages_.All();
  for (int i = 0; i < 16; ++i) EXPECT_EQ(small[i], 2.0f * i) << i;
  ExpectOnGpuWhereAsked("plus_bound_input");

  // What it refuses, each with a message naming the problem.
  messages_.lines.clear();
  EXPECT_EQ(KilnTensorCreateFromHostMemory(context_, kKilnFloat32, small_dims, 1, small + 1, 60), nullptr);
  EXPECT_TRUE(messages_.Contains("not aligned to 64 bytes")) << messages_.All();
  EXPECT_EQ(KilnTensorCreateFromHostMemory(context_, kKilnFloat32, small_dims, 1, small, 60), nullptr);
  EXPECT_TRUE(messages_.Contains("holds 60 bytes, but the shape and type need 64")) << messages_.All();
  EXPECT_EQ(KilnTensorCreateFromHostMemory(context_, kKilnFloat32, small_dims, 1, nullptr, 64), nullptr);
  EXPECT_TRUE(messages_.Contains("the memory is NULL")) << messages_.All();
  EXPECT_EQ(KilnTensorCreateFromHostMemory(context_, kKilnString, small_dims, 1, small, 64), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Devices, OneMemory,
                         ::testing::Values(std::string("cpu")
#ifdef KILN_VULKAN_DRIVER
                                               ,
                                           std::string("vulkan")
#endif
                                               ),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// rsRand on the CPU driver and on the Vulkan driver (issue #12): every form stays in its range, the values of a
// launch are roughly uniform, two calls in one cell differ, and each launch draws a new stream.
class RandomStreams : public BindingLifetime {
 protected:
  template <typename T>
  std::vector<T> Run(KilnScript* script, const char* kernel, std::vector<int> dims, KilnType type) {
    KilnTensor* out = Tensor(type, dims);
    std::vector<T> v;
    if (out == nullptr || KilnScriptForEach(script, kernel, nullptr, 0, out, nullptr) != kKilnOk) {
      ADD_FAILURE() << kernel << ": " << messages_.All();
      return v;
    }
    v.resize(KilnTensorByteSize(out) / sizeof(T));
    KilnTensorCopyToBuffer(out, v.data(), v.size() * sizeof(T));
    if (OnGpu()) {
      EXPECT_NE(Decisions().find(std::string("kernel ") + kernel + " (random_streams.kmod) runs on kiln-vulkan"),
                std::string::npos)
          << Decisions();
    }
    return v;
  }
};

TEST_P(RandomStreams, RangesUniformityAndFreshStreams) {
  KilnScript* script = Script("random_streams");
  ASSERT_NE(script, nullptr) << messages_.All();
  const int n = 1 << 16;
  const std::vector<float> first = Run<float>(script, "two_units", {n, 2}, kKilnFloat32);
  const std::vector<float> second = Run<float>(script, "two_units", {n, 2}, kKilnFloat32);
  ASSERT_EQ(first.size(), 2u * n);
  ASSERT_EQ(second.size(), 2u * n);
  std::vector<double> hist(16);
  double sum = 0;
  int same_cell = 0, same_launch = 0, bad = 0;
  for (int i = 0; i < n; ++i) {
    for (int l = 0; l < 2; ++l) {
      const float v = first[2 * i + l];
      if (!(v >= 0.0f && v < 1.0f)) {
        if (bad++ < 5) ADD_FAILURE() << "rsRand(1.0f) = " << v;
        continue;
      }
      ++hist[static_cast<int>(v * 16)];
      sum += v;
    }
    same_cell += first[2 * i] == first[2 * i + 1];
    same_launch += first[2 * i] == second[2 * i];
  }
  // 24-bit values: among 2^16 pairs a few equal ones are chance (expected about 0.004 each).
  EXPECT_LE(same_cell, 4) << "two calls in one cell repeat";
  EXPECT_LE(same_launch, 4) << "the second launch repeats the first";
  double chi2 = 0;
  const double expect = 2.0 * n / hist.size();
  for (double h : hist) chi2 += (h - expect) * (h - expect) / expect;
  EXPECT_LT(chi2, 60.0) << "15 degrees of freedom: far beyond p = 1e-6";
  EXPECT_NEAR(sum / (2.0 * n), 0.5, 6 * std::sqrt(1.0 / 12.0 / (2.0 * n)));

  const std::vector<int32_t> ints = Run<int32_t>(script, "ints", {n}, kKilnInt32);
  ASSERT_EQ(ints.size(), static_cast<size_t>(n));
  int low = 0, high = 0;
  for (int32_t v : ints) {
    if (v < -7 || v >= 1000) {
      if (bad++ < 5) ADD_FAILURE() << "rsRand(-7, 1000) = " << v;
    }
    low += v == -7;
    high += v == 999;
  }
  EXPECT_GT(low, 0);  // both ends are reached (about 65 each)
  EXPECT_GT(high, 0);
  for (int32_t v : Run<int32_t>(script, "empty_ranges", {100}, kKilnInt32)) ASSERT_EQ(v, 95);
  int negative = 0;
  for (int32_t v : Run<int32_t>(script, "whole_range", {4096}, kKilnInt32)) negative += v < 0;
  EXPECT_GT(negative, 1700);  // about half of 4096
  EXPECT_LT(negative, 2400);
}

INSTANTIATE_TEST_SUITE_P(Devices, RandomStreams,
                         ::testing::Values(std::string("cpu")
#ifdef KILN_VULKAN_DRIVER
                                               ,
                                           std::string("vulkan")
#endif
                                               ),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// Math through the compute API on the CPU driver and on the Vulkan driver (issue #12 item 5): under
// rs_fp_imprecise small arguments keep their relative accuracy (docs/kernel-math.md, "GPU forms and precision
// pragmas"; the full sweep over every binade is GpuLoweringVulkanTest in tests/gpu_lowering).
class MathOnEveryDevice : public RandomStreams {};

TEST_P(MathOnEveryDevice, ImpreciseHyperbolicsOfSmallArgumentsAreAccurate) {
  KilnScript* script = Script("math_pragmas");
  ASSERT_NE(script, nullptr) << messages_.All();
  const std::vector<float> in = {1e-8f, -1e-30f, 1e-4f, -0.001f, 0.3f, -2.0f, 10.0f, 0x1p-100f};
  KilnTensor* t = Floats(in);
  ASSERT_NE(t, nullptr);
  const int n = static_cast<int>(in.size());
  KilnTensor* out = Tensor(kKilnFloat32, {n});
  KilnTensor* out4 = Tensor(kKilnFloat32, {n, 4});
  ASSERT_EQ(KilnScriptForEach(script, "imprecise_sinh", &t, 1, out, nullptr), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptForEach(script, "imprecise_mix", &t, 1, out4, nullptr), kKilnOk) << messages_.All();
  if (OnGpu()) {
    for (const char* kernel : {"imprecise_sinh", "imprecise_mix"}) {
      EXPECT_NE(Decisions().find(std::string("kernel ") + kernel + " (math_pragmas.kmod) runs on kiln-vulkan"),
                std::string::npos)
          << Decisions();
    }
  }
  std::vector<float> s(n), m(4 * n);
  KilnTensorCopyToBuffer(out, s.data(), s.size() * sizeof(float));
  KilnTensorCopyToBuffer(out4, m.data(), m.size() * sizeof(float));
  // Error in ulps of the exact (long double) result.
  const auto ulps = [](float got, long double exact) {
    int e = 0;
    std::frexp(std::fabs(exact), &e);
    return static_cast<double>(std::fabs(got - exact) / std::ldexp(1.0L, std::max(e - 24, -149)));
  };
  for (int i = 0; i < n; ++i) {
    const long double x = in[i];
    EXPECT_LE(ulps(s[i], std::sinh(x)), 4.0) << "sinh(" << in[i] << ") = " << s[i];
    EXPECT_LE(ulps(m[4 * i], std::cosh(x)), 4.0) << "cosh(" << in[i] << ") = " << m[4 * i];
    EXPECT_LE(ulps(m[4 * i + 1], std::tanh(x)), 5.0) << "tanh(" << in[i] << ") = " << m[4 * i + 1];
    EXPECT_LE(ulps(m[4 * i + 2], std::sin(x)), 256.0) << "native_sin(" << in[i] << ") = " << m[4 * i + 2];
    if (std::fabs(x) >= 0x1p-20L) {  // pow: native_powr's domain on the GPU
      EXPECT_LE(ulps(m[4 * i + 3], x * x * x), 8192.0) << "pow(" << in[i] << ", 3) = " << m[4 * i + 3];
    }
  }
  EXPECT_EQ(s[0], 1e-8f);    // the example: 2.98e-8 before
  EXPECT_EQ(s[1], -1e-30f);  // and -2.98e-8
}

INSTANTIATE_TEST_SUITE_P(Devices, MathOnEveryDevice,
                         ::testing::Values(std::string("cpu")
#ifdef KILN_VULKAN_DRIVER
                                               ,
                                           std::string("vulkan")
#endif
                                               ),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// rsSample (issue #12): every wrap mode and filter, 1D and 2D, float4 and uchar4 images, coordinates inside,
// outside and far outside [0, 1] (and NaN), against a plain C++ reference of docs/kernel-language.md's sampling
// rules, on the CPU driver and with the GPU policy on Vulkan (where every kernel of sampler.rs runs).
namespace sampler_ref {
constexpr uint32_t kNearest = 0, kLinear = 1, kLinearMipLinear = 2, kWrap = 3, kClamp = 4, kLinearMipNearest = 5,
                   kMirrored = 6;
struct Sampler {  // rs_sampler's 24 bytes
  uint32_t min_filter, mag_filter, wrap_s, wrap_t, wrap_r;
  float anisotropy;
};
int Index(float v) {
  if (std::isnan(v)) v = 0;
  v = std::min(std::max(v, -16777216.0f), 16777216.0f);
  return static_cast<int>(std::floor(v));
}
int Wrap(uint32_t mode, int i, int n) {
  if (mode == kWrap) return ((i % n) + n) % n;
  if (mode == kMirrored) {
    const int m = ((i % (2 * n)) + 2 * n) % (2 * n);
    return m < n ? m : 2 * n - 1 - m;
  }
  return std::min(std::max(i, 0), n - 1);
}
// image: w x h texels of 4 floats (already divided by 255 for uchar4 images).
std::array<float, 4> Sample(const std::vector<float>& image, int w, int h, const Sampler& s, float u_in, float v_in,
                            bool two_d, float lod) {
  const int hh = two_d ? h : 1;
  const auto texel = [&](int x, int y) {
    std::array<float, 4> t;
    for (int c = 0; c < 4; ++c) t[c] = image[(static_cast<size_t>(y) * w + x) * 4 + c];
    return t;
  };
  const uint32_t filter = lod <= 0 ? s.mag_filter : s.min_filter;
  if (filter == kNearest) {
    return texel(Wrap(s.wrap_s, Index(u_in * w), w), two_d ? Wrap(s.wrap_t, Index(v_in * hh), hh) : 0);
  }
  const float u = u_in * w - 0.5f, v = two_d ? v_in * hh - 0.5f : 0.0f;
  const int iu = Index(u), iv = Index(v);
  const float tu = std::isnan(u) ? 0 : std::min(std::max(u - iu, 0.0f), 1.0f);
  const float tv = !two_d || std::isnan(v) ? 0 : std::min(std::max(v - iv, 0.0f), 1.0f);
  const int x0 = Wrap(s.wrap_s, iu, w), x1 = Wrap(s.wrap_s, iu + 1, w);
  const int y0 = two_d ? Wrap(s.wrap_t, iv, hh) : 0, y1 = two_d ? Wrap(s.wrap_t, iv + 1, hh) : 0;
  std::array<float, 4> r;
  for (int c = 0; c < 4; ++c) {
    const float top = texel(x0, y0)[c] + (texel(x1, y0)[c] - texel(x0, y0)[c]) * tu;
    const float bottom = texel(x0, y1)[c] + (texel(x1, y1)[c] - texel(x0, y1)[c]) * tu;
    r[c] = top + (bottom - top) * tv;
  }
  return r;
}
}  // namespace sampler_ref

class Samplers : public RandomStreams {};

TEST_P(Samplers, EveryWrapModeAndFilterMatchesTheReference) {
  using namespace sampler_ref;
  KilnScript* script = Script("sampler");
  ASSERT_NE(script, nullptr) << messages_.All();
  const int w = 7, h = 5;
  std::vector<float> texels(static_cast<size_t>(w) * h * 4);
  std::vector<uint8_t> pixels(texels.size());
  for (size_t i = 0; i < texels.size(); ++i) {
    pixels[i] = static_cast<uint8_t>((i * 37 + 11) % 256);
    texels[i] = static_cast<float>(i % 13) - 3.5f + 0.25f * static_cast<float>(i % 3);
  }
  KilnTensor* float_image = Tensor(kKilnFloat32, {h, w, 4});
  KilnTensor* uchar_image = Tensor(kKilnUInt8, {h, w, 4});
  KilnTensorCopyFromBuffer(float_image, texels.data(), texels.size() * sizeof(float));
  KilnTensorCopyFromBuffer(uchar_image, pixels.data(), pixels.size());
  std::vector<float> uv;
  for (float u : {0.0f, 0.05f, 0.5f, 0.93f, 1.0f, -0.3f, 1.7f, -2.45f, 3.3f, 1e6f, -1e9f, NAN}) {
    for (float v : {0.0f, 0.31f, 0.999f, -0.6f, 2.2f, NAN}) {
      uv.push_back(u);
      uv.push_back(v);
    }
  }
  const int n = static_cast<int>(uv.size() / 2);
  KilnTensor* coords = Tensor(kKilnFloat32, {n, 2});
  KilnTensorCopyFromBuffer(coords, uv.data(), uv.size() * sizeof(float));
  KilnTensor* out = Tensor(kKilnFloat32, {n, 4});
  int checked = 0;
  for (const bool bytes : {false, true}) {
    if (bytes) {
      ASSERT_EQ(KilnScriptBindAllocation(script, "gImage", uchar_image), kKilnOk) << messages_.All();
    } else {
      ASSERT_EQ(KilnScriptBindAllocationWithElement(script, "gImage", float_image, 4), kKilnOk) << messages_.All();
    }
    std::vector<float> image = texels;
    if (bytes) {
      for (size_t i = 0; i < image.size(); ++i) image[i] = static_cast<float>(pixels[i]) * (1.0f / 255.0f);
    }
    for (uint32_t mag : {kNearest, kLinear}) {
      for (uint32_t min : {kNearest, kLinear, kLinearMipNearest, kLinearMipLinear}) {
        for (uint32_t wrap_s : {kClamp, kWrap, kMirrored}) {
          for (uint32_t wrap_t : {kClamp, kWrap, kMirrored}) {
            const Sampler s{min, mag, wrap_s, wrap_t, kClamp, 1.0f};
            ASSERT_EQ(KilnScriptSetGlobal(script, "gSampler", &s, sizeof(s)), kKilnOk) << messages_.All();
            for (const char* kernel : {"sample_2d", "sample_2d_lod", "sample_1d"}) {
              const bool two_d = std::string(kernel) != "sample_1d";
              const float lod = std::string(kernel) == "sample_2d_lod" ? 2.0f : 0.0f;
              ASSERT_EQ(KilnScriptForEach(script, kernel, &coords, 1, out, nullptr), kKilnOk) << messages_.All();
              std::vector<float> got(static_cast<size_t>(n) * 4);
              KilnTensorCopyToBuffer(out, got.data(), got.size() * sizeof(float));
              for (int i = 0; i < n; ++i) {
                const auto want = Sample(image, w, h, s, uv[2 * i], uv[2 * i + 1], two_d, lod);
                for (int c = 0; c < 4; ++c) {
                  ASSERT_NEAR(got[4 * i + c], want[c], 1e-5f)
                      << kernel << (bytes ? " uchar4" : " float4") << " min " << min << " mag " << mag << " wrap "
                      << wrap_s << "/" << wrap_t << " at (" << uv[2 * i] << ", " << uv[2 * i + 1] << ") lane " << c;
                }
                ++checked;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 2 * 4 * 3 * 3 * 3 * n);
  // rsSamplerGet*: on the GPU with the GPU policy.
  const Sampler s{kLinearMipNearest, kLinear, kMirrored, kWrap, kClamp, 2.0f};
  ASSERT_EQ(KilnScriptSetGlobal(script, "gSampler", &s, sizeof(s)), kKilnOk) << messages_.All();
  KilnTensor* fields = Tensor(kKilnUInt32, {3, 4});
  ASSERT_EQ(KilnScriptForEach(script, "sampler_fields", nullptr, 0, fields, nullptr), kKilnOk) << messages_.All();
  std::vector<uint32_t> f(12);
  KilnTensorCopyToBuffer(fields, f.data(), f.size() * sizeof(uint32_t));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(f[4 * i], kLinearMipNearest);
    EXPECT_EQ(f[4 * i + 1], kLinear);
    EXPECT_EQ(f[4 * i + 2], kMirrored);
    EXPECT_EQ(f[4 * i + 3], kWrap + 100);
  }
  if (OnGpu()) {
    const std::string log = Decisions();
    for (const char* kernel : {"sample_2d", "sample_2d_lod", "sample_1d", "sampler_fields"}) {
      EXPECT_NE(log.find(std::string("kernel ") + kernel + " (sampler.kmod) runs on kiln-vulkan"), std::string::npos)
          << log;
    }
  }
  // A sampler of the wrong size is refused; sampling an image of float2 elements (neither float4 nor 4-byte
  // pixels) fails the launch on every device.
  EXPECT_NE(KilnScriptSetGlobal(script, "gSampler", &s, 8), kKilnOk);
  KilnTensor* pairs = Tensor(kKilnFloat32, {h, w, 2});
  ASSERT_EQ(KilnScriptBindAllocationWithElement(script, "gImage", pairs, 2), kKilnOk) << messages_.All();
  messages_.lines.clear();
  EXPECT_NE(KilnScriptForEach(script, "sample_2d", &coords, 1, out, nullptr), kKilnOk);
  EXPECT_NE(messages_.All().find("16-byte"), std::string::npos) << messages_.All();
}

INSTANTIATE_TEST_SUITE_P(Devices, Samplers,
                         ::testing::Values(std::string("cpu")
#ifdef KILN_VULKAN_DRIVER
                                               ,
                                           std::string("vulkan")
#endif
                                               ),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(ComputeModules, BadModulesGiveClearErrors) {
  Messages messages;
  std::FILE* f = std::fopen(KmodPath("atan_op").c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::vector<uint8_t> bytes(1 << 16);
  bytes.resize(std::fread(bytes.data(), 1, bytes.size(), f));
  std::fclose(f);
  for (size_t cut : {size_t{3}, size_t{16}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_EQ(KilnModuleCreateWithErrorReporter(bytes.data(), cut, Messages::Report, &messages), nullptr)
        << cut;
  }
  std::vector<uint8_t> wrong = bytes;
  for (size_t k = 0; k + 4 <= wrong.size(); ++k) {
    if (std::memcmp(wrong.data() + k, "KMOD", 4) == 0) {
      std::memcpy(wrong.data() + k, "XMOD", 4);
      break;
    }
  }
  messages.lines.clear();
  EXPECT_EQ(KilnModuleCreateWithErrorReporter(wrong.data(), wrong.size(), Messages::Report, &messages),
            nullptr);
  EXPECT_TRUE(messages.Contains("KMOD")) << messages.All();
  EXPECT_EQ(KilnModuleCreateFromFileWithErrorReporter("/nonexistent.kmod", Messages::Report, &messages),
            nullptr);
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
