// Turning a kernel's or reduction's SPIR-V into compute pipelines, apart from module loading because both
// kinds of program share it: whether it can run here, its layouts, its pipelines and the pipeline cache file.
#include <spirv-tools/libspirv.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "backends/vulkan/module.h"
#include "backends/vulkan/pipeline_cache.h"
#include "formats/spirv/spirv_payload.h"

namespace kiln {
namespace vulkan {

namespace {

// Workgroup sizes per launch shape, within the device's limits.
void ChooseWorkgroups(const VkPhysicalDeviceLimits& limits, uint32_t out[kNumShapes][3]) {
  const uint32_t wanted[kNumShapes][3] = {{64, 1, 1}, {8, 8, 1}, {4, 4, 4}};
  for (uint32_t s = 0; s < kNumShapes; ++s) {
    for (int d = 0; d < 3; ++d)
      out[s][d] = std::max(1u, std::min(wanted[s][d], limits.maxComputeWorkGroupSize[d]));
    while (out[s][0] * out[s][1] * out[s][2] > limits.maxComputeWorkGroupInvocations) {
      int largest = out[s][0] >= out[s][1] && out[s][0] >= out[s][2] ? 0 : (out[s][1] >= out[s][2] ? 1 : 2);
      out[s][largest] = std::max(1u, out[s][largest] / 2);
    }
  }
}

// The cache key of one pipeline: the program's code and entry point, its specialization constants, the
// enabled features. A kernel's constants are its workgroup size alone (12 bytes), so its keys are what they
// were before reductions had pipelines, and existing cache files stay valid.
uint64_t PipelineKey(const ShaderProgram& program, const uint32_t* constants, uint32_t num_constants,
                     uint32_t features) {
  uint64_t hash = Fnv1a64(program.code.data(), program.code.size() * 4);
  hash = Fnv1a64(program.entry_point.data(), program.entry_point.size(), hash);
  hash = Fnv1a64(constants, num_constants * 4, hash);
  hash = Fnv1a64(&features, 4, hash);
  return hash;
}

// Creates a program's shader module, descriptor set layout and pipeline layout. A failure makes it
// unsupported.
bool BuildLayouts(Device* device, ShaderProgram* program) {
  VkShaderModuleCreateInfo shader_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  shader_info.codeSize = program->code.size() * 4;
  shader_info.pCode = program->code.data();
  VkResult result = vkCreateShaderModule(device->device, &shader_info, nullptr, &program->shader);
  if (result != VK_SUCCESS) {
    program->reason = "vkCreateShaderModule failed: " + VkResultName(result);
    return false;
  }
  std::vector<VkDescriptorSetLayoutBinding> bindings;
  for (uint32_t binding : program->bindings) {
    VkDescriptorSetLayoutBinding b{};
    b.binding = binding;
    b.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    b.descriptorCount = 1;
    b.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    bindings.push_back(b);
  }
  VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_info.bindingCount = static_cast<uint32_t>(bindings.size());
  set_info.pBindings = bindings.data();
  result = vkCreateDescriptorSetLayout(device->device, &set_info, nullptr, &program->set_layout);
  if (result != VK_SUCCESS) {
    program->reason = "vkCreateDescriptorSetLayout failed: " + VkResultName(result);
    return false;
  }
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, program->push_size};
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &program->set_layout;
  layout_info.pushConstantRangeCount = 1;
  layout_info.pPushConstantRanges = &push;
  result = vkCreatePipelineLayout(device->device, &layout_info, nullptr, &program->layout);
  if (result != VK_SUCCESS) {
    program->reason = "vkCreatePipelineLayout failed: " + VkResultName(result);
    return false;
  }
  return true;
}

// One compute pipeline of a program, specialised with `constants` (ids 0 .. num_constants - 1, 4 bytes each),
// through the device's pipeline cache; counted as created, or as found in the cache file.
bool BuildPipeline(Device* device, ShaderProgram* program, const uint32_t* constants, uint32_t num_constants,
                   VkPipeline* out, uint32_t* created, uint32_t* cached) {
  static_assert(KILN_SPIRV_SPEC_LOCAL_SIZE_X == 0 && KILN_SPIRV_SPEC_LOCAL_SIZE_Y == 1 &&
                    KILN_SPIRV_SPEC_LOCAL_SIZE_Z == 2 && KILN_SPIRV_SPEC_REDUCE_PASS == 3,
                "constant i of the array goes to specialization id i");
  VkSpecializationMapEntry entries[4];
  for (uint32_t i = 0; i < num_constants && i < 4; ++i) entries[i] = {i, 4 * i, 4};
  VkSpecializationInfo spec{num_constants, entries, 4 * num_constants, constants};
  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = program->shader;
  info.stage.pName = program->entry_point.c_str();
  info.stage.pSpecializationInfo = &spec;
  info.layout = program->layout;
  const uint64_t key = PipelineKey(*program, constants, num_constants, device->enabled_features);
  VkResult result = vkCreateComputePipelines(device->device, device->pipeline_cache, 1, &info, nullptr, out);
  if (result != VK_SUCCESS) {
    *out = VK_NULL_HANDLE;
    program->reason = "vkCreateComputePipelines failed: " + VkResultName(result);
    return false;
  }
  std::lock_guard<std::mutex> lock(device->cache_mutex);
  if (device->cache_keys.count(key)) {
    ++*cached;
  } else {
    device->cache_keys.insert(key);
    ++*created;
  }
  return true;
}

void DestroyProgram(Device* device, ShaderProgram* program) {
  if (program->layout) vkDestroyPipelineLayout(device->device, program->layout, nullptr);
  if (program->set_layout) vkDestroyDescriptorSetLayout(device->device, program->set_layout, nullptr);
  if (program->shader) vkDestroyShaderModule(device->device, program->shader, nullptr);
  program->layout = VK_NULL_HANDLE;
  program->set_layout = VK_NULL_HANDLE;
  program->shader = VK_NULL_HANDLE;
}

void DestroyPipelines(Device* device, VkPipeline* pipelines, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (pipelines[i]) vkDestroyPipeline(device->device, pipelines[i], nullptr);
    pipelines[i] = VK_NULL_HANDLE;
  }
}

}  // namespace

