/* length, distance, normalize and their fast_/native_ forms.
 * The full forms accumulate in double: no overflow or underflow for any finite float vector, and the result
 * is within 1 ulp. The fast_/native_ forms use float arithmetic and a float sqrt. */
#include "rslib_internal.h"

KILN_HELPER double kiln_sumsq4(float4 v) {
  double x = v.x, y = v.y, z = v.z, w = v.w;
  return x * x + y * y + z * z + w * w;
}
KILN_HELPER float kiln_length4(float4 v) {
  float r = (float)__builtin_sqrt(kiln_sumsq4(v));
  bool inf = kiln_isinff(v.x) || kiln_isinff(v.y) || kiln_isinff(v.z) || kiln_isinff(v.w);
  return inf ? __builtin_inff() : r;
}
/* OpenCL: zero vectors are returned unchanged; infinite components become +-1 (others 0) before normalizing.
 */
KILN_HELPER float4 kiln_normalize4(float4 v) {
  bool inf = kiln_isinff(v.x) || kiln_isinff(v.y) || kiln_isinff(v.z) || kiln_isinff(v.w);
  float4 u = v;
  if (inf) { /* rare: a select per lane after if-conversion */
    u = (float4){kiln_isinff(v.x) ? kiln_copysignf(1.0f, v.x) : kiln_copysignf(0.0f, v.x),
                 kiln_isinff(v.y) ? kiln_copysignf(1.0f, v.y) : kiln_copysignf(0.0f, v.y),
                 kiln_isinff(v.z) ? kiln_copysignf(1.0f, v.z) : kiln_copysignf(0.0f, v.z),
                 kiln_isinff(v.w) ? kiln_copysignf(1.0f, v.w) : kiln_copysignf(0.0f, v.w)};
  }
  double ss = kiln_sumsq4(u);
  double inv = 1.0 / __builtin_sqrt(ss);
  float4 r = (float4){(float)(u.x * inv), (float)(u.y * inv), (float)(u.z * inv), (float)(u.w * inv)};
  return ss == 0.0 ? v : r;
}

KILN_DEF float length(float v) { return kiln_fabsf(v); }
KILN_DEF float length(float2 v) { return kiln_length4((float4){v.x, v.y, 0.0f, 0.0f}); }
KILN_DEF float length(float3 v) { return kiln_length4((float4){v.x, v.y, v.z, 0.0f}); }
KILN_DEF float length(float4 v) { return kiln_length4(v); }
KILN_DEF float distance(float a, float b) { return kiln_fabsf(a - b); }
KILN_DEF float distance(float2 a, float2 b) { return length(a - b); }
KILN_DEF float distance(float3 a, float3 b) { return length(a - b); }
KILN_DEF float distance(float4 a, float4 b) { return length(a - b); }
KILN_DEF float normalize(float v) {
  float r = kiln_copysignf(1.0f, v);
  return (v == 0.0f || v != v) ? v : r;
}
KILN_DEF float2 normalize(float2 v) { return kiln_normalize4((float4){v.x, v.y, 0.0f, 0.0f}).xy; }
KILN_DEF float3 normalize(float3 v) { return kiln_normalize4((float4){v.x, v.y, v.z, 0.0f}).xyz; }
KILN_DEF float4 normalize(float4 v) { return kiln_normalize4(v); }

KILN_DEF float fast_length(float v) { return kiln_fabsf(v); }
KILN_DEF float fast_length(float2 v) { return __builtin_sqrtf(dot(v, v)); }
KILN_DEF float fast_length(float3 v) { return __builtin_sqrtf(dot(v, v)); }
KILN_DEF float fast_length(float4 v) { return __builtin_sqrtf(dot(v, v)); }
KILN_DEF float fast_distance(float a, float b) { return kiln_fabsf(a - b); }
KILN_DEF float fast_distance(float2 a, float2 b) { return fast_length(a - b); }
KILN_DEF float fast_distance(float3 a, float3 b) { return fast_length(a - b); }
KILN_DEF float fast_distance(float4 a, float4 b) { return fast_length(a - b); }
KILN_DEF float fast_normalize(float v) { return normalize(v); }
#define KILN_FAST_NORMALIZE(T)              \
  KILN_DEF T fast_normalize(T v) {          \
    float ss = dot(v, v);                   \
    T r = v * (1.0f / __builtin_sqrtf(ss)); \
    return ss == 0.0f ? v : r;              \
  }
KILN_FAST_NORMALIZE(float2)
KILN_FAST_NORMALIZE(float3)
KILN_FAST_NORMALIZE(float4)

#define KILN_NATIVE_GEOM(T)                                                \
  KILN_DEF float native_length(T v) { return fast_length(v); }             \
  KILN_DEF float native_distance(T a, T b) { return fast_distance(a, b); } \
  KILN_DEF T native_normalize(T v) { return fast_normalize(v); }
KILN_NATIVE_GEOM(float)
KILN_NATIVE_GEOM(float2)
KILN_NATIVE_GEOM(float3)
KILN_NATIVE_GEOM(float4)
