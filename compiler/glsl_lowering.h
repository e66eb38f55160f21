// kilnc's GPU lowering: each kernel, from Clang's AST, to a GLSL 4.50 compute shader that follows
// kiln/spirv_abi.h (glsl_lowering.cc; spirv_backend.cc turns the GLSL into validated SPIR-V).
#ifndef KILN_COMPILER_GLSL_LOWERING_H_
#define KILN_COMPILER_GLSL_LOWERING_H_

#include "compiler/script_info.h"

namespace clang {
class ASTContext;
}  // namespace clang

namespace kiln {
namespace compiler {

// Fills info->gpu: the GLSL of every kernel of info->module that can be lowered, and for every other kernel
// the reason it is CPU-only (a construct GLSL lacks, named with its source location); plus the global
// table and block layout all kernels share. Never reports a diagnostic: a kernel that cannot be lowered is
// not an error. Runs at the end of the analysis pass, on the checked AST.
void LowerKernelsToGlsl(clang::ASTContext& context, ScriptInfo* info);

}  // namespace compiler
}  // namespace kiln

#endif  // KILN_COMPILER_GLSL_LOWERING_H_
