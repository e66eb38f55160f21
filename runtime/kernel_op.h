// Ops served by a kilnc kernel (KilnOperatorSetKernel). They are ordinary operators: KilnOperatorSetKernel
// installs callbacks (OperatorHooks) that the interpreter calls as it calls any op's, and they launch the kernel
// through a KernelScript of the device layer. What the partitioner (partition.cc) needs to know about such a
// node is asked here.
#ifndef KILN_RUNTIME_KERNEL_OP_H_
#define KILN_RUNTIME_KERNEL_OP_H_

#include <memory>
#include <string>

#include "kiln/operator.h"

namespace kiln {

class KernelModule;
class KernelScript;
struct Node;

// The kernel an operator launches.
struct KernelBinding {
  std::shared_ptr<const KernelModule> module;
  int kernel_index = -1;
};

// The kernel behind `op`, or null when no kernel serves it.
const KernelBinding* KernelBindingOf(const KilnOperator* op);
// The script instance of a kernel-served node, or null (not a kernel op, or its Init failed).
KernelScript* KernelOpScript(const Node& node);
// "node 3 (Atan, kernel 'atan_op')", for messages about a kernel-served node.
std::string KernelOpLabel(const Node& node);

}  // namespace kiln

#endif  // KILN_RUNTIME_KERNEL_OP_H_
