// GLSL 4.50 compute shaders to validated SPIR-V with the real glslang and SPIRV-Tools libraries, for tests
// and benchmarks that write kernels by hand to kiln/spirv_abi.h until kilnc emits them.
#ifndef KILN_TESTS_VULKAN_GLSL_COMPILER_H_
#define KILN_TESTS_VULKAN_GLSL_COMPILER_H_

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {
namespace testing {

// Compiles `source` for Vulkan 1.1 / SPIR-V 1.3 and validates the result. Returns false with the compiler's
// or validator's message in `error`.
bool CompileGlslCompute(const std::string& source, std::vector<uint32_t>* spirv, std::string* error);

// glslang's version as major * 10000 + minor * 100 + patch.
uint32_t GlslangVersion();

}  // namespace testing
}  // namespace kiln

#endif  // KILN_TESTS_VULKAN_GLSL_COMPILER_H_
