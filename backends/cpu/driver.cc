// The CPU driver: kiln/hal.h implemented on the host. Modules are compiled from their "llvm-bc" payload (or
// loaded from the object cache), each script instance links its own copy (so globals are per script), and
// launches are split into ~16 KiB slices that the thread pool's threads and the caller take in turn.
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "backends/common/driver_util.h"
#include "backends/cpu/cpu_driver.h"
#include "backends/cpu/jit.h"
#include "backends/cpu/object_cache.h"
#include "backends/cpu/thread_pool.h"
#include "kiln/hal.h"
#include "kiln/hal_util.h"
#include "kiln/kernel_abi.h"

#ifndef KILN_CPU_DRIVER_VERSION
#define KILN_CPU_DRIVER_VERSION "0"
#endif

namespace kiln {
namespace cpu {
namespace {

// The output bytes one slice of a launch covers, as RenderScript's reference driver chose: small enough that
// every thread gets many slices (load balance), big enough that the atomic counter is not contended.
constexpr uint64_t kSliceBytes = 16 * 1024;
constexpr uint32_t kMaxDim = 1u << 30;
constexpr uint32_t kBufferAlignment = 64;
const uint32_t kDriverLevel = KILN_HAL_LEVEL(KILN_KERNEL_HAL_LEVEL_MAJOR, KILN_KERNEL_HAL_LEVEL_MINOR);

using ExpandFn = void (*)(const KilnKernelLaunch*, uint32_t, uint32_t, uint32_t, uint32_t);
using InvokeFn = void (*)(const void*);
using ReduceInitFn = void (*)(void*);
using ReduceAccumFn = void (*)(const KilnKernelLaunch*, void*, uint32_t, uint32_t, uint32_t, uint32_t);
using ReduceCombineFn = void (*)(void*, const void*);
using ReduceOutFn = void (*)(void*, const void*);

// Calls into JIT-compiled code. The code carries no -fsanitize=function type signature in front of it, so the
// sanitizer's check (which reads bytes before the callee) must not run on these calls.
#if defined(__clang__)
#define KILN_NO_SANITIZE_FUNCTION __attribute__((no_sanitize("function")))
#else
#define KILN_NO_SANITIZE_FUNCTION
#endif
KILN_NO_SANITIZE_FUNCTION void CallExpand(ExpandFn fn, const KilnKernelLaunch* launch, uint32_t x0,
                                          uint32_t x1, uint32_t y, uint32_t z) {
  fn(launch, x0, x1, y, z);
}
KILN_NO_SANITIZE_FUNCTION void CallInvoke(InvokeFn fn, const void* args) { fn(args); }
KILN_NO_SANITIZE_FUNCTION void CallInit(ReduceInitFn fn, void* accum) { fn(accum); }
KILN_NO_SANITIZE_FUNCTION void CallAccum(ReduceAccumFn fn, const KilnKernelLaunch* launch, void* accum,
                                         uint32_t x0, uint32_t x1, uint32_t y, uint32_t z) {
  fn(launch, accum, x0, x1, y, z);
}
KILN_NO_SANITIZE_FUNCTION void CallCombine(ReduceCombineFn fn, void* accum, const void* other) {
  fn(accum, other);
}
KILN_NO_SANITIZE_FUNCTION void CallOut(ReduceOutFn fn, void* result, const void* accum) { fn(result, accum); }

using driver::CheckView;
using driver::LevelString;
using driver::ReadElement;
using driver::ReadStruct;
using driver::WriteStruct;

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
  void Fail(const std::string& text) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!failed.load()) message = text;
    failed.store(true);
  }
};

thread_local Script* t_script = nullptr;
thread_local RunState* t_run_state = nullptr;

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

// ---- Launch planning and execution ------------------------------------------------------------------------

struct Range {
  uint32_t begin[3] = {0, 0, 0};
  uint32_t end[3] = {1, 1, 1};
};

// How a launch range is cut into slices: each is either a block of whole rows, or (for rows longer than a
// slice) one chunk of x in one row.
struct SlicePlan {
  uint32_t x_chunk;
  uint32_t chunks_per_row;
  uint32_t rows_per_slice;
  uint64_t num_rows;
  uint32_t num_slices;
};

SlicePlan PlanSlices(const Range& range, uint64_t bytes_per_cell) {
  SlicePlan plan;
  const uint64_t width = range.end[0] - range.begin[0];
  const uint64_t height = range.end[1] - range.begin[1];
  const uint64_t depth = range.end[2] - range.begin[2];
  bytes_per_cell = std::max<uint64_t>(bytes_per_cell, 1);
  plan.num_rows = height * depth;
  if (width * bytes_per_cell > kSliceBytes) {
    // A multiple of 64 cells keeps every chunk but the last a whole number of vector iterations.
    uint64_t chunk = std::max<uint64_t>(64, kSliceBytes / bytes_per_cell / 64 * 64);
    plan.x_chunk = static_cast<uint32_t>(chunk);
    plan.chunks_per_row = static_cast<uint32_t>((width + chunk - 1) / chunk);
    plan.rows_per_slice = 1;
  } else {
    plan.x_chunk = static_cast<uint32_t>(width);
    plan.chunks_per_row = 1;
    plan.rows_per_slice =
        static_cast<uint32_t>(std::max<uint64_t>(1, kSliceBytes / (width * bytes_per_cell)));
  }
  uint64_t row_blocks = (plan.num_rows + plan.rows_per_slice - 1) / plan.rows_per_slice;
  uint64_t slices = row_blocks * plan.chunks_per_row;
  plan.num_slices = static_cast<uint32_t>(std::min<uint64_t>(slices, UINT32_MAX));
  if (slices > UINT32_MAX) {
    // Too many slices to count: fall back to whole rows per slice, still far more slices than threads.
    plan.x_chunk = static_cast<uint32_t>(width);
    plan.chunks_per_row = 1;
    plan.rows_per_slice = static_cast<uint32_t>((plan.num_rows + UINT32_MAX - 1) / UINT32_MAX);
    plan.num_slices = static_cast<uint32_t>((plan.num_rows + plan.rows_per_slice - 1) / plan.rows_per_slice);
  }
  return plan;
}

// Calls row_fn(x_begin, x_end, y, z) for every row piece of slice `slice`.
template <typename RowFn>
void ForEachRowInSlice(const Range& range, const SlicePlan& plan, uint32_t slice, const RowFn& row_fn) {
  const uint64_t block = slice / plan.chunks_per_row;
  const uint32_t chunk = slice % plan.chunks_per_row;
  const uint32_t x0 = range.begin[0] + chunk * plan.x_chunk;
  const uint32_t x1 = std::min<uint64_t>(range.end[0], static_cast<uint64_t>(x0) + plan.x_chunk);
  const uint64_t height = range.end[1] - range.begin[1];
  const uint64_t row_begin = block * plan.rows_per_slice;
  const uint64_t row_end = std::min<uint64_t>(plan.num_rows, row_begin + plan.rows_per_slice);
  for (uint64_t row = row_begin; row < row_end; ++row) {
    row_fn(x0, x1, static_cast<uint32_t>(range.begin[1] + row % height),
           static_cast<uint32_t>(range.begin[2] + row / height));
  }
}

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

uint64_t CellBytes(const std::vector<uint32_t>& inputs, uint32_t output) {
  uint64_t bytes = output;
  for (uint32_t size : inputs) bytes = std::max<uint64_t>(bytes, size);
  return bytes;
}

