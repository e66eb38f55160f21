// Each broken test driver through the public C API: the decision and its message, and correct numbers.
#include <gtest/gtest.h>

#include <chrono>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "atan_model.h"
#include "kiln/c_api.h"
#include "kiln/compute.h"
#include "kiln/operator.h"
#include "runtime/model/model_writer.h"
#include "tests/kernels/kernel_test_util.h"

namespace kiln {
namespace {

using testing::KmodPath;
using testing::Messages;

const std::vector<float> kX = {-8.0f, 0.5f, 2.0f, 2.2f, 201.0f};

std::string DriverPath(const std::string& variant) {
  return std::string(KILN_TEST_DRIVER_DIR) + "/libkiln_test_" + variant + ".so";
}

struct Decisions {
  struct Entry {
    KilnDecisionKind kind;
    std::string subject, message;
  };
  std::vector<Entry> entries;
  std::string All() const {
    std::string s;
    for (const Entry& e : entries) s += std::string(KilnDecisionKindName(e.kind)) + " | " + e.message + "\n";
    return s;
  }
  bool Has(KilnDecisionKind kind, const std::string& text) const {
    for (const Entry& e : entries) {
      if (e.kind == kind && e.message.find(text) != std::string::npos) return true;
    }
    return false;
  }
  int Count(KilnDecisionKind kind) const {
    int n = 0;
    for (const Entry& e : entries) n += e.kind == kind;
    return n;
  }
};

Decisions Read(const KilnInterpreter* interpreter) {
  Decisions d;
  for (int i = 0; i < KilnInterpreterGetDecisionCount(interpreter); ++i) {
    KilnDecisionKind kind;
    const char* subject = nullptr;
    const char* message = nullptr;
    EXPECT_EQ(KilnInterpreterGetDecision(interpreter, i, &kind, &subject, &message), kKilnOk);
    d.entries.push_back({kind, subject, message});
  }
  EXPECT_EQ(KilnInterpreterGetDecision(interpreter, KilnInterpreterGetDecisionCount(interpreter), nullptr, nullptr,
                                       nullptr),
            kKilnInvalidArgument);
  return d;
}

Decisions Read(const KilnContext* context) {
  Decisions d;
  for (int i = 0; i < KilnContextGetDecisionCount(context); ++i) {
    KilnDecisionKind kind;
    const char* subject = nullptr;
    const char* message = nullptr;
    EXPECT_EQ(KilnContextGetDecision(context, i, &kind, &subject, &message), kKilnOk);
    d.entries.push_back({kind, subject, message});
  }
  return d;
}

struct Kernel {
  KilnModule* module = nullptr;
  KilnOperator* op = nullptr;
  Kernel(const std::string& kmod, const char* op_name, const char* kernel) {
    module = KilnModuleCreateFromFile(KmodPath(kmod).c_str());
    op = KilnOperatorCreate(kKilnBuiltinCustom, op_name, 1);
    EXPECT_EQ(KilnOperatorSetKernel(op, module, kernel), kKilnOk);
  }
  ~Kernel() {
    KilnOperatorDelete(op);
    KilnModuleDelete(module);
  }
};

// An interpreter over `model_bytes` with the given ops, policy and driver path; runs it `invokes` times on kX.
struct RunResult {
  Messages messages;
  Decisions decisions;
  std::vector<std::vector<float>> outputs;  // one per invoke
  KilnStatus create_status = kKilnOk;
};

RunResult RunModel(const std::vector<uint8_t>& model_bytes, const std::vector<KilnOperator*>& ops, KilnDevicePolicy policy,
             const std::string& driver, int invokes = 1, bool allow_any = false) {
  RunResult run;
  KilnModel* model = KilnModelCreate(model_bytes.data(), model_bytes.size());
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(options, Messages::Report, &run.messages);
  for (KilnOperator* op : ops) KilnInterpreterOptionsAddOperator(options, op);
  KilnInterpreterOptionsSetDevicePolicy(options, policy);
  KilnInterpreterOptionsSetDriverPath(options, driver.c_str());
  KilnInterpreterOptionsSetAllowAnyDriverDependency(options, allow_any);
  KilnInterpreter* interpreter = KilnInterpreterCreateWithStatus(model, options, &run.create_status);
  KilnInterpreterOptionsDelete(options);
  KilnModelDelete(model);
  if (interpreter == nullptr) return run;
  const int dims[1] = {static_cast<int>(kX.size())};
  if (KilnInterpreterResizeInputTensor(interpreter, 0, dims, 1) == kKilnOk &&
      KilnInterpreterAllocateTensors(interpreter) == kKilnOk) {
    for (int i = 0; i < invokes; ++i) {
      KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter, 0), kX.data(), kX.size() * 4);
      if (KilnInterpreterInvoke(interpreter) != kKilnOk) break;
      const KilnTensor* out = KilnInterpreterGetOutputTensor(interpreter, 0);
      std::vector<float> y(KilnTensorByteSize(out) / 4);
      KilnTensorCopyToBuffer(out, y.data(), y.size() * 4);
      run.outputs.push_back(y);
    }
  }
  run.decisions = Read(interpreter);
  KilnInterpreterDelete(interpreter);
  return run;
}

