/* Shared helpers of Kiln's kernel math library (compiler/rslib). Not part of the kernel language.
 *
 * Rules every implementation here follows, because the bodies are inlined into kernels' x-loops and must
 * vectorize there:
 *  - no calls to libm or anything external, no LLVM intrinsic that can lower to a libm call (floor, fma, ...
 *    are done with integer/bit arithmetic or exact float tricks; only sqrt, fabs, minnum/maxnum and fmuladd
 *    intrinsics are used, which always lower to instructions);
 *  - no data-dependent branches or loops in the hot functions: both sides are computed and selected;
 *  - no table lookups (they would become gathers);
 *  - no float-to-int conversion of a value that may be out of range (poison in LLVM, UB under UBSan).
 * Polynomial coefficients come from tools/fit_poly.py, pi splits from tools/pi_splits.py. */
#ifndef KILN_RSLIB_INTERNAL_H_
#define KILN_RSLIB_INTERNAL_H_

#define KILN_HALF_MATH 1
#include "rs_math.rsh"

/* Exported definitions: always inlined into the caller once linked into a kernel module. */
#define KILN_DEF __attribute__((overloadable, always_inline))
/* Exported definitions that are not worth inlining (matrix inverse, random numbers). */
#define KILN_DEF_CALL __attribute__((overloadable))
#define KILN_HELPER static inline __attribute__((always_inline))

KILN_HELPER uint kiln_f2u(float x) { return __builtin_bit_cast(uint, x); }
KILN_HELPER float kiln_u2f(uint u) { return __builtin_bit_cast(float, u); }
KILN_HELPER ulong kiln_d2u(double x) { return __builtin_bit_cast(ulong, x); }
KILN_HELPER double kiln_u2d(ulong u) { return __builtin_bit_cast(double, u); }

KILN_HELPER float kiln_fabsf(float x) { return kiln_u2f(kiln_f2u(x) & 0x7fffffffu); }
KILN_HELPER double kiln_fabsd(double x) { return kiln_u2d(kiln_d2u(x) & 0x7fffffffffffffffull); }
KILN_HELPER float kiln_copysignf(float mag, float sgn) {
  return kiln_u2f((kiln_f2u(mag) & 0x7fffffffu) | (kiln_f2u(sgn) & 0x80000000u));
}
KILN_HELPER bool kiln_isnanf(float x) { return x != x; }
KILN_HELPER bool kiln_isinff(float x) { return kiln_fabsf(x) == __builtin_inff(); }
KILN_HELPER float kiln_nanf(void) { return __builtin_nanf(""); }

/* Round to nearest even; exact for every float (|x| >= 2^23 is already an integer). */
KILN_HELPER float kiln_rintf(float x) {
  float a = kiln_fabsf(x);
  float r = (a + 0x1p23f) - 0x1p23f;
  r = a < 0x1p23f ? r : a;
  return kiln_copysignf(r, x);
}
KILN_HELPER float kiln_floorf(float x) {
  float r = kiln_rintf(x);
  return r > x ? r - 1.0f : r; /* keeps -0 and NaN */
}

/* 2^n as a float for n in [-126, 127]. */
KILN_HELPER float kiln_pow2f(int n) { return kiln_u2f(((uint)n + 127u) << 23); }
/* 2^n as a double for n in [-1022, 1023]. */
KILN_HELPER double kiln_pow2d(long n) { return kiln_u2d(((ulong)n + 1023u) << 52); }

/* Clamp that keeps NaN (both comparisons are false for NaN). */
KILN_HELPER float kiln_clampf_nan(float x, float lo, float hi) {
  x = x < lo ? lo : x;
  return x > hi ? hi : x;
}
KILN_HELPER double kiln_clampd_nan(double x, double lo, double hi) {
  x = x < lo ? lo : x;
  return x > hi ? hi : x;
}

/* ---- Double-precision kernels for the float functions that are computed in double. Relative error about
 * 1e-15 (far below what a float result needs); valid for the documented ranges only. ---- */

/* e^x: NaN -> NaN, x <= -800 -> 0, x >= 800 -> inf. */
KILN_HELPER double kiln_exp_d(double x) {
  x = kiln_clampd_nan(x, -800.0, 800.0);
  double t = x * 0x1.71547652b82fep+0 + 0x1.8p52; /* x*log2(e) rounded to an integer, in the low bits */
  double n = t - 0x1.8p52;
  long ni = (long)(kiln_d2u(t) - kiln_d2u(0x1.8p52));
  double r =
      (x - n * 0x1.62e42fee00000p-1) - n * 0x1.a39ef35793c76p-33; /* ln2 split: hi exact for |n|<2^20 */
  double p = 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = 1.0 + (r + r * r * p);
  long n1 = ni >> 1; /* |ni| <= 1155, so both halves are valid exponents */
  return p * kiln_pow2d(n1) * kiln_pow2d(ni - n1);
}