// W for a reduction: the largest power of two up to 128 that the device's workgroup limits allow and whose W
// accumulators fit in shared memory (the shader combines them there as a tree). 1 when not even two fit.
uint32_t ReductionWorkgroup(const VkPhysicalDeviceLimits& limits, uint32_t accumulator_stride) {
  uint32_t w = 128;
  while (w > 1 && (w > limits.maxComputeWorkGroupSize[0] || w > limits.maxComputeWorkGroupInvocations ||
                   uint64_t{w} * accumulator_stride > limits.maxComputeSharedMemorySize)) {
    w /= 2;
  }
  return w;
}

// Checks a kernel's or reduction's SPIR-V and interface against the payload contract and the device; fills
// `reason` when it cannot run here. `spec_ids` are the specialization constants it must take (the workgroup
// size; a reduction's pass too).
bool CheckProgram(Device* device, Module* module, ShaderProgram* program, uint32_t required_features,
                  const std::vector<uint32_t>& spec_ids) {
  const PhysicalDevice& pd = *device->physical;
  if (program->level > kDriverLevel) {
    program->reason = "needs kernel HAL level " + LevelString(program->level) + ", this driver runs up to " +
                      LevelString(kDriverLevel);
    return false;
  }
  if (uint32_t missing = required_features & ~device->enabled_features) {
    program->reason = std::string("needs device features the Vulkan device ") + pd.props.deviceName +
                      " lacks: " + FeatureNames(missing);
    return false;
  }
  if (program->push_size > device->limits().maxPushConstantsSize) {
    program->reason = "needs " + std::to_string(program->push_size) + " bytes of push constants (" +
                      std::to_string(program->input_sizes.size()) + " inputs), the device has " +
                      std::to_string(device->limits().maxPushConstantsSize);
    return false;
  }
  if (program->bindings.size() > device->limits().maxPerStageDescriptorStorageBuffers) {
    program->reason = "needs " + std::to_string(program->bindings.size()) +
                      " storage buffers, the device allows " +
                      std::to_string(device->limits().maxPerStageDescriptorStorageBuffers);
    return false;
  }
  spirv::SpirvInterface interface;
  std::string error;
  if (!spirv::ScanSpirvInterface(program->code, &interface, &error)) {
    program->reason = "broken SPIR-V: " + error;
    return false;
  }
  spv_diagnostic diagnostic = nullptr;
  spv_const_binary_t binary{program->code.data(), program->code.size()};
  spv_result_t valid = spvValidate(device->spirv, &binary, &diagnostic);
  if (valid != SPV_SUCCESS) {
    program->reason = std::string("SPIR-V fails validation for this device's Vulkan version: ") +
                      (diagnostic && diagnostic->error ? diagnostic->error : "spvValidate failed");
    spvDiagnosticDestroy(diagnostic);
    return false;
  }
  spvDiagnosticDestroy(diagnostic);
  if (std::find(interface.compute_entry_points.begin(), interface.compute_entry_points.end(),
                program->entry_point) == interface.compute_entry_points.end()) {
    program->reason = "the SPIR-V has no GLCompute entry point named \"" + program->entry_point + "\"";
    return false;
  }
  for (uint32_t id : spec_ids) {
    if (interface.spec_ids.count(id)) continue;
    if (id == KILN_SPIRV_SPEC_REDUCE_PASS) {
      program->reason =
          "the SPIR-V does not take its pass from specialization constant 3 "
          "(layout(constant_id = 3), KILN_SPIRV_SPEC_REDUCE_PASS)";
    } else {
      program->reason = "the SPIR-V does not take its workgroup size from specialization constant " +
                        std::to_string(id) +
                        " (local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2)";
    }
    return false;
  }
  if (interface.bindings.count({0u, KILN_SPIRV_FAULT_BINDING})) {
    // The shader reports out-of-range allocation accesses: the driver binds it a fault record per launch.
    program->reports_faults = true;
    program->bindings.push_back(KILN_SPIRV_FAULT_BINDING);
  }
  const bool reduction = std::find(spec_ids.begin(), spec_ids.end(), KILN_SPIRV_SPEC_REDUCE_PASS) != spec_ids.end();
  if (!reduction && interface.bindings.count({0u, KILN_SPIRV_USR_BINDING})) {
    // An old-style root() that reads its usrData: the driver binds each launch's usrData snapshot (kernels only;
    // a reduction declaring binding 28 is refused below).
    program->reads_usr = true;
    program->bindings.push_back(KILN_SPIRV_USR_BINDING);
  }
  for (const auto& [set, binding] : interface.bindings) {
    if (set != 0 ||
        std::find(program->bindings.begin(), program->bindings.end(), binding) == program->bindings.end()) {
      program->reason = "the SPIR-V declares set " + std::to_string(set) + " binding " +
                        std::to_string(binding) + ", which the layout (" + program->layout_description +
                        ") does not have";
      return false;
    }
  }
  return true;
}

