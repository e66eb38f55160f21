// The Kiln sample driver: a complete, deliberately simple implementation of kiln/hal.h, and the template a
// vendor starts a driver from. It is written against the installed headers only (kiln/hal.h, kiln/hal_util.h
// and kiln/kernel_abi.h): no Kiln runtime code, no CPU-driver code. Copy this folder, rename the library,
// then replace the "device" parts (memory in Buffer, code generation in sample_jit.cc, execution in
// RunLaunch).
//
// What it does: one device that runs kernels on the calling thread, from the module's "llvm-bc" payload
// (compiled once per module_load, linked once per script so every script owns its globals). Launches and
// batches are synchronous; batches run at submit and their fence is already signalled. Every entry point
// validates its arguments and reports what is wrong through KilnHalServices.report_error.
//
// Checking it: `kiln-cts --driver libkiln_sample_driver.so` (docs/hal.md, "Writing, testing and shipping a
// driver").
//
// The files, and what to change in each (each says more at its top):
//   sample_driver.h    the driver's objects: Buffer (your memory), Device (your queue), Module, Launch
//   sample_driver.cc   this file: the instance, the device (DeviceGetInfo: yours), buffers, kiln_driver_query
//   sample_module.cc   modules and scripts: your payload and your compiler call in ModuleLoad
//   sample_launch.cc   launches, batches and fences: RunLaunch (your dispatch), BatchSubmit and FenceWait
//                      (your queue)
//   sample_runtime.cc  the runtime services kernel code calls, and the calls into kernel code
//   sample_jit.h/.cc   the code generator (your compiler)
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <memory>
#include <mutex>
#include <string>

#include "kiln/hal.h"
#include "kiln/hal_util.h"
#include "kiln/kernel_abi.h"
#include "sample_driver.h"
#include "sample_jit.h"

// The one symbol the library exports (the rest is hidden by the linker version script).
#define KILN_SAMPLE_EXPORT extern "C" __attribute__((visibility("default")))

