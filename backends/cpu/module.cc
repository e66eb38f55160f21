// Modules: module_load reads the module's reflection, compiles its "llvm-bc" payload for the host (or takes
// the object from the cache), and decides kernel by kernel what can run here, and why not. Compiling is slow,
// so it happens once per module; each script links its own copy of the object (script.cc).
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backends/cpu/driver_internal.h"
#include "backends/cpu/jit.h"
#include "backends/cpu/object_cache.h"
#include "kiln/hal.h"
#include "kiln/kernel_abi.h"

namespace kiln {
namespace cpu {
namespace {

// ---- Modules ----------------------------------------------------------------------------------------------

std::string OrDefault(const char* symbol, const std::string& fallback) {
  return symbol && *symbol ? std::string(symbol) : fallback;
}

bool ReadSizes(const uint32_t* sizes, uint32_t count, std::vector<uint32_t>* out) {
  if (count > 0 && !sizes) return false;
  out->assign(sizes, sizes + count);
  return true;
}

// Copies the runtime's description into the module, checking what can be checked without code.
KilnStatus ReadModuleDesc(Instance* instance, const KilnHalModuleDesc& desc, Module* module) {
  const std::string& what = module->name;
  for (uint32_t i = 0; i < desc.num_kernels; ++i) {
    KilnHalKernelDesc k;
    if (!ReadElement(desc.kernels, i, &k) || !k.name) {
      return instance->Fail(kKilnInvalidModel,
                            what + ": kernel " + std::to_string(i) + " has no description or name");
    }
    KernelInfo info;
    info.name = k.name;
    info.symbol = OrDefault(k.expand_symbol, "__kiln_expand_" + info.name);
    info.signature = k.signature;
    info.level = k.kernel_level;
    info.output_size = k.output_element_size;
    if (k.num_inputs > KILN_KERNEL_MAX_INPUTS ||
        !ReadSizes(k.input_element_sizes, k.num_inputs, &info.input_sizes)) {
      return instance->Fail(kKilnInvalidModel, what + ", kernel " + info.name + ": " +
                                                   std::to_string(k.num_inputs) + " inputs (at most " +
                                                   std::to_string(KILN_KERNEL_MAX_INPUTS) +
                                                   ", each with an element size)");
    }
    if ((k.signature & KILN_HAL_SIG_OUT) && k.output_element_size == 0) {
      return instance->Fail(kKilnInvalidModel,
                            what + ", kernel " + info.name + ": returns a value of size 0");
    }
    module->kernels.push_back(std::move(info));
  }
  for (uint32_t i = 0; i < desc.num_globals; ++i) {
    KilnHalGlobalDesc g;
    if (!ReadElement(desc.globals, i, &g) || !g.name) {
      return instance->Fail(kKilnInvalidModel,
                            what + ": global " + std::to_string(i) + " has no description or name");
    }
    module->globals.push_back(GlobalInfo{g.name, g.flags, g.size, -1});
  }
  for (uint32_t i = 0; i < desc.num_invokables; ++i) {
    KilnHalInvokableDesc v;
    if (!ReadElement(desc.invokables, i, &v) || !v.name) {
      return instance->Fail(kKilnInvalidModel,
                            what + ": invokable " + std::to_string(i) + " has no description or name");
    }
    module->invokables.push_back(
        InvokableInfo{v.name, OrDefault(v.symbol, std::string("__kiln_invoke_") + v.name), v.args_size, -1});
  }
  for (uint32_t i = 0; i < desc.num_reductions; ++i) {
    KilnHalReductionDesc r;
    if (!ReadElement(desc.reductions, i, &r) || !r.name) {
      return instance->Fail(kKilnInvalidModel,
                            what + ": reduction " + std::to_string(i) + " has no description or name");
    }
    ReductionInfo info;
    info.name = r.name;
    const std::string prefix = "__kiln_reduce_" + info.name;
    info.symbols[0] = OrDefault(r.init_symbol, prefix + "_init");
    info.symbols[1] = OrDefault(r.accum_symbol, prefix + "_accum");
    info.symbols[2] = OrDefault(r.combine_symbol, prefix + "_combine");
    info.symbols[3] = OrDefault(r.out_symbol, prefix + "_out");
    info.level = r.kernel_level;
    info.accumulator_size = r.accumulator_size;
    info.accumulator_alignment = r.accumulator_alignment ? r.accumulator_alignment : 1;
    info.result_size = r.result_size;
    if (r.num_inputs > KILN_KERNEL_MAX_INPUTS ||
        !ReadSizes(r.input_element_sizes, r.num_inputs, &info.input_sizes)) {
      return instance->Fail(kKilnInvalidModel, what + ", reduction " + info.name + ": bad input list");
    }
    if ((info.accumulator_alignment & (info.accumulator_alignment - 1)) ||
        info.accumulator_alignment > 4096 || info.accumulator_size > (1u << 20)) {
      return instance->Fail(kKilnInvalidModel,
                            what + ", reduction " + info.name + ": accumulator of " +
                                std::to_string(info.accumulator_size) + " bytes aligned to " +
                                std::to_string(info.accumulator_alignment) +
                                " (alignment must be a power of two <= 4096, size <= 1 MiB)");
    }
    module->reductions.push_back(std::move(info));
  }
  return kKilnOk;
}

// Decides what can run, and what each script must resolve, from the symbols the object defines.
void ResolveSupport(const std::vector<std::string>& defined_list, uint32_t flags, Module* module) {
  std::unordered_map<std::string, int> defined;
  for (const std::string& name : defined_list) defined.emplace(name, -1);
  auto link = [&](const std::string& name) -> int {
    auto it = defined.find(name);
    if (it == defined.end()) return -1;
    if (it->second < 0) {
      it->second = static_cast<int>(module->link_names.size());
      module->link_names.push_back(name);
    }
    return it->second;
  };
  uint32_t supported = 0;
  for (KernelInfo& kernel : module->kernels) {
    if (kernel.level > kDriverLevel) {
      kernel.reason = "needs kernel HAL level " + LevelString(kernel.level) + ", this driver runs up to " +
                      LevelString(kDriverLevel);
    } else if ((kernel.link_index = link(kernel.symbol)) < 0) {
      kernel.reason = "the llvm-bc payload does not define " + kernel.symbol;
    } else {
      kernel.supported = true;
      ++supported;
    }
  }
  for (ReductionInfo& reduction : module->reductions) {
    if (reduction.level > kDriverLevel) {
      reduction.reason = "needs kernel HAL level " + LevelString(reduction.level) +
                         ", this driver runs up to " + LevelString(kDriverLevel);
      continue;
    }
    reduction.supported = true;
    for (int i = 0; i < 4; ++i) {
      if ((reduction.link_index[i] = link(reduction.symbols[i])) < 0) {
        reduction.supported = false;
        reduction.reason = "the llvm-bc payload does not define " + reduction.symbols[i];
      }
    }
  }
  for (InvokableInfo& invokable : module->invokables) invokable.link_index = link(invokable.symbol);
  for (GlobalInfo& global : module->globals) global.link_index = link(global.name);
  if (flags & KILN_HAL_MODULE_HAS_INIT) module->init_link_index = link("__kiln_invoke_init");
  module->info.num_kernels_supported = supported;
}

}  // namespace

KilnStatus ModuleLoad(KilnHalDevice* handle, const KilnHalModuleDesc* in_desc, KilnHalModule** out_module) {
  Device* device = AsDevice(handle);
  KILN_CPU_REQUIRE(device);
  Instance* instance = device->instance;
  const uint64_t start = instance->NowNs();
  KilnHalModuleDesc desc;
  if (!ReadStruct(in_desc, &desc) || !out_module) {
    return instance->Fail(kKilnInvalidArgument,
                          "module_load: desc or out_module is NULL, or desc is too small");
  }
  auto module = std::make_unique<Module>();
  module->device = device;
  module->name = desc.name ? desc.name : "(unnamed module)";
  if (desc.abi_version != KILN_KERNEL_ABI_VERSION) {
    return instance->Fail(kKilnUnsupported,
                          module->name + ": generated for kernel ABI " + std::to_string(desc.abi_version) +
                              ", this driver implements " + std::to_string(KILN_KERNEL_ABI_VERSION));
  }
  const KilnHalPayload* bitcode = nullptr;
  std::string tags;
  for (uint32_t i = 0; i < desc.num_payloads; ++i) {
    KilnHalPayload payload;
    if (!ReadElement(desc.payloads, i, &payload) || !payload.tag || (!payload.data && payload.size)) {
      return instance->Fail(kKilnInvalidModel,
                            module->name + ": payload " + std::to_string(i) + " is malformed");
    }
    tags += (tags.empty() ? "" : ", ") + std::string(payload.tag);
    if (!bitcode && strcmp(payload.tag, "llvm-bc") == 0) {
      bitcode =
          reinterpret_cast<const KilnHalPayload*>(reinterpret_cast<const char*>(desc.payloads) +
                                                  static_cast<size_t>(i) * desc.payloads[0].struct_size);
    }
  }
  if (!bitcode) {
    return instance->Fail(kKilnUnsupported, module->name + ": no \"llvm-bc\" payload for the CPU (it has: " +
                                                (tags.empty() ? std::string("none") : tags) + ")");
  }
  for (uint32_t i = 0; i < desc.num_imports; ++i) {
    const char* import = desc.imports ? desc.imports[i] : nullptr;
    if (!import)
      return instance->Fail(kKilnInvalidModel, module->name + ": import " + std::to_string(i) + " is NULL");
    if (strncmp(import, "__kiln_rt_", 10) != 0) continue;
    bool known = false;
    for (const RuntimeSymbol& symbol : RuntimeSymbols()) known = known || strcmp(symbol.name, import) == 0;
    if (!known) {
      return instance->Fail(kKilnUnsupported, module->name + ": imports runtime service " + import +
                                                  ", which this driver (kernel HAL level " +
                                                  LevelString(kDriverLevel) + ") does not provide");
    }
  }
  if (KilnStatus status = ReadModuleDesc(instance, desc, module.get()); status != kKilnOk) return status;

  const std::string options = desc.compile_options ? desc.compile_options : "";
  CacheKeyInputs key_inputs;
  key_inputs.bitcode = bitcode->data;
  key_inputs.bitcode_size = static_cast<size_t>(bitcode->size);
  key_inputs.compile_options = options;
  key_inputs.target_triple = instance->target.triple;
  key_inputs.target_cpu = instance->target.cpu;
  key_inputs.target_features = instance->target.features;
  key_inputs.kernel_abi_version = KILN_KERNEL_ABI_VERSION;
  key_inputs.kernel_level = kDriverLevel;
  key_inputs.llvm_version = LlvmVersionString();
  key_inputs.driver_version = std::string(KILN_CPU_DRIVER_VERSION) + "/" + DriverCodeIdentity();
  const std::string key = ComputeCacheKey(key_inputs);
  ObjectCache cache(instance->cache_dir);

  std::vector<std::string> defined;
  std::string problem;
  KilnHalCacheResult cache_result = kKilnHalCacheNone;
  if (cache.enabled()) {
    switch (cache.Load(key, &module->object, &problem)) {
      case ObjectCache::LoadResult::kHit:
        if (ListDefinedSymbols(module->object, &defined, &problem) == kKilnOk) {
          cache_result = kKilnHalCacheHit;
        } else {
          defined.clear();
          cache_result = kKilnHalCacheRebuilt;
        }
        break;
      case ObjectCache::LoadResult::kCorrupt:
        cache_result = kKilnHalCacheRebuilt;
        break;
      case ObjectCache::LoadResult::kMiss:
        cache_result = kKilnHalCacheMiss;
        break;
    }
    if (cache_result == kKilnHalCacheRebuilt) {
      instance->Log(kKilnHalLogWarning,
                    module->name + ": discarding the cached object: " + problem + "; recompiling");
    }
  }
  if (cache_result != kKilnHalCacheHit) {
    const uint64_t compile_start = instance->NowNs();
    std::string error;
    module->object.clear();
    KilnStatus status = CompileBitcode(bitcode->data, static_cast<size_t>(bitcode->size), module->name,
                                       instance->target, options, &module->object, &error);
    if (status != kKilnOk) return instance->Fail(status, error);
    if ((status = ListDefinedSymbols(module->object, &defined, &error)) != kKilnOk) {
      return instance->Fail(status, module->name + ": " + error);
    }
    module->info.compile_ns = instance->NowNs() - compile_start;
    if (cache.enabled() && !cache.Store(key, module->object, &problem)) {
      instance->Log(kKilnHalLogWarning, module->name + ": cannot cache the compiled object: " + problem);
    }
  }
  ResolveSupport(defined, desc.flags, module.get());
  module->info.struct_size = sizeof(module->info);
  module->info.cache_result = cache_result;
  module->info.load_ns = instance->NowNs() - start;
  ++device->live_objects;
  *out_module = reinterpret_cast<KilnHalModule*>(module.release());
  return kKilnOk;
}

KilnStatus ModuleUnload(KilnHalModule* handle) {
  Module* module = AsModule(handle);
  KILN_CPU_REQUIRE(module);
  if (int live = module->live_scripts.load(); live > 0) {
    return module->device->instance->Fail(
        kKilnInvalidArgument,
        module->name + ": module_unload with " + std::to_string(live) + " script(s) alive");
  }
  --module->device->live_objects;
  delete module;
  return kKilnOk;
}

KilnStatus ModuleGetInfo(KilnHalModule* handle, KilnHalModuleInfo* out_info) {
  Module* module = AsModule(handle);
  KILN_CPU_REQUIRE(module && out_info);
  if (!WriteStruct(module->info, out_info)) {
    return module->device->instance->Fail(kKilnInvalidArgument,
                                          "module_get_info: out_info has no struct_size");
  }
  return kKilnOk;
}

KilnStatus ModuleKernelSupported(KilnHalModule* handle, uint32_t kernel_index, bool* out_supported,
                                 const char** out_reason) {
  Module* module = AsModule(handle);
  KILN_CPU_REQUIRE(module && out_supported);
  if (kernel_index >= module->kernels.size()) {
    return module->device->instance->Fail(
        kKilnInvalidArgument,
        module->name + ": kernel index " + std::to_string(kernel_index) + " out of range");
  }
  const KernelInfo& kernel = module->kernels[kernel_index];
  *out_supported = kernel.supported;
  if (out_reason) *out_reason = kernel.supported ? nullptr : kernel.reason.c_str();
  return kKilnOk;
}

}  // namespace cpu
}  // namespace kiln
