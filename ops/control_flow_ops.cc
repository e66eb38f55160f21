// IF, WHILE and CALL_ONCE (control flow over the model's other subgraphs), and VAR_HANDLE, READ_VARIABLE and
// ASSIGN_VARIABLE (resource variables). Unlike every other builtin, these reach the interpreter through the
// runtime's internal hook (runtime/subgraph_hook.h): its subgraphs and the variables the root interpreter keeps.
//
// Loop variables and branch values are copied between the node's tensors and the subgraph's, each subgraph
// planning its tensors in its own arena. Shapes are fixed at Prepare: a WHILE body that changes a loop
// variable's shape, or IF branches whose outputs differ in shape, fail Prepare (LiteRT makes such outputs
// dynamic tensors instead).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "runtime/subgraph_hook.h"

namespace kiln::ops {
namespace {

namespace hook = ::kiln::subgraph_hook;

std::vector<int> ShapeOf(const KilnOpaqueTensor* tensor) {
  std::vector<int> dims(static_cast<size_t>(std::max(0, KilnOpaqueTensorNumDims(tensor))));
  for (size_t i = 0; i < dims.size(); ++i) dims[i] = KilnOpaqueTensorDim(tensor, static_cast<int32_t>(i));
  return dims;
}

std::string ShapeString(const std::vector<int>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// "body subgraph 2" for messages.
std::string SubgraphLabel(const char* role, int index) {
  return std::string(role) + " subgraph " + std::to_string(index);
}

KilnOpaqueTensor* SubgraphTensor(KilnOpaqueContext* subgraph, bool input, int position) {
  const std::vector<int>& list = input ? hook::SubgraphInputs(subgraph) : hook::SubgraphOutputs(subgraph);
  return KilnOpaqueContextGetOpaqueTensor(subgraph, list[static_cast<size_t>(position)]);
}

// Copies `from` into `to` (same type; `to` is resized to `from`'s shape when they differ, which only a dynamic
// tensor can cause at Invoke).
KilnStatus CopyTensor(KilnOpaqueContext* context, KilnOpaqueContext* to_context, const char* op,
                      const std::string& what, const KilnOpaqueTensor* from, KilnOpaqueTensor* to) {
  if (from == nullptr || to == nullptr) {
    KilnOpaqueContextReportError(context, "%s: %s: tensor missing", op, what.c_str());
    return kKilnError;
  }
  if (from == to) return kKilnOk;
  if (KilnOpaqueTensorType(from) != KilnOpaqueTensorType(to)) {
    KilnOpaqueContextReportError(context, "%s: %s: %s is %s but %s is %s", op, what.c_str(), TensorLabel(from).c_str(),
                                 KilnTypeGetName(KilnOpaqueTensorType(from)), TensorLabel(to).c_str(),
                                 KilnTypeGetName(KilnOpaqueTensorType(to)));
    return kKilnError;
  }
  const std::vector<int> dims = ShapeOf(from);
  if (ShapeOf(to) != dims) {
    KilnIntArray* size = KilnIntArrayCreate(static_cast<int>(dims.size()));
    if (size == nullptr) return kKilnOutOfMemory;
    for (size_t i = 0; i < dims.size(); ++i) size->data[i] = dims[i];
    KILN_OPAQUE_ENSURE_STATUS(KilnOpaqueContextResizeTensor(to_context, to, size));
  }
  const size_t bytes = KilnOpaqueTensorByteSize(from);
  if (KilnOpaqueTensorByteSize(to) != bytes) {
    KilnOpaqueContextReportError(context, "%s: %s: %s holds %zu bytes but %s holds %zu", op, what.c_str(),
                                 TensorLabel(from).c_str(), bytes, TensorLabel(to).c_str(),
                                 KilnOpaqueTensorByteSize(to));
    return kKilnError;
  }
  if (bytes == 0) return kKilnOk;
  const void* src = KilnOpaqueTensorData(from);
  void* dst = KilnOpaqueTensorData(to);
  if (src == nullptr || dst == nullptr || KilnOpaqueTensorGetAllocationType(to) == kKilnMmapRo) {
    KilnOpaqueContextReportError(context, "%s: %s: %s has no writable data", op, what.c_str(),
                                 TensorLabel(dst == nullptr ? to : from).c_str());
    return kKilnError;
  }
  std::memmove(dst, src, bytes);
  return kKilnOk;
}

// Checks the subgraph's input/output counts and types against `inputs` and `outputs` (the values the node
// passes in and takes back; a null entry is not checked), gives its inputs their shapes, and prepares it.
KilnStatus PrepareCallee(KilnOpaqueContext* context, const char* op, const char* role, int index,
                         KilnOpaqueContext* subgraph, const std::vector<const KilnOpaqueTensor*>& inputs,
                         const std::vector<const KilnOpaqueTensor*>& outputs) {
  const std::string label = SubgraphLabel(role, index);
  const size_t sub_inputs = hook::SubgraphInputs(subgraph).size();
  const size_t sub_outputs = hook::SubgraphOutputs(subgraph).size();
  if (sub_inputs != inputs.size() || sub_outputs != outputs.size()) {
    KilnOpaqueContextReportError(context, "%s: %s has %zu inputs and %zu outputs; the node needs %zu and %zu", op,
                                 label.c_str(), sub_inputs, sub_outputs, inputs.size(), outputs.size());
    return kKilnError;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const KilnOpaqueTensor* callee = SubgraphTensor(subgraph, true, static_cast<int>(i));
    if (KilnOpaqueTensorType(callee) != KilnOpaqueTensorType(inputs[i])) {
      KilnOpaqueContextReportError(context, "%s: %s input %zu (%s) is %s but the node passes %s (%s)", op,
                                   label.c_str(), i, TensorLabel(callee).c_str(),
                                   KilnTypeGetName(KilnOpaqueTensorType(callee)), TensorLabel(inputs[i]).c_str(),
                                   KilnTypeGetName(KilnOpaqueTensorType(inputs[i])));
      return kKilnError;
    }
    if (KilnOpaqueTensorGetAllocationType(callee) == kKilnMmapRo) {
      KilnOpaqueContextReportError(context, "%s: %s input %zu (%s) is a constant", op, label.c_str(), i,
                                   TensorLabel(callee).c_str());
      return kKilnError;
    }
    if (hook::ResizeSubgraphInput(subgraph, static_cast<int>(i), ShapeOf(inputs[i])) != kKilnOk) {
      KilnOpaqueContextReportError(context, "%s: %s input %zu (%s) cannot take shape %s", op, label.c_str(), i,
                                   TensorLabel(callee).c_str(), ShapeString(ShapeOf(inputs[i])).c_str());
      return kKilnError;
    }
  }
  KILN_OPAQUE_ENSURE_STATUS(hook::PrepareSubgraph(context, subgraph, op));
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i] == nullptr) continue;
    const KilnOpaqueTensor* callee = SubgraphTensor(subgraph, false, static_cast<int>(i));
    if (KilnOpaqueTensorType(callee) != KilnOpaqueTensorType(outputs[i])) {
      KilnOpaqueContextReportError(context, "%s: %s output %zu (%s) is %s but the node's output %s is %s", op,
                                   label.c_str(), i, TensorLabel(callee).c_str(),
                                   KilnTypeGetName(KilnOpaqueTensorType(callee)), TensorLabel(outputs[i]).c_str(),
                                   KilnTypeGetName(KilnOpaqueTensorType(outputs[i])));
      return kKilnError;
    }
  }
  return kKilnOk;
}

