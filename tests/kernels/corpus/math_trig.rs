// Trigonometric and hyperbolic functions in rs_fp_full, one kernel each (float), plus sincos and a float4
// overload; checked against the documented full-precision ULP bounds.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.trig)
#pragma rs_fp_full

#define UNARY(fn) float RS_KERNEL k_##fn(float in) { return fn(in); }
#define BINARY(fn) float RS_KERNEL k_##fn(float a, float b) { return fn(a, b); }

UNARY(sin)
UNARY(cos)
UNARY(tan)
UNARY(asin)
UNARY(acos)
UNARY(atan)
UNARY(sinpi)
UNARY(cospi)
UNARY(tanpi)
UNARY(asinpi)
UNARY(acospi)
UNARY(atanpi)
UNARY(sinh)
UNARY(cosh)
UNARY(tanh)
UNARY(asinh)
UNARY(acosh)
UNARY(atanh)
BINARY(atan2)
BINARY(atan2pi)

/* sin in .x, cos in .y */
float2 RS_KERNEL k_sincos(float in) {
  float c;
  const float s = sincos(in, &c);
  return (float2){s, c};
}

float4 RS_KERNEL k_atan4(float4 in) { return atan(in); }
