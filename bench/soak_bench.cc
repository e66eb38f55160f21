// Long runs (issue 14, item 6): one interpreter invoked again and again, its resident memory read after a
// warm-up and at the end. The memory must stay flat: a growth above kMaxGrowthBytes is an error.
//   Builtins/cpu:            tm_hello_world_float.tflite (../shared/models): FULLY_CONNECTED x3, builtin ops
//   only Builtins/prefer-gpu:     the same with the Vulkan driver loaded (builtin ops run on the host either
//   way) KernelOp/cpu:            examples/atan/atan.tflite (builtin ADD, then the custom op Atan served by
//   the kilnc
//                            kernel examples/atan/atan_op.rs) on the built-in CPU driver, 1024 floats
//   KernelOp/prefer-gpu:     the same with Atan on the Vulkan driver (lavapipe on CI), checked in the
//   decision log
// Each case runs KILN_SOAK_RUNS invocations (default 100000) and reports runs, rss_start_kib, rss_end_kib and
// rss_growth_kib; the last output must equal the first. The program exits 1 when a case fails (an invoke
// fails, the output drifts, or the memory grows past the bound), so ctest soak_short (2000 runs) can gate on
// it.
//   build/ci/bench/soak_bench                       (100000 runs per case; several minutes on lavapipe)
//   KILN_SOAK_RUNS=2000 build/ci/bench/soak_bench   (what ctest soak_short runs)
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "kiln/c_api.h"
#include "kiln/compute.h"
#include "kiln/device.h"
#include "kiln/operator.h"

namespace {

constexpr int64_t kMaxGrowthBytes = 1 << 20;  // the bound: 1 MiB over the whole run
constexpr int kWarmupRuns = 200;              // JIT or pipeline creation, first allocations, caches
constexpr int kAtanElements = 1024;
bool g_failed = false;

int64_t Runs() {
  const char* env = std::getenv("KILN_SOAK_RUNS");
  const long long runs = env != nullptr ? std::atoll(env) : 100000;
  return runs > 0 ? runs : 100000;
}

// Resident set size from /proc/self/statm (its second field, in pages).
int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

void Fail(benchmark::State& state, const std::string& name, const std::string& message) {
  g_failed = true;
  std::fprintf(stderr, "soak_bench: %s: FAILED: %s\n", name.c_str(), message.c_str());
  state.SkipWithError(message.c_str());
}

struct Errors {
  std::string last;
  static void Report(void* user_data, const char* format, va_list args) {
    char buffer[1024];
    std::vsnprintf(buffer, sizeof buffer, format, args);
    static_cast<Errors*>(user_data)->last = buffer;
  }
};

struct Case {
  std::string name;
  std::string model_path;
  bool kernel_op = false;
  KilnDevicePolicy policy = kKilnDeviceCpuOnly;
};

std::string Decisions(const KilnInterpreter* interpreter) {
  std::string all;
  for (int i = 0; i < KilnInterpreterGetDecisionCount(interpreter); ++i) {
    KilnDecisionKind kind;
    const char* message = nullptr;
    if (KilnInterpreterGetDecision(interpreter, i, &kind, nullptr, &message) == kKilnOk &&
        message != nullptr) {
      all += message;
      all += "\n";
    }
  }
  return all;
}

std::vector<uint8_t> Output(const KilnInterpreter* interpreter) {
  const KilnTensor* out = KilnInterpreterGetOutputTensor(interpreter, 0);
  std::vector<uint8_t> bytes(KilnTensorByteSize(out));
  KilnTensorCopyToBuffer(out, bytes.data(), bytes.size());
  return bytes;
}

void Soak(benchmark::State& state, const Case& c) {
  Errors errors;
  KilnModel* model = KilnModelCreateFromFile(c.model_path.c_str());
  if (model == nullptr) {
    // The shared models sit beside the checkout; without them the builtin case has nothing to run.
    return state.SkipWithError((c.model_path + " not available (skipped)").c_str());
  }
  KilnModule* module = nullptr;
  KilnOperator* op = nullptr;
  if (c.kernel_op) {
    module = KilnModuleCreateFromFile(KILN_BENCH_KMOD_DIR "/atan_op.kmod");
    op = KilnOperatorCreate(kKilnBuiltinCustom, "Atan", 1);
    if (module == nullptr || KilnOperatorSetKernel(op, module, "atan_op") != kKilnOk) {
      KilnOperatorDelete(op);
      KilnModuleDelete(module);
      KilnModelDelete(model);
      return Fail(state, c.name, "atan_op.kmod did not load");
    }
  }
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(options, Errors::Report, &errors);
  KilnInterpreterOptionsSetDevicePolicy(options, c.policy);
  if (c.policy != kKilnDeviceCpuOnly) KilnInterpreterOptionsSetDriverPath(options, KILN_VULKAN_DRIVER);
  if (op != nullptr) KilnInterpreterOptionsAddOperator(options, op);
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, options);
  KilnInterpreterOptionsDelete(options);
  KilnModelDelete(model);

