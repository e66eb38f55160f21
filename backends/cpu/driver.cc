// The CPU driver: kiln/hal.h implemented on the host. Modules are compiled from their "llvm-bc" payload (or
// loaded from the object cache), each script instance links its own copy (so globals are per script), and
// launches are split into ~16 KiB slices that the thread pool's threads and the caller take in turn.
//
// This file: the instance (configuration, the host's description), its one device, buffers, and
// kiln_cpu_driver_query with the function table. The other areas each have their file, sharing
// driver_internal.h: module.cc, script.cc, launch.cc, batch.cc and runtime_services.cc.
#include <sys/sysinfo.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "backends/common/driver_util.h"
#include "backends/cpu/cpu_driver.h"
#include "backends/cpu/driver_internal.h"
#include "backends/cpu/jit.h"
#include "backends/cpu/thread_pool.h"
#include "kiln/hal.h"
#include "kiln/hal_util.h"

namespace kiln {
namespace cpu {
namespace {

std::string ReadProcCpuinfo(const char* field) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, strlen(field), field) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "";
}

// ---- Devices ----------------------------------------------------------------------------------------------

KilnStatus Shutdown(KilnHalInstance* handle) {
  Instance* instance = AsInstance(handle);
  KILN_CPU_REQUIRE(instance);
  {
    std::lock_guard<std::mutex> lock(instance->mutex);
    if (instance->open_devices > 0) {
      return instance->Fail(kKilnInvalidArgument,
                            "shutdown: " + std::to_string(instance->open_devices) + " device(s) still open");
    }
  }
  delete instance;
  return kKilnOk;
}

KilnStatus DeviceCount(KilnHalInstance* handle, uint32_t* out_count) {
  KILN_CPU_REQUIRE(handle && out_count);
  *out_count = 1;
  return kKilnOk;
}

KilnStatus DeviceGetInfo(KilnHalInstance* handle, uint32_t index, KilnHalDeviceInfo* out_info) {
  Instance* instance = AsInstance(handle);
  KILN_CPU_REQUIRE(instance);
  if (index != 0) {
    return instance->Fail(kKilnInvalidArgument,
                          "device index " + std::to_string(index) + " out of range (1 device)");
  }
  if (!out_info || out_info->struct_size < sizeof(uint32_t)) {
    return instance->Fail(kKilnInvalidArgument, "device_get_info: out_info is NULL or has no struct_size");
  }
  KilnHalDeviceInfo info;
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  info.type = kKilnHalDeviceCpu;
  snprintf(info.name, sizeof(info.name), "%s (%s, %u threads)", instance->cpu_model.c_str(),
           instance->target.cpu.c_str(), instance->num_threads);
  snprintf(info.vendor, sizeof(info.vendor), "%s", instance->cpu_vendor.c_str());
  struct sysinfo system;
  if (sysinfo(&system) == 0) info.memory_bytes = static_cast<uint64_t>(system.totalram) * system.mem_unit;
  info.max_kernel_level = kDriverLevel;
  info.flags =
      KILN_HAL_DEVICE_HOST_SHARED_MEMORY | KILN_HAL_DEVICE_MAPPABLE_BUFFERS | KILN_HAL_DEVICE_ASYNC_BATCHES;
  snprintf(info.payload_tags, sizeof(info.payload_tags), "llvm-bc");
  info.limits.struct_size = sizeof(info.limits);
  info.limits.max_inputs = KILN_KERNEL_MAX_INPUTS;
  info.limits.max_dim_x = info.limits.max_dim_y = info.limits.max_dim_z = kMaxDim;
  info.limits.max_threads = instance->num_threads;
  info.limits.max_buffer_size = info.memory_bytes;
  info.limits.buffer_alignment = kBufferAlignment;
  WriteStruct(info, out_info);
  return kKilnOk;
}

KilnStatus DeviceOpen(KilnHalInstance* handle, uint32_t index, KilnHalDevice** out_device) {
  Instance* instance = AsInstance(handle);
  KILN_CPU_REQUIRE(instance);
  if (index != 0) {
    return instance->Fail(kKilnInvalidArgument,
                          "device index " + std::to_string(index) + " out of range (1 device)");
  }
  if (!out_device) return instance->Fail(kKilnInvalidArgument, "device_open: out_device is NULL");
  {
    std::lock_guard<std::mutex> lock(instance->mutex);
    if (!instance->linker) {
      std::string error;
      instance->linker = JitLinker::Create(&error);
      if (!instance->linker) return instance->Fail(kKilnDelegateError, error);
    }
    if (!instance->pool) instance->pool = std::make_unique<ThreadPool>(instance->num_threads);
    ++instance->open_devices;
  }
  Device* device = new Device;
  device->instance = instance;
  *out_device = reinterpret_cast<KilnHalDevice*>(device);
  return kKilnOk;
}

KilnStatus DeviceClose(KilnHalDevice* handle) {
  Device* device = AsDevice(handle);
  KILN_CPU_REQUIRE(device);
  Instance* instance = device->instance;
  if (int live = device->live_objects.load(); live > 0) {
    return instance->Fail(kKilnInvalidArgument, "device_close: " + std::to_string(live) +
                                                    " buffer(s), module(s) or batch(es) still alive");
  }
  {
    std::lock_guard<std::mutex> lock(device->queue_mutex);
    device->stopping = true;
  }
  device->queue_wake.notify_all();
  if (device->submitter.joinable()) device->submitter.join();
  delete device;
  std::lock_guard<std::mutex> lock(instance->mutex);
  --instance->open_devices;
  return kKilnOk;
}

// ---- Buffers ----------------------------------------------------------------------------------------------

KilnStatus BufferCreate(KilnHalDevice* handle, const KilnHalBufferDesc* in_desc, KilnHalBuffer** out_buffer) {
  Device* device = AsDevice(handle);
  KILN_CPU_REQUIRE(device);
  Instance* instance = device->instance;
  KilnHalBufferDesc desc;
  if (!ReadStruct(in_desc, &desc) || !out_buffer) {
    return instance->Fail(kKilnInvalidArgument,
                          "buffer_create: desc or out_buffer is NULL, or desc is too small");
  }
  if (desc.size == 0) return instance->Fail(kKilnInvalidArgument, "buffer_create: size must be at least 1");
  auto buffer = std::make_unique<Buffer>();
  buffer->device = device;
  buffer->size = desc.size;
  if (desc.flags & KILN_HAL_BUFFER_HOST_WRAP) {
    if (!desc.host_ptr) {
      return instance->Fail(kKilnInvalidArgument,
                            "buffer_create: KILN_HAL_BUFFER_HOST_WRAP with host_ptr NULL");
    }
    buffer->data = static_cast<uint8_t*>(desc.host_ptr);
    buffer->owned = false;
  } else {
    struct sysinfo system;
    const uint64_t memory =
        sysinfo(&system) == 0 ? static_cast<uint64_t>(system.totalram) * system.mem_unit : (uint64_t{1} << 46);
    if (desc.size > (uint64_t{1} << 46) || desc.size > memory) {
      return instance->Fail(kKilnOutOfMemory, "buffer_create: " + std::to_string(desc.size) +
                                                  " bytes is more than the device's max_buffer_size");
    }
    buffer->data =
        static_cast<uint8_t*>(instance->Allocate(static_cast<size_t>(desc.size), kBufferAlignment));
    if (!buffer->data) {
      return instance->Fail(kKilnOutOfMemory,
                            "buffer_create: cannot allocate " + std::to_string(desc.size) + " bytes");
    }
    buffer->owned = true;
  }
  ++device->live_objects;
  *out_buffer = reinterpret_cast<KilnHalBuffer*>(buffer.release());
  return kKilnOk;
}

KilnStatus BufferDestroy(KilnHalBuffer* handle) {
  Buffer* buffer = AsBuffer(handle);
  KILN_CPU_REQUIRE(buffer);
  if (buffer->owned) buffer->device->instance->Free(buffer->data);
  --buffer->device->live_objects;
  delete buffer;
  return kKilnOk;
}

KilnStatus CheckRange(Buffer* buffer, uint64_t offset, uint64_t size, const char* what) {
  char problem[KILN_HAL_PROBLEM_SIZE];
  if (!kiln_hal_check_range(offset, size, buffer->size, problem, sizeof(problem))) {
    return buffer->device->instance->Fail(kKilnInvalidArgument, std::string(what) + ": " + problem);
  }
  return kKilnOk;
}

KilnStatus BufferMap(KilnHalBuffer* handle, uint64_t offset, uint64_t size, void** out_ptr) {
  Buffer* buffer = AsBuffer(handle);
  KILN_CPU_REQUIRE(buffer && out_ptr);
  if (KilnStatus status = CheckRange(buffer, offset, size, "buffer_map"); status != kKilnOk) return status;
  *out_ptr = buffer->data + offset;
  return kKilnOk;
}

KilnStatus BufferUnmap(KilnHalBuffer* handle) {
  KILN_CPU_REQUIRE(handle);
  return kKilnOk;  // host memory: nothing to flush
}

KilnStatus BufferWrite(KilnHalBuffer* handle, uint64_t offset, const void* data, uint64_t size) {
  Buffer* buffer = AsBuffer(handle);
  KILN_CPU_REQUIRE(buffer);
  if (!data && size != 0) return buffer->device->instance->Fail(kKilnInvalidArgument, "buffer_write: data is NULL");
  if (KilnStatus status = CheckRange(buffer, offset, size, "buffer_write"); status != kKilnOk) return status;
  if (size) memcpy(buffer->data + offset, data, static_cast<size_t>(size));
  return kKilnOk;
}

KilnStatus BufferRead(KilnHalBuffer* handle, uint64_t offset, uint64_t size, void* out_data) {
  Buffer* buffer = AsBuffer(handle);
  KILN_CPU_REQUIRE(buffer);
  if (!out_data && size != 0) {
    return buffer->device->instance->Fail(kKilnInvalidArgument, "buffer_read: out_data is NULL");
  }
  if (KilnStatus status = CheckRange(buffer, offset, size, "buffer_read"); status != kKilnOk) return status;
  if (size) memcpy(out_data, buffer->data + offset, static_cast<size_t>(size));
  return kKilnOk;
}

}  // namespace
}  // namespace cpu
}  // namespace kiln