// The Atan scenario: ADD(x, offset) then the atan_op kernel.
RunResult RunAtan(KilnDevicePolicy policy, const std::string& driver, int invokes = 1, bool allow_any = false) {
  Kernel atan("atan_op", "Atan", "atan_op");
  return RunModel(examples::AtanModel(examples::kTrainedOffset, 0.0f), {atan.op}, policy, driver, invokes, allow_any);
}

void ExpectAtan(const RunResult& run, int invokes = 1) {
  ASSERT_EQ(static_cast<int>(run.outputs.size()), invokes) << run.messages.All() << run.decisions.All();
  for (const auto& y : run.outputs) {
    ASSERT_EQ(y.size(), kX.size());
    for (size_t i = 0; i < y.size(); ++i) {
      EXPECT_NEAR(y[i], std::atan(kX[i] + examples::kTrainedOffset), 1e-6f) << i;
    }
  }
}

TEST(Policy, AGoodDriverRunsTheKernelInABatch) {
  const RunResult run = RunAtan(kKilnDevicePreferGpu, DriverPath("good"), 2);
  ExpectAtan(run, 2);
  const Decisions& d = run.decisions;
  EXPECT_TRUE(d.Has(kKilnDecisionDriver, "driver libkiln_test_good.so loaded: kiln-test-good test, HAL 1.1 (runtime 1.1)"))
      << d.All();
  EXPECT_TRUE(d.Has(kKilnDecisionDevice, "device 0 of kiln-test-good (libkiln_test_good.so): 'test device' (gpu")) << d.All();
  EXPECT_TRUE(d.Has(kKilnDecisionPolicy, "policy prefer-gpu: kernels run on kiln-test-good (test device)")) << d.All();
  EXPECT_TRUE(d.Has(kKilnDecisionKernel, "kernel atan_op (atan_op.kmod) runs on kiln-test-good (test device)"))
      << d.All();
  EXPECT_TRUE(d.Has(kKilnDecisionNode, "node 0 (ADD) runs on the host: builtin op")) << d.All();
  EXPECT_TRUE(d.Has(kKilnDecisionNode, "node 1 (Atan, kernel 'atan_op') runs on kiln-test-good (test device), in partition 0"))
      << d.All();
  EXPECT_TRUE(d.Has(kKilnDecisionPartition, "partition 0: node 1 runs on kiln-test-good (test device) as one batch"))
      << d.All();
  EXPECT_EQ(d.Count(kKilnDecisionFallback), 0) << d.All();
}

TEST(Policy, AutoChoosesAGpuDriverAndCpuOnlySearchesNothing) {
  RunResult run = RunAtan(kKilnDeviceAuto, DriverPath("good"));
  ExpectAtan(run);
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionPolicy, "policy auto: kernels run on kiln-test-good")) << run.decisions.All();
  run = RunAtan(kKilnDeviceCpuOnly, DriverPath("good"));
  ExpectAtan(run);
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionPolicy, "policy cpu-only: no driver is searched; kernels run on kiln-cpu"))
      << run.decisions.All();
  EXPECT_EQ(run.decisions.Count(kKilnDecisionDriver), 0) << run.decisions.All();
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionNode, "node 1 (Atan, kernel 'atan_op') runs on kiln-cpu: no driver device in use"))
      << run.decisions.All();
}

TEST(Policy, NewerMinorIsAccepted) {
  const RunResult run = RunAtan(kKilnDevicePreferGpu, DriverPath("newer_minor"));
  ExpectAtan(run);
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionDriver,
                                "driver libkiln_test_newer_minor.so loaded: kiln-test-newer_minor test, HAL 1.9 "
                                "(runtime 1.1); its newer minor is accepted"))
      << run.decisions.All();
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionNode, "runs on kiln-test-newer_minor (test device), in partition 0"))
      << run.decisions.All();
}

struct Refused {
  const char* variant;
  const char* message;
};

class RefusedDriver : public ::testing::TestWithParam<Refused> {};

