/* The built-in CPU driver's entry point, for a runtime that links it statically instead of dlopen()ing a
 * driver. Same contract as kiln_driver_query in kiln/hal.h. C99.
 *
 * Configuration keys read through KilnHalServices.get_config (each falls back to the environment variable in
 * brackets, then to the default):
 *   "cache_dir"              [KILN_CACHE_DIR]  compiled-object cache; default $XDG_CACHE_HOME/kiln or
 *                                              ~/.cache/kiln; "off" disables the cache
 *   "cpu.threads"            [KILN_CPU_THREADS] threads working on one launch, caller included; default:
 * cores "cpu.target_cpu"         [KILN_CPU_TARGET_CPU] LLVM CPU name to generate code for; default: the
 * host's "cpu.target_features"    [KILN_CPU_TARGET_FEATURES] LLVM feature string, e.g. "+avx2,-avx512f";
 * default: the host's */
#ifndef KILN_BACKENDS_CPU_CPU_DRIVER_H_
#define KILN_BACKENDS_CPU_CPU_DRIVER_H_

#include "kiln/hal.h"

#ifdef __cplusplus
extern "C" {
#endif

KilnStatus kiln_cpu_driver_query(uint32_t runtime_hal_major, uint32_t runtime_hal_minor,
                                 const KilnHalServices* services, KilnHalDriver* out_driver);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_BACKENDS_CPU_CPU_DRIVER_H_ */
