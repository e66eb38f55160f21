/* Plain-C entry points to the rslib functions for rslib_test.cc: the library's functions are `overloadable`
 * (C++-mangled names), so the C++ test calls them through these wrappers, compiled as kernel-language C. */
#define KILN_HALF_MATH 1
#include "rs_math.rsh"

/* _v: lanes 0-1 through the float2 overload, 2-4 through float3, 5-8 through float4. */
#define KT_VEC_OUT(a, b, c, out)                                                                    \
  out[0] = a.x, out[1] = a.y, out[2] = b.x, out[3] = b.y, out[4] = b.z, out[5] = c.x, out[6] = c.y, \
  out[7] = c.z, out[8] = c.w
#define KT_V2(p) ((float2){p[0], p[1]})
#define KT_V3(p) ((float3){p[2], p[3], p[4]})
#define KT_V4(p) ((float4){p[5], p[6], p[7], p[8]})
#define KT_I2(p) ((int2){p[0], p[1]})
#define KT_I3(p) ((int3){p[2], p[3], p[4]})
#define KT_I4(p) ((int4){p[5], p[6], p[7], p[8]})

#define KT_F1N(name)                               \
  float kt_##name(float x) { return name(x); }     \
  void kt_##name##_v(const float* x, float* out) { \
    float2 a = name(KT_V2(x));                     \
    float3 b = name(KT_V3(x));                     \
    float4 c = name(KT_V4(x));                     \
    KT_VEC_OUT(a, b, c, out);                      \
  }
#define KT_F1(name) \
  KT_F1N(name)      \
  float kt_##name##_h(float x) { return (float)name((half)x); }
#define KT_F2N(name)                                               \
  float kt_##name(float x, float y) { return name(x, y); }         \
  void kt_##name##_v(const float* x, const float* y, float* out) { \
    float2 a = name(KT_V2(x), KT_V2(y));                           \
    float3 b = name(KT_V3(x), KT_V3(y));                           \
    float4 c = name(KT_V4(x), KT_V4(y));                           \
    KT_VEC_OUT(a, b, c, out);                                      \
  }
#define KT_F2(name) \
  KT_F2N(name)      \
  float kt_##name##_h(float x, float y) { return (float)name((half)x, (half)y); }
#define KT_FI(name)                                              \
  float kt_##name(float x, int n) { return name(x, n); }         \
  void kt_##name##_v(const float* x, const int* n, float* out) { \
    float2 a = name(KT_V2(x), KT_I2(n));                         \
    float3 b = name(KT_V3(x), KT_I3(n));                         \
    float4 c = name(KT_V4(x), KT_I4(n));                         \
    KT_VEC_OUT(a, b, c, out);                                    \
  }
#define KT_FP(name, T, kt_name)                             \
  float kt_##kt_name(float x, T* o) { return name(x, o); }  \
  void kt_##kt_name##_v(const float* x, float* out, T* o) { \
    T##2 oa;                                                \
    T##3 ob;                                                \
    T##4 oc;                                                \
    float2 a = name(KT_V2(x), &oa);                         \
    float3 b = name(KT_V3(x), &ob);                         \
    float4 c = name(KT_V4(x), &oc);                         \
    KT_VEC_OUT(a, b, c, out);                               \
    KT_VEC_OUT(oa, ob, oc, o);                              \
  }
#include "kt_functions.inc"

float kt_fma(float a, float b, float c) { return fma(a, b, c); }
void kt_fma_v(const float* a, const float* b, const float* c, float* out) {
  float2 r2 = fma(KT_V2(a), KT_V2(b), KT_V2(c));
  float3 r3 = fma(KT_V3(a), KT_V3(b), KT_V3(c));
  float4 r4 = fma(KT_V4(a), KT_V4(b), KT_V4(c));
  KT_VEC_OUT(r2, r3, r4, out);
}
float kt_mad(float a, float b, float c) { return mad(a, b, c); }
float kt_remquo(float x, float y, int* q) { return remquo(x, y, q); }
void kt_remquo_v(const float* x, const float* y, float* out, int* q) {
  int2 qa;
  int3 qb;
  int4 qc;
  float2 a = remquo(KT_V2(x), KT_V2(y), &qa);
  float3 b = remquo(KT_V3(x), KT_V3(y), &qb);
  float4 c = remquo(KT_V4(x), KT_V4(y), &qc);
  KT_VEC_OUT(a, b, c, out);
  KT_VEC_OUT(qa, qb, qc, q);
}
int kt_ilogb(float x) { return ilogb(x); }
float kt_nan(unsigned code) { return nan(code); }
float kt_to_half(float x) { return (float)(half)x; }

