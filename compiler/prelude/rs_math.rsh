/* rs_math.rsh: the math, conversion, color, random and matrix functions of Kiln's kernel language.
 *
 * The names and overloads are RenderScript's (which follow OpenCL C). Every function is implemented in C in
 * compiler/rslib/, compiled to LLVM bitcode (kiln_rslib.bc) and linked into each kernel module by kilnc, so
 * a kernel never calls libm: the CPU driver inlines these bodies into the expanded x-loop and the loop
 * vectorizer vectorizes them. Accuracy bounds, special values and what vectorizes: docs/kernel-math.md.
 *
 * Every declaration carries `kiln_hal:<level>`, the HAL level a driver must implement to run a kernel that
 * calls it (kilnc reads these annotations); everything here is level 1.0.
 *
 * Overloads: float, float2, float3, float4 for every math function. There are deliberately no double math
 * overloads: with float as the only scalar floating-point overload, `sin(x * 2.0)` and `sqrt(2)` resolve to
 * the float function as in RenderScript, whereas a double (or half) overload would make them ambiguous. The
 * half overloads (half, half2, half3, half4; computed in float and rounded once to half) are therefore
 * declared only when KILN_HALF_MATH is defined before this header, on targets with _Float16
 * (KILN_HAS_HALF). */
#ifndef KILN_RS_MATH_RSH
#define KILN_RS_MATH_RSH

#include "rs_types.rsh"

#if defined(KILN_HAS_HALF) && defined(KILN_HALF_MATH)
#define KILN_RS_HALF_OVERLOADS 1
#endif

#define _RS_OVL __attribute__((overloadable))
#define _RS_HAL10 __attribute__((annotate("kiln_hal:1.0")))
/* A pure function of its arguments: lets LLVM CSE and hoist calls before they are inlined. */
#define _RS_FN extern _RS_OVL _RS_HAL10 __attribute__((const))
/* Writes through a pointer argument or has state. */
#define _RS_FNP extern _RS_OVL _RS_HAL10
/* Small enough to live in the header. */
#define _RS_INL static inline __attribute__((always_inline)) _RS_OVL _RS_HAL10

/* ---- Constants (RenderScript's M_* names) ---- */
#define M_E 2.718281828459045f
#define M_LOG2E 1.442695040888963f
#define M_LOG10E 0.4342944819032518f
#define M_LN2 0.6931471805599453f
#define M_LN10 2.302585092994046f
#define M_PI 3.141592653589793f
#define M_PI_2 1.5707963267948966f
#define M_PI_4 0.7853981633974483f
#define M_1_PI 0.3183098861837907f
#define M_2_PI 0.6366197723675814f
#define M_2_PIl 0.6366197723675814f
#define M_2_SQRTPI 1.1283791670955126f
#define M_SQRT2 1.4142135623730951f
#define M_SQRT1_2 0.7071067811865476f
#define FLT_MAX 3.402823466e+38f
#define FLT_MIN 1.175494351e-38f
#define FLT_EPSILON 1.192092896e-07f
#define HUGE_VALF __builtin_huge_valf()
#define INFINITY __builtin_inff()
#define NAN __builtin_nanf("")
#define FP_ILOGB0 (-2147483647 - 1)
#define FP_ILOGBNAN 2147483647

/* ---- Declaration helpers: one line per function declares all widths ---- */
#ifdef KILN_RS_HALF_OVERLOADS
#define _RS_HALF_1(name)                                                         \
  _RS_FN half name(half);                                                             \
  _RS_FN half2 name(half2);                                                           \
  _RS_FN half3 name(half3);                                                           \
  _RS_FN half4 name(half4);
#define _RS_HALF_2(name)                                                              \
  _RS_FN half name(half, half);                                                       \
  _RS_FN half2 name(half2, half2);                                                    \
  _RS_FN half3 name(half3, half3);                                                    \
  _RS_FN half4 name(half4, half4);
