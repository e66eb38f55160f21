// DENSIFY: the dense form of a sparse constant. The model reader densifies every sparse constant when it reads
// the model (runtime/model/sparsity.h), so the input arrives dense and DENSIFY copies it; LiteRT likewise fills
// its output once from the constant input.
#include <cstring>
#include <vector>

#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"

namespace kiln::ops {
namespace {

constexpr const char* kDensify = "DENSIFY";

struct DensifyState {
  size_t bytes = 0;
};

KilnStatus DensifyPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  KILN_OPS_GET_STATE(DensifyState, state, context, node, kDensify);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, kDensify, 1, 1, 1));
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, kDensify, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, kDensify, 0, &output));
  if (!IsConstant(input)) {
    KilnOpaqueContextReportError(context, "%s: input %s must be a (sparse) constant", kDensify,
                                 TensorLabel(input).c_str());
    return kKilnError;
  }
  // LiteRT's DENSIFY takes float32, int8 and float16.
  size_t element_size = 0;
  KILN_OPAQUE_ENSURE_STATUS(
      CheckMovedTypes(context, kDensify, input, output, {kKilnFloat32, kKilnInt8, kKilnFloat16}, &element_size));
  const Dims dims = TensorDims(input);
  state->bytes = static_cast<size_t>(reference::NumElements(dims)) * element_size;
  return ResizeOutput(context, kDensify, output, dims);
}

KilnStatus DensifyInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  KILN_OPS_GET_STATE(DensifyState, state, context, node, kDensify);
  if (state->bytes == 0) return kKilnOk;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, kDensify, "input", input, static_cast<int64_t>(state->bytes), 1));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, kDensify, "output", output, static_cast<int64_t>(state->bytes), 1));
  std::memcpy(KilnOpaqueTensorData(output), KilnOpaqueTensorData(input), state->bytes);
  return kKilnOk;
}

}  // namespace

void AddDensifyOps(std::vector<BuiltinOp>* table) {
  // LiteRT registers DENSIFY v1.
  table->push_back(
      {kKilnBuiltinDensify, 1, 1, MakeOperator<DensifyState>(kKilnBuiltinDensify, 1, &DensifyPrepare, &DensifyInvoke)});
}

}  // namespace kiln::ops
