// Partitions of an interpreter's graph: consecutive nodes whose kernels run on the driver device, run as one
// batch with copies only at the partition's edges (partition.cc). The interpreter plans them after Prepare and
// runs each in place of its nodes.
#ifndef KILN_RUNTIME_PARTITION_H_
#define KILN_RUNTIME_PARTITION_H_

#include <string>
#include <vector>

#include "kiln/common.h"

namespace kiln {

class Interpreter;

// Nodes [first, last], inclusive.
struct Partition {
  int first = 0;
  int last = 0;
};

// After Prepare: decides where every node runs and groups consecutive nodes whose kernels run on the driver
// device into partitions. Records the node and partition decisions when they differ from `*recorded`.
void PlanPartitions(Interpreter* interpreter, std::vector<Partition>* partitions, std::string* recorded);
// Runs a partition's nodes on the driver device as one batch, copying only tensors that cross its edges. When
// the driver fails, records it and runs the partition's nodes on the CPU instead.
KilnStatus InvokePartition(Interpreter* interpreter, const Partition& partition);

}  // namespace kiln

#endif  // KILN_RUNTIME_PARTITION_H_
