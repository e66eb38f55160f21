// A float FULLY_CONNECTED of one row (y = x W^T + b: K inputs, N outputs; the shapes of mt_ad01_fc_float, of
// mt_kws_dscnn_float's classifier and of a 1024 x 1000 image-classifier head) through (a) XNNPACK's
// fully_connected_nc_f32 operator, as Kiln's XNNPACK engine used it, (b) Kiln's own GEMV (ops/simd/float_gemv.h)
// in its AVX2/FMA form and its AVX-512F one, and (c) a plain C++ loop (one dot product per output, compiled with
// the build's flags).
// One thread; compare the CPU column on a busy machine. Items are multiply-adds.
//   build/ci/bench/float_gemv_bench
#include <benchmark/benchmark.h>
#include <xnnpack.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "ops/simd/float_gemv.h"

namespace {

struct Problem {
  int64_t k, n;
  std::vector<float> input, weights, bias, output;
  Problem(int64_t k_, int64_t n_) : k(k_), n(n_) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    input.resize(static_cast<size_t>(k));
    weights.resize(static_cast<size_t>(n * k));
    bias.resize(static_cast<size_t>(n));
    output.resize(static_cast<size_t>(n));
    for (auto& v : input) v = value(rng);
    for (auto& v : weights) v = value(rng);
    for (auto& v : bias) v = value(rng);
  }
};

void SetLabel(benchmark::State& state, const Problem& p) {
  state.SetItemsProcessed(state.iterations() * p.n * p.k);
  state.counters["K"] = static_cast<double>(p.k);
  state.counters["N"] = static_cast<double>(p.n);
}

void BM_XnnpackFullyConnected(benchmark::State& state) {
  Problem p(state.range(0), state.range(1));
  static const xnn_status init = xnn_initialize(nullptr);
  if (init != xnn_status_success) {
    state.SkipWithError("xnn_initialize failed");
    return;
  }
  xnn_operator_t op = nullptr;
  const size_t k = static_cast<size_t>(p.k), n = static_cast<size_t>(p.n);
  const float inf = std::numeric_limits<float>::infinity();
  if (xnn_create_fully_connected_nc_f32(k, n, k, n, p.weights.data(), p.bias.data(), -inf, inf, 0,
                                        &op) != xnn_status_success ||
      xnn_setup_fully_connected_nc_f32(op, 1, p.input.data(), p.output.data(), nullptr) != xnn_status_success) {
    state.SkipWithError("XNNPACK refused the fully connected operator");
    return;
  }
  for (auto _ : state) {
    xnn_run_operator(op, nullptr);
    benchmark::DoNotOptimize(p.output.data());
  }
  xnn_delete_operator(op);
  SetLabel(state, p);
}

// Kiln's GEMV in the form of `width` (its AVX2 one, or its AVX-512F one).
void RunKilnGemv(benchmark::State& state, kiln::ops::gemv::Width width) {
  if (!kiln::ops::gemv::Available(width)) {
    state.SkipWithError("this CPU lacks the form's instructions");
    return;
  }
  Problem p(state.range(0), state.range(1));
  const float inf = std::numeric_limits<float>::infinity();
  const auto packed = kiln::ops::gemv::PackGemv(p.weights.data(), p.n, p.k, p.bias.data(), -inf, inf, width);
  for (auto _ : state) {
    kiln::ops::gemv::Gemv(packed, p.input.data(), p.k, p.output.data(), p.n, 1, 0, packed.blocks);
    benchmark::DoNotOptimize(p.output.data());
  }
  SetLabel(state, p);
}

void BM_KilnGemv(benchmark::State& state) { RunKilnGemv(state, kiln::ops::gemv::Width::kAvx2); }
void BM_KilnGemvAvx512(benchmark::State& state) { RunKilnGemv(state, kiln::ops::gemv::Width::kAvx512); }

void BM_PlainLoop(benchmark::State& state) {
  Problem p(state.range(0), state.range(1));
  for (auto _ : state) {
    for (int64_t j = 0; j < p.n; ++j) {
      const float* w = p.weights.data() + j * p.k;
      float sum = p.bias[static_cast<size_t>(j)];
      for (int64_t i = 0; i < p.k; ++i) sum += w[i] * p.input[static_cast<size_t>(i)];
      p.output[static_cast<size_t>(j)] = sum;
    }
    benchmark::DoNotOptimize(p.output.data());
  }
  SetLabel(state, p);
}

void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"K", "N"});
  for (const auto& s : std::vector<std::vector<int64_t>>{{640, 128}, {128, 128}, {128, 8}, {8, 128}, {128, 640},
                                                         {64, 12}, {1024, 1000}}) {
    b->Args(s);
  }
}

BENCHMARK(BM_XnnpackFullyConnected)->Apply(Shapes);
BENCHMARK(BM_KilnGemv)->Apply(Shapes);
BENCHMARK(BM_KilnGemvAvx512)->Apply(Shapes);
BENCHMARK(BM_PlainLoop)->Apply(Shapes);

}  // namespace

BENCHMARK_MAIN();
