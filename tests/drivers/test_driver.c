/* Deliberately broken drivers for the loader's tests (tests/drivers/CMakeLists.txt builds one shared library per
 * fault). Each wraps the real CPU driver, linked in statically, so the work it does accept is done for real, and
 * breaks exactly one rule of kiln/hal.h, chosen by a KILN_TEST_FAULT_* define. Without a fault it is a well-behaved
 * driver whose device calls itself a GPU. Written only against hal.h (and the CPU driver's entry point). C99. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/cpu/cpu_driver.h"
#include "kiln/hal.h"

#ifndef KILN_TEST_DRIVER_NAME
#error "KILN_TEST_DRIVER_NAME must name the variant"
#endif

#define KILN_TEST_EXPORT __attribute__((visibility("default")))

/* The launch that fails, counting launches and recorded launches from the driver's start. */
#define KILN_TEST_FAIL_AT 2u

#ifdef KILN_TEST_FAULT_DISALLOWED_DEPENDENCY
int kiln_test_dummy_dependency(void); /* from libkiln_test_dummy_dep.so, which is not on the allow-list */
#endif

static KilnHalDriver g_inner;
static const KilnHalServices* g_services;
static unsigned g_launches;

static KilnStatus Fail(KilnStatus status, const char* message) {
  if (g_services != NULL && g_services->report_error != NULL) {
    g_services->report_error(g_services->user_data, status, message);
  }
  return status;
}

static KilnStatus DeviceGetInfo(KilnHalInstance* instance, uint32_t index, KilnHalDeviceInfo* out_info) {
  KilnStatus status = g_inner.device_get_info(instance, index, out_info);
  if (status != kKilnOk) return status;
  out_info->type = kKilnHalDeviceGpu;
  snprintf(out_info->name, sizeof out_info->name, "test device");
#ifdef KILN_TEST_FAULT_INFO_SIZE
  out_info->struct_size = (uint32_t)sizeof(*out_info) + 64u; /* claims fields it never wrote */
#endif
#ifdef KILN_TEST_FAULT_LEVEL_MAJOR
  out_info->max_kernel_level = KILN_HAL_LEVEL(2, 0);
#endif
  return kKilnOk;
}

static KilnStatus CountLaunch(void) {
  if (++g_launches == KILN_TEST_FAIL_AT) {
    return Fail(kKilnDelegateError, "test driver: launch 2 fails on purpose (device lost)");
  }
  return kKilnOk;
}

static KilnStatus LaunchForEach(KilnHalScript* script, const KilnHalForEachDesc* desc) {
#ifdef KILN_TEST_FAULT_LAUNCH
  if (CountLaunch() != kKilnOk) return kKilnDelegateError;
#endif
  return g_inner.launch_for_each(script, desc);
}

static KilnStatus BatchRecordForEach(KilnHalBatch* batch, KilnHalScript* script, const KilnHalForEachDesc* desc) {
#ifdef KILN_TEST_FAULT_LAUNCH
  if (CountLaunch() != kKilnOk) return kKilnDelegateError;
#endif
  return g_inner.batch_record_for_each(batch, script, desc);
}

#ifdef KILN_TEST_FAULT_SUBMIT
/* A device that fails every batch it is given (no kernel is to blame): each is a device fault. */
static KilnStatus FailingSubmit(KilnHalBatch* batch, KilnHalFence** out_fence) {
  (void)batch;
  (void)out_fence;
  return Fail(kKilnDelegateError, "test driver: batch_submit fails on purpose");
}
#endif

#ifdef KILN_TEST_FAULT_HANG
/* A device that hangs: the second batch submitted never starts and its fence never signals. fence_wait sleeps out
 * its whole timeout (UINT64_MAX: forever, a real hang); fence_destroy "waits for completion first", so forever;
 * destroying the hung batch breaks the HAL's rule (a submitted batch must have completed) and aborts, so that a
 * runtime that frees what it gave up fails the test loudly. */
