// The Kiln sample driver: a complete, deliberately simple implementation of kiln/hal.h, and the template a
// vendor starts a driver from. It is written against the installed headers only (kiln/hal.h and
// kiln/kernel_abi.h): no Kiln runtime code, no CPU-driver code. Copy this folder, rename the library, then
// replace the "device" parts (memory in Buffer, code generation in sample_jit.cc, execution in RunLaunch).
//
// What it does: one device that runs kernels on the calling thread, from the module's "llvm-bc" payload
// (compiled once per module_load, linked once per script so every script owns its globals). Launches and
// batches are synchronous; batches run at submit and their fence is already signalled. Every entry point
// validates its arguments and reports what is wrong through KilnHalServices.report_error.
//
// Checking it: `kiln-cts --driver libkiln_sample_driver.so` (docs/hal.md, "Writing, testing and shipping a
// driver").
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/hal.h"
#include "kiln/hal_util.h"
#include "kiln/kernel_abi.h"
#include "sample_jit.h"

// The one symbol the library exports (the rest is hidden by the linker version script).
#define KILN_SAMPLE_EXPORT extern "C" __attribute__((visibility("default")))

namespace kiln_sample {
namespace {

constexpr const char* kDriverName = "kiln-sample";
constexpr const char* kDriverVersion = "1.0.0";
// The kernel HAL level this driver's runtime services implement (kernel_abi.h).
const uint32_t kDriverLevel = KILN_HAL_LEVEL(KILN_KERNEL_HAL_LEVEL_MAJOR, KILN_KERNEL_HAL_LEVEL_MINOR);
constexpr uint32_t kBufferAlignment = 64;
constexpr uint32_t kMaxDim = 1u << 24;
constexpr uint64_t kMaxBufferSize = uint64_t{1} << 34;

// ---- Structs that cross the boundary ------------------------------------------------------------------
// Every struct starts with its size. A caller built against an older minor may pass a smaller one (the
// missing tail reads as zero); a newer caller a larger one (its tail is ignored). kiln/hal_util.h handles
// that for every struct below: KILN_HAL_READ_STRUCT, KILN_HAL_READ_ELEMENT (arrays, whose stride is the first
// element's struct_size) and KILN_HAL_WRITE_STRUCT (out-structs, never written past the caller's
// struct_size). HAL 1.0 has no older version, so for input structs everything up to our own size is required.

std::string LevelString(uint32_t level) {
  return std::to_string(KILN_HAL_LEVEL_MAJOR(level)) + "." + std::to_string(KILN_HAL_LEVEL_MINOR(level));
}

// ---- Driver objects (what the opaque handles point at) --------------------------------------------------

struct Instance {
  KilnHalServices services;
  std::mutex mutex;  // guards linker creation and open_devices
  std::unique_ptr<Linker> linker;
  int open_devices = 0;

  void Log(KilnHalLogLevel level, const std::string& message) const {
    kiln_hal_log(&services, level, message.c_str());
  }
  // Every failure goes through here: the message first (report_error), then the status.
  KilnStatus Fail(KilnStatus status, const std::string& message) const {
    return kiln_hal_fail(&services, status, message.c_str());
  }
  void* Allocate(size_t size, size_t alignment) const {
    if (services.allocate) return services.allocate(services.user_data, size, alignment);
    return aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  }
  void Free(void* ptr) const {
    if (ptr && services.free) {
      services.free(services.user_data, ptr);
    } else {
      free(ptr);
    }
  }
  uint64_t NowNs() const {
    if (services.now_ns) return services.now_ns(services.user_data);
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
  }
};

struct Device {
  Instance* instance;
  // The device runs one thing at a time: launches, invocations and script creation from any number of
  // threads take turns here. A real driver would queue work instead.
  std::mutex run_mutex;
  std::atomic<int> live_objects{0};  // buffers, modules, batches, fences: must be gone before device_close
};

struct Buffer {
  Device* device;
  uint8_t* data;
  uint64_t size;
  bool owned;  // false when wrapping host memory (KILN_HAL_BUFFER_HOST_WRAP)
};

// A kernel, reduction or invokable as the module describes it, and whether (and why not) it can run.
struct Kernel {
  std::string name, symbol;
  uint32_t signature = 0, level = 0, output_size = 0;
  std::vector<uint32_t> input_sizes;
  std::string unsupported_reason;  // empty when it can run
};
struct Reduction {
  std::string name, symbols[4];  // init, accum, combine, out
  uint32_t level = 0, accumulator_size = 0, accumulator_alignment = 1, result_size = 0;
  std::vector<uint32_t> input_sizes;
  std::string unsupported_reason;
};
struct Invokable {
  std::string name, symbol;
  uint32_t args_size = 0, level = 0;
};
struct Global {
  std::string name;
  uint32_t flags = 0;
  uint64_t size = 0;
};

struct Module {
  Device* device;
  std::string name;
  std::string object;  // host object code, linked again for every script
  std::vector<Kernel> kernels;
  std::vector<Reduction> reductions;
  std::vector<Invokable> invokables;
  std::vector<Global> globals;
  std::vector<std::string> defined_symbols;
  bool has_init = false;
  KilnHalModuleInfo info{};
  std::atomic<int> live_scripts{0};

