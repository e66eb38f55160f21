// kilnc's SPIR-V back end: the GLSL that glsl_lowering.cc wrote, compiled with the glslang library, checked
// with SPIRV-Tools' validator, and packed into the module's "spirv" payload (kiln/spirv_abi.h).
#ifndef KILN_COMPILER_SPIRV_BACKEND_H_
#define KILN_COMPILER_SPIRV_BACKEND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/glsl_to_spirv.h"
#include "compiler/script_info.h"

namespace kiln {
namespace compiler {

// The KILN_SPIRV_FEATURE_* bits a module needs, from its OpCapability instructions.
uint32_t SpirvRequiredFeatures(const std::vector<uint32_t>& words);

// Builds the "spirv" payload from info->gpu: compiles every lowered kernel; a kernel whose GLSL glslang
// rejects or whose SPIR-V does not validate becomes CPU-only with the message as its reason (a kilnc bug,
// never the user's). Updates info->gpu.kernels[i].cpu_only_reason accordingly.
std::vector<uint8_t> BuildSpirvPayload(ScriptInfo* info);

}  // namespace compiler
}  // namespace kiln

#endif  // KILN_COMPILER_SPIRV_BACKEND_H_
