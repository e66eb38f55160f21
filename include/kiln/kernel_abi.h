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

/* ---- Runtime services -------------------------------------------------------------------------------------
 *
 * The functions below are what a module's bitcode may call besides its own code and the math library that kilnc
 * links into it. A CPU driver resolves them when it JIT-links the module; the module's reflection lists the ones
 * it actually uses (its "imports"), so a driver can refuse a module early. They take no script argument: before
 * a driver calls any __kiln_expand_/__kiln_reduce_/__kiln_invoke_ function on a thread it makes the script (and
 * launch) current in thread-local state, as RenderScript's runtime did. Each service is annotated with the HAL
 * level that introduced it; a module's HAL level is the maximum over the services its code reaches.
 *
 * The prelude (compiler/prelude/rs_core.rsh) declares them with these exact prototypes. */

/* The highest HAL level of kernel runtime services this header describes. A runtime refuses modules that need
 * a newer one. */
#define KILN_KERNEL_HAL_LEVEL_MAJOR 1
#define KILN_KERNEL_HAL_LEVEL_MINOR 0

/* rsDebug: `element_type` is a KilnType and `value` points at `vector_size` lanes of it; kKilnNoType (0) means
 * a message alone (value is NULL); KILN_KERNEL_DEBUG_POINTER means `value` is the pointer to print itself, and
 * KILN_KERNEL_DEBUG_MATRIX means `value` points at a column-major vector_size x vector_size float matrix. */
#define KILN_KERNEL_DEBUG_POINTER 0x100u
#define KILN_KERNEL_DEBUG_MATRIX 0x101u
void __kiln_rt_debug(const char* message, uint32_t element_type, uint32_t vector_size, const void* value);

/* rsSendToClient / rsSendToClientBlocking: hands `size` bytes (copied) with `cmd_id` to the script's message
 * handler. Returns nonzero when the message was queued (the non-blocking form may drop it when full). */
int32_t __kiln_rt_send_to_client(int32_t cmd_id, const void* data, uint32_t size, int32_t blocking);

/* rsUptimeMillis / rsUptimeNanos: a monotonic clock. rsTime: seconds since the epoch, also stored in *timer
 * when it is not NULL. */
int64_t __kiln_rt_uptime_millis(void);
int64_t __kiln_rt_uptime_nanos(void);
int64_t __kiln_rt_time(int64_t* timer);

/* rsLocaltime: the broken-down local time, with the fields and meaning of C's struct tm. */
typedef struct KilnKernelTm {
  int32_t tm_sec;
  int32_t tm_min;
  int32_t tm_hour;
  int32_t tm_mday;
  int32_t tm_mon;
  int32_t tm_year;
  int32_t tm_wday;
  int32_t tm_yday;
  int32_t tm_isdst;
} KilnKernelTm;
void __kiln_rt_localtime(KilnKernelTm* out, int64_t time);

/* Called by rsGetElementAt_* / rsSetElementAt_* (and the YUV, VLoad/VStore and copy-range helpers) instead of
 * touching memory when `allocation` is NULL (an unbound rs_allocation), the coordinates are outside it (an
 * absent dimension only admits 0) or `element_size` (0: not checked) differs from the allocation's. The access is skipped (a read yields zero); the driver reports the error with the
 * script's name and fails the launch or invocation. */
void __kiln_rt_element_access_error(const KilnKernelAllocation* allocation, uint32_t x, uint32_t y, uint32_t z,
                                    uint32_t element_size);

/* rsCreateAllocation: a new zero-filled allocation owned by the current script (freed with it), or NULL when
 * it cannot be created. dim_y/dim_z of 0 mean the dimension is absent. */
KilnKernelAllocation* __kiln_rt_create_allocation(uint32_t element_type, uint32_t vector_size, uint32_t dim_x,
                                                  uint32_t dim_y, uint32_t dim_z);

/* The launch range of rsForEachWithOptions; an end of 0 means the allocation's extent. */
typedef struct KilnKernelLaunchOptions {
  uint32_t struct_size; /* sizeof(KilnKernelLaunchOptions) */
  uint32_t x_start;
  uint32_t x_end;
  uint32_t y_start;
  uint32_t y_end;
  uint32_t z_start;
  uint32_t z_end;
} KilnKernelLaunchOptions;

/* rsForEach / rsForEachWithOptions: runs kernel `kernel_name` of the current script synchronously over the
 * given allocations: its inputs in order, then its output when it returns one (the module's reflection gives
 * the kernel's signature). `options` may be NULL. Returns nonzero on success. */
int32_t __kiln_rt_for_each(const char* kernel_name, const KilnKernelAllocation* const* allocations,
                           uint32_t num_allocations, const KilnKernelLaunchOptions* options);

/* YUV allocations (rsGetElementAtYuv_uchar_Y/U/V) are NV21, as Android cameras deliver them: element_type
 * kKilnUInt8, vector_size 1, dim_x x dim_y luma samples at `data` with rows `stride_y` apart, followed at
 * data + stride_y * dim_y by dim_y / 2 rows (same stride) of interleaved V,U pairs, one pair per 2x2 block. */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_KERNEL_ABI_H_ */
