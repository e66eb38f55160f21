// Ops served by a kilnc kernel (KilnOperatorSetKernel). They are ordinary operators: KilnOperatorSetKernel
// installs callbacks (OperatorHooks) that the interpreter calls as it calls any op's, and they launch the kernel
// through a KernelScript of the device layer. What the partitioner (partition.cc) needs to know about such a
// node is asked here.
#ifndef KILN_RUNTIME_KERNEL_OP_H_
#define KILN_RUNTIME_KERNEL_OP_H_

#include <memory>
#include <string>
#include <vector>

#include "kiln/common.h"
#include "kiln/operator.h"

namespace kiln {

class KernelModule;
class KernelScript;
struct Node;

class Interpreter;

// The kernel an operator launches, and how a node's inputs and options reach it.
struct KernelBinding {
  std::shared_ptr<const KernelModule> module;
  int kernel_index = -1;
  // Node inputs bound to script globals (KilnOperatorSetKernelInputGlobal) rather than mapped over: input
  // position -> global name. The node's other inputs, in order, are the kernel's inputs.
  std::vector<std::pair<int, std::string>> input_globals;
  // Whether the custom options set globals of the same names (a FlexBuffers map).
  bool options_as_globals = true;

  const std::string* GlobalOfInput(int position) const;
};

// The kernel behind `op`, or null when no kernel serves it.
const KernelBinding* KernelBindingOf(const KilnOperator* op);
// The script instance of a kernel-served node, or null (not a kernel op, or its Init failed).
KernelScript* KernelOpScript(const Node& node);
// "node 3 (Atan, kernel 'atan_op')", for messages about a kernel-served node.
std::string KernelOpLabel(const Node& node);
// The node's inputs the kernel maps over (those not bound to globals), in order. Null entries for absent
// inputs.
std::vector<const KilnTensor*> KernelOpCellInputs(Interpreter* interpreter, const Node& node);
// The tensor indices of the node's inputs bound to script globals.
std::vector<int> KernelOpBoundInputs(const Node& node);
// Binds the node's inputs that are bound to globals to its script (again only when a tensor's memory moved).
// Call before every launch, on any device; reports naming the node.
KilnStatus BindKernelOpInputs(Interpreter* interpreter, const Node& node);

}  // namespace kiln

#endif  // KILN_RUNTIME_KERNEL_OP_H_
