/* native_* and half_*: faster forms with relaxed accuracy (bounds measured by tests/rslib and listed in
 * docs/kernel-math.md). Pure float, short polynomials, no denormal care (denormal results may flush to 0).
 * Where no faster algorithm than the full-precision one exists, the native form is the full one. */
#include "rslib_internal.h"

/* 2^x: degree-4 polynomial on |r| <= 1/2, single scaling (results below 2^-126 flush to 0). */
KILN_DEF float native_exp2(float x) {
  float xc = kiln_clampf_nan(x, -127.0f, 128.0f);
  float n = (xc + 0x1.8p23f) - 0x1.8p23f;
  int ni = x != x ? 0 : (int)(kiln_f2u(xc + 0x1.8p23f) - kiln_f2u(0x1.8p23f));
  float r = xc - n;
  float q = 9.582850681e-03f;
  q = q * r + 5.590642825e-02f;
  q = q * r + 2.402409868e-01f;
  q = q * r + 6.931241928e-01f;
  float p = 1.0f + r * q;
  int n1 = ni >> 1;
  float res = p * kiln_pow2f(n1) * kiln_pow2f(ni - n1);
  res = xc >= 128.0f ? __builtin_inff() : res;
  return xc <= -127.0f ? 0.0f : res;
}
KILN_DEF float native_exp(float x) { return native_exp2(x * 0x1.715476p+0f); }
KILN_DEF float native_exp10(float x) { return native_exp2(x * 0x1.a934f0p+1f); }
KILN_DEF float native_expm1(float x) { return expm1(x); }

