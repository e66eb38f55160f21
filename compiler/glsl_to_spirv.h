// GLSL 4.50 compute shaders to SPIR-V, with the glslang library, validated by SPIRV-Tools. The one place Kiln
// drives glslang: kilnc's SPIR-V back end and the Vulkan tests (which write kernels by hand) both use it.
#ifndef KILN_COMPILER_GLSL_TO_SPIRV_H_
#define KILN_COMPILER_GLSL_TO_SPIRV_H_

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {
namespace compiler {

// What kilnc targets: SPIR-V 1.3 for Vulkan 1.1.
constexpr uint32_t kSpirvVersion = 0x00010300;

// Compiles one GLSL 4.50 compute shader to SPIR-V and validates it for Vulkan 1.1. On failure returns false
// with glslang's or the validator's message.
bool CompileGlslToSpirv(const std::string& glsl, std::vector<uint32_t>* words, std::string* error);

// glslang's version as major * 10000 + minor * 100 + patch, and as "12.0.0".
uint32_t GlslangVersion();
std::string GlslangVersionString();

}  // namespace compiler
}  // namespace kiln

#endif  // KILN_COMPILER_GLSL_TO_SPIRV_H_
