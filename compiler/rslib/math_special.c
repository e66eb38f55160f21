/* erf, erfc, lgamma, tgamma, branch-free; all but erf are evaluated in double.
 *
 * erfc(x), x >= 0: t = 1/(1 + x/2), erfc(x) = t * exp(-x^2 + G(t)) with G of degree 12 fitted by
 *   tools/fit_poly.py (absolute error 1.6e-10 in the exponent, so ~1.6e-10 relative in erfc).
 * erf(x): in float, see erf below.
 * lgamma/tgamma: Stirling's series at x + 8 (the shift product x(x+1)...(x+7) undone afterwards), reflection
 *   through sinpi for x < 1/2. */
#include "rslib_internal.h"

KILN_HELPER double kiln_erfc_pos(double x) {
  double xc = x < 10.9 ? x : 10.9;
  double t = 1.0 / (1.0 + 0.5 * xc);
  double g = 0.18335511195093313;
  g = g * t - 1.3547475100609345;
  g = g * t + 4.3346334601141745;
  g = g * t - 7.7588560796749011;
  g = g * t + 8.3827893897906378;
  g = g * t - 5.6163342033623058;
  g = g * t + 2.5780108039510266;
  g = g * t - 1.0346276562649348;
  g = g * t + 0.12348205973532489;
  g = g * t + 0.049435061016920745;
  g = g * t + 0.37858859486132485;
  g = g * t + 0.99977693624078479;
  g = g * t - 1.2655059681420546;
  double r = t * kiln_exp_d(-xc * xc + g);
  return x > 10.9 ? 0.0 : r;
}

KILN_DEF float erfc(float x) {
  double a = kiln_fabsd((double)x);
  double e = kiln_erfc_pos(a);
  float r = (float)(x < 0.0f ? 2.0 - e : e);
  return x != x ? x : r;
}

/* erf in float (it is GELU's inner function, so it should vectorize at full width): x * P(x^2) for |x| < 1,
 * 1 - exp(Q(|x| - 2.5)) for 1 <= |x| < 4 with Q ~ log(erfc) (tools/fit_poly.py), 1 beyond (erfc(4) < 2^-25).
 */
KILN_DEF float erf(float x) {
  float a = kiln_fabsf(x);
  float z = a * a;
  float p = 7.889119385e-05f;
  p = p * z - 8.020841239e-04f;
  p = p * z + 5.189535335e-03f;
  p = p * z - 2.685444459e-02f;
  p = p * z + 1.128360018e-01f;
  p = p * z - 3.761262714e-01f;
  p = p * z + 1.128379166e+00f;
  float small = a * p;
  float u = a - 2.5f;
  float q = -5.555588389e-08f;
  q = q * u + 1.614954354e-06f;
  q = q * u - 1.302811613e-05f;
  q = q * u + 7.739040900e-05f;
  q = q * u - 4.206192687e-04f;
  q = q * u + 2.165165956e-03f;
  q = q * u - 1.085822028e-02f;
  q = q * u - 9.438936428e-01f;
  q = q * u - 5.352680731e+00f;
  q = q * u - 7.806815277e+00f;
  float big = 1.0f - kiln_expf(q);
  float r = a < 1.0f ? small : (a < 4.0f ? big : 1.0f);
  r = kiln_copysignf(r, x);
  return x != x ? x : r;
}

/* log(gamma(x)) for x >= 1/2 (the Stirling branch), finite. */
KILN_HELPER double kiln_lgamma_pos(double x) {
  bool shift = x < 16.0;
  double xs = shift ? x + 8.0 : x;
  double prod =
      shift ? x * (x + 1.0) * (x + 2.0) * (x + 3.0) * (x + 4.0) * (x + 5.0) * (x + 6.0) * (x + 7.0) : 1.0;
  double inv = 1.0 / xs;
  double z = inv * inv;
  double series = 691.0 / 360360.0;
  series = -series * z + 1.0 / 1188.0;
  series = series * z - 1.0 / 1680.0;
  series = series * z + 1.0 / 1260.0;
  series = series * z - 1.0 / 360.0;
  series = series * z + 1.0 / 12.0;
  series *= inv;
  double lg = (xs - 0.5) * kiln_log_d(xs) - xs + 0x1.d67f1c864beb5p-1 /* log(2 pi)/2 */ + series;
  return lg - kiln_log_d(prod);
}