std::vector<const KilnOpaqueTensor*> NodeInputs(KilnOpaqueContext* context, const KilnOpaqueNode* node, int first) {
  std::vector<const KilnOpaqueTensor*> inputs;
  for (int i = first; i < KilnOpaqueNodeNumberOfInputs(node); ++i) {
    inputs.push_back(KilnOpaqueNodeGetInput(context, node, i));
  }
  return inputs;
}

std::vector<const KilnOpaqueTensor*> NodeOutputs(KilnOpaqueContext* context, const KilnOpaqueNode* node) {
  std::vector<const KilnOpaqueTensor*> outputs;
  for (int i = 0; i < KilnOpaqueNodeNumberOfOutputs(node); ++i) {
    outputs.push_back(KilnOpaqueNodeGetOutput(context, node, i));
  }
  return outputs;
}

KilnStatus CheckPresent(KilnOpaqueContext* context, const char* op, const std::vector<const KilnOpaqueTensor*>& tensors,
                        const char* role) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i] == nullptr) {
      KilnOpaqueContextReportError(context, "%s: %s %zu is missing", op, role, i);
      return kKilnError;
    }
  }
  return kKilnOk;
}

// Makes the subgraph ready to run on the node's current input shapes (a no-op when they are the prepared ones).
KilnStatus EnsurePrepared(KilnOpaqueContext* context, const char* op, KilnOpaqueContext* subgraph,
                          const std::vector<const KilnOpaqueTensor*>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    KILN_OPAQUE_ENSURE_STATUS(hook::ResizeSubgraphInput(subgraph, static_cast<int>(i), ShapeOf(inputs[i])));
  }
  return hook::PrepareSubgraph(context, subgraph, op);
}

