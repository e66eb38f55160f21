/* Kiln: the ABI between a module's CPU payload (LLVM bitcode from kilnc) and a driver that runs it on the host.
 *
 * kilnc wraps every RS_KERNEL into an "expanded" function that loops over a range of x for one (y, z) row,
 * so a driver never calls a kernel once per element (RenderScript's RSKernelExpand is the model):
 *
 *   void __kiln_expand_<kernel>(const KilnKernelLaunch* launch, uint32_t x_begin, uint32_t x_end,
 *                               uint32_t y, uint32_t z);
 *
 * Reductions (`#pragma rs reduce(<name>) ...`) become four functions, with the accumulator's size and alignment
 * in the module's reflection:
 *
 *   void __kiln_reduce_<name>_init(void* accum);                      // the initializer, or zero-fill
 *   void __kiln_reduce_<name>_accum(const KilnKernelLaunch* launch, void* accum, uint32_t x_begin,
 *                                   uint32_t x_end, uint32_t y, uint32_t z);
 *   void __kiln_reduce_<name>_combine(void* accum, const void* other);  // the combiner (or the accumulator)
 *   void __kiln_reduce_<name>_out(void* result, const void* accum);    // the outconverter, or a copy
 *
 * Invokables become `void __kiln_invoke_<name>(const void* args)`, with the arguments packed in declaration
 * order at their natural alignment; `init()` becomes `__kiln_invoke_init`. Script globals keep their source
 * names as LLVM globals; a driver instantiates one copy of the module per script, so globals are per script.
 *
 * The runtime a kernel calls into (math, conversions, allocation access, rsDebug, ...) is versioned with the HAL
 * level; see kiln/hal.h. Every struct starts with its size so that it can grow at the end. C99. */
#ifndef KILN_KERNEL_ABI_H_
#define KILN_KERNEL_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_KERNEL_ABI_VERSION 1u
#define KILN_KERNEL_MAX_INPUTS 8

/* What an `rs_allocation` points at on the CPU: a view of one buffer, up to three dimensions. */
typedef struct KilnKernelAllocation {
  uint32_t struct_size;   /* sizeof(KilnKernelAllocation) */
  uint32_t element_size;  /* bytes per element: a float4 is 16, a uchar4 is 4 */
  uint32_t element_type;  /* KilnType of one scalar lane */
  uint32_t vector_size;   /* lanes per element: 1, 2, 3 or 4 */
  uint32_t dim_x;         /* extents; an absent dimension is 0, as rsAllocationGetDimY reports it */
  uint32_t dim_y;
  uint32_t dim_z;
  uint32_t reserved;
  uint64_t stride_y; /* bytes between consecutive y */
  uint64_t stride_z; /* bytes between consecutive z */
  void* data;        /* element (0, 0, 0) */
} KilnKernelAllocation;

/* One launch of an expanded kernel, shared read-only by every thread working on it. */
typedef struct KilnKernelLaunch {
  uint32_t struct_size; /* sizeof(KilnKernelLaunch) */
  uint32_t abi_version; /* KILN_KERNEL_ABI_VERSION */
  uint32_t num_inputs;
  uint32_t dim_x; /* the launch's extents, each at least 1 */
  uint32_t dim_y;
  uint32_t dim_z;
  /* Element (0, 0, 0) of each input, and the byte distance between neighbours along x, y and z. A stride of
   * 0 broadcasts that input along that dimension. */
  const uint8_t* in[KILN_KERNEL_MAX_INPUTS];
  uint64_t in_stride_x[KILN_KERNEL_MAX_INPUTS];
  uint64_t in_stride_y[KILN_KERNEL_MAX_INPUTS];
  uint64_t in_stride_z[KILN_KERNEL_MAX_INPUTS];
  /* The output's element (0, 0, 0) and strides; out is NULL for kernels that return void. */
  uint8_t* out;
  uint64_t out_stride_x;
  uint64_t out_stride_y;
  uint64_t out_stride_z;
  /* The usrData of old-style root() kernels. */
  const void* usr_data;
  size_t usr_size;
  /* The script this launch belongs to: what runtime services (rsDebug, rsSendToClient, rsForEach) use. */
  void* script;
} KilnKernelLaunch;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_KERNEL_ABI_H_ */
