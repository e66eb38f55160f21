// GLSL compute shaders to validated SPIR-V with the glslang and SPIRV-Tools libraries (see glsl_to_spirv.h).
#include "compiler/glsl_to_spirv.h"

#include <glslang/Public/ResourceLimits.h>
#include <glslang/Public/ShaderLang.h>
#include <glslang/SPIRV/GlslangToSpv.h>
#include <glslang/build_info.h>

#include <mutex>
#include <spirv-tools/libspirv.hpp>

namespace kiln {
namespace compiler {

bool CompileGlslToSpirv(const std::string& glsl, std::vector<uint32_t>* words, std::string* error) {
  static std::once_flag once;
  std::call_once(once, [] { glslang::InitializeProcess(); });
  glslang::TShader shader(EShLangCompute);
  const char* text = glsl.c_str();
  shader.setStrings(&text, 1);
  shader.setEnvInput(glslang::EShSourceGlsl, EShLangCompute, glslang::EShClientVulkan, 100);
  shader.setEnvClient(glslang::EShClientVulkan, glslang::EShTargetVulkan_1_1);
  shader.setEnvTarget(glslang::EShTargetSpv, glslang::EShTargetSpv_1_3);
  const EShMessages messages = static_cast<EShMessages>(EShMsgSpvRules | EShMsgVulkanRules);
  if (!shader.parse(GetDefaultResources(), 450, false, messages)) {
    *error = std::string("glslang: ") + shader.getInfoLog();
    return false;
  }
  glslang::TProgram program;
  program.addShader(&shader);
  if (!program.link(messages)) {
    *error = std::string("glslang (link): ") + program.getInfoLog();
    return false;
  }
  words->clear();
  glslang::SpvOptions options;
  options.validate = false;  // SPIRV-Tools validates below, with its message
  glslang::GlslangToSpv(*program.getIntermediate(EShLangCompute), *words, &options);
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_1);
  std::string message;
  tools.SetMessageConsumer(
      [&message](spv_message_level_t, const char*, const spv_position_t& position, const char* text) {
        message += "spirv-val: word " + std::to_string(position.index) + ": " + text + "\n";
      });
  if (!tools.Validate(*words)) {
    *error = message.empty() ? "spirv-val: invalid SPIR-V" : message;
    return false;
  }
  return true;
}

uint32_t GlslangVersion() {
  return GLSLANG_VERSION_MAJOR * 10000 + GLSLANG_VERSION_MINOR * 100 + GLSLANG_VERSION_PATCH;
}

std::string GlslangVersionString() {
  return std::to_string(GLSLANG_VERSION_MAJOR) + "." + std::to_string(GLSLANG_VERSION_MINOR) + "." +
         std::to_string(GLSLANG_VERSION_PATCH);
}

}  // namespace compiler
}  // namespace kiln
