// The interpreter (interpreter.h): op resolution, Init and Prepare, memory planning, partitions and Invoke.

#include "runtime/interpreter.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>
#include <thread>

#include "runtime/arena_planner.h"
#include "runtime/device/device_set.h"
#include "runtime/model/limits.h"

namespace kiln {
namespace {

KilnOpaqueNode* AsOpaqueNode(Node* node) { return reinterpret_cast<KilnOpaqueNode*>(node); }

// As KilnOpaqueTensorSetAllocationTypeToDynamic: memory comes with the shape (Interpreter::EnsureDynamicMemory).
void MakeDynamic(KilnTensor* t) {
  t->allocation = kKilnDynamic;
  t->data = nullptr;
}

}  // namespace

std::unique_ptr<Interpreter> Interpreter::CreateFor(std::shared_ptr<const ModelData> model,
                                                    const KilnInterpreterOptions& options,
                                                    const BuiltinOpTable& builtins, HostEngineFactory engine,
                                                    Interpreter* root, int index, KilnStatus* status) {
  std::unique_ptr<Interpreter> interpreter(new Interpreter());
  interpreter->model_ = std::move(model);
  interpreter->options_ = options;
  interpreter->builtins_ = &builtins;
  interpreter->engine_factory_given_ = engine;
  interpreter->engine_factory_ = options.use_reference_kernels ? nullptr : engine;
  interpreter->root_ = root != nullptr ? root : interpreter.get();
  interpreter->subgraph_index_ = index;
  *status = kKilnOk;
  if (interpreter->model_->desc.subgraphs.empty()) {
    interpreter->ReportError("model has no subgraphs");
    *status = kKilnInvalidModel;
    return nullptr;
  }
  interpreter->graph_ = &interpreter->model_->desc.subgraphs[static_cast<size_t>(index)];
  if (!interpreter->BuildTensors()) {
    *status = kKilnOutOfMemory;
    return nullptr;
  }
  if (!interpreter->ResolveBuiltins(status)) return nullptr;
  return interpreter;
}

std::unique_ptr<Interpreter> Interpreter::Create(std::shared_ptr<const ModelData> model,
                                                 const KilnInterpreterOptions& options,
                                                 const BuiltinOpTable& builtins, HostEngineFactory engine,
                                                 KilnStatus* status) {
  std::unique_ptr<Interpreter> interpreter =
      CreateFor(std::move(model), options, builtins, engine, nullptr, 0, status);
  if (interpreter == nullptr) return nullptr;
  // gpu-only is a promise about the whole interpreter, so it is checked now rather than at the first kernel.
  if (options.device_policy == kKilnDeviceGpuOnly && interpreter->devices() == nullptr) {
    *status = kKilnUnsupported;
    return nullptr;
  }
  return interpreter;
}

Interpreter::~Interpreter() {
  subgraphs_.clear();  // the children first: they use this root's devices
  host_partitions_.clear();  // before the engine whose threads they use
  engine_.reset();
  FreeNodes();
}

int Interpreter::num_threads() const {
  if (options_.num_threads > 0) return options_.num_threads;
  const unsigned cores = std::thread::hardware_concurrency();
  return cores > 0 ? static_cast<int>(cores) : 1;
}

bool Interpreter::IsKilnBuiltin(const Node& node) const {
  if (node.op == nullptr || node.desc->builtin_code == kKilnBuiltinCustom) return false;
  for (const BuiltinOpRegistration& builtin : *builtins_) {
    if (builtin.op == node.op) return true;
  }
  return false;
}

Interpreter* Interpreter::Subgraph(int index) {
  const int count = static_cast<int>(model_->desc.subgraphs.size());
  if (index < 0 || index >= count) {
    ReportError("subgraph %d does not exist (the model has %d subgraphs)", index, count);
    return nullptr;
  }
  if (index == 0) return root_;
  Interpreter* root = root_;
  if (root->subgraphs_.size() < static_cast<size_t>(count)) root->subgraphs_.resize(static_cast<size_t>(count));
  std::unique_ptr<Interpreter>& child = root->subgraphs_[static_cast<size_t>(index)];
  if (child == nullptr) {
    KilnStatus status = kKilnOk;
    child = CreateFor(root->model_, root->options_, *root->builtins_, root->engine_factory_given_, root, index,
                      &status);
    if (child == nullptr) {
      ReportError("subgraph %d ('%s') could not be built", index,
                  model_->desc.subgraphs[static_cast<size_t>(index)].name.c_str());
      return nullptr;
    }
  }
  return child.get();
}

int32_t Interpreter::ResourceId(const std::string& container, const std::string& shared_name) {
  Interpreter* root = root_;
  const int32_t next = static_cast<int32_t>(root->resources_.size());
  auto [it, added] = root->resource_ids_.emplace(std::make_pair(container, shared_name), next);
  if (added) {
    root->resources_.emplace_back();
    root->resources_.back().name = container + "/" + shared_name;
  }
  return it->second;
}

subgraph_hook::ResourceVariable* Interpreter::Resource(int32_t id) {
  Interpreter* root = root_;
  if (id < 0 || static_cast<size_t>(id) >= root->resources_.size()) return nullptr;
  return &root->resources_[static_cast<size_t>(id)];
}

HostEngine* Interpreter::host_engine() {
  if (root_ != this) return root_->host_engine();  // one engine (one worker pool) for the whole interpreter
  if (engine_ == nullptr && engine_factory_ != nullptr) engine_ = engine_factory_(num_threads());
  return engine_.get();
}

DeviceSet* Interpreter::devices() {
  if (root_ != this) return root_->devices();
  if (devices_ == nullptr && !devices_failed_) {
    DriverOptions options;
    options.policy = static_cast<DevicePolicy>(options_.device_policy);
    options.driver_path = options_.driver_path;
    options.allow_any_dependency = options_.allow_any_driver_dependency;
    options.num_threads = options_.num_threads;
    options.batch_timeout_ns = static_cast<uint64_t>(options_.device_timeout_ms) * 1000000u;
    options.reporter = options_.reporter;
    options.reporter_user_data = options_.reporter_user_data;
    KilnStatus status = kKilnOk;
    devices_ = DeviceSet::Open(options, &decisions_, &status);
    devices_failed_ = devices_ == nullptr;  // tried once: the decisions say why
  }
  return devices_.get();
}

void Interpreter::FreeNodes() {
  for (Node& node : nodes_) {
    if (!node.initialized || node.op == nullptr) continue;
    node.op->Free(AsContext(), node.user_data);
    node.initialized = false;
    node.user_data = nullptr;
  }
}

void Interpreter::ReportError(const char* format, ...) {
  va_list args;
  va_start(args, format);
  ReportErrorV(format, args);
  va_end(args);
}

void Interpreter::ReportErrorV(const char* format, va_list args) {
  if (subgraph_index_ == 0) {
    ReportV(options_.reporter, options_.reporter_user_data, format, args);
    return;
  }
  // A child's messages (its ops', its nodes') say which subgraph they come from.
  va_list copy;
  va_copy(copy, args);
  const int length = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string message(length > 0 ? static_cast<size_t>(length) : 0, '\0');
  if (length > 0) std::vsnprintf(message.data(), message.size() + 1, format, args);
  Report(options_.reporter, options_.reporter_user_data, "subgraph %d ('%s'): %s", subgraph_index_,
         graph_ != nullptr ? Printable(graph_->name).c_str() : "", message.c_str());
}

bool Interpreter::BuildTensors() {
  tensors_.reserve(graph_->tensors.size());
  for (const TensorDesc& desc : graph_->tensors) {
    auto tensor = std::make_unique<KilnTensor>();
    tensor->type = desc.type;
    tensor->dims = desc.shape;
    tensor->name = desc.name;
    tensor->is_variable = desc.is_variable;
    tensor->scales = desc.quantization.scale;
    tensor->zero_points = desc.quantization.zero_point;
    tensor->quantized_dimension = desc.quantization.quantized_dimension;
    if (!tensor->scales.empty()) {
      tensor->quant.scale = tensor->scales[0];
      tensor->quant.zero_point = tensor->zero_points.empty() ? 0 : tensor->zero_points[0];
    }
    std::string error;
    if (!SetTensorShape(tensor.get(), desc.shape.data(), static_cast<int>(desc.shape.size()), &error)) {
      ReportError("tensor %zu ('%s'): %s", tensors_.size(), desc.name.c_str(), error.c_str());
      return false;
    }
    if (desc.data != nullptr && desc.is_variable) {
      // As LiteRT's InterpreterBuilder: a variable's initial value would be its buffer, which neither supports.
      ReportError(
          "tensor %zu ('%s') is a variable tensor with a buffer, which is not supported (LiteRT refuses it "
          "too): a variable starts at zero",
          tensors_.size(), desc.name.c_str());
      return false;
    }
    if (desc.data != nullptr) {
      tensor->allocation = kKilnMmapRo;
      tensor->data = const_cast<uint8_t*>(desc.data);  // never written: kKilnMmapRo tensors are read-only
      tensor->bytes = desc.data_size;
    } else if (desc.is_variable) {
      tensor->allocation = kKilnArenaRwPersistent;
      tensor->owned.reset(AlignedAlloc(tensor->bytes));
      if (tensor->owned == nullptr) {
        ReportError("out of memory for variable tensor %zu ('%s', %zu bytes)", tensors_.size(),
                    desc.name.c_str(), tensor->bytes);
        return false;
      }
      std::memset(tensor->owned.get(), 0, tensor->bytes);
      tensor->data = tensor->owned.get();
    } else {
      tensor->allocation = kKilnArenaRw;
    }
    tensors_.push_back(std::move(tensor));
  }
  inputs_ = graph_->inputs;
  outputs_ = graph_->outputs;
  return true;
}

const KilnOperator* Interpreter::FindOperator(const OperatorDesc& desc) const {
  for (auto it = options_.operators.rbegin(); it != options_.operators.rend(); ++it) {
    const KilnOperator* op = *it;
    if (op == nullptr || op->builtin_code != desc.builtin_code || op->version != desc.version) continue;
    if (desc.builtin_code == kKilnBuiltinCustom && op->custom_name != desc.custom_name) continue;
    return op;
  }
  for (const BuiltinOpRegistration& builtin : *builtins_) {
    if (builtin.builtin_code == desc.builtin_code && desc.version >= builtin.min_version &&
        desc.version <= builtin.max_version) {
      // The custom ops Kiln serves itself (as LiteRT's builtin resolver does), after the application's.
      if (desc.builtin_code == kKilnBuiltinCustom &&
          (builtin.op == nullptr || builtin.op->custom_name != desc.custom_name)) {
        continue;
      }
      return builtin.op;
    }
  }
  return nullptr;
}

bool Interpreter::ResolveBuiltins(KilnStatus* status) {
  nodes_.resize(graph_->operators.size());
  bool ok = true;
  for (size_t i = 0; i < graph_->operators.size(); ++i) {
    const OperatorDesc& desc = graph_->operators[i];
    Node& node = nodes_[i];
    node.index = static_cast<int>(i);
    node.desc = &desc;
    node.inputs = desc.inputs;
    node.outputs = desc.outputs;
    if (desc.builtin_code == kKilnBuiltinCustom) continue;  // resolved by AllocateTensors
    node.op = FindOperator(desc);
    for (const BuiltinOpRegistration& builtin : *builtins_) {
      if (node.op != nullptr && builtin.op == node.op) {
        node.output_type_from_input = builtin.output_type_from_input;
      }
    }
    if (node.op != nullptr) continue;
    ok = false;
    const std::string name = BuiltinOperatorName(desc.builtin_code);
    int min_version = std::numeric_limits<int>::max(), max_version = 0;
    for (const BuiltinOpRegistration& builtin : *builtins_) {
      if (builtin.builtin_code != desc.builtin_code) continue;
      min_version = std::min(min_version, builtin.min_version);
      max_version = std::max(max_version, builtin.max_version);
    }
    if (max_version == 0) {
      ReportError(
          "Unsupported builtin op %s version %d at node %zu: Kiln does not implement %s; register one "
          "with KilnInterpreterOptionsAddOperator.",
          name.c_str(), desc.version, i, name.c_str());
    } else {
      ReportError("Unsupported builtin op %s version %d at node %zu: Kiln supports versions %d to %d.",
                  name.c_str(), desc.version, i, min_version, max_version);
    }
  }
  if (!ok) *status = kKilnUnsupported;
  return ok;
}

KilnStatus Interpreter::ResolveCustomOps() {
  KilnStatus status = kKilnOk;
  for (Node& node : nodes_) {
    if (node.op != nullptr) continue;
    node.op = FindOperator(*node.desc);
    if (node.op == nullptr) {
      ReportError("Encountered unresolved custom op: %s.", node.desc->custom_name.c_str());
      status = kKilnUnresolvedOps;
    }
  }
  return status;
}

std::string Interpreter::NodeName(const Node& node) const {
  if (node.desc->builtin_code == kKilnBuiltinCustom) return node.desc->custom_name;
  return BuiltinOperatorName(node.desc->builtin_code);
}

KilnStatus Interpreter::ResizeInputTensor(int input_index, const int* dims, int num_dims) {
  if (input_index < 0 || input_index >= static_cast<int>(inputs_.size())) {
    ReportError("ResizeInputTensor: input index %d out of range (the model has %zu inputs)", input_index,
                inputs_.size());
    return kKilnInvalidArgument;
  }
  if (num_dims < 0 || (num_dims > 0 && dims == nullptr)) {
    ReportError("ResizeInputTensor: invalid dims for input %d", input_index);
    return kKilnInvalidArgument;
  }
  KilnTensor* t = tensor(inputs_[input_index]);
  std::string error;
  if (!SetTensorShape(t, dims, num_dims, &error)) {
    ReportError("ResizeInputTensor: input %d ('%s'): %s", input_index, t->name.c_str(), error.c_str());
    return kKilnInvalidArgument;
  }
  state_ = State::kNeedsPrepare;
  return kKilnOk;
}

KilnStatus Interpreter::AllocateTensors() {
  if (state_ == State::kInvoking || state_ == State::kPreparing) {
    ReportError("AllocateTensors called from inside an op");
    return kKilnError;
  }
  state_ = State::kNeedsPrepare;
  RestoreReleasedFolds();
  if (KilnStatus s = ResolveCustomOps(); s != kKilnOk) return s;

  for (Node& node : nodes_) {
    if (node.initialized) continue;
    const char* buffer;
    size_t length;
    if (node.desc->builtin_code == kKilnBuiltinCustom) {
      buffer = reinterpret_cast<const char*>(node.desc->custom_options);
      length = node.desc->custom_options_size;
    } else {
      buffer = static_cast<const char*>(node.desc->builtin_data.get());
      length = 0;
    }
    node.user_data = node.op->Init(AsContext(), buffer, length);
    node.initialized = true;
  }

  state_ = State::kPreparing;
  dynamic_reason_.assign(nodes_.size(), std::string());
  for (Node& node : nodes_) {
    if (KilnStatus s = TakeOutputType(node); s != kKilnOk) {
      state_ = State::kNeedsPrepare;
      return s;
    }
    if (MarkDynamicNode(node)) continue;  // prepared at Invoke, once its inputs have their shapes
    const KilnStatus s = node.op->Prepare(AsContext(), AsOpaqueNode(&node));
    if (s != kKilnOk) {
      ReportError("Node number %d (%s) failed to prepare.", node.index, NodeName(node).c_str());
      state_ = State::kNeedsPrepare;
      return s == kKilnUnresolvedOps ? s : kKilnError;
    }
  }
  FoldConstants();
  PlanHostPartitions();
  if (KilnStatus s = PlanAndAllocate(); s != kKilnOk) {
    state_ = State::kNeedsPrepare;
    return s;
  }
  for (size_t p = 0; p < host_partitions_.size(); ++p) {
    HostPartition& part = host_partitions_[p];
    std::string error;
    if (!part.run->Bind(this, &error)) {
      ReportError("Nodes %d to %d (host run %zu on %s) failed to prepare: %s", part.first, part.last, p,
                  host_engine()->name(), error.c_str());
      state_ = State::kNeedsPrepare;
      return kKilnError;
    }
  }
  ReleasePackedConstants();
  PlanDevicePartitions();
  state_ = State::kReady;
  ResetVariableTensors();  // as LiteRT: every AllocateTensors starts the state afresh
  return kKilnOk;
}

KilnStatus Interpreter::ResetVariableTensors() {
  if (state_ == State::kInvoking || state_ == State::kPreparing) {
    ReportError("ResetVariableTensors called from inside an op");
    return kKilnError;
  }
  for (const std::unique_ptr<KilnTensor>& t : tensors_) {
    if (!t->is_variable || t->allocation != kKilnArenaRwPersistent || t->data == nullptr) continue;
    // Zero, or an int8 variable's zero point (LiteRT's ResetVariableTensor).
    const int value = t->type == kKilnInt8 ? t->quant.zero_point : 0;
    std::memset(t->data, value, t->bytes);
  }
  return kKilnOk;
}

void Interpreter::PlanDevicePartitions() {
  planned_faults_ = devices_ != nullptr ? devices_->faults() : 0;
  PlanPartitions(this, &partitions_, &recorded_plan_);
  partition_of_node_.assign(nodes_.size(), -1);
  for (size_t p = 0; p < partitions_.size(); ++p) partition_of_node_[partitions_[p].first] = static_cast<int>(p);
}

KilnStatus Interpreter::TakeOutputType(const Node& node) {
  const int from = node.output_type_from_input;
  const int input_index = from >= 0 && static_cast<size_t>(from) < node.inputs.size()
                              ? node.inputs[static_cast<size_t>(from)]
                              : -1;
  if (input_index < 0 || node.outputs.empty()) return kKilnOk;
  const KilnTensor* input = tensors_[static_cast<size_t>(input_index)].get();
  KilnTensor* output = tensors_[static_cast<size_t>(node.outputs[0])].get();
  if (output->type == input->type) return kKilnOk;
  // Only a tensor the op itself writes may change: constants and variables keep what the model says, and the
  // op's own type check reports the mismatch.
  if (output->allocation == kKilnMmapRo || output->allocation == kKilnArenaRwPersistent) return kKilnOk;
  const KilnType declared = output->type;
  output->type = input->type;
  std::string error;
  if (!SetTensorShape(output, output->dims.data(), static_cast<int>(output->dims.size()), &error)) {
    output->type = declared;
    ReportError("Node number %d (%s): output '%s' as %s: %s", node.index, NodeName(node).c_str(),
                output->name.c_str(), TypeName(input->type), error.c_str());
    return kKilnError;
  }
  return kKilnOk;
}

void Interpreter::FoldConstants() {
  folded_.resize(nodes_.size(), false);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    Node& node = nodes_[i];
    if (folded_[i] || !IsKilnBuiltin(node) || node.desc->builtin_code != kKilnBuiltinDequantize) continue;
    if (node.inputs.size() != 1 || node.outputs.size() != 1 || node.inputs[0] < 0) continue;
    const KilnTensor* input = tensors_[node.inputs[0]].get();
    KilnTensor* output = tensors_[node.outputs[0]].get();
    if (input->allocation != kKilnMmapRo || output->allocation != kKilnArenaRw) continue;
    output->owned.reset(AlignedAlloc(output->bytes));
    if (output->owned == nullptr) continue;  // not folded: it runs at Invoke as before
    output->data = output->owned.get();
    state_ = State::kInvoking;
    const KilnStatus s = node.op->Invoke(AsContext(), AsOpaqueNode(&node));
    state_ = State::kPreparing;
    if (s != kKilnOk) {
      output->owned.reset();
      output->data = nullptr;
      continue;
    }
    output->allocation = kKilnMmapRo;  // read-only from now on, like the model's own constants
    folded_[i] = true;
  }
}

