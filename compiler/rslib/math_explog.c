/* Exponentials, logarithms, powers and roots. exp, exp2, exp10, expm1, log, log2 and log10 are pure float
 * (the most used, so they vectorize at full float width); the others evaluate in double with the kernels of
 * rslib_internal.h, which makes them accurate to well under 1 ulp before the final rounding. */
#include "rslib_internal.h"

KILN_DEF float exp(float x) { return kiln_expf(x); }

KILN_DEF float exp2(float x) {
  float xc = kiln_clampf_nan(x, -151.0f, 129.0f);
  float n = (xc + 0x1.8p23f) - 0x1.8p23f;
  int ni = x != x ? 0 : (int)(kiln_f2u(xc + 0x1.8p23f) - kiln_f2u(0x1.8p23f));
  float r = xc - n; /* exact, |r| <= 1/2 */
  float q = 1.535336062e-04f;
  q = q * r + 1.339887487e-03f;
  q = q * r + 9.618437366e-03f;
  q = q * r + 5.550332470e-02f;
  q = q * r + 2.402264791e-01f;
  q = q * r + 6.931472029e-01f;
  float p = 1.0f + r * q;
  int n1 = ni >> 1;
  return p * kiln_pow2f(n1) * kiln_pow2f(ni - n1);
}

/* 10^x = 2^n * 10^r with n = rint(x * log2(10)) and r = x - n*log10(2) (log10(2) split so that n * hi is
 * exact), |r| <= log10(2)/2. */
KILN_DEF float exp10(float x) {
  float xc = kiln_clampf_nan(x, -46.0f, 39.0f);
  float t = xc * 0x1.a934f0p+1f + 0x1.8p23f;
  float n = t - 0x1.8p23f;
  int ni = x != x ? 0 : (int)(kiln_f2u(t) - kiln_f2u(0x1.8p23f));
  float r = (xc - n * 0x1.344p-2f) - n * 0x1.3509f8p-18f;
  float q = 2.063216569e-01f;
  q = q * r + 5.420251889e-01f;
  q = q * r + 1.171292687e+00f;
  q = q * r + 2.034649853e+00f;
  q = q * r + 2.650948748e+00f;
  q = q * r + 2.302585167e+00f;
  float p = 1.0f + r * q;
  int n1 = ni >> 1;
  return p * kiln_pow2f(n1) * kiln_pow2f(ni - n1);
}

/* e^x - 1 = 2^n * expm1(r) + (2^n - 1), evaluated as 2 * (2^(n-1) * expm1(r) + (2^(n-1) - 1/2)) so that
 * n = 128 does not overflow early; for n = 0 it is exactly expm1(r) = r + r^2 Q(r) (Q shared with exp). */
KILN_DEF float expm1(float x) {
  float xc = kiln_clampf_nan(x, -30.0f, 89.0f);
  float t = xc * 0x1.715476p+0f + 0x1.8p23f;
  float n = t - 0x1.8p23f;
  int ni = x != x ? 0 : (int)(kiln_f2u(t) - kiln_f2u(0x1.8p23f));
  float r = (xc - n * 0x1.62e4p-1f) - n * 0x1.7f7d1cp-20f;
  float em = r + r * r * kiln_exp_q(r);
  float s1 = kiln_pow2f(ni - 1);
  float res = 2.0f * (s1 * em + (s1 - 0.5f));
  return x == 0.0f ? x : res;
}

/* log in float: x = 2^e * m with m in [sqrt(1/2), sqrt(2)), f = m - 1, s = f / (2 + f),
 * log(m) = 2 atanh(s) = f - s * (f - R(s^2)). Returns e and log(m); special values are the caller's. */
KILN_HELPER float kiln_log_parts(float x, float* e_out) {
  bool den = x < 0x1p-126f;
  float xs = den ? x * 0x1p23f : x;
  uint t = kiln_f2u(xs) - 0x3f3504f3u;
  int e = ((int)t >> 23) - (den ? 23 : 0);
  float m = kiln_u2f((t & 0x007fffffu) + 0x3f3504f3u);
  float f = m - 1.0f;
  float s = f / (2.0f + f);
  float z = s * s;
  float r = 2.358147466e-01f;
  r = r * z + 2.853734681e-01f;
  r = r * z + 4.000033454e-01f;
  r = r * z + 6.666666565e-01f;
  r = r * z;
  *e_out = (float)e;
  return f - s * (f - r);
}

