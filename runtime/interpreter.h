// The interpreter: one subgraph's tensors and nodes, op resolution, Prepare, memory planning and Invoke.
//
// A kiln::Interpreter is what the C API calls KilnInterpreter, and what ops see as KilnOpaqueContext.
#ifndef KILN_RUNTIME_INTERPRETER_H_
#define KILN_RUNTIME_INTERPRETER_H_

#include <cstdarg>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core.h"
#include "runtime/device/decision_log.h"
#include "runtime/host_engine.h"
#include "runtime/partition.h"
#include "runtime/subgraph_hook.h"

namespace kiln {

class DeviceSet;

// One entry of the builtin op table: the operator serving versions [min_version, max_version] of an op.
struct BuiltinOpRegistration {
  int builtin_code;  // KilnBuiltinOperator
  int min_version;
  int max_version;
  const KilnOperator* op;
  int output_type_from_input = -1;  // >= 0: output 0 takes this input's type before Prepare (ops::BuiltinOp)
};
// The builtin ops an interpreter resolves against. The interpreter knows no op itself: the layer above hands
// Kiln's table in (runtime/c_api.cc, from ops/).
using BuiltinOpTable = std::vector<BuiltinOpRegistration>;

// One op instance in the graph; ops see it as KilnOpaqueNode.
struct Node {
  int index = 0;
  const OperatorDesc* desc = nullptr;
  const KilnOperator* op = nullptr;  // null until resolved
  int output_type_from_input = -1;    // from the builtin's registration; -1 for a user's operator
  std::vector<int> inputs;
  std::vector<int> outputs;
  std::vector<int> temporaries;
  void* user_data = nullptr;
  bool initialized = false;
};

class Interpreter {
 public:
  // Builds the graph and resolves builtin ops. Returns null (after reporting) on failure.
  // `builtins` must outlive the interpreter. `engine` (may be null) makes the host engine that takes over
  // runs of builtin nodes; the reference kernels run the rest, and everything when the options ask for them.
  static std::unique_ptr<Interpreter> Create(std::shared_ptr<const ModelData> model,
                                             const KilnInterpreterOptions& options,
                                             const BuiltinOpTable& builtins, HostEngineFactory engine,
                                             KilnStatus* status);
  ~Interpreter();

  KilnStatus ResizeInputTensor(int input_index, const int* dims, int num_dims);
  KilnStatus AllocateTensors();
  KilnStatus Invoke();
  // Sets every variable tensor (is_variable: state kept across Invoke) to zero, or an int8 one to its zero
  // point, as LiteRT's ResetVariableTensors. AllocateTensors does it too.
  KilnStatus ResetVariableTensors();

  const std::vector<int>& inputs() const { return inputs_; }
  const std::vector<int>& outputs() const { return outputs_; }
  KilnTensor* tensor(int index) {
    return index >= 0 && index < static_cast<int>(tensors_.size()) ? tensors_[index].get() : nullptr;
  }
  const KilnTensor* tensor(int index) const {
    return index >= 0 && index < static_cast<int>(tensors_.size()) ? tensors_[index].get() : nullptr;
  }
  size_t tensor_count() const { return tensors_.size(); }
  const std::vector<Node>& nodes() const { return nodes_; }
  Node* node(int index) { return &nodes_[index]; }
  // Memory for intermediate tensors: the arena plus what host runs hold for tensors passing between their
  // steps; and what one buffer per tensor, inside the runs too, would take.
  size_t arena_bytes() const;
  size_t naive_bytes() const;
  // Bytes of the model file's pages given back to the system after the last AllocateTensors: those holding
  // only constants that host runs packed (ReleasePackedConstants).
  size_t released_model_bytes() const { return released_model_bytes_; }
  // Bytes of folded constants (a DEQUANTIZE of float16 weights) freed after the last AllocateTensors because
  // only host runs' packed copies read them.
  size_t released_folded_bytes() const { return released_folded_bytes_; }
  bool allocated() const { return state_ == State::kReady; }

  // The error reporter of this interpreter.
  void ReportError(const char* format, ...) __attribute__((format(printf, 2, 3)));
  void ReportErrorV(const char* format, va_list args);

  // What KilnOpaqueContext* calls do.
  KilnStatus ResizeTensor(KilnTensor* tensor, KilnIntArray* new_size);
  KilnStatus AddTensor(KilnType type, KilnAllocationType allocation, KilnQuantizationParams quant, void* data,
                       int* out_index);

