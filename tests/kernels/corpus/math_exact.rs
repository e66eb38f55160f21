// The functions whose results are exact (documented 0 ulp, or correctly rounded): fabs, floor, ceil, round,
// trunc, rint, fract (both forms), rsFrac, fmin, fmax, fmod, copysign, fdim, and a float4 overload.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.exact)

#define UNARY(fn) float RS_KERNEL k_##fn(float in) { return fn(in); }
#define BINARY(fn) float RS_KERNEL k_##fn(float a, float b) { return fn(a, b); }

UNARY(fabs)
UNARY(floor)
UNARY(ceil)
UNARY(round)
UNARY(trunc)
UNARY(rint)
UNARY(fract)
UNARY(rsFrac)
BINARY(fmin)
BINARY(fmax)
BINARY(fmod)
BINARY(copysign)
BINARY(fdim)

/* fract with the floor stored: (fraction, floor) */
float2 RS_KERNEL k_fract_floor(float in) {
  float whole;
  const float part = fract(in, &whole);
  return (float2){part, whole};
}

float4 RS_KERNEL k_floor4(float4 in) { return floor(in) + ceil(in.wzyx); }