  bool Defines(const std::string& symbol) const {
    return std::find(defined_symbols.begin(), defined_symbols.end(), symbol) != defined_symbols.end();
  }
};

struct Script {
  Module* module;
  void* user_data;
  Linker::Image* image = nullptr;
  std::vector<std::unique_ptr<KilnKernelAllocation>> bound;  // rs_allocation globals point at these
  std::vector<std::pair<std::unique_ptr<KilnKernelAllocation>, void*>> created;  // rsCreateAllocation
  Instance* instance() const { return module->device->instance; }
};

// One validated launch, ready to run now or when its batch is submitted.
struct Launch {
  Script* script = nullptr;
  bool is_reduction = false;
  uint32_t index = 0;
  KilnKernelLaunch launch{};
  std::vector<uint8_t> usr_copy;  // usrData is copied at record time
  void* result = nullptr;         // reductions
};

struct Batch {
  Device* device;
  std::vector<std::unique_ptr<Launch>> launches;
};

struct Fence {
  Device* device;
  KilnStatus status;  // the batch ran at submit: this is its outcome
};

Instance* AsInstance(KilnHalInstance* h) { return reinterpret_cast<Instance*>(h); }
Device* AsDevice(KilnHalDevice* h) { return reinterpret_cast<Device*>(h); }
Buffer* AsBuffer(KilnHalBuffer* h) { return reinterpret_cast<Buffer*>(h); }
Module* AsModule(KilnHalModule* h) { return reinterpret_cast<Module*>(h); }
Script* AsScript(KilnHalScript* h) { return reinterpret_cast<Script*>(h); }
Batch* AsBatch(KilnHalBatch* h) { return reinterpret_cast<Batch*>(h); }
Fence* AsFence(KilnHalFence* h) { return reinterpret_cast<Fence*>(h); }

// A NULL handle leaves no instance to report through: the status alone tells.
#define SAMPLE_REQUIRE(cond)                  \
  do {                                        \
    if (!(cond)) return kKilnInvalidArgument; \
  } while (0)

// ---- Runtime services the kernels call (kernel_abi.h) ---------------------------------------------------
// Kernel code does not pass its script; the driver makes it current on the thread before calling in.

thread_local Script* t_script = nullptr;
thread_local std::string* t_failure = nullptr;  // set by a service when the running code did something wrong

void RtDebug(const char* message, uint32_t element_type, uint32_t vector_size, const void* value) {
  if (!t_script) return;
  // A template keeps this short: the message only. The CPU driver formats the value too.
  t_script->instance()->Log(kKilnHalLogDebug, "script " + t_script->module->name + ": " +
                                                  (message ? message : "") +
                                                  (element_type != kKilnNoType ? " (value not shown)" : ""));
}

int32_t RtSendToClient(int32_t command, const void* data, uint32_t size, int32_t blocking) {
  if (!t_script || !t_script->instance()->services.send_to_client) return 0;
  const KilnHalServices& services = t_script->instance()->services;
  services.send_to_client(services.user_data, t_script->user_data, command, data, size);
  return 1;
}

int64_t RtUptimeNanos() {
  if (t_script) return static_cast<int64_t>(t_script->instance()->NowNs());
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
int64_t RtUptimeMillis() { return RtUptimeNanos() / 1000000; }

int64_t RtTime(int64_t* timer) {
  const int64_t now = static_cast<int64_t>(::time(nullptr));
  if (timer) *timer = now;
  return now;
}

void RtLocaltime(KilnKernelTm* out, int64_t when) {
  if (!out) return;
  const time_t t = static_cast<time_t>(when);
  struct tm local;
  memset(&local, 0, sizeof(local));
  localtime_r(&t, &local);
  *out = KilnKernelTm{local.tm_sec,  local.tm_min,  local.tm_hour, local.tm_mday, local.tm_mon,
                      local.tm_year, local.tm_wday, local.tm_yday, local.tm_isdst};
}

void RtElementAccessError(const KilnKernelAllocation* allocation, uint32_t x, uint32_t y, uint32_t z,
                          uint32_t element_size) {
  if (!t_failure || !t_failure->empty()) return;  // the first problem is the one worth reporting
  *t_failure = "element access (" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) +
               ") of " + std::to_string(element_size) + "-byte elements outside " +
               (allocation ? "an allocation of " + std::to_string(allocation->dim_x) + "x" +
                                 std::to_string(allocation->dim_y) + "x" + std::to_string(allocation->dim_z) +
                                 " " + std::to_string(allocation->element_size) + "-byte elements"
                           : std::string("a NULL allocation"));
}

uint32_t ScalarSize(uint32_t element_type) {
  switch (element_type) {
    case kKilnInt8:
    case kKilnUInt8:
    case kKilnBool:
      return 1;
    case kKilnInt16:
    case kKilnUInt16:
    case kKilnFloat16:
      return 2;
    case kKilnInt32:
    case kKilnUInt32:
    case kKilnFloat32:
      return 4;
    case kKilnInt64:
    case kKilnUInt64:
    case kKilnFloat64:
      return 8;
    default:
      return 0;
  }
}

KilnKernelAllocation* RtCreateAllocation(uint32_t element_type, uint32_t vector_size, uint32_t dim_x,
                                         uint32_t dim_y, uint32_t dim_z) {
  const uint32_t scalar = ScalarSize(element_type);
  if (!t_script || scalar == 0 || vector_size < 1 || vector_size > 4 || dim_x == 0 || dim_x > kMaxDim ||
      dim_y > kMaxDim || dim_z > kMaxDim) {
    return nullptr;
  }
  const uint64_t element = uint64_t{scalar} * (vector_size == 3 ? 4 : vector_size);  // a 3-vector is padded
  const uint64_t row = element * dim_x, plane = row * std::max(dim_y, 1u);
  const uint64_t total = plane * std::max(dim_z, 1u);
  if (total > kMaxBufferSize) return nullptr;
  void* data = t_script->instance()->Allocate(static_cast<size_t>(total), kBufferAlignment);
  if (!data) return nullptr;
  memset(data, 0, static_cast<size_t>(total));
  auto allocation = std::make_unique<KilnKernelAllocation>(
      KilnKernelAllocation{sizeof(KilnKernelAllocation), static_cast<uint32_t>(element), element_type,
                           vector_size, dim_x, dim_y, dim_z, 0, row, plane, data});
  t_script->created.emplace_back(std::move(allocation), data);
  return t_script->created.back().first.get();
}

// What the sample provides, by the names the bitcode imports. rsForEach from kernel code
// (__kiln_rt_for_each) is missing on purpose: module_load shows how a driver refuses such a module.
std::vector<std::pair<std::string, void*>> RuntimeSymbols() {
  return {
      {"__kiln_rt_debug", reinterpret_cast<void*>(&RtDebug)},
      {"__kiln_rt_send_to_client", reinterpret_cast<void*>(&RtSendToClient)},
      {"__kiln_rt_uptime_millis", reinterpret_cast<void*>(&RtUptimeMillis)},
      {"__kiln_rt_uptime_nanos", reinterpret_cast<void*>(&RtUptimeNanos)},
      {"__kiln_rt_time", reinterpret_cast<void*>(&RtTime)},
      {"__kiln_rt_localtime", reinterpret_cast<void*>(&RtLocaltime)},
      {"__kiln_rt_element_access_error", reinterpret_cast<void*>(&RtElementAccessError)},
      {"__kiln_rt_create_allocation", reinterpret_cast<void*>(&RtCreateAllocation)},
  };
}

// Calls into JIT-compiled code. That code has no -fsanitize=function signature in front of it, so UBSan's
// check (which reads bytes before the callee) must not run on these calls.
#if defined(__clang__)
#define SAMPLE_NO_SANITIZE_FUNCTION __attribute__((no_sanitize("function")))
#else
#define SAMPLE_NO_SANITIZE_FUNCTION
#endif
using ExpandFn = void (*)(const KilnKernelLaunch*, uint32_t, uint32_t, uint32_t, uint32_t);
using AccumFn = void (*)(const KilnKernelLaunch*, void*, uint32_t, uint32_t, uint32_t, uint32_t);
using UnaryFn = void (*)(void*);                // reduce init
using BinaryFn = void (*)(void*, const void*);  // reduce out (and combine, unused here)
using InvokeFn = void (*)(const void*);
SAMPLE_NO_SANITIZE_FUNCTION void CallExpand(void* fn, const KilnKernelLaunch* l, uint32_t y, uint32_t z) {
  reinterpret_cast<ExpandFn>(fn)(l, 0, l->dim_x, y, z);
}
SAMPLE_NO_SANITIZE_FUNCTION void CallAccum(void* fn, const KilnKernelLaunch* l, void* acc, uint32_t y,
                                           uint32_t z) {
  reinterpret_cast<AccumFn>(fn)(l, acc, 0, l->dim_x, y, z);
}
SAMPLE_NO_SANITIZE_FUNCTION void CallUnary(void* fn, void* a) { reinterpret_cast<UnaryFn>(fn)(a); }
SAMPLE_NO_SANITIZE_FUNCTION void CallBinary(void* fn, void* a, const void* b) {
  reinterpret_cast<BinaryFn>(fn)(a, b);
}
SAMPLE_NO_SANITIZE_FUNCTION void CallInvoke(void* fn, const void* args) {
  reinterpret_cast<InvokeFn>(fn)(args);
}

// Makes `script` current for the runtime services while kernel code runs, and collects their complaints.
class RunScope {
 public:
  explicit RunScope(Script* script) : saved_script_(t_script), saved_failure_(t_failure) {
    t_script = script;
    t_failure = &failure_;
  }
  ~RunScope() {
    t_script = saved_script_;
    t_failure = saved_failure_;
  }
  const std::string& failure() const { return failure_; }

