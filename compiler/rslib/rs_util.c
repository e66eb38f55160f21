/* RenderScript utilities: random numbers, matrices, quaternions. Not hot-loop material, so these are plain
 * (non-inlined) functions. */
#include "rslib_internal.h"

/* ---- rsRand: SplitMix64 over a shared atomic counter (see rs_math.rsh). The counter is static, so each
 * script instance (each instantiated module) has its own stream. ---- */
static ulong kiln_rand_counter = 0x2545f4914f6cdd1dull;

KILN_HELPER ulong kiln_rand_next(void) {
  ulong c = __atomic_add_fetch(&kiln_rand_counter, 0x9e3779b97f4a7c15ull, __ATOMIC_RELAXED);
  c = (c ^ (c >> 30)) * 0xbf58476d1ce4e5b9ull;
  c = (c ^ (c >> 27)) * 0x94d049bb133111ebull;
  return c ^ (c >> 31);
}
/* Uniform in [0, 1) with 24 random bits. */
KILN_HELPER float kiln_rand_unit(void) { return (float)(kiln_rand_next() >> 40) * 0x1p-24f; }

KILN_DEF_CALL int rsRand(int max_value) {
  ulong r = kiln_rand_next() >> 32;
  return max_value <= 0 ? 0 : (int)((r * (ulong)max_value) >> 32);
}
KILN_DEF_CALL int rsRand(int min_value, int max_value) {
  long range = (long)max_value - (long)min_value;
  ulong r = kiln_rand_next() >> 32;
  return range <= 0 ? min_value : (int)((long)min_value + (long)((r * (ulong)range) >> 32));
}
KILN_DEF_CALL float rsRand(float max_value) { return kiln_rand_unit() * max_value; }
KILN_DEF_CALL float rsRand(float min_value, float max_value) {
  return min_value + kiln_rand_unit() * (max_value - min_value);
}

/* ---- Matrices (column-major: element (col, row) is m[col * N + row]) ---- */
#define KILN_MATRIX_COMMON(M, N)                                                                  \
  KILN_DEF_CALL void rsMatrixSet(M* m, uint col, uint row, float v) { m->m[col * N + row] = v; }  \
  KILN_DEF_CALL float rsMatrixGet(const M* m, uint col, uint row) { return m->m[col * N + row]; } \
  KILN_DEF_CALL void rsMatrixLoadIdentity(M* m) {                                                 \
    for (int i = 0; i < N * N; ++i) m->m[i] = (i % (N + 1)) == 0 ? 1.0f : 0.0f;                   \
  }                                                                                               \
  KILN_DEF_CALL void rsMatrixLoad(M* d, const float* a) {                                         \
    for (int i = 0; i < N * N; ++i) d->m[i] = a[i];                                               \
  }                                                                                               \
  KILN_DEF_CALL void rsMatrixLoad(M* d, const M* s) { *d = *s; }                                  \
  KILN_DEF_CALL void rsMatrixLoadMultiply(M* m, const M* lhs, const M* rhs) {                     \
    M r;                                                                                          \
    for (int c = 0; c < N; ++c) {                                                                 \
      for (int row = 0; row < N; ++row) {                                                         \
        float s = 0.0f;                                                                           \
        for (int k = 0; k < N; ++k) s += lhs->m[k * N + row] * rhs->m[c * N + k];                 \
        r.m[c * N + row] = s;                                                                     \
      }                                                                                           \
    }                                                                                             \
    *m = r;                                                                                       \
  }                                                                                               \
  KILN_DEF_CALL void rsMatrixMultiply(M* m, const M* rhs) { rsMatrixLoadMultiply(m, m, rhs); }    \
  KILN_DEF_CALL void rsMatrixTranspose(M* m) {                                                    \
    for (int c = 0; c < N; ++c) {                                                                 \
      for (int row = c + 1; row < N; ++row) {                                                     \
        float t = m->m[c * N + row];                                                              \
        m->m[c * N + row] = m->m[row * N + c];                                                    \
        m->m[row * N + c] = t;                                                                    \
      }                                                                                           \
    }                                                                                             \
  }
