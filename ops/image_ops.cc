// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR: float32, int8, uint8 or int16 NHWC, the output size from a
// int32 [height, width] second input (constant, or computed at run time: a dynamic output).
#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/resize.h"

namespace kiln::ops {
namespace {

struct ResizeState {
  reference::ResizeBilinearParams params;
  KilnType type = kKilnFloat32;
  size_t element_size = sizeof(float);
  bool dynamic = false;    // size computed at run time: Invoke prepares again and sizes the output
  bool at_invoke = false;  // Prepare running from Invoke (PrepareAtInvoke)
};

// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR: float32, int8, uint8 or int16 (a quantized output must carry the
// input's quantization: both kernels work on the stored values), a 4-D input, an int32 [height, width] constant or
// computed at run time (then the output is dynamic, sized at Invoke, as LiteRT).
KilnStatus ResizePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, bool align_corners,
                         bool half_pixel_centers) {
  KILN_OPS_GET_STATE(ResizeState, state, context, node, op);
  const KilnOpaqueTensor* input;
  const KilnOpaqueTensor* size;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "size", &size));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  static const std::vector<KilnType> kTypes = {kKilnFloat32, kKilnInt8, kKilnUInt8, kKilnInt16};
  KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, input, output, kTypes, &state->element_size));
  state->type = KilnOpaqueTensorType(input);
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 4, 4));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "size", size, kKilnInt32));
  state->dynamic = !IsConstant(size);
  if (state->dynamic && !state->at_invoke) return MakeOutputDynamic(context, op, output);
  std::vector<int32_t> values;
  KILN_OPAQUE_ENSURE_STATUS(ReadInt32Values(context, op, "size", size, false, &values));
  if (values.size() != 2 || values[0] <= 0 || values[1] <= 0) {
    KilnOpaqueContextReportError(context, "%s: size %s must hold two positive values, [height, width]; it holds %s", op,
                                 TensorLabel(size).c_str(), DimsToString(Dims(values.begin(), values.end())).c_str());
    return kKilnError;
  }
  const Dims in = TensorDims(input);
  reference::ResizeBilinearParams& p = state->params;
  p.batch = in[0];
  p.input_height = in[1];
  p.input_width = in[2];
  p.channels = in[3];
  p.output_height = values[0];
  p.output_width = values[1];
  p.align_corners = align_corners;
  p.half_pixel_centers = half_pixel_centers;
  return ResizeOutput(context, op, output, Dims{p.batch, p.output_height, p.output_width, p.channels});
}

KilnStatus ResizeInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, bool bilinear,
                        KilnStatus (*prepare)(KilnOpaqueContext*, KilnOpaqueNode*)) {
  KILN_OPS_GET_STATE(ResizeState, state, context, node, op);
  if (state->dynamic) KILN_OPAQUE_ENSURE_STATUS(PrepareAtInvoke(state, [&] { return prepare(context, node); }));
  const reference::ResizeBilinearParams& p = state->params;
  const int64_t in_count = p.batch * p.input_height * p.input_width * p.channels;
  const int64_t out_count = p.batch * p.output_height * p.output_width * p.channels;
  if (in_count == 0 || out_count == 0) return kKilnOk;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input", input, in_count, state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, out_count, state->element_size));
  const void* in = KilnOpaqueTensorData(input);
  void* out = KilnOpaqueTensorData(output);
  if (!bilinear) {
    reference::ResizeNearestNeighbor(p, state->element_size, in, out);
    return kKilnOk;
  }
  // LiteRT's reference kernels: float for float32, the float expression plus 0.5 for uint8, integer
  // arithmetic for int8 and int16 (resize.h).
  switch (state->type) {
    case kKilnInt8:
      reference::ResizeBilinearInteger(p, static_cast<const int8_t*>(in), static_cast<int8_t*>(out));
      break;
    case kKilnInt16:
      reference::ResizeBilinearInteger(p, static_cast<const int16_t*>(in), static_cast<int16_t*>(out));
      break;
    case kKilnUInt8:
      reference::ResizeBilinearGeneric(p, static_cast<const uint8_t*>(in), static_cast<uint8_t*>(out));
      break;
    default:
      reference::ResizeBilinearFloat(p, static_cast<const float*>(in), static_cast<float*>(out));
      break;
  }
  return kKilnOk;
}

KilnStatus ResizeBilinearPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const auto* options = static_cast<const KilnResizeBilinearParams*>(KilnOpaqueNodeGetBuiltinData(node));
  return ResizePrepare(context, node, "RESIZE_BILINEAR", options != nullptr && options->align_corners,
                       options != nullptr && options->half_pixel_centers);
}
KilnStatus ResizeBilinearInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return ResizeInvoke(context, node, "RESIZE_BILINEAR", true, &ResizeBilinearPrepare);
}
KilnStatus ResizeNearestPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const auto* options = static_cast<const KilnResizeNearestNeighborParams*>(KilnOpaqueNodeGetBuiltinData(node));
  return ResizePrepare(context, node, "RESIZE_NEAREST_NEIGHBOR", options != nullptr && options->align_corners,
                       options != nullptr && options->half_pixel_centers);
}
KilnStatus ResizeNearestInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return ResizeInvoke(context, node, "RESIZE_NEAREST_NEIGHBOR", false, &ResizeNearestPrepare);
}

}  // namespace

void AddImageOps(std::vector<BuiltinOp>* table) {
  // LiteRT registers versions 1-4; the later ones add integer types and half_pixel_centers, which Prepare reads
  // from the tensors and options at every version.
  table->push_back({kKilnBuiltinResizeBilinear, 1, 4,
                    MakeOperator<ResizeState>(kKilnBuiltinResizeBilinear, 4, &ResizeBilinearPrepare,
                                              &ResizeBilinearInvoke)});
  // RESIZE_NEAREST_NEIGHBOR: LiteRT registers versions 1-4 (v2 int8, v3 half_pixel_centers, v4 int16).
  table->push_back({kKilnBuiltinResizeNearestNeighbor, 1, 4,
                    MakeOperator<ResizeState>(kKilnBuiltinResizeNearestNeighbor, 4, &ResizeNearestPrepare,
                                              &ResizeNearestInvoke)});
}

}  // namespace kiln::ops
