// Threads, as the public headers promise them (kiln/common.h, "Threads"): a model, a kernel module and an
// operator are shared by any number of threads; each interpreter, context and script is used by one thread at a
// time. Many interpreters over one model and one module, on the CPU driver and on Vulkan, give the answers one
// interpreter gives alone; contexts and scripts in many threads do too; drivers load from many threads at once;
// processes compiling the same kernel share one KILN_CACHE_DIR. The `tsan` preset runs this under
// ThreadSanitizer.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kiln/c_api.h"
#include "kiln/compute.h"
#include "kiln/device.h"
#include "kiln/operator.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/test_util.h"
#include "tests/vulkan_probe.h"

extern char** environ;

namespace kiln {
namespace {

using testing::KmodPath;

constexpr int kThreads = 4;
constexpr int kInterpretersPerThread = 2;
constexpr int kRuns = 25;
constexpr int kElements = 4099;  // odd: the CPU driver splits it unevenly over its threads

// Releases every waiting thread at once, so that creation, driver loading and invokes overlap.
class StartLine {
 public:
  explicit StartLine(int count) : waiting_(count) {}
  void Arrive() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (--waiting_ == 0) {
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [this] { return waiting_ == 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int waiting_;
};

// Collects messages from many threads.
struct SharedMessages {
  std::mutex mutex;
  std::string text;
  static void Report(void* user_data, const char* format, va_list args) {
    char buffer[2048];
    std::vsnprintf(buffer, sizeof buffer, format, args);
    auto* self = static_cast<SharedMessages*>(user_data);
    std::lock_guard<std::mutex> lock(self->mutex);
    self->text += buffer;
    self->text += '\n';
  }
  std::string All() {
    std::lock_guard<std::mutex> lock(mutex);
    return text;
  }
};

std::string AtanModelPath() { return std::string(KILN_SOURCE_DIR) + "/examples/atan/atan.tflite"; }

bool UsedVulkan(const KilnInterpreter* interpreter) {
  for (int i = 0; i < KilnInterpreterGetDecisionCount(interpreter); ++i) {
    KilnDecisionKind kind;
    const char* message = nullptr;
    if (KilnInterpreterGetDecision(interpreter, i, &kind, nullptr, &message) == kKilnOk && kind == kKilnDecisionNode &&
        std::strstr(message, "runs on kiln-vulkan") != nullptr) {
      return true;
    }
  }
  return false;
}

// The shared objects: one model, one module, one operator serving the model's Atan with the module's kernel.
class SharedObjects : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "vulkan" && !testing::VulkanDeviceExists()) GTEST_SKIP() << "no Vulkan device here";
    model_ = KilnModelCreateFromFile(AtanModelPath().c_str());
    ASSERT_NE(model_, nullptr);
    module_ = KilnModuleCreateFromFile(KmodPath("atan_op").c_str());
    ASSERT_NE(module_, nullptr);
    op_ = KilnOperatorCreate(kKilnBuiltinCustom, "Atan", 1);
    ASSERT_EQ(KilnOperatorSetKernel(op_, module_, "atan_op"), kKilnOk);
    for (int i = 0; i < kElements; ++i) input_.push_back(-20.0f + 40.0f * static_cast<float>(i) / kElements);
  }
  void TearDown() override {
    KilnOperatorDelete(op_);
    KilnModuleDelete(module_);
    KilnModelDelete(model_);
  }