KILN_MATRIX_COMMON(rs_matrix2x2, 2)
KILN_MATRIX_COMMON(rs_matrix3x3, 3)
KILN_MATRIX_COMMON(rs_matrix4x4, 4)

KILN_DEF_CALL void rsMatrixLoad(rs_matrix4x4* d, const rs_matrix3x3* s) {
  rsMatrixLoadIdentity(d);
  for (int c = 0; c < 3; ++c) {
    for (int r = 0; r < 3; ++r) d->m[c * 4 + r] = s->m[c * 3 + r];
  }
}
KILN_DEF_CALL void rsMatrixLoad(rs_matrix4x4* d, const rs_matrix2x2* s) {
  rsMatrixLoadIdentity(d);
  for (int c = 0; c < 2; ++c) {
    for (int r = 0; r < 2; ++r) d->m[c * 4 + r] = s->m[c * 2 + r];
  }
}

KILN_DEF_CALL float4 rsMatrixMultiply(const rs_matrix4x4* m, float4 v) {
  const float* a = m->m;
  return (float4){a[0] * v.x + a[4] * v.y + a[8] * v.z + a[12] * v.w,
                  a[1] * v.x + a[5] * v.y + a[9] * v.z + a[13] * v.w,
                  a[2] * v.x + a[6] * v.y + a[10] * v.z + a[14] * v.w,
                  a[3] * v.x + a[7] * v.y + a[11] * v.z + a[15] * v.w};
}
KILN_DEF_CALL float4 rsMatrixMultiply(const rs_matrix4x4* m, float3 v) {
  return rsMatrixMultiply(m, (float4){v.x, v.y, v.z, 1.0f});
}
KILN_DEF_CALL float4 rsMatrixMultiply(const rs_matrix4x4* m, float2 v) {
  return rsMatrixMultiply(m, (float4){v.x, v.y, 0.0f, 1.0f});
}
KILN_DEF_CALL float3 rsMatrixMultiply(const rs_matrix3x3* m, float3 v) {
  const float* a = m->m;
  return (float3){a[0] * v.x + a[3] * v.y + a[6] * v.z, a[1] * v.x + a[4] * v.y + a[7] * v.z,
                  a[2] * v.x + a[5] * v.y + a[8] * v.z};
}
KILN_DEF_CALL float3 rsMatrixMultiply(const rs_matrix3x3* m, float2 v) {
  return rsMatrixMultiply(m, (float3){v.x, v.y, 0.0f});
}
KILN_DEF_CALL float2 rsMatrixMultiply(const rs_matrix2x2* m, float2 v) {
  const float* a = m->m;
  return (float2){a[0] * v.x + a[2] * v.y, a[1] * v.x + a[3] * v.y};
}

/* Determinant of the 3x3 minor of a 4x4 matrix without row `skip_r` and column `skip_c` (in double). */
static double kiln_minor3(const float* m, int skip_r, int skip_c) {
  double a[9];
  int k = 0;
  for (int c = 0; c < 4; ++c) {
    if (c == skip_c) continue;
    for (int r = 0; r < 4; ++r) {
      if (r == skip_r) continue;
      a[k++] = m[c * 4 + r];
    }
  }
  /* a is column-major 3x3 */
  return a[0] * (a[4] * a[8] - a[7] * a[5]) - a[3] * (a[1] * a[8] - a[7] * a[2]) +
         a[6] * (a[1] * a[5] - a[4] * a[2]);
}

