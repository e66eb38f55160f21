// kilnc's back end and driver: runs the front end, links the math library, turns the IR into what the CPU
// driver expects (only the entry points and reflected globals visible, no host-specific attributes),
// optimizes it without vectorizing, and writes the module.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "compiler/compiler.h"
#include "compiler/frontend.h"
#include "compiler/script_info.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Scalar/EarlyCSE.h"
#include "llvm/Transforms/Scalar/Scalarizer.h"
#include "llvm/Transforms/Scalar/SimplifyCFG.h"

#if defined(KILN_HAVE_RSLIB)
#include "compiler/rslib/rslib_bitcode.h"
#endif
#if defined(KILN_HAVE_GPU_LOWERING)
#include "compiler/spirv_backend.h"
#include "kiln/spirv_abi.h"
#endif

namespace kiln {
namespace compiler {
namespace {

#ifdef NDEBUG
constexpr bool kVerifyEachPass = false;
#else
constexpr bool kVerifyEachPass = true;
#endif

constexpr char kEntryPrefixes[][16] = {"__kiln_expand_", "__kiln_reduce_", "__kiln_invoke_"};

bool IsEntryPoint(llvm::StringRef name) {
  for (const char* prefix : kEntryPrefixes) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

bool Verify(const llvm::Module& module, const char* after, std::string* diagnostics) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (!llvm::verifyModule(module, &os)) return true;
  os.flush();
  *diagnostics += std::string("kilnc: internal error: the IR does not verify after ") + after + ":\n" + text;
  return false;
}

// Writes the in-memory image of `c` (DataLayout sizes and offsets) into out[0, size). Returns false for
// initializers that are not plain data (addresses of other globals).
bool ConstantBytes(const llvm::Constant* c, const llvm::DataLayout& layout, uint8_t* out, uint64_t size) {
  if (llvm::isa<llvm::ConstantAggregateZero>(c) || llvm::isa<llvm::ConstantPointerNull>(c) ||
      llvm::isa<llvm::UndefValue>(c)) {
    std::memset(out, 0, size);
    return true;
  }
  auto store_int = [&](const llvm::APInt& value) {
    const uint64_t bytes = std::min<uint64_t>((value.getBitWidth() + 7) / 8, size);
    for (uint64_t i = 0; i < bytes; ++i) {
      const unsigned bits = std::min(8u, value.getBitWidth() - static_cast<unsigned>(i * 8));
      out[i] = static_cast<uint8_t>(value.extractBitsAsZExtValue(bits, static_cast<unsigned>(i * 8)));
    }
    return true;
  };
  if (const auto* i = llvm::dyn_cast<llvm::ConstantInt>(c)) return store_int(i->getValue());
  if (const auto* f = llvm::dyn_cast<llvm::ConstantFP>(c))
    return store_int(f->getValueAPF().bitcastToAPInt());
  if (const auto* seq = llvm::dyn_cast<llvm::ConstantDataSequential>(c)) {
    const uint64_t stride = seq->getElementByteSize();
    for (unsigned i = 0; i < seq->getNumElements(); ++i) {
      if ((i + 1) * stride > size) return false;
      if (!ConstantBytes(seq->getElementAsConstant(i), layout, out + i * stride, stride)) return false;
    }
    return true;
  }
  if (const auto* agg = llvm::dyn_cast<llvm::ConstantAggregate>(c)) {
    std::memset(out, 0, size);
    llvm::Type* type = agg->getType();
    for (unsigned i = 0; i < agg->getNumOperands(); ++i) {
      const llvm::Constant* element = agg->getOperand(i);
      uint64_t offset = 0;
      if (auto* st = llvm::dyn_cast<llvm::StructType>(type)) {
        offset = layout.getStructLayout(st)->getElementOffset(i);
      } else if (auto* at = llvm::dyn_cast<llvm::ArrayType>(type)) {
        offset = i * layout.getTypeAllocSize(at->getElementType());
      } else if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(type)) {
        offset = i * (layout.getTypeSizeInBits(vt->getElementType()) / 8);
      } else {
        return false;
      }
      const uint64_t element_size = layout.getTypeStoreSize(element->getType());
      if (offset + element_size > size) return false;
      if (!ConstantBytes(element, layout, out + offset, element_size)) return false;
    }
    return true;
  }
  return false;
}

bool FillDefaultValues(llvm::Module& module, KernelModuleDesc* desc, std::string* diagnostics) {
  const llvm::DataLayout& layout = module.getDataLayout();
  for (GlobalDesc& global : desc->globals) {
    llvm::GlobalVariable* gv = module.getNamedGlobal(global.name);
    if (!gv && global.is_static) {
      // Clang emits a static global only where emitted code uses it (a store in a static function nothing
      // calls does not count): the reflection still names it, so it gets its zero bytes here.
      llvm::Type* bytes = llvm::ArrayType::get(llvm::Type::getInt8Ty(module.getContext()), global.size);
      gv = new llvm::GlobalVariable(module, bytes, false, llvm::GlobalValue::InternalLinkage,
                                    llvm::Constant::getNullValue(bytes), global.name);
      gv->setAlignment(llvm::Align(std::max<uint32_t>(global.alignment, 1)));
    }
    if (!gv) {
      *diagnostics += "kilnc: internal error: reflected global '" + global.name + "' has no IR definition\n";
      return false;
    }
    global.default_value.assign(global.size, 0);
    if (gv->hasInitializer() &&
        !ConstantBytes(gv->getInitializer(), layout, global.default_value.data(), global.size)) {
      *diagnostics += "kilnc: error: global '" + global.name +
                      "': its initializer is not plain data (addresses cannot be reflected)\n";
      return false;
    }
  }
  return true;
}

// Which reflected pointer globals (`float* gWeights;`) each entry point's code may use: the runtime refuses a
// launch while one of them is unbound, since the generated code dereferences the raw pointer unchecked (on
// the CPU, NULL). It runs on the IR as code generation leaves it, before linking, inlining and dead-code
// removal, so that it sees everything the source can reach: what is reachable from an entry point through the
// call graph (direct calls; any other reference to a function counts too, though the front end refuses
// function pointers), the initializers of the globals that code refers to, and the kernels an rsForEach may
// launch. Over-approximating errs on the side of refusing a launch; the one use left out is loading the
// pointer only to compare it (`if (gWeights != NULL)`), which never dereferences it.
class PointerGlobalUses {
 public:
  PointerGlobalUses(const llvm::Module& module, const KernelModuleDesc& desc) : module_(module) {
    for (const GlobalDesc& g : desc.globals) {
      if (g.is_pointer()) pointer_globals_.insert(g.name);
    }
    for (const KernelDesc& k : desc.kernels) kernels_[k.name] = k.expand_symbol;
  }

