// The control-flow and resource-variable ops' hook into the interpreter (subgraph_hook.h).

#include "runtime/subgraph_hook.h"

#include <atomic>

#include "runtime/interpreter.h"

namespace kiln::subgraph_hook {
namespace {

std::atomic<uint64_t> while_iteration_limit{0};

Interpreter* From(KilnOpaqueContext* context) { return Interpreter::FromContext(context); }
const Interpreter* From(const KilnOpaqueContext* context) { return Interpreter::FromContext(context); }

std::string Describe(const Interpreter* subgraph) {
  const int index = subgraph->subgraph_index();
  return "subgraph " + std::to_string(index) + " ('" +
         subgraph->model_desc().subgraphs[static_cast<size_t>(index)].name + "')";
}

}  // namespace

int SubgraphCount(const KilnOpaqueContext* context) {
  return static_cast<int>(From(context)->model_desc().subgraphs.size());
}

KilnOpaqueContext* GetSubgraph(KilnOpaqueContext* context, int index, const char* op) {
  Interpreter* interpreter = From(context);
  const int count = SubgraphCount(context);
  if (index < 0 || index >= count) {
    interpreter->ReportError("%s: subgraph index %d is out of range (the model has %d subgraphs)", op, index, count);
    return nullptr;
  }
  Interpreter* subgraph = interpreter->Subgraph(index);
  if (subgraph == nullptr) {
    interpreter->ReportError("%s: subgraph %d could not be built", op, index);
    return nullptr;
  }
  return subgraph->AsContext();
}

int SubgraphIndex(const KilnOpaqueContext* context) { return From(context)->subgraph_index(); }

const std::vector<int>& SubgraphInputs(const KilnOpaqueContext* subgraph) { return From(subgraph)->inputs(); }
const std::vector<int>& SubgraphOutputs(const KilnOpaqueContext* subgraph) { return From(subgraph)->outputs(); }

KilnStatus ResizeSubgraphInput(KilnOpaqueContext* subgraph, int position, const std::vector<int>& dims) {
  Interpreter* interpreter = From(subgraph);
  if (position < 0 || static_cast<size_t>(position) >= interpreter->inputs().size()) return kKilnError;
  const KilnTensor* input = interpreter->tensor(interpreter->inputs()[static_cast<size_t>(position)]);
  if (input != nullptr && input->dims == dims) return kKilnOk;
  return interpreter->ResizeInputTensor(position, dims.data(), static_cast<int>(dims.size()));
}

KilnStatus PrepareSubgraph(KilnOpaqueContext* caller, KilnOpaqueContext* subgraph, const char* op) {
  Interpreter* from = From(caller);
  Interpreter* to = From(subgraph);
  if (to->preparing() || to->invoking()) {
    from->ReportError(
        "%s in %s calls %s, which is already being %s: a subgraph may not call itself, directly or through "
        "other subgraphs (IF/WHILE/CALL_ONCE recursion)",
        op, Describe(from).c_str(), Describe(to).c_str(), to->preparing() ? "prepared" : "run");
    return kKilnError;
  }
  if (to->allocated()) return kKilnOk;
  if (to->AllocateTensors() != kKilnOk) {
    from->ReportError("%s: %s failed to prepare", op, Describe(to).c_str());
    return kKilnError;
  }
  return kKilnOk;
}

KilnStatus InvokeSubgraph(KilnOpaqueContext* caller, KilnOpaqueContext* subgraph, const char* op) {
  Interpreter* from = From(caller);
  Interpreter* to = From(subgraph);
  if (to->invoking() || to->preparing()) {
    from->ReportError("%s in %s calls %s, which is already running (recursion)", op, Describe(from).c_str(),
                      Describe(to).c_str());
    return kKilnError;
  }
  if (to->Invoke() != kKilnOk) {
    from->ReportError("%s: %s failed to invoke", op, Describe(to).c_str());
    return kKilnError;
  }
  return kKilnOk;
}

int32_t ResourceId(KilnOpaqueContext* context, const std::string& container, const std::string& shared_name) {
  return From(context)->ResourceId(container, shared_name);
}

ResourceVariable* GetResource(KilnOpaqueContext* context, int32_t id) { return From(context)->Resource(id); }

uint64_t WhileIterationLimit() { return while_iteration_limit.load(std::memory_order_relaxed); }
void SetWhileIterationLimit(uint64_t limit) { while_iteration_limit.store(limit, std::memory_order_relaxed); }

}  // namespace kiln::subgraph_hook
