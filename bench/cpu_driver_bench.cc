// The CPU driver's speed: y = atan(x + offset) over 16M floats through the HAL, against the same loop written
// in C++ (-O3 -march=native, std::atan) on 1 and 2 threads and against memcpy of the same bytes; the cost of
// one launch on a tiny tensor; a module's first compile against a cached load.
//
// Ratios are reported as counters: vs_native = native time / driver time (above 1: the driver is faster),
// vs_memcpy = memcpy time / driver time (1 would be bandwidth-bound).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "tests/cpu/cpu_driver_harness.h"

namespace kiln {
namespace bench {

void NativeAtan(const float* in, float* out, size_t begin, size_t end, float offset);

namespace {

constexpr size_t kElements = 16u << 20;
constexpr float kOffset = 0.125f;

std::string AtanBitcode() {
  return testing::ReadBinaryFile(std::string(KILN_CPU_BENCH_KERNEL_DIR) + "/atan_op.bc");
}

struct Data {
  std::vector<float> in, out;
  Data() : in(kElements), out(kElements) {
    for (size_t i = 0; i < kElements; ++i)
      in[i] = static_cast<float>(static_cast<int>(i % 4001) - 2000) * 5e-3f;
  }
};
Data& SharedData() {
  static Data data;
  return data;
}

double Seconds(const std::function<void()>& fn) {
  auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void RunNative(int threads) {
  Data& d = SharedData();
  std::vector<std::thread> workers;
  const size_t per = kElements / threads;
  for (int t = 1; t < threads; ++t) {
    workers.emplace_back([&, t] {
      NativeAtan(d.in.data(), d.out.data(), t * per, t + 1 == threads ? kElements : (t + 1) * per, kOffset);
    });
  }
  NativeAtan(d.in.data(), d.out.data(), 0, per, kOffset);
  for (std::thread& w : workers) w.join();
}

// Baselines for the ratio counters, measured once (best of 3) per process.
double NativeSeconds(int threads) {
  static double cached[3] = {0, 0, 0};
  if (cached[threads] == 0) {
    double best = 1e9;
    for (int i = 0; i < 3; ++i) best = std::min(best, Seconds([&] { RunNative(threads); }));
    cached[threads] = best;
  }
  return cached[threads];
}
double MemcpySeconds() {
  static double cached = 0;
  if (cached == 0) {
    Data& d = SharedData();
    double best = 1e9;
    for (int i = 0; i < 3; ++i) {
      best = std::min(best, Seconds([&] { memcpy(d.out.data(), d.in.data(), kElements * sizeof(float)); }));
    }
    cached = best;
  }
  return cached;
}

// One driver instance with an AtanModule loaded and one script, for `threads` threads.
struct DriverFixture {
  testing::CpuDriverHarness harness;
  testing::ModuleDescBuilder builder{"atan_op.rs", AtanBitcode()};
  KilnHalModule* module = nullptr;
  KilnHalScript* script = nullptr;
  std::vector<KilnHalBuffer*> buffers;

  DriverFixture(int threads, const std::string& options, const std::string& cache_dir = "off")
      : harness({{"cache_dir", cache_dir}, {"cpu.threads", std::to_string(threads)}}) {
    builder.Kernel("atan_op", KILN_HAL_SIG_IN | KILN_HAL_SIG_OUT | KILN_HAL_SIG_KERNEL, {4}, 4)
        .Global("offset", 4);
    builder.Options(options);
    if (!harness.ok() || harness.hal().module_load(harness.device(), builder.Build(), &module) != kKilnOk ||
        harness.hal().script_create(module, nullptr, &script) != kKilnOk ||
        harness.hal().script_set_global(script, "offset", &kOffset, 4) != kKilnOk) {
      fprintf(stderr, "CPU driver setup failed: %s\n", harness.LastError().c_str());
      abort();
    }
  }
  ~DriverFixture() {
    for (KilnHalBuffer* buffer : buffers) harness.hal().buffer_destroy(buffer);
    harness.hal().script_destroy(script);
    harness.hal().module_unload(module);
  }
  KilnHalForEachDesc Launch(float* in, float* out, uint32_t n, KilnHalBufferView* views) {
    buffers.push_back(harness.CreateBuffer(n * 4ull, in));
    buffers.push_back(harness.CreateBuffer(n * 4ull, out));
    views[0] = testing::DenseView(buffers[buffers.size() - 2], 4);
    views[1] = testing::DenseView(buffers.back(), 4);
    return testing::ForEachDesc(0, n, 1, 1, &views[0], 1, &views[1]);
  }
};

void CheckResult(benchmark::State& state) {
  Data& d = SharedData();
  for (size_t i = 0; i < kElements; i += 4099) {
    float expected = std::atan(d.in[i] + kOffset);
    if (std::fabs(d.out[i] - expected) > 1e-5f) {
      state.SkipWithError("driver result differs from std::atan");
      return;
    }
  }
}

// state.range(0): threads; state.range(1): 1 = let the vectorizer call glibc's libmvec for atanf (at the
// CPU's preferred vector width), 2 = the same with 512-bit vectors.
void BM_DriverAtan16M(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const char* const options[] = {"", "veclib=libmvec", "veclib=libmvec,prefer-vector-width=512"};
  DriverFixture fixture(threads, options[state.range(1)]);
  Data& d = SharedData();
  KilnHalBufferView views[2];
  KilnHalForEachDesc desc = fixture.Launch(d.in.data(), d.out.data(), kElements, views);
  std::fill(d.out.begin(), d.out.end(), 0.0f);
  double best = 1e9;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    if (fixture.harness.hal().launch_for_each(fixture.script, &desc) != kKilnOk) {
      state.SkipWithError(fixture.harness.LastError().c_str());
      return;
    }
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  CheckResult(state);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kElements * 8));
  state.counters["vs_native"] = NativeSeconds(threads) / best;
  state.counters["vs_native_1t"] = NativeSeconds(1) / best;
  state.counters["vs_memcpy"] = MemcpySeconds() / best;
  state.counters["ns_per_elem"] = best * 1e9 / kElements;
}
BENCHMARK(BM_DriverAtan16M)
    ->ArgsProduct({{1, 2}, {0, 1, 2}})
    ->ArgNames({"threads", "libmvec"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_NativeAtan16M(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  for (auto _ : state) RunNative(threads);
  CheckResult(state);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kElements * 8));
  state.counters["vs_memcpy"] = MemcpySeconds() / NativeSeconds(threads);
}
BENCHMARK(BM_NativeAtan16M)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Memcpy16M(benchmark::State& state) {
  Data& d = SharedData();
  for (auto _ : state) {
    memcpy(d.out.data(), d.in.data(), kElements * sizeof(float));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kElements * 8));
}
BENCHMARK(BM_Memcpy16M)->Unit(benchmark::kMillisecond)->UseRealTime();

// One launch over a 16-element tensor: validation, slicing and the call, run inline on the caller.
void BM_TinyLaunch(benchmark::State& state) {
  DriverFixture fixture(2, "");
  float in[16], out[16];
  for (int i = 0; i < 16; ++i) in[i] = i * 0.1f;
  KilnHalBufferView views[2];
  KilnHalForEachDesc desc = fixture.Launch(in, out, 16, views);
  for (auto _ : state) {
    if (fixture.harness.hal().launch_for_each(fixture.script, &desc) != kKilnOk)
      state.SkipWithError("launch failed");
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_TinyLaunch)->Unit(benchmark::kMicrosecond);

// A launch just big enough to be split across the pool (64 KiB of output: 4 slices).
void BM_SmallPooledLaunch(benchmark::State& state) {
  DriverFixture fixture(2, "");
  std::vector<float> in(16384, 0.5f), out(16384);
  KilnHalBufferView views[2];
  KilnHalForEachDesc desc = fixture.Launch(in.data(), out.data(), 16384, views);
  for (auto _ : state) {
    if (fixture.harness.hal().launch_for_each(fixture.script, &desc) != kKilnOk)
      state.SkipWithError("launch failed");
  }
}
BENCHMARK(BM_SmallPooledLaunch)->Unit(benchmark::kMicrosecond);

std::string MakeCacheDir() {
  char pattern[] = "/tmp/kiln-cpu-bench-XXXXXX";
  return mkdtemp(pattern);
}

// module_load that compiles (no cache) and, separately, one that hits a warm cache, each followed by
// script_create (the JIT link), which is what a runtime pays before the first launch.
void BM_ModuleLoad(benchmark::State& state) {
  const bool cached = state.range(0) != 0;
  const std::string cache_dir = cached ? MakeCacheDir() : "off";
  testing::CpuDriverHarness harness({{"cache_dir", cache_dir}, {"cpu.threads", "1"}});
  testing::ModuleDescBuilder builder("atan_op.rs", AtanBitcode());
  builder.Kernel("atan_op", KILN_HAL_SIG_IN | KILN_HAL_SIG_OUT | KILN_HAL_SIG_KERNEL, {4}, 4)
      .Global("offset", 4);
  const KilnHalModuleDesc* desc = builder.Build();
  KilnHalModule* module = nullptr;
  if (cached) {  // warm the cache
    harness.hal().module_load(harness.device(), desc, &module);
    harness.hal().module_unload(module);
  }
  uint64_t hits = 0;
  for (auto _ : state) {
    KilnHalScript* script = nullptr;
    if (harness.hal().module_load(harness.device(), desc, &module) != kKilnOk ||
        harness.hal().script_create(module, nullptr, &script) != kKilnOk) {
      state.SkipWithError(harness.LastError().c_str());
      break;
    }
    KilnHalModuleInfo info{};
    info.struct_size = sizeof(info);
    harness.hal().module_get_info(module, &info);
    hits += info.cache_result == kKilnHalCacheHit;
    harness.hal().script_destroy(script);
    harness.hal().module_unload(module);
  }
  state.counters["cache_hits"] =
      benchmark::Counter(static_cast<double>(hits), benchmark::Counter::kAvgIterations);
  state.counters["kernels"] = 1;
  if (cached) std::system(("rm -rf '" + cache_dir + "'").c_str());
}
BENCHMARK(BM_ModuleLoad)->Arg(0)->Arg(1)->ArgName("cached")->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace bench
}  // namespace kiln

BENCHMARK_MAIN();
