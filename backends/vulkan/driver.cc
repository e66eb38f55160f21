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
