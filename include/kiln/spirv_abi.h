/* Kiln: the ABI between a module's GPU payload (SPIR-V, tag "spirv") and a Vulkan driver that runs it.
 *
 * A module's "spirv" payload is one little-endian blob: a KilnSpirvPayloadHeader, a table of
 * KilnSpirvKernelEntry (one per kernel of the module, in the order of KilnHalModuleDesc.kernels), a table of
 * KilnSpirvGlobalEntry (the globals a GPU kernel can see), a string area, and one SPIR-V module per kernel.
 * Every offset is in bytes from the start of the payload; every table row is read with the stride the header
 * gives, so rows can grow at the end. A kernel whose code_size is 0 has no GPU form (kilnc could not lower
 * it): it is CPU-only, and cpu_only_reason says why.
 *
 * Each kernel is a GLSL 4.50 (or any SPIR-V 1.0-1.6) compute shader that follows these rules:
 *
 *   Workgroup size: specialization constants 0, 1, 2 (KILN_SPIRV_SPEC_LOCAL_SIZE_X/Y/Z), declared as
 *     layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
 *   The driver picks the size per launch shape (1D, 2D, 3D) within the device's limits.
 *
 *   Launch geometry: one push-constant block, std430, exactly this layout (N = inputs + 1 when the kernel has
 *   an output, else inputs):
 *     layout(push_constant, std430) uniform KilnLaunch {
 *       uvec4 dim;      // dim_x, dim_y, dim_z of the whole launch; w: kernels, the launch's rsRand seed
 *                       // (the driver changes it with each launch of a script); reductions, see below
 *       uvec4 origin;   // the cell of this dispatch's invocation (0,0,0): a driver may split a launch
 *       uvec4 view[N];  // per input i (in order), then the output: offset, stride_x, stride_y, stride_z
 *     } kiln;
 *   The cell an invocation works on is p = gl_GlobalInvocationID + kiln.origin.xyz; it must do nothing when
 *   any(greaterThanEqual(p, kiln.dim.xyz)) (the bounds guard). Input i's element for cell p is at index
 *     kiln.view[i].x + p.x * kiln.view[i].y + p.y * kiln.view[i].z + p.z * kiln.view[i].w
 *   of the input's storage array, in units of that array's element (unit_sizes[i] bytes): the driver divides
 *   the HAL's byte offset and byte strides by the unit size (and refuses views they do not divide). A stride
 *   of 0 broadcasts, as on the CPU. The output uses view[num_inputs] the same way.
 *   The push-constant block is 32 + 16 * N bytes; a kernel fits a device when that is at most the device's
 *   maxPushConstantsSize (128 bytes on most devices: up to 6 views, e.g. 5 inputs and an output).
 *
 *   Bindings, all in descriptor set 0, all storage buffers (std430), bound whole (offset 0):
 *     binding 0                          the script's global block (KILN_SPIRV_GLOBALS_BINDING), readonly
 *     binding 1 + i                      input i (KILN_SPIRV_FIRST_INPUT_BINDING + i), readonly
 *     binding 9                          the output (KILN_SPIRV_OUTPUT_BINDING), writeonly or read-write
 *     binding 10 + k                     the k-th allocation global of the global table (in table order,
 *                                        counting only KILN_SPIRV_GLOBAL_ALLOCATION rows)
 *     binding 27                         the launch's fault record (see "Faults"), read-write
 *     binding 28                         the launch's usrData (see "usrData"), readonly
 *   A shader declares only the bindings it uses. Each buffer is declared as a runtime array of its unit type,
 *   e.g. `layout(set = 0, binding = 1, std430) readonly buffer In0 { float in0[]; };`.
 *
 *   Globals: the global block is a byte image of std430 members. A value global (KILN_SPIRV_GLOBAL_VALUE) of
 *   `size` bytes is copied verbatim from the host value (the C layout kernel_abi.h uses) to `block_offset`,
 * so the shader must declare a member whose std430 bytes equal the C bytes: float, int, uint, vec2/4 and mat4
 * map directly (float3 is 16 bytes in the kernel language, as vec3 plus padding in std430); types GLSL cannot
 * mirror (bool and char/short values and vectors, structs whose padding differs) are declared as uint words
 * and unpacked in the shader. block_offset is aligned as std430 requires for the member. Globals are
 * snapshotted when a launch is recorded: a kernel sees the values set before its launch, and cannot write
 * globals.
 *
 *   Allocations (rs_allocation globals, pointer globals bound with rsBind): the buffer view bound with
 *   script_bind_allocation goes to the global's binding; a KilnSpirvAllocationInfo (std430: 8 uints) sits at
 *   the global's block_offset in the global block, with its extents and its offset and strides in units of
 * the binding's array element (unit_size in the global row). dim_x is 0 while nothing is bound (the driver
 * then binds a small zero-filled buffer). Elements are packed along x, so rsGetElementAt(a, x, y, z) reads
 * from info.offset + x * (info.element_size / info.unit_size) + y * info.stride_y + z * info.stride_z after
 * checking x < dim_x (and y, z against max(dim, 1)) and the element size.
 *
 *   Faults: an access that fails those checks reads zero (a write does nothing) and records a fault in the
 * launch's fault record, a KilnSpirvFault at binding 27 (KILN_SPIRV_FAULT_BINDING), declared
 * `buffer KilnFault { uint kiln_fault[8]; }`: the first faulting invocation sets `code` with
 * atomicCompSwap(code, 0, KILN_SPIRV_FAULT_*) and, having won, writes the other fields. A shader that can
 * fault declares the binding; the driver binds a zeroed record to each such launch and, when the batch has
 * run, fails the launch whose record is set, naming the allocation and the coordinates, as the CPU driver
 * fails a launch that accesses an allocation out of range.
 *
 *   usrData: a kernel with KILN_HAL_SIG_USR whose shader reads its usrData or tests it against NULL declares
 * `readonly buffer KilnUsr { uint kiln_usr_size; uint kiln_usr[]; }` at binding 28 (KILN_SPIRV_USR_BINDING).
 * The driver binds each launch a snapshot of the launch's KilnHalForEachDesc.usr_size (in the first word) and
 * its usr_data bytes (from the second word, zero-padded to whole words): usr_size 0 stands for a NULL usrData.
 * The shader reads usrData's C bytes as words, as it reads struct globals, and reads 0 past usr_size.
 *
 *   Small element types: elements of 4 bytes or more (uchar4, short2, float, int4, ...) are declared with a
 *   unit type of 4 bytes or more (uint for uchar4, unpacked with unpackUnorm4x8 or shifts; vec4 for float4),
 *   and need no device feature. Elements of 1 or 2 bytes (char, uchar, short, half, uchar2) use 8- or 16-bit
 *   storage types (GL_EXT_shader_8bit_storage / 16bit_storage, unit size 1 or 2) and set
 *   KILN_SPIRV_FEATURE_STORAGE_8BIT / _16BIT; a read-only input may instead be declared as uint words with
 *   unit size 4 and unpacked by index / 4 (then its offsets and strides must be multiples of 4 bytes). A
 *   kernel using 8/16/64-bit arithmetic or float64 sets the matching feature bit; the driver reports the
 *   kernel unsupported, with the reason, on a device that lacks one.
 *
 * Reductions (`#pragma rs reduce`): the header's reduction table (fields appended to version 1's header: a
 * payload whose header_size does not reach them has no reductions) has one KilnSpirvReductionEntry per
 * reduction, in the order of KilnHalModuleDesc.reductions. Each is one SPIR-V module that runs a two-pass
 * workgroup reduction, the pass chosen by specialization constant 3 (KILN_SPIRV_SPEC_REDUCE_PASS):
 *
 *   Workgroup: spec constants 0, 1, 2 as for kernels; the driver sets y = z = 1 and x = W, a power of two
 *     with W * accumulator_stride <= maxComputeSharedMemorySize (the shader keeps W accumulators in shared
 *     memory and combines them as a tree).
 *   Push constants: the KilnLaunch block above with N = num_inputs views; origin is (0, 0, 0, 0), and
 *     dim.w = G, the number of workgroups of pass 0 (the number of partial accumulators). The driver refuses
 *     launches of 2^31 cells or more.
 *   Pass 0 (constant 3 = 0), dispatched as (G, 1, 1): every invocation starts from the initializer's value
 *     and accumulates the cells c = gl_GlobalInvocationID.x + k * G * W below dim.x * dim.y * dim.z, cell c
 *     being p = (c % dim.x, (c / dim.x) % dim.y, c / (dim.x * dim.y)) (inputs read as for kernels); then the
 *     workgroup combines its W accumulators and stores the one result at index gl_WorkGroupID.x of the
 *     partials buffer.
 *   Pass 1 (constant 3 = 1), dispatched as (1, 1, 1) after a barrier: the workgroup combines the G partials
 *     (G may be 0: the result is then the outconverter of the initial value), applies the outconverter and
 *     writes the result's C bytes (as KilnHalReductionDesc.result_size gives them, padded with zero to
 *     result_words * 4 bytes) as uint words from index 0 of binding 9 (KILN_SPIRV_RESULT_BINDING).
 *   Bindings: as for kernels (globals 0, inputs 1 + i, allocations 10 + k), the result at 9, and the
 *     partials at 26 (KILN_SPIRV_PARTIALS_BINDING): a buffer of at least G * accumulator_stride bytes that
 *     only the shader reads and writes (its layout is the shader's own). The driver binds each whole.
 *   RenderScript's rules make any combining order valid: the initializer's value is an identity of the
 *   combiner, and the combiner is associative and commutative up to rounding.
 *
 * Versioning: KILN_SPIRV_ABI_VERSION changes when any rule above changes meaning; a driver refuses a payload
 * with another version (the module's kernels then run on the CPU). Fields are only appended to the rows. C99.
 */
