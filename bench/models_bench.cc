// Real models on the CPU, float and int8, side by side in one process (issues #10, #15): Kiln with the fast path (XNNPACK host
// engine) at 1 and 2 threads, Kiln on its reference kernels, and the XNNPACK runtimes Kiln built invoked
// directly (xnn_invoke_runtime with nothing of the interpreter around it: the floor Kiln's Invoke can reach,
// so the ratio is the interpreter's own cost). Also the cost of AllocateTensors with the fast path (building
// the XNNPACK runtime and packing the weights). LiteRT itself is timed by bench/litert_bench.py.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kiln/c_api.h"
#include "runtime/interpreter.h"

namespace {

struct Interp {
  KilnModel* model = nullptr;
  KilnInterpreter* interpreter = nullptr;
  Interp(const std::string& path, int threads, bool reference) {
    model = KilnModelCreateFromFile(path.c_str());
    if (model == nullptr) return;
    KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
    KilnInterpreterOptionsSetNumThreads(options, threads);
    KilnInterpreterOptionsSetUseReferenceKernels(options, reference);
    interpreter = KilnInterpreterCreate(model, options);
    KilnInterpreterOptionsDelete(options);
    if (interpreter == nullptr || KilnInterpreterAllocateTensors(interpreter) != kKilnOk) {
      KilnInterpreterDelete(interpreter);
      interpreter = nullptr;
      return;
    }
    for (int i = 0; i < KilnInterpreterGetInputTensorCount(interpreter); ++i) {
      KilnTensor* in = KilnInterpreterGetInputTensor(interpreter, i);
      std::vector<float> x(KilnTensorByteSize(in) / 4, 0.25f);
      KilnTensorCopyFromBuffer(in, x.data(), x.size() * 4);
    }
  }
  ~Interp() {
    KilnInterpreterDelete(interpreter);
    KilnModelDelete(model);
  }
};

std::string ModelPath(const std::string& name) {
  return std::string(KILN_MODELS_DIR) + "/" + name + ".tflite";
}

void BM_Kiln(benchmark::State& state, std::string name, bool reference) {
  Interp r(ModelPath(name), static_cast<int>(state.range(0)), reference);
  if (r.interpreter == nullptr) return state.SkipWithError((name + " not available").c_str());
  for (auto _ : state) {
    if (KilnInterpreterInvoke(r.interpreter) != kKilnOk) return state.SkipWithError("invoke failed");
  }
}

// The XNNPACK runtimes alone: only for models that are wholly host runs (and folded constants).
void BM_XnnpackRuntimeAlone(benchmark::State& state, std::string name) {
  Interp r(ModelPath(name), static_cast<int>(state.range(0)), false);
  if (r.interpreter == nullptr) return state.SkipWithError((name + " not available").c_str());
  const kiln::Interpreter& interpreter = *r.interpreter->impl;
  for (size_t n = 0; n < interpreter.nodes().size(); ++n) {
    bool inside = false;
    for (const auto& run : interpreter.host_partitions())
      inside |= static_cast<int>(n) >= run.first && static_cast<int>(n) <= run.last;
    if (!inside && !interpreter.folded(static_cast<int>(n))) {
      return state.SkipWithError("not every node runs on XNNPACK: no like-for-like baseline");
    }
  }
  std::string error;
  for (auto _ : state) {
    for (const auto& run : interpreter.host_partitions()) {
      if (!run.run->Invoke(&error)) return state.SkipWithError(error.c_str());
    }
  }
  state.counters["runs"] = static_cast<double>(interpreter.host_partitions().size());
}

// Creating the interpreter and AllocateTensors: Prepare, constant folding, XNNPACK's packing, the arena.
void BM_Prepare(benchmark::State& state, std::string name, bool reference) {
  KilnModel* model = KilnModelCreateFromFile(ModelPath(name).c_str());
  if (model == nullptr) return state.SkipWithError((name + " not available").c_str());
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetNumThreads(options, 1);
  KilnInterpreterOptionsSetUseReferenceKernels(options, reference);
  for (auto _ : state) {
    KilnInterpreter* interpreter = KilnInterpreterCreate(model, options);
    if (interpreter == nullptr || KilnInterpreterAllocateTensors(interpreter) != kKilnOk) {
      KilnInterpreterDelete(interpreter);
      return state.SkipWithError("prepare failed");
    }
    KilnInterpreterDelete(interpreter);
  }
  KilnInterpreterOptionsDelete(options);
  KilnModelDelete(model);
}

}  // namespace

int main(int argc, char** argv) {
  const char* models[] = {"ts_mobilenet_v1_025_224_float", "mt_kws_dscnn_float", "mt_ad01_fc_float",
                          "mp_hand_landmark_lite", "mp_face_detection_short_range",
                          "tm_mobilenet_v2_int8_224", "mt_kws_dscnn_int8"};
  for (const char* m : models) {
    const std::string name = m;
    benchmark::RegisterBenchmark(("kiln_fast/" + name).c_str(), BM_Kiln, name, false)
        ->Arg(1)
        ->Arg(2)
        ->ArgName("threads")
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("xnnpack_runtime_alone/" + name).c_str(), BM_XnnpackRuntimeAlone, name)
        ->Arg(1)
        ->Arg(2)
        ->ArgName("threads")
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("kiln_reference/" + name).c_str(), BM_Kiln, name, true)
        ->Arg(1)
        ->ArgName("threads")
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("prepare_fast/" + name).c_str(), BM_Prepare, name, false)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
