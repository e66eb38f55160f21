// Interpreter benchmarks. Each one measures a baseline in the same run and reports the ratio as a counter:
//   Add/N:            y = x + x through the interpreter vs a hand-written loop vs memcpy of the same bytes
//   OpOverhead/N:     a chain of N tiny ADDs vs N direct calls of the same arithmetic (per-op cost)
//   MobileNetV1:      ts_mobilenet_v1_025_224_float end to end (reference kernels), with GFLOP/s
//   AllocateTensors:  Prepare + arena planning for the same network
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "kiln/c_api.h"
#include "runtime/model/model_writer.h"

namespace {

using Clock = std::chrono::steady_clock;

// Median seconds of `fn` over a few repetitions: the baselines.
template <typename F>
double MedianSeconds(F&& fn, int reps = 15) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto start = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Every interpreter here runs the reference kernels: this bench measures them and the interpreter's own
// costs (the fast path has bench/models_bench.cc).
KilnInterpreter* CreateReference(const KilnModel* model) {
  if (model == nullptr) return nullptr;
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetUseReferenceKernels(options, true);
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, options);
  KilnInterpreterOptionsDelete(options);
  if (interpreter != nullptr && KilnInterpreterAllocateTensors(interpreter) != kKilnOk) {
    KilnInterpreterDelete(interpreter);
    return nullptr;
  }
  return interpreter;
}

struct Interp {
  KilnModel* model = nullptr;
  KilnInterpreter* interpreter = nullptr;
  explicit Interp(const std::vector<uint8_t>& bytes)
      : model(KilnModelCreate(bytes.data(), bytes.size())), interpreter(CreateReference(model)) {}
  explicit Interp(const char* path) : model(KilnModelCreateFromFile(path)), interpreter(CreateReference(model)) {}
  ~Interp() {
    KilnInterpreterDelete(interpreter);
    KilnModelDelete(model);
  }
};

std::vector<uint8_t> AddChain(int elements, int ops) {
  kiln::ModelWriter w;
  int prev = w.AddTensor(kKilnFloat32, {elements}, "x");
  w.SetInputs({prev});
  for (int i = 0; i < ops; ++i) {
    const int next = w.AddTensor(kKilnFloat32, {elements}, "t" + std::to_string(i));
    w.AddOp(kKilnBuiltinAdd, {prev, prev}, {next}, KilnAddParams{kKilnActNone, false});
    prev = next;
  }
  w.SetOutputs({prev});
  return w.Finish();
}

void BM_Add(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Interp r(AddChain(n, 1));
  if (r.interpreter == nullptr) return state.SkipWithError("model failed");
  std::vector<float> x(n, 1.5f), y(n);
  KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(r.interpreter, 0), x.data(), x.size() * 4);
  double kiln = 0;
  for (auto _ : state) {
    const auto start = Clock::now();
    KilnInterpreterInvoke(r.interpreter);
    kiln += std::chrono::duration<double>(Clock::now() - start).count();
  }
  kiln /= static_cast<double>(state.iterations());
  const float* in = x.data();
  float* out = y.data();
  const double loop = MedianSeconds([&] {
    for (int i = 0; i < n; ++i) out[i] = in[i] + in[i];
    benchmark::DoNotOptimize(out);
  });
  const double copy = MedianSeconds([&] {
    std::memcpy(out, in, static_cast<size_t>(n) * 4);
    benchmark::DoNotOptimize(out);
  });
  state.counters["vs_hand_loop"] = kiln / loop;
  state.counters["vs_memcpy"] = kiln / copy;
  state.SetBytesProcessed(state.iterations() * int64_t{n} * 8);
}
BENCHMARK(BM_Add)->Arg(1 << 10)->Arg(1 << 20)->Arg(1 << 24)->Unit(benchmark::kMicrosecond);

void BM_OpOverhead(benchmark::State& state) {
  const int ops = static_cast<int>(state.range(0));
  Interp r(AddChain(1, ops));
  if (r.interpreter == nullptr) return state.SkipWithError("model failed");
  double kiln = 0;
  for (auto _ : state) {
    const auto start = Clock::now();
    KilnInterpreterInvoke(r.interpreter);
    kiln += std::chrono::duration<double>(Clock::now() - start).count();
  }
  kiln /= static_cast<double>(state.iterations());
  volatile float v = 1.0f;
  const double direct = MedianSeconds([&] {
    for (int i = 0; i < ops; ++i) v = v + v;
  });
  state.counters["ns_per_op"] = kiln / ops * 1e9;
  state.counters["direct_ns_per_op"] = direct / ops * 1e9;
}
BENCHMARK(BM_OpOverhead)->Arg(100)->Unit(benchmark::kMicrosecond);

void BM_MobileNetV1(benchmark::State& state) {
  Interp r(KILN_MODELS_DIR "/ts_mobilenet_v1_025_224_float.tflite");
  if (r.interpreter == nullptr)
    return state.SkipWithError("ts_mobilenet_v1_025_224_float.tflite not available");
  KilnTensor* in = KilnInterpreterGetInputTensor(r.interpreter, 0);
  std::vector<float> x(KilnTensorByteSize(in) / 4, 0.5f);
  KilnTensorCopyFromBuffer(in, x.data(), x.size() * 4);
  for (auto _ : state) KilnInterpreterInvoke(r.interpreter);
  // MobileNet v1 0.25 at 224x224 is about 41 million multiply-adds.
  state.counters["GFLOP/s"] =
      benchmark::Counter(2 * 41e6 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MobileNetV1)->Unit(benchmark::kMillisecond);

void BM_AllocateTensors(benchmark::State& state) {
  Interp r(KILN_MODELS_DIR "/ts_mobilenet_v1_025_224_float.tflite");
  if (r.interpreter == nullptr)
    return state.SkipWithError("ts_mobilenet_v1_025_224_float.tflite not available");
  const int dims[4] = {1, 224, 224, 3};
  for (auto _ : state) {
    KilnInterpreterResizeInputTensor(r.interpreter, 0, dims, 4);
    KilnInterpreterAllocateTensors(r.interpreter);
  }
  size_t arena = 0, naive = 0;
  KilnInterpreterGetArenaStats(r.interpreter, &arena, &naive);
  state.counters["arena_MiB"] = static_cast<double>(arena) / (1 << 20);
  state.counters["naive_MiB"] = static_cast<double>(naive) / (1 << 20);
}
BENCHMARK(BM_AllocateTensors)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
