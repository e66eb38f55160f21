// The Vulkan driver, loaded with dlopen as the runtime loads it, running a hand-written add_one kernel
// (kiln/spirv_abi.h). Each benchmark also measures, in the same run, memcpy of the same bytes and a plain
// host loop doing the same work, and reports the ratios as counters (x_memcpy, x_host_loop).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "tests/vulkan/vulkan_harness.h"

namespace kiln {
namespace testing {
namespace {

GlslKernel AddOneKernel() { return UnaryKernel("add_one", "float", "x + 1.0"); }

struct Fixture {
  std::unique_ptr<VulkanHarness> harness;
  SpirvModuleBuilder builder{"bench_add_one.rs"};
  KilnHalModule* module = nullptr;
  KilnHalScript* script = nullptr;
  KilnHalBuffer* a = nullptr;
  KilnHalBuffer* b = nullptr;
  std::string error;

  bool Init(uint32_t n) {
    harness = std::make_unique<VulkanHarness>(std::map<std::string, std::string>{{"cache_dir", "off"}});
    if (!harness->ok()) return Fail(harness->LastError());
    builder.Kernel(AddOneKernel());
    if (!builder.Compile(&error)) return false;
    const KilnHalDriver& hal = harness->hal();
    if (hal.module_load(harness->device(), builder.Build(), &module) != kKilnOk ||
        hal.script_create(module, nullptr, &script) != kKilnOk) {
      return Fail(harness->LastError());
    }
    std::vector<float> zeros(n, 0.0f);
    a = harness->CreateBuffer(uint64_t{n} * 4);
    b = harness->CreateBuffer(uint64_t{n} * 4);
    if (!a || !b || hal.buffer_write(a, 0, zeros.data(), zeros.size() * 4) != kKilnOk) {
      return Fail(harness->LastError());
    }
    return true;
  }
  bool Fail(const std::string& message) {
    error = message;
    return false;
  }
  ~Fixture() {
    if (!harness || !harness->ok()) return;
    const KilnHalDriver& hal = harness->hal();
    if (a) hal.buffer_destroy(a);
    if (b) hal.buffer_destroy(b);
    if (script) hal.script_destroy(script);
    if (module) hal.module_unload(module);
  }
};

// Seconds per call of `fn`, over enough calls to take ~20 ms.
template <typename Fn>
double SecondsPer(Fn fn) {
  using Clock = std::chrono::steady_clock;
  int reps = 1;
  for (;;) {
    auto start = Clock::now();
    for (int i = 0; i < reps; ++i) fn();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (seconds > 0.02 || reps > (1 << 20)) return seconds / reps;
    reps *= 4;
  }
}

void AddBaselines(benchmark::State& state, uint32_t n, int launches, double seconds_per_iteration) {
  std::vector<float> in(n, 1.0f), out(n);
  const double memcpy_s = SecondsPer([&] {
    memcpy(out.data(), in.data(), n * 4);
    benchmark::DoNotOptimize(out.data());
  });
  const double loop_s = SecondsPer([&] {
    for (uint32_t i = 0; i < n; ++i) out[i] = in[i] + 1.0f;
    benchmark::DoNotOptimize(out.data());
  });
  state.counters["x_memcpy"] = seconds_per_iteration / (memcpy_s * launches);
  state.counters["x_host_loop"] = seconds_per_iteration / (loop_s * launches);
  state.counters["memcpy_us"] = memcpy_s * 1e6;
  state.counters["host_loop_us"] = loop_s * 1e6;
}

void BM_VulkanLaunch(benchmark::State& state) {
  const uint32_t n = static_cast<uint32_t>(state.range(0));
  Fixture f;
  if (!f.Init(n)) {
    state.SkipWithError(f.error.c_str());
    return;
  }
  const KilnHalDriver& hal = f.harness->hal();
  KilnHalBufferView views[2] = {View(f.a, 4, 4), View(f.b, 4, 4)};
  KilnHalForEachDesc fe = ForEach(0, n, 1, 1, &views[0], 1, &views[1]);
  auto start = std::chrono::steady_clock::now();
  int64_t iterations = 0;
  for (auto _ : state) {
    if (hal.launch_for_each(f.script, &fe) != kKilnOk) {
      state.SkipWithError(f.harness->LastError().c_str());
      return;
    }
    ++iterations;
  }
  const double per = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
                     static_cast<double>(std::max<int64_t>(iterations, 1));
  state.SetBytesProcessed(state.iterations() * int64_t{n} * 8);
  AddBaselines(state, n, 1, per);
}
BENCHMARK(BM_VulkanLaunch)->Arg(1)->Arg(1 << 12)->Arg(1 << 20)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_VulkanBatchOfTen(benchmark::State& state) {
  const uint32_t n = static_cast<uint32_t>(state.range(0));
  Fixture f;
  if (!f.Init(n)) {
    state.SkipWithError(f.error.c_str());
    return;
  }
  const KilnHalDriver& hal = f.harness->hal();
  KilnHalBatch* batch = nullptr;
  if (hal.batch_create(f.harness->device(), &batch) != kKilnOk) {
    state.SkipWithError(f.harness->LastError().c_str());
    return;
  }
  KilnHalBufferView va = View(f.a, 4, 4), vb = View(f.b, 4, 4);
  for (int i = 0; i < 10; ++i) {
    KilnHalForEachDesc fe = ForEach(0, n, 1, 1, i % 2 ? &vb : &va, 1, i % 2 ? &va : &vb);
    hal.batch_record_for_each(batch, f.script, &fe);
  }
  auto start = std::chrono::steady_clock::now();
  int64_t iterations = 0;
  for (auto _ : state) {
    KilnHalFence* fence = nullptr;
    bool done = false;
    if (hal.batch_submit(batch, &fence) != kKilnOk || hal.fence_wait(fence, UINT64_MAX, &done) != kKilnOk) {
      state.SkipWithError(f.harness->LastError().c_str());
      break;
    }
    hal.fence_destroy(fence);
    ++iterations;
  }
  const double per = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
                     static_cast<double>(std::max<int64_t>(iterations, 1));
  hal.batch_destroy(batch);
  state.SetBytesProcessed(state.iterations() * int64_t{n} * 8 * 10);
  state.counters["us_per_launch"] = per * 1e6 / 10;
  AddBaselines(state, n, 10, per);
}
BENCHMARK(BM_VulkanBatchOfTen)
    ->Arg(1)
    ->Arg(1 << 12)
    ->Arg(1 << 20)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace testing
}  // namespace kiln

BENCHMARK_MAIN();