void Interpreter::PlanHostPartitions() {
  host_partitions_.clear();
  host_partition_of_node_.assign(nodes_.size(), -1);
  host_placement_.assign(nodes_.size(), std::string());
  engine_internal_.assign(tensors_.size(), false);
  HostEngine* const engine = host_engine();
  std::vector<bool> supported(nodes_.size(), false);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& node = nodes_[i];
    if (!IsKilnBuiltin(node)) continue;
    if (folded_[i]) {
      host_placement_[i] = "folded: computed once at AllocateTensors from constants";
      supported[i] = true;  // runs nowhere, so it does not split the runs around it
      continue;
    }
    std::string reason;
    // A variable tensor (state kept across Invoke) is written in place by the reference kernel only: an engine
    // could fuse or reorder its write with the reads of the old value.
    const bool writes_variable = std::any_of(node.outputs.begin(), node.outputs.end(), [&](int t) {
      return t >= 0 && static_cast<size_t>(t) < tensors_.size() && tensors_[t]->is_variable;
    });
    if (writes_variable) {
      host_placement_[i] = "reference kernel (writes a variable tensor)";
    } else if (const std::string dynamic = DynamicTensorOf(node); !dynamic.empty()) {
      host_placement_[i] = "reference kernel (" + dynamic + ")";
    } else if (engine == nullptr) {
      host_placement_[i] = options_.use_reference_kernels ? "reference kernel (reference kernels asked for)"
                                                          : "reference kernel (no host engine in this build)";
    } else if (engine->Supports(*this, node, &reason)) {
      supported[i] = true;
    } else {
      host_placement_[i] = "reference kernel (" + std::string(engine->name()) + ": " + reason + ")";
    }
  }
  // Tensors read outside a run (or graph outputs, or variables) cross its edge; the rest stay inside it.
  std::set<int> graph_outputs(outputs_.begin(), outputs_.end());
  for (size_t start = 0; start < nodes_.size();) {
    if (!supported[start]) {
      ++start;
      continue;
    }
    size_t end = start;
    while (end + 1 < nodes_.size() && supported[end + 1]) ++end;
    const size_t next = end + 1;
    while (start < end && folded_[start]) ++start;  // a run starts and ends with a node that runs
    while (end > start && folded_[end]) --end;
    if (folded_[start]) {
      start = next;
      continue;
    }
    std::set<int> produced;
    for (size_t n = start; n <= end; ++n) produced.insert(nodes_[n].outputs.begin(), nodes_[n].outputs.end());
    for (size_t n = 0; n < nodes_.size(); ++n) {
      if (n >= start && n <= end) continue;
      for (int t : nodes_[n].inputs) produced.erase(t);
    }
    // Internal to the run: produced and read inside it only. A tensor nothing reads (a crafted model's dead
    // output) stays in the arena: an engine may drop a value without readers and leave its producer no memory.
    std::set<int> read_inside;
    for (size_t n = start; n <= end; ++n) read_inside.insert(nodes_[n].inputs.begin(), nodes_[n].inputs.end());
    std::vector<int> internal;
    for (int t : produced) {
      if (t >= 0 && read_inside.count(t) && !graph_outputs.count(t) && tensors_[t]->allocation == kKilnArenaRw) {
        internal.push_back(t);
      }
    }
    std::string error;
    std::unique_ptr<HostRun> run =
        engine->Build(this, static_cast<int>(start), static_cast<int>(end), internal, &error);
    const int index = static_cast<int>(host_partitions_.size());
    for (size_t n = start; n <= end; ++n) {
      if (folded_[n]) continue;
      const std::string kernel = run != nullptr ? run->KernelOf(static_cast<int>(n)) : std::string();
      host_placement_[n] =
          run != nullptr ? std::string(engine->name()) + ", in host run " + std::to_string(index) +
                               (kernel.empty() ? "" : ", on " + kernel)
                         : "reference kernel (" + std::string(engine->name()) + " could not build nodes " +
                               std::to_string(start) + " to " + std::to_string(end) + ": " + error + ")";
    }
    if (run != nullptr) {
      for (int t : internal) {
        engine_internal_[t] = true;
        tensors_[t]->data = nullptr;
      }
      host_partition_of_node_[start] = index;
      host_partitions_.push_back({static_cast<int>(start), static_cast<int>(end), std::move(run)});
    }
    start = next;
  }
}