#else
#define _RS_HALF_1(name)
#define _RS_HALF_2(name)
#endif

/* gentype f(gentype) */
#define _RS_F1(name)                                                                  \
  _RS_FN float name(float);                                                           \
  _RS_FN float2 name(float2);                                                         \
  _RS_FN float3 name(float3);                                                         \
  _RS_FN float4 name(float4);                                                         \
  _RS_HALF_1(name)
/* gentype f(gentype, gentype) */
#define _RS_F2(name)                                                                  \
  _RS_FN float name(float, float);                                                    \
  _RS_FN float2 name(float2, float2);                                                 \
  _RS_FN float3 name(float3, float3);                                                 \
  _RS_FN float4 name(float4, float4);                                                 \
  _RS_HALF_2(name)
/* float-only forms (native_*, half_*): no half overloads */
#define _RS_F1_FLOAT(name)                                                            \
  _RS_FN float name(float);                                                           \
  _RS_FN float2 name(float2);                                                         \
  _RS_FN float3 name(float3);                                                         \
  _RS_FN float4 name(float4);
#define _RS_F2_FLOAT(name)                                                            \
  _RS_FN float name(float, float);                                                    \
  _RS_FN float2 name(float2, float2);                                                 \
  _RS_FN float3 name(float3, float3);                                                 \
  _RS_FN float4 name(float4, float4);

/* ---- Full-precision math (bounds: OpenCL full profile, see docs/kernel-math.md) ---- */
_RS_F1(acos)
_RS_F1(acosh)
_RS_F1(acospi)
_RS_F1(asin)
_RS_F1(asinh)
_RS_F1(asinpi)
_RS_F1(atan)
_RS_F1(atanh)
_RS_F1(atanpi)
_RS_F1(cbrt)
_RS_F1(ceil)
_RS_F1(cos)
_RS_F1(cosh)
_RS_F1(cospi)
_RS_F1(erf)
_RS_F1(erfc)
_RS_F1(exp)
_RS_F1(exp10)
_RS_F1(exp2)
_RS_F1(expm1)
_RS_F1(fabs)
_RS_F1(floor)
_RS_F1(lgamma)
_RS_F1(log)
_RS_F1(log10)
_RS_F1(log1p)
_RS_F1(log2)
_RS_F1(logb)
_RS_F1(rint)
_RS_F1(round)
_RS_F1(rsqrt)
_RS_F1(sin)
_RS_F1(sinh)
_RS_F1(sinpi)
_RS_F1(sqrt)
_RS_F1(tan)
_RS_F1(tanh)
_RS_F1(tanpi)
_RS_F1(tgamma)
_RS_F1(trunc)
_RS_F1(fract)   /* RenderScript's one-argument fract: v - floor(v), at most 0x1.fffffep-1f */
_RS_FN float rsFrac(float v); /* fract(v) */

_RS_F2(atan2)
_RS_F2(atan2pi)
_RS_F2(copysign)
_RS_F2(fdim)
_RS_F2(fmod)
_RS_F2(hypot)
_RS_F2(nextafter)
_RS_F2(pow)
_RS_F2(powr)
_RS_F2(remainder)
_RS_F2(fmax)
_RS_F2(fmin)

/* fmax/fmin with a scalar second argument */
_RS_FN float2 fmax(float2, float);
_RS_FN float3 fmax(float3, float);
_RS_FN float4 fmax(float4, float);
_RS_FN float2 fmin(float2, float);
_RS_FN float3 fmin(float3, float);
_RS_FN float4 fmin(float4, float);

/* gentype f(gentype, gentype, gentype) */
_RS_FN float fma(float, float, float);
_RS_FN float2 fma(float2, float2, float2);
_RS_FN float3 fma(float3, float3, float3);
_RS_FN float4 fma(float4, float4, float4);

