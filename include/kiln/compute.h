/* Kiln: kernels without a model, in the spirit of RenderScript's compute API.
 *
 * A kernel module (.kmod, compiled by `kilnc` from an RS-style source) is loaded once with KilnModuleCreate* and
 * can serve any number of scripts and ops. A KilnContext owns the devices work runs on (the CPU driver, and a
 * driver device chosen by its device policy, see kiln/device.h);
 * a KilnScript is one instance of a module in a context, with its own copy of the script globals. Buffers are
 * the same KilnTensor the interpreter uses: create them with KilnTensorCreate and fill them with
 * KilnTensorCopyFromBuffer / KilnTensorCopyToBuffer (kiln/c_api.h).
 *
 * How a kernel maps over a tensor: a kernel element of N lanes (float4, uchar4: N = 4) takes the innermost
 * dimension, which must equal N; the remaining dimensions, innermost first, are x, y and z (further outer
 * dimensions are folded into z). So a uchar4 kernel runs over a uint8 tensor [H, W, 4] with one invocation per
 * pixel: x = column, y = row.
 *
 * Every call reports failures to the context's error reporter and returns a status. C99. */
#ifndef KILN_COMPUTE_H_
#define KILN_COMPUTE_H_

#include "kiln/common.h"
#include "kiln/device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Modules ---- */

/* Loads a module from memory (copied) or from a file. The module is verified (identifier, format version,
 * structure) and refused with a clear message when it needs a HAL level this runtime does not provide.
 * `reporter` may be NULL (stderr). Returns NULL on failure. */
KILN_CAPI_EXPORT KilnModule* KilnModuleCreate(const void* data, size_t size);
KILN_CAPI_EXPORT KilnModule* KilnModuleCreateWithErrorReporter(const void* data, size_t size,
                                                               KilnErrorReporter reporter, void* user_data);
KILN_CAPI_EXPORT KilnModule* KilnModuleCreateFromFile(const char* path);
KILN_CAPI_EXPORT KilnModule* KilnModuleCreateFromFileWithErrorReporter(const char* path,
                                                                       KilnErrorReporter reporter,
                                                                       void* user_data);
/* Releases the caller's reference; scripts and ops using the module keep it alive. NULL is a no-op. */
KILN_CAPI_EXPORT void KilnModuleDelete(KilnModule* module);

/* Reflection, for tools: the number of kernels and the name of kernel `index` (NULL if out of range). */
KILN_CAPI_EXPORT int32_t KilnModuleGetKernelCount(const KilnModule* module);
KILN_CAPI_EXPORT const char* KilnModuleGetKernelName(const KilnModule* module, int32_t index);

/* ---- Contexts ---- */

KILN_CAPI_EXPORT KilnContextOptions* KilnContextOptionsCreate(void);
KILN_CAPI_EXPORT void KilnContextOptionsDelete(KilnContextOptions* options);
/* Threads a launch may use, the caller included; -1 (default): one per core. */
KILN_CAPI_EXPORT void KilnContextOptionsSetNumThreads(KilnContextOptions* options, int32_t num_threads);
KILN_CAPI_EXPORT void KilnContextOptionsSetErrorReporter(KilnContextOptions* options,
                                                         KilnErrorReporter reporter, void* user_data);
/* Receives rsSendToClient messages from scripts of this context (may be NULL). `script` is the sender. */
typedef void (*KilnMessageHandler)(void* user_data, KilnScript* script, int32_t command, const void* data,
                                   size_t size);
KILN_CAPI_EXPORT void KilnContextOptionsSetMessageHandler(KilnContextOptions* options,
                                                          KilnMessageHandler handler, void* user_data);

/* Which devices the context's kernels may run on (kiln/device.h); default kKilnDeviceAuto. */
KILN_CAPI_EXPORT void KilnContextOptionsSetDevicePolicy(KilnContextOptions* options, KilnDevicePolicy policy);
/* A driver library or a directory of them to load instead of KILN_DRIVER and the default directory. `path` is
 * copied; NULL or "" clears it. */