size_t Interpreter::arena_bytes() const {
  size_t bytes = arena_bytes_;
  for (const HostPartition& part : host_partitions_) bytes += part.run->WorkingBytes();
  return bytes;
}

size_t Interpreter::naive_bytes() const {
  size_t bytes = naive_bytes_;
  for (size_t t = 0; t < engine_internal_.size(); ++t) {
    if (engine_internal_[t]) bytes += tensors_[t]->bytes;  // a tensor inside a host run, one buffer each
  }
  return bytes;
}

void Interpreter::ReleasePackedConstants() {
  released_model_bytes_ = 0;
  released_folded_bytes_ = 0;
  if (model_ == nullptr || model_->bytes == nullptr) return;
  // What each node's host run packed (nothing for a node outside the runs).
  std::vector<std::set<int>> packed(host_partitions_.size());
  std::set<int> pinned;
  std::vector<int> run_of(nodes_.size(), -1);
  for (size_t p = 0; p < host_partitions_.size(); ++p) {
    const std::vector<int> tensors = host_partitions_[p].run->PackedConstants();
    packed[p].insert(tensors.begin(), tensors.end());
    const std::vector<int> kept = host_partitions_[p].run->PinnedConstants();
    pinned.insert(kept.begin(), kept.end());
    for (int n = host_partitions_[p].first; n <= host_partitions_[p].last; ++n) run_of[n] = static_cast<int>(p);
  }
  // A constant whose every reader packed it, or is a folded node (done reading until the next
  // AllocateTensors), is read no more.
  std::map<int, bool> release;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    for (int t : nodes_[n].inputs) {
      if (t < 0) continue;
      const bool done = folded_[n] || (run_of[n] >= 0 && packed[static_cast<size_t>(run_of[n])].count(t) > 0);
      auto it = release.emplace(t, done).first;
      it->second = it->second && done;
    }
  }
  const std::set<int> graph_outputs(outputs_.begin(), outputs_.end());
  std::map<int, int> folded_producer;  // a folded node's output -> the node
  for (size_t n = 0; n < nodes_.size(); ++n) {
    if (folded_[n]) folded_producer[nodes_[n].outputs[0]] = static_cast<int>(n);
  }
  for (const auto& [t, done] : release) {
    KilnTensor* tensor = tensors_[static_cast<size_t>(t)].get();
    if (!done || tensor->allocation != kKilnMmapRo || tensor->data == nullptr || graph_outputs.count(t)) continue;
    if (auto it = folded_producer.find(t); it != folded_producer.end()) {
      // A folded constant only packed copies read: its memory goes, unless a run must keep it valid, and the
      // next AllocateTensors folds it again.
      if (pinned.count(t) || tensor->owned == nullptr) continue;
      released_folded_bytes_ += tensor->bytes;
      tensor->owned.reset();
      tensor->data = nullptr;
      fold_released_[static_cast<size_t>(it->second)] = true;
    } else {
      released_model_bytes_ += model_->bytes->ReleasePages(tensor->data, tensor->bytes);
    }
  }
}

