// native_* functions: Kiln's faster forms, checked against the test bounds of docs/kernel-math.md over the
// documented domains.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.native)

#define UNARY(fn) float RS_KERNEL k_##fn(float in) { return fn(in); }
#define BINARY(fn) float RS_KERNEL k_##fn(float a, float b) { return fn(a, b); }

UNARY(native_exp)
UNARY(native_exp2)
UNARY(native_exp10)
UNARY(native_log)
UNARY(native_log2)
UNARY(native_log10)
UNARY(native_sin)
UNARY(native_cos)
UNARY(native_tan)
UNARY(native_atan)
UNARY(native_recip)
UNARY(native_sqrt)
UNARY(native_rsqrt)
UNARY(native_sinh)
UNARY(native_cbrt)
BINARY(native_powr)
BINARY(native_divide)
BINARY(native_atan2)

float4 RS_KERNEL k_native_exp4(float4 in) { return native_exp(in); }
