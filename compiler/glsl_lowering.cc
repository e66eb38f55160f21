// kilnc's GPU lowering: kernels from Clang's AST to GLSL 4.50 compute shaders (kiln/spirv_abi.h).
//
// The AST is structured, so the lowering walks it and writes GLSL text as the source reads: statements,
// loops and branches as written, every helper function the kernel reaches (the script's own and the
// prelude's inline ones: mad, clamp, dot, convert_*, rsPackColorTo8888...) as a GLSL function, and the few
// things GLSL spells differently (C's remainder, integer promotions, comparisons that yield int, 8- and
// 16-bit values kept in 32-bit registers and wrapped where C would truncate) through small helpers. The
// runtime functions that touch memory or the launch (rsGetElementAt_*, rsSetElementAt_*, rsAllocationGetDim*,
// rsGetDim*) and the math library's external functions are mapped by name.
//
// Anything else (pointers, atomics, rsDebug, half, math functions with no GPU form of the CPU's precision...)
// makes the kernel CPU-only, with the construct and its source location as the reason. That is never an
// error: the CPU payload always has every kernel.
//
// This file runs the lowering over a script's kernels and reductions and words the reasons; the lowering
// itself is in glsl_*.cc, one file per topic (glsl_lowering_internal.h).
#include "compiler/glsl_lowering.h"

#include <map>
#include <set>
#include <string>
#include <utility>

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "compiler/global_writes.h"
#include "compiler/glsl_lowering_internal.h"
#include "compiler/prelude_files.h"

namespace kiln {
namespace compiler {
void ScriptLowering::Run() {
  GlobalWriteScanner scanner;
  scanner.TraverseDecl(context_.getTranslationUnitDecl());
  written_ = std::move(scanner.written);
  CollectDecls();
  LayOutGlobals();
  GpuLowering& gpu = info_->gpu;
  gpu.kernels.assign(info_->module.kernels.size(), GpuKernelLowering());
  bool any_reads_globals = false;
  for (size_t i = 0; i < info_->module.kernels.size(); ++i) {
    const KernelDesc& desc = info_->module.kernels[i];
    GpuKernelLowering& out = gpu.kernels[i];
    auto it = functions_.find(info_->kernels[i].function);
    if (it == functions_.end()) {
      out.cpu_only_reason = "internal: kilnc did not find the kernel's definition";
      continue;
    }
    KernelLowering lowering(this, context_);
    reads_globals_ = false;
    const auto saved_units = allocation_units_;
    if (!lowering.Lower(it->second, desc, info_->kernels[i], &out)) {
      out.glsl.clear();
      out.cpu_only_reason = lowering.reason();
      allocation_units_ = saved_units;
      continue;
    }
    any_reads_globals = any_reads_globals || reads_globals_;
  }
  gpu.reductions.assign(info_->module.reductions.size(), GpuReductionLowering());
  for (size_t i = 0; i < info_->module.reductions.size(); ++i) {
    const ReductionDesc& desc = info_->module.reductions[i];
    GpuReductionLowering& out = gpu.reductions[i];
    KernelLowering::ReductionFunctions fns;
    auto find = [&](const std::string& name) -> const clang::FunctionDecl* {
      auto it = name.empty() ? functions_.end() : functions_.find(name);
      return it == functions_.end() ? nullptr : it->second;
    };
    fns.initializer = find(desc.initializer);
    fns.accumulator = find(desc.accumulator);
    fns.combiner = find(desc.combiner);
    fns.outconverter = find(desc.outconverter);
    if (!fns.accumulator || (!desc.initializer.empty() && !fns.initializer) ||
        (!desc.combiner.empty() && !fns.combiner) || (!desc.outconverter.empty() && !fns.outconverter)) {
      out.cpu_only_reason = "internal: kilnc did not find the reduction's functions";
      continue;
    }
    KernelLowering lowering(this, context_);
    reads_globals_ = false;
    const auto saved_units = allocation_units_;
    if (!lowering.LowerReduction(desc, info_->reductions[i], fns, &out)) {
      out.glsl.clear();
      out.cpu_only_reason = lowering.reason();
      allocation_units_ = saved_units;
      continue;
    }
    any_reads_globals = any_reads_globals || reads_globals_;
  }
  for (const auto& entry : allocation_units_) gpu.globals[entry.first].unit_size = entry.second;
  if (!any_reads_globals) {
    gpu.globals.clear();
    gpu.global_block_size = 0;
  } else {
    gpu.global_block_size = (block_size_ + 15) / 16 * 16;
  }
  gpu.done = true;
}

bool ScriptLowering::IsPrelude(clang::SourceLocation loc) const {
  const clang::SourceManager& sm = context_.getSourceManager();
  if (loc.isInvalid()) return true;
  return sm.getFilename(sm.getExpansionLoc(loc)).starts_with(kPreludeDir);
}

void ScriptLowering::CollectDecls() {
  for (const clang::Decl* decl : context_.getTranslationUnitDecl()->decls()) {
    if (const auto* fd = llvm::dyn_cast<clang::FunctionDecl>(decl)) {
      if (fd->doesThisDeclarationHaveABody() && !IsPrelude(fd->getLocation())) {
        functions_[fd->getNameAsString()] = fd;
      }
    } else if (const auto* var = llvm::dyn_cast<clang::VarDecl>(decl)) {
      if (!IsPrelude(var->getLocation())) vars_[var->getNameAsString()] = var->getCanonicalDecl();
    }
  }
}

std::string KernelLowering::Where(clang::SourceLocation loc) const {
  const clang::SourceManager& sm = context_.getSourceManager();
  const clang::PresumedLoc presumed = sm.getPresumedLoc(sm.getExpansionLoc(loc));
  if (presumed.isInvalid()) return "<unknown location>";
  std::string file = presumed.getFilename();
  const size_t slash = file.find_last_of('/');
  if (slash != std::string::npos) file = file.substr(slash + 1);
  return file + ":" + std::to_string(presumed.getLine()) + ":" + std::to_string(presumed.getColumn());
}

void KernelLowering::Fail(clang::SourceLocation loc, const std::string& what) {
  // A construct met inside a prelude function is reported where the script calls into the prelude.
  if (reason_.empty()) {
    if (script_->IsPrelude(loc) && user_site_.isValid()) {
      reason_ = what + ", in the runtime function '" + user_callee_ + "' called at " + Where(user_site_);
    } else {
      reason_ = what + " (" + Where(loc) + ")";
    }
  }
  throw Failure();
}

void LowerKernelsToGlsl(clang::ASTContext& context, ScriptInfo* info) { ScriptLowering(context, info).Run(); }

}  // namespace compiler
}  // namespace kiln
