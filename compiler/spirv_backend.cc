// kilnc's SPIR-V back end (see spirv_backend.h). glslang and SPIRV-Tools are linked as libraries.
#include "compiler/spirv_backend.h"

#include <utility>

#include "backends/vulkan/spirv_payload.h"
#include "kiln/spirv_abi.h"

namespace kiln {
namespace compiler {

uint32_t SpirvRequiredFeatures(const std::vector<uint32_t>& words) {
  uint32_t features = 0;
  for (size_t i = 5; i < words.size();) {
    const uint32_t count = words[i] >> 16;
    const uint32_t opcode = words[i] & 0xffff;
    if (count == 0) break;
    if (opcode == 17 /* OpCapability */ && i + 1 < words.size()) {
      switch (words[i + 1]) {
        case 39:  // Int8
          features |= KILN_SPIRV_FEATURE_INT8;
          break;
        case 22:  // Int16
          features |= KILN_SPIRV_FEATURE_INT16;
          break;
        case 11:  // Int64
          features |= KILN_SPIRV_FEATURE_INT64;
          break;
        case 9:  // Float16
          features |= KILN_SPIRV_FEATURE_FLOAT16;
          break;
        case 10:  // Float64
          features |= KILN_SPIRV_FEATURE_FLOAT64;
          break;
        case 4448:  // StorageBuffer8BitAccess
        case 4449:  // UniformAndStorageBuffer8BitAccess
          features |= KILN_SPIRV_FEATURE_STORAGE_8BIT;
          break;
        case 4433:  // StorageBuffer16BitAccess
        case 4434:  // UniformAndStorageBuffer16BitAccess
          features |= KILN_SPIRV_FEATURE_STORAGE_16BIT;
          break;
        default:
          break;
      }
    }
    i += count;
  }
  return features;
}

namespace {

// Compiles one lowered shader; a failure (a kilnc bug) empties `code` and becomes the CPU-only reason.
void CompileLowered(const std::string& glsl, std::vector<uint32_t>* code, uint32_t* features, std::string* reason) {
  if (glsl.empty()) return;
  std::string error;
  if (CompileGlslToSpirv(glsl, code, &error)) {
    *features = SpirvRequiredFeatures(*code);
    return;
  }
  code->clear();
  *reason = "kilnc's GLSL for this kernel did not compile (a kilnc bug): " + error;
  while (!reason->empty() && reason->back() == '\n') reason->pop_back();
}

}  // namespace

std::vector<uint8_t> BuildSpirvPayload(ScriptInfo* info) {
  vulkan::SpirvPayload payload;
  payload.spirv_version = kSpirvVersion;
  payload.generator_version = GlslangVersion();
  payload.global_block_size = info->gpu.global_block_size;
  for (size_t i = 0; i < info->module.kernels.size(); ++i) {
    const KernelDesc& desc = info->module.kernels[i];
    GpuKernelLowering& lowered = info->gpu.kernels[i];
    vulkan::SpirvKernel kernel;
    kernel.name = desc.name;
    kernel.num_inputs = static_cast<uint32_t>(desc.inputs.size());
    kernel.has_output = desc.has_output();
    for (int u = 0; u < 9; ++u) kernel.unit_sizes[u] = lowered.unit_sizes[u];
    CompileLowered(lowered.glsl, &kernel.code, &kernel.required_features, &lowered.cpu_only_reason);
    if (kernel.code.empty()) {
      kernel.cpu_only_reason = lowered.cpu_only_reason;
      for (uint32_t& unit : kernel.unit_sizes) unit = 0;
    }
    payload.kernels.push_back(std::move(kernel));
  }
  for (size_t i = 0; i < info->module.reductions.size(); ++i) {
    const ReductionDesc& desc = info->module.reductions[i];
    GpuReductionLowering& lowered = info->gpu.reductions[i];
    vulkan::SpirvReduction reduction;
    reduction.name = desc.name;
    reduction.num_inputs = static_cast<uint32_t>(desc.inputs.size());
    CompileLowered(lowered.glsl, &reduction.code, &reduction.required_features, &lowered.cpu_only_reason);
    if (reduction.code.empty()) {
      reduction.cpu_only_reason = lowered.cpu_only_reason;
    } else {
      reduction.accumulator_stride = lowered.accumulator_stride;
      reduction.result_words = lowered.result_words;
      for (int u = 0; u < 8; ++u) reduction.unit_sizes[u] = lowered.unit_sizes[u];
    }
    payload.reductions.push_back(std::move(reduction));
  }
  for (const GpuGlobalSlot& slot : info->gpu.globals) {
    vulkan::SpirvGlobal global;
    global.name = slot.name;
    global.kind = slot.kind;
    global.size = slot.size;
    global.block_offset = slot.block_offset;
    global.unit_size = slot.unit_size;
    payload.globals.push_back(global);
  }
  const std::string bytes = vulkan::WriteSpirvPayload(payload);
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

}  // namespace compiler
}  // namespace kiln
