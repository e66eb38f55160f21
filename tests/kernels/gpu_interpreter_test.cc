// The interpreter on the GPU (issue 5): with a GPU policy, kernel-backed ops run on the Vulkan driver
// (lavapipe on machines without a GPU), consecutive GPU ops form one partition, and the results match the
// CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "atan_model.h"
#include "kiln/c_api.h"
#include "kiln/compute.h"
#include "kiln/device.h"
#include "kiln/operator.h"
#include "runtime/model/model_writer.h"
#include "tests/kernels/bound_inputs_op.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/vulkan_probe.h"

namespace kiln {
namespace {

using testing::KmodPath;
using testing::Messages;

struct GpuRun {
  std::vector<float> y;
  std::string decisions;
};

GpuRun RunOnGpu(const std::vector<uint8_t>& bytes, const std::vector<KilnOperator*>& ops,
                const std::vector<float>& x, Messages* messages) {
  GpuRun run;
  KilnModel* model = KilnModelCreate(bytes.data(), bytes.size());
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(options, Messages::Report, messages);
  KilnInterpreterOptionsSetDevicePolicy(options, kKilnDevicePreferGpu);
  KilnInterpreterOptionsSetDriverPath(options, KILN_VULKAN_DRIVER);
  for (KilnOperator* op : ops) KilnInterpreterOptionsAddOperator(options, op);
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, options);
  KilnInterpreterOptionsDelete(options);
  KilnModelDelete(model);
  const int dims[1] = {static_cast<int>(x.size())};
  if (interpreter != nullptr && KilnInterpreterResizeInputTensor(interpreter, 0, dims, 1) == kKilnOk &&
      KilnInterpreterAllocateTensors(interpreter) == kKilnOk &&
      KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter, 0), x.data(), x.size() * 4) ==
          kKilnOk &&
      KilnInterpreterInvoke(interpreter) == kKilnOk) {
    const KilnTensor* out = KilnInterpreterGetOutputTensor(interpreter, 0);
    run.y.resize(KilnTensorByteSize(out) / 4);
    KilnTensorCopyToBuffer(out, run.y.data(), run.y.size() * 4);
  }
  for (int i = 0; i < KilnInterpreterGetDecisionCount(interpreter); ++i) {
    KilnDecisionKind kind;
    const char* subject = nullptr;
    const char* message = nullptr;
    if (KilnInterpreterGetDecision(interpreter, i, &kind, &subject, &message) == kKilnOk) {
      run.decisions += std::string("[") + KilnDecisionKindName(kind) + "] " + message + "\n";
    }
  }
  KilnInterpreterDelete(interpreter);
  return run;
}

bool VulkanDeviceUsed(const GpuRun& run) {
  return run.decisions.find("runs on kiln-vulkan") != std::string::npos;
}

TEST(GpuInterpreter, AtanScenarioRunsOnVulkan) {
  KilnModule* module = KilnModuleCreateFromFile(KmodPath("atan_op").c_str());
  ASSERT_NE(module, nullptr);
  KilnOperator* op = KilnOperatorCreate(kKilnBuiltinCustom, "Atan", 1);
  ASSERT_EQ(KilnOperatorSetKernel(op, module, "atan_op"), kKilnOk);
  Messages messages;
  const std::vector<float> x = {-8.0f, 0.5f, 2.0f, 2.2f, 201.0f};
  const std::vector<float> want = {-1.4288993f, 0.98279375f, 1.2490457f, 1.2679114f, 1.5658458f};
  const GpuRun run = RunOnGpu(examples::AtanModel(examples::kTrainedOffset, 0.0f), {op}, x, &messages);
  KILN_SKIP_UNLESS_VULKAN_USED(run.decisions.find("libkiln_vulkan.so loaded") != std::string::npos &&
                                   run.decisions.find("device 0 of kiln-vulkan") != std::string::npos,
                               run.decisions << messages.All());
  ASSERT_EQ(run.y.size(), want.size()) << messages.All() << run.decisions;
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(run.y[i], want[i], 1e-6f) << i;
  EXPECT_TRUE(VulkanDeviceUsed(run)) << run.decisions;
  EXPECT_NE(run.decisions.find("node 1 (Atan, kernel 'atan_op') runs on kiln-vulkan"), std::string::npos)
      << run.decisions;
  KilnOperatorDelete(op);
  KilnModuleDelete(module);
}

