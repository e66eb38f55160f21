// Kernel-backed ops: the callbacks KilnOperatorSetKernel installs. Init makes the node's own script instance
// (so globals set from one node's options do not leak into another's), Prepare sets the globals from the
// custom options and sizes the output, Invoke binds the inputs that are bound to globals and launches the
// kernel on the device the DeviceSet placed it on.
#include "runtime/kernel_op.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <utility>

#include "runtime/device/kernel_script.h"
#include "runtime/interpreter.h"

namespace kiln {
namespace {

struct KernelNode {
  // Aligned copies of constant inputs whose memory inside the model is not aligned as devices need (by
  // global). First, so that they outlive the script that binds them.
  std::map<std::string, std::unique_ptr<KilnTensor>> constant_copies;
  std::unique_ptr<KernelScript> script;  // null when Init could not make one (`init_error` says why)
  std::string init_error;
  bool globals_set = false;
  // What each global bound to an input holds now: the tensor and its memory, so that it is bound again only
  // when the memory moved (a resize or a new arena).
  std::map<std::string, std::pair<const KilnTensor*, const void*>> bound;
};

// An aligned copy of the constant `t`, which the CPU driver can bind (it binds only aligned memory).
// Constants sit in the model's bytes at whatever offset the converter chose. Null on OOM.
std::unique_ptr<KilnTensor> AlignedConstantCopy(const KilnTensor& t) {
  auto copy = std::make_unique<KilnTensor>();
  copy->type = t.type;
  copy->dims = t.dims;
  copy->name = t.name;
  copy->bytes = t.bytes;
  copy->allocation = kKilnMmapRo;  // read-only: never read back from a device
  const size_t size = (t.bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  copy->owned.reset(std::aligned_alloc(kTensorAlignment, size > 0 ? size : kTensorAlignment));
  if (copy->owned == nullptr) return nullptr;
  copy->data = copy->owned.get();
  if (t.bytes > 0) std::memcpy(copy->data, t.data, t.bytes);
  return copy;
}

const KernelBinding& Binding(const KilnOperator* op) { return *static_cast<const KernelBinding*>(op->hooks_state.get()); }

// The binding of `op` for a setter to change: a copy that replaces the operator's, so interpreters made
// before keep the binding they were made with. Null (reported) when `op` has no kernel.
std::shared_ptr<KernelBinding> EditBinding(KilnOperator* op, const char* function) {
  if (KernelBindingOf(op) == nullptr) {
    Report(nullptr, nullptr, "%s: %s", function,
           op == nullptr ? "the operator is NULL"
                         : "the operator has no kernel (call KilnOperatorSetKernel first)");
    return nullptr;
  }
  auto copy = std::make_shared<KernelBinding>(Binding(op));
  op->hooks_state = copy;
  return copy;
}

void* Init(const KilnOperator* op, KilnOpaqueContext* context, const char*, size_t) {
  Interpreter* interpreter = Interpreter::FromContext(context);
  auto state = std::unique_ptr<KernelNode>(new (std::nothrow) KernelNode);
  if (state == nullptr) return nullptr;
  DeviceSet* devices = interpreter->devices();
  if (devices == nullptr) {
    state->init_error = "no device to run the kernel on (see the interpreter's decision log)";
  } else {
    state->script = KernelScript::Create(devices, Binding(op).module, nullptr);
    if (state->script == nullptr) state->init_error = "could not create the kernel's script";
  }
  return state.release();
}

void Free(const KilnOperator*, KilnOpaqueContext*, void* data) { delete static_cast<KernelNode*>(data); }

KilnStatus Prepare(const KilnOperator* op, KilnOpaqueContext* context, KilnOpaqueNode* opaque_node) {
  Interpreter* interpreter = Interpreter::FromContext(context);
  Node* node = reinterpret_cast<Node*>(opaque_node);
  auto* state = static_cast<KernelNode*>(node->user_data);
  if (state == nullptr) return kKilnError;  // out of memory in Init
  const std::string label = KernelOpLabel(*node);
  if (state->script == nullptr) {  // Init could not make one: say why, now that the node is known
    interpreter->ReportError("%s: %s", label.c_str(), state->init_error.c_str());
    return kKilnError;
  }
  const KernelBinding& binding = Binding(op);
  if (!state->globals_set) {
    if (binding.options_as_globals &&
        state->script->SetGlobalsFromOptions(node->desc->custom_options, node->desc->custom_options_size,
                                             label) != kKilnOk) {
      return kKilnError;
    }
    state->globals_set = true;
  }
  const KernelDesc& k = binding.module->desc().kernels[binding.kernel_index];
  for (const auto& [position, global] : binding.input_globals) {
    if (position >= static_cast<int>(node->inputs.size())) {
      interpreter->ReportError("%s: input %d is bound to global '%s', but the node has %zu input(s)",
                               label.c_str(), position, global.c_str(), node->inputs.size());
      return kKilnError;
    }
    const KilnTensor* t = interpreter->tensor(node->inputs[position]);
    if (t == nullptr) {
      interpreter->ReportError("%s: input %d (bound to global '%s') is absent", label.c_str(), position,
                               global.c_str());
      return kKilnError;
    }
    const GlobalDesc* g = binding.module->desc().FindGlobal(global);
    if (g != nullptr && g->is_pointer() && g->type.element_type != kKilnNoType &&
        g->type.element_type != t->type) {
      interpreter->ReportError("%s: input %d ('%s') is %s, but global '%s' points to %s", label.c_str(),
                               position, t->name.c_str(), KilnTypeGetName(t->type), global.c_str(),
                               KilnTypeGetName(g->type.element_type));
      return kKilnError;
    }
  }
  const size_t mapped = node->inputs.size() - binding.input_globals.size();
  if (mapped != k.inputs.size()) {
    interpreter->ReportError("%s: the kernel takes %zu input(s), the node has %zu%s", label.c_str(),
                             k.inputs.size(), mapped,
                             binding.input_globals.empty() ? "" : " besides those bound to globals");
    return kKilnError;
  }
  const size_t expected_outputs = k.has_output() ? 1 : 0;
  if (node->outputs.size() != expected_outputs) {
    interpreter->ReportError("%s: the kernel has %zu output(s), the node %zu", label.c_str(), expected_outputs,
                             node->outputs.size());
    return kKilnError;
  }
  std::vector<std::vector<int64_t>> cells(k.inputs.size());
  std::string error;
  const std::vector<const KilnTensor*> cell_inputs = KernelOpCellInputs(interpreter, *node);
  for (size_t i = 0; i < k.inputs.size(); ++i) {
    const KilnTensor* t = cell_inputs[i];
    if (t == nullptr) {
      interpreter->ReportError("%s: input %zu is absent", label.c_str(), i);
      return kKilnError;
    }
    if (!KernelCellDims(*t, k.inputs[i], &cells[i], &error)) {
      interpreter->ReportError("%s: input %zu ('%s'): %s", label.c_str(), i, t->name.c_str(), error.c_str());
      return kKilnError;
    }
  }
  if (!k.has_output()) return kKilnOk;
  KilnTensor* out = interpreter->tensor(node->outputs[0]);
  if (op->has_author_prepare()) {
    // The op author sizes the output.
    if (KilnStatus s = op->AuthorPrepare(context, opaque_node); s != kKilnOk) return s;
  } else {
    std::vector<int64_t> shape;
    if (!BroadcastCellDims(cells, &shape, &error)) {
      interpreter->ReportError("%s: %s", label.c_str(), error.c_str());
      return kKilnError;
    }
    if (k.output.kind == KernelTypeKind::kScalar && k.output.vector_size > 1) {
      shape.push_back(k.output.vector_size == 3 ? 4 : k.output.vector_size);
    }
    KilnIntArray* dims = KilnIntArrayCreate(static_cast<int>(shape.size()));
    if (dims == nullptr) return kKilnOutOfMemory;
    for (size_t i = 0; i < shape.size(); ++i) dims->data[i] = static_cast<int>(shape[i]);
    if (KilnStatus s = interpreter->ResizeTensor(out, dims); s != kKilnOk) return s;
  }
  std::vector<int64_t> out_cells;
  if (!KernelCellDims(*out, k.output, &out_cells, &error)) {
    interpreter->ReportError("%s: output ('%s'): %s", label.c_str(), out->name.c_str(), error.c_str());
    return kKilnError;
  }
  cells.push_back(out_cells);
  std::vector<int64_t> joint;
  if (!BroadcastCellDims(cells, &joint, &error) || joint != out_cells) {
    interpreter->ReportError("%s: the inputs do not broadcast to the output's shape", label.c_str());
    return kKilnError;
  }
  return kKilnOk;
}

KilnStatus Invoke(const KilnOperator* op, KilnOpaqueContext* context, KilnOpaqueNode* opaque_node) {
  Interpreter* interpreter = Interpreter::FromContext(context);
  Node* node = reinterpret_cast<Node*>(opaque_node);
  auto* state = static_cast<KernelNode*>(node->user_data);
  if (state == nullptr || state->script == nullptr) return kKilnError;
  if (KilnStatus s = BindKernelOpInputs(interpreter, *node); s != kKilnOk) return s;
  const std::vector<const KilnTensor*> inputs = KernelOpCellInputs(interpreter, *node);
  KilnTensor* output = node->outputs.empty() ? nullptr : interpreter->tensor(node->outputs[0]);
  return state->script->ForEach(Binding(op).kernel_index, inputs.data(), static_cast<int>(inputs.size()), output,
                                nullptr);
}

}  // namespace

const OperatorHooks kKernelOpHooks = {Init, Free, Prepare, Invoke};

const KernelBinding* KernelBindingOf(const KilnOperator* op) {
  return op != nullptr && op->hooks == &kKernelOpHooks ? &Binding(op) : nullptr;
}

KernelScript* KernelOpScript(const Node& node) {
  if (KernelBindingOf(node.op) == nullptr || node.user_data == nullptr) return nullptr;
  return static_cast<KernelNode*>(node.user_data)->script.get();
}

const std::string* KernelBinding::GlobalOfInput(int position) const {
  for (const auto& [p, global] : input_globals) {
    if (p == position) return &global;
  }
  return nullptr;
}

std::vector<const KilnTensor*> KernelOpCellInputs(Interpreter* interpreter, const Node& node) {
  const KernelBinding& binding = Binding(node.op);
  std::vector<const KilnTensor*> inputs;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (binding.GlobalOfInput(static_cast<int>(i)) == nullptr)
      inputs.push_back(interpreter->tensor(node.inputs[i]));
  }
  return inputs;
}

std::vector<int> KernelOpBoundInputs(const Node& node) {
  std::vector<int> tensors;
  const KernelBinding* binding = KernelBindingOf(node.op);
  if (binding == nullptr) return tensors;
  for (const auto& [position, global] : binding->input_globals) {
    if (position < static_cast<int>(node.inputs.size())) tensors.push_back(node.inputs[position]);
  }
  return tensors;
}

KilnStatus BindKernelOpInputs(Interpreter* interpreter, const Node& node) {
  auto* state = static_cast<KernelNode*>(node.user_data);
  if (state == nullptr || state->script == nullptr) return kKilnError;
  for (const auto& [position, global] : Binding(node.op).input_globals) {
    KilnTensor* t = position < static_cast<int>(node.inputs.size())
                        ? interpreter->tensor(node.inputs[position])
                        : nullptr;
    if (t == nullptr) return kKilnError;  // Prepare reported it
    auto it = state->bound.find(global);
    if (it != state->bound.end() && it->second.first == t && it->second.second == t->data) continue;
    KilnTensor* bind = t;
    // A copy bound before stays alive until the new binding replaces it.
    std::unique_ptr<KilnTensor> previous = std::move(state->constant_copies[global]);
    state->constant_copies.erase(global);
    if (t->allocation == kKilnMmapRo && reinterpret_cast<uintptr_t>(t->data) % kTensorAlignment != 0) {
      std::unique_ptr<KilnTensor> copy = AlignedConstantCopy(*t);
      if (copy == nullptr) return kKilnOutOfMemory;
      bind = copy.get();
      state->constant_copies[global] = std::move(copy);
    }
    // Scalars whatever the shape: the kernel indexes the tensor's elements itself.
    if (KilnStatus s = state->script->BindAllocation(global, bind, 1); s != kKilnOk) {
      interpreter->ReportError("%s: binding input %d ('%s') to global '%s' failed",
                               KernelOpLabel(node).c_str(), position, t->name.c_str(), global.c_str());
      state->bound.erase(global);
      return s;
    }
    state->bound[global] = {t, t->data};
  }
  return kKilnOk;
}

std::string KernelOpLabel(const Node& node) {
  const KernelBinding& binding = Binding(node.op);
  return "node " + std::to_string(node.index) + " (" + node.op->DisplayName() + ", kernel '" +
         binding.module->desc().kernels[binding.kernel_index].name + "')";
}

}  // namespace kiln