// A single-element condition: bool (any non-zero byte is true) or a number (non-zero is true).
KilnStatus ReadCondition(KilnOpaqueContext* context, const char* op, const KilnOpaqueTensor* cond, bool* value) {
  const KilnType type = KilnOpaqueTensorType(cond);
  size_t size = 0;
  switch (type) {
    case kKilnBool:
    case kKilnInt8:
    case kKilnUInt8: size = 1; break;
    case kKilnInt16: size = 2; break;
    case kKilnInt32:
    case kKilnFloat32: size = 4; break;
    case kKilnInt64: size = 8; break;
    default:
      KilnOpaqueContextReportError(context, "%s: condition %s has type %s; expected bool or a number", op,
                                   TensorLabel(cond).c_str(), KilnTypeGetName(type));
      return kKilnError;
  }
  if (KilnOpaqueTensorByteSize(cond) != size) {
    KilnOpaqueContextReportError(context, "%s: condition %s has shape %s; expected a single element", op,
                                 TensorLabel(cond).c_str(), ShapeString(ShapeOf(cond)).c_str());
    return kKilnError;
  }
  if (value == nullptr) return kKilnOk;
  const void* data = KilnOpaqueTensorData(cond);
  if (data == nullptr) {
    KilnOpaqueContextReportError(context, "%s: condition %s has no data", op, TensorLabel(cond).c_str());
    return kKilnError;
  }
  if (type == kKilnFloat32) {
    float f;
    std::memcpy(&f, data, sizeof(f));
    *value = f != 0.0f;
  } else {
    const uint8_t* bytes = static_cast<const uint8_t*>(data);
    *value = false;
    for (size_t i = 0; i < size; ++i) *value = *value || bytes[i] != 0;
  }
  return kKilnOk;
}

// --- IF ---

KilnStatus IfPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const char* op = "IF";
  const KilnIfParams* params;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &params));
  if (KilnOpaqueNodeNumberOfInputs(node) < 1) {
    KilnOpaqueContextReportError(context, "%s: needs a condition input", op);
    return kKilnError;
  }
  const KilnOpaqueTensor* cond;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "condition", &cond));
  KILN_OPAQUE_ENSURE_STATUS(ReadCondition(context, op, cond, nullptr));
  const std::vector<const KilnOpaqueTensor*> inputs = NodeInputs(context, node, 1);
  const std::vector<const KilnOpaqueTensor*> outputs = NodeOutputs(context, node);
  KILN_OPAQUE_ENSURE_STATUS(CheckPresent(context, op, inputs, "branch input"));
  KILN_OPAQUE_ENSURE_STATUS(CheckPresent(context, op, outputs, "output"));
  KilnOpaqueContext* branches[2] = {nullptr, nullptr};
  const int indices[2] = {params->then_subgraph_index, params->else_subgraph_index};
  const char* roles[2] = {"then", "else"};
  for (int b = 0; b < 2; ++b) {
    branches[b] = hook::GetSubgraph(context, indices[b], op);
    if (branches[b] == nullptr) return kKilnError;
    KILN_OPAQUE_ENSURE_STATUS(PrepareCallee(context, op, roles[b], indices[b], branches[b], inputs, outputs));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::vector<int> then_dims = ShapeOf(SubgraphTensor(branches[0], false, static_cast<int>(i)));
    const std::vector<int> else_dims = ShapeOf(SubgraphTensor(branches[1], false, static_cast<int>(i)));
    if (then_dims != else_dims) {
      KilnOpaqueContextReportError(
          context,
          "%s: output %zu (%s) has shape %s in then subgraph %d but %s in else subgraph %d; Kiln needs "
          "both branches to give the same shape",
          op, i, TensorLabel(outputs[i]).c_str(), ShapeString(then_dims).c_str(), indices[0],
          ShapeString(else_dims).c_str(), indices[1]);
      return kKilnError;
    }
    Dims dims(then_dims.begin(), then_dims.end());
    KILN_OPAQUE_ENSURE_STATUS(
        ResizeOutput(context, op, KilnOpaqueNodeGetOutput(context, node, static_cast<int>(i)), dims));
  }
  return kKilnOk;
}