  // An interpreter over the shared model and operator, input resized to kElements; null (with the reason in
  // `messages`) on failure.
  KilnInterpreter* NewInterpreter(SharedMessages* messages, int threads) {
    KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
    KilnInterpreterOptionsSetErrorReporter(options, SharedMessages::Report, messages);
    KilnInterpreterOptionsSetNumThreads(options, threads);
    KilnInterpreterOptionsAddOperator(options, op_);
    if (GetParam() == "vulkan") {
      KilnInterpreterOptionsSetDevicePolicy(options, kKilnDevicePreferGpu);
      KilnInterpreterOptionsSetDriverPath(options, KILN_VULKAN_DRIVER);
    } else {
      KilnInterpreterOptionsSetDevicePolicy(options, kKilnDeviceCpuOnly);
    }
    KilnInterpreter* interpreter = KilnInterpreterCreate(model_, options);
    KilnInterpreterOptionsDelete(options);
    if (interpreter == nullptr) return nullptr;
    const int dims[1] = {kElements};
    if (KilnInterpreterResizeInputTensor(interpreter, 0, dims, 1) != kKilnOk ||
        KilnInterpreterAllocateTensors(interpreter) != kKilnOk) {
      KilnInterpreterDelete(interpreter);
      return nullptr;
    }
    return interpreter;
  }

  // Runs `interpreter` on `input`; the output's bytes, or empty on failure.
  static std::vector<float> Run(KilnInterpreter* interpreter, const std::vector<float>& input) {
    KilnTensor* in = KilnInterpreterGetInputTensor(interpreter, 0);
    if (KilnTensorCopyFromBuffer(in, input.data(), input.size() * sizeof(float)) != kKilnOk) return {};
    if (KilnInterpreterInvoke(interpreter) != kKilnOk) return {};
    std::vector<float> out(input.size());
    if (KilnTensorCopyToBuffer(KilnInterpreterGetOutputTensor(interpreter, 0), out.data(),
                               out.size() * sizeof(float)) != kKilnOk) {
      return {};
    }
    return out;
  }

  KilnModel* model_ = nullptr;
  KilnModule* module_ = nullptr;
  KilnOperator* op_ = nullptr;
  std::vector<float> input_;
};

// kThreads threads each create kInterpretersPerThread interpreters at once (drivers load concurrently) and invoke
// them kRuns times with inputs of their own; every output equals what one interpreter alone computes.
TEST_P(SharedObjects, ManyInterpretersOverOneModelModuleAndOperator) {
  SharedMessages messages;
  // The reference: one interpreter, alone, for each thread's input (the input scaled by thread number).
  std::vector<std::vector<float>> inputs, want;
  {
    KilnInterpreter* alone = NewInterpreter(&messages, 1);
    ASSERT_NE(alone, nullptr) << messages.All();
    if (GetParam() == "vulkan") {
      ASSERT_TRUE(UsedVulkan(alone)) << "a Vulkan device exists, but Kiln did not use it";
    }
    for (int t = 0; t < kThreads; ++t) {
      inputs.push_back(input_);
      for (float& v : inputs.back()) v *= 1.0f + 0.25f * static_cast<float>(t);
      want.push_back(Run(alone, inputs.back()));
      ASSERT_EQ(want.back().size(), input_.size()) << messages.All();
    }
    KilnInterpreterDelete(alone);
  }
  StartLine start(kThreads);
  std::atomic<int> mismatches{0}, failures{0}, on_vulkan{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.Arrive();
      std::vector<KilnInterpreter*> mine;
      for (int k = 0; k < kInterpretersPerThread; ++k) {
        KilnInterpreter* interpreter = NewInterpreter(&messages, 1 + (k % 2));  // 1 and 2 threads each
        if (interpreter == nullptr) {
          ++failures;
          continue;
        }
        on_vulkan += UsedVulkan(interpreter) ? 1 : 0;
        mine.push_back(interpreter);
      }
      for (int run = 0; run < kRuns; ++run) {
        for (KilnInterpreter* interpreter : mine) {
          const std::vector<float> got = Run(interpreter, inputs[t]);
          if (got.empty()) {
            ++failures;
          } else if (std::memcmp(got.data(), want[t].data(), got.size() * sizeof(float)) != 0) {
            ++mismatches;
          }
        }
      }
      for (KilnInterpreter* interpreter : mine) KilnInterpreterDelete(interpreter);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0) << messages.All();
  EXPECT_EQ(mismatches.load(), 0) << "outputs differ from one interpreter's alone";
  if (GetParam() == "vulkan") {
    EXPECT_EQ(on_vulkan.load(), kThreads * kInterpretersPerThread);
  }
}

// Builtin ops on the fast path (XNNPACK, each interpreter with its own thread pool) over one shared real model.
TEST(Builtins, ManyInterpretersOverOneRealModel) {
  KILN_REQUIRE_MODELS();
  const std::string path = testing::ModelPath("mt_kws_dscnn_float.tflite");
  KilnModel* model = KilnModelCreateFromFile(path.c_str());
  ASSERT_NE(model, nullptr);
  auto make = [&](int threads) {
    KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
    KilnInterpreterOptionsSetNumThreads(options, threads);
    KilnInterpreter* interpreter = KilnInterpreterCreate(model, options);
    KilnInterpreterOptionsDelete(options);
    if (interpreter != nullptr && KilnInterpreterAllocateTensors(interpreter) != kKilnOk) {
      KilnInterpreterDelete(interpreter);
      return static_cast<KilnInterpreter*>(nullptr);
    }
    return interpreter;
  };
  KilnInterpreter* alone = make(1);
  ASSERT_NE(alone, nullptr);
  const size_t count = KilnTensorByteSize(KilnInterpreterGetInputTensor(alone, 0)) / sizeof(float);
  std::vector<float> input(count);
  for (size_t i = 0; i < count; ++i) input[i] = std::sin(0.37f * static_cast<float>(i));
  KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(alone, 0), input.data(), count * sizeof(float));
  ASSERT_EQ(KilnInterpreterInvoke(alone), kKilnOk);
  const KilnTensor* out = KilnInterpreterGetOutputTensor(alone, 0);
  std::vector<uint8_t> want(KilnTensorByteSize(out));
  KilnTensorCopyToBuffer(out, want.data(), want.size());
  KilnInterpreterDelete(alone);

