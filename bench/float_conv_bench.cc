// Kiln's own float convolutions beside XNNPACK's, one thread, SAME padding; items are multiply-adds; compare the
// CPU column on a busy machine.
// - CONV_2D over few input channels (the first layers of ts_mobilenet_v1_025_224_float, of MobileNet at full
//   width, and a 5x5 stem): (a) XNNPACK's convolution2d_nhwc_f32 operator, as Kiln's XNNPACK engine defines it,
//   (b) Kiln's direct convolution (ops/simd/float_conv.h), (c) a plain C++ loop (the build's flags).
// - DEPTHWISE_CONV_2D (ts_mobilenet_v1_025_224_float's 3x3 layers of 8 to 256 channels, a 5x5 one): (a) XNNPACK's
//   operator (groups = channels), (b) Kiln's depthwise convolution (ops/simd/float_depthwise.h), its AVX2 form
//   (BM_KilnDepthwise) and its AVX-512 form (BM_KilnDepthwiseAvx512, skipped on a CPU without AVX-512F).
// - 1x1 CONV_2D (ts_mobilenet_v1_025_224_float's pointwise layers, 8 to 256 channels): (a) XNNPACK's operator,
//   (b) Kiln's GEMM (ops/simd/float_gemm.h), its AVX2 form (BM_KilnGemm) and its AVX-512 form
//   (BM_KilnGemmAvx512, skipped on a CPU without AVX-512F).
//   build/ci/bench/float_conv_bench
#include <benchmark/benchmark.h>
#include <xnnpack.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "ops/simd/float_conv.h"
#include "ops/simd/float_depthwise.h"
#include "ops/simd/float_gemm.h"

