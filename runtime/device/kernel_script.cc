// A script as the application or an op sees it: one module instance, its kernels placed across the devices
// of a DeviceSet, with the CPU as the fallback.
#include "runtime/device/kernel_script.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "flatbuffers/flexbuffers.h"
#include "kiln/kernel_abi.h"
#include "runtime/model/flex_map.h"

namespace kiln {

namespace {

// The allocation a kernel sees for `tensor` passed as an invokable's rs_allocation argument: scalars of its type,
// or uchar4 pixels for a uint8 [..., 4] tensor (as KilnScriptBindAllocation infers them); dimensions beyond three
// fold into z. `error` is set when the tensor cannot be one.
KilnKernelAllocation TensorAllocationView(const KilnTensor& tensor, std::string* error) {
  KilnKernelAllocation view{};
  view.struct_size = sizeof view;
  std::vector<int64_t> cells(tensor.dims.begin(), tensor.dims.end());
  const size_t lane = TypeSize(tensor.type);
  if (lane == 0 || (tensor.data == nullptr && tensor.bytes != 0)) {
    *error = lane == 0 ? "the tensor has no element type" : "the tensor has no memory";
    return view;
  }
  view.vector_size = 1;
  if (tensor.type == kKilnUInt8 && cells.size() >= 2 && cells.back() == 4) {
    view.vector_size = 4;
    cells.pop_back();
  }
  if (cells.size() > 3) {
    int64_t z = 1;
    for (size_t i = 0; i + 2 < cells.size(); ++i) z *= cells[i];
    cells = {z, cells[cells.size() - 2], cells.back()};
  }
  uint32_t dims[3] = {0, 0, 0};
  for (size_t i = 0; i < cells.size(); ++i) {
    if (cells[cells.size() - 1 - i] < 0 || cells[cells.size() - 1 - i] > UINT32_MAX) {
      *error = "a dimension does not fit an allocation";
      return view;
    }
    dims[i] = static_cast<uint32_t>(cells[cells.size() - 1 - i]);
  }
  if (cells.empty()) dims[0] = 1;
  view.element_type = tensor.type;
  view.element_size = static_cast<uint32_t>(lane * view.vector_size);
  view.dim_x = dims[0];
  view.dim_y = dims[1];
  view.dim_z = dims[2];
  view.stride_y = static_cast<uint64_t>(view.element_size) * (dims[0] ? dims[0] : 1);
  view.stride_z = view.stride_y * (dims[1] ? dims[1] : 1);
  view.data = tensor.data;
  return view;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// KernelScript

std::unique_ptr<KernelScript> KernelScript::Create(DeviceSet* devices, std::shared_ptr<const KernelModule> module,
                                                   void* user_data) {
  std::unique_ptr<KernelScript> s(new KernelScript());
  s->devices_ = devices;
  s->module_ = std::move(module);
  s->user_data_ = user_data;
  s->placement_ = &devices->Place(s->module_);
  bool any_accel = false, any_cpu = !s->module_->desc().invokables.empty() || s->module_->desc().has_init;
  for (bool on : s->placement_->kernel_on_accelerator) (on ? any_accel : any_cpu) = true;
  for (bool on : s->placement_->reduction_on_accelerator) (on ? any_accel : any_cpu) = true;
  // init() runs on the CPU instance (an accelerator's driver does not run it, kiln/hal.h): that instance comes
  // first, so that the shadow holds what init() set and the accelerator instance takes it before its first
  // launch.
  if (s->module_->desc().has_init && s->Cpu() == nullptr) return nullptr;
  KernelDevice* accel = devices->accelerator();
  if (any_accel && accel != nullptr) {
    s->accel_.script = DeviceScript::Create(accel, s->module_, user_data);
    if (s->accel_.script == nullptr) {
      s->accel_failed_ = true;
      const std::string errors = accel->hal()->TakeErrors();
      devices->log()->Add(kKilnDecisionFallback, ModuleLabel(*s->module_),
                          "script of " + ModuleLabel(*s->module_) + ": " + accel->label() + " could not create it" +
                              (errors.empty() ? "" : ": " + errors) + "; its kernels run on " +
                              devices->cpu()->label());
    } else if (s->shadow_.empty()) {
      s->ReadBack(&s->accel_);
    }
  }
  if (any_cpu || s->accel_.script == nullptr) {
    if (s->Cpu() == nullptr) return nullptr;
  }
  return s;
}

KernelScript::~KernelScript() = default;

KernelDevice* KernelScript::reporter() const { return devices_->cpu(); }

std::string KernelScript::Subject(const char* what, const std::string& name) const {
  return std::string(what) + " '" + name + "' of " + ModuleLabel(*module_);
}

bool KernelScript::accelerator_usable() const {
  return !accel_failed_ && accel_.script != nullptr && devices_->accelerator() != nullptr;
}

KernelScript::Instance* KernelScript::Cpu() {
  if (cpu_.script != nullptr) return &cpu_;
  cpu_.script = DeviceScript::Create(devices_->cpu(), module_, user_data_);
  if (cpu_.script == nullptr) return nullptr;
  if (shadow_.empty()) {
    ReadBack(&cpu_);
  } else if (Sync(&cpu_) != kKilnOk) {
    cpu_.script.reset();
    return nullptr;
  }
  if (ApplyBindings(&cpu_) != kKilnOk) {
    cpu_.script.reset();
    cpu_.seen.clear();
    return nullptr;
  }
  return &cpu_;
}

KilnStatus KernelScript::Sync(Instance* instance) {
  for (const auto& [name, bytes] : shadow_) {
    uint64_t& seen = instance->seen[name];
    const uint64_t version = version_[name];
    if (seen == version) continue;
    if (KilnStatus s = instance->script->SetGlobal(name, bytes.data(), bytes.size()); s != kKilnOk) return s;
    seen = version;
  }
  return kKilnOk;
}

void KernelScript::ReadBack(Instance* instance) {
  for (const GlobalDesc& g : module_->desc().globals) {
    // Static globals too: they are not settable, but an invokable's writes must reach the accelerator.
    if (g.is_const || g.is_allocation || g.type.kind == KernelTypeKind::kPointer) continue;
    std::vector<uint8_t> bytes(g.size);
    if (instance->script->GetGlobal(g.name, bytes.data(), bytes.size()) != kKilnOk) continue;
    auto it = shadow_.find(g.name);
    if (it == shadow_.end() || it->second != bytes) {
      shadow_[g.name] = std::move(bytes);
      version_[g.name] = next_version_++;
    }
    instance->seen[g.name] = version_[g.name];
  }
}

KilnStatus KernelScript::ApplyBindings(Instance* instance) {
  for (const auto& [name, binding] : bindings_) {
    if (KilnStatus s = instance->script->BindAllocation(name, binding.tensor, binding.lanes); s != kKilnOk) return s;
  }
  return kKilnOk;
}

void KernelScript::ForgetTensor(const KilnTensor* tensor) {
  if (tensor == nullptr) return;
  for (auto it = bindings_.begin(); it != bindings_.end();) {
    if (it->second.tensor != tensor) {
      ++it;
      continue;
    }
    forgotten_.insert(it->first);
    it = bindings_.erase(it);
  }
  // The built-in driver unbinds a bound global without fail. Should it not, the CPU instance goes, and Cpu()
  // makes a fresh one from the shadow and bindings_ when it is next needed: no driver state may keep pointing
  // at the tensor's memory.
  if (cpu_.script != nullptr && cpu_.script->ForgetTensor(tensor) != kKilnOk) {
    cpu_.script.reset();
    cpu_.seen.clear();
  }
  // The accelerator instance too when it is no longer used: its bindings name the tensor, and its buffers may
  // wrap the tensor's memory.
  if (accel_.script != nullptr) {
    if (KilnStatus s = accel_.script->ForgetTensor(tensor); s != kKilnOk && accelerator_usable()) {
      AcceleratorFailed("unbinding a deleted tensor from " + ModuleLabel(*module_), s);
    }
  }
}

KilnStatus KernelScript::NoteForgotten(KilnStatus status) {
  if (status == kKilnOk) return status;
  if (!forgotten_.empty()) {
    std::string names;
    for (const std::string& name : forgotten_) names += (names.empty() ? "'" : ", '") + name + "'";
    const bool one = forgotten_.size() == 1;
    reporter()->ReportError("%s: note: global%s %s %s no tensor bound: %s tensor was deleted (KilnTensorDelete) "
                            "while bound, and nothing was bound since",
                            module_->name().c_str(), one ? "" : "s", names.c_str(), one ? "has" : "have",
                            one ? "its" : "their");
  }
  // rs_allocation globals the script reads or writes through typed accessors that never had a tensor: the
  // failed access (an element access through a NULL allocation) is most likely through one of them.
  std::string never;
  int count = 0;
  for (const GlobalDesc& g : module_->desc().globals) {
    if (!g.is_allocation || g.is_pointer() || g.accessed_as.empty()) continue;
    if (bindings_.count(g.name) || forgotten_.count(g.name)) continue;
    never += (never.empty() ? "'" : ", '") + g.name + "'";
    ++count;
  }
  if (count > 0) {
    reporter()->ReportError("%s: note: rs_allocation global%s %s, which the script reads or writes, %s never had a "
                            "tensor bound (bind one with KilnScriptBindAllocation)",
                            module_->name().c_str(), count == 1 ? "" : "s", never.c_str(),
                            count == 1 ? "has" : "have");
  }
  return status;
}

KilnStatus KernelScript::CheckPointerGlobals(const char* what, const std::string& name,
                                             const std::vector<std::string>& pointer_globals) const {
  KilnStatus status = kKilnOk;
  for (const std::string& global : pointer_globals) {
    if (bindings_.count(global)) continue;
    reporter()->ReportError(
        "%s: %s '%s' reads pointer global '%s', which is not bound%s (bind a tensor with "
        "KilnScriptBindAllocation)",
        module_->name().c_str(), what, name.c_str(), global.c_str(),
        forgotten_.count(global) ? ": its tensor was deleted (KilnTensorDelete) while bound" : "");
    status = kKilnInvalidArgument;
  }
  return status;
}

KilnStatus KernelScript::CheckKernelBindings(int kernel_index) const {
  const KernelDesc& k = module_->desc().kernels[kernel_index];
  return CheckPointerGlobals("kernel", k.name, k.pointer_globals);
}

void KernelScript::AcceleratorFailed(const std::string& what, KilnStatus status, bool hung) {
  KernelDevice* accel = accel_.script ? accel_.script->device() : nullptr;
  const std::string errors = accel ? accel->hal()->TakeErrors() : "";
  devices_->AcceleratorFailed(what, status, errors, hung);
}

void KernelScript::KernelFailed(bool reduction, int index, const std::string& what, KilnStatus status) {
  KernelDevice* accel = accel_.script ? accel_.script->device() : nullptr;
  const std::string errors = accel ? accel->hal()->TakeErrors() : "";
  devices_->KernelFailed(module_.get(), reduction, index, what, status, errors);
}

bool KernelScript::KernelOnAccelerator(int kernel_index) const {
  return accelerator_usable() && placement_->kernel_on_accelerator[kernel_index];
}

KernelDevice* KernelScript::DeviceFor(int kernel_index) const {
  return KernelOnAccelerator(kernel_index) ? devices_->accelerator() : devices_->cpu();
}

DeviceScript* KernelScript::PrepareAccelerator() {
  if (!accelerator_usable()) return nullptr;
  if (KilnStatus s = Sync(&accel_); s != kKilnOk) {
    AcceleratorFailed("setting the globals of " + ModuleLabel(*module_), s);
    return nullptr;
  }
  return accel_.script.get();
}

KilnStatus KernelScript::OnCpu(const std::function<KilnStatus(DeviceScript*)>& work) {
  Instance* cpu = Cpu();
  if (cpu == nullptr) return kKilnError;
  if (KilnStatus s = Sync(cpu); s != kKilnOk) return s;
  const KilnStatus s = work(cpu->script.get());
  ReadBack(cpu);
  return s;
}

KilnStatus KernelScript::RunOnCpu(const ForEachPlan& plan) {
  return OnCpu([&](DeviceScript* script) { return script->Run(plan); });
}

void KernelScript::AcceleratorWorkDone() {
  if (accel_.script != nullptr) ReadBack(&accel_);
}

KilnStatus KernelScript::SetGlobal(const std::string& name, const void* data, size_t size) {
  const GlobalDesc* g = module_->desc().FindGlobal(name);
  if (g == nullptr || g->is_static) {
    reporter()->ReportError("%s: the script has no global '%s'%s", module_->name().c_str(), name.c_str(),
                            g == nullptr ? "" : " it exports (it is static)");
    return kKilnInvalidArgument;
  }
  if (g->is_const) {
    reporter()->ReportError("%s: global '%s' is const and cannot be set", module_->name().c_str(), name.c_str());
    return kKilnInvalidArgument;
  }
  if (g->is_allocation || g->type.kind == KernelTypeKind::kPointer) {
    reporter()->ReportError("%s: global '%s' is an allocation: bind a tensor with KilnScriptBindAllocation",
                            module_->name().c_str(), name.c_str());
    return kKilnInvalidArgument;
  }
  if (size != g->size) {
    reporter()->ReportError("%s: global '%s' (%s) is %u bytes, %zu given", module_->name().c_str(), name.c_str(),
                            KernelTypeName(g->type).c_str(), g->size, size);
    return kKilnInvalidArgument;
  }
  const auto* bytes = static_cast<const uint8_t*>(data);
  shadow_[name].assign(bytes, bytes + size);
  version_[name] = next_version_++;
  // The CPU instance takes it now, so a driver-side problem surfaces at this call; a device instance takes it
  // before its next launch.
  if (cpu_.script != nullptr) return Sync(&cpu_);
  return kKilnOk;
}

KilnStatus KernelScript::GetGlobal(const std::string& name, void* data, size_t size) {
  const GlobalDesc* g = module_->desc().FindGlobal(name);
  if (g == nullptr || g->is_static || size != g->size) {
    reporter()->ReportError(
        "%s: %s", module_->name().c_str(),
        g == nullptr || g->is_static
            ? ("the script has no global '" + name + "'" + (g ? " it exports (it is static)" : "")).c_str()
            : ("global '" + name + "' is " + std::to_string(g->size) + " bytes, " + std::to_string(size) + " asked for")
                  .c_str());
    return kKilnInvalidArgument;
  }
  auto it = shadow_.find(name);
  if (it != shadow_.end() && it->second.size() == size) {
    std::memcpy(data, it->second.data(), size);
    return kKilnOk;
  }
  Instance* instance = cpu_.script != nullptr ? &cpu_ : accelerator_usable() ? &accel_ : Cpu();
  if (instance == nullptr) return kKilnError;
  return instance->script->GetGlobal(name, data, size);
}

KilnStatus KernelScript::BindAllocation(const std::string& name, KilnTensor* tensor, uint32_t lanes) {
  const GlobalDesc* g = module_->desc().FindGlobal(name);
  if (g == nullptr || !(g->is_allocation || g->type.kind == KernelTypeKind::kPointer)) {
    reporter()->ReportError("%s: '%s' is not an rs_allocation or pointer global", module_->name().c_str(),
                            name.c_str());
    return kKilnInvalidArgument;
  }
  if (tensor != nullptr && tensor->data == nullptr) {
    reporter()->ReportError("%s: the tensor bound to '%s' has no memory", module_->name().c_str(), name.c_str());
    return kKilnInvalidArgument;
  }
  // The code reads the bytes as its own type: a float32 tensor read with rsGetElementAt_int (or through an
  // int* global) gives garbage, silently. The binding stands (RenderScript allowed it), with a warning naming
  // both types.
  std::vector<KilnType> expected = g->accessed_as;
  if (g->is_pointer() && g->type.element_type != kKilnNoType) expected = {g->type.element_type};
  if (tensor != nullptr && !expected.empty() &&
      std::find(expected.begin(), expected.end(), tensor->type) == expected.end()) {
    std::string types;
    for (KilnType t : expected) types += (types.empty() ? "" : " and ") + std::string(KilnTypeGetName(t));
    reporter()->ReportError("%s: warning: '%s' is read and written as %s (%s), but the tensor bound to it holds "
                            "%s: its bytes will be taken as %s",
                            module_->name().c_str(), name.c_str(), types.c_str(),
                            g->is_pointer() ? "its pointee type" : "its rsGetElementAt_/rsSetElementAt_ accessors",
                            KilnTypeGetName(tensor->type), types.c_str());
  }
  if (cpu_.script != nullptr) {
    if (KilnStatus s = cpu_.script->BindAllocation(name, tensor, lanes); s != kKilnOk) return s;
  }
  if (tensor == nullptr) {
    bindings_.erase(name);
  } else {
    bindings_[name] = {tensor, lanes};
  }
  forgotten_.erase(name);
  if (accelerator_usable()) {
    if (KilnStatus s = accel_.script->BindAllocation(name, tensor, lanes); s != kKilnOk) {
      AcceleratorFailed("binding '" + name + "' of " + ModuleLabel(*module_), s);
      if (Cpu() == nullptr) return kKilnError;
    }
  }
  return kKilnOk;
}

KilnStatus KernelScript::ForEach(int kernel_index, const KilnTensor* const* inputs, int num_inputs,
                                 KilnTensor* output, const KilnLaunchOptions* options) {
  ForEachPlan plan;
  if (KilnStatus s = PlanForEach(*module_, kernel_index, inputs, num_inputs, output, options, reporter(), &plan);
      s != kKilnOk) {
    return s;
  }
  // Before any driver: the generated code would dereference an unbound pointer global (NULL on the CPU).
  if (KilnStatus s = CheckKernelBindings(kernel_index); s != kKilnOk) return s;
  if (KernelOnAccelerator(kernel_index)) {
    KilnStatus s = Sync(&accel_);
    if (s == kKilnOk) s = accel_.script->Run(plan);
    if (s == kKilnOk) {
      ReadBack(&accel_);  // kernels may change globals (rsAtomicInc on a global)
      return kKilnOk;
    }
    KernelFailed(/*reduction=*/false, kernel_index, Subject("kernel", module_->desc().kernels[kernel_index].name), s);
  }
  return NoteForgotten(RunOnCpu(plan));
}

KilnStatus KernelScript::Invoke(int invokable_index, const void* args, size_t size) {
  const InvokableDesc& inv = module_->desc().invokables[invokable_index];
  if (size != inv.args_size) {
    reporter()->ReportError("%s: invokable '%s' takes %u bytes of arguments, %zu given", module_->name().c_str(),
                            inv.name.c_str(), inv.args_size, size);
    return kKilnInvalidArgument;
  }
  if (KilnStatus s = CheckPointerGlobals("invokable", inv.name, inv.pointer_globals); s != kKilnOk) return s;
  // An rs_allocation parameter is passed a KilnTensor* (or NULL) in the argument block: the CPU instance, where
  // invokables run, gets a view of the tensor's memory there instead, valid for this call.
  std::vector<uint8_t> packed(static_cast<const uint8_t*>(args), static_cast<const uint8_t*>(args) + size);
  std::vector<KilnKernelAllocation> views;
  views.reserve(inv.params.size());
  for (const ParamDesc& p : inv.params) {
    if (p.type.kind != KernelTypeKind::kAllocation) continue;
    if (p.type.array_size != 0 || p.offset + sizeof(void*) > packed.size()) {
      reporter()->ReportError(
          "%s: invokable '%s': parameter '%s' is an array of rs_allocation, which cannot be "
          "passed from the host",
          module_->name().c_str(), inv.name.c_str(), p.name.c_str());
      return kKilnInvalidArgument;
    }
    const KilnTensor* tensor = nullptr;
    std::memcpy(&tensor, packed.data() + p.offset, sizeof tensor);
    KilnKernelAllocation* view = nullptr;
    if (tensor != nullptr) {
      std::string error;
      views.push_back(TensorAllocationView(*tensor, &error));
      if (!error.empty()) {
        reporter()->ReportError("%s: invokable '%s': rs_allocation parameter '%s': %s", module_->name().c_str(),
                                inv.name.c_str(), p.name.c_str(), error.c_str());
        return kKilnInvalidArgument;
      }
      view = &views.back();
    }
    std::memcpy(packed.data() + p.offset, &view, sizeof view);
  }
  return NoteForgotten(
      OnCpu([&](DeviceScript* script) { return script->Invoke(invokable_index, packed.data(), packed.size()); }));
}

KilnStatus KernelScript::Reduce(int reduction_index, const KilnTensor* const* inputs, int num_inputs, void* result,
                                size_t result_size, const KilnLaunchOptions* options) {
  ReducePlan plan;
  if (KilnStatus s = PlanReduce(*module_, reduction_index, inputs, num_inputs, result_size, options, reporter(), &plan);
      s != kKilnOk) {
    return s;
  }
  const ReductionDesc& r = module_->desc().reductions[reduction_index];
  if (KilnStatus s = CheckPointerGlobals("reduction", r.name, r.pointer_globals); s != kKilnOk) return s;
  if (accelerator_usable() && placement_->reduction_on_accelerator[reduction_index]) {
    // The device writes a scratch result, so a failed attempt never leaves half a result behind.
    std::vector<uint8_t> scratch(result_size);
    KilnStatus s = Sync(&accel_);
    if (s == kKilnOk) s = accel_.script->Run(plan, scratch.data());
    if (s == kKilnOk) {
      std::memcpy(result, scratch.data(), result_size);
      ReadBack(&accel_);
      return kKilnOk;
    }
    KernelFailed(/*reduction=*/true, reduction_index,
                 Subject("reduction", module_->desc().reductions[reduction_index].name), s);
  }
  return NoteForgotten(OnCpu([&](DeviceScript* script) { return script->Run(plan, result); }));
}

KilnStatus KernelScript::SetGlobalsFromOptions(const uint8_t* data, size_t size, const std::string& what) {
  if (data == nullptr || size == 0) return kKilnOk;
  // The checks the FlexBuffers verifier leaves out too (keys end inside the buffer, as many keys as values).
  flexbuffers::Map map = flexbuffers::Map::EmptyMap();
  bool empty = false;
  if (!OpenFlexMap(data, size, &map, &empty)) {
    reporter()->ReportError("%s: the custom options are not a valid FlexBuffers map", what.c_str());
    return kKilnInvalidArgument;
  }
  const flexbuffers::TypedVector keys = map.Keys();
  const flexbuffers::Vector values = map.Values();
  std::string names;
  for (const GlobalDesc& g : module_->desc().globals) {
    if (!g.is_static) names += (names.empty() ? "" : ", ") + g.name;
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string key = keys[i].AsKey();
    const flexbuffers::Reference v = values[i];
    const GlobalDesc* g = module_->desc().FindGlobal(key);
    if (g != nullptr && g->is_static) g = nullptr;  // not the script's to export
    // TensorFlow's converter gives every custom op its TF attributes: the dtype "T" and internal "_..." keys.
    // They configure nothing here; a kernel that wants one declares a global of that name.
    const bool converter_attribute = key == "T" || (!key.empty() && key[0] == '_');
    if (g == nullptr && converter_attribute) {
      reporter()->ReportError("%s: note: custom option '%s' (an attribute TensorFlow's converter adds) matches no "
                              "global of %s; ignored",
                              what.c_str(), key.c_str(), module_->name().c_str());
      continue;
    }
    if (g == nullptr) {
      reporter()->ReportError("%s: custom option '%s' matches no global of %s (its globals: %s)", what.c_str(),
                           key.c_str(), module_->name().c_str(), names.empty() ? "none" : names.c_str());
      return kKilnInvalidArgument;
    }
    if (!g->settable() || g->is_allocation || g->type.kind != KernelTypeKind::kScalar) {
      reporter()->ReportError("%s: custom option '%s' cannot set global '%s %s' (%s)", what.c_str(), key.c_str(),
                           KernelTypeName(g->type).c_str(), key.c_str(),
                           g->is_const ? "it is const" : "only numeric scalars and vectors can be set");
      return kKilnInvalidArgument;
    }
    const uint32_t lanes = g->type.vector_size;
    std::vector<double> numbers;
    bool is_float_value = false;
    if (v.IsFloat() || v.IsInt() || v.IsUInt() || v.IsBool()) {
      numbers.push_back(v.AsDouble());
      is_float_value = v.IsFloat();
    } else if (v.IsTypedVector() || v.IsFixedTypedVector()) {
      const flexbuffers::TypedVector vec = v.IsTypedVector() ? v.AsTypedVector() : flexbuffers::TypedVector::EmptyTypedVector();
      const flexbuffers::FixedTypedVector fixed =
          v.IsFixedTypedVector() ? v.AsFixedTypedVector() : flexbuffers::FixedTypedVector::EmptyFixedTypedVector();
      const size_t count = v.IsTypedVector() ? vec.size() : fixed.size();
      for (size_t k = 0; k < count; ++k) {
        const flexbuffers::Reference e = v.IsTypedVector() ? vec[k] : fixed[k];
        numbers.push_back(e.AsDouble());
        is_float_value = is_float_value || e.IsFloat();
      }
    } else if (v.IsVector()) {
      const flexbuffers::Vector vec = v.AsVector();
      for (size_t k = 0; k < vec.size(); ++k) {
        numbers.push_back(vec[k].AsDouble());
        is_float_value = is_float_value || vec[k].IsFloat();
      }
    }
    const KilnType lane_type = g->type.element_type;
    const bool global_is_float = lane_type == kKilnFloat32 || lane_type == kKilnFloat64 || lane_type == kKilnFloat16;
    if (numbers.size() != lanes || (is_float_value && !global_is_float)) {
      reporter()->ReportError("%s: custom option '%s' has the wrong type for global '%s %s' (%s)", what.c_str(),
                           key.c_str(), KernelTypeName(g->type).c_str(), key.c_str(),
                           numbers.size() != lanes ? ("expected " + std::to_string(lanes) + " number(s), got " +
                                                      std::to_string(numbers.size()))
                                                         .c_str()
                                                   : "a float value for an integer global");
      return kKilnInvalidArgument;
    }
    std::vector<uint8_t> bytes(g->size, 0);
    const size_t lane_size = TypeSize(lane_type);
    for (uint32_t k = 0; k < lanes; ++k) {
      uint8_t* p = bytes.data() + k * lane_size;
      const double x = numbers[k];
      switch (lane_type) {
        case kKilnFloat32: { float f = static_cast<float>(x); std::memcpy(p, &f, 4); break; }
        case kKilnFloat64: std::memcpy(p, &x, 8); break;
        case kKilnInt8: case kKilnBool: { int8_t q = static_cast<int8_t>(x); std::memcpy(p, &q, 1); break; }
        case kKilnUInt8: { uint8_t q = static_cast<uint8_t>(x); std::memcpy(p, &q, 1); break; }
        case kKilnInt16: { int16_t q = static_cast<int16_t>(x); std::memcpy(p, &q, 2); break; }
        case kKilnUInt16: { uint16_t q = static_cast<uint16_t>(x); std::memcpy(p, &q, 2); break; }
        case kKilnInt32: { int32_t q = static_cast<int32_t>(x); std::memcpy(p, &q, 4); break; }
        case kKilnUInt32: { uint32_t q = static_cast<uint32_t>(x); std::memcpy(p, &q, 4); break; }
        case kKilnInt64: { int64_t q = v.IsVector() ? static_cast<int64_t>(x) : v.AsInt64(); std::memcpy(p, &q, 8); break; }
        case kKilnUInt64: { uint64_t q = static_cast<uint64_t>(x); std::memcpy(p, &q, 8); break; }
        default:
          reporter()->ReportError("%s: custom option '%s': globals of type %s cannot be set from options", what.c_str(),
                               key.c_str(), KernelTypeName(g->type).c_str());
          return kKilnUnsupported;
      }
    }
    if (KilnStatus s = SetGlobal(key, bytes.data(), bytes.size()); s != kKilnOk) return s;
  }
  return kKilnOk;
}

}  // namespace kiln