  // The pointer globals reachable from `entry_points`, sorted. False (with diagnostics) when one of them has
  // no definition in the IR.
  bool Find(const std::vector<std::string>& entry_points, std::vector<std::string>* out,
            std::string* diagnostics) {
    Walk walk;
    for (const std::string& symbol : entry_points) {
      const llvm::Function* f = module_.getFunction(symbol);
      if (f == nullptr || f->isDeclaration()) {
        *diagnostics += "kilnc: internal error: entry point '" + symbol + "' has no IR definition\n";
        return false;
      }
      Push(&walk, f);
    }
    std::set<std::string> launched;
    while (!walk.work.empty()) {
      while (!walk.work.empty()) {
        const llvm::Function* f = walk.work.back();
        walk.work.pop_back();
        if (f->isDeclaration()) {
          if (f->getName() == "__kiln_rt_for_each") walk.for_each = true;
          continue;
        }
        for (const llvm::BasicBlock& block : *f) {
          for (const llvm::Instruction& inst : block) {
            if (ComparesOnly(inst)) continue;
            for (const llvm::Value* operand : inst.operands()) {
              if (const auto* c = llvm::dyn_cast<llvm::Constant>(operand)) Visit(&walk, c);
            }
          }
        }
      }
      // rsForEach names its kernel in a string (rs_core.rsh); the driver launches it without the runtime, so
      // its pointer globals count here. Without a kernel's name in sight, any kernel may be launched.
      if (!walk.for_each) break;
      const bool all = walk.strings_named_kernel.empty();
      for (const auto& [name, symbol] : kernels_) {
        if ((!all && !walk.strings_named_kernel.count(name)) || !launched.insert(name).second) continue;
        if (const llvm::Function* f = module_.getFunction(symbol)) Push(&walk, f);
      }
    }
    out->assign(walk.found.begin(), walk.found.end());  // std::set: sorted
    return true;
  }

