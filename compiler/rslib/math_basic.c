/* Exact functions: rounding, sign and exponent manipulation, fma, fmod/remainder/remquo. All are exact (0 ulp
 * or correctly rounded) for every input, including denormals, infinities and NaNs. */
#include "rslib_internal.h"

KILN_DEF float fabs(float x) { return kiln_fabsf(x); }
KILN_DEF float copysign(float x, float y) { return kiln_copysignf(x, y); }
KILN_DEF float rint(float x) { return kiln_rintf(x); }

KILN_DEF float floor(float x) { return kiln_floorf(x); }
KILN_DEF float ceil(float x) {
  float r = kiln_rintf(x);
  r = r < x ? r + 1.0f : r;
  return kiln_copysignf(r, x); /* ceil(-0.5) is -0 */
}
KILN_DEF float trunc(float x) { return kiln_copysignf(kiln_floorf(kiln_fabsf(x)), x); }
KILN_DEF float round(float x) {
  float a = kiln_fabsf(x);
  float t = kiln_floorf(a);
  float r = a - t >= 0.5f ? t + 1.0f : t; /* a - t is exact */
  r = a < 0x1p23f ? r : a;
  return kiln_copysignf(r, x);
}

KILN_DEF float fmax(float x, float y) { return (x < y || x != x) ? y : x; }
KILN_DEF float fmin(float x, float y) { return (y < x || x != x) ? y : x; }
KILN_DEF float fdim(float x, float y) {
  float r = x > y ? x - y : 0.0f;
  return (x != x || y != y) ? x + y : r;
}

/* Correctly rounded fma without the fma instruction: the product is exact in double; the sum is rounded to
 * odd (round-to-nearest plus a sticky fix from the exact error), which makes the final rounding to float
 * correct because double carries more than 24 + 2 bits. */
KILN_DEF float fma(float a, float b, float c) {
  double p = (double)a * (double)b;
  double cd = c;
  double s = p + cd;
  double bv = s - p;
  double err = (p - (s - bv)) + (cd - bv);
  ulong sb = kiln_d2u(s);
  bool inexact = err != 0.0 && kiln_fabsd(s) < __builtin_inf() && err == err;
  bool even = (sb & 1u) == 0;
  bool away = (err > 0.0) == (s > 0.0);
  ulong odd = away ? sb + 1 : sb - 1;
  double rto = kiln_u2d(inexact && even ? odd : sb);
  return (float)rto;
}

/* frexp/ilogb/logb: the exponent of a float, with denormals normalised by a 2^32 scale. */
KILN_HELPER int kiln_exponent(float x) {
  float a = kiln_fabsf(x);
  bool den = a < 0x1p-126f;
  uint b = kiln_f2u(den ? a * 0x1p32f : a);
  return (int)(b >> 23) - 127 - (den ? 32 : 0);
}

KILN_DEF float frexp(float x, int* exp_out) {
  float a = kiln_fabsf(x);
  bool special = a == 0.0f || a == __builtin_inff() || x != x;
  bool den = a < 0x1p-126f;
  uint b = kiln_f2u(den ? x * 0x1p32f : x);
  int e = (int)((b >> 23) & 0xffu) - 126 - (den ? 32 : 0);
  float m = kiln_u2f((b & 0x807fffffu) | 0x3f000000u);
  *exp_out = special ? 0 : e;
  return special ? x : m;
}

KILN_DEF int ilogb(float x) {
  int e = kiln_exponent(x);
  e = x == 0.0f ? FP_ILOGB0 : e;
  e = kiln_isinff(x) ? 2147483647 : e;
  return x != x ? FP_ILOGBNAN : e;
}

KILN_DEF float logb(float x) {
  float e = (float)kiln_exponent(x);
  e = x == 0.0f ? -__builtin_inff() : e;
  e = kiln_isinff(x) ? __builtin_inff() : e;
  return x != x ? x : e;
}

/* x * 2^n, rounded once: exact in double for every float x and |n| <= 300, then one rounding to float. */
KILN_DEF float ldexp(float x, int n) {
  n = n < -300 ? -300 : (n > 300 ? 300 : n);
  return (float)((double)x * kiln_pow2d(n));
}

KILN_DEF float modf(float x, float* iptr) {
  float i = trunc(x);
  *iptr = i;
  float f = kiln_copysignf(x - i, x);
  return kiln_isinff(x) ? kiln_copysignf(0.0f, x) : f;
}

KILN_DEF float fract(float x, float* iptr) {
  float fl = kiln_floorf(x);
  *iptr = fl;
  float r = x - fl;
  r = r < 0x1.fffffep-1f ? r : 0x1.fffffep-1f;
  r = x != x ? x : r;
  r = kiln_isinff(x) ? kiln_copysignf(0.0f, x) : r;
  return x == 0.0f ? x : r;
}
KILN_DEF float fract(float x) {
  float ignored;
  return fract(x, &ignored);
}
KILN_DEF float rsFrac(float x) { return fract(x); }