TEST_P(RefusedDriver, IsRefusedWithItsReasonAndTheCpuServes) {
  const RunResult run = RunAtan(kKilnDevicePreferGpu, DriverPath(GetParam().variant));
  ExpectAtan(run);
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionDriver, GetParam().message)) << run.decisions.All();
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionPolicy, "policy prefer-gpu: no driver device loaded; kernels run on kiln-cpu"))
      << run.decisions.All();
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionNode, "node 1 (Atan, kernel 'atan_op') runs on kiln-cpu"))
      << run.decisions.All();
}

INSTANTIATE_TEST_SUITE_P(
    Loader, RefusedDriver,
    ::testing::Values(
        Refused{"wrong_major", "driver libkiln_test_wrong_major.so refused: HAL 2.0, runtime 1.1"},
        Refused{"no_entry", "driver libkiln_test_no_entry.so refused: it exports no kiln_driver_query entry point"},
        Refused{"null_required",
                "driver libkiln_test_null_required.so refused: required entry point(s) NULL: module_load, "
                "launch_for_each"},
        Refused{"query_fails",
                "driver libkiln_test_query_fails.so refused: kiln_driver_query failed (error): test driver: "
                "initialisation fails on purpose (error)"},
        Refused{"disallowed_dependency",
                "driver libkiln_test_disallowed_dependency.so refused: it needs libkiln_test_dummy_dep.so, not on "
                "the allow-list"},
        Refused{"table_size", "driver libkiln_test_table_size.so refused: its KilnHalDriver struct_size is"}),
    [](const ::testing::TestParamInfo<Refused>& info) { return std::string(info.param.variant); });

TEST(Policy, AnyDependencyCanBeAllowedAndIsNoted) {
  RunResult run = RunAtan(kKilnDevicePreferGpu, DriverPath("disallowed_dependency"), 1, /*allow_any=*/true);
  ExpectAtan(run);
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionDriver,
                                "driver libkiln_test_disallowed_dependency.so: needs libkiln_test_dummy_dep.so, not "
                                "on the allow-list; loaded anyway because the application allowed any dependency"))
      << run.decisions.All();
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionNode, "in partition 0")) << run.decisions.All();
  setenv("KILN_DRIVER_ALLOW_ANY_DEPENDENCY", "1", 1);
  run = RunAtan(kKilnDevicePreferGpu, DriverPath("disallowed_dependency"));
  unsetenv("KILN_DRIVER_ALLOW_ANY_DEPENDENCY");
  ExpectAtan(run);
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionDriver, "loaded anyway because KILN_DRIVER_ALLOW_ANY_DEPENDENCY=1"))
      << run.decisions.All();
}

TEST(Policy, WrongDeviceInfoSizeRefusesTheDevice) {
  const RunResult run = RunAtan(kKilnDevicePreferGpu, DriverPath("info_size"));
  ExpectAtan(run);
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionDevice,
                                "device 0 of kiln-test-info_size (libkiln_test_info_size.so) refused: "
                                "device_get_info reported a KilnHalDeviceInfo struct_size of"))
      << run.decisions.All();
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionNode, "runs on kiln-cpu")) << run.decisions.All();
}

TEST(Policy, AModuleLoadThatFailsRunsTheModuleOnTheCpu) {
  const RunResult run = RunAtan(kKilnDevicePreferGpu, DriverPath("module_load_fails"));
  ExpectAtan(run);
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionModule,
                                "runs wholly on CPU: kiln-test-module_load_fails (test device) could not load it: "
                                "test driver: module_load fails on purpose (unsupported)"))
      << run.decisions.All();
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionNode,
                                "node 1 (Atan, kernel 'atan_op') runs on kiln-cpu: its module runs wholly on CPU"))
      << run.decisions.All();
}

TEST(Policy, AModuleOfAnotherMajorRunsWhollyOnTheCpu) {
  const RunResult run = RunAtan(kKilnDevicePreferGpu, DriverPath("level_major"));
  ExpectAtan(run);
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionModule,
                                "runs wholly on CPU: needs HAL level 1.0, driver has 2.0 (a different major)"))
      << run.decisions.All();
}

TEST(Policy, GpuOnlyFailsWithoutAGpuDriver) {
  RunResult run = RunAtan(kKilnDeviceGpuOnly, DriverPath("wrong_major"));
  EXPECT_EQ(run.create_status, kKilnUnsupported);
  EXPECT_TRUE(run.outputs.empty());
  EXPECT_TRUE(run.messages.Contains("policy gpu-only: no driver device can be used")) << run.messages.All();
  EXPECT_TRUE(run.messages.Contains("driver libkiln_test_wrong_major.so refused: HAL 2.0, runtime 1.1"))
      << "the reasons reach the reporter: " << run.messages.All();
  run = RunAtan(kKilnDeviceGpuOnly, DriverPath("good"));
  ExpectAtan(run);
}

