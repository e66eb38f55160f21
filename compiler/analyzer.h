// The analysis pass's AST visitor, shared by its two halves: the checks of what a script may do (analyzer.cc)
// and the reflection of its kernels, reductions, invokables and globals (reflection.cc).
#ifndef KILN_COMPILER_ANALYZER_H_
#define KILN_COMPILER_ANALYZER_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "clang/AST/ASTContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/SourceManager.h"
#include "compiler/pragmas.h"
#include "compiler/script_info.h"

namespace kiln {
namespace compiler {

// Runs kilnc's checks over a translation unit that Sema accepted and fills the reflection; every problem is
// reported as a Clang diagnostic.
class Analyzer : public clang::RecursiveASTVisitor<Analyzer> {
 public:
  Analyzer(clang::ASTContext& context, PragmaState* pragmas, ScriptInfo* info);

  void Run(clang::TranslationUnitDecl* unit);

  // ---- Visitor ----

  bool TraverseFunctionDecl(clang::FunctionDecl* fd);
  bool VisitFunctionDecl(clang::FunctionDecl* fd);
  bool VisitCallExpr(clang::CallExpr* call);
  bool VisitDeclRefExpr(clang::DeclRefExpr* ref);
  bool VisitDeclaratorDecl(clang::DeclaratorDecl* decl);
  bool VisitVarDecl(clang::VarDecl* vd);

 private:
  struct Call {
    const clang::FunctionDecl* callee;
    clang::SourceLocation location;
  };

  // Checks (analyzer.cc).
  bool IsPreludeLocation(clang::SourceLocation loc) const;
  bool IsUserCode(clang::SourceLocation loc) const { return !IsPreludeLocation(loc); }
  bool IsPreludeDecl(const clang::Decl* decl) const { return IsPreludeLocation(decl->getLocation()); }
  bool ContainsFunctionPointer(clang::QualType type) const;
  void CheckFunctionPointerType(clang::QualType type, llvm::StringRef name, clang::SourceLocation loc);
  const clang::FunctionDecl* FindUserFunction(llvm::StringRef name) const;
  void CheckRecursion();
  HalLevel LevelOf(const clang::FunctionDecl* fd);
  bool LaunchesKernels(const clang::FunctionDecl* fd);
  bool CheckLevel(const HalLevel& level, const clang::FunctionDecl* fd, unsigned diag);
  void NoteAccessor(const clang::CallExpr* call, const clang::FunctionDecl* callee, bool user);

  // Reflection (reflection.cc).
  std::string Spelling(clang::QualType type) const { return type.getUnqualifiedType().getAsString(*policy_); }
  bool Describe(clang::QualType type, KernelTypeDesc* out, int depth = 0);
  static int SpecialRank(llvm::StringRef name);
  bool IsKernelContext(clang::QualType type) const;
  bool SpecialParam(const clang::ParmVarDecl* param, unsigned diag, llvm::StringRef owner, int* last_rank,
                    uint32_t* signature, std::vector<ArgKind>* args);
  void AnalyzeKernel(const clang::FunctionDecl* fd);
  void AnalyzeRootKernel(const clang::FunctionDecl* fd);
  bool IsOldStyleKernel(const clang::FunctionDecl* fd) const;
  static clang::QualType PointeeOf(const clang::ParmVarDecl* param);
  bool SameType(clang::QualType a, clang::QualType b) const {
    return context_.hasSameUnqualifiedType(a.getCanonicalType(), b.getCanonicalType());
  }
  void AnalyzeReductions();
  void AnalyzeInvokables();
  void AnalyzeGlobals();

  clang::ASTContext& context_;
  clang::SourceManager& sm_;
  clang::DiagnosticsEngine& diags_;
  PragmaState* pragmas_;
  ScriptInfo* info_;
  std::unique_ptr<clang::PrintingPolicy> policy_;

  const clang::FunctionDecl* current_ = nullptr;
  std::map<const clang::FunctionDecl*, std::vector<Call>> calls_;
  std::set<const clang::DeclRefExpr*> direct_callee_refs_;
  std::vector<const clang::FunctionDecl*> user_functions_;
  std::vector<const clang::VarDecl*> globals_;
  std::vector<std::pair<std::string, clang::SourceLocation>> for_each_calls_;
  std::set<const clang::FunctionDecl*> reduction_functions_;
  std::map<const clang::FunctionDecl*, HalLevel> levels_;
  std::map<const clang::FunctionDecl*, bool> launches_;
  // Per rs_allocation global (canonical declaration): the lane types of the typed accessors used on it.
  std::map<const clang::VarDecl*, std::set<KilnType>> accessed_as_;

  unsigned diag_recursion_, diag_function_pointer_value_, diag_function_pointer_type_, diag_indirect_call_,
      diag_unknown_rs_, diag_undeclared_, diag_undefined_, diag_kernel_, diag_reduction_, diag_invokable_,
      diag_global_, diag_for_each_;
};

}  // namespace compiler
}  // namespace kiln

#endif  // KILN_COMPILER_ANALYZER_H_
