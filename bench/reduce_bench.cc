// A reduction (bench/kernels/sum.rs: a float sum, a float max) over 1M and 16M floats through the compute API,
// on the CPU driver (all cores) and on the Vulkan driver (lavapipe on CI), against two baselines measured in
// the same run: the same operation written well in C++ (a sum for the sum, an fmax for the max; sixteen
// independent accumulators the compiler vectorises without reassociation flags, the cells split over every
// core as the driver splits them) and memcpy of the same bytes. Each reports ns per element and the ratios
// x_written_well and x_memcpy (time / baseline; lower is better).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "kiln/c_api.h"
#include "kiln/compute.h"
#include "kiln/device.h"

namespace {

using Clock = std::chrono::steady_clock;

std::vector<float> Input(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>(i % 2001) - 1000) * 0.25f;
  return v;
}

// Median seconds of `fn` over 5 runs.
template <typename Fn>
double Median(Fn fn) {
  std::vector<double> times;
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = Clock::now();
    fn();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[2];
}

// `op` over x[0, n) from `init`: sixteen accumulators per thread, one slice of the cells per core.
template <typename Op>
__attribute__((noinline)) float WrittenWell(const float* x, size_t n, float init, Op op) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<float> partial(threads, init);
  auto slice = [&](unsigned t) {
    const size_t begin = n * t / threads, end = n * (t + 1) / threads;
    float acc[16];
    std::fill(acc, acc + 16, init);
    size_t i = begin;
    for (; i + 16 <= end; i += 16) {
      for (int k = 0; k < 16; ++k) acc[k] = op(acc[k], x[i + k]);
    }
    for (; i < end; ++i) acc[0] = op(acc[0], x[i]);
    float r = init;
    for (float a : acc) r = op(r, a);
    partial[t] = r;
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(slice, t);
  slice(0);
  for (std::thread& t : pool) t.join();
  float r = init;
  for (float p : partial) r = op(r, p);
  return r;
}

void Reduce(benchmark::State& state, const char* reduction, bool vulkan) {
  const size_t n = static_cast<size_t>(state.range(0));
  KilnContextOptions* options = KilnContextOptionsCreate();
  if (vulkan) {
    KilnContextOptionsSetDevicePolicy(options, kKilnDeviceGpuOnly);
    KilnContextOptionsSetDriverPath(options, KILN_BENCH_VULKAN_DRIVER);
  } else {
    KilnContextOptionsSetDevicePolicy(options, kKilnDeviceCpuOnly);
  }
  KilnContext* context = KilnContextCreate(options);
  KilnContextOptionsDelete(options);
  KilnModule* module = KilnModuleCreateFromFile(KILN_BENCH_KMOD_DIR "/sum.kmod");
  KilnScript* script = context && module ? KilnScriptCreate(context, module) : nullptr;
  const int dims[1] = {static_cast<int>(n)};
  KilnTensor* tensor = context ? KilnTensorCreate(context, kKilnFloat32, dims, 1) : nullptr;
  if (!script || !tensor) {
    state.SkipWithError("could not create the context, module, script or tensor");
  } else {
    const std::vector<float> x = Input(n);
    std::memcpy(KilnTensorData(tensor), x.data(), n * 4);
    float result = 0;
    if (KilnScriptReduce(script, reduction, &tensor, 1, &result, 4, nullptr) != kKilnOk) {
      state.SkipWithError("KilnScriptReduce failed");
    } else {
      for (auto _ : state) {
        KilnScriptReduce(script, reduction, &tensor, 1, &result, 4, nullptr);
        benchmark::DoNotOptimize(result);
      }
      const double per_call = Median([&] { KilnScriptReduce(script, reduction, &tensor, 1, &result, 4, nullptr); });
      float sink = 0;
      const bool is_max = std::string(reduction) == "max_float";
      const double well = Median([&] {
        sink += is_max ? WrittenWell(x.data(), n, -INFINITY, [](float a, float b) { return std::fmax(a, b); })
                       : WrittenWell(x.data(), n, 0.0f, [](float a, float b) { return a + b; });
      });
      std::vector<float> copy(n);
      const double bandwidth = Median([&] { std::memcpy(copy.data(), x.data(), n * 4); });
      benchmark::DoNotOptimize(sink);
      benchmark::DoNotOptimize(copy.data());
      state.counters["ns_per_element"] = per_call * 1e9 / static_cast<double>(n);
      state.counters["x_written_well"] = per_call / well;
      state.counters["x_memcpy"] = per_call / bandwidth;
    }
  }
  if (tensor) KilnTensorDelete(tensor);
  if (script) KilnScriptDelete(script);
  if (module) KilnModuleDelete(module);
  if (context) KilnContextDelete(context);
}

void BM_ReduceSumCpu(benchmark::State& state) { Reduce(state, "sum_float", false); }
void BM_ReduceSumVulkan(benchmark::State& state) { Reduce(state, "sum_float", true); }
void BM_ReduceMaxCpu(benchmark::State& state) { Reduce(state, "max_float", false); }
void BM_ReduceMaxVulkan(benchmark::State& state) { Reduce(state, "max_float", true); }

BENCHMARK(BM_ReduceSumCpu)->Arg(1 << 20)->Arg(16 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReduceSumVulkan)->Arg(1 << 20)->Arg(16 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReduceMaxCpu)->Arg(1 << 20)->Arg(16 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReduceMaxVulkan)->Arg(1 << 20)->Arg(16 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
