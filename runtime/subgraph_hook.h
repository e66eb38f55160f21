// Internal, not public: how control-flow ops (IF, WHILE, CALL_ONCE) reach the model's other subgraphs, and how
// the resource-variable ops (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE) reach the variables the root
// interpreter keeps. Every other builtin sees only kiln/c_api_opaque.h; these ops need the interpreter's
// subgraphs as LiteRT's do (there through context->impl_), so the runtime lends them this narrow hook.
//
// A subgraph is handed out as a KilnOpaqueContext: the executor of that subgraph (a child kiln::Interpreter the
// root owns), so the public opaque calls (KilnOpaqueContextGetOpaqueTensor, ...) work on its tensors.
#ifndef KILN_RUNTIME_SUBGRAPH_HOOK_H_
#define KILN_RUNTIME_SUBGRAPH_HOOK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/c_api_opaque.h"
#include "kiln/common.h"

namespace kiln::subgraph_hook {

// The number of subgraphs in the model the context runs.
int SubgraphCount(const KilnOpaqueContext* context);
// The executor of subgraph `index` (created on first use, owned by the root interpreter and sharing its model,
// options, error reporter, devices and decision log). Null, after a message naming `op` and the index, when the
// index is out of range or the subgraph's ops do not resolve.
KilnOpaqueContext* GetSubgraph(KilnOpaqueContext* context, int index, const char* op);
// The index of the subgraph `context` runs (0 for the root).
int SubgraphIndex(const KilnOpaqueContext* context);

// The subgraph's input and output tensor indices.
const std::vector<int>& SubgraphInputs(const KilnOpaqueContext* subgraph);
const std::vector<int>& SubgraphOutputs(const KilnOpaqueContext* subgraph);

// Gives input `position` of the subgraph these dims; does nothing when it has them already (so a prepared
// subgraph stays prepared).
KilnStatus ResizeSubgraphInput(KilnOpaqueContext* subgraph, int position, const std::vector<int>& dims);
// Prepares the subgraph (KilnInterpreterAllocateTensors) unless it is prepared already. A subgraph that is
// being prepared or run already is reached from itself: that recursion fails with a message naming `op` (the
// caller's context reports it), never a stack overflow.
KilnStatus PrepareSubgraph(KilnOpaqueContext* caller, KilnOpaqueContext* subgraph, const char* op);
// Runs the prepared subgraph.
KilnStatus InvokeSubgraph(KilnOpaqueContext* caller, KilnOpaqueContext* subgraph, const char* op);

// A resource variable: what ASSIGN_VARIABLE last stored. Owned by the root interpreter, shared by all its
// subgraphs, kept across Invoke.
struct ResourceVariable {
  std::string name;  // "container/shared_name" for messages
  bool assigned = false;
  KilnType type = kKilnNoType;
  std::vector<int> dims;
  std::vector<uint8_t> data;
};
// The id of the variable named (container, shared_name), made on first use: the same pair gives the same id
// in every subgraph of the interpreter.
int32_t ResourceId(KilnOpaqueContext* context, const std::string& container, const std::string& shared_name);
// The variable with this id, or null when no VAR_HANDLE made it.
ResourceVariable* GetResource(KilnOpaqueContext* context, int32_t id);

// An iteration budget for WHILE (0, the default: none, as in LiteRT, where a loop whose condition stays true
// runs forever). The interpreter fuzzer sets one so that a mutated model cannot hang it. Process-wide.
uint64_t WhileIterationLimit();
void SetWhileIterationLimit(uint64_t limit);

}  // namespace kiln::subgraph_hook

#endif  // KILN_RUNTIME_SUBGRAPH_HOOK_H_
