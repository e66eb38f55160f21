// The Vulkan instance and its physical devices, which the runtime queries before it opens any: which ones
// Kiln can use, in what order, and what device_get_info reports for each.
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/vulkan/driver_internal.h"

namespace kiln {
namespace vulkan {

namespace {

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

uint32_t MaxInputs(const VkPhysicalDeviceLimits& limits) {
  const uint32_t views =
      (limits.maxPushConstantsSize - KILN_SPIRV_PUSH_HEADER_SIZE) / KILN_SPIRV_PUSH_VIEW_SIZE;
  return std::min<uint32_t>(KILN_KERNEL_MAX_INPUTS, views > 0 ? views - 1 : 0);
}

// The file names of the shared objects loaded in this process now.
std::vector<std::string> LoadedObjects() {
  std::vector<std::string> names;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (info->dlpi_name && info->dlpi_name[0])
          static_cast<std::vector<std::string>*>(out)->push_back(info->dlpi_name);
        return 0;
      },
      &names);
  std::sort(names.begin(), names.end());
  return names;
}

// Keeps the ICDs (and what they pulled in) that the loader opened since `before` loaded for the life of the
// process. The loader unloads them at vkDestroyInstance and loads them again at the next vkCreateInstance:
// slow (lavapipe brings LLVM along), and not every ICD survives it, since state it set up once (pthread_once,
// LLVM's registries) is left dangling and its memory unowned. Kiln's own drivers are held the same way
// (RTLD_NODELETE, runtime/device/hal_driver.cc).
void PinNewObjects(const std::vector<std::string>& before) {
  for (const std::string& name : LoadedObjects()) {
    if (std::binary_search(before.begin(), before.end(), name)) continue;
    dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);  // a reference never released
  }
}

}  // namespace

KilnStatus CreateInstance(Instance* instance) {
  const std::vector<std::string> loaded_before = LoadedObjects();
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
  PinNewObjects(loaded_before);
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

// limits.buffer_alignment: what wrapped host memory must have (when the device can wrap), and therefore what
// buffer_create delivers too, so that either kind of buffer can stand in for the other.
VkDeviceSize BufferAlignment(const PhysicalDevice& pd, bool staged) {
  return std::max<VkDeviceSize>({VkDeviceSize{64}, pd.props.limits.minStorageBufferOffsetAlignment,
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
  // The device's name and API version, cut to the HAL's field (a long name loses its end, never the field).
  const std::string name = std::string(pd.props.deviceName) + " (Vulkan " +
                           std::to_string(VK_API_VERSION_MAJOR(pd.props.apiVersion)) + "." +
                           std::to_string(VK_API_VERSION_MINOR(pd.props.apiVersion)) + "." +
                           std::to_string(VK_API_VERSION_PATCH(pd.props.apiVersion)) + " " +
                           DeviceTypeName(pd.props.deviceType) + ")";
  snprintf(info.name, sizeof(info.name), "%s", name.c_str());
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

}  // namespace vulkan
}  // namespace kiln