#ifndef KILN_SPIRV_ABI_H_
#define KILN_SPIRV_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_SPIRV_ABI_VERSION 1u
#define KILN_SPIRV_PAYLOAD_TAG "spirv"
#define KILN_SPIRV_PAYLOAD_MAGIC 0x5650534Bu /* the bytes "KSPV" */

/* Specialization constant ids of the workgroup size. */
#define KILN_SPIRV_SPEC_LOCAL_SIZE_X 0u
#define KILN_SPIRV_SPEC_LOCAL_SIZE_Y 1u
#define KILN_SPIRV_SPEC_LOCAL_SIZE_Z 2u

/* Binding numbers in descriptor set 0. */
#define KILN_SPIRV_GLOBALS_BINDING 0u
#define KILN_SPIRV_FIRST_INPUT_BINDING 1u /* input i at 1 + i, i < KILN_KERNEL_MAX_INPUTS (8) */
#define KILN_SPIRV_OUTPUT_BINDING 9u
#define KILN_SPIRV_FIRST_ALLOCATION_BINDING 10u
#define KILN_SPIRV_MAX_ALLOCATIONS 16u
#define KILN_SPIRV_RESULT_BINDING 9u    /* a reduction's result (the output binding of kernels) */
#define KILN_SPIRV_PARTIALS_BINDING 26u /* a reduction's partial accumulators: after the allocations */
#define KILN_SPIRV_FAULT_BINDING 27u    /* the launch's fault record (KilnSpirvFault), when the shader has one */
#define KILN_SPIRV_USR_BINDING 28u      /* an old-style root()'s usrData (KilnHalForEachDesc.usr_data) */

