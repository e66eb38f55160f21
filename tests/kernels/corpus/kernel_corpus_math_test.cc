// kernel_corpus_tests, math: table-driven ULP checks of the rs_fp_full, native_*, half_* and rs_fp_relaxed
// functions against double-precision references, contraction under rs_fp_relaxed, the common functions and
// geometry (tests/kernels/corpus/math_*.rs, geometry.rs).
#include "tests/kernels/corpus/kernel_corpus_fixture.h"

namespace kiln {
namespace corpus {
namespace {

// ---------------------------------------------------------------------------------------------------------
// Math: table-driven ULP checks against double-precision references

// |x| = 2^e with e uniform in [min_exp, max_exp] (every binade equally likely), random sign when `signed_values`.
std::vector<float> RandomLogFloats(size_t n, double min_exp, double max_exp, bool signed_values, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(min_exp, max_exp);
  std::vector<float> v(n);
  for (float& x : v) {
    x = static_cast<float>(std::exp2(dist(rng)));
    if (signed_values && (rng() & 1)) x = -x;
  }
  return v;
}

// The error of `got` in units in the last place of the float nearest to `exact` (OpenCL's definition).
double UlpError(float got, double exact) {
  if (std::isnan(exact)) return std::isnan(got) ? 0.0 : INFINITY;
  if (std::isnan(got)) return INFINITY;
  if (std::isinf(exact)) return static_cast<double>(got) == exact ? 0.0 : INFINITY;
  // Past FLT_MAX + half an ulp the correctly rounded result is an infinity.
  if (std::fabs(exact) >= std::ldexp(1.0, 128) - std::ldexp(1.0, 103) && std::isinf(got) &&
      std::signbit(got) == std::signbit(exact)) {
    return 0.0;
  }
  double g = got;
  if (std::isinf(got)) g = std::copysign(std::ldexp(1.0, 128), got);  // the first value past FLT_MAX
  int e = 0;
  std::frexp(exact, &e);  // |exact| in [2^(e-1), 2^e)
  const double ulp = exact == 0.0 ? std::ldexp(1.0, -149) : std::ldexp(1.0, std::max(e - 24, -149));
  return std::fabs(g - exact) / ulp;
}

// Where a math case draws its arguments: uniform in [lo, hi], or (log) |x| = 2^e with e uniform in [lo, hi].
// With a quantum, every other value is rounded to a multiple of it (to hit halves for the rounding functions).
struct Domain {
  double lo, hi;
  bool log = false;
  bool signed_values = false;
  double quantum = 0;
};
Domain Lin(double lo, double hi, double quantum = 0) { return {lo, hi, false, false, quantum}; }
Domain Log(double lo_exp, double hi_exp, bool signed_values) { return {lo_exp, hi_exp, true, signed_values, 0}; }

std::vector<float> Draw(const Domain& d, size_t n, uint32_t seed) {
  std::vector<float> v = d.log ? RandomLogFloats(n, d.lo, d.hi, d.signed_values, seed) : RandomFloats(n, d.lo, d.hi, seed);
  if (d.quantum > 0) {
    for (size_t i = 0; i < n; i += 2) v[i] = static_cast<float>(std::round(v[i] / d.quantum) * d.quantum);
  }
  return v;
}

using RefFn = double (*)(double, double);

struct MathCase {
  const char* kernel;
  double bound;  // ulp; the source of each bound is the table's comment
  RefFn ref;
  int arity;  // 1: f(float); 2: f(float, float); -2: f(float, int)
  Domain a;
  Domain b = Lin(0, 0);
  int lanes = 1;  // the element's vector width (a 3-vector is stored in 4 lanes)
};

double SinPi(double x) {
  const double n = std::nearbyint(x), r = x - n;  // exact; |r| <= 1/2
  const double s = std::sin(M_PI * r);
  return std::fmod(n, 2.0) != 0.0 ? -s : s;
}
double CosPi(double x) {
  const double n = std::nearbyint(x), r = x - n;
  const double c = std::sin(M_PI * (0.5 - std::fabs(r)));  // exact zero at the half-integers
  return std::fmod(n, 2.0) != 0.0 ? -c : c;
}
double TanPi(double x) {
  const double n = std::floor(x), r = x - n;
  if (r == 0.5) return std::fmod(n, 2.0) == 0.0 ? INFINITY : -INFINITY;  // C23: tanpi(n + 1/2)
  return std::tan(M_PI * (x - std::nearbyint(x)));
}
double RootN(double x, double n) {
  if (n == 0 || (x < 0 && std::fmod(n, 2.0) == 0.0)) return NAN;
  return x < 0 ? -std::pow(-x, 1.0 / n) : std::pow(x, 1.0 / n);
}

#define R1(expr) [](double a, double) -> double { return expr; }
#define R2(expr) [](double a, double b) -> double { return expr; }

class CorpusMath : public Corpus {
 protected:
  // Runs every case over the odd sizes; a case fails when any lane's error exceeds its bound. Prints the worst
  // error seen per kernel.
  void RunTable(const char* kmod, const std::vector<MathCase>& cases) {
    KilnScript* s = Script(kmod);
    ASSERT_NE(s, nullptr) << messages_.All();
    uint32_t seed = 5000;
    for (const MathCase& c : cases) {
      double worst = 0;
      Mismatches bad;
      const int stored = c.lanes == 3 ? 4 : c.lanes;
      for (const Cells& cells : OddShapes()) {
        SCOPED_TRACE(std::string(c.kernel) + " " + ShapeName(cells));
        const size_t n = CellCount(cells);
        const std::vector<float> a = Draw(c.a, n * stored, seed++);
        std::vector<float> b;
        std::vector<int32_t> bi;
        std::vector<KilnTensor*> inputs = {In(cells, stored, a)};
        if (c.arity == 2) {
          b = Draw(c.b, n * stored, seed++);
          inputs.push_back(In(cells, stored, b));
        } else if (c.arity == -2) {
          bi = RandomInts<int32_t>(n * stored, static_cast<int32_t>(c.b.lo), static_cast<int32_t>(c.b.hi), seed++);
          inputs.push_back(In(cells, stored, bi));
        }
        const std::vector<float> out = Map<float>(s, c.kernel, inputs, cells, stored);
        ASSERT_EQ(out.size(), n * stored);
        for (size_t k = 0; k < n; ++k) {
          for (int l = 0; l < c.lanes; ++l) {
            const size_t i = k * stored + l;
            const double second = c.arity == 2 ? b[i] : c.arity == -2 ? bi[i] : 0.0;
            const double exact = c.ref(a[i], second);
            const double err = UlpError(out[i], exact);
            worst = std::max(worst, err);
            if (!(err <= c.bound)) {
              bad.Add(k, std::string(c.kernel) + "(" + Text(a[i]) + (c.arity != 1 ? ", " + Text(second) : "") +
                             ") = " + Text(out[i]) + ", exact " + Text(exact) + ": " + Text(err) + " ulp");
            }
          }
        }
        Release();
      }
      EXPECT_EQ(bad.count(), 0) << c.kernel << " (bound " << c.bound << " ulp): " << bad.Report();
      std::printf("  %-22s bound %7g ulp   max seen %.3f\n", c.kernel, c.bound, worst);
    }
  }
};

// rs_fp_full bounds: docs/kernel-math.md "Accuracy: full-precision functions" (OpenCL full profile).
TEST_F(CorpusMath, TrigAndHyperbolicFull) {
  RunTable("math_trig", {
      {"k_sin", 4, R1(std::sin(a)), 1, Lin(-1e5, 1e5)},
      {"k_cos", 4, R1(std::cos(a)), 1, Lin(-1e5, 1e5)},
      {"k_tan", 5, R1(std::tan(a)), 1, Lin(-1e5, 1e5)},
      {"k_asin", 4, R1(std::asin(a)), 1, Lin(-1, 1)},
      {"k_acos", 4, R1(std::acos(a)), 1, Lin(-1, 1)},
      {"k_atan", 5, R1(std::atan(a)), 1, Log(-20, 20, true)},
      {"k_sinpi", 4, R1(SinPi(a)), 1, Lin(-1e3, 1e3, 0.25)},
      {"k_cospi", 4, R1(CosPi(a)), 1, Lin(-1e3, 1e3, 0.25)},
      {"k_tanpi", 6, R1(TanPi(a)), 1, Lin(-1e3, 1e3, 0.25)},
      {"k_asinpi", 5, R1(std::asin(a) / M_PI), 1, Lin(-1, 1)},
      {"k_acospi", 5, R1(std::acos(a) / M_PI), 1, Lin(-1, 1)},
      {"k_atanpi", 5, R1(std::atan(a) / M_PI), 1, Log(-20, 20, true)},
      {"k_sinh", 4, R1(std::sinh(a)), 1, Lin(-89, 89)},
      {"k_cosh", 4, R1(std::cosh(a)), 1, Lin(-89, 89)},
      {"k_tanh", 5, R1(std::tanh(a)), 1, Lin(-12, 12)},
      {"k_asinh", 4, R1(std::asinh(a)), 1, Log(-30, 60, true)},
      {"k_acosh", 4, R1(std::acosh(a)), 1, Log(0, 60, false)},
      {"k_atanh", 5, R1(std::atanh(a)), 1, Lin(-1, 1)},
      {"k_atan2", 6, R2(std::atan2(a, b)), 2, Lin(-100, 100), Lin(-100, 100)},
      {"k_atan2pi", 6, R2(std::atan2(a, b) / M_PI), 2, Lin(-100, 100), Lin(-100, 100)},
      {"k_atan4", 5, R1(std::atan(a)), 1, Lin(-50, 50), Lin(0, 0), 4},
  });
}

TEST_F(CorpusMath, SincosFull) {
  KilnScript* s = Script("math_trig");
  ASSERT_NE(s, nullptr) << messages_.All();
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto a = RandomFloats(n, -1e4, 1e4, 77);
    const auto out = Map<float>(s, "k_sincos", {In(cells, 1, a)}, cells, 2);
    ASSERT_EQ(out.size(), 2 * n);
    Mismatches bad;
    for (size_t k = 0; k < n; ++k) {  // bound 4 ulp for sin and cos (kernel-math.md: sincos)
      if (UlpError(out[2 * k], std::sin(a[k])) > 4 || UlpError(out[2 * k + 1], std::cos(a[k])) > 4) {
        bad.Add(k, "sincos(" + Text(a[k]) + ") = " + Text(out[2 * k]) + ", " + Text(out[2 * k + 1]));
      }
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
}

TEST_F(CorpusMath, ExpLogPowFull) {
  RunTable("math_explog", {
      {"k_exp", 3, R1(std::exp(a)), 1, Lin(-104, 89)},
      {"k_exp2", 3, R1(std::exp2(a)), 1, Lin(-150, 128.5)},
      {"k_exp10", 3, R1(std::pow(10.0, a)), 1, Lin(-45, 38.6)},
      {"k_expm1", 3, R1(std::expm1(a)), 1, Lin(-20, 89)},
      {"k_log", 3, R1(std::log(a)), 1, Log(-149, 127.99, false)},
      {"k_log2", 3, R1(std::log2(a)), 1, Log(-149, 127.99, false)},
      {"k_log10", 3, R1(std::log10(a)), 1, Log(-149, 127.99, false)},
      {"k_log1p", 2, R1(std::log1p(a)), 1, Lin(-0.999, 100)},
      {"k_sqrt", 0.5, R1(std::sqrt(a)), 1, Log(-149, 127.99, false)},  // correctly rounded
      {"k_rsqrt", 2, R1(1.0 / std::sqrt(a)), 1, Log(-149, 127.99, false)},
      {"k_cbrt", 2, R1(std::cbrt(a)), 1, Log(-149, 127.99, true)},
      {"k_pow", 16, R2(std::pow(a, b)), 2, Lin(0, 50), Lin(-8, 8)},
      {"k_powr", 16, R2(std::pow(a, b)), 2, Lin(0, 50), Lin(-8, 8)},
      {"k_hypot", 4, R2(std::hypot(a, b)), 2, Lin(-1e3, 1e3), Lin(-1e3, 1e3)},
      {"k_pown", 16, R2(std::pow(a, b)), -2, Lin(-10, 10), Lin(-8, 8)},
      {"k_rootn", 16, R2(RootN(a, b)), -2, Lin(-1e3, 1e3), Lin(-6, 6)},
      {"k_exp3", 3, R1(std::exp(a)), 1, Lin(-87, 88), Lin(0, 0), 3},
      {"k_pow2", 16, R2(std::pow(a, b)), 2, Lin(0, 20), Lin(-4, 4), 2},
  });
}

// Exact functions (kernel-math.md: 0 ulp), fract/rsFrac correctly rounded (0.5 ulp of the exact x - floor(x)).
TEST_F(CorpusMath, ExactFunctions) {
  RunTable("math_exact", {
      {"k_fabs", 0, R1(std::fabs(a)), 1, Lin(-1e4, 1e4)},
      {"k_floor", 0, R1(std::floor(a)), 1, Lin(-1e4, 1e4, 0.5)},
      {"k_ceil", 0, R1(std::ceil(a)), 1, Lin(-1e4, 1e4, 0.5)},
      {"k_round", 0, R1(std::round(a)), 1, Lin(-1e4, 1e4, 0.5)},
      {"k_trunc", 0, R1(std::trunc(a)), 1, Lin(-1e4, 1e4, 0.5)},
      {"k_rint", 0, R1(std::nearbyint(a)), 1, Lin(-1e4, 1e4, 0.5)},
      {"k_fract", 0.5, R1(Fract(a)), 1, Lin(-1e4, 1e4, 0.5)},
      {"k_rsFrac", 0.5, R1(Fract(a)), 1, Lin(-1e4, 1e4, 0.5)},
      {"k_fmin", 0, R2(std::fmin(a, b)), 2, Lin(-1e3, 1e3), Lin(-1e3, 1e3)},
      {"k_fmax", 0, R2(std::fmax(a, b)), 2, Lin(-1e3, 1e3), Lin(-1e3, 1e3)},
      {"k_fmod", 0, R2(std::fmod(a, b)), 2, Lin(-1e4, 1e4), Lin(-50, 50)},
      {"k_copysign", 0, R2(std::copysign(a, b)), 2, Lin(-1e4, 1e4), Lin(-1, 1)},
      {"k_fdim", 0, R2(static_cast<double>(std::fdim(static_cast<float>(a), static_cast<float>(b)))), 2,
       Lin(-1e4, 1e4), Lin(-1e4, 1e4)},
  });
}

TEST_F(CorpusMath, FractWithFloorAndVectorRounding) {
  KilnScript* s = Script("math_exact");
  ExpectExact1<float, float>(s, "k_fract_floor", 1, 2, 2, Uniform(-1e4, 1e4), [](const float* in, float* out) {
    out[0] = static_cast<float>(Fract(*in));
    out[1] = std::floor(*in);
  });
  ExpectExact1<float, float>(s, "k_floor4", 4, 4, 4, Uniform(-1e4, 1e4), [](const float* in, float* out) {
    for (int l = 0; l < 4; ++l) out[l] = std::floor(in[l]) + std::ceil(in[3 - l]);
  });
}

// native_*: the "Test bound" column of kernel-math.md's native table over its tested domains; the native forms
// documented as the full-precision function (sinh, cbrt, atan2) get that function's full bound.
TEST_F(CorpusMath, NativeForms) {
  RunTable("math_native", {
      {"k_native_exp", 256, R1(std::exp(a)), 1, Lin(-87, 88)},
      {"k_native_exp2", 256, R1(std::exp2(a)), 1, Lin(-126, 127.99)},
      {"k_native_exp10", 256, R1(std::pow(10.0, a)), 1, Lin(-37, 38)},
      {"k_native_log", 256, R1(std::log(a)), 1, Log(-126, 127, false)},
      {"k_native_log2", 256, R1(std::log2(a)), 1, Log(-126, 127, false)},
      {"k_native_log10", 256, R1(std::log10(a)), 1, Log(-126, 127, false)},
      {"k_native_sin", 256, R1(std::sin(a)), 1, Lin(-6400, 6400)},
      {"k_native_cos", 256, R1(std::cos(a)), 1, Lin(-6400, 6400)},
      {"k_native_tan", 256, R1(std::tan(a)), 1, Lin(-6400, 6400)},
      {"k_native_atan", 256, R1(std::atan(a)), 1, Log(-60, 60, true)},
      {"k_native_recip", 1, R1(1.0 / a), 1, Log(-125, 125, true)},
      {"k_native_sqrt", 1, R1(std::sqrt(a)), 1, Log(-149, 127.99, false)},
      {"k_native_rsqrt", 2, R1(1.0 / std::sqrt(a)), 1, Log(-126, 127.99, false)},
      {"k_native_sinh", 4, R1(std::sinh(a)), 1, Lin(-89, 89)},
      {"k_native_cbrt", 2, R1(std::cbrt(a)), 1, Log(-149, 127.99, true)},
      // native_powr: x in [2^-15, 2^15], y in [-8, 8] keeps every result normal, as the tested domain requires.
      {"k_native_powr", 8192, R2(std::pow(a, b)), 2, Log(-15, 15, false), Lin(-8, 8)},
      {"k_native_divide", 1, R2(a / b), 2, Lin(-1e3, 1e3), Log(-20, 20, true)},
      {"k_native_atan2", 6, R2(std::atan2(a, b)), 2, Lin(-100, 100), Lin(-100, 100)},
      {"k_native_exp4", 256, R1(std::exp(a)), 1, Lin(-87, 88), Lin(0, 0), 4},
  });
}

// half_*: OpenCL's 8192 ulp (kernel-math.md "half_* (OpenCL bound 8192 ulp)"); half_exp* and half_log* are the
// native forms, so they are drawn from the native forms' tested domains; half_sin/cos/tan over |x| <= 2^16.
TEST_F(CorpusMath, HalfForms) {
  RunTable("math_half", {
      {"k_half_exp", 8192, R1(std::exp(a)), 1, Lin(-87, 88)},
      {"k_half_exp2", 8192, R1(std::exp2(a)), 1, Lin(-126, 127.99)},
      {"k_half_exp10", 8192, R1(std::pow(10.0, a)), 1, Lin(-37, 38)},
      {"k_half_log", 8192, R1(std::log(a)), 1, Log(-126, 127, false)},
      {"k_half_log2", 8192, R1(std::log2(a)), 1, Log(-126, 127, false)},
      {"k_half_log10", 8192, R1(std::log10(a)), 1, Log(-126, 127, false)},
      {"k_half_sin", 8192, R1(std::sin(a)), 1, Lin(-65536, 65536)},
      {"k_half_cos", 8192, R1(std::cos(a)), 1, Lin(-65536, 65536)},
      {"k_half_tan", 8192, R1(std::tan(a)), 1, Lin(-65536, 65536)},
      {"k_half_sqrt", 8192, R1(std::sqrt(a)), 1, Log(-126, 127.99, false)},
      {"k_half_rsqrt", 8192, R1(1.0 / std::sqrt(a)), 1, Log(-126, 127.99, false)},
      {"k_half_recip", 8192, R1(1.0 / a), 1, Log(-125, 125, true)},
      {"k_half_divide", 8192, R2(a / b), 2, Lin(-1e3, 1e3), Log(-20, 20, true)},
      {"k_half_powr", 8192, R2(std::pow(a, b)), 2, Log(-15, 15, false), Lin(-8, 8)},
  });
}

// rs_fp_relaxed changes contraction only (kernel-language.md), and kernel-math.md has no relaxed table, so
// the math calls keep their full bounds.
TEST_F(CorpusMath, RelaxedPrecisionMath) {
  RunTable("math_relaxed", {
      {"relaxed_sin", 4, R1(std::sin(a)), 1, Lin(-1e5, 1e5)},
      {"relaxed_exp", 3, R1(std::exp(a)), 1, Lin(-87, 88)},
      {"relaxed_log", 3, R1(std::log(a)), 1, Log(-149, 127.99, false)},
      {"relaxed_atan2", 6, R2(std::atan2(a, b)), 2, Lin(-100, 100), Lin(-100, 100)},
      {"relaxed_pow", 16, R2(std::pow(a, b)), 2, Lin(0, 50), Lin(-8, 8)},
  });
}

// relaxed_poly: t = x * 0.75; t = t + 2; t * x - 1, which relaxed code may contract in any way. Three
// roundings at most: |error| <= 3u (1 + 3u) (|0.75 x^2| + |2x| + 1) with u = 2^-24, for any contraction.
TEST_F(Corpus, RelaxedContraction) {
  KilnScript* s = Script("math_relaxed");
  ASSERT_NE(s, nullptr) << messages_.All();
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto x = RandomFloats(n, -1e3, 1e3, 88);
    const auto out = Map<float>(s, "relaxed_poly", {In(cells, 1, x)}, cells);
    ASSERT_EQ(out.size(), n);
    Mismatches bad;
    const double u = std::ldexp(1.0, -24);
    for (size_t k = 0; k < n; ++k) {
      const double v = x[k];
      const double exact = (v * 0.75 + 2.0) * v - 1.0;
      const double bound = 3 * u * (1 + 3 * u) * (0.75 * v * v + 2 * std::fabs(v) + 1);
      if (std::fabs(out[k] - exact) > bound) bad.Add(k, "x " + Text(x[k]) + " got " + Text(out[k]));
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Common functions, geometry

// clz inputs that reach every count: random values shifted right by 0..width bits (the width itself gives 0).
template <typename T>
std::function<std::vector<T>(size_t, uint32_t)> ClzInputs() {
  return [](size_t n, uint32_t seed) {
    using U = std::make_unsigned_t<T>;
    constexpr size_t kBits = 8 * sizeof(T);
    std::vector<T> v = RandomFull<T>(n, seed);
    for (size_t i = 0; i < n; ++i) {
      const size_t shift = i % (kBits + 1);
      v[i] = shift == kBits ? T(0) : static_cast<T>(static_cast<U>(v[i]) >> shift);
    }
    return v;
  };
}

// The leading zero bits of `v` at its own width, counted one bit at a time.
template <typename T>
T ClzOf(T v) {
  auto u = static_cast<std::make_unsigned_t<T>>(v);
  int count = 8 * sizeof(T);
  for (; u != 0; u >>= 1) --count;
  return static_cast<T>(count);
}

// Plain float arithmetic that the compiler may contract (C allows a * b + c to fuse within an expression): the
// result must equal the fused or the unfused evaluation exactly.
bool FusedOrNot(float got, float fused, float unfused) { return Same(got, fused) || Same(got, unfused); }

TEST_F(Corpus, CommonFunctions) {
  KilnScript* s = Script("math_common");
  ASSERT_NE(s, nullptr) << messages_.All();
  const float e0 = -0.5f, e1 = 0.75f;
  ExpectExact1<float, float>(s, "k_clamp", 1, 1, 1, Uniform(-5, 5),
                             [](const float* in, float* out) { *out = std::min(std::max(*in, -1.0f), 2.0f); });
  ExpectExact1<float, float>(s, "k_step", 1, 1, 1, [](size_t n, uint32_t seed) {
    auto v = RandomFloats(n, -1, 1, seed);
    for (size_t i = 0; i < n; i += 5) v[i] = 0.25f;  // the edge itself gives 1
    return v;
  }, [](const float* in, float* out) { *out = *in < 0.25f ? 0.0f : 1.0f; });
  ExpectExact1<float, float>(s, "k_sign", 1, 1, 1, [](size_t n, uint32_t seed) {
    auto v = RandomFloats(n, -1, 1, seed);
    for (size_t i = 0; i < n; i += 3) v[i] = i % 2 ? -0.0f : 0.0f;
    return v;
  }, [](const float* in, float* out) { *out = *in > 0 ? 1.0f : *in < 0 ? -1.0f : *in; });
  ExpectExact1<float, float>(s, "k_degrees", 1, 1, 1, Uniform(-10, 10),
                             [](const float* in, float* out) { *out = *in * 57.295779513082320876f; });
  ExpectExact1<float, float>(s, "k_radians", 1, 1, 1, Uniform(-1000, 1000),
                             [](const float* in, float* out) { *out = *in * 0.017453292519943295769f; });
  ExpectExact1<int32_t, uint32_t>(s, "k_abs", 1, 1, 1, FullRange<int32_t>(), [](const int32_t* in, uint32_t* out) {
    *out = *in < 0 ? 0u - static_cast<uint32_t>(*in) : static_cast<uint32_t>(*in);
  });
  ExpectExact1<uint8_t, uint8_t>(s, "k_uchar_clamp", 4, 4, 4, FullRange<uint8_t>(), [](const uint8_t* in, uint8_t* out) {
    for (int l = 0; l < 4; ++l) out[l] = std::min<uint8_t>(std::max<uint8_t>(in[l], 40), 200);
  });
  ExpectExact1<uint8_t, uint8_t>(s, "k_clz_uchar", 1, 1, 1, ClzInputs<uint8_t>(),
                                 [](const uint8_t* in, uint8_t* out) { *out = ClzOf(*in); });
  ExpectExact1<int16_t, int16_t>(s, "k_clz_short", 1, 1, 1, ClzInputs<int16_t>(),
                                 [](const int16_t* in, int16_t* out) { *out = ClzOf(*in); });
  ExpectExact1<uint32_t, uint32_t>(s, "k_clz_uint", 1, 1, 1, ClzInputs<uint32_t>(),
                                   [](const uint32_t* in, uint32_t* out) { *out = ClzOf(*in); });
  ExpectExact1<int32_t, int32_t>(s, "k_clz_int4", 4, 4, 4, ClzInputs<int32_t>(), [](const int32_t* in, int32_t* out) {
    for (int l = 0; l < 4; ++l) out[l] = ClzOf(in[l]);
  });
  ExpectExact1<int64_t, int64_t>(s, "k_long_clamp", 2, 2, 2, FullRange<int64_t>(), [](const int64_t* in, int64_t* out) {
    out[0] = std::min<int64_t>(std::max<int64_t>(in[0], -1000000000000), 0);
    out[1] = std::min<int64_t>(std::max<int64_t>(in[1], 0), 1000000000000);
  });
  uint32_t seed = 1300;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    Mismatches bad;
    const auto a = RandomFloats(4 * n, -100, 100, seed++), b = RandomFloats(4 * n, -100, 100, seed++);
    const auto t = RandomFloats(4 * n, 0, 1, seed++), c = RandomFloats(n, -100, 100, seed++);
    KilnTensor *ta = In(cells, 1, std::vector<float>(a.begin(), a.begin() + n)),
               *tb = In(cells, 1, std::vector<float>(b.begin(), b.begin() + n)), *tc = In(cells, 1, c);
    const auto mix = Map<float>(s, "k_mix", {ta, tb}, cells);
    const auto mad = Map<float>(s, "k_mad", {ta, tb, tc}, cells);
    const auto mm = Map<float>(s, "k_minmax", {ta, tb}, cells, 2);
    const auto smooth = Map<float>(s, "k_smoothstep", {ta}, cells);
    const auto mix4 = Map<float>(s, "k_mix4", {In(cells, 4, a), In(cells, 4, b), In(cells, 4, t)}, cells, 4);
    const auto step4 = Map<float>(s, "k_step4", {In(cells, 4, a), In(cells, 4, b)}, cells, 4);
    ASSERT_TRUE(mix.size() == n && mad.size() == n && mm.size() == 2 * n && smooth.size() == n &&
                mix4.size() == 4 * n && step4.size() == 4 * n);
    const auto mix_ok = [](float got, float x, float y, float w) {  // x + (y - x) * w
      const float d = y - x;
      const float p = d * w;
      return FusedOrNot(got, std::fma(d, w, x), x + p);
    };
    for (size_t k = 0; k < n; ++k) {
      if (!mix_ok(mix[k], a[k], b[k], 0.3f)) bad.Add(k, "mix got " + Text(mix[k]));
      const float p = a[k] * b[k];
      if (!FusedOrNot(mad[k], std::fma(a[k], b[k], c[k]), p + c[k])) bad.Add(k, "mad got " + Text(mad[k]));
      if (mm[2 * k] != std::min(a[k], b[k]) || mm[2 * k + 1] != std::max(a[k], b[k])) bad.Add(k, "min/max");
      // smoothstep: u = clamp((v - e0) / (e1 - e0), 0, 1); u * u * (3 - 2u), where 3 - 2u may fuse.
      const float u = std::min(std::max((a[k] - e0) / (e1 - e0), 0.0f), 1.0f);
      const float two_u = 2.0f * u;
      const float uu = u * u;
      if (!FusedOrNot(smooth[k], uu * std::fma(-2.0f, u, 3.0f), uu * (3.0f - two_u))) {
        bad.Add(k, "smoothstep(" + Text(a[k]) + ") got " + Text(smooth[k]));
      }
      for (int l = 0; l < 4; ++l) {
        const size_t i = 4 * k + l;
        if (!mix_ok(mix4[i], a[i], b[i], t[i])) bad.Add(k, "mix4 got " + Text(mix4[i]));
        if (step4[i] != (b[i] < a[i] ? 0.0f : 1.0f)) bad.Add(k, "step4 got " + Text(step4[i]));
      }
    }
    const auto ia = RandomFull<int32_t>(4 * n, seed++), ib = RandomFull<int32_t>(4 * n, seed++);
    const auto imm = Map<int32_t>(s, "k_int_minmax", {In(cells, 4, ia), In(cells, 4, ib)}, cells, 4);
    const auto sa = RandomFull<int16_t>(n, seed++), sb = RandomFull<int16_t>(n, seed++);
    const auto smm = Map<int16_t>(s, "k_short_minmax", {In(cells, 1, sa), In(cells, 1, sb)}, cells);
    ASSERT_TRUE(imm.size() == 4 * n && smm.size() == n);
    for (size_t k = 0; k < n; ++k) {
      for (int l = 0; l < 4; ++l) {
        const size_t i = 4 * k + l;
        if (imm[i] != (l < 2 ? std::min(ia[i], ib[i]) : std::max(ia[i], ib[i]))) bad.Add(k, "int min/max");
      }
      const int16_t want = static_cast<int16_t>(std::max(sa[k], sb[k]) - std::min(sa[k], sb[k]));
      if (smm[k] != want) bad.Add(k, "short min/max got " + Text(smm[k]) + " want " + Text(want));
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
  // gEdge0/gEdge1 are script globals: the smoothstep above used their defaults.
  float edge = 0;
  EXPECT_EQ(KilnScriptGetGlobal(s, "gEdge1", &edge, 4), kKilnOk);
  EXPECT_EQ(edge, e1);
}

// dot and the matrix products: any evaluation order, fused or not, is within gamma_n * sum |a_i b_i|,
// gamma_n = n u / (1 - n u), u = 2^-24 (the classic bound for a sum of n products). cross: gamma_2 per lane.
// length/distance: OpenCL's 3 + 0.5 * ((0.5 * n) + (0.5 * (n - 1))) ulp; normalize: 2.5 + n ulp per lane
// (kernel-math.md: "3 + ..." and "2.5 + ..."); native_/fast_ forms: OpenCL's fast_* bound, 8192 ulp.
TEST_F(Corpus, Geometry) {
  KilnScript* s = Script("geometry");
  ASSERT_NE(s, nullptr) << messages_.All();
  uint32_t seed = 1400;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto a = RandomFloats(4 * n, -100, 100, seed++), b = RandomFloats(4 * n, -100, 100, seed++);
    KilnTensor *ta = In(cells, 4, a), *tb = In(cells, 4, b);
    const std::vector<float> a2(a.begin(), a.begin() + 2 * n);
    const auto dot4 = Map<float>(s, "k_dot4", {ta, tb}, cells);
    const auto dot3 = Map<float>(s, "k_dot3", {ta, tb}, cells);
    const auto cross3 = Map<float>(s, "k_cross3", {ta, tb}, cells, 4);
    const auto cross4 = Map<float>(s, "k_cross4", {ta, tb}, cells, 4);
    const auto len3 = Map<float>(s, "k_length3", {ta}, cells);
    const auto len2 = Map<float>(s, "k_length2", {In(cells, 2, a2)}, cells);
    const auto dist4 = Map<float>(s, "k_distance4", {ta, tb}, cells);
    const auto norm4 = Map<float>(s, "k_normalize4", {ta}, cells, 4);
    const auto norm3 = Map<float>(s, "k_normalize3", {ta}, cells, 4);
    const auto nlen3 = Map<float>(s, "k_native_length3", {ta}, cells);
    const auto fnorm3 = Map<float>(s, "k_fast_normalize3", {ta}, cells, 4);
    ASSERT_TRUE(dot4.size() == n && dot3.size() == n && cross3.size() == 4 * n && cross4.size() == 4 * n &&
                len3.size() == n && len2.size() == n && dist4.size() == n && norm4.size() == 4 * n &&
                norm3.size() == 4 * n && nlen3.size() == n && fnorm3.size() == 4 * n);
    Mismatches bad;
    const auto length_bound = [](int lanes) { return 3 + 0.5 * (0.5 * lanes + 0.5 * (lanes - 1)); };
    for (size_t k = 0; k < n; ++k) {
      const float* x = &a[4 * k];
      const float* y = &b[4 * k];
      for (int lanes : {3, 4}) {
        double exact = 0, mag = 0;
        for (int l = 0; l < lanes; ++l) {
          exact += static_cast<double>(x[l]) * y[l];
          mag += std::fabs(static_cast<double>(x[l]) * y[l]);
        }
        const float got = lanes == 4 ? dot4[k] : dot3[k];
        if (std::fabs(got - exact) > Gamma(lanes) * mag) bad.Add(k, "dot" + std::to_string(lanes) + " " + Text(got));
      }
      const int next[3] = {1, 2, 0}, prev[3] = {2, 0, 1};
      for (int l = 0; l < 3; ++l) {
        const double p = static_cast<double>(x[next[l]]) * y[prev[l]], q = static_cast<double>(x[prev[l]]) * y[next[l]];
        const double tol = Gamma(2) * (std::fabs(p) + std::fabs(q));
        if (std::fabs(cross3[4 * k + l] - (p - q)) > tol) bad.Add(k, "cross3 lane " + std::to_string(l));
        if (std::fabs(cross4[4 * k + l] - (p - q)) > tol) bad.Add(k, "cross4 lane " + std::to_string(l));
      }
      if (cross4[4 * k + 3] != 0.0f) bad.Add(k, "cross4 w " + Text(cross4[4 * k + 3]));
      double ss3 = 0, ss4 = 0, dd4 = 0;
      const double ss2 = static_cast<double>(a2[2 * k]) * a2[2 * k] + static_cast<double>(a2[2 * k + 1]) * a2[2 * k + 1];
      for (int l = 0; l < 4; ++l) {
        const double v = x[l];
        if (l < 3) ss3 += v * v;
        ss4 += v * v;
        dd4 += (v - y[l]) * (v - y[l]);
      }
      if (UlpError(len3[k], std::sqrt(ss3)) > length_bound(3)) bad.Add(k, "length3 " + Text(len3[k]));
      if (UlpError(len2[k], std::sqrt(ss2)) > length_bound(2)) bad.Add(k, "length2 " + Text(len2[k]));
      if (UlpError(dist4[k], std::sqrt(dd4)) > length_bound(4)) bad.Add(k, "distance4 " + Text(dist4[k]));
      if (UlpError(nlen3[k], std::sqrt(ss3)) > 8192) bad.Add(k, "native_length3 " + Text(nlen3[k]));
      for (int l = 0; l < 4; ++l) {
        if (UlpError(norm4[4 * k + l], x[l] / std::sqrt(ss4)) > 2.5 + 4) bad.Add(k, "normalize4 " + Text(norm4[4 * k + l]));
        if (l == 3) continue;
        if (UlpError(norm3[4 * k + l], x[l] / std::sqrt(ss3)) > 2.5 + 3) bad.Add(k, "normalize3 " + Text(norm3[4 * k + l]));
        if (UlpError(fnorm3[4 * k + l], x[l] / std::sqrt(ss3)) > 8192) bad.Add(k, "fast_normalize3");
      }
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
}

}  // namespace
}  // namespace corpus
}  // namespace kiln