  auto cleanup = [&] {
    KilnInterpreterDelete(interpreter);
    KilnOperatorDelete(op);
    KilnModuleDelete(module);
  };
  bool ready = interpreter != nullptr;
  if (ready && c.kernel_op) {
    const int dims[1] = {kAtanElements};
    ready = KilnInterpreterResizeInputTensor(interpreter, 0, dims, 1) == kKilnOk;
  }
  ready = ready && KilnInterpreterAllocateTensors(interpreter) == kKilnOk;
  if (ready) {
    // Inputs: a ramp over the input's bytes, as floats (both models take float32).
    const KilnTensor* input = KilnInterpreterGetInputTensor(interpreter, 0);
    std::vector<float> x(KilnTensorByteSize(input) / sizeof(float));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 201) - 100) * 0.03f;
    ready = KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter, 0), x.data(),
                                     x.size() * sizeof(float)) == kKilnOk;
  }
  if (!ready) {
    cleanup();
    return Fail(state, c.name, "the model did not prepare: " + errors.last);
  }
  if (c.kernel_op && c.policy != kKilnDeviceCpuOnly &&
      Decisions(interpreter).find("runs on kiln-vulkan") == std::string::npos) {
    const std::string decisions = Decisions(interpreter);
    cleanup();
    // No usable Vulkan device on this machine: not a failure of Kiln's memory, so skip with the reason.
    return state.SkipWithError(("Atan does not run on Vulkan here (skipped):\n" + decisions).c_str());
  }

  for (int i = 0; i < kWarmupRuns; ++i) {
    if (KilnInterpreterInvoke(interpreter) != kKilnOk) {
      cleanup();
      return Fail(state, c.name, "warm-up invoke failed: " + errors.last);
    }
  }
  const std::vector<uint8_t> first = Output(interpreter);
  const int64_t rss_start = ResidentBytes();
  const auto start = std::chrono::steady_clock::now();
  int64_t runs = 0;
  bool ok = true;
  for (auto _ : state) {
    if (KilnInterpreterInvoke(interpreter) != kKilnOk) {
      ok = false;
      break;
    }
    ++runs;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int64_t rss_end = ResidentBytes();
  const bool same_output = ok && Output(interpreter) == first;
  cleanup();

  state.counters["runs"] = static_cast<double>(runs);
  state.counters["seconds"] = seconds;
  state.counters["rss_start_kib"] = static_cast<double>(rss_start / 1024);
  state.counters["rss_end_kib"] = static_cast<double>(rss_end / 1024);
  state.counters["rss_growth_kib"] = static_cast<double>((rss_end - rss_start) / 1024);
  std::fprintf(
      stderr,
      "soak_bench: %s: %lld runs in %.2f s, RSS %lld KiB after warm-up, %lld KiB at the end (%+lld KiB)\n",
      c.name.c_str(), static_cast<long long>(runs), seconds, static_cast<long long>(rss_start / 1024),
      static_cast<long long>(rss_end / 1024), static_cast<long long>((rss_end - rss_start) / 1024));
  if (!ok) return Fail(state, c.name, "invoke " + std::to_string(runs + 1) + " failed: " + errors.last);
  if (!same_output) return Fail(state, c.name, "the output of the last run differs from the first");
  if (rss_end - rss_start > kMaxGrowthBytes) {
    return Fail(state, c.name,
                "resident memory grew by " + std::to_string((rss_end - rss_start) / 1024) +
                    " KiB, more than the bound of " + std::to_string(kMaxGrowthBytes / 1024) + " KiB");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t runs = Runs();
  const std::string hello = std::string(KILN_MODELS_DIR) + "/tm_hello_world_float.tflite";
  const std::string atan = std::string(KILN_SOURCE_DIR) + "/examples/atan/atan.tflite";
  const Case cases[] = {
      {"Soak/Builtins/cpu", hello, false, kKilnDeviceCpuOnly},
      {"Soak/Builtins/prefer-gpu", hello, false, kKilnDevicePreferGpu},
      {"Soak/KernelOp/cpu", atan, true, kKilnDeviceCpuOnly},
      {"Soak/KernelOp/prefer-gpu", atan, true, kKilnDevicePreferGpu},
  };
  for (const Case& c : cases) {
    benchmark::RegisterBenchmark(c.name.c_str(), [c](benchmark::State& state) { Soak(state, c); })
        ->Iterations(runs)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return g_failed ? 1 : 0;
}