KilnStatus IfInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const char* op = "IF";
  const KilnIfParams* params;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &params));
  bool cond = false;
  KILN_OPAQUE_ENSURE_STATUS(ReadCondition(context, op, KilnOpaqueNodeGetInput(context, node, 0), &cond));
  const int index = cond ? params->then_subgraph_index : params->else_subgraph_index;
  KilnOpaqueContext* branch = hook::GetSubgraph(context, index, op);
  if (branch == nullptr) return kKilnError;
  const std::vector<const KilnOpaqueTensor*> inputs = NodeInputs(context, node, 1);
  KILN_OPAQUE_ENSURE_STATUS(EnsurePrepared(context, op, branch, inputs));
  for (size_t i = 0; i < inputs.size(); ++i) {
    KILN_OPAQUE_ENSURE_STATUS(CopyTensor(context, branch, op, "branch input " + std::to_string(i), inputs[i],
                                         SubgraphTensor(branch, true, static_cast<int>(i))));
  }
  KILN_OPAQUE_ENSURE_STATUS(hook::InvokeSubgraph(context, branch, op));
  for (int i = 0; i < KilnOpaqueNodeNumberOfOutputs(node); ++i) {
    KILN_OPAQUE_ENSURE_STATUS(CopyTensor(context, context, op, "output " + std::to_string(i),
                                         SubgraphTensor(branch, false, i), KilnOpaqueNodeGetOutput(context, node, i)));
  }
  return kKilnOk;
}

// --- WHILE ---

KilnStatus WhilePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const char* op = "WHILE";
  const KilnWhileParams* params;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &params));
  const std::vector<const KilnOpaqueTensor*> inputs = NodeInputs(context, node, 0);
  const std::vector<const KilnOpaqueTensor*> outputs = NodeOutputs(context, node);
  if (inputs.size() != outputs.size()) {
    KilnOpaqueContextReportError(context, "%s: has %zu inputs and %zu outputs; each loop variable needs one of each",
                                 op, inputs.size(), outputs.size());
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckPresent(context, op, inputs, "input"));
  KILN_OPAQUE_ENSURE_STATUS(CheckPresent(context, op, outputs, "output"));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (KilnOpaqueTensorType(inputs[i]) != KilnOpaqueTensorType(outputs[i])) {
      KilnOpaqueContextReportError(context, "%s: loop variable %zu: input %s is %s but output %s is %s", op, i,
                                   TensorLabel(inputs[i]).c_str(), KilnTypeGetName(KilnOpaqueTensorType(inputs[i])),
                                   TensorLabel(outputs[i]).c_str(), KilnTypeGetName(KilnOpaqueTensorType(outputs[i])));
      return kKilnError;
    }
  }
  KilnOpaqueContext* cond = hook::GetSubgraph(context, params->cond_subgraph_index, op);
  if (cond == nullptr) return kKilnError;
  KilnOpaqueContext* body = hook::GetSubgraph(context, params->body_subgraph_index, op);
  if (body == nullptr) return kKilnError;
  KILN_OPAQUE_ENSURE_STATUS(PrepareCallee(context, op, "cond", params->cond_subgraph_index, cond, inputs, {nullptr}));
  const KilnOpaqueTensor* cond_output = SubgraphTensor(cond, false, 0);
  if (KilnOpaqueTensorType(cond_output) != kKilnBool) {
    KilnOpaqueContextReportError(context, "%s: cond subgraph %d output %s is %s; expected bool", op,
                                 params->cond_subgraph_index, TensorLabel(cond_output).c_str(),
                                 KilnTypeGetName(KilnOpaqueTensorType(cond_output)));
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(ReadCondition(context, op, cond_output, nullptr));
  KILN_OPAQUE_ENSURE_STATUS(PrepareCallee(context, op, "body", params->body_subgraph_index, body, inputs, outputs));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<int> in = ShapeOf(inputs[i]);
    const std::vector<int> out = ShapeOf(SubgraphTensor(body, false, static_cast<int>(i)));
    if (in != out) {
      KilnOpaqueContextReportError(
          context,
          "%s: body subgraph %d changes loop variable %zu (%s) from shape %s to %s; Kiln runs WHILE only "
          "with loop variables of fixed shape",
          op, params->body_subgraph_index, i, TensorLabel(inputs[i]).c_str(), ShapeString(in).c_str(),
          ShapeString(out).c_str());
      return kKilnError;
    }
    Dims dims(in.begin(), in.end());
    KILN_OPAQUE_ENSURE_STATUS(
        ResizeOutput(context, op, KilnOpaqueNodeGetOutput(context, node, static_cast<int>(i)), dims));
  }
  return kKilnOk;
}