TEST(Policy, DriverPathOptionWinsOverTheEnvironment) {
  setenv("KILN_DRIVER", DriverPath("wrong_major").c_str(), 1);
  RunResult run = RunAtan(kKilnDevicePreferGpu, "");
  ExpectAtan(run);
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionPolicy, "(from KILN_DRIVER)")) << run.decisions.All();
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionDriver, "HAL 2.0, runtime 1.1")) << run.decisions.All();
  run = RunAtan(kKilnDevicePreferGpu, DriverPath("good"));
  unsetenv("KILN_DRIVER");
  ExpectAtan(run);
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionPolicy, "(from the driver path set by the application)"))
      << run.decisions.All();
  EXPECT_EQ(run.decisions.Count(kKilnDecisionFallback), 0);
  EXPECT_FALSE(run.decisions.Has(kKilnDecisionDriver, "wrong_major")) << run.decisions.All();
}

TEST(Policy, ADirectoryOfDriversIsSearchedInNameOrder) {
  const RunResult run = RunAtan(kKilnDevicePreferGpu, KILN_TEST_DRIVER_DIR);
  ExpectAtan(run);
  const Decisions& d = run.decisions;
  EXPECT_TRUE(d.Has(kKilnDecisionPolicy, "searched the driver path set by the application")) << d.All();
  EXPECT_TRUE(d.Has(kKilnDecisionDriver, "libkiln_test_wrong_major.so refused: HAL 2.0")) << d.All();
  EXPECT_TRUE(d.Has(kKilnDecisionDriver, "libkiln_test_dummy_dep.so refused: it exports no kiln_driver_query"))
      << d.All();
  // All GPUs: the first in name order that is usable wins (disallowed_dependency is refused, so: good).
  EXPECT_TRUE(d.Has(kKilnDecisionPolicy, "policy prefer-gpu: kernels run on kiln-test-good (test device)")) << d.All();
}

// Two kernel nodes in a row: add2(x, c) then atan_op: one partition, one batch, the middle tensor never leaves.
std::vector<uint8_t> TwoKernelModel() {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {5}, "x");
  const int c = w.AddConstTensor<float>(kKilnFloat32, {5}, "c", {1, 2, 3, 4, 5});
  const int t = w.AddTensor(kKilnFloat32, {5}, "t");
  const int y = w.AddTensor(kKilnFloat32, {5}, "y");
  w.AddCustomOp("Add2", {x, c}, {t}, FlexMap().Float("scale", 2.0f).Finish());
  w.AddCustomOp("Atan", {t}, {y}, FlexMap().Float("offset", 0.5f).Finish());
  w.SetInputs({x});
  w.SetOutputs({y});
  return w.Finish();
}

void ExpectTwoKernels(const RunResult& run, int invokes) {
  ASSERT_EQ(static_cast<int>(run.outputs.size()), invokes) << run.messages.All() << run.decisions.All();
  const float c[5] = {1, 2, 3, 4, 5};
  for (const auto& y : run.outputs) {
    for (size_t i = 0; i < kX.size(); ++i) EXPECT_NEAR(y[i], std::atan((kX[i] + c[i]) * 2.0f + 0.5f), 1e-6f) << i;
  }
}

TEST(Partitions, ConsecutiveKernelsFormOneBatch) {
  Kernel add("add2", "Add2", "add2");
  Kernel atan("atan_op", "Atan", "atan_op");
  const RunResult run = RunModel(TwoKernelModel(), {add.op, atan.op}, kKilnDevicePreferGpu, DriverPath("good"), 2);
  ExpectTwoKernels(run, 2);
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionPartition,
                                "partition 0: nodes 0 to 1 run on kiln-test-good (test device) as one batch; tensors "
                                "crossing its edges: 2 in ('x', 'c'), 1 out ('y'); 1 stay on the device"))
      << run.decisions.All();
  EXPECT_EQ(run.decisions.Count(kKilnDecisionPartition), 1) << run.decisions.All();
}

TEST(Partitions, WithoutBatchesLaunchesRunOneAtATime) {
  Kernel add("add2", "Add2", "add2");
  Kernel atan("atan_op", "Atan", "atan_op");
  const RunResult run = RunModel(TwoKernelModel(), {add.op, atan.op}, kKilnDevicePreferGpu, DriverPath("no_batches"), 1);
  ExpectTwoKernels(run, 1);
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionDriver, "no batches (batch_create, batch_destroy")) << run.decisions.All();
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionPartition, "one launch at a time (the driver has no batches)"))
      << run.decisions.All();
}