KILN_DEF_CALL bool rsMatrixInverse(rs_matrix4x4* m) {
  double cof[16];
  for (int c = 0; c < 4; ++c) {
    for (int r = 0; r < 4; ++r) cof[c * 4 + r] = (((r + c) & 1) ? -1.0 : 1.0) * kiln_minor3(m->m, r, c);
  }
  double det = 0.0;
  for (int r = 0; r < 4; ++r) det += (double)m->m[0 * 4 + r] * cof[0 * 4 + r];
  if (det == 0.0 || det != det) return false;
  double inv_det = 1.0 / det;
  /* inverse = adjugate / det, adjugate = transpose of the cofactor matrix */
  for (int c = 0; c < 4; ++c) {
    for (int r = 0; r < 4; ++r) m->m[c * 4 + r] = (float)(cof[r * 4 + c] * inv_det);
  }
  return true;
}
KILN_DEF_CALL bool rsMatrixInverseTranspose(rs_matrix4x4* m) {
  if (!rsMatrixInverse(m)) return false;
  rsMatrixTranspose(m);
  return true;
}

KILN_DEF_CALL void rsMatrixLoadRotate(rs_matrix4x4* m, float rot, float x, float y, float z) {
  float len = sqrt(x * x + y * y + z * z);
  if (len != 1.0f && len != 0.0f) {
    x /= len;
    y /= len;
    z /= len;
  }
  float s;
  float c;
  s = sincos(radians(rot), &c);
  float nc = 1.0f - c;
  rsMatrixLoadIdentity(m);
  m->m[0] = x * x * nc + c;
  m->m[1] = y * x * nc + z * s;
  m->m[2] = x * z * nc - y * s;
  m->m[4] = x * y * nc - z * s;
  m->m[5] = y * y * nc + c;
  m->m[6] = y * z * nc + x * s;
  m->m[8] = x * z * nc + y * s;
  m->m[9] = y * z * nc - x * s;
  m->m[10] = z * z * nc + c;
}
KILN_DEF_CALL void rsMatrixLoadScale(rs_matrix4x4* m, float x, float y, float z) {
  rsMatrixLoadIdentity(m);
  m->m[0] = x;
  m->m[5] = y;
  m->m[10] = z;
}
KILN_DEF_CALL void rsMatrixLoadTranslate(rs_matrix4x4* m, float x, float y, float z) {
  rsMatrixLoadIdentity(m);
  m->m[12] = x;
  m->m[13] = y;
  m->m[14] = z;
}
KILN_DEF_CALL void rsMatrixRotate(rs_matrix4x4* m, float rot, float x, float y, float z) {
  rs_matrix4x4 t;
  rsMatrixLoadRotate(&t, rot, x, y, z);
  rsMatrixMultiply(m, &t);
}
KILN_DEF_CALL void rsMatrixScale(rs_matrix4x4* m, float x, float y, float z) {
  rs_matrix4x4 t;
  rsMatrixLoadScale(&t, x, y, z);
  rsMatrixMultiply(m, &t);
}
KILN_DEF_CALL void rsMatrixTranslate(rs_matrix4x4* m, float x, float y, float z) {
  rs_matrix4x4 t;
  rsMatrixLoadTranslate(&t, x, y, z);
  rsMatrixMultiply(m, &t);
}
KILN_DEF_CALL void rsMatrixLoadOrtho(rs_matrix4x4* m, float left, float right, float bottom, float top,
                                     float near, float far) {
  rsMatrixLoadIdentity(m);
  m->m[0] = 2.0f / (right - left);
  m->m[5] = 2.0f / (top - bottom);
  m->m[10] = -2.0f / (far - near);
  m->m[12] = -(right + left) / (right - left);
  m->m[13] = -(top + bottom) / (top - bottom);
  m->m[14] = -(far + near) / (far - near);
}
KILN_DEF_CALL void rsMatrixLoadFrustum(rs_matrix4x4* m, float left, float right, float bottom, float top,
                                       float near, float far) {
  rsMatrixLoadIdentity(m);
  m->m[0] = 2.0f * near / (right - left);
  m->m[5] = 2.0f * near / (top - bottom);
  m->m[8] = (right + left) / (right - left);
  m->m[9] = (top + bottom) / (top - bottom);
  m->m[10] = -(far + near) / (far - near);
  m->m[11] = -1.0f;
  m->m[14] = -2.0f * far * near / (far - near);
  m->m[15] = 0.0f;
}
KILN_DEF_CALL void rsMatrixLoadPerspective(rs_matrix4x4* m, float fovy, float aspect, float near, float far) {
  float top = near * tan(fovy * (M_PI / 360.0f));
  rsMatrixLoadFrustum(m, -top * aspect, top * aspect, -top, top, near, far);
}