KilnStatus WhileInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const char* op = "WHILE";
  const KilnWhileParams* params;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &params));
  KilnOpaqueContext* cond = hook::GetSubgraph(context, params->cond_subgraph_index, op);
  if (cond == nullptr) return kKilnError;
  KilnOpaqueContext* body = hook::GetSubgraph(context, params->body_subgraph_index, op);
  if (body == nullptr) return kKilnError;
  const int n = KilnOpaqueNodeNumberOfOutputs(node);
  std::vector<const KilnOpaqueTensor*> vars;
  for (int i = 0; i < n; ++i) {
    KILN_OPAQUE_ENSURE_STATUS(CopyTensor(context, context, op, "loop variable " + std::to_string(i),
                                         KilnOpaqueNodeGetInput(context, node, i),
                                         KilnOpaqueNodeGetOutput(context, node, i)));
    vars.push_back(KilnOpaqueNodeGetOutput(context, node, i));
  }
  const uint64_t limit = hook::WhileIterationLimit();
  for (uint64_t iteration = 0;; ++iteration) {
    KILN_OPAQUE_ENSURE_STATUS(EnsurePrepared(context, op, cond, vars));
    for (int i = 0; i < n; ++i) {
      KILN_OPAQUE_ENSURE_STATUS(
          CopyTensor(context, cond, op, "cond input " + std::to_string(i), vars[i], SubgraphTensor(cond, true, i)));
    }
    KILN_OPAQUE_ENSURE_STATUS(hook::InvokeSubgraph(context, cond, op));
    bool go_on = false;
    KILN_OPAQUE_ENSURE_STATUS(ReadCondition(context, op, SubgraphTensor(cond, false, 0), &go_on));
    if (!go_on) break;
    if (limit != 0 && iteration >= limit) {
      KilnOpaqueContextReportError(context, "%s: stopped after %llu iterations (the WHILE iteration limit)", op,
                                   static_cast<unsigned long long>(iteration));
      return kKilnError;
    }
    KILN_OPAQUE_ENSURE_STATUS(EnsurePrepared(context, op, body, vars));
    for (int i = 0; i < n; ++i) {
      KILN_OPAQUE_ENSURE_STATUS(
          CopyTensor(context, body, op, "body input " + std::to_string(i), vars[i], SubgraphTensor(body, true, i)));
    }
    KILN_OPAQUE_ENSURE_STATUS(hook::InvokeSubgraph(context, body, op));
    for (int i = 0; i < n; ++i) {
      const KilnOpaqueTensor* result = SubgraphTensor(body, false, i);
      const std::vector<int> before = ShapeOf(vars[i]);
      const std::vector<int> after = ShapeOf(result);
      if (before != after) {
        KilnOpaqueContextReportError(context, "%s: body subgraph %d changed loop variable %d (%s) from shape %s to %s",
                                     op, params->body_subgraph_index, i, TensorLabel(vars[i]).c_str(),
                                     ShapeString(before).c_str(), ShapeString(after).c_str());
        return kKilnError;
      }
      KILN_OPAQUE_ENSURE_STATUS(CopyTensor(context, context, op, "body output " + std::to_string(i), result,
                                           KilnOpaqueNodeGetOutput(context, node, i)));
    }
  }
  return kKilnOk;
}

