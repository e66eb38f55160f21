// kilnc's SPIR-V back end (see spirv_backend.h). glslang and SPIRV-Tools are linked as libraries.
#include "compiler/spirv_backend.h"

#include <utility>

#include "formats/spirv/spirv_payload.h"
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

// Fills the shader part of a payload row from one lowered shader. A shader glslang rejects (a kilnc bug) gets no
// code, and the message becomes its CPU-only reason, in `reason` too.
void CompileLowered(const std::string& name, size_t num_inputs, const std::string& glsl, std::string* reason,
                    spirv::SpirvShader* out) {
  out->name = name;
  out->num_inputs = static_cast<uint32_t>(num_inputs);
  std::string error;
  if (!glsl.empty() && CompileGlslToSpirv(glsl, &out->code, &error)) {
    out->required_features = SpirvRequiredFeatures(out->code);
    return;
  }
  out->code.clear();
  if (!glsl.empty()) {
    *reason = "kilnc's GLSL for it did not compile (a kilnc bug): " + error;
    while (!reason->empty() && reason->back() == '\n') reason->pop_back();
  }
  out->cpu_only_reason = *reason;
}

}  // namespace

std::vector<uint8_t> BuildSpirvPayload(ScriptInfo* info) {
  spirv::SpirvPayload payload;
  payload.spirv_version = kSpirvVersion;
  payload.generator_version = GlslangVersion();
  payload.global_block_size = info->gpu.global_block_size;
  for (size_t i = 0; i < info->module.kernels.size(); ++i) {
    const KernelDesc& desc = info->module.kernels[i];
    GpuKernelLowering& lowered = info->gpu.kernels[i];
    spirv::SpirvKernel kernel;
    CompileLowered(desc.name, desc.inputs.size(), lowered.glsl, &lowered.cpu_only_reason, &kernel);
    kernel.has_output = desc.has_output();
    if (!kernel.code.empty()) {
      for (int u = 0; u < 9; ++u) kernel.unit_sizes[u] = lowered.unit_sizes[u];
    }
    payload.kernels.push_back(std::move(kernel));
  }
  for (size_t i = 0; i < info->module.reductions.size(); ++i) {
    const ReductionDesc& desc = info->module.reductions[i];
    GpuReductionLowering& lowered = info->gpu.reductions[i];
    spirv::SpirvReduction reduction;
    CompileLowered(desc.name, desc.inputs.size(), lowered.glsl, &lowered.cpu_only_reason, &reduction);
    if (!reduction.code.empty()) {
      reduction.accumulator_stride = lowered.accumulator_stride;
      reduction.result_words = lowered.result_words;
      for (int u = 0; u < 8; ++u) reduction.unit_sizes[u] = lowered.unit_sizes[u];
    }
    payload.reductions.push_back(std::move(reduction));
  }
  for (const GpuGlobalSlot& slot : info->gpu.globals) {
    spirv::SpirvGlobal global;
    global.name = slot.name;
    global.kind = slot.kind;
    global.size = slot.size;
    global.block_offset = slot.block_offset;
    global.unit_size = slot.unit_size;
    payload.globals.push_back(global);
  }
  const std::string bytes = spirv::WriteSpirvPayload(payload);
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

}  // namespace compiler
}  // namespace kiln
