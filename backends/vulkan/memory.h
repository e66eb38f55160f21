// Device memory for the Vulkan driver: buffers are carved out of a few large blocks per memory type, because
// a device allows only so many vkAllocateMemory calls and each one is slow.
#ifndef KILN_BACKENDS_VULKAN_MEMORY_H_
#define KILN_BACKENDS_VULKAN_MEMORY_H_

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace kiln {
namespace vulkan {

struct Device;

struct MemoryBlock {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  uint32_t type = 0;
  uint8_t* mapped = nullptr;
  bool dedicated = false;
  std::map<VkDeviceSize, VkDeviceSize> free;  // offset -> size, coalesced
};

struct Allocation {
  MemoryBlock* block = nullptr;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
  uint8_t* mapped() const { return block && block->mapped ? block->mapped + offset : nullptr; }
};

// Suballocates buffers from large blocks per memory type, first fit with coalescing; a request larger than
// half a block gets a block of its own.
class BlockAllocator {
 public:
  BlockAllocator(VkDevice device, const VkPhysicalDeviceMemoryProperties& props)
      : device_(device), props_(props) {}
  ~BlockAllocator();

  // `required` flags must all be present; `preferred` ones break ties. `min_alignment` (a power of two)
  // holds for the offset and, in host-visible memory, for the mapped host address too: it is what
  // buffer_create promises as limits.buffer_alignment.
  VkResult Allocate(const VkMemoryRequirements& req, VkMemoryPropertyFlags required,
                    VkMemoryPropertyFlags preferred, Allocation* out, VkDeviceSize min_alignment = 16);
  void Free(const Allocation& allocation);

  bool IsHostVisible(uint32_t type) const {
    return props_.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
  }

 private:
  int FindType(uint32_t bits, VkMemoryPropertyFlags flags) const;
  // Aligns the host address (when mapped) or else the offset to `alignment`; the offset always stays a
  // multiple of `offset_alignment`, Vulkan's requirement for binding.
  static bool TakeFrom(MemoryBlock* block, VkDeviceSize size, VkDeviceSize alignment,
                       VkDeviceSize offset_alignment, Allocation* out);

  VkDevice device_;
  VkPhysicalDeviceMemoryProperties props_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<MemoryBlock>> blocks_;
};

VkResult CreateRawBuffer(Device* device, VkDeviceSize size, VkMemoryPropertyFlags required,
                         VkMemoryPropertyFlags preferred, VkBuffer* out_buffer, Allocation* out_allocation,
                         VkDeviceSize min_alignment = 16);
void DestroyRawBuffer(Device* device, VkBuffer* buffer, Allocation* allocation);

}  // namespace vulkan
}  // namespace kiln

#endif  // KILN_BACKENDS_VULKAN_MEMORY_H_