void Interpreter::RestoreReleasedFolds() {
  fold_released_.resize(nodes_.size(), false);
  for (size_t n = 0; n < nodes_.size(); ++n) {
    if (!fold_released_[n]) continue;
    // As before the first AllocateTensors: an arena tensor with no memory, its node not folded.
    tensors_[static_cast<size_t>(nodes_[n].outputs[0])]->allocation = kKilnArenaRw;
    folded_[n] = false;
    fold_released_[n] = false;
  }
}

KilnStatus Interpreter::PlanAndAllocate() {
  const int num_nodes = static_cast<int>(nodes_.size());
  constexpr int kUnused = -1;
  std::vector<int> first(tensors_.size(), kUnused), last(tensors_.size(), kUnused);
  auto use = [&](int index, int at) {
    if (index < 0 || index >= static_cast<int>(tensors_.size())) return;
    if (tensors_[index]->allocation != kKilnArenaRw || engine_internal_[index]) return;
    if (first[index] == kUnused || at < first[index]) first[index] = at;
    last[index] = std::max(last[index], at);
  };
  // Graph inputs live through the whole Invoke, as in LiteRT: a caller may invoke again without setting them,
  // and reads them back after.
  for (int input : inputs_) use(input, 0), use(input, num_nodes);
  for (const Node& node : nodes_) {
    for (int t : node.inputs) use(t, node.index);
    for (int t : node.outputs) use(t, node.index);
    for (int t : node.temporaries) use(t, node.index);
  }
  // A host run is one step: the engine may fuse its nodes (an ADD writing straight into the RELU's output),
  // so every tensor crossing its edge lives through the whole run, and none shares memory with another.
  for (const HostPartition& run : host_partitions_) {
    for (int n = run.first; n <= run.last; ++n) {
      for (int t : nodes_[n].inputs) use(t, run.first), use(t, run.last);
      for (int t : nodes_[n].outputs) use(t, run.first), use(t, run.last);
    }
  }
  for (int output : outputs_) use(output, num_nodes);

  std::vector<ArenaRequest> requests;
  std::vector<int> request_tensor;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    if (first[i] == kUnused) continue;
    requests.push_back({tensors_[i]->bytes, first[i], last[i]});
    request_tensor.push_back(static_cast<int>(i));
  }
  ArenaPlan plan = PlanArena(requests, kTensorAlignment);
  arena_.reset();
  if (plan.arena_bytes > MaxTensorBytes()) {  // the one memory rule (model.h), before allocating
    ReportError("the tensor arena needs %zu bytes, more than the limit of %llu bytes", plan.arena_bytes,
                static_cast<unsigned long long>(MaxTensorBytes()));
    return kKilnOutOfMemory;
  }
  if (plan.arena_bytes > 0) {
    arena_.reset(AlignedAlloc(plan.arena_bytes));
    if (arena_ == nullptr) {
      ReportError("out of memory: the tensor arena needs %zu bytes", plan.arena_bytes);
      return kKilnOutOfMemory;
    }
  }
  for (size_t r = 0; r < requests.size(); ++r) {
    tensors_[request_tensor[r]]->data = static_cast<uint8_t*>(arena_.get()) + plan.offsets[r];
  }
  // Dynamic tensors get memory of their own, sized by what Prepare set (Invoke resizes them).
  for (size_t i = 0; i < tensors_.size(); ++i) {
    KilnTensor* t = tensors_[i].get();
    if (t->allocation == kKilnDynamic && !EnsureDynamicMemory(t)) return kKilnOutOfMemory;
  }
  arena_bytes_ = plan.arena_bytes;
  naive_bytes_ = plan.naive_bytes;
  return kKilnOk;
}