KILN_DEF float nextafter(float x, float y) {
  uint b = kiln_f2u(x);
  bool up = (y > x) == (x > 0.0f); /* away from zero */
  float r = kiln_u2f(up ? b + 1 : b - 1);
  r = x == 0.0f ? kiln_copysignf(0x1p-149f, y) : r;
  r = x == y ? y : r;
  return (x != x || y != y) ? x + y : r;
}

KILN_DEF float nan(uint code) { return kiln_u2f(0x7fc00000u | (code & 0x003fffffu)); }

/* ---- fmod, remainder, remquo: exact integer arithmetic on the significands, branch-free ---- */

/* a * b mod m, for a * b < 2^62 and m < 2^31: the quotient estimate in double is off by at most one. */
KILN_HELPER ulong kiln_mulmod(ulong a, ulong b, ulong m) {
  ulong prod = a * b;
  long q = (long)((double)prod / (double)m);
  long r = (long)(prod - (ulong)q * m);
  r = r < 0 ? r + (long)m : r;
  r = r < 0 ? r + (long)m : r;
  r = r >= (long)m ? r - (long)m : r;
  r = r >= (long)m ? r - (long)m : r;
  return (ulong)r;
}

/* n / d and n mod d for n < 2^49, d < 2^49 (d >= 1), exactly. */
KILN_HELPER ulong kiln_divmod(ulong n, ulong d, ulong* rem) {
  long q = (long)((double)n / (double)d);
  long r = (long)(n - (ulong)q * d);
  q = r < 0 ? q - 1 : q;
  r = r < 0 ? r + (long)d : r;
  q = r >= (long)d ? q + 1 : q;
  r = r >= (long)d ? r - (long)d : r;
  *rem = (ulong)r;
  return (ulong)q;
}

KILN_HELPER void kiln_decompose(float a, ulong* m, int* e) {
  uint b = kiln_f2u(a) & 0x7fffffffu;
  uint ex = b >> 23;
  *m = ex != 0 ? ((b & 0x7fffffu) | 0x800000u) : b;
  *e = (ex != 0 ? (int)ex : 1) - 150;
}

/* For finite x and finite nonzero y: |x| = (Q * Y + R) * 2^scale exactly with 0 <= R < Y, where Y * 2^scale
 * is |y| (or something larger than 2|x| when |y| is far above |x|), and q7 = Q mod 128. */
typedef struct KilnRemParts {
  double r;     /* R */
  double y;     /* Y */
  double scale; /* 2^scale */
  uint q7;
} KilnRemParts;

KILN_HELPER KilnRemParts kiln_rem_parts(float x, float y) {
  ulong mx, my;
  int ex, ey;
  kiln_decompose(x, &mx, &ex);
  kiln_decompose(y, &my, &ey);
  int d = ex - ey;
  /* d >= 0: X = mx * 2^d mod (128 * my) by square-and-multiply over the 8 bits of d (d <= 253). */
  ulong m128 = my * 128u;
  uint dd = d >= 0 ? (uint)d : 0u;
  ulong pw = 1, base = 2;
  for (int i = 0; i < 8; ++i) {
    pw = ((dd >> i) & 1u) ? kiln_mulmod(pw, base, m128) : pw;
    base = kiln_mulmod(base, base, m128);
  }
  ulong xa = kiln_mulmod(mx, pw, m128);
  ulong ra;
  ulong qa = kiln_divmod(xa, my, &ra);
  /* d < 0: |x| = mx * 2^ex, |y| = (my << -d) * 2^ex. */
  int sh = d < 0 ? (-d < 25 ? -d : 25) : 0;
  ulong yb = my << sh;
  ulong rb;
  ulong qb = kiln_divmod(mx, yb, &rb);
  KilnRemParts p;
  bool a = d >= 0;
  p.r = (double)(a ? ra : rb);
  p.y = (double)(a ? my : yb);
  p.scale = kiln_pow2d(a ? ey : ex);
  p.q7 = (uint)((a ? qa : qb) & 127u);
  return p;
}

KILN_HELPER bool kiln_rem_invalid(float x, float y) {
  return x != x || y != y || kiln_isinff(x) || y == 0.0f;
}

KILN_DEF float fmod(float x, float y) {
  bool invalid = kiln_rem_invalid(x, y);
  bool pass_x = !invalid && kiln_isinff(y);
  bool ok = !invalid && !pass_x;
  KilnRemParts p = kiln_rem_parts(ok ? x : 0.0f, ok ? y : 1.0f);
  float r = kiln_copysignf((float)(p.r * p.scale), x);
  r = pass_x ? x : r;
  return invalid ? kiln_nanf() : r;
}