KilnStatus RunPrepared(PreparedLaunch& p) {
  Script* script = p.script;
  Instance* instance = script->instance();
  ThreadPool& pool = *instance->pool;
  RunState state;
  const SlicePlan plan = PlanSlices(p.range, p.bytes_per_cell);
  if (!p.is_reduction) {
    const KernelInfo& kernel = script->module->kernels[p.index];
    auto fn = reinterpret_cast<ExpandFn>(script->Address(kernel.link_index));
    pool.Run(plan.num_slices, [&](uint32_t slice, uint32_t) {
      CurrentScope scope(script, &state);
      ForEachRowInSlice(p.range, plan, slice, [&](uint32_t x0, uint32_t x1, uint32_t y, uint32_t z) {
        CallExpand(fn, &p.launch, x0, x1, y, z);
      });
    });
    if (state.failed) {
      return instance->Fail(
          kKilnError, "script " + script->module->name + ", kernel " + kernel.name + ": " + state.message);
    }
    return kKilnOk;
  }

  const ReductionInfo& reduction = script->module->reductions[p.index];
  auto init = reinterpret_cast<ReduceInitFn>(script->Address(reduction.link_index[0]));
  auto accum = reinterpret_cast<ReduceAccumFn>(script->Address(reduction.link_index[1]));
  auto combine = reinterpret_cast<ReduceCombineFn>(script->Address(reduction.link_index[2]));
  auto out = reinterpret_cast<ReduceOutFn>(script->Address(reduction.link_index[3]));
  // One accumulator per participating thread, each on its own cache lines.
  const uint32_t slots = pool.num_slots();
  const size_t alignment = std::max<size_t>(64, reduction.accumulator_alignment);
  const size_t stride =
      (std::max<size_t>(reduction.accumulator_size, 1) + alignment - 1) / alignment * alignment;
  std::unique_ptr<uint8_t[]> storage(new uint8_t[stride * slots + alignment]);
  uint8_t* base = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(storage.get()) + alignment - 1) /
                                             alignment * alignment);
  std::vector<uint8_t> used(slots, 0);
  {
    CurrentScope scope(script, &state);
    for (uint32_t slot = 0; slot < slots; ++slot) CallInit(init, base + slot * stride);
  }
  pool.Run(plan.num_slices, [&](uint32_t slice, uint32_t slot) {
    CurrentScope scope(script, &state);
    used[slot] = 1;
    void* accumulator = base + slot * stride;
    ForEachRowInSlice(p.range, plan, slice, [&](uint32_t x0, uint32_t x1, uint32_t y, uint32_t z) {
      CallAccum(accum, &p.launch, accumulator, x0, x1, y, z);
    });
  });
  {
    CurrentScope scope(script, &state);
    int first = -1;
    for (uint32_t slot = 0; slot < slots; ++slot) {
      if (!used[slot]) continue;
      if (first < 0) {
        first = static_cast<int>(slot);
      } else {
        CallCombine(combine, base + first * stride, base + slot * stride);
      }
    }
    CallOut(out, p.result, base + (first < 0 ? 0 : first) * stride);
  }
  if (state.failed) {
    return instance->Fail(kKilnError, "script " + script->module->name + ", reduction " + reduction.name +
                                          ": " + state.message);
  }
  return kKilnOk;
}

KilnStatus CheckDims(Instance* instance, uint32_t dim_x, uint32_t dim_y, uint32_t dim_z,
                     const std::string& what) {
  std::string error;
  if (!driver::CheckLaunchExtents(dim_x, dim_y, dim_z, kMaxDim, what, &error)) {
    return instance->Fail(kKilnInvalidArgument, error);
  }
  return kKilnOk;
}

// Starts `launch` over extents `dims` with the caller's input views, each checked against its buffer and the
// element size the kernel or reduction expects.
KilnStatus StartLaunch(Instance* instance, const KilnHalBufferView* inputs, uint32_t num_inputs,
                       const std::vector<uint32_t>& input_sizes, const uint32_t dims[3],
                       const std::string& what, KilnKernelLaunch* launch) {
  memset(launch, 0, sizeof(*launch));
  launch->struct_size = sizeof(*launch);
  launch->abi_version = KILN_KERNEL_ABI_VERSION;
  launch->num_inputs = num_inputs;
  launch->dim_x = dims[0];
  launch->dim_y = dims[1];
  launch->dim_z = dims[2];
  std::string error;
  for (uint32_t i = 0; i < num_inputs; ++i) {
    KilnHalBufferView view;
    if (!ReadElement(inputs, i, &view)) {
      return instance->Fail(kKilnInvalidArgument, what + ": input " + std::to_string(i) + " is missing");
    }
    if (!CheckView<Buffer>(view, input_sizes[i], dims, false, what + ", input " + std::to_string(i),
                           &error)) {
      return instance->Fail(kKilnInvalidArgument, error);
    }
    launch->in[i] = reinterpret_cast<Buffer*>(view.buffer)->data + view.offset;
    launch->in_stride_x[i] = view.stride_x;
    launch->in_stride_y[i] = view.stride_y;
    launch->in_stride_z[i] = view.stride_z;
  }
  return kKilnOk;
}

KilnStatus PrepareForEach(Script* script, const KilnHalForEachDesc* in_desc, PreparedLaunch* out) {
  Instance* instance = script->instance();
  Module* module = script->module;
  KilnHalForEachDesc desc;
  if (!ReadStruct(in_desc, &desc)) {
    return instance->Fail(kKilnInvalidArgument,
                          "launch_for_each: desc is NULL or its struct_size is too small");
  }
  char problem[KILN_HAL_PROBLEM_SIZE];
  if (!kiln_hal_check_index("kernel", desc.kernel_index, module->kernels.size(), problem, sizeof(problem))) {
    return instance->Fail(kKilnInvalidArgument, "script " + module->name + ": " + problem);
  }
  const KernelInfo& kernel = module->kernels[desc.kernel_index];
  const std::string what = "script " + module->name + ", kernel " + kernel.name;
  if (!kernel.supported)
    return instance->Fail(kKilnUnsupported, what + ": cannot run here: " + kernel.reason);
  if (KilnStatus status = CheckDims(instance, desc.dim_x, desc.dim_y, desc.dim_z, what); status != kKilnOk) {
    return status;
  }
  const bool has_output = kernel.signature & KILN_HAL_SIG_OUT;
  if (!kiln_hal_check_input_count(desc.num_inputs, kernel.input_sizes.size(), "the kernel", problem,
                                  sizeof(problem)) ||
      !kiln_hal_check_output(has_output, desc.output != nullptr, problem, sizeof(problem))) {
    return instance->Fail(kKilnInvalidArgument, what + ": " + problem);
  }
  const uint32_t dims[3] = {desc.dim_x, desc.dim_y, desc.dim_z};
  KilnKernelLaunch& launch = out->launch;
  if (KilnStatus status =
          StartLaunch(instance, desc.inputs, desc.num_inputs, kernel.input_sizes, dims, what, &launch);
      status != kKilnOk) {
    return status;
  }
  std::string error;
  if (has_output) {
    KilnHalBufferView view;
    if (!ReadStruct(desc.output, &view)) {
      return instance->Fail(kKilnInvalidArgument, what + ": output view has a too small struct_size");
    }
    if (!CheckView<Buffer>(view, kernel.output_size, dims, true, what + ", output", &error)) {
      return instance->Fail(kKilnInvalidArgument, error);
    }
    launch.out = reinterpret_cast<Buffer*>(view.buffer)->data + view.offset;
    launch.out_stride_x = view.stride_x;
    launch.out_stride_y = view.stride_y;
    launch.out_stride_z = view.stride_z;
  }
  if (!kiln_hal_check_usr_data(desc.usr_data, desc.usr_size, problem, sizeof(problem))) {
    return instance->Fail(kKilnInvalidArgument, what + ": " + problem);
  }
  if (desc.usr_size > 0) {
    out->usr_copy.assign(static_cast<const uint8_t*>(desc.usr_data),
                         static_cast<const uint8_t*>(desc.usr_data) + desc.usr_size);
    launch.usr_data = out->usr_copy.data();
    launch.usr_size = out->usr_copy.size();
  }
  launch.script = script;
  out->script = script;
  out->is_reduction = false;
  out->index = desc.kernel_index;
  for (int d = 0; d < 3; ++d) out->range.end[d] = dims[d];
  out->bytes_per_cell = CellBytes(kernel.input_sizes, kernel.output_size);
  return kKilnOk;
}