KilnStatus Interpreter::Invoke() {
  if (state_ != State::kReady) {
    ReportError(state_ == State::kInvoking
                    ? "Invoke called from inside an op"
                    : "Invoke called before KilnInterpreterAllocateTensors (or after an input was resized)");
    return kKilnError;
  }
  state_ = State::kInvoking;
  profile_.clear();
  using Clock = std::chrono::steady_clock;
  const Clock::time_point invoke_start = Clock::now();
  // Records the unit of work that started at `start`; called only with profiling on (its name costs a string).
  auto record = [&](Clock::time_point start, int first, int last, std::string op, const char* engine) {
    const Clock::time_point end = Clock::now();
    profile_.push_back(
        {first, last, std::move(op), engine,
         static_cast<uint64_t>(
             std::chrono::duration_cast<std::chrono::nanoseconds>(start - invoke_start).count()),
         static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count())});
  };
  // A device fault since the plan was made may have quarantined a kernel or the device: plan again (and record
  // the new placement) before running.
  if (devices_ != nullptr && devices_->faults() != planned_faults_) PlanDevicePartitions();
  for (size_t i = 0; i < nodes_.size(); ++i) {
    Node& node = nodes_[i];
    if (folded_[i]) continue;
    const Clock::time_point start = options_.profiling ? Clock::now() : Clock::time_point();
    if (!dynamic_reason_[i].empty()) {
      if (PrepareDynamicNode(node) != kKilnOk) {
        ReportError("Node number %d (%s) failed to prepare at Invoke (%s).", node.index, NodeName(node).c_str(),
                    dynamic_reason_[i].c_str());
        state_ = State::kReady;
        return kKilnError;
      }
    }
    if (host_partition_of_node_[i] >= 0) {
      const HostPartition& p = host_partitions_[host_partition_of_node_[i]];
      std::string error;
      const bool ok = p.run->Invoke(&error);
      if (ok && options_.profiling) {  // the group's name is only built for the profile
        const char* profile_engine = p.run->ProfileEngine();
        record(start, p.first, p.last, GroupName(p.first, p.last),
               profile_engine != nullptr ? profile_engine : host_engine()->name());
      }
      if (!ok) {
        ReportError("Nodes %d to %d (host run %d on %s) failed to invoke: %s", p.first, p.last,
                    host_partition_of_node_[i], host_engine()->name(), error.c_str());
        state_ = State::kReady;
        return kKilnError;
      }
      i = static_cast<size_t>(p.last);
      continue;
    }
    if (partition_of_node_[i] >= 0) {
      const Partition& p = partitions_[partition_of_node_[i]];
      const bool ok = InvokePartition(this, p) == kKilnOk;
      if (ok && options_.profiling) record(start, p.first, p.last, GroupName(p.first, p.last), "partition");
      if (!ok) {
        ReportError("Nodes %d to %d (kernel partition %d) failed to invoke.", p.first, p.last,
                    partition_of_node_[i]);
        state_ = State::kReady;
        return kKilnError;
      }
      i = static_cast<size_t>(p.last);
      continue;
    }
    const KilnStatus s = node.op->Invoke(AsContext(), AsOpaqueNode(&node));
    if (s != kKilnOk) {
      ReportError("Node number %d (%s) failed to invoke.", node.index, NodeName(node).c_str());
      state_ = State::kReady;
      return kKilnError;
    }
    if (options_.profiling) {
      const char* engine = IsKilnBuiltin(node)         ? "reference"
                           : node.op->hooks != nullptr ? "kernel"
                                                       : "custom";
      record(start, node.index, node.index, NodeName(node), engine);
    }
  }
  state_ = State::kReady;
  return kKilnOk;
}

