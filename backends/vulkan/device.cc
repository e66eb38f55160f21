// Opening and closing a logical device, side by side so that device_close visibly undoes all that device_open
// creates: queue, allocator, placeholder and transfer objects, SPIR-V context and pipeline cache.
#include <spirv-tools/libspirv.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/vulkan/batch.h"

namespace kiln {
namespace vulkan {

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

}  // namespace vulkan
}  // namespace kiln