/* log(0) = -inf, log(x < 0) = NaN, log(inf) = inf, NaN stays NaN. */
KILN_HELPER float kiln_log_specials(float x, float result) {
  result = x == __builtin_inff() ? x : result;
  result = x == 0.0f ? -__builtin_inff() : result;
  result = x < 0.0f ? kiln_nanf() : result;
  return x != x ? x : result;
}

KILN_DEF float log(float x) {
  float ef;
  float logm = kiln_log_parts(x, &ef);
  /* e*ln2 split so that e * hi is exact */
  return kiln_log_specials(x, ef * 0x1.62e4p-1f + (logm + ef * 0x1.7f7d1cp-20f));
}

KILN_DEF float log2(float x) {
  float ef;
  float logm = kiln_log_parts(x, &ef);
  return kiln_log_specials(x, ef + logm * 0x1.715476p+0f);
}

KILN_DEF float log10(float x) {
  float ef;
  float logm = kiln_log_parts(x, &ef);
  /* e*log10(2) split so that e * hi is exact */
  return kiln_log_specials(x, ef * 0x1.344p-2f + (ef * 0x1.3509f8p-18f + logm * 0x1.bcb7b2p-2f));
}

KILN_DEF float log1p(float x) { return (float)kiln_log1p_d((double)x); }

KILN_DEF float sqrt(float x) { return __builtin_sqrtf(x); }
KILN_DEF float rsqrt(float x) { return 1.0f / __builtin_sqrtf(x); }

/* |x|^y in double, then the sign and the special cases of C99 Annex F / OpenCL pow. */
KILN_HELPER float kiln_pow_mag(float x, double y) {
  double l = kiln_log_d((double)kiln_fabsf(x));
  return (float)kiln_exp_d(y * l);
}

KILN_DEF float pow(float x, float y) {
  float ay = kiln_fabsf(y);
  bool y_int = kiln_rintf(y) == y;
  bool y_small = ay < 0x1p24f;
  bool y_odd = y_int && y_small && ((int)(y_small ? ay : 0.0f) & 1);
  float mag = kiln_pow_mag(x, (double)y);
  bool x_neg = kiln_f2u(x) >> 31;
  float r = x_neg && y_odd ? -mag : mag;
  r = (x < 0.0f && x > -__builtin_inff() && !y_int) ? kiln_nanf() : r;
  r = (kiln_fabsf(x) == 1.0f && kiln_isinff(y)) ? 1.0f : r;
  return (x == 1.0f || y == 0.0f) ? 1.0f : r;
}

KILN_DEF float pown(float x, int n) {
  float mag = kiln_pow_mag(x, (double)n);
  bool x_neg = kiln_f2u(x) >> 31;
  float r = x_neg && (n & 1) ? -mag : mag;
  return n == 0 ? 1.0f : r;
}

KILN_DEF float powr(float x, float y) {
  float r = kiln_pow_mag(x, (double)y);
  return x < 0.0f ? kiln_nanf() : r;
}

KILN_DEF float rootn(float x, int n) {
  double l = kiln_log_d((double)kiln_fabsf(x));
  float mag = (float)kiln_exp_d(l / (double)(n == 0 ? 1 : n));
  bool x_neg = kiln_f2u(x) >> 31;
  float r = x_neg && (n & 1) ? -mag : mag;
  r = (x < 0.0f && !(n & 1)) ? kiln_nanf() : r;
  return n == 0 ? kiln_nanf() : r;
}

KILN_DEF float cbrt(float x) {
  double l = kiln_log_d((double)kiln_fabsf(x));
  float mag = (float)kiln_exp_d(l * (1.0 / 3.0));
  return kiln_copysignf(mag, x);
}

KILN_DEF float hypot(float x, float y) {
  double xd = x, yd = y;
  float r = (float)__builtin_sqrt(xd * xd + yd * yd);
  return (kiln_isinff(x) || kiln_isinff(y)) ? __builtin_inff() : r;
}

KILN_VEC1(exp)
KILN_VEC1(exp2)
KILN_VEC1(exp10)
KILN_VEC1(expm1)
KILN_VEC1(log)
KILN_VEC1(log2)
KILN_VEC1(log10)
KILN_VEC1(log1p)
KILN_VEC1(sqrt)
KILN_VEC1(rsqrt)
KILN_VEC1(cbrt)
KILN_VEC2(pow)
KILN_VEC2(powr)
KILN_VEC2(hypot)
KILN_VECFI(pown)
KILN_VECFI(rootn)
