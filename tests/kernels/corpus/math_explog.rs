// Exponentials, logarithms, powers and roots in rs_fp_full, one kernel each, plus float3/float2 overloads.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.explog)

#define UNARY(fn) float RS_KERNEL k_##fn(float in) { return fn(in); }
#define BINARY(fn) float RS_KERNEL k_##fn(float a, float b) { return fn(a, b); }

UNARY(exp)
UNARY(exp2)
UNARY(exp10)
UNARY(expm1)
UNARY(log)
UNARY(log2)
UNARY(log10)
UNARY(log1p)
UNARY(sqrt)
UNARY(rsqrt)
UNARY(cbrt)
BINARY(pow)
BINARY(powr)
BINARY(hypot)

float RS_KERNEL k_pown(float a, int n) { return pown(a, n); }
float RS_KERNEL k_rootn(float a, int n) { return rootn(a, n); }

float3 RS_KERNEL k_exp3(float3 in) { return exp(in); }
float2 RS_KERNEL k_pow2(float2 a, float2 b) { return pow(a, b); }
