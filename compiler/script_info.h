// What kilnc's front end learns about a script (frontend.cc) and what the entry-point generator
// (entry_points.cc) and back end (backend.cc) need from it. Plain C++: no Clang or LLVM types.
#ifndef KILN_COMPILER_SCRIPT_INFO_H_
#define KILN_COMPILER_SCRIPT_INFO_H_

#include <string>
#include <vector>

#include "runtime/module/module.h"

namespace kiln {
namespace compiler {

// What a kernel (or reduction accumulator) parameter receives, in the order the source declares them.
enum class ArgKind {
  kInput,      // the next input element, by value (RS_KERNEL) or ...
  kInputPtr,   // ... by pointer (old-style root)
  kOutputPtr,  // root()'s output pointer
  kUsrData,    // root()'s usrData
  kX,
  kY,
  kZ,
  kContext,
};

struct KernelInfo {
  std::string function;  // the source function
  std::vector<ArgKind> args;
  std::vector<std::string> input_types;  // C spellings, usable at the end of the translation unit
  std::string output_type;               // empty for void kernels
};

struct ReductionInfo {
  std::string accumulator_type;           // C spelling of the accumulator data type
  std::vector<ArgKind> accumulator_args;  // after the accumulator pointer
  std::vector<std::string> input_types;
  std::string result_type;
};

struct InvokableInfo {
  std::string function;
  std::vector<std::string> param_types;
};

struct ScriptInfo {
  KernelModuleDesc module;          // reflection; payloads, imports and global default values come later
  std::vector<KernelInfo> kernels;  // parallel to module.kernels
  std::vector<ReductionInfo> reductions;  // parallel to module.reductions
  std::vector<InvokableInfo> invokables;  // parallel to module.invokables
};

// C source of every __kiln_expand_/__kiln_reduce_/__kiln_invoke_ entry point (kiln/kernel_abi.h), appended to
// the script's own source for the second, code-generating front-end pass.
std::string GenerateEntryPoints(const ScriptInfo& info);

}  // namespace compiler
}  // namespace kiln

#endif  // KILN_COMPILER_SCRIPT_INFO_H_