/* KilnSpirvFault.code */
#define KILN_SPIRV_FAULT_NONE 0u
#define KILN_SPIRV_FAULT_READ 1u  /* rsGetElementAt_<T> or p[i] outside the allocation, or of another size */
#define KILN_SPIRV_FAULT_WRITE 2u /* rsSetElementAt_<T> likewise */

/* Specialization constant id of a reduction's pass (0: accumulate into partials; 1: combine and convert). */
#define KILN_SPIRV_SPEC_REDUCE_PASS 3u

/* Bytes of the push-constant block before the views, and per view. */
#define KILN_SPIRV_PUSH_HEADER_SIZE 32u
#define KILN_SPIRV_PUSH_VIEW_SIZE 16u

/* Device features a kernel needs (KilnSpirvKernelEntry.required_features). */
#define KILN_SPIRV_FEATURE_STORAGE_8BIT 0x01u  /* storageBuffer8BitAccess */
#define KILN_SPIRV_FEATURE_STORAGE_16BIT 0x02u /* storageBuffer16BitAccess */
#define KILN_SPIRV_FEATURE_INT8 0x04u          /* shaderInt8 */
#define KILN_SPIRV_FEATURE_INT16 0x08u         /* shaderInt16 */
#define KILN_SPIRV_FEATURE_FLOAT16 0x10u       /* shaderFloat16 */
#define KILN_SPIRV_FEATURE_INT64 0x20u         /* shaderInt64 */
#define KILN_SPIRV_FEATURE_FLOAT64 0x40u       /* shaderFloat64 */
#define KILN_SPIRV_FEATURE_ALL 0x7fu

/* KilnSpirvGlobalEntry.kind */
#define KILN_SPIRV_GLOBAL_VALUE 0u      /* bytes copied to block_offset */
#define KILN_SPIRV_GLOBAL_ALLOCATION 1u /* a storage buffer binding plus a KilnSpirvAllocationInfo */

/* String fields hold an offset into the string area (a NUL-terminated UTF-8 string starts there). */
typedef struct KilnSpirvPayloadHeader {
  uint32_t magic;         /* KILN_SPIRV_PAYLOAD_MAGIC */
  uint32_t abi_version;   /* KILN_SPIRV_ABI_VERSION */
  uint32_t header_size;   /* bytes of this header as written (at least KILN_SPIRV_HEADER_SIZE_V1) */
  uint32_t spirv_version; /* the SPIR-V version the modules target, as in their header: 0x00010300 = 1.3 */
  uint32_t generator_version; /* glslang's, major * 10000 + minor * 100 + patch; 0 when not from glslang */
  uint32_t num_kernels;       /* equals KilnHalModuleDesc.num_kernels */
  uint32_t kernel_entry_size; /* the kernel table's row stride */
  uint32_t kernels_offset;
  uint32_t num_globals;
  uint32_t global_entry_size; /* the global table's row stride */
  uint32_t globals_offset;
  uint32_t global_block_size; /* bytes of the global block (binding 0); 0 when no kernel reads globals */
  uint32_t strings_offset;
  uint32_t strings_size;
  /* Appended: the reduction table (present when header_size reaches these fields). */
  uint32_t num_reductions;       /* equals KilnHalModuleDesc.num_reductions */
  uint32_t reduction_entry_size; /* the reduction table's row stride */
  uint32_t reductions_offset;
} KilnSpirvPayloadHeader;