TEST(Partitions, AFailedLaunchIsRedoneOnTheCpu) {
  Kernel add("add2", "Add2", "add2");
  Kernel atan("atan_op", "Atan", "atan_op");
  // Launch 1 (node 0) is recorded, launch 2 (node 1) fails: the whole partition is redone on the CPU, and the
  // kernel that failed is quarantined: from the third invoke on, node 1 runs on the CPU and node 0 stays on the
  // device.
  const RunResult run = RunModel(TwoKernelModel(), {add.op, atan.op}, kKilnDevicePreferGpu, DriverPath("launch_fails"), 3);
  ExpectTwoKernels(run, 3);
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionFallback,
                                "kiln-test-launch_fails (test device) failed partition of nodes 0 to 1 (recording "
                                "node 1, node 1 (Atan, kernel 'atan_op')) (driver error): test driver: launch 2 fails "
                                "on purpose (device lost) (driver error); redone on kiln-cpu; kernel 'atan_op' of "
                                "atan_op.kmod runs there from now on (device fault 1 of 3)"))
      << run.decisions.All();
  EXPECT_EQ(run.decisions.Count(kKilnDecisionFallback), 1) << run.decisions.All();
  // The next invoke plans again: node 1 on the CPU, node 0 alone in a partition on the device.
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionNode,
                                "node 1 (Atan, kernel 'atan_op') runs on kiln-cpu: quarantined: a launch on the device "
                                "failed"))
      << run.decisions.All();
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionPartition,
                                "partition 0: node 0 runs on kiln-test-launch_fails (test device) as one batch; tensors "
                                "crossing its edges: 2 in ('x', 'c'), 1 out ('t'); 0 stay on the device (host-shared "
                                "memory: aligned tensors are not copied at all)"))
      << "the kernel that did not fail stays on the device: " << run.decisions.All();
  EXPECT_TRUE(run.messages.Contains("redone on kiln-cpu")) << "the failure is reported: " << run.messages.All();
}

// A device that fails every batch, with no kernel to blame: each failure is a device fault, redone on the CPU;
// the third gives the device up, and later invokes run on the CPU from the start (no more faults).
TEST(Partitions, RepeatedDeviceFaultsGiveTheDeviceUp) {
  Kernel add("add2", "Add2", "add2");
  Kernel atan("atan_op", "Atan", "atan_op");
  const RunResult run =
      RunModel(TwoKernelModel(), {add.op, atan.op}, kKilnDevicePreferGpu, DriverPath("submit_fails"), 5);
  ExpectTwoKernels(run, 5);
  const std::string failed =
      "kiln-test-submit_fails (test device) failed partition of nodes 0 to 1 (the submitted batch) (driver error): "
      "test driver: batch_submit fails on purpose (driver error); redone on kiln-cpu";
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionFallback, failed + " (device fault 1 of 3)")) << run.decisions.All();
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionFallback, failed + " (device fault 2 of 3)")) << run.decisions.All();
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionFallback,
                                failed + ", and all later work of this interpreter or context runs there (fault 3 of "
                                         "3 gives the device up)"))
      << run.decisions.All();
  EXPECT_EQ(run.decisions.Count(kKilnDecisionFallback), 3) << run.decisions.All();
}