/* Geometry, clamp/mix/step, integer helpers, conversions, colors, random numbers, matrices. */
float kt_length(const float* v, int n) {
  switch (n) {
    case 1:
      return length(v[0]);
    case 2:
      return length((float2){v[0], v[1]});
    case 3:
      return length((float3){v[0], v[1], v[2]});
    default:
      return length((float4){v[0], v[1], v[2], v[3]});
  }
}
float kt_fast_length(const float* v, int n) {
  switch (n) {
    case 1:
      return fast_length(v[0]);
    case 2:
      return fast_length((float2){v[0], v[1]});
    case 3:
      return fast_length((float3){v[0], v[1], v[2]});
    default:
      return fast_length((float4){v[0], v[1], v[2], v[3]});
  }
}
float kt_distance4(const float* a, const float* b) {
  return distance((float4){a[0], a[1], a[2], a[3]}, (float4){b[0], b[1], b[2], b[3]});
}
void kt_normalize(const float* v, int n, float* out) {
  switch (n) {
    case 1:
      out[0] = normalize(v[0]);
      break;
    case 2: {
      float2 r = normalize((float2){v[0], v[1]});
      out[0] = r.x, out[1] = r.y;
      break;
    }
    case 3: {
      float3 r = normalize((float3){v[0], v[1], v[2]});
      out[0] = r.x, out[1] = r.y, out[2] = r.z;
      break;
    }
    default: {
      float4 r = normalize((float4){v[0], v[1], v[2], v[3]});
      out[0] = r.x, out[1] = r.y, out[2] = r.z, out[3] = r.w;
    }
  }
}
void kt_fast_normalize3(const float* v, float* out) {
  float3 r = fast_normalize((float3){v[0], v[1], v[2]});
  out[0] = r.x, out[1] = r.y, out[2] = r.z;
}
float kt_dot4(const float* a, const float* b) {
  return dot((float4){a[0], a[1], a[2], a[3]}, (float4){b[0], b[1], b[2], b[3]});
}
void kt_cross3(const float* a, const float* b, float* out) {
  float3 r = cross((float3){a[0], a[1], a[2]}, (float3){b[0], b[1], b[2]});
  out[0] = r.x, out[1] = r.y, out[2] = r.z;
}
float kt_clamp(float v, float lo, float hi) { return clamp(v, lo, hi); }
void kt_clamp4s(const float* v, float lo, float hi, float* out) {
  float4 r = clamp((float4){v[0], v[1], v[2], v[3]}, lo, hi);
  out[0] = r.x, out[1] = r.y, out[2] = r.z, out[3] = r.w;
}
float kt_mix(float a, float b, float t) { return mix(a, b, t); }
float kt_step(float e, float v) { return step(e, v); }
void kt_step4(const float* e, const float* v, float* out) {
  float4 r = step((float4){e[0], e[1], e[2], e[3]}, (float4){v[0], v[1], v[2], v[3]});
  out[0] = r.x, out[1] = r.y, out[2] = r.z, out[3] = r.w;
}
float kt_smoothstep(float e0, float e1, float v) { return smoothstep(e0, e1, v); }
float kt_min(float a, float b) { return min(a, b); }
float kt_max(float a, float b) { return max(a, b); }
int kt_min_i(int a, int b) { return min(a, b); }
unsigned kt_max_u(unsigned a, unsigned b) { return max(a, b); }
unsigned kt_abs_i(int v) { return abs(v); }
void kt_abs_c4(const signed char* v, unsigned char* out) {
  uchar4 r = abs((char4){v[0], v[1], v[2], v[3]});
  out[0] = r.x, out[1] = r.y, out[2] = r.z, out[3] = r.w;
}
void kt_clamp_s4(const short* v, short lo, short hi, short* out) {
  short4 r = clamp((short4){v[0], v[1], v[2], v[3]}, lo, hi);
  out[0] = r.x, out[1] = r.y, out[2] = r.z, out[3] = r.w;
}
int kt_rsClamp(int v, int lo, int hi) { return rsClamp(v, lo, hi); }
unsigned char kt_rsClamp_uc(unsigned char v, unsigned char lo, unsigned char hi) {
  return rsClamp(v, lo, hi);
}
void kt_convert_float4_uchar4(const unsigned char* v, float* out) {
  float4 r = convert_float4((uchar4){v[0], v[1], v[2], v[3]});
  out[0] = r.x, out[1] = r.y, out[2] = r.z, out[3] = r.w;
}
void kt_convert_int3_float3(const float* v, int* out) {
  int3 r = convert_int3((float3){v[0], v[1], v[2]});
  out[0] = r.x, out[1] = r.y, out[2] = r.z;
}
void kt_convert_ushort2_int2(const int* v, unsigned short* out) {
  ushort2 r = convert_ushort2((int2){v[0], v[1]});
  out[0] = r.x, out[1] = r.y;
}
void kt_pack_color(const float* c, unsigned char* out) {
  uchar4 r = rsPackColorTo8888((float4){c[0], c[1], c[2], c[3]});
  out[0] = r.x, out[1] = r.y, out[2] = r.z, out[3] = r.w;
}
void kt_pack_color3(float r, float g, float b, unsigned char* out) {
  uchar4 p = rsPackColorTo8888(r, g, b);
  out[0] = p.x, out[1] = p.y, out[2] = p.z, out[3] = p.w;
}
void kt_unpack_color(const unsigned char* c, float* out) {
  float4 r = rsUnpackColor8888((uchar4){c[0], c[1], c[2], c[3]});
  out[0] = r.x, out[1] = r.y, out[2] = r.z, out[3] = r.w;
}
int kt_rand_i(int max_value) { return rsRand(max_value); }
int kt_rand_ii(int lo, int hi) { return rsRand(lo, hi); }
float kt_rand_f(float max_value) { return rsRand(max_value); }
float kt_rand_ff(float lo, float hi) { return rsRand(lo, hi); }