extern "C" KilnStatus KilnOperatorSetKernel(KilnOperator* op, const KilnModule* module, const char* kernel_name) {
  if (op == nullptr || module == nullptr || kernel_name == nullptr) {
    kiln::Report(nullptr, nullptr, "KilnOperatorSetKernel: %s is NULL",
                 op == nullptr ? "the operator" : module == nullptr ? "the module" : "the kernel name");
    return kKilnInvalidArgument;
  }
  const int index = module->impl->KernelIndex(kernel_name);
  if (index < 0) {
    std::string names;
    for (const kiln::KernelDesc& k : module->impl->desc().kernels) names += (names.empty() ? "" : ", ") + k.name;
    kiln::Report(nullptr, nullptr, "KilnOperatorSetKernel: %s has no kernel '%s' (its kernels: %s)",
                 module->impl->name().c_str(), kernel_name, names.empty() ? "none" : names.c_str());
    return kKilnInvalidArgument;
  }
  auto binding = std::make_shared<kiln::KernelBinding>();
  binding->module = module->impl;
  binding->kernel_index = index;
  op->hooks_state = std::move(binding);
  op->hooks = &kiln::kKernelOpHooks;
  return kKilnOk;
}

extern "C" KilnStatus KilnOperatorSetKernelInputGlobal(KilnOperator* op, int input_index,
                                                       const char* global_name) {
  const char* fn = "KilnOperatorSetKernelInputGlobal";
  if (global_name == nullptr || input_index < 0) {
    kiln::Report(nullptr, nullptr, "%s: %s", fn,
                 global_name == nullptr ? "the global name is NULL" : "the input index is negative");
    return kKilnInvalidArgument;
  }
  const kiln::KernelBinding* current = kiln::KernelBindingOf(op);
  if (current != nullptr) {
    const kiln::GlobalDesc* g = current->module->desc().FindGlobal(global_name);
    if (g == nullptr || !(g->is_allocation || g->type.kind == kiln::KernelTypeKind::kPointer)) {
      kiln::Report(nullptr, nullptr, "%s: '%s' is not an rs_allocation or pointer global of %s", fn,
                   global_name, current->module->name().c_str());
      return kKilnInvalidArgument;
    }
  }
  std::shared_ptr<kiln::KernelBinding> binding = kiln::EditBinding(op, fn);
  if (binding == nullptr) return kKilnInvalidArgument;
  auto& globals = binding->input_globals;
  for (auto it = globals.begin(); it != globals.end();) {
    it = it->first == input_index ? globals.erase(it) : it + 1;
  }
  auto at = globals.begin();
  while (at != globals.end() && at->first < input_index) ++at;
  globals.insert(at, {input_index, global_name});
  return kKilnOk;
}

