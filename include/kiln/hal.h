/* Kiln: the driver HAL, the only interface between the runtime and a device driver (draft, version 1.1).
 *
 * A driver is a shared library (or, for the built-in CPU driver, a static library linked into the runtime)
 * that exports one entry point, kiln_driver_query. The runtime calls it with the HAL version it speaks and
 * the services it offers; the driver fills a function table, KilnHalDriver. From then on the runtime reaches
 * the driver only through that table, and the driver reaches the runtime only through KilnHalServices.
 *
 * Rules that hold for every type and call below:
 *   - Every struct that crosses the boundary starts with `uint32_t struct_size`, set by whoever fills it to
 *     sizeof() of the struct as it was compiled. New fields are only ever appended, so a reader handles a
 *     smaller struct by treating the missing tail as zero, and a larger one by ignoring the tail.
 *   - A NULL entry in a function table means "not supported"; the caller must check before calling.
 *   - Every call returns KilnStatus. Out-parameters are named out_* and come last. On failure a driver
 *     describes the problem (what, and where: kernel, global, payload offset) through
 *     KilnHalServices.report_error before returning, so the runtime can pass the message on to its user.
 *     It does so on the thread that made the failing call: the runtime keeps each thread's messages apart, so
 *     calls that fail at the same time on several threads each get their own message.
 *   - An array of structs is laid out with its first element's struct_size as the stride, so a caller built
 *     against another minor version can pass one.
 *   - Strings are NUL-terminated UTF-8. Pointers passed into a call are borrowed for the duration of the call
 *     unless the call says otherwise.
 *
 * Versioning: KILN_HAL_VERSION_MAJOR changes when an entry point or field is removed or changes meaning;
 * KILN_HAL_VERSION_MINOR changes when one is added (appended). Both only ever increase. A driver accepts a
 * runtime whose major equals its own (any minor), fills only the entries the runtime's minor knows about (the
 * runtime's struct_size tells it where the table ends), and reports the version it implements.
 *
 * The HAL *level* is a different number: the major.minor level of the runtime services a compiled kernel may
 * call (KILN_KERNEL_HAL_LEVEL_MAJOR/MINOR in kiln/kernel_abi.h). A kernel needs a level; a device runs
 * kernels up to a maximum level. Levels cross this interface packed by KILN_HAL_LEVEL(major, minor), which
 * orders them as numbers.
 *
 * C99; no C++ type crosses this interface. */
#ifndef KILN_HAL_H_
#define KILN_HAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/common.h"
#include "kiln/kernel_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_HAL_VERSION_MAJOR 1u
#define KILN_HAL_VERSION_MINOR 1u
/* A kernel HAL level major.minor as one number; larger means newer. */
#define KILN_HAL_LEVEL(major, minor) ((uint32_t)(((uint32_t)(major) << 16) | ((uint32_t)(minor)&0xffffu)))
#define KILN_HAL_LEVEL_MAJOR(level) ((uint32_t)(level) >> 16)
#define KILN_HAL_LEVEL_MINOR(level) ((uint32_t)(level)&0xffffu)

/* ---------------------------------------------------------------------------------------------------------
 * Types
 * ------------------------------------------------------------------------------------------------------- */

/* Opaque handles; each driver defines what they point at. */
typedef struct KilnHalInstance KilnHalInstance; /* one loaded driver, from kiln_driver_query */
typedef struct KilnHalDevice KilnHalDevice;     /* an opened device */
typedef struct KilnHalBuffer KilnHalBuffer;     /* device memory */
typedef struct KilnHalModule KilnHalModule;     /* a kernel module prepared for one device */
typedef struct KilnHalScript KilnHalScript;     /* one instance of a module: its own copy of the globals */
typedef struct KilnHalBatch KilnHalBatch;       /* recorded launches, submitted together */
typedef struct KilnHalFence KilnHalFence;       /* completion of a submitted batch */

