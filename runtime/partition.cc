// Partitions: consecutive nodes whose kernels run on the driver device, run together as one batch with copies
// only at the partition's edges. Planned after Prepare, run by the interpreter in place of those nodes.
// Reaches drivers only through the device layer (runtime/device/).
#include "runtime/partition.h"

#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "runtime/device/kernel_script.h"
#include "runtime/interpreter.h"
#include "runtime/kernel_op.h"

namespace kiln {
namespace {

std::string NodeOpName(const Node& node) {
  return node.op != nullptr                              ? node.op->DisplayName()
         : node.desc->builtin_code == kKilnBuiltinCustom ? node.desc->custom_name
                                                         : "?";
}

// The kernel nodes of a partition may use the driver device now.
bool OnAccelerator(const Node& node) {
  KernelScript* script = KernelOpScript(node);
  return script != nullptr && script->KernelOnAccelerator(KernelBindingOf(node.op)->kernel_index);
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

PartitionTensors ClassifyTensors(Interpreter* interpreter, const Partition& p) {
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

void PlanPartitions(Interpreter* interpreter, std::vector<Partition>* partitions, std::string* recorded) {
  partitions->clear();
  const std::vector<Node>& nodes = interpreter->nodes();
  // A node reads its inputs bound to globals through the host's copy of them (bound before the partition
  // runs), so one produced earlier in the same partition, not yet read back, starts a new partition.
  auto reads_bound_from = [&](const Node& node, const Partition& p) {
    for (int t : KernelOpBoundInputs(node)) {
      for (int n = p.first; n <= p.last; ++n) {
        for (int out : nodes[n].outputs) {
          if (out == t) return true;
        }
      }
    }
    return false;
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!OnAccelerator(nodes[i]) || !interpreter->DynamicTensorOf(nodes[i]).empty()) continue;
    if (!partitions->empty() && partitions->back().last == static_cast<int>(i) - 1 &&
        !reads_bound_from(nodes[i], partitions->back())) {
      partitions->back().last = static_cast<int>(i);
    } else {
      partitions->push_back({static_cast<int>(i), static_cast<int>(i)});
    }
  }
  // What --explain shows: every node, then every partition. Recorded again only when it changed.
  std::vector<Decision> plan;
  std::vector<int> partition_of(nodes.size(), -1);
  for (size_t p = 0; p < partitions->size(); ++p) {
    for (int n = (*partitions)[p].first; n <= (*partitions)[p].last; ++n)
      partition_of[n] = static_cast<int>(p);
  }
  DeviceSet* devices = nullptr;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = nodes[i];
    const std::string subject = "node " + std::to_string(i);
    std::string where;
    if (const KernelBinding* binding = KernelBindingOf(node.op)) {
      if (devices == nullptr) devices = interpreter->devices();
      const std::string label = KernelOpLabel(node);
      if (partition_of[i] >= 0) {
        where = label + " runs on " + devices->accelerator()->label() + ", in partition " +
                std::to_string(partition_of[i]);
      } else if (const std::string dynamic = interpreter->DynamicTensorOf(node); !dynamic.empty()) {
        where = label + " runs on the host, not in a partition: " + dynamic;
      } else if (KernelOpScript(node) == nullptr || devices == nullptr) {
        where = label + " has no script (its Init failed)";
      } else {
        const ModulePlacement& placement = devices->Place(binding->module);
        std::string reason = placement.kernel_reason[binding->kernel_index];
        if (reason.empty()) reason = "the driver device failed earlier";
        where = label + " runs on " + devices->cpu()->label() + ": " + reason;
      }
    } else if (node.op != nullptr && node.op->is_custom()) {
      where = "node " + std::to_string(i) + " (" + NodeOpName(node) +
              ") runs on the host: a custom op with C callbacks";
    } else {
      const std::string& placement = interpreter->host_placement(static_cast<int>(i));
      where = "node " + std::to_string(i) + " (" + NodeOpName(node) + ") runs on the host: builtin op" +
              (placement.empty() ? "" : ", " + placement);
    }
    plan.push_back({kKilnDecisionNode, subject, where});
  }
  for (size_t p = 0; p < partitions->size(); ++p) {
    const Partition& part = (*partitions)[p];
    const PartitionTensors t = ClassifyTensors(interpreter, part);
    KernelDevice* accel = devices->accelerator();
    std::string message =
        "partition " + std::to_string(p) + ": node" + (part.first == part.last ? " " : "s ") +
        std::to_string(part.first) + (part.first == part.last ? "" : " to " + std::to_string(part.last)) +
        (part.first == part.last ? " runs on " : " run on ") + accel->label() +
        (accel->hal()->has_batches() ? " as one batch"
                                     : " one launch at a time (the driver has no batches)") +
        "; tensors crossing its edges: " + std::to_string(t.in.size()) + " in (" +
        TensorNames(interpreter, t.in) + "), " + std::to_string(t.out.size()) + " out (" +
        TensorNames(interpreter, t.out) + "); " + std::to_string(t.internal.size()) + " stay on the device" +
        ((accel->info().flags & KILN_HAL_DEVICE_HOST_SHARED_MEMORY)
             ? " (host-shared memory: aligned tensors are not copied at all)"
             : "");
    plan.push_back({kKilnDecisionPartition, "partition " + std::to_string(p), message});
  }
  std::string key;
  for (const Decision& d : plan) key += d.message + "\n";
  if (key == *recorded) return;
  *recorded = key;
  for (Decision& d : plan) interpreter->decisions().Add(d.kind, std::move(d.subject), std::move(d.message));
}

KilnStatus InvokePartition(Interpreter* interpreter, const Partition& partition) {
  auto run_each = [&]() -> KilnStatus {
    for (int n = partition.first; n <= partition.last; ++n) {
      Node* node = interpreter->node(n);
      if (KilnStatus s = node->op->Invoke(interpreter->AsContext(), reinterpret_cast<KilnOpaqueNode*>(node));
          s != kKilnOk) {
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
  const std::string what =
      "partition of nodes " + std::to_string(partition.first) + " to " + std::to_string(partition.last);

  // 1. The runtime's half: plans (argument errors are the caller's, not the driver's) and device scripts.
  struct Step {
    Node* node;
    KernelScript* kernel_script;
    int kernel_index;
    DeviceScript* script = nullptr;
    ForEachPlan plan;
  };
  std::vector<Step> steps;
  for (int n = partition.first; n <= partition.last; ++n) {
    Node* node = interpreter->node(n);
    KernelScript* kernel_script = KernelOpScript(*node);
    const int kernel_index = kernel_script != nullptr ? KernelBindingOf(node->op)->kernel_index : -1;
    if (kernel_script == nullptr || !kernel_script->KernelOnAccelerator(kernel_index)) return run_each();
    Step step{node, kernel_script, kernel_index, nullptr, {}};
    const std::vector<const KilnTensor*> inputs = KernelOpCellInputs(interpreter, *node);
    KilnTensor* output = node->outputs.empty() ? nullptr : interpreter->tensor(node->outputs[0]);
    KilnStatus s = BindKernelOpInputs(interpreter, *node);
    if (s == kKilnOk)
      s = PlanForEach(kernel_script->module(), kernel_index, inputs.data(), static_cast<int>(inputs.size()),
                      output, nullptr, devices->cpu(), &step.plan);
    // Launched here rather than through ForEach, so the pointer globals are checked here.
    if (s == kKilnOk) s = kernel_script->CheckKernelBindings(kernel_index);
    if (s != kKilnOk) {
      interpreter->ReportError("Node number %d (%s) failed to invoke.", n, NodeOpName(*node).c_str());
      return s;
    }
    step.script = kernel_script->PrepareAccelerator();
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
  // A failure of one node's launch quarantines that node's kernel; any other counts against the device.
  auto fail = [&](KilnStatus s, const std::string& during, const Step* step = nullptr, bool hung = false) {
    status = s;
    if (step != nullptr) {
      step->kernel_script->KernelFailed(/*reduction=*/false, step->kernel_index, what + " (" + during + ")", s);
    } else {
      steps.front().kernel_script->AcceleratorFailed(what + " (" + during + ")", s, hung);
    }
  };
  for (const Step& step : steps) {
    // The tensors the launches map over; inputs bound to globals reach the device through the script's
    // binding.
    std::vector<int> indices;
    const KernelBinding* binding = KernelBindingOf(step.node->op);
    for (size_t i = 0; i < step.node->inputs.size(); ++i) {
      if (binding->GlobalOfInput(static_cast<int>(i)) == nullptr) indices.push_back(step.node->inputs[i]);
    }
    indices.insert(indices.end(), step.node->outputs.begin(), step.node->outputs.end());
    for (int index : indices) {
      const KilnTensor* t = interpreter->tensor(index);
      if (t == nullptr || buffers.count(t)) continue;
      auto buffer = std::make_unique<TensorBuffer>(device, t, downloads.count(index) > 0);
      // A tensor the node's script holds a bound copy of is that copy (one tensor, one memory).
      if (KilnHalBuffer* bound = step.script->BoundCopy(t)) {
        buffer->Share(bound);
      } else if (KilnStatus s = buffer->Acquire(/*upload=*/!produced.count(index)); s != kKilnOk) {
        fail(s, "creating a buffer for tensor '" + t->name + "'");
        break;
      }
      buffers[t] = std::move(buffer);
    }
    if (status != kKilnOk) break;
  }

  // 3. The launches: recorded into one batch when the driver has batches, else launched one by one.
  DeviceBatch batch(device);
  if (status == kKilnOk) {
    if (KilnStatus s = batch.Begin(); s != kKilnOk) fail(s, "batch_create");
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
      if (KilnStatus s = batch.ForEach(step.script, desc); s != kKilnOk) {
        fail(s,
             std::string(batch.recording() ? "recording" : "launching") + " node " + std::to_string(step.node->index) +
                 ", " + KernelOpLabel(*step.node),
             &step);
        break;
      }
    }
  }
  if (status == kKilnOk) {
    if (KilnStatus s = batch.Submit(); s != kKilnOk) fail(s, "the submitted batch", nullptr, batch.abandoned());
  }
  batch.Release();
  if (batch.abandoned()) {
    // The driver may still run the batch: its buffers are left to it, kept (never freed) for the life of the
    // process. Once per hung device: all later work of this interpreter runs on the CPU.
    static std::mutex abandoned_mutex;
    static auto* abandoned = new std::vector<std::unique_ptr<TensorBuffer>>();
    std::lock_guard<std::mutex> lock(abandoned_mutex);
    for (auto& entry : buffers) abandoned->push_back(std::move(entry.second));
    buffers.clear();
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
    if (KilnStatus s = steps[k].script->DownloadBindings(); s != kKilnOk)
      fail(s, "reading back bound allocations");
  }
  buffers.clear();
  if (status == kKilnOk) {
    for (const Step& step : steps) step.kernel_script->AcceleratorWorkDone();
    return kKilnOk;
  }
  // The partition's inputs were never written, so the CPU can redo all of it.
  DeviceSet::CpuOnly on_cpu(devices);
  return run_each();
}

}  // namespace kiln