static unsigned g_submits;
static KilnHalBatch* g_hung_batch;
static int g_hung_fence_storage;
#define KILN_TEST_HUNG_FENCE ((KilnHalFence*)&g_hung_fence_storage)

static void SleepNs(uint64_t ns) {
  struct timespec ts;
  ts.tv_sec = (time_t)(ns / 1000000000u);
  ts.tv_nsec = (long)(ns % 1000000000u);
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static KilnStatus BatchSubmit(KilnHalBatch* batch, KilnHalFence** out_fence) {
  if (++g_submits == KILN_TEST_FAIL_AT) {
    g_hung_batch = batch;
    *out_fence = KILN_TEST_HUNG_FENCE;
    return kKilnOk;
  }
  return g_inner.batch_submit(batch, out_fence);
}

static KilnStatus FenceWait(KilnHalFence* fence, uint64_t timeout_ns, bool* out_done) {
  if (fence != KILN_TEST_HUNG_FENCE) return g_inner.fence_wait(fence, timeout_ns, out_done);
  for (;;) {
    const uint64_t step = timeout_ns < 1000000000u ? timeout_ns : 1000000000u;
    SleepNs(step);
    if (timeout_ns != UINT64_MAX) timeout_ns -= step;
    if (timeout_ns == 0) break;
  }
  *out_done = false;
  return kKilnOk;
}

static KilnStatus FenceDestroy(KilnHalFence* fence) {
  if (fence != KILN_TEST_HUNG_FENCE) return g_inner.fence_destroy(fence);
  for (;;) SleepNs(1000000000u);
}

static KilnStatus BatchDestroy(KilnHalBatch* batch) {
  if (batch == g_hung_batch) {
    fprintf(stderr, "test driver: the runtime destroyed a batch that never completed\n");
    abort();
  }
  return g_inner.batch_destroy(batch);
}
#endif

static KilnStatus ModuleLoad(KilnHalDevice* device, const KilnHalModuleDesc* desc, KilnHalModule** out_module) {
#ifdef KILN_TEST_FAULT_MODULE_LOAD
  (void)device;
  (void)desc;
  (void)out_module;
  return Fail(kKilnUnsupported, "test driver: module_load fails on purpose");
#else
  return g_inner.module_load(device, desc, out_module);
#endif
}

static KilnStatus ModuleKernelSupported(KilnHalModule* module, uint32_t kernel_index, bool* out_supported,
                                        const char** out_reason) {
  KilnStatus status = g_inner.module_kernel_supported(module, kernel_index, out_supported, out_reason);
#ifdef KILN_TEST_FAULT_UNSUPPORTED_KERNEL
  if (status == kKilnOk && kernel_index == 1) {
    *out_supported = false;
    if (out_reason != NULL) *out_reason = "test driver: kernel 1 is unsupported on purpose";
  }
#endif
  return status;
}

#if defined(KILN_TEST_FAULT_UNSUPPORTED_REDUCTION) || defined(KILN_TEST_FAULT_OLD_MINOR)
/* HAL 1.1's module_reduction_supported: reduction 1 cannot run here. The HAL 1.0 variant puts it past the end of
 * its table, where the runtime must not look: it would refuse every reduction. */
static KilnStatus ModuleReductionSupported(KilnHalModule* module, uint32_t reduction_index, bool* out_supported,
                                           const char** out_reason) {
  (void)module;
  if (out_supported == NULL) return Fail(kKilnInvalidArgument, "test driver: out_supported is NULL");
#ifdef KILN_TEST_FAULT_OLD_MINOR
  (void)reduction_index;
  *out_supported = false;
  if (out_reason != NULL) *out_reason = "test driver: the runtime read an entry past a HAL 1.0 table";
#else
  *out_supported = reduction_index != 1;
  if (out_reason != NULL) *out_reason = *out_supported ? NULL : "test driver: reduction 1 is unsupported on purpose";
#endif
  return kKilnOk;
}
#endif

KILN_TEST_EXPORT KilnStatus kiln_driver_query(uint32_t runtime_hal_major, uint32_t runtime_hal_minor,
                                              const KilnHalServices* services, KilnHalDriver* out_driver) {
  g_services = services;
  g_launches = 0;
#if defined(KILN_TEST_FAULT_QUERY)
  (void)runtime_hal_major;
  (void)runtime_hal_minor;
  (void)out_driver;
  return Fail(kKilnError, "test driver: initialisation fails on purpose");
#elif defined(KILN_TEST_FAULT_MAJOR)
  /* A HAL 2 driver that does not check the runtime's version: it fills a header and says it is 2.0. */
  (void)runtime_hal_major;
  (void)runtime_hal_minor;
  out_driver->hal_major = 2;
  out_driver->hal_minor = 0;
  out_driver->name = "kiln-test-" KILN_TEST_DRIVER_NAME;
  return kKilnOk;
#else
  KilnHalDriver table;
  memset(&table, 0, sizeof table);
  table.struct_size = sizeof table;
  KilnStatus status = kiln_cpu_driver_query(runtime_hal_major, runtime_hal_minor, services, &table);
  if (status != kKilnOk) return status;
  g_inner = table;
  table.name = "kiln-test-" KILN_TEST_DRIVER_NAME;
  table.version = "test";
  table.device_get_info = DeviceGetInfo;
  table.launch_for_each = LaunchForEach;
  table.batch_record_for_each = BatchRecordForEach;
  table.module_load = ModuleLoad;
  table.module_kernel_supported = ModuleKernelSupported;
#ifdef KILN_TEST_FAULT_DISALLOWED_DEPENDENCY
  if (kiln_test_dummy_dependency() != 42) return Fail(kKilnError, "test driver: the dummy dependency is wrong");
#endif
#ifdef KILN_TEST_FAULT_MINOR
  table.hal_minor = 9; /* a newer minor than the runtime's: accepted */
#endif
#ifdef KILN_TEST_FAULT_UNSUPPORTED_REDUCTION
  table.module_reduction_supported = ModuleReductionSupported;
#endif
#ifdef KILN_TEST_FAULT_OLD_MINOR
  /* A HAL 1.0 driver: its table ends after fence_destroy. It also copies the entry appended in 1.1 (as a careless
   * driver might), but past its struct_size, where the runtime must read NULL. */
  table.hal_minor = 0;
  table.struct_size = (uint32_t)offsetof(KilnHalDriver, module_reduction_supported);
  table.module_reduction_supported = ModuleReductionSupported;
#endif
#ifdef KILN_TEST_FAULT_NULL_REQUIRED
  table.launch_for_each = NULL;
  table.module_load = NULL;
#endif
#ifdef KILN_TEST_FAULT_TABLE_SIZE
  table.struct_size = (uint32_t)sizeof table + 16u; /* claims more than the runtime's table holds */
#endif
#ifdef KILN_TEST_FAULT_SUBMIT
  table.batch_submit = FailingSubmit;
#endif
#ifdef KILN_TEST_FAULT_HANG
  g_submits = 0;
  g_hung_batch = NULL;
  table.batch_submit = BatchSubmit;
  table.fence_wait = FenceWait;
  table.fence_destroy = FenceDestroy;
  table.batch_destroy = BatchDestroy;
#endif
#ifdef KILN_TEST_FAULT_NO_BATCHES
  table.batch_create = NULL;
  table.batch_destroy = NULL;
  table.batch_record_for_each = NULL;
  table.batch_record_reduce = NULL;
  table.batch_submit = NULL;
  table.fence_wait = NULL;
  table.fence_destroy = NULL;
#endif
  /* The runtime's struct_size says how much of the table it has room for. */
  memcpy(out_driver, &table, out_driver->struct_size < sizeof table ? out_driver->struct_size : sizeof table);
#ifdef KILN_TEST_FAULT_TABLE_SIZE
  out_driver->struct_size = table.struct_size;
#endif
  return kKilnOk;
#endif
}
