/* Trigonometric functions and their inverses.
 *
 * sin/cos/tan/sincos: Cody-Waite argument reduction in double (kiln_trig_reduce, accurate for |x| < 2^33),
 * then Taylor polynomials in double on |r| <= pi/4. sinpi/cospi/tanpi: exact reduction in float, then the
 * same polynomials. atan/atan2/asin/acos: pure float (so they vectorize at full float width), polynomials
 * from tools/fit_poly.py. */
#include "rslib_internal.h"

#define KILN_PIO2_HI 0x1.921fb6p+0f
#define KILN_PIO2_LO (-0x1.777a5cp-25f)
#define KILN_PIO4_HI 0x1.921fb6p-1f
#define KILN_PIO4_LO (-0x1.777a5cp-26f)
#define KILN_PI_HI 0x1.921fb6p+1f
#define KILN_PI_LO (-0x1.777a5cp-24f)
#define KILN_1_PI 0x1.45f306p-2f

/* sin(r) and cos(r) for |r| <= pi/4 (+ a little), relative error < 1e-11. */
KILN_HELPER double kiln_sin_poly(double r) {
  double z = r * r;
  double s = -1.0 / 39916800.0;
  s = s * z + 1.0 / 362880.0;
  s = s * z - 1.0 / 5040.0;
  s = s * z + 1.0 / 120.0;
  s = s * z - 1.0 / 6.0;
  return r + r * z * s;
}
KILN_HELPER double kiln_cos_poly(double r) {
  double z = r * r;
  double c = 1.0 / 479001600.0;
  c = c * z - 1.0 / 3628800.0;
  c = c * z + 1.0 / 40320.0;
  c = c * z - 1.0 / 720.0;
  c = c * z + 1.0 / 24.0;
  c = c * z - 0.5;
  return 1.0 + z * c;
}

/* x = n*pi/2 + r; returns r and n mod 4. Cody-Waite in double with pi/2 in four parts of 20, 20, 20 and 53
 * bits: n * part is exact for |n| < 2^33, every subtraction but the last two is exact, and 113 bits of pi/2
 * keep the error of r below 2^-80 for |x| < 2^33. Beyond 2^33 (where consecutive floats are >= 1024 apart)
 * the reduction is not accurate; r is clamped so results stay in range. (An exact branch-free Payne-Hanek
 * reduction was measured: it made every vectorized sin/cos/tan 3.7x slower, so it is not used.) */
KILN_HELPER double kiln_trig_reduce(float x, int* quadrant) {
  double xd = x;
  double t = xd * 0x1.45f306dc9c883p-1 + 0x1.8p52;
  double n = t - 0x1.8p52;
  ulong ni = kiln_d2u(t) - kiln_d2u(0x1.8p52);
  double r =
      (((xd - n * 0x1.921fcp+0) - n * -0x1.5777ap-21) - n * -0x1.73dccp-43) - n * 0x1.898cc51701b84p-64;
  *quadrant = (int)(ni & 3u);
  return kiln_clampd_nan(r, -0x1.921fb54442d18p-1, 0x1.921fb54442d18p-1);
}

KILN_DEF float sin(float x) {
  int q;
  double r = kiln_trig_reduce(x, &q);
  double s = kiln_sin_poly(r), c = kiln_cos_poly(r);
  double v = (q & 1) ? c : s;
  float res = (float)((q & 2) ? -v : v);
  return x == 0.0f ? x : res; /* sin(-0) = -0 */
}

KILN_DEF float cos(float x) {
  int q;
  double r = kiln_trig_reduce(x, &q);
  double s = kiln_sin_poly(r), c = kiln_cos_poly(r);
  double v = (q & 1) ? s : c;
  return (float)(((q + 1) & 2) ? -v : v);
}

KILN_DEF float sincos(float x, float* cos_out) {
  int q;
  double r = kiln_trig_reduce(x, &q);
  double s = kiln_sin_poly(r), c = kiln_cos_poly(r);
  double sv = (q & 1) ? c : s;
  double cv = (q & 1) ? s : c;
  *cos_out = (float)(((q + 1) & 2) ? -cv : cv);
  float res = (float)((q & 2) ? -sv : sv);
  return x == 0.0f ? x : res;
}

KILN_DEF float tan(float x) {
  int q;
  double r = kiln_trig_reduce(x, &q);
  double s = kiln_sin_poly(r), c = kiln_cos_poly(r);
  float t = (float)((q & 1) ? -c / s : s / c);
  return x == 0.0f ? x : t;
}

/* sinpi/cospi: x = n/2 + r exactly (|r| <= 1/4); zeros get the signs C23 gives them. */
KILN_HELPER void kiln_sincospi(float x, double* sin_out, double* cos_out) {
  float a = kiln_fabsf(x);
  a = a < 0x1p24f ? a : 0.0f; /* every float >= 2^24 is an even integer */
  float n = kiln_rintf(a * 2.0f);
  float r = a - n * 0.5f;
  float q = n - 4.0f * kiln_floorf(n * 0.25f); /* n mod 4, exact */
  double rd = (double)r * 0x1.921fb54442d18p+1;
  double s = kiln_sin_poly(rd), c = kiln_cos_poly(rd);
  double sv = (q == 1.0f || q == 3.0f) ? c : s;
  double cv = (q == 1.0f || q == 3.0f) ? s : c;
  sv = q >= 2.0f ? -sv : sv;
  cv = (q == 1.0f || q == 2.0f) ? -cv : cv;
  sv = sv == 0.0 ? 0.0 : sv; /* +0 at integers, before the sign of x */
  cv = cv == 0.0 ? 0.0 : cv; /* cospi(n + 1/2) = +0 */
  *sin_out = kiln_f2u(x) >> 31 ? -sv : sv;
  *cos_out = cv;
}

