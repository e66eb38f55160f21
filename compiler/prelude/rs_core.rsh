/* rs_core.rsh: the prelude kilnc puts in front of every kernel source (it is embedded into kilnc; no file is
 * read at run time). It brings in the types (rs_types.rsh), the math library (rs_math.rsh) and the runtime:
 * allocations, kernel contexts, element access, object queries, rsForEach, rsDebug, messages and time.
 *
 * Everything that needs the driver goes through the __kiln_rt_* services declared in kiln/kernel_abi.h; each is
 * annotated here with the HAL level that introduced it (annotate("kiln_hal:<major>.<minor>")), and kilnc
 * computes a kernel's HAL level from the services its code reaches. The rest is inline C the kernel's own
 * optimizer sees through. */
#ifndef KILN_RS_CORE_RSH
#define KILN_RS_CORE_RSH

#include "rs_types.rsh"
#include "kiln/kernel_abi.h"
#if __has_include("rs_math.rsh")
#include "rs_math.rsh"
#endif

/* RenderScript's spelling; kilnc compiles in Clang's RenderScript mode, which knows the attribute. */
#define RS_KERNEL __attribute__((kernel))

#define KILN_HAL(level) __attribute__((annotate("kiln_hal:" level)))
#define KILN_RS_INLINE static inline __attribute__((always_inline))
#define KILN_RS_OVERLOAD static inline __attribute__((overloadable, always_inline))

/* ---- Runtime services (HAL 1.0); prototypes and meaning in kiln/kernel_abi.h ---- */
KILN_HAL("1.0") void __kiln_rt_debug(const char* message, uint32_t element_type, uint32_t vector_size,
                                     const void* value);
KILN_HAL("1.0") int32_t __kiln_rt_send_to_client(int32_t cmd_id, const void* data, uint32_t size, int32_t blocking);
KILN_HAL("1.0") int64_t __kiln_rt_uptime_millis(void);
KILN_HAL("1.0") int64_t __kiln_rt_uptime_nanos(void);
KILN_HAL("1.0") int64_t __kiln_rt_time(int64_t* timer);
KILN_HAL("1.0") void __kiln_rt_localtime(KilnKernelTm* out, int64_t time);
KILN_HAL("1.0") void __kiln_rt_element_access_error(const KilnKernelAllocation* allocation, uint32_t x, uint32_t y,
                                                    uint32_t z, uint32_t element_size);
KILN_HAL("1.0") KilnKernelAllocation* __kiln_rt_create_allocation(uint32_t element_type, uint32_t vector_size,
                                                                  uint32_t dim_x, uint32_t dim_y, uint32_t dim_z);
KILN_HAL("1.0") int32_t __kiln_rt_for_each(const char* kernel_name, const KilnKernelAllocation* const* allocations,
                                           uint32_t num_allocations, const KilnKernelLaunchOptions* options);

/* ---- Object types ---- */

/* An allocation bound by the runtime (or made by rsCreateAllocation): a view described in kernel_abi.h. */
typedef struct rs_allocation {
  KilnKernelAllocation* p;
} rs_allocation;

/* The running launch; rsGetDimX(context) and friends read it. */
typedef const KilnKernelLaunch* rs_kernel_context;

typedef enum {
  RS_TYPE_NONE = 0,
  RS_TYPE_FLOAT_16 = 1,
  RS_TYPE_FLOAT_32 = 2,
  RS_TYPE_FLOAT_64 = 3,
  RS_TYPE_SIGNED_8 = 4,
  RS_TYPE_SIGNED_16 = 5,
  RS_TYPE_SIGNED_32 = 6,
  RS_TYPE_SIGNED_64 = 7,
  RS_TYPE_UNSIGNED_8 = 8,
  RS_TYPE_UNSIGNED_16 = 9,
  RS_TYPE_UNSIGNED_32 = 10,
  RS_TYPE_UNSIGNED_64 = 11,
  RS_TYPE_BOOLEAN = 12,
  RS_TYPE_INVALID = 10000
} rs_data_type;

typedef enum {
  RS_KIND_USER = 0,
  RS_KIND_PIXEL_L = 7,
  RS_KIND_PIXEL_A = 8,
  RS_KIND_PIXEL_LA = 9,
  RS_KIND_PIXEL_RGB = 10,
  RS_KIND_PIXEL_RGBA = 11,
  RS_KIND_PIXEL_DEPTH = 12,
  RS_KIND_PIXEL_YUV = 13,
  RS_KIND_INVALID = 100
} rs_data_kind;

/* YUV layouts (Android's ImageFormat values), for rsCreateType's full form. */
typedef enum {
  RS_YUV_NONE = 0,
  RS_YUV_YV12 = 0x32315659,
  RS_YUV_NV21 = 0x11,
  RS_YUV_420_888 = 0x23
} rs_yuv_format;

typedef enum {
  RS_ALLOCATION_USAGE_SCRIPT = 0x0001,
  RS_ALLOCATION_USAGE_GRAPHICS_TEXTURE = 0x0002,
  RS_ALLOCATION_USAGE_GRAPHICS_VERTEX = 0x0004,
  RS_ALLOCATION_USAGE_GRAPHICS_CONSTANTS = 0x0008,
  RS_ALLOCATION_USAGE_GRAPHICS_RENDER_TARGET = 0x0010,
  RS_ALLOCATION_USAGE_IO_INPUT = 0x0020,
  RS_ALLOCATION_USAGE_IO_OUTPUT = 0x0040,
  RS_ALLOCATION_USAGE_SHARED = 0x0080
} rs_allocation_usage_type;

/* An element: one lane type and a vector size. A value, not a runtime object, in Kiln. */
typedef struct rs_element {
  uint32_t kiln_type; /* KilnType; 0 for no element */
  uint32_t vector_size;
} rs_element;

/* A type: an element and up to three extents (0 for an absent dimension). */
typedef struct rs_type {
  rs_element element;
  uint32_t dim_x;
  uint32_t dim_y;
  uint32_t dim_z;
} rs_type;