  std::atomic<int> mismatches{0}, failures{0};
  StartLine start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.Arrive();
      KilnInterpreter* interpreter = make(1 + t % 2);
      if (interpreter == nullptr) {
        ++failures;
        return;
      }
      for (int run = 0; run < kRuns; ++run) {
        KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter, 0), input.data(), count * sizeof(float));
        if (KilnInterpreterInvoke(interpreter) != kKilnOk) {
          ++failures;
          continue;
        }
        std::vector<uint8_t> got(want.size());
        KilnTensorCopyToBuffer(KilnInterpreterGetOutputTensor(interpreter, 0), got.data(), got.size());
        // XNNPACK's result does not depend on the thread count for this model's ops (fast_path_test checks
        // 1, 2 and all threads against each other); any difference here is a race.
        if (got != want) ++mismatches;
      }
      KilnInterpreterDelete(interpreter);
    });
  }
  for (std::thread& thread : threads) thread.join();
  KilnModelDelete(model);
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

// Each thread its own context and script of the shared module, with its own value of the script global.
TEST_P(SharedObjects, ContextsAndScriptsInManyThreads) {
  auto run = [&](float offset, SharedMessages* messages, std::vector<float>* out) {
    KilnContextOptions* options = KilnContextOptionsCreate();
    KilnContextOptionsSetErrorReporter(options, SharedMessages::Report, messages);
    KilnContextOptionsSetDevicePolicy(options, GetParam() == "vulkan" ? kKilnDevicePreferGpu : kKilnDeviceCpuOnly);
    if (GetParam() == "vulkan") KilnContextOptionsSetDriverPath(options, KILN_VULKAN_DRIVER);
    KilnContext* context = KilnContextCreate(options);
    KilnContextOptionsDelete(options);
    if (context == nullptr) return false;
    KilnScript* script = KilnScriptCreate(context, module_);
    const int dims[1] = {kElements};
    KilnTensor* in = KilnTensorCreate(context, kKilnFloat32, dims, 1);
    KilnTensor* result = KilnTensorCreate(context, kKilnFloat32, dims, 1);
    bool ok = script != nullptr && in != nullptr && result != nullptr &&
              KilnScriptSetGlobal(script, "offset", &offset, sizeof offset) == kKilnOk &&
              KilnTensorCopyFromBuffer(in, input_.data(), input_.size() * sizeof(float)) == kKilnOk;
    for (int r = 0; ok && r < kRuns; ++r) {
      ok = KilnScriptForEach(script, "atan_op", &in, 1, result, nullptr) == kKilnOk;
    }
    if (ok) {
      out->resize(kElements);
      ok = KilnTensorCopyToBuffer(result, out->data(), out->size() * sizeof(float)) == kKilnOk;
    }
    KilnTensorDelete(in);
    KilnTensorDelete(result);
    KilnScriptDelete(script);
    KilnContextDelete(context);
    return ok;
  };
  SharedMessages messages;
  std::vector<std::vector<float>> want(kThreads), got(kThreads);
  for (int t = 0; t < kThreads; ++t) ASSERT_TRUE(run(0.5f * t, &messages, &want[t])) << messages.All();
  StartLine start(kThreads);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.Arrive();
      if (!run(0.5f * t, &messages, &got[t])) ++failures;
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_EQ(failures.load(), 0) << messages.All();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(got[t], want[t]) << "thread " << t;
}

