// What the CPU and Vulkan drivers share beyond kiln/hal_util.h: the runtime's services with the drivers' own
// fallbacks, configuration with environment overrides, launch argument checks, and the cache folder. Header
// only, so each driver compiles its own hidden copy (the Vulkan driver is a .so that links nothing of Kiln's,
// and the CPU driver's objects are put into libkiln as they are).
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

// Launch extents must each be in [1, max_dim].
inline bool CheckLaunchExtents(uint32_t dim_x, uint32_t dim_y, uint32_t dim_z, uint32_t max_dim,
                               const std::string& what, std::string* out_error) {
  if (dim_x == 0 || dim_y == 0 || dim_z == 0 || dim_x > max_dim || dim_y > max_dim || dim_z > max_dim) {
    *out_error = what + ": launch extents " + std::to_string(dim_x) + "x" + std::to_string(dim_y) + "x" +
                 std::to_string(dim_z) + " must each be in [1, " + std::to_string(max_dim) + "]";
    return false;
  }
  return true;
}

// Checks that every cell a view reaches lies inside its buffer, and (for outputs) that no two cells overlap.
// `Buffer` is the driver's buffer type, which has a `size` in bytes.
template <typename Buffer>
bool CheckView(const KilnHalBufferView& view, uint32_t element_size, const uint32_t dims[3], bool is_output,
               const std::string& what, std::string* out_error) {
  if (!view.buffer) {
    *out_error = what + ": buffer is NULL";
    return false;
  }
  if (view.element_size != element_size) {
    *out_error = what + ": element size " + std::to_string(view.element_size) + ", the kernel's is " +
                 std::to_string(element_size);
    return false;
  }
  const Buffer* buffer = reinterpret_cast<const Buffer*>(view.buffer);
  const uint64_t strides[3] = {view.stride_x, view.stride_y, view.stride_z};
  unsigned __int128 last = view.offset;
  for (int d = 0; d < 3; ++d) last += static_cast<unsigned __int128>(dims[d] - 1) * strides[d];
  if (last + element_size > buffer->size) {
    *out_error = what + ": the view (offset " + std::to_string(view.offset) + ", strides " +
                 std::to_string(view.stride_x) + "/" + std::to_string(view.stride_y) + "/" +
                 std::to_string(view.stride_z) + ") reaches past the end of its " +
                 std::to_string(buffer->size) + "-byte buffer";
    return false;
  }
  if (is_output) {
    // Cells must not overlap, or threads would race on them: each dimension steps past the previous ones.
    unsigned __int128 span = element_size;
    for (int d = 0; d < 3; ++d) {
      if (dims[d] > 1 && strides[d] < span) {
        *out_error = what + ": output stride " + std::to_string(strides[d]) + " along " +
                     std::string(1, "xyz"[d]) + " overlaps earlier cells (needs at least " +
                     std::to_string(static_cast<uint64_t>(span)) + ")";
        return false;
      }
      span = static_cast<unsigned __int128>(dims[d] - 1) * strides[d] + span;
    }
  }
  return true;
}

}  // namespace driver
}  // namespace kiln

#endif  // KILN_BACKENDS_COMMON_DRIVER_UTIL_H_
