#include "tests/vulkan/glsl_compiler.h"

#include <glslang/Public/ResourceLimits.h>
#include <glslang/Public/ShaderLang.h>
#include <glslang/SPIRV/GlslangToSpv.h>
#include <glslang/build_info.h>
#include <spirv-tools/libspirv.h>

#include <mutex>

namespace kiln {
namespace testing {

bool CompileGlslCompute(const std::string& source, std::vector<uint32_t>* spirv, std::string* error) {
  static std::once_flag once;
  std::call_once(once, [] { glslang::InitializeProcess(); });
  glslang::TShader shader(EShLangCompute);
  const char* text = source.c_str();
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
    *error = std::string("glslang link: ") + program.getInfoLog();
    return false;
  }
  spirv->clear();
  glslang::GlslangToSpv(*program.getIntermediate(EShLangCompute), *spirv);
  spv_context context = spvContextCreate(SPV_ENV_VULKAN_1_1);
  spv_diagnostic diagnostic = nullptr;
  spv_const_binary_t binary{spirv->data(), spirv->size()};
  const spv_result_t result = spvValidate(context, &binary, &diagnostic);
  if (result != SPV_SUCCESS) {
    *error = std::string("spirv-val: ") + (diagnostic && diagnostic->error ? diagnostic->error : "invalid");
  }
  spvDiagnosticDestroy(diagnostic);
  spvContextDestroy(context);
  return result == SPV_SUCCESS;
}

uint32_t GlslangVersion() {
  return GLSLANG_VERSION_MAJOR * 10000 + GLSLANG_VERSION_MINOR * 100 + GLSLANG_VERSION_PATCH;
}

}  // namespace testing
}  // namespace kiln
