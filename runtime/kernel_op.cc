#include "runtime/kernel_op.h"

#include <algorithm>
#include <new>
#include <map>
#include <set>

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
  DeviceSet* devices = interpreter->devices();
  if (devices == nullptr) {
    interpreter->ReportError("%s: no device to run the kernel on (see the interpreter's decision log)",
                             OpLabel(*node).c_str());
    return nullptr;
  }
  auto state = std::make_unique<KernelNode>();
  state->script = KernelScript::Create(devices, node->op->kernel_module, nullptr);
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

namespace {

std::string NodeOpName(const Node& node) {
  return node.op != nullptr ? node.op->DisplayName()
                            : node.desc->builtin_code == kKilnBuiltinCustom ? node.desc->custom_name : "?";
}

// The kernel nodes of a partition may use the driver device now.
bool OnAccelerator(const Node& node) {
  if (node.op == nullptr || !node.op->is_kernel() || node.user_data == nullptr) return false;
  return static_cast<KernelNode*>(node.user_data)->script->KernelOnAccelerator(node.op->kernel_index);
}

std::string TensorNames(Interpreter* interpreter, const std::vector<int>& tensors) {
  std::string s;
  for (size_t i = 0; i < tensors.size() && i < 4; ++i) {
    const KilnTensor* t = interpreter->tensor(tensors[i]);
    s += (i ? ", '" : "'") + (t ? t->name : std::string("?")) + "'";
  }
  if (tensors.size() > 4) s += ", ...";
  return s;
}

struct PartitionTensors {
  std::vector<int> in;        // read by the partition, produced before it
  std::vector<int> out;       // produced by it and read after it (or a graph output)
  std::vector<int> internal;  // produced and consumed inside it
};

PartitionTensors ClassifyTensors(Interpreter* interpreter, const KernelPartition& p) {
  PartitionTensors result;
  std::set<int> produced, seen;
  for (int n = p.first; n <= p.last; ++n) {
    const Node& node = interpreter->nodes()[n];
    for (int t : node.inputs) {
      if (t >= 0 && !produced.count(t) && seen.insert(t).second) result.in.push_back(t);
    }
    for (int t : node.outputs) produced.insert(t);
  }
  std::set<int> used_after(interpreter->outputs().begin(), interpreter->outputs().end());
  for (size_t n = 0; n < interpreter->nodes().size(); ++n) {
    if (static_cast<int>(n) >= p.first && static_cast<int>(n) <= p.last) continue;
    for (int t : interpreter->nodes()[n].inputs) used_after.insert(t);
  }
  for (int t : produced) {
    const KilnTensor* tensor = interpreter->tensor(t);
    const bool persistent = tensor != nullptr && tensor->allocation == kKilnArenaRwPersistent;
    (used_after.count(t) || persistent ? result.out : result.internal).push_back(t);
  }
  return result;
}

}  // namespace

