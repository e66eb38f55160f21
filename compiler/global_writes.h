// Which file-scope variables a translation unit's code writes (assigns, increments, or takes the address of).
// The reflection uses it to carry written `static` globals between devices; the GPU lowering folds a static
// global that nothing writes into the shader as a constant.
#ifndef KILN_COMPILER_GLOBAL_WRITES_H_
#define KILN_COMPILER_GLOBAL_WRITES_H_

#include <set>

#include "clang/AST/RecursiveASTVisitor.h"

namespace kiln {
namespace compiler {

class GlobalWriteScanner : public clang::RecursiveASTVisitor<GlobalWriteScanner> {
 public:
  // Canonical declarations of the written globals.
  std::set<const clang::VarDecl*> written;

  bool VisitBinaryOperator(clang::BinaryOperator* op) {
    if (op->isAssignmentOp()) Mark(op->getLHS());
    return true;
  }
  bool VisitUnaryOperator(clang::UnaryOperator* op) {
    if (op->isIncrementDecrementOp() || op->getOpcode() == clang::UO_AddrOf) Mark(op->getSubExpr());
    return true;
  }

 private:
  void Mark(const clang::Expr* e) {
    for (int depth = 0; e && depth < 64; ++depth) {
      e = e->IgnoreParenImpCasts();
      if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
        if (const auto* var = llvm::dyn_cast<clang::VarDecl>(ref->getDecl())) {
          if (var->hasGlobalStorage()) written.insert(var->getCanonicalDecl());
        }
        return;
      }
      if (const auto* member = llvm::dyn_cast<clang::MemberExpr>(e)) {
        e = member->getBase();
      } else if (const auto* subscript = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) {
        e = subscript->getBase();
      } else if (const auto* swizzle = llvm::dyn_cast<clang::ExtVectorElementExpr>(e)) {
        e = swizzle->getBase();
      } else {
        return;
      }
    }
  }
};

}  // namespace compiler
}  // namespace kiln

#endif  // KILN_COMPILER_GLOBAL_WRITES_H_
