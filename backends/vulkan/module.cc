// Loading a module decides, once, which of its kernels and reductions run on this device and why the others
// stay on the CPU (the reflection matched to the "spirv" payload); the module_* entries report it.
#include "backends/vulkan/module.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "formats/spirv/spirv_payload.h"

namespace kiln {
namespace vulkan {

namespace {

const std::vector<uint32_t> kKernelSpecIds = {KILN_SPIRV_SPEC_LOCAL_SIZE_X, KILN_SPIRV_SPEC_LOCAL_SIZE_Y,
                                              KILN_SPIRV_SPEC_LOCAL_SIZE_Z};
const std::vector<uint32_t> kReductionSpecIds = {KILN_SPIRV_SPEC_LOCAL_SIZE_X, KILN_SPIRV_SPEC_LOCAL_SIZE_Y,
                                                 KILN_SPIRV_SPEC_LOCAL_SIZE_Z, KILN_SPIRV_SPEC_REDUCE_PASS};

// The module's reductions, matched to the payload's reduction rows, each checked and given its workgroup size
// (pipelines are built later, with the kernels'). A payload without reduction rows (a version-1 header has no
// reduction table, and a generator may have none yet) leaves every reduction on the CPU; otherwise there is
// one row per reduction, in order, and a mismatch fails the module.
KilnStatus DescribeReductions(Device* device, const KilnHalModuleDesc& desc,
                              const spirv::SpirvPayload& parsed, Module* module) {
  Instance* instance = device->instance;
  const VkPhysicalDeviceLimits& limits = device->limits();
  if (!parsed.reductions.empty() && parsed.reductions.size() != desc.num_reductions) {
    return instance->Fail(kKilnInvalidModel, module->name + ": the spirv payload describes " +
                                                 std::to_string(parsed.reductions.size()) +
                                                 " reductions, the module has " +
                                                 std::to_string(desc.num_reductions));
  }
  for (uint32_t i = 0; i < desc.num_reductions; ++i) {
    KilnHalReductionDesc r;
    if (!ReadElement(desc.reductions, i, &r) || !r.name) {
      return instance->Fail(kKilnInvalidModel, module->name + ": reduction " + std::to_string(i) +
                                                   " has no description or name");
    }
    ReductionInfo reduction;
    reduction.name = r.name;
    reduction.level = r.kernel_level;
    reduction.result_size = r.result_size;
    if (r.num_inputs > KILN_KERNEL_MAX_INPUTS || (r.num_inputs && !r.input_element_sizes)) {
      return instance->Fail(kKilnInvalidModel, module->name + ", reduction " + reduction.name + ": " +
                                                   std::to_string(r.num_inputs) + " inputs (at most " +
                                                   std::to_string(KILN_KERNEL_MAX_INPUTS) +
                                                   ", each with a size)");
    }
    reduction.input_sizes.assign(r.input_element_sizes, r.input_element_sizes + r.num_inputs);
    if (parsed.reductions.empty()) {
      reduction.reason = "CPU-only: the spirv payload has no reduction rows";
      module->reductions.push_back(std::move(reduction));
      continue;
    }
    const spirv::SpirvReduction& row = parsed.reductions[i];
    if (row.name != reduction.name || row.num_inputs != r.num_inputs) {
      return instance->Fail(kKilnInvalidModel, module->name + ": spirv payload reduction row " +
                                                   std::to_string(i) + " (" + row.name + ", " +
                                                   std::to_string(row.num_inputs) +
                                                   " inputs) does not match reduction " + reduction.name +
                                                   " (" + std::to_string(r.num_inputs) + " inputs)");
    }
    reduction.entry_point = row.entry_point;
    reduction.code = row.code;
    reduction.accumulator_stride = row.accumulator_stride;
    reduction.result_words = row.result_words;
    reduction.push_size = KILN_SPIRV_PUSH_HEADER_SIZE + KILN_SPIRV_PUSH_VIEW_SIZE * r.num_inputs;
    reduction.bindings.push_back(KILN_SPIRV_GLOBALS_BINDING);
    for (uint32_t j = 0; j < r.num_inputs; ++j)
      reduction.bindings.push_back(KILN_SPIRV_FIRST_INPUT_BINDING + j);
    reduction.bindings.push_back(KILN_SPIRV_RESULT_BINDING);
    for (uint32_t j = 0; j < module->num_allocations; ++j) {
      reduction.bindings.push_back(KILN_SPIRV_FIRST_ALLOCATION_BINDING + j);
    }
    reduction.bindings.push_back(KILN_SPIRV_PARTIALS_BINDING);
    reduction.layout_description = "the reduction's: " + std::to_string(r.num_inputs) +
                                   " inputs, the result, " + std::to_string(module->num_allocations) +
                                   " allocations, the partials";
    bool units_ok = true;
    for (uint32_t j = 0; j < r.num_inputs; ++j) {
      const uint32_t element = reduction.input_sizes[j];
      const uint32_t unit = row.unit_sizes[j];
      reduction.units[j] = unit;
      if (row.code.size() && (unit == 0 || element == 0 || (element % unit && unit % element)))
        units_ok = false;
    }
    reduction.workgroup = ReductionWorkgroup(limits, reduction.accumulator_stride);
    if (row.code.empty()) {
      reduction.reason =
          "CPU-only: " +
          (row.cpu_only_reason.empty() ? std::string("no SPIR-V for this reduction") : row.cpu_only_reason);
    } else if (!units_ok) {
      reduction.reason = "the spirv payload's unit sizes do not fit the reduction's input element sizes";
    } else if (row.result_words != (uint64_t{r.result_size} + 3) / 4) {
      reduction.reason = "the spirv payload's row writes " + std::to_string(row.result_words) +
                         " result words, the reflection's result of " + std::to_string(r.result_size) +
                         " bytes needs " + std::to_string((uint64_t{r.result_size} + 3) / 4);
    } else if (reduction.workgroup < 2) {
      reduction.reason = "a workgroup of two " + std::to_string(reduction.accumulator_stride) +
                         "-byte accumulators does not fit the device (" +
                         std::to_string(limits.maxComputeSharedMemorySize) + " bytes of shared memory, " +
                         std::to_string(limits.maxComputeWorkGroupSize[0]) + " invocations along x)";
    } else if (CheckProgram(device, module, &reduction, row.required_features, kReductionSpecIds)) {
      reduction.supported = true;
    }
    module->reductions.push_back(std::move(reduction));
  }
  return kKilnOk;
}

}  // namespace

KilnStatus ModuleLoad(KilnHalDevice* handle, const KilnHalModuleDesc* in_desc, KilnHalModule** out_module) {
  Device* device = AsDevice(handle);
  KILN_VK_REQUIRE(device);
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
  module->has_init = desc.flags & KILN_HAL_MODULE_HAS_INIT;
  // The kernel ABI covers every payload of the module (the layout of globals, element types, launch
  // arguments): a SPIR-V payload generated for another ABI would read its data wrongly.
  if (desc.abi_version != KILN_KERNEL_ABI_VERSION) {
    return instance->Fail(kKilnUnsupported,
                          module->name + ": generated for kernel ABI " + std::to_string(desc.abi_version) +
                              ", the Vulkan driver implements " + std::to_string(KILN_KERNEL_ABI_VERSION));
  }
  const KilnHalPayload* payload = nullptr;
  KilnHalPayload payload_copy;
  for (uint32_t i = 0; i < desc.num_payloads; ++i) {
    if (ReadElement(desc.payloads, i, &payload_copy) && payload_copy.tag &&
        strcmp(payload_copy.tag, KILN_SPIRV_PAYLOAD_TAG) == 0) {
      payload = &payload_copy;
      break;
    }
  }
  if (!payload) {
    return instance->Fail(kKilnUnsupported, module->name +
                                                ": no \"spirv\" payload (the Vulkan driver runs only "
                                                "modules compiled for the GPU)");
  }
  spirv::SpirvPayload parsed;
  std::string error;
  if (!spirv::ParseSpirvPayload(payload->data, payload->size, &parsed, &error)) {
    return instance->Fail(kKilnInvalidModel, module->name + ": " + error);
  }
  if (parsed.kernels.size() != desc.num_kernels) {
    return instance->Fail(kKilnInvalidModel, module->name + ": the spirv payload describes " +
                                                 std::to_string(parsed.kernels.size()) +
                                                 " kernels, the module has " +
                                                 std::to_string(desc.num_kernels));
  }
  module->block_size = parsed.global_block_size;
  // Globals: the reflection's, matched by name to the payload's rows.
  for (uint32_t i = 0; i < desc.num_globals; ++i) {
    KilnHalGlobalDesc g;
    if (!ReadElement(desc.globals, i, &g) || !g.name) {
      return instance->Fail(kKilnInvalidModel,
                            module->name + ": global " + std::to_string(i) + " has no description or name");
    }
    GlobalInfo info;
    info.name = g.name;
    info.flags = g.flags;
    info.size = g.size;
    if (g.size > (64u << 20)) {
      return instance->Fail(kKilnInvalidModel, module->name + ": global " + info.name + " of " +
                                                   std::to_string(g.size) + " bytes is too large");
    }
    if (g.default_data && !(g.flags & (KILN_HAL_GLOBAL_ALLOCATION | KILN_HAL_GLOBAL_POINTER))) {
      const uint8_t* bytes = static_cast<const uint8_t*>(g.default_data);
      info.default_value.assign(bytes, bytes + g.size);
    } else {
      info.default_value.assign(g.size, 0);
    }
    module->globals.push_back(std::move(info));
  }
  for (const spirv::SpirvGlobal& row : parsed.globals) {
    auto it = std::find_if(module->globals.begin(), module->globals.end(),
                           [&](const GlobalInfo& g) { return g.name == row.name; });
    if (it == module->globals.end()) {
      return instance->Fail(kKilnInvalidModel, module->name + ": the spirv payload has global " + row.name +
                                                   ", which the module's reflection does not");
    }
    const bool is_allocation = it->flags & (KILN_HAL_GLOBAL_ALLOCATION | KILN_HAL_GLOBAL_POINTER);
    if (is_allocation != (row.kind == KILN_SPIRV_GLOBAL_ALLOCATION) ||
        (!is_allocation && row.size != it->size)) {
      return instance->Fail(kKilnInvalidModel,
                            module->name + ", global " + row.name + ": the spirv payload's row (kind " +
                                std::to_string(row.kind) + ", " + std::to_string(row.size) +
                                " bytes) does not match the reflection (" + std::to_string(it->size) +
                                " bytes" + (is_allocation ? ", an allocation)" : ")"));
    }
    it->on_gpu = true;
    it->kind = row.kind;
    it->block_offset = row.block_offset;
    it->unit_size = row.unit_size;
    if (is_allocation) {
      if (module->num_allocations >= KILN_SPIRV_MAX_ALLOCATIONS) {
        return instance->Fail(kKilnInvalidModel, module->name + ": more than " +
                                                     std::to_string(KILN_SPIRV_MAX_ALLOCATIONS) +
                                                     " allocation globals");
      }
      it->allocation_index = static_cast<int>(module->num_allocations++);
    }
  }
  // Kernels.
  for (uint32_t i = 0; i < desc.num_kernels; ++i) {
    KilnHalKernelDesc k;
    if (!ReadElement(desc.kernels, i, &k) || !k.name) {
      return instance->Fail(kKilnInvalidModel,
                            module->name + ": kernel " + std::to_string(i) + " has no description or name");
    }
    const spirv::SpirvKernel& row = parsed.kernels[i];
    KernelInfo kernel;
    kernel.name = k.name;
    kernel.signature = k.signature;
    kernel.level = k.kernel_level;
    kernel.output_size = k.output_element_size;
    kernel.has_output = k.signature & KILN_HAL_SIG_OUT;
    if (k.num_inputs > KILN_KERNEL_MAX_INPUTS || (k.num_inputs && !k.input_element_sizes)) {
      return instance->Fail(kKilnInvalidModel, module->name + ", kernel " + kernel.name + ": " +
                                                   std::to_string(k.num_inputs) + " inputs (at most " +
                                                   std::to_string(KILN_KERNEL_MAX_INPUTS) +
                                                   ", each with a size)");
    }
    kernel.input_sizes.assign(k.input_element_sizes, k.input_element_sizes + k.num_inputs);
    if (row.name != kernel.name || row.num_inputs != k.num_inputs ||
        (row.code.size() && row.has_output != kernel.has_output)) {
      return instance->Fail(kKilnInvalidModel, module->name + ": spirv payload row " + std::to_string(i) +
                                                   " (" + row.name + ", " + std::to_string(row.num_inputs) +
                                                   " inputs" + (row.has_output ? ", output" : "") +
                                                   ") does not match kernel " + kernel.name + " (" +
                                                   std::to_string(k.num_inputs) + " inputs" +
                                                   (kernel.has_output ? ", output" : "") + ")");
    }
    kernel.entry_point = row.entry_point;
    kernel.code = row.code;
    kernel.push_size = KILN_SPIRV_PUSH_HEADER_SIZE +
                       KILN_SPIRV_PUSH_VIEW_SIZE * (k.num_inputs + (kernel.has_output ? 1 : 0));
    kernel.bindings.push_back(KILN_SPIRV_GLOBALS_BINDING);
    for (uint32_t j = 0; j < k.num_inputs; ++j) kernel.bindings.push_back(KILN_SPIRV_FIRST_INPUT_BINDING + j);
    if (kernel.has_output) kernel.bindings.push_back(KILN_SPIRV_OUTPUT_BINDING);
    for (uint32_t j = 0; j < module->num_allocations; ++j) {
      kernel.bindings.push_back(KILN_SPIRV_FIRST_ALLOCATION_BINDING + j);
    }
    kernel.layout_description = "the kernel's: " + std::to_string(k.num_inputs) + " inputs" +
                                (kernel.has_output ? ", an output, " : ", ") +
                                std::to_string(module->num_allocations) + " allocations";
    // Unit sizes: each must divide its element size or be a multiple of it.
    bool units_ok = true;
    for (uint32_t j = 0; j <= k.num_inputs; ++j) {
      const bool is_output = j == k.num_inputs;
      if (is_output && !kernel.has_output) break;
      const uint32_t element = is_output ? kernel.output_size : kernel.input_sizes[j];
      const uint32_t unit = row.unit_sizes[is_output ? KILN_KERNEL_MAX_INPUTS : j];
      kernel.units[is_output ? KILN_KERNEL_MAX_INPUTS : j] = unit;
      if (row.code.size() && (unit == 0 || element == 0 || (element % unit && unit % element)))
        units_ok = false;
    }
    if (row.code.empty()) {
      kernel.reason = "CPU-only: " + (row.cpu_only_reason.empty() ? std::string("no SPIR-V for this kernel")
                                                                  : row.cpu_only_reason);
    } else if (!units_ok) {
      kernel.reason = "the spirv payload's unit sizes do not fit the kernel's element sizes";
    } else if (CheckProgram(device, module.get(), &kernel, row.required_features, kKernelSpecIds)) {
      kernel.supported = true;
    }
    module->kernels.push_back(std::move(kernel));
  }
  if (KilnStatus status = DescribeReductions(device, desc, parsed, module.get()); status != kKilnOk) {
    return status;
  }
  // Pipelines, through the device's pipeline cache.
  const uint64_t compile_start = instance->NowNs();
  uint32_t created = 0;
  uint32_t cached = 0;
  uint32_t supported = 0;
  for (KernelInfo& kernel : module->kernels) {
    if (!kernel.supported) continue;
    if (!BuildKernel(device, &kernel, &created, &cached)) {
      kernel.supported = false;
      DestroyKernel(device, &kernel);
      instance->Log(kKilnHalLogInfo, module->name + ", kernel " + kernel.name + ": " + kernel.reason);
      continue;
    }
    kernel.code.clear();
    kernel.code.shrink_to_fit();
    ++supported;
  }
  for (ReductionInfo& reduction : module->reductions) {
    if (!reduction.supported) continue;
    if (!BuildReduction(device, &reduction, &created, &cached)) {
      reduction.supported = false;
      DestroyReduction(device, &reduction);
      instance->Log(kKilnHalLogInfo,
                    module->name + ", reduction " + reduction.name + ": " + reduction.reason);
    }
    reduction.code.clear();
    reduction.code.shrink_to_fit();
  }
  module->info.struct_size = sizeof(module->info);
  module->info.num_kernels_supported = supported;
  module->info.compile_ns = created ? instance->NowNs() - compile_start : 0;
  if (device->cache_path.empty() || created + cached == 0) {
    module->info.cache_result = kKilnHalCacheNone;
  } else if (created == 0) {
    module->info.cache_result = kKilnHalCacheHit;
  } else {
    bool was_corrupt;
    {
      std::lock_guard<std::mutex> lock(device->cache_mutex);
      was_corrupt = device->cache_was_corrupt;
      device->cache_was_corrupt = false;
    }
    module->info.cache_result = was_corrupt ? kKilnHalCacheRebuilt : kKilnHalCacheMiss;
    SaveCache(device);
  }
  module->info.load_ns = instance->NowNs() - start;
  ++device->live_objects;
  *out_module = reinterpret_cast<KilnHalModule*>(module.release());
  return kKilnOk;
}

KilnStatus ModuleUnload(KilnHalModule* handle) {
  Module* module = AsModule(handle);
  KILN_VK_REQUIRE(module);
  Device* device = module->device;
  if (int live = module->live_scripts.load(); live > 0) {
    return device->instance->Fail(kKilnInvalidArgument, "module_unload: " + module->name + " still has " +
                                                            std::to_string(live) + " script(s)");
  }
  for (KernelInfo& kernel : module->kernels) DestroyKernel(device, &kernel);
  for (ReductionInfo& reduction : module->reductions) DestroyReduction(device, &reduction);
  --device->live_objects;
  delete module;
  return kKilnOk;
}

KilnStatus ModuleGetInfo(KilnHalModule* handle, KilnHalModuleInfo* out_info) {
  Module* module = AsModule(handle);
  KILN_VK_REQUIRE(module);
  if (!WriteStruct(module->info, out_info)) {
    return module->device->instance->Fail(kKilnInvalidArgument,
                                          "module_get_info: out_info is NULL or has no size");
  }
  return kKilnOk;
}

namespace {

// module_kernel_supported and module_reduction_supported: one answer over the module's kernels or reductions.
template <typename Info>
KilnStatus AnswerSupported(Module* module, const char* noun, const std::vector<Info>& rows, uint32_t index,
                           bool* out_supported, const char** out_reason) {
  char problem[KILN_HAL_PROBLEM_SIZE];
  if (!kiln_hal_check_index(noun, index, rows.size(), problem, sizeof(problem))) {
    return module->device->instance->Fail(kKilnInvalidArgument, module->name + ": " + problem);
  }
  *out_supported = rows[index].supported;
  if (out_reason) *out_reason = rows[index].supported ? nullptr : rows[index].reason.c_str();
  return kKilnOk;
}

}  // namespace

KilnStatus ModuleKernelSupported(KilnHalModule* handle, uint32_t kernel_index, bool* out_supported,
                                 const char** out_reason) {
  Module* module = AsModule(handle);
  KILN_VK_REQUIRE(module && out_supported);
  return AnswerSupported(module, "kernel", module->kernels, kernel_index, out_supported, out_reason);
}

KilnStatus ModuleReductionSupported(KilnHalModule* handle, uint32_t reduction_index, bool* out_supported,
                                    const char** out_reason) {
  Module* module = AsModule(handle);
  KILN_VK_REQUIRE(module && out_supported);
  return AnswerSupported(module, "reduction", module->reductions, reduction_index, out_supported, out_reason);
}

}  // namespace vulkan
}  // namespace kiln
