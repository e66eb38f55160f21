// What the sample driver's files share: the objects that the opaque HAL handles point at, and the few
// functions one file calls in another. Making the template yours starts here: Buffer is where your device
// memory goes (an allocation handle instead of host bytes), Device is where your queue and its context go,
// Module keeps your compiled code, and Launch holds what your dispatch needs once a launch has been checked.
#ifndef KILN_SAMPLE_DRIVER_SAMPLE_DRIVER_H_
#define KILN_SAMPLE_DRIVER_SAMPLE_DRIVER_H_

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kiln/hal.h"
#include "kiln/hal_util.h"
#include "kiln/kernel_abi.h"
#include "sample_jit.h"

namespace kiln_sample {

// The kernel HAL level this driver's runtime services implement (kernel_abi.h).
const uint32_t kDriverLevel = KILN_HAL_LEVEL(KILN_KERNEL_HAL_LEVEL_MAJOR, KILN_KERNEL_HAL_LEVEL_MINOR);
constexpr uint32_t kBufferAlignment = 64;
constexpr uint32_t kMaxDim = 1u << 24;
constexpr uint64_t kMaxBufferSize = uint64_t{1} << 34;

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

inline Instance* AsInstance(KilnHalInstance* h) { return reinterpret_cast<Instance*>(h); }
inline Device* AsDevice(KilnHalDevice* h) { return reinterpret_cast<Device*>(h); }
inline Buffer* AsBuffer(KilnHalBuffer* h) { return reinterpret_cast<Buffer*>(h); }
inline Module* AsModule(KilnHalModule* h) { return reinterpret_cast<Module*>(h); }
inline Script* AsScript(KilnHalScript* h) { return reinterpret_cast<Script*>(h); }
inline Batch* AsBatch(KilnHalBatch* h) { return reinterpret_cast<Batch*>(h); }
inline Fence* AsFence(KilnHalFence* h) { return reinterpret_cast<Fence*>(h); }

// A NULL handle leaves no instance to report through: the status alone tells.
#define SAMPLE_REQUIRE(cond)                  \
  do {                                        \
    if (!(cond)) return kKilnInvalidArgument; \
  } while (0)

// The script whose code runs on this thread, and where the runtime services put a complaint about it
// (sample_runtime.cc).
extern thread_local Script* t_script;
extern thread_local std::string* t_failure;

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

// ---- Across files -----------------------------------------------------------------------------------------
// sample_driver.cc puts the entry points below into the driver's table; the rest is what one file needs from
// another.

// sample_module.cc: modules and scripts.
KilnStatus ModuleLoad(KilnHalDevice* handle, const KilnHalModuleDesc* in_desc, KilnHalModule** out_module);
KilnStatus ModuleUnload(KilnHalModule* handle);
KilnStatus ModuleGetInfo(KilnHalModule* handle, KilnHalModuleInfo* out_info);
KilnStatus ModuleKernelSupported(KilnHalModule* handle, uint32_t kernel_index, bool* out_supported,
                                 const char** out_reason);
KilnStatus ScriptCreate(KilnHalModule* handle, void* script_user_data, KilnHalScript** out_script);
KilnStatus ScriptDestroy(KilnHalScript* handle);
KilnStatus ScriptSetGlobal(KilnHalScript* handle, const char* name, const void* data, uint64_t size);
KilnStatus ScriptGetGlobal(KilnHalScript* handle, const char* name, uint64_t size, void* out_data);
KilnStatus ScriptBindAllocation(KilnHalScript* handle, const char* name, const KilnHalBufferView* in_view,
                                uint32_t element_type, uint32_t vector_size, uint32_t dim_x, uint32_t dim_y,
                                uint32_t dim_z);
KilnStatus ScriptInvoke(KilnHalScript* handle, uint32_t invokable_index, const void* args,
                        uint64_t args_size);
KilnStatus CheckView(Instance* instance, const KilnHalBufferView& view, uint32_t element_size,
                     const uint32_t dims[3], bool is_output, const std::string& what);

// sample_launch.cc: launches, batches and fences.
KilnStatus LaunchForEach(KilnHalScript* handle, const KilnHalForEachDesc* desc);
KilnStatus LaunchReduce(KilnHalScript* handle, const KilnHalReduceDesc* desc, uint64_t result_size,
                        void* out_result);
KilnStatus BatchCreate(KilnHalDevice* handle, KilnHalBatch** out_batch);
KilnStatus BatchDestroy(KilnHalBatch* handle);
KilnStatus BatchRecordForEach(KilnHalBatch* handle, KilnHalScript* script, const KilnHalForEachDesc* desc);
KilnStatus BatchRecordReduce(KilnHalBatch* handle, KilnHalScript* script, const KilnHalReduceDesc* desc,
                             uint64_t result_size, void* out_result);
KilnStatus BatchSubmit(KilnHalBatch* handle, KilnHalFence** out_fence);
KilnStatus FenceWait(KilnHalFence* handle, uint64_t timeout_ns, bool* out_done);
KilnStatus FenceDestroy(KilnHalFence* handle);

// sample_runtime.cc: the runtime services by name, and calls into kernel code (`fn` is its address).
std::vector<std::pair<std::string, void*>> RuntimeSymbols();
void CallExpand(void* fn, const KilnKernelLaunch* l, uint32_t y, uint32_t z);
void CallAccum(void* fn, const KilnKernelLaunch* l, void* acc, uint32_t y, uint32_t z);
void CallUnary(void* fn, void* a);
void CallBinary(void* fn, void* a, const void* b);
void CallInvoke(void* fn, const void* args);
void* LookupOrNull(Script* script, const std::string& symbol);

}  // namespace kiln_sample

#endif  // KILN_SAMPLE_DRIVER_SAMPLE_DRIVER_H_