/* Scripts are not first-class in Kiln kernels (rsForEach launches kernels of the same script); the type exists so
 * that sources declaring rs_script globals compile. */
typedef struct rs_script {
  const void* p;
} rs_script;
/* rs_sampler_value: RenderScript's filter and wrap modes. */
typedef enum {
  RS_SAMPLER_NEAREST = 0,
  RS_SAMPLER_LINEAR = 1,
  RS_SAMPLER_LINEAR_MIP_LINEAR = 2,
  RS_SAMPLER_WRAP = 3,
  RS_SAMPLER_CLAMP = 4,
  RS_SAMPLER_LINEAR_MIP_NEAREST = 5,
  RS_SAMPLER_MIRRORED_REPEAT = 6,
  RS_SAMPLER_INVALID = 100
} rs_sampler_value;
/* A sampler is a value in Kiln (24 bytes of plain data; docs/c-api.md): the host sets an rs_sampler global with
 * KilnScriptSetGlobal, as RenderScript's Sampler.Builder set its fields. */
typedef struct rs_sampler {
  uint32_t min_filter; /* rs_sampler_value */
  uint32_t mag_filter;
  uint32_t wrap_s;
  uint32_t wrap_t;
  uint32_t wrap_r;
  float anisotropy;
} rs_sampler;

typedef enum {
  RS_FOR_EACH_STRATEGY_SERIAL = 0,
  RS_FOR_EACH_STRATEGY_DONT_CARE = 1,
  RS_FOR_EACH_STRATEGY_DST_LINEAR = 2,
  RS_FOR_EACH_STRATEGY_TILE_SMALL = 3,
  RS_FOR_EACH_STRATEGY_TILE_MEDIUM = 4,
  RS_FOR_EACH_STRATEGY_TILE_LARGE = 5
} rs_for_each_strategy_t;

typedef struct rs_script_call {
  rs_for_each_strategy_t strategy;
  uint32_t xStart;
  uint32_t xEnd;
  uint32_t yStart;
  uint32_t yEnd;
  uint32_t zStart;
  uint32_t zEnd;
  uint32_t arrayStart;
  uint32_t arrayEnd;
  uint32_t array2Start;
  uint32_t array2End;
  uint32_t array3Start;
  uint32_t array3End;
  uint32_t array4Start;
  uint32_t array4End;
} rs_script_call_t;

typedef int64_t rs_time_t;
typedef KilnKernelTm rs_tm;

/* ---- Object queries ---- */

KILN_RS_OVERLOAD bool rsIsObject(rs_allocation a) { return a.p != NULL; }
KILN_RS_OVERLOAD bool rsIsObject(rs_element e) { return e.kiln_type != 0; }
KILN_RS_OVERLOAD bool rsIsObject(rs_type t) { return t.dim_x != 0; }
KILN_RS_OVERLOAD bool rsIsObject(rs_script s) { return s.p != NULL; }
KILN_RS_OVERLOAD void rsClearObject(rs_allocation* a) { a->p = NULL; }
KILN_RS_OVERLOAD void rsSetObject(rs_allocation* dst, rs_allocation src) { *dst = src; }

KILN_RS_INLINE uint32_t rsAllocationGetDimX(rs_allocation a) { return a.p ? a.p->dim_x : 0u; }
KILN_RS_INLINE uint32_t rsAllocationGetDimY(rs_allocation a) { return a.p ? a.p->dim_y : 0u; }
KILN_RS_INLINE uint32_t rsAllocationGetDimZ(rs_allocation a) { return a.p ? a.p->dim_z : 0u; }
KILN_RS_INLINE uint32_t rsAllocationGetDimLOD(rs_allocation a) { return 0u; }
KILN_RS_INLINE uint32_t rsAllocationGetDimFaces(rs_allocation a) { return 0u; }
KILN_RS_INLINE rs_element rsAllocationGetElement(rs_allocation a) {
  rs_element e = {0u, 0u};
  if (a.p) {
    e.kiln_type = a.p->element_type;
    e.vector_size = a.p->vector_size;
  }
  return e;
}

KILN_RS_INLINE rs_data_type __kiln_data_type_of(uint32_t kiln_type) {
  switch (kiln_type) {
    case 10: return RS_TYPE_FLOAT_16;
    case 1: return RS_TYPE_FLOAT_32;
    case 11: return RS_TYPE_FLOAT_64;
    case 9: return RS_TYPE_SIGNED_8;
    case 7: return RS_TYPE_SIGNED_16;
    case 2: return RS_TYPE_SIGNED_32;
    case 4: return RS_TYPE_SIGNED_64;
    case 3: return RS_TYPE_UNSIGNED_8;
    case 17: return RS_TYPE_UNSIGNED_16;
    case 16: return RS_TYPE_UNSIGNED_32;
    case 13: return RS_TYPE_UNSIGNED_64;
    case 6: return RS_TYPE_BOOLEAN;
    case 0: return RS_TYPE_NONE;
    default: return RS_TYPE_INVALID;
  }
}

KILN_RS_INLINE uint32_t __kiln_kiln_type_of(rs_data_type type) {
  switch (type) {
    case RS_TYPE_FLOAT_16: return 10;
    case RS_TYPE_FLOAT_32: return 1;
    case RS_TYPE_FLOAT_64: return 11;
    case RS_TYPE_SIGNED_8: return 9;
    case RS_TYPE_SIGNED_16: return 7;
    case RS_TYPE_SIGNED_32: return 2;
    case RS_TYPE_SIGNED_64: return 4;
    case RS_TYPE_UNSIGNED_8: return 3;
    case RS_TYPE_UNSIGNED_16: return 17;
    case RS_TYPE_UNSIGNED_32: return 16;
    case RS_TYPE_UNSIGNED_64: return 13;
    case RS_TYPE_BOOLEAN: return 6;
    default: return 0;
  }
}

KILN_RS_INLINE uint32_t __kiln_lane_bytes(uint32_t kiln_type) {
  switch (kiln_type) {
    case 3: case 6: case 9: return 1u;
    case 7: case 10: case 17: return 2u;
    case 1: case 2: case 16: return 4u;
    case 4: case 11: case 13: return 8u;
    default: return 0u;
  }
}

