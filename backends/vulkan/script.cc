// A script's state as the GPU sees it: the host values of its globals, their image in the global block, and
// the buffers bound to its allocations, which every launch snapshots when it is recorded.
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "backends/vulkan/module.h"

namespace kiln {
namespace vulkan {

namespace {

KilnStatus FindGlobal(Script* script, const char* name, const char* what, size_t* out_index) {
  Module* module = script->module;
  if (!name) return script->instance()->Fail(kKilnInvalidArgument, std::string(what) + ": name is NULL");
  for (size_t i = 0; i < module->globals.size(); ++i) {
    if (module->globals[i].name == name) {
      *out_index = i;
      return kKilnOk;
    }
  }
  return script->instance()->Fail(kKilnInvalidArgument,
                                  "script " + module->name + " has no global named " + name);
}

}  // namespace

KilnStatus ScriptCreate(KilnHalModule* handle, void* script_user_data, KilnHalScript** out_script) {
  Module* module = AsModule(handle);
  KILN_VK_REQUIRE(module);
  Instance* instance = module->device->instance;
  if (!out_script) return instance->Fail(kKilnInvalidArgument, "script_create: out_script is NULL");
  // init() is not run here (this driver runs no invokables, kiln/hal.h): the runtime runs it on the CPU and
  // sets the globals it left, static ones included, before any launch.
  auto script = std::make_unique<Script>();
  script->module = module;
  script->user_data = script_user_data;
  script->block.assign(module->block_size, 0);
  script->allocations.assign(module->num_allocations, nullptr);
  for (const GlobalInfo& global : module->globals) {
    script->values.push_back(global.default_value);
    if (global.on_gpu && global.kind == KILN_SPIRV_GLOBAL_VALUE && global.size) {
      memcpy(script->block.data() + global.block_offset, global.default_value.data(), global.size);
    }
  }
  ++module->live_scripts;
  *out_script = reinterpret_cast<KilnHalScript*>(script.release());
  return kKilnOk;
}

KilnStatus ScriptDestroy(KilnHalScript* handle) {
  Script* script = AsScript(handle);
  KILN_VK_REQUIRE(script);
  --script->module->live_scripts;
  delete script;
  return kKilnOk;
}

KilnStatus ScriptSetGlobal(KilnHalScript* handle, const char* name, const void* data, uint64_t size) {
  Script* script = AsScript(handle);
  KILN_VK_REQUIRE(script);
  Instance* instance = script->instance();
  size_t index = 0;
  if (KilnStatus status = FindGlobal(script, name, "script_set_global", &index); status != kKilnOk)
    return status;
  const GlobalInfo& global = script->module->globals[index];
  const std::string what = "script " + script->module->name + ": global " + global.name;
  if (global.flags & KILN_HAL_GLOBAL_CONST) return instance->Fail(kKilnInvalidArgument, what + " is const");
  if (global.flags & (KILN_HAL_GLOBAL_ALLOCATION | KILN_HAL_GLOBAL_POINTER)) {
    return instance->Fail(kKilnInvalidArgument, what + " is bound with script_bind_allocation");
  }
  if (size != global.size) {
    return instance->Fail(kKilnInvalidArgument, what + " is " + std::to_string(global.size) +
                                                    " bytes, script_set_global gave " + std::to_string(size));
  }
  if (!data && size) return instance->Fail(kKilnInvalidArgument, "script_set_global: data is NULL");
  std::lock_guard<std::mutex> lock(script->mutex);
  if (size) {
    memcpy(script->values[index].data(), data, size);
    if (global.on_gpu) memcpy(script->block.data() + global.block_offset, data, size);
  }
  return kKilnOk;
}

KilnStatus ScriptGetGlobal(KilnHalScript* handle, const char* name, uint64_t size, void* out_data) {
  Script* script = AsScript(handle);
  KILN_VK_REQUIRE(script);
  Instance* instance = script->instance();
  size_t index = 0;
  if (KilnStatus status = FindGlobal(script, name, "script_get_global", &index); status != kKilnOk)
    return status;
  const GlobalInfo& global = script->module->globals[index];
  if (size != global.size) {
    return instance->Fail(kKilnInvalidArgument, "script " + script->module->name + ": global " + global.name +
                                                    " is " + std::to_string(global.size) +
                                                    " bytes, script_get_global gave " + std::to_string(size));
  }
  if (!out_data && size) return instance->Fail(kKilnInvalidArgument, "script_get_global: out_data is NULL");
  std::lock_guard<std::mutex> lock(script->mutex);
  if (size) memcpy(out_data, script->values[index].data(), size);
  return kKilnOk;
}

// The view in units of the binding's array element, as the push constants carry it.
bool ViewInUnits(const KilnHalBufferView& view, uint32_t unit, const std::string& what, uint32_t out[4],
                 std::string* out_error) {
  const uint64_t values[4] = {view.offset, view.stride_x, view.stride_y, view.stride_z};
  static const char* const kNames[4] = {"offset", "stride_x", "stride_y", "stride_z"};
  for (int i = 0; i < 4; ++i) {
    if (values[i] % unit || values[i] / unit > UINT32_MAX) {
      *out_error = what + ": " + kNames[i] + " " + std::to_string(values[i]) +
                   " is not a multiple of the shader's " + std::to_string(unit) + "-byte unit (or too large)";
      return false;
    }
    out[i] = static_cast<uint32_t>(values[i] / unit);
  }
  return true;
}

KilnStatus ScriptBindAllocation(KilnHalScript* handle, const char* name, const KilnHalBufferView* in_view,
                                uint32_t element_type, uint32_t vector_size, uint32_t dim_x, uint32_t dim_y,
                                uint32_t dim_z) {
  Script* script = AsScript(handle);
  KILN_VK_REQUIRE(script);
  Instance* instance = script->instance();
  size_t index = 0;
  if (KilnStatus status = FindGlobal(script, name, "script_bind_allocation", &index); status != kKilnOk) {
    return status;
  }
  const GlobalInfo& global = script->module->globals[index];
  const std::string what = "script " + script->module->name + ", global " + global.name;
  if (!(global.flags & (KILN_HAL_GLOBAL_ALLOCATION | KILN_HAL_GLOBAL_POINTER))) {
    return instance->Fail(kKilnInvalidArgument, what + ": not an allocation or pointer global");
  }
  KilnSpirvAllocationInfo info{};
  Buffer* bound = nullptr;
  if (in_view) {
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
      return instance->Fail(
          kKilnInvalidArgument,
          what + ": an allocation's elements must be packed along x (stride_x == element_size)");
    }
    if (global.on_gpu) {
      uint32_t units[4];
      if (!ViewInUnits(view, global.unit_size, what, units, &error)) {
        return instance->Fail(kKilnInvalidArgument, error);
      }
      info = KilnSpirvAllocationInfo{dim_x,    dim_y,    dim_z,    view.element_size,
                                     units[0], units[2], units[3], global.unit_size};
    }
    bound = AsBuffer(view.buffer);
  }
  (void)element_type;
  (void)vector_size;
  std::lock_guard<std::mutex> lock(script->mutex);
  if (global.on_gpu) {
    memcpy(script->block.data() + global.block_offset, &info, sizeof(info));
    script->allocations[global.allocation_index] = bound;
  }
  return kKilnOk;
}

}  // namespace vulkan
}  // namespace kiln
