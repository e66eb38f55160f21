// The Vulkan driver: kiln/hal.h on any Vulkan 1.1+ device, running each kernel's SPIR-V (kiln/spirv_abi.h) as
// a compute pipeline. Built as libkiln_vulkan.so, it reaches the runtime only through KilnHalServices and
// links nothing of Kiln's. See docs/vulkan.md.
//
// This file holds its one exported symbol, kiln_driver_query, which makes the instance and fills the HAL
// table with the entries that the other files of this folder define, one kind of HAL object per file.
#include <memory>
#include <string>

#include "backends/common/driver_util.h"
#include "backends/vulkan/batch.h"
#include "kiln/hal.h"
#include "kiln/hal_util.h"

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
