// y = atan(x + offset) over 16M floats, four ways, measured in the same run:
// The model is one custom op `Atan` with its option offset = 0.99999905, so only the op is measured.
//   KernelOp/threads:  `Atan` served by the kilnc kernel examples/atan/atan_op.rs
//                      (KilnOperatorSetKernel; the CPU driver JIT-compiles and vectorises it for this CPU)
//   CallbackOp:        `Atan` written in C (examples/atan/atan_op.c: a scalar atanf loop)
//   HandLoop/threads:  a hand-written loop compiled -O3 -march=native (native_atan_baseline.cc)
//   Memcpy:            copying the same bytes (the memory-bandwidth bound)
// Each reports ns per element, and ratio_vs_hand_loop (time / hand loop on 1 thread, measured in this run).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "atan_model.h"
#include "atan_op.h"
#include "kiln/c_api.h"
#include "kiln/compute.h"
#include "kiln/operator.h"
#include "runtime/model/model_writer.h"

namespace kiln::bench {
void NativeAtan(const float* __restrict in, float* __restrict out, size_t begin, size_t end, float offset);
}

namespace {

constexpr int kElements = 16 << 20;
using Clock = std::chrono::steady_clock;

std::vector<float>& Input() {
  static std::vector<float> x = [] {
    std::vector<float> v(kElements);
    for (int i = 0; i < kElements; ++i) v[i] = static_cast<float>((i % 2001) - 1000) * 0.05f;
    return v;
  }();
  return x;
}

double HandLoopSeconds(int threads) {
  std::vector<float>& x = Input();
  static std::vector<float> y(kElements);
  std::vector<double> times;
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = Clock::now();
    std::vector<std::thread> pool;
    const size_t chunk = kElements / threads;
    for (int t = 1; t < threads; ++t) {
      pool.emplace_back([&, t] { kiln::bench::NativeAtan(x.data(), y.data(), t * chunk, (t + 1 == threads) ? kElements : (t + 1) * chunk, 1.0f); });
    }
    kiln::bench::NativeAtan(x.data(), y.data(), 0, threads == 1 ? kElements : chunk, 1.0f);
    for (auto& th : pool) th.join();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

double Baseline() {
  static double seconds = HandLoopSeconds(1);
  return seconds;
}

void Report(benchmark::State& state, double seconds_per_iteration) {
  state.counters["ns_per_element"] = seconds_per_iteration / kElements * 1e9;
  state.counters["ratio_vs_hand_loop"] = seconds_per_iteration / Baseline();
  state.SetBytesProcessed(state.iterations() * int64_t{kElements} * 8);
}

void RunModel(benchmark::State& state, KilnOperator* op, int threads) {
  kiln::ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {kElements}, "x");
  const int y = w.AddTensor(kKilnFloat32, {kElements}, "y");
  w.AddCustomOp("Atan", {x}, {y}, kiln::FlexMap().Float("offset", kiln::examples::kTrainedOffset).Finish());
  w.SetInputs({x});
  w.SetOutputs({y});
  const std::vector<uint8_t> bytes = w.Finish();
  KilnModel* model = KilnModelCreate(bytes.data(), bytes.size());
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsAddOperator(options, op);
  KilnInterpreterOptionsSetNumThreads(options, threads);
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, options);
  KilnInterpreterOptionsDelete(options);
  KilnModelDelete(model);
  const int dims[1] = {kElements};
  if (interpreter == nullptr || KilnInterpreterResizeInputTensor(interpreter, 0, dims, 1) != kKilnOk ||
      KilnInterpreterAllocateTensors(interpreter) != kKilnOk) {
    KilnInterpreterDelete(interpreter);
    return state.SkipWithError("the model did not prepare");
  }
  KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter, 0), Input().data(), size_t{kElements} * 4);
  KilnInterpreterInvoke(interpreter);  // warm-up: the first launch JIT-compiles (or loads from the cache)
  double total = 0;
  for (auto _ : state) {
    const auto start = Clock::now();
    KilnInterpreterInvoke(interpreter);
    total += std::chrono::duration<double>(Clock::now() - start).count();
  }
  Report(state, total / static_cast<double>(state.iterations()));
  KilnInterpreterDelete(interpreter);
}

void BM_KernelOp(benchmark::State& state) {
  KilnModule* module = KilnModuleCreateFromFile(KILN_BENCH_KMOD_DIR "/atan_op.kmod");
  KilnOperator* op = KilnOperatorCreate(kKilnBuiltinCustom, "Atan", 1);
  if (module == nullptr || KilnOperatorSetKernel(op, module, "atan_op") != kKilnOk) {
    state.SkipWithError("atan_op.kmod did not load");
  } else {
    RunModel(state, op, static_cast<int>(state.range(0)));
  }
  KilnOperatorDelete(op);
  KilnModuleDelete(module);
}
BENCHMARK(BM_KernelOp)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CallbackOp(benchmark::State& state) { RunModel(state, AtanOperator(), 1); }
BENCHMARK(BM_CallbackOp)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_HandLoop(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  double total = 0;
  for (auto _ : state) total += HandLoopSeconds(threads) ;
  Report(state, total / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_HandLoop)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

void BM_Memcpy(benchmark::State& state) {
  std::vector<float>& x = Input();
  std::vector<float> y(kElements);
  double total = 0;
  for (auto _ : state) {
    const auto start = Clock::now();
    std::memcpy(y.data(), x.data(), size_t{kElements} * 4);
    benchmark::DoNotOptimize(y.data());
    total += std::chrono::duration<double>(Clock::now() - start).count();
  }
  Report(state, total / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
