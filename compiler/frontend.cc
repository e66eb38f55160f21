// kilnc's Clang front end. Everything that includes Clang headers lives in this one translation unit: they
// are slow to compile.
//
// A script is parsed twice. The first pass (AnalyzeScript) runs Sema plus kilnc's own checks and collects the
// reflection; the second (GenerateIr) compiles the same source with the generated entry points appended and
// hands the unoptimized IR to the back end. Both passes see the prelude through an in-memory file system, so
// kilnc reads no file but the user's own sources.
#include "compiler/frontend.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/RecordLayout.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Basic/SourceManager.h"
#include "clang/CodeGen/CodeGenAction.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Lex/Pragma.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "compiler/prelude_files.h"
#if defined(KILN_HAVE_GPU_LOWERING)
#include "compiler/glsl_lowering.h"
#endif
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {
namespace compiler {
namespace {

// Where the prelude appears to live; no such directory exists on disk.
constexpr char kPreludeDir[] = "/__kiln_prelude__";
constexpr char kTargetTriple[] = "x86_64-unknown-linux-gnu";

// Freestanding stand-ins for the C headers RenderScript sources (and kernel_abi.h) include.
constexpr char kStddefH[] =
    "#ifndef KILN_STDDEF_H\n#define KILN_STDDEF_H\n#include \"rs_types.rsh\"\n"
    "#define offsetof(type, member) __builtin_offsetof(type, member)\n#endif\n";
constexpr char kStdintH[] =
    "#ifndef KILN_STDINT_H\n#define KILN_STDINT_H\n#include \"rs_types.rsh\"\n"
    "typedef long intptr_t;\ntypedef unsigned long uintptr_t;\n"
    "#define INT8_MIN (-128)\n#define INT8_MAX 127\n#define UINT8_MAX 255\n"
    "#define INT16_MIN (-32768)\n#define INT16_MAX 32767\n#define UINT16_MAX 65535\n"
    "#define INT32_MIN (-2147483647 - 1)\n#define INT32_MAX 2147483647\n#define UINT32_MAX 4294967295U\n"
    "#define INT64_MIN (-9223372036854775807L - 1)\n#define INT64_MAX 9223372036854775807L\n"
    "#define UINT64_MAX 18446744073709551615UL\n#define SIZE_MAX UINT64_MAX\n#endif\n";
constexpr char kStdboolH[] = "#include \"rs_types.rsh\"\n";
constexpr char kLimitsH[] =
    "#ifndef KILN_LIMITS_H\n#define KILN_LIMITS_H\n#define CHAR_BIT 8\n#define SCHAR_MIN (-128)\n"
    "#define SCHAR_MAX 127\n#define UCHAR_MAX 255\n#define CHAR_MIN SCHAR_MIN\n#define CHAR_MAX SCHAR_MAX\n"
    "#define SHRT_MIN (-32768)\n#define SHRT_MAX 32767\n#define USHRT_MAX 65535\n#define INT_MIN "
    "(-2147483647 - 1)\n"
    "#define INT_MAX 2147483647\n#define UINT_MAX 4294967295U\n#define LONG_MIN (-9223372036854775807L - 1)\n"
    "#define LONG_MAX 9223372036854775807L\n#define ULONG_MAX 18446744073709551615UL\n#endif\n";
constexpr char kFloatH[] =
    "#ifndef KILN_FLOAT_H\n#define KILN_FLOAT_H\n#ifndef FLT_MAX\n#define FLT_MAX __FLT_MAX__\n"
    "#define FLT_MIN __FLT_MIN__\n#define FLT_EPSILON __FLT_EPSILON__\n#endif\n"
    "#define FLT_DIG __FLT_DIG__\n#define FLT_MANT_DIG __FLT_MANT_DIG__\n"
    "#define DBL_MAX __DBL_MAX__\n#define DBL_MIN __DBL_MIN__\n#define DBL_EPSILON __DBL_EPSILON__\n"
    "#define DBL_DIG __DBL_DIG__\n#define DBL_MANT_DIG __DBL_MANT_DIG__\n#endif\n";

llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> MakeFileSystem() {
  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  auto add = [&](const std::string& name, llvm::StringRef contents) {
    const std::string path = std::string(kPreludeDir) + "/" + name;
    memory->addFile(path, 0,
                    llvm::MemoryBuffer::getMemBuffer(contents, path, /*RequiresNullTerminator=*/true));
  };
  for (size_t i = 0; i < kPreludeFileCount; ++i) {
    add(kPreludeFiles[i].path, llvm::StringRef(kPreludeFiles[i].data, kPreludeFiles[i].size));
  }
  add("stddef.h", kStddefH);
  add("stdint.h", kStdintH);
  add("stdbool.h", kStdboolH);
  add("limits.h", kLimitsH);
  add("float.h", kFloatH);
  auto overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(llvm::vfs::getRealFileSystem());
  overlay->pushOverlay(memory);
  return overlay;
}

// ---- Pragmas ----

struct ReducePragma {
  std::string name;
  clang::SourceLocation location;
  std::map<std::string, std::string> functions;  // "initializer" -> function name, ...
  std::map<std::string, clang::SourceLocation> function_locations;
};

struct PragmaState {
  std::string package_name;
  KernelPrecision precision = KernelPrecision::kFull;
  std::vector<ReducePragma> reductions;
};

// Lexes the rest of a pragma line.
std::vector<clang::Token> LexPragmaLine(clang::Preprocessor& pp) {
  std::vector<clang::Token> tokens;
  clang::Token tok;
  pp.Lex(tok);
  while (tok.isNot(clang::tok::eod) && tok.isNot(clang::tok::eof)) {
    tokens.push_back(tok);
    pp.Lex(tok);
  }
  return tokens;
}

unsigned PragmaError(clang::DiagnosticsEngine& diags) {
  return diags.getCustomDiagID(clang::DiagnosticsEngine::Error, "malformed '#pragma %0': %1");
}

// #pragma version(1)
class VersionPragmaHandler : public clang::PragmaHandler {
 public:
  VersionPragmaHandler() : clang::PragmaHandler("version") {}
  void HandlePragma(clang::Preprocessor& pp, clang::PragmaIntroducer, clang::Token& first) override {
    std::vector<clang::Token> t = LexPragmaLine(pp);
    if (t.size() != 3 || t[0].isNot(clang::tok::l_paren) || t[1].isNot(clang::tok::numeric_constant) ||
        t[2].isNot(clang::tok::r_paren)) {
      pp.getDiagnostics().Report(first.getLocation(), PragmaError(pp.getDiagnostics()))
          << "version"
          << "expected '#pragma version(1)'";
      return;
    }
    if (pp.getSpelling(t[1]) != "1") {
      pp.getDiagnostics().Report(t[1].getLocation(), pp.getDiagnostics().getCustomDiagID(
                                                         clang::DiagnosticsEngine::Error,
                                                         "unsupported script version %0; only 1 exists"))
          << pp.getSpelling(t[1]);
    }
  }
};

// #pragma rs_fp_full / rs_fp_relaxed / rs_fp_imprecise
class PrecisionPragmaHandler : public clang::PragmaHandler {
 public:
  PrecisionPragmaHandler(const char* name, KernelPrecision precision, PragmaState* state)
      : clang::PragmaHandler(name), precision_(precision), state_(state) {}
  void HandlePragma(clang::Preprocessor& pp, clang::PragmaIntroducer, clang::Token& first) override {
    if (!LexPragmaLine(pp).empty()) {
      pp.getDiagnostics().Report(first.getLocation(), PragmaError(pp.getDiagnostics()))
          << getName() << "it takes no arguments";
      return;
    }
    state_->precision = precision_;
  }

 private:
  KernelPrecision precision_;
  PragmaState* state_;
};

// #pragma rs java_package_name(a.b.c)
class PackagePragmaHandler : public clang::PragmaHandler {
 public:
  explicit PackagePragmaHandler(PragmaState* state)
      : clang::PragmaHandler("java_package_name"), state_(state) {}
  void HandlePragma(clang::Preprocessor& pp, clang::PragmaIntroducer, clang::Token& first) override {
    std::vector<clang::Token> t = LexPragmaLine(pp);
    if (t.size() < 3 || t.front().isNot(clang::tok::l_paren) || t.back().isNot(clang::tok::r_paren)) {
      pp.getDiagnostics().Report(first.getLocation(), PragmaError(pp.getDiagnostics()))
          << "rs java_package_name"
          << "expected '(package.name)'";
      return;
    }
    std::string name;
    for (size_t i = 1; i + 1 < t.size(); ++i) name += pp.getSpelling(t[i]);
    state_->package_name = name;
  }

 private:
  PragmaState* state_;
};

// #pragma rs reduce(name) initializer(f) accumulator(f) combiner(f) outconverter(f)
class ReducePragmaHandler : public clang::PragmaHandler {
 public:
  explicit ReducePragmaHandler(PragmaState* state) : clang::PragmaHandler("reduce"), state_(state) {}
  void HandlePragma(clang::Preprocessor& pp, clang::PragmaIntroducer, clang::Token& first) override {
    std::vector<clang::Token> t = LexPragmaLine(pp);
    clang::DiagnosticsEngine& diags = pp.getDiagnostics();
    auto fail = [&](clang::SourceLocation loc, const char* what) {
      diags.Report(loc.isValid() ? loc : first.getLocation(), PragmaError(diags)) << "rs reduce" << what;
    };
    if (t.size() < 3 || t[0].isNot(clang::tok::l_paren) || t[1].isNot(clang::tok::identifier) ||
        t[2].isNot(clang::tok::r_paren)) {
      return fail(first.getLocation(), "expected 'reduce(name)'");
    }
    ReducePragma reduce;
    reduce.name = pp.getSpelling(t[1]);
    reduce.location = t[1].getLocation();
    for (size_t i = 3; i < t.size(); i += 4) {
      if (i + 3 >= t.size() || t[i].isNot(clang::tok::identifier) || t[i + 1].isNot(clang::tok::l_paren) ||
          t[i + 2].isNot(clang::tok::identifier) || t[i + 3].isNot(clang::tok::r_paren)) {
        return fail(t[i].getLocation(),
                    "expected 'initializer(f)', 'accumulator(f)', 'combiner(f)' or "
                    "'outconverter(f)'");
      }
      const std::string key = pp.getSpelling(t[i]);
      if (key != "initializer" && key != "accumulator" && key != "combiner" && key != "outconverter") {
        return fail(t[i].getLocation(),
                    "unknown clause; expected initializer, accumulator, combiner or "
                    "outconverter");
      }
      if (reduce.functions.count(key)) return fail(t[i].getLocation(), "clause given twice");
      reduce.functions[key] = pp.getSpelling(t[i + 2]);
      reduce.function_locations[key] = t[i + 2].getLocation();
    }
    if (!reduce.functions.count("accumulator")) {
      return fail(first.getLocation(), "a reduction needs an accumulator(f) clause");
    }
    state_->reductions.push_back(std::move(reduce));
  }

 private:
  PragmaState* state_;
};

void AddPragmaHandlers(clang::Preprocessor& pp, PragmaState* state) {
  pp.AddPragmaHandler(new VersionPragmaHandler());
  pp.AddPragmaHandler(new PrecisionPragmaHandler("rs_fp_full", KernelPrecision::kFull, state));
  pp.AddPragmaHandler(new PrecisionPragmaHandler("rs_fp_relaxed", KernelPrecision::kRelaxed, state));
  pp.AddPragmaHandler(new PrecisionPragmaHandler("rs_fp_imprecise", KernelPrecision::kImprecise, state));
  pp.AddPragmaHandler("rs", new PackagePragmaHandler(state));
  pp.AddPragmaHandler("rs", new ReducePragmaHandler(state));
}

// ---- Types ----

}  // namespace

KilnType ScalarKilnType(const clang::BuiltinType* type) {
  switch (type->getKind()) {
    case clang::BuiltinType::Float:
      return kKilnFloat32;
    case clang::BuiltinType::Double:
      return kKilnFloat64;
    case clang::BuiltinType::Half:
    case clang::BuiltinType::Float16:
      return kKilnFloat16;
    case clang::BuiltinType::Char_S:
    case clang::BuiltinType::SChar:
      return kKilnInt8;
    case clang::BuiltinType::Char_U:
    case clang::BuiltinType::UChar:
      return kKilnUInt8;
    case clang::BuiltinType::Short:
      return kKilnInt16;
    case clang::BuiltinType::UShort:
      return kKilnUInt16;
    case clang::BuiltinType::Int:
      return kKilnInt32;
    case clang::BuiltinType::UInt:
      return kKilnUInt32;
    case clang::BuiltinType::Long:
    case clang::BuiltinType::LongLong:
      return kKilnInt64;
    case clang::BuiltinType::ULong:
    case clang::BuiltinType::ULongLong:
      return kKilnUInt64;
    case clang::BuiltinType::Bool:
      return kKilnBool;
    default:
      return kKilnNoType;
  }
}

namespace {

bool IsRecordNamed(clang::QualType type, llvm::StringRef name) {
  const clang::RecordType* record = type.getCanonicalType()->getAs<clang::RecordType>();
  return record && record->getDecl()->getName() == name;
}

bool IsObjectHandle(clang::QualType type) {
  return IsRecordNamed(type, "rs_element") || IsRecordNamed(type, "rs_type") ||
         IsRecordNamed(type, "rs_script") || IsRecordNamed(type, "rs_sampler");
}

// ---- The analysis pass ----

class Analyzer : public clang::RecursiveASTVisitor<Analyzer> {
 public:
  Analyzer(clang::ASTContext& context, PragmaState* pragmas, ScriptInfo* info)
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

  void Run(clang::TranslationUnitDecl* unit) {
    TraverseDecl(unit);
    CheckRecursion();
    for (const clang::FunctionDecl* fd : user_functions_) {
      if (fd->hasAttr<clang::RenderScriptKernelAttr>()) {
        AnalyzeKernel(fd);
      } else if (fd->getName() == "root") {
        AnalyzeRootKernel(fd);
      }
    }
    AnalyzeReductions();
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
    }
    info_->module.hal_level = max_level;
  }

  // ---- Visitor ----

  bool TraverseFunctionDecl(clang::FunctionDecl* fd) {
    const clang::FunctionDecl* saved = current_;
    if (fd->doesThisDeclarationHaveABody()) current_ = fd->getCanonicalDecl();
    const bool result = clang::RecursiveASTVisitor<Analyzer>::TraverseFunctionDecl(fd);
    current_ = saved;
    return result;
  }

  bool VisitFunctionDecl(clang::FunctionDecl* fd) {
    if (IsUserCode(fd->getLocation()) && fd->doesThisDeclarationHaveABody()) {
      user_functions_.push_back(fd);
      CheckFunctionPointerType(fd->getReturnType(), fd->getName(), fd->getLocation());
    }
    return true;
  }

  bool VisitCallExpr(clang::CallExpr* call) {
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

  bool VisitDeclRefExpr(clang::DeclRefExpr* ref) {
    if (llvm::isa<clang::FunctionDecl>(ref->getDecl()) && !direct_callee_refs_.count(ref) &&
        IsUserCode(ref->getLocation())) {
      diags_.Report(ref->getLocation(), diag_function_pointer_value_) << ref->getDecl()->getName();
    }
    return true;
  }

  bool VisitDeclaratorDecl(clang::DeclaratorDecl* decl) {
    if (!llvm::isa<clang::FunctionDecl>(decl) && IsUserCode(decl->getLocation())) {
      CheckFunctionPointerType(decl->getType(), decl->getName(), decl->getLocation());
    }
    return true;
  }

  bool VisitVarDecl(clang::VarDecl* vd) {
    if (vd->isFileVarDecl() && IsUserCode(vd->getLocation())) globals_.push_back(vd);
    return true;
  }

 private:
  struct Call {
    const clang::FunctionDecl* callee;
    clang::SourceLocation location;
  };

  bool IsPreludeLocation(clang::SourceLocation loc) const {
    if (loc.isInvalid()) return true;  // builtins
    // "<built-in>" (predefines, -include), "<scratch space>" and the like are the compiler's, not the user's.
    const clang::FileID file = sm_.getFileID(sm_.getExpansionLoc(loc));
    if (const clang::OptionalFileEntryRef entry = sm_.getFileEntryRefForID(file)) {
      return entry->getName().starts_with(kPreludeDir);
    }
    const llvm::StringRef buffer = sm_.getBufferName(sm_.getExpansionLoc(loc));
    return buffer.starts_with("<") || buffer.starts_with(kPreludeDir);
  }
  bool IsUserCode(clang::SourceLocation loc) const { return !IsPreludeLocation(loc); }
  bool IsPreludeDecl(const clang::Decl* decl) const { return IsPreludeLocation(decl->getLocation()); }

  bool ContainsFunctionPointer(clang::QualType type) const {
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

  void CheckFunctionPointerType(clang::QualType type, llvm::StringRef name, clang::SourceLocation loc) {
    if (ContainsFunctionPointer(type)) diags_.Report(loc, diag_function_pointer_type_) << name << type;
  }

  const clang::FunctionDecl* FindUserFunction(llvm::StringRef name) const {
    for (const clang::FunctionDecl* fd : user_functions_) {
      if (fd->getName() == name) return fd;
    }
    return nullptr;
  }

  // Reports every call cycle once, at the call that closes it.
  void CheckRecursion() {
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
  HalLevel LevelOf(const clang::FunctionDecl* fd) {
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
  bool LaunchesKernels(const clang::FunctionDecl* fd) {
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
  bool CheckLevel(const HalLevel& level, const clang::FunctionDecl* fd, unsigned diag) {
    if (!(kMaxSupportedHalLevel < level)) return true;
    diags_.Report(fd->getLocation(), diag) << fd->getName()
                                           << ("needs HAL level " + level.ToString() +
                                               " (through the functions it calls), above "
                                               "the newest Kiln supports (" +
                                               kMaxSupportedHalLevel.ToString() + ")");
    return false;
  }

  std::string Spelling(clang::QualType type) const { return type.getUnqualifiedType().getAsString(*policy_); }

  // Describes a type for the reflection; reports and returns false for types a script cannot export.
  bool Describe(clang::QualType type, KernelTypeDesc* out, int depth = 0) {
    *out = KernelTypeDesc();
    out->name = Spelling(type);
    const clang::QualType canonical = type.getCanonicalType().getUnqualifiedType();
    if (canonical->isVoidType()) return true;
    if (canonical->isIncompleteType() || depth > 8) return false;
    out->size = static_cast<uint32_t>(context_.getTypeSizeInChars(canonical).getQuantity());
    out->alignment = static_cast<uint32_t>(context_.getTypeAlignInChars(canonical).getQuantity());
    if (const auto* array = context_.getAsConstantArrayType(canonical)) {
      KernelTypeDesc element;
      if (!Describe(array->getElementType(), &element, depth + 1) || element.array_size != 0) return false;
      element.array_size = static_cast<uint32_t>(array->getSize().getZExtValue());
      element.size = out->size;
      element.alignment = out->alignment;
      element.name = out->name;
      *out = std::move(element);
      return true;
    }
    if (IsRecordNamed(canonical, "rs_allocation")) {
      out->kind = KernelTypeKind::kAllocation;
      return true;
    }
    if (IsObjectHandle(canonical)) {
      out->kind = KernelTypeKind::kObject;
      return true;
    }
    if (const auto* vector = canonical->getAs<clang::VectorType>()) {
      const auto* lane = vector->getElementType()->getAs<clang::BuiltinType>();
      out->kind = KernelTypeKind::kScalar;
      out->element_type = lane ? ScalarKilnType(lane) : kKilnNoType;
      out->vector_size = vector->getNumElements();
      return out->element_type != kKilnNoType && out->vector_size <= 4;
    }
    if (const auto* enum_type = canonical->getAs<clang::EnumType>()) {
      return Describe(enum_type->getDecl()->getIntegerType(), out, depth + 1) &&
             (out->name = Spelling(type), true);
    }
    if (const auto* builtin = canonical->getAs<clang::BuiltinType>()) {
      out->kind = KernelTypeKind::kScalar;
      out->element_type = ScalarKilnType(builtin);
      return out->element_type != kKilnNoType;
    }
    if (const auto* pointer = canonical->getAs<clang::PointerType>()) {
      KernelTypeDesc pointee;
      const clang::QualType pointee_type = pointer->getPointeeType();
      if (!pointee_type->isVoidType() && !Describe(pointee_type, &pointee, depth + 1)) return false;
      out->kind = KernelTypeKind::kPointer;
      out->element_type = pointee.kind == KernelTypeKind::kScalar ? pointee.element_type : kKilnNoType;
      out->vector_size = pointee.kind == KernelTypeKind::kScalar ? pointee.vector_size : 1;
      out->size = pointee.size;
      out->alignment = pointee.alignment;
      return true;
    }
    if (const auto* record = canonical->getAs<clang::RecordType>()) {
      const clang::RecordDecl* decl = record->getDecl()->getDefinition();
      if (!decl) return false;
      out->kind = KernelTypeKind::kStruct;
      const clang::ASTRecordLayout& layout = context_.getASTRecordLayout(decl);
      for (const clang::FieldDecl* field : decl->fields()) {
        KernelFieldDesc f;
        f.name = field->getNameAsString();
        if (field->isBitField()) return false;
        f.offset = static_cast<uint32_t>(layout.getFieldOffset(field->getFieldIndex()) / 8);
        if (!Describe(field->getType(), &f.type, depth + 1)) return false;
        out->fields.push_back(std::move(f));
      }
      return true;
    }
    return false;
  }

  static int SpecialRank(llvm::StringRef name) {
    if (name == "context") return 0;
    if (name == "x") return 1;
    if (name == "y") return 2;
    if (name == "z") return 3;
    return -1;
  }

  bool IsKernelContext(clang::QualType type) const {
    const auto* pointer = type.getCanonicalType()->getAs<clang::PointerType>();
    return pointer && pointer->getPointeeType().isConstQualified() &&
           IsRecordNamed(pointer->getPointeeType(), "KilnKernelLaunch");
  }

  // Parses the special parameters (context, x, y, z) that follow the inputs; shared by kernels and reduction
  // accumulators. Returns false after reporting.
  bool SpecialParam(const clang::ParmVarDecl* param, unsigned diag, llvm::StringRef owner, int* last_rank,
                    uint32_t* signature, std::vector<ArgKind>* args) {
    const int rank = SpecialRank(param->getName());
    const clang::QualType type = param->getType();
    if (rank == 0 && !IsKernelContext(type)) {
      diags_.Report(param->getLocation(), diag) << owner
                                                << "special parameter 'context' must have type "
                                                   "rs_kernel_context";
      return false;
    }
    if (rank > 0 && !(type->isIntegerType() && !type->isBooleanType() && context_.getTypeSize(type) == 32)) {
      diags_.Report(param->getLocation(), diag)
          << owner << ("special parameter '" + param->getNameAsString() + "' must have type uint32_t or int");
      return false;
    }
    if (rank <= *last_rank) {
      diags_.Report(param->getLocation(), diag)
          << owner
          << ("special parameter '" + param->getNameAsString() +
              "' is out of order or repeated; the order is context, x, y, z");
      return false;
    }
    *last_rank = rank;
    static const uint32_t kBits[] = {kKernelSigCtxt, kKernelSigX, kKernelSigY, kKernelSigZ};
    static const ArgKind kKinds[] = {ArgKind::kContext, ArgKind::kX, ArgKind::kY, ArgKind::kZ};
    *signature |= kBits[rank];
    args->push_back(kKinds[rank]);
    return true;
  }

  void AnalyzeKernel(const clang::FunctionDecl* fd) {
    const std::string name = fd->getNameAsString();
    KernelDesc desc;
    KernelInfo info;
    desc.name = name;
    desc.expand_symbol = "__kiln_expand_" + name;
    desc.signature = kKernelSigKernel;
    info.function = name;
    bool ok = true;
    int last_rank = -1;
    if (fd->isVariadic()) {
      diags_.Report(fd->getLocation(), diag_kernel_) << name << "a kernel cannot be variadic";
      ok = false;
    }
    for (const clang::ParmVarDecl* param : fd->parameters()) {
      if (SpecialRank(param->getName()) >= 0) {
        ok &= SpecialParam(param, diag_kernel_, name, &last_rank, &desc.signature, &info.args);
        continue;
      }
      const clang::QualType type = param->getType();
      if (last_rank >= 0) {
        diags_.Report(param->getLocation(), diag_kernel_)
            << name
            << ("input parameter '" + param->getNameAsString() +
                "' follows a special parameter; inputs come first");
        ok = false;
        continue;
      }
      if (type->isPointerType() || type->isArrayType()) {
        diags_.Report(param->getLocation(), diag_kernel_)
            << name
            << ("parameter '" + param->getNameAsString() +
                "' is a pointer; RS_KERNEL inputs are passed by value (bind other data through globals)");
        ok = false;
        continue;
      }
      KernelTypeDesc input;
      if (!Describe(type, &input) || input.kind == KernelTypeKind::kAllocation ||
          input.kind == KernelTypeKind::kObject) {
        diags_.Report(param->getLocation(), diag_kernel_)
            << name << ("input '" + param->getNameAsString() + "' has unsupported type " + Spelling(type));
        ok = false;
        continue;
      }
      desc.inputs.push_back(input);
      info.input_types.push_back(Spelling(type));
      info.args.push_back(ArgKind::kInput);
    }
    if (desc.inputs.size() > KILN_KERNEL_MAX_INPUTS) {
      diags_.Report(fd->getLocation(), diag_kernel_)
          << name
          << ("has " + std::to_string(desc.inputs.size()) + " inputs; at most " +
              std::to_string(KILN_KERNEL_MAX_INPUTS) + " are allowed");
      ok = false;
    }
    if (!desc.inputs.empty()) desc.signature |= kKernelSigIn;
    const clang::QualType result = fd->getReturnType();
    if (!result->isVoidType()) {
      KernelTypeDesc output;
      if (result->isPointerType() || !Describe(result, &output) ||
          output.kind == KernelTypeKind::kAllocation || output.kind == KernelTypeKind::kObject) {
        diags_.Report(fd->getLocation(), diag_kernel_) << name << ("cannot return " + Spelling(result));
        ok = false;
      } else {
        desc.output = output;
        info.output_type = Spelling(result);
        desc.signature |= kKernelSigOut;
      }
    } else if (desc.inputs.empty() && ok) {
      diags_.Report(fd->getLocation(), diag_kernel_) << name << "a kernel needs an input or a return value";
      ok = false;
    }
    if (!ok) return;
    desc.hal_level = LevelOf(fd);
    if (!CheckLevel(desc.hal_level, fd, diag_kernel_)) return;
    if (LaunchesKernels(fd)) {
      diags_.Report(fd->getLocation(), diag_kernel_)
          << name << "calls rsForEach; only invokables and init() may launch kernels";
      return;
    }
    info_->module.kernels.push_back(std::move(desc));
    info_->kernels.push_back(std::move(info));
  }

  // void root(const T* in, U* out, const void* usrData, uint32_t x, uint32_t y): RenderScript's original
  // form.
  void AnalyzeRootKernel(const clang::FunctionDecl* fd) {
    const std::string name = fd->getNameAsString();
    if (!fd->getReturnType()->isVoidType()) {
      diags_.Report(fd->getLocation(), diag_kernel_) << name << "old-style root() must return void";
      return;
    }
    KernelDesc desc;
    KernelInfo info;
    desc.name = name;
    desc.expand_symbol = "__kiln_expand_" + name;
    desc.root_style = true;
    info.function = name;
    bool have_in = false, have_out = false, have_usr = false;
    int next_coordinate = 1;  // x, then y, then z
    for (const clang::ParmVarDecl* param : fd->parameters()) {
      const clang::QualType type = param->getType();
      const std::string pname = param->getNameAsString();
      if (const auto* pointer = type->getAs<clang::PointerType>()) {
        const clang::QualType pointee = pointer->getPointeeType();
        if (next_coordinate > 1 || have_usr) {
          diags_.Report(param->getLocation(), diag_kernel_)
              << name << ("pointer parameter '" + pname + "' after usrData or a coordinate");
          return;
        }
        const bool is_const = pointee.isConstQualified();
        const bool looks_like_usr = pointee->isVoidType() && pname == "usrData";
        if (!have_in && !have_out && is_const && !looks_like_usr) {
          have_in = true;
        } else if (!have_out && !is_const && !looks_like_usr) {
          have_out = true;
        } else {
          have_usr = true;
          desc.signature |= kKernelSigUsr;
          info.args.push_back(ArgKind::kUsrData);
          continue;
        }
        KernelTypeDesc element;
        if (pointee->isVoidType() || !Describe(pointee, &element)) {
          diags_.Report(param->getLocation(), diag_kernel_)
              << name
              << ("parameter '" + pname + "' must point to a concrete element type, not " + Spelling(type));
          return;
        }
        if (have_in && info.input_types.empty()) {
          desc.inputs.push_back(element);
          info.input_types.push_back(Spelling(pointee));
          desc.signature |= kKernelSigIn;
          info.args.push_back(ArgKind::kInputPtr);
        } else {
          desc.output = element;
          info.output_type = Spelling(pointee);
          desc.signature |= kKernelSigOut;
          info.args.push_back(ArgKind::kOutputPtr);
        }
        continue;
      }
      if (!type->isIntegerType() || context_.getTypeSize(type) != 32 || next_coordinate > 3) {
        diags_.Report(param->getLocation(), diag_kernel_)
            << name
            << ("unexpected parameter '" + pname +
                "'; the form is root(const T* in, U* out, "
                "const void* usrData, uint32_t x, uint32_t y, uint32_t z)");
        return;
      }
      static const uint32_t kBits[] = {0, kKernelSigX, kKernelSigY, kKernelSigZ};
      static const ArgKind kKinds[] = {ArgKind::kX, ArgKind::kX, ArgKind::kY, ArgKind::kZ};
      desc.signature |= kBits[next_coordinate];
      info.args.push_back(kKinds[next_coordinate]);
      ++next_coordinate;
    }
    if (!have_in && !have_out) {
      diags_.Report(fd->getLocation(), diag_kernel_) << name << "root() needs an input or an output pointer";
      return;
    }
    desc.hal_level = LevelOf(fd);
    if (!CheckLevel(desc.hal_level, fd, diag_kernel_)) return;
    if (LaunchesKernels(fd)) {
      diags_.Report(fd->getLocation(), diag_kernel_)
          << name << "calls rsForEach; only invokables and init() may launch kernels";
      return;
    }
    info_->module.kernels.push_back(std::move(desc));
    info_->kernels.push_back(std::move(info));
  }

  // The T of a `T*` parameter, or a null type.
  static clang::QualType PointeeOf(const clang::ParmVarDecl* param) {
    const auto* pointer = param->getType()->getAs<clang::PointerType>();
    return pointer ? pointer->getPointeeType() : clang::QualType();
  }

  bool SameType(clang::QualType a, clang::QualType b) const {
    return context_.hasSameUnqualifiedType(a.getCanonicalType(), b.getCanonicalType());
  }

  void AnalyzeReductions() {
    std::set<std::string> names;
    for (const ReducePragma& pragma : pragmas_->reductions) {
      const std::string& name = pragma.name;
      auto fail = [&](clang::SourceLocation loc, const std::string& message) {
        diags_.Report(loc.isValid() ? loc : pragma.location, diag_reduction_) << name << message;
      };
      if (!names.insert(name).second) {
        fail(pragma.location, "defined twice");
        continue;
      }
      // Reductions share the module's one namespace with kernels, invokables and globals.
      bool clash = FindUserFunction(name) != nullptr;
      for (const clang::VarDecl* vd : globals_) clash |= vd->getName() == name;
      if (clash) {
        fail(pragma.location, "the name is already used by a function or global of this script");
        continue;
      }
      std::map<std::string, const clang::FunctionDecl*> fns;
      bool ok = true;
      for (const auto& entry : pragma.functions) {
        const clang::FunctionDecl* fd = FindUserFunction(entry.second);
        if (!fd) {
          fail(pragma.function_locations.at(entry.first),
               entry.first + " function '" + entry.second + "' is not defined in this script");
          ok = false;
          continue;
        }
        if (!fd->getReturnType()->isVoidType()) {
          fail(fd->getLocation(), entry.first + " function '" + entry.second + "' must return void");
          ok = false;
        }
        reduction_functions_.insert(fd->getCanonicalDecl());
        fns[entry.first] = fd;
      }
      if (!ok) continue;
      ReductionDesc desc;
      ReductionInfo info;
      desc.name = name;
      desc.accumulator = pragma.functions.at("accumulator");
      auto get = [&](const char* key) {
        auto it = pragma.functions.find(key);
        return it == pragma.functions.end() ? std::string() : it->second;
      };
      desc.initializer = get("initializer");
      desc.combiner = get("combiner");
      desc.outconverter = get("outconverter");
      desc.init_symbol = "__kiln_reduce_" + name + "_init";
      desc.accum_symbol = "__kiln_reduce_" + name + "_accum";
      desc.combine_symbol = "__kiln_reduce_" + name + "_combine";
      desc.out_symbol = "__kiln_reduce_" + name + "_out";

      const clang::FunctionDecl* accumulator = fns.at("accumulator");
      if (accumulator->getNumParams() < 2) {
        fail(accumulator->getLocation(), "accumulator '" + desc.accumulator +
                                             "' must take the accumulator pointer and at least one input");
        continue;
      }
      const clang::QualType accum_type = PointeeOf(accumulator->getParamDecl(0));
      if (accum_type.isNull() || accum_type.isConstQualified() || accum_type->isVoidType() ||
          !Describe(accum_type, &desc.accumulator_type)) {
        fail(accumulator->getParamDecl(0)->getLocation(),
             "the accumulator's first parameter must be a non-const pointer to the accumulator data type");
        continue;
      }
      desc.accumulator_size = desc.accumulator_type.size;
      desc.accumulator_alignment = desc.accumulator_type.alignment;
      info.accumulator_type = Spelling(accum_type);
      int last_rank = -1;
      for (unsigned i = 1; i < accumulator->getNumParams() && ok; ++i) {
        const clang::ParmVarDecl* param = accumulator->getParamDecl(i);
        if (SpecialRank(param->getName()) >= 0) {
          ok &=
              SpecialParam(param, diag_reduction_, name, &last_rank, &desc.signature, &info.accumulator_args);
          continue;
        }
        KernelTypeDesc input;
        if (last_rank >= 0 || param->getType()->isPointerType() || !Describe(param->getType(), &input)) {
          fail(param->getLocation(), "accumulator input '" + param->getNameAsString() +
                                         "' must be a value (not a pointer) before any special parameter");
          ok = false;
          continue;
        }
        desc.inputs.push_back(input);
        info.input_types.push_back(Spelling(param->getType()));
        info.accumulator_args.push_back(ArgKind::kInput);
      }
      if (!ok) continue;
      if (desc.inputs.empty() || desc.inputs.size() > KILN_KERNEL_MAX_INPUTS) {
        fail(accumulator->getLocation(), "the accumulator needs 1 to 8 inputs");
        continue;
      }
      if (const clang::FunctionDecl* init = fns.count("initializer") ? fns.at("initializer") : nullptr) {
        if (init->getNumParams() != 1 || PointeeOf(init->getParamDecl(0)).isNull() ||
            !SameType(PointeeOf(init->getParamDecl(0)), accum_type)) {
          fail(init->getLocation(), "initializer '" + desc.initializer + "' must be void " +
                                        desc.initializer + "(" + info.accumulator_type + "* accum)");
          continue;
        }
      }
      if (const clang::FunctionDecl* comb = fns.count("combiner") ? fns.at("combiner") : nullptr) {
        if (comb->getNumParams() != 2 || PointeeOf(comb->getParamDecl(0)).isNull() ||
            PointeeOf(comb->getParamDecl(1)).isNull() ||
            !SameType(PointeeOf(comb->getParamDecl(0)), accum_type) ||
            !SameType(PointeeOf(comb->getParamDecl(1)), accum_type)) {
          fail(comb->getLocation(), "combiner '" + desc.combiner + "' must be void " + desc.combiner + "(" +
                                        info.accumulator_type + "* accum, const " + info.accumulator_type +
                                        "* other)");
          continue;
        }
      } else if (desc.inputs.size() != 1 || desc.signature != 0 ||
                 !SameType(accumulator->getParamDecl(1)->getType(), accum_type)) {
        fail(pragma.location,
             "without a combiner, the accumulator must take exactly one input, of the "
             "accumulator type " +
                 info.accumulator_type + ", and no special parameters");
        continue;
      }
      if (const clang::FunctionDecl* out = fns.count("outconverter") ? fns.at("outconverter") : nullptr) {
        const clang::QualType result =
            out->getNumParams() == 2 ? PointeeOf(out->getParamDecl(0)) : clang::QualType();
        if (result.isNull() || result.isConstQualified() || PointeeOf(out->getParamDecl(1)).isNull() ||
            !SameType(PointeeOf(out->getParamDecl(1)), accum_type) || !Describe(result, &desc.result) ||
            desc.result.kind == KernelTypeKind::kVoid) {
          fail(out->getLocation(), "outconverter '" + desc.outconverter + "' must be void " +
                                       desc.outconverter + "(ResultType* result, const " +
                                       info.accumulator_type + "* accum)");
          continue;
        }
        info.result_type = Spelling(result);
      } else {
        desc.result = desc.accumulator_type;
        info.result_type = info.accumulator_type;
      }
      HalLevel level;
      bool launches = false;
      for (const auto& entry : fns) {
        level = std::max(level, LevelOf(entry.second));
        launches = launches || LaunchesKernels(entry.second);
      }
      if (launches) {
        fail(pragma.location, "its functions call rsForEach; only invokables and init() may launch kernels");
        continue;
      }
      desc.hal_level = level;
      if (kMaxSupportedHalLevel < level) {
        fail(pragma.location, "needs HAL level " + level.ToString() + ", above the newest Kiln supports (" +
                                  kMaxSupportedHalLevel.ToString() + ")");
        continue;
      }
      info_->module.reductions.push_back(std::move(desc));
      info_->reductions.push_back(std::move(info));
    }
  }

  void AnalyzeInvokables() {
    for (const clang::FunctionDecl* fd : user_functions_) {
      const std::string name = fd->getNameAsString();
      if (fd->hasAttr<clang::RenderScriptKernelAttr>() || name == "root" ||
          reduction_functions_.count(fd->getCanonicalDecl())) {
        continue;
      }
      if (name == "init") {
        if (!fd->getReturnType()->isVoidType() || fd->getNumParams() != 0) {
          diags_.Report(fd->getLocation(), diag_invokable_)
              << name << "init must be declared 'void init(void)'";
          continue;
        }
        info_->module.has_init = true;
        continue;
      }
      if (fd->getStorageClass() == clang::SC_Static || fd->isInlineSpecified() ||
          !fd->getReturnType()->isVoidType()) {
        continue;
      }
      InvokableDesc desc;
      InvokableInfo info;
      desc.name = name;
      desc.symbol = "__kiln_invoke_" + name;
      info.function = name;
      bool ok = true;
      if (fd->isVariadic()) {
        diags_.Report(fd->getLocation(), diag_invokable_) << name << "an invokable cannot be variadic";
        ok = false;
      }
      uint32_t end = 0;
      for (const clang::ParmVarDecl* param : fd->parameters()) {
        ParamDesc p;
        p.name = param->getNameAsString();
        if (param->getType()->isPointerType() || !Describe(param->getType(), &p.type)) {
          diags_.Report(param->getLocation(), diag_invokable_)
              << name
              << ("parameter '" + p.name + "' has type " + Spelling(param->getType()) +
                  ", which cannot be passed from the host (pointers are not allowed)");
          ok = false;
          continue;
        }
        p.offset = (end + p.type.alignment - 1) / p.type.alignment * p.type.alignment;
        end = p.offset + p.type.size;
        desc.args_alignment = std::max(desc.args_alignment, p.type.alignment);
        desc.params.push_back(p);
        info.param_types.push_back(Spelling(param->getType()));
      }
      if (!ok) continue;
      desc.args_size = (end + desc.args_alignment - 1) / desc.args_alignment * desc.args_alignment;
      desc.hal_level = LevelOf(fd);
      if (!CheckLevel(desc.hal_level, fd, diag_invokable_)) continue;
      info_->module.invokables.push_back(std::move(desc));
      info_->invokables.push_back(std::move(info));
    }
  }

  void AnalyzeGlobals() {
    std::set<const clang::VarDecl*> seen;
    for (const clang::VarDecl* vd : globals_) {
      const clang::VarDecl* definition = vd->getDefinition();
      if (!definition) definition = vd->getActingDefinition();  // C's tentative definition: `int x;`
      if (!definition || vd->getStorageClass() == clang::SC_Static) continue;
      if (!seen.insert(definition->getCanonicalDecl()).second) continue;
      GlobalDesc desc;
      desc.name = definition->getNameAsString();
      const clang::QualType type = definition->getType();
      if (!Describe(type, &desc.type)) {
        diags_.Report(definition->getLocation(), diag_global_)
            << desc.name << ("type " + Spelling(type) + " cannot be reflected (make the global static)");
        continue;
      }
      desc.size = static_cast<uint32_t>(context_.getTypeSizeInChars(type).getQuantity());
      desc.alignment = static_cast<uint32_t>(context_.getDeclAlign(definition).getQuantity());
      desc.is_const = type.isConstQualified();
      desc.is_allocation =
          desc.type.kind == KernelTypeKind::kAllocation || desc.type.kind == KernelTypeKind::kPointer;
      info_->module.globals.push_back(std::move(desc));
    }
  }

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

  unsigned diag_recursion_, diag_function_pointer_value_, diag_function_pointer_type_, diag_indirect_call_,
      diag_unknown_rs_, diag_undeclared_, diag_undefined_, diag_kernel_, diag_reduction_, diag_invokable_,
      diag_global_, diag_for_each_;
};

class AnalysisConsumer : public clang::ASTConsumer {
 public:
  AnalysisConsumer(PragmaState* pragmas, ScriptInfo* info) : pragmas_(pragmas), info_(info) {}
  void HandleTranslationUnit(clang::ASTContext& context) override {
    if (context.getDiagnostics().hasErrorOccurred()) return;
    Analyzer(context, pragmas_, info_).Run(context.getTranslationUnitDecl());
#if defined(KILN_HAVE_GPU_LOWERING)
    // The GPU forms come from the same checked AST; a kernel that cannot be lowered is not an error.
    if (!context.getDiagnostics().hasErrorOccurred()) LowerKernelsToGlsl(context, info_);
#endif
  }

 private:
  PragmaState* pragmas_;
  ScriptInfo* info_;
};

class AnalysisAction : public clang::ASTFrontendAction {
 public:
  explicit AnalysisAction(ScriptInfo* info) : info_(info) {}

 protected:
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance& ci,
                                                        llvm::StringRef) override {
    AddPragmaHandlers(ci.getPreprocessor(), &pragmas_);
    return std::make_unique<AnalysisConsumer>(&pragmas_, info_);
  }

 private:
  ScriptInfo* info_;
  PragmaState pragmas_;
};

class CodeGenAction : public clang::EmitLLVMOnlyAction {
 public:
  explicit CodeGenAction(llvm::LLVMContext* context) : clang::EmitLLVMOnlyAction(context) {}

 protected:
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance& ci,
                                                        llvm::StringRef file) override {
    AddPragmaHandlers(ci.getPreprocessor(), &pragmas_);
    return clang::EmitLLVMOnlyAction::CreateASTConsumer(ci, file);
  }

 private:
  PragmaState pragmas_;  // already validated by the analysis pass
};

// Runs `action` over the source (with `appended` after it) and returns whether no error was reported.
bool RunClang(const FrontendInput& input, const std::string& appended, bool codegen,
              clang::FrontendAction* action, std::string* diagnostics) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  auto diag_options = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
  clang::TextDiagnosticPrinter printer(stream, diag_options.get());

  const CompileOptions& options = *input.options;
  std::vector<std::string> args = {"-triple",
                                   kTargetTriple,
                                   "-x",
                                   "renderscript",
                                   "-std=c99",
                                   "-ffreestanding",
                                   "-nostdsysteminc",
                                   "-nobuiltininc",
                                   "-disable-llvm-passes",
                                   "-disable-O0-optnone",
                                   "-Wno-implicit-function-declaration",
                                   "-O" + std::to_string(std::clamp(options.opt_level, 0, 3)),
                                   "-I",
                                   kPreludeDir,
                                   "-include",
                                   "rs_core.rsh"};
  if (codegen) {
    args.push_back("-w");  // the analysis pass showed the warnings already
    // rs_fp_relaxed allows contraction (fused multiply-add); rs_fp_imprecise also gives up IEEE infinities,
    // NaNs, signed zeros and exact rounding, as RenderScript's imprecise mode did.
    if (input.precision != KernelPrecision::kFull) args.push_back("-ffp-contract=fast");
    if (input.precision == KernelPrecision::kImprecise) {
      for (const char* flag : {"-menable-no-infs", "-menable-no-nans", "-fno-signed-zeros", "-mreassociate",
                               "-freciprocal-math", "-fapprox-func", "-ffast-math", "-ffinite-math-only"}) {
        args.push_back(flag);
      }
    }
  } else {
    args.push_back("-Wunknown-pragmas");
  }
  for (const std::string& dir : options.include_dirs) {
    args.push_back("-I");
    args.push_back(dir);
  }
  for (const std::string& define : options.defines) args.push_back("-D" + define);
  args.push_back(input.filename);
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());

  auto invocation = std::make_shared<clang::CompilerInvocation>();
  {
    clang::DiagnosticsEngine arg_diags(llvm::makeIntrusiveRefCnt<clang::DiagnosticIDs>(), diag_options.get(),
                                       &printer, /*ShouldOwnClient=*/false);
    if (!clang::CompilerInvocation::CreateFromArgs(*invocation, argv, arg_diags) ||
        arg_diags.hasErrorOccurred()) {
      stream.flush();
      *diagnostics += text;
      return false;
    }
  }
  std::string source = *input.source;
  if (!appended.empty()) source += "\n#line 1 \"<kilnc entry points>\"\n" + appended;
  invocation->getPreprocessorOpts().addRemappedFile(
      input.filename, llvm::MemoryBuffer::getMemBufferCopy(source, input.filename).release());

  clang::CompilerInstance ci;
  ci.setInvocation(invocation);
  ci.createDiagnostics(&printer, /*ShouldOwnClient=*/false);
  ci.setVerboseOutputStream(stream);  // "N errors generated." belongs with the diagnostics, not on stderr
  ci.createFileManager(MakeFileSystem());
  const bool ok = ci.ExecuteAction(*action) && !ci.getDiagnostics().hasErrorOccurred();
  stream.flush();
  *diagnostics += text;
  return ok;
}

}  // namespace

bool AnalyzeScript(const FrontendInput& input, ScriptInfo* info, std::string* diagnostics) {
  AnalysisAction action(info);
  return RunClang(input, std::string(), /*codegen=*/false, &action, diagnostics);
}

std::unique_ptr<llvm::Module> GenerateIr(const FrontendInput& input, const std::string& appended,
                                         llvm::LLVMContext* context, std::string* diagnostics) {
  CodeGenAction action(context);
  if (!RunClang(input, appended, /*codegen=*/true, &action, diagnostics)) return nullptr;
  return action.takeModule();
}

}  // namespace compiler
}  // namespace kiln