typedef enum KilnHalLogLevel {
  kKilnHalLogDebug = 0, /* rsDebug output: the runtime passes it to the user's error reporter */
  kKilnHalLogInfo = 1,  /* driver tracing: the runtime keeps it out of the user's way */
  kKilnHalLogWarning = 2, /* something was recovered from, e.g. a corrupted cache entry was rebuilt */
  kKilnHalLogError = 3,
} KilnHalLogLevel;

/* What the runtime offers a driver: the driver's only way into the runtime. Every entry may be called from
 * any thread at any time, so the runtime's implementations are thread-safe. Entries may be NULL; a driver
 * then falls back (logs nothing, uses malloc, reads its own clock, ...). */
typedef struct KilnHalServices {
  uint32_t struct_size;
  uint32_t reserved;
  void* user_data; /* passed back as the first argument of every entry */
  /* A diagnostic line, without a trailing newline. */
  void (*log)(void* user_data, KilnHalLogLevel level, const char* message);
  /* The message that goes with a failing call's status; called just before the call returns it, on the
   * calling thread (the runtime routes the message to that thread's call). */
  void (*report_error)(void* user_data, KilnStatus status, const char* message);
  /* Host memory for the driver's own bookkeeping. `alignment` is a power of two. NULL on failure. */
  void* (*allocate)(void* user_data, size_t size, size_t alignment);
  void (*free)(void* user_data, void* ptr);
  /* A monotonic clock, in nanoseconds since an arbitrary point (rsUptimeMillis/Nanos are built on it). */
  uint64_t (*now_ns)(void* user_data);
  /* A configuration value (e.g. "cache_dir", "cpu.threads"), or NULL when the runtime has none and the driver
   * uses its default. The string stays valid until the driver instance shuts down. Keys a driver reads are
   * listed in its documentation. */
  const char* (*get_config)(void* user_data, const char* key);
  /* rsSendToClient from a kernel or invokable: `script_user_data` is what the runtime passed to
   * script_create. */
  void (*send_to_client)(void* user_data, void* script_user_data, int32_t command, const void* data,
                         size_t size);
} KilnHalServices;

/* ---- Devices ---- */

typedef enum KilnHalDeviceType {
  kKilnHalDeviceCpu = 0,
  kKilnHalDeviceGpu = 1,
  kKilnHalDeviceAccelerator = 2,
  kKilnHalDeviceOther = 3,
} KilnHalDeviceType;

/* Device capabilities (bits of KilnHalDeviceInfo.flags). */
#define KILN_HAL_DEVICE_HOST_SHARED_MEMORY 0x1u /* buffer_create can wrap host memory without a copy */
#define KILN_HAL_DEVICE_MAPPABLE_BUFFERS 0x2u   /* buffer_map gives a host pointer to device memory */
#define KILN_HAL_DEVICE_ASYNC_BATCHES 0x4u      /* batch_submit returns before the work is done */

typedef struct KilnHalDeviceLimits {
  uint32_t struct_size;
  uint32_t max_inputs; /* inputs per forEach or reduction (at most KILN_KERNEL_MAX_INPUTS) */
  uint32_t max_dim_x;  /* launch extents */
  uint32_t max_dim_y;
  uint32_t max_dim_z;
  uint32_t max_threads; /* threads or lanes working on one launch at once */
  uint64_t max_buffer_size;
  uint32_t buffer_alignment; /* the alignment of memory from buffer_create, and required for wrapped memory */
  uint32_t reserved;
} KilnHalDeviceLimits;

typedef struct KilnHalDeviceInfo {
  uint32_t struct_size;
  uint32_t type;             /* KilnHalDeviceType */
  char name[128];            /* e.g. "Intel(R) Xeon(R) (skylake-avx512)" */
  char vendor[64];           /* e.g. "GenuineIntel" */
  uint64_t memory_bytes;     /* memory the device can use for buffers */
  uint32_t max_kernel_level; /* the highest kernel HAL level it runs, KILN_HAL_LEVEL(major, minor) */
  uint32_t flags;            /* KILN_HAL_DEVICE_* */
  /* Payload tags this device consumes, comma-separated in order of preference, e.g. "llvm-bc". */
  char payload_tags[64];
  KilnHalDeviceLimits limits;
} KilnHalDeviceInfo;

/* ---- Buffers ---- */

