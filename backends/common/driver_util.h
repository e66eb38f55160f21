// What the CPU and Vulkan drivers share beyond kiln/hal_util.h: the runtime's services with the drivers' own
// fallbacks, configuration with environment overrides, the cache folder, and C++ forms of hal_util.h's launch
// checks (the checks themselves live there, so that the sample driver, built against the installed headers
// alone, runs the very same ones). Header only, so each driver compiles its own hidden copy (the Vulkan
// driver is a .so that links nothing of Kiln's, and the CPU driver's objects are put into libkiln as they
// are).
#ifndef KILN_BACKENDS_COMMON_DRIVER_UTIL_H_
#define KILN_BACKENDS_COMMON_DRIVER_UTIL_H_

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "kiln/hal.h"
#include "kiln/hal_util.h"

namespace kiln {
namespace driver {

// kiln/hal_util.h's struct_size-aware copies, typed: `in` and `out` are the same HAL struct.
template <typename T>
bool ReadStruct(const T* in, T* out) {
  return kiln_hal_read_struct(in, sizeof(T), out);
}
template <typename T>
bool ReadElement(const T* array, uint32_t index, T* out) {
  return kiln_hal_read_element(array, index, sizeof(T), out);
}
template <typename T>
bool WriteStruct(const T& in, T* out) {
  return kiln_hal_write_struct(&in, sizeof(T), out);
}

// A driver instance's view of the runtime: KilnHalServices, with a fallback for every entry the runtime
// leaves NULL. A driver's Instance derives from it.
struct ServicesClient {
  KilnHalServices services{};

  void Log(KilnHalLogLevel level, const std::string& message) const {
    kiln_hal_log(&services, level, message.c_str());
  }
  KilnStatus Fail(KilnStatus status, const std::string& message) const {
    return kiln_hal_fail(&services, status, message.c_str());
  }
  uint64_t NowNs() const {
    if (services.now_ns) return services.now_ns(services.user_data);
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
  }
  // The runtime's value for `key`, else the environment variable `env`, else "".
  std::string Config(const char* key, const char* env) const {
    if (services.get_config) {
      if (const char* value = services.get_config(services.user_data, key)) return value;
    }
    if (const char* value = getenv(env)) return value;
    return "";
  }
  void* Allocate(size_t size, size_t alignment) const {
    if (services.allocate) return services.allocate(services.user_data, size, alignment);
    return aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  }
  void Free(void* ptr) const {
    if (!ptr) return;
    if (services.free) {
      services.free(services.user_data, ptr);
    } else {
      free(ptr);
    }
  }
};

// "major.minor" of a KILN_HAL_LEVEL.
inline std::string LevelString(uint32_t level) {
  return std::to_string(KILN_HAL_LEVEL_MAJOR(level)) + "." + std::to_string(KILN_HAL_LEVEL_MINOR(level));
}

// The cache folder from the configured value (config `cache_dir`, or $KILN_CACHE_DIR): "" means the default,
// $XDG_CACHE_HOME/kiln or ~/.cache/kiln; "off" disables the cache (returns "").
inline std::string ResolveCacheDir(std::string configured) {
  if (configured.empty()) {
    if (const char* xdg = getenv("XDG_CACHE_HOME"); xdg && *xdg) {
      configured = std::string(xdg) + "/kiln";
    } else if (const char* home = getenv("HOME"); home && *home) {
      configured = std::string(home) + "/.cache/kiln";
    }
  }
  if (configured == "off") configured.clear();
  return configured;
}

// kiln_hal_check_extents with the message naming `what`: launch extents must each be in [1, max_dim].
inline bool CheckLaunchExtents(uint32_t dim_x, uint32_t dim_y, uint32_t dim_z, uint32_t max_dim,
                               const std::string& what, std::string* out_error) {
  char problem[KILN_HAL_PROBLEM_SIZE];
  if (kiln_hal_check_extents(dim_x, dim_y, dim_z, max_dim, problem, sizeof(problem))) return true;
  *out_error = what + ": " + problem;
  return false;
}

// kiln_hal_check_view for one of the driver's buffers, with the message naming `what`: every cell the view
// reaches lies inside its buffer, and (for outputs) no two cells overlap. `Buffer` is the driver's buffer
// type, which has a `size` in bytes.
template <typename Buffer>
bool CheckView(const KilnHalBufferView& view, uint32_t element_size, const uint32_t dims[3], bool is_output,
               const std::string& what, std::string* out_error) {
  const uint64_t buffer_size = view.buffer ? reinterpret_cast<const Buffer*>(view.buffer)->size : 0;
  const uint32_t flags = KILN_HAL_VIEW_SAY_MIN_STRIDE | (is_output ? KILN_HAL_VIEW_OUTPUT : 0u);
  char problem[KILN_HAL_PROBLEM_SIZE];
  if (kiln_hal_check_view(&view, buffer_size, element_size, dims, flags, problem, sizeof(problem)))
    return true;
  *out_error = what + ": " + problem;
  return false;
}

}  // namespace driver
}  // namespace kiln

#endif  // KILN_BACKENDS_COMMON_DRIVER_UTIL_H_