void PlanKernelPartitions(Interpreter* interpreter, std::vector<KernelPartition>* partitions, std::string* recorded) {
  partitions->clear();
  const std::vector<Node>& nodes = interpreter->nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!OnAccelerator(nodes[i])) continue;
    if (!partitions->empty() && partitions->back().last == static_cast<int>(i) - 1) {
      partitions->back().last = static_cast<int>(i);
    } else {
      partitions->push_back({static_cast<int>(i), static_cast<int>(i)});
    }
  }
  // What --explain shows: every node, then every partition. Recorded again only when it changed.
  std::vector<Decision> plan;
  std::vector<int> partition_of(nodes.size(), -1);
  for (size_t p = 0; p < partitions->size(); ++p) {
    for (int n = (*partitions)[p].first; n <= (*partitions)[p].last; ++n) partition_of[n] = static_cast<int>(p);
  }
  DeviceSet* devices = nullptr;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = nodes[i];
    const std::string subject = "node " + std::to_string(i);
    std::string where;
    if (node.op != nullptr && node.op->is_kernel()) {
      if (devices == nullptr) devices = interpreter->devices();
      const std::string label = OpLabel(node);
      auto* state = static_cast<KernelNode*>(node.user_data);
      if (partition_of[i] >= 0) {
        where = label + " runs on " + devices->accelerator()->label() + ", in partition " +
                std::to_string(partition_of[i]);
      } else if (state == nullptr || devices == nullptr) {
        where = label + " has no script (its Init failed)";
      } else {
        const ModulePlacement& placement = devices->Place(node.op->kernel_module);
        std::string reason = placement.kernel_reason[node.op->kernel_index];
        if (reason.empty()) reason = "the driver device failed earlier";
        where = label + " runs on " + devices->cpu()->label() + ": " + reason;
      }
    } else if (node.op != nullptr && node.op->is_custom()) {
      where = "node " + std::to_string(i) + " (" + NodeOpName(node) + ") runs on the host: a custom op with C callbacks";
    } else {
      where = "node " + std::to_string(i) + " (" + NodeOpName(node) + ") runs on the host: builtin op";
    }
    plan.push_back({KILN_DECISION_NODE, subject, where});
  }
  for (size_t p = 0; p < partitions->size(); ++p) {
    const KernelPartition& part = (*partitions)[p];
    const PartitionTensors t = ClassifyTensors(interpreter, part);
    KernelDevice* accel = devices->accelerator();
    std::string message = "partition " + std::to_string(p) + ": node" + (part.first == part.last ? " " : "s ") +
                          std::to_string(part.first) +
                          (part.first == part.last ? "" : " to " + std::to_string(part.last)) + " run on " +
                          accel->label() +
                          (accel->hal()->has_batches() ? " as one batch"
                                                       : " one launch at a time (the driver has no batches)") +
                          "; tensors crossing its edges: " + std::to_string(t.in.size()) + " in (" +
                          TensorNames(interpreter, t.in) + "), " + std::to_string(t.out.size()) + " out (" +
                          TensorNames(interpreter, t.out) + "); " + std::to_string(t.internal.size()) +
                          " stay on the device" +
                          ((accel->info().flags & KILN_HAL_DEVICE_HOST_SHARED_MEMORY)
                               ? " (host-shared memory: aligned tensors are not copied at all)"
                               : "");
    plan.push_back({KILN_DECISION_PARTITION, "partition " + std::to_string(p), message});
  }
  std::string key;
  for (const Decision& d : plan) key += d.message + "\n";
  if (key == *recorded) return;
  *recorded = key;
  for (Decision& d : plan) interpreter->decisions().Add(d.kind, std::move(d.subject), std::move(d.message));
}

