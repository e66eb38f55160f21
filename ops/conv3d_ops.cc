// CONV_3D (NDHWC, float32, as LiteRT's kernel): input [N, D, H, W, C], filter [D, H, W, C, out_c], optional
// bias [out_c]; padding SAME/VALID, strides and dilations per dimension, fused activation.
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/conv3d.h"

namespace kiln::ops {
namespace {

constexpr const char* kConv3D = "CONV_3D";

struct Conv3DState {
  reference::Conv3DShape shape;
  int64_t input_count = 0, filter_count = 0, output_count = 0;
  bool has_bias = false;
};

KilnStatus ComputeWindow(KilnOpaqueContext* context, const char* op, reference::Padding padding, const char* axis,
                         int64_t input, int64_t filter, int64_t stride, int64_t dilation, reference::WindowSize* size) {
  if (reference::ComputeWindowSize(padding, input, filter, stride, dilation, size)) return kKilnOk;
  KilnOpaqueContextReportError(context,
                               "%s: invalid window along %s: input %lld, filter %lld, stride %lld, dilation %lld "
                               "(each must be positive and the output size non-negative)",
                               op, axis, static_cast<long long>(input), static_cast<long long>(filter),
                               static_cast<long long>(stride), static_cast<long long>(dilation));
  return kKilnError;
}

KilnStatus Conv3DPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  KILN_OPS_GET_STATE(Conv3DState, state, context, node, kConv3D);
  const KilnConv3DParams* options;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, kConv3D, &options));
  const KilnOpaqueTensor *input, *filter;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInputOutput(context, node, kConv3D, 2, 3, &input, &output, "filter", &filter));
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, kConv3D, "filter", filter));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, kConv3D, "input", input, 5, 5));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, kConv3D, "filter", filter, 5, 5));
  const Dims in = TensorDims(input), f = TensorDims(filter);
  if (f[3] != in[4]) {
    KilnOpaqueContextReportError(context,
                                 "%s: filter %s has shape %s: its dimension 3 (%lld) must be the input's "
                                 "channels (%lld, input %s)",
                                 kConv3D, TensorLabel(filter).c_str(), DimsToString(f).c_str(),
                                 static_cast<long long>(f[3]), static_cast<long long>(in[4]),
                                 TensorLabel(input).c_str());
    return kKilnError;
  }
  const KilnOpaqueTensor* bias = GetOptionalInput(context, node, 2);
  state->has_bias = bias != nullptr;
  if (bias != nullptr) {
    KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, kConv3D, "bias", bias));
    const Dims b = TensorDims(bias);
    if (b.size() != 1 || b[0] != f[4]) {
      KilnOpaqueContextReportError(context, "%s: bias %s has shape %s; expected [%lld]", kConv3D,
                                   TensorLabel(bias).c_str(), DimsToString(b).c_str(), static_cast<long long>(f[4]));
      return kKilnError;
    }
  }
  reference::Conv3DShape& s = state->shape;
  KILN_OPAQUE_ENSURE_STATUS(ToActivation(context, kConv3D, options->activation, &s.activation));
  reference::Padding padding;
  KILN_OPAQUE_ENSURE_STATUS(ToPadding(context, kConv3D, options->padding, &padding));
  s.batches = in[0], s.in_depth = in[1], s.in_height = in[2], s.in_width = in[3], s.in_channels = in[4];
  s.filter_depth = f[0], s.filter_height = f[1], s.filter_width = f[2], s.out_channels = f[4];
  s.stride_depth = options->stride_depth, s.stride_height = options->stride_height;
  s.stride_width = options->stride_width;
  s.dilation_depth = options->dilation_depth_factor, s.dilation_height = options->dilation_height_factor;
  s.dilation_width = options->dilation_width_factor;
  KILN_OPAQUE_ENSURE_STATUS(ComputeWindow(context, kConv3D, padding, "depth", s.in_depth, s.filter_depth,
                                          s.stride_depth, s.dilation_depth, &s.depth));
  KILN_OPAQUE_ENSURE_STATUS(ComputeWindow(context, kConv3D, padding, "height", s.in_height, s.filter_height,
                                          s.stride_height, s.dilation_height, &s.rows));
  KILN_OPAQUE_ENSURE_STATUS(ComputeWindow(context, kConv3D, padding, "width", s.in_width, s.filter_width,
                                          s.stride_width, s.dilation_width, &s.cols));
  const Dims out = {s.batches, s.depth.output, s.rows.output, s.cols.output, s.out_channels};
  state->input_count = reference::NumElements(in);
  state->filter_count = reference::NumElements(f);
  state->output_count = reference::NumElements(out);
  return ResizeOutput(context, kConv3D, output, out);
}

KilnStatus Conv3DInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  KILN_OPS_GET_STATE(Conv3DState, state, context, node, kConv3D);
  if (state->output_count == 0) return kKilnOk;
  const float* input;
  float* output;
  KILN_OPAQUE_ENSURE_STATUS(
      GetFloatInvokeData(context, node, kConv3D, state->input_count, state->output_count, &input, &output));
  const float* filter;
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, kConv3D, "filter", KilnOpaqueNodeGetInput(context, node, 1), state->filter_count, &filter));
  const float* bias = nullptr;
  if (state->has_bias) {
    KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, kConv3D, "bias", KilnOpaqueNodeGetInput(context, node, 2),
                                           state->shape.out_channels, &bias));
  }
  reference::Conv3D(state->shape, input, filter, bias, output);
  return kKilnOk;
}

}  // namespace

void AddConv3DOps(std::vector<BuiltinOp>* table) {
  // LiteRT registers CONV_3D v1 (float32).
  table->push_back(
      {kKilnBuiltinConv3d, 1, 1, MakeOperator<Conv3DState>(kKilnBuiltinConv3d, 1, &Conv3DPrepare, &Conv3DInvoke)});
}

}  // namespace kiln::ops
