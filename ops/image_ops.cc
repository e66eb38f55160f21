// RESIZE_BILINEAR: float32 NHWC, the output size from a constant int32 [height, width] second input.
#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/resize.h"

namespace kiln::ops {
namespace {

struct ResizeState {
  reference::ResizeBilinearParams params;
};

KilnStatus ResizePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "RESIZE_BILINEAR";
  KILN_OPS_GET_STATE(ResizeState, state, context, node, op);
  const KilnOpaqueTensor* input;
  const KilnOpaqueTensor* size;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInputOutput(context, node, op, 2, 2, &input, &output, "size", &size));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 4, 4));
  std::vector<int32_t> values;
  KILN_OPAQUE_ENSURE_STATUS(ReadConstantInts(context, op, "size", size, false, &values));
  if (values.size() != 2 || values[0] <= 0 || values[1] <= 0) {
    KilnOpaqueContextReportError(context, "%s: size %s must hold two positive values, [height, width]", op,
                                 TensorLabel(size).c_str());
    return kKilnError;
  }
  const auto* options = static_cast<const KilnResizeBilinearParams*>(KilnOpaqueNodeGetBuiltinData(node));
  const Dims in = TensorDims(input);
  reference::ResizeBilinearParams& p = state->params;
  p.batch = in[0];
  p.input_height = in[1];
  p.input_width = in[2];
  p.channels = in[3];
  p.output_height = values[0];
  p.output_width = values[1];
  p.align_corners = options != nullptr && options->align_corners;
  p.half_pixel_centers = options != nullptr && options->half_pixel_centers;
  return ResizeOutput(context, op, output, Dims{p.batch, p.output_height, p.output_width, p.channels});
}

KilnStatus ResizeInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "RESIZE_BILINEAR";
  KILN_OPS_GET_STATE(ResizeState, state, context, node, op);
  const reference::ResizeBilinearParams& p = state->params;
  const int64_t in_count = p.batch * p.input_height * p.input_width * p.channels;
  const int64_t out_count = p.batch * p.output_height * p.output_width * p.channels;
  if (in_count == 0 || out_count == 0) return kKilnOk;
  const float* input;
  float* output;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInvokeData(context, node, op, in_count, out_count, &input, &output));
  reference::ResizeBilinearFloat(p, input, output);
  return kKilnOk;
}

}  // namespace

void AddImageOps(std::vector<BuiltinOp>* table) {
  // LiteRT registers versions 1-4; the later ones add integer types and half_pixel_centers, which this float
  // kernel reads from the options at every version.
  table->push_back({kKilnBuiltinResizeBilinear, 1, 4,
                    MakeOperator<ResizeState>(kKilnBuiltinResizeBilinear, 4, &ResizePrepare, &ResizeInvoke)});
}

}  // namespace kiln::ops
