// What the CPU driver's files share: its objects (what the HAL's opaque handles point at), the launch a
// forEach or reduce becomes once checked, and the functions one area calls in another. The driver is split by
// the HAL's areas so that each file reads on its own: driver.cc (instance, device, buffers and the function
// table), module.cc, script.cc, launch.cc, batch.cc and runtime_services.cc (what kernel code calls back).
// Private to backends/cpu: nothing else includes it.
#ifndef KILN_BACKENDS_CPU_DRIVER_INTERNAL_H_
#define KILN_BACKENDS_CPU_DRIVER_INTERNAL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backends/common/driver_util.h"
#include "backends/cpu/jit.h"
#include "backends/cpu/thread_pool.h"
#include "kiln/hal.h"
#include "kiln/kernel_abi.h"

#ifndef KILN_CPU_DRIVER_VERSION
#define KILN_CPU_DRIVER_VERSION "0"
#endif

namespace kiln {
namespace cpu {

constexpr uint32_t kMaxDim = 1u << 30;
constexpr uint32_t kBufferAlignment = 64;
const uint32_t kDriverLevel = KILN_HAL_LEVEL(KILN_KERNEL_HAL_LEVEL_MAJOR, KILN_KERNEL_HAL_LEVEL_MINOR);

// Calls into JIT-compiled code. The code carries no -fsanitize=function type signature in front of it, so the
// sanitizer's check (which reads bytes before the callee) must not run on these calls.
#if defined(__clang__)
#define KILN_NO_SANITIZE_FUNCTION __attribute__((no_sanitize("function")))
#else
#define KILN_NO_SANITIZE_FUNCTION
#endif

using driver::CheckView;
using driver::LevelString;
using driver::ReadElement;
using driver::ReadStruct;
using driver::WriteStruct;

// ---- Driver objects ---------------------------------------------------------------------------------------

struct Instance;
struct Module;
struct Script;

struct Instance : driver::ServicesClient {
  std::string cache_dir;
  uint32_t num_threads = 1;
  TargetSpec target;
  std::string cpu_vendor;
  std::string cpu_model;

  std::mutex mutex;  // guards the lazily created members below
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<JitLinker> linker;
  int open_devices = 0;
};

struct FenceState;
struct Batch;

struct Device {
  Instance* instance;
  std::atomic<int> live_objects{0};
  // Batches run on one submission thread per device, in submission order.
  std::mutex queue_mutex;
  std::condition_variable queue_wake;
  std::deque<std::pair<Batch*, std::shared_ptr<FenceState>>> queue;
  std::thread submitter;
  bool stopping = false;
};

struct Buffer {
  Device* device;
  uint8_t* data;
  uint64_t size;
  bool owned;
};

struct KernelInfo {
  std::string name;
  std::string symbol;
  uint32_t signature = 0;
  uint32_t level = 0;
  std::vector<uint32_t> input_sizes;
  uint32_t output_size = 0;
  bool supported = false;
  std::string reason;
  int link_index = -1;
};

struct GlobalInfo {
  std::string name;
  uint32_t flags = 0;
  uint64_t size = 0;
  int link_index = -1;
};

struct InvokableInfo {
  std::string name;
  std::string symbol;
  uint32_t args_size = 0;
  int link_index = -1;
};

struct ReductionInfo {
  std::string name;
  std::string symbols[4];  // init, accum, combine, out
  uint32_t level = 0;
  std::vector<uint32_t> input_sizes;
  uint32_t accumulator_size = 0;
  uint32_t accumulator_alignment = 1;
  uint32_t result_size = 0;
  bool supported = false;
  std::string reason;
  int link_index[4] = {-1, -1, -1, -1};
};

struct Module {
  Device* device;
  std::string name;
  std::string object;
  std::vector<KernelInfo> kernels;
  std::vector<GlobalInfo> globals;
  std::vector<InvokableInfo> invokables;
  std::vector<ReductionInfo> reductions;
  std::vector<std::string> link_names;  // what each script resolves, in this order
  int init_link_index = -1;
  KilnHalModuleInfo info{};
  std::atomic<int> live_scripts{0};
};

struct Script {
  Module* module;
  void* user_data;
  JitLinker::Image* image = nullptr;
  std::vector<void*> addresses;  // parallel to module->link_names
  std::mutex owned_mutex;        // guards the two lists below, which kernels may grow from any thread
  std::unordered_map<std::string, std::unique_ptr<KilnKernelAllocation>> bound_allocations;
  std::vector<std::pair<std::unique_ptr<KilnKernelAllocation>, void*>> created_allocations;

  Instance* instance() const { return module->device->instance; }
  void* Address(int link_index) const { return link_index < 0 ? nullptr : addresses[link_index]; }
};

// Failures raised by runtime services while kernel code runs (an out-of-range rsGetElementAt, a failed nested
// rsForEach): recorded here, and turned into the launch's or invocation's status when it returns.
struct RunState {
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::string message;
  // kKilnInvalidArgument for the kernel's own bad access (kiln/hal.h, "Launches"), kKilnError otherwise.
  KilnStatus status = kKilnError;
  void Fail(const std::string& text, KilnStatus why = kKilnError) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!failed.load()) {
      message = text;
      status = why;
    }
    failed.store(true);
  }
};