 private:
  struct Walk {
    std::set<const llvm::Function*> functions;
    std::vector<const llvm::Function*> work;
    std::set<const llvm::Constant*> constants;
    std::set<std::string> found;
    std::set<std::string> strings_named_kernel;
    bool for_each = false;
  };

  static void Push(Walk* walk, const llvm::Function* f) {
    if (walk->functions.insert(f).second) walk->work.push_back(f);
  }

  // A load of a pointer global whose value is only compared (with NULL, say) reads the pointer, never through
  // it.
  bool ComparesOnly(const llvm::Instruction& inst) const {
    const auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst);
    if (load == nullptr) return false;
    const auto* gv = llvm::dyn_cast<llvm::GlobalVariable>(load->getPointerOperand());
    if (gv == nullptr || !pointer_globals_.count(gv->getName().str())) return false;
    for (const llvm::User* user : load->users()) {
      if (!llvm::isa<llvm::ICmpInst>(user)) return false;
    }
    return true;
  }

  void Visit(Walk* walk, const llvm::Constant* c) {
    if (!walk->constants.insert(c).second) return;
    if (const auto* f = llvm::dyn_cast<llvm::Function>(c)) {
      Push(walk, f);
      return;
    }
    if (const auto* gv = llvm::dyn_cast<llvm::GlobalVariable>(c)) {
      const std::string name = gv->getName().str();
      if (pointer_globals_.count(name)) walk->found.insert(name);
      if (!gv->hasInitializer()) return;
      // A static table may hold a function's or a pointer global's address; a string may name a kernel.
      if (const auto* text = llvm::dyn_cast<llvm::ConstantDataSequential>(gv->getInitializer());
          text != nullptr && text->isCString() && kernels_.count(text->getAsCString().str())) {
        walk->strings_named_kernel.insert(text->getAsCString().str());
      }
      Visit(walk, gv->getInitializer());
      return;
    }
    if (llvm::isa<llvm::GlobalValue>(c)) return;  // aliases and ifuncs: none in a script
    for (const llvm::Value* operand : c->operands()) {
      if (const auto* inner = llvm::dyn_cast<llvm::Constant>(operand)) Visit(walk, inner);
    }
  }

