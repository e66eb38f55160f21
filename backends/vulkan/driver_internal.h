// What the Vulkan driver's files share: its limits, the instance, device and buffer objects behind the HAL
// handles, and the functions each file offers the others. Private to backends/vulkan, never installed.
#ifndef KILN_BACKENDS_VULKAN_DRIVER_INTERNAL_H_
#define KILN_BACKENDS_VULKAN_DRIVER_INTERNAL_H_

#include <spirv-tools/libspirv.h>
#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "backends/common/driver_util.h"
#include "backends/vulkan/memory.h"
#include "backends/vulkan/pipeline_cache.h"
#include "kiln/hal.h"
#include "kiln/hal_util.h"
#include "kiln/kernel_abi.h"
#include "kiln/spirv_abi.h"

#ifndef KILN_VULKAN_DRIVER_VERSION
#define KILN_VULKAN_DRIVER_VERSION "0"
#endif

namespace kiln {
namespace vulkan {

constexpr uint32_t kMaxDim = 1u << 30;
constexpr uint32_t kNumShapes = 3;  // 1D, 2D, 3D workgroups
const uint32_t kDriverLevel = KILN_HAL_LEVEL(KILN_KERNEL_HAL_LEVEL_MAJOR, KILN_KERNEL_HAL_LEVEL_MINOR);

using driver::CheckView;
using driver::LevelString;
using driver::ReadElement;
using driver::ReadStruct;
using driver::WriteStruct;

// vk_names.cc
std::string VkResultName(VkResult result);
const char* DeviceTypeName(VkPhysicalDeviceType type);
std::string FeatureNames(uint32_t features);

struct PhysicalDevice {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  uint32_t enumeration_index = 0;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceMemoryProperties memory{};
  uint32_t queue_family = 0;
  uint32_t features = 0;  // KILN_SPIRV_FEATURE_* the device has
  bool has_8bit_ext = false;
  bool has_float16_int8_ext = false;
  bool has_host_memory_ext = false;
  VkDeviceSize host_pointer_alignment = 0;
  VkDeviceSize max_allocation = 0;
  uint64_t device_local_bytes = 0;
  bool unified = false;  // device-local memory the host can map: buffers are zero-copy
};

struct Instance : driver::ServicesClient {
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  bool validation = false;
  std::atomic<uint32_t> validation_messages{0};
  std::vector<PhysicalDevice> devices;  // in choice order
  std::string cache_dir;
  bool force_staging = false;
  std::mutex mutex;
  int open_devices = 0;
};

struct Batch;

struct Device {
  Instance* instance = nullptr;
  const PhysicalDevice* physical = nullptr;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  std::mutex queue_mutex;
  uint32_t enabled_features = 0;
  bool staged = false;  // buffers live in memory the host does not map: copies go through staging
  bool host_wrap = false;
  PFN_vkGetMemoryHostPointerPropertiesEXT get_host_pointer_properties = nullptr;
  std::unique_ptr<BlockAllocator> allocator;
  std::atomic<int> live_objects{0};
  // A zero-filled buffer for bindings a launch leaves empty (an unbound allocation, an unused global block).
  VkBuffer dummy = VK_NULL_HANDLE;
  Allocation dummy_memory;
  // Staged copies, one at a time.
  std::mutex transfer_mutex;
  VkCommandPool transfer_pool = VK_NULL_HANDLE;
  VkCommandBuffer transfer_cmd = VK_NULL_HANDLE;
  VkFence transfer_fence = VK_NULL_HANDLE;
  VkBuffer staging = VK_NULL_HANDLE;
  Allocation staging_memory;
  // Pipelines.
  spv_context spirv = nullptr;
  VkPipelineCache pipeline_cache = VK_NULL_HANDLE;
  std::mutex cache_mutex;
  std::string cache_path;  // empty: no disk cache
  PipelineCacheIdentity cache_identity;
  std::set<uint64_t> cache_keys;
  bool cache_was_corrupt = false;  // reported once, on the first module load that misses
  // Reusable one-launch batches for launch_for_each.
  std::mutex idle_mutex;
  std::vector<Batch*> idle_batches;

  const VkPhysicalDeviceLimits& limits() const { return physical->props.limits; }
};

struct Buffer {
  Device* device = nullptr;
  VkBuffer buffer = VK_NULL_HANDLE;
  Allocation allocation;
  VkDeviceMemory wrapped_memory = VK_NULL_HANDLE;  // KILN_HAL_BUFFER_HOST_WRAP
  uint64_t size = 0;
  uint8_t* host = nullptr;  // zero-copy host view, NULL when staged
  // buffer_map of a staged buffer: a host copy written back on unmap.
  std::vector<uint8_t> map_copy;
  uint64_t map_offset = 0;
  bool mapped = false;
};

inline Instance* AsInstance(KilnHalInstance* h) { return reinterpret_cast<Instance*>(h); }
inline Device* AsDevice(KilnHalDevice* h) { return reinterpret_cast<Device*>(h); }
inline Buffer* AsBuffer(KilnHalBuffer* h) { return reinterpret_cast<Buffer*>(h); }

#define KILN_VK_REQUIRE(cond)                 \
  do {                                        \
    if (!(cond)) return kKilnInvalidArgument; \
  } while (0)

// instance.cc
KilnStatus CreateInstance(Instance* instance);
KilnStatus CheckIndex(Instance* instance, uint32_t index);
VkDeviceSize BufferAlignment(const PhysicalDevice& pd, bool staged);
KilnStatus Shutdown(KilnHalInstance* handle);
KilnStatus DeviceCount(KilnHalInstance* handle, uint32_t* out_count);
KilnStatus DeviceGetInfo(KilnHalInstance* handle, uint32_t index, KilnHalDeviceInfo* out_info);

// device.cc
KilnStatus DeviceOpen(KilnHalInstance* handle, uint32_t index, KilnHalDevice** out_device);
KilnStatus DeviceClose(KilnHalDevice* handle);

// buffer.cc
KilnStatus BufferCreate(KilnHalDevice* handle, const KilnHalBufferDesc* in_desc, KilnHalBuffer** out_buffer);
KilnStatus BufferDestroy(KilnHalBuffer* handle);
KilnStatus BufferWrite(KilnHalBuffer* handle, uint64_t offset, const void* data, uint64_t size);
KilnStatus BufferRead(KilnHalBuffer* handle, uint64_t offset, uint64_t size, void* out_data);
KilnStatus BufferMap(KilnHalBuffer* handle, uint64_t offset, uint64_t size, void** out_ptr);
KilnStatus BufferUnmap(KilnHalBuffer* handle);

}  // namespace vulkan
}  // namespace kiln

#endif  // KILN_BACKENDS_VULKAN_DRIVER_INTERNAL_H_