KILN_CAPI_EXPORT void KilnContextOptionsSetDriverPath(KilnContextOptions* options, const char* path);
/* Loads drivers whose DT_NEEDED libraries are not on the allow-list (docs/hal.md), as the environment variable
 * KILN_DRIVER_ALLOW_ANY_DEPENDENCY=1 does. Each such driver is noted in the decision log. Default false. */
KILN_CAPI_EXPORT void KilnContextOptionsSetAllowAnyDriverDependency(KilnContextOptions* options, bool allow);

/* `options` may be NULL and may be deleted afterwards. Returns NULL (reported) when no device can be opened,
 * and under kKilnDeviceGpuOnly when no driver device can be used. */
KILN_CAPI_EXPORT KilnContext* KilnContextCreate(const KilnContextOptions* options);
/* Every script and tensor of the context must be deleted first. NULL is a no-op. */
KILN_CAPI_EXPORT void KilnContextDelete(KilnContext* context);

/* The decision log (kiln/device.h): which drivers were found, loaded or refused, the devices, and where each
 * kernel runs, each with its reason, in the order decided. Decisions are appended while the context is used
 * (a kernel's placement when its module is first used, a run-time fallback when a driver fails).
 * KilnContextGetDecision returns kKilnInvalidArgument when `index` is out of range; the strings stay valid until
 * the context is deleted. Any out pointer may be NULL. */
KILN_CAPI_EXPORT int32_t KilnContextGetDecisionCount(const KilnContext* context);
KILN_CAPI_EXPORT KilnStatus KilnContextGetDecision(const KilnContext* context, int32_t index,
                                                   KilnDecisionKind* out_kind, const char** out_subject,
                                                   const char** out_message);

/* A tensor owned by the context, zero-filled: `num_dims` dimensions of `dims`. Free it with KilnTensorDelete.
 * Returns NULL for an unsupported type, negative dims or on OOM. */
KILN_CAPI_EXPORT KilnTensor* KilnTensorCreate(KilnContext* context, KilnType type, const int* dims,
                                              int32_t num_dims);
/* The alignment KilnTensorCreateFromHostMemory requires of `data`: what the built-in CPU driver needs to use the
 * memory in place. */
#define KILN_HOST_MEMORY_ALIGNMENT 64
/* A tensor over the caller's memory, without a copy: `data` holds `size` bytes, exactly the byte size of
 * `num_dims` dimensions of `dims` of `type`, aligned to KILN_HOST_MEMORY_ALIGNMENT. Kernels read and write that
 * memory in place on the CPU, and on a driver device that shares host memory where its alignment allows (Mesa's
 * lavapipe and integrated GPUs wrap page-aligned memory); elsewhere each launch copies it to the device and back,
 * as for any tensor. The caller keeps `data` alive and unmoved until KilnTensorDelete. Returns NULL (reported)
 * for a NULL or misaligned `data`, a size that does not match the shape, or an unsupported type. */
KILN_CAPI_EXPORT KilnTensor* KilnTensorCreateFromHostMemory(KilnContext* context, KilnType type, const int* dims,
                                                            int32_t num_dims, void* data, size_t size);
/* Only for tensors from KilnTensorCreate or KilnTensorCreateFromHostMemory (whose memory stays
 * the caller's). NULL is a no-op. A tensor may be deleted while script globals are
 * bound to it: every script of its context unbinds it first, exactly as binding NULL to those globals would
 * (on every device, with the device copies that mirror it), quietly. A later launch that reads such a global
 * then behaves as with one never bound: on the CPU it fails, and the message names the global; for a pointer
 * global the runtime refuses it before it runs (see KilnScriptBindAllocation). This touches the scripts that
 * bind the tensor: do not delete it while another thread uses one of them. */
KILN_CAPI_EXPORT void KilnTensorDelete(KilnTensor* tensor);

/* ---- Scripts ---- */

/* A new instance of `module` in `context`: globals at their defaults, then `init()` if the script has one. */
KILN_CAPI_EXPORT KilnScript* KilnScriptCreate(KilnContext* context, const KilnModule* module);
KILN_CAPI_EXPORT void KilnScriptDelete(KilnScript* script);