KILN_RS_INLINE rs_data_type rsElementGetDataType(rs_element e) { return __kiln_data_type_of(e.kiln_type); }
KILN_RS_INLINE rs_data_kind rsElementGetDataKind(rs_element e) { return RS_KIND_USER; }
KILN_RS_INLINE uint32_t rsElementGetVectorSize(rs_element e) { return e.vector_size; }
/* A 3-lane element occupies 4 lanes, as in RenderScript. */
KILN_RS_INLINE uint32_t rsElementGetBytesSize(rs_element e) {
  return __kiln_lane_bytes(e.kiln_type) * (e.vector_size == 3u ? 4u : e.vector_size);
}
/* Kiln's elements are a lane type and a vector size, never structs (a tensor's element is one KilnType), so an
 * element has no sub-elements: the count is 0, and the queries about sub-element `index` answer as RenderScript
 * does for an index out of range (an invalid element, 0). */
KILN_RS_INLINE uint32_t rsElementGetSubElementCount(rs_element e) { return 0u; }
KILN_RS_INLINE rs_element rsElementGetSubElement(rs_element e, uint32_t index) {
  rs_element none = {0u, 0u};
  return none;
}
KILN_RS_INLINE uint32_t rsElementGetSubElementArraySize(rs_element e, uint32_t index) { return 0u; }
KILN_RS_INLINE uint32_t rsElementGetSubElementOffsetBytes(rs_element e, uint32_t index) { return 0u; }
KILN_RS_INLINE uint32_t rsElementGetSubElementNameLength(rs_element e, uint32_t index) { return 0u; }
KILN_RS_INLINE uint32_t rsElementGetSubElementName(rs_element e, uint32_t index, char* name, uint32_t nameLength) {
  if (name != NULL && nameLength > 0u) name[0] = 0;
  return 0u;
}

KILN_RS_INLINE rs_element rsCreateElement(rs_data_type data_type) {
  rs_element e = {__kiln_kiln_type_of(data_type), 1u};
  return e;
}
KILN_RS_INLINE rs_element rsCreateVectorElement(rs_data_type data_type, uint32_t vector_width) {
  rs_element e = {__kiln_kiln_type_of(data_type), vector_width};
  if (vector_width < 1u || vector_width > 4u) e.kiln_type = 0u;
  return e;
}
KILN_RS_OVERLOAD rs_type rsCreateType(rs_element element, uint32_t dimX, uint32_t dimY, uint32_t dimZ) {
  rs_type t = {element, dimX, dimY, dimZ};
  return t;
}
/* The full form (RenderScript API 24). Kiln's allocations have no mipmap levels, cube faces or YUV layouts: a type
 * asking for one is invalid (rsIsObject is false, and rsCreateAllocation of it gives an invalid allocation). */
KILN_RS_OVERLOAD rs_type rsCreateType(rs_element element, uint32_t dimX, uint32_t dimY, uint32_t dimZ, bool mipmaps,
                                      bool faces, rs_yuv_format yuv_format) {
  if (mipmaps || faces || yuv_format != RS_YUV_NONE) return rsCreateType(element, 0u, 0u, 0u);
  return rsCreateType(element, dimX, dimY, dimZ);
}
KILN_RS_OVERLOAD rs_type rsCreateType(rs_element element, uint32_t dimX, uint32_t dimY) {
  return rsCreateType(element, dimX, dimY, 0u);
}
KILN_RS_OVERLOAD rs_type rsCreateType(rs_element element, uint32_t dimX) {
  return rsCreateType(element, dimX, 0u, 0u);
}
KILN_RS_INLINE rs_element rsTypeGetElement(rs_type t) { return t.element; }
KILN_RS_INLINE uint32_t rsTypeGetDimX(rs_type t) { return t.dim_x; }
KILN_RS_INLINE uint32_t rsTypeGetDimY(rs_type t) { return t.dim_y; }
KILN_RS_INLINE uint32_t rsTypeGetDimZ(rs_type t) { return t.dim_z; }

KILN_RS_OVERLOAD rs_allocation rsCreateAllocation(rs_type type, uint32_t usage) {
  rs_allocation a;
  a.p = __kiln_rt_create_allocation(type.element.kiln_type, type.element.vector_size, type.dim_x, type.dim_y,
                                    type.dim_z);
  return a;
}
KILN_RS_OVERLOAD rs_allocation rsCreateAllocation(rs_type type) {
  return rsCreateAllocation(type, (uint32_t)RS_ALLOCATION_USAGE_SCRIPT);
}

/* ---- Kernel context ---- */

KILN_RS_INLINE uint32_t rsGetDimX(rs_kernel_context context) { return context->dim_x; }
KILN_RS_INLINE uint32_t rsGetDimY(rs_kernel_context context) { return context->dim_y; }
KILN_RS_INLINE uint32_t rsGetDimZ(rs_kernel_context context) { return context->dim_z; }
/* Kiln launches have no level of detail, cube faces or array dimensions (its allocations have none): the
 * queries give what RenderScript gives for a launch without them. */
typedef enum {
  RS_ALLOCATION_CUBEMAP_FACE_POSITIVE_X = 0,
  RS_ALLOCATION_CUBEMAP_FACE_NEGATIVE_X = 1,
  RS_ALLOCATION_CUBEMAP_FACE_POSITIVE_Y = 2,
  RS_ALLOCATION_CUBEMAP_FACE_NEGATIVE_Y = 3,
  RS_ALLOCATION_CUBEMAP_FACE_POSITIVE_Z = 4,
  RS_ALLOCATION_CUBEMAP_FACE_NEGATIVE_Z = 5
} rs_allocation_cubemap_face;
KILN_RS_INLINE uint32_t rsGetLod(rs_kernel_context context) { return 0u; }
KILN_RS_INLINE rs_allocation_cubemap_face rsGetFace(rs_kernel_context context) {
  return RS_ALLOCATION_CUBEMAP_FACE_POSITIVE_X;
}
KILN_RS_INLINE uint32_t rsGetArray0(rs_kernel_context context) { return 0u; }
KILN_RS_INLINE uint32_t rsGetArray1(rs_kernel_context context) { return 0u; }
KILN_RS_INLINE uint32_t rsGetArray2(rs_kernel_context context) { return 0u; }
KILN_RS_INLINE uint32_t rsGetArray3(rs_kernel_context context) { return 0u; }
KILN_RS_INLINE uint32_t rsGetDimLod(rs_kernel_context context) { return 0u; }
KILN_RS_INLINE bool rsGetDimHasFaces(rs_kernel_context context) { return false; }
KILN_RS_INLINE uint32_t rsGetDimArray0(rs_kernel_context context) { return 0u; }
KILN_RS_INLINE uint32_t rsGetDimArray1(rs_kernel_context context) { return 0u; }
KILN_RS_INLINE uint32_t rsGetDimArray2(rs_kernel_context context) { return 0u; }
KILN_RS_INLINE uint32_t rsGetDimArray3(rs_kernel_context context) { return 0u; }

