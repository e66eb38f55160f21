// The builtin op table (builtin_ops.h): every op family's registrations, gathered once.

#include "ops/builtin_ops.h"

#include "ops/op_families.h"

namespace kiln::ops {

const std::vector<BuiltinOp>& BuiltinOps() {
  // Built once and never freed: the operators must outlive every interpreter, and the process ends first.
  static const std::vector<BuiltinOp>* const table = [] {
    auto* all = new std::vector<BuiltinOp>();
    AddElementwiseOps(all);
    AddConvOps(all);
    AddPoolingOps(all);
    AddFullyConnectedOps(all);
    AddTensorOps(all);
    AddDequantizeOps(all);
    AddImageOps(all);
    AddSliceOps(all);
    AddSplitPackOps(all);
    AddArgCastOps(all);
    AddNormalizationOps(all);
    AddSpaceOps(all);
    AddCompareLogicOps(all);
    AddIndexOps(all);
    AddDetectionOps(all);
    AddDensifyOps(all);
    AddConv3DOps(all);
    AddMatrixOps(all);
    AddBitwiseOps(all);
    AddBucketOps(all);
    AddStablehloOps(all);
    AddComplexOps(all);
    AddRandomOps(all);
    AddSequenceOps(all);
    AddDynamicOps(all);
    AddControlFlowOps(all);
    return all;
  }();
  return *table;
}

}  // namespace kiln::ops
