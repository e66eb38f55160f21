// Kernel-backed ops: the callbacks KilnOperatorSetKernel installs. Init makes the node's own script instance
// (so globals set from one node's options do not leak into another's), Prepare sets the globals from the custom
// options and sizes the output, Invoke launches the kernel on the device the DeviceSet placed it on.
#include "runtime/kernel_op.h"

#include <memory>
#include <new>

#include "runtime/device/kernel_script.h"
#include "runtime/interpreter.h"

namespace kiln {
namespace {

struct KernelNode {
  std::unique_ptr<KernelScript> script;  // null when Init could not make one (`init_error` says why)
  std::string init_error;
  bool globals_set = false;
};

const KernelBinding& Binding(const KilnOperator* op) { return *static_cast<const KernelBinding*>(op->hooks_state.get()); }

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
  if (!state->globals_set) {
    if (state->script->SetGlobalsFromOptions(node->desc->custom_options, node->desc->custom_options_size, label) !=
        kKilnOk) {
      return kKilnError;
    }
    state->globals_set = true;
  }
  const KernelBinding& binding = Binding(op);
  const KernelDesc& k = binding.module->desc().kernels[binding.kernel_index];
  if (node->inputs.size() != k.inputs.size()) {
    interpreter->ReportError("%s: the kernel takes %zu input(s), the node has %zu", label.c_str(), k.inputs.size(),
                             node->inputs.size());
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
  for (size_t i = 0; i < k.inputs.size(); ++i) {
    const KilnTensor* t = interpreter->tensor(node->inputs[i]);
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
  std::vector<const KilnTensor*> inputs;
  for (int index : node->inputs) inputs.push_back(interpreter->tensor(index));
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