/* ---- Element access ---- */

/* The address of element (x, y, z), or NULL after reporting a bad access: an unbound allocation, coordinates
 * outside it, or (when element_size is not 0) an element of another size. */
KILN_RS_INLINE void* __kiln_element_address(rs_allocation a, uint32_t x, uint32_t y, uint32_t z,
                                            uint32_t element_size) {
  const KilnKernelAllocation* p = a.p;
  if (p == NULL || (element_size != 0u && p->element_size != element_size) || x >= p->dim_x ||
      y >= (p->dim_y ? p->dim_y : 1u) || z >= (p->dim_z ? p->dim_z : 1u)) {
    __kiln_rt_element_access_error(p, x, y, z, element_size);
    return NULL;
  }
  return (uint8_t*)p->data + (uint64_t)x * p->element_size + (uint64_t)y * p->stride_y +
         (uint64_t)z * p->stride_z;
}

KILN_RS_OVERLOAD const void* rsGetElementAt(rs_allocation a, uint32_t x) {
  return __kiln_element_address(a, x, 0u, 0u, 0u);
}
KILN_RS_OVERLOAD const void* rsGetElementAt(rs_allocation a, uint32_t x, uint32_t y) {
  return __kiln_element_address(a, x, y, 0u, 0u);
}
KILN_RS_OVERLOAD const void* rsGetElementAt(rs_allocation a, uint32_t x, uint32_t y, uint32_t z) {
  return __kiln_element_address(a, x, y, z, 0u);
}

#define KILN_DEFINE_ELEMENT_ACCESS(T)                                                                   \
  KILN_RS_OVERLOAD T rsGetElementAt_##T(rs_allocation a, uint32_t x, uint32_t y, uint32_t z) {          \
    const T* p = (const T*)__kiln_element_address(a, x, y, z, (uint32_t)sizeof(T));                     \
    return p ? *p : (T)0;                                                                               \
  }                                                                                                     \
  KILN_RS_OVERLOAD T rsGetElementAt_##T(rs_allocation a, uint32_t x, uint32_t y) {                      \
    return rsGetElementAt_##T(a, x, y, 0u);                                                             \
  }                                                                                                     \
  KILN_RS_OVERLOAD T rsGetElementAt_##T(rs_allocation a, uint32_t x) { return rsGetElementAt_##T(a, x, 0u, 0u); } \
  KILN_RS_OVERLOAD void rsSetElementAt_##T(rs_allocation a, T val, uint32_t x, uint32_t y, uint32_t z) { \
    T* p = (T*)__kiln_element_address(a, x, y, z, (uint32_t)sizeof(T));                                 \
    if (p) *p = val;                                                                                    \
  }                                                                                                     \
  KILN_RS_OVERLOAD void rsSetElementAt_##T(rs_allocation a, T val, uint32_t x, uint32_t y) {            \
    rsSetElementAt_##T(a, val, x, y, 0u);                                                               \
  }                                                                                                     \
  KILN_RS_OVERLOAD void rsSetElementAt_##T(rs_allocation a, T val, uint32_t x) {                        \
    rsSetElementAt_##T(a, val, x, 0u, 0u);                                                              \
  }

