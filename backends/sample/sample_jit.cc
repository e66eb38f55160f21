// LLVM 19 behind sample_jit.h: bitcode -> host object with the default code generator (no optimisation
// pipeline of its own: kilnc already optimised the bitcode), and ORC's LLJIT to link one image per script.
// Single-threaded code generation and no object cache: a real driver would add both.
#include "sample_jit.h"

#include <atomic>
#include <mutex>

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace kiln_sample {
namespace {

void InitializeLlvmOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

// PIC and the small code model work with either of ORC's object linkers, and let calls into the process
// (libm, the driver's runtime services) be any distance away.
llvm::Expected<llvm::orc::JITTargetMachineBuilder> HostMachine() {
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) return builder.takeError();
  builder->setRelocationModel(llvm::Reloc::PIC_);
  builder->setCodeModel(llvm::CodeModel::Small);
  return builder;
}

std::string Describe(llvm::Error error) { return llvm::toString(std::move(error)); }

}  // namespace

bool CompileBitcode(const void* bitcode, size_t size, const std::string& what, std::string* out_object,
                    std::vector<std::string>* out_defined_symbols, std::string* out_error) {
  InitializeLlvmOnce();
  llvm::LLVMContext context;
  llvm::MemoryBufferRef buffer(llvm::StringRef(static_cast<const char*>(bitcode), size), what);
  auto module = llvm::parseBitcodeFile(buffer, context);
  if (!module) {
    *out_error = what + ": the llvm-bc payload (" + std::to_string(size) +
                 " bytes) is not LLVM bitcode: " + Describe(module.takeError());
    return false;
  }
  std::string problems;
  llvm::raw_string_ostream problem_stream(problems);
  if (llvm::verifyModule(**module, &problem_stream)) {
    *out_error = what + ": the bitcode fails LLVM's verifier: " + problem_stream.str();
    return false;
  }
  auto machine_builder = HostMachine();
  if (!machine_builder) {
    *out_error = what + ": cannot describe the host: " + Describe(machine_builder.takeError());
    return false;
  }
  const llvm::Triple& host = machine_builder->getTargetTriple();
  llvm::Triple module_triple((*module)->getTargetTriple());
  if (!(*module)->getTargetTriple().empty() && module_triple.getArch() != host.getArch()) {
    *out_error = what + ": the bitcode targets " + module_triple.str() + ", this host is " + host.str();
    return false;
  }
  auto machine = machine_builder->createTargetMachine();
  if (!machine) {
    *out_error = what + ": no code generator for " + host.str() + ": " + Describe(machine.takeError());
    return false;
  }
  (*module)->setTargetTriple(host.str());
  (*module)->setDataLayout((*machine)->createDataLayout());

  // What the driver can resolve later: every externally visible definition (expanded kernels, reduction
  // entries, invokables, and the script globals, which keep their source names).
  out_defined_symbols->clear();
  for (const llvm::GlobalValue& value : (*module)->global_values()) {
    if (!value.isDeclaration() && !value.hasLocalLinkage())
      out_defined_symbols->push_back(value.getName().str());
  }

  llvm::orc::SimpleCompiler compiler(**machine);
  auto object = compiler(**module);
  if (!object) {
    *out_error = what + ": code generation failed: " + Describe(object.takeError());
    return false;
  }
  out_object->assign((*object)->getBufferStart(), (*object)->getBufferSize());
  return true;
}

struct Linker::Image {
  llvm::orc::JITDylib* dylib;
};

struct Linker::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::atomic<uint64_t> next_id{0};
};

Linker::Linker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Linker::~Linker() = default;

std::unique_ptr<Linker> Linker::Create(std::string* out_error) {
  InitializeLlvmOnce();
  auto machine_builder = HostMachine();
  if (!machine_builder) {
    *out_error = "cannot describe the host: " + Describe(machine_builder.takeError());
    return nullptr;
  }
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*machine_builder)).create();
  if (!jit) {
    *out_error = "cannot create an ORC LLJIT: " + Describe(jit.takeError());
    return nullptr;
  }
  // Failures come back from lookup() with the same text; do not also print them to stderr.
  (*jit)->getExecutionSession().setErrorReporter(
      [](llvm::Error error) { llvm::consumeError(std::move(error)); });
  auto impl = std::make_unique<Impl>();
  impl->jit = std::move(*jit);
  return std::unique_ptr<Linker>(new Linker(std::move(impl)));
}

Linker::Image* Linker::Link(const std::string& object,
                            const std::vector<std::pair<std::string, void*>>& runtime_symbols,
                            std::string* out_error) {
  llvm::orc::LLJIT& jit = *impl_->jit;
  llvm::orc::ExecutionSession& session = jit.getExecutionSession();
  // LLJIT's JITDylibs search the process after their own definitions, which is where libm comes from.
  auto dylib = jit.createJITDylib("kiln-sample-script-" + std::to_string(impl_->next_id.fetch_add(1)));
  if (!dylib) {
    *out_error = "cannot create a JITDylib: " + Describe(dylib.takeError());
    return nullptr;
  }
  llvm::orc::SymbolMap runtime;
  for (const auto& [name, address] : runtime_symbols) {
    runtime[jit.mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                          llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  }
  llvm::Error error = dylib->define(llvm::orc::absoluteSymbols(std::move(runtime)));
  if (!error) error = jit.addObjectFile(*dylib, llvm::MemoryBuffer::getMemBufferCopy(object, "kiln-sample"));
  if (error) {
    *out_error = "cannot link the compiled module: " + Describe(std::move(error));
    llvm::consumeError(session.removeJITDylib(*dylib));
    return nullptr;
  }
  return new Image{&*dylib};
}

void* Linker::Lookup(Image* image, const std::string& name, std::string* out_error) {
  // The first lookup links the object; an unresolved reference fails here, naming the symbol.
  auto address = impl_->jit->lookup(*image->dylib, name);
  if (!address) {
    *out_error = Describe(address.takeError());
    return nullptr;
  }
  return address->toPtr<void*>();
}

void Linker::Unlink(Image* image) {
  if (!image) return;
  llvm::consumeError(impl_->jit->getExecutionSession().removeJITDylib(*image->dylib));
  delete image;
}

}  // namespace kiln_sample
