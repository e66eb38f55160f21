// CONV_3D and CONV_3D_TRANSPOSE (NDHWC, float32, as LiteRT 2.3.0's kernels): input [N, D, H, W, C], filter [D, H, W, C,
// out_c], optional bias [out_c]; padding SAME/VALID, strides and dilations per dimension, fused activation.
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
  bool dynamic = false;    // CONV_3D_TRANSPOSE's output shape computed at run time: Invoke prepares again, sizing
  bool at_invoke = false;  // Prepare running from Invoke (PrepareAtInvoke)
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

// CONV_3D_TRANSPOSE: inputs output shape (a constant int32 [5]), filter [D, H, W, out_c, in_c], input
// [N, D, H, W, in_c], optional bias [out_c]. The shape is that of the forward convolution from output to input.
constexpr const char* kConv3DTranspose = "CONV_3D_TRANSPOSE";

KilnStatus Conv3DTransposePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const char* op = kConv3DTranspose;
  KILN_OPS_GET_STATE(Conv3DState, state, context, node, op);
  const KilnConv3DParams* options;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &options));
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 3, 4, 1));
  const KilnOpaqueTensor *shape_tensor, *filter, *input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "output shape", &shape_tensor));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "filter", &filter));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 2, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  // LiteRT 2.3.0 registers float32 (its later kernels add int8/int16, not served here).
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "input", input));
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "filter", filter));
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "output", output));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 5, 5));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "filter", filter, 5, 5));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "output shape", shape_tensor, kKilnInt32));
  // An output shape computed at run time: a dynamic output (as LiteRT); Invoke runs this again with its values.
  state->dynamic = !IsConstant(shape_tensor);
  if (state->dynamic && !state->at_invoke) {
    state->output_count = 0;
    return MakeOutputDynamic(context, op, output);
  }
  std::vector<int32_t> shape;
  KILN_OPAQUE_ENSURE_STATUS(ReadInt32Values(context, op, "output shape", shape_tensor, false, &shape));
  const Dims in = TensorDims(input), f = TensorDims(filter);
  if (shape.size() != 5 || TensorDims(shape_tensor).size() != 1) {
    KilnOpaqueContextReportError(context, "%s: output shape %s has shape %s; expected 5 values", op,
                                 TensorLabel(shape_tensor).c_str(), DimsToString(TensorDims(shape_tensor)).c_str());
    return kKilnError;
  }
  const Dims out(shape.begin(), shape.end());
  for (int64_t d : out) {
    if (d < 0) {
      KilnOpaqueContextReportError(context, "%s: output shape %s is %s; dimensions must not be negative", op,
                                   TensorLabel(shape_tensor).c_str(), DimsToString(out).c_str());
      return kKilnError;
    }
  }
  if (f[4] != in[4] || out[4] != f[3] || out[0] != in[0]) {
    KilnOpaqueContextReportError(context,
                                 "%s: filter %s %s, input %s %s and output shape %s disagree: the filter's dimension 4 "
                                 "must be the input's channels, its dimension 3 the output's, and the batches equal",
                                 op, TensorLabel(filter).c_str(), DimsToString(f).c_str(), TensorLabel(input).c_str(),
                                 DimsToString(in).c_str(), DimsToString(out).c_str());
    return kKilnError;
  }
  const KilnOpaqueTensor* bias = GetOptionalInput(context, node, 3);
  state->has_bias = bias != nullptr;
  if (bias != nullptr) {
    KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "bias", bias));
    const Dims b = TensorDims(bias);
    if (reference::NumElements(b) != f[3]) {
      KilnOpaqueContextReportError(context, "%s: bias %s has shape %s; expected %lld values", op,
                                   TensorLabel(bias).c_str(), DimsToString(b).c_str(), static_cast<long long>(f[3]));
      return kKilnError;
    }
  }
  // The forward convolution from the output (its "input") to the input (its "output").
  reference::Conv3DShape& s = state->shape;
  KILN_OPAQUE_ENSURE_STATUS(ToActivation(context, op, options->activation, &s.activation));
  reference::Padding padding;
  KILN_OPAQUE_ENSURE_STATUS(ToPadding(context, op, options->padding, &padding));
  s.batches = out[0], s.in_depth = out[1], s.in_height = out[2], s.in_width = out[3], s.in_channels = out[4];
  s.filter_depth = f[0], s.filter_height = f[1], s.filter_width = f[2], s.out_channels = in[4];
  s.stride_depth = options->stride_depth, s.stride_height = options->stride_height;
  s.stride_width = options->stride_width;
  s.dilation_depth = options->dilation_depth_factor, s.dilation_height = options->dilation_height_factor;
  s.dilation_width = options->dilation_width_factor;
  KILN_OPAQUE_ENSURE_STATUS(ComputeWindow(context, op, padding, "depth", s.in_depth, s.filter_depth, s.stride_depth,
                                          s.dilation_depth, &s.depth));
  KILN_OPAQUE_ENSURE_STATUS(ComputeWindow(context, op, padding, "height", s.in_height, s.filter_height, s.stride_height,
                                          s.dilation_height, &s.rows));
  KILN_OPAQUE_ENSURE_STATUS(ComputeWindow(context, op, padding, "width", s.in_width, s.filter_width, s.stride_width,
                                          s.dilation_width, &s.cols));
  if (s.depth.output != in[1] || s.rows.output != in[2] || s.cols.output != in[3]) {
    KilnOpaqueContextReportError(context,
                                 "%s: input %s has shape %s, but a convolution of the output shape %s with these "
                                 "options gives [%lld, %lld, %lld] for depth, height and width",
                                 op, TensorLabel(input).c_str(), DimsToString(in).c_str(), DimsToString(out).c_str(),
                                 static_cast<long long>(s.depth.output), static_cast<long long>(s.rows.output),
                                 static_cast<long long>(s.cols.output));
    return kKilnError;
  }
  state->input_count = reference::NumElements(in);
  state->filter_count = reference::NumElements(f);
  state->output_count = reference::NumElements(out);
  return ResizeOutput(context, op, output, out);
}