KilnStatus KernelPartitionInvoke(Interpreter* interpreter, const KernelPartition& partition) {
  auto run_each = [&]() -> KilnStatus {
    for (int n = partition.first; n <= partition.last; ++n) {
      if (KilnStatus s = KernelOpInvoke(interpreter, interpreter->node(n)); s != kKilnOk) {
        interpreter->ReportError("Node number %d (%s) failed to invoke.", n,
                                 NodeOpName(*interpreter->node(n)).c_str());
        return s;
      }
    }
    return kKilnOk;
  };
  DeviceSet* devices = interpreter->devices();
  KernelDevice* device = devices != nullptr ? devices->accelerator() : nullptr;
  if (device == nullptr) return run_each();
  const std::string what = "partition of nodes " + std::to_string(partition.first) + " to " +
                           std::to_string(partition.last);

  // 1. The runtime's half: plans (argument errors are the caller's, not the driver's) and device scripts.
  struct Step {
    Node* node;
    KernelNode* state;
    DeviceScript* script = nullptr;
    ForEachPlan plan;
  };
  std::vector<Step> steps;
  for (int n = partition.first; n <= partition.last; ++n) {
    Node* node = interpreter->node(n);
    auto* state = static_cast<KernelNode*>(node->user_data);
    if (state == nullptr || !state->script->KernelOnAccelerator(node->op->kernel_index)) return run_each();
    Step step{node, state, nullptr, {}};
    std::vector<const KilnTensor*> inputs;
    for (int index : node->inputs) inputs.push_back(interpreter->tensor(index));
    KilnTensor* output = node->outputs.empty() ? nullptr : interpreter->tensor(node->outputs[0]);
    KilnStatus s = PlanForEach(state->script->module(), node->op->kernel_index, inputs.data(),
                               static_cast<int>(inputs.size()), output, nullptr, devices->cpu(), &step.plan);
    // Launched here rather than through ForEach, so the pointer globals are checked here.
    if (s == kKilnOk) s = state->script->CheckKernelBindings(node->op->kernel_index);
    if (s != kKilnOk) {
      interpreter->ReportError("Node number %d (%s) failed to invoke.", n, NodeOpName(*node).c_str());
      return s;
    }
    step.script = state->script->PrepareAccelerator();
    if (step.script == nullptr) return run_each();
    steps.push_back(std::move(step));
  }

  // 2. Buffers: one per tensor, shared by every node that uses it. Tensors produced inside are neither
  // uploaded nor (unless read after the partition) downloaded.
  const PartitionTensors classes = ClassifyTensors(interpreter, partition);
  const std::set<int> downloads(classes.out.begin(), classes.out.end());
  std::set<int> produced;
  for (const Step& step : steps) produced.insert(step.node->outputs.begin(), step.node->outputs.end());
  std::map<const KilnTensor*, std::unique_ptr<TensorBuffer>> buffers;
  KilnStatus status = kKilnOk;
  auto fail = [&](KilnStatus s, const std::string& during) {
    status = s;
    steps.front().state->script->AcceleratorFailed(what + " (" + during + ")", s);
  };
  for (const Step& step : steps) {
    std::vector<int> indices = step.node->inputs;
    indices.insert(indices.end(), step.node->outputs.begin(), step.node->outputs.end());
    for (int index : indices) {
      const KilnTensor* t = interpreter->tensor(index);
      if (t == nullptr || buffers.count(t)) continue;
      auto buffer = std::make_unique<TensorBuffer>(device, t, downloads.count(index) > 0);
      if (KilnStatus s = buffer->Acquire(/*upload=*/!produced.count(index)); s != kKilnOk) {
        fail(s, "creating a buffer for tensor '" + t->name + "'");
        break;
      }
      buffers[t] = std::move(buffer);
    }
    if (status != kKilnOk) break;
  }

  // 3. The launches: recorded into one batch when the driver has batches, else launched one by one.
  const KilnHalDriver& d = device->driver();
  KilnHalBatch* batch = nullptr;
  if (status == kKilnOk && device->hal()->has_batches()) {
    if (KilnStatus s = d.batch_create(device->device(), &batch); s != kKilnOk || batch == nullptr) {
      batch = nullptr;
      fail(s != kKilnOk ? s : kKilnDelegateError, "batch_create");
    }
  }
  for (size_t k = 0; k < steps.size() && status == kKilnOk; ++k) {
    const Step& step = steps[k];
    if (KilnStatus s = step.script->UploadBindings(); s != kKilnOk) {
      fail(s, "uploading bound allocations");
      break;
    }
    for (const LaunchGeometry& g : step.plan.launches) {
      if (step.plan.empty) break;
      const std::vector<KilnHalBufferView> views = LaunchViews(
          g, step.plan.element_sizes, [&](size_t t) { return buffers[step.plan.tensors[t]]->get(); });
      const KilnHalForEachDesc desc = ForEachLaunch(step.plan, g, views);
      const KilnStatus s = batch != nullptr ? d.batch_record_for_each(batch, step.script->handle(), &desc)
                                            : d.launch_for_each(step.script->handle(), &desc);
      if (s != kKilnOk) {
        fail(s, std::string(batch != nullptr ? "recording" : "launching") + " node " +
                    std::to_string(step.node->index) + ", " + OpLabel(*step.node));
        break;
      }
    }
  }
  if (batch != nullptr) {
    if (status == kKilnOk) {
      KilnHalFence* fence = nullptr;
      KilnStatus s = d.batch_submit(batch, &fence);
      if (s == kKilnOk && fence != nullptr) {
        bool done = false;
        s = d.fence_wait(fence, UINT64_MAX, &done);
        if (s == kKilnOk && !done) s = kKilnDelegateError;
        d.fence_destroy(fence);
      } else if (s == kKilnOk) {
        s = kKilnDelegateError;
      }
      if (s != kKilnOk) fail(s, "the submitted batch");
    }
    d.batch_destroy(batch);
  }

  // 4. The edges out: tensors read after the partition, and bound allocations the device holds copies of.
  if (status == kKilnOk) {
    for (auto& [tensor, buffer] : buffers) {
      if (KilnStatus s = buffer->Finish(); s != kKilnOk) {
        fail(s, "reading back tensor '" + tensor->name + "'");
        break;
      }
    }
  }
  for (size_t k = 0; k < steps.size() && status == kKilnOk; ++k) {
    if (KilnStatus s = steps[k].script->DownloadBindings(); s != kKilnOk) fail(s, "reading back bound allocations");
  }
  buffers.clear();
  if (status == kKilnOk) {
    for (const Step& step : steps) step.state->script->AcceleratorWorkDone();
    return kKilnOk;
  }
  // The partition's inputs were never written, so the CPU can redo all of it.
  return run_each();
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
