/* Hyperbolic functions and their inverses. tanh is pure float (a common activation function); the others are
 * evaluated in double with the kernels of rslib_internal.h. */
#include "rslib_internal.h"

KILN_DEF float tanh(float x) {
  float a = kiln_fabsf(x);
  float z = a * a;
  float p = 2.395819831e-03f;
  p = p * z - 8.413955228e-03f;
  p = p * z + 2.178282504e-02f;
  p = p * z - 5.395965015e-02f;
  p = p * z + 1.333329370e-01f;
  p = p * z - 3.333333272e-01f;
  float small = a + a * z * p;
  float e = kiln_expf(2.0f * a); /* inf for large a gives exactly 1 below */
  float large = 1.0f - 2.0f / (e + 1.0f);
  float r = a < 0.55f ? small : large;
  return kiln_copysignf(r, x);
}

KILN_DEF float sinh(float x) {
  double a = kiln_fabsd((double)x);
  a = a < 100.0 ? a : 100.0; /* sinh(100) is far above FLT_MAX; keeps the double finite */
  double e = kiln_expm1_d(a);
  float r = (float)(0.5 * (e + e / (e + 1.0)));
  r = kiln_isinff(x) ? __builtin_inff() : r;
  r = kiln_copysignf(r, x);
  return x != x ? x : r;
}

KILN_DEF float cosh(float x) {
  double a = kiln_fabsd((double)x);
  a = a < 100.0 ? a : 100.0;
  double e = kiln_exp_d(a);
  float r = (float)(0.5 * (e + 1.0 / e));
  return x != x ? x : r;
}

KILN_DEF float asinh(float x) {
  double a = kiln_fabsd((double)x);
  /* log(a + sqrt(a^2 + 1)) = log1p(a + a^2 / (1 + sqrt(1 + a^2))) */
  double mid = kiln_log1p_d(a + a * a / (1.0 + __builtin_sqrt(1.0 + a * a)));
  double big = kiln_log_d(a) + 0x1.62e42fefa39efp-1; /* log(2a) */
  float r = (float)(a < 0x1p28 ? mid : big);
  r = kiln_copysignf(r, x);
  return x != x ? x : r;
}

KILN_DEF float acosh(float x) {
  double xd = x;
  double t = xd - 1.0; /* exact */
  double mid = kiln_log1p_d(t + __builtin_sqrt(t * (xd + 1.0)));
  double big = kiln_log_d(xd) + 0x1.62e42fefa39efp-1;
  float r = (float)(xd < 0x1p28 ? mid : big);
  r = x < 1.0f ? kiln_nanf() : r;
  return x != x ? x : r;
}

KILN_DEF float atanh(float x) {
  double a = kiln_fabsd((double)x);
  double r = 0.5 * kiln_log1p_d(2.0 * a / (1.0 - a));
  float f = (float)r;
  f = a == 1.0 ? __builtin_inff() : f;
  f = a > 1.0 ? kiln_nanf() : f;
  f = kiln_copysignf(f, x);
  return x != x ? x : f;
}

KILN_VEC1(tanh)
KILN_VEC1(sinh)
KILN_VEC1(cosh)
KILN_VEC1(asinh)
KILN_VEC1(acosh)
KILN_VEC1(atanh)
