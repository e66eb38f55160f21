// kilnc's Clang front end: the analysis pass (checks and reflection) and the code-generating pass.
#ifndef KILN_COMPILER_FRONTEND_H_
#define KILN_COMPILER_FRONTEND_H_

#include <memory>
#include <string>

#include "compiler/compiler.h"
#include "compiler/script_info.h"

namespace clang {
class BuiltinType;
}  // namespace clang

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace kiln {
namespace compiler {

struct FrontendInput {
  const std::string* source = nullptr;
  std::string filename;
  const CompileOptions* options = nullptr;
  // From the analysis pass's #pragma rs_fp_*; the code-generating pass compiles floating point accordingly.
  KernelPrecision precision = KernelPrecision::kFull;
};

// Parses the script with the prelude, runs kilnc's checks (recursion, function pointers, unknown rs*
// functions, kernel/reduction/invokable signatures) and fills `info` with the reflection. Returns false when
// Clang or a check reported an error. Diagnostics (errors and warnings) are appended to *diagnostics.
bool AnalyzeScript(const FrontendInput& input, ScriptInfo* info, std::string* diagnostics);

// Compiles the script with `appended` C source after it (the generated entry points) to unoptimized LLVM IR.
std::unique_ptr<llvm::Module> GenerateIr(const FrontendInput& input, const std::string& appended,
                                         llvm::LLVMContext* context, std::string* diagnostics);

// The Kiln scalar type a Clang builtin type stands for, or kKilnNoType for one kernels may not use. The one
// mapping from Clang's builtin kinds: reflection (reflection.cc) and the GPU lowering (glsl_types.cc) must
// agree on which types exist and what they are.
KilnType ScalarKilnType(const clang::BuiltinType* type);

}  // namespace compiler
}  // namespace kiln

#endif  // KILN_COMPILER_FRONTEND_H_