TEST(GpuInterpreter, ConsecutiveKernelOpsFormOnePartition) {
  // x -> Atan (offset 1) -> t -> Op (add2 with itself broadcast: (t + t) * 2) -> y, both kernels on the GPU.
  KilnModule* atan_module = KilnModuleCreateFromFile(KmodPath("atan_op").c_str());
  KilnModule* add_module = KilnModuleCreateFromFile(KmodPath("add2").c_str());
  ASSERT_TRUE(atan_module && add_module);
  KilnOperator* atan = KilnOperatorCreate(kKilnBuiltinCustom, "Atan", 1);
  KilnOperator* add = KilnOperatorCreate(kKilnBuiltinCustom, "Op", 1);
  ASSERT_EQ(KilnOperatorSetKernel(atan, atan_module, "atan_op"), kKilnOk);
  ASSERT_EQ(KilnOperatorSetKernel(add, add_module, "add2"), kKilnOk);
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {1}, "x");
  const int t = w.AddTensor(kKilnFloat32, {1}, "t");
  const int y = w.AddTensor(kKilnFloat32, {1}, "y");
  w.AddCustomOp("Atan", {x}, {t}, FlexMap().Float("offset", 1.0f).Finish());
  w.AddCustomOp("Op", {t, t}, {y}, FlexMap().Float("scale", 2.0f).Finish());
  w.SetInputs({x});
  w.SetOutputs({y});
  std::vector<float> in(1000);
  for (size_t i = 0; i < in.size(); ++i) in[i] = 0.01f * static_cast<float>(i) - 5.0f;
  Messages messages;
  const GpuRun run = RunOnGpu(w.Finish(), {atan, add}, in, &messages);
  KILN_SKIP_UNLESS_VULKAN_USED(run.decisions.find("device 0 of kiln-vulkan") != std::string::npos,
                               run.decisions);
  ASSERT_EQ(run.y.size(), in.size()) << messages.All() << run.decisions;
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_NEAR(run.y[i], 4.0 * std::atan(static_cast<double>(in[i]) + 1.0), 4e-6) << i;
  }
  EXPECT_NE(run.decisions.find("partition 0: nodes 0 to 1 run on kiln-vulkan"), std::string::npos)
      << run.decisions;
  EXPECT_NE(run.decisions.find("1 stay on the device"), std::string::npos) << run.decisions;
  KilnOperatorDelete(atan);
  KilnOperatorDelete(add);
  KilnModuleDelete(atan_module);
  KilnModuleDelete(add_module);
}

TEST(GpuInterpreter, BrokenSpirvRunsOnTheCpuWithTheReasonRecorded) {
  std::FILE* f = std::fopen(KmodPath("atan_op").c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::vector<uint8_t> bytes(1 << 20);
  bytes.resize(std::fread(bytes.data(), 1, bytes.size(), f));
  std::fclose(f);
  // Corrupt the SPIR-V code (after its magic number 0x07230203 and 5-word header), keeping the module's
  // FlatBuffers structure intact: the runtime must still load the module and run it correctly.
  const uint8_t magic[4] = {0x03, 0x02, 0x23, 0x07};
  size_t at = 0;
  for (size_t k = 0; k + 4 <= bytes.size(); ++k) {
    if (std::memcmp(bytes.data() + k, magic, 4) == 0) {
      at = k;
      break;
    }
  }
  ASSERT_NE(at, 0u) << "atan_op.kmod has no SPIR-V payload";
  for (size_t k = at + 20; k < at + 84 && k < bytes.size(); ++k) bytes[k] = 0xff;
  Messages messages;
  KilnModule* module =
      KilnModuleCreateWithErrorReporter(bytes.data(), bytes.size(), Messages::Report, &messages);
  ASSERT_NE(module, nullptr) << messages.All();
  KilnOperator* op = KilnOperatorCreate(kKilnBuiltinCustom, "Atan", 1);
  ASSERT_EQ(KilnOperatorSetKernel(op, module, "atan_op"), kKilnOk);
  const std::vector<float> x = {-8.0f, 0.5f, 2.0f, 2.2f, 201.0f};
  const GpuRun run = RunOnGpu(examples::AtanModel(examples::kTrainedOffset, 0.0f), {op}, x, &messages);
  KILN_SKIP_UNLESS_VULKAN_USED(run.decisions.find("device 0 of kiln-vulkan") != std::string::npos,
                               run.decisions);
  ASSERT_EQ(run.y.size(), x.size()) << messages.All() << run.decisions;
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(run.y[i], std::atan(static_cast<double>(x[i]) + examples::kTrainedOffset), 1e-6) << i;
  }
  EXPECT_NE(run.decisions.find("kernel atan_op (<memory>) runs on CPU"), std::string::npos) << run.decisions;
  EXPECT_NE(run.decisions.find("runs on kiln-cpu"), std::string::npos) << run.decisions;
  KilnOperatorDelete(op);
  KilnModuleDelete(module);
}