#define KILN_HAL_BUFFER_HOST_WRAP 0x1u /* use KilnHalBufferDesc.host_ptr as the buffer's memory (no copy) */

typedef struct KilnHalBufferDesc {
  uint32_t struct_size;
  uint32_t flags; /* KILN_HAL_BUFFER_* */
  uint64_t size;  /* bytes, at least 1 */
  /* With KILN_HAL_BUFFER_HOST_WRAP: memory owned by the caller, aligned to limits.buffer_alignment and
   * alive until buffer_destroy. Ignored otherwise. */
  void* host_ptr;
} KilnHalBufferDesc;

/* A strided 1-3 dimensional view of a buffer, as a launch sees an input or output. Strides are in bytes; a
 * stride of 0 broadcasts the element along that dimension (inputs only). */
typedef struct KilnHalBufferView {
  uint32_t struct_size;
  uint32_t element_size; /* bytes per element; must match the kernel's reflection */
  KilnHalBuffer* buffer;
  uint64_t offset; /* bytes from the buffer's start to element (0, 0, 0) */
  uint64_t stride_x;
  uint64_t stride_y;
  uint64_t stride_z;
} KilnHalBufferView;

/* ---- Modules ---- */

/* Kernel signature bits (KilnHalKernelDesc.signature), RenderScript's numbering: what the kernel takes. */
#define KILN_HAL_SIG_IN 0x01u  /* one or more inputs */
#define KILN_HAL_SIG_OUT 0x02u /* returns a value: the launch has an output */
#define KILN_HAL_SIG_USR 0x04u /* old-style root() with usrData */
#define KILN_HAL_SIG_X 0x08u   /* reads its x coordinate */
#define KILN_HAL_SIG_Y 0x10u
#define KILN_HAL_SIG_KERNEL 0x20u /* declared RS_KERNEL (as opposed to root()) */
#define KILN_HAL_SIG_Z 0x40u
#define KILN_HAL_SIG_CTXT 0x80u /* takes an rs_kernel_context */

/* One compiled form of the module, e.g. tag "llvm-bc" (self-contained LLVM bitcode, see kernel_abi.h) or
 * "spirv". A driver uses the first payload whose tag it consumes. */
typedef struct KilnHalPayload {
  uint32_t struct_size;
  uint32_t reserved;
  const char* tag;
  const void* data;
  uint64_t size;
} KilnHalPayload;

typedef struct KilnHalKernelDesc {
  uint32_t struct_size;
  uint32_t signature;        /* KILN_HAL_SIG_* */
  const char* name;          /* source name */
  const char* expand_symbol; /* the CPU entry point; NULL means __kiln_expand_<name> */
  uint32_t kernel_level;     /* the HAL level it needs, KILN_HAL_LEVEL(major, minor) */
  uint32_t num_inputs;
  const uint32_t* input_element_sizes; /* num_inputs entries */
  uint32_t output_element_size;        /* 0 without KILN_HAL_SIG_OUT */
  uint32_t reserved;
} KilnHalKernelDesc;

/* How a global is bound (KilnHalGlobalDesc.flags). */
#define KILN_HAL_GLOBAL_CONST 0x1u      /* `const`: may not be set */
#define KILN_HAL_GLOBAL_ALLOCATION 0x2u /* an rs_allocation: set with script_bind_allocation */
#define KILN_HAL_GLOBAL_POINTER 0x4u    /* a pointer bound to an allocation's data (rsBind) */

typedef struct KilnHalGlobalDesc {
  uint32_t struct_size;
  uint32_t flags; /* KILN_HAL_GLOBAL_* */
  const char* name;
  uint64_t size;   /* bytes */
  uint64_t offset; /* in the module's global block (used by drivers that keep globals in one buffer) */
  const void* default_data; /* `size` bytes of initial value, or NULL for zero */
} KilnHalGlobalDesc;

typedef struct KilnHalInvokableDesc {
  uint32_t struct_size;
  uint32_t args_size; /* bytes of packed arguments (kernel_abi.h) */
  const char* name;
  const char* symbol; /* NULL means __kiln_invoke_<name> */
  uint32_t kernel_level;
  uint32_t reserved;
} KilnHalInvokableDesc;