/* Bytes of the header before the reduction fields: the smallest header_size a reader accepts. */
#define KILN_SPIRV_HEADER_SIZE_V1 56u

typedef struct KilnSpirvKernelEntry {
  uint32_t name;              /* string: the kernel's source name, equal to KilnHalKernelDesc.name */
  uint32_t entry_point;       /* string: the OpEntryPoint name, e.g. "main" */
  uint32_t code_offset;       /* the SPIR-V words: a multiple of 4 */
  uint32_t code_size;         /* bytes, a multiple of 4; 0 when the kernel is CPU-only */
  uint32_t cpu_only_reason;   /* string: why there is no GPU form (code_size 0), else an empty string */
  uint32_t required_features; /* KILN_SPIRV_FEATURE_* */
  uint32_t num_inputs;        /* equals KilnHalKernelDesc.num_inputs */
  uint32_t has_output;        /* 1 when the kernel writes binding 9, else 0 */
  /* The bytes of each binding's array element: inputs 0..num_inputs-1, then [KILN_KERNEL_MAX_INPUTS] for the
   * output. Each divides the matching element size or is a multiple of it. */
  uint32_t unit_sizes[9];
  uint32_t reserved;
} KilnSpirvKernelEntry;

typedef struct KilnSpirvGlobalEntry {
  uint32_t name;         /* string: the global's source name, as in KilnHalGlobalDesc.name */
  uint32_t kind;         /* KILN_SPIRV_GLOBAL_* */
  uint32_t size;         /* VALUE: bytes of the value (KilnHalGlobalDesc.size); ALLOCATION: 0 */
  uint32_t block_offset; /* where the value, or the KilnSpirvAllocationInfo (16-byte aligned), lives */
  uint32_t unit_size;    /* ALLOCATION: bytes of the binding's array element */
  uint32_t reserved;
} KilnSpirvGlobalEntry;

typedef struct KilnSpirvReductionEntry {
  uint32_t name;              /* string: the reduction's name, equal to KilnHalReductionDesc.name */
  uint32_t entry_point;       /* string: the OpEntryPoint name */
  uint32_t code_offset;       /* the SPIR-V words (both passes): a multiple of 4 */
  uint32_t code_size;         /* bytes, a multiple of 4; 0 when the reduction is CPU-only */
  uint32_t cpu_only_reason;   /* string: why there is no GPU form (code_size 0), else an empty string */
  uint32_t required_features; /* KILN_SPIRV_FEATURE_* */
  uint32_t num_inputs;        /* equals KilnHalReductionDesc.num_inputs */
  uint32_t accumulator_stride; /* bytes of one accumulator in the partials buffer and in shared memory */
  uint32_t result_words;       /* uint words pass 1 writes to binding 9: (result_size + 3) / 4 */
  uint32_t unit_sizes[8];      /* the bytes of each input binding's array element, as for kernels */
  uint32_t reserved;
} KilnSpirvReductionEntry;

/* A launch's fault record (binding 27, std430: eight uints), zero until an allocation access faults. */
typedef struct KilnSpirvFault {
  uint32_t code;       /* KILN_SPIRV_FAULT_* */
  uint32_t allocation; /* k: the allocation of binding KILN_SPIRV_FIRST_ALLOCATION_BINDING + k */
  uint32_t x, y, z;    /* the coordinates accessed (p[i]: x = i) */
  uint32_t element_size; /* bytes of the element the shader accessed */
  uint32_t reserved[2];
} KilnSpirvFault;

/* What the driver writes at an allocation global's block_offset (std430: eight uints). */
typedef struct KilnSpirvAllocationInfo {
  uint32_t dim_x; /* 0 while unbound */
  uint32_t dim_y; /* 0 when absent, as rsAllocationGetDimY reports it */
  uint32_t dim_z;
  uint32_t element_size; /* bytes */
  uint32_t offset;       /* element (0, 0, 0), in units */
  uint32_t stride_y;     /* in units */
  uint32_t stride_z;     /* in units */
  uint32_t unit_size;    /* bytes per unit */
} KilnSpirvAllocationInfo;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_SPIRV_ABI_H_ */
