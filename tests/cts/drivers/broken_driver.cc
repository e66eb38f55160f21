// Deliberately broken drivers, to show that kiln-cts fails them with readable reasons instead of crashing.
// Each wraps the CPU driver and breaks one promise, chosen at compile time:
//   KILN_BROKEN_WRONG_MAJOR    reports HAL 2.x to a 1.x runtime (the runtime would refuse it)
//   KILN_BROKEN_WRONG_RESULTS  launches run, then one byte of every output is corrupted
//   KILN_BROKEN_SILENT_ERRORS  failing calls return a status but never say why (report_error unused)
//   KILN_BROKEN_DECLINES_ALL   declines every kernel (with a reason): it runs none
#include <cstring>

#include "backends/cpu/cpu_driver.h"

namespace {

KilnHalDriver g_real;  // the CPU driver's table: its entries are the same for every instance

#if defined(KILN_BROKEN_WRONG_RESULTS)
// Flips a high bit in the first output cell: the top byte of its first 32-bit lane (or its last byte when the
// cell is smaller), so the damage is far outside any floating-point tolerance.
void Corrupt(const KilnHalForEachDesc* desc) {
  if (!desc || !desc->output || !desc->output->buffer || desc->output->element_size == 0) return;
  const uint32_t byte = desc->output->element_size < 4 ? desc->output->element_size - 1 : 3;
  void* cell = nullptr;
  if (g_real.buffer_map(desc->output->buffer, desc->output->offset, byte + 1, &cell) == kKilnOk && cell) {
    static_cast<unsigned char*>(cell)[byte] ^= 0x40;
    g_real.buffer_unmap(desc->output->buffer);
  }
}

KilnStatus WrongLaunch(KilnHalScript* script, const KilnHalForEachDesc* desc) {
  KilnStatus status = g_real.launch_for_each(script, desc);
  if (status == kKilnOk) Corrupt(desc);
  return status;
}
#endif

#if defined(KILN_BROKEN_SILENT_ERRORS)
KilnHalServices g_silent;
#endif

#if defined(KILN_BROKEN_DECLINES_ALL)
// The CPU driver's answer, for its argument checks, then "no".
KilnStatus Decline(KilnHalModule* module, uint32_t index, bool* out_supported, const char** out_reason) {
  const KilnStatus status = g_real.module_kernel_supported(module, index, out_supported, out_reason);
  if (status != kKilnOk) return status;
  *out_supported = false;
  if (out_reason) *out_reason = "this test driver declines every kernel";
  return kKilnOk;
}
#endif

}  // namespace

extern "C" __attribute__((visibility("default"))) KilnStatus kiln_driver_query(
    uint32_t runtime_hal_major, uint32_t runtime_hal_minor, const KilnHalServices* services,
    KilnHalDriver* out_driver) {
#if defined(KILN_BROKEN_SILENT_ERRORS)
  // Drop the channels an error message would take.
  if (services) {
    memset(&g_silent, 0, sizeof(g_silent));
    memcpy(&g_silent, services,
           services->struct_size < sizeof(g_silent) ? services->struct_size : sizeof(g_silent));
    g_silent.report_error = nullptr;
    g_silent.log = nullptr;
    services = &g_silent;
  }
#endif
  KilnStatus status = kiln_cpu_driver_query(runtime_hal_major, runtime_hal_minor, services, out_driver);
  if (status != kKilnOk || !out_driver) return status;
  memcpy(&g_real, out_driver,
         out_driver->struct_size < sizeof(g_real) ? out_driver->struct_size : sizeof(g_real));
#if defined(KILN_BROKEN_WRONG_MAJOR)
  out_driver->hal_major = KILN_HAL_VERSION_MAJOR + 1;
#elif defined(KILN_BROKEN_WRONG_RESULTS)
  out_driver->launch_for_each = WrongLaunch;
  out_driver->name = "kiln-broken-wrong-results";
#elif defined(KILN_BROKEN_DECLINES_ALL)
  out_driver->module_kernel_supported = Decline;
  out_driver->name = "kiln-broken-declines-all";
#endif
  return kKilnOk;
}