/* ---- Quaternions: (x, y, z, w) = xi + yj + zk + w ---- */
KILN_DEF_CALL void rsQuaternionSet(rs_quaternion* q, float w, float x, float y, float z) {
  *q = (float4){x, y, z, w};
}
KILN_DEF_CALL void rsQuaternionSet(rs_quaternion* q, const rs_quaternion* rhs) { *q = *rhs; }
KILN_DEF_CALL void rsQuaternionAdd(rs_quaternion* q, const rs_quaternion* rhs) { *q += *rhs; }
KILN_DEF_CALL void rsQuaternionMultiply(rs_quaternion* q, float s) { *q *= s; }
KILN_DEF_CALL void rsQuaternionMultiply(rs_quaternion* q, const rs_quaternion* rhs) {
  float4 a = *q, b = *rhs;
  *q = (float4){a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y, a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w, a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
}
KILN_DEF_CALL void rsQuaternionConjugate(rs_quaternion* q) { *q = (float4){-q->x, -q->y, -q->z, q->w}; }
KILN_DEF_CALL float rsQuaternionDot(const rs_quaternion* q0, const rs_quaternion* q1) {
  return dot(*q0, *q1);
}
KILN_DEF_CALL void rsQuaternionNormalize(rs_quaternion* q) {
  float len = length(*q);
  if (len > 0.0f) *q *= 1.0f / len;
}
KILN_DEF_CALL void rsQuaternionLoadRotateUnit(rs_quaternion* q, float rot, float x, float y, float z) {
  float c;
  float s = sincos(rot * (M_PI / 360.0f), &c);
  *q = (float4){x * s, y * s, z * s, c};
}
KILN_DEF_CALL void rsQuaternionLoadRotate(rs_quaternion* q, float rot, float x, float y, float z) {
  float len = sqrt(x * x + y * y + z * z);
  if (len != 1.0f && len != 0.0f) {
    x /= len;
    y /= len;
    z /= len;
  }
  rsQuaternionLoadRotateUnit(q, rot, x, y, z);
}
KILN_DEF_CALL void rsQuaternionGetMatrixUnit(rs_matrix4x4* m, const rs_quaternion* q) {
  float x = q->x, y = q->y, z = q->z, w = q->w;
  rsMatrixLoadIdentity(m);
  m->m[0] = 1.0f - 2.0f * (y * y + z * z);
  m->m[1] = 2.0f * (x * y + w * z);
  m->m[2] = 2.0f * (x * z - w * y);
  m->m[4] = 2.0f * (x * y - w * z);
  m->m[5] = 1.0f - 2.0f * (x * x + z * z);
  m->m[6] = 2.0f * (y * z + w * x);
  m->m[8] = 2.0f * (x * z + w * y);
  m->m[9] = 2.0f * (y * z - w * x);
  m->m[10] = 1.0f - 2.0f * (x * x + y * y);
}
KILN_DEF_CALL void rsQuaternionSlerp(rs_quaternion* q, const rs_quaternion* q0, const rs_quaternion* q1,
                                     float t) {
  float4 a = *q0, b = *q1;
  float c = dot(a, b);
  if (c < 0.0f) {
    b = -b;
    c = -c;
  }
  float4 r;
  if (c > 0.9995f) {
    r = a + (b - a) * t;
  } else {
    float theta = acos(c);
    float inv_sin = 1.0f / sin(theta);
    r = a * (sin((1.0f - t) * theta) * inv_sin) + b * (sin(t * theta) * inv_sin);
  }
  *q = r;
  rsQuaternionNormalize(q);
}
