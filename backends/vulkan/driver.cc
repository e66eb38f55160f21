// The Vulkan driver: kiln/hal.h on any Vulkan 1.1+ device, running each kernel's SPIR-V (kiln/spirv_abi.h) as
// a compute pipeline. Built as libkiln_vulkan.so, it reaches the runtime only through KilnHalServices and
// links nothing of Kiln's. See docs/vulkan.md.
#include <spirv-tools/libspirv.h>
#include <vulkan/vulkan.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "backends/common/driver_util.h"
#include "backends/vulkan/batch.h"
#include "backends/vulkan/pipeline_cache.h"
#include "kiln/hal.h"
#include "kiln/hal_util.h"
#include "kiln/kernel_abi.h"
#include "kiln/spirv_abi.h"

namespace kiln {
namespace vulkan {
namespace {

constexpr VkDeviceSize kStagingSize = 8ull << 20;
// The most workgroups of a reduction's pass 0, i.e. partials for pass 1's one workgroup to combine.
constexpr uint64_t kMaxReductionGroups = 1024;

// discrete > integrated > virtual > CPU > other.
int DeviceTypeRank(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return 3;
    default:
      return 4;
  }
}

const char* VendorName(uint32_t id) {
  switch (id) {
    case 0x1002:
      return "AMD";
    case 0x10DE:
      return "NVIDIA";
    case 0x8086:
      return "Intel";
    case 0x13B5:
      return "ARM";
    case 0x5143:
      return "Qualcomm";
    case 0x1010:
      return "Imagination";
    case 0x106B:
      return "Apple";
    case 0x10005:
      return "Mesa";
    default:
      return nullptr;
  }
}

struct Fence {
  Device* device;
  std::shared_ptr<Submission> submission;
};
VkBool32 VKAPI_PTR OnValidationMessage(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                       VkDebugUtilsMessageTypeFlagsEXT,
                                       const VkDebugUtilsMessengerCallbackDataEXT* data, void* user_data) {
  Instance* instance = static_cast<Instance*>(user_data);
  const bool error = severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  const bool warning = severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT;
  if (!error && !warning) return VK_FALSE;
  ++instance->validation_messages;
  instance->Log(
      error ? kKilnHalLogError : kKilnHalLogWarning,
      std::string("Vulkan validation: ") + (data && data->pMessage ? data->pMessage : "(no message)"));
  return VK_FALSE;
}

// ---- Instance setup
// ------------------------------------------------------------------------------------------

bool HasExtension(const std::vector<VkExtensionProperties>& list, const char* name) {
  for (const auto& e : list) {
    if (strcmp(e.extensionName, name) == 0) return true;
  }
  return false;
}

bool DescribePhysicalDevice(Instance* instance, VkPhysicalDevice handle, uint32_t index,
                            PhysicalDevice* out) {
  out->handle = handle;
  out->enumeration_index = index;
  vkGetPhysicalDeviceProperties(handle, &out->props);
  const std::string name = out->props.deviceName;
  if (out->props.apiVersion < VK_API_VERSION_1_1) {
    instance->Log(kKilnHalLogInfo, "Vulkan device " + std::to_string(index) + " (" + name +
                                       ") skipped: supports only Vulkan " +
                                       std::to_string(VK_API_VERSION_MAJOR(out->props.apiVersion)) + "." +
                                       std::to_string(VK_API_VERSION_MINOR(out->props.apiVersion)));
    return false;
  }
  uint32_t num_families = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(handle, &num_families, nullptr);
  std::vector<VkQueueFamilyProperties> families(num_families);
  vkGetPhysicalDeviceQueueFamilyProperties(handle, &num_families, families.data());
  int family = -1;
  for (uint32_t i = 0; i < num_families; ++i) {
    // A compute-only family is usually the dedicated async compute engine; prefer it, else any with compute.
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    if (family < 0 || !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) family = static_cast<int>(i);
  }
  if (family < 0) {
    instance->Log(kKilnHalLogInfo,
                  "Vulkan device " + std::to_string(index) + " (" + name + ") skipped: no compute queue");
    return false;
  }
  out->queue_family = static_cast<uint32_t>(family);
  vkGetPhysicalDeviceMemoryProperties(handle, &out->memory);
  uint32_t num_extensions = 0;
  vkEnumerateDeviceExtensionProperties(handle, nullptr, &num_extensions, nullptr);
  std::vector<VkExtensionProperties> extensions(num_extensions);
  vkEnumerateDeviceExtensionProperties(handle, nullptr, &num_extensions, extensions.data());
  const bool v12 = out->props.apiVersion >= VK_API_VERSION_1_2;
  out->has_8bit_ext = HasExtension(extensions, VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
  out->has_float16_int8_ext = HasExtension(extensions, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
  out->has_host_memory_ext = HasExtension(extensions, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);

  VkPhysicalDevice8BitStorageFeatures storage8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  VkPhysicalDevice16BitStorageFeatures storage16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDeviceShaderFloat16Int8Features f16i8{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &storage16;
  void** tail = &storage16.pNext;
  if (v12 || out->has_8bit_ext) {
    *tail = &storage8;
    tail = &storage8.pNext;
  }
  if (v12 || out->has_float16_int8_ext) {
    *tail = &f16i8;
    tail = &f16i8.pNext;
  }
  vkGetPhysicalDeviceFeatures2(handle, &features);
  out->features = 0;
  if (storage8.storageBuffer8BitAccess) out->features |= KILN_SPIRV_FEATURE_STORAGE_8BIT;
  if (storage16.storageBuffer16BitAccess) out->features |= KILN_SPIRV_FEATURE_STORAGE_16BIT;
  if (f16i8.shaderInt8) out->features |= KILN_SPIRV_FEATURE_INT8;
  if (features.features.shaderInt16) out->features |= KILN_SPIRV_FEATURE_INT16;
  if (f16i8.shaderFloat16) out->features |= KILN_SPIRV_FEATURE_FLOAT16;
  if (features.features.shaderInt64) out->features |= KILN_SPIRV_FEATURE_INT64;
  if (features.features.shaderFloat64) out->features |= KILN_SPIRV_FEATURE_FLOAT64;

  VkPhysicalDeviceMaintenance3Properties maintenance3{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceExternalMemoryHostPropertiesEXT host_props{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
  VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props2.pNext = &maintenance3;
  if (out->has_host_memory_ext) maintenance3.pNext = &host_props;
  vkGetPhysicalDeviceProperties2(handle, &props2);
  out->max_allocation = maintenance3.maxMemoryAllocationSize;
  out->host_pointer_alignment = out->has_host_memory_ext ? host_props.minImportedHostPointerAlignment : 0;

  bool host_visible_device_local = false;
  for (uint32_t i = 0; i < out->memory.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags flags = out->memory.memoryTypes[i].propertyFlags;
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    if ((flags & want) == want) host_visible_device_local = true;
  }
  for (uint32_t i = 0; i < out->memory.memoryHeapCount; ++i) {
    if (out->memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) {
      out->device_local_bytes += out->memory.memoryHeaps[i].size;
    }
  }
  // A discrete GPU's host-visible device-local memory is a small BAR window: use it for nothing but staging.
  out->unified = host_visible_device_local && out->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
  return true;
}

KilnStatus CreateInstance(Instance* instance) {
  std::string validation = instance->Config("vulkan.validation", "KILN_VULKAN_VALIDATION");
  instance->validation = !validation.empty() && validation != "0" && validation != "off";
  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  if (instance->validation) {
    uint32_t count = 0;
    vkEnumerateInstanceLayerProperties(&count, nullptr);
    std::vector<VkLayerProperties> available(count);
    vkEnumerateInstanceLayerProperties(&count, available.data());
    bool found = false;
    for (const auto& layer : available) found |= strcmp(layer.layerName, "VK_LAYER_KHRONOS_validation") == 0;
    if (!found) {
      return instance->Fail(kKilnUnsupported,
                            "vulkan.validation is on but VK_LAYER_KHRONOS_validation is not installed "
                            "(Debian: vulkan-validationlayers)");
    }
    layers.push_back("VK_LAYER_KHRONOS_validation");
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "kiln";
  app.pEngineName = "kiln-vulkan";
  app.engineVersion = 1;
  app.apiVersion = VK_API_VERSION_1_3;
  uint32_t loader_version = VK_API_VERSION_1_0;
  vkEnumerateInstanceVersion(&loader_version);
  if (loader_version < VK_API_VERSION_1_1) {
    return instance->Fail(kKilnUnsupported, "the Vulkan loader supports only Vulkan 1.0; Kiln needs 1.1");
  }
  if (loader_version < app.apiVersion) app.apiVersion = VK_API_VERSION_1_1;
  VkDebugUtilsMessengerCreateInfoEXT messenger{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger.pfnUserCallback = OnValidationMessage;
  messenger.pUserData = instance;
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  if (instance->validation) info.pNext = &messenger;  // also covers vkCreateInstance/vkDestroyInstance
  VkResult result = vkCreateInstance(&info, nullptr, &instance->instance);
  if (result != VK_SUCCESS) {
    return instance->Fail(kKilnUnsupported, "vkCreateInstance failed: " + VkResultName(result));
  }
  if (instance->validation) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance->instance, "vkCreateDebugUtilsMessengerEXT"));
    if (!create || create(instance->instance, &messenger, nullptr, &instance->messenger) != VK_SUCCESS) {
      return instance->Fail(kKilnUnsupported, "cannot install the validation message callback");
    }
    instance->Log(kKilnHalLogInfo, "Vulkan validation layers enabled (VK_LAYER_KHRONOS_validation)");
  }

  uint32_t count = 0;
  vkEnumeratePhysicalDevices(instance->instance, &count, nullptr);
  std::vector<VkPhysicalDevice> handles(count);
  vkEnumeratePhysicalDevices(instance->instance, &count, handles.data());
  std::vector<PhysicalDevice> usable;
  for (uint32_t i = 0; i < count; ++i) {
    PhysicalDevice device;
    if (DescribePhysicalDevice(instance, handles[i], i, &device)) usable.push_back(device);
  }
  std::sort(usable.begin(), usable.end(), [](const PhysicalDevice& a, const PhysicalDevice& b) {
    const int rank_a = DeviceTypeRank(a.props.deviceType);
    const int rank_b = DeviceTypeRank(b.props.deviceType);
    return rank_a != rank_b ? rank_a < rank_b : a.enumeration_index < b.enumeration_index;
  });
  if (usable.empty()) {
    return instance->Fail(kKilnUnsupported, "no Vulkan 1.1 device with a compute queue (" +
                                                std::to_string(count) + " device(s) enumerated)");
  }
  // KILN_VULKAN_DEVICE: the enumeration index, or a substring of the name; the chosen device becomes index 0.
  std::string choice = instance->Config("vulkan.device", "KILN_VULKAN_DEVICE");
  if (!choice.empty()) {
    int match = -1;
    char* end = nullptr;
    unsigned long index = strtoul(choice.c_str(), &end, 10);
    for (size_t i = 0; i < usable.size() && match < 0; ++i) {
      if (end && *end == '\0' && usable[i].enumeration_index == index) match = static_cast<int>(i);
    }
    for (size_t i = 0; i < usable.size() && match < 0; ++i) {
      if (strstr(usable[i].props.deviceName, choice.c_str())) match = static_cast<int>(i);
    }
    if (match < 0) {
      std::string names;
      for (const auto& d : usable) {
        names +=
            (names.empty() ? "" : ", ") + std::to_string(d.enumeration_index) + ": " + d.props.deviceName;
      }
      return instance->Fail(kKilnInvalidArgument, "KILN_VULKAN_DEVICE=\"" + choice +
                                                      "\" matches no Vulkan device (have " + names + ")");
    }
    std::rotate(usable.begin(), usable.begin() + match, usable.begin() + match + 1);
  }
  instance->devices = std::move(usable);
  return kKilnOk;
}

// ---- Devices
// ---------------------------------------------------------------------------------------------------

KilnStatus Shutdown(KilnHalInstance* handle) {
  Instance* instance = AsInstance(handle);
  KILN_VK_REQUIRE(instance);
  {
    std::lock_guard<std::mutex> lock(instance->mutex);
    if (instance->open_devices > 0) {
      return instance->Fail(kKilnInvalidArgument,
                            "shutdown: " + std::to_string(instance->open_devices) + " device(s) still open");
    }
  }
  if (instance->messenger) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance->instance, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance->instance, instance->messenger, nullptr);
  }
  if (instance->instance) vkDestroyInstance(instance->instance, nullptr);
  delete instance;
  return kKilnOk;
}

KilnStatus DeviceCount(KilnHalInstance* handle, uint32_t* out_count) {
  KILN_VK_REQUIRE(handle && out_count);
  *out_count = static_cast<uint32_t>(AsInstance(handle)->devices.size());
  return kKilnOk;
}

KilnStatus CheckIndex(Instance* instance, uint32_t index) {
  if (index >= instance->devices.size()) {
    return instance->Fail(kKilnInvalidArgument, "device index " + std::to_string(index) + " out of range (" +
                                                    std::to_string(instance->devices.size()) +
                                                    " Vulkan devices)");
  }
  return kKilnOk;
}

uint32_t MaxInputs(const VkPhysicalDeviceLimits& limits) {
  const uint32_t views =
      (limits.maxPushConstantsSize - KILN_SPIRV_PUSH_HEADER_SIZE) / KILN_SPIRV_PUSH_VIEW_SIZE;
  return std::min<uint32_t>(KILN_KERNEL_MAX_INPUTS, views > 0 ? views - 1 : 0);
}

// limits.buffer_alignment: what wrapped host memory must have (when the device can wrap), and therefore what
// buffer_create delivers too, so that either kind of buffer can stand in for the other.
VkDeviceSize BufferAlignment(const PhysicalDevice& pd, bool staged) {
  return std::max<VkDeviceSize>(
      {VkDeviceSize{64}, pd.props.limits.minStorageBufferOffsetAlignment,
       (!staged ? pd.host_pointer_alignment : 0)});
}

KilnStatus DeviceGetInfo(KilnHalInstance* handle, uint32_t index, KilnHalDeviceInfo* out_info) {
  Instance* instance = AsInstance(handle);
  KILN_VK_REQUIRE(instance);
  if (KilnStatus status = CheckIndex(instance, index); status != kKilnOk) return status;
  if (!out_info || out_info->struct_size < sizeof(uint32_t)) {
    return instance->Fail(kKilnInvalidArgument, "device_get_info: out_info is NULL or has no struct_size");
  }
  const PhysicalDevice& pd = instance->devices[index];
  const VkPhysicalDeviceLimits& limits = pd.props.limits;
  KilnHalDeviceInfo info;
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  switch (pd.props.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      info.type = kKilnHalDeviceGpu;
      break;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      info.type = kKilnHalDeviceCpu;
      break;
    default:
      info.type = kKilnHalDeviceOther;
      break;
  }
  snprintf(info.name, sizeof(info.name), "%s (Vulkan %u.%u.%u %s)", pd.props.deviceName,
           VK_API_VERSION_MAJOR(pd.props.apiVersion), VK_API_VERSION_MINOR(pd.props.apiVersion),
           VK_API_VERSION_PATCH(pd.props.apiVersion), DeviceTypeName(pd.props.deviceType));
  const char* vendor = VendorName(pd.props.vendorID);
  if (vendor) {
    snprintf(info.vendor, sizeof(info.vendor), "%s", vendor);
  } else {
    snprintf(info.vendor, sizeof(info.vendor), "0x%04x", pd.props.vendorID);
  }
  info.memory_bytes = pd.device_local_bytes;
  info.max_kernel_level = kDriverLevel;
  info.flags = KILN_HAL_DEVICE_ASYNC_BATCHES;
  const bool staged = !pd.unified || instance->force_staging;
  if (!staged) info.flags |= KILN_HAL_DEVICE_MAPPABLE_BUFFERS;
  if (!staged && pd.has_host_memory_ext) info.flags |= KILN_HAL_DEVICE_HOST_SHARED_MEMORY;
  snprintf(info.payload_tags, sizeof(info.payload_tags), KILN_SPIRV_PAYLOAD_TAG);
  info.limits.struct_size = sizeof(info.limits);
  info.limits.max_inputs = MaxInputs(limits);
  info.limits.max_dim_x = info.limits.max_dim_y = info.limits.max_dim_z = kMaxDim;
  info.limits.max_threads = limits.maxComputeWorkGroupInvocations;
  uint64_t max_buffer = limits.maxStorageBufferRange;
  if (pd.max_allocation) max_buffer = std::min<uint64_t>(max_buffer, pd.max_allocation);
  info.limits.max_buffer_size = max_buffer;
  info.limits.buffer_alignment = static_cast<uint32_t>(BufferAlignment(pd, staged));
  WriteStruct(info, out_info);
  return kKilnOk;
}

}  // namespace

FaultRecords::~FaultRecords() {
  if (device) DestroyRawBuffer(device, &buffer, &memory);
}

ReduceScratch::~ReduceScratch() {
  if (!device) return;
  DestroyRawBuffer(device, &partials, &partials_memory);
  DestroyRawBuffer(device, &result, &result_memory);
}

namespace {

void DestroyBatchObjects(Batch* batch);
KilnStatus DeviceClose(KilnHalDevice* handle);

KilnStatus DeviceOpen(KilnHalInstance* handle, uint32_t index, KilnHalDevice** out_device) {
  Instance* instance = AsInstance(handle);
  KILN_VK_REQUIRE(instance);
  if (KilnStatus status = CheckIndex(instance, index); status != kKilnOk) return status;
  if (!out_device) return instance->Fail(kKilnInvalidArgument, "device_open: out_device is NULL");
  const PhysicalDevice& pd = instance->devices[index];
  auto device = std::make_unique<Device>();
  device->instance = instance;
  device->physical = &pd;
  const bool v12 = pd.props.apiVersion >= VK_API_VERSION_1_2;

  std::vector<const char*> extensions;
  VkPhysicalDevice8BitStorageFeatures storage8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  VkPhysicalDevice16BitStorageFeatures storage16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDeviceShaderFloat16Int8Features f16i8{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &storage16;
  void** tail = &storage16.pNext;
  const uint32_t f = pd.features;
  storage16.storageBuffer16BitAccess = (f & KILN_SPIRV_FEATURE_STORAGE_16BIT) != 0;
  if (f & KILN_SPIRV_FEATURE_STORAGE_8BIT) {
    storage8.storageBuffer8BitAccess = VK_TRUE;
    *tail = &storage8;
    tail = &storage8.pNext;
    if (!v12) extensions.push_back(VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
  }
  if (f & (KILN_SPIRV_FEATURE_INT8 | KILN_SPIRV_FEATURE_FLOAT16)) {
    f16i8.shaderInt8 = (f & KILN_SPIRV_FEATURE_INT8) != 0;
    f16i8.shaderFloat16 = (f & KILN_SPIRV_FEATURE_FLOAT16) != 0;
    *tail = &f16i8;
    tail = &f16i8.pNext;
    if (!v12) extensions.push_back(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
  }
  features.features.shaderInt16 = (f & KILN_SPIRV_FEATURE_INT16) != 0;
  features.features.shaderInt64 = (f & KILN_SPIRV_FEATURE_INT64) != 0;
  features.features.shaderFloat64 = (f & KILN_SPIRV_FEATURE_FLOAT64) != 0;
  device->staged = !pd.unified || instance->force_staging;
  device->host_wrap = !device->staged && pd.has_host_memory_ext;
  if (device->host_wrap) extensions.push_back(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue.queueFamilyIndex = pd.queue_family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = &features;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue;
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  VkResult result = vkCreateDevice(pd.handle, &info, nullptr, &device->device);
  if (result != VK_SUCCESS) {
    return instance->Fail(kKilnDelegateError, std::string("vkCreateDevice on ") + pd.props.deviceName +
                                                  " failed: " + VkResultName(result));
  }
  device->enabled_features = f;
  vkGetDeviceQueue(device->device, pd.queue_family, 0, &device->queue);
  device->allocator = std::make_unique<BlockAllocator>(device->device, pd.memory);
  if (device->host_wrap) {
    device->get_host_pointer_properties = reinterpret_cast<PFN_vkGetMemoryHostPointerPropertiesEXT>(
        vkGetDeviceProcAddr(device->device, "vkGetMemoryHostPointerPropertiesEXT"));
    device->host_wrap = device->get_host_pointer_properties != nullptr;
  }
  {
    std::lock_guard<std::mutex> lock(instance->mutex);
    ++instance->open_devices;
  }
  KilnHalDevice* raw = reinterpret_cast<KilnHalDevice*>(device.get());
  auto fail = [&](const std::string& what, VkResult r) {
    Device* d = device.release();
    DeviceClose(reinterpret_cast<KilnHalDevice*>(d));
    return instance->Fail(kKilnDelegateError, what + " failed: " + VkResultName(r));
  };
  (void)raw;

  result = CreateRawBuffer(device.get(), 256, 0, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, &device->dummy,
                           &device->dummy_memory);
  if (result != VK_SUCCESS) return fail("creating the placeholder buffer", result);
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool_info.queueFamilyIndex = pd.queue_family;
  result = vkCreateCommandPool(device->device, &pool_info, nullptr, &device->transfer_pool);
  if (result != VK_SUCCESS) return fail("vkCreateCommandPool", result);
  VkCommandBufferAllocateInfo cmd_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cmd_info.commandPool = device->transfer_pool;
  cmd_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cmd_info.commandBufferCount = 1;
  result = vkAllocateCommandBuffers(device->device, &cmd_info, &device->transfer_cmd);
  if (result != VK_SUCCESS) return fail("vkAllocateCommandBuffers", result);
  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  result = vkCreateFence(device->device, &fence_info, nullptr, &device->transfer_fence);
  if (result != VK_SUCCESS) return fail("vkCreateFence", result);
  // The placeholder must read as zeros; fill it once on the device (it may not be host-visible).
  vkResetFences(device->device, 1, &device->transfer_fence);
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkBeginCommandBuffer(device->transfer_cmd, &begin);
  vkCmdFillBuffer(device->transfer_cmd, device->dummy, 0, VK_WHOLE_SIZE, 0);
  vkEndCommandBuffer(device->transfer_cmd);
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &device->transfer_cmd;
  result = vkQueueSubmit(device->queue, 1, &submit, device->transfer_fence);
  if (result == VK_SUCCESS)
    result = vkWaitForFences(device->device, 1, &device->transfer_fence, VK_TRUE, UINT64_MAX);
  if (result != VK_SUCCESS) return fail("clearing the placeholder buffer", result);

  // SPIR-V validation for the device's Vulkan version.
  spv_target_env env = SPV_ENV_VULKAN_1_1;
  if (pd.props.apiVersion >= VK_API_VERSION_1_3) {
    env = SPV_ENV_VULKAN_1_3;
  } else if (v12) {
    env = SPV_ENV_VULKAN_1_2;
  }
  device->spirv = spvContextCreate(env);

  // The pipeline cache: one file per device identity and Kiln version.
  PipelineCacheIdentity& identity = device->cache_identity;
  identity.vendor_id = pd.props.vendorID;
  identity.device_id = pd.props.deviceID;
  identity.driver_version = pd.props.driverVersion;
  memcpy(identity.pipeline_cache_uuid, pd.props.pipelineCacheUUID, VK_UUID_SIZE);
  identity.kiln_version = KILN_VULKAN_DRIVER_VERSION;
  std::string vk_data;
  if (!instance->cache_dir.empty()) {
    device->cache_path = PipelineCachePath(instance->cache_dir, identity);
    std::string detail;
    CacheLoadResult load =
        LoadPipelineCache(device->cache_path, identity, &device->cache_keys, &vk_data, &detail);
    if (load == CacheLoadResult::kCorrupt) {
      device->cache_was_corrupt = true;
      instance->Log(kKilnHalLogWarning, "Vulkan pipeline cache ignored and rebuilt: " + detail);
    } else {
      instance->Log(kKilnHalLogInfo, "Vulkan pipeline cache: " + detail);
    }
  }
  VkPipelineCacheCreateInfo cache_info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  cache_info.initialDataSize = vk_data.size();
  cache_info.pInitialData = vk_data.empty() ? nullptr : vk_data.data();
  result = vkCreatePipelineCache(device->device, &cache_info, nullptr, &device->pipeline_cache);
  if (result != VK_SUCCESS && !vk_data.empty()) {
    instance->Log(kKilnHalLogWarning, "the driver refused the cached pipeline data (" + VkResultName(result) +
                                          "); starting with an empty cache");
    device->cache_keys.clear();
    device->cache_was_corrupt = true;
    cache_info.initialDataSize = 0;
    cache_info.pInitialData = nullptr;
    result = vkCreatePipelineCache(device->device, &cache_info, nullptr, &device->pipeline_cache);
  }
  if (result != VK_SUCCESS) return fail("vkCreatePipelineCache", result);
  instance->Log(kKilnHalLogInfo, std::string("Vulkan device opened: ") + pd.props.deviceName + " (" +
                                     DeviceTypeName(pd.props.deviceType) + "), memory " +
                                     (device->staged ? "staged" : "zero-copy") + ", host wrap " +
                                     (device->host_wrap ? "yes" : "no") + ", features " + FeatureNames(f));
  *out_device = reinterpret_cast<KilnHalDevice*>(device.release());
  return kKilnOk;
}

KilnStatus DeviceClose(KilnHalDevice* handle) {
  Device* device = AsDevice(handle);
  KILN_VK_REQUIRE(device);
  Instance* instance = device->instance;
  if (int live = device->live_objects.load(); live > 0) {
    return instance->Fail(
        kKilnInvalidArgument,
        "device_close: " + std::to_string(live) + " buffer(s), module(s), batch(es) or fence(s) still alive");
  }
  if (device->device) {
    vkDeviceWaitIdle(device->device);
    for (Batch* batch : device->idle_batches) {
      DestroyBatchObjects(batch);
      delete batch;
    }
    if (device->pipeline_cache) vkDestroyPipelineCache(device->device, device->pipeline_cache, nullptr);
    if (device->transfer_fence) vkDestroyFence(device->device, device->transfer_fence, nullptr);
    if (device->transfer_pool) vkDestroyCommandPool(device->device, device->transfer_pool, nullptr);
    DestroyRawBuffer(device, &device->staging, &device->staging_memory);
    DestroyRawBuffer(device, &device->dummy, &device->dummy_memory);
    device->allocator.reset();
    vkDestroyDevice(device->device, nullptr);
  }
  if (device->spirv) spvContextDestroy(device->spirv);
  delete device;
  std::lock_guard<std::mutex> lock(instance->mutex);
  --instance->open_devices;
  return kKilnOk;
}

// ---- Buffers
// ---------------------------------------------------------------------------------------------------

KilnStatus BufferCreate(KilnHalDevice* handle, const KilnHalBufferDesc* in_desc, KilnHalBuffer** out_buffer) {
  Device* device = AsDevice(handle);
  KILN_VK_REQUIRE(device);
  Instance* instance = device->instance;
  KilnHalBufferDesc desc;
  if (!ReadStruct(in_desc, &desc) || !out_buffer) {
    return instance->Fail(kKilnInvalidArgument,
                          "buffer_create: desc or out_buffer is NULL, or desc is too small");
  }
  if (desc.size == 0) return instance->Fail(kKilnInvalidArgument, "buffer_create: size must be at least 1");
  const uint64_t max_size = device->limits().maxStorageBufferRange;
  if (desc.size > max_size) {
    return instance->Fail(kKilnOutOfMemory, "buffer_create: " + std::to_string(desc.size) +
                                                " bytes exceeds the device's storage buffer range of " +
                                                std::to_string(max_size) + " bytes");
  }
  auto buffer = std::make_unique<Buffer>();
  buffer->device = device;
  buffer->size = desc.size;
  if (desc.flags & KILN_HAL_BUFFER_HOST_WRAP) {
    if (!device->host_wrap) {
      return instance->Fail(kKilnUnsupported,
                            std::string("buffer_create: KILN_HAL_BUFFER_HOST_WRAP needs zero-copy memory and "
                                        "VK_EXT_external_memory_host, which ") +
                                device->physical->props.deviceName + " does not offer here");
    }
    const VkDeviceSize alignment = device->physical->host_pointer_alignment;
    if (!desc.host_ptr || reinterpret_cast<uintptr_t>(desc.host_ptr) % alignment) {
      return instance->Fail(kKilnInvalidArgument,
                            "buffer_create: KILN_HAL_BUFFER_HOST_WRAP needs host_ptr aligned to " +
                                std::to_string(alignment) + " bytes (limits.buffer_alignment)");
    }
    // The import covers whole pages: the caller's memory is page-aligned, so the rounded range is its own.
    const VkDeviceSize import_size = (desc.size + alignment - 1) / alignment * alignment;
    VkMemoryHostPointerPropertiesEXT pointer_props{VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
    VkResult result = device->get_host_pointer_properties(
        device->device, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, desc.host_ptr,
        &pointer_props);
    VkExternalMemoryBufferCreateInfo external{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
    external.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.pNext = &external;
    info.size = desc.size;
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    if (result == VK_SUCCESS) result = vkCreateBuffer(device->device, &info, nullptr, &buffer->buffer);
    VkMemoryRequirements req{};
    if (result == VK_SUCCESS) vkGetBufferMemoryRequirements(device->device, buffer->buffer, &req);
    const uint32_t bits = req.memoryTypeBits & pointer_props.memoryTypeBits;
    if (result == VK_SUCCESS && bits == 0) result = VK_ERROR_INVALID_EXTERNAL_HANDLE;
    if (result == VK_SUCCESS) {
      VkImportMemoryHostPointerInfoEXT import{VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT};
      import.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
      import.pHostPointer = desc.host_ptr;
      VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
      alloc.pNext = &import;
      alloc.allocationSize = std::max(import_size, req.size);
      alloc.memoryTypeIndex = static_cast<uint32_t>(__builtin_ctz(bits));
      result = vkAllocateMemory(device->device, &alloc, nullptr, &buffer->wrapped_memory);
    }
    if (result == VK_SUCCESS)
      result = vkBindBufferMemory(device->device, buffer->buffer, buffer->wrapped_memory, 0);
    if (result != VK_SUCCESS) {
      if (buffer->buffer) vkDestroyBuffer(device->device, buffer->buffer, nullptr);
      if (buffer->wrapped_memory) vkFreeMemory(device->device, buffer->wrapped_memory, nullptr);
      return instance->Fail(kKilnUnsupported, "buffer_create: importing " + std::to_string(desc.size) +
                                                  " bytes of host memory failed: " + VkResultName(result));
    }
    buffer->host = static_cast<uint8_t*>(desc.host_ptr);
  } else {
    VkMemoryPropertyFlags required = 0;
    VkMemoryPropertyFlags preferred = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    if (!device->staged) {
      required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    }
    VkResult result = CreateRawBuffer(device, desc.size, required, preferred, &buffer->buffer,
                                      &buffer->allocation, BufferAlignment(*device->physical, device->staged));
    if (result != VK_SUCCESS) {
      return instance->Fail(
          result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY
              ? kKilnOutOfMemory
              : kKilnDelegateError,
          "buffer_create: " + std::to_string(desc.size) + " bytes: " + VkResultName(result));
    }
    if (!device->staged) buffer->host = buffer->allocation.mapped();
  }
  ++device->live_objects;
  *out_buffer = reinterpret_cast<KilnHalBuffer*>(buffer.release());
  return kKilnOk;
}

KilnStatus BufferDestroy(KilnHalBuffer* handle) {
  Buffer* buffer = AsBuffer(handle);
  KILN_VK_REQUIRE(buffer);
  Device* device = buffer->device;
  if (buffer->wrapped_memory) {
    vkDestroyBuffer(device->device, buffer->buffer, nullptr);
    vkFreeMemory(device->device, buffer->wrapped_memory, nullptr);
  } else {
    DestroyRawBuffer(device, &buffer->buffer, &buffer->allocation);
  }
  --device->live_objects;
  delete buffer;
  return kKilnOk;
}

KilnStatus CheckRange(Buffer* buffer, uint64_t offset, uint64_t size, const char* what) {
  if (offset > buffer->size || size > buffer->size - offset) {
    return buffer->device->instance->Fail(
        kKilnInvalidArgument, std::string(what) + ": bytes [" + std::to_string(offset) + ", +" +
                                  std::to_string(size) + ") outside the " + std::to_string(buffer->size) +
                                  "-byte buffer");
  }
  return kKilnOk;
}

// Copies between host memory and a staged buffer through the device's staging buffer, in chunks.
KilnStatus StagedCopy(Buffer* buffer, uint64_t offset, uint64_t size, const void* from_host, void* to_host) {
  Device* device = buffer->device;
  Instance* instance = device->instance;
  std::lock_guard<std::mutex> lock(device->transfer_mutex);
  if (!device->staging) {
    VkResult result = CreateRawBuffer(
        device, kStagingSize, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
        VK_MEMORY_PROPERTY_HOST_CACHED_BIT, &device->staging, &device->staging_memory);
    if (result != VK_SUCCESS) {
      return instance->Fail(kKilnOutOfMemory, "creating the staging buffer failed: " + VkResultName(result));
    }
  }
  uint8_t* staging = device->staging_memory.mapped();
  for (uint64_t done = 0; done < size;) {
    const uint64_t chunk = std::min<uint64_t>(size - done, kStagingSize);
    if (from_host) memcpy(staging, static_cast<const uint8_t*>(from_host) + done, chunk);
    vkResetFences(device->device, 1, &device->transfer_fence);
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(device->transfer_cmd, &begin);
    VkBufferCopy region{};
    region.size = chunk;
    if (from_host) {
      region.dstOffset = offset + done;
      vkCmdCopyBuffer(device->transfer_cmd, device->staging, buffer->buffer, 1, &region);
    } else {
      region.srcOffset = offset + done;
      vkCmdCopyBuffer(device->transfer_cmd, buffer->buffer, device->staging, 1, &region);
      VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
      vkCmdPipelineBarrier(device->transfer_cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                           0, 1, &barrier, 0, nullptr, 0, nullptr);
    }
    vkEndCommandBuffer(device->transfer_cmd);
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &device->transfer_cmd;
    VkResult result;
    {
      std::lock_guard<std::mutex> queue_lock(device->queue_mutex);
      result = vkQueueSubmit(device->queue, 1, &submit, device->transfer_fence);
    }
    if (result == VK_SUCCESS)
      result = vkWaitForFences(device->device, 1, &device->transfer_fence, VK_TRUE, UINT64_MAX);
    if (result != VK_SUCCESS) {
      return instance->Fail(kKilnDelegateError, "staged buffer copy failed: " + VkResultName(result));
    }
    if (to_host) memcpy(static_cast<uint8_t*>(to_host) + done, staging, chunk);
    done += chunk;
  }
  return kKilnOk;
}

KilnStatus BufferWrite(KilnHalBuffer* handle, uint64_t offset, const void* data, uint64_t size) {
  Buffer* buffer = AsBuffer(handle);
  KILN_VK_REQUIRE(buffer);
  if (KilnStatus status = CheckRange(buffer, offset, size, "buffer_write"); status != kKilnOk) return status;
  if (!data && size)
    return buffer->device->instance->Fail(kKilnInvalidArgument, "buffer_write: data is NULL");
  if (size == 0) return kKilnOk;
  if (buffer->host) {
    memcpy(buffer->host + offset, data, size);
    return kKilnOk;
  }
  return StagedCopy(buffer, offset, size, data, nullptr);
}

KilnStatus BufferRead(KilnHalBuffer* handle, uint64_t offset, uint64_t size, void* out_data) {
  Buffer* buffer = AsBuffer(handle);
  KILN_VK_REQUIRE(buffer);
  if (KilnStatus status = CheckRange(buffer, offset, size, "buffer_read"); status != kKilnOk) return status;
  if (!out_data && size)
    return buffer->device->instance->Fail(kKilnInvalidArgument, "buffer_read: out_data is NULL");
  if (size == 0) return kKilnOk;
  if (buffer->host) {
    memcpy(out_data, buffer->host + offset, size);
    return kKilnOk;
  }
  return StagedCopy(buffer, offset, size, nullptr, out_data);
}

KilnStatus BufferMap(KilnHalBuffer* handle, uint64_t offset, uint64_t size, void** out_ptr) {
  Buffer* buffer = AsBuffer(handle);
  KILN_VK_REQUIRE(buffer && out_ptr);
  if (KilnStatus status = CheckRange(buffer, offset, size, "buffer_map"); status != kKilnOk) return status;
  if (buffer->mapped)
    return buffer->device->instance->Fail(kKilnInvalidArgument, "buffer_map: already mapped");
  if (buffer->host) {
    *out_ptr = buffer->host + offset;
  } else {
    buffer->map_copy.resize(std::max<uint64_t>(size, 1));
    if (KilnStatus status = StagedCopy(buffer, offset, size, nullptr, buffer->map_copy.data());
        status != kKilnOk) {
      return status;
    }
    buffer->map_offset = offset;
    *out_ptr = buffer->map_copy.data();
  }
  buffer->mapped = true;
  return kKilnOk;
}

KilnStatus BufferUnmap(KilnHalBuffer* handle) {
  Buffer* buffer = AsBuffer(handle);
  KILN_VK_REQUIRE(buffer);
  if (!buffer->mapped)
    return buffer->device->instance->Fail(kKilnInvalidArgument, "buffer_unmap: not mapped");
  buffer->mapped = false;
  if (buffer->host) return kKilnOk;
  KilnStatus status =
      StagedCopy(buffer, buffer->map_offset, buffer->map_copy.size(), buffer->map_copy.data(), nullptr);
  buffer->map_copy.clear();
  buffer->map_copy.shrink_to_fit();
  return status;
}

// ---- Launches and batches
// --------------------------------------------------------------------------------------

// Checks one buffer view of a launch (extents, same device, units) and resolves it: its offset and strides in
// units go to `push` (four uints), its buffer to `buffer`.
KilnStatus ResolveView(Device* device, const KilnHalBufferView& view, uint32_t element_size, uint32_t unit,
                       const uint32_t dims[3], bool is_output, const std::string& name, uint32_t* push,
                       VkBuffer* buffer) {
  Instance* instance = device->instance;
  std::string error;
  if (!CheckView<Buffer>(view, element_size, dims, is_output, name, &error)) {
    return instance->Fail(kKilnInvalidArgument, error);
  }
  if (AsBuffer(view.buffer)->device != device) {
    return instance->Fail(kKilnInvalidArgument, name + ": the buffer belongs to another device");
  }
  if (!ViewInUnits(view, unit, name, push, &error)) return instance->Fail(kKilnInvalidArgument, error);
  *buffer = AsBuffer(view.buffer)->buffer;
  return kKilnOk;
}

// Takes the script's state as the launch sees it: the global block, and the allocation bindings from slot
// `first_allocation` of the launch's buffers on (an unbound one gets the device's zero-filled buffer).
void SnapshotScript(Script* script, size_t first_allocation, Launch* out) {
  std::lock_guard<std::mutex> lock(script->mutex);
  out->globals = script->block;
  for (uint32_t j = 0; j < script->module->num_allocations; ++j) {
    Buffer* bound = script->allocations[j];
    out->buffers[first_allocation + j] = bound ? bound->buffer : script->module->device->dummy;
  }
}

KilnStatus PrepareForEach(Script* script, const KilnHalForEachDesc* in_desc, Launch* out) {
  Instance* instance = script->instance();
  Module* module = script->module;
  KilnHalForEachDesc desc;
  if (!ReadStruct(in_desc, &desc)) {
    return instance->Fail(kKilnInvalidArgument,
                          "launch_for_each: desc is NULL or its struct_size is too small");
  }
  if (desc.kernel_index >= module->kernels.size()) {
    return instance->Fail(kKilnInvalidArgument, "script " + module->name + ": kernel index " +
                                                    std::to_string(desc.kernel_index) + " out of range (" +
                                                    std::to_string(module->kernels.size()) + " kernels)");
  }
  const KernelInfo& kernel = module->kernels[desc.kernel_index];
  const std::string what = "script " + module->name + ", kernel " + kernel.name;
  if (!kernel.supported)
    return instance->Fail(kKilnUnsupported, what + ": cannot run on Vulkan: " + kernel.reason);
  std::string error;
  if (!driver::CheckLaunchExtents(desc.dim_x, desc.dim_y, desc.dim_z, kMaxDim, what, &error)) {
    return instance->Fail(kKilnInvalidArgument, error);
  }
  if (desc.num_inputs != kernel.input_sizes.size()) {
    return instance->Fail(kKilnInvalidArgument, what + ": " + std::to_string(desc.num_inputs) +
                                                    " inputs given, the kernel takes " +
                                                    std::to_string(kernel.input_sizes.size()));
  }
  if (kernel.has_output != (desc.output != nullptr)) {
    return instance->Fail(kKilnInvalidArgument,
                          what + (kernel.has_output ? ": the kernel returns a value but no output was given"
                                                    : ": the kernel returns void but an output was given"));
  }
  if (desc.usr_size > 0) {
    return instance->Fail(kKilnUnsupported,
                          what + ": usrData (old-style root kernels) is not supported on Vulkan");
  }
  const uint32_t dims[3] = {desc.dim_x, desc.dim_y, desc.dim_z};
  out->module = module;
  out->index = desc.kernel_index;
  out->shape = desc.dim_z > 1 ? 2 : (desc.dim_y > 1 ? 1 : 0);
  memcpy(out->dims, dims, sizeof(dims));
  out->push.assign(kernel.push_size, 0);
  uint32_t* push = reinterpret_cast<uint32_t*>(out->push.data());
  push[0] = desc.dim_x;
  push[1] = desc.dim_y;
  push[2] = desc.dim_z;
  out->buffers.assign(kernel.bindings.size(), VK_NULL_HANDLE);
  const uint32_t num_views = desc.num_inputs + (kernel.has_output ? 1 : 0);
  for (uint32_t i = 0; i < num_views; ++i) {
    const bool is_output = i == desc.num_inputs;
    KilnHalBufferView view;
    const std::string view_name = what + (is_output ? ", output" : ", input " + std::to_string(i));
    if (is_output ? !ReadStruct(desc.output, &view) : !ReadElement(desc.inputs, i, &view)) {
      return instance->Fail(kKilnInvalidArgument, view_name + ": missing, or its struct_size is too small");
    }
    const uint32_t element = is_output ? kernel.output_size : kernel.input_sizes[i];
    const uint32_t unit = kernel.units[is_output ? KILN_KERNEL_MAX_INPUTS : i];
    if (KilnStatus status = ResolveView(module->device, view, element, unit, dims, is_output, view_name,
                                        &push[8 + 4 * i], &out->buffers[1 + i]);
        status != kKilnOk) {
      return status;
    }
  }
  SnapshotScript(script, 1 + num_views, out);
  return kKilnOk;
}

KilnStatus PrepareReduce(Script* script, const KilnHalReduceDesc* in_desc, uint64_t result_size, void* out_result,
                         Launch* out) {
  Instance* instance = script->instance();
  Module* module = script->module;
  Device* device = module->device;
  KilnHalReduceDesc desc;
  if (!ReadStruct(in_desc, &desc)) {
    return instance->Fail(kKilnInvalidArgument, "launch_reduce: desc is NULL or its struct_size is too small");
  }
  if (desc.reduction_index >= module->reductions.size()) {
    return instance->Fail(kKilnInvalidArgument, "script " + module->name + ": reduction index " +
                                                    std::to_string(desc.reduction_index) + " out of range (" +
                                                    std::to_string(module->reductions.size()) + " reductions)");
  }
  const ReductionInfo& reduction = module->reductions[desc.reduction_index];
  const std::string what = "script " + module->name + ", reduction " + reduction.name;
  if (!reduction.supported)
    return instance->Fail(kKilnUnsupported, what + ": cannot run on Vulkan: " + reduction.reason);
  std::string error;
  if (!driver::CheckLaunchExtents(desc.dim_x, desc.dim_y, desc.dim_z, kMaxDim, what, &error)) {
    return instance->Fail(kKilnInvalidArgument, error);
  }
  // The shader counts cells in 32 bits and steps by G * W: 2^31 cells leave room for both (spirv_abi.h).
  const uint64_t cells = uint64_t{desc.dim_x} * desc.dim_y * desc.dim_z;
  if (cells >= (uint64_t{1} << 31)) {
    return instance->Fail(kKilnUnsupported, what + ": " + std::to_string(cells) +
                                                " cells; the Vulkan driver reduces fewer than 2^31 at once");
  }
  if (!out_result || result_size != reduction.result_size) {
    return instance->Fail(kKilnInvalidArgument, what + ": the result needs " +
                                                    std::to_string(reduction.result_size) + " bytes, got " +
                                                    std::to_string(result_size) + (out_result ? "" : " (NULL)"));
  }
  if (desc.num_inputs != reduction.input_sizes.size()) {
    return instance->Fail(kKilnInvalidArgument, what + ": " + std::to_string(desc.num_inputs) +
                                                    " inputs given, the reduction takes " +
                                                    std::to_string(reduction.input_sizes.size()));
  }
  const uint32_t dims[3] = {desc.dim_x, desc.dim_y, desc.dim_z};
  // G: enough workgroups to give every invocation about one cell, within the device's dispatch limit, and few
  // enough that pass 1's single workgroup combines the partials in a few steps.
  const uint64_t wanted = (cells + reduction.workgroup - 1) / reduction.workgroup;
  const uint32_t groups = static_cast<uint32_t>(
      std::min<uint64_t>({wanted, device->limits().maxComputeWorkGroupCount[0], kMaxReductionGroups}));
  if (groups == 0) return instance->Fail(kKilnInvalidArgument, what + ": no cells to reduce");
  out->module = module;
  out->reduction = true;
  out->index = desc.reduction_index;
  memcpy(out->dims, dims, sizeof(dims));
  out->groups = groups;
  out->push.assign(reduction.push_size, 0);
  uint32_t* push = reinterpret_cast<uint32_t*>(out->push.data());
  push[0] = desc.dim_x;
  push[1] = desc.dim_y;
  push[2] = desc.dim_z;
  push[3] = groups;  // dim.w; origin (push[4..7]) stays 0
  out->buffers.assign(reduction.bindings.size(), VK_NULL_HANDLE);
  for (uint32_t i = 0; i < desc.num_inputs; ++i) {
    KilnHalBufferView view;
    const std::string view_name = what + ", input " + std::to_string(i);
    if (!ReadElement(desc.inputs, i, &view)) {
      return instance->Fail(kKilnInvalidArgument, view_name + ": missing, or its struct_size is too small");
    }
    if (KilnStatus status = ResolveView(device, view, reduction.input_sizes[i], reduction.units[i], dims, false,
                                        view_name, &push[8 + 4 * i], &out->buffers[1 + i]);
        status != kKilnOk) {
      return status;
    }
  }
  // Scratch: the partials stay on the device; the result words are read by the host once the work is done.
  auto scratch = std::make_shared<ReduceScratch>();
  scratch->device = device;
  VkResult result = CreateRawBuffer(device, VkDeviceSize{groups} * reduction.accumulator_stride, 0,
                                    VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, &scratch->partials,
                                    &scratch->partials_memory);
  if (result == VK_SUCCESS) {
    result = CreateRawBuffer(device, VkDeviceSize{reduction.result_words} * 4,
                             VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                             &scratch->result, &scratch->result_memory);
  }
  if (result != VK_SUCCESS) {
    return instance->Fail(kKilnOutOfMemory, what + ": the scratch buffers (" + std::to_string(groups) +
                                                " partials of " + std::to_string(reduction.accumulator_stride) +
                                                " bytes, the result): " + VkResultName(result));
  }
  const uint32_t result_slot = 1 + desc.num_inputs;
  out->buffers[result_slot] = scratch->result;
  // By binding number: a shader that reports faults has binding 27 after the partials.
  for (size_t b = 0; b < reduction.bindings.size(); ++b) {
    if (reduction.bindings[b] == KILN_SPIRV_PARTIALS_BINDING) out->buffers[b] = scratch->partials;
  }
  out->scratch = std::move(scratch);
  out->out_result = out_result;
  out->result_size = result_size;
  SnapshotScript(script, result_slot + 1, out);
  return kKilnOk;
}

void DestroyBatchObjects(Batch* batch) {
  Device* device = batch->device;
  if (batch->descriptor_pool) vkDestroyDescriptorPool(device->device, batch->descriptor_pool, nullptr);
  if (batch->pool) vkDestroyCommandPool(device->device, batch->pool, nullptr);
  DestroyRawBuffer(device, &batch->upload, &batch->upload_memory);
  batch->descriptor_pool = VK_NULL_HANDLE;
  batch->pool = VK_NULL_HANDLE;
}

bool BatchBusy(Batch* batch) {
  if (!batch->in_flight) return false;
  std::lock_guard<std::mutex> lock(batch->in_flight->mutex);
  if (batch->in_flight->done) return false;
  return vkGetFenceStatus(batch->device->device, batch->in_flight->fence) != VK_SUCCESS;
}

// Records the batch's command buffer: one descriptor set per launch, a barrier between launches, and a final
// barrier that makes the results visible to the host.
KilnStatus RecordCommands(Batch* batch) {
  Device* device = batch->device;
  Instance* instance = device->instance;
  const uint32_t n = static_cast<uint32_t>(batch->launches.size());
  VkResult result = VK_SUCCESS;
  if (!batch->pool) {
    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.queueFamilyIndex = device->physical->queue_family;
    result = vkCreateCommandPool(device->device, &pool_info, nullptr, &batch->pool);
    if (result != VK_SUCCESS)
      return instance->Fail(kKilnDelegateError, "vkCreateCommandPool: " + VkResultName(result));
    VkCommandBufferAllocateInfo cmd_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cmd_info.commandPool = batch->pool;
    cmd_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cmd_info.commandBufferCount = 1;
    result = vkAllocateCommandBuffers(device->device, &cmd_info, &batch->cmd);
    if (result != VK_SUCCESS) {
      return instance->Fail(kKilnDelegateError, "vkAllocateCommandBuffers: " + VkResultName(result));
    }
  } else {
    vkResetCommandPool(device->device, batch->pool, 0);
  }
  if (batch->descriptor_capacity < std::max(n, 1u)) {
    if (batch->descriptor_pool) vkDestroyDescriptorPool(device->device, batch->descriptor_pool, nullptr);
    batch->descriptor_pool = VK_NULL_HANDLE;
    const uint32_t capacity = std::max(std::max(n, 1u), batch->descriptor_capacity * 2);
    // Per set at most: the globals, the inputs, the output or result, the allocations, a reduction's partials.
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                              capacity * (4 + KILN_KERNEL_MAX_INPUTS + KILN_SPIRV_MAX_ALLOCATIONS)};
    VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool_info.maxSets = capacity;
    pool_info.poolSizeCount = 1;
    pool_info.pPoolSizes = &size;
    result = vkCreateDescriptorPool(device->device, &pool_info, nullptr, &batch->descriptor_pool);
    if (result != VK_SUCCESS) {
      batch->descriptor_capacity = 0;
      return instance->Fail(kKilnDelegateError, "vkCreateDescriptorPool: " + VkResultName(result));
    }
    batch->descriptor_capacity = capacity;
  } else {
    vkResetDescriptorPool(device->device, batch->descriptor_pool, 0);
  }
  // Global block snapshots, each at an offset the device can bind.
  const VkDeviceSize align = std::max<VkDeviceSize>(device->limits().minStorageBufferOffsetAlignment, 16);
  std::vector<VkDeviceSize> offsets(n);
  VkDeviceSize total = 0;
  for (uint32_t i = 0; i < n; ++i) {
    offsets[i] = total;
    if (!batch->launches[i].globals.empty())
      total += (batch->launches[i].globals.size() + align - 1) / align * align;
  }
  if (total > batch->upload_capacity) {
    DestroyRawBuffer(device, &batch->upload, &batch->upload_memory);
    batch->upload_capacity = 0;
    const VkDeviceSize capacity = std::max<VkDeviceSize>(total, 4096);
    result = CreateRawBuffer(device, capacity,
                             VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                             &batch->upload, &batch->upload_memory);
    if (result != VK_SUCCESS) {
      return instance->Fail(kKilnOutOfMemory, "the batch's global block buffer: " + VkResultName(result));
    }
    batch->upload_capacity = capacity;
  }
  for (uint32_t i = 0; i < n; ++i) {
    const auto& globals = batch->launches[i].globals;
    if (!globals.empty()) memcpy(batch->upload_memory.mapped() + offsets[i], globals.data(), globals.size());
  }
  // One fault record per launch that can fault, each at an offset the device can bind.
  std::vector<VkDeviceSize> fault_offsets(n, 0);
  batch->fault_checks.clear();
  VkDeviceSize fault_total = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const Launch& launch = batch->launches[i];
    if (!launch.program().reports_faults) continue;
    fault_offsets[i] = fault_total;
    fault_total += (sizeof(KilnSpirvFault) + align - 1) / align * align;
    FaultCheck check;
    check.offset = fault_offsets[i];
    check.what = "script " + launch.module->name + ", " + (launch.reduction ? "reduction " : "kernel ") +
                 launch.program().name;
    for (const GlobalInfo& g : launch.module->globals) {
      if (g.allocation_index < 0) continue;
      if (check.allocations.size() <= static_cast<size_t>(g.allocation_index))
        check.allocations.resize(g.allocation_index + 1);
      KilnSpirvAllocationInfo info{};
      if (g.block_offset + sizeof(info) <= launch.globals.size())
        memcpy(&info, launch.globals.data() + g.block_offset, sizeof(info));
      check.allocations[g.allocation_index] = {g.name, info};
    }
    batch->fault_checks.push_back(std::move(check));
  }
  if (fault_total > 0 && (!batch->faults || batch->faults->capacity < fault_total)) {
    auto records = std::make_shared<FaultRecords>();
    result = CreateRawBuffer(device, fault_total,
                             VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                             &records->buffer, &records->memory);
    if (result != VK_SUCCESS) {
      return instance->Fail(kKilnOutOfMemory, "the batch's fault records: " + VkResultName(result));
    }
    records->device = device;
    records->capacity = fault_total;
    batch->faults = std::move(records);
  }
  std::vector<VkDescriptorSetLayout> layouts(n);
  for (uint32_t i = 0; i < n; ++i) {
    layouts[i] = batch->launches[i].program().set_layout;
  }
  std::vector<VkDescriptorSet> sets(n);
  if (n) {
    VkDescriptorSetAllocateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    set_info.descriptorPool = batch->descriptor_pool;
    set_info.descriptorSetCount = n;
    set_info.pSetLayouts = layouts.data();
    result = vkAllocateDescriptorSets(device->device, &set_info, sets.data());
    if (result != VK_SUCCESS)
      return instance->Fail(kKilnDelegateError, "vkAllocateDescriptorSets: " + VkResultName(result));
  }
  std::vector<VkDescriptorBufferInfo> infos;
  std::vector<VkWriteDescriptorSet> writes;
  size_t total_bindings = 0;
  for (const Launch& launch : batch->launches) total_bindings += launch.buffers.size();
  infos.reserve(total_bindings);
  for (uint32_t i = 0; i < n; ++i) {
    const Launch& launch = batch->launches[i];
    const ShaderProgram& program = launch.program();
    for (size_t b = 0; b < program.bindings.size(); ++b) {
      VkDescriptorBufferInfo info{};
      if (b == 0) {
        if (launch.globals.empty()) {
          info = {device->dummy, 0, VK_WHOLE_SIZE};
        } else {
          info = {batch->upload, offsets[i], launch.globals.size()};
        }
      } else if (program.bindings[b] == KILN_SPIRV_FAULT_BINDING) {
        info = {batch->faults->buffer, fault_offsets[i], sizeof(KilnSpirvFault)};
      } else {
        info = {launch.buffers[b], 0, VK_WHOLE_SIZE};
      }
      infos.push_back(info);
      VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      write.dstSet = sets[i];
      write.dstBinding = program.bindings[b];
      write.descriptorCount = 1;
      write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      write.pBufferInfo = &infos.back();
      writes.push_back(write);
    }
  }
  if (!writes.empty()) {
    vkUpdateDescriptorSets(device->device, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  }
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  vkBeginCommandBuffer(batch->cmd, &begin);
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_HOST_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  vkCmdPipelineBarrier(batch->cmd, VK_PIPELINE_STAGE_HOST_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                       &barrier, 0, nullptr, 0, nullptr);
  const uint32_t* max_groups = device->limits().maxComputeWorkGroupCount;
  for (uint32_t i = 0; i < n; ++i) {
    const Launch& launch = batch->launches[i];
    if (i > 0) {
      // Each launch sees every write of the ones before it.
      barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
      barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
      vkCmdPipelineBarrier(batch->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                           VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
    }
    if (launch.reduction) {
      const ReductionInfo& reduction = launch.module->reductions[launch.index];
      // Pass 0 leaves G partials; after a barrier, pass 1 (one workgroup) combines them into the result.
      for (uint32_t pass = 0; pass < 2; ++pass) {
        if (pass == 1) {
          barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
          barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
          vkCmdPipelineBarrier(batch->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                               VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
        }
        vkCmdBindPipeline(batch->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, reduction.passes[pass]);
        vkCmdBindDescriptorSets(batch->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, reduction.layout, 0, 1, &sets[i], 0,
                                nullptr);
        vkCmdPushConstants(batch->cmd, reduction.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                           static_cast<uint32_t>(launch.push.size()), launch.push.data());
        vkCmdDispatch(batch->cmd, pass == 0 ? launch.groups : 1, 1, 1);
      }
      continue;
    }
    const KernelInfo& kernel = launch.module->kernels[launch.index];
    vkCmdBindPipeline(batch->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, kernel.pipelines[launch.shape]);
    vkCmdBindDescriptorSets(batch->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, kernel.layout, 0, 1, &sets[i], 0,
                            nullptr);
    vkCmdPushConstants(batch->cmd, kernel.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                       static_cast<uint32_t>(launch.push.size()), launch.push.data());
    const uint32_t* wg = kernel.workgroups[launch.shape];
    uint32_t groups[3];
    for (int d = 0; d < 3; ++d) groups[d] = (launch.dims[d] + wg[d] - 1) / wg[d];
    // Launches larger than the device's group counts run as several dispatches, each told its origin.
    for (uint32_t gz = 0; gz < groups[2]; gz += max_groups[2]) {
      for (uint32_t gy = 0; gy < groups[1]; gy += max_groups[1]) {
        for (uint32_t gx = 0; gx < groups[0]; gx += max_groups[0]) {
          const uint32_t origin[4] = {gx * wg[0], gy * wg[1], gz * wg[2], 0};
          vkCmdPushConstants(batch->cmd, kernel.layout, VK_SHADER_STAGE_COMPUTE_BIT, 16, 16, origin);
          vkCmdDispatch(batch->cmd, std::min(groups[0] - gx, max_groups[0]),
                        std::min(groups[1] - gy, max_groups[1]), std::min(groups[2] - gz, max_groups[2]));
        }
      }
    }
  }
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT;
  vkCmdPipelineBarrier(batch->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &barrier, 0,
                       nullptr, 0, nullptr);
  result = vkEndCommandBuffer(batch->cmd);
  if (result != VK_SUCCESS)
    return instance->Fail(kKilnDelegateError, "vkEndCommandBuffer: " + VkResultName(result));
  batch->dirty = false;
  return kKilnOk;
}

KilnStatus Submit(Batch* batch, std::shared_ptr<Submission>* out) {
  Device* device = batch->device;
  Instance* instance = device->instance;
  if (batch->dirty) {
    if (KilnStatus status = RecordCommands(batch); status != kKilnOk) return status;
  }
  auto submission = std::make_shared<Submission>();
  submission->device = device;
  for (const Launch& launch : batch->launches) {
    if (launch.reduction) submission->copies.push_back({launch.scratch, launch.out_result, launch.result_size});
  }
  if (!batch->fault_checks.empty()) {
    memset(batch->faults->memory.mapped(), 0, batch->faults->capacity);  // host-coherent: seen by the device
    submission->faults = batch->faults;
    submission->fault_checks = batch->fault_checks;
  }
  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkResult result = vkCreateFence(device->device, &fence_info, nullptr, &submission->fence);
  if (result != VK_SUCCESS)
    return instance->Fail(kKilnDelegateError, "vkCreateFence: " + VkResultName(result));
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &batch->cmd;
  {
    std::lock_guard<std::mutex> lock(device->queue_mutex);
    result = vkQueueSubmit(device->queue, 1, &submit, submission->fence);
  }
  if (result != VK_SUCCESS) {
    return instance->Fail(kKilnDelegateError, "vkQueueSubmit of a batch of " +
                                                  std::to_string(batch->launches.size()) +
                                                  " launch(es) failed: " + VkResultName(result));
  }
  batch->in_flight = submission;
  *out = std::move(submission);
  return kKilnOk;
}

// After a submission ran: fails it, as the CPU driver fails such a launch, when a launch recorded a fault (an
// allocation access out of range or of another element size), naming the launch, the allocation and the access.
KilnStatus CheckFaults(Submission* submission) {
  for (const FaultCheck& check : submission->fault_checks) {
    KilnSpirvFault fault;
    memcpy(&fault, submission->faults->memory.mapped() + check.offset, sizeof(fault));
    if (fault.code == KILN_SPIRV_FAULT_NONE) continue;
    std::string text = check.what + ": element " + (fault.code == KILN_SPIRV_FAULT_WRITE ? "write" : "access") +
                       " (" + std::to_string(fault.x) + ", " + std::to_string(fault.y) + ", " +
                       std::to_string(fault.z) + ") of " + std::to_string(fault.element_size) + "-byte elements";
    if (fault.allocation < check.allocations.size()) {
      const auto& [name, info] = check.allocations[fault.allocation];
      if (info.dim_x == 0) {
        text += " of allocation '" + name + "', which is not bound";
      } else {
        text += " outside allocation '" + name + "' of " + std::to_string(info.dim_x) + "x" +
                std::to_string(info.dim_y) + "x" + std::to_string(info.dim_z) + " " +
                std::to_string(info.element_size) + "-byte elements";
      }
    } else {
      text += " outside allocation " + std::to_string(fault.allocation);
    }
    return submission->device->instance->Fail(kKilnError, text);
  }
  return kKilnOk;
}

// Waits up to `timeout_ns`; returns whether the submission is done, with its status.
bool WaitSubmission(Submission* submission, uint64_t timeout_ns, KilnStatus* out_status) {
  std::lock_guard<std::mutex> lock(submission->mutex);
  if (!submission->done) {
    VkResult result = vkWaitForFences(submission->device->device, 1, &submission->fence, VK_TRUE, timeout_ns);
    if (result == VK_TIMEOUT) return false;
    submission->done = true;
    if (result != VK_SUCCESS) {
      submission->status = submission->device->instance->Fail(
          kKilnDelegateError, "waiting for a Vulkan batch failed: " + VkResultName(result));
    } else if (KilnStatus fault = CheckFaults(submission); fault != kKilnOk) {
      submission->status = fault;
    } else {
      // The final barrier of the command buffer made the result words visible to the host.
      for (const ResultCopy& copy : submission->copies) {
        memcpy(copy.out, copy.scratch->result_memory.mapped(), copy.size);
      }
    }
    submission->copies.clear();  // on failure the callers' results stay untouched
  }
  *out_status = submission->status;
  return true;
}

// Runs one recorded launch as a batch of its own, from the device's pool of reusable batches, and waits.
KilnStatus RunAlone(Device* device, Launch launch) {
  Batch* batch = nullptr;
  {
    std::lock_guard<std::mutex> lock(device->idle_mutex);
    if (!device->idle_batches.empty()) {
      batch = device->idle_batches.back();
      device->idle_batches.pop_back();
    }
  }
  if (!batch) {
    batch = new Batch;
    batch->device = device;
  }
  batch->launches.clear();
  batch->launches.push_back(std::move(launch));
  batch->dirty = true;
  std::shared_ptr<Submission> submission;
  KilnStatus status = Submit(batch, &submission);
  if (status == kKilnOk) WaitSubmission(submission.get(), UINT64_MAX, &status);
  batch->in_flight.reset();
  batch->launches.clear();
  std::lock_guard<std::mutex> lock(device->idle_mutex);
  device->idle_batches.push_back(batch);
  return status;
}

KilnStatus LaunchForEach(KilnHalScript* handle, const KilnHalForEachDesc* desc) {
  Script* script = AsScript(handle);
  KILN_VK_REQUIRE(script);
  Launch launch;
  if (KilnStatus status = PrepareForEach(script, desc, &launch); status != kKilnOk) return status;
  return RunAlone(script->module->device, std::move(launch));
}

KilnStatus LaunchReduce(KilnHalScript* handle, const KilnHalReduceDesc* desc, uint64_t result_size,
                        void* out_result) {
  Script* script = AsScript(handle);
  KILN_VK_REQUIRE(script);
  Launch launch;
  if (KilnStatus status = PrepareReduce(script, desc, result_size, out_result, &launch); status != kKilnOk) {
    return status;
  }
  return RunAlone(script->module->device, std::move(launch));
}

KilnStatus BatchCreate(KilnHalDevice* handle, KilnHalBatch** out_batch) {
  Device* device = AsDevice(handle);
  KILN_VK_REQUIRE(device);
  if (!out_batch) return device->instance->Fail(kKilnInvalidArgument, "batch_create: out_batch is NULL");
  Batch* batch = new Batch;
  batch->device = device;
  ++device->live_objects;
  *out_batch = reinterpret_cast<KilnHalBatch*>(batch);
  return kKilnOk;
}

KilnStatus BatchDestroy(KilnHalBatch* handle) {
  Batch* batch = AsBatch(handle);
  KILN_VK_REQUIRE(batch);
  if (BatchBusy(batch)) {
    return batch->device->instance->Fail(kKilnInvalidArgument, "batch_destroy: the batch has not completed");
  }
  batch->in_flight.reset();
  DestroyBatchObjects(batch);
  --batch->device->live_objects;
  delete batch;
  return kKilnOk;
}

// Whether `script`'s launches can be recorded into `batch` now: not while it runs, and only from its device.
KilnStatus CheckRecordable(Batch* batch, Script* script, const char* what) {
  if (BatchBusy(batch)) {
    return batch->device->instance->Fail(kKilnInvalidArgument, std::string(what) + ": batch is running");
  }
  if (script->module->device != batch->device) {
    return batch->device->instance->Fail(kKilnInvalidArgument,
                                         std::string(what) + ": the script belongs to another device");
  }
  return kKilnOk;
}

KilnStatus BatchRecordForEach(KilnHalBatch* handle, KilnHalScript* script, const KilnHalForEachDesc* desc) {
  Batch* batch = AsBatch(handle);
  KILN_VK_REQUIRE(batch && script);
  if (KilnStatus status = CheckRecordable(batch, AsScript(script), "batch_record"); status != kKilnOk) return status;
  Launch launch;
  if (KilnStatus status = PrepareForEach(AsScript(script), desc, &launch); status != kKilnOk) return status;
  batch->launches.push_back(std::move(launch));
  batch->dirty = true;
  return kKilnOk;
}

KilnStatus BatchRecordReduce(KilnHalBatch* handle, KilnHalScript* script, const KilnHalReduceDesc* desc,
                             uint64_t result_size, void* out_result) {
  Batch* batch = AsBatch(handle);
  KILN_VK_REQUIRE(batch && script);
  if (KilnStatus status = CheckRecordable(batch, AsScript(script), "batch_record_reduce"); status != kKilnOk) {
    return status;
  }
  Launch launch;
  if (KilnStatus status = PrepareReduce(AsScript(script), desc, result_size, out_result, &launch);
      status != kKilnOk) {
    return status;
  }
  batch->launches.push_back(std::move(launch));
  batch->dirty = true;
  return kKilnOk;
}

KilnStatus BatchSubmit(KilnHalBatch* handle, KilnHalFence** out_fence) {
  Batch* batch = AsBatch(handle);
  KILN_VK_REQUIRE(batch);
  Device* device = batch->device;
  if (!out_fence) return device->instance->Fail(kKilnInvalidArgument, "batch_submit: out_fence is NULL");
  if (BatchBusy(batch))
    return device->instance->Fail(kKilnInvalidArgument, "batch_submit: batch is still running");
  if (batch->in_flight) {
    // The last submission has completed, but nobody may have waited on its fence yet: deliver its reduction
    // results now, before this submission reuses the scratch buffers they are read from.
    KilnStatus previous;
    WaitSubmission(batch->in_flight.get(), 0, &previous);
  }
  std::shared_ptr<Submission> submission;
  if (KilnStatus status = Submit(batch, &submission); status != kKilnOk) return status;
  ++device->live_objects;
  *out_fence = reinterpret_cast<KilnHalFence*>(new Fence{device, std::move(submission)});
  return kKilnOk;
}

KilnStatus FenceWait(KilnHalFence* handle, uint64_t timeout_ns, bool* out_done) {
  KILN_VK_REQUIRE(handle && out_done);
  Fence* fence = reinterpret_cast<Fence*>(handle);
  KilnStatus status = kKilnOk;
  *out_done = WaitSubmission(fence->submission.get(), timeout_ns, &status);
  return *out_done ? status : kKilnOk;
}

KilnStatus FenceDestroy(KilnHalFence* handle) {
  Fence* fence = reinterpret_cast<Fence*>(handle);
  KILN_VK_REQUIRE(fence);
  KilnStatus status;
  WaitSubmission(fence->submission.get(), UINT64_MAX, &status);
  --fence->device->live_objects;
  delete fence;
  return kKilnOk;
}

}  // namespace
}  // namespace vulkan
}  // namespace kiln

extern "C" __attribute__((visibility("default"))) KilnStatus kiln_driver_query(
    uint32_t runtime_hal_major, uint32_t runtime_hal_minor, const KilnHalServices* services,
    KilnHalDriver* out_driver) {
  using namespace kiln::vulkan;  // NOLINT: the table below names every entry
  auto instance = std::make_unique<Instance>();
  kiln_hal_copy_services(services, &instance->services);
  if (KilnStatus status = kiln_hal_check_query(&instance->services, "the Vulkan driver", runtime_hal_major,
                                               runtime_hal_minor, out_driver);
      status != kKilnOk) {
    return status;
  }
  instance->cache_dir = kiln::driver::ResolveCacheDir(instance->Config("cache_dir", "KILN_CACHE_DIR"));
  const std::string staging = instance->Config("vulkan.force_staging", "KILN_VULKAN_FORCE_STAGING");
  instance->force_staging = !staging.empty() && staging != "0";
  if (KilnStatus status = CreateInstance(instance.get()); status != kKilnOk) {
    if (instance->messenger) {
      auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance->instance, "vkDestroyDebugUtilsMessengerEXT"));
      if (destroy) destroy(instance->instance, instance->messenger, nullptr);
    }
    if (instance->instance) vkDestroyInstance(instance->instance, nullptr);
    return status;
  }
  KilnHalDriver table;
  kiln_hal_driver_table_init(&table, "kiln-vulkan", KILN_VULKAN_DRIVER_VERSION,
                             reinterpret_cast<KilnHalInstance*>(instance.get()));
  table.shutdown = Shutdown;
  table.device_count = DeviceCount;
  table.device_get_info = DeviceGetInfo;
  table.device_open = DeviceOpen;
  table.device_close = DeviceClose;
  table.buffer_create = BufferCreate;
  table.buffer_destroy = BufferDestroy;
  table.buffer_map = BufferMap;
  table.buffer_unmap = BufferUnmap;
  table.buffer_write = BufferWrite;
  table.buffer_read = BufferRead;
  table.module_load = ModuleLoad;
  table.module_unload = ModuleUnload;
  table.module_get_info = ModuleGetInfo;
  table.module_kernel_supported = ModuleKernelSupported;
  table.script_create = ScriptCreate;
  table.script_destroy = ScriptDestroy;
  table.script_set_global = ScriptSetGlobal;
  table.script_get_global = ScriptGetGlobal;
  table.script_bind_allocation = ScriptBindAllocation;
  table.script_invoke = nullptr;  // invokables are host code: the runtime runs them on the CPU driver
  table.launch_for_each = LaunchForEach;
  table.launch_reduce = LaunchReduce;
  table.batch_create = BatchCreate;
  table.batch_destroy = BatchDestroy;
  table.batch_record_for_each = BatchRecordForEach;
  table.batch_record_reduce = BatchRecordReduce;
  table.batch_submit = BatchSubmit;
  table.fence_wait = FenceWait;
  table.fence_destroy = FenceDestroy;
  table.module_reduction_supported = ModuleReductionSupported;
  WriteStruct(table, out_driver);
  instance.release();
  return kKilnOk;
}