 private:
  Script* saved_script_;
  std::string* saved_failure_;
  std::string failure_;
};

void* LookupOrNull(Script* script, const std::string& symbol) {
  std::string ignored;
  return script->instance()->linker->Lookup(script->image, symbol, &ignored);
}

// ---- Instance and devices
// -----------------------------------------------------------------------------------

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

// ---- Modules ----------------------------------------------------------------------------------------------

std::string SymbolOr(const char* symbol, const std::string& fallback) {
  return symbol && *symbol ? std::string(symbol) : fallback;
}

bool ReadSizes(const uint32_t* sizes, uint32_t count, std::vector<uint32_t>* out) {
  if (count > KILN_KERNEL_MAX_INPUTS || (count > 0 && !sizes)) return false;
  out->assign(sizes, sizes + count);
  return true;
}

// Copies what the driver keeps out of the runtime's description (which is only borrowed).
KilnStatus ReadModuleDesc(Instance* instance, const KilnHalModuleDesc& desc, Module* module) {
  const std::string& what = module->name;
  for (uint32_t i = 0; i < desc.num_kernels; ++i) {
    KilnHalKernelDesc k;
    Kernel kernel;
    if (!KILN_HAL_READ_ELEMENT(desc.kernels, i, &k) || !k.name ||
        !ReadSizes(k.input_element_sizes, k.num_inputs, &kernel.input_sizes)) {
      return instance->Fail(kKilnInvalidModel, what + ": kernel " + std::to_string(i) + " is malformed");
    }
    kernel.name = k.name;
    kernel.symbol = SymbolOr(k.expand_symbol, "__kiln_expand_" + kernel.name);
    kernel.signature = k.signature;
    kernel.level = k.kernel_level;
    kernel.output_size = (k.signature & KILN_HAL_SIG_OUT) ? k.output_element_size : 0;
    if ((k.signature & KILN_HAL_SIG_OUT) && kernel.output_size == 0) {
      return instance->Fail(kKilnInvalidModel,
                            what + ", kernel " + kernel.name + ": returns a value of size 0");
    }
    module->kernels.push_back(std::move(kernel));
  }
  for (uint32_t i = 0; i < desc.num_reductions; ++i) {
    KilnHalReductionDesc r;
    Reduction reduction;
    if (!KILN_HAL_READ_ELEMENT(desc.reductions, i, &r) || !r.name ||
        !ReadSizes(r.input_element_sizes, r.num_inputs, &reduction.input_sizes)) {
      return instance->Fail(kKilnInvalidModel, what + ": reduction " + std::to_string(i) + " is malformed");
    }
    reduction.name = r.name;
    const std::string prefix = "__kiln_reduce_" + reduction.name;
    reduction.symbols[0] = SymbolOr(r.init_symbol, prefix + "_init");
    reduction.symbols[1] = SymbolOr(r.accum_symbol, prefix + "_accum");
    reduction.symbols[2] = SymbolOr(r.combine_symbol, prefix + "_combine");
    reduction.symbols[3] = SymbolOr(r.out_symbol, prefix + "_out");
    reduction.level = r.kernel_level;
    reduction.accumulator_size = r.accumulator_size;
    reduction.accumulator_alignment = r.accumulator_alignment ? r.accumulator_alignment : 1;
    reduction.result_size = r.result_size;
    if ((reduction.accumulator_alignment & (reduction.accumulator_alignment - 1)) ||
        reduction.accumulator_alignment > 4096 || reduction.accumulator_size > (1u << 20)) {
      return instance->Fail(kKilnInvalidModel, what + ", reduction " + reduction.name + ": accumulator of " +
                                                   std::to_string(reduction.accumulator_size) +
                                                   " bytes aligned to " +
                                                   std::to_string(reduction.accumulator_alignment));
    }
    module->reductions.push_back(std::move(reduction));
  }
  for (uint32_t i = 0; i < desc.num_invokables; ++i) {
    KilnHalInvokableDesc v;
    if (!KILN_HAL_READ_ELEMENT(desc.invokables, i, &v) || !v.name) {
      return instance->Fail(kKilnInvalidModel, what + ": invokable " + std::to_string(i) + " is malformed");
    }
    module->invokables.push_back(Invokable{v.name, SymbolOr(v.symbol, std::string("__kiln_invoke_") + v.name),
                                           v.args_size, v.kernel_level});
  }
  for (uint32_t i = 0; i < desc.num_globals; ++i) {
    KilnHalGlobalDesc g;
    if (!KILN_HAL_READ_ELEMENT(desc.globals, i, &g) || !g.name) {
      return instance->Fail(kKilnInvalidModel, what + ": global " + std::to_string(i) + " is malformed");
    }
    module->globals.push_back(Global{g.name, g.flags, g.size});
  }
  return kKilnOk;
}

// Per kernel (and reduction): can this device run it? A kernel that needs a newer kernel HAL level, or whose
// code is missing, is reported with the reason, and the rest of the module still loads.
void DecideSupport(Module* module) {
  uint32_t supported = 0;
  for (Kernel& kernel : module->kernels) {
    if (kernel.level > kDriverLevel) {
      kernel.unsupported_reason = "needs kernel HAL level " + LevelString(kernel.level) +
                                  ", the sample driver runs up to " + LevelString(kDriverLevel);
    } else if (!module->Defines(kernel.symbol)) {
      kernel.unsupported_reason = "the llvm-bc payload does not define " + kernel.symbol;
    } else {
      ++supported;
    }
  }
  for (Reduction& reduction : module->reductions) {
    if (reduction.level > kDriverLevel) {
      reduction.unsupported_reason = "needs kernel HAL level " + LevelString(reduction.level) +
                                     ", the sample driver runs up to " + LevelString(kDriverLevel);
    }
    for (const std::string& symbol : reduction.symbols) {
      if (reduction.unsupported_reason.empty() && !module->Defines(symbol)) {
        reduction.unsupported_reason = "the llvm-bc payload does not define " + symbol;
      }
    }
  }
  module->info.num_kernels_supported = supported;
}

KilnStatus ModuleLoad(KilnHalDevice* handle, const KilnHalModuleDesc* in_desc, KilnHalModule** out_module) {
  Device* device = AsDevice(handle);
  SAMPLE_REQUIRE(device);
  Instance* instance = device->instance;
  const uint64_t start = instance->NowNs();
  KilnHalModuleDesc desc;
  if (!KILN_HAL_READ_STRUCT(in_desc, &desc) || !out_module) {
    return instance->Fail(kKilnInvalidArgument,
                          "module_load: desc or out_module is NULL, or desc is too small");
  }
  auto module = std::make_unique<Module>();
  module->device = device;
  module->name = desc.name ? desc.name : "(unnamed module)";
  module->has_init = desc.flags & KILN_HAL_MODULE_HAS_INIT;
  if (desc.abi_version != KILN_KERNEL_ABI_VERSION) {
    return instance->Fail(kKilnUnsupported,
                          module->name + ": generated for kernel ABI " + std::to_string(desc.abi_version) +
                              ", the sample driver implements " + std::to_string(KILN_KERNEL_ABI_VERSION));
  }
  // The first payload this device consumes.
  KilnHalPayload bitcode{};
  std::string tags;
  for (uint32_t i = 0; i < desc.num_payloads; ++i) {
    KilnHalPayload payload;
    if (!KILN_HAL_READ_ELEMENT(desc.payloads, i, &payload) || !payload.tag ||
        (!payload.data && payload.size)) {
      return instance->Fail(kKilnInvalidModel,
                            module->name + ": payload " + std::to_string(i) + " is malformed");
    }
    tags += (tags.empty() ? "" : ", ") + std::string(payload.tag);
    if (!bitcode.data && strcmp(payload.tag, "llvm-bc") == 0) bitcode = payload;
  }
  if (!bitcode.data) {
    return instance->Fail(kKilnUnsupported, module->name + ": no \"llvm-bc\" payload (it has: " +
                                                (tags.empty() ? std::string("none") : tags) + ")");
  }
  // Runtime services the code imports must all be here: refuse early, naming the missing one.
  const auto runtime = RuntimeSymbols();
  for (uint32_t i = 0; i < desc.num_imports; ++i) {
    const char* import = desc.imports ? desc.imports[i] : nullptr;
    if (!import)
      return instance->Fail(kKilnInvalidModel, module->name + ": import " + std::to_string(i) + " is NULL");
    if (strncmp(import, "__kiln_rt_", 10) != 0) continue;
    bool known = false;
    for (const auto& symbol : runtime) known = known || symbol.first == import;
    if (!known) {
      return instance->Fail(kKilnUnsupported, module->name + ": imports runtime service " + import +
                                                  ", which the sample driver does not provide");
    }
  }
  if (KilnStatus status = ReadModuleDesc(instance, desc, module.get()); status != kKilnOk) return status;

  std::string error;
  const uint64_t compile_start = instance->NowNs();
  if (!CompileBitcode(bitcode.data, static_cast<size_t>(bitcode.size), module->name, &module->object,
                      &module->defined_symbols, &error)) {
    return instance->Fail(kKilnInvalidModel, error);
  }
  DecideSupport(module.get());
  module->info.struct_size = sizeof(module->info);
  module->info.cache_result = kKilnHalCacheNone;
  module->info.compile_ns = instance->NowNs() - compile_start;
  module->info.load_ns = instance->NowNs() - start;
  ++device->live_objects;
  *out_module = reinterpret_cast<KilnHalModule*>(module.release());
  return kKilnOk;
}

KilnStatus ModuleUnload(KilnHalModule* handle) {
  Module* module = AsModule(handle);
  SAMPLE_REQUIRE(module);
  if (int live = module->live_scripts.load(); live > 0) {
    return module->device->instance->Fail(
        kKilnInvalidArgument,
        module->name + ": module_unload with " + std::to_string(live) + " script(s) alive");
  }
  --module->device->live_objects;
  delete module;
  return kKilnOk;
}

KilnStatus ModuleGetInfo(KilnHalModule* handle, KilnHalModuleInfo* out_info) {
  Module* module = AsModule(handle);
  SAMPLE_REQUIRE(module);
  if (!KILN_HAL_WRITE_STRUCT(module->info, out_info)) {
    return module->device->instance->Fail(kKilnInvalidArgument,
                                          "module_get_info: out_info is NULL or has no struct_size");
  }
  return kKilnOk;
}

KilnStatus ModuleKernelSupported(KilnHalModule* handle, uint32_t kernel_index, bool* out_supported,
                                 const char** out_reason) {
  Module* module = AsModule(handle);
  SAMPLE_REQUIRE(module);
  if (!out_supported) {
    return module->device->instance->Fail(kKilnInvalidArgument,
                                          "module_kernel_supported: out_supported is NULL");
  }
  char problem[KILN_HAL_PROBLEM_SIZE];
  if (!kiln_hal_check_index("kernel", kernel_index, module->kernels.size(), problem, sizeof(problem))) {
    return module->device->instance->Fail(kKilnInvalidArgument, module->name + ": " + problem);
  }
  const Kernel& kernel = module->kernels[kernel_index];
  *out_supported = kernel.unsupported_reason.empty();
  if (out_reason) *out_reason = *out_supported ? nullptr : kernel.unsupported_reason.c_str();
  return kKilnOk;
}

// ---- Scripts ----------------------------------------------------------------------------------------------

// Runs an invokable's code with the script current; a runtime service's complaint fails it.
KilnStatus RunInvokable(Script* script, void* fn, const void* args, const std::string& name) {
  RunScope scope(script);
  CallInvoke(fn, args);
  if (scope.failure().empty()) return kKilnOk;
  return script->instance()->Fail(
      kKilnError, "script " + script->module->name + ", invokable " + name + ": " + scope.failure());
}

KilnStatus ScriptDestroy(KilnHalScript* handle) {
  Script* script = AsScript(handle);
  SAMPLE_REQUIRE(script);
  Instance* instance = script->instance();
  instance->linker->Unlink(script->image);
  for (auto& created : script->created) instance->Free(created.second);
  --script->module->live_scripts;
  delete script;
  return kKilnOk;
}

KilnStatus ScriptCreate(KilnHalModule* handle, void* script_user_data, KilnHalScript** out_script) {
  Module* module = AsModule(handle);
  SAMPLE_REQUIRE(module);
  Instance* instance = module->device->instance;
  if (!out_script) return instance->Fail(kKilnInvalidArgument, "script_create: out_script is NULL");
  auto script = std::make_unique<Script>();
  script->module = module;
  script->user_data = script_user_data;
  std::string error;
  std::lock_guard<std::mutex> lock(module->device->run_mutex);
  script->image = instance->linker->Link(module->object, RuntimeSymbols(), &error);
  // The first lookup links the image: an unresolved reference shows up now rather than at the first launch.
  if (script->image && !module->defined_symbols.empty() &&
      !instance->linker->Lookup(script->image, module->defined_symbols[0], &error)) {
    instance->linker->Unlink(script->image);
    script->image = nullptr;
  }
  if (!script->image) return instance->Fail(kKilnInvalidModel, module->name + ": " + error);
  ++module->live_scripts;
  Script* raw = script.release();
  if (module->has_init) {
    void* init = LookupOrNull(raw, "__kiln_invoke_init");
    KilnStatus status =
        init ? RunInvokable(raw, init, nullptr, "init")
             : instance->Fail(kKilnInvalidModel, module->name +
                                                     ": the module has init() but the payload does not "
                                                     "define __kiln_invoke_init");
    if (status != kKilnOk) {
      ScriptDestroy(reinterpret_cast<KilnHalScript*>(raw));
      return status;
    }
  }
  *out_script = reinterpret_cast<KilnHalScript*>(raw);
  return kKilnOk;
}

// The global `name` of `size` bytes, and its address in this script's image.
KilnStatus FindGlobal(Script* script, const char* name, uint64_t size, const char* what,
                      const Global** out_global, void** out_address) {
  Instance* instance = script->instance();
  const std::string& module = script->module->name;
  if (!name) return instance->Fail(kKilnInvalidArgument, std::string(what) + ": name is NULL");
  for (const Global& global : script->module->globals) {
    if (global.name != name) continue;
    if (size != global.size) {
      return instance->Fail(kKilnInvalidArgument, "script " + module + ": global " + global.name + " is " +
                                                      std::to_string(global.size) + " bytes, " + what +
                                                      " gave " + std::to_string(size));
    }
    *out_address = LookupOrNull(script, global.name);
    if (!*out_address) {
      return instance->Fail(kKilnInvalidModel, "script " + module + ": global " + global.name +
                                                   " is reflected but not in the code");
    }
    *out_global = &global;
    return kKilnOk;
  }
  return instance->Fail(kKilnInvalidArgument, "script " + module + " has no global named " + name);
}

KilnStatus ScriptSetGlobal(KilnHalScript* handle, const char* name, const void* data, uint64_t size) {
  Script* script = AsScript(handle);
  SAMPLE_REQUIRE(script);
  const Global* global = nullptr;
  void* address = nullptr;
  if (KilnStatus status = FindGlobal(script, name, size, "script_set_global", &global, &address);
      status != kKilnOk) {
    return status;
  }
  const std::string what = "script " + script->module->name + ": global " + global->name;
  if (global->flags & KILN_HAL_GLOBAL_CONST)
    return script->instance()->Fail(kKilnInvalidArgument, what + " is const");
  if (global->flags & (KILN_HAL_GLOBAL_ALLOCATION | KILN_HAL_GLOBAL_POINTER)) {
    return script->instance()->Fail(kKilnInvalidArgument, what + " is bound with script_bind_allocation");
  }
  if (!data && size) return script->instance()->Fail(kKilnInvalidArgument, "script_set_global: data is NULL");
  std::lock_guard<std::mutex> lock(script->module->device->run_mutex);
  if (size) memcpy(address, data, static_cast<size_t>(size));
  return kKilnOk;
}

KilnStatus ScriptGetGlobal(KilnHalScript* handle, const char* name, uint64_t size, void* out_data) {
  Script* script = AsScript(handle);
  SAMPLE_REQUIRE(script);
  const Global* global = nullptr;
  void* address = nullptr;
  if (KilnStatus status = FindGlobal(script, name, size, "script_get_global", &global, &address);
      status != kKilnOk) {
    return status;
  }
  if (!out_data && size)
    return script->instance()->Fail(kKilnInvalidArgument, "script_get_global: out_data is NULL");
  std::lock_guard<std::mutex> lock(script->module->device->run_mutex);
  if (size) memcpy(out_data, address, static_cast<size_t>(size));
  return kKilnOk;
}

// Whether every cell of a view lies in its buffer and (for an output) no two cells overlap.
KilnStatus CheckView(Instance* instance, const KilnHalBufferView& view, uint32_t element_size,
                     const uint32_t dims[3], bool is_output, const std::string& what) {
  char problem[KILN_HAL_PROBLEM_SIZE];
  const uint64_t buffer_size = view.buffer ? AsBuffer(view.buffer)->size : 0;
  if (kiln_hal_check_view(&view, buffer_size, element_size, dims, is_output ? KILN_HAL_VIEW_OUTPUT : 0u,
                          problem, sizeof(problem))) {
    return kKilnOk;
  }
  return instance->Fail(kKilnInvalidArgument, what + ": " + problem);
}

KilnStatus ScriptBindAllocation(KilnHalScript* handle, const char* name, const KilnHalBufferView* in_view,
                                uint32_t element_type, uint32_t vector_size, uint32_t dim_x, uint32_t dim_y,
                                uint32_t dim_z) {
  Script* script = AsScript(handle);
  SAMPLE_REQUIRE(script);
  Instance* instance = script->instance();
  const Global* global = nullptr;
  void* address = nullptr;
  if (KilnStatus status =
          FindGlobal(script, name, sizeof(void*), "script_bind_allocation", &global, &address);
      status != kKilnOk) {
    return status;
  }
  const std::string what = "script " + script->module->name + ", global " + global->name;
  if (!(global->flags & (KILN_HAL_GLOBAL_ALLOCATION | KILN_HAL_GLOBAL_POINTER))) {
    return instance->Fail(kKilnInvalidArgument, what + ": not an allocation or pointer global");
  }
  void** slot = static_cast<void**>(address);
  std::lock_guard<std::mutex> lock(script->module->device->run_mutex);
  if (!in_view) {
    *slot = nullptr;
    return kKilnOk;
  }
  KilnHalBufferView view;
  if (!KILN_HAL_READ_STRUCT(in_view, &view))
    return instance->Fail(kKilnInvalidArgument, what + ": view struct_size too small");
  if (dim_x == 0) return instance->Fail(kKilnInvalidArgument, what + ": dim_x must be at least 1");
  const uint32_t dims[3] = {dim_x, std::max(dim_y, 1u), std::max(dim_z, 1u)};
  if (KilnStatus status = CheckView(instance, view, view.element_size, dims, false, what); status != kKilnOk)
    return status;
  if (view.stride_x != view.element_size) {
    return instance->Fail(kKilnInvalidArgument, what + ": an allocation must be packed along x");
  }
  uint8_t* data = AsBuffer(view.buffer)->data + view.offset;
  if (global->flags & KILN_HAL_GLOBAL_POINTER) {
    *slot = data;
    return kKilnOk;
  }
  script->bound.push_back(std::make_unique<KilnKernelAllocation>(
      KilnKernelAllocation{sizeof(KilnKernelAllocation), view.element_size, element_type, vector_size, dim_x,
                           dim_y, dim_z, 0, view.stride_y, view.stride_z, data}));
  *slot = script->bound.back().get();
  return kKilnOk;
}

KilnStatus ScriptInvoke(KilnHalScript* handle, uint32_t invokable_index, const void* args,
                        uint64_t args_size) {
  Script* script = AsScript(handle);
  SAMPLE_REQUIRE(script);
  Instance* instance = script->instance();
  Module* module = script->module;
  char problem[KILN_HAL_PROBLEM_SIZE];
  if (!kiln_hal_check_index("invokable", invokable_index, module->invokables.size(), problem,
                            sizeof(problem))) {
    return instance->Fail(kKilnInvalidArgument, "script " + module->name + ": " + problem);
  }
  const Invokable& invokable = module->invokables[invokable_index];
  if (args_size != invokable.args_size || (args_size && !args)) {
    return instance->Fail(kKilnInvalidArgument, "script " + module->name + ", invokable " + invokable.name +
                                                    ": takes " + std::to_string(invokable.args_size) +
                                                    " bytes of arguments, got " + std::to_string(args_size) +
                                                    (args || !args_size ? "" : " at NULL"));
  }
  if (invokable.level > kDriverLevel) {
    return instance->Fail(kKilnUnsupported, "script " + module->name + ", invokable " + invokable.name +
                                                ": needs kernel HAL level " + LevelString(invokable.level));
  }
  void* fn = LookupOrNull(script, invokable.symbol);
  if (!fn) {
    return instance->Fail(kKilnUnsupported,
                          "script " + module->name + ": the payload does not define " + invokable.symbol);
  }
  std::lock_guard<std::mutex> lock(module->device->run_mutex);
  return RunInvokable(script, fn, args, invokable.name);
}

// ---- Launches ---------------------------------------------------------------------------------------------

KilnStatus CheckDims(Instance* instance, uint32_t x, uint32_t y, uint32_t z, const std::string& what) {
  char problem[KILN_HAL_PROBLEM_SIZE];
  if (kiln_hal_check_extents(x, y, z, kMaxDim, problem, sizeof(problem))) return kKilnOk;
  return instance->Fail(kKilnInvalidArgument, what + ": " + problem);
}

// Fills the launch's input pointers and strides from the caller's views.
KilnStatus ReadInputs(Instance* instance, const KilnHalBufferView* inputs, uint32_t num_inputs,
                      const std::vector<uint32_t>& sizes, const uint32_t dims[3], const std::string& what,
                      KilnKernelLaunch* launch) {
  char problem[KILN_HAL_PROBLEM_SIZE];
  if (!kiln_hal_check_input_count(num_inputs, sizes.size(), "it", problem, sizeof(problem))) {
    return instance->Fail(kKilnInvalidArgument, what + ": " + problem);
  }
  for (uint32_t i = 0; i < num_inputs; ++i) {
    KilnHalBufferView view;
    if (!KILN_HAL_READ_ELEMENT(inputs, i, &view)) {
      return instance->Fail(kKilnInvalidArgument, what + ": input " + std::to_string(i) + " is missing");
    }
    if (KilnStatus status =
            CheckView(instance, view, sizes[i], dims, false, what + ", input " + std::to_string(i));
        status != kKilnOk) {
      return status;
    }
    launch->in[i] = AsBuffer(view.buffer)->data + view.offset;
    launch->in_stride_x[i] = view.stride_x;
    launch->in_stride_y[i] = view.stride_y;
    launch->in_stride_z[i] = view.stride_z;
  }
  return kKilnOk;
}

void StartLaunch(Script* script, uint32_t num_inputs, const uint32_t dims[3], KilnKernelLaunch* launch) {
  memset(launch, 0, sizeof(*launch));
  launch->struct_size = sizeof(*launch);
  launch->abi_version = KILN_KERNEL_ABI_VERSION;
  launch->num_inputs = num_inputs;
  launch->dim_x = dims[0];
  launch->dim_y = dims[1];
  launch->dim_z = dims[2];
  launch->script = script;
}

KilnStatus PrepareForEach(Script* script, const KilnHalForEachDesc* in_desc, Launch* out) {
  Instance* instance = script->instance();
  Module* module = script->module;
  KilnHalForEachDesc desc;
  if (!KILN_HAL_READ_STRUCT(in_desc, &desc)) {
    return instance->Fail(kKilnInvalidArgument,
                          "launch_for_each: desc is NULL or its struct_size is too small");
  }
  char problem[KILN_HAL_PROBLEM_SIZE];
  if (!kiln_hal_check_index("kernel", desc.kernel_index, module->kernels.size(), problem, sizeof(problem))) {
    return instance->Fail(kKilnInvalidArgument, "script " + module->name + ": " + problem);
  }
  const Kernel& kernel = module->kernels[desc.kernel_index];
  const std::string what = "script " + module->name + ", kernel " + kernel.name;
  if (!kernel.unsupported_reason.empty()) {
    return instance->Fail(kKilnUnsupported, what + ": cannot run here: " + kernel.unsupported_reason);
  }
  if (KilnStatus status = CheckDims(instance, desc.dim_x, desc.dim_y, desc.dim_z, what); status != kKilnOk)
    return status;
  const uint32_t dims[3] = {desc.dim_x, desc.dim_y, desc.dim_z};
  StartLaunch(script, desc.num_inputs, dims, &out->launch);
  if (KilnStatus status =
          ReadInputs(instance, desc.inputs, desc.num_inputs, kernel.input_sizes, dims, what, &out->launch);
      status != kKilnOk) {
    return status;
  }
  const bool has_output = kernel.signature & KILN_HAL_SIG_OUT;
  if (!kiln_hal_check_output(has_output, desc.output != nullptr, problem, sizeof(problem))) {
    return instance->Fail(kKilnInvalidArgument, what + ": " + problem);
  }
  if (has_output) {
    KilnHalBufferView view;
    if (!KILN_HAL_READ_STRUCT(desc.output, &view))
      return instance->Fail(kKilnInvalidArgument, what + ": output view too small");
    if (KilnStatus status = CheckView(instance, view, kernel.output_size, dims, true, what + ", output");
        status != kKilnOk) {
      return status;
    }
    out->launch.out = AsBuffer(view.buffer)->data + view.offset;
    out->launch.out_stride_x = view.stride_x;
    out->launch.out_stride_y = view.stride_y;
    out->launch.out_stride_z = view.stride_z;
  }
  if (!kiln_hal_check_usr_data(desc.usr_data, desc.usr_size, problem, sizeof(problem))) {
    return instance->Fail(kKilnInvalidArgument, what + ": " + problem);
  }
  if (desc.usr_size > 0) {
    const uint8_t* usr = static_cast<const uint8_t*>(desc.usr_data);
    out->usr_copy.assign(usr, usr + desc.usr_size);
    out->launch.usr_data = out->usr_copy.data();
    out->launch.usr_size = out->usr_copy.size();
  }
  out->script = script;
  out->index = desc.kernel_index;
  return kKilnOk;
}

KilnStatus PrepareReduce(Script* script, const KilnHalReduceDesc* in_desc, uint64_t result_size, void* result,
                         Launch* out) {
  Instance* instance = script->instance();
  Module* module = script->module;
  KilnHalReduceDesc desc;
  if (!KILN_HAL_READ_STRUCT(in_desc, &desc)) {
    return instance->Fail(kKilnInvalidArgument,
                          "launch_reduce: desc is NULL or its struct_size is too small");
  }
  char problem[KILN_HAL_PROBLEM_SIZE];
  if (!kiln_hal_check_index("reduction", desc.reduction_index, module->reductions.size(), problem,
                            sizeof(problem))) {
    return instance->Fail(kKilnInvalidArgument, "script " + module->name + ": " + problem);
  }
  const Reduction& reduction = module->reductions[desc.reduction_index];
  const std::string what = "script " + module->name + ", reduction " + reduction.name;
  if (!reduction.unsupported_reason.empty()) {
    return instance->Fail(kKilnUnsupported, what + ": cannot run here: " + reduction.unsupported_reason);
  }
  if (KilnStatus status = CheckDims(instance, desc.dim_x, desc.dim_y, desc.dim_z, what); status != kKilnOk)
    return status;
  if (!kiln_hal_check_result(result, result_size, reduction.result_size, problem, sizeof(problem))) {
    return instance->Fail(kKilnInvalidArgument, what + ": " + problem);
  }
  const uint32_t dims[3] = {desc.dim_x, desc.dim_y, desc.dim_z};
  StartLaunch(script, desc.num_inputs, dims, &out->launch);
  if (KilnStatus status =
          ReadInputs(instance, desc.inputs, desc.num_inputs, reduction.input_sizes, dims, what, &out->launch);
      status != kKilnOk) {
    return status;
  }
  out->script = script;
  out->is_reduction = true;
  out->index = desc.reduction_index;
  out->result = result;
  return kKilnOk;
}

// Runs a prepared launch on the calling thread: the kernel's expanded entry once per (y, z) row.
KilnStatus RunLaunch(Launch& launch) {
  Script* script = launch.script;
  Module* module = script->module;
  std::lock_guard<std::mutex> lock(module->device->run_mutex);
  const KilnKernelLaunch& l = launch.launch;
  std::string name;
  RunScope scope(script);
  if (!launch.is_reduction) {
    const Kernel& kernel = module->kernels[launch.index];
    name = "kernel " + kernel.name;
    void* fn = LookupOrNull(script, kernel.symbol);
    if (!fn)
      return script->instance()->Fail(kKilnInvalidModel,
                                      "script " + module->name + ": cannot resolve " + kernel.symbol);
    for (uint32_t z = 0; z < l.dim_z; ++z) {
      for (uint32_t y = 0; y < l.dim_y; ++y) CallExpand(fn, &l, y, z);
    }
  } else {
    const Reduction& reduction = module->reductions[launch.index];
    name = "reduction " + reduction.name;
    void* fns[4];
    for (int i = 0; i < 4; ++i) {
      if (!(fns[i] = LookupOrNull(script, reduction.symbols[i]))) {
        return script->instance()->Fail(
            kKilnInvalidModel, "script " + module->name + ": cannot resolve " + reduction.symbols[i]);
      }
    }
    // One accumulator is enough on one thread, so the combiner is never needed.
    const size_t alignment = reduction.accumulator_alignment;
    std::vector<uint8_t> storage(std::max<size_t>(reduction.accumulator_size, 1) + alignment);
    void* accumulator = reinterpret_cast<void*>(
        (reinterpret_cast<uintptr_t>(storage.data()) + alignment - 1) / alignment * alignment);
    CallUnary(fns[0], accumulator);
    for (uint32_t z = 0; z < l.dim_z; ++z) {
      for (uint32_t y = 0; y < l.dim_y; ++y) CallAccum(fns[1], &l, accumulator, y, z);
    }
    CallBinary(fns[3], launch.result, accumulator);
  }
  if (scope.failure().empty()) return kKilnOk;
  return script->instance()->Fail(kKilnError,
                                  "script " + module->name + ", " + name + ": " + scope.failure());
}

KilnStatus LaunchForEach(KilnHalScript* handle, const KilnHalForEachDesc* desc) {
  Script* script = AsScript(handle);
  SAMPLE_REQUIRE(script);
  Launch launch;
  if (KilnStatus status = PrepareForEach(script, desc, &launch); status != kKilnOk) return status;
  return RunLaunch(launch);
}

KilnStatus LaunchReduce(KilnHalScript* handle, const KilnHalReduceDesc* desc, uint64_t result_size,
                        void* out_result) {
  Script* script = AsScript(handle);
  SAMPLE_REQUIRE(script);
  Launch launch;
  if (KilnStatus status = PrepareReduce(script, desc, result_size, out_result, &launch); status != kKilnOk) {
    return status;
  }
  return RunLaunch(launch);
}

// ---- Batches and fences -----------------------------------------------------------------------------------
// A synchronous device: submit runs the batch to completion, so a fence is born signalled. A driver with a
// queue would hand the batch to it here and signal the fence from its completion callback.

KilnStatus BatchCreate(KilnHalDevice* handle, KilnHalBatch** out_batch) {
  Device* device = AsDevice(handle);
  SAMPLE_REQUIRE(device);
  if (!out_batch) return device->instance->Fail(kKilnInvalidArgument, "batch_create: out_batch is NULL");
  Batch* batch = new Batch;
  batch->device = device;
  ++device->live_objects;
  *out_batch = reinterpret_cast<KilnHalBatch*>(batch);
  return kKilnOk;
}

KilnStatus BatchDestroy(KilnHalBatch* handle) {
  Batch* batch = AsBatch(handle);
  SAMPLE_REQUIRE(batch);
  --batch->device->live_objects;
  delete batch;
  return kKilnOk;
}

KilnStatus BatchRecordForEach(KilnHalBatch* handle, KilnHalScript* script, const KilnHalForEachDesc* desc) {
  Batch* batch = AsBatch(handle);
  SAMPLE_REQUIRE(batch);
  if (!script)
    return batch->device->instance->Fail(kKilnInvalidArgument, "batch_record_for_each: script is NULL");
  auto launch = std::make_unique<Launch>();
  if (KilnStatus status = PrepareForEach(AsScript(script), desc, launch.get()); status != kKilnOk)
    return status;
  batch->launches.push_back(std::move(launch));
  return kKilnOk;
}

KilnStatus BatchRecordReduce(KilnHalBatch* handle, KilnHalScript* script, const KilnHalReduceDesc* desc,
                             uint64_t result_size, void* out_result) {
  Batch* batch = AsBatch(handle);
  SAMPLE_REQUIRE(batch);
  if (!script)
    return batch->device->instance->Fail(kKilnInvalidArgument, "batch_record_reduce: script is NULL");
  auto launch = std::make_unique<Launch>();
  if (KilnStatus status = PrepareReduce(AsScript(script), desc, result_size, out_result, launch.get());
      status != kKilnOk) {
    return status;
  }
  batch->launches.push_back(std::move(launch));
  return kKilnOk;
}

KilnStatus BatchSubmit(KilnHalBatch* handle, KilnHalFence** out_fence) {
  Batch* batch = AsBatch(handle);
  SAMPLE_REQUIRE(batch);
  if (!out_fence)
    return batch->device->instance->Fail(kKilnInvalidArgument, "batch_submit: out_fence is NULL");
  KilnStatus status = kKilnOk;
  for (auto& launch : batch->launches) {
    if ((status = RunLaunch(*launch)) != kKilnOk) break;  // its message was reported as it failed
  }
  ++batch->device->live_objects;
  *out_fence = reinterpret_cast<KilnHalFence*>(new Fence{batch->device, status});
  return kKilnOk;
}

KilnStatus FenceWait(KilnHalFence* handle, uint64_t timeout_ns, bool* out_done) {
  Fence* fence = AsFence(handle);
  SAMPLE_REQUIRE(fence);
  if (!out_done) return fence->device->instance->Fail(kKilnInvalidArgument, "fence_wait: out_done is NULL");
  *out_done = true;
  return fence->status;
}

KilnStatus FenceDestroy(KilnHalFence* handle) {
  Fence* fence = AsFence(handle);
  SAMPLE_REQUIRE(fence);
  --fence->device->live_objects;
  delete fence;
  return kKilnOk;
}

}  // namespace
}  // namespace kiln_sample

// ---- The entry point
// ----------------------------------------------------------------------------------------

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