  // The devices kernel-backed ops run on, chosen by the device policy on first use. Null (reported, and
  // recorded) if none can be opened.
  DeviceSet* devices();
  DecisionLog& decisions() { return root_->decisions_; }
  const DecisionLog& decisions() const { return root_->decisions_; }
  const std::vector<Partition>& partitions() const { return partitions_; }
  // Host runs: consecutive builtin nodes the host engine runs as one (planned at AllocateTensors).
  struct HostPartition {
    int first = 0;
    int last = 0;
    std::unique_ptr<HostRun> run;
  };
  const std::vector<HostPartition>& host_partitions() const { return host_partitions_; }
  // Where builtin node `index` runs on the host and why: "xnnpack, in host run 0", "reference kernel
  // (xnnpack: ...)". Empty for custom and kernel ops, and before AllocateTensors.
  const std::string& host_placement(int index) const { return host_placement_[index]; }
  // The host engine's name, or null when none is in use (none built, or reference kernels asked for).
  const char* host_engine_name() const {
    const Interpreter* owner = root_;  // the root's engine serves every subgraph
    return owner->engine_ != nullptr ? owner->engine_->name() : nullptr;
  }
  // With profiling on: one event per unit of work of the last Invoke.
  struct ProfileEvent {
    int first = 0;
    int last = 0;
    std::string op;
    std::string engine;
    uint64_t start_ns = 0;
    uint64_t duration_ns = 0;
  };
  const std::vector<ProfileEvent>& profile() const { return profile_; }
  // The number of threads the interpreter's options resolve to (-1: every core).
  int num_threads() const;
  // Whether node `index` was computed once at AllocateTensors (a DEQUANTIZE of constants): Invoke skips it.
  bool folded(int index) const { return index < static_cast<int>(folded_.size()) && folded_[index]; }
  // Why node `index`'s shapes are known only at Invoke ("input 'x' is dynamic"), or empty. Such a node reads a
  // dynamic tensor: it is prepared again before it runs at each Invoke.
  const std::string& dynamic_reason(int index) const;
  // The same, or why the node's own output is dynamic ("output 'y' is dynamic"): no host run or partition takes it.
  std::string DynamicTensorOf(const Node& node) const;
  // Whether node's op is Kiln's own builtin op (not one the user registered in its place).
  bool IsKilnBuiltin(const Node& node) const;

  // Several subgraphs (docs/architecture.md, "Subgraphs"): the interpreter the C API creates runs subgraph 0
  // and owns one child Interpreter per other subgraph that a control-flow op or a signature runner reaches,
  // created on first use. A child shares the root's model, options, op table, error reporter, host engine,
  // devices and decision log, and plans its tensors in its own arena.
  int subgraph_index() const { return subgraph_index_; }
  Interpreter* root() { return root_; }
  const ModelDesc& model_desc() const { return model_->desc; }
  // The executor of subgraph `index`: this interpreter's root for 0, else the root's child (created now if
  // needed). Null, after a report, when out of range or its ops do not resolve.
  Interpreter* Subgraph(int index);
  bool preparing() const { return state_ == State::kPreparing; }
  bool invoking() const { return state_ == State::kInvoking; }
  // Resource variables live in the root (see subgraph_hook.h).
  int32_t ResourceId(const std::string& container, const std::string& shared_name);
  subgraph_hook::ResourceVariable* Resource(int32_t id);

  KilnOpaqueContext* AsContext() { return reinterpret_cast<KilnOpaqueContext*>(this); }
  static Interpreter* FromContext(KilnOpaqueContext* c) { return reinterpret_cast<Interpreter*>(c); }
  static const Interpreter* FromContext(const KilnOpaqueContext* c) {
    return reinterpret_cast<const Interpreter*>(c);
  }

 private:
  enum class State { kNeedsPrepare, kPreparing, kReady, kInvoking };

