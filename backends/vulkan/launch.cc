// Checking a for-each or reduce launch and resolving it into a Launch when it is recorded, so that a batch
// can later be recorded and submitted without looking at the caller's descriptors again.
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "backends/vulkan/batch.h"

namespace kiln {
namespace vulkan {

namespace {

// The most workgroups of a reduction's pass 0, i.e. partials for pass 1's one workgroup to combine.
constexpr uint64_t kMaxReductionGroups = 1024;

// Checks one buffer view of a launch (extents, same device, units) and resolves it: its offset and strides in
// units go to `push` (four uints), its buffer to `buffer`.
KilnStatus ResolveView(Device* device, const KilnHalBufferView& view, uint32_t element_size, uint32_t unit,
                       const uint32_t dims[3], bool is_output, const std::string& name, uint32_t* push,
                       VkBuffer* buffer) {
  Instance* instance = device->instance;
  std::string error;
  if (!CheckView<Buffer>(view, element_size, dims, is_output, name, &error)) {
    return instance->Fail(kKilnInvalidArgument, error);
  }
  if (AsBuffer(view.buffer)->device != device) {
    return instance->Fail(kKilnInvalidArgument, name + ": the buffer belongs to another device");
  }
  if (!ViewInUnits(view, unit, name, push, &error)) return instance->Fail(kKilnInvalidArgument, error);
  *buffer = AsBuffer(view.buffer)->buffer;
  return kKilnOk;
}

// Takes the script's state as the launch sees it: the global block, and the allocation bindings from slot
// `first_allocation` of the launch's buffers on (an unbound one gets the device's zero-filled buffer).
void SnapshotScript(Script* script, size_t first_allocation, Launch* out) {
  std::lock_guard<std::mutex> lock(script->mutex);
  out->globals = script->block;
  for (uint32_t j = 0; j < script->module->num_allocations; ++j) {
    Buffer* bound = script->allocations[j];
    out->buffers[first_allocation + j] = bound ? bound->buffer : script->module->device->dummy;
  }
}

}  // namespace

ReduceScratch::~ReduceScratch() {
  if (!device) return;
  DestroyRawBuffer(device, &partials, &partials_memory);
  DestroyRawBuffer(device, &result, &result_memory);
}

KilnStatus PrepareForEach(Script* script, const KilnHalForEachDesc* in_desc, Launch* out) {
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
    return instance->Fail(kKilnUnsupported, what + ": cannot run on Vulkan: " + kernel.reason);
  std::string error;
  if (!driver::CheckLaunchExtents(desc.dim_x, desc.dim_y, desc.dim_z, kMaxDim, what, &error)) {
    return instance->Fail(kKilnInvalidArgument, error);
  }
  if (!kiln_hal_check_input_count(desc.num_inputs, kernel.input_sizes.size(), "the kernel", problem,
                                  sizeof(problem)) ||
      !kiln_hal_check_output(kernel.has_output, desc.output != nullptr, problem, sizeof(problem))) {
    return instance->Fail(kKilnInvalidArgument, what + ": " + problem);
  }
  if (!kiln_hal_check_usr_data(desc.usr_data, desc.usr_size, problem, sizeof(problem))) {
    return instance->Fail(kKilnInvalidArgument, what + ": " + problem);
  }
  if (kernel.reads_usr) {
    // The snapshot binding 28 reads (kiln/spirv_abi.h "usrData"): the size word, then the bytes in whole words.
    const uint64_t limit = std::min<uint64_t>(module->device->limits().maxStorageBufferRange, 1u << 30) - 8;
    if (desc.usr_size > limit) {
      return instance->Fail(kKilnUnsupported, what + ": " + std::to_string(desc.usr_size) +
                                                  " bytes of usrData; the device binds at most " +
                                                  std::to_string(limit));
    }
    out->usr.assign(4 + (desc.usr_size + 3) / 4 * 4, 0);
    const uint32_t size_word = static_cast<uint32_t>(desc.usr_size);
    memcpy(out->usr.data(), &size_word, 4);
    if (desc.usr_size) memcpy(out->usr.data() + 4, desc.usr_data, desc.usr_size);
  }
  const uint32_t dims[3] = {desc.dim_x, desc.dim_y, desc.dim_z};
  out->module = module;
  out->index = desc.kernel_index;
  out->shape = desc.dim_z > 1 ? 2 : (desc.dim_y > 1 ? 1 : 0);
  memcpy(out->dims, dims, sizeof(dims));
  out->push.assign(kernel.push_size, 0);
  uint32_t* push = reinterpret_cast<uint32_t*>(out->push.data());
  push[0] = desc.dim_x;
  push[1] = desc.dim_y;
  push[2] = desc.dim_z;
  // dim.w: the launch's rsRand seed (kiln/spirv_abi.h), a per-script count, so each script instance has its own
  // deterministic sequence of streams.
  push[3] = script->launches.fetch_add(1, std::memory_order_relaxed) * 0x9e3779b9u + 0x2545f491u;
  out->buffers.assign(kernel.bindings.size(), VK_NULL_HANDLE);
  const uint32_t num_views = desc.num_inputs + (kernel.has_output ? 1 : 0);
  for (uint32_t i = 0; i < num_views; ++i) {
    const bool is_output = i == desc.num_inputs;
    KilnHalBufferView view;
    const std::string view_name = what + (is_output ? ", output" : ", input " + std::to_string(i));
    if (is_output ? !ReadStruct(desc.output, &view) : !ReadElement(desc.inputs, i, &view)) {
      return instance->Fail(kKilnInvalidArgument, view_name + ": missing, or its struct_size is too small");
    }
    const uint32_t element = is_output ? kernel.output_size : kernel.input_sizes[i];
    const uint32_t unit = kernel.units[is_output ? KILN_KERNEL_MAX_INPUTS : i];
    if (KilnStatus status = ResolveView(module->device, view, element, unit, dims, is_output, view_name,
                                        &push[8 + 4 * i], &out->buffers[1 + i]);
        status != kKilnOk) {
      return status;
    }
  }
  SnapshotScript(script, 1 + num_views, out);
  return kKilnOk;
}

KilnStatus PrepareReduce(Script* script, const KilnHalReduceDesc* in_desc, uint64_t result_size,
                         void* out_result, Launch* out) {
  Instance* instance = script->instance();
  Module* module = script->module;
  Device* device = module->device;
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
  if (!reduction.supported)
    return instance->Fail(kKilnUnsupported, what + ": cannot run on Vulkan: " + reduction.reason);
  std::string error;
  if (!driver::CheckLaunchExtents(desc.dim_x, desc.dim_y, desc.dim_z, kMaxDim, what, &error)) {
    return instance->Fail(kKilnInvalidArgument, error);
  }
  // The shader counts cells in 32 bits and steps by G * W: 2^31 cells leave room for both (spirv_abi.h).
  const uint64_t cells = uint64_t{desc.dim_x} * desc.dim_y * desc.dim_z;
  if (cells >= (uint64_t{1} << 31)) {
    return instance->Fail(kKilnUnsupported, what + ": " + std::to_string(cells) +
                                                " cells; the Vulkan driver reduces fewer than 2^31 at once");
  }
  if (!kiln_hal_check_result(out_result, result_size, reduction.result_size, problem, sizeof(problem)) ||
      !kiln_hal_check_input_count(desc.num_inputs, reduction.input_sizes.size(), "the reduction", problem,
                                  sizeof(problem))) {
    return instance->Fail(kKilnInvalidArgument, what + ": " + problem);
  }
  const uint32_t dims[3] = {desc.dim_x, desc.dim_y, desc.dim_z};
  // G: enough workgroups to give every invocation about one cell, within the device's dispatch limit, and few
  // enough that pass 1's single workgroup combines the partials in a few steps.
  const uint64_t wanted = (cells + reduction.workgroup - 1) / reduction.workgroup;
  const uint32_t groups = static_cast<uint32_t>(
      std::min<uint64_t>({wanted, device->limits().maxComputeWorkGroupCount[0], kMaxReductionGroups}));
  if (groups == 0) return instance->Fail(kKilnInvalidArgument, what + ": no cells to reduce");
  out->module = module;
  out->reduction = true;
  out->index = desc.reduction_index;
  memcpy(out->dims, dims, sizeof(dims));
  out->groups = groups;
  out->push.assign(reduction.push_size, 0);
  uint32_t* push = reinterpret_cast<uint32_t*>(out->push.data());
  push[0] = desc.dim_x;
  push[1] = desc.dim_y;
  push[2] = desc.dim_z;
  push[3] = groups;  // dim.w; origin (push[4..7]) stays 0
  out->buffers.assign(reduction.bindings.size(), VK_NULL_HANDLE);
  for (uint32_t i = 0; i < desc.num_inputs; ++i) {
    KilnHalBufferView view;
    const std::string view_name = what + ", input " + std::to_string(i);
    if (!ReadElement(desc.inputs, i, &view)) {
      return instance->Fail(kKilnInvalidArgument, view_name + ": missing, or its struct_size is too small");
    }
    if (KilnStatus status = ResolveView(device, view, reduction.input_sizes[i], reduction.units[i], dims,
                                        false, view_name, &push[8 + 4 * i], &out->buffers[1 + i]);
        status != kKilnOk) {
      return status;
    }
  }
  // Scratch: the partials stay on the device; the result words are read by the host once the work is done.
  auto scratch = std::make_shared<ReduceScratch>();
  scratch->device = device;
  VkResult result =
      CreateRawBuffer(device, VkDeviceSize{groups} * reduction.accumulator_stride, 0,
                      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, &scratch->partials, &scratch->partials_memory);
  if (result == VK_SUCCESS) {
    result = CreateRawBuffer(device, VkDeviceSize{reduction.result_words} * 4,
                             VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                             &scratch->result, &scratch->result_memory);
  }
  if (result != VK_SUCCESS) {
    return instance->Fail(kKilnOutOfMemory, what + ": the scratch buffers (" + std::to_string(groups) +
                                                " partials of " +
                                                std::to_string(reduction.accumulator_stride) +
                                                " bytes, the result): " + VkResultName(result));
  }
  const uint32_t result_slot = 1 + desc.num_inputs;
  out->buffers[result_slot] = scratch->result;
  // By binding number: a shader that reports faults has binding 27 after the partials.
  for (size_t b = 0; b < reduction.bindings.size(); ++b) {
    if (reduction.bindings[b] == KILN_SPIRV_PARTIALS_BINDING) out->buffers[b] = scratch->partials;
  }
  out->scratch = std::move(scratch);
  out->out_result = out_result;
  out->result_size = result_size;
  SnapshotScript(script, result_slot + 1, out);
  return kKilnOk;
}

}  // namespace vulkan
}  // namespace kiln