  const llvm::Module& module_;
  std::set<std::string> pointer_globals_;
  std::map<std::string, std::string> kernels_;  // name -> expand symbol
};

bool FillPointerGlobals(const llvm::Module& module, const ScriptInfo& info, KernelModuleDesc* desc,
                        std::string* diagnostics) {
  PointerGlobalUses uses(module, *desc);
  // init() runs when the script is created, before the host can bind anything: a pointer global it reads or
  // writes through would be NULL there, so such a script is refused here rather than crashing at creation.
  if (desc->has_init) {
    std::vector<std::string> used;
    if (!uses.Find({"__kiln_invoke_init"}, &used, diagnostics)) return false;
    if (!used.empty()) {
      std::string names;
      for (const std::string& name : used) names += (names.empty() ? "'" : ", '") + name + "'";
      *diagnostics += (info.init_location.empty() ? std::string("kilnc") : info.init_location) +
                      ": error: init() uses pointer global " + names +
                      ", which is still unbound when init() runs (at script creation, before the host can bind a "
                      "tensor to it); read it in an invokable or kernel instead\n";
      if (!info.init_source_line.empty()) *diagnostics += info.init_source_line + "\n";
      return false;
    }
  }
  for (KernelDesc& k : desc->kernels) {
    if (!uses.Find({k.expand_symbol}, &k.pointer_globals, diagnostics)) return false;
  }
  for (ReductionDesc& r : desc->reductions) {
    if (!uses.Find({r.init_symbol, r.accum_symbol, r.combine_symbol, r.out_symbol}, &r.pointer_globals,
                   diagnostics)) {
      return false;
    }
  }
  for (InvokableDesc& f : desc->invokables) {
    if (!uses.Find({f.symbol}, &f.pointer_globals, diagnostics)) return false;
  }
  return true;
}

bool LinkMathLibrary(llvm::Module* module, std::string* diagnostics) {
#if defined(KILN_HAVE_RSLIB)
  llvm::StringRef bytes(reinterpret_cast<const char*>(kiln::kRslibBitcode), kiln::kRslibBitcodeSize);
  auto library = llvm::parseBitcodeFile(llvm::MemoryBufferRef(bytes, "kiln_rslib.bc"), module->getContext());
  if (!library) {
    *diagnostics += "kilnc: internal error: the embedded math library does not load: " +
                    llvm::toString(library.takeError()) + "\n";
    return false;
  }
  (*library)->setTargetTriple(module->getTargetTriple());
  (*library)->setDataLayout(module->getDataLayout());
  if (llvm::Linker::linkModules(*module, std::move(*library), llvm::Linker::Flags::LinkOnlyNeeded)) {
    *diagnostics += "kilnc: internal error: linking the math library failed\n";
    return false;
  }
#else
  (void)module;
  (void)diagnostics;
#endif
  return true;
}

// Leaves only the entry points and reflected globals visible, so that everything else can be inlined and
// removed, and strips what would tie the code to the machine kilnc runs on.
void Finalize(llvm::Module* module, const ScriptInfo& info) {
  if (llvm::GlobalVariable* annotations = module->getNamedGlobal("llvm.global.annotations")) {
    annotations->eraseFromParent();
  }
  std::set<std::string> inline_into_entry;
  for (const KernelInfo& k : info.kernels) inline_into_entry.insert(k.function);
  for (const ReductionDesc& r : info.module.reductions) {
    for (const std::string* f : {&r.initializer, &r.accumulator, &r.combiner, &r.outconverter}) {
      if (!f->empty()) inline_into_entry.insert(*f);
    }
  }
  for (llvm::Function& f : *module) {
    // The CPU driver compiles for the host it runs on; clang's generic x86-64 CPU would pin it to SSE2.
    f.removeFnAttr("target-cpu");
    f.removeFnAttr("target-features");
    f.removeFnAttr("tune-cpu");
    if (f.isDeclaration()) continue;
    if (IsEntryPoint(f.getName())) {
      f.setLinkage(llvm::GlobalValue::ExternalLinkage);
      f.setVisibility(llvm::GlobalValue::DefaultVisibility);
      continue;
    }
    f.setLinkage(llvm::GlobalValue::InternalLinkage);
    if (inline_into_entry.count(f.getName().str()) && !f.hasFnAttribute(llvm::Attribute::NoInline)) {
      f.removeFnAttr(llvm::Attribute::OptimizeNone);
      f.addFnAttr(llvm::Attribute::AlwaysInline);
    }
  }
  std::set<std::string> reflected;
  for (const GlobalDesc& g : info.module.globals) reflected.insert(g.name);
  for (llvm::GlobalVariable& gv : module->globals()) {
    if (gv.isDeclaration() || gv.getName().starts_with("llvm.")) continue;
    if (reflected.count(gv.getName().str())) {
      gv.setLinkage(llvm::GlobalValue::ExternalLinkage);
      // A settable global is written by the runtime between launches: never fold its initializer.
      continue;
    }
    gv.setLinkage(llvm::GlobalValue::InternalLinkage);
  }
}

void Optimize(llvm::Module* module, int opt_level) {
  llvm::PipelineTuningOptions tuning;
  // The CPU driver vectorizes (and unrolls) for the host's vector width; doing it here would bake in SSE2
  // and hide the loops' simple shape from the driver's vectorizer.
  tuning.LoopVectorization = false;
  tuning.SLPVectorization = false;
  tuning.LoopUnrolling = false;
  tuning.LoopInterleaving = false;

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassInstrumentationCallbacks callbacks;
  llvm::StandardInstrumentations instrumentations(module->getContext(), /*DebugLogging=*/false,
                                                  /*VerifyEach=*/kVerifyEachPass);
  instrumentations.registerCallbacks(callbacks, &mam);
  llvm::PassBuilder builder(nullptr, tuning, std::nullopt, &callbacks);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  // RenderScript vectors (uchar4, float3...) become LLVM vector types, and the loop vectorizer gives up on
  // any loop that contains one. Splitting them into lanes, loads and stores included, leaves the driver's
  // vectorizer scalar loops it can widen across x (its SLP vectorizer re-forms lane vectors where the loop
  // cannot be vectorized). Lane arithmetic is independent per lane, so nothing is lost here.
  builder.registerOptimizerLastEPCallback([](llvm::ModulePassManager& mpm, llvm::OptimizationLevel) {
    llvm::ScalarizerPassOptions scalarizer;
    scalarizer.ScalarizeLoadStore = true;
    llvm::FunctionPassManager fpm;
    fpm.addPass(llvm::ScalarizerPass(scalarizer));
    fpm.addPass(llvm::InstCombinePass());
    fpm.addPass(llvm::EarlyCSEPass());
    fpm.addPass(llvm::SimplifyCFGPass());
    mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  });
  llvm::ModulePassManager passes;
  switch (opt_level) {
    case 0:
      passes = builder.buildO0DefaultPipeline(llvm::OptimizationLevel::O0);
      break;
    case 1:
      passes = builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O1);
      break;
    case 3:
      passes = builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
      break;
    default:
      passes = builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
      break;
  }
  passes.run(*module, mam);
}