KilnStatus PrepareReduce(Script* script, const KilnHalReduceDesc* in_desc, uint64_t result_size, void* result,
                         PreparedLaunch* out) {
  Instance* instance = script->instance();
  Module* module = script->module;
  KilnHalReduceDesc desc;
  if (!ReadStruct(in_desc, &desc)) {
    return instance->Fail(kKilnInvalidArgument,
                          "launch_reduce: desc is NULL or its struct_size is too small");
  }
  char problem[KILN_HAL_PROBLEM_SIZE];
  if (!kiln_hal_check_index("reduction", desc.reduction_index, module->reductions.size(), problem,
                            sizeof(problem))) {
    return instance->Fail(kKilnInvalidArgument, "script " + module->name + ": " + problem);
  }
  const ReductionInfo& reduction = module->reductions[desc.reduction_index];
  const std::string what = "script " + module->name + ", reduction " + reduction.name;
  if (!reduction.supported) {
    return instance->Fail(kKilnUnsupported, what + ": cannot run here: " + reduction.reason);
  }
  if (KilnStatus status = CheckDims(instance, desc.dim_x, desc.dim_y, desc.dim_z, what); status != kKilnOk) {
    return status;
  }
  if (!kiln_hal_check_result(result, result_size, reduction.result_size, problem, sizeof(problem)) ||
      !kiln_hal_check_input_count(desc.num_inputs, reduction.input_sizes.size(), "the reduction", problem,
                                  sizeof(problem))) {
    return instance->Fail(kKilnInvalidArgument, what + ": " + problem);
  }
  const uint32_t dims[3] = {desc.dim_x, desc.dim_y, desc.dim_z};
  KilnKernelLaunch& launch = out->launch;
  if (KilnStatus status =
          StartLaunch(instance, desc.inputs, desc.num_inputs, reduction.input_sizes, dims, what, &launch);
      status != kKilnOk) {
    return status;
  }
  launch.script = script;
  out->script = script;
  out->is_reduction = true;
  out->index = desc.reduction_index;
  out->result = result;
  for (int d = 0; d < 3; ++d) out->range.end[d] = dims[d];
  out->bytes_per_cell = CellBytes(reduction.input_sizes, 0);
  return kKilnOk;
}

// ---- Runtime services the kernels call (kernel_abi.h)
// -------------------------------------------------------

uint32_t ScalarSize(uint32_t type) {
  switch (type) {
    case kKilnFloat32:
    case kKilnInt32:
    case kKilnUInt32:
      return 4;
    case kKilnUInt8:
    case kKilnInt8:
    case kKilnBool:
      return 1;
    case kKilnInt16:
    case kKilnUInt16:
    case kKilnFloat16:
      return 2;
    case kKilnInt64:
    case kKilnUInt64:
    case kKilnFloat64:
      return 8;
    default:
      return 0;
  }
}

std::string FormatLane(uint32_t type, const uint8_t* p) {
  char text[64];
  switch (type) {
    case kKilnFloat32: {
      float v;
      memcpy(&v, p, 4);
      snprintf(text, sizeof(text), "%g", v);
      break;
    }
    case kKilnFloat64: {
      double v;
      memcpy(&v, p, 8);
      snprintf(text, sizeof(text), "%g", v);
      break;
    }
    case kKilnInt8:
      snprintf(text, sizeof(text), "%d", static_cast<int8_t>(*p));
      break;
    case kKilnUInt8:
    case kKilnBool:
      snprintf(text, sizeof(text), "%u", *p);
      break;
    case kKilnInt16: {
      int16_t v;
      memcpy(&v, p, 2);
      snprintf(text, sizeof(text), "%d", v);
      break;
    }
    case kKilnUInt16:
    case kKilnFloat16: {
      uint16_t v;
      memcpy(&v, p, 2);
      snprintf(text, sizeof(text), type == kKilnFloat16 ? "half(0x%04x)" : "%u", v);
      break;
    }
    case kKilnInt32: {
      int32_t v;
      memcpy(&v, p, 4);
      snprintf(text, sizeof(text), "%d", v);
      break;
    }
    case kKilnUInt32: {
      uint32_t v;
      memcpy(&v, p, 4);
      snprintf(text, sizeof(text), "%u", v);
      break;
    }
    case kKilnInt64: {
      int64_t v;
      memcpy(&v, p, 8);
      snprintf(text, sizeof(text), "%lld", static_cast<long long>(v));
      break;
    }
    case kKilnUInt64: {
      uint64_t v;
      memcpy(&v, p, 8);
      snprintf(text, sizeof(text), "%llu", static_cast<unsigned long long>(v));
      break;
    }
    default:
      snprintf(text, sizeof(text), "<type %u>", type);
  }
  return text;
}

extern "C" void KilnRtDebug(const char* message, uint32_t element_type, uint32_t vector_size,
                            const void* value) {
  Script* script = t_script;
  if (!script) return;
  std::string line = "script " + script->module->name + ": " + (message ? message : "");
  if (element_type == KILN_KERNEL_DEBUG_POINTER) {
    char text[32];
    snprintf(text, sizeof(text), " %p", value);
    line += text;
  } else if (element_type == KILN_KERNEL_DEBUG_MATRIX && value && vector_size <= 4) {
    const float* m = static_cast<const float*>(value);
    for (uint32_t row = 0; row < vector_size; ++row) {
      line += row ? ", [" : " [";
      for (uint32_t col = 0; col < vector_size; ++col) {
        line += (col ? " " : "") +
                FormatLane(kKilnFloat32, reinterpret_cast<const uint8_t*>(&m[col * vector_size + row]));
      }
      line += "]";
    }
  } else if (element_type != kKilnNoType && value && ScalarSize(element_type) && vector_size >= 1 &&
             vector_size <= 4) {
    const uint8_t* lanes = static_cast<const uint8_t*>(value);
    line += vector_size > 1 ? " {" : " ";
    for (uint32_t lane = 0; lane < vector_size; ++lane) {
      line += (lane ? ", " : "") + FormatLane(element_type, lanes + lane * ScalarSize(element_type));
    }
    if (vector_size > 1) line += "}";
  }
  script->instance()->Log(kKilnHalLogDebug, line);
}

extern "C" int32_t KilnRtSendToClient(int32_t cmd_id, const void* data, uint32_t size, int32_t blocking) {
  Script* script = t_script;
  if (!script) return 0;
  const KilnHalServices& services = script->instance()->services;
  if (!services.send_to_client) return 0;
  services.send_to_client(services.user_data, script->user_data, cmd_id, data, size);
  return 1;
}