#define KILN_DEFINE_ELEMENT_ACCESS_VECTORS(T) \
  KILN_DEFINE_ELEMENT_ACCESS(T)               \
  KILN_DEFINE_ELEMENT_ACCESS(T##2)            \
  KILN_DEFINE_ELEMENT_ACCESS(T##3)            \
  KILN_DEFINE_ELEMENT_ACCESS(T##4)

KILN_DEFINE_ELEMENT_ACCESS_VECTORS(char)
KILN_DEFINE_ELEMENT_ACCESS_VECTORS(uchar)
KILN_DEFINE_ELEMENT_ACCESS_VECTORS(short)
KILN_DEFINE_ELEMENT_ACCESS_VECTORS(ushort)
KILN_DEFINE_ELEMENT_ACCESS_VECTORS(int)
KILN_DEFINE_ELEMENT_ACCESS_VECTORS(uint)
KILN_DEFINE_ELEMENT_ACCESS_VECTORS(long)
KILN_DEFINE_ELEMENT_ACCESS_VECTORS(ulong)
KILN_DEFINE_ELEMENT_ACCESS_VECTORS(float)
KILN_DEFINE_ELEMENT_ACCESS_VECTORS(double)
#ifdef KILN_HAS_HALF
KILN_DEFINE_ELEMENT_ACCESS_VECTORS(half)
#endif

/* ---- Samplers: rsSample over a single-LOD 1D or 2D allocation of float4 or uchar4 elements (uchar4 read as
 * c / 255). Kiln's rules (docs/kernel-language.md, "Samplers"): the magnification filter applies at lod <= 0
 * (rsSample without lod), the minification filter above; NEAREST takes the texel floor(u * dim); every other
 * filter (LINEAR and, on one level of detail, LINEAR_MIP_NEAREST / LINEAR_MIP_LINEAR) blends the 2x2 texels
 * around u * dim - 0.5 bilinearly. Texel indices are wrapped per axis: WRAP repeats, MIRRORED_REPEAT mirrors
 * every other period, anything else clamps to the edge. ---- */

KILN_RS_INLINE rs_sampler_value rsSamplerGetMinification(rs_sampler s) { return (rs_sampler_value)s.min_filter; }
KILN_RS_INLINE rs_sampler_value rsSamplerGetMagnification(rs_sampler s) { return (rs_sampler_value)s.mag_filter; }
KILN_RS_INLINE rs_sampler_value rsSamplerGetWrapS(rs_sampler s) { return (rs_sampler_value)s.wrap_s; }
KILN_RS_INLINE rs_sampler_value rsSamplerGetWrapT(rs_sampler s) { return (rs_sampler_value)s.wrap_t; }
KILN_RS_INLINE float rsSamplerGetAnisotropy(rs_sampler s) { return s.anisotropy; }

/* floor(v) as an index, for any float (NaN reads as 0; far values are clamped before the conversion). */
KILN_RS_INLINE int __kiln_sampler_index(float v) {
  v = v == v ? v : 0.0f;
  v = v < -16777216.0f ? -16777216.0f : (v > 16777216.0f ? 16777216.0f : v);
  return (int)floor(v);
}
KILN_RS_INLINE int __kiln_sampler_wrap(uint32_t mode, int i, int n) {
  if (mode == RS_SAMPLER_WRAP) {
    int m = i % n;
    return m < 0 ? m + n : m;
  }
  if (mode == RS_SAMPLER_MIRRORED_REPEAT) {
    int period = 2 * n;
    int m = i % period;
    m = m < 0 ? m + period : m;
    return m < n ? m : period - 1 - m;
  }
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}
KILN_RS_INLINE float4 __kiln_sampler_texel(rs_allocation a, int x, int y) {
  if (a.p && a.p->element_size == 4u) { /* uchar4 pixels (RGBA_8888), as the GPU form reads any 4-byte element */
    uchar4 c = rsGetElementAt_uchar4(a, (uint32_t)x, (uint32_t)y);
    return __builtin_convertvector(c, float4) * (1.0f / 255.0f);
  }
  return rsGetElementAt_float4(a, (uint32_t)x, (uint32_t)y);
}
KILN_RS_INLINE int __kiln_sampler_extent(uint32_t d) {
  return (int)(d < 1u ? 1u : (d > 0x40000000u ? 0x40000000u : d));
}
KILN_RS_INLINE float4 __kiln_sample(rs_allocation a, rs_sampler s, float u_in, float v_in, bool two_d, float lod) {
  const int w = __kiln_sampler_extent(rsAllocationGetDimX(a));
  const int h = two_d ? __kiln_sampler_extent(rsAllocationGetDimY(a)) : 1;
  const uint32_t filter = lod <= 0.0f ? s.mag_filter : s.min_filter;
  if (filter == RS_SAMPLER_NEAREST) {
    const int x = __kiln_sampler_wrap(s.wrap_s, __kiln_sampler_index(u_in * (float)w), w);
    const int y = two_d ? __kiln_sampler_wrap(s.wrap_t, __kiln_sampler_index(v_in * (float)h), h) : 0;
    return __kiln_sampler_texel(a, x, y);
  }
  const float u = u_in * (float)w - 0.5f;
  const float v = two_d ? v_in * (float)h - 0.5f : 0.0f;
  const int iu = __kiln_sampler_index(u), iv = __kiln_sampler_index(v);
  const float tu = u == u ? u - (float)iu : 0.0f;
  const float tv = two_d && v == v ? v - (float)iv : 0.0f;
  const float ftu = tu < 0.0f ? 0.0f : (tu > 1.0f ? 1.0f : tu);
  const float ftv = tv < 0.0f ? 0.0f : (tv > 1.0f ? 1.0f : tv);
  const int x0 = __kiln_sampler_wrap(s.wrap_s, iu, w), x1 = __kiln_sampler_wrap(s.wrap_s, iu + 1, w);
  const int y0 = two_d ? __kiln_sampler_wrap(s.wrap_t, iv, h) : 0;
  const int y1 = two_d ? __kiln_sampler_wrap(s.wrap_t, iv + 1, h) : 0;
  const float4 p00 = __kiln_sampler_texel(a, x0, y0), p10 = __kiln_sampler_texel(a, x1, y0);
  const float4 p01 = __kiln_sampler_texel(a, x0, y1), p11 = __kiln_sampler_texel(a, x1, y1);
  const float4 top = p00 + (p10 - p00) * ftu;
  const float4 bottom = p01 + (p11 - p01) * ftu;
  return top + (bottom - top) * ftv;
}
KILN_RS_OVERLOAD float4 rsSample(rs_allocation a, rs_sampler s, float location) {
  return __kiln_sample(a, s, location, 0.0f, false, 0.0f);
}
KILN_RS_OVERLOAD float4 rsSample(rs_allocation a, rs_sampler s, float location, float lod) {
  return __kiln_sample(a, s, location, 0.0f, false, lod);
}
KILN_RS_OVERLOAD float4 rsSample(rs_allocation a, rs_sampler s, float2 location) {
  return __kiln_sample(a, s, location.x, location.y, true, 0.0f);
}
KILN_RS_OVERLOAD float4 rsSample(rs_allocation a, rs_sampler s, float2 location, float lod) {
  return __kiln_sample(a, s, location.x, location.y, true, lod);
}

/* rsAllocationVLoadX_<T><N> / rsAllocationVStoreX_<T><N>: N consecutive elements of a scalar allocation,
 * starting at (x, y, z), as one vector. */
#define KILN_DEFINE_VLOAD(T, N)                                                                             \
  KILN_RS_OVERLOAD T##N rsAllocationVLoadX_##T##N(rs_allocation a, uint32_t x, uint32_t y, uint32_t z) {    \
    T##N v = (T##N)0;                                                                                       \
    const T* first = (const T*)__kiln_element_address(a, x, y, z, (uint32_t)sizeof(T));                     \
    const T* last = (const T*)__kiln_element_address(a, x + (N - 1), y, z, (uint32_t)sizeof(T));            \
    if (first && last) __builtin_memcpy(&v, first, sizeof(T) * N);                                          \
    return v;                                                                                               \
  }                                                                                                         \
  KILN_RS_OVERLOAD T##N rsAllocationVLoadX_##T##N(rs_allocation a, uint32_t x, uint32_t y) {                \
    return rsAllocationVLoadX_##T##N(a, x, y, 0u);                                                          \
  }                                                                                                         \
  KILN_RS_OVERLOAD T##N rsAllocationVLoadX_##T##N(rs_allocation a, uint32_t x) {                            \
    return rsAllocationVLoadX_##T##N(a, x, 0u, 0u);                                                         \
  }                                                                                                         \
  KILN_RS_OVERLOAD void rsAllocationVStoreX_##T##N(rs_allocation a, T##N val, uint32_t x, uint32_t y,       \
                                                   uint32_t z) {                                            \
    T* first = (T*)__kiln_element_address(a, x, y, z, (uint32_t)sizeof(T));                                 \
    T* last = (T*)__kiln_element_address(a, x + (N - 1), y, z, (uint32_t)sizeof(T));                        \
    if (first && last) __builtin_memcpy(first, &val, sizeof(T) * N);                                        \
  }                                                                                                         \
  KILN_RS_OVERLOAD void rsAllocationVStoreX_##T##N(rs_allocation a, T##N val, uint32_t x, uint32_t y) {     \
    rsAllocationVStoreX_##T##N(a, val, x, y, 0u);                                                           \
  }                                                                                                         \
  KILN_RS_OVERLOAD void rsAllocationVStoreX_##T##N(rs_allocation a, T##N val, uint32_t x) {                 \
    rsAllocationVStoreX_##T##N(a, val, x, 0u, 0u);                                                          \
  }