// The external symbols left after linking: the runtime services the driver provides. Anything else is an
// error now rather than a JIT link failure later.
bool CollectImports(const llvm::Module& module, std::vector<std::string>* imports, std::string* diagnostics) {
  bool ok = true;
  for (const llvm::Function& f : module) {
    if (!f.isDeclaration() || f.isIntrinsic() || f.use_empty()) continue;
    const std::string name = f.getName().str();
    if (llvm::StringRef(name).starts_with("__kiln_rt_")) {
      imports->push_back(name);
      continue;
    }
    *diagnostics += "kilnc: error: '" + llvm::demangle(name) +
                    "' is called but neither the script nor the kernel math library defines it\n";
    ok = false;
  }
  for (const llvm::GlobalVariable& gv : module.globals()) {
    if (gv.isDeclaration() && !gv.use_empty()) {
      *diagnostics += "kilnc: error: global '" + gv.getName().str() + "' is declared but never defined\n";
      ok = false;
    }
  }
  std::sort(imports->begin(), imports->end());
  return ok;
}

}  // namespace
}  // namespace compiler

std::string CompilerVersion() {
#if defined(KILN_HAVE_GPU_LOWERING)
  return std::string("kilnc ") + KILN_COMPILER_VERSION + " (LLVM " + LLVM_VERSION_STRING + ", glslang " +
         compiler::GlslangVersionString() + ", SPIR-V " + std::to_string(compiler::kSpirvVersion >> 16) +
         "." + std::to_string((compiler::kSpirvVersion >> 8) & 0xff) + ")";
#else
  return std::string("kilnc ") + KILN_COMPILER_VERSION + " (LLVM " + LLVM_VERSION_STRING + ")";
#endif
}

