/* Kiln: small helpers for driver authors, built on kiln/hal.h alone.
 *
 * Every driver does the same few things at the HAL boundary: copy the caller's size-prefixed structs
 * honouring their struct_size, fill the caller's out-structs without writing past theirs, report a failure
 * through KilnHalServices before returning its status, and check the runtime's HAL version in
 * kiln_driver_query. These functions do exactly that, so a driver does not have to get it right again. They
 * are `static inline` and need nothing but the C library: a driver built out of tree against the installed
 * headers can use them.
 *
 * C99; no C++ type crosses this interface. */
#ifndef KILN_HAL_UTIL_H_
#define KILN_HAL_UTIL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kiln/common.h"
#include "kiln/hal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The struct_size a size-prefixed HAL struct starts with (read byte-wise: `hal_struct` may be unaligned). */
static inline uint32_t kiln_hal_struct_size(const void* hal_struct) {
  uint32_t size;
  memcpy(&size, hal_struct, sizeof(size));
  return size;
}

/* Copies the caller's struct `in` into `out`, a struct of `size` bytes as this driver was compiled. A newer
 * caller's longer struct has its tail ignored. Every struct of HAL 1.0 is required in full (there is no older
 * version for one to be smaller), so false, with `out` zeroed, when `in` is NULL or its struct_size is less
 * than `size`. */
static inline bool kiln_hal_read_struct(const void* in, size_t size, void* out) {
  memset(out, 0, size);
  if (!in || kiln_hal_struct_size(in) < size) return false;
  memcpy(out, in, size);
  return true;
}

/* Element `index` of a caller's array of structs, whose stride is its first element's struct_size; as
 * kiln_hal_read_struct otherwise. The caller checks `index` against the array's length. */
static inline bool kiln_hal_read_element(const void* array, uint32_t index, size_t size, void* out) {
  if (!array || kiln_hal_struct_size(array) < size) {
    memset(out, 0, size);
    return false;
  }
  return kiln_hal_read_struct((const char*)array + (size_t)index * kiln_hal_struct_size(array), size, out);
}

/* Writes `in` (`size` bytes, its own struct_size first) into the caller's out-struct `out`, whose struct_size
 * the caller set: no more than the smaller of the two sizes is written, and out's struct_size becomes that
 * size, so an older caller gets the fields it knows. False when `out` is NULL or has no room for a
 * struct_size. */
static inline bool kiln_hal_write_struct(const void* in, size_t size, void* out) {
  uint32_t written;
  if (!out || kiln_hal_struct_size(out) < sizeof(uint32_t)) return false;
  written = kiln_hal_struct_size(out) < size ? kiln_hal_struct_size(out) : (uint32_t)size;
  memcpy(out, in, written);
  memcpy(out, &written, sizeof(written));
  return true;
}

/* The same three for a typed pointer: `out` points at the driver's own struct, whose size is taken from it.
 * Comparing `in` with `out` makes the compiler refuse a pair of different struct types. */
#define KILN_HAL_READ_STRUCT(in, out) \
  ((void)sizeof((in) == (out)), kiln_hal_read_struct((in), sizeof(*(out)), (out)))
#define KILN_HAL_READ_ELEMENT(array, index, out) \
  ((void)sizeof((array) == (out)), kiln_hal_read_element((array), (index), sizeof(*(out)), (out)))
#define KILN_HAL_WRITE_STRUCT(in, out) \
  ((void)sizeof(&(in) == (out)), kiln_hal_write_struct(&(in), sizeof(in), (out)))

/* Keeps a copy of the runtime's services in `out`, as much of them as both sides know; the rest is zero, so
 * entries the runtime does not offer read as NULL. `services` may be NULL (then everything is NULL). */
static inline void kiln_hal_copy_services(const KilnHalServices* services, KilnHalServices* out) {
  memset(out, 0, sizeof(*out));
  if (services && services->struct_size >= sizeof(uint32_t)) {
    memcpy(out, services,
           services->struct_size < sizeof(KilnHalServices) ? services->struct_size : sizeof(KilnHalServices));
  }
}

/* A diagnostic line through services->log; nothing when the runtime offers no log. */
static inline void kiln_hal_log(const KilnHalServices* services, KilnHalLogLevel level, const char* message) {
  if (services->log) services->log(services->user_data, level, message);
}

/* Reports why a call fails (services->report_error, else an error line through services->log) and returns
 * `status`, so a failing entry point ends with `return kiln_hal_fail(services, status, message);`. */
static inline KilnStatus kiln_hal_fail(const KilnHalServices* services, KilnStatus status,
                                       const char* message) {
  if (services->report_error) {
    services->report_error(services->user_data, status, message);
  } else {
    kiln_hal_log(services, kKilnHalLogError, message);
  }
  return status;
}

/* The checks every kiln_driver_query starts with, after kiln_hal_copy_services: `out_driver` must be there
 * with a struct_size covering the table's header, and the runtime must speak this HAL's major (any minor).
 * On failure the problem is reported through `services`, naming `driver` (e.g. "the CPU driver"), and the
 * status is returned: kKilnInvalidArgument or kKilnUnsupported. */
static inline KilnStatus kiln_hal_check_query(const KilnHalServices* services, const char* driver,
                                              uint32_t runtime_hal_major, uint32_t runtime_hal_minor,
                                              const KilnHalDriver* out_driver) {
  char message[256];
  if (!out_driver || out_driver->struct_size < offsetof(KilnHalDriver, shutdown)) {
    snprintf(message, sizeof(message),
             "kiln_driver_query (%s): out_driver is NULL or its struct_size does not cover the header",
             driver);
    return kiln_hal_fail(services, kKilnInvalidArgument, message);
  }
  if (runtime_hal_major != KILN_HAL_VERSION_MAJOR) {
    snprintf(message, sizeof(message), "%s implements HAL %u.%u, the runtime speaks %u.%u", driver,
             (unsigned)KILN_HAL_VERSION_MAJOR, (unsigned)KILN_HAL_VERSION_MINOR, (unsigned)runtime_hal_major,
             (unsigned)runtime_hal_minor);
    return kiln_hal_fail(services, kKilnUnsupported, message);
  }
  return kKilnOk;
}

/* Starts a driver's function table: zeroes `table` and fills its header (struct_size, this HAL's version, the
 * driver's name, version and instance). The driver then sets the entries it implements, and hands the table
 * over with KILN_HAL_WRITE_STRUCT(table, out_driver), which fills no more than the runtime's struct_size. */
static inline void kiln_hal_driver_table_init(KilnHalDriver* table, const char* name, const char* version,
                                              KilnHalInstance* instance) {
  memset(table, 0, sizeof(*table));
  table->struct_size = sizeof(*table);
  table->hal_major = KILN_HAL_VERSION_MAJOR;
  table->hal_minor = KILN_HAL_VERSION_MINOR;
  table->name = name;
  table->version = version;
  table->instance = instance;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_HAL_UTIL_H_ */