// A kernel's layouts and one pipeline per launch shape. A failure makes the kernel unsupported.
bool BuildKernel(Device* device, KernelInfo* kernel, uint32_t* created, uint32_t* cached) {
  if (!BuildLayouts(device, kernel)) return false;
  ChooseWorkgroups(device->limits(), kernel->workgroups);
  for (uint32_t s = 0; s < kNumShapes; ++s) {
    if (!BuildPipeline(device, kernel, kernel->workgroups[s], 3, &kernel->pipelines[s], created, cached)) {
      return false;
    }
  }
  return true;
}

// A reduction's layouts and its two pipelines: workgroup (W, 1, 1) and constant 3 = the pass.
bool BuildReduction(Device* device, ReductionInfo* reduction, uint32_t* created, uint32_t* cached) {
  if (!BuildLayouts(device, reduction)) return false;
  for (uint32_t pass = 0; pass < 2; ++pass) {
    const uint32_t constants[4] = {reduction->workgroup, 1, 1, pass};
    if (!BuildPipeline(device, reduction, constants, 4, &reduction->passes[pass], created, cached))
      return false;
  }
  return true;
}

void DestroyKernel(Device* device, KernelInfo* kernel) {
  DestroyPipelines(device, kernel->pipelines, kNumShapes);
  DestroyProgram(device, kernel);
}

void DestroyReduction(Device* device, ReductionInfo* reduction) {
  DestroyPipelines(device, reduction->passes, 2);
  DestroyProgram(device, reduction);
}

void SaveCache(Device* device) {
  Instance* instance = device->instance;
  if (device->cache_path.empty()) return;
  size_t size = 0;
  std::string data;
  if (vkGetPipelineCacheData(device->device, device->pipeline_cache, &size, nullptr) == VK_SUCCESS && size) {
    data.resize(size);
    if (vkGetPipelineCacheData(device->device, device->pipeline_cache, &size, data.data()) != VK_SUCCESS)
      data.clear();
    data.resize(size);
  }
  std::string error;
  std::lock_guard<std::mutex> lock(device->cache_mutex);
  if (!StorePipelineCache(device->cache_path, device->cache_identity, device->cache_keys, data, &error)) {
    instance->Log(kKilnHalLogWarning, "Vulkan pipeline cache not saved: " + error);
  }
}

}  // namespace vulkan
}  // namespace kiln
