// Device buffers and the host's reads, writes and maps of them: whether a buffer is zero-copy, wrapped host
// memory or staged is settled here, so that no other file has to care where a buffer's bytes live.
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "backends/vulkan/driver_internal.h"

namespace kiln {
namespace vulkan {

namespace {

constexpr VkDeviceSize kStagingSize = 8ull << 20;

KilnStatus CheckRange(Buffer* buffer, uint64_t offset, uint64_t size, const char* what) {
  char problem[KILN_HAL_PROBLEM_SIZE];
  if (!kiln_hal_check_range(offset, size, buffer->size, problem, sizeof(problem))) {
    return buffer->device->instance->Fail(kKilnInvalidArgument, std::string(what) + ": " + problem);
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

}  // namespace

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
    VkResult result =
        CreateRawBuffer(device, desc.size, required, preferred, &buffer->buffer, &buffer->allocation,
                        BufferAlignment(*device->physical, device->staged));
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

}  // namespace vulkan
}  // namespace kiln
