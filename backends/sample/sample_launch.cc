// Launches, batches and fences of the sample driver. PrepareForEach and PrepareReduce check a launch against
// the kernel's reflection (with kiln/hal_util.h's checks) and keep what running it needs; RunLaunch runs it
// on the calling thread, and a batch runs at submit, so its fence is born signalled. To make it yours: keep
// the checks, replace RunLaunch with your dispatch, and BatchSubmit/FenceWait with your queue and its
// completion.
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/hal.h"
#include "kiln/hal_util.h"
#include "kiln/kernel_abi.h"
#include "sample_driver.h"

namespace kiln_sample {

// ---- Launches ---------------------------------------------------------------------------------------------

namespace {

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

}  // namespace

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

}  // namespace kiln_sample
