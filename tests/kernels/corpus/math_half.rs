// half_* functions (OpenCL's reduced precision, bound 8192 ulp).
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.halfmath)

#define UNARY(fn) float RS_KERNEL k_##fn(float in) { return fn(in); }
#define BINARY(fn) float RS_KERNEL k_##fn(float a, float b) { return fn(a, b); }

UNARY(half_exp)
UNARY(half_exp2)
UNARY(half_exp10)
UNARY(half_log)
UNARY(half_log2)
UNARY(half_log10)
UNARY(half_sin)
UNARY(half_cos)
UNARY(half_tan)
UNARY(half_sqrt)
UNARY(half_rsqrt)
UNARY(half_recip)
BINARY(half_divide)
BINARY(half_powr)
