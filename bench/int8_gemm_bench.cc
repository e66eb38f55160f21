// An int8 1x1 convolution (a GEMM: M = H * W pixels, K input channels, N output channels; the shapes of
// tm_mobilenet_v2_int8_224's pointwise layers) through (a) XNNPACK's per-channel qc8 convolution, as Kiln's
// XNNPACK engine defines it, and (b) Kiln's own AVX-512 VNNI kernel (ops/simd/int8_gemm.h), with XNNPACK's float
// requantization (the default) and with LiteRT's fixed-point one (KILN_VNNI_EXACT=1). One thread; compare the CPU
// column on a busy machine.
//   build/release/bench/int8_gemm_bench
#include <benchmark/benchmark.h>
#include <xnnpack.h>

#include <cstdint>
#include <random>
#include <vector>

#include "ops/reference/quantized.h"
#include "ops/simd/int8_gemm.h"

namespace {

struct Problem {
  int64_t m, k, n;
  std::vector<int8_t> input, weights, output;
  std::vector<int32_t> bias;
  std::vector<float> scales;
  float input_scale = 0.05f, output_scale = 0.1f;
  int32_t input_zero_point = -3, output_zero_point = 5;

  Problem(int64_t m_, int64_t k_, int64_t n_) : m(m_), k(k_), n(n_) {
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> byte(-128, 127);
    input.resize(static_cast<size_t>(m * k));
    weights.resize(static_cast<size_t>(n * k));
    output.resize(static_cast<size_t>(m * n));
    for (auto& v : input) v = static_cast<int8_t>(byte(rng));
    for (auto& v : weights) v = static_cast<int8_t>(byte(rng) | 1);
    std::uniform_int_distribution<int> b(-5000, 5000);
    for (int64_t c = 0; c < n; ++c) bias.push_back(b(rng));
    std::uniform_real_distribution<float> s(0.001f, 0.01f);
    for (int64_t c = 0; c < n; ++c) scales.push_back(s(rng));
  }
};

void SetLabel(benchmark::State& state, const Problem& p) {
  state.SetItemsProcessed(state.iterations() * p.m * p.n * p.k);  // multiply-adds
  state.counters["M"] = static_cast<double>(p.m);
  state.counters["K"] = static_cast<double>(p.k);
  state.counters["N"] = static_cast<double>(p.n);
}

void BM_XnnpackQc8(benchmark::State& state) {
  Problem p(state.range(0), state.range(1), state.range(2));
  static const xnn_status init = xnn_initialize(nullptr);
  if (init != xnn_status_success) {
    state.SkipWithError("xnn_initialize failed");
    return;
  }
  xnn_operator_t op = nullptr;
  const size_t k = static_cast<size_t>(p.k), n = static_cast<size_t>(p.n);
  if (xnn_create_convolution2d_nhwc_qc8(0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, k, n, k, n,
                                        static_cast<int8_t>(p.input_zero_point), p.input_scale, p.scales.data(),
                                        p.weights.data(), p.bias.data(), static_cast<int8_t>(p.output_zero_point),
                                        p.output_scale, -128, 127, 0, &op) != xnn_status_success ||
      xnn_setup_convolution2d_nhwc_qc8(op, 1, static_cast<size_t>(p.m), 1, p.input.data(), p.output.data(), nullptr) !=
          xnn_status_success) {
    state.SkipWithError("XNNPACK refused the convolution");
    return;
  }
  for (auto _ : state) {
    xnn_run_operator(op, nullptr);
    benchmark::DoNotOptimize(p.output.data());
  }
  xnn_delete_operator(op);
  SetLabel(state, p);
}

// `float_requantization`: XNNPACK's (the fast path's default); else LiteRT's fixed point (KILN_VNNI_EXACT=1).
void KilnVnni(benchmark::State& state, bool float_requantization) {
  if (!kiln::ops::vnni::Available()) {
    state.SkipWithError("this CPU has no AVX-512 VNNI");
    return;
  }
  Problem p(state.range(0), state.range(1), state.range(2));
  const auto multipliers = kiln::ops::reference::PerChannelMultipliers(p.input_scale, p.scales, p.output_scale, p.n);
  auto packed = kiln::ops::vnni::PackInt8Gemm(p.weights.data(), p.n, p.k, p.bias.data(), p.input_zero_point,
                                              multipliers, p.output_zero_point, -128, 127);
  if (float_requantization) {
    kiln::ops::vnni::UseFloatRequantization(&packed, p.input_scale, p.scales, p.output_scale);
  }
  for (auto _ : state) {
    kiln::ops::vnni::Int8Gemm(packed, p.input.data(), p.k, p.output.data(), p.n, 0, p.m);
    benchmark::DoNotOptimize(p.output.data());
  }
  SetLabel(state, p);
}

void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M", "K", "N"});
  for (const auto& s : std::vector<std::vector<int64_t>>{{12544, 16, 96},
                                                         {12544, 32, 16},
                                                         {3136, 24, 144},
                                                         {3136, 144, 24},
                                                         {784, 32, 192},
                                                         {784, 192, 32},
                                                         {196, 64, 384},
                                                         {196, 384, 64},
                                                         {49, 960, 160},
                                                         {49, 320, 1280}}) {
    b->Args(s);
  }
}

BENCHMARK(BM_XnnpackQc8)->Apply(Shapes);
void BM_KilnVnniFloat(benchmark::State& state) { KilnVnni(state, true); }
void BM_KilnVnniExact(benchmark::State& state) { KilnVnni(state, false); }

BENCHMARK(BM_KilnVnniFloat)->Apply(Shapes);
BENCHMARK(BM_KilnVnniExact)->Apply(Shapes);

}  // namespace

BENCHMARK_MAIN();
