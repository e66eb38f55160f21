// kilnc's Clang front end: the Clang invocations of both passes, over an in-memory prelude. The analysis
// pass's own work is in analyzer.cc (checks) and reflection.cc, its pragmas in pragmas.cc.
//
// A script is parsed twice. The first pass (AnalyzeScript) runs Sema plus kilnc's own checks and collects the
// reflection; the second (GenerateIr) compiles the same source with the generated entry points appended and
// hands the unoptimized IR to the back end. Both passes see the prelude through an in-memory file system, so
// kilnc reads no file but the user's own sources.
#include "compiler/frontend.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/CodeGen/CodeGenAction.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "compiler/analyzer.h"
#include "compiler/pragmas.h"
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
                                   // half arithmetic rounds after every operation, as on the GPU (kiln_h in
                                   // the GLSL lowering) and on CPUs with native half arithmetic, not once per
                                   // expression.
                                   "-ffloat16-excess-precision=none",
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