KILN_DEF float sinpi(float x) {
  double s, c;
  kiln_sincospi(x, &s, &c);
  float r = (float)s;
  r = x != x || kiln_isinff(x) ? kiln_nanf() : r;
  return x == 0.0f ? x : r;
}
KILN_DEF float cospi(float x) {
  double s, c;
  kiln_sincospi(x, &s, &c);
  return x != x || kiln_isinff(x) ? kiln_nanf() : (float)c;
}
KILN_DEF float tanpi(float x) {
  double s, c;
  kiln_sincospi(x, &s, &c);
  float r = (float)(s / c);
  r = x != x || kiln_isinff(x) ? kiln_nanf() : r;
  return x == 0.0f ? x : r;
}

/* atan(a) for a >= 0 (or NaN): reduce to |t| <= tan(pi/8) with atan(a) = pi/2 + atan(-1/a) or
 * pi/4 + atan((a-1)/(a+1)); one division either way. */
KILN_HELPER float kiln_atan_pos(float a) {
  bool big = a > 2.4142135f;
  bool mid = a > 0.41421356f;
  float num = big ? -1.0f : (mid ? a - 1.0f : a);
  float den = big ? a : (mid ? a + 1.0f : 1.0f);
  float t = num / den;
  float base_hi = big ? KILN_PIO2_HI : (mid ? KILN_PIO4_HI : 0.0f);
  float base_lo = big ? KILN_PIO2_LO : (mid ? KILN_PIO4_LO : 0.0f);
  float z = t * t;
  float p = -6.078213403e-02f;
  p = p * z + 1.059381027e-01f;
  p = p * z - 1.424353282e-01f;
  p = p * z + 1.999847148e-01f;
  p = p * z - 3.333331519e-01f;
  return base_hi + (base_lo + (t + t * z * p));
}

KILN_DEF float atan(float x) { return kiln_copysignf(kiln_atan_pos(kiln_fabsf(x)), x); }
KILN_DEF float atanpi(float x) { return atan(x) * KILN_1_PI; }

KILN_DEF float atan2(float y, float x) {
  float ax = kiln_fabsf(x), ay = kiln_fabsf(y);
  bool y_bigger = ay > ax;
  float mx = y_bigger ? ay : ax; /* NaN-preserving: a NaN ends up in the quotient */
  float mn = y_bigger ? ax : ay;
  float t = mn / mx;
  t = mx == 0.0f ? 0.0f : t;
  t = (ax == __builtin_inff() && ay == __builtin_inff()) ? 1.0f : t;
  t = (x != x || y != y) ? x + y : t;
  float a = kiln_atan_pos(t);
  a = y_bigger ? KILN_PIO2_HI + (KILN_PIO2_LO - a) : a;
  a = (kiln_f2u(x) >> 31) ? KILN_PI_HI + (KILN_PI_LO - a) : a;
  return kiln_copysignf(a, y);
}
KILN_DEF float atan2pi(float y, float x) { return atan2(y, x) * KILN_1_PI; }

/* asin(s) = s + s*z*P(z) for |s| <= 1/2, z = s^2. */
KILN_HELPER float kiln_asin_poly(float s, float z) {
  float p = 3.751645101e-02f;
  p = p * z + 1.443860425e-02f;
  p = p * z + 3.180771859e-02f;
  p = p * z + 4.451695516e-02f;
  p = p * z + 7.500504185e-02f;
  p = p * z + 1.666665999e-01f;
  return s + s * z * p;
}

KILN_DEF float asin(float x) {
  float a = kiln_fabsf(x);
  bool big = a > 0.5f;
  float z = big ? (1.0f - a) * 0.5f : a * a;
  float s = big ? __builtin_sqrtf(z) : a;
  float p = kiln_asin_poly(s, z);
  float r = big ? KILN_PIO2_HI - (2.0f * p - KILN_PIO2_LO) : p;
  r = a > 1.0f ? kiln_nanf() : r;
  return kiln_copysignf(r, x); /* NaN input stays NaN */
}

KILN_DEF float acos(float x) {
  float a = kiln_fabsf(x);
  bool big = a > 0.5f;
  float z = big ? (1.0f - a) * 0.5f : a * a;
  float s = big ? __builtin_sqrtf(z) : x;
  float p = kiln_asin_poly(s, z);
  float small_r = KILN_PIO2_HI - (p - KILN_PIO2_LO);
  float pos_r = 2.0f * p;
  float neg_r = KILN_PI_HI - (2.0f * p - KILN_PI_LO);
  float r = big ? (x > 0.0f ? pos_r : neg_r) : small_r;
  r = a > 1.0f ? kiln_nanf() : r;
  return x != x ? x : r;
}

KILN_DEF float asinpi(float x) { return asin(x) * KILN_1_PI; }
KILN_DEF float acospi(float x) { return acos(x) * KILN_1_PI; }

KILN_VEC1(sin)
KILN_VEC1(cos)
KILN_VEC1(tan)
KILN_VEC1(sinpi)
KILN_VEC1(cospi)
KILN_VEC1(tanpi)
KILN_VEC1(atan)
KILN_VEC1(atanpi)
KILN_VEC1(asin)
KILN_VEC1(acos)
KILN_VEC1(asinpi)
KILN_VEC1(acospi)
KILN_VEC2(atan2)
KILN_VEC2(atan2pi)
KILN_VECPTR(sincos, float)