extern "C" int64_t KilnRtUptimeNanos(void) {
  Script* script = t_script;
  if (script) return static_cast<int64_t>(script->instance()->NowNs());
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
extern "C" int64_t KilnRtUptimeMillis(void) { return KilnRtUptimeNanos() / 1000000; }

extern "C" int64_t KilnRtTime(int64_t* timer) {
  int64_t now = static_cast<int64_t>(::time(nullptr));
  if (timer) *timer = now;
  return now;
}

extern "C" void KilnRtLocaltime(KilnKernelTm* out, int64_t when) {
  if (!out) return;
  time_t t = static_cast<time_t>(when);
  struct tm local;
  memset(&local, 0, sizeof(local));
  localtime_r(&t, &local);
  *out = KilnKernelTm{local.tm_sec,  local.tm_min,  local.tm_hour, local.tm_mday, local.tm_mon,
                      local.tm_year, local.tm_wday, local.tm_yday, local.tm_isdst};
}

extern "C" void KilnRtElementAccessError(const KilnKernelAllocation* allocation, uint32_t x, uint32_t y,
                                         uint32_t z, uint32_t element_size) {
  std::string text = "element access (" + std::to_string(x) + ", " + std::to_string(y) + ", " +
                     std::to_string(z) + ") of " + std::to_string(element_size) + "-byte elements";
  if (allocation) {
    text += " outside an allocation of " + std::to_string(allocation->dim_x) + "x" +
            std::to_string(allocation->dim_y) + "x" + std::to_string(allocation->dim_z) + " " +
            std::to_string(allocation->element_size) + "-byte elements";
  } else {
    text += " through a NULL allocation";
  }
  if (t_run_state) t_run_state->Fail(text);
}

extern "C" KilnKernelAllocation* KilnRtCreateAllocation(uint32_t element_type, uint32_t vector_size,
                                                        uint32_t dim_x, uint32_t dim_y, uint32_t dim_z) {
  Script* script = t_script;
  uint32_t scalar = ScalarSize(element_type);
  if (!script || !scalar || vector_size < 1 || vector_size > 4 || dim_x == 0) return nullptr;
  uint64_t element_size = static_cast<uint64_t>(scalar) * (vector_size == 3 ? 4 : vector_size);
  uint64_t row = element_size * dim_x;
  uint64_t plane = row * std::max<uint32_t>(dim_y, 1);
  unsigned __int128 total = static_cast<unsigned __int128>(plane) * std::max<uint32_t>(dim_z, 1);
  if (total > (uint64_t{1} << 40)) return nullptr;
  Instance* instance = script->instance();
  void* data = instance->Allocate(static_cast<size_t>(total), kBufferAlignment);
  if (!data) return nullptr;
  memset(data, 0, static_cast<size_t>(total));
  auto allocation = std::make_unique<KilnKernelAllocation>();
  *allocation = KilnKernelAllocation{sizeof(KilnKernelAllocation),
                                     static_cast<uint32_t>(element_size),
                                     element_type,
                                     vector_size,
                                     dim_x,
                                     dim_y,
                                     dim_z,
                                     0,
                                     row,
                                     plane,
                                     data};
  KilnKernelAllocation* result = allocation.get();
  std::lock_guard<std::mutex> lock(script->owned_mutex);
  script->created_allocations.emplace_back(std::move(allocation), data);
  return result;
}

extern "C" int32_t KilnRtForEach(const char* kernel_name, const KilnKernelAllocation* const* allocations,
                                 uint32_t num_allocations, const KilnKernelLaunchOptions* options);

struct RuntimeSymbol {
  const char* name;
  void* address;
};

const std::vector<RuntimeSymbol>& RuntimeSymbols() {
  static const std::vector<RuntimeSymbol> symbols = {
      {"__kiln_rt_debug", reinterpret_cast<void*>(&KilnRtDebug)},
      {"__kiln_rt_send_to_client", reinterpret_cast<void*>(&KilnRtSendToClient)},
      {"__kiln_rt_uptime_millis", reinterpret_cast<void*>(&KilnRtUptimeMillis)},
      {"__kiln_rt_uptime_nanos", reinterpret_cast<void*>(&KilnRtUptimeNanos)},
      {"__kiln_rt_time", reinterpret_cast<void*>(&KilnRtTime)},
      {"__kiln_rt_localtime", reinterpret_cast<void*>(&KilnRtLocaltime)},
      {"__kiln_rt_element_access_error", reinterpret_cast<void*>(&KilnRtElementAccessError)},
      {"__kiln_rt_create_allocation", reinterpret_cast<void*>(&KilnRtCreateAllocation)},
      {"__kiln_rt_for_each", reinterpret_cast<void*>(&KilnRtForEach)},
  };
  return symbols;
}

// rsForEach from kernel code: a launch of the current script over allocations (host pointers already).
extern "C" int32_t KilnRtForEach(const char* kernel_name, const KilnKernelAllocation* const* allocations,
                                 uint32_t num_allocations, const KilnKernelLaunchOptions* options) {
  Script* script = t_script;
  RunState* outer = t_run_state;
  auto fail = [&](const std::string& text) {
    if (outer) outer->Fail("rsForEach(" + std::string(kernel_name ? kernel_name : "(null)") + "): " + text);
    return 0;
  };
  if (!script) return 0;
  Module* module = script->module;
  uint32_t index = 0;
  while (index < module->kernels.size() && (!kernel_name || module->kernels[index].name != kernel_name))
    ++index;
  if (index == module->kernels.size()) return fail("no such kernel in script " + module->name);
  const KernelInfo& kernel = module->kernels[index];
  if (!kernel.supported) return fail("cannot run here: " + kernel.reason);
  const bool has_output = kernel.signature & KILN_HAL_SIG_OUT;
  const uint32_t needed = static_cast<uint32_t>(kernel.input_sizes.size()) + (has_output ? 1 : 0);
  if (num_allocations != needed || (needed > 0 && !allocations)) {
    return fail(std::to_string(num_allocations) + " allocations given, the kernel needs " +
                std::to_string(needed));
  }
  if (needed == 0) return fail("a kernel without inputs or output has no launch extent");
  PreparedLaunch p;
  KilnKernelLaunch& launch = p.launch;
  launch.struct_size = sizeof(launch);
  launch.abi_version = KILN_KERNEL_ABI_VERSION;
  launch.num_inputs = static_cast<uint32_t>(kernel.input_sizes.size());
  const KilnKernelAllocation* first = allocations[0];
  if (!first) return fail("allocation 0 is NULL");
  uint32_t dims[3] = {first->dim_x, std::max<uint32_t>(first->dim_y, 1), std::max<uint32_t>(first->dim_z, 1)};
  for (uint32_t i = 0; i < needed; ++i) {
    const KilnKernelAllocation* a = allocations[i];
    if (!a || !a->data) return fail("allocation " + std::to_string(i) + " is NULL");
    uint32_t expected = i < launch.num_inputs ? kernel.input_sizes[i] : kernel.output_size;
    if (a->element_size != expected) {
      return fail("allocation " + std::to_string(i) + " has " + std::to_string(a->element_size) +
                  "-byte elements, the kernel expects " + std::to_string(expected));
    }
    if (a->dim_x != dims[0] || std::max<uint32_t>(a->dim_y, 1) != dims[1] ||
        std::max<uint32_t>(a->dim_z, 1) != dims[2]) {
      return fail("allocation " + std::to_string(i) + " has other extents than allocation 0");
    }
    if (i < launch.num_inputs) {
      launch.in[i] = static_cast<const uint8_t*>(a->data);
      launch.in_stride_x[i] = a->element_size;
      launch.in_stride_y[i] = a->stride_y;
      launch.in_stride_z[i] = a->stride_z;
    } else {
      launch.out = static_cast<uint8_t*>(a->data);
      launch.out_stride_x = a->element_size;
      launch.out_stride_y = a->stride_y;
      launch.out_stride_z = a->stride_z;
    }
  }
  launch.dim_x = dims[0];
  launch.dim_y = dims[1];
  launch.dim_z = dims[2];
  launch.script = script;
  p.script = script;
  p.index = index;
  for (int d = 0; d < 3; ++d) p.range.end[d] = dims[d];
  if (options) {
    const uint32_t starts[3] = {options->x_start, options->y_start, options->z_start};
    const uint32_t ends[3] = {options->x_end, options->y_end, options->z_end};
    for (int d = 0; d < 3; ++d) {
      uint32_t end = ends[d] == 0 ? dims[d] : ends[d];
      if (starts[d] >= end || end > dims[d])
        return fail("launch options select an empty or out-of-range range");
      p.range.begin[d] = starts[d];
      p.range.end[d] = end;
    }
  }
  p.bytes_per_cell = CellBytes(kernel.input_sizes, kernel.output_size);
  // Errors of the nested launch are reported by RunPrepared and also fail the outer one.
  if (RunPrepared(p) != kKilnOk) return fail("the nested launch failed");
  return 1;
}

// ---- Handles
// ------------------------------------------------------------------------------------------------

Instance* AsInstance(KilnHalInstance* h) { return reinterpret_cast<Instance*>(h); }
Device* AsDevice(KilnHalDevice* h) { return reinterpret_cast<Device*>(h); }
Buffer* AsBuffer(KilnHalBuffer* h) { return reinterpret_cast<Buffer*>(h); }
Module* AsModule(KilnHalModule* h) { return reinterpret_cast<Module*>(h); }
Script* AsScript(KilnHalScript* h) { return reinterpret_cast<Script*>(h); }

// Used where no instance is at hand (a NULL handle): nothing to report through, so only the status tells.
#define KILN_CPU_REQUIRE(cond)                \
  do {                                        \
    if (!(cond)) return kKilnInvalidArgument; \
  } while (0)

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

void SubmitterLoop(Device* device);

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

// ---- Modules ----------------------------------------------------------------------------------------------

std::string OrDefault(const char* symbol, const std::string& fallback) {
  return symbol && *symbol ? std::string(symbol) : fallback;
}

bool ReadSizes(const uint32_t* sizes, uint32_t count, std::vector<uint32_t>* out) {
  if (count > 0 && !sizes) return false;
  out->assign(sizes, sizes + count);
  return true;
}

// Copies the runtime's description into the module, checking what can be checked without code.
KilnStatus ReadModuleDesc(Instance* instance, const KilnHalModuleDesc& desc, Module* module) {
  const std::string& what = module->name;
  for (uint32_t i = 0; i < desc.num_kernels; ++i) {
    KilnHalKernelDesc k;
    if (!ReadElement(desc.kernels, i, &k) || !k.name) {
      return instance->Fail(kKilnInvalidModel,
                            what + ": kernel " + std::to_string(i) + " has no description or name");
    }
    KernelInfo info;
    info.name = k.name;
    info.symbol = OrDefault(k.expand_symbol, "__kiln_expand_" + info.name);
    info.signature = k.signature;
    info.level = k.kernel_level;
    info.output_size = k.output_element_size;
    if (k.num_inputs > KILN_KERNEL_MAX_INPUTS ||
        !ReadSizes(k.input_element_sizes, k.num_inputs, &info.input_sizes)) {
      return instance->Fail(kKilnInvalidModel, what + ", kernel " + info.name + ": " +
                                                   std::to_string(k.num_inputs) + " inputs (at most " +
                                                   std::to_string(KILN_KERNEL_MAX_INPUTS) +
                                                   ", each with an element size)");
    }
    if ((k.signature & KILN_HAL_SIG_OUT) && k.output_element_size == 0) {
      return instance->Fail(kKilnInvalidModel,
                            what + ", kernel " + info.name + ": returns a value of size 0");
    }
    module->kernels.push_back(std::move(info));
  }
  for (uint32_t i = 0; i < desc.num_globals; ++i) {
    KilnHalGlobalDesc g;
    if (!ReadElement(desc.globals, i, &g) || !g.name) {
      return instance->Fail(kKilnInvalidModel,
                            what + ": global " + std::to_string(i) + " has no description or name");
    }
    module->globals.push_back(GlobalInfo{g.name, g.flags, g.size, -1});
  }
  for (uint32_t i = 0; i < desc.num_invokables; ++i) {
    KilnHalInvokableDesc v;
    if (!ReadElement(desc.invokables, i, &v) || !v.name) {
      return instance->Fail(kKilnInvalidModel,
                            what + ": invokable " + std::to_string(i) + " has no description or name");
    }
    module->invokables.push_back(
        InvokableInfo{v.name, OrDefault(v.symbol, std::string("__kiln_invoke_") + v.name), v.args_size, -1});
  }
  for (uint32_t i = 0; i < desc.num_reductions; ++i) {
    KilnHalReductionDesc r;
    if (!ReadElement(desc.reductions, i, &r) || !r.name) {
      return instance->Fail(kKilnInvalidModel,
                            what + ": reduction " + std::to_string(i) + " has no description or name");
    }
    ReductionInfo info;
    info.name = r.name;
    const std::string prefix = "__kiln_reduce_" + info.name;
    info.symbols[0] = OrDefault(r.init_symbol, prefix + "_init");
    info.symbols[1] = OrDefault(r.accum_symbol, prefix + "_accum");
    info.symbols[2] = OrDefault(r.combine_symbol, prefix + "_combine");
    info.symbols[3] = OrDefault(r.out_symbol, prefix + "_out");
    info.level = r.kernel_level;
    info.accumulator_size = r.accumulator_size;
    info.accumulator_alignment = r.accumulator_alignment ? r.accumulator_alignment : 1;
    info.result_size = r.result_size;
    if (r.num_inputs > KILN_KERNEL_MAX_INPUTS ||
        !ReadSizes(r.input_element_sizes, r.num_inputs, &info.input_sizes)) {
      return instance->Fail(kKilnInvalidModel, what + ", reduction " + info.name + ": bad input list");
    }
    if ((info.accumulator_alignment & (info.accumulator_alignment - 1)) ||
        info.accumulator_alignment > 4096 || info.accumulator_size > (1u << 20)) {
      return instance->Fail(kKilnInvalidModel,
                            what + ", reduction " + info.name + ": accumulator of " +
                                std::to_string(info.accumulator_size) + " bytes aligned to " +
                                std::to_string(info.accumulator_alignment) +
                                " (alignment must be a power of two <= 4096, size <= 1 MiB)");
    }
    module->reductions.push_back(std::move(info));
  }
  return kKilnOk;
}

// Decides what can run, and what each script must resolve, from the symbols the object defines.
void ResolveSupport(const std::vector<std::string>& defined_list, uint32_t flags, Module* module) {
  std::unordered_map<std::string, int> defined;
  for (const std::string& name : defined_list) defined.emplace(name, -1);
  auto link = [&](const std::string& name) -> int {
    auto it = defined.find(name);
    if (it == defined.end()) return -1;
    if (it->second < 0) {
      it->second = static_cast<int>(module->link_names.size());
      module->link_names.push_back(name);
    }
    return it->second;
  };
  uint32_t supported = 0;
  for (KernelInfo& kernel : module->kernels) {
    if (kernel.level > kDriverLevel) {
      kernel.reason = "needs kernel HAL level " + LevelString(kernel.level) + ", this driver runs up to " +
                      LevelString(kDriverLevel);
    } else if ((kernel.link_index = link(kernel.symbol)) < 0) {
      kernel.reason = "the llvm-bc payload does not define " + kernel.symbol;
    } else {
      kernel.supported = true;
      ++supported;
    }
  }
  for (ReductionInfo& reduction : module->reductions) {
    if (reduction.level > kDriverLevel) {
      reduction.reason = "needs kernel HAL level " + LevelString(reduction.level) +
                         ", this driver runs up to " + LevelString(kDriverLevel);
      continue;
    }
    reduction.supported = true;
    for (int i = 0; i < 4; ++i) {
      if ((reduction.link_index[i] = link(reduction.symbols[i])) < 0) {
        reduction.supported = false;
        reduction.reason = "the llvm-bc payload does not define " + reduction.symbols[i];
      }
    }
  }
  for (InvokableInfo& invokable : module->invokables) invokable.link_index = link(invokable.symbol);
  for (GlobalInfo& global : module->globals) global.link_index = link(global.name);
  if (flags & KILN_HAL_MODULE_HAS_INIT) module->init_link_index = link("__kiln_invoke_init");
  module->info.num_kernels_supported = supported;
}

KilnStatus ModuleLoad(KilnHalDevice* handle, const KilnHalModuleDesc* in_desc, KilnHalModule** out_module) {
  Device* device = AsDevice(handle);
  KILN_CPU_REQUIRE(device);
  Instance* instance = device->instance;
  const uint64_t start = instance->NowNs();
  KilnHalModuleDesc desc;
  if (!ReadStruct(in_desc, &desc) || !out_module) {
    return instance->Fail(kKilnInvalidArgument,
                          "module_load: desc or out_module is NULL, or desc is too small");
  }
  auto module = std::make_unique<Module>();
  module->device = device;
  module->name = desc.name ? desc.name : "(unnamed module)";
  if (desc.abi_version != KILN_KERNEL_ABI_VERSION) {
    return instance->Fail(kKilnUnsupported,
                          module->name + ": generated for kernel ABI " + std::to_string(desc.abi_version) +
                              ", this driver implements " + std::to_string(KILN_KERNEL_ABI_VERSION));
  }
  const KilnHalPayload* bitcode = nullptr;
  std::string tags;
  for (uint32_t i = 0; i < desc.num_payloads; ++i) {
    KilnHalPayload payload;
    if (!ReadElement(desc.payloads, i, &payload) || !payload.tag || (!payload.data && payload.size)) {
      return instance->Fail(kKilnInvalidModel,
                            module->name + ": payload " + std::to_string(i) + " is malformed");
    }
    tags += (tags.empty() ? "" : ", ") + std::string(payload.tag);
    if (!bitcode && strcmp(payload.tag, "llvm-bc") == 0) {
      bitcode =
          reinterpret_cast<const KilnHalPayload*>(reinterpret_cast<const char*>(desc.payloads) +
                                                  static_cast<size_t>(i) * desc.payloads[0].struct_size);
    }
  }
  if (!bitcode) {
    return instance->Fail(kKilnUnsupported, module->name + ": no \"llvm-bc\" payload for the CPU (it has: " +
                                                (tags.empty() ? std::string("none") : tags) + ")");
  }
  for (uint32_t i = 0; i < desc.num_imports; ++i) {
    const char* import = desc.imports ? desc.imports[i] : nullptr;
    if (!import)
      return instance->Fail(kKilnInvalidModel, module->name + ": import " + std::to_string(i) + " is NULL");
    if (strncmp(import, "__kiln_rt_", 10) != 0) continue;
    bool known = false;
    for (const RuntimeSymbol& symbol : RuntimeSymbols()) known = known || strcmp(symbol.name, import) == 0;
    if (!known) {
      return instance->Fail(kKilnUnsupported, module->name + ": imports runtime service " + import +
                                                  ", which this driver (kernel HAL level " +
                                                  LevelString(kDriverLevel) + ") does not provide");
    }
  }
  if (KilnStatus status = ReadModuleDesc(instance, desc, module.get()); status != kKilnOk) return status;

  const std::string options = desc.compile_options ? desc.compile_options : "";
  CacheKeyInputs key_inputs;
  key_inputs.bitcode = bitcode->data;
  key_inputs.bitcode_size = static_cast<size_t>(bitcode->size);
  key_inputs.compile_options = options;
  key_inputs.target_triple = instance->target.triple;
  key_inputs.target_cpu = instance->target.cpu;
  key_inputs.target_features = instance->target.features;
  key_inputs.kernel_abi_version = KILN_KERNEL_ABI_VERSION;
  key_inputs.kernel_level = kDriverLevel;
  key_inputs.llvm_version = LlvmVersionString();
  key_inputs.driver_version = KILN_CPU_DRIVER_VERSION;
  const std::string key = ComputeCacheKey(key_inputs);
  ObjectCache cache(instance->cache_dir);

  std::vector<std::string> defined;
  std::string problem;
  KilnHalCacheResult cache_result = kKilnHalCacheNone;
  if (cache.enabled()) {
    switch (cache.Load(key, &module->object, &problem)) {
      case ObjectCache::LoadResult::kHit:
        if (ListDefinedSymbols(module->object, &defined, &problem) == kKilnOk) {
          cache_result = kKilnHalCacheHit;
        } else {
          defined.clear();
          cache_result = kKilnHalCacheRebuilt;
        }
        break;
      case ObjectCache::LoadResult::kCorrupt:
        cache_result = kKilnHalCacheRebuilt;
        break;
      case ObjectCache::LoadResult::kMiss:
        cache_result = kKilnHalCacheMiss;
        break;
    }
    if (cache_result == kKilnHalCacheRebuilt) {
      instance->Log(kKilnHalLogWarning,
                    module->name + ": discarding the cached object: " + problem + "; recompiling");
    }
  }
  if (cache_result != kKilnHalCacheHit) {
    const uint64_t compile_start = instance->NowNs();
    std::string error;
    module->object.clear();
    KilnStatus status = CompileBitcode(bitcode->data, static_cast<size_t>(bitcode->size), module->name,
                                       instance->target, options, &module->object, &error);
    if (status != kKilnOk) return instance->Fail(status, error);
    if ((status = ListDefinedSymbols(module->object, &defined, &error)) != kKilnOk) {
      return instance->Fail(status, module->name + ": " + error);
    }
    module->info.compile_ns = instance->NowNs() - compile_start;
    if (cache.enabled() && !cache.Store(key, module->object, &problem)) {
      instance->Log(kKilnHalLogWarning, module->name + ": cannot cache the compiled object: " + problem);
    }
  }
  ResolveSupport(defined, desc.flags, module.get());
  module->info.struct_size = sizeof(module->info);
  module->info.cache_result = cache_result;
  module->info.load_ns = instance->NowNs() - start;
  ++device->live_objects;
  *out_module = reinterpret_cast<KilnHalModule*>(module.release());
  return kKilnOk;
}

KilnStatus ModuleUnload(KilnHalModule* handle) {
  Module* module = AsModule(handle);
  KILN_CPU_REQUIRE(module);
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
  KILN_CPU_REQUIRE(module && out_info);
  if (!WriteStruct(module->info, out_info)) {
    return module->device->instance->Fail(kKilnInvalidArgument,
                                          "module_get_info: out_info has no struct_size");
  }
  return kKilnOk;
}

KilnStatus ModuleKernelSupported(KilnHalModule* handle, uint32_t kernel_index, bool* out_supported,
                                 const char** out_reason) {
  Module* module = AsModule(handle);
  KILN_CPU_REQUIRE(module && out_supported);
  if (kernel_index >= module->kernels.size()) {
    return module->device->instance->Fail(
        kKilnInvalidArgument,
        module->name + ": kernel index " + std::to_string(kernel_index) + " out of range");
  }
  const KernelInfo& kernel = module->kernels[kernel_index];
  *out_supported = kernel.supported;
  if (out_reason) *out_reason = kernel.supported ? nullptr : kernel.reason.c_str();
  return kKilnOk;
}

// ---- Scripts ----------------------------------------------------------------------------------------------

KilnStatus RunInvoke(Script* script, InvokeFn fn, const void* args, const std::string& name) {
  RunState state;
  {
    CurrentScope scope(script, &state);
    CallInvoke(fn, args);
  }
  if (state.failed) {
    return script->instance()->Fail(
        kKilnError, "script " + script->module->name + ", invokable " + name + ": " + state.message);
  }
  return kKilnOk;
}

KilnStatus ScriptDestroy(KilnHalScript* handle);

KilnStatus ScriptCreate(KilnHalModule* handle, void* script_user_data, KilnHalScript** out_script) {
  Module* module = AsModule(handle);
  KILN_CPU_REQUIRE(module);
  Instance* instance = module->device->instance;
  if (!out_script) return instance->Fail(kKilnInvalidArgument, "script_create: out_script is NULL");
  auto script = std::make_unique<Script>();
  script->module = module;
  script->user_data = script_user_data;
  std::vector<std::pair<std::string, void*>> runtime;
  for (const RuntimeSymbol& symbol : RuntimeSymbols()) runtime.emplace_back(symbol.name, symbol.address);
  std::string error;
  KilnStatus status = instance->linker->Link(module->object, runtime, module->link_names, &script->image,
                                             &script->addresses, &error);
  if (status != kKilnOk) return instance->Fail(status, module->name + ": " + error);
  ++module->live_scripts;
  Script* raw = script.release();
  if (module->init_link_index >= 0) {
    status =
        RunInvoke(raw, reinterpret_cast<InvokeFn>(raw->Address(module->init_link_index)), nullptr, "init");
    if (status != kKilnOk) {
      ScriptDestroy(reinterpret_cast<KilnHalScript*>(raw));
      return status;
    }
  }
  *out_script = reinterpret_cast<KilnHalScript*>(raw);
  return kKilnOk;
}

KilnStatus ScriptDestroy(KilnHalScript* handle) {
  Script* script = AsScript(handle);
  KILN_CPU_REQUIRE(script);
  Instance* instance = script->instance();
  instance->linker->Unlink(script->image);
  for (auto& created : script->created_allocations) instance->Free(created.second);
  --script->module->live_scripts;
  delete script;
  return kKilnOk;
}

// Finds a global by name and checks `size` against it.
KilnStatus FindGlobal(Script* script, const char* name, uint64_t size, const char* what,
                      const GlobalInfo** out) {
  Instance* instance = script->instance();
  Module* module = script->module;
  if (!name) return instance->Fail(kKilnInvalidArgument, std::string(what) + ": name is NULL");
  for (const GlobalInfo& global : module->globals) {
    if (global.name != name) continue;
    if (global.link_index < 0) {
      return instance->Fail(kKilnInvalidModel, "script " + module->name + ": global " + global.name +
                                                   " is reflected but the compiled code does not define it");
    }
    if (size != global.size) {
      return instance->Fail(kKilnInvalidArgument, "script " + module->name + ": global " + global.name +
                                                      " is " + std::to_string(global.size) + " bytes, " +
                                                      what + " gave " + std::to_string(size));
    }
    *out = &global;
    return kKilnOk;
  }
  return instance->Fail(kKilnInvalidArgument, "script " + module->name + " has no global named " + name);
}

KilnStatus ScriptSetGlobal(KilnHalScript* handle, const char* name, const void* data, uint64_t size) {
  Script* script = AsScript(handle);
  KILN_CPU_REQUIRE(script);
  const GlobalInfo* global = nullptr;
  if (KilnStatus status = FindGlobal(script, name, size, "script_set_global", &global); status != kKilnOk) {
    return status;
  }
  if (global->flags & KILN_HAL_GLOBAL_CONST) {
    return script->instance()->Fail(
        kKilnInvalidArgument, "script " + script->module->name + ": global " + global->name + " is const");
  }
  if (global->flags & (KILN_HAL_GLOBAL_ALLOCATION | KILN_HAL_GLOBAL_POINTER)) {
    return script->instance()->Fail(kKilnInvalidArgument, "script " + script->module->name + ": global " +
                                                              global->name +
                                                              " is bound with script_bind_allocation");
  }
  if (!data && size) return script->instance()->Fail(kKilnInvalidArgument, "script_set_global: data is NULL");
  if (size) memcpy(script->Address(global->link_index), data, static_cast<size_t>(size));
  return kKilnOk;
}

KilnStatus ScriptGetGlobal(KilnHalScript* handle, const char* name, uint64_t size, void* out_data) {
  Script* script = AsScript(handle);
  KILN_CPU_REQUIRE(script);
  const GlobalInfo* global = nullptr;
  if (KilnStatus status = FindGlobal(script, name, size, "script_get_global", &global); status != kKilnOk) {
    return status;
  }
  if (!out_data && size)
    return script->instance()->Fail(kKilnInvalidArgument, "script_get_global: out_data is NULL");
  if (size) memcpy(out_data, script->Address(global->link_index), static_cast<size_t>(size));
  return kKilnOk;
}

KilnStatus ScriptBindAllocation(KilnHalScript* handle, const char* name, const KilnHalBufferView* in_view,
                                uint32_t element_type, uint32_t vector_size, uint32_t dim_x, uint32_t dim_y,
                                uint32_t dim_z) {
  Script* script = AsScript(handle);
  KILN_CPU_REQUIRE(script);
  Instance* instance = script->instance();
  const GlobalInfo* global = nullptr;
  if (KilnStatus status =
          FindGlobal(script, name, sizeof(void*), "script_bind_allocation (pointer size)", &global);
      status != kKilnOk) {
    return status;
  }
  const std::string what = "script " + script->module->name + ", global " + global->name;
  if (!(global->flags & (KILN_HAL_GLOBAL_ALLOCATION | KILN_HAL_GLOBAL_POINTER))) {
    return instance->Fail(kKilnInvalidArgument, what + ": not an allocation or pointer global");
  }
  void** slot = static_cast<void**>(script->Address(global->link_index));
  if (!in_view) {
    *slot = nullptr;
    std::lock_guard<std::mutex> lock(script->owned_mutex);
    script->bound_allocations.erase(global->name);
    return kKilnOk;
  }
  KilnHalBufferView view;
  if (!ReadStruct(in_view, &view))
    return instance->Fail(kKilnInvalidArgument, what + ": view struct_size too small");
  if (dim_x == 0) return instance->Fail(kKilnInvalidArgument, what + ": dim_x must be at least 1");
  const uint32_t dims[3] = {dim_x, std::max<uint32_t>(dim_y, 1), std::max<uint32_t>(dim_z, 1)};
  std::string error;
  if (!CheckView<Buffer>(view, view.element_size, dims, false, what, &error)) {
    return instance->Fail(kKilnInvalidArgument, error);
  }
  if (view.stride_x != view.element_size) {
    return instance->Fail(kKilnInvalidArgument,
                          what +
                              ": an allocation's elements must be packed along x (stride_x "
                              "== element_size)");
  }
  uint8_t* data = AsBuffer(view.buffer)->data + view.offset;
  if (global->flags & KILN_HAL_GLOBAL_POINTER) {
    *slot = data;
    return kKilnOk;
  }
  auto allocation = std::make_unique<KilnKernelAllocation>();
  *allocation = KilnKernelAllocation{sizeof(KilnKernelAllocation),
                                     view.element_size,
                                     element_type,
                                     vector_size,
                                     dim_x,
                                     dim_y,
                                     dim_z,
                                     0,
                                     view.stride_y,
                                     view.stride_z,
                                     data};
  std::lock_guard<std::mutex> lock(script->owned_mutex);
  *slot = allocation.get();
  script->bound_allocations[global->name] = std::move(allocation);
  return kKilnOk;
}

KilnStatus ScriptInvoke(KilnHalScript* handle, uint32_t invokable_index, const void* args,
                        uint64_t args_size) {
  Script* script = AsScript(handle);
  KILN_CPU_REQUIRE(script);
  Instance* instance = script->instance();
  Module* module = script->module;
  char problem[KILN_HAL_PROBLEM_SIZE];
  if (!kiln_hal_check_index("invokable", invokable_index, module->invokables.size(), problem,
                            sizeof(problem))) {
    return instance->Fail(kKilnInvalidArgument, "script " + module->name + ": " + problem);
  }
  const InvokableInfo& invokable = module->invokables[invokable_index];
  if (invokable.link_index < 0) {
    return instance->Fail(kKilnUnsupported, "script " + module->name +
                                                ": the llvm-bc payload does not define " + invokable.symbol);
  }
  if (args_size != invokable.args_size || (args_size && !args)) {
    return instance->Fail(kKilnInvalidArgument, "script " + module->name + ", invokable " + invokable.name +
                                                    ": takes " + std::to_string(invokable.args_size) +
                                                    " bytes of arguments, got " + std::to_string(args_size));
  }
  return RunInvoke(script, reinterpret_cast<InvokeFn>(script->Address(invokable.link_index)), args,
                   invokable.name);
}

// ---- Launches and batches ---------------------------------------------------------------------------------

KilnStatus LaunchForEach(KilnHalScript* handle, const KilnHalForEachDesc* desc) {
  Script* script = AsScript(handle);
  KILN_CPU_REQUIRE(script);
  PreparedLaunch prepared;
  if (KilnStatus status = PrepareForEach(script, desc, &prepared); status != kKilnOk) return status;
  return RunPrepared(prepared);
}

KilnStatus LaunchReduce(KilnHalScript* handle, const KilnHalReduceDesc* desc, uint64_t result_size,
                        void* out_result) {
  Script* script = AsScript(handle);
  KILN_CPU_REQUIRE(script);
  PreparedLaunch prepared;
  if (KilnStatus status = PrepareReduce(script, desc, result_size, out_result, &prepared);
      status != kKilnOk) {
    return status;
  }
  return RunPrepared(prepared);
}

// Shared by the fence handle, the batch (to know whether it is still running) and the submission queue, so
// that each can go away first.
struct FenceState {
  std::mutex mutex;
  std::condition_variable done_changed;
  bool done = false;
  KilnStatus status = kKilnOk;
};

struct Fence {
  Device* device;
  std::shared_ptr<FenceState> state;
};

struct Batch {
  Device* device;
  std::vector<std::unique_ptr<PreparedLaunch>> launches;
  std::shared_ptr<FenceState> in_flight;
};

void SubmitterLoop(Device* device) {
  std::unique_lock<std::mutex> lock(device->queue_mutex);
  for (;;) {
    device->queue_wake.wait(lock, [&] { return device->stopping || !device->queue.empty(); });
    if (device->queue.empty()) return;  // stopping, and everything submitted has run
    auto [batch, fence] = std::move(device->queue.front());
    device->queue.pop_front();
    lock.unlock();
    KilnStatus status = kKilnOk;
    for (auto& launch : batch->launches) {
      status = RunPrepared(*launch);
      if (status != kKilnOk) break;
    }
    {
      std::lock_guard<std::mutex> fence_lock(fence->mutex);
      fence->status = status;
      fence->done = true;
      fence->done_changed.notify_all();
    }
    lock.lock();
  }
}

KilnStatus BatchCreate(KilnHalDevice* handle, KilnHalBatch** out_batch) {
  Device* device = AsDevice(handle);
  KILN_CPU_REQUIRE(device);
  if (!out_batch) return device->instance->Fail(kKilnInvalidArgument, "batch_create: out_batch is NULL");
  Batch* batch = new Batch;
  batch->device = device;
  ++device->live_objects;
  *out_batch = reinterpret_cast<KilnHalBatch*>(batch);
  return kKilnOk;
}

bool BatchBusy(Batch* batch) {
  if (!batch->in_flight) return false;
  std::lock_guard<std::mutex> lock(batch->in_flight->mutex);
  return !batch->in_flight->done;
}

KilnStatus BatchDestroy(KilnHalBatch* handle) {
  Batch* batch = reinterpret_cast<Batch*>(handle);
  KILN_CPU_REQUIRE(batch);
  if (BatchBusy(batch)) {
    return batch->device->instance->Fail(kKilnInvalidArgument, "batch_destroy: the batch has not completed");
  }
  --batch->device->live_objects;
  delete batch;
  return kKilnOk;
}

KilnStatus BatchRecordForEach(KilnHalBatch* handle, KilnHalScript* script, const KilnHalForEachDesc* desc) {
  Batch* batch = reinterpret_cast<Batch*>(handle);
  KILN_CPU_REQUIRE(batch && script);
  if (BatchBusy(batch))
    return batch->device->instance->Fail(kKilnInvalidArgument, "batch_record: batch is running");
  auto prepared = std::make_unique<PreparedLaunch>();
  if (KilnStatus status = PrepareForEach(AsScript(script), desc, prepared.get()); status != kKilnOk)
    return status;
  batch->launches.push_back(std::move(prepared));
  return kKilnOk;
}

KilnStatus BatchRecordReduce(KilnHalBatch* handle, KilnHalScript* script, const KilnHalReduceDesc* desc,
                             uint64_t result_size, void* out_result) {
  Batch* batch = reinterpret_cast<Batch*>(handle);
  KILN_CPU_REQUIRE(batch && script);
  if (BatchBusy(batch))
    return batch->device->instance->Fail(kKilnInvalidArgument, "batch_record: batch is running");
  auto prepared = std::make_unique<PreparedLaunch>();
  if (KilnStatus status = PrepareReduce(AsScript(script), desc, result_size, out_result, prepared.get());
      status != kKilnOk) {
    return status;
  }
  batch->launches.push_back(std::move(prepared));
  return kKilnOk;
}

KilnStatus BatchSubmit(KilnHalBatch* handle, KilnHalFence** out_fence) {
  Batch* batch = reinterpret_cast<Batch*>(handle);
  KILN_CPU_REQUIRE(batch);
  Device* device = batch->device;
  if (!out_fence) return device->instance->Fail(kKilnInvalidArgument, "batch_submit: out_fence is NULL");
  if (BatchBusy(batch))
    return device->instance->Fail(kKilnInvalidArgument, "batch_submit: batch is still running");
  Fence* fence = new Fence{device, std::make_shared<FenceState>()};
  batch->in_flight = fence->state;
  {
    std::lock_guard<std::mutex> lock(device->queue_mutex);
    if (!device->submitter.joinable()) device->submitter = std::thread(SubmitterLoop, device);
    device->queue.emplace_back(batch, fence->state);
  }
  device->queue_wake.notify_one();
  ++device->live_objects;
  *out_fence = reinterpret_cast<KilnHalFence*>(fence);
  return kKilnOk;
}

KilnStatus FenceWait(KilnHalFence* handle, uint64_t timeout_ns, bool* out_done) {
  KILN_CPU_REQUIRE(handle && out_done);
  FenceState* fence = reinterpret_cast<Fence*>(handle)->state.get();
  std::unique_lock<std::mutex> lock(fence->mutex);
  if (timeout_ns == UINT64_MAX) {
    fence->done_changed.wait(lock, [&] { return fence->done; });
  } else if (timeout_ns > 0) {
    fence->done_changed.wait_for(lock,
                                 std::chrono::nanoseconds(std::min<uint64_t>(timeout_ns, INT64_MAX / 2)),
                                 [&] { return fence->done; });
  }
  *out_done = fence->done;
  // The failing launch already reported its message when it ran.
  return fence->done ? fence->status : kKilnOk;
}

KilnStatus FenceDestroy(KilnHalFence* handle) {
  Fence* fence = reinterpret_cast<Fence*>(handle);
  KILN_CPU_REQUIRE(fence);
  {
    std::unique_lock<std::mutex> lock(fence->state->mutex);
    fence->state->done_changed.wait(lock, [&] { return fence->state->done; });
  }
  --fence->device->live_objects;
  delete fence;
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
