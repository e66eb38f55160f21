#include "runtime/kernel_op.h"

#include <new>

#include "runtime/kernel_device.h"

namespace kiln {
namespace {

struct KernelNode {
  std::unique_ptr<KernelScript> script;
  bool globals_set = false;
};

std::string OpLabel(const Node& node) {
  return "node " + std::to_string(node.index) + " (" + node.op->DisplayName() + ", kernel '" +
         node.op->kernel_module->desc().kernels[node.op->kernel_index].name + "')";
}

}  // namespace

void* KernelOpInit(Interpreter* interpreter, Node* node) {
  KernelDevice* device = interpreter->kernel_device();
  if (device == nullptr) return nullptr;
  auto state = std::make_unique<KernelNode>();
  state->script = KernelScript::Create(device, node->op->kernel_module, nullptr);
  if (state->script == nullptr) {
    interpreter->ReportError("%s: could not create the kernel's script", OpLabel(*node).c_str());
    return nullptr;
  }
  return state.release();
}

void KernelOpFree(void* user_data) { delete static_cast<KernelNode*>(user_data); }

KilnStatus KernelOpPrepare(Interpreter* interpreter, Node* node) {
  auto* state = static_cast<KernelNode*>(node->user_data);
  if (state == nullptr) return kKilnError;  // Init failed and reported
  const std::string label = OpLabel(*node);
  if (!state->globals_set) {
    if (state->script->SetGlobalsFromOptions(node->desc->custom_options, node->desc->custom_options_size, label) !=
        kKilnOk) {
      return kKilnError;
    }
    state->globals_set = true;
  }
  const KernelDesc& k = node->op->kernel_module->desc().kernels[node->op->kernel_index];
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
  if (node->op->prepare != nullptr || node->op->prepare_with_data != nullptr) {
    // The op author sizes the output.
    const KilnStatus s = node->op->prepare_with_data
                             ? node->op->prepare_with_data(node->op->user_data, interpreter->AsContext(),
                                                           reinterpret_cast<KilnOpaqueNode*>(node))
                             : node->op->prepare(interpreter->AsContext(), reinterpret_cast<KilnOpaqueNode*>(node));
    if (s != kKilnOk) return s;
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

KilnStatus KernelOpInvoke(Interpreter* interpreter, Node* node) {
  auto* state = static_cast<KernelNode*>(node->user_data);
  if (state == nullptr) return kKilnError;
  std::vector<const KilnTensor*> inputs;
  for (int index : node->inputs) inputs.push_back(interpreter->tensor(index));
  KilnTensor* output = node->outputs.empty() ? nullptr : interpreter->tensor(node->outputs[0]);
  return state->script->ForEach(node->op->kernel_index, inputs.data(), static_cast<int>(inputs.size()), output,
                                nullptr);
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
  op->kernel_module = module->impl;
  op->kernel_index = index;
  return kKilnOk;
}