#define KILN_DEFINE_VLOADS(T) KILN_DEFINE_VLOAD(T, 2) KILN_DEFINE_VLOAD(T, 3) KILN_DEFINE_VLOAD(T, 4)
KILN_DEFINE_VLOADS(char)
KILN_DEFINE_VLOADS(uchar)
KILN_DEFINE_VLOADS(short)
KILN_DEFINE_VLOADS(ushort)
KILN_DEFINE_VLOADS(int)
KILN_DEFINE_VLOADS(uint)
KILN_DEFINE_VLOADS(long)
KILN_DEFINE_VLOADS(ulong)
KILN_DEFINE_VLOADS(float)
KILN_DEFINE_VLOADS(double)

/* rsAllocationCopy1DRange / rsAllocationCopy2DRange: element copies between allocations with elements of the
 * same size (mip levels and cube faces do not exist in Kiln and must be 0). Overlapping ranges are fine. */
KILN_RS_INLINE bool __kiln_copy_range_ok(rs_allocation dst, uint32_t dst_x, uint32_t dst_y, rs_allocation src,
                                         uint32_t src_x, uint32_t src_y, uint32_t width, uint32_t height,
                                         uint32_t lod_or_face) {
  if (width == 0u || height == 0u) return false;
  const uint32_t element_size = src.p ? src.p->element_size : 0u;
  if (lod_or_face != 0u || !__kiln_element_address(src, src_x, src_y, 0u, element_size) ||
      !__kiln_element_address(src, src_x + width - 1u, src_y + height - 1u, 0u, element_size) ||
      !__kiln_element_address(dst, dst_x, dst_y, 0u, element_size) ||
      !__kiln_element_address(dst, dst_x + width - 1u, dst_y + height - 1u, 0u, element_size)) {
    return false;
  }
  /* Coordinates that wrapped around would pass the checks above with a huge width: refuse them too. */
  return src_x + width > src_x && dst_x + width > dst_x && src_y + height > src_y && dst_y + height > dst_y;
}
KILN_RS_INLINE void rsAllocationCopy2DRange(rs_allocation dstAlloc, uint32_t dstXoff, uint32_t dstYoff,
                                            uint32_t dstMip, uint32_t dstFace, uint32_t width, uint32_t height,
                                            rs_allocation srcAlloc, uint32_t srcXoff, uint32_t srcYoff,
                                            uint32_t srcMip, uint32_t srcFace) {
  if (!__kiln_copy_range_ok(dstAlloc, dstXoff, dstYoff, srcAlloc, srcXoff, srcYoff, width, height,
                            dstMip | dstFace | srcMip | srcFace)) {
    return;
  }
  const uint64_t row_bytes = (uint64_t)width * srcAlloc.p->element_size;
  for (uint32_t row = 0u; row < height; ++row) {
    __builtin_memmove(__kiln_element_address(dstAlloc, dstXoff, dstYoff + row, 0u, 0u),
                      __kiln_element_address(srcAlloc, srcXoff, srcYoff + row, 0u, 0u), row_bytes);
  }
}
KILN_RS_INLINE void rsAllocationCopy1DRange(rs_allocation dstAlloc, uint32_t dstOff, uint32_t dstMip,
                                            uint32_t count, rs_allocation srcAlloc, uint32_t srcOff,
                                            uint32_t srcMip) {
  rsAllocationCopy2DRange(dstAlloc, dstOff, 0u, dstMip, 0u, count, 1u, srcAlloc, srcOff, 0u, srcMip, 0u);
}