  Interpreter() = default;
  // Builds the graph of subgraph `index` and resolves its builtins (Create's work, shared with the children).
  static std::unique_ptr<Interpreter> CreateFor(std::shared_ptr<const ModelData> model,
                                                const KilnInterpreterOptions& options,
                                                const BuiltinOpTable& builtins, HostEngineFactory engine,
                                                Interpreter* root, int index, KilnStatus* status);
  bool BuildTensors();
  bool ResolveBuiltins(KilnStatus* status);
  // Finds the operator for `desc`: user operators (last added first) win over builtins. Null if none.
  const KilnOperator* FindOperator(const OperatorDesc& desc) const;
  KilnStatus ResolveCustomOps();
  KilnStatus PlanAndAllocate();
  // Groups the builtin nodes the host engine supports into runs and builds them; records where each runs.
  void PlanHostPartitions();
  // Gives back the memory of constants no node reads any more: each reader is a host run that packed it or a
  // folded node. The model file's pages that hold only such constants go back to the system; a folded
  // constant's own memory is freed (RestoreReleasedFolds folds it again at the next AllocateTensors).
  void ReleasePackedConstants();
  void RestoreReleasedFolds();
  // The host engine (made on first use, from the factory; null without one). The root's: every subgraph of an
  // interpreter runs on one worker pool, one subgraph at a time.
  HostEngine* host_engine();
  // Runs once, now, each DEQUANTIZE whose input is a constant of the model (float16 or int8 weights), and
  // makes its output a constant: Invoke skips the node, and the host engine packs the result as weights.
  void FoldConstants();
  // Gives the node's output 0 the type of input node.output_type_from_input, as LiteRT's kernel would in its
  // Prepare (BuiltinOpRegistration). Error only if the tensor cannot take the new type's size.
  KilnStatus TakeOutputType(const Node& node);
  // Groups consecutive device nodes into partitions and records the plan (again only where it changed).
  void PlanDevicePartitions();
  void FreeNodes();
  // Dynamic shapes (outputs whose shape is known only at Invoke). MarkDynamicNode: whether `node` reads a dynamic
  // tensor; if so its outputs and temporaries become dynamic too and its Prepare waits for Invoke.
  bool MarkDynamicNode(const Node& node);
  // Prepares a dynamic node again at Invoke, then gives its dynamic outputs and temporaries memory.
  KilnStatus PrepareDynamicNode(Node& node);
  // Gives dynamic tensor `t` memory of its own for its current size (kept when large enough).
  bool EnsureDynamicMemory(KilnTensor* t);
  std::string NodeName(const Node& node) const;

  std::shared_ptr<const ModelData> model_;
  const SubgraphDesc* graph_ = nullptr;
  KilnInterpreterOptions options_;
  const BuiltinOpTable* builtins_ = nullptr;
  std::vector<std::unique_ptr<KilnTensor>> tensors_;
  std::vector<Node> nodes_;
  std::vector<int> inputs_;
  std::vector<int> outputs_;
  std::unique_ptr<void, void (*)(void*)> arena_{nullptr, std::free};
  size_t arena_bytes_ = 0;
  size_t naive_bytes_ = 0;
  size_t released_model_bytes_ = 0;
  size_t released_folded_bytes_ = 0;
  State state_ = State::kNeedsPrepare;
  DecisionLog decisions_;  // before devices_, which records into it until destroyed
  std::unique_ptr<DeviceSet> devices_;
  bool devices_failed_ = false;
  HostEngineFactory engine_factory_ = nullptr;
  std::unique_ptr<HostEngine> engine_;
  std::vector<HostPartition> host_partitions_;
  std::vector<int> host_partition_of_node_;  // index into host_partitions_ for a run's first node, else -1
  std::vector<std::string> host_placement_;
  std::vector<bool> engine_internal_;
  std::vector<bool> folded_;  // per node: computed once by FoldConstants
  std::vector<bool> fold_released_;  // per node: folded, its output's memory freed since no reader needs it
  std::vector<std::string> dynamic_reason_;  // per node: why it is prepared at Invoke (empty: it is not)
  std::vector<ProfileEvent> profile_;
  // Names a group of nodes for its profile event: "31 nodes: CONV_2D x14, DEPTHWISE_CONV_2D x13, ...".
  std::string GroupName(int first, int last) const;  // per tensor: lives only inside a
                              // host run, so not in the arena
  std::vector<Partition> partitions_;
  std::vector<int> partition_of_node_;  // index into partitions_ for a partition's first node, else -1
  std::string recorded_plan_;           // the node/partition decisions last recorded, to record changes only
  int planned_faults_ = 0;              // the device faults the partitions were planned after (DeviceSet::faults)
  Interpreter* root_ = this;             // the interpreter the C API created; itself for the root
  int subgraph_index_ = 0;
  HostEngineFactory engine_factory_given_ = nullptr;  // as Create got it, for the children
  // Root only: the children by subgraph index ([0] stays null), and the resource variables by id. Last, so
  // that the children go before the devices they use.
  std::map<std::pair<std::string, std::string>, int32_t> resource_ids_;
  std::vector<subgraph_hook::ResourceVariable> resources_;
  std::vector<std::unique_ptr<Interpreter>> subgraphs_;
};

}  // namespace kiln

struct KilnInterpreter {
  std::unique_ptr<kiln::Interpreter> impl;
};

#endif  // KILN_RUNTIME_INTERPRETER_H_