void CompileKernelSource(const std::string& source, const std::string& filename,
                         const CompileOptions& options, CompileResult* result) {
  using namespace compiler;
  *result = CompileResult();
  FrontendInput input;
  input.source = &source;
  input.filename = filename.empty() ? std::string("<source>.rs") : filename;
  input.options = &options;

  ScriptInfo info;
  if (!AnalyzeScript(input, &info, &result->diagnostics)) return;
  result->entry_point_source = GenerateEntryPoints(info);

  input.precision = info.module.precision;
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module =
      GenerateIr(input, result->entry_point_source, &context, &result->diagnostics);
  if (!module) {
    result->diagnostics += "kilnc: internal error: the generated entry points did not compile\n";
    return;
  }
  if (!Verify(*module, "code generation", &result->diagnostics)) return;
  if (!FillDefaultValues(*module, &info.module, &result->diagnostics)) return;
  if (!FillPointerGlobals(*module, info, &info.module, &result->diagnostics)) return;
  if (!LinkMathLibrary(module.get(), &result->diagnostics)) return;
  if (!Verify(*module, "linking the math library", &result->diagnostics)) return;
  Finalize(module.get(), info);
  if (!Verify(*module, "finalizing linkage", &result->diagnostics)) return;
  Optimize(module.get(), std::clamp(options.opt_level, 0, 3));
  if (!Verify(*module, "optimization", &result->diagnostics)) return;
  if (!CollectImports(*module, &info.module.imports, &result->diagnostics)) return;

  KernelModuleDesc& desc = info.module;
  desc.compiler_version = CompilerVersion();
  const size_t slash = input.filename.find_last_of('/');
  desc.source_name = slash == std::string::npos ? input.filename : input.filename.substr(slash + 1);
  const std::array<uint8_t, 32> digest = llvm::SHA256::hash(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(source.data()), source.size()));
  desc.source_checksum.assign(digest.begin(), digest.end());
  PayloadDesc payload;
  payload.target = kPayloadTargetLlvmBitcode;
  {
    llvm::SmallVector<char, 0> buffer;
    llvm::raw_svector_ostream os(buffer);
    llvm::WriteBitcodeToFile(*module, os);
    payload.data.assign(buffer.begin(), buffer.end());
  }
  desc.payloads.push_back(std::move(payload));
#if defined(KILN_HAVE_GPU_LOWERING)
  if (options.lower_gpu && info.gpu.done) {
    PayloadDesc spirv;
    spirv.target = KILN_SPIRV_PAYLOAD_TAG;
    spirv.data = BuildSpirvPayload(&info);
    desc.payloads.push_back(std::move(spirv));
    for (size_t i = 0; i < desc.kernels.size(); ++i) {
      const GpuKernelLowering& gpu = info.gpu.kernels[i];
      result->kernel_glsl.push_back(gpu.glsl);
      if (!gpu.cpu_only_reason.empty()) {
        desc.kernels[i].cpu_only_reasons.push_back(std::string(KILN_SPIRV_PAYLOAD_TAG) + ": " +
                                                   gpu.cpu_only_reason);
      }
    }
    for (size_t i = 0; i < desc.reductions.size(); ++i) {
      const GpuReductionLowering& gpu = info.gpu.reductions[i];
      result->reduction_glsl.push_back(gpu.glsl);
      if (!gpu.cpu_only_reason.empty()) {
        desc.reductions[i].cpu_only_reasons.push_back(std::string(KILN_SPIRV_PAYLOAD_TAG) + ": " +
                                                      gpu.cpu_only_reason);
      }
    }
    result->gpu_notes = info.gpu.notes;
  }
#endif
  if (options.keep_ir_text) {
    llvm::raw_string_ostream os(result->llvm_ir);
    module->print(os, nullptr);
  }
  std::string error;
  if (!WriteKernelModule(desc, &result->kmod, &error)) {
    result->diagnostics += "kilnc: internal error: " + error + "\n";
    return;
  }
  result->module = std::move(desc);
  result->ok = true;
}

}  // namespace kiln
