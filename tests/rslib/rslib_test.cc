// Accuracy and behaviour tests for the kernel math library (compiler/rslib), run on the same C sources that
// go into kiln_rslib.bc, compiled natively. Each float function is compared with the long-double libm (or
// an exact construction) over a sweep of bit patterns across every binade, uniform samples of its main domain
// and the special values, and must stay within its documented ULP bound (docs/kernel-math.md). The maximum
// error seen per function is printed, which is where the table in the docs comes from.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "compiler/rslib/rslib_bitcode.h"

extern "C" {
#define KT_F1N(name)      \
  float kt_##name(float); \
  void kt_##name##_v(const float*, float*);
#define KT_F1(name) KT_F1N(name) float kt_##name##_h(float);
#define KT_F2N(name)             \
  float kt_##name(float, float); \
  void kt_##name##_v(const float*, const float*, float*);
#define KT_F2(name) KT_F2N(name) float kt_##name##_h(float, float);
#define KT_FI(name)            \
  float kt_##name(float, int); \
  void kt_##name##_v(const float*, const int*, float*);
#define KT_FP(name, T, kt_name)  \
  float kt_##kt_name(float, T*); \
  void kt_##kt_name##_v(const float*, float*, T*);
#include "tests/rslib/kt_functions.inc"
#undef KT_F1N
#undef KT_F1
#undef KT_F2N
#undef KT_F2
#undef KT_FI
#undef KT_FP
float kt_fma(float, float, float);
void kt_fma_v(const float*, const float*, const float*, float*);
float kt_mad(float, float, float);
float kt_remquo(float, float, int*);
void kt_remquo_v(const float*, const float*, float*, int*);
int kt_ilogb(float);
float kt_nan(unsigned);
float kt_to_half(float);
float kt_rsFrac(float);
float kt_length(const float*, int);
float kt_fast_length(const float*, int);
float kt_distance4(const float*, const float*);
void kt_normalize(const float*, int, float*);
void kt_fast_normalize3(const float*, float*);
float kt_dot4(const float*, const float*);
void kt_cross3(const float*, const float*, float*);
float kt_clamp(float, float, float);
void kt_clamp4s(const float*, float, float, float*);
float kt_mix(float, float, float);
float kt_step(float, float);
void kt_step4(const float*, const float*, float*);
float kt_smoothstep(float, float, float);
float kt_min(float, float);
float kt_max(float, float);
int kt_min_i(int, int);
unsigned kt_max_u(unsigned, unsigned);
unsigned kt_abs_i(int);
void kt_abs_c4(const signed char*, unsigned char*);
void kt_clamp_s4(const short*, short, short, short*);
int kt_rsClamp(int, int, int);
unsigned char kt_rsClamp_uc(unsigned char, unsigned char, unsigned char);
void kt_convert_float4_uchar4(const unsigned char*, float*);
void kt_convert_int3_float3(const float*, int*);
void kt_convert_ushort2_int2(const int*, unsigned short*);
void kt_pack_color(const float*, unsigned char*);
void kt_pack_color3(float, float, float, unsigned char*);
void kt_unpack_color(const unsigned char*, float*);
int kt_rand_i(int);
int kt_rand_ii(int, int);
float kt_rand_f(float);
float kt_rand_ff(float, float);
void kt_matrix_load_rotate(float*, float, float, float, float);
void kt_matrix_load_translate(float*, float, float, float);
void kt_matrix_scale(float*, float, float, float);
void kt_matrix_load_multiply(float*, const float*, const float*);
int kt_matrix_inverse(float*);
void kt_matrix_transpose(float*);
void kt_matrix_multiply_vec(const float*, const float*, float*);
void kt_matrix_multiply_vec3(const float*, const float*, float*);
void kt_matrix3_multiply_vec(const float*, const float*, float*);
float kt_matrix_get(const float*, unsigned, unsigned);
void kt_quaternion_rotate_matrix(float, float, float, float, float*);
void kt_quaternion_multiply(const float*, const float*, float*);
void kt_quaternion_slerp(const float*, const float*, float, float*);
}

