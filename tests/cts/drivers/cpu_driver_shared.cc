// libkiln_cpu_driver_shared.so: the built-in CPU driver packaged as a loadable driver, so kiln-cts (and the
// loader's tests) can treat it like any vendor's .so. It only forwards the entry point.
#include "backends/cpu/cpu_driver.h"

extern "C" __attribute__((visibility("default"))) KilnStatus kiln_driver_query(
    uint32_t runtime_hal_major, uint32_t runtime_hal_minor, const KilnHalServices* services,
    KilnHalDriver* out_driver) {
  return kiln_cpu_driver_query(runtime_hal_major, runtime_hal_minor, services, out_driver);
}
