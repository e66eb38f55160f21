// Whether this machine has a Vulkan device, asked of the Vulkan loader directly rather than through Kiln: GPU
// tests skip only when there is none, and fail when there is one that Kiln did not use (a loader regression
// must not read as a skip).
#ifndef KILN_TESTS_VULKAN_PROBE_H_
#define KILN_TESTS_VULKAN_PROBE_H_

#include <vulkan/vulkan.h>

#include <cstdint>

namespace kiln::testing {

inline bool VulkanDeviceExists() {
  static const bool exists = [] {
    VkApplicationInfo app = {};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo info = {};
    info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    info.pApplicationInfo = &app;
    VkInstance instance = VK_NULL_HANDLE;
    if (vkCreateInstance(&info, nullptr, &instance) != VK_SUCCESS) return false;
    uint32_t count = 0;
    const bool found = vkEnumeratePhysicalDevices(instance, &count, nullptr) == VK_SUCCESS && count > 0;
    // The instance is kept for the life of the process: destroying it would unload the ICD, whose
    // once-initialised state would then read as leaked.
    return found;
  }();
  return exists;
}

}  // namespace kiln::testing

// In a GPU test: when `used` is false, fail if a Vulkan device exists (Kiln should have used it), else skip.
#define KILN_SKIP_UNLESS_VULKAN_USED(used, details)                                \
  do {                                                                             \
    if (!(used)) {                                                                 \
      if (::kiln::testing::VulkanDeviceExists())                                   \
        FAIL() << "a Vulkan device exists, but Kiln did not use it:\n" << details; \
      GTEST_SKIP() << "no Vulkan device here:\n" << details;                       \
    }                                                                              \
  } while (0)

#endif  // KILN_TESTS_VULKAN_PROBE_H_