INSTANTIATE_TEST_SUITE_P(Devices, SharedObjects, ::testing::Values(std::string("cpu"), std::string("vulkan")),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// Several processes compile the same kernel for the CPU driver at once into one fresh KILN_CACHE_DIR: all
// succeed with the same answer, one object ends up cached, and no temporary file is left behind.
TEST(Processes, CompileTheSameKernelIntoOneCacheDir) {
  const std::filesystem::path cache =
      std::filesystem::path(KILN_BINARY_DIR) / ("concurrency-cache-" + std::to_string(getpid()));
  std::filesystem::remove_all(cache);
  std::filesystem::create_directories(cache);
  const std::string cache_env = "KILN_CACHE_DIR=" + cache.string();
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "KILN_CACHE_DIR=", 15) != 0) env_strings.push_back(*e);
  }
  env_strings.push_back(cache_env);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  constexpr int kProcesses = 4;
  const std::string op = "Atan=" + KmodPath("atan_op") + ":atan_op";
  const std::string input = std::string(KILN_SOURCE_DIR) + "/examples/atan/atan_x.npy";
  std::vector<pid_t> pids;
  std::vector<std::string> outputs;
  for (int p = 0; p < kProcesses; ++p) {
    const std::string out_path = (cache / ("out" + std::to_string(p) + ".txt")).string();
    outputs.push_back(out_path);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::vector<std::string> args = {KILN_CLI, "run", AtanModelPath(), "--op", op, "--input", input,
                                     "--device", "cpu"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    ASSERT_EQ(posix_spawn(&pid, KILN_CLI, &actions, nullptr, argv.data(), envp.data()), 0);
    posix_spawn_file_actions_destroy(&actions);
    pids.push_back(pid);
  }
  std::string first;
  for (int p = 0; p < kProcesses; ++p) {
    int status = 0;
    ASSERT_EQ(waitpid(pids[p], &status, 0), pids[p]);
    std::ifstream f(outputs[p]);
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "process " << p << ":\n" << text;
    const size_t y = text.find("output 0 'y'");
    ASSERT_NE(y, std::string::npos) << text;
    const std::string line = text.substr(y, text.find('\n', y) - y);
    if (p == 0) first = line;
    EXPECT_EQ(line, first) << "process " << p;
  }
  int objects = 0, temporaries = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(cache)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".kobj") ++objects;
    if (name.find(".tmp.") != std::string::npos) ++temporaries;
  }
  EXPECT_EQ(objects, 1) << "one kernel, one cached object";
  EXPECT_EQ(temporaries, 0);
  std::filesystem::remove_all(cache);
}

}  // namespace
}  // namespace kiln