namespace {

using kiln::ops::conv::ConvShape;

struct Problem {
  ConvShape s;
  std::vector<float> input, weights, bias, output;
  // Args: input size (square), input channels, output channels, kernel size, stride.
  explicit Problem(const benchmark::State& state, bool depthwise = false) {
    const int64_t size = state.range(0), stride = state.range(4);
    s.in_h = s.in_w = size;
    s.in_c = state.range(1);
    s.out_c = state.range(2);
    s.kernel_h = s.kernel_w = state.range(3);
    s.stride_h = s.stride_w = stride;
    s.out_h = s.out_w = (size + stride - 1) / stride;
    s.pad_top = s.pad_left = std::max<int64_t>(0, (s.out_h - 1) * stride + s.kernel_h - size) / 2;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    input.resize(static_cast<size_t>(s.in_h * s.in_w * s.in_c));
    if (depthwise) s.out_c = s.in_c;
    weights.resize(static_cast<size_t>(s.out_c * s.kernel_h * s.kernel_w * (depthwise ? 1 : s.in_c)));
    bias.resize(static_cast<size_t>(s.out_c));
    output.resize(static_cast<size_t>(s.out_h * s.out_w * s.out_c));
    for (auto& v : input) v = value(rng);
    for (auto& v : weights) v = value(rng);
    for (auto& v : bias) v = value(rng);
  }
  int64_t MultiplyAdds(bool depthwise = false) const {
    return s.out_h * s.out_w * s.out_c * s.kernel_h * s.kernel_w * (depthwise ? 1 : s.in_c);
  }
};

// Times XNNPACK's convolution2d_nhwc_f32 operator over the problem: a dense convolution, or a depthwise one (one
// group per channel, TensorFlow's weight layout).
void RunXnnpack(benchmark::State& state, bool depthwise) {
  Problem p(state, depthwise);
  static const xnn_status init = xnn_initialize(nullptr);
  if (init != xnn_status_success) {
    state.SkipWithError("xnn_initialize failed");
    return;
  }
  const ConvShape& s = p.s;
  const float inf = std::numeric_limits<float>::infinity();
  const uint32_t groups = depthwise ? static_cast<uint32_t>(s.in_c) : 1;
  const size_t group_in = depthwise ? 1 : static_cast<size_t>(s.in_c);
  const size_t group_out = depthwise ? 1 : static_cast<size_t>(s.out_c);
  const uint32_t flags = XNN_FLAG_TENSORFLOW_SAME_PADDING | (depthwise ? XNN_FLAG_DEPTHWISE_CONVOLUTION : 0);
  xnn_operator_t op = nullptr;
  const auto u32 = [](int64_t v) { return static_cast<uint32_t>(v); };
  if (xnn_create_convolution2d_nhwc_f32(0, 0, 0, 0, u32(s.kernel_h), u32(s.kernel_w), u32(s.stride_h), u32(s.stride_w),
                                        1, 1, groups, group_in, group_out, static_cast<size_t>(s.in_c),
                                        static_cast<size_t>(s.out_c), p.weights.data(), p.bias.data(), -inf, inf, flags,
                                        &op) != xnn_status_success ||
      xnn_setup_convolution2d_nhwc_f32(op, 1, static_cast<size_t>(s.in_h), static_cast<size_t>(s.in_w),
                                       p.input.data(), p.output.data(), nullptr) != xnn_status_success) {
    state.SkipWithError("XNNPACK refused the convolution");
    return;
  }
  for (auto _ : state) {
    xnn_run_operator(op, nullptr);
    benchmark::DoNotOptimize(p.output.data());
  }
  xnn_delete_operator(op);
  state.SetItemsProcessed(state.iterations() * p.MultiplyAdds(depthwise));
}

void BM_XnnpackConvolution(benchmark::State& state) { RunXnnpack(state, false); }

void BM_KilnDirectConv(benchmark::State& state) {
  if (!kiln::ops::conv::Available()) {
    state.SkipWithError("this CPU has no AVX2 and FMA");
    return;
  }
  Problem p(state);
  const float inf = std::numeric_limits<float>::infinity();
  const auto packed = kiln::ops::conv::PackConv(p.s, p.weights.data(), p.bias.data(), -inf, inf);
  for (auto _ : state) {
    kiln::ops::conv::Conv(packed, p.input.data(), p.output.data(), 0, p.s.out_h);
    benchmark::DoNotOptimize(p.output.data());
  }
  state.SetItemsProcessed(state.iterations() * p.MultiplyAdds());
}

void BM_PlainLoop(benchmark::State& state) {
  Problem p(state);
  const ConvShape& s = p.s;
  for (auto _ : state) {
    for (int64_t y = 0; y < s.out_h; ++y) {
      for (int64_t x = 0; x < s.out_w; ++x) {
        float* out = p.output.data() + (y * s.out_w + x) * s.out_c;
        for (int64_t o = 0; o < s.out_c; ++o) out[o] = p.bias[static_cast<size_t>(o)];
        for (int64_t ky = 0; ky < s.kernel_h; ++ky) {
          const int64_t iy = y * s.stride_h - s.pad_top + ky;
          if (iy < 0 || iy >= s.in_h) continue;
          for (int64_t kx = 0; kx < s.kernel_w; ++kx) {
            const int64_t ix = x * s.stride_w - s.pad_left + kx;
            if (ix < 0 || ix >= s.in_w) continue;
            const float* in = p.input.data() + (iy * s.in_w + ix) * s.in_c;
            for (int64_t o = 0; o < s.out_c; ++o) {
              const float* w = p.weights.data() + ((o * s.kernel_h + ky) * s.kernel_w + kx) * s.in_c;
              float sum = 0.0f;
              for (int64_t c = 0; c < s.in_c; ++c) sum += in[c] * w[c];
              out[o] += sum;
            }
          }
        }
      }
    }
    benchmark::DoNotOptimize(p.output.data());
  }
  state.SetItemsProcessed(state.iterations() * p.MultiplyAdds());
}

void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"size", "in_c", "out_c", "kernel", "stride"});
  for (const auto& s : std::vector<std::vector<int64_t>>{
           {224, 3, 8, 3, 2}, {224, 3, 32, 3, 2}, {128, 3, 24, 5, 2}, {192, 3, 16, 3, 2}, {64, 1, 8, 3, 1},
           {32, 1, 64, 5, 2}}) {
    b->Args(s);
  }
}

void BM_XnnpackDepthwise(benchmark::State& state) { RunXnnpack(state, true); }