// --- CALL_ONCE ---

struct CallOnceState {
  bool done = false;
};

KilnStatus CallOncePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const char* op = "CALL_ONCE";
  KILN_OPS_GET_STATE(CallOnceState, state, context, node, op);
  const KilnCallOnceParams* params;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &params));
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 0, 0, 0));
  if (state->done) return kKilnOk;
  KilnOpaqueContext* init = hook::GetSubgraph(context, params->init_subgraph_index, op);
  if (init == nullptr) return kKilnError;
  return PrepareCallee(context, op, "init", params->init_subgraph_index, init, {}, {});
}

KilnStatus CallOnceInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const char* op = "CALL_ONCE";
  KILN_OPS_GET_STATE(CallOnceState, state, context, node, op);
  if (state->done) return kKilnOk;
  const KilnCallOnceParams* params;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &params));
  KilnOpaqueContext* init = hook::GetSubgraph(context, params->init_subgraph_index, op);
  if (init == nullptr) return kKilnError;
  KILN_OPAQUE_ENSURE_STATUS(hook::PrepareSubgraph(context, init, op));
  KILN_OPAQUE_ENSURE_STATUS(hook::InvokeSubgraph(context, init, op));
  state->done = true;
  return kKilnOk;
}

// --- Resource variables ---

struct VarHandleState {
  int32_t id = -1;
};

KilnStatus CheckResource(KilnOpaqueContext* context, const char* op, const char* role, const KilnOpaqueTensor* tensor) {
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, role, tensor, kKilnResource));
  if (KilnOpaqueTensorByteSize(tensor) < sizeof(int32_t)) {
    KilnOpaqueContextReportError(context, "%s: %s %s has shape %s; a resource tensor needs one element", op, role,
                                 TensorLabel(tensor).c_str(), ShapeString(ShapeOf(tensor)).c_str());
    return kKilnError;
  }
  return kKilnOk;
}

KilnStatus VarHandlePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const char* op = "VAR_HANDLE";
  KILN_OPS_GET_STATE(VarHandleState, state, context, node, op);
  const KilnVarHandleParams* params;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &params));
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 0, 0, 1));
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckResource(context, op, "output", output));
  state->id = hook::ResourceId(context, params->container != nullptr ? params->container : "",
                               params->shared_name != nullptr ? params->shared_name : "");
  return kKilnOk;
}

KilnStatus VarHandleInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const char* op = "VAR_HANDLE";
  KILN_OPS_GET_STATE(VarHandleState, state, context, node, op);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, 1, sizeof(int32_t)));
  std::memcpy(KilnOpaqueTensorData(output), &state->id, sizeof(state->id));
  return kKilnOk;
}

// The variable a resource input names, or null after a message.
hook::ResourceVariable* GetVariable(KilnOpaqueContext* context, const char* op, const KilnOpaqueTensor* resource) {
  if (CheckData(context, op, "resource", resource, 1, sizeof(int32_t)) != kKilnOk) return nullptr;
  int32_t id;
  std::memcpy(&id, KilnOpaqueTensorData(resource), sizeof(id));
  hook::ResourceVariable* variable = hook::GetResource(context, id);
  if (variable == nullptr) {
    KilnOpaqueContextReportError(context, "%s: resource %s holds id %d, which no VAR_HANDLE made", op,
                                 TensorLabel(resource).c_str(), static_cast<int>(id));
  }
  return variable;
}

KilnStatus ReadVariablePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const char* op = "READ_VARIABLE";
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, 1));
  const KilnOpaqueTensor* resource;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "resource", &resource));
  KILN_OPAQUE_ENSURE_STATUS(CheckResource(context, op, "input", resource));
  KilnOpaqueTensor* output;
  return GetOutput(context, node, op, 0, &output);
}

