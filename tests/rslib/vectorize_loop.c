/* Kernel-style loops over x calling rslib functions, for rslib_vectorizes (vectorize_check.cmake): after
 * linking kiln_rslib.bc and optimizing for an AVX-512 CPU, each loop must be vectorized with no call left. */
#include "rs_math.rsh"

#define KT_LOOP(fn, expr)                                                         \
  void loop_##fn(float* restrict out, const float* restrict in, float c, int n) { \
    for (int i = 0; i < n; ++i) out[i] = expr;                                    \
  }
KT_LOOP(atan, atan(in[i] + c))
KT_LOOP(atan2, atan2(in[i], c))
KT_LOOP(exp, exp(in[i] * c))
KT_LOOP(exp2, exp2(in[i]))
KT_LOOP(log, log(in[i]))
KT_LOOP(log2, log2(in[i]))
KT_LOOP(log10, log10(in[i]))
KT_LOOP(exp10, exp10(in[i]))
KT_LOOP(expm1, expm1(in[i]))
KT_LOOP(sin, sin(in[i]))
KT_LOOP(cos, cos(in[i]))
KT_LOOP(tan, tan(in[i]))
KT_LOOP(tanh, tanh(in[i]))
KT_LOOP(pow, pow(in[i], c))
KT_LOOP(sqrt, sqrt(in[i]))
KT_LOOP(rsqrt, rsqrt(in[i]))
KT_LOOP(asin, asin(in[i]))
KT_LOOP(acos, acos(in[i]))
KT_LOOP(floor, floor(in[i]) + ceil(in[i]) + round(in[i]))
KT_LOOP(fma, fma(in[i], c, 1.0f))
KT_LOOP(fmod, fmod(in[i], c))
KT_LOOP(erf, erf(in[i]))
KT_LOOP(native_exp, native_exp(in[i]))
KT_LOOP(native_sin, native_sin(in[i]))
KT_LOOP(clamp_mix, mix(clamp(in[i], 0.0f, 1.0f), c, 0.5f))

/* float4 elements (RenderScript's common case): out[i] = atan(in[i]) on float4. */
void loop_atan4(float4* restrict out, const float4* restrict in, int n) {
  for (int i = 0; i < n; ++i) out[i] = atan(in[i]);
}