/* sin(pi x) in double for finite x (sign-correct, exact zeros at integers). */
KILN_HELPER double kiln_sinpi_d(float x) {
  float a = kiln_fabsf(x);
  a = a < 0x1p24f ? a : 0.0f;
  float n = kiln_rintf(a * 2.0f);
  float r = a - n * 0.5f;
  float q = n - 4.0f * kiln_floorf(n * 0.25f);
  double rd = (double)r * 0x1.921fb54442d18p+1;
  double z = rd * rd;
  double s = -1.0 / 39916800.0;
  s = s * z + 1.0 / 362880.0;
  s = s * z - 1.0 / 5040.0;
  s = s * z + 1.0 / 120.0;
  s = s * z - 1.0 / 6.0;
  s = rd + rd * z * s;
  double c = 1.0 / 479001600.0;
  c = c * z - 1.0 / 3628800.0;
  c = c * z + 1.0 / 40320.0;
  c = c * z - 1.0 / 720.0;
  c = c * z + 1.0 / 24.0;
  c = c * z - 0.5;
  c = 1.0 + z * c;
  double v = (q == 1.0f || q == 3.0f) ? c : s;
  v = q >= 2.0f ? -v : v;
  return kiln_f2u(x) >> 31 ? -v : v;
}

KILN_DEF float lgamma(float x, int* sign_out) {
  double xd = x;
  bool reflect = xd < 0.5;
  double arg = reflect ? 1.0 - xd : xd; /* exact for floats */
  arg = kiln_isinff(x) || x != x ? 1.0 : arg;
  double lg = kiln_lgamma_pos(arg);
  double sp = kiln_sinpi_d(reflect ? x : 0.5f);
  /* gamma(x) gamma(1 - x) = pi / sin(pi x) */
  double refl = kiln_log_d(0x1.921fb54442d18p+1 / kiln_fabsd(sp)) - lg;
  float r = (float)(reflect ? refl : lg);
  int sign = (reflect && sp < 0.0) ? -1 : 1;
  bool pole = reflect && sp == 0.0; /* 0 and the negative integers */
  r = pole ? __builtin_inff() : r;
  r = (x == 1.0f || x == 2.0f) ? 0.0f : r; /* exact zeros of lgamma */
  sign = pole ? ((x == 0.0f && !(kiln_f2u(x) >> 31)) ? 1 : (x == 0.0f ? -1 : 0)) : sign;
  r = kiln_isinff(x) ? __builtin_inff() : r;
  *sign_out = kiln_isinff(x) && x < 0.0f ? 0 : sign;
  return x != x ? x : r;
}

KILN_DEF float lgamma(float x) {
  int sign;
  return lgamma(x, &sign);
}

KILN_DEF float tgamma(float x) {
  double xd = x;
  bool reflect = xd < 0.5;
  double arg = reflect ? 1.0 - xd : xd;
  arg = kiln_isinff(x) || x != x ? 1.0 : (arg < 200.0 ? arg : 200.0);
  double g = kiln_exp_d(kiln_lgamma_pos(arg)); /* gamma(arg), inf when above the double range */
  double sp = kiln_sinpi_d(reflect ? x : 0.5f);
  double refl = 0x1.921fb54442d18p+1 / (sp * g);
  float r = (float)(reflect ? refl : g);
  r = reflect && sp == 0.0 ? kiln_nanf() : r; /* negative integers */
  r = x == 0.0f ? kiln_copysignf(__builtin_inff(), x) : r;
  r = x == __builtin_inff() ? x : r;
  r = x == -__builtin_inff() ? kiln_nanf() : r;
  return x != x ? x : r;
}

KILN_VEC1(erf)
KILN_VEC1(erfc)
KILN_VEC1(lgamma)
KILN_VEC1(tgamma)
KILN_VECPTR(lgamma, int)
