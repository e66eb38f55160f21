/* rs_types.rsh: the scalar and vector types of Kiln's RenderScript-style kernel language.
 *
 * Included first by the prelude that kilnc puts in front of every kernel source. Vectors are Clang
 * ext_vector_type vectors, so swizzles (v.xyz, v.s01, v.rgba) and element-wise operators work as in RenderScript.
 * A 3-element vector has the size and alignment of a 4-element one, as in RenderScript and OpenCL. */
#ifndef KILN_RS_TYPES_RSH
#define KILN_RS_TYPES_RSH

typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
/* RenderScript's long is 64-bit on every target Kiln supports (LP64). */
typedef unsigned long ulong;

typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef unsigned long size_t;
typedef long ptrdiff_t;
typedef _Bool bool;
#define true 1
#define false 0
#ifndef NULL
#define NULL ((void*)0)
#endif

#if defined(__FLT16_MAX__) || defined(__SPIR__)
#define KILN_HAS_HALF 1
typedef _Float16 half;
#endif

typedef signed char char2 __attribute__((ext_vector_type(2)));
typedef signed char char3 __attribute__((ext_vector_type(3)));
typedef signed char char4 __attribute__((ext_vector_type(4)));
typedef unsigned char uchar2 __attribute__((ext_vector_type(2)));
typedef unsigned char uchar3 __attribute__((ext_vector_type(3)));
typedef unsigned char uchar4 __attribute__((ext_vector_type(4)));
typedef short short2 __attribute__((ext_vector_type(2)));
typedef short short3 __attribute__((ext_vector_type(3)));
typedef short short4 __attribute__((ext_vector_type(4)));
typedef unsigned short ushort2 __attribute__((ext_vector_type(2)));
typedef unsigned short ushort3 __attribute__((ext_vector_type(3)));
typedef unsigned short ushort4 __attribute__((ext_vector_type(4)));
typedef int int2 __attribute__((ext_vector_type(2)));
typedef int int3 __attribute__((ext_vector_type(3)));
typedef int int4 __attribute__((ext_vector_type(4)));
typedef unsigned int uint2 __attribute__((ext_vector_type(2)));
typedef unsigned int uint3 __attribute__((ext_vector_type(3)));
typedef unsigned int uint4 __attribute__((ext_vector_type(4)));
typedef long long2 __attribute__((ext_vector_type(2)));
typedef long long3 __attribute__((ext_vector_type(3)));
typedef long long4 __attribute__((ext_vector_type(4)));
typedef unsigned long ulong2 __attribute__((ext_vector_type(2)));
typedef unsigned long ulong3 __attribute__((ext_vector_type(3)));
typedef unsigned long ulong4 __attribute__((ext_vector_type(4)));
typedef float float2 __attribute__((ext_vector_type(2)));
typedef float float3 __attribute__((ext_vector_type(3)));
typedef float float4 __attribute__((ext_vector_type(4)));
typedef double double2 __attribute__((ext_vector_type(2)));
typedef double double3 __attribute__((ext_vector_type(3)));
typedef double double4 __attribute__((ext_vector_type(4)));
#ifdef KILN_HAS_HALF
typedef _Float16 half2 __attribute__((ext_vector_type(2)));
typedef _Float16 half3 __attribute__((ext_vector_type(3)));
typedef _Float16 half4 __attribute__((ext_vector_type(4)));
#endif

#endif /* KILN_RS_TYPES_RSH */