KilnStatus Conv3DTransposeInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const char* op = kConv3DTranspose;
  KILN_OPS_GET_STATE(Conv3DState, state, context, node, op);
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(PrepareAtInvoke(state, [&] { return Conv3DTransposePrepare(context, node); }));
  }
  if (state->output_count == 0) return kKilnOk;
  const float *input, *filter, *bias = nullptr;
  float* output;
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "input", KilnOpaqueNodeGetInput(context, node, 2), state->input_count, &input));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "filter", KilnOpaqueNodeGetInput(context, node, 1), state->filter_count, &filter));
  if (state->has_bias) {
    KILN_OPAQUE_ENSURE_STATUS(
        GetTypedData(context, op, "bias", KilnOpaqueNodeGetInput(context, node, 3), state->shape.in_channels, &bias));
  }
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "output", KilnOpaqueNodeGetOutput(context, node, 0), state->output_count, &output));
  reference::Conv3DTranspose(state->shape, input, filter, bias, output);
  return kKilnOk;
}

}  // namespace

void AddConv3DOps(std::vector<BuiltinOp>* table) {
  // LiteRT registers CONV_3D v1 (float32).
  table->push_back(
      {kKilnBuiltinConv3d, 1, 1, MakeOperator<Conv3DState>(kKilnBuiltinConv3d, 1, &Conv3DPrepare, &Conv3DInvoke)});
  // ... and CONV_3D_TRANSPOSE v1 (float32 there; later LiteRT adds int8/int16 within v1).
  table->push_back(
      {kKilnBuiltinConv3dTranspose, 1, 1,
       MakeOperator<Conv3DState>(kKilnBuiltinConv3dTranspose, 1, &Conv3DTransposePrepare, &Conv3DTransposeInvoke)});
}

}  // namespace kiln::ops