// The script and run whose kernel code runs on this thread, for the runtime services (runtime_services.cc).
extern thread_local Script* t_script;
extern thread_local RunState* t_run_state;

// Makes a script and run current on this thread for the runtime services, restoring the previous ones (a
// nested rsForEach) on exit.
class CurrentScope {
 public:
  CurrentScope(Script* script, RunState* state) : saved_script_(t_script), saved_state_(t_run_state) {
    t_script = script;
    t_run_state = state;
  }
  ~CurrentScope() {
    t_script = saved_script_;
    t_run_state = saved_state_;
  }

 private:
  Script* saved_script_;
  RunState* saved_state_;
};

// ---- Launches ---------------------------------------------------------------------------------------------

struct Range {
  uint32_t begin[3] = {0, 0, 0};
  uint32_t end[3] = {1, 1, 1};
};

// A validated launch, ready to run (or to sit in a batch).
struct PreparedLaunch {
  Script* script = nullptr;
  bool is_reduction = false;
  uint32_t index = 0;  // kernel or reduction
  KilnKernelLaunch launch{};
  Range range;
  uint64_t bytes_per_cell = 1;
  std::vector<uint8_t> usr_copy;
  void* result = nullptr;  // reductions
};

// A runtime service kernel code imports, by name (runtime_services.cc).
struct RuntimeSymbol {
  const char* name;
  void* address;
};

// ---- Handles ----------------------------------------------------------------------------------------------

inline Instance* AsInstance(KilnHalInstance* h) { return reinterpret_cast<Instance*>(h); }
inline Device* AsDevice(KilnHalDevice* h) { return reinterpret_cast<Device*>(h); }
inline Buffer* AsBuffer(KilnHalBuffer* h) { return reinterpret_cast<Buffer*>(h); }
inline Module* AsModule(KilnHalModule* h) { return reinterpret_cast<Module*>(h); }
inline Script* AsScript(KilnHalScript* h) { return reinterpret_cast<Script*>(h); }

// Used where no instance is at hand (a NULL handle): nothing to report through, so only the status tells.
#define KILN_CPU_REQUIRE(cond)                \
  do {                                        \
    if (!(cond)) return kKilnInvalidArgument; \
  } while (0)

// ---- Across files -----------------------------------------------------------------------------------------
// driver.cc fills the HAL table with the entry points below; the rest is what one area needs from another.

// launch.cc
uint64_t CellBytes(const std::vector<uint32_t>& inputs, uint32_t output);
KilnStatus RunPrepared(PreparedLaunch& p);
KilnStatus PrepareForEach(Script* script, const KilnHalForEachDesc* in_desc, PreparedLaunch* out);
KilnStatus PrepareReduce(Script* script, const KilnHalReduceDesc* in_desc, uint64_t result_size, void* result,
                         PreparedLaunch* out);
KilnStatus LaunchForEach(KilnHalScript* handle, const KilnHalForEachDesc* desc);
KilnStatus LaunchReduce(KilnHalScript* handle, const KilnHalReduceDesc* desc, uint64_t result_size,
                        void* out_result);

// runtime_services.cc
const std::vector<RuntimeSymbol>& RuntimeSymbols();

// module.cc
KilnStatus ModuleLoad(KilnHalDevice* handle, const KilnHalModuleDesc* in_desc, KilnHalModule** out_module);
KilnStatus ModuleUnload(KilnHalModule* handle);
KilnStatus ModuleGetInfo(KilnHalModule* handle, KilnHalModuleInfo* out_info);
KilnStatus ModuleKernelSupported(KilnHalModule* handle, uint32_t kernel_index, bool* out_supported,
                                 const char** out_reason);

// script.cc
KilnStatus ScriptCreate(KilnHalModule* handle, void* script_user_data, KilnHalScript** out_script);
KilnStatus ScriptDestroy(KilnHalScript* handle);
KilnStatus ScriptSetGlobal(KilnHalScript* handle, const char* name, const void* data, uint64_t size);
KilnStatus ScriptGetGlobal(KilnHalScript* handle, const char* name, uint64_t size, void* out_data);
KilnStatus ScriptBindAllocation(KilnHalScript* handle, const char* name, const KilnHalBufferView* in_view,
                                uint32_t element_type, uint32_t vector_size, uint32_t dim_x, uint32_t dim_y,
                                uint32_t dim_z);
KilnStatus ScriptInvoke(KilnHalScript* handle, uint32_t invokable_index, const void* args,
                        uint64_t args_size);

// batch.cc
KilnStatus BatchCreate(KilnHalDevice* handle, KilnHalBatch** out_batch);
KilnStatus BatchDestroy(KilnHalBatch* handle);
KilnStatus BatchRecordForEach(KilnHalBatch* handle, KilnHalScript* script, const KilnHalForEachDesc* desc);
KilnStatus BatchRecordReduce(KilnHalBatch* handle, KilnHalScript* script, const KilnHalReduceDesc* desc,
                             uint64_t result_size, void* out_result);
KilnStatus BatchSubmit(KilnHalBatch* handle, KilnHalFence** out_fence);
KilnStatus FenceWait(KilnHalFence* handle, uint64_t timeout_ns, bool* out_done);
KilnStatus FenceDestroy(KilnHalFence* handle);

}  // namespace cpu
}  // namespace kiln

#endif  // KILN_BACKENDS_CPU_DRIVER_INTERNAL_H_
