// What kilnc's front end learns about a script (reflection.cc) and what the entry-point generator
// (entry_points.cc) and back end (backend.cc) need from it. Plain C++: no Clang or LLVM types.
#ifndef KILN_COMPILER_SCRIPT_INFO_H_
#define KILN_COMPILER_SCRIPT_INFO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "formats/kmod/module.h"

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

// The GPU form of one kernel (kiln/spirv_abi.h), produced from the AST by glsl_lowering.cc.
struct GpuKernelLowering {
  std::string glsl;             // a GLSL 4.50 compute shader; empty when the kernel is CPU-only
  std::string cpu_only_reason;  // why there is no GPU form, naming the construct and where it is
  uint32_t unit_sizes[9] = {};  // inputs, then [8] for the output (KilnSpirvKernelEntry.unit_sizes)
};

// The GPU form of one reduction (kiln/spirv_abi.h, "Reductions"): one shader for both passes.
struct GpuReductionLowering {
  std::string glsl;             // empty when the reduction is CPU-only
  std::string cpu_only_reason;  // why there is no GPU form, naming the construct and where it is
  uint32_t unit_sizes[8] = {};  // per input (KilnSpirvReductionEntry.unit_sizes)
  uint32_t accumulator_stride = 0;
  uint32_t result_words = 0;
};

// One row of the payload's global table (KilnSpirvGlobalEntry).
struct GpuGlobalSlot {
  std::string name;
  uint32_t kind = 0;  // KILN_SPIRV_GLOBAL_VALUE / _ALLOCATION
  uint32_t size = 0;
  uint32_t block_offset = 0;
  uint32_t unit_size = 0;
};

struct GpuLowering {
  bool done = false;                       // false when the lowering did not run (no GPU support built)
  std::vector<GpuKernelLowering> kernels;  // parallel to module.kernels
  std::vector<GpuReductionLowering> reductions;  // parallel to module.reductions
  std::vector<GpuGlobalSlot> globals;      // the payload's global table
  uint32_t global_block_size = 0;
  std::vector<std::string> notes;  // remarks on the lowering as a whole, for --verbose
};

struct ScriptInfo {
  KernelModuleDesc module;          // reflection; payloads, imports and global default values come later
  std::vector<KernelInfo> kernels;  // parallel to module.kernels
  std::vector<ReductionInfo> reductions;  // parallel to module.reductions
  std::vector<InvokableInfo> invokables;  // parallel to module.invokables
  GpuLowering gpu;                        // filled by the analysis pass when GPU lowering is built in
  // Where the script's init() is defined ("file:line:col") and that source line, for diagnostics the back end
  // gives about it; empty without an init().
  std::string init_location;
  std::string init_source_line;
};

// C source of every __kiln_expand_/__kiln_reduce_/__kiln_invoke_ entry point (kiln/kernel_abi.h), appended to
// the script's own source for the second, code-generating front-end pass.
std::string GenerateEntryPoints(const ScriptInfo& info);

}  // namespace compiler
}  // namespace kiln

#endif  // KILN_COMPILER_SCRIPT_INFO_H_