KilnStatus ReadVariableInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const char* op = "READ_VARIABLE";
  hook::ResourceVariable* variable = GetVariable(context, op, KilnOpaqueNodeGetInput(context, node, 0));
  if (variable == nullptr) return kKilnError;
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  if (!variable->assigned) {
    KilnOpaqueContextReportError(context, "%s: variable '%s' is read before any ASSIGN_VARIABLE gave it a value", op,
                                 variable->name.c_str());
    return kKilnError;
  }
  if (variable->type != KilnOpaqueTensorType(output)) {
    KilnOpaqueContextReportError(context, "%s: variable '%s' holds %s but output %s is %s", op, variable->name.c_str(),
                                 KilnTypeGetName(variable->type), TensorLabel(output).c_str(),
                                 KilnTypeGetName(KilnOpaqueTensorType(output)));
    return kKilnError;
  }
  if (variable->dims != ShapeOf(output) || variable->data.size() != KilnOpaqueTensorByteSize(output)) {
    KilnOpaqueContextReportError(context, "%s: variable '%s' has shape %s but output %s was prepared as %s", op,
                                 variable->name.c_str(), ShapeString(variable->dims).c_str(),
                                 TensorLabel(output).c_str(), ShapeString(ShapeOf(output)).c_str());
    return kKilnError;
  }
  if (variable->data.empty()) return kKilnOk;
  void* data = KilnOpaqueTensorData(output);
  if (data == nullptr) {
    KilnOpaqueContextReportError(context, "%s: output %s has no data", op, TensorLabel(output).c_str());
    return kKilnError;
  }
  std::memcpy(data, variable->data.data(), variable->data.size());
  return kKilnOk;
}

KilnStatus AssignVariablePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const char* op = "ASSIGN_VARIABLE";
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 0));
  const KilnOpaqueTensor *resource, *value;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "resource", &resource));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "value", &value));
  KILN_OPAQUE_ENSURE_STATUS(CheckResource(context, op, "input", resource));
  const KilnType type = KilnOpaqueTensorType(value);
  if (type == kKilnString || type == kKilnResource || type == kKilnVariant || type == kKilnNoType) {
    KilnOpaqueContextReportError(context, "%s: value %s has type %s, which a variable cannot hold", op,
                                 TensorLabel(value).c_str(), KilnTypeGetName(type));
    return kKilnError;
  }
  return kKilnOk;
}

KilnStatus AssignVariableInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const char* op = "ASSIGN_VARIABLE";
  hook::ResourceVariable* variable = GetVariable(context, op, KilnOpaqueNodeGetInput(context, node, 0));
  if (variable == nullptr) return kKilnError;
  const KilnOpaqueTensor* value = KilnOpaqueNodeGetInput(context, node, 1);
  const size_t bytes = KilnOpaqueTensorByteSize(value);
  const uint8_t* data = static_cast<const uint8_t*>(KilnOpaqueTensorData(value));
  if (bytes > 0 && data == nullptr) {
    KilnOpaqueContextReportError(context, "%s: value %s has no data", op, TensorLabel(value).c_str());
    return kKilnError;
  }
  variable->type = KilnOpaqueTensorType(value);
  variable->dims = ShapeOf(value);
  variable->data.assign(data, data + bytes);
  variable->assigned = true;
  return kKilnOk;
}

}  // namespace

void AddControlFlowOps(std::vector<BuiltinOp>* table) {
  // LiteRT 2.3.0 registers each of these at version 1 only; it registers no CALL.
  table->push_back({kKilnBuiltinIf, 1, 1, MakeOperator<NoState>(kKilnBuiltinIf, 1, &IfPrepare, &IfInvoke)});
  table->push_back({kKilnBuiltinWhile, 1, 1, MakeOperator<NoState>(kKilnBuiltinWhile, 1, &WhilePrepare, &WhileInvoke)});
  table->push_back({kKilnBuiltinCallOnce, 1, 1,
                    MakeOperator<CallOnceState>(kKilnBuiltinCallOnce, 1, &CallOncePrepare, &CallOnceInvoke)});
  table->push_back({kKilnBuiltinVarHandle, 1, 1,
                    MakeOperator<VarHandleState>(kKilnBuiltinVarHandle, 1, &VarHandlePrepare, &VarHandleInvoke)});
  table->push_back({kKilnBuiltinReadVariable, 1, 1,
                    MakeOperator<NoState>(kKilnBuiltinReadVariable, 1, &ReadVariablePrepare, &ReadVariableInvoke)});
  table->push_back(
      {kKilnBuiltinAssignVariable, 1, 1,
       MakeOperator<NoState>(kKilnBuiltinAssignVariable, 1, &AssignVariablePrepare, &AssignVariableInvoke)});
}

}  // namespace kiln::ops
