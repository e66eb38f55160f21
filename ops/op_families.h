// Internal: each op family's file adds its operators to the builtin table (see builtin_ops.cc).
#ifndef KILN_OPS_OP_FAMILIES_H_
#define KILN_OPS_OP_FAMILIES_H_

#include <vector>

#include "ops/builtin_ops.h"

namespace kiln::ops {

void AddElementwiseOps(std::vector<BuiltinOp>* table);     // elementwise_ops.cc
void AddConvOps(std::vector<BuiltinOp>* table);            // conv_ops.cc
void AddPoolingOps(std::vector<BuiltinOp>* table);         // pooling_ops.cc
void AddFullyConnectedOps(std::vector<BuiltinOp>* table);  // fully_connected_ops.cc (+ SOFTMAX)
void AddTensorOps(std::vector<BuiltinOp>* table);          // tensor_ops.cc
void AddDequantizeOps(std::vector<BuiltinOp>* table);      // dequantize_ops.cc
void AddImageOps(std::vector<BuiltinOp>* table);           // image_ops.cc
void AddSliceOps(std::vector<BuiltinOp>* table);           // slice_ops.cc
void AddSplitPackOps(std::vector<BuiltinOp>* table);       // split_pack_ops.cc
void AddArgCastOps(std::vector<BuiltinOp>* table);         // arg_cast_ops.cc
void AddNormalizationOps(std::vector<BuiltinOp>* table);   // normalization_ops.cc
void AddSpaceOps(std::vector<BuiltinOp>* table);           // space_ops.cc
void AddCompareLogicOps(std::vector<BuiltinOp>* table);    // compare_logic_ops.cc
void AddIndexOps(std::vector<BuiltinOp>* table);           // index_ops.cc
void AddControlFlowOps(std::vector<BuiltinOp>* table);     // control_flow_ops.cc (+ resource variables)

}  // namespace kiln::ops

#endif  // KILN_OPS_OP_FAMILIES_H_
