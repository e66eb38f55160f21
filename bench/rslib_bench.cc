// rslib (compiler/rslib) math functions in vectorized x-loops against the same loops over glibc's libm, which
// compilers keep scalar. Inputs are in each function's common domain; 64K floats per iteration (in cache).
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

extern "C" {
void rslib_bench_atan(const float*, float*, int);
void rslib_bench_exp(const float*, float*, int);
void rslib_bench_log(const float*, float*, int);
void rslib_bench_sin(const float*, float*, int);
void rslib_bench_tanh(const float*, float*, int);
void rslib_bench_pow(const float*, float*, int);
void rslib_bench_native_exp(const float*, float*, int);
void rslib_bench_native_sin(const float*, float*, int);
}

namespace kiln {
namespace {

constexpr int kCount = 1 << 16;

std::vector<float> Inputs(float lo, float hi) {
  std::vector<float> v(kCount);
  for (int i = 0; i < kCount; ++i) v[i] = lo + (hi - lo) * static_cast<float>(i) / kCount;
  return v;
}

template <typename Loop>
void Run(benchmark::State& state, float lo, float hi, Loop loop) {
  std::vector<float> in = Inputs(lo, hi), out(kCount);
  for (auto _ : state) {
    loop(in.data(), out.data(), kCount);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kCount);
}

#define KILN_LIBM_LOOP(fn, expr)                                             \
  void Libm_##fn(const float* __restrict in, float* __restrict out, int n) { \
    for (int i = 0; i < n; ++i) out[i] = expr;                               \
  }
KILN_LIBM_LOOP(atan, std::atan(in[i]))
KILN_LIBM_LOOP(exp, std::exp(in[i]))
KILN_LIBM_LOOP(log, std::log(in[i]))
KILN_LIBM_LOOP(sin, std::sin(in[i]))
KILN_LIBM_LOOP(tanh, std::tanh(in[i]))
KILN_LIBM_LOOP(pow, std::pow(in[i], 1.7f))

#define KILN_PAIR(fn, lo, hi)                                                   \
  void BM_Rslib_##fn(benchmark::State& s) { Run(s, lo, hi, rslib_bench_##fn); } \
  void BM_Libm_##fn(benchmark::State& s) { Run(s, lo, hi, Libm_##fn); }         \
  BENCHMARK(BM_Rslib_##fn);                                                     \
  BENCHMARK(BM_Libm_##fn);
KILN_PAIR(atan, -10.0f, 10.0f)
KILN_PAIR(exp, -80.0f, 80.0f)
KILN_PAIR(log, 1e-3f, 1e3f)
KILN_PAIR(sin, -100.0f, 100.0f)
KILN_PAIR(tanh, -5.0f, 5.0f)
KILN_PAIR(pow, 1e-3f, 1e3f)

void BM_Rslib_native_exp(benchmark::State& s) { Run(s, -80.0f, 80.0f, rslib_bench_native_exp); }
void BM_Rslib_native_sin(benchmark::State& s) { Run(s, -100.0f, 100.0f, rslib_bench_native_sin); }
BENCHMARK(BM_Rslib_native_exp);
BENCHMARK(BM_Rslib_native_sin);

}  // namespace
}  // namespace kiln

BENCHMARK_MAIN();