/* NV21 (see kernel_abi.h): a luma plane, then interleaved V,U pairs at half resolution. */
KILN_RS_INLINE const uchar* __kiln_yuv_address(rs_allocation a, uint32_t x, uint32_t y, uint32_t plane) {
  const KilnKernelAllocation* p = a.p;
  const uint32_t rows = p ? (p->dim_y ? p->dim_y : 1u) : 0u;
  if (p == NULL || p->element_size != 1u || x >= p->dim_x || y >= rows) {
    __kiln_rt_element_access_error(p, x, y, 0u, 1u);
    return NULL;
  }
  const uchar* base = (const uchar*)p->data;
  if (plane == 0u) return base + (uint64_t)y * p->stride_y + x;
  const uchar* chroma = base + (uint64_t)rows * p->stride_y;
  return chroma + (uint64_t)(y >> 1) * p->stride_y + (x & ~1u) + (plane == 1u ? 1u : 0u);
}
KILN_RS_INLINE uchar rsGetElementAtYuv_uchar_Y(rs_allocation a, uint32_t x, uint32_t y) {
  const uchar* p = __kiln_yuv_address(a, x, y, 0u);
  return p ? *p : (uchar)0;
}
KILN_RS_INLINE uchar rsGetElementAtYuv_uchar_U(rs_allocation a, uint32_t x, uint32_t y) {
  const uchar* p = __kiln_yuv_address(a, x, y, 1u);
  return p ? *p : (uchar)0;
}
KILN_RS_INLINE uchar rsGetElementAtYuv_uchar_V(rs_allocation a, uint32_t x, uint32_t y) {
  const uchar* p = __kiln_yuv_address(a, x, y, 2u);
  return p ? *p : (uchar)0;
}

/* rsCreateAllocation_<T>(dimX[, dimY[, dimZ]]) */
#define KILN_DEFINE_CREATE_ALLOCATION(T, KILN_TYPE, LANES)                                                \
  KILN_RS_OVERLOAD rs_allocation rsCreateAllocation_##T(uint32_t dimX, uint32_t dimY, uint32_t dimZ) {    \
    rs_allocation a;                                                                                      \
    a.p = __kiln_rt_create_allocation(KILN_TYPE, LANES, dimX, dimY, dimZ);                                \
    return a;                                                                                             \
  }                                                                                                       \
  KILN_RS_OVERLOAD rs_allocation rsCreateAllocation_##T(uint32_t dimX, uint32_t dimY) {                   \
    return rsCreateAllocation_##T(dimX, dimY, 0u);                                                        \
  }                                                                                                       \
  KILN_RS_OVERLOAD rs_allocation rsCreateAllocation_##T(uint32_t dimX) { return rsCreateAllocation_##T(dimX, 0u, 0u); }