typedef struct KilnHalReductionDesc {
  uint32_t struct_size;
  uint32_t kernel_level;
  const char* name;
  /* The four entries (kernel_abi.h); NULL means __kiln_reduce_<name>_{init,accum,combine,out}. */
  const char* init_symbol;
  const char* accum_symbol;
  const char* combine_symbol;
  const char* out_symbol;
  uint32_t num_inputs;
  uint32_t accumulator_size;
  uint32_t accumulator_alignment; /* a power of two, at most 4096 */
  uint32_t result_size;
  const uint32_t* input_element_sizes; /* num_inputs entries */
} KilnHalReductionDesc;

/* Module flags (KilnHalModuleDesc.flags). */
#define KILN_HAL_MODULE_HAS_INIT 0x1u /* script_create runs the invokable named "init" */

/* A Kiln module as the runtime read it from a .kmod: plain structs, filled and owned by the runtime, borrowed
 * by module_load (a driver copies what it keeps). */
typedef struct KilnHalModuleDesc {
  uint32_t struct_size;
  uint32_t num_payloads;
  const char* name; /* for messages, e.g. the script's file name */
  const KilnHalPayload* payloads;
  uint32_t num_kernels;
  uint32_t num_globals;
  const KilnHalKernelDesc* kernels;
  const KilnHalGlobalDesc* globals;
  uint32_t num_invokables;
  uint32_t num_reductions;
  const KilnHalInvokableDesc* invokables;
  const KilnHalReductionDesc* reductions;
  /* Options that change the generated code, e.g. "fp=relaxed"; part of any cache key. NULL means none. */
  const char* compile_options;
  uint32_t flags;       /* KILN_HAL_MODULE_* */
  uint32_t hal_level;   /* the maximum over the module's kernels, invokables and reductions */
  uint32_t abi_version; /* KILN_KERNEL_ABI_VERSION the payloads were generated for */
  uint32_t num_imports;
  /* External symbols the payloads expect the driver to provide (__kiln_rt_*): a driver refuses a module that
   * imports a service it lacks, naming it. */
  const char* const* imports;
} KilnHalModuleDesc;

/* How module_load obtained its code (KilnHalModuleInfo.cache_result). */
typedef enum KilnHalCacheResult {
  kKilnHalCacheNone = 0,    /* the driver has no cache, or it is disabled */
  kKilnHalCacheMiss = 1,    /* compiled, and stored */
  kKilnHalCacheHit = 2,     /* loaded from the cache without compiling */
  kKilnHalCacheRebuilt = 3, /* an unreadable or corrupted entry was found, reported, and rebuilt */
} KilnHalCacheResult;

typedef struct KilnHalModuleInfo {
  uint32_t struct_size;
  uint32_t cache_result; /* KilnHalCacheResult */
  uint64_t compile_ns;   /* time spent compiling (0 on a cache hit) */
  uint64_t load_ns;      /* total time of module_load */
  uint32_t num_kernels_supported;
  uint32_t reserved;
} KilnHalModuleInfo;

/* ---- Launches ---- */

/* One forEach: out[x,y,z] = kernel(in0[x,y,z], ...), over dim_x * dim_y * dim_z cells. */
typedef struct KilnHalForEachDesc {
  uint32_t struct_size;
  uint32_t kernel_index; /* into KilnHalModuleDesc.kernels */
  uint32_t dim_x;        /* each at least 1 */
  uint32_t dim_y;
  uint32_t dim_z;
  uint32_t num_inputs; /* must equal the kernel's */
  const KilnHalBufferView* inputs;
  const KilnHalBufferView* output; /* NULL exactly when the kernel has no KILN_HAL_SIG_OUT */
  const void* usr_data;            /* for KILN_HAL_SIG_USR kernels; copied at record time */
  uint64_t usr_size;
} KilnHalForEachDesc;