extern "C" KilnStatus KilnOperatorSetKernelOptionsAsGlobals(KilnOperator* op, bool enable) {
  std::shared_ptr<kiln::KernelBinding> binding =
      kiln::EditBinding(op, "KilnOperatorSetKernelOptionsAsGlobals");
  if (binding == nullptr) return kKilnInvalidArgument;
  binding->options_as_globals = enable;
  return kKilnOk;
}

extern "C" KilnStatus KilnOpaqueNodeSetKernelGlobal(KilnOpaqueContext* context, KilnOpaqueNode* opaque_node,
                                                    const char* name, const void* data, size_t size) {
  if (context == nullptr || opaque_node == nullptr) return kKilnInvalidArgument;
  kiln::Interpreter* interpreter = kiln::Interpreter::FromContext(context);
  kiln::Node* node = reinterpret_cast<kiln::Node*>(opaque_node);
  kiln::KernelScript* script = kiln::KernelOpScript(*node);
  if (script == nullptr) {
    interpreter->ReportError("KilnOpaqueNodeSetKernelGlobal: node %d (%s) is not served by a kernel",
                             node->index, node->op != nullptr ? node->op->DisplayName().c_str() : "?");
    return kKilnInvalidArgument;
  }
  if (name == nullptr || (data == nullptr && size > 0)) {
    interpreter->ReportError("KilnOpaqueNodeSetKernelGlobal: %s: %s is NULL",
                             kiln::KernelOpLabel(*node).c_str(), name == nullptr ? "the name" : "the data");
    return kKilnInvalidArgument;
  }
  const KilnStatus s = script->SetGlobal(name, data, size);
  if (s != kKilnOk) {
    interpreter->ReportError("%s: setting global '%s' failed", kiln::KernelOpLabel(*node).c_str(), name);
  }
  return s;
}
