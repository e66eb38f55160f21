/* Kiln: small helpers for driver authors, built on kiln/hal.h alone.
 *
 * Every driver does the same few things at the HAL boundary: copy the caller's size-prefixed structs
 * honouring their struct_size, fill the caller's out-structs without writing past theirs, report a failure
 * through KilnHalServices before returning its status, check the runtime's HAL version in kiln_driver_query,
 * and check a launch's arguments (extents, indices, buffer views and byte ranges) before it touches memory.
 * These functions do exactly that, so a driver does not have to get it right again, and every driver says the
 * same thing about the same mistake. They are `static inline` and need nothing but the C library: a driver
 * built out of tree against the installed headers can use them.
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

/* ---- Checks of a launch's arguments ----
 * Each returns true when the argument is fine. Otherwise it returns false and writes what is wrong into
 * `problem` (at most `problem_size` bytes; KILN_HAL_PROBLEM_SIZE always suffices) without naming what was
 * checked, so that the driver puts its own name for it in front ("script blur, kernel root: " followed by
 * the problem) and reports the whole line with kiln_hal_fail. */

/* Room for any problem these checks write, with names as short as `noun` and `taker` below. */
#define KILN_HAL_PROBLEM_SIZE 256

/* Launch extents: each of dim_x, dim_y and dim_z in [1, max_dim]. */
static inline bool kiln_hal_check_extents(uint32_t dim_x, uint32_t dim_y, uint32_t dim_z, uint32_t max_dim,
                                          char* problem, size_t problem_size) {
  if (dim_x == 0 || dim_y == 0 || dim_z == 0 || dim_x > max_dim || dim_y > max_dim || dim_z > max_dim) {
    snprintf(problem, problem_size, "launch extents %ux%ux%u must each be in [1, %u]", (unsigned)dim_x,
             (unsigned)dim_y, (unsigned)dim_z, (unsigned)max_dim);
    return false;
  }
  return true;
}

/* An index into the module's `count` things of kind `noun` ("kernel", "reduction", "invokable"). */
static inline bool kiln_hal_check_index(const char* noun, uint32_t index, size_t count, char* problem,
                                        size_t problem_size) {
  if (index >= count) {
    snprintf(problem, problem_size, "%s index %u out of range (%zu %ss)", noun, (unsigned)index, count, noun);
    return false;
  }
  return true;
}

/* The number of input views a launch gives against the number its kernel or reduction takes; `taker` names
 * that in the message ("the kernel", "the reduction"). */
static inline bool kiln_hal_check_input_count(uint32_t given, size_t taken, const char* taker, char* problem,
                                              size_t problem_size) {
  if (given != taken) {
    snprintf(problem, problem_size, "%u inputs given, %s takes %zu", (unsigned)given, taker, taken);
    return false;
  }
  return true;
}

/* An output view is given exactly when the kernel returns a value (KILN_HAL_SIG_OUT). */
static inline bool kiln_hal_check_output(bool returns_value, bool output_given, char* problem,
                                         size_t problem_size) {
  if (returns_value != output_given) {
    snprintf(problem, problem_size, "%s",
             returns_value ? "the kernel returns a value but no output was given"
                           : "the kernel returns void but an output was given");
    return false;
  }
  return true;
}

/* A for-each launch's usrData: usr_size bytes there when usr_size > 0. */
static inline bool kiln_hal_check_usr_data(const void* usr_data, uint64_t usr_size, char* problem,
                                           size_t problem_size) {
  if (usr_size > 0 && !usr_data) {
    snprintf(problem, problem_size, "usr_size > 0 but usr_data is NULL");
    return false;
  }
  return true;
}

/* A reduction's result: `result` not NULL, and `result_size` the reduction's `needed` bytes. */
static inline bool kiln_hal_check_result(const void* result, uint64_t result_size, uint64_t needed,
                                         char* problem, size_t problem_size) {
  if (!result || result_size != needed) {
    snprintf(problem, problem_size, "the result needs %llu bytes, got %llu%s", (unsigned long long)needed,
             (unsigned long long)result_size, result ? "" : " (NULL)");
    return false;
  }
  return true;
}