std::string Interpreter::GroupName(int first, int last) const {
  std::vector<std::pair<std::string, int>> counts;  // in order of first appearance
  int nodes = 0;
  for (int n = first; n <= last; ++n) {
    if (folded(n)) continue;
    ++nodes;
    const std::string name = NodeName(nodes_[n]);
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == name; });
    if (it == counts.end()) {
      counts.push_back({name, 1});
    } else {
      ++it->second;
    }
  }
  std::string s = std::to_string(nodes) + (nodes == 1 ? " node: " : " nodes: ");
  for (size_t i = 0; i < counts.size(); ++i) {
    s += (i ? ", " : "") + counts[i].first +
         (counts[i].second > 1 ? " x" + std::to_string(counts[i].second) : "");
  }
  return s;
}

KilnStatus Interpreter::ResizeTensor(KilnTensor* t, KilnIntArray* new_size) {
  std::unique_ptr<KilnIntArray, void (*)(KilnIntArray*)> owner(new_size, KilnIntArrayFree);
  if (t == nullptr || new_size == nullptr) {
    ReportError("ResizeTensor: %s is NULL", t == nullptr ? "tensor" : "new_size");
    return kKilnInvalidArgument;
  }
  const std::vector<int> dims(new_size->data, new_size->data + new_size->size);
  if (t->allocation == kKilnMmapRo || t->allocation == kKilnArenaRwPersistent) {
    if (dims == t->dims) return kKilnOk;
    ReportError("ResizeTensor: tensor '%s' is %s and cannot change shape", t->name.c_str(),
                t->allocation == kKilnMmapRo ? "a constant" : "a variable");
    return kKilnError;
  }
  const std::vector<int> old_dims = t->dims;
  std::string error;
  if (!SetTensorShape(t, dims.data(), static_cast<int>(dims.size()), &error)) {
    ReportError("ResizeTensor: tensor '%s': %s", t->name.c_str(), error.c_str());
    return kKilnError;
  }
  if (state_ != State::kInvoking) return kKilnOk;
  // While ops run, only a dynamic tensor may change shape: it gets memory of its own for the new size.
  if (t->allocation == kKilnDynamic) return EnsureDynamicMemory(t) ? kKilnOk : kKilnOutOfMemory;
  if (dims != old_dims) {
    SetTensorShape(t, old_dims.data(), static_cast<int>(old_dims.size()), &error);
    ReportError(
        "ResizeTensor: tensor '%s' is planned in the arena and cannot change shape during Invoke; its op "
        "must make it dynamic in Prepare (KilnOpaqueTensorSetAllocationTypeToDynamic)",
        t->name.c_str());
    return kKilnError;
  }
  return kKilnOk;
}