// A device that never finishes its second batch: with a device timeout the second Invoke gives the batch up after
// the deadline, redoes the partition on the CPU (right answers), and the third runs on the CPU from the start.
// Nothing the hung batch may use is freed (the test driver aborts if the runtime destroys the batch).
TEST(Partitions, AHungBatchIsGivenUpAtTheDeadline) {
  Kernel add("add2", "Add2", "add2");
  Kernel atan("atan_op", "Atan", "atan_op");
  RunResult run;
  KilnModel* model = nullptr;
  const std::vector<uint8_t> bytes = TwoKernelModel();
  model = KilnModelCreate(bytes.data(), bytes.size());
  ASSERT_NE(model, nullptr);
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(options, Messages::Report, &run.messages);
  KilnInterpreterOptionsAddOperator(options, add.op);
  KilnInterpreterOptionsAddOperator(options, atan.op);
  KilnInterpreterOptionsSetDevicePolicy(options, kKilnDevicePreferGpu);
  KilnInterpreterOptionsSetDriverPath(options, DriverPath("hangs").c_str());
  KilnInterpreterOptionsSetDeviceTimeout(options, 300);
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, options);
  KilnInterpreterOptionsDelete(options);
  KilnModelDelete(model);
  ASSERT_NE(interpreter, nullptr) << run.messages.All();
  const int dims[1] = {static_cast<int>(kX.size())};
  ASSERT_EQ(KilnInterpreterResizeInputTensor(interpreter, 0, dims, 1), kKilnOk);
  ASSERT_EQ(KilnInterpreterAllocateTensors(interpreter), kKilnOk) << run.messages.All();
  for (int i = 0; i < 3; ++i) {
    KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter, 0), kX.data(), kX.size() * 4);
    const auto start = std::chrono::steady_clock::now();
    ASSERT_EQ(KilnInterpreterInvoke(interpreter), kKilnOk) << "invoke " << i << ": " << run.messages.All();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (i == 1) {
      EXPECT_GE(seconds, 0.3) << "the second batch waited out the deadline";
      EXPECT_LT(seconds, 30.0);
    }
    const KilnTensor* out = KilnInterpreterGetOutputTensor(interpreter, 0);
    std::vector<float> y(KilnTensorByteSize(out) / 4);
    KilnTensorCopyToBuffer(out, y.data(), y.size() * 4);
    run.outputs.push_back(y);
  }
  run.decisions = Read(interpreter);
  KilnInterpreterDelete(interpreter);
  ExpectTwoKernels(run, 3);
  EXPECT_TRUE(run.decisions.Has(kKilnDecisionFallback,
                                "kiln-test-hangs (test device) failed partition of nodes 0 to 1 (the submitted batch) "
                                "(driver error): the batch did not finish within 300 ms (the interpreter's device "
                                "timeout) and was given up; redone on kiln-cpu, and all later work of this "
                                "interpreter or context runs there (a hung device is given up at once)"))
      << run.decisions.All();
  EXPECT_EQ(run.decisions.Count(kKilnDecisionFallback), 1) << run.decisions.All();
}

// ---- The compute API ----

struct Context {
  Messages messages;
  KilnContext* context = nullptr;
  Context(KilnDevicePolicy policy, const std::string& driver) {
    KilnContextOptions* options = KilnContextOptionsCreate();
    KilnContextOptionsSetErrorReporter(options, Messages::Report, &messages);
    KilnContextOptionsSetDevicePolicy(options, policy);
    KilnContextOptionsSetDriverPath(options, driver.c_str());
    context = KilnContextCreate(options);
    KilnContextOptionsDelete(options);
  }
  ~Context() { KilnContextDelete(context); }
};

TEST(ComputeContext, ALaunchThatFailsIsRetriedOnTheCpu) {
  Context c(kKilnDevicePreferGpu, DriverPath("launch_fails"));
  ASSERT_NE(c.context, nullptr) << c.messages.All();
  KilnModule* module = KilnModuleCreateFromFile(KmodPath("atan_op").c_str());
  KilnScript* script = KilnScriptCreate(c.context, module);
  ASSERT_NE(script, nullptr) << c.messages.All();
  const float offset = 0.25f;
  ASSERT_EQ(KilnScriptSetGlobal(script, "offset", &offset, sizeof offset), kKilnOk);
  const int dims[1] = {5};
  KilnTensor* in = KilnTensorCreate(c.context, kKilnFloat32, dims, 1);
  KilnTensor* out = KilnTensorCreate(c.context, kKilnFloat32, dims, 1);
  KilnTensorCopyFromBuffer(in, kX.data(), 20);
  for (int round = 0; round < 3; ++round) {
    std::memset(KilnTensorData(out), 0, 20);
    ASSERT_EQ(KilnScriptForEach(script, "atan_op", &in, 1, out, nullptr), kKilnOk) << c.messages.All();
    const float* y = static_cast<const float*>(KilnTensorData(out));
    for (int i = 0; i < 5; ++i) EXPECT_NEAR(y[i], std::atan(kX[i] + offset), 1e-6f) << round << " " << i;
  }
  const Decisions d = Read(c.context);
  EXPECT_TRUE(d.Has(kKilnDecisionKernel, "kernel atan_op (atan_op.kmod) runs on kiln-test-launch_fails (test device)"))
      << d.All();
  EXPECT_TRUE(d.Has(kKilnDecisionFallback,
                    "kiln-test-launch_fails (test device) failed kernel 'atan_op' of atan_op.kmod (driver error): test "
                    "driver: launch 2 fails on purpose (device lost) (driver error); redone on kiln-cpu"))
      << d.All();
  EXPECT_EQ(d.Count(kKilnDecisionFallback), 1) << d.All();
  KilnTensorDelete(in);
  KilnTensorDelete(out);
  KilnScriptDelete(script);
  KilnModuleDelete(module);
}

