/* A shared library that looks like a driver but exports no kiln_driver_query (a misspelt entry point). C99. */
#include "kiln/hal.h"

__attribute__((visibility("default"))) KilnStatus kiln_driver_query_v0(uint32_t runtime_hal_major,
                                                                       uint32_t runtime_hal_minor,
                                                                       const KilnHalServices* services,
                                                                       KilnHalDriver* out_driver) {
  (void)runtime_hal_major;
  (void)runtime_hal_minor;
  (void)services;
  (void)out_driver;
  return kKilnError;
}