// Reductions through the compute API with the GPU policy: sum_reduce.rs's addint (the accumulator as
// combiner) and minmax (all four functions, a struct accumulator, a float2 result) over 1000003 cells.
// `corrupt` breaks the module's SPIR-V (every module in the payload) while keeping the .kmod valid.
struct ReduceRun {
  int32_t sum = 0;
  float minmax[2] = {};
  KilnStatus status = kKilnError;
  std::string decisions;
};

ReduceRun ReduceOnGpu(bool corrupt, Messages* messages) {
  ReduceRun run;
  std::FILE* f = std::fopen(KmodPath("sum_reduce").c_str(), "rb");
  if (f == nullptr) return run;
  std::vector<uint8_t> bytes(1 << 20);
  bytes.resize(std::fread(bytes.data(), 1, bytes.size(), f));
  std::fclose(f);
  if (corrupt) {
    const uint8_t magic[4] = {0x03, 0x02, 0x23, 0x07};
    for (size_t k = 0; k + 84 <= bytes.size(); ++k) {
      if (std::memcmp(bytes.data() + k, magic, 4) == 0) std::memset(bytes.data() + k + 20, 0xff, 64);
    }
  }
  KilnModule* module =
      KilnModuleCreateWithErrorReporter(bytes.data(), bytes.size(), Messages::Report, messages);
  KilnContextOptions* options = KilnContextOptionsCreate();
  KilnContextOptionsSetErrorReporter(options, Messages::Report, messages);
  KilnContextOptionsSetDevicePolicy(options, kKilnDevicePreferGpu);
  KilnContextOptionsSetDriverPath(options, KILN_VULKAN_DRIVER);
  KilnContext* context = KilnContextCreate(options);
  KilnContextOptionsDelete(options);
  KilnScript* script = module && context ? KilnScriptCreate(context, module) : nullptr;
  const int n = 1000003;
  KilnTensor* ints = context ? KilnTensorCreate(context, kKilnInt32, &n, 1) : nullptr;
  KilnTensor* floats = context ? KilnTensorCreate(context, kKilnFloat32, &n, 1) : nullptr;
  if (script && ints && floats) {
    int32_t* iv = static_cast<int32_t*>(KilnTensorData(ints));
    float* fv = static_cast<float*>(KilnTensorData(floats));
    for (int i = 0; i < n; ++i) {
      iv[i] = static_cast<int32_t>(int64_t{i} * 7919 % 2001 - 1000);
      fv[i] = static_cast<float>(int64_t{i} * 104729 % 100003) * 0.01f - 400.0f;
    }
    run.status = KilnScriptReduce(script, "addint", &ints, 1, &run.sum, 4, nullptr);
    if (run.status == kKilnOk)
      run.status = KilnScriptReduce(script, "minmax", &floats, 1, run.minmax, 8, nullptr);
  }
  for (int i = 0; context && i < KilnContextGetDecisionCount(context); ++i) {
    KilnDecisionKind kind;
    const char* message = nullptr;
    if (KilnContextGetDecision(context, i, &kind, nullptr, &message) == kKilnOk) {
      run.decisions += std::string("[") + KilnDecisionKindName(kind) + "] " + message + "\n";
    }
  }
  KilnTensorDelete(ints);
  KilnTensorDelete(floats);
  KilnScriptDelete(script);
  KilnContextDelete(context);
  KilnModuleDelete(module);
  return run;
}

