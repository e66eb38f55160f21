// Ops backed by a kernel module (KilnOperatorSetKernel): how the interpreter initialises, prepares and invokes
// them. The interpreter calls these instead of the operator's callbacks when KilnOperator::is_kernel().
#ifndef KILN_RUNTIME_KERNEL_OP_H_
#define KILN_RUNTIME_KERNEL_OP_H_

#include "runtime/interpreter.h"

namespace kiln {

// Creates the node's script instance (one per node, so globals set from one node's options do not leak into
// another's). Returns the node's user data, or null after reporting.
void* KernelOpInit(Interpreter* interpreter, Node* node);
void KernelOpFree(void* user_data);
// Sets the globals from the custom options (first time), sizes the output (the operator's own prepare, or the
// broadcast shape of the inputs) and checks element types and shapes against the kernel's reflection.
KilnStatus KernelOpPrepare(Interpreter* interpreter, Node* node);
KilnStatus KernelOpInvoke(Interpreter* interpreter, Node* node);

// After Prepare: decides where every node runs and groups consecutive nodes whose kernels run on the driver
// device into partitions. Records the node and partition decisions when they differ from `*recorded`.
void PlanKernelPartitions(Interpreter* interpreter, std::vector<KernelPartition>* partitions, std::string* recorded);
// Runs a partition's nodes on the driver device as one batch, copying only tensors that cross its edges. When
// the driver fails, records it and runs the partition's nodes on the CPU instead.
KilnStatus KernelPartitionInvoke(Interpreter* interpreter, const KernelPartition& partition);

}  // namespace kiln

#endif  // KILN_RUNTIME_KERNEL_OP_H_