/* Bytes [offset, offset + size) inside a buffer of `buffer_size` bytes (buffer_map, _read and _write). */
static inline bool kiln_hal_check_range(uint64_t offset, uint64_t size, uint64_t buffer_size, char* problem,
                                        size_t problem_size) {
  if (offset > buffer_size || size > buffer_size - offset) {
    snprintf(problem, problem_size, "bytes [%llu, +%llu) outside the %llu-byte buffer",
             (unsigned long long)offset, (unsigned long long)size, (unsigned long long)buffer_size);
    return false;
  }
  return true;
}

/* Flags of kiln_hal_check_view. */
#define KILN_HAL_VIEW_OUTPUT 0x1u         /* the launch writes the view: no two cells may overlap */
#define KILN_HAL_VIEW_SAY_MIN_STRIDE 0x2u /* an overlap's message names the smallest stride that fits */

/* A buffer view over dims[0] x dims[1] x dims[2] cells: its buffer is there, its element_size is the kernel's
 * `element_size`, and every cell it reaches lies inside the buffer, whose size the driver passes as
 * `buffer_size` (it is not read when view->buffer is NULL, so pass 0 then). With KILN_HAL_VIEW_OUTPUT no two
 * cells overlap either (threads would race on them): each dimension steps past all earlier ones. dims are
 * at least 1 (check the extents first). The arithmetic cannot overflow, whatever the offset and strides. */
static inline bool kiln_hal_check_view(const KilnHalBufferView* view, uint64_t buffer_size,
                                       uint32_t element_size, const uint32_t dims[3], uint32_t flags,
                                       char* problem, size_t problem_size) {
  const uint64_t strides[3] = {view->stride_x, view->stride_y, view->stride_z};
  uint64_t last = view->offset; /* where the last cell starts */
  bool beyond = false;          /* the last cell starts past any 64-bit size */
  uint64_t span;
  int d;
  if (!view->buffer) {
    snprintf(problem, problem_size, "buffer is NULL");
    return false;
  }
  if (view->element_size != element_size) {
    snprintf(problem, problem_size, "element size %u, the kernel's is %u", (unsigned)view->element_size,
             (unsigned)element_size);
    return false;
  }
  for (d = 0; d < 3 && !beyond; ++d) {
    const uint64_t steps = (uint32_t)(dims[d] - 1);
    if (steps != 0 && strides[d] > (UINT64_MAX - last) / steps) {
      beyond = true;
    } else {
      last += steps * strides[d];
    }
  }
  if (beyond || element_size > buffer_size || last > buffer_size - element_size) {
    snprintf(problem, problem_size,
             "the view (offset %llu, strides %llu/%llu/%llu) reaches past the end of its %llu-byte buffer",
             (unsigned long long)view->offset, (unsigned long long)strides[0], (unsigned long long)strides[1],
             (unsigned long long)strides[2], (unsigned long long)buffer_size);
    return false;
  }
  if (flags & KILN_HAL_VIEW_OUTPUT) {
    /* The bytes that the earlier dimensions' cells cover: inside the buffer, so no sum overflows. */
    span = element_size;
    for (d = 0; d < 3; ++d) {
      if (dims[d] > 1 && strides[d] < span) {
        if (flags & KILN_HAL_VIEW_SAY_MIN_STRIDE) {
          snprintf(problem, problem_size,
                   "output stride %llu along %c overlaps earlier cells (needs at least %llu)",
                   (unsigned long long)strides[d], "xyz"[d], (unsigned long long)span);
        } else {
          snprintf(problem, problem_size, "output stride %llu along %c overlaps earlier cells",
                   (unsigned long long)strides[d], "xyz"[d]);
        }
        return false;
      }
      span += (uint64_t)(uint32_t)(dims[d] - 1) * strides[d];
    }
  }
  return true;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_HAL_UTIL_H_ */