namespace kiln_sample {
namespace {

constexpr const char* kDriverName = "kiln-sample";
constexpr const char* kDriverVersion = "1.0.0";

// ---- Structs that cross the boundary ------------------------------------------------------------------
// Every struct starts with its size. A caller built against an older minor may pass a smaller one (the
// missing tail reads as zero); a newer caller a larger one (its tail is ignored). kiln/hal_util.h handles
// that for every struct below: KILN_HAL_READ_STRUCT, KILN_HAL_READ_ELEMENT (arrays, whose stride is the first
// element's struct_size) and KILN_HAL_WRITE_STRUCT (out-structs, never written past the caller's
// struct_size). HAL 1.0 has no older version, so for input structs everything up to our own size is required.

// ---- Instance and devices ---------------------------------------------------------------------------------

KilnStatus Shutdown(KilnHalInstance* handle) {
  Instance* instance = AsInstance(handle);
  SAMPLE_REQUIRE(instance);
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
  SAMPLE_REQUIRE(handle);
  if (!out_count) return AsInstance(handle)->Fail(kKilnInvalidArgument, "device_count: out_count is NULL");
  *out_count = 1;
  return kKilnOk;
}

KilnStatus CheckDeviceIndex(Instance* instance, uint32_t index) {
  if (index == 0) return kKilnOk;
  return instance->Fail(kKilnInvalidArgument,
                        "device index " + std::to_string(index) + " out of range (1 device)");
}

KilnStatus DeviceGetInfo(KilnHalInstance* handle, uint32_t index, KilnHalDeviceInfo* out_info) {
  Instance* instance = AsInstance(handle);
  SAMPLE_REQUIRE(instance);
  if (KilnStatus status = CheckDeviceIndex(instance, index); status != kKilnOk) return status;
  if (!out_info || out_info->struct_size < sizeof(uint32_t)) {
    return instance->Fail(kKilnInvalidArgument, "device_get_info: out_info is NULL or has no struct_size");
  }
  KilnHalDeviceInfo info;
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  info.type = kKilnHalDeviceOther;  // a real driver: kKilnHalDeviceGpu
  snprintf(info.name, sizeof(info.name), "Kiln sample device (host JIT, 1 thread)");
  snprintf(info.vendor, sizeof(info.vendor), "Kiln sample");
  info.memory_bytes = kMaxBufferSize;
  info.max_kernel_level = kDriverLevel;
  info.flags =
      KILN_HAL_DEVICE_HOST_SHARED_MEMORY | KILN_HAL_DEVICE_MAPPABLE_BUFFERS;  // batches are synchronous
  snprintf(info.payload_tags, sizeof(info.payload_tags), "llvm-bc");
  info.limits.struct_size = sizeof(info.limits);
  info.limits.max_inputs = KILN_KERNEL_MAX_INPUTS;
  info.limits.max_dim_x = info.limits.max_dim_y = info.limits.max_dim_z = kMaxDim;
  info.limits.max_threads = 1;
  info.limits.max_buffer_size = kMaxBufferSize;
  info.limits.buffer_alignment = kBufferAlignment;
  KILN_HAL_WRITE_STRUCT(info, out_info);
  return kKilnOk;
}

KilnStatus DeviceOpen(KilnHalInstance* handle, uint32_t index, KilnHalDevice** out_device) {
  Instance* instance = AsInstance(handle);
  SAMPLE_REQUIRE(instance);
  if (KilnStatus status = CheckDeviceIndex(instance, index); status != kKilnOk) return status;
  if (!out_device) return instance->Fail(kKilnInvalidArgument, "device_open: out_device is NULL");
  std::lock_guard<std::mutex> lock(instance->mutex);
  if (!instance->linker) {
    std::string error;
    instance->linker = Linker::Create(&error);
    if (!instance->linker) return instance->Fail(kKilnError, "device_open: " + error);
  }
  ++instance->open_devices;
  Device* device = new Device;
  device->instance = instance;
  *out_device = reinterpret_cast<KilnHalDevice*>(device);
  return kKilnOk;
}

KilnStatus DeviceClose(KilnHalDevice* handle) {
  Device* device = AsDevice(handle);
  SAMPLE_REQUIRE(device);
  Instance* instance = device->instance;
  if (int live = device->live_objects.load(); live > 0) {
    return instance->Fail(
        kKilnInvalidArgument,
        "device_close: " + std::to_string(live) + " buffer(s), module(s), batch(es) or fence(s) still alive");
  }
  delete device;
  std::lock_guard<std::mutex> lock(instance->mutex);
  --instance->open_devices;
  return kKilnOk;
}

// ---- Buffers ----------------------------------------------------------------------------------------------

KilnStatus BufferCreate(KilnHalDevice* handle, const KilnHalBufferDesc* in_desc, KilnHalBuffer** out_buffer) {
  Device* device = AsDevice(handle);
  SAMPLE_REQUIRE(device);
  Instance* instance = device->instance;
  KilnHalBufferDesc desc;
  if (!KILN_HAL_READ_STRUCT(in_desc, &desc) || !out_buffer) {
    return instance->Fail(kKilnInvalidArgument,
                          "buffer_create: desc or out_buffer is NULL, or desc is too small");
  }
  if (desc.size == 0) return instance->Fail(kKilnInvalidArgument, "buffer_create: size must be at least 1");
  if (desc.size > kMaxBufferSize) {
    return instance->Fail(kKilnOutOfMemory, "buffer_create: " + std::to_string(desc.size) +
                                                " bytes is more than the device's " +
                                                std::to_string(kMaxBufferSize));
  }
  auto buffer = std::make_unique<Buffer>();
  buffer->device = device;
  buffer->size = desc.size;
  if (desc.flags & KILN_HAL_BUFFER_HOST_WRAP) {
    if (!desc.host_ptr || reinterpret_cast<uintptr_t>(desc.host_ptr) % kBufferAlignment != 0) {
      return instance->Fail(kKilnInvalidArgument,
                            "buffer_create: KILN_HAL_BUFFER_HOST_WRAP needs host_ptr aligned to " +
                                std::to_string(kBufferAlignment) + " bytes" +
                                (desc.host_ptr ? "" : " (it is NULL)"));
    }
    buffer->data = static_cast<uint8_t*>(desc.host_ptr);
    buffer->owned = false;
  } else {
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
  SAMPLE_REQUIRE(buffer);
  if (buffer->owned) buffer->device->instance->Free(buffer->data);
  --buffer->device->live_objects;
  delete buffer;
  return kKilnOk;
}

// The checks of kiln/hal_util.h write what is wrong; the driver names what it checked and reports the line.
KilnStatus CheckRange(Buffer* buffer, uint64_t offset, uint64_t size, const char* what) {
  char problem[KILN_HAL_PROBLEM_SIZE];
  if (kiln_hal_check_range(offset, size, buffer->size, problem, sizeof(problem))) return kKilnOk;
  return buffer->device->instance->Fail(kKilnInvalidArgument, std::string(what) + ": " + problem);
}

KilnStatus BufferMap(KilnHalBuffer* handle, uint64_t offset, uint64_t size, void** out_ptr) {
  Buffer* buffer = AsBuffer(handle);
  SAMPLE_REQUIRE(buffer);
  if (!out_ptr) return buffer->device->instance->Fail(kKilnInvalidArgument, "buffer_map: out_ptr is NULL");
  if (KilnStatus status = CheckRange(buffer, offset, size, "buffer_map"); status != kKilnOk) return status;
  *out_ptr = buffer->data + offset;  // host memory: the map is the memory itself
  return kKilnOk;
}

KilnStatus BufferUnmap(KilnHalBuffer* handle) {
  SAMPLE_REQUIRE(handle);
  return kKilnOk;  // a device with its own memory would copy back (or flush) here
}

KilnStatus BufferWrite(KilnHalBuffer* handle, uint64_t offset, const void* data, uint64_t size) {
  Buffer* buffer = AsBuffer(handle);
  SAMPLE_REQUIRE(buffer);
  if (!data && size)
    return buffer->device->instance->Fail(kKilnInvalidArgument, "buffer_write: data is NULL");
  if (KilnStatus status = CheckRange(buffer, offset, size, "buffer_write"); status != kKilnOk) return status;
  if (size) memcpy(buffer->data + offset, data, static_cast<size_t>(size));
  return kKilnOk;
}

KilnStatus BufferRead(KilnHalBuffer* handle, uint64_t offset, uint64_t size, void* out_data) {
  Buffer* buffer = AsBuffer(handle);
  SAMPLE_REQUIRE(buffer);
  if (!out_data && size)
    return buffer->device->instance->Fail(kKilnInvalidArgument, "buffer_read: out_data is NULL");
  if (KilnStatus status = CheckRange(buffer, offset, size, "buffer_read"); status != kKilnOk) return status;
  if (size) memcpy(out_data, buffer->data + offset, static_cast<size_t>(size));
  return kKilnOk;
}

}  // namespace
}  // namespace kiln_sample

// ---- The entry point --------------------------------------------------------------------------------------

KILN_SAMPLE_EXPORT KilnStatus kiln_driver_query(uint32_t runtime_hal_major, uint32_t runtime_hal_minor,
                                                const KilnHalServices* services, KilnHalDriver* out_driver) {
  using namespace kiln_sample;  // NOLINT: the table below names every entry
  auto instance = std::make_unique<Instance>();
  // Keep a copy of the runtime's services, as much of them as both sides know.
  kiln_hal_copy_services(services, &instance->services);
  // A table too small for its header, or another HAL major (whose meanings changed), is refused; any minor of
  // this major works.
  if (KilnStatus status = kiln_hal_check_query(&instance->services, kDriverName, runtime_hal_major,
                                               runtime_hal_minor, out_driver);
      status != kKilnOk) {
    return status;
  }
  KilnHalDriver table;
  kiln_hal_driver_table_init(&table, kDriverName, kDriverVersion,
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
  table.launch_reduce = LaunchReduce;  // optional: leave NULL if the device has no reductions
  table.batch_create = BatchCreate;
  table.batch_destroy = BatchDestroy;
  table.batch_record_for_each = BatchRecordForEach;
  table.batch_record_reduce = BatchRecordReduce;
  table.batch_submit = BatchSubmit;
  table.fence_wait = FenceWait;
  table.fence_destroy = FenceDestroy;
  // Fills no more than the runtime's struct_size: an older runtime gets the entries it knows about.
  KILN_HAL_WRITE_STRUCT(table, out_driver);
  instance.release();  // owned by the runtime now, until shutdown
  return kKilnOk;
}