/* e^x - 1 with full relative accuracy near 0. */
KILN_HELPER double kiln_expm1_d(double x) {
  double p = 1.0 / 6227020800.0;
  p = p * x + 1.0 / 479001600.0;
  p = p * x + 1.0 / 39916800.0;
  p = p * x + 1.0 / 3628800.0;
  p = p * x + 1.0 / 362880.0;
  p = p * x + 1.0 / 40320.0;
  p = p * x + 1.0 / 5040.0;
  p = p * x + 1.0 / 720.0;
  p = p * x + 1.0 / 120.0;
  p = p * x + 1.0 / 24.0;
  p = p * x + 1.0 / 6.0;
  p = p * x + 0.5;
  double small = x + x * x * p;
  double large = kiln_exp_d(x) - 1.0;
  return kiln_fabsd(x) < 0.35 ? small : large;
}

/* log(x) for x = 0 (-inf), x >= 2^-1022 (normal doubles, which covers every float), inf, NaN, x < 0 (NaN). */
KILN_HELPER double kiln_log_d(double x) {
  ulong t = kiln_d2u(x) - 0x3fe6a09e667f3bcdull; /* bits of sqrt(1/2): m lands in [sqrt(1/2), sqrt(2)) */
  long e = (long)t >> 52;
  double m = kiln_u2d((t & 0x000fffffffffffffull) + 0x3fe6a09e667f3bcdull);
  double f = m - 1.0;
  double s = f / (2.0 + f);
  double z = s * s;
  /* 2*atanh(s)/s - 2 = sum 2 z^k / (2k+1) */
  double r = 2.0 / 19.0;
  r = r * z + 2.0 / 17.0;
  r = r * z + 2.0 / 15.0;
  r = r * z + 2.0 / 13.0;
  r = r * z + 2.0 / 11.0;
  r = r * z + 2.0 / 9.0;
  r = r * z + 2.0 / 7.0;
  r = r * z + 2.0 / 5.0;
  r = r * z + 2.0 / 3.0;
  r = r * z;
  double logm = f - s * (f - r);
  double result = (double)e * 0x1.62e42fefa39efp-1 + logm;
  result = x == __builtin_inf() ? x : result;
  result = x == 0.0 ? -__builtin_inf() : result;
  result = x < 0.0 ? __builtin_nan("") : result;
  return x != x ? x : result;
}

/* log(1 + u) with full relative accuracy near 0; u >= -1. */
KILN_HELPER double kiln_log1p_d(double u) {
  double w = 1.0 + u;
  /* log(w) * u / (w - 1) cancels the rounding error of 1 + u. */
  double fix = (w == 1.0 || w == __builtin_inf()) ? 1.0 : u / (w - 1.0);
  double r = kiln_log_d(w) * fix;
  return w == 1.0 ? u : r;
}

/* ---- Float kernels shared by several functions ---- */

/* (e^r - 1 - r) / r^2 for |r| <= ln2/2, relative error 3e-9 (tools/fit_poly.py). */
KILN_HELPER float kiln_exp_q(float r) {
  float q = 1.381461100e-03f;
  q = q * r + 8.368710035e-03f;
  q = q * r + 4.166838741e-02f;
  q = q * r + 1.666652069e-01f;
  return q * r + 4.999999345e-01f;
}

/* e^x in float: Cody-Waite reduction x = n*ln2 + r, |r| <= ln2/2, then a degree-6 polynomial and an exact
 * two-step scaling by 2^n (so denormal results are rounded once). */
KILN_HELPER float kiln_expf(float x) {
  float xc = kiln_clampf_nan(x, -104.0f, 89.0f);
  float t = xc * 0x1.715476p+0f + 0x1.8p23f;
  float n = t - 0x1.8p23f;
  int ni = x != x ? 0 : (int)(kiln_f2u(t) - kiln_f2u(0x1.8p23f));
  float r = (xc - n * 0x1.62e4p-1f) - n * 0x1.7f7d1cp-20f;
  float p = 1.0f + (r + r * r * kiln_exp_q(r));
  int n1 = ni >> 1;
  return p * kiln_pow2f(n1) * kiln_pow2f(ni - n1);
}

