// Scripts: a script is one linked image of its module's object, so that every script has globals of its own.
// Here: creating one (and running its init()), setting and reading its globals, binding buffers to its
// allocation and pointer globals, and running invokables on the calling thread.
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/driver_internal.h"
#include "backends/cpu/jit.h"
#include "kiln/hal.h"
#include "kiln/kernel_abi.h"

namespace kiln {
namespace cpu {
namespace {

using InvokeFn = void (*)(const void*);

// Calls into JIT-compiled code (KILN_NO_SANITIZE_FUNCTION: driver_internal.h).
KILN_NO_SANITIZE_FUNCTION void CallInvoke(InvokeFn fn, const void* args) { fn(args); }

// ---- Scripts ----------------------------------------------------------------------------------------------

KilnStatus RunInvoke(Script* script, InvokeFn fn, const void* args, const std::string& name) {
  RunState state;
  {
    CurrentScope scope(script, &state);
    CallInvoke(fn, args);
  }
  if (state.failed) {
    return script->instance()->Fail(
        state.status, "script " + script->module->name + ", invokable " + name + ": " + state.message);
  }
  return kKilnOk;
}

}  // namespace

KilnStatus ScriptCreate(KilnHalModule* handle, void* script_user_data, KilnHalScript** out_script) {
  Module* module = AsModule(handle);
  KILN_CPU_REQUIRE(module);
  Instance* instance = module->device->instance;
  if (!out_script) return instance->Fail(kKilnInvalidArgument, "script_create: out_script is NULL");
  auto script = std::make_unique<Script>();
  script->module = module;
  script->user_data = script_user_data;
  std::vector<std::pair<std::string, void*>> runtime;
  for (const RuntimeSymbol& symbol : RuntimeSymbols()) runtime.emplace_back(symbol.name, symbol.address);
  std::string error;
  KilnStatus status = instance->linker->Link(module->object, runtime, module->link_names, &script->image,
                                             &script->addresses, &error);
  if (status != kKilnOk) return instance->Fail(status, module->name + ": " + error);
  ++module->live_scripts;
  Script* raw = script.release();
  if (module->init_link_index >= 0) {
    status =
        RunInvoke(raw, reinterpret_cast<InvokeFn>(raw->Address(module->init_link_index)), nullptr, "init");
    if (status != kKilnOk) {
      ScriptDestroy(reinterpret_cast<KilnHalScript*>(raw));
      return status;
    }
  }
  *out_script = reinterpret_cast<KilnHalScript*>(raw);
  return kKilnOk;
}

KilnStatus ScriptDestroy(KilnHalScript* handle) {
  Script* script = AsScript(handle);
  KILN_CPU_REQUIRE(script);
  Instance* instance = script->instance();
  instance->linker->Unlink(script->image);
  for (auto& created : script->created_allocations) instance->Free(created.second);
  --script->module->live_scripts;
  delete script;
  return kKilnOk;
}

namespace {

// Finds a global by name and checks `size` against it.
KilnStatus FindGlobal(Script* script, const char* name, uint64_t size, const char* what,
                      const GlobalInfo** out) {
  Instance* instance = script->instance();
  Module* module = script->module;
  if (!name) return instance->Fail(kKilnInvalidArgument, std::string(what) + ": name is NULL");
  for (const GlobalInfo& global : module->globals) {
    if (global.name != name) continue;
    if (global.link_index < 0) {
      return instance->Fail(kKilnInvalidModel, "script " + module->name + ": global " + global.name +
                                                   " is reflected but the compiled code does not define it");
    }
    if (size != global.size) {
      return instance->Fail(kKilnInvalidArgument, "script " + module->name + ": global " + global.name +
                                                      " is " + std::to_string(global.size) + " bytes, " +
                                                      what + " gave " + std::to_string(size));
    }
    *out = &global;
    return kKilnOk;
  }
  return instance->Fail(kKilnInvalidArgument, "script " + module->name + " has no global named " + name);
}

}  // namespace

KilnStatus ScriptSetGlobal(KilnHalScript* handle, const char* name, const void* data, uint64_t size) {
  Script* script = AsScript(handle);
  KILN_CPU_REQUIRE(script);
  const GlobalInfo* global = nullptr;
  if (KilnStatus status = FindGlobal(script, name, size, "script_set_global", &global); status != kKilnOk) {
    return status;
  }
  if (global->flags & KILN_HAL_GLOBAL_CONST) {
    return script->instance()->Fail(
        kKilnInvalidArgument, "script " + script->module->name + ": global " + global->name + " is const");
  }
  if (global->flags & (KILN_HAL_GLOBAL_ALLOCATION | KILN_HAL_GLOBAL_POINTER)) {
    return script->instance()->Fail(kKilnInvalidArgument, "script " + script->module->name + ": global " +
                                                              global->name +
                                                              " is bound with script_bind_allocation");
  }
  if (!data && size) return script->instance()->Fail(kKilnInvalidArgument, "script_set_global: data is NULL");
  if (size) memcpy(script->Address(global->link_index), data, static_cast<size_t>(size));
  return kKilnOk;
}

KilnStatus ScriptGetGlobal(KilnHalScript* handle, const char* name, uint64_t size, void* out_data) {
  Script* script = AsScript(handle);
  KILN_CPU_REQUIRE(script);
  const GlobalInfo* global = nullptr;
  if (KilnStatus status = FindGlobal(script, name, size, "script_get_global", &global); status != kKilnOk) {
    return status;
  }
  if (!out_data && size)
    return script->instance()->Fail(kKilnInvalidArgument, "script_get_global: out_data is NULL");
  if (size) memcpy(out_data, script->Address(global->link_index), static_cast<size_t>(size));
  return kKilnOk;
}

KilnStatus ScriptBindAllocation(KilnHalScript* handle, const char* name, const KilnHalBufferView* in_view,
                                uint32_t element_type, uint32_t vector_size, uint32_t dim_x, uint32_t dim_y,
                                uint32_t dim_z) {
  Script* script = AsScript(handle);
  KILN_CPU_REQUIRE(script);
  Instance* instance = script->instance();
  const GlobalInfo* global = nullptr;
  if (KilnStatus status =
          FindGlobal(script, name, sizeof(void*), "script_bind_allocation (pointer size)", &global);
      status != kKilnOk) {
    return status;
  }
  const std::string what = "script " + script->module->name + ", global " + global->name;
  if (!(global->flags & (KILN_HAL_GLOBAL_ALLOCATION | KILN_HAL_GLOBAL_POINTER))) {
    return instance->Fail(kKilnInvalidArgument, what + ": not an allocation or pointer global");
  }
  void** slot = static_cast<void**>(script->Address(global->link_index));
  if (!in_view) {
    *slot = nullptr;
    std::lock_guard<std::mutex> lock(script->owned_mutex);
    script->bound_allocations.erase(global->name);
    return kKilnOk;
  }
  KilnHalBufferView view;
  if (!ReadStruct(in_view, &view))
    return instance->Fail(kKilnInvalidArgument, what + ": view struct_size too small");
  if (dim_x == 0) return instance->Fail(kKilnInvalidArgument, what + ": dim_x must be at least 1");
  const uint32_t dims[3] = {dim_x, std::max<uint32_t>(dim_y, 1), std::max<uint32_t>(dim_z, 1)};
  std::string error;
  if (!CheckView<Buffer>(view, view.element_size, dims, false, what, &error)) {
    return instance->Fail(kKilnInvalidArgument, error);
  }
  if (view.stride_x != view.element_size) {
    return instance->Fail(kKilnInvalidArgument,
                          what +
                              ": an allocation's elements must be packed along x (stride_x "
                              "== element_size)");
  }
  uint8_t* data = AsBuffer(view.buffer)->data + view.offset;
  if (global->flags & KILN_HAL_GLOBAL_POINTER) {
    *slot = data;
    return kKilnOk;
  }
  auto allocation = std::make_unique<KilnKernelAllocation>();
  *allocation = KilnKernelAllocation{sizeof(KilnKernelAllocation),
                                     view.element_size,
                                     element_type,
                                     vector_size,
                                     dim_x,
                                     dim_y,
                                     dim_z,
                                     0,
                                     view.stride_y,
                                     view.stride_z,
                                     data};
  std::lock_guard<std::mutex> lock(script->owned_mutex);
  *slot = allocation.get();
  script->bound_allocations[global->name] = std::move(allocation);
  return kKilnOk;
}

KilnStatus ScriptInvoke(KilnHalScript* handle, uint32_t invokable_index, const void* args,
                        uint64_t args_size) {
  Script* script = AsScript(handle);
  KILN_CPU_REQUIRE(script);
  Instance* instance = script->instance();
  Module* module = script->module;
  char problem[KILN_HAL_PROBLEM_SIZE];
  if (!kiln_hal_check_index("invokable", invokable_index, module->invokables.size(), problem,
                            sizeof(problem))) {
    return instance->Fail(kKilnInvalidArgument, "script " + module->name + ": " + problem);
  }
  const InvokableInfo& invokable = module->invokables[invokable_index];
  if (invokable.link_index < 0) {
    return instance->Fail(kKilnUnsupported, "script " + module->name +
                                                ": the llvm-bc payload does not define " + invokable.symbol);
  }
  if (args_size != invokable.args_size || (args_size && !args)) {
    return instance->Fail(kKilnInvalidArgument, "script " + module->name + ", invokable " + invokable.name +
                                                    ": takes " + std::to_string(invokable.args_size) +
                                                    " bytes of arguments, got " + std::to_string(args_size));
  }
  return RunInvoke(script, reinterpret_cast<InvokeFn>(script->Address(invokable.link_index)), args,
                   invokable.name);
}

}  // namespace cpu
}  // namespace kiln
