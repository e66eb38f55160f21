// The analysis pass's checks: what a script may not do although Clang accepts it (recursion, function
// pointers, calls to undefined or unknown runtime functions, launches from kernels, HAL levels kilnc cannot
// run), and the driver that runs them before the reflection.
#include "compiler/analyzer.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "clang/AST/Attr.h"
#include "compiler/prelude_files.h"

namespace kiln {
namespace compiler {

Analyzer::Analyzer(clang::ASTContext& context, PragmaState* pragmas, ScriptInfo* info)
    : context_(context),
      sm_(context.getSourceManager()),
      diags_(context.getDiagnostics()),
      pragmas_(pragmas),
      info_(info) {
  policy_ = std::make_unique<clang::PrintingPolicy>(context.getLangOpts());
  policy_->SuppressTagKeyword = false;
  auto id = [&](llvm::StringRef text) {
    return diags_.getDiagnosticIDs()->getCustomDiagID(clang::DiagnosticIDs::Error, text);
  };
  diag_recursion_ = id("recursive call to '%0' (%1); kernels and script functions cannot recurse");
  diag_function_pointer_value_ = id("function pointers are not supported: '%0' is used as a value");
  diag_function_pointer_type_ = id("function pointers are not supported: '%0' has type %1");
  diag_indirect_call_ = id("function pointers are not supported: indirect call");
  diag_unknown_rs_ = id("call to unknown RenderScript runtime function '%0'");
  diag_undeclared_ =
      id("call to undeclared function '%0'; a script can only call functions it defines and "
         "the runtime functions of the prelude");
  diag_undefined_ = id("function '%0' is declared but never defined; a script cannot call external code");
  diag_kernel_ = id("kernel '%0': %1");
  diag_reduction_ = id("reduction '%0': %1");
  diag_invokable_ = id("invokable '%0': %1");
  diag_global_ = id("global '%0': %1");
  diag_for_each_ = id("rsForEach: '%0' is not a kernel of this script");
}

void Analyzer::Run(clang::TranslationUnitDecl* unit) {
  TraverseDecl(unit);
  CheckRecursion();
  AnalyzeReductions();  // first: a reduction's functions are not old-style kernels
  for (const clang::FunctionDecl* fd : user_functions_) {
    if (fd->hasAttr<clang::RenderScriptKernelAttr>()) {
      AnalyzeKernel(fd);
    } else if (IsOldStyleKernel(fd)) {
      AnalyzeRootKernel(fd);
    }
  }
  AnalyzeInvokables();
  AnalyzeGlobals();
  for (const auto& call : for_each_calls_) {
    if (!info_->module.FindKernel(call.first)) diags_.Report(call.second, diag_for_each_) << call.first;
  }
  info_->module.package_name = pragmas_->package_name;
  info_->module.precision = pragmas_->precision;
  HalLevel max_level;
  for (const KernelDesc& k : info_->module.kernels) max_level = std::max(max_level, k.hal_level);
  for (const InvokableDesc& f : info_->module.invokables) max_level = std::max(max_level, f.hal_level);
  for (const ReductionDesc& r : info_->module.reductions) max_level = std::max(max_level, r.hal_level);
  if (const clang::FunctionDecl* init = FindUserFunction("init")) {
    max_level = std::max(max_level, LevelOf(init));
    const clang::SourceLocation loc = sm_.getExpansionLoc(init->getLocation());
    const clang::PresumedLoc presumed = sm_.getPresumedLoc(loc);
    bool invalid = false;
    const char* at = sm_.getCharacterData(loc, &invalid);
    if (presumed.isValid() && !invalid) {
      info_->init_location = std::string(presumed.getFilename()) + ":" + std::to_string(presumed.getLine()) + ":" +
                             std::to_string(presumed.getColumn());
      const char* start = at - (presumed.getColumn() - 1);
      const char* end = start;
      while (*end != '\0' && *end != '\n') ++end;
      info_->init_source_line.assign(start, end);
    }
  }
  info_->module.hal_level = max_level;
}

// RenderScript's old-style kernels: root(), and any other function the script exports (not static, not
// inline) that returns void and takes a pointer first: `void f(const T* in, T* out, const void* usrData,
// uint32_t x, uint32_t y)` and its variants. Such a function cannot be an invokable, whose arguments come from
// the host, so RenderScript makes it a kernel, and so does kilnc.
bool Analyzer::IsOldStyleKernel(const clang::FunctionDecl* fd) const {
  if (fd->getName() == "root") return true;
  if (fd->hasAttr<clang::RenderScriptKernelAttr>() || fd->getName() == "init" ||
      fd->getStorageClass() == clang::SC_Static || fd->isInlineSpecified() || !fd->getReturnType()->isVoidType() ||
      fd->getNumParams() == 0 || !fd->getParamDecl(0)->getType()->isPointerType()) {
    return false;
  }
  return reduction_functions_.count(fd->getCanonicalDecl()) == 0;
}

// ---- Visitor ----

bool Analyzer::TraverseFunctionDecl(clang::FunctionDecl* fd) {
  const clang::FunctionDecl* saved = current_;
  if (fd->doesThisDeclarationHaveABody()) current_ = fd->getCanonicalDecl();
  const bool result = clang::RecursiveASTVisitor<Analyzer>::TraverseFunctionDecl(fd);
  current_ = saved;
  return result;
}

bool Analyzer::VisitFunctionDecl(clang::FunctionDecl* fd) {
  if (IsUserCode(fd->getLocation()) && fd->doesThisDeclarationHaveABody()) {
    user_functions_.push_back(fd);
    CheckFunctionPointerType(fd->getReturnType(), fd->getName(), fd->getLocation());
  }
  return true;
}

bool Analyzer::VisitCallExpr(clang::CallExpr* call) {
  const clang::FunctionDecl* callee = call->getDirectCallee();
  const bool user = IsUserCode(call->getBeginLoc());
  if (!callee) {
    if (user) diags_.Report(call->getBeginLoc(), diag_indirect_call_) << call->getSourceRange();
    return true;
  }
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(call->getCallee()->IgnoreParenImpCasts())) {
    direct_callee_refs_.insert(ref);
  }
  if (current_) calls_[current_].push_back({callee->getCanonicalDecl(), call->getBeginLoc()});
  if (callee->getName() == "__kiln_for_each" && call->getNumArgs() > 0) {
    if (const auto* name = llvm::dyn_cast<clang::StringLiteral>(call->getArg(0)->IgnoreParenImpCasts())) {
      for_each_calls_.push_back({name->getString().str(), sm_.getExpansionLoc(call->getBeginLoc())});
    }
  }
  NoteAccessor(call, callee, user);
  if (!user || callee->getBuiltinID() != 0 || callee->isDefined() || IsPreludeDecl(callee)) return true;
  const std::string name = callee->getNameAsString();
  if (llvm::StringRef(name).starts_with("rs")) {
    diags_.Report(call->getBeginLoc(), diag_unknown_rs_) << name << call->getSourceRange();
  } else if (callee->isImplicit()) {
    diags_.Report(call->getBeginLoc(), diag_undeclared_) << name << call->getSourceRange();
  } else {
    diags_.Report(call->getBeginLoc(), diag_undefined_) << name << call->getSourceRange();
  }
  return true;
}

// rsGetElementAt_<T>(gAlloc, ...) and rsSetElementAt_<T>(gAlloc, value, ...) in the script's code: records T's
// lane type for the global, which the reflection carries so that the runtime can warn when a tensor of another
// type is bound to it.
void Analyzer::NoteAccessor(const clang::CallExpr* call, const clang::FunctionDecl* callee, bool user) {
  if (!user || call->getNumArgs() < 2) return;
  const llvm::StringRef name = callee->getName();
  const bool get = name.starts_with("rsGetElementAt_"), set = name.starts_with("rsSetElementAt_");
  if (!get && !set) return;
  const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(call->getArg(0)->IgnoreParenImpCasts());
  const auto* var = ref ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
  if (!var || !var->hasGlobalStorage()) return;
  const clang::QualType element = get ? callee->getReturnType() : callee->getParamDecl(1)->getType();
  KernelTypeDesc desc;
  if (Describe(element, &desc) && desc.kind == KernelTypeKind::kScalar && desc.element_type != kKilnNoType) {
    accessed_as_[var->getCanonicalDecl()].insert(desc.element_type);
  }
}

bool Analyzer::VisitDeclRefExpr(clang::DeclRefExpr* ref) {
  if (llvm::isa<clang::FunctionDecl>(ref->getDecl()) && !direct_callee_refs_.count(ref) &&
      IsUserCode(ref->getLocation())) {
    diags_.Report(ref->getLocation(), diag_function_pointer_value_) << ref->getDecl()->getName();
  }
  return true;
}

bool Analyzer::VisitDeclaratorDecl(clang::DeclaratorDecl* decl) {
  if (!llvm::isa<clang::FunctionDecl>(decl) && IsUserCode(decl->getLocation())) {
    CheckFunctionPointerType(decl->getType(), decl->getName(), decl->getLocation());
  }
  return true;
}

bool Analyzer::VisitVarDecl(clang::VarDecl* vd) {
  if (vd->isFileVarDecl() && IsUserCode(vd->getLocation())) globals_.push_back(vd);
  return true;
}

bool Analyzer::IsPreludeLocation(clang::SourceLocation loc) const {
  if (loc.isInvalid()) return true;  // builtins
  // "<built-in>" (predefines, -include), "<scratch space>" and the like are the compiler's, not the user's.
  const clang::FileID file = sm_.getFileID(sm_.getExpansionLoc(loc));
  if (const clang::OptionalFileEntryRef entry = sm_.getFileEntryRefForID(file)) {
    return entry->getName().starts_with(kPreludeDir);
  }
  const llvm::StringRef buffer = sm_.getBufferName(sm_.getExpansionLoc(loc));
  return buffer.starts_with("<") || buffer.starts_with(kPreludeDir);
}

bool Analyzer::ContainsFunctionPointer(clang::QualType type) const {
  for (int depth = 0; depth < 32 && !type.isNull(); ++depth) {
    const clang::Type* t = type.getCanonicalType().getTypePtr();
    if (t->isFunctionPointerType() || t->isBlockPointerType() || t->isFunctionType()) return true;
    if (const auto* pointer = t->getAs<clang::PointerType>()) {
      type = pointer->getPointeeType();
    } else if (const auto* array = llvm::dyn_cast<clang::ArrayType>(t)) {
      type = array->getElementType();
    } else {
      return false;
    }
  }
  return false;
}

void Analyzer::CheckFunctionPointerType(clang::QualType type, llvm::StringRef name,
                                        clang::SourceLocation loc) {
  if (ContainsFunctionPointer(type)) diags_.Report(loc, diag_function_pointer_type_) << name << type;
}

const clang::FunctionDecl* Analyzer::FindUserFunction(llvm::StringRef name) const {
  for (const clang::FunctionDecl* fd : user_functions_) {
    if (fd->getName() == name) return fd;
  }
  return nullptr;
}

// Reports every call cycle once, at the call that closes it.
void Analyzer::CheckRecursion() {
  enum State { kUnvisited, kActive, kDone };
  std::map<const clang::FunctionDecl*, State> state;
  std::vector<const clang::FunctionDecl*> stack;
  std::function<void(const clang::FunctionDecl*)> visit = [&](const clang::FunctionDecl* fd) {
    state[fd] = kActive;
    stack.push_back(fd);
    auto it = calls_.find(fd);
    if (it != calls_.end()) {
      for (const Call& call : it->second) {
        const State s = state[call.callee];
        if (s == kActive) {
          std::string cycle;
          auto begin = std::find(stack.begin(), stack.end(), call.callee);
          for (auto f = begin; f != stack.end(); ++f) cycle += (*f)->getNameAsString() + " -> ";
          cycle += call.callee->getNameAsString();
          diags_.Report(call.location, diag_recursion_) << call.callee->getName() << cycle;
        } else if (s == kUnvisited) {
          visit(call.callee);
        }
      }
    }
    stack.pop_back();
    state[fd] = kDone;
  };
  for (const clang::FunctionDecl* fd : user_functions_) {
    if (state[fd->getCanonicalDecl()] == kUnvisited) visit(fd->getCanonicalDecl());
  }
}

// The HAL level a function needs: the maximum over its own annotation and everything it calls.
HalLevel Analyzer::LevelOf(const clang::FunctionDecl* fd) {
  fd = fd->getCanonicalDecl();
  auto cached = levels_.find(fd);
  if (cached != levels_.end()) return cached->second;
  HalLevel level;
  levels_[fd] = level;  // cycles were reported already; this just stops them here
  for (const clang::FunctionDecl* redecl : fd->redecls()) {
    for (const auto* attr : redecl->specific_attrs<clang::AnnotateAttr>()) {
      llvm::StringRef text = attr->getAnnotation();
      if (!text.consume_front("kiln_hal:")) continue;
      auto [major, minor] = text.split('.');
      HalLevel annotated;
      unsigned value = 0;
      if (!major.getAsInteger(10, value)) annotated.major = static_cast<uint16_t>(value);
      if (!minor.getAsInteger(10, value)) annotated.minor = static_cast<uint16_t>(value);
      level = std::max(level, annotated);
    }
  }
  auto it = calls_.find(fd);
  if (it != calls_.end()) {
    for (const Call& call : it->second) level = std::max(level, LevelOf(call.callee));
  }
  levels_[fd] = level;
  return level;
}

// Whether `fd` can reach rsForEach. A kernel launching kernels would wait on the thread pool it runs on.
bool Analyzer::LaunchesKernels(const clang::FunctionDecl* fd) {
  fd = fd->getCanonicalDecl();
  auto cached = launches_.find(fd);
  if (cached != launches_.end()) return cached->second;
  launches_[fd] = false;  // cycles were reported already
  bool result = fd->getName() == "__kiln_for_each";
  auto it = calls_.find(fd);
  if (it != calls_.end()) {
    for (const Call& call : it->second) result = result || LaunchesKernels(call.callee);
  }
  launches_[fd] = result;
  return result;
}

// Reports a function whose HAL level is newer than any runtime this kilnc knows can run it.
bool Analyzer::CheckLevel(const HalLevel& level, const clang::FunctionDecl* fd, unsigned diag) {
  if (!(kMaxSupportedHalLevel < level)) return true;
  diags_.Report(fd->getLocation(), diag) << fd->getName()
                                         << ("needs HAL level " + level.ToString() +
                                             " (through the functions it calls), above "
                                             "the newest Kiln supports (" +
                                             kMaxSupportedHalLevel.ToString() + ")");
  return false;
}

}  // namespace compiler
}  // namespace kiln
