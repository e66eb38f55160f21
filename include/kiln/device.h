/* Kiln: where work runs. Device policies for interpreters and compute contexts, and the decision log that says
 * which driver and device Kiln chose for what, and why.
 *
 * Kiln always has its built-in CPU driver. Other drivers (a Vulkan driver, a vendor's driver) are shared
 * libraries that Kiln finds, checks and loads (docs/hal.md, "The loader"). Where they come from, first match
 * wins:
 *   1. the path given to KilnInterpreterOptionsSetDriverPath / KilnContextOptionsSetDriverPath;
 *   2. the environment variable KILN_DRIVER;
 *   3. the driver directory installed with Kiln (<libdir>/kiln/drivers), plus, for a Kiln used from its own
 *      build tree, the build tree's driver folders.
 * A path is a driver file or a directory, whose `*.so` files are all tried in name order.
 *
 * Every choice the loader and the runtime make about devices is recorded with its reason in a decision log,
 * readable with KilnInterpreterGetDecision (kiln/c_api.h) and KilnContextGetDecision (kiln/compute.h).
 * C99. */
#ifndef KILN_DEVICE_H_
#define KILN_DEVICE_H_

#include <stdbool.h>

#include "kiln/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which devices kernels (kernel-backed ops, compute scripts) may run on. Builtin ops always run on the host.
 * "GPU" below means a device of a loaded driver other than the built-in CPU driver. */
typedef enum KilnDevicePolicy {
  /* The default. Loads drivers; kernels run on a device whose driver reports it as a GPU or an accelerator,
   * when there is one, else on the CPU. A driver whose device is itself a CPU (e.g. Vulkan on Mesa's
   * lavapipe) is not chosen: the built-in CPU driver is faster there. */
  kKilnDeviceAuto = 0,
  /* Kernels run on the built-in CPU driver; no driver is searched or loaded. */
  kKilnDeviceCpuOnly = 1,
  /* Kernels run on the best device of any loaded driver (GPU, then accelerator, then other, then a CPU-type
   * device such as lavapipe), falling back to the CPU kernel by kernel; the CPU when no driver loads. */
  kKilnDevicePreferGpu = 2,
  /* As kKilnDevicePreferGpu, but creating the interpreter or context fails (with the reasons) when no
   * driver device can be used. Kernels the device cannot run still fall back to the CPU, as recorded. */
  kKilnDeviceGpuOnly = 3,
} KilnDevicePolicy;

/* "auto", "cpu-only", "prefer-gpu", "gpu-only"; "unknown" for other values. */
KILN_CAPI_EXPORT const char* KilnDevicePolicyName(KilnDevicePolicy policy);

/* What a decision is about. */
typedef enum KilnDecisionKind {
  kKilnDecisionPolicy = 0,    /* the policy, where drivers were searched, and what it chose overall */
  kKilnDecisionDriver = 1,    /* a driver file found, loaded, loaded despite a failed check, or refused */
  kKilnDecisionDevice = 2,    /* a device of a loaded driver: what it is (limits), chosen, skipped, refused */
  kKilnDecisionModule = 3,    /* a kernel module that runs wholly on the CPU, and why */
  kKilnDecisionKernel = 4,    /* where one kernel or reduction of a module runs, and why */
  kKilnDecisionNode = 5,      /* where one node of an interpreter runs */
  kKilnDecisionPartition = 6, /* consecutive device nodes that run as one batch, copying only at its edges */
  kKilnDecisionFallback = 7,  /* a driver failed at run time; the work was redone on the CPU */
} KilnDecisionKind;

/* The spellings of Kiln 0.1, kept so that code written against them still compiles; define KILN_NO_DEPRECATED
 * to drop them. New code uses the kKiln... names above, the style of every other public enum. */
#ifndef KILN_NO_DEPRECATED
#define KILN_DEVICE_AUTO kKilnDeviceAuto
#define KILN_DEVICE_CPU_ONLY kKilnDeviceCpuOnly
#define KILN_DEVICE_PREFER_GPU kKilnDevicePreferGpu
#define KILN_DEVICE_GPU_ONLY kKilnDeviceGpuOnly
#define KILN_DECISION_POLICY kKilnDecisionPolicy
#define KILN_DECISION_DRIVER kKilnDecisionDriver
#define KILN_DECISION_DEVICE kKilnDecisionDevice
#define KILN_DECISION_MODULE kKilnDecisionModule
#define KILN_DECISION_KERNEL kKilnDecisionKernel
#define KILN_DECISION_NODE kKilnDecisionNode
#define KILN_DECISION_PARTITION kKilnDecisionPartition
#define KILN_DECISION_FALLBACK kKilnDecisionFallback
#endif

/* "policy", "driver", "device", "module", "kernel", "node", "partition", "fallback"; "unknown" otherwise. */
KILN_CAPI_EXPORT const char* KilnDecisionKindName(KilnDecisionKind kind);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_DEVICE_H_ */
