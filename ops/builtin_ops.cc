#include "ops/builtin_ops.h"

#include "ops/kernels.h"

namespace kiln::ops {

const std::vector<BuiltinKernel>& BuiltinKernels() {
  // Built once and never freed: the operators must outlive every interpreter, and the process ends first.
  static const std::vector<BuiltinKernel>* const table = [] {
    auto* kernels = new std::vector<BuiltinKernel>();
    AddElementwiseKernels(kernels);
    AddConvKernels(kernels);
    AddPoolingKernels(kernels);
    AddFullyConnectedKernels(kernels);
    AddTensorKernels(kernels);
    AddDequantizeKernels(kernels);
    return kernels;
  }();
  return *table;
}

}  // namespace kiln::ops
