// kilnc as a library: compiles one RenderScript-style kernel source into a kernel module (reflection plus an
// LLVM bitcode payload for the CPU driver). The kilnc tool (kilnc_main.cc) and the tests call this.
#ifndef KILN_COMPILER_COMPILER_H_
#define KILN_COMPILER_COMPILER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "formats/kmod/module.h"

namespace kiln {

struct CompileOptions {
  std::vector<std::string> include_dirs;  // -I
  std::vector<std::string> defines;       // -D: "NAME" or "NAME=VALUE"
  int opt_level = 2;                      // 0 to 3; the loop and SLP vectorizers never run (the driver's job)
  bool keep_ir_text = false;              // fill CompileResult::llvm_ir with the final module's textual IR
  // Lower kernels to GLSL and SPIR-V and add the "spirv" payload (kiln/spirv_abi.h); kernels that cannot be
  // lowered get a reason in KernelDesc::cpu_only_reasons. Without GPU support built in, nothing happens.
  bool lower_gpu = true;
};

struct CompileResult {
  bool ok = false;
  // Clang-style diagnostics, "file:line:col: error: ..." with the source line and a caret; warnings too.
  std::string diagnostics;
  KernelModuleDesc module;         // complete (reflection and payloads) when ok
  std::vector<uint8_t> kmod;       // the serialized module when ok
  std::string llvm_ir;             // when CompileOptions::keep_ir_text
  std::string entry_point_source;  // the generated C of the entry points (for --verbose and tests)
  // Parallel to module.kernels when the GPU lowering ran: each kernel's GLSL (the source of its SPIR-V),
  // empty for kernels that could not be lowered (a kernel whose GLSL glslang rejected keeps it, to debug
  // kilnc). Empty when the lowering did not run.
  std::vector<std::string> kernel_glsl;
  std::vector<std::string> reduction_glsl;  // the same for reductions (one shader for both passes)
  std::vector<std::string> gpu_notes;  // module-wide remarks, e.g. that reductions run on the CPU
};

// Compiles `source` as if read from `filename` (used in diagnostics, for the source name in the header, and
// to resolve quoted #includes relative to it). Never throws; on failure result->ok is false and
// result->diagnostics says why.
void CompileKernelSource(const std::string& source, const std::string& filename,
                         const CompileOptions& options, CompileResult* result);

// "kilnc 0.1.0 (LLVM 19.x.y, glslang 12.0.0, SPIR-V 1.3)" (the last two when GPU lowering is built in)
std::string CompilerVersion();

}  // namespace kiln

#endif  // KILN_COMPILER_COMPILER_H_