/* ---- Vector and half overloads of scalar float functions: lane by lane (each lane inlines the scalar). ----
 */
#define KILN_VEC1F(name)                                                               \
  KILN_DEF float2 name(float2 v) { return (float2){name(v.x), name(v.y)}; }            \
  KILN_DEF float3 name(float3 v) { return (float3){name(v.x), name(v.y), name(v.z)}; } \
  KILN_DEF float4 name(float4 v) { return (float4){name(v.x), name(v.y), name(v.z), name(v.w)}; }
#define KILN_HALF1(name)                                                             \
  KILN_DEF half name(half v) { return (half)name((float)v); }                        \
  KILN_DEF half2 name(half2 v) {                                                     \
    return __builtin_convertvector(name(__builtin_convertvector(v, float2)), half2); \
  }                                                                                  \
  KILN_DEF half3 name(half3 v) {                                                     \
    return __builtin_convertvector(name(__builtin_convertvector(v, float3)), half3); \
  }                                                                                  \
  KILN_DEF half4 name(half4 v) {                                                     \
    return __builtin_convertvector(name(__builtin_convertvector(v, float4)), half4); \
  }
#define KILN_VEC1(name) KILN_VEC1F(name) KILN_HALF1(name)

#define KILN_VEC2F(name)                                                                        \
  KILN_DEF float2 name(float2 a, float2 b) { return (float2){name(a.x, b.x), name(a.y, b.y)}; } \
  KILN_DEF float3 name(float3 a, float3 b) {                                                    \
    return (float3){name(a.x, b.x), name(a.y, b.y), name(a.z, b.z)};                            \
  }                                                                                             \
  KILN_DEF float4 name(float4 a, float4 b) {                                                    \
    return (float4){name(a.x, b.x), name(a.y, b.y), name(a.z, b.z), name(a.w, b.w)};            \
  }
#define KILN_HALF2(name)                                                                      \
  KILN_DEF half name(half a, half b) { return (half)name((float)a, (float)b); }               \
  KILN_DEF half2 name(half2 a, half2 b) {                                                     \
    return __builtin_convertvector(                                                           \
        name(__builtin_convertvector(a, float2), __builtin_convertvector(b, float2)), half2); \
  }                                                                                           \
  KILN_DEF half3 name(half3 a, half3 b) {                                                     \
    return __builtin_convertvector(                                                           \
        name(__builtin_convertvector(a, float3), __builtin_convertvector(b, float3)), half3); \
  }                                                                                           \
  KILN_DEF half4 name(half4 a, half4 b) {                                                     \
    return __builtin_convertvector(                                                           \
        name(__builtin_convertvector(a, float4), __builtin_convertvector(b, float4)), half4); \
  }
#define KILN_VEC2(name) KILN_VEC2F(name) KILN_HALF2(name)

/* f(floatN, intN) */
#define KILN_VECFI(name)                                                                      \
  KILN_DEF float2 name(float2 a, int2 b) { return (float2){name(a.x, b.x), name(a.y, b.y)}; } \
  KILN_DEF float3 name(float3 a, int3 b) {                                                    \
    return (float3){name(a.x, b.x), name(a.y, b.y), name(a.z, b.z)};                          \
  }                                                                                           \
  KILN_DEF float4 name(float4 a, int4 b) {                                                    \
    return (float4){name(a.x, b.x), name(a.y, b.y), name(a.z, b.z), name(a.w, b.w)};          \
  }

/* f(floatN, floatN* / intN*) returning floatN */
#define KILN_VECPTR(name, P)                                                         \
  KILN_DEF float2 name(float2 v, P##2 * out) {                                       \
    P a, b;                                                                          \
    float2 r = (float2){name(v.x, &a), name(v.y, &b)};                               \
    *out = (P##2){a, b};                                                             \
    return r;                                                                        \
  }                                                                                  \
  KILN_DEF float3 name(float3 v, P##3 * out) {                                       \
    P a, b, c;                                                                       \
    float3 r = (float3){name(v.x, &a), name(v.y, &b), name(v.z, &c)};                \
    *out = (P##3){a, b, c};                                                          \
    return r;                                                                        \
  }                                                                                  \
  KILN_DEF float4 name(float4 v, P##4 * out) {                                       \
    P a, b, c, d;                                                                    \
    float4 r = (float4){name(v.x, &a), name(v.y, &b), name(v.z, &c), name(v.w, &d)}; \
    *out = (P##4){a, b, c, d};                                                       \
    return r;                                                                        \
  }

#endif /* KILN_RSLIB_INTERNAL_H_ */