namespace kiln {
namespace {

using LD = long double;
constexpr LD kPi = 3.141592653589793238462643383279502884L;
constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
bool SameFloat(float a, float b) { return (std::isnan(a) && std::isnan(b)) || Bits(a) == Bits(b); }

// Error of `got` in units of the last place of the float result closest to `want`. NaN/inf must match
// exactly; a zero result must have the reference's sign.
double UlpError(float got, LD want) {
  if (std::isnan(want)) return std::isnan(got) ? 0.0 : INFINITY;
  if (std::isnan(got)) return INFINITY;
  if (std::isinf(want)) return got == want ? 0.0 : INFINITY;
  LD aw = std::fabs(want);
  if (std::isinf(got)) {
    if (std::signbit(got) != std::signbit(want)) return INFINITY;
    if (aw >= 0x1.ffffffp127L) return 0.0;  // rounds to infinity
    return (double)((0x1p128L - aw) / 0x1p104L);
  }
  if (want == 0) {
    if (got != 0) return (double)(std::fabs((LD)got) / 0x1p-149L);
    return std::signbit(got) == std::signbit(want) ? 0.0 : INFINITY;
  }
  int e = std::ilogb(want);
  if (e < -126) e = -126;
  LD ulp = std::ldexp(1.0L, e - 23);
  return (double)(std::fabs((LD)got - want) / ulp);
}

// The bit-pattern stride of the unary sweeps: 2^15 by default (fast); KILN_RSLIB_STRIDE_LOG2=0 checks every
// float (slow, for measuring).
uint32_t DefaultStride() {
  const char* env = std::getenv("KILN_RSLIB_STRIDE_LOG2");
  int log2 = env ? std::atoi(env) : 15;
  return 1u << (log2 < 0 ? 0 : (log2 > 24 ? 24 : log2));
}

// Every binade of both signs (bit-pattern sweep), the special values, and `uniform` points of [lo, hi].
std::vector<float> Samples(float lo, float hi, int uniform, uint32_t stride = DefaultStride(),
                           bool neighbours = true) {
  std::vector<float> s = {0.0f,    -0.0f,    kInf,      -kInf,      kNaN, FLT_MIN, -FLT_MIN,
                          FLT_MAX, -FLT_MAX, 0x1p-149f, -0x1p-149f, 1.0f, -1.0f,   0.5f,
                          -0.5f,   2.0f,     -2.0f,     3.0f,       -3.0f};
  for (uint64_t u = 0; u < 0x7f800000u; u += stride) {
    s.push_back(FromBits((uint32_t)u));
    s.push_back(FromBits((uint32_t)u | 0x80000000u));
    if (stride > 2) s.push_back(FromBits((uint32_t)u + 1 + (uint32_t)(u * 2654435761u % (stride - 1))));
  }
  for (int i = 0; i <= uniform; ++i) s.push_back(lo + (hi - lo) * ((float)i / (float)uniform));
  // Neighbours of the interesting points: integers, half-integers, multiples of pi/2.
  for (int k = -8; k <= 8 && neighbours; ++k) {
    for (float c : {(float)k, k + 0.5f, (float)(k * kPi / 2)}) {
      float v = c;
      for (int j = 0; j < 8; ++j) {
        s.push_back(v);
        v = std::nextafter(v, kInf);
      }
      v = c;
      for (int j = 0; j < 8; ++j) {
        v = std::nextafter(v, -kInf);
        s.push_back(v);
      }
    }
  }
  return s;
}

std::map<std::string, double>& MaxUlpTable() {
  static std::map<std::string, double> table;
  return table;
}

class PrintTable : public ::testing::Environment {
 public:
  void TearDown() override {
    std::printf("\nrslib: max ulp seen per function (samples of tests/rslib/rslib_test.cc)\n");
    for (const auto& [name, ulp] : MaxUlpTable()) std::printf("  %-18s %.3f\n", name.c_str(), ulp);
  }
};
const auto* const kPrintTable = ::testing::AddGlobalTestEnvironment(new PrintTable);

struct Unary {
  const char* name;
  float (*fn)(float);
  std::function<LD(LD)> ref;
  double bound;  // ulp
  float lo, hi;  // uniform samples; with check_all false, also the only inputs checked
  bool check_all;
};

void CheckUnary(const Unary& u) {
  double worst = 0.0;
  float worst_x = 0.0f;
  int failures = 0;
  for (float x : Samples(u.lo, u.hi, 100000)) {
    if (!u.check_all && !(x >= u.lo && x <= u.hi)) continue;
    float got = u.fn(x);
    double err = UlpError(got, u.ref((LD)x));
    if (err > worst) {
      worst = err;
      worst_x = x;
    }
    if (err > u.bound && failures++ < 5) {
      ADD_FAILURE() << u.name << "(" << std::hexfloat << x << ") = " << got << ", want "
                    << (double)u.ref((LD)x) << std::defaultfloat << " (" << err << " ulp > " << u.bound
                    << ")";
    }
  }
  MaxUlpTable()[u.name] = std::max(MaxUlpTable()[u.name], worst);
  EXPECT_LE(worst, u.bound) << u.name << " worst at " << std::hexfloat << worst_x;
}

LD RefSinpi(LD x) {
  if (std::isinf(x) || std::isnan(x)) return NAN;
  if (x == std::nearbyint(x)) return std::copysign(0.0L, x);
  return std::sin(kPi * std::fmod(x, 2.0L));
}
LD RefCospi(LD x) {
  if (std::isinf(x) || std::isnan(x)) return NAN;
  if (std::fabs(std::fmod(x, 1.0L)) == 0.5L) return 0.0L;
  return std::cos(kPi * std::fmod(x, 2.0L));
}
LD RefTanpi(LD x) {
  if (std::isinf(x) || std::isnan(x)) return NAN;
  LD c = RefCospi(x), s = RefSinpi(x);
  if (c == 0 || s == 0) return s / c;
  return std::tan(kPi * std::fmod(x, 1.0L));
}
LD RefFract(LD x) {
  if (std::isinf(x)) return std::copysign(0.0L, x);
  if (x == 0) return x;
  return std::min(x - std::floor(x), (LD)0x1.fffffep-1f);
}
LD RefSign(LD x) { return x > 0 ? 1.0L : (x < 0 ? -1.0L : x); }

const std::vector<Unary>& FullUnary() {
  static const std::vector<Unary> cases = {
      {"acos", kt_acos, [](LD x) { return std::acos(x); }, 4, -1, 1, true},
      {"acosh", kt_acosh, [](LD x) { return std::acosh(x); }, 4, 1, 100, true},
      {"acospi", kt_acospi, [](LD x) { return std::acos(x) / kPi; }, 5, -1, 1, true},
      {"asin", kt_asin, [](LD x) { return std::asin(x); }, 4, -1, 1, true},
      {"asinh", kt_asinh, [](LD x) { return std::asinh(x); }, 4, -20, 20, true},
      {"asinpi", kt_asinpi, [](LD x) { return std::asin(x) / kPi; }, 5, -1, 1, true},
      {"atan", kt_atan, [](LD x) { return std::atan(x); }, 5, -10, 10, true},
      {"atanh", kt_atanh, [](LD x) { return std::atanh(x); }, 5, -1, 1, true},
      {"atanpi", kt_atanpi, [](LD x) { return std::atan(x) / kPi; }, 5, -10, 10, true},
      {"cbrt", kt_cbrt, [](LD x) { return std::cbrt(x); }, 2, -100, 100, true},
      {"ceil", kt_ceil, [](LD x) { return std::ceil(x); }, 0, -100, 100, true},
      {"cos", kt_cos, [](LD x) { return std::cos(x); }, 4, -0x1p33f, 0x1p33f, false},
      {"cosh", kt_cosh, [](LD x) { return std::cosh(x); }, 4, -90, 90, true},
      {"cospi", kt_cospi, RefCospi, 4, -100, 100, true},
      {"erf", kt_erf, [](LD x) { return std::erf(x); }, 16, -5, 5, true},
      {"erfc", kt_erfc, [](LD x) { return std::erfc(x); }, 16, -5, 11, true},
      {"exp", kt_exp, [](LD x) { return std::exp(x); }, 3, -104, 89, true},
      {"exp10", kt_exp10, [](LD x) { return exp10l(x); }, 3, -46, 39, true},
      {"exp2", kt_exp2, [](LD x) { return std::exp2(x); }, 3, -150, 128, true},
      {"expm1", kt_expm1, [](LD x) { return std::expm1(x); }, 3, -20, 89, true},
      {"fabs", kt_fabs, [](LD x) { return std::fabs(x); }, 0, -10, 10, true},
      {"floor", kt_floor, [](LD x) { return std::floor(x); }, 0, -100, 100, true},
      {"fract", kt_fract, RefFract, 0.5, -100, 100, true},
      {"lgamma", kt_lgamma, [](LD x) { return std::lgamma(x); }, 16, 0, 40, false},
      {"lgamma_neg", kt_lgamma, [](LD x) { return std::lgamma(x); }, 64, -40, 0, false},
      {"log", kt_log, [](LD x) { return std::log(x); }, 3, 0, 10, true},
      {"log10", kt_log10, [](LD x) { return std::log10(x); }, 3, 0, 10, true},
      {"log1p", kt_log1p, [](LD x) { return std::log1p(x); }, 2, -1, 10, true},
      {"log2", kt_log2, [](LD x) { return std::log2(x); }, 3, 0, 10, true},
      {"logb", kt_logb, [](LD x) { return std::logb(x); }, 0, -10, 10, true},
      {"rint", kt_rint, [](LD x) { return std::nearbyint(x); }, 0, -100, 100, true},
      {"round", kt_round, [](LD x) { return std::round(x); }, 0, -100, 100, true},
      {"rsqrt", kt_rsqrt, [](LD x) { return 1.0L / std::sqrt(x); }, 2, 0, 100, true},
      {"sin", kt_sin, [](LD x) { return std::sin(x); }, 4, -0x1p33f, 0x1p33f, false},
      {"sinh", kt_sinh, [](LD x) { return std::sinh(x); }, 4, -90, 90, true},
      {"sinpi", kt_sinpi, RefSinpi, 4, -100, 100, true},
      {"sqrt", kt_sqrt, [](LD x) { return std::sqrt(x); }, 0.5, 0, 100, true},
      {"tan", kt_tan, [](LD x) { return std::tan(x); }, 5, -0x1p33f, 0x1p33f, false},
      {"tanh", kt_tanh, [](LD x) { return std::tanh(x); }, 5, -10, 10, true},
      {"tanpi", kt_tanpi, RefTanpi, 6, -100, 100, true},
      {"tgamma", kt_tgamma, [](LD x) { return std::tgamma(x); }, 16, -40, 36, true},
      {"trunc", kt_trunc, [](LD x) { return std::trunc(x); }, 0, -100, 100, true},
      {"rsFrac", kt_rsFrac, RefFract, 0.5, -100, 100, true},
      {"degrees", kt_degrees, [](LD x) { return x * (180.0L / kPi); }, 2, -100, 100, true},
      {"radians", kt_radians, [](LD x) { return x * (kPi / 180.0L); }, 2, -100, 100, true},
      {"sign", kt_sign, RefSign, 0, -10, 10, true},
  };
  return cases;
}

class FullUnaryTest : public ::testing::TestWithParam<Unary> {};
TEST_P(FullUnaryTest, WithinBound) { CheckUnary(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Rslib, FullUnaryTest, ::testing::ValuesIn(FullUnary()),
                         [](const auto& info) { return std::string(info.param.name); });

// native_* and half_*: relaxed bounds over the documented domains.
const std::vector<Unary>& RelaxedUnary() {
  static const std::vector<Unary> cases = {
      {"native_exp", kt_native_exp, [](LD x) { return std::exp(x); }, 256, -87, 88, false},
      {"native_exp2", kt_native_exp2, [](LD x) { return std::exp2(x); }, 256, -126, 127.9f, false},
      {"native_exp10", kt_native_exp10, [](LD x) { return exp10l(x); }, 256, -37, 38, false},
      {"native_log", kt_native_log, [](LD x) { return std::log(x); }, 256, 0x1p-126f, 0x1p127f, false},
      {"native_log2", kt_native_log2, [](LD x) { return std::log2(x); }, 256, 0x1p-126f, 0x1p127f, false},
      {"native_log10", kt_native_log10, [](LD x) { return std::log10(x); }, 256, 0x1p-126f, 0x1p127f, false},
      {"native_sin", kt_native_sin, [](LD x) { return std::sin(x); }, 256, -6400, 6400, false},
      {"native_cos", kt_native_cos, [](LD x) { return std::cos(x); }, 256, -6400, 6400, false},
      {"native_tan", kt_native_tan, [](LD x) { return std::tan(x); }, 256, -6400, 6400, false},
      {"native_atan", kt_native_atan, [](LD x) { return std::atan(x); }, 256, -1e30f, 1e30f, true},
      {"native_atanpi", kt_native_atanpi, [](LD x) { return std::atan(x) / kPi; }, 256, -1e30f, 1e30f, true},
      {"native_recip", kt_native_recip, [](LD x) { return 1.0L / x; }, 1, -100, 100, true},
      {"native_sqrt", kt_native_sqrt, [](LD x) { return std::sqrt(x); }, 1, 0, 100, true},
      {"native_rsqrt", kt_native_rsqrt, [](LD x) { return 1.0L / std::sqrt(x); }, 2, 0, 100, true},
      {"native_acos", kt_native_acos, [](LD x) { return std::acos(x); }, 4, -1, 1, true},
      {"native_asin", kt_native_asin, [](LD x) { return std::asin(x); }, 4, -1, 1, true},
      {"native_acosh", kt_native_acosh, [](LD x) { return std::acosh(x); }, 4, 1, 100, true},
      {"native_asinh", kt_native_asinh, [](LD x) { return std::asinh(x); }, 4, -20, 20, true},
      {"native_atanh", kt_native_atanh, [](LD x) { return std::atanh(x); }, 5, -1, 1, true},
      {"native_acospi", kt_native_acospi, [](LD x) { return std::acos(x) / kPi; }, 5, -1, 1, true},
      {"native_asinpi", kt_native_asinpi, [](LD x) { return std::asin(x) / kPi; }, 5, -1, 1, true},
      {"native_cbrt", kt_native_cbrt, [](LD x) { return std::cbrt(x); }, 2, -100, 100, true},
      {"native_cosh", kt_native_cosh, [](LD x) { return std::cosh(x); }, 4, -90, 90, true},
      {"native_sinh", kt_native_sinh, [](LD x) { return std::sinh(x); }, 4, -90, 90, true},
      {"native_tanh", kt_native_tanh, [](LD x) { return std::tanh(x); }, 5, -10, 10, true},
      {"native_expm1", kt_native_expm1, [](LD x) { return std::expm1(x); }, 3, -20, 89, true},
      {"native_log1p", kt_native_log1p, [](LD x) { return std::log1p(x); }, 2, -1, 10, true},
      {"native_cospi", kt_native_cospi, RefCospi, 4, -100, 100, true},
      {"native_sinpi", kt_native_sinpi, RefSinpi, 4, -100, 100, true},
      {"native_tanpi", kt_native_tanpi, RefTanpi, 6, -100, 100, true},
      {"half_exp", kt_half_exp, [](LD x) { return std::exp(x); }, 8192, -87, 88, false},
      {"half_exp2", kt_half_exp2, [](LD x) { return std::exp2(x); }, 8192, -126, 127.9f, false},
      {"half_exp10", kt_half_exp10, [](LD x) { return exp10l(x); }, 8192, -37, 38, false},
      {"half_log", kt_half_log, [](LD x) { return std::log(x); }, 8192, 0x1p-126f, 0x1p127f, false},
      {"half_log2", kt_half_log2, [](LD x) { return std::log2(x); }, 8192, 0x1p-126f, 0x1p127f, false},
      {"half_log10", kt_half_log10, [](LD x) { return std::log10(x); }, 8192, 0x1p-126f, 0x1p127f, false},
      {"half_recip", kt_half_recip, [](LD x) { return 1.0L / x; }, 8192, -100, 100, true},
      {"half_sqrt", kt_half_sqrt, [](LD x) { return std::sqrt(x); }, 8192, 0, 100, true},
      {"half_rsqrt", kt_half_rsqrt, [](LD x) { return 1.0L / std::sqrt(x); }, 8192, 0, 100, true},
      {"half_sin", kt_half_sin, [](LD x) { return std::sin(x); }, 8192, -65536, 65536, false},
      {"half_cos", kt_half_cos, [](LD x) { return std::cos(x); }, 8192, -65536, 65536, false},
      {"half_tan", kt_half_tan, [](LD x) { return std::tan(x); }, 8192, -65536, 65536, false},
  };
  return cases;
}
class RelaxedUnaryTest : public ::testing::TestWithParam<Unary> {};
TEST_P(RelaxedUnaryTest, WithinBound) { CheckUnary(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Rslib, RelaxedUnaryTest, ::testing::ValuesIn(RelaxedUnary()),
                         [](const auto& info) { return std::string(info.param.name); });

// ---- Two arguments: a grid over every binade and the special values ----
std::vector<float> GridValues() {
  std::vector<float> v = Samples(-4, 4, 40, 1u << 24, false);
  for (float c : {1.0f, 2.0f, 0.5f, -1.0f, -2.0f}) {  // around the integers that matter for pow & co.
    v.push_back(std::nextafter(c, kInf));
    v.push_back(std::nextafter(c, -kInf));
  }
  for (float x : {0.25f, 1.5f, 7.0f, 10.0f, 1e-3f, 1e3f, 0.999f, 1.001f, -7.0f, 33.0f, 127.0f})
    v.push_back(x);
  return v;
}

struct Binary {
  const char* name;
  float (*fn)(float, float);
  std::function<LD(LD, LD)> ref;
  double bound;
};

LD RefPowr(LD x, LD y) {
  if (x < 0 || std::isnan(x) || std::isnan(y)) return NAN;
  if (x == 0 && y == 0) return NAN;
  if (std::isinf(x) && y == 0) return NAN;
  if (x == 1 && std::isinf(y)) return NAN;
  return std::pow(std::fabs((double)x), (double)y);  // powr(-0, y) is powr(+0, y)
}

void CheckBinary(const Binary& b) {
  std::vector<float> grid = GridValues();
  double worst = 0.0;
  int failures = 0;
  for (float x : grid) {
    for (float y : grid) {
      float got = b.fn(x, y);
      double err = UlpError(got, b.ref((LD)x, (LD)y));
      worst = std::max(worst, err);
      if (err > b.bound && failures++ < 5) {
        ADD_FAILURE() << b.name << "(" << std::hexfloat << x << ", " << y << ") = " << got << ", want "
                      << (double)b.ref((LD)x, (LD)y) << std::defaultfloat << " (" << err << " ulp)";
      }
    }
  }
  MaxUlpTable()[b.name] = std::max(MaxUlpTable()[b.name], worst);
  EXPECT_LE(worst, b.bound) << b.name;
}

const std::vector<Binary>& BinaryCases() {
  static const std::vector<Binary> cases = {
      {"atan2", kt_atan2, [](LD y, LD x) { return std::atan2(y, x); }, 6},
      {"atan2pi", kt_atan2pi, [](LD y, LD x) { return std::atan2(y, x) / kPi; }, 6},
      {"copysign", kt_copysign, [](LD x, LD y) { return std::copysign(x, y); }, 0},
      {"fdim", kt_fdim, [](LD x, LD y) { return (LD)std::fdim((float)x, (float)y); }, 0},
      {"fmod", kt_fmod, [](LD x, LD y) { return std::fmod(x, y); }, 0},
      {"hypot", kt_hypot, [](LD x, LD y) { return std::hypot(x, y); }, 4},
      {"nextafter", kt_nextafter, [](LD x, LD y) { return (LD)std::nextafter((float)x, (float)y); }, 0},
      // double pow: glibc's powl mishandles y = -2^63 (pow(-inf, -0x1p63) gives inf).
      {"pow", kt_pow, [](LD x, LD y) { return (LD)std::pow((double)x, (double)y); }, 16},
      {"powr", kt_powr, RefPowr, 16},
      {"remainder", kt_remainder, [](LD x, LD y) { return std::remainder(x, y); }, 0},
      {"native_divide", kt_native_divide, [](LD x, LD y) { return x / y; }, 1},
      {"native_atan2", kt_native_atan2, [](LD y, LD x) { return std::atan2(y, x); }, 6},
      {"native_hypot", kt_native_hypot, [](LD x, LD y) { return std::hypot(x, y); }, 4},
  };
  return cases;
}
class BinaryTest : public ::testing::TestWithParam<Binary> {};
TEST_P(BinaryTest, WithinBound) { CheckBinary(GetParam()); }  // native_powr: NativePowrOnPositiveNormals
INSTANTIATE_TEST_SUITE_P(Rslib, BinaryTest, ::testing::ValuesIn(BinaryCases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(RslibBinary, NativePowrOnPositiveNormals) {
  double worst = 0;
  for (float x = 0x1p-20f; x < 0x1p20f; x *= 1.37f) {
    for (float y = -8.0f; y <= 8.0f; y += 0.173f) {
      LD want = std::pow((LD)x, (LD)y);
      if (want > 0x1p126L || want < 0x1p-125L) continue;
      worst = std::max(worst, UlpError(kt_native_powr(x, y), want));
    }
  }
  MaxUlpTable()["native_powr"] = worst;
  EXPECT_LE(worst, 8192.0);
}

TEST(RslibBinary, FminFmaxTreatNaNAsMissing) {
  std::vector<float> grid = GridValues();
  for (float x : grid) {
    for (float y : grid) {
      float lo = kt_fmin(x, y), hi = kt_fmax(x, y);
      if (std::isnan(x) && std::isnan(y)) {
        EXPECT_TRUE(std::isnan(lo) && std::isnan(hi));
      } else if (std::isnan(x) || std::isnan(y)) {
        float other = std::isnan(x) ? y : x;
        EXPECT_TRUE(SameFloat(lo, other) && SameFloat(hi, other)) << x << " " << y;
      } else {
        EXPECT_EQ(lo, std::fmin(x, y));
        EXPECT_EQ(hi, std::fmax(x, y));
      }
    }
  }
}

TEST(RslibExact, FmaIsCorrectlyRounded) {
  std::vector<float> v = Samples(-4, 4, 30, 1u << 25);
  uint32_t state = 12345;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return v[state % v.size()];
  };
  for (int i = 0; i < 300000; ++i) {
    float a = next(), b = next(), c = next();
    if (i % 3 == 0) c = -a * b;  // cancellation: the case that needs the exact product
    ASSERT_TRUE(SameFloat(kt_fma(a, b, c), std::fmaf(a, b, c)))
        << std::hexfloat << "fma(" << a << ", " << b << ", " << c << ")";
  }
  // Ties at the float rounding point, where a double-rounded a*b+c goes wrong.
  EXPECT_EQ(kt_fma(1.0f + 0x1p-23f, 1.0f + 0x1p-23f, -1.0f),
            std::fmaf(1.0f + 0x1p-23f, 1.0f + 0x1p-23f, -1.0f));
  EXPECT_EQ(kt_fma(0x1.000002p0f, 0x1.fffffcp-1f, 0x1p-50f),
            std::fmaf(0x1.000002p0f, 0x1.fffffcp-1f, 0x1p-50f));
  EXPECT_EQ(kt_mad(2.0f, 3.0f, 4.0f), 10.0f);
}

TEST(RslibExact, RemquoMatchesLibm) {
  std::vector<float> grid = GridValues();
  for (float x : grid) {
    for (float y : grid) {
      int q = 0, want_q = 0;
      float r = kt_remquo(x, y, &q);
      float want = std::remquof(x, y, &want_q);
      ASSERT_TRUE(SameFloat(r, want))
          << std::hexfloat << "remquo(" << x << ", " << y << ") = " << r << " want " << want;
      if (!std::isnan(want)) {
        // glibc guarantees 3 quotient bits (C's minimum); OpenCL asks for 7, checked exactly below.
        ASSERT_EQ(q & 7, want_q & 7) << std::hexfloat << x << " " << y;
        if ((q & 127) != 0 && want_q != 0) {
          ASSERT_EQ(q < 0, want_q < 0) << std::hexfloat << x << " " << y;
        }
        LD ratio = std::fabs((LD)x / (LD)y);
        if (std::isfinite(y) && ratio < 0x1p30L) {
          long long exact = std::llround(((LD)x - (LD)want) / (LD)y);  // exact: |q| < 2^30
          ASSERT_EQ(std::abs(q), std::llabs(exact) & 127) << std::hexfloat << x << " " << y;
        }
      }
    }
  }
}

TEST(RslibExact, IntegerArgumentFunctions) {
  for (float x : Samples(-4, 4, 1000, 1u << 20)) {
    for (int n : {-300, -200, -150, -127, -1, 0, 1, 2, 23, 127, 150, 200, 300, 1 << 30, -(1 << 30)}) {
      ASSERT_TRUE(SameFloat(kt_ldexp(x, n), std::ldexp(x, n))) << std::hexfloat << x << " " << n;
    }
    int e = 0, want_e = 0;
    float m = kt_frexp(x, &e);
    float want_m = std::frexp(x, &want_e);
    ASSERT_TRUE(SameFloat(m, want_m)) << std::hexfloat << x;
    if (std::isfinite(x)) {
      EXPECT_EQ(e, want_e) << x;
    }
    if (!std::isnan(x) && x != 0) {
      EXPECT_EQ(kt_ilogb(x), std::ilogb(x)) << std::hexfloat << x;
    }
    float ip = 0, want_ip = 0;
    ASSERT_TRUE(SameFloat(kt_modf(x, &ip), std::modf(x, &want_ip))) << std::hexfloat << x;
    ASSERT_TRUE(SameFloat(ip, want_ip)) << std::hexfloat << x;
    float fl = 0;
    float fr = kt_fract2(x, &fl);
    if (!std::isnan(x)) {
      EXPECT_TRUE(SameFloat(fl, std::floor(x))) << x;
      EXPECT_TRUE(SameFloat(fr, kt_fract(x))) << x;
    }
  }
  EXPECT_EQ(kt_ilogb(0.0f), std::numeric_limits<int>::min());
  EXPECT_EQ(kt_ilogb(kNaN), std::numeric_limits<int>::max());
  EXPECT_EQ(kt_ilogb(kInf), std::numeric_limits<int>::max());
  EXPECT_EQ(Bits(kt_nan(5)), 0x7fc00005u);
}

TEST(RslibPowers, PownAndRootn) {
  double worst_pown = 0, worst_rootn = 0;
  for (float x : Samples(-3, 3, 2000, 1u << 22)) {
    for (int n : {-7, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 8, 17, 64, 127, 1000}) {
      LD want = n == 0 ? 1.0L : std::pow((LD)x, (LD)n);
      worst_pown = std::max(worst_pown, UlpError(kt_pown(x, n), want));
      LD want_root;
      if (n == 0 || std::isnan(x) || (x < 0 && n % 2 == 0)) {
        want_root = NAN;
      } else if (std::signbit(x) && (n & 1)) {
        want_root = -std::pow(-(LD)x, 1.0L / n);
      } else {
        want_root = std::pow((LD)x, 1.0L / n);
      }
      double err = UlpError(kt_rootn(x, n), want_root);
      worst_rootn = std::max(worst_rootn, err);
      ASSERT_LE(err, 16) << std::hexfloat << "rootn(" << x << ", " << n << ")";
    }
  }
  MaxUlpTable()["pown"] = worst_pown;
  MaxUlpTable()["rootn"] = worst_rootn;
  EXPECT_LE(worst_pown, 16);
  // pown keeps the parity of n exactly, even where (float)n would not.
  EXPECT_EQ(kt_pown(-1.0f, (1 << 24) + 1), -1.0f);
}

TEST(RslibSpecial, SincosAndLgammaSign) {
  for (float x : Samples(-100, 100, 5000, 1u << 20)) {
    float c = 0;
    float s = kt_sincos(x, &c);
    ASSERT_TRUE(SameFloat(s, kt_sin(x)) && SameFloat(c, kt_cos(x))) << x;
    int sign = 0;
    float lg = kt_lgamma_r(x, &sign);
    ASSERT_TRUE(SameFloat(lg, kt_lgamma(x))) << x;
    if (std::isfinite(x) && x != std::floor(x)) {
      EXPECT_EQ(sign, std::tgamma((double)x) < 0 ? -1 : 1) << x;
    }
  }
}

TEST(RslibSpecial, TrigBeyondTheReductionRangeStaysInRange) {
  // Documented limit: sin/cos/tan are accurate for |x| < 2^33; beyond, sin and cos stay in [-1, 1] and the
  // special values are still right.
  for (float x : Samples(-1, 1, 10, 1u << 16, false)) {
    if (!(std::fabs(x) >= 0x1p33f) || std::isinf(x) || std::isnan(x)) continue;
    ASSERT_LE(std::fabs(kt_sin(x)), 1.0f) << x;
    ASSERT_LE(std::fabs(kt_cos(x)), 1.0f) << x;
    ASSERT_FALSE(std::isnan(kt_tan(x))) << x;
  }
  for (float inf : {kInf, -kInf, kNaN}) {
    EXPECT_TRUE(std::isnan(kt_sin(inf)));
    EXPECT_TRUE(std::isnan(kt_cos(inf)));
    EXPECT_TRUE(std::isnan(kt_tan(inf)));
  }
}

TEST(RslibSpecial, DocumentedValues) {
  EXPECT_EQ(kt_pow(-8.0f, 1.0f / 3.0f) != kt_pow(-8.0f, 1.0f / 3.0f), true);  // NaN
  EXPECT_EQ(kt_pow(kNaN, 0.0f), 1.0f);
  EXPECT_EQ(kt_pow(1.0f, kNaN), 1.0f);
  EXPECT_EQ(kt_pow(-1.0f, kInf), 1.0f);
  EXPECT_TRUE(std::isnan(kt_powr(-1.0f, 2.0f)));
  EXPECT_TRUE(std::isnan(kt_powr(0.0f, 0.0f)));
  EXPECT_EQ(kt_hypot(kInf, kNaN), kInf);
  EXPECT_EQ(kt_sinpi(-2.0f), 0.0f);
  EXPECT_TRUE(std::signbit(kt_sinpi(-2.0f)));
  EXPECT_EQ(kt_tanpi(0.5f), kInf);
  EXPECT_EQ(kt_tanpi(1.5f), -kInf);
  EXPECT_EQ(kt_atan2(0.0f, -0.0f), (float)kPi);
  EXPECT_EQ(kt_atan2(-0.0f, -1.0f), -(float)kPi);
  EXPECT_EQ(kt_atan2(kInf, kInf), (float)(kPi / 4));
  EXPECT_TRUE(std::isnan(kt_tgamma(-3.0f)));
  EXPECT_EQ(kt_tgamma(-0.0f), -kInf);
  EXPECT_EQ(kt_lgamma(-3.0f), kInf);
  EXPECT_EQ(kt_rsqrt(-0.0f), -kInf);
  EXPECT_EQ(kt_exp(-0x1.9fe368p6f), 0x1p-149f);  // e^-103.97 rounds to the smallest denormal
}

// ---- Vector overloads equal the scalar function lane by lane; half overloads equal the float one rounded
// ----
using VecFn1 = void (*)(const float*, float*);
using VecFn2 = void (*)(const float*, const float*, float*);

struct VecCase1 {
  const char* name;
  float (*fn)(float);
  VecFn1 vec;
  float (*half)(float);
};
struct VecCase2 {
  const char* name;
  float (*fn)(float, float);
  VecFn2 vec;
  float (*half)(float, float);
};

const std::vector<VecCase1>& VecCases1() {
#define KT_F1N(name) {#name, kt_##name, kt_##name##_v, nullptr},
#define KT_F1(name) {#name, kt_##name, kt_##name##_v, kt_##name##_h},
#define KT_F2N(name)
#define KT_F2(name)
#define KT_FI(name)
#define KT_FP(name, T, kt_name)
  static const std::vector<VecCase1> cases = {
#include "tests/rslib/kt_functions.inc"
  };
#undef KT_F1N
#undef KT_F1
  return cases;
}
const std::vector<VecCase2>& VecCases2() {
#define KT_F1N(name)
#define KT_F1(name)
#undef KT_F2N
#undef KT_F2
#define KT_F2N(name) {#name, kt_##name, kt_##name##_v, nullptr},
#define KT_F2(name) {#name, kt_##name, kt_##name##_v, kt_##name##_h},
  static const std::vector<VecCase2> cases = {
#include "tests/rslib/kt_functions.inc"
  };
#undef KT_F1N
#undef KT_F1
#undef KT_F2N
#undef KT_F2
#undef KT_FI
#undef KT_FP
  return cases;
}

TEST(RslibVector, UnaryLanesMatchScalar) {
  std::vector<float> s = Samples(-10, 10, 900, 1u << 21);
  for (const VecCase1& c : VecCases1()) {
    for (size_t i = 0; i + 9 <= s.size(); i += 9) {
      float out[9];
      c.vec(&s[i], out);
      for (int k = 0; k < 9; ++k) {
        ASSERT_TRUE(SameFloat(out[k], c.fn(s[i + k]))) << c.name << " lane " << k << " x=" << s[i + k];
      }
    }
    if (c.half) {
      for (float x : s) {
        float h = kt_to_half(x);
        ASSERT_TRUE(SameFloat(c.half(h), kt_to_half(c.fn(h)))) << c.name << "(half " << h << ")";
      }
    }
  }
}

TEST(RslibVector, BinaryLanesMatchScalar) {
  std::vector<float> s = Samples(-10, 10, 900, 1u << 21);
  for (const VecCase2& c : VecCases2()) {
    for (size_t i = 0; i + 18 <= s.size(); i += 9) {
      float out[9];
      c.vec(&s[i], &s[i + 9], out);
      for (int k = 0; k < 9; ++k) {
        ASSERT_TRUE(SameFloat(out[k], c.fn(s[i + k], s[i + 9 + k]))) << c.name << " lane " << k;
      }
    }
    if (c.half) {
      for (size_t i = 0; i + 1 < s.size(); ++i) {
        float a = kt_to_half(s[i]), b = kt_to_half(s[i + 1]);
        ASSERT_TRUE(SameFloat(c.half(a, b), kt_to_half(c.fn(a, b))))
            << c.name << "(half " << a << ", " << b << ")";
      }
    }
  }
}

TEST(RslibVector, OtherShapesMatchScalar) {
  std::vector<float> s = Samples(-10, 10, 300, 1u << 22);
  for (size_t i = 0; i + 27 <= s.size(); i += 9) {
    float out[9];
    int n[9], iout[9], want_i;
    for (int k = 0; k < 9; ++k) n[k] = (int)(i + k) % 41 - 20;
    kt_ldexp_v(&s[i], n, out);
    for (int k = 0; k < 9; ++k) ASSERT_TRUE(SameFloat(out[k], kt_ldexp(s[i + k], n[k])));
    kt_pown_v(&s[i], n, out);
    for (int k = 0; k < 9; ++k) ASSERT_TRUE(SameFloat(out[k], kt_pown(s[i + k], n[k])));
    kt_rootn_v(&s[i], n, out);
    for (int k = 0; k < 9; ++k) ASSERT_TRUE(SameFloat(out[k], kt_rootn(s[i + k], n[k])));
    kt_fma_v(&s[i], &s[i + 9], &s[i + 18], out);
    for (int k = 0; k < 9; ++k) ASSERT_TRUE(SameFloat(out[k], kt_fma(s[i + k], s[i + 9 + k], s[i + 18 + k])));
    kt_remquo_v(&s[i], &s[i + 9], out, iout);
    for (int k = 0; k < 9; ++k) {
      ASSERT_TRUE(SameFloat(out[k], kt_remquo(s[i + k], s[i + 9 + k], &want_i)));
      ASSERT_EQ(iout[k], want_i);
    }
    float fout[9];
    kt_sincos_v(&s[i], out, fout);
    for (int k = 0; k < 9; ++k) {
      float c;
      ASSERT_TRUE(SameFloat(out[k], kt_sincos(s[i + k], &c)));
      ASSERT_TRUE(SameFloat(fout[k], c));
    }
    kt_frexp_v(&s[i], out, iout);
    for (int k = 0; k < 9; ++k) {
      ASSERT_TRUE(SameFloat(out[k], kt_frexp(s[i + k], &want_i)));
      ASSERT_EQ(iout[k], want_i);
    }
  }
}

// ---- Geometry, common and integer functions, conversions, colors, random numbers, matrices ----
TEST(RslibGeometry, LengthNormalizeDotCross) {
  const float v[4] = {3.0f, -4.0f, 12.0f, 84.0f};
  EXPECT_EQ(kt_length(v, 1), 3.0f);
  EXPECT_EQ(kt_length(v, 2), 5.0f);
  EXPECT_EQ(kt_length(v, 3), 13.0f);
  EXPECT_EQ(kt_length(v, 4), 85.0f);
  EXPECT_FLOAT_EQ(kt_fast_length(v, 4), 85.0f);
  const float big[4] = {3e30f, 4e30f, 0, 0};  // no overflow in the sum of squares
  EXPECT_FLOAT_EQ(kt_length(big, 2), 5e30f);
  const float tiny[4] = {3e-30f, 4e-30f, 0, 0};
  EXPECT_FLOAT_EQ(kt_length(tiny, 2), 5e-30f);
  const float o[4] = {0, 0, 0, 0};
  EXPECT_EQ(kt_distance4(v, o), 85.0f);
  float n[4];
  kt_normalize(v, 3, n);
  EXPECT_FLOAT_EQ(n[0], 3.0f / 13.0f);
  EXPECT_FLOAT_EQ(n[2], 12.0f / 13.0f);
  kt_normalize(o, 4, n);
  EXPECT_EQ(n[0], 0.0f);
  const float inf_v[4] = {kInf, 1.0f, 0, 0};
  kt_normalize(inf_v, 2, n);
  EXPECT_EQ(n[0], 1.0f);
  EXPECT_EQ(n[1], 0.0f);
  kt_fast_normalize3(v, n);
  EXPECT_NEAR(n[1], -4.0f / 13.0f, 1e-6f);
  const float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
  EXPECT_EQ(kt_dot4(a, b), 70.0f);
  float c[3];
  kt_cross3(a, b, c);
  EXPECT_EQ(c[0], 2 * 7 - 3 * 6.0f);
  EXPECT_EQ(c[1], 3 * 5 - 1 * 7.0f);
  EXPECT_EQ(c[2], 1 * 6 - 2 * 5.0f);
}

TEST(RslibGeometry, LengthAndNormalizeUlp) {
  std::vector<float> s = Samples(-100, 100, 2000, 1u << 22, false);
  std::vector<float> finite;
  for (float x : s) {
    if (std::isfinite(x)) finite.push_back(x);
  }
  double worst_len = 0, worst_norm = 0;
  uint32_t state = 99;
  for (int i = 0; i < 200000; ++i) {
    float v[4];
    int n = 1 + i % 4;
    for (int k = 0; k < 4; ++k) {
      state = state * 1664525u + 1013904223u;
      v[k] = k < n ? finite[state % finite.size()] : 0.0f;
    }
    LD ss = 0;
    for (int k = 0; k < n; ++k) ss += (LD)v[k] * v[k];
    LD len = std::sqrt(ss);
    worst_len = std::max(worst_len, UlpError(kt_length(v, n), len));
    if (ss == 0 || n == 1) continue;
    float out[4];
    kt_normalize(v, n, out);
    for (int k = 0; k < n; ++k) worst_norm = std::max(worst_norm, UlpError(out[k], v[k] / len));
  }
  MaxUlpTable()["length"] = worst_len;
  MaxUlpTable()["normalize"] = worst_norm;
  EXPECT_LE(worst_len, 3.0);   // OpenCL: 3 + 0.5 * (0.5n + 0.5(n - 1)) ulp
  EXPECT_LE(worst_norm, 2.5);  // OpenCL: 2.5 + 0.5n + 0.5(n - 1) ulp
}

TEST(RslibCommon, ClampMixStepMinMax) {
  EXPECT_EQ(kt_clamp(5.0f, 0.0f, 1.0f), 1.0f);
  EXPECT_EQ(kt_clamp(-5.0f, 0.0f, 1.0f), 0.0f);
  EXPECT_EQ(kt_clamp(0.25f, 0.0f, 1.0f), 0.25f);
  float v[4] = {-1, 0.5f, 2, 0}, out[4];
  kt_clamp4s(v, 0.0f, 1.0f, out);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 0.5f);
  EXPECT_EQ(out[2], 1.0f);
  EXPECT_EQ(kt_mix(2.0f, 4.0f, 0.25f), 2.5f);
  EXPECT_EQ(kt_step(1.0f, 0.5f), 0.0f);
  EXPECT_EQ(kt_step(1.0f, 1.0f), 1.0f);
  float e[4] = {1, 1, 1, 1}, x[4] = {0, 1, 2, -3};
  kt_step4(e, x, out);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 1.0f);
  EXPECT_EQ(out[2], 1.0f);
  EXPECT_EQ(out[3], 0.0f);
  EXPECT_EQ(kt_smoothstep(0.0f, 1.0f, 0.5f), 0.5f);
  EXPECT_EQ(kt_smoothstep(0.0f, 1.0f, 2.0f), 1.0f);
  EXPECT_EQ(kt_smoothstep(0.0f, 1.0f, -2.0f), 0.0f);
  EXPECT_EQ(kt_min(1.0f, 2.0f), 1.0f);
  EXPECT_EQ(kt_max(1.0f, 2.0f), 2.0f);
  EXPECT_EQ(kt_min_i(-3, 2), -3);
  EXPECT_EQ(kt_max_u(3u, 0xffffffffu), 0xffffffffu);
  EXPECT_EQ(kt_abs_i(std::numeric_limits<int>::min()), 0x80000000u);
  EXPECT_EQ(kt_abs_i(-7), 7u);
  const signed char c4[4] = {-128, -1, 0, 127};
  unsigned char a4[4];
  kt_abs_c4(c4, a4);
  EXPECT_EQ(a4[0], 128);
  EXPECT_EQ(a4[1], 1);
  EXPECT_EQ(a4[3], 127);
  const short s4[4] = {-100, 5, 100, 50};
  short o4[4];
  kt_clamp_s4(s4, 0, 60, o4);
  EXPECT_EQ(o4[0], 0);
  EXPECT_EQ(o4[1], 5);
  EXPECT_EQ(o4[2], 60);
  EXPECT_EQ(kt_rsClamp(10, 0, 5), 5);
  EXPECT_EQ(kt_rsClamp(-10, 0, 5), 0);
  EXPECT_EQ(kt_rsClamp_uc(200, 10, 100), 100);
}

TEST(RslibConvert, VectorConversions) {
  const unsigned char u[4] = {0, 1, 128, 255};
  float f[4];
  kt_convert_float4_uchar4(u, f);
  EXPECT_EQ(f[3], 255.0f);
  EXPECT_EQ(f[2], 128.0f);
  const float g[3] = {-2.7f, 2.7f, 1e6f};
  int i[3];
  kt_convert_int3_float3(g, i);
  EXPECT_EQ(i[0], -2);
  EXPECT_EQ(i[1], 2);
  EXPECT_EQ(i[2], 1000000);
  const int w[2] = {65535, 65536 + 7};
  unsigned short us[2];
  kt_convert_ushort2_int2(w, us);
  EXPECT_EQ(us[0], 65535);
  EXPECT_EQ(us[1], 7);  // truncating, as a C cast
}

TEST(RslibColor, PackUnpack) {
  const float c[4] = {0.0f, 0.5f, 1.0f, 2.0f};
  unsigned char p[4];
  kt_pack_color(c, p);
  EXPECT_EQ(p[0], 0);
  EXPECT_EQ(p[1], 128);
  EXPECT_EQ(p[2], 255);
  EXPECT_EQ(p[3], 255);  // clamped
  kt_pack_color3(-1.0f, 0.2f, 1.0f, p);
  EXPECT_EQ(p[0], 0);
  EXPECT_EQ(p[1], 51);
  EXPECT_EQ(p[3], 255);  // alpha 1
  const unsigned char u[4] = {0, 51, 255, 128};
  float f[4];
  kt_unpack_color(u, f);
  EXPECT_EQ(f[0], 0.0f);
  EXPECT_FLOAT_EQ(f[1], 0.2f);
  EXPECT_EQ(f[2], 1.0f);
  for (int k = 0; k < 256; ++k) {  // round trip is exact for every byte
    unsigned char b[4] = {(unsigned char)k, 0, 0, 0}, back[4];
    kt_unpack_color(b, f);
    kt_pack_color(f, back);
    ASSERT_EQ(back[0], k);
  }
}

TEST(RslibRand, RangesAndSpread) {
  int hist[10] = {};
  for (int i = 0; i < 100000; ++i) {
    int r = kt_rand_i(10);
    ASSERT_GE(r, 0);
    ASSERT_LT(r, 10);
    ++hist[r];
    int s = kt_rand_ii(-5, 5);
    ASSERT_GE(s, -5);
    ASSERT_LT(s, 5);
    float f = kt_rand_f(2.0f);
    ASSERT_GE(f, 0.0f);
    ASSERT_LT(f, 2.0f);
    float g = kt_rand_ff(-1.0f, 1.0f);
    ASSERT_GE(g, -1.0f);
    ASSERT_LT(g, 1.0f);
  }
  for (int h : hist) EXPECT_NEAR(h, 10000, 600);
  EXPECT_EQ(kt_rand_i(0), 0);
  EXPECT_EQ(kt_rand_i(-4), 0);
  EXPECT_EQ(kt_rand_ii(3, 3), 3);
}

TEST(RslibMatrix, TransformsInverseAndQuaternions) {
  float m[16], t[16], r[16], prod[16];
  kt_matrix_load_rotate(r, 90.0f, 0, 0, 2);  // about z (axis normalized)
  const float x[4] = {1, 0, 0, 1};
  float out[4];
  kt_matrix_multiply_vec(r, x, out);
  EXPECT_NEAR(out[0], 0.0f, 1e-6f);
  EXPECT_NEAR(out[1], 1.0f, 1e-6f);
  kt_matrix_load_translate(t, 1, 2, 3);
  const float p3[3] = {1, 1, 1};
  kt_matrix_multiply_vec3(t, p3, out);
  EXPECT_EQ(out[0], 2.0f);
  EXPECT_EQ(out[2], 4.0f);
  EXPECT_EQ(out[3], 1.0f);
  EXPECT_EQ(kt_matrix_get(t, 3, 1), 2.0f);  // column 3, row 1
  kt_matrix_load_multiply(m, t, r);         // m = T * R
  std::memcpy(prod, m, sizeof(m));
  kt_matrix_scale(m, 2, 2, 2);  // m = T * R * S
  ASSERT_TRUE(kt_matrix_inverse(m));
  kt_matrix_multiply_vec(m, x, out);  // (T R S)^-1 x
  float back[4];
  float trs[16];
  std::memcpy(trs, prod, sizeof(prod));
  kt_matrix_scale(trs, 2, 2, 2);
  kt_matrix_multiply_vec(trs, out, back);
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(back[k], x[k], 1e-5f);
  float singular[16] = {};
  EXPECT_FALSE(kt_matrix_inverse(singular));
  float tr[16];
  std::memcpy(tr, t, sizeof(t));
  kt_matrix_transpose(tr);
  EXPECT_EQ(kt_matrix_get(tr, 1, 3), 2.0f);
  const float m3[9] = {1, 0, 0, 0, 2, 0, 0, 0, 3};
  const float v3[3] = {1, 1, 1};
  float o3[3];
  kt_matrix3_multiply_vec(m3, v3, o3);
  EXPECT_EQ(o3[1], 2.0f);
  EXPECT_EQ(o3[2], 3.0f);
  // A quaternion rotation gives the same matrix as rsMatrixLoadRotate.
  float qm[16];
  kt_quaternion_rotate_matrix(90.0f, 0, 0, 1, qm);
  for (int k = 0; k < 16; ++k) EXPECT_NEAR(qm[k], r[k], 1e-6f) << k;
  const float i_q[4] = {1, 0, 0, 0}, j_q[4] = {0, 1, 0, 0};
  float k_q[4];
  kt_quaternion_multiply(i_q, j_q, k_q);  // i * j = k
  EXPECT_EQ(k_q[2], 1.0f);
  EXPECT_EQ(k_q[3], 0.0f);
  const float q0[4] = {0, 0, 0, 1}, q1[4] = {0, 0, 1, 0};
  float mid[4];
  kt_quaternion_slerp(q0, q1, 0.5f, mid);
  EXPECT_NEAR(mid[2], std::sqrt(0.5f), 1e-6f);
  EXPECT_NEAR(mid[3], std::sqrt(0.5f), 1e-6f);
}

TEST(RslibEmbed, EmbeddedBitcodeIsTheLinkedLibrary) {
  ASSERT_GT(kRslibBitcodeSize, 4096u);
  EXPECT_EQ(kRslibBitcode[0], 'B');
  EXPECT_EQ(kRslibBitcode[1], 'C');
  EXPECT_EQ(kRslibBitcode[2], 0xC0);
  EXPECT_EQ(kRslibBitcode[3], 0xDE);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(kRslibBitcode) % 16, 0u);
  std::ifstream file(KILN_BINARY_DIR "/compiler/rslib/kiln_rslib.bc", std::ios::binary);
  ASSERT_TRUE(file) << "kiln_rslib.bc not built";
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.size(), kRslibBitcodeSize);
  EXPECT_EQ(std::memcmp(bytes.data(), kRslibBitcode, bytes.size()), 0);
}

}  // namespace
}  // namespace kiln
