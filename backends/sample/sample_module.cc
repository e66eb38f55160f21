// Modules and scripts of the sample driver. module_load takes the payload this device consumes ("llvm-bc")
// and compiles it once; script_create links one image of it per script, so that every script owns its
// globals. To make it yours: pick your payload's tag in ModuleLoad and call your compiler there instead of
// CompileBitcode (sample_jit.h); keep the checks around it, which every driver needs and kiln-cts tests.
#include <string.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kiln/hal.h"
#include "kiln/hal_util.h"
#include "kiln/kernel_abi.h"
#include "sample_driver.h"
#include "sample_jit.h"

namespace kiln_sample {
namespace {

std::string LevelString(uint32_t level) {
  return std::to_string(KILN_HAL_LEVEL_MAJOR(level)) + "." + std::to_string(KILN_HAL_LEVEL_MINOR(level));
}

// ---- Modules ----------------------------------------------------------------------------------------------

std::string SymbolOr(const char* symbol, const std::string& fallback) {
  return symbol && *symbol ? std::string(symbol) : fallback;
}

bool ReadSizes(const uint32_t* sizes, uint32_t count, std::vector<uint32_t>* out) {
  if (count > KILN_KERNEL_MAX_INPUTS || (count > 0 && !sizes)) return false;
  out->assign(sizes, sizes + count);
  return true;
}

// Copies what the driver keeps out of the runtime's description (which is only borrowed).
KilnStatus ReadModuleDesc(Instance* instance, const KilnHalModuleDesc& desc, Module* module) {
  const std::string& what = module->name;
  for (uint32_t i = 0; i < desc.num_kernels; ++i) {
    KilnHalKernelDesc k;
    Kernel kernel;
    if (!KILN_HAL_READ_ELEMENT(desc.kernels, i, &k) || !k.name ||
        !ReadSizes(k.input_element_sizes, k.num_inputs, &kernel.input_sizes)) {
      return instance->Fail(kKilnInvalidModel, what + ": kernel " + std::to_string(i) + " is malformed");
    }
    kernel.name = k.name;
    kernel.symbol = SymbolOr(k.expand_symbol, "__kiln_expand_" + kernel.name);
    kernel.signature = k.signature;
    kernel.level = k.kernel_level;
    kernel.output_size = (k.signature & KILN_HAL_SIG_OUT) ? k.output_element_size : 0;
    if ((k.signature & KILN_HAL_SIG_OUT) && kernel.output_size == 0) {
      return instance->Fail(kKilnInvalidModel,
                            what + ", kernel " + kernel.name + ": returns a value of size 0");
    }
    module->kernels.push_back(std::move(kernel));
  }
  for (uint32_t i = 0; i < desc.num_reductions; ++i) {
    KilnHalReductionDesc r;
    Reduction reduction;
    if (!KILN_HAL_READ_ELEMENT(desc.reductions, i, &r) || !r.name ||
        !ReadSizes(r.input_element_sizes, r.num_inputs, &reduction.input_sizes)) {
      return instance->Fail(kKilnInvalidModel, what + ": reduction " + std::to_string(i) + " is malformed");
    }
    reduction.name = r.name;
    const std::string prefix = "__kiln_reduce_" + reduction.name;
    reduction.symbols[0] = SymbolOr(r.init_symbol, prefix + "_init");
    reduction.symbols[1] = SymbolOr(r.accum_symbol, prefix + "_accum");
    reduction.symbols[2] = SymbolOr(r.combine_symbol, prefix + "_combine");
    reduction.symbols[3] = SymbolOr(r.out_symbol, prefix + "_out");
    reduction.level = r.kernel_level;
    reduction.accumulator_size = r.accumulator_size;
    reduction.accumulator_alignment = r.accumulator_alignment ? r.accumulator_alignment : 1;
    reduction.result_size = r.result_size;
    if ((reduction.accumulator_alignment & (reduction.accumulator_alignment - 1)) ||
        reduction.accumulator_alignment > 4096 || reduction.accumulator_size > (1u << 20)) {
      return instance->Fail(kKilnInvalidModel, what + ", reduction " + reduction.name + ": accumulator of " +
                                                   std::to_string(reduction.accumulator_size) +
                                                   " bytes aligned to " +
                                                   std::to_string(reduction.accumulator_alignment));
    }
    module->reductions.push_back(std::move(reduction));
  }
  for (uint32_t i = 0; i < desc.num_invokables; ++i) {
    KilnHalInvokableDesc v;
    if (!KILN_HAL_READ_ELEMENT(desc.invokables, i, &v) || !v.name) {
      return instance->Fail(kKilnInvalidModel, what + ": invokable " + std::to_string(i) + " is malformed");
    }
    module->invokables.push_back(Invokable{v.name, SymbolOr(v.symbol, std::string("__kiln_invoke_") + v.name),
                                           v.args_size, v.kernel_level});
  }
  for (uint32_t i = 0; i < desc.num_globals; ++i) {
    KilnHalGlobalDesc g;
    if (!KILN_HAL_READ_ELEMENT(desc.globals, i, &g) || !g.name) {
      return instance->Fail(kKilnInvalidModel, what + ": global " + std::to_string(i) + " is malformed");
    }
    module->globals.push_back(Global{g.name, g.flags, g.size});
  }
  return kKilnOk;
}

// Per kernel (and reduction): can this device run it? A kernel that needs a newer kernel HAL level, or whose
// code is missing, is reported with the reason, and the rest of the module still loads.
void DecideSupport(Module* module) {
  uint32_t supported = 0;
  for (Kernel& kernel : module->kernels) {
    if (kernel.level > kDriverLevel) {
      kernel.unsupported_reason = "needs kernel HAL level " + LevelString(kernel.level) +
                                  ", the sample driver runs up to " + LevelString(kDriverLevel);
    } else if (!module->Defines(kernel.symbol)) {
      kernel.unsupported_reason = "the llvm-bc payload does not define " + kernel.symbol;
    } else {
      ++supported;
    }
  }
  for (Reduction& reduction : module->reductions) {
    if (reduction.level > kDriverLevel) {
      reduction.unsupported_reason = "needs kernel HAL level " + LevelString(reduction.level) +
                                     ", the sample driver runs up to " + LevelString(kDriverLevel);
    }
    for (const std::string& symbol : reduction.symbols) {
      if (reduction.unsupported_reason.empty() && !module->Defines(symbol)) {
        reduction.unsupported_reason = "the llvm-bc payload does not define " + symbol;
      }
    }
  }
  module->info.num_kernels_supported = supported;
}

}  // namespace

KilnStatus ModuleLoad(KilnHalDevice* handle, const KilnHalModuleDesc* in_desc, KilnHalModule** out_module) {
  Device* device = AsDevice(handle);
  SAMPLE_REQUIRE(device);
  Instance* instance = device->instance;
  const uint64_t start = instance->NowNs();
  KilnHalModuleDesc desc;
  if (!KILN_HAL_READ_STRUCT(in_desc, &desc) || !out_module) {
    return instance->Fail(kKilnInvalidArgument,
                          "module_load: desc or out_module is NULL, or desc is too small");
  }
  auto module = std::make_unique<Module>();
  module->device = device;
  module->name = desc.name ? desc.name : "(unnamed module)";
  module->has_init = desc.flags & KILN_HAL_MODULE_HAS_INIT;
  if (desc.abi_version != KILN_KERNEL_ABI_VERSION) {
    return instance->Fail(kKilnUnsupported,
                          module->name + ": generated for kernel ABI " + std::to_string(desc.abi_version) +
                              ", the sample driver implements " + std::to_string(KILN_KERNEL_ABI_VERSION));
  }
  // The first payload this device consumes.
  KilnHalPayload bitcode{};
  std::string tags;
  for (uint32_t i = 0; i < desc.num_payloads; ++i) {
    KilnHalPayload payload;
    if (!KILN_HAL_READ_ELEMENT(desc.payloads, i, &payload) || !payload.tag ||
        (!payload.data && payload.size)) {
      return instance->Fail(kKilnInvalidModel,
                            module->name + ": payload " + std::to_string(i) + " is malformed");
    }
    tags += (tags.empty() ? "" : ", ") + std::string(payload.tag);
    if (!bitcode.data && strcmp(payload.tag, "llvm-bc") == 0) bitcode = payload;
  }
  if (!bitcode.data) {
    return instance->Fail(kKilnUnsupported, module->name + ": no \"llvm-bc\" payload (it has: " +
                                                (tags.empty() ? std::string("none") : tags) + ")");
  }
  // Runtime services the code imports must all be here: refuse early, naming the missing one.
  const auto runtime = RuntimeSymbols();
  for (uint32_t i = 0; i < desc.num_imports; ++i) {
    const char* import = desc.imports ? desc.imports[i] : nullptr;
    if (!import)
      return instance->Fail(kKilnInvalidModel, module->name + ": import " + std::to_string(i) + " is NULL");
    if (strncmp(import, "__kiln_rt_", 10) != 0) continue;
    bool known = false;
    for (const auto& symbol : runtime) known = known || symbol.first == import;
    if (!known) {
      return instance->Fail(kKilnUnsupported, module->name + ": imports runtime service " + import +
                                                  ", which the sample driver does not provide");
    }
  }
  if (KilnStatus status = ReadModuleDesc(instance, desc, module.get()); status != kKilnOk) return status;

  std::string error;
  const uint64_t compile_start = instance->NowNs();
  if (!CompileBitcode(bitcode.data, static_cast<size_t>(bitcode.size), module->name, &module->object,
                      &module->defined_symbols, &error)) {
    return instance->Fail(kKilnInvalidModel, error);
  }
  DecideSupport(module.get());
  module->info.struct_size = sizeof(module->info);
  module->info.cache_result = kKilnHalCacheNone;
  module->info.compile_ns = instance->NowNs() - compile_start;
  module->info.load_ns = instance->NowNs() - start;
  ++device->live_objects;
  *out_module = reinterpret_cast<KilnHalModule*>(module.release());
  return kKilnOk;
}

KilnStatus ModuleUnload(KilnHalModule* handle) {
  Module* module = AsModule(handle);
  SAMPLE_REQUIRE(module);
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
  SAMPLE_REQUIRE(module);
  if (!KILN_HAL_WRITE_STRUCT(module->info, out_info)) {
    return module->device->instance->Fail(kKilnInvalidArgument,
                                          "module_get_info: out_info is NULL or has no struct_size");
  }
  return kKilnOk;
}

KilnStatus ModuleKernelSupported(KilnHalModule* handle, uint32_t kernel_index, bool* out_supported,
                                 const char** out_reason) {
  Module* module = AsModule(handle);
  SAMPLE_REQUIRE(module);
  if (!out_supported) {
    return module->device->instance->Fail(kKilnInvalidArgument,
                                          "module_kernel_supported: out_supported is NULL");
  }
  char problem[KILN_HAL_PROBLEM_SIZE];
  if (!kiln_hal_check_index("kernel", kernel_index, module->kernels.size(), problem, sizeof(problem))) {
    return module->device->instance->Fail(kKilnInvalidArgument, module->name + ": " + problem);
  }
  const Kernel& kernel = module->kernels[kernel_index];
  *out_supported = kernel.unsupported_reason.empty();
  if (out_reason) *out_reason = *out_supported ? nullptr : kernel.unsupported_reason.c_str();
  return kKilnOk;
}

// ---- Scripts ----------------------------------------------------------------------------------------------

namespace {

// Runs an invokable's code with the script current; a runtime service's complaint fails it.
KilnStatus RunInvokable(Script* script, void* fn, const void* args, const std::string& name) {
  RunScope scope(script);
  CallInvoke(fn, args);
  if (scope.failure().empty()) return kKilnOk;
  return script->instance()->Fail(
      kKilnError, "script " + script->module->name + ", invokable " + name + ": " + scope.failure());
}

}  // namespace

KilnStatus ScriptDestroy(KilnHalScript* handle) {
  Script* script = AsScript(handle);
  SAMPLE_REQUIRE(script);
  Instance* instance = script->instance();
  instance->linker->Unlink(script->image);
  for (auto& created : script->created) instance->Free(created.second);
  --script->module->live_scripts;
  delete script;
  return kKilnOk;
}

KilnStatus ScriptCreate(KilnHalModule* handle, void* script_user_data, KilnHalScript** out_script) {
  Module* module = AsModule(handle);
  SAMPLE_REQUIRE(module);
  Instance* instance = module->device->instance;
  if (!out_script) return instance->Fail(kKilnInvalidArgument, "script_create: out_script is NULL");
  auto script = std::make_unique<Script>();
  script->module = module;
  script->user_data = script_user_data;
  std::string error;
  std::lock_guard<std::mutex> lock(module->device->run_mutex);
  script->image = instance->linker->Link(module->object, RuntimeSymbols(), &error);
  // The first lookup links the image: an unresolved reference shows up now rather than at the first launch.
  if (script->image && !module->defined_symbols.empty() &&
      !instance->linker->Lookup(script->image, module->defined_symbols[0], &error)) {
    instance->linker->Unlink(script->image);
    script->image = nullptr;
  }
  if (!script->image) return instance->Fail(kKilnInvalidModel, module->name + ": " + error);
  ++module->live_scripts;
  Script* raw = script.release();
  if (module->has_init) {
    void* init = LookupOrNull(raw, "__kiln_invoke_init");
    KilnStatus status =
        init ? RunInvokable(raw, init, nullptr, "init")
             : instance->Fail(kKilnInvalidModel, module->name +
                                                     ": the module has init() but the payload does not "
                                                     "define __kiln_invoke_init");
    if (status != kKilnOk) {
      ScriptDestroy(reinterpret_cast<KilnHalScript*>(raw));
      return status;
    }
  }
  *out_script = reinterpret_cast<KilnHalScript*>(raw);
  return kKilnOk;
}

namespace {

// The global `name` of `size` bytes, and its address in this script's image.
KilnStatus FindGlobal(Script* script, const char* name, uint64_t size, const char* what,
                      const Global** out_global, void** out_address) {
  Instance* instance = script->instance();
  const std::string& module = script->module->name;
  if (!name) return instance->Fail(kKilnInvalidArgument, std::string(what) + ": name is NULL");
  for (const Global& global : script->module->globals) {
    if (global.name != name) continue;
    if (size != global.size) {
      return instance->Fail(kKilnInvalidArgument, "script " + module + ": global " + global.name + " is " +
                                                      std::to_string(global.size) + " bytes, " + what +
                                                      " gave " + std::to_string(size));
    }
    *out_address = LookupOrNull(script, global.name);
    if (!*out_address) {
      return instance->Fail(kKilnInvalidModel, "script " + module + ": global " + global.name +
                                                   " is reflected but not in the code");
    }
    *out_global = &global;
    return kKilnOk;
  }
  return instance->Fail(kKilnInvalidArgument, "script " + module + " has no global named " + name);
}

}  // namespace

KilnStatus ScriptSetGlobal(KilnHalScript* handle, const char* name, const void* data, uint64_t size) {
  Script* script = AsScript(handle);
  SAMPLE_REQUIRE(script);
  const Global* global = nullptr;
  void* address = nullptr;
  if (KilnStatus status = FindGlobal(script, name, size, "script_set_global", &global, &address);
      status != kKilnOk) {
    return status;
  }
  const std::string what = "script " + script->module->name + ": global " + global->name;
  if (global->flags & KILN_HAL_GLOBAL_CONST)
    return script->instance()->Fail(kKilnInvalidArgument, what + " is const");
  if (global->flags & (KILN_HAL_GLOBAL_ALLOCATION | KILN_HAL_GLOBAL_POINTER)) {
    return script->instance()->Fail(kKilnInvalidArgument, what + " is bound with script_bind_allocation");
  }
  if (!data && size) return script->instance()->Fail(kKilnInvalidArgument, "script_set_global: data is NULL");
  std::lock_guard<std::mutex> lock(script->module->device->run_mutex);
  if (size) memcpy(address, data, static_cast<size_t>(size));
  return kKilnOk;
}

KilnStatus ScriptGetGlobal(KilnHalScript* handle, const char* name, uint64_t size, void* out_data) {
  Script* script = AsScript(handle);
  SAMPLE_REQUIRE(script);
  const Global* global = nullptr;
  void* address = nullptr;
  if (KilnStatus status = FindGlobal(script, name, size, "script_get_global", &global, &address);
      status != kKilnOk) {
    return status;
  }
  if (!out_data && size)
    return script->instance()->Fail(kKilnInvalidArgument, "script_get_global: out_data is NULL");
  std::lock_guard<std::mutex> lock(script->module->device->run_mutex);
  if (size) memcpy(out_data, address, static_cast<size_t>(size));
  return kKilnOk;
}

// Whether every cell of a view lies in its buffer and (for an output) no two cells overlap.
KilnStatus CheckView(Instance* instance, const KilnHalBufferView& view, uint32_t element_size,
                     const uint32_t dims[3], bool is_output, const std::string& what) {
  char problem[KILN_HAL_PROBLEM_SIZE];
  const uint64_t buffer_size = view.buffer ? AsBuffer(view.buffer)->size : 0;
  if (kiln_hal_check_view(&view, buffer_size, element_size, dims, is_output ? KILN_HAL_VIEW_OUTPUT : 0u,
                          problem, sizeof(problem))) {
    return kKilnOk;
  }
  return instance->Fail(kKilnInvalidArgument, what + ": " + problem);
}

KilnStatus ScriptBindAllocation(KilnHalScript* handle, const char* name, const KilnHalBufferView* in_view,
                                uint32_t element_type, uint32_t vector_size, uint32_t dim_x, uint32_t dim_y,
                                uint32_t dim_z) {
  Script* script = AsScript(handle);
  SAMPLE_REQUIRE(script);
  Instance* instance = script->instance();
  const Global* global = nullptr;
  void* address = nullptr;
  if (KilnStatus status =
          FindGlobal(script, name, sizeof(void*), "script_bind_allocation", &global, &address);
      status != kKilnOk) {
    return status;
  }
  const std::string what = "script " + script->module->name + ", global " + global->name;
  if (!(global->flags & (KILN_HAL_GLOBAL_ALLOCATION | KILN_HAL_GLOBAL_POINTER))) {
    return instance->Fail(kKilnInvalidArgument, what + ": not an allocation or pointer global");
  }
  void** slot = static_cast<void**>(address);
  std::lock_guard<std::mutex> lock(script->module->device->run_mutex);
  if (!in_view) {
    *slot = nullptr;
    return kKilnOk;
  }
  KilnHalBufferView view;
  if (!KILN_HAL_READ_STRUCT(in_view, &view))
    return instance->Fail(kKilnInvalidArgument, what + ": view struct_size too small");
  if (dim_x == 0) return instance->Fail(kKilnInvalidArgument, what + ": dim_x must be at least 1");
  const uint32_t dims[3] = {dim_x, std::max(dim_y, 1u), std::max(dim_z, 1u)};
  if (KilnStatus status = CheckView(instance, view, view.element_size, dims, false, what); status != kKilnOk)
    return status;
  if (view.stride_x != view.element_size) {
    return instance->Fail(kKilnInvalidArgument, what + ": an allocation must be packed along x");
  }
  uint8_t* data = AsBuffer(view.buffer)->data + view.offset;
  if (global->flags & KILN_HAL_GLOBAL_POINTER) {
    *slot = data;
    return kKilnOk;
  }
  script->bound.push_back(std::make_unique<KilnKernelAllocation>(
      KilnKernelAllocation{sizeof(KilnKernelAllocation), view.element_size, element_type, vector_size, dim_x,
                           dim_y, dim_z, 0, view.stride_y, view.stride_z, data}));
  *slot = script->bound.back().get();
  return kKilnOk;
}

KilnStatus ScriptInvoke(KilnHalScript* handle, uint32_t invokable_index, const void* args,
                        uint64_t args_size) {
  Script* script = AsScript(handle);
  SAMPLE_REQUIRE(script);
  Instance* instance = script->instance();
  Module* module = script->module;
  char problem[KILN_HAL_PROBLEM_SIZE];
  if (!kiln_hal_check_index("invokable", invokable_index, module->invokables.size(), problem,
                            sizeof(problem))) {
    return instance->Fail(kKilnInvalidArgument, "script " + module->name + ": " + problem);
  }
  const Invokable& invokable = module->invokables[invokable_index];
  if (args_size != invokable.args_size || (args_size && !args)) {
    return instance->Fail(kKilnInvalidArgument, "script " + module->name + ", invokable " + invokable.name +
                                                    ": takes " + std::to_string(invokable.args_size) +
                                                    " bytes of arguments, got " + std::to_string(args_size) +
                                                    (args || !args_size ? "" : " at NULL"));
  }
  if (invokable.level > kDriverLevel) {
    return instance->Fail(kKilnUnsupported, "script " + module->name + ", invokable " + invokable.name +
                                                ": needs kernel HAL level " + LevelString(invokable.level));
  }
  void* fn = LookupOrNull(script, invokable.symbol);
  if (!fn) {
    return instance->Fail(kKilnUnsupported,
                          "script " + module->name + ": the payload does not define " + invokable.symbol);
  }
  std::lock_guard<std::mutex> lock(module->device->run_mutex);
  return RunInvokable(script, fn, args, invokable.name);
}

}  // namespace kiln_sample