int32_t WantSum() {
  int64_t sum = 0;
  for (int i = 0; i < 1000003; ++i) sum += int64_t{i} * 7919 % 2001 - 1000;
  return static_cast<int32_t>(sum);
}

void ExpectRightResults(const ReduceRun& run, const Messages& messages) {
  ASSERT_EQ(run.status, kKilnOk) << messages.All() << run.decisions;
  EXPECT_EQ(run.sum, WantSum());
  EXPECT_EQ(run.minmax[0], -400.0f);
  EXPECT_EQ(run.minmax[1], static_cast<float>(100002) * 0.01f - 400.0f);
}

TEST(GpuInterpreter, ReductionsRunOnVulkan) {
  Messages messages;
  const ReduceRun run = ReduceOnGpu(false, &messages);
  KILN_SKIP_UNLESS_VULKAN_USED(run.decisions.find("device 0 of kiln-vulkan") != std::string::npos,
                               run.decisions << messages.All());
  ExpectRightResults(run, messages);
  EXPECT_NE(run.decisions.find("reduction addint (<memory>) runs on kiln-vulkan"), std::string::npos)
      << run.decisions;
  EXPECT_NE(run.decisions.find("reduction minmax (<memory>) runs on kiln-vulkan"), std::string::npos)
      << run.decisions;
}

TEST(GpuInterpreter, ReductionWithBrokenSpirvRunsOnTheCpuWithTheReasonRecorded) {
  Messages messages;
  const ReduceRun run = ReduceOnGpu(true, &messages);
  KILN_SKIP_UNLESS_VULKAN_USED(run.decisions.find("device 0 of kiln-vulkan") != std::string::npos,
                               run.decisions << messages.All());
  ExpectRightResults(run, messages);
  EXPECT_NE(run.decisions.find("reduction addint (<memory>) runs on CPU: kiln-vulkan"), std::string::npos)
      << run.decisions;
  EXPECT_NE(run.decisions.find("SPIR-V"), std::string::npos) << run.decisions;
}

// Runs an AddReversed model (tests/kernels/bound_inputs_op.h) with the GPU policy twice, with `src` and then
// its negation as the bound graph input (none when the model holds it as a constant).
struct BoundRun {
  std::vector<std::vector<float>> y;
  std::string decisions;
};

BoundRun RunBoundOnGpu(const std::vector<uint8_t>& bytes, KilnOperator* op, const std::vector<float>& x,
                       const std::vector<float>& src, Messages* messages) {
  BoundRun run;
  KilnModel* model = KilnModelCreate(bytes.data(), bytes.size());
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(options, Messages::Report, messages);
  KilnInterpreterOptionsSetDevicePolicy(options, kKilnDevicePreferGpu);
  KilnInterpreterOptionsSetDriverPath(options, KILN_VULKAN_DRIVER);
  KilnInterpreterOptionsAddOperator(options, op);
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, options);
  KilnInterpreterOptionsDelete(options);
  KilnModelDelete(model);
  bool ok = interpreter != nullptr && KilnInterpreterAllocateTensors(interpreter) == kKilnOk;
  for (float sign : {1.0f, -1.0f}) {
    std::vector<float> s = src;
    for (float& v : s) v *= sign;
    ok = ok && KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter, 0), x.data(),
                                        x.size() * 4) == kKilnOk;
    if (ok && KilnInterpreterGetInputTensorCount(interpreter) > 1) {
      ok = KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter, 1), s.data(), s.size() * 4) ==
           kKilnOk;
    }
    ok = ok && KilnInterpreterInvoke(interpreter) == kKilnOk;
    if (!ok) break;
    const KilnTensor* out = KilnInterpreterGetOutputTensor(interpreter, 0);
    run.y.emplace_back(KilnTensorByteSize(out) / 4);
    KilnTensorCopyToBuffer(out, run.y.back().data(), run.y.back().size() * 4);
  }
  for (int i = 0; interpreter != nullptr && i < KilnInterpreterGetDecisionCount(interpreter); ++i) {
    KilnDecisionKind kind;
    const char* message = nullptr;
    if (KilnInterpreterGetDecision(interpreter, i, &kind, nullptr, &message) == kKilnOk) {
      run.decisions += std::string("[") + KilnDecisionKindName(kind) + "] " + message + "\n";
    }
  }
  KilnInterpreterDelete(interpreter);
  return run;
}