#define KILN_DEFINE_CREATE_ALLOCATION_VECTORS(T, KILN_TYPE) \
  KILN_DEFINE_CREATE_ALLOCATION(T, KILN_TYPE, 1u)          \
  KILN_DEFINE_CREATE_ALLOCATION(T##2, KILN_TYPE, 2u)       \
  KILN_DEFINE_CREATE_ALLOCATION(T##3, KILN_TYPE, 3u)       \
  KILN_DEFINE_CREATE_ALLOCATION(T##4, KILN_TYPE, 4u)
KILN_DEFINE_CREATE_ALLOCATION_VECTORS(char, 9u)
KILN_DEFINE_CREATE_ALLOCATION_VECTORS(uchar, 3u)
KILN_DEFINE_CREATE_ALLOCATION_VECTORS(short, 7u)
KILN_DEFINE_CREATE_ALLOCATION_VECTORS(ushort, 17u)
KILN_DEFINE_CREATE_ALLOCATION_VECTORS(int, 2u)
KILN_DEFINE_CREATE_ALLOCATION_VECTORS(uint, 16u)
KILN_DEFINE_CREATE_ALLOCATION_VECTORS(long, 4u)
KILN_DEFINE_CREATE_ALLOCATION_VECTORS(ulong, 13u)
KILN_DEFINE_CREATE_ALLOCATION_VECTORS(float, 1u)
KILN_DEFINE_CREATE_ALLOCATION_VECTORS(double, 11u)
#ifdef KILN_HAS_HALF
KILN_DEFINE_CREATE_ALLOCATION_VECTORS(half, 10u)
#endif

/* ---- rsForEach ---- */

/* rsForEach(kernel, in1, ..., out) and rsForEachWithOptions(kernel, &options, in1, ..., out) launch a kernel of
 * this script. The kernel is named, not pointed to (kilnc checks that the name is one of the script's kernels).
 * rs_allocation has the layout of a KilnKernelAllocation pointer, so the compound literal is the pointer array. */
KILN_RS_INLINE void __kiln_for_each(const char* kernel_name, const rs_script_call_t* call,
                                    const rs_allocation* allocations, uint32_t count) {
  KilnKernelLaunchOptions options;
  if (call) {
    options.struct_size = (uint32_t)sizeof(options);
    options.x_start = call->xStart;
    options.x_end = call->xEnd;
    options.y_start = call->yStart;
    options.y_end = call->yEnd;
    options.z_start = call->zStart;
    options.z_end = call->zEnd;
  }
  __kiln_rt_for_each(kernel_name, (const KilnKernelAllocation* const*)allocations, count, call ? &options : NULL);
}
#define rsForEach(kernel, ...)                                                       \
  __kiln_for_each(#kernel, (const rs_script_call_t*)0, (rs_allocation[]){__VA_ARGS__}, \
                  (uint32_t)(sizeof((rs_allocation[]){__VA_ARGS__}) / sizeof(rs_allocation)))
#define rsForEachWithOptions(kernel, call, ...)                      \
  __kiln_for_each(#kernel, (call), (rs_allocation[]){__VA_ARGS__}, \
                  (uint32_t)(sizeof((rs_allocation[]){__VA_ARGS__}) / sizeof(rs_allocation)))

/* ---- Atomics ---- */

#define KILN_DEFINE_ATOMICS(T)                                                                                 \
  KILN_RS_OVERLOAD T rsAtomicAdd(volatile T* addr, T value) { return __atomic_fetch_add(addr, value, __ATOMIC_SEQ_CST); } \
  KILN_RS_OVERLOAD T rsAtomicSub(volatile T* addr, T value) { return __atomic_fetch_sub(addr, value, __ATOMIC_SEQ_CST); } \
  KILN_RS_OVERLOAD T rsAtomicAnd(volatile T* addr, T value) { return __atomic_fetch_and(addr, value, __ATOMIC_SEQ_CST); } \
  KILN_RS_OVERLOAD T rsAtomicOr(volatile T* addr, T value) { return __atomic_fetch_or(addr, value, __ATOMIC_SEQ_CST); }   \
  KILN_RS_OVERLOAD T rsAtomicXor(volatile T* addr, T value) { return __atomic_fetch_xor(addr, value, __ATOMIC_SEQ_CST); } \
  KILN_RS_OVERLOAD T rsAtomicInc(volatile T* addr) { return __atomic_fetch_add(addr, (T)1, __ATOMIC_SEQ_CST); }          \
  KILN_RS_OVERLOAD T rsAtomicDec(volatile T* addr) { return __atomic_fetch_sub(addr, (T)1, __ATOMIC_SEQ_CST); }          \
  KILN_RS_OVERLOAD T rsAtomicMin(volatile T* addr, T value) { return __atomic_fetch_min(addr, value, __ATOMIC_SEQ_CST); } \
  KILN_RS_OVERLOAD T rsAtomicMax(volatile T* addr, T value) { return __atomic_fetch_max(addr, value, __ATOMIC_SEQ_CST); } \
  KILN_RS_OVERLOAD T rsAtomicCas(volatile T* addr, T compare_value, T new_value) {                            \
    __atomic_compare_exchange_n(addr, &compare_value, new_value, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);       \
    return compare_value;                                                                                     \
  }
KILN_DEFINE_ATOMICS(int32_t)
KILN_DEFINE_ATOMICS(uint32_t)

/* ---- rsDebug ---- */

KILN_RS_OVERLOAD void rsDebug(const char* message) { __kiln_rt_debug(message, 0u, 0u, NULL); }
KILN_RS_OVERLOAD void rsDebug(const char* message, const void* pointer) {
  __kiln_rt_debug(message, KILN_KERNEL_DEBUG_POINTER, 1u, pointer);
}
#define KILN_DEFINE_DEBUG(T, KILN_TYPE, LANES) \
  KILN_RS_OVERLOAD void rsDebug(const char* message, T value) { __kiln_rt_debug(message, KILN_TYPE, LANES, &value); }
#define KILN_DEFINE_DEBUG_VECTORS(T, KILN_TYPE) \
  KILN_DEFINE_DEBUG(T, KILN_TYPE, 1u)          \
  KILN_DEFINE_DEBUG(T##2, KILN_TYPE, 2u)       \
  KILN_DEFINE_DEBUG(T##3, KILN_TYPE, 3u)       \
  KILN_DEFINE_DEBUG(T##4, KILN_TYPE, 4u)
KILN_DEFINE_DEBUG(char, 9u, 1u)
KILN_DEFINE_DEBUG(char2, 9u, 2u)
KILN_DEFINE_DEBUG(char3, 9u, 3u)
KILN_DEFINE_DEBUG(char4, 9u, 4u)
KILN_DEFINE_DEBUG_VECTORS(uchar, 3u)
KILN_DEFINE_DEBUG_VECTORS(short, 7u)
KILN_DEFINE_DEBUG_VECTORS(ushort, 17u)
KILN_DEFINE_DEBUG_VECTORS(int, 2u)
KILN_DEFINE_DEBUG_VECTORS(uint, 16u)
KILN_DEFINE_DEBUG_VECTORS(long, 4u)
KILN_DEFINE_DEBUG_VECTORS(ulong, 13u)
KILN_DEFINE_DEBUG(long long, 4u, 1u)
KILN_DEFINE_DEBUG(unsigned long long, 13u, 1u)
KILN_DEFINE_DEBUG_VECTORS(float, 1u)
KILN_DEFINE_DEBUG_VECTORS(double, 11u)
#ifdef KILN_HAS_HALF
KILN_DEFINE_DEBUG_VECTORS(half, 10u)
#endif
KILN_RS_OVERLOAD void rsDebug(const char* message, float a, float b) { rsDebug(message, (float2){a, b}); }
KILN_RS_OVERLOAD void rsDebug(const char* message, float a, float b, float c) {
  rsDebug(message, (float3){a, b, c});
}
KILN_RS_OVERLOAD void rsDebug(const char* message, float a, float b, float c, float d) {
  rsDebug(message, (float4){a, b, c, d});
}
#ifdef KILN_RS_MATH_RSH /* rs_matrix*x* come with the math library */
KILN_RS_OVERLOAD void rsDebug(const char* message, const rs_matrix4x4* m) {
  __kiln_rt_debug(message, KILN_KERNEL_DEBUG_MATRIX, 4u, m);
}
KILN_RS_OVERLOAD void rsDebug(const char* message, const rs_matrix3x3* m) {
  __kiln_rt_debug(message, KILN_KERNEL_DEBUG_MATRIX, 3u, m);
}
KILN_RS_OVERLOAD void rsDebug(const char* message, const rs_matrix2x2* m) {
  __kiln_rt_debug(message, KILN_KERNEL_DEBUG_MATRIX, 2u, m);
}
#endif

/* ---- Messages to the client ---- */

KILN_RS_OVERLOAD bool rsSendToClient(int cmdID) { return __kiln_rt_send_to_client(cmdID, NULL, 0u, 0) != 0; }
KILN_RS_OVERLOAD bool rsSendToClient(int cmdID, const void* data, uint len) {
  return __kiln_rt_send_to_client(cmdID, data, len, 0) != 0;
}
KILN_RS_OVERLOAD void rsSendToClientBlocking(int cmdID) { (void)__kiln_rt_send_to_client(cmdID, NULL, 0u, 1); }
KILN_RS_OVERLOAD void rsSendToClientBlocking(int cmdID, const void* data, uint len) {
  (void)__kiln_rt_send_to_client(cmdID, data, len, 1);
}

/* ---- Time ---- */

KILN_RS_INLINE int64_t rsUptimeMillis(void) { return __kiln_rt_uptime_millis(); }
KILN_RS_INLINE int64_t rsUptimeNanos(void) { return __kiln_rt_uptime_nanos(); }
KILN_RS_INLINE rs_time_t rsTime(rs_time_t* timer) { return __kiln_rt_time(timer); }
KILN_RS_INLINE rs_tm* rsLocaltime(rs_tm* local, const rs_time_t* timer) {
  __kiln_rt_localtime(local, timer ? *timer : __kiln_rt_time(NULL));
  return local;
}

#endif /* KILN_RS_CORE_RSH */