/* Script globals by source name. `size` must equal the global's size; `const` globals cannot be set. */
KILN_CAPI_EXPORT KilnStatus KilnScriptSetGlobal(KilnScript* script, const char* name, const void* data,
                                                size_t size);
KILN_CAPI_EXPORT KilnStatus KilnScriptGetGlobal(const KilnScript* script, const char* name, void* data,
                                                size_t size);
/* Binds `tensor` to an rs_allocation (or pointer) global; NULL unbinds. An allocation has up to 3 dimensions
 * (x the innermost); a tensor of more binds with its further outer dimensions folded into z. The binding
 * lasts until the global is bound again, the script is deleted, or the tensor is deleted (KilnTensorDelete
 * unbinds it from every script of the context, as binding NULL would). A kernel, reduction or invokable whose
 * code reads or writes through a pointer global (`float* gWeights;`; comparing it with NULL does not count)
 * runs only while a tensor is bound to it: KilnScriptForEach, KilnScriptReduce and KilnScriptInvoke otherwise
 * return kKilnInvalidArgument, with a message naming the global, before anything runs. */
KILN_CAPI_EXPORT KilnStatus KilnScriptBindAllocation(KilnScript* script, const char* name, KilnTensor* tensor);
/* As KilnScriptBindAllocation, stating the allocation's element as RenderScript's Element did: `vector_size`
 * lanes (1 to 4) of the tensor's type, taken along its innermost dimension (which must be `vector_size`, or 4
 * for 3 lanes). KilnScriptBindAllocation infers it: a uint8 [..., 4] tensor binds as uchar4 pixels, any other
 * tensor as scalars. */
KILN_CAPI_EXPORT KilnStatus KilnScriptBindAllocationWithElement(KilnScript* script, const char* name,
                                                                KilnTensor* tensor, int32_t vector_size);

/* Optional limits of a launch, RenderScript's rs_script_call: [x_start, x_end) etc.; an end of 0 means the
 * full extent. NULL launch options mean the whole output. */
typedef struct KilnLaunchOptions {
  uint32_t struct_size; /* sizeof(KilnLaunchOptions) */
  uint32_t x_start, x_end;
  uint32_t y_start, y_end;
  uint32_t z_start, z_end;
} KilnLaunchOptions;

/* Runs `kernel` over every cell: output[cell] = kernel(inputs[0][cell], ...). Inputs may broadcast (numpy
 * rules) against the output; a kernel without an output (void) takes `output` NULL and runs over the first
 * input's cells. A kernel with neither inputs nor an output runs over [0, x_end) x [0, y_end) x [0, z_end) of
 * `launch_options` (required; an end of 0 along y or z leaves that axis out; every start must be 0). */
KILN_CAPI_EXPORT KilnStatus KilnScriptForEach(KilnScript* script, const char* kernel,
                                              const KilnTensor* const* inputs, int32_t num_inputs,
                                              KilnTensor* output, const KilnLaunchOptions* launch_options);
/* Calls invokable `name` with `size` bytes of arguments packed in declaration order at natural alignment. An
 * `rs_allocation` parameter (8 bytes) takes a `KilnTensor*` (NULL: a null allocation, rsIsObject is false): the
 * invokable reads and writes the tensor's memory during the call, as an allocation shaped as
 * KilnScriptBindAllocation would shape it (scalars of its type, uchar4 pixels for uint8 [..., 4]). */
KILN_CAPI_EXPORT KilnStatus KilnScriptInvoke(KilnScript* script, const char* name, const void* args,
                                             size_t size);
/* Runs reduction `name` (#pragma rs reduce) over the inputs' cells and writes its result (`result_size`
 * bytes, which must equal the result type's size) to `result`. */
KILN_CAPI_EXPORT KilnStatus KilnScriptReduce(KilnScript* script, const char* name,
                                             const KilnTensor* const* inputs, int32_t num_inputs, void* result,
                                             size_t result_size, const KilnLaunchOptions* launch_options);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_COMPUTE_H_ */