// Kiln's depthwise convolution at one width (ops/simd/float_depthwise.h).
void RunKilnDepthwise(benchmark::State& state, kiln::ops::simd::Width width) {
  if (!kiln::ops::depthwise::Available(width)) {
    state.SkipWithError(width == kiln::ops::simd::Width::kAvx512 ? "this CPU has no AVX-512F"
                                                                  : "this CPU has no AVX2 and FMA");
    return;
  }
  Problem p(state, true);
  const float inf = std::numeric_limits<float>::infinity();
  const auto packed = kiln::ops::depthwise::PackDepthwise(p.s, p.weights.data(), p.bias.data(), -inf, inf, width);
  for (auto _ : state) {
    kiln::ops::depthwise::Depthwise(packed, p.input.data(), p.output.data(), 0, p.s.out_h);
    benchmark::DoNotOptimize(p.output.data());
  }
  state.SetItemsProcessed(state.iterations() * p.MultiplyAdds(true));
}

void BM_KilnDepthwise(benchmark::State& state) { RunKilnDepthwise(state, kiln::ops::simd::Width::kAvx2); }
void BM_KilnDepthwiseAvx512(benchmark::State& state) { RunKilnDepthwise(state, kiln::ops::simd::Width::kAvx512); }

void DepthwiseShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"size", "channels", "unused", "kernel", "stride"});
  for (const auto& s : std::vector<std::vector<int64_t>>{{112, 8, 0, 3, 1},
                                                         {112, 16, 0, 3, 2},
                                                         {56, 32, 0, 3, 1},
                                                         {28, 64, 0, 3, 1},
                                                         {14, 128, 0, 3, 1},
                                                         {7, 256, 0, 3, 1},
                                                         {32, 24, 0, 5, 1}}) {
    b->Args(s);
  }
}

BENCHMARK(BM_XnnpackDepthwise)->Apply(DepthwiseShapes);
BENCHMARK(BM_KilnDepthwise)->Apply(DepthwiseShapes);
BENCHMARK(BM_KilnDepthwiseAvx512)->Apply(DepthwiseShapes);
void BM_XnnpackPointwise(benchmark::State& state) { RunXnnpack(state, false); }

// Kiln's GEMM at one width (ops/simd/float_gemm.h).
void RunKilnGemm(benchmark::State& state, kiln::ops::gemm::Width width) {
  if (!kiln::ops::gemm::Available(width)) {
    state.SkipWithError(width == kiln::ops::gemm::Width::kAvx512 ? "this CPU has no AVX-512F"
                                                                  : "this CPU has no AVX2 and FMA");
    return;
  }
  Problem p(state);
  const ConvShape& s = p.s;
  const float inf = std::numeric_limits<float>::infinity();
  const auto packed = kiln::ops::gemm::PackGemm(p.weights.data(), s.out_c, s.in_c, p.bias.data(), -inf, inf, width);
  for (auto _ : state) {
    kiln::ops::gemm::Gemm(packed, p.input.data(), s.in_c, p.output.data(), s.out_c, 0, s.out_h * s.out_w);
    benchmark::DoNotOptimize(p.output.data());
  }
  state.SetItemsProcessed(state.iterations() * p.MultiplyAdds());
}

void BM_KilnGemm(benchmark::State& state) { RunKilnGemm(state, kiln::ops::gemm::Width::kAvx2); }
void BM_KilnGemmAvx512(benchmark::State& state) { RunKilnGemm(state, kiln::ops::gemm::Width::kAvx512); }

void PointwiseShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"size", "in_c", "out_c", "kernel", "stride"});
  for (const auto& s : std::vector<std::vector<int64_t>>{{112, 8, 16, 1, 1},
                                                         {56, 16, 32, 1, 1},
                                                         {56, 32, 32, 1, 1},
                                                         {28, 32, 64, 1, 1},
                                                         {28, 64, 64, 1, 1},
                                                         {14, 64, 128, 1, 1},
                                                         {14, 128, 128, 1, 1},
                                                         {7, 128, 256, 1, 1},
                                                         {7, 256, 256, 1, 1}}) {
    b->Args(s);
  }
}

BENCHMARK(BM_XnnpackPointwise)->Apply(PointwiseShapes);
BENCHMARK(BM_KilnGemm)->Apply(PointwiseShapes);
BENCHMARK(BM_KilnGemmAvx512)->Apply(PointwiseShapes);
BENCHMARK(BM_XnnpackConvolution)->Apply(Shapes);
BENCHMARK(BM_KilnDirectConv)->Apply(Shapes);
BENCHMARK(BM_PlainLoop)->Apply(Shapes);

}  // namespace

BENCHMARK_MAIN();