bool Interpreter::EnsureDynamicMemory(KilnTensor* t) {
  if (t->data != nullptr && t->owned != nullptr && t->bytes <= t->capacity) return true;
  // Never null, even for an empty tensor: ops may check for memory before reading zero elements.
  const size_t capacity = std::max(t->bytes, kTensorAlignment);
  void* memory = AlignedAlloc(capacity);
  if (memory == nullptr) {
    ReportError("out of memory for dynamic tensor '%s' (%zu bytes)", t->name.c_str(), t->bytes);
    return false;
  }
  t->owned.reset(memory);
  t->data = memory;
  t->capacity = capacity;
  return true;
}

std::string Interpreter::DynamicTensorOf(const Node& node) const {
  if (!dynamic_reason(node.index).empty()) return dynamic_reason(node.index);
  for (int index : node.outputs) {
    const KilnTensor* t = tensor(index);
    if (t != nullptr && t->allocation == kKilnDynamic) {
      return "output '" + t->name + "' is dynamic: its shape is known only at Invoke";
    }
  }
  return std::string();
}

const std::string& Interpreter::dynamic_reason(int index) const {
  static const std::string kNone;
  return index >= 0 && static_cast<size_t>(index) < dynamic_reason_.size() ? dynamic_reason_[index] : kNone;
}