TEST(ComputeContext, AnUnsupportedKernelRunsOnTheCpuWhileItsModuleStays) {
  Context c(kKilnDevicePreferGpu, DriverPath("unsupported_kernel"));
  ASSERT_NE(c.context, nullptr) << c.messages.All();
  KilnModule* module = KilnModuleCreateFromFile(KmodPath("script_state").c_str());
  KilnScript* script = KilnScriptCreate(c.context, module);
  ASSERT_NE(script, nullptr) << c.messages.All();
  const Decisions d = Read(c.context);
  const std::string second = KilnModuleGetKernelName(module, 1);
  const std::string first = KilnModuleGetKernelName(module, 0);
  EXPECT_TRUE(d.Has(kKilnDecisionKernel, "kernel " + first + " (script_state.kmod) runs on kiln-test-unsupported_kernel"))
      << d.All();
  EXPECT_TRUE(d.Has(kKilnDecisionKernel, "kernel " + second +
                                              " (script_state.kmod) runs on CPU: kiln-test-unsupported_kernel (test device) "
                                              "cannot run it: test driver: kernel 1 is unsupported on purpose"))
      << d.All();
  // Globals stay one set across both devices: an invokable (CPU) sets them, a device kernel reads them, a CPU
  // kernel changes one, and the script sees it.
  struct {
    float scale;
    int32_t counter;
  } args = {3.0f, 5};
  ASSERT_EQ(KilnScriptInvoke(script, "setScale", &args, sizeof args), kKilnOk) << c.messages.All();
  const int dims[1] = {4};
  KilnTensor* lookup = KilnTensorCreate(c.context, kKilnFloat32, dims, 1);
  const float table[4] = {100, 200, 300, 400};
  KilnTensorCopyFromBuffer(lookup, table, sizeof table);
  ASSERT_EQ(KilnScriptBindAllocation(script, "gLookup", lookup), kKilnOk) << c.messages.All();
  KilnTensor* in = KilnTensorCreate(c.context, kKilnFloat32, dims, 1);
  KilnTensor* out = KilnTensorCreate(c.context, kKilnFloat32, dims, 1);
  const float x[4] = {1, 2, 3, 4};
  KilnTensorCopyFromBuffer(in, x, sizeof x);
  ASSERT_EQ(KilnScriptForEach(script, "scaled", &in, 1, out, nullptr), kKilnOk) << c.messages.All();
  const float* y = static_cast<const float*>(KilnTensorData(out));
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(y[i], x[i] * 3.0f + i + table[i]) << i;
  KilnTensor* ints = KilnTensorCreate(c.context, kKilnInt32, dims, 1);
  const int32_t values[4] = {1, -2, 3, 4};
  KilnTensorCopyFromBuffer(ints, values, sizeof values);
  ASSERT_EQ(KilnScriptForEach(script, "count_positive", &ints, 1, nullptr, nullptr), kKilnOk) << c.messages.All();
  int32_t counter = 0;
  ASSERT_EQ(KilnScriptGetGlobal(script, "gCounter", &counter, sizeof counter), kKilnOk);
  EXPECT_EQ(counter, 5 + 42 + 3);
  EXPECT_EQ(Read(c.context).Count(kKilnDecisionFallback), 0) << Read(c.context).All();
  for (KilnTensor* t : {lookup, in, out, ints}) KilnTensorDelete(t);
  KilnScriptDelete(script);
  KilnModuleDelete(module);
}

TEST(ComputeContext, ReductionsRunOnTheDriverToo) {
  Context c(kKilnDevicePreferGpu, DriverPath("good"));
  KilnModule* module = KilnModuleCreateFromFile(KmodPath("sum_reduce").c_str());
  KilnScript* script = KilnScriptCreate(c.context, module);
  ASSERT_NE(script, nullptr) << c.messages.All();
  const int dims[1] = {100};
  KilnTensor* in = KilnTensorCreate(c.context, kKilnInt32, dims, 1);
  auto* v = static_cast<int32_t*>(KilnTensorData(in));
  for (int i = 0; i < 100; ++i) v[i] = i;
  int32_t sum = 0;
  ASSERT_EQ(KilnScriptReduce(script, "addint", &in, 1, &sum, sizeof sum, nullptr), kKilnOk) << c.messages.All();
  EXPECT_EQ(sum, 4950);
  EXPECT_TRUE(Read(c.context).Has(kKilnDecisionKernel, "reduction addint (sum_reduce.kmod) runs on kiln-test-good"))
      << Read(c.context).All();
  KilnTensorDelete(in);
  KilnScriptDelete(script);
  KilnModuleDelete(module);
}