extern "C" KilnStatus kiln_cpu_driver_query(uint32_t runtime_hal_major, uint32_t runtime_hal_minor,
                                            const KilnHalServices* services, KilnHalDriver* out_driver) {
  using namespace kiln::cpu;  // NOLINT: the table below names every entry
  auto instance = std::make_unique<Instance>();
  kiln_hal_copy_services(services, &instance->services);
  if (KilnStatus status = kiln_hal_check_query(&instance->services, "the CPU driver", runtime_hal_major,
                                               runtime_hal_minor, out_driver);
      status != kKilnOk) {
    return status;
  }
  instance->cache_dir = kiln::driver::ResolveCacheDir(instance->Config("cache_dir", "KILN_CACHE_DIR"));
  instance->num_threads = std::max(1u, std::thread::hardware_concurrency());
  if (std::string threads = instance->Config("cpu.threads", "KILN_CPU_THREADS"); !threads.empty()) {
    char* end = nullptr;
    unsigned long n = strtoul(threads.c_str(), &end, 10);
    if (!end || *end || n < 1 || n > 1024) {
      return instance->Fail(kKilnInvalidArgument, "cpu.threads = \"" + threads + "\": expected 1 to 1024");
    }
    instance->num_threads = static_cast<uint32_t>(n);
  }
  instance->target = HostTargetSpec(instance->Config("cpu.target_cpu", "KILN_CPU_TARGET_CPU"),
                                    instance->Config("cpu.target_features", "KILN_CPU_TARGET_FEATURES"));
  instance->cpu_vendor = ReadProcCpuinfo("vendor_id");
  instance->cpu_model = ReadProcCpuinfo("model name");
  if (instance->cpu_model.empty()) instance->cpu_model = "host CPU";

  KilnHalDriver table;
  kiln_hal_driver_table_init(&table, "kiln-cpu", KILN_CPU_DRIVER_VERSION,
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
  table.script_invoke = ScriptInvoke;
  table.launch_for_each = LaunchForEach;
  table.launch_reduce = LaunchReduce;
  table.batch_create = BatchCreate;
  table.batch_destroy = BatchDestroy;
  table.batch_record_for_each = BatchRecordForEach;
  table.batch_record_reduce = BatchRecordReduce;
  table.batch_submit = BatchSubmit;
  table.fence_wait = FenceWait;
  table.fence_destroy = FenceDestroy;
  WriteStruct(table, out_driver);
  instance.release();
  return kKilnOk;
}
