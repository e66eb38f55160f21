// Internal: each op family's file adds its operators to the builtin table (see builtin_ops.cc).
#ifndef KILN_OPS_KERNELS_H_
#define KILN_OPS_KERNELS_H_

#include <vector>

#include "ops/builtin_ops.h"

namespace kiln::ops {

void AddElementwiseKernels(std::vector<BuiltinKernel>* table);     // elementwise_ops.cc
void AddConvKernels(std::vector<BuiltinKernel>* table);            // conv_ops.cc
void AddPoolingKernels(std::vector<BuiltinKernel>* table);         // pooling_ops.cc
void AddFullyConnectedKernels(std::vector<BuiltinKernel>* table);  // fully_connected_ops.cc (+ SOFTMAX)
void AddTensorKernels(std::vector<BuiltinKernel>* table);          // tensor_ops.cc
void AddDequantizeKernels(std::vector<BuiltinKernel>* table);      // dequantize_ops.cc

}  // namespace kiln::ops

#endif  // KILN_OPS_KERNELS_H_
