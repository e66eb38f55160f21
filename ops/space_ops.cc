// DEPTH_TO_SPACE and SPACE_TO_DEPTH: operators that move the elements of an NHWC tensor between its height and
// width and its depth, for the types LiteRT's kernels take (float32, uint8, int8, int32, int64), the output
// quantized as the input.
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/space.h"

namespace kiln::ops {
namespace {

// The element types LiteRT's DEPTH_TO_SPACE and SPACE_TO_DEPTH kernels take.
const std::vector<KilnType>& SpaceDepthTypes() {
  static const std::vector<KilnType> types = {kKilnFloat32, kKilnUInt8, kKilnInt8, kKilnInt32, kKilnInt64};
  return types;
}

struct SpaceDepthState {
  Dims input_dims;
  int64_t block_size = 1;
  size_t element_size = 0;
};

using ShapeFn = bool (*)(const Dims&, int64_t, Dims*, std::string*);
using MoveFn = void (*)(const Dims&, int64_t, size_t, const void*, void*);

template <typename Params>
KilnStatus SpaceDepthPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, ShapeFn shape) {
  KILN_OPS_GET_STATE(SpaceDepthState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, 1));
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, input, output, SpaceDepthTypes(), &state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 4, 4));
  const Params* options;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &options));
  state->input_dims = TensorDims(input);
  state->block_size = options->block_size;
  Dims output_dims;
  std::string error;
  if (!shape(state->input_dims, state->block_size, &output_dims, &error)) {
    KilnOpaqueContextReportError(context, "%s: input %s %s: %s", op, TensorLabel(input).c_str(),
                                 DimsToString(state->input_dims).c_str(), error.c_str());
    return kKilnError;
  }
  return ResizeOutput(context, op, output, output_dims);
}

KilnStatus SpaceDepthInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, MoveFn move) {
  KILN_OPS_GET_STATE(SpaceDepthState, state, context, node, op);
  const int64_t count = reference::NumElements(state->input_dims);
  if (count == 0) return kKilnOk;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input", input, count, state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, count, state->element_size));
  move(state->input_dims, state->block_size, state->element_size, KilnOpaqueTensorData(input),
       KilnOpaqueTensorData(output));
  return kKilnOk;
}

KilnStatus DepthToSpacePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return SpaceDepthPrepare<KilnDepthToSpaceParams>(context, node, "DEPTH_TO_SPACE", &reference::DepthToSpaceShape);
}
KilnStatus DepthToSpaceInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return SpaceDepthInvoke(context, node, "DEPTH_TO_SPACE", &reference::DepthToSpace);
}
KilnStatus SpaceToDepthPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return SpaceDepthPrepare<KilnSpaceToDepthParams>(context, node, "SPACE_TO_DEPTH", &reference::SpaceToDepthShape);
}
KilnStatus SpaceToDepthInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return SpaceDepthInvoke(context, node, "SPACE_TO_DEPTH", &reference::SpaceToDepth);
}

}  // namespace

void AddSpaceOps(std::vector<BuiltinOp>* table) {
  // LiteRT registers DEPTH_TO_SPACE and SPACE_TO_DEPTH at versions 1-2 (v2 adds int8).
  table->push_back(
      {kKilnBuiltinDepthToSpace, 1, 2,
       MakeOperator<SpaceDepthState>(kKilnBuiltinDepthToSpace, 2, &DepthToSpacePrepare, &DepthToSpaceInvoke)});
  table->push_back(
      {kKilnBuiltinSpaceToDepth, 1, 2,
       MakeOperator<SpaceDepthState>(kKilnBuiltinSpaceToDepth, 2, &SpaceToDepthPrepare, &SpaceToDepthInvoke)});
}

}  // namespace kiln::ops
