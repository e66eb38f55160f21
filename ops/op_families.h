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
void AddDetectionOps(std::vector<BuiltinOp>* table);       // detection_ops.cc (custom: TFLite_Detection_PostProcess)
void AddDensifyOps(std::vector<BuiltinOp>* table);         // densify_ops.cc
void AddConv3DOps(std::vector<BuiltinOp>* table);          // conv3d_ops.cc
void AddMatrixOps(std::vector<BuiltinOp>* table);          // matrix_ops.cc
void AddBitwiseOps(std::vector<BuiltinOp>* table);         // bitwise_ops.cc
void AddBucketOps(std::vector<BuiltinOp>* table);          // bucket_ops.cc
void AddStablehloOps(std::vector<BuiltinOp>* table);       // stablehlo_ops.cc
void AddComplexOps(std::vector<BuiltinOp>* table);         // complex_ops.cc
void AddRandomOps(std::vector<BuiltinOp>* table);          // random_ops.cc
void AddSequenceOps(std::vector<BuiltinOp>* table);        // sequence_ops.cc (LSTM, SVDF, RNN)
void AddDynamicOps(std::vector<BuiltinOp>* table);         // dynamic_ops.cc
void AddControlFlowOps(std::vector<BuiltinOp>* table);     // control_flow_ops.cc (+ resource variables)

}  // namespace kiln::ops

#endif  // KILN_OPS_OP_FAMILIES_H_
