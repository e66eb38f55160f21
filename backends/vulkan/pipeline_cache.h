// The Vulkan driver's on-disk pipeline cache: one file per device identity holding the VkPipelineCache data
// plus the keys of the pipelines it was built from (so a module load can tell a hit from a miss). Any
// mismatch, truncation or corruption reads as a miss, never as a failure.
#ifndef KILN_BACKENDS_VULKAN_PIPELINE_CACHE_H_
#define KILN_BACKENDS_VULKAN_PIPELINE_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

namespace kiln {
namespace vulkan {

uint64_t Fnv1a64(const void* data, size_t size, uint64_t hash = 0xcbf29ce484222325ull);

// Everything that makes a VkPipelineCache usable on a device.
struct PipelineCacheIdentity {
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  uint32_t driver_version = 0;
  uint8_t pipeline_cache_uuid[16] = {};
  std::string kiln_version;
};

enum class CacheLoadResult {
  kAbsent,    // no file: a plain miss
  kLoaded,    // keys and data are usable
  kMismatch,  // made for another device, driver or Kiln version: a plain miss
  kCorrupt,   // unreadable, truncated or failing its checksums: a miss to report
};

// The file for `identity` under `dir` (dir/vulkan/<vendor>-<device>-<hash>.kvpc).
std::string PipelineCachePath(const std::string& dir, const PipelineCacheIdentity& identity);

CacheLoadResult LoadPipelineCache(const std::string& path, const PipelineCacheIdentity& identity,
                                  std::set<uint64_t>* keys, std::string* vk_data, std::string* detail);

// Writes atomically (temp file, then rename), creating folders as needed.
bool StorePipelineCache(const std::string& path, const PipelineCacheIdentity& identity,
                        const std::set<uint64_t>& keys, const std::string& vk_data, std::string* error);

}  // namespace vulkan
}  // namespace kiln

#endif  // KILN_BACKENDS_VULKAN_PIPELINE_CACHE_H_