/* log2(x) = e + log2(m), m in [sqrt(1/2), sqrt(2)), degree-6 polynomial in f = m - 1. */
KILN_DEF float native_log2(float x) {
  uint t = kiln_f2u(x) - 0x3f3504f3u;
  int e = (int)t >> 23;
  float f = kiln_u2f((t & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
  float q = -2.061885340e-01f;
  q = q * f + 3.181991335e-01f;
  q = q * f - 3.664920031e-01f;
  q = q * f + 4.798119226e-01f;
  q = q * f - 7.212063818e-01f;
  q = q * f + 1.442701617e+00f;
  float r = (float)e + f * q;
  r = x == __builtin_inff() ? x : r;
  r = x < 0x1p-126f ? -__builtin_inff() : r; /* zero and denormals */
  r = x < 0.0f ? kiln_nanf() : r;
  return x != x ? x : r;
}
KILN_DEF float native_log(float x) { return native_log2(x) * 0x1.62e430p-1f; }
KILN_DEF float native_log10(float x) { return native_log2(x) * 0x1.344136p-2f; }
KILN_DEF float native_log1p(float x) { return log1p(x); }
KILN_DEF float native_powr(float x, float y) {
  float r = native_exp2(y * native_log2(x));
  return x < 0.0f ? kiln_nanf() : r;
}
KILN_DEF float native_rootn(float x, int n) { return rootn(x, n); }
KILN_DEF float native_cbrt(float x) { return cbrt(x); }

KILN_DEF float native_recip(float x) { return 1.0f / x; }
KILN_DEF float native_divide(float x, float y) { return x / y; }
KILN_DEF float native_sqrt(float x) { return __builtin_sqrtf(x); }
KILN_DEF float native_rsqrt(float x) { return 1.0f / __builtin_sqrtf(x); }

/* Float Cody-Waite with pi/2 in three parts (12, 12 and 24 bits; n*part exact for |n| < 2^12): accurate for
 * |x| <= 6400, degrading beyond. */
KILN_HELPER float kiln_native_reduce(float x, int* quadrant) {
  float xc = kiln_clampf_nan(x, -0x1p22f, 0x1p22f);
  float t = xc * 0x1.45f306p-1f + 0x1.8p23f;
  float n = t - 0x1.8p23f;
  *quadrant = (int)((kiln_f2u(t) - kiln_f2u(0x1.8p23f)) & 3u);
  return ((xc - n * 0x1.922p+0f) - n * -0x1.2aep-18f) - n * -0x1.de973ep-31f;
}
KILN_HELPER float kiln_native_sin_poly(float r, float z) {
  float s = -1.951528210e-04f;
  s = s * z + 8.332160752e-03f;
  s = s * z - 1.666665461e-01f;
  return r + r * z * s;
}
KILN_HELPER float kiln_native_cos_poly(float z) {
  float c = 2.443315513e-05f;
  c = c * z - 1.388731623e-03f;
  c = c * z + 4.166664568e-02f;
  return 1.0f - 0.5f * z + z * z * c;
}
KILN_DEF float native_sin(float x) {
  int q;
  float r = kiln_native_reduce(x, &q);
  float z = r * r;
  float v = (q & 1) ? kiln_native_cos_poly(z) : kiln_native_sin_poly(r, z);
  v = (q & 2) ? -v : v;
  v = x == 0.0f ? x : v;
  return kiln_isinff(x) ? kiln_nanf() : v;
}
KILN_DEF float native_cos(float x) {
  int q;
  float r = kiln_native_reduce(x, &q);
  float z = r * r;
  float v = (q & 1) ? kiln_native_sin_poly(r, z) : kiln_native_cos_poly(z);
  v = ((q + 1) & 2) ? -v : v;
  return kiln_isinff(x) ? kiln_nanf() : v;
}
KILN_DEF float native_tan(float x) {
  int q;
  float r = kiln_native_reduce(x, &q);
  float z = r * r;
  float s = kiln_native_sin_poly(r, z), c = kiln_native_cos_poly(z);
  float v = (q & 1) ? -c / s : s / c;
  v = x == 0.0f ? x : v;
  return kiln_isinff(x) ? kiln_nanf() : v;
}
KILN_DEF float native_sincos(float x, float* cos_out) {
  *cos_out = native_cos(x);
  return native_sin(x);
}

/* atan with a degree-2 polynomial after the same reduction as atan. */
KILN_DEF float native_atan(float x) {
  float a = kiln_fabsf(x);
  bool big = a > 2.4142135f;
  bool mid = a > 0.41421356f;
  float num = big ? -1.0f : (mid ? a - 1.0f : a);
  float den = big ? a : (mid ? a + 1.0f : 1.0f);
  float t = num / den;
  float base = big ? 0x1.921fb6p+0f : (mid ? 0x1.921fb6p-1f : 0.0f);
  float z = t * t;
  float p = -1.122514854e-01f;
  p = p * z + 1.971414016e-01f;
  p = p * z - 3.332550758e-01f;
  return kiln_copysignf(base + (t + t * z * p), x);
}
KILN_DEF float native_atanpi(float x) { return native_atan(x) * 0x1.45f306p-2f; }
KILN_DEF float native_atan2(float y, float x) { return atan2(y, x); }
KILN_DEF float native_atan2pi(float y, float x) { return atan2pi(y, x); }

KILN_DEF float native_acos(float x) { return acos(x); }
KILN_DEF float native_acosh(float x) { return acosh(x); }
KILN_DEF float native_acospi(float x) { return acospi(x); }
KILN_DEF float native_asin(float x) { return asin(x); }
KILN_DEF float native_asinh(float x) { return asinh(x); }
KILN_DEF float native_asinpi(float x) { return asinpi(x); }
KILN_DEF float native_atanh(float x) { return atanh(x); }
KILN_DEF float native_cosh(float x) { return cosh(x); }
KILN_DEF float native_sinh(float x) { return sinh(x); }
KILN_DEF float native_tanh(float x) { return tanh(x); }
KILN_DEF float native_cospi(float x) { return cospi(x); }
KILN_DEF float native_sinpi(float x) { return sinpi(x); }
KILN_DEF float native_tanpi(float x) { return tanpi(x); }
KILN_DEF float native_hypot(float x, float y) { return hypot(x, y); }

/* half_*: OpenCL allows 8192 ulp; the native forms are far inside that. The trigonometric ones use the full
 * forms because OpenCL requires half_sin/cos/tan over |x| <= 2^16, beyond native_sin's range. */
KILN_DEF float half_exp(float x) { return native_exp(x); }
KILN_DEF float half_exp2(float x) { return native_exp2(x); }
KILN_DEF float half_exp10(float x) { return native_exp10(x); }
KILN_DEF float half_log(float x) { return native_log(x); }
KILN_DEF float half_log2(float x) { return native_log2(x); }
KILN_DEF float half_log10(float x) { return native_log10(x); }
KILN_DEF float half_powr(float x, float y) { return native_powr(x, y); }
KILN_DEF float half_recip(float x) { return 1.0f / x; }
KILN_DEF float half_divide(float x, float y) { return x / y; }
KILN_DEF float half_sqrt(float x) { return __builtin_sqrtf(x); }
KILN_DEF float half_rsqrt(float x) { return 1.0f / __builtin_sqrtf(x); }
KILN_DEF float half_sin(float x) { return sin(x); }
KILN_DEF float half_cos(float x) { return cos(x); }
KILN_DEF float half_tan(float x) { return tan(x); }

KILN_VEC1F(native_exp2)
KILN_VEC1F(native_exp)
KILN_VEC1F(native_exp10)
KILN_VEC1F(native_expm1)
KILN_VEC1F(native_log2)
KILN_VEC1F(native_log)
KILN_VEC1F(native_log10)
KILN_VEC1F(native_log1p)
KILN_VEC1F(native_cbrt)
KILN_VEC1F(native_recip)
KILN_VEC1F(native_sqrt)
KILN_VEC1F(native_rsqrt)
KILN_VEC1F(native_sin)
KILN_VEC1F(native_cos)
KILN_VEC1F(native_tan)
KILN_VEC1F(native_atan)
KILN_VEC1F(native_atanpi)
KILN_VEC1F(native_acos)
KILN_VEC1F(native_acosh)
KILN_VEC1F(native_acospi)
KILN_VEC1F(native_asin)
KILN_VEC1F(native_asinh)
KILN_VEC1F(native_asinpi)
KILN_VEC1F(native_atanh)
KILN_VEC1F(native_cosh)
KILN_VEC1F(native_sinh)
KILN_VEC1F(native_tanh)
KILN_VEC1F(native_cospi)
KILN_VEC1F(native_sinpi)
KILN_VEC1F(native_tanpi)
KILN_VEC2F(native_powr)
KILN_VEC2F(native_divide)
KILN_VEC2F(native_atan2)
KILN_VEC2F(native_atan2pi)
KILN_VEC2F(native_hypot)
KILN_VECFI(native_rootn)
KILN_VECPTR(native_sincos, float)
KILN_VEC1F(half_exp)
KILN_VEC1F(half_exp2)
KILN_VEC1F(half_exp10)
KILN_VEC1F(half_log)
KILN_VEC1F(half_log2)
KILN_VEC1F(half_log10)
KILN_VEC1F(half_recip)
KILN_VEC1F(half_sqrt)
KILN_VEC1F(half_rsqrt)
KILN_VEC1F(half_sin)
KILN_VEC1F(half_cos)
KILN_VEC1F(half_tan)
KILN_VEC2F(half_powr)
KILN_VEC2F(half_divide)