/* One reduction over dim_x * dim_y * dim_z cells of its inputs. */
typedef struct KilnHalReduceDesc {
  uint32_t struct_size;
  uint32_t reduction_index; /* into KilnHalModuleDesc.reductions */
  uint32_t dim_x;
  uint32_t dim_y;
  uint32_t dim_z;
  uint32_t num_inputs;
  const KilnHalBufferView* inputs;
} KilnHalReduceDesc;

/* ---------------------------------------------------------------------------------------------------------
 * The function table a driver fills
 * ------------------------------------------------------------------------------------------------------- */

typedef struct KilnHalDriver {
  uint32_t struct_size;
  uint32_t hal_major; /* the HAL version the driver implements */
  uint32_t hal_minor;
  uint32_t reserved;
  const char* name;    /* e.g. "kiln-cpu" */
  const char* version; /* the driver's own version, for messages */
  KilnHalInstance* instance;

  /* Releases the instance; every device, module, script, buffer and batch must be destroyed first. */
  KilnStatus (*shutdown)(KilnHalInstance* instance);

  /* -- Devices -- */
  KilnStatus (*device_count)(KilnHalInstance* instance, uint32_t* out_count);
  KilnStatus (*device_get_info)(KilnHalInstance* instance, uint32_t index, KilnHalDeviceInfo* out_info);
  KilnStatus (*device_open)(KilnHalInstance* instance, uint32_t index, KilnHalDevice** out_device);
  KilnStatus (*device_close)(KilnHalDevice* device);

  /* -- Buffers -- */
  KilnStatus (*buffer_create)(KilnHalDevice* device, const KilnHalBufferDesc* desc,
                              KilnHalBuffer** out_buffer);
  KilnStatus (*buffer_destroy)(KilnHalBuffer* buffer);
  /* A host pointer to [offset, offset + size) of the buffer, valid until buffer_unmap. NULL entry: not
   * mappable, use the copies. */
  KilnStatus (*buffer_map)(KilnHalBuffer* buffer, uint64_t offset, uint64_t size, void** out_ptr);
  KilnStatus (*buffer_unmap)(KilnHalBuffer* buffer);
  KilnStatus (*buffer_write)(KilnHalBuffer* buffer, uint64_t offset, const void* data, uint64_t size);
  KilnStatus (*buffer_read)(KilnHalBuffer* buffer, uint64_t offset, uint64_t size, void* out_data);

  /* -- Modules -- */
  /* Prepares a module for the device (compile, or fetch from a cache). Fails only when the module as a whole
   * is unusable (no payload this device consumes, payload does not parse); a kernel that cannot run is
   * reported by module_kernel_supported instead. */
  KilnStatus (*module_load)(KilnHalDevice* device, const KilnHalModuleDesc* desc, KilnHalModule** out_module);
  KilnStatus (*module_unload)(KilnHalModule* module);
  KilnStatus (*module_get_info)(KilnHalModule* module, KilnHalModuleInfo* out_info);
  /* Whether kernel `kernel_index` can run on this device; when not, `out_reason` (may be NULL) gets a static
   * or module-lifetime message. */
  KilnStatus (*module_kernel_supported)(KilnHalModule* module, uint32_t kernel_index, bool* out_supported,
                                        const char** out_reason);

  /* -- Script instances -- */
  /* A fresh copy of the module's globals, at their defaults; runs init() when the module has
   * KILN_HAL_MODULE_HAS_INIT. A driver without script_invoke does not run it: the runtime runs init() (and every
   * invokable) on the CPU driver and sets the globals they wrote, static ones included, through script_set_global
   * before the next launch. `script_user_data` is passed back through KilnHalServices.send_to_client. */
  KilnStatus (*script_create)(KilnHalModule* module, void* script_user_data, KilnHalScript** out_script);
  KilnStatus (*script_destroy)(KilnHalScript* script);
  /* Globals by source name; `size` must equal the global's. */
  KilnStatus (*script_set_global)(KilnHalScript* script, const char* name, const void* data, uint64_t size);
  KilnStatus (*script_get_global)(KilnHalScript* script, const char* name, uint64_t size, void* out_data);
  /* Binds a view of a buffer to a KILN_HAL_GLOBAL_ALLOCATION or KILN_HAL_GLOBAL_POINTER global. dim_y/dim_z
   * of 0 mean absent. `view` NULL unbinds. The buffer must outlive the binding. */
  KilnStatus (*script_bind_allocation)(KilnHalScript* script, const char* name, const KilnHalBufferView* view,
                                       uint32_t element_type, uint32_t vector_size, uint32_t dim_x,
                                       uint32_t dim_y, uint32_t dim_z);
  /* Runs invokable `invokable_index` with `args_size` bytes of packed arguments (must equal the
   * reflection's). */
  KilnStatus (*script_invoke)(KilnHalScript* script, uint32_t invokable_index, const void* args,
                              uint64_t args_size);

  /* -- Launches (synchronous: the work is done when the call returns) --
   * A launch that fails because of its own accesses (an allocation element read or written out of range, or
   * through an allocation global with nothing bound) should return kKilnInvalidArgument: the kernel is at
   * fault, not the device. The runtime then redoes it on the CPU driver, which reports the same access, and does
   * not count it against the device (docs/hal.md, "Run-time failure and the fallback"). Any other failing status
   * is a device fault. The same holds for a batch's status (fence_wait). */
  KilnStatus (*launch_for_each)(KilnHalScript* script, const KilnHalForEachDesc* desc);
  /* May be NULL. Writes the reduction's `result_size` bytes to out_result. */
  KilnStatus (*launch_reduce)(KilnHalScript* script, const KilnHalReduceDesc* desc, uint64_t result_size,
                              void* out_result);

  /* -- Batches: record several launches, submit them together, then wait or poll. Launches in one batch
   * run in recording order, each seeing the effects of the ones before. -- */
  KilnStatus (*batch_create)(KilnHalDevice* device, KilnHalBatch** out_batch);
  KilnStatus (*batch_destroy)(KilnHalBatch* batch); /* a submitted batch must have completed */
  KilnStatus (*batch_record_for_each)(KilnHalBatch* batch, KilnHalScript* script,
                                      const KilnHalForEachDesc* desc);
  /* May be NULL. out_result is written when the batch completes and must stay valid until then. */
  KilnStatus (*batch_record_reduce)(KilnHalBatch* batch, KilnHalScript* script, const KilnHalReduceDesc* desc,
                                    uint64_t result_size, void* out_result);
  /* Starts the batch; it can be submitted again once its fence has completed. */
  KilnStatus (*batch_submit)(KilnHalBatch* batch, KilnHalFence** out_fence);
  /* Blocks until done or `timeout_ns` passed (UINT64_MAX: forever). *out_done says which. When done, the
   * status is the batch's: the first failing launch's, with its message reported. */
  KilnStatus (*fence_wait)(KilnHalFence* fence, uint64_t timeout_ns, bool* out_done);
  KilnStatus (*fence_destroy)(KilnHalFence* fence); /* waits for completion first */

  /* -- Appended in HAL 1.1 (a 1.0 driver's table ends before these; the runtime reads them as NULL) -- */
  /* Whether reduction `reduction_index` (into KilnHalModuleDesc.reductions) can run on this device, as
   * module_kernel_supported does for kernels; when not, `out_reason` (may be NULL) gets a static or
   * module-lifetime message. May be NULL: then every reduction is supported when launch_reduce is non-NULL. */
  KilnStatus (*module_reduction_supported)(KilnHalModule* module, uint32_t reduction_index, bool* out_supported,
                                           const char** out_reason);
} KilnHalDriver;

/* The entry point every driver exports. Returns kKilnUnsupported (with a message through `services`) when
 * `runtime_hal_major` differs from the driver's. `out_driver->struct_size` must be set by the caller to the
 * size of its KilnHalDriver; the driver fills no more than that. `services` must stay valid until shutdown.
 */
typedef KilnStatus (*KilnDriverQueryFn)(uint32_t runtime_hal_major, uint32_t runtime_hal_minor,
                                        const KilnHalServices* services, KilnHalDriver* out_driver);
#define KILN_DRIVER_QUERY_SYMBOL "kiln_driver_query"

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_HAL_H_ */
