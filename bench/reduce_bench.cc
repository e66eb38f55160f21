// A reduction (bench/kernels/sum.rs: a float sum, a float max) over 1M and 16M floats through the compute API,
// on the CPU driver (all cores) and on the Vulkan driver (lavapipe on CI), against two baselines measured in
// the same run: a hand-written C++ loop over the same floats (one thread, -O2) and memcpy of the same bytes.
// Each reports ns per element and the ratios x_hand_loop and x_memcpy (time / baseline; lower is better).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
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

__attribute__((noinline)) float HandSum(const float* x, size_t n) {
  float s = 0;
  for (size_t i = 0; i < n; ++i) s += x[i];
  return s;
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
      const double hand = Median([&] { sink += HandSum(x.data(), n); });
      std::vector<float> copy(n);
      const double bandwidth = Median([&] { std::memcpy(copy.data(), x.data(), n * 4); });
      benchmark::DoNotOptimize(sink);
      benchmark::DoNotOptimize(copy.data());
      state.counters["ns_per_element"] = per_call * 1e9 / static_cast<double>(n);
      state.counters["x_hand_loop"] = per_call / hand;
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