/* Matrices: 4x4 helpers on plain float[16] (column-major). */
void kt_matrix_load_rotate(float* m, float rot, float x, float y, float z) {
  rsMatrixLoadRotate((rs_matrix4x4*)m, rot, x, y, z);
}
void kt_matrix_load_translate(float* m, float x, float y, float z) {
  rsMatrixLoadTranslate((rs_matrix4x4*)m, x, y, z);
}
void kt_matrix_scale(float* m, float x, float y, float z) { rsMatrixScale((rs_matrix4x4*)m, x, y, z); }
void kt_matrix_load_multiply(float* m, const float* a, const float* b) {
  rsMatrixLoadMultiply((rs_matrix4x4*)m, (const rs_matrix4x4*)a, (const rs_matrix4x4*)b);
}
int kt_matrix_inverse(float* m) { return rsMatrixInverse((rs_matrix4x4*)m); }
void kt_matrix_transpose(float* m) { rsMatrixTranspose((rs_matrix4x4*)m); }
void kt_matrix_multiply_vec(const float* m, const float* v, float* out) {
  float4 r = rsMatrixMultiply((const rs_matrix4x4*)m, (float4){v[0], v[1], v[2], v[3]});
  out[0] = r.x, out[1] = r.y, out[2] = r.z, out[3] = r.w;
}
void kt_matrix_multiply_vec3(const float* m, const float* v, float* out) {
  float4 r = rsMatrixMultiply((const rs_matrix4x4*)m, (float3){v[0], v[1], v[2]});
  out[0] = r.x, out[1] = r.y, out[2] = r.z, out[3] = r.w;
}
void kt_matrix3_multiply_vec(const float* m, const float* v, float* out) {
  float3 r = rsMatrixMultiply((const rs_matrix3x3*)m, (float3){v[0], v[1], v[2]});
  out[0] = r.x, out[1] = r.y, out[2] = r.z;
}
float kt_matrix_get(const float* m, unsigned col, unsigned row) {
  return rsMatrixGet((const rs_matrix4x4*)m, col, row);
}
void kt_quaternion_rotate_matrix(float rot, float x, float y, float z, float* m) {
  rs_quaternion q;
  rsQuaternionLoadRotate(&q, rot, x, y, z);
  rsQuaternionGetMatrixUnit((rs_matrix4x4*)m, &q);
}
void kt_quaternion_multiply(const float* a, const float* b, float* out) {
  rs_quaternion q = {a[0], a[1], a[2], a[3]};
  rs_quaternion r = {b[0], b[1], b[2], b[3]};
  rsQuaternionMultiply(&q, &r);
  out[0] = q.x, out[1] = q.y, out[2] = q.z, out[3] = q.w;
}
void kt_quaternion_slerp(const float* a, const float* b, float t, float* out) {
  rs_quaternion q0 = {a[0], a[1], a[2], a[3]};
  rs_quaternion q1 = {b[0], b[1], b[2], b[3]};
  rs_quaternion q;
  rsQuaternionSlerp(&q, &q0, &q1, t);
  out[0] = q.x, out[1] = q.y, out[2] = q.z, out[3] = q.w;
}
float kt_rsFrac(float x) { return rsFrac(x); }
