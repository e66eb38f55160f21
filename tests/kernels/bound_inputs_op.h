// The op of bound_inputs.rs for the kernel op tests (CPU and GPU): models that use it, its prepare (raw
// options to globals), and the answer it must give, computed here rather than by the kernel.
#ifndef KILN_TESTS_KERNELS_BOUND_INPUTS_OP_H_
#define KILN_TESTS_KERNELS_BOUND_INPUTS_OP_H_

#include <cstdint>
#include <cstring>
#include <vector>

#include "kiln/c_api.h"
#include "kiln/c_api_opaque.h"
#include "kiln/operator.h"
#include "runtime/model/model_writer.h"

namespace kiln::testing {

// The op's options: the raw little-endian bytes of one float (the scale), as MediaPipe writes its options.
inline std::vector<uint8_t> RawScaleOptions(float scale) {
  std::vector<uint8_t> bytes(4);
  std::memcpy(bytes.data(), &scale, 4);
  return bytes;
}

// Sets gScale from the raw options and the shape globals from the output (the broadcast of the cell input).
inline KilnStatus AddReversedPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const void* raw = nullptr;
  int size = 0;
  if (KilnOpaqueNodeGetCustomInitialData(node, &raw, &size) != kKilnOk || size != 4) return kKilnError;
  float scale;
  std::memcpy(&scale, raw, 4);
  const KilnOpaqueTensor* src = KilnOpaqueNodeGetInput(context, node, 1);
  const int rank = KilnOpaqueTensorNumDims(src);
  const int32_t count = static_cast<int32_t>(KilnOpaqueTensorByteSize(src) / sizeof(float));
  const int32_t row = rank >= 1 ? KilnOpaqueTensorDim(src, rank - 1) : 1;
  const int32_t plane = rank >= 2 ? KilnOpaqueTensorDim(src, rank - 2) : 1;
  if (KilnOpaqueNodeSetKernelGlobal(context, node, "gScale", &scale, sizeof scale) != kKilnOk)
    return kKilnError;
  if (KilnOpaqueNodeSetKernelGlobal(context, node, "gCount", &count, sizeof count) != kKilnOk)
    return kKilnError;
  if (KilnOpaqueNodeSetKernelGlobal(context, node, "gRow", &row, sizeof row) != kKilnOk) return kKilnError;
  if (KilnOpaqueNodeSetKernelGlobal(context, node, "gPlane", &plane, sizeof plane) != kKilnOk)
    return kKilnError;
  KilnIntArray* dims = KilnIntArrayCreate(rank);
  for (int i = 0; i < rank; ++i) dims->data[i] = KilnOpaqueTensorDim(src, i);
  return KilnOpaqueContextResizeTensor(context, KilnOpaqueNodeGetOutput(context, node, 0), dims);
}

// Makes `op` (already KilnOperatorSetKernel'd to add_reversed) bind input 1 to gSrc and take raw options.
inline bool ConfigureAddReversed(KilnOperator* op) {
  if (KilnOperatorSetKernelInputGlobal(op, 1, "gSrc") != kKilnOk) return false;
  if (KilnOperatorSetKernelOptionsAsGlobals(op, false) != kKilnOk) return false;
  KilnOperatorSetPrepare(op, AddReversedPrepare);
  return true;
}

// y = AddReversed(x, s) with s a second graph input (`constant_src` empty) or a constant of those values;
// `chained` adds z = AddReversed(x, y), whose bound input is the first node's output.
inline std::vector<uint8_t> AddReversedModel(const std::vector<int>& shape, float scale,
                                             const std::vector<float>& constant_src, bool chained = false) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, shape, "x");
  const int s = constant_src.empty() ? w.AddTensor(kKilnFloat32, shape, "s")
                                     : w.AddConstTensor<float>(kKilnFloat32, shape, "s", constant_src);
  const int y = w.AddTensor(kKilnFloat32, shape, "y");
  w.AddCustomOp("AddReversed", {x, s}, {y}, RawScaleOptions(scale));
  int out = y;
  if (chained) {
    out = w.AddTensor(kKilnFloat32, shape, "z");
    w.AddCustomOp("AddReversed", {x, y}, {out}, RawScaleOptions(scale));
  }
  w.SetInputs(constant_src.empty() ? std::vector<int>{x, s} : std::vector<int>{x});
  w.SetOutputs({out});
  return w.Finish();
}

// What the op must give: x[i] + src[n - 1 - i] * scale.
inline std::vector<float> AddReversedReference(const std::vector<float>& x, const std::vector<float>& src,
                                               float scale) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] + src[src.size() - 1 - i] * scale;
  return y;
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_KERNELS_BOUND_INPUTS_OP_H_
