// The block allocator's bodies and the raw buffers built on it: every buffer, scratch and staging area of
// the driver gets its memory here, so that placement and alignment rules live in one place.
#include "backends/vulkan/memory.h"

#include <algorithm>
#include <iterator>

#include "backends/vulkan/driver_internal.h"

namespace kiln {
namespace vulkan {

namespace {

constexpr VkDeviceSize kBlockSize = 64ull << 20;

}  // namespace

BlockAllocator::~BlockAllocator() {
  for (auto& block : blocks_) vkFreeMemory(device_, block->memory, nullptr);
}

VkResult BlockAllocator::Allocate(const VkMemoryRequirements& req, VkMemoryPropertyFlags required,
                                  VkMemoryPropertyFlags preferred, Allocation* out,
                                  VkDeviceSize min_alignment) {
  int type = FindType(req.memoryTypeBits, required | preferred);
  if (type < 0) type = FindType(req.memoryTypeBits, required);
  if (type < 0) return VK_ERROR_FEATURE_NOT_PRESENT;
  std::lock_guard<std::mutex> lock(mutex_);
  const VkDeviceSize alignment = std::max<VkDeviceSize>({req.alignment, 16, min_alignment});
  if (req.size <= kBlockSize / 2) {
    for (auto& block : blocks_) {
      if (block->dedicated || block->type != static_cast<uint32_t>(type)) continue;
      if (TakeFrom(block.get(), req.size, alignment, req.alignment, out)) return VK_SUCCESS;
    }
  }
  auto block = std::make_unique<MemoryBlock>();
  block->dedicated = req.size > kBlockSize / 2;
  // A dedicated block has room to move the start up to an aligned host address, should the mapping be
  // less aligned than requested (Vulkan only promises minMemoryMapAlignment).
  block->size = block->dedicated ? req.size + (alignment > req.alignment ? alignment : 0) : kBlockSize;
  block->type = static_cast<uint32_t>(type);
  VkMemoryAllocateInfo info{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  info.allocationSize = block->size;
  info.memoryTypeIndex = block->type;
  VkResult result = vkAllocateMemory(device_, &info, nullptr, &block->memory);
  if (result != VK_SUCCESS) return result;
  if (props_.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
    void* mapped = nullptr;
    result = vkMapMemory(device_, block->memory, 0, VK_WHOLE_SIZE, 0, &mapped);
    if (result != VK_SUCCESS) {
      vkFreeMemory(device_, block->memory, nullptr);
      return result;
    }
    block->mapped = static_cast<uint8_t*>(mapped);
  }
  block->free.emplace(0, block->size);
  if (!TakeFrom(block.get(), req.size, alignment, req.alignment, out)) {
    if (block->mapped) vkUnmapMemory(device_, block->memory);
    vkFreeMemory(device_, block->memory, nullptr);
    return VK_ERROR_OUT_OF_DEVICE_MEMORY;
  }
  blocks_.push_back(std::move(block));
  return VK_SUCCESS;
}

void BlockAllocator::Free(const Allocation& allocation) {
  if (!allocation.block) return;
  std::lock_guard<std::mutex> lock(mutex_);
  MemoryBlock* block = allocation.block;
  if (block->dedicated) {
    vkFreeMemory(device_, block->memory, nullptr);
    blocks_.erase(
        std::remove_if(blocks_.begin(), blocks_.end(), [&](const auto& b) { return b.get() == block; }),
        blocks_.end());
    return;
  }
  auto it = block->free.emplace(allocation.offset, allocation.size).first;
  auto next = std::next(it);
  if (next != block->free.end() && it->first + it->second == next->first) {
    it->second += next->second;
    block->free.erase(next);
  }
  if (it != block->free.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      block->free.erase(it);
    }
  }
}

int BlockAllocator::FindType(uint32_t bits, VkMemoryPropertyFlags flags) const {
  for (uint32_t i = 0; i < props_.memoryTypeCount; ++i) {
    if ((bits & (1u << i)) && (props_.memoryTypes[i].propertyFlags & flags) == flags)
      return static_cast<int>(i);
  }
  return -1;
}

bool BlockAllocator::TakeFrom(MemoryBlock* block, VkDeviceSize size, VkDeviceSize alignment,
                              VkDeviceSize offset_alignment, Allocation* out) {
  const VkDeviceSize skew = block->mapped ? reinterpret_cast<uintptr_t>(block->mapped) % alignment : 0;
  if (offset_alignment > 1 && skew % offset_alignment) return false;
  for (auto it = block->free.begin(); it != block->free.end(); ++it) {
    const VkDeviceSize start = (it->first + skew + alignment - 1) / alignment * alignment - skew;
    if (start < it->first) continue;
    const VkDeviceSize end = it->first + it->second;
    if (start + size > end) continue;
    const VkDeviceSize head = start - it->first;
    const VkDeviceSize free_offset = it->first;
    block->free.erase(it);
    if (head) block->free.emplace(free_offset, head);
    if (start + size < end) block->free.emplace(start + size, end - start - size);
    *out = Allocation{block, start, size};
    return true;
  }
  return false;
}

VkResult CreateRawBuffer(Device* device, VkDeviceSize size, VkMemoryPropertyFlags required,
                         VkMemoryPropertyFlags preferred, VkBuffer* out_buffer, Allocation* out_allocation,
                         VkDeviceSize min_alignment) {
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult result = vkCreateBuffer(device->device, &info, nullptr, out_buffer);
  if (result != VK_SUCCESS) return result;
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device->device, *out_buffer, &req);
  result = device->allocator->Allocate(req, required, preferred, out_allocation, min_alignment);
  if (result == VK_SUCCESS) {
    result = vkBindBufferMemory(device->device, *out_buffer, out_allocation->block->memory,
                                out_allocation->offset);
    if (result != VK_SUCCESS) device->allocator->Free(*out_allocation);
  }
  if (result != VK_SUCCESS) {
    vkDestroyBuffer(device->device, *out_buffer, nullptr);
    *out_buffer = VK_NULL_HANDLE;
  }
  return result;
}

void DestroyRawBuffer(Device* device, VkBuffer* buffer, Allocation* allocation) {
  if (*buffer) vkDestroyBuffer(device->device, *buffer, nullptr);
  device->allocator->Free(*allocation);
  *buffer = VK_NULL_HANDLE;
  *allocation = Allocation();
}

}  // namespace vulkan
}  // namespace kiln