KILN_DEF float remquo(float x, float y, int* quo) {
  bool invalid = kiln_rem_invalid(x, y);
  bool pass_x = !invalid && kiln_isinff(y);
  bool ok = !invalid && !pass_x;
  KilnRemParts p = kiln_rem_parts(ok ? x : 0.0f, ok ? y : 1.0f);
  /* Round the quotient to nearest, ties to even. */
  bool up = 2.0 * p.r > p.y || (2.0 * p.r == p.y && (p.q7 & 1u));
  double r = up ? p.r - p.y : p.r;
  uint q = (p.q7 + (up ? 1u : 0u)) & 127u;
  float res = (float)(r * p.scale);
  res = (x < 0.0f || (x == 0.0f && kiln_f2u(x) >> 31)) ? -res : res;
  bool neg_q = (kiln_f2u(x) ^ kiln_f2u(y)) >> 31;
  *quo = ok ? (neg_q ? -(int)q : (int)q) : 0;
  res = pass_x ? x : res;
  return invalid ? kiln_nanf() : res;
}

KILN_DEF float remainder(float x, float y) {
  int q;
  return remquo(x, y, &q);
}

KILN_VEC1(fabs)
KILN_VEC1(floor)
KILN_VEC1(ceil)
KILN_VEC1(rint)
KILN_VEC1(round)
KILN_VEC1(trunc)
KILN_VEC1(logb)
KILN_VEC1(fract)
KILN_VEC2(copysign)
KILN_VEC2(fmax)
KILN_VEC2(fmin)
KILN_VEC2(fdim)
KILN_VEC2(nextafter)
KILN_VEC2(fmod)
KILN_VEC2(remainder)
KILN_VECFI(ldexp)
KILN_VECPTR(frexp, int)
KILN_VECPTR(modf, float)
KILN_VECPTR(fract, float)

KILN_DEF float2 fmax(float2 a, float b) { return fmax(a, (float2)b); }
KILN_DEF float3 fmax(float3 a, float b) { return fmax(a, (float3)b); }
KILN_DEF float4 fmax(float4 a, float b) { return fmax(a, (float4)b); }
KILN_DEF float2 fmin(float2 a, float b) { return fmin(a, (float2)b); }
KILN_DEF float3 fmin(float3 a, float b) { return fmin(a, (float3)b); }
KILN_DEF float4 fmin(float4 a, float b) { return fmin(a, (float4)b); }
KILN_DEF float2 ldexp(float2 a, int n) { return ldexp(a, (int2)n); }
KILN_DEF float3 ldexp(float3 a, int n) { return ldexp(a, (int3)n); }
KILN_DEF float4 ldexp(float4 a, int n) { return ldexp(a, (int4)n); }

KILN_DEF float2 fma(float2 a, float2 b, float2 c) { return (float2){fma(a.x, b.x, c.x), fma(a.y, b.y, c.y)}; }
KILN_DEF float3 fma(float3 a, float3 b, float3 c) {
  return (float3){fma(a.x, b.x, c.x), fma(a.y, b.y, c.y), fma(a.z, b.z, c.z)};
}
KILN_DEF float4 fma(float4 a, float4 b, float4 c) {
  return (float4){fma(a.x, b.x, c.x), fma(a.y, b.y, c.y), fma(a.z, b.z, c.z), fma(a.w, b.w, c.w)};
}

KILN_DEF int2 ilogb(float2 v) { return (int2){ilogb(v.x), ilogb(v.y)}; }
KILN_DEF int3 ilogb(float3 v) { return (int3){ilogb(v.x), ilogb(v.y), ilogb(v.z)}; }
KILN_DEF int4 ilogb(float4 v) { return (int4){ilogb(v.x), ilogb(v.y), ilogb(v.z), ilogb(v.w)}; }
KILN_DEF float2 nan(uint2 v) { return (float2){nan(v.x), nan(v.y)}; }
KILN_DEF float3 nan(uint3 v) { return (float3){nan(v.x), nan(v.y), nan(v.z)}; }
KILN_DEF float4 nan(uint4 v) { return (float4){nan(v.x), nan(v.y), nan(v.z), nan(v.w)}; }

#define KILN_REMQUO_N(N, ...)                                     \
  KILN_DEF float##N remquo(float##N x, float##N y, int##N* quo) { \
    float##N r;                                                   \
    int##N q;                                                     \
    for (int i = 0; i < N; ++i) {                                 \
      int qi;                                                     \
      r[i] = remquo(x[i], y[i], &qi);                             \
      q[i] = qi;                                                  \
    }                                                             \
    *quo = q;                                                     \
    return r;                                                     \
  }
KILN_REMQUO_N(2)
KILN_REMQUO_N(3)
KILN_REMQUO_N(4)