/* Integer-argument forms */
#define _RS_FI(name)                                                                  \
  _RS_FN float name(float, int);                                                      \
  _RS_FN float2 name(float2, int2);                                                   \
  _RS_FN float3 name(float3, int3);                                                   \
  _RS_FN float4 name(float4, int4);
_RS_FI(ldexp)
_RS_FI(pown)
_RS_FI(rootn)
_RS_FN float2 ldexp(float2, int);
_RS_FN float3 ldexp(float3, int);
_RS_FN float4 ldexp(float4, int);

_RS_FN int ilogb(float);
_RS_FN int2 ilogb(float2);
_RS_FN int3 ilogb(float3);
_RS_FN int4 ilogb(float4);

_RS_FN float nan(uint);
_RS_FN float2 nan(uint2);
_RS_FN float3 nan(uint3);
_RS_FN float4 nan(uint4);

/* Functions that also write through a pointer. */
#define _RS_FP(name, ptrtype2)                                                        \
  _RS_FNP float name(float, ptrtype2##1);                                             \
  _RS_FNP float2 name(float2, ptrtype2##2);                                           \
  _RS_FNP float3 name(float3, ptrtype2##3);                                           \
  _RS_FNP float4 name(float4, ptrtype2##4);
typedef float* _rs_floatp1;
typedef float2* _rs_floatp2;
typedef float3* _rs_floatp3;
typedef float4* _rs_floatp4;
typedef int* _rs_intp1;
typedef int2* _rs_intp2;
typedef int3* _rs_intp3;
typedef int4* _rs_intp4;
_RS_FP(fract, _rs_floatp)   /* returns min(v - floor(v), 0x1.fffffep-1f), stores floor(v) */
_RS_FP(modf, _rs_floatp)    /* returns the signed fractional part, stores the integral part */
_RS_FP(sincos, _rs_floatp)  /* returns sin(v), stores cos(v) */
_RS_FP(frexp, _rs_intp)     /* returns the mantissa in [0.5, 1), stores the exponent */
_RS_FP(lgamma, _rs_intp)    /* returns lgamma(v), stores the sign of gamma(v) */
_RS_FNP float remquo(float, float, int*);
_RS_FNP float2 remquo(float2, float2, int2*);
_RS_FNP float3 remquo(float3, float3, int3*);
_RS_FNP float4 remquo(float4, float4, int4*);

/* ---- native_*: faster, relaxed accuracy (bounds in docs/kernel-math.md) ---- */
_RS_F1_FLOAT(native_acos)
_RS_F1_FLOAT(native_acosh)
_RS_F1_FLOAT(native_acospi)
_RS_F1_FLOAT(native_asin)
_RS_F1_FLOAT(native_asinh)
_RS_F1_FLOAT(native_asinpi)
_RS_F1_FLOAT(native_atan)
_RS_F1_FLOAT(native_atanh)
_RS_F1_FLOAT(native_atanpi)
_RS_F1_FLOAT(native_cbrt)
_RS_F1_FLOAT(native_cos)
_RS_F1_FLOAT(native_cosh)
_RS_F1_FLOAT(native_cospi)
_RS_F1_FLOAT(native_exp)
_RS_F1_FLOAT(native_exp10)
_RS_F1_FLOAT(native_exp2)
_RS_F1_FLOAT(native_expm1)
_RS_F1_FLOAT(native_log)
_RS_F1_FLOAT(native_log10)
_RS_F1_FLOAT(native_log1p)
_RS_F1_FLOAT(native_log2)
_RS_F1_FLOAT(native_recip)
_RS_F1_FLOAT(native_rsqrt)
_RS_F1_FLOAT(native_sin)
_RS_F1_FLOAT(native_sinh)
_RS_F1_FLOAT(native_sinpi)
_RS_F1_FLOAT(native_sqrt)
_RS_F1_FLOAT(native_tan)
_RS_F1_FLOAT(native_tanh)
_RS_F1_FLOAT(native_tanpi)
_RS_F2_FLOAT(native_atan2)
_RS_F2_FLOAT(native_atan2pi)
_RS_F2_FLOAT(native_divide)
_RS_F2_FLOAT(native_hypot)
_RS_F2_FLOAT(native_powr)
_RS_FN float native_rootn(float, int);
_RS_FN float2 native_rootn(float2, int2);
_RS_FN float3 native_rootn(float3, int3);
_RS_FN float4 native_rootn(float4, int4);
_RS_FNP float native_sincos(float, float*);
_RS_FNP float2 native_sincos(float2, float2*);
_RS_FNP float3 native_sincos(float3, float3*);
_RS_FNP float4 native_sincos(float4, float4*);

/* ---- half_*: OpenCL's reduced-precision forms (<= 8192 ulp) ---- */
_RS_F1_FLOAT(half_cos)
_RS_F1_FLOAT(half_exp)
_RS_F1_FLOAT(half_exp10)
_RS_F1_FLOAT(half_exp2)
_RS_F1_FLOAT(half_log)
_RS_F1_FLOAT(half_log10)
_RS_F1_FLOAT(half_log2)
_RS_F1_FLOAT(half_recip)
_RS_F1_FLOAT(half_rsqrt)
_RS_F1_FLOAT(half_sin)
_RS_F1_FLOAT(half_sqrt)
_RS_F1_FLOAT(half_tan)
_RS_F2_FLOAT(half_divide)
_RS_F2_FLOAT(half_powr)

/* ---- Header-only helpers ---- */

/* mad: a * b + c, fused where the target has a fast fma (OpenCL allows either). */
_RS_INL float mad(float a, float b, float c) { return a * b + c; }
_RS_INL float2 mad(float2 a, float2 b, float2 c) { return a * b + c; }
_RS_INL float3 mad(float3 a, float3 b, float3 c) { return a * b + c; }
_RS_INL float4 mad(float4 a, float4 b, float4 c) { return a * b + c; }

_RS_INL float degrees(float v) { return v * 57.295779513082320876f; }
_RS_INL float2 degrees(float2 v) { return v * 57.295779513082320876f; }
_RS_INL float3 degrees(float3 v) { return v * 57.295779513082320876f; }
_RS_INL float4 degrees(float4 v) { return v * 57.295779513082320876f; }
_RS_INL float radians(float v) { return v * 0.017453292519943295769f; }
_RS_INL float2 radians(float2 v) { return v * 0.017453292519943295769f; }
_RS_INL float3 radians(float3 v) { return v * 0.017453292519943295769f; }
_RS_INL float4 radians(float4 v) { return v * 0.017453292519943295769f; }

/* Float min/max/clamp follow RenderScript: plain comparisons (for NaN-aware versions use fmin/fmax). */
#define _RS_FMINMAX(T)                                                                \
  _RS_INL T min(T a, T b) { return __builtin_elementwise_min(a, b); }                 \
  _RS_INL T max(T a, T b) { return __builtin_elementwise_max(a, b); }                 \
  _RS_INL T clamp(T v, T lo, T hi) { return min(max(v, lo), hi); }
_RS_FMINMAX(float)
_RS_FMINMAX(float2)
_RS_FMINMAX(float3)
_RS_FMINMAX(float4)
#define _RS_FMINMAX_S(T)                                                              \
  _RS_INL T min(T a, float b) { return __builtin_elementwise_min(a, (T)b); }          \
  _RS_INL T max(T a, float b) { return __builtin_elementwise_max(a, (T)b); }          \
  _RS_INL T clamp(T v, float lo, float hi) { return min(max(v, (T)lo), (T)hi); }      \
  _RS_INL T mix(T a, T b, float t) { return a + (b - a) * t; }                        \
  _RS_INL T step(T edge, float v) { return step(edge, (T)v); }                        \
  _RS_INL T step(float edge, T v) { return step((T)edge, v); }                        \
  _RS_INL T smoothstep(float e0, float e1, T v) { return smoothstep((T)e0, (T)e1, v); }

/* step(edge, v): 0 where v < edge, else 1 (NaN v gives 1, as v < edge is false). */
_RS_INL float step(float edge, float v) { return v < edge ? 0.0f : 1.0f; }
#define _RS_STEP_V(T, I)                                                              \
  _RS_INL T step(T edge, T v) {                                                       \
    I lt = v < edge; /* -1 where true */                                              \
    return __builtin_convertvector(lt + (I)1, T);                                     \
  }
_RS_STEP_V(float2, int2)
_RS_STEP_V(float3, int3)
_RS_STEP_V(float4, int4)

#define _RS_MIX_SMOOTH(T)                                                             \
  _RS_INL T mix(T a, T b, T t) { return a + (b - a) * t; }                            \
  _RS_INL T smoothstep(T e0, T e1, T v) {                                             \
    T t = clamp((v - e0) / (e1 - e0), (T)0.0f, (T)1.0f);                              \
    return t * t * ((T)3.0f - 2.0f * t);                                              \
  }
_RS_MIX_SMOOTH(float)
_RS_MIX_SMOOTH(float2)
_RS_MIX_SMOOTH(float3)
_RS_MIX_SMOOTH(float4)
_RS_FMINMAX_S(float2)
_RS_FMINMAX_S(float3)
_RS_FMINMAX_S(float4)

/* sign: 1.0 for v > 0, -1.0 for v < 0, v itself for +-0 and NaN. */
_RS_INL float sign(float v) { return v > 0.0f ? 1.0f : (v < 0.0f ? -1.0f : v); }
_RS_INL float2 sign(float2 v) { return (float2){sign(v.x), sign(v.y)}; }
_RS_INL float3 sign(float3 v) { return (float3){sign(v.x), sign(v.y), sign(v.z)}; }
_RS_INL float4 sign(float4 v) { return (float4){sign(v.x), sign(v.y), sign(v.z), sign(v.w)}; }

/* ---- Integer abs/min/max/clamp; rsClamp ---- */
#define _RS_INT_MINMAX(T)                                                             \
  _RS_INL T min(T a, T b) { return __builtin_elementwise_min(a, b); }                 \
  _RS_INL T max(T a, T b) { return __builtin_elementwise_max(a, b); }                 \
  _RS_INL T clamp(T v, T lo, T hi) { return min(max(v, lo), hi); }
#define _RS_INT_ALL(S)                                                                \
  _RS_INT_MINMAX(S)                                                                   \
  _RS_INT_MINMAX(S##2)                                                                \
  _RS_INT_MINMAX(S##3)                                                                \
  _RS_INT_MINMAX(S##4)                                                                \
  _RS_INL S##2 clamp(S##2 v, S lo, S hi) { return clamp(v, (S##2)lo, (S##2)hi); }    \
  _RS_INL S##3 clamp(S##3 v, S lo, S hi) { return clamp(v, (S##3)lo, (S##3)hi); }    \
  _RS_INL S##4 clamp(S##4 v, S lo, S hi) { return clamp(v, (S##4)lo, (S##4)hi); }
_RS_INT_ALL(char)
_RS_INT_ALL(uchar)
_RS_INT_ALL(short)
_RS_INT_ALL(ushort)
_RS_INT_ALL(int)
_RS_INT_ALL(uint)
_RS_INT_ALL(long)
_RS_INT_ALL(ulong)

/* abs of a signed integer returns the unsigned type, so abs(INT_MIN) is representable. */
#define _RS_INT_ABS(S, U)                                                             \
  _RS_INL U abs(S v) { return v < 0 ? (U)0 - (U)v : (U)v; }                           \
  _RS_INL U##2 abs(S##2 v) { return __builtin_convertvector(__builtin_elementwise_abs(v), U##2); } \
  _RS_INL U##3 abs(S##3 v) { return __builtin_convertvector(__builtin_elementwise_abs(v), U##3); } \
  _RS_INL U##4 abs(S##4 v) { return __builtin_convertvector(__builtin_elementwise_abs(v), U##4); }
_RS_INT_ABS(char, uchar)
_RS_INT_ABS(short, ushort)
_RS_INT_ABS(int, uint)
_RS_INT_ABS(long, ulong)

/* clz: the leading zero bits of a value of the argument's own width (clz(0) is the width: 8, 16 or 32), lane by
 * lane for vectors. The 32-bit count is written so that it holds at 0 (__builtin_clz(0) is undefined). */
_RS_INL uint _rs_clz32(uint v) { return v == 0u ? 32u : (uint)__builtin_clz(v); }
#define _RS_CLZ(T, U, BITS)                                                           \
  _RS_INL T clz(T v) { return (T)(_rs_clz32((uint)(U)v) - (32u - BITS)); }            \
  _RS_INL T##2 clz(T##2 v) { return (T##2){clz(v.x), clz(v.y)}; }                     \
  _RS_INL T##3 clz(T##3 v) { return (T##3){clz(v.x), clz(v.y), clz(v.z)}; }           \
  _RS_INL T##4 clz(T##4 v) { return (T##4){clz(v.x), clz(v.y), clz(v.z), clz(v.w)}; }
_RS_CLZ(char, uchar, 8u)
_RS_CLZ(uchar, uchar, 8u)
_RS_CLZ(short, ushort, 16u)
_RS_CLZ(ushort, ushort, 16u)
_RS_CLZ(int, uint, 32u)
_RS_CLZ(uint, uint, 32u)

#define _RS_CLAMP(T)                                                                  \
  _RS_INL T rsClamp(T amount, T low, T high) {                                        \
    return amount < low ? low : (amount > high ? high : amount);                      \
  }
_RS_CLAMP(char)
_RS_CLAMP(uchar)
_RS_CLAMP(short)
_RS_CLAMP(ushort)
_RS_CLAMP(int)
_RS_CLAMP(uint)

/* ---- Geometry ---- */
_RS_INL float dot(float a, float b) { return a * b; }
_RS_INL float dot(float2 a, float2 b) { return a.x * b.x + a.y * b.y; }
_RS_INL float dot(float3 a, float3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
_RS_INL float dot(float4 a, float4 b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
_RS_INL float3 cross(float3 a, float3 b) { return a.yzx * b.zxy - a.zxy * b.yzx; }
_RS_INL float4 cross(float4 a, float4 b) {
  float3 c = cross(a.xyz, b.xyz);
  return (float4){c.x, c.y, c.z, 0.0f};
}
#define _RS_GEOM(T)                                                                   \
  _RS_FN float length(T);                                                             \
  _RS_FN float distance(T, T);                                                        \
  _RS_FN T normalize(T);                                                              \
  _RS_FN float fast_length(T);                                                        \
  _RS_FN float fast_distance(T, T);                                                   \
  _RS_FN T fast_normalize(T);                                                         \
  _RS_FN float native_length(T);                                                      \
  _RS_FN float native_distance(T, T);                                                 \
  _RS_FN T native_normalize(T);
_RS_GEOM(float)
_RS_GEOM(float2)
_RS_GEOM(float3)
_RS_GEOM(float4)

/* ---- Conversions: convert_<dst><N>(src<N>) for every pair of element types, N = 2, 3, 4.
 * Float to integer truncates toward zero; out-of-range values are undefined, as in RenderScript. ---- */
#define _RS_CVT_N(D, S, N)                                                            \
  _RS_INL D##N convert_##D##N(S##N v) { return __builtin_convertvector(v, D##N); }
#define _RS_CVT(D, S) _RS_CVT_N(D, S, 2) _RS_CVT_N(D, S, 3) _RS_CVT_N(D, S, 4)
#define _RS_CVT_TO(D)                                                                 \
  _RS_CVT(D, char) _RS_CVT(D, uchar) _RS_CVT(D, short) _RS_CVT(D, ushort) _RS_CVT(D, int) \
  _RS_CVT(D, uint) _RS_CVT(D, long) _RS_CVT(D, ulong) _RS_CVT(D, float) _RS_CVT(D, double) _RS_CVT_HALF(D)
#ifdef KILN_HAS_HALF
#define _RS_CVT_HALF(D) _RS_CVT(D, half)
#else
#define _RS_CVT_HALF(D)
#endif
_RS_CVT_TO(char)
_RS_CVT_TO(uchar)
_RS_CVT_TO(short)
_RS_CVT_TO(ushort)
_RS_CVT_TO(int)
_RS_CVT_TO(uint)
_RS_CVT_TO(long)
_RS_CVT_TO(ulong)
_RS_CVT_TO(float)
_RS_CVT_TO(double)
#ifdef KILN_HAS_HALF
_RS_CVT_TO(half)
#endif

/* ---- Colors ---- */
_RS_INL uchar4 rsPackColorTo8888(float4 color) {
  float4 c = clamp(color, 0.0f, 1.0f) * 255.0f + 0.5f;
  return __builtin_convertvector(c, uchar4);
}
_RS_INL uchar4 rsPackColorTo8888(float3 color) {
  return rsPackColorTo8888((float4){color.x, color.y, color.z, 1.0f});
}
_RS_INL uchar4 rsPackColorTo8888(float r, float g, float b) {
  return rsPackColorTo8888((float4){r, g, b, 1.0f});
}
_RS_INL uchar4 rsPackColorTo8888(float r, float g, float b, float a) {
  return rsPackColorTo8888((float4){r, g, b, a});
}
_RS_INL float4 rsUnpackColor8888(uchar4 c) {
  return __builtin_convertvector(c, float4) * (1.0f / 255.0f);
}

/* ---- Random numbers ----
 * A SplitMix64 stream shared by all threads of a script: each call takes the next counter value with one
 * atomic add, so concurrent calls never repeat a value and never race. The sequence starts at a fixed seed
 * for each script instance (deterministic runs); calls from several threads interleave nondeterministically.
 * rsRand does not vectorize (it has state); use it outside hot loops or accept scalar code there. */
_RS_FNP int rsRand(int max_value);          /* [0, max_value) for max_value > 0, else 0 */
_RS_FNP int rsRand(int min_value, int max_value);        /* [min_value, max_value), or min_value if empty */
_RS_FNP float rsRand(float max_value);      /* [0, max_value) */
_RS_FNP float rsRand(float min_value, float max_value);  /* [min_value, max_value) */

/* ---- Matrices: column-major, m[column * N + row], as RenderScript ---- */
typedef struct rs_matrix2x2 { float m[4]; } rs_matrix2x2;
typedef struct rs_matrix3x3 { float m[9]; } rs_matrix3x3;
typedef struct rs_matrix4x4 { float m[16]; } rs_matrix4x4;
typedef float4 rs_quaternion;

#define _RS_MATRIX(M)                                                                 \
  _RS_FNP void rsMatrixSet(M* m, uint col, uint row, float v);                        \
  _RS_FNP float rsMatrixGet(const M* m, uint col, uint row);                          \
  _RS_FNP void rsMatrixLoadIdentity(M* m);                                            \
  _RS_FNP void rsMatrixLoad(M* destination, const float* array);                      \
  _RS_FNP void rsMatrixLoad(M* destination, const M* source);                         \
  _RS_FNP void rsMatrixLoadMultiply(M* m, const M* lhs, const M* rhs);                \
  _RS_FNP void rsMatrixMultiply(M* m, const M* rhs);                                  \
  _RS_FNP void rsMatrixTranspose(M* m);
_RS_MATRIX(rs_matrix2x2)
_RS_MATRIX(rs_matrix3x3)
_RS_MATRIX(rs_matrix4x4)
_RS_FNP void rsMatrixLoad(rs_matrix4x4* destination, const rs_matrix3x3* source);
_RS_FNP void rsMatrixLoad(rs_matrix4x4* destination, const rs_matrix2x2* source);
/* rsMatrixMultiply(m, v) = m * v (v a column vector; missing components are 0 for z and 1 for w). */
_RS_FNP float4 rsMatrixMultiply(const rs_matrix4x4* m, float4 in);
_RS_FNP float4 rsMatrixMultiply(const rs_matrix4x4* m, float3 in);
_RS_FNP float4 rsMatrixMultiply(const rs_matrix4x4* m, float2 in);
_RS_FNP float3 rsMatrixMultiply(const rs_matrix3x3* m, float3 in);
_RS_FNP float3 rsMatrixMultiply(const rs_matrix3x3* m, float2 in);
_RS_FNP float2 rsMatrixMultiply(const rs_matrix2x2* m, float2 in);
/* Inverse returns false (and leaves m unchanged) when m is singular. */
_RS_FNP bool rsMatrixInverse(rs_matrix4x4* m);
_RS_FNP bool rsMatrixInverseTranspose(rs_matrix4x4* m);
/* Transforms: angles in degrees, rotation about the axis (x, y, z) (normalized here). Load* replaces m; the
 * others post-multiply m by the transform (m = m * T), as RenderScript does. */
_RS_FNP void rsMatrixLoadRotate(rs_matrix4x4* m, float rot, float x, float y, float z);
_RS_FNP void rsMatrixLoadScale(rs_matrix4x4* m, float x, float y, float z);
_RS_FNP void rsMatrixLoadTranslate(rs_matrix4x4* m, float x, float y, float z);
_RS_FNP void rsMatrixRotate(rs_matrix4x4* m, float rot, float x, float y, float z);
_RS_FNP void rsMatrixScale(rs_matrix4x4* m, float x, float y, float z);
_RS_FNP void rsMatrixTranslate(rs_matrix4x4* m, float x, float y, float z);
_RS_FNP void rsMatrixLoadOrtho(rs_matrix4x4* m, float left, float right, float bottom, float top,
                               float near, float far);
_RS_FNP void rsMatrixLoadFrustum(rs_matrix4x4* m, float left, float right, float bottom, float top,
                                 float near, float far);
_RS_FNP void rsMatrixLoadPerspective(rs_matrix4x4* m, float fovy, float aspect, float near, float far);

/* ---- Quaternions: w + xi + yj + zk stored in a float4 as (x, y, z, w) ---- */
_RS_FNP void rsQuaternionSet(rs_quaternion* q, float w, float x, float y, float z);
_RS_FNP void rsQuaternionSet(rs_quaternion* q, const rs_quaternion* rhs);
_RS_FNP void rsQuaternionAdd(rs_quaternion* q, const rs_quaternion* rhs);
_RS_FNP void rsQuaternionMultiply(rs_quaternion* q, float scalar);
_RS_FNP void rsQuaternionMultiply(rs_quaternion* q, const rs_quaternion* rhs);
_RS_FNP void rsQuaternionConjugate(rs_quaternion* q);
_RS_FNP float rsQuaternionDot(const rs_quaternion* q0, const rs_quaternion* q1);
_RS_FNP void rsQuaternionNormalize(rs_quaternion* q);
_RS_FNP void rsQuaternionLoadRotateUnit(rs_quaternion* q, float rot, float x, float y, float z);
_RS_FNP void rsQuaternionLoadRotate(rs_quaternion* q, float rot, float x, float y, float z);
_RS_FNP void rsQuaternionGetMatrixUnit(rs_matrix4x4* m, const rs_quaternion* q);
_RS_FNP void rsQuaternionSlerp(rs_quaternion* q, const rs_quaternion* q0, const rs_quaternion* q1, float t);

#endif /* KILN_RS_MATH_RSH */