struct AddReversedOp {
  KilnModule* module = KilnModuleCreateFromFile(KmodPath("bound_inputs").c_str());
  KilnOperator* op = KilnOperatorCreate(kKilnBuiltinCustom, "AddReversed", 1);
  bool ok = module != nullptr && KilnOperatorSetKernel(op, module, "add_reversed") == kKilnOk &&
            testing::ConfigureAddReversed(op);
  ~AddReversedOp() {
    KilnOperatorDelete(op);
    KilnModuleDelete(module);
  }
};

std::vector<float> Integers(size_t n, int start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(start + static_cast<int>(i % 53));
  return v;
}

TEST(GpuInterpreter, BoundInputsRunOnVulkan) {
  AddReversedOp op;
  ASSERT_TRUE(op.ok);
  const std::vector<float> x = Integers(2 * 3 * 40 * 7, -20), src = Integers(x.size(), 3);
  Messages messages;
  const BoundRun run =
      RunBoundOnGpu(testing::AddReversedModel({2, 3, 40, 7}, 3.0f, {}), op.op, x, src, &messages);
  KILN_SKIP_UNLESS_VULKAN_USED(run.decisions.find("device 0 of kiln-vulkan") != std::string::npos,
                               run.decisions);
  EXPECT_NE(run.decisions.find("node 0 (AddReversed, kernel 'add_reversed') runs on kiln-vulkan"),
            std::string::npos)
      << run.decisions;
  ASSERT_EQ(run.y.size(), 2u) << messages.All() << run.decisions;
  std::vector<float> negated = src;
  for (float& v : negated) v = -v;
  // Integers times 3: exact on any device. The second Invoke must see the bound input's new values.
  EXPECT_EQ(run.y[0], testing::AddReversedReference(x, src, 3.0f));
  EXPECT_EQ(run.y[1], testing::AddReversedReference(x, negated, 3.0f));
}

TEST(GpuInterpreter, ConstantBoundInputRunsOnVulkan) {
  AddReversedOp op;
  ASSERT_TRUE(op.ok);
  const std::vector<float> x = Integers(5 * 9, 1), src = Integers(x.size(), -30);
  Messages messages;
  const BoundRun run = RunBoundOnGpu(testing::AddReversedModel({5, 9}, 2.0f, src), op.op, x, {}, &messages);
  KILN_SKIP_UNLESS_VULKAN_USED(run.decisions.find("device 0 of kiln-vulkan") != std::string::npos,
                               run.decisions);
  EXPECT_NE(run.decisions.find("runs on kiln-vulkan"), std::string::npos) << run.decisions;
  ASSERT_EQ(run.y.size(), 2u) << messages.All() << run.decisions;
  EXPECT_EQ(run.y[0], testing::AddReversedReference(x, src, 2.0f));
  EXPECT_EQ(run.y[1], run.y[0]);
}

TEST(GpuInterpreter, BoundInputProducedInThePartitionStartsANewOne) {
  // y = AddReversed(x, s), z = AddReversed(x, y): the second node reads y through its binding, from the host,
  // so it cannot share the first node's partition (where y stays on the device).
  AddReversedOp op;
  ASSERT_TRUE(op.ok);
  const std::vector<float> x = Integers(6 * 11, -9), src = Integers(x.size(), 4);
  Messages messages;
  const BoundRun run =
      RunBoundOnGpu(testing::AddReversedModel({6, 11}, 3.0f, {}, /*chained=*/true), op.op, x, src, &messages);
  KILN_SKIP_UNLESS_VULKAN_USED(run.decisions.find("device 0 of kiln-vulkan") != std::string::npos,
                               run.decisions);
  ASSERT_EQ(run.y.size(), 2u) << messages.All() << run.decisions;
  EXPECT_NE(run.decisions.find("partition 0: node 0 runs on kiln-vulkan"), std::string::npos) << run.decisions;
  EXPECT_NE(run.decisions.find("partition 1: node 1 runs on kiln-vulkan"), std::string::npos) << run.decisions;
  const std::vector<float> y = testing::AddReversedReference(x, src, 3.0f);
  EXPECT_EQ(run.y[0], testing::AddReversedReference(x, y, 3.0f));
}

}  // namespace
}  // namespace kiln
