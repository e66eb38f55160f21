// The CPU driver's LLVM side (jit.h): bitcode retargeted to the host, optimised and compiled; objects linked
// into per-script JIT images whose symbols resolve only against the allow-listed runtime services.

#include "backends/cpu/jit.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/ExecutorProcessControl.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

namespace kiln {
namespace cpu {
namespace {

void InitializeLlvmOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

struct CompileOptions {
  bool libmvec = false;
  std::string prefer_vector_width;
};

KilnStatus ParseOptions(const std::string& text, CompileOptions* out, std::string* out_error) {
  llvm::SmallVector<llvm::StringRef, 4> parts;
  llvm::StringRef(text).split(parts, ',', -1, false);
  for (llvm::StringRef part : parts) {
    part = part.trim();
    auto [key, value] = part.split('=');
    if (key == "veclib") {
      if (value != "libmvec" && value != "none") {
        *out_error = "compile option \"" + part.str() + "\": veclib must be libmvec or none";
        return kKilnInvalidArgument;
      }
      out->libmvec = value == "libmvec";
    } else if (key == "prefer-vector-width") {
      unsigned bits = 0;
      if (value.getAsInteger(10, bits) || (bits != 128 && bits != 256 && bits != 512)) {
        *out_error = "compile option \"" + part.str() + "\": expected 128, 256 or 512";
        return kKilnInvalidArgument;
      }
      out->prefer_vector_width = value.str();
    }
    // Other options belong to other drivers or to kilnc; they are part of the cache key all the same.
  }
  return kKilnOk;
}

// LLVM 19's libmvec table predates the llvm.{asin,acos,atan,sinh,cosh,tanh} intrinsics that clang 19 emits
// for those libm calls, and lists no AVX-512 variants. glibc (2.35+) exports all of them; these names stay
// alive only as long as the strings below, which are static.
void AddMissingLibmvecMappings(const TargetSpec& target, llvm::TargetLibraryInfoImpl* library_info) {
  static const char* const kFunctions[] = {"asin", "acos", "atan", "sinh", "cosh", "tanh"};
  static std::vector<std::string> storage = [] {
    std::vector<std::string> names;
    for (const char* fn : kFunctions) {
      for (int wide = 0; wide < 2; ++wide) {
        for (char isa : {'b', 'd', 'e'}) {
          int lanes = (isa == 'b' ? 4 : isa == 'd' ? 8 : 16) / (wide ? 2 : 1);
          names.push_back(std::string("llvm.") + fn + (wide ? ".f64" : ".f32"));
          names.push_back("_ZGV" + std::string(1, isa) + "N" + std::to_string(lanes) + "v_" + fn +
                          (wide ? "" : "f"));
          names.push_back("_ZGV_LLVM_N" + std::to_string(lanes) + "v");
        }
      }
    }
    return names;
  }();
  const bool has_avx2 = target.features.find("+avx2") != std::string::npos;
  const bool has_avx512 = target.features.find("+avx512f") != std::string::npos;
  std::vector<llvm::VecDesc> mappings;
  for (size_t i = 0; i < storage.size(); i += 3) {
    const char isa = storage[i + 1][4];
    if ((isa == 'd' && !has_avx2) || (isa == 'e' && !has_avx512)) continue;
    unsigned lanes = 0;
    llvm::StringRef(storage[i + 2]).drop_front(11).drop_back(1).getAsInteger(10, lanes);
    mappings.emplace_back(storage[i], storage[i + 1], llvm::ElementCount::getFixed(lanes), false,
                          storage[i + 2]);
  }
  library_info->addVectorizableFunctions(mappings);
}

// A message from an llvm::Error, consuming it.
std::string Describe(llvm::Error error) { return llvm::toString(std::move(error)); }

}  // namespace

TargetSpec HostTargetSpec(const std::string& cpu_override, const std::string& features_override) {
  TargetSpec spec;
  spec.triple = llvm::sys::getProcessTriple();
  spec.cpu = cpu_override.empty() ? llvm::sys::getHostCPUName().str() : cpu_override;
  std::vector<std::string> features;
  if (cpu_override.empty()) {
    // Sorted, so that the string (part of the cache key) does not depend on hash-table order.
    for (const auto& feature : llvm::sys::getHostCPUFeatures()) {
      features.push_back((feature.second ? "+" : "-") + feature.first().str());
    }
    std::sort(features.begin(), features.end());
  }
  if (!features_override.empty()) features.push_back(features_override);
  for (size_t i = 0; i < features.size(); ++i) spec.features += (i ? "," : "") + features[i];
  return spec;
}

std::string LlvmVersionString() { return LLVM_VERSION_STRING; }

KilnStatus CompileBitcode(const void* bitcode, size_t size, const std::string& what, const TargetSpec& target,
                          const std::string& options_text, std::string* out_object, std::string* out_error) {
  InitializeLlvmOnce();
  CompileOptions options;
  if (KilnStatus status = ParseOptions(options_text, &options, out_error); status != kKilnOk) {
    *out_error = what + ": " + *out_error;
    return status;
  }
  llvm::LLVMContext context;
  llvm::MemoryBufferRef buffer(llvm::StringRef(static_cast<const char*>(bitcode), size), what);
  llvm::Expected<std::unique_ptr<llvm::Module>> parsed = llvm::parseBitcodeFile(buffer, context);
  if (!parsed) {
    *out_error = what + ": payload \"llvm-bc\" (" + std::to_string(size) +
                 " bytes) is not valid LLVM bitcode: " + Describe(parsed.takeError());
    return kKilnInvalidModel;
  }
  llvm::Module& module = **parsed;
  {
    std::string problems;
    llvm::raw_string_ostream stream(problems);
    if (llvm::verifyModule(module, &stream)) {
      *out_error = what + ": the bitcode fails LLVM's verifier: " + stream.str();
      return kKilnInvalidModel;
    }
  }
  llvm::Triple host_triple(target.triple);
  llvm::Triple module_triple(module.getTargetTriple());
  if (!module.getTargetTriple().empty() && module_triple.getArch() != host_triple.getArch()) {
    *out_error = what + ": the bitcode targets " + module.getTargetTriple() + ", which this host (" +
                 target.triple + ") cannot run";
    return kKilnUnsupported;
  }

  std::string lookup_error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(target.triple, lookup_error);
  if (!llvm_target) {
    *out_error = what + ": no LLVM target for " + target.triple + ": " + lookup_error;
    return kKilnUnsupported;
  }
  llvm::TargetOptions target_options;
  // PIC, so that calls into the process (libm, the runtime services) go through JITLink's stubs and may be
  // any distance away.
  std::unique_ptr<llvm::TargetMachine> machine(llvm_target->createTargetMachine(
      target.triple, target.cpu, target.features, target_options, llvm::Reloc::PIC_, llvm::CodeModel::Small,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine) {
    *out_error = what + ": cannot create a target machine for " + target.triple + " cpu " + target.cpu;
    return kKilnUnsupported;
  }
  module.setTargetTriple(target.triple);
  module.setDataLayout(machine->createDataLayout());
  // kilnc (or clang) compiled for a generic CPU; the per-function attributes decide what the vectorizer and
  // the instruction selector may use, so they must name this host.
  for (llvm::Function& function : module) {
    if (function.isDeclaration()) continue;
    function.removeFnAttr("target-cpu");
    function.removeFnAttr("target-features");
    function.removeFnAttr("tune-cpu");
    function.addFnAttr("target-cpu", target.cpu);
    if (!target.features.empty()) function.addFnAttr("target-features", target.features);
    if (!options.prefer_vector_width.empty()) {
      function.removeFnAttr("prefer-vector-width");
      function.addFnAttr("prefer-vector-width", options.prefer_vector_width);
    }
  }

  llvm::TargetLibraryInfoImpl library_info(host_triple);
  if (options.libmvec) {
    // The vectorized calls (_ZGV*_atanf, ...) resolve against glibc's libmvec when the image is linked.
    std::string load_error;
    if (llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1", &load_error)) {
      *out_error = what + ": compile option veclib=libmvec, but libmvec.so.1 cannot be loaded: " + load_error;
      return kKilnUnsupported;
    }
    library_info.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86, host_triple);
    AddMissingLibmvecMappings(target, &library_info);
  }

  {
    llvm::LoopAnalysisManager loop_analyses;
    llvm::FunctionAnalysisManager function_analyses;
    llvm::CGSCCAnalysisManager cgscc_analyses;
    llvm::ModuleAnalysisManager module_analyses;
    llvm::PipelineTuningOptions tuning;
    tuning.LoopVectorization = true;
    tuning.SLPVectorization = true;
    llvm::PassBuilder builder(machine.get(), tuning);
    function_analyses.registerPass([&] { return llvm::TargetLibraryAnalysis(library_info); });
    builder.registerModuleAnalyses(module_analyses);
    builder.registerCGSCCAnalyses(cgscc_analyses);
    builder.registerFunctionAnalyses(function_analyses);
    builder.registerLoopAnalyses(loop_analyses);
    builder.crossRegisterProxies(loop_analyses, function_analyses, cgscc_analyses, module_analyses);
    llvm::ModulePassManager passes = builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    passes.run(module, module_analyses);
  }

  llvm::SmallVector<char, 0> object;
  {
    llvm::raw_svector_ostream stream(object);
    llvm::legacy::PassManager codegen;
    codegen.add(new llvm::TargetLibraryInfoWrapperPass(library_info));
    if (machine->addPassesToEmitFile(codegen, stream, nullptr, llvm::CodeGenFileType::ObjectFile)) {
      *out_error = what + ": the target machine cannot emit object files";
      return kKilnUnsupported;
    }
    codegen.run(module);
  }
  out_object->assign(object.data(), object.size());
  return kKilnOk;
}

KilnStatus ListDefinedSymbols(const std::string& object, std::vector<std::string>* out_symbols,
                              std::string* out_error) {
  llvm::Expected<std::unique_ptr<llvm::object::ObjectFile>> file =
      llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(object, "kiln-object"));
  if (!file) {
    *out_error = "compiled object (" + std::to_string(object.size()) +
                 " bytes) is not a valid object file: " + Describe(file.takeError());
    return kKilnInvalidModel;
  }
  for (const llvm::object::SymbolRef& symbol : (*file)->symbols()) {
    llvm::Expected<uint32_t> flags = symbol.getFlags();
    if (!flags) {
      *out_error = "compiled object: unreadable symbol flags: " + Describe(flags.takeError());
      return kKilnInvalidModel;
    }
    if ((*flags & llvm::object::SymbolRef::SF_Undefined) || !(*flags & llvm::object::SymbolRef::SF_Global)) {
      continue;
    }
    llvm::Expected<llvm::StringRef> name = symbol.getName();
    if (!name) {
      *out_error = "compiled object: unreadable symbol name: " + Describe(name.takeError());
      return kKilnInvalidModel;
    }
    out_symbols->push_back(name->str());
  }
  return kKilnOk;
}

struct JitLinker::Image {
  llvm::orc::JITDylib* dylib;
};

struct JitLinker::Impl {
  std::unique_ptr<llvm::orc::ExecutionSession> session;
  std::unique_ptr<llvm::orc::ObjectLinkingLayer> linker;
  std::atomic<uint64_t> next_id{0};
};

JitLinker::JitLinker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::unique_ptr<JitLinker> JitLinker::Create(std::string* out_error) {
  InitializeLlvmOnce();
  auto process = llvm::orc::SelfExecutorProcessControl::Create();
  if (!process) {
    *out_error = "cannot set up in-process JIT linking: " + Describe(process.takeError());
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  impl->session = std::make_unique<llvm::orc::ExecutionSession>(std::move(*process));
  // Link failures come back from lookup() with the same text; do not also print them to stderr.
  impl->session->setErrorReporter([](llvm::Error error) { llvm::consumeError(std::move(error)); });
  impl->linker = std::make_unique<llvm::orc::ObjectLinkingLayer>(*impl->session);
  return std::unique_ptr<JitLinker>(new JitLinker(std::move(impl)));
}

JitLinker::~JitLinker() {
  if (impl_ && impl_->session) llvm::consumeError(impl_->session->endSession());
}

KilnStatus JitLinker::Link(const std::string& object,
                           const std::vector<std::pair<std::string, void*>>& runtime_symbols,
                           const std::vector<std::string>& names, Image** out_image,
                           std::vector<void*>* out_addresses, std::string* out_error) {
  // Name unresolvable references up front: JITLink's own error only says which definitions failed.
  {
    llvm::Expected<std::unique_ptr<llvm::object::ObjectFile>> file =
        llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(object, "kiln-object"));
    if (!file) {
      *out_error = "the compiled object is unreadable: " + Describe(file.takeError());
      return kKilnInvalidModel;
    }
    std::string missing;
    for (const llvm::object::SymbolRef& symbol : (*file)->symbols()) {
      llvm::Expected<uint32_t> flags = symbol.getFlags();
      llvm::Expected<llvm::StringRef> name = symbol.getName();
      if (!flags || !name) {
        llvm::consumeError(flags.takeError());
        llvm::consumeError(name.takeError());
        continue;
      }
      if (!(*flags & llvm::object::SymbolRef::SF_Undefined) || name->empty()) continue;
      bool found = false;
      for (const auto& entry : runtime_symbols) found = found || entry.first == *name;
      if (!found && !name->starts_with("__kiln_")) {
        found = dlsym(RTLD_DEFAULT, name->str().c_str()) != nullptr;
      }
      if (!found) missing += (missing.empty() ? "" : ", ") + name->str();
    }
    if (!missing.empty()) {
      *out_error = "the compiled code calls " + missing +
                   ", which neither the driver's runtime services nor the process provide";
      return kKilnUnsupported;
    }
  }
  llvm::orc::ExecutionSession& session = *impl_->session;
  llvm::orc::JITDylib& dylib =
      session.createBareJITDylib("kiln-script-" + std::to_string(impl_->next_id.fetch_add(1)));
  auto fail = [&](const std::string& message, KilnStatus status) {
    *out_error = message;
    llvm::consumeError(session.removeJITDylib(dylib));
    return status;
  };
  llvm::orc::SymbolMap runtime;
  for (const auto& [name, address] : runtime_symbols) {
    runtime[session.intern(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                     llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  }
  if (llvm::Error error = dylib.define(llvm::orc::absoluteSymbols(std::move(runtime)))) {
    return fail("cannot define the runtime services: " + Describe(std::move(error)), kKilnError);
  }
  // The C library and libm come from the process; runtime services only from the table above, so a kernel
  // built against another runtime version fails to link instead of calling something else.
  auto process_symbols = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      '\0', [](const llvm::orc::SymbolStringPtr& name) { return !(*name).starts_with("__kiln_"); });
  if (!process_symbols) {
    return fail("cannot search the process for symbols: " + Describe(process_symbols.takeError()),
                kKilnError);
  }
  dylib.addGenerator(std::move(*process_symbols));
  if (llvm::Error error =
          impl_->linker->add(dylib, llvm::MemoryBuffer::getMemBufferCopy(object, "kiln-object"))) {
    return fail("cannot add the compiled object: " + Describe(std::move(error)), kKilnInvalidModel);
  }
  llvm::orc::SymbolLookupSet lookup_set;
  for (const std::string& name : names) lookup_set.add(session.intern(name));
  llvm::Expected<llvm::orc::SymbolMap> resolved =
      session.lookup(llvm::orc::makeJITDylibSearchOrder({&dylib}), std::move(lookup_set));
  if (!resolved) {
    return fail("linking the compiled module failed: " + Describe(resolved.takeError()), kKilnInvalidModel);
  }
  out_addresses->clear();
  for (const std::string& name : names) {
    out_addresses->push_back((*resolved)[session.intern(name)].getAddress().toPtr<void*>());
  }
  *out_image = new Image{&dylib};
  return kKilnOk;
}

void JitLinker::Unlink(Image* image) {
  if (!image) return;
  llvm::consumeError(impl_->session->removeJITDylib(*image->dylib));
  delete image;
}

}  // namespace cpu
}  // namespace kiln