bool Interpreter::MarkDynamicNode(const Node& node) {
  std::string& reason = dynamic_reason_[static_cast<size_t>(node.index)];
  for (int index : node.inputs) {
    const KilnTensor* t = tensor(index);
    if (t != nullptr && t->allocation == kKilnDynamic) {
      reason = "input '" + t->name + "' is dynamic: its shape is known only at Invoke";
      break;
    }
  }
  if (reason.empty()) return false;
  for (const std::vector<int>* list : {&node.outputs, &node.temporaries}) {
    for (int index : *list) {
      KilnTensor* t = tensor(index);
      if (t != nullptr && t->allocation == kKilnArenaRw) MakeDynamic(t);
    }
  }
  return true;
}

KilnStatus Interpreter::PrepareDynamicNode(Node& node) {
  // In Invoke's state, so that what Prepare resizes gets its memory at once.
  if (KilnStatus s = node.op->Prepare(AsContext(), AsOpaqueNode(&node)); s != kKilnOk) return s;
  for (const std::vector<int>* list : {&node.outputs, &node.temporaries}) {
    for (int index : *list) {
      KilnTensor* t = tensor(index);
      if (t == nullptr) continue;
      // A temporary the op names only now: memory of its own, as the arena was planned without it.
      if (t->allocation == kKilnArenaRw) MakeDynamic(t);
      if (t->allocation == kKilnDynamic && !EnsureDynamicMemory(t)) return kKilnOutOfMemory;
    }
  }
  return kKilnOk;
}

KilnStatus Interpreter::AddTensor(KilnType type, KilnAllocationType allocation, KilnQuantizationParams quant,
                                  void* data, int* out_index) {
  if (state_ == State::kInvoking) {
    ReportError("AddTensor called during Invoke; add tensors in Prepare");
    return kKilnError;
  }
  auto t = std::make_unique<KilnTensor>();
  t->type = type;
  t->allocation = allocation;
  t->quant = quant;
  if (allocation == kKilnCustom) t->data = data;
  tensors_.push_back(std::move(t));
  *out_index = static_cast<int>(tensors_.size() - 1);
  return kKilnOk;
}

}  // namespace kiln
