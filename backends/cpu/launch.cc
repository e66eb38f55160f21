// Launches: a forEach or reduce is first checked against the kernel's reflection and turned into a
// PreparedLaunch, then run by cutting its range into ~16 KiB slices that the thread pool's threads and the
// caller take in turn. The two steps are apart because a batch checks a launch when it is recorded and runs
// it later (batch.cc), and rsForEach from kernel code builds its own (runtime_services.cc).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/driver_internal.h"
#include "backends/cpu/thread_pool.h"
#include "kiln/hal.h"
#include "kiln/hal_util.h"
#include "kiln/kernel_abi.h"

namespace kiln {
namespace cpu {
namespace {

// ---- Launch planning and execution ------------------------------------------------------------------------

// The output bytes one slice of a launch covers, as RenderScript's reference driver chose: small enough that
// every thread gets many slices (load balance), big enough that the atomic counter is not contended.
constexpr uint64_t kSliceBytes = 16 * 1024;

using ExpandFn = void (*)(const KilnKernelLaunch*, uint32_t, uint32_t, uint32_t, uint32_t);
using ReduceInitFn = void (*)(void*);
using ReduceAccumFn = void (*)(const KilnKernelLaunch*, void*, uint32_t, uint32_t, uint32_t, uint32_t);
using ReduceCombineFn = void (*)(void*, const void*);
using ReduceOutFn = void (*)(void*, const void*);

// Calls into JIT-compiled code (KILN_NO_SANITIZE_FUNCTION: driver_internal.h).
KILN_NO_SANITIZE_FUNCTION void CallExpand(ExpandFn fn, const KilnKernelLaunch* launch, uint32_t x0,
                                          uint32_t x1, uint32_t y, uint32_t z) {
  fn(launch, x0, x1, y, z);
}
KILN_NO_SANITIZE_FUNCTION void CallInit(ReduceInitFn fn, void* accum) { fn(accum); }
KILN_NO_SANITIZE_FUNCTION void CallAccum(ReduceAccumFn fn, const KilnKernelLaunch* launch, void* accum,
                                         uint32_t x0, uint32_t x1, uint32_t y, uint32_t z) {
  fn(launch, accum, x0, x1, y, z);
}
KILN_NO_SANITIZE_FUNCTION void CallCombine(ReduceCombineFn fn, void* accum, const void* other) {
  fn(accum, other);
}
KILN_NO_SANITIZE_FUNCTION void CallOut(ReduceOutFn fn, void* result, const void* accum) { fn(result, accum); }

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

}  // namespace

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
          state.status, "script " + script->module->name + ", kernel " + kernel.name + ": " + state.message);
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
    return instance->Fail(state.status, "script " + script->module->name + ", reduction " + reduction.name +
                                          ": " + state.message);
  }
  return kKilnOk;
}

namespace {

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

}  // namespace

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

// ---- Launch entry points ----------------------------------------------------------------------------------

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

}  // namespace cpu
}  // namespace kiln