// HAL 1.1: module_reduction_supported places each reduction; the one the driver refuses runs on the CPU, with the
// driver's reason, and the module's other reduction stays on the device.
TEST(ComputeContext, AnUnsupportedReductionRunsOnTheCpu) {
  Context c(kKilnDevicePreferGpu, DriverPath("unsupported_reduction"));
  KilnModule* module = KilnModuleCreateFromFile(KmodPath("sum_reduce").c_str());
  KilnScript* script = KilnScriptCreate(c.context, module);
  ASSERT_NE(script, nullptr) << c.messages.All();
  const int dims[1] = {100};
  KilnTensor* ints = KilnTensorCreate(c.context, kKilnInt32, dims, 1);
  KilnTensor* floats = KilnTensorCreate(c.context, kKilnFloat32, dims, 1);
  auto* iv = static_cast<int32_t*>(KilnTensorData(ints));
  auto* fv = static_cast<float*>(KilnTensorData(floats));
  for (int i = 0; i < 100; ++i) {
    iv[i] = i;
    fv[i] = static_cast<float>(i) - 50.5f;
  }
  int32_t sum = 0;
  ASSERT_EQ(KilnScriptReduce(script, "addint", &ints, 1, &sum, sizeof sum, nullptr), kKilnOk) << c.messages.All();
  EXPECT_EQ(sum, 4950);
  float range[2] = {0, 0};
  ASSERT_EQ(KilnScriptReduce(script, "minmax", &floats, 1, range, sizeof range, nullptr), kKilnOk)
      << c.messages.All();
  EXPECT_EQ(range[0], -50.5f);
  EXPECT_EQ(range[1], 48.5f);
  const Decisions d = Read(c.context);
  EXPECT_TRUE(d.Has(kKilnDecisionKernel, "reduction addint (sum_reduce.kmod) runs on kiln-test-unsupported_reduction"))
      << d.All();
  EXPECT_TRUE(d.Has(kKilnDecisionKernel, "reduction minmax (sum_reduce.kmod) runs on CPU: "
                                          "kiln-test-unsupported_reduction (test device) cannot run it: test driver: "
                                          "reduction 1 is unsupported on purpose"))
      << d.All();
  EXPECT_EQ(d.Count(kKilnDecisionFallback), 0) << d.All();
  KilnTensorDelete(ints);
  KilnTensorDelete(floats);
  KilnScriptDelete(script);
  KilnModuleDelete(module);
}

// A HAL 1.0 driver's table ends before module_reduction_supported: whatever lies past its struct_size is not
// called, and its reductions count as supported, as they did in 1.0.
TEST(ComputeContext, AHal10DriverRunsItsReductions) {
  Context c(kKilnDevicePreferGpu, DriverPath("hal_1_0"));
  KilnModule* module = KilnModuleCreateFromFile(KmodPath("sum_reduce").c_str());
  KilnScript* script = KilnScriptCreate(c.context, module);
  ASSERT_NE(script, nullptr) << c.messages.All();
  const int dims[1] = {10};
  KilnTensor* in = KilnTensorCreate(c.context, kKilnInt32, dims, 1);
  auto* v = static_cast<int32_t*>(KilnTensorData(in));
  for (int i = 0; i < 10; ++i) v[i] = i * 3;
  int32_t sum = 0;
  ASSERT_EQ(KilnScriptReduce(script, "addint", &in, 1, &sum, sizeof sum, nullptr), kKilnOk) << c.messages.All();
  EXPECT_EQ(sum, 135);
  const Decisions d = Read(c.context);
  EXPECT_TRUE(d.Has(kKilnDecisionDriver, "driver libkiln_test_hal_1_0.so loaded: kiln-test-hal_1_0 test, HAL 1.0 "
                                          "(runtime 1.1)"))
      << d.All();
  EXPECT_TRUE(d.Has(kKilnDecisionKernel, "reduction addint (sum_reduce.kmod) runs on kiln-test-hal_1_0")) << d.All();
  EXPECT_TRUE(d.Has(kKilnDecisionKernel, "reduction minmax (sum_reduce.kmod) runs on kiln-test-hal_1_0")) << d.All();
  KilnTensorDelete(in);
  KilnScriptDelete(script);
  KilnModuleDelete(module);
}

TEST(ComputeContext, GpuOnlyWithoutAGpuDriverFailsToCreate) {
  Context c(kKilnDeviceGpuOnly, DriverPath("null_required"));
  EXPECT_EQ(c.context, nullptr);
  EXPECT_TRUE(c.messages.Contains("policy gpu-only")) << c.messages.All();
}

}  // namespace
}  // namespace kiln
