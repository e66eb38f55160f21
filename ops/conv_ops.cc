// CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV (NHWC, float32, int8 or uint8 (int16 too for the first two);
// float filters may also be constant int8, dequantized once).
#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/conv.h"
#include "ops/reference/quantized_kernels.h"

namespace kiln::ops {
namespace {

struct ConvState {
  reference::ConvParams conv;
  reference::DepthwiseConvParams depthwise;
  FloatWeights filter;
  bool is_int8 = false;  // int8 (or uint8: `type`) input, filter and output, int32 bias
  KilnType type = kKilnFloat32;
  reference::WeightedQuantParams quant;
};

// The parts of CONV_2D and DEPTHWISE_CONV_2D Prepare that are the same: tensors, types, bias, windows.
struct ConvTensors {
  const KilnOpaqueTensor* input = nullptr;
  const KilnOpaqueTensor* filter = nullptr;
  const KilnOpaqueTensor* bias = nullptr;
  KilnOpaqueTensor* output = nullptr;
  Dims input_dims, filter_dims;
};

KilnStatus GetConvTensors(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op, bool is_int8,
                          ConvTensors* t) {
  if (is_int8) {  // types and quantization are checked in PrepareConvWindow
    KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 3, 1));
    KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &t->input));
    KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "filter", &t->filter));
    KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &t->output));
  } else {
    KILN_OPAQUE_ENSURE_STATUS(
        GetFloatInputOutput(context, node, op, 2, 3, &t->input, &t->output, "filter", &t->filter));
  }
  t->bias = GetOptionalInput(context, node, 2);
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", t->input, 4, 4));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "filter", t->filter, 4, 4));
  t->input_dims = TensorDims(t->input);
  t->filter_dims = TensorDims(t->filter);
  return kKilnOk;
}

KilnStatus CheckBias(KilnOpaqueContext* context, const char* op, const KilnOpaqueTensor* bias,
                     int64_t output_channels) {
  if (bias == nullptr) return kKilnOk;
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "bias", bias));
  const Dims dims = TensorDims(bias);
  if (reference::NumElements(dims) != output_channels || dims.size() != 1) {
    KilnOpaqueContextReportError(context, "%s: bias %s has shape %s; expected [%lld]", op,
                                 TensorLabel(bias).c_str(), DimsToString(dims).c_str(),
                                 static_cast<long long>(output_channels));
    return kKilnError;
  }
  return kKilnOk;
}

// The rest of Prepare that CONV_2D and DEPTHWISE_CONV_2D share once the shapes are checked: bias, activation,
// windows and the filter weights (quantized along `filter_quantized_dimension`), then the parameters the
// two kernels have in common.
template <typename Options, typename Params>
KilnStatus PrepareConvWindow(KilnOpaqueContext* context, const char* op, const ConvTensors& t,
                             const Options& options, int64_t out_channels, int filter_quantized_dimension,
                             ConvState* state, Params* p) {
  reference::Activation activation;
  KILN_OPAQUE_ENSURE_STATUS(ToActivation(context, op, options.activation, &activation));
  if (state->is_int8) {
    if (state->type == kKilnInt16) {
      KILN_OPAQUE_ENSURE_STATUS(PrepareWeighted16x8(context, op, "filter", t.input, t.filter, t.bias, t.output,
                                                    filter_quantized_dimension, out_channels, activation,
                                                    &state->quant));
    } else {
      // LiteRT's uint8 convolutions take the scalar multiplier of GetQuantizedConvolutionMultipler, whose scale
      // product is a float one (quantized.h).
      KILN_OPAQUE_ENSURE_STATUS(PrepareWeighted8(context, op, "filter", state->type, t.input, t.filter, t.bias,
                                                 t.output, filter_quantized_dimension, out_channels, activation,
                                                 &state->quant, reference::ScaleProduct::kFloat));
    }
    state->quant.rounding = reference::Rounding::kDouble;  // LiteRT's conv kernels round twice (quantized.h)
  } else {
    KILN_OPAQUE_ENSURE_STATUS(CheckBias(context, op, t.bias, out_channels));
  }
  const Window2d window = {t.filter_dims[1],
                           t.filter_dims[2],
                           options.stride_height,
                           options.stride_width,
                           options.dilation_height_factor,
                           options.dilation_width_factor};
  reference::WindowSize rows, cols;
  KILN_OPAQUE_ENSURE_STATUS(ComputeWindows(context, op, options.padding, t.input_dims, window,
                                           /*has_dilation=*/true, &rows, &cols));
  if (!state->is_int8) {
    KILN_OPAQUE_ENSURE_STATUS(
        PrepareFloatWeights(context, op, "filter", t.filter, filter_quantized_dimension, &state->filter));
  }
  p->batch = t.input_dims[0];
  p->input_height = t.input_dims[1];
  p->input_width = t.input_dims[2];
  p->input_channels = t.input_dims[3];
  p->output_height = rows.output;
  p->output_width = cols.output;
  p->filter_height = t.filter_dims[1];
  p->filter_width = t.filter_dims[2];
  p->stride_height = options.stride_height;
  p->stride_width = options.stride_width;
  p->dilation_height = options.dilation_height_factor;
  p->dilation_width = options.dilation_width_factor;
  p->pad_top = rows.pad_before;
  p->pad_left = cols.pad_before;
  p->activation = activation;
  return kKilnOk;
}

KilnStatus ConvPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "CONV_2D";
  KILN_OPS_GET_STATE(ConvState, state, context, node, op);
  ConvTensors t;
  state->type = IsInt16Input(context, node) ? kKilnInt16 : Quantized8InputType(context, node);
  state->is_int8 = state->type != kKilnNoType;
  KILN_OPAQUE_ENSURE_STATUS(GetConvTensors(context, node, op, state->is_int8, &t));
  const KilnConvParams* options;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &options));
  const int64_t in_channels = t.input_dims[3];
  const int64_t out_channels = t.filter_dims[0];
  const int64_t filter_in_channels = t.filter_dims[3];
  // Grouped convolution (CONV_2D version 6): the filter sees in_channels / groups channels.
  // An input of 0 channels has no group count (0 / filter's channels): refused too, before a division by 0.
  if (filter_in_channels <= 0 || in_channels < filter_in_channels || in_channels % filter_in_channels != 0 ||
      out_channels % (in_channels / filter_in_channels) != 0) {
    KilnOpaqueContextReportError(
        context,
        "%s: filter %s of shape %s does not fit input %s of shape %s (input channels "
        "must be a multiple of the filter's, and output channels of the group count)",
        op, TensorLabel(t.filter).c_str(), DimsToString(t.filter_dims).c_str(), TensorLabel(t.input).c_str(),
        DimsToString(t.input_dims).c_str());
    return kKilnError;
  }
  reference::ConvParams& p = state->conv;
  KILN_OPAQUE_ENSURE_STATUS(PrepareConvWindow(context, op, t, *options, out_channels,
                                              /*filter_quantized_dimension=*/0, state, &p));
  p.output_channels = out_channels;
  p.groups = in_channels / filter_in_channels;
  return ResizeOutput(context, op, t.output, {p.batch, p.output_height, p.output_width, p.output_channels});
}

// The int8 operands for Invoke, checked to hold what the params say.
template <typename T, typename W, typename B>
KilnStatus InvokeOperandsInt8(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op,
                              int64_t input_count, int64_t output_count, int64_t bias_count, const T** input,
                              const W** filter, const B** bias, T** output) {
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "input", KilnOpaqueNodeGetInput(context, node, 0),
                                         input_count, input));
  const KilnOpaqueTensor* f = KilnOpaqueNodeGetInput(context, node, 1);
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "filter", f, reference::NumElements(TensorDims(f)), filter));
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "bias", GetOptionalInput(context, node, 2), bias_count, bias));
  return GetTypedData(context, op, "output", KilnOpaqueNodeGetOutput(context, node, 0), output_count, output);
}

// Fetches the filter and bias data for Invoke, checking that the tensors really hold that much.
KilnStatus InvokeOperands(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op,
                          const ConvState& state, int64_t input_count, int64_t output_count,
                          int64_t bias_count, const float** input, const float** filter, const float** bias,
                          float** output) {
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInvokeData(context, node, op, input_count, output_count, input, output));
  const KilnOpaqueTensor* f = KilnOpaqueNodeGetInput(context, node, 1);
  KILN_OPAQUE_ENSURE_STATUS(GetFloatWeightData(context, op, "filter", f,
                                               reference::NumElements(TensorDims(f)), state.filter, filter));
  return GetOptionalFloatData(context, op, "bias", GetOptionalInput(context, node, 2), bias_count, bias);
}

KilnStatus ConvInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "CONV_2D";
  KILN_OPS_GET_STATE(ConvState, state, context, node, op);
  const reference::ConvParams& p = state->conv;
  const int64_t output_count = p.batch * p.output_height * p.output_width * p.output_channels;
  if (output_count == 0) return kKilnOk;
  if (state->is_int8) {
    const auto run = [&](auto type_tag, auto weight_tag, auto bias_tag) {
      using T = decltype(type_tag);
      using W = decltype(weight_tag);
      using B = decltype(bias_tag);
      const T* input;
      const W* filter;
      const B* bias;
      T* output;
      KILN_OPAQUE_ENSURE_STATUS(InvokeOperandsInt8(context, node, op,
                                                   p.batch * p.input_height * p.input_width * p.input_channels,
                                                   output_count, p.output_channels, &input, &filter, &bias, &output));
      reference::ConvQuantized<T, W, B>(p, state->quant, input, filter, bias, output);
      return kKilnOk;
    };
    if (state->type == kKilnInt16) return run(int16_t{}, int8_t{}, int64_t{});
    return state->type == kKilnUInt8 ? run(uint8_t{}, uint8_t{}, int32_t{}) : run(int8_t{}, int8_t{}, int32_t{});
  }
  const float *input, *filter, *bias;
  float* output;
  KILN_OPAQUE_ENSURE_STATUS(InvokeOperands(context, node, op, *state,
                                           p.batch * p.input_height * p.input_width * p.input_channels,
                                           output_count, p.output_channels, &input, &filter, &bias, &output));
  reference::ConvFloat(p, input, filter, bias, output);
  return kKilnOk;
}

KilnStatus DepthwiseConvPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "DEPTHWISE_CONV_2D";
  KILN_OPS_GET_STATE(ConvState, state, context, node, op);
  ConvTensors t;
  state->type = IsInt16Input(context, node) ? kKilnInt16 : Quantized8InputType(context, node);
  state->is_int8 = state->type != kKilnNoType;
  KILN_OPAQUE_ENSURE_STATUS(GetConvTensors(context, node, op, state->is_int8, &t));
  const KilnDepthwiseConvParams* options;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &options));
  const int64_t in_channels = t.input_dims[3];
  const int64_t out_channels = t.filter_dims[3];
  // The multiplier follows from the shapes; LiteRT ignores the redundant depth_multiplier option too.
  if (t.filter_dims[0] != 1 || in_channels <= 0 || out_channels % in_channels != 0) {
    KilnOpaqueContextReportError(context,
                                 "%s: filter %s of shape %s does not fit input %s of shape %s (expected "
                                 "[1, h, w, input channels * multiplier])",
                                 op, TensorLabel(t.filter).c_str(), DimsToString(t.filter_dims).c_str(),
                                 TensorLabel(t.input).c_str(), DimsToString(t.input_dims).c_str());
    return kKilnError;
  }
  reference::DepthwiseConvParams& p = state->depthwise;
  KILN_OPAQUE_ENSURE_STATUS(PrepareConvWindow(context, op, t, *options, out_channels,
                                              /*filter_quantized_dimension=*/3, state, &p));
  p.depth_multiplier = out_channels / in_channels;
  return ResizeOutput(context, op, t.output, {p.batch, p.output_height, p.output_width, out_channels});
}

KilnStatus DepthwiseConvInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "DEPTHWISE_CONV_2D";
  KILN_OPS_GET_STATE(ConvState, state, context, node, op);
  const reference::DepthwiseConvParams& p = state->depthwise;
  const int64_t out_channels = p.input_channels * p.depth_multiplier;
  const int64_t output_count = p.batch * p.output_height * p.output_width * out_channels;
  if (output_count == 0) return kKilnOk;
  if (state->is_int8) {
    const auto run = [&](auto type_tag, auto weight_tag, auto bias_tag) {
      using T = decltype(type_tag);
      using W = decltype(weight_tag);
      using B = decltype(bias_tag);
      const T* input;
      const W* filter;
      const B* bias;
      T* output;
      KILN_OPAQUE_ENSURE_STATUS(InvokeOperandsInt8(context, node, op,
                                                   p.batch * p.input_height * p.input_width * p.input_channels,
                                                   output_count, out_channels, &input, &filter, &bias, &output));
      reference::DepthwiseConvQuantized<T, W, B>(p, state->quant, input, filter, bias, output);
      return kKilnOk;
    };
    if (state->type == kKilnInt16) return run(int16_t{}, int8_t{}, int64_t{});
    return state->type == kKilnUInt8 ? run(uint8_t{}, uint8_t{}, int32_t{}) : run(int8_t{}, int8_t{}, int32_t{});
  }
  const float *input, *filter, *bias;
  float* output;
  KILN_OPAQUE_ENSURE_STATUS(InvokeOperands(context, node, op, *state,
                                           p.batch * p.input_height * p.input_width * p.input_channels,
                                           output_count, out_channels, &input, &filter, &bias, &output));
  reference::DepthwiseConvFloat(p, input, filter, bias, output);
  return kKilnOk;
}

struct TransposeConvState {
  reference::TransposeConvParams params;
  FloatWeights filter;
  KilnType type = kKilnFloat32;  // or int8, uint8, int16 (16x8)
  reference::WeightedQuantParams quant;
  bool dynamic = false;    // output_shape computed at run time: Invoke prepares again and sizes the output
  bool at_invoke = false;  // Prepare running from Invoke (PrepareAtInvoke)
};

// TRANSPOSE_CONV: inputs output_shape (an int32 [4], constant or computed at run time: then the output is dynamic,
// as in LiteRT, and Invoke runs this again to read it), filter [out_c, h, w, in_c], input [n, h, w, in_c],
// optional bias [out_c]. float32 (filter float32 or constant int8, dequantized), int8 input and output with a
// symmetric int8 filter (per tensor or per channel along dimension 0), or uint8 input, output and filter (per
// tensor, with a zero point); int32 bias. 16x8: symmetric int16 input and output, the int8 filter, int64 bias.
KilnStatus TransposeConvPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "TRANSPOSE_CONV";
  KILN_OPS_GET_STATE(TransposeConvState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 3, 4, 1));
  const KilnOpaqueTensor *output_shape, *filter, *input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "output_shape", &output_shape));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "filter", &filter));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 2, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  const KilnOpaqueTensor* bias = GetOptionalInput(context, node, 3);
  const KilnType type = KilnOpaqueTensorType(input);
  state->type = type;
  if (type != kKilnInt8 && type != kKilnUInt8 && type != kKilnInt16 && type != kKilnFloat32) {
    KilnOpaqueContextReportError(context,
                                 "%s: input %s has type %s; TRANSPOSE_CONV supports float32, int8, uint8 and int16 "
                                 "(16x8)",
                                 op, TensorLabel(input).c_str(), KilnTypeGetName(type));
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "output", output, type));
  const KilnTransposeConvParams* options;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &options));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 4, 4));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "filter", filter, 4, 4));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "output_shape", output_shape, 1, 1));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "output_shape", output_shape, kKilnInt32));
  state->dynamic = !IsConstant(output_shape);
  if (state->dynamic && !state->at_invoke) return MakeOutputDynamic(context, op, output);
  std::vector<int32_t> shape;
  KILN_OPAQUE_ENSURE_STATUS(ReadInt32Values(context, op, "output_shape", output_shape, false, &shape));
  const Dims in = TensorDims(input), f = TensorDims(filter);
  if (shape.size() != 4 || shape[0] != in[0] || shape[1] <= 0 || shape[2] <= 0 || shape[3] != f[0] ||
      f[3] != in[3]) {
    KilnOpaqueContextReportError(context,
                                 "%s: output_shape %s %s, filter %s of shape %s and input %s of shape %s do not fit "
                                 "(expected [batch, h, w, filter dim 0] and filter [out_c, h, w, input channels])",
                                 op, TensorLabel(output_shape).c_str(),
                                 DimsToString(Dims(shape.begin(), shape.end())).c_str(), TensorLabel(filter).c_str(),
                                 DimsToString(f).c_str(), TensorLabel(input).c_str(), DimsToString(in).c_str());
    return kKilnError;
  }
  reference::Activation activation;
  KILN_OPAQUE_ENSURE_STATUS(ToActivation(context, op, options->activation, &activation));
  reference::TransposeConvParams& p = state->params;
  p.batch = in[0];
  p.input_height = in[1];
  p.input_width = in[2];
  p.input_channels = in[3];
  p.output_height = shape[1];
  p.output_width = shape[2];
  p.output_channels = shape[3];
  p.filter_height = f[1];
  p.filter_width = f[2];
  p.stride_height = options->stride_height;
  p.stride_width = options->stride_width;
  p.activation = activation;
  reference::Padding padding;
  KILN_OPAQUE_ENSURE_STATUS(ToPadding(context, op, options->padding, &padding));
  if (!reference::TransposeConvPadding(padding, p.output_height, p.filter_height, p.stride_height, &p.pad_top) ||
      !reference::TransposeConvPadding(padding, p.output_width, p.filter_width, p.stride_width, &p.pad_left)) {
    KilnOpaqueContextReportError(context, "%s: filter %s and strides %d, %d give no padding", op,
                                 TensorLabel(filter).c_str(), options->stride_height, options->stride_width);
    return kKilnError;
  }
  if (type == kKilnInt16) {
    // 16x8: the int64 sums through LiteRT's int64 multiply, as the 16x8 convolutions.
    KILN_OPAQUE_ENSURE_STATUS(PrepareWeighted16x8(context, op, "filter", input, filter, bias, output,
                                                  /*quantized_dimension=*/0, p.output_channels, activation,
                                                  &state->quant));
  } else if (type != kKilnFloat32) {
    // uint8: LiteRT's scalar multiplier with the float scale product, as the uint8 convolutions.
    KILN_OPAQUE_ENSURE_STATUS(PrepareWeighted8(context, op, "filter", type, input, filter, bias, output,
                                               /*quantized_dimension=*/0, p.output_channels, activation, &state->quant,
                                               reference::ScaleProduct::kFloat));
    state->quant.rounding = reference::Rounding::kDouble;  // measured against the package (docs/ops.md)
  } else {
    KILN_OPAQUE_ENSURE_STATUS(CheckBias(context, op, bias, p.output_channels));
    KILN_OPAQUE_ENSURE_STATUS(
        PrepareFloatWeights(context, op, "filter", filter, /*quantized_dimension=*/0, &state->filter));
  }
  return ResizeOutput(context, op, output, {p.batch, p.output_height, p.output_width, p.output_channels});
}

KilnStatus TransposeConvInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "TRANSPOSE_CONV";
  KILN_OPS_GET_STATE(TransposeConvState, state, context, node, op);
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(PrepareAtInvoke(state, [&] { return TransposeConvPrepare(context, node); }));
  }
  const reference::TransposeConvParams& p = state->params;
  const int64_t output_count = p.batch * p.output_height * p.output_width * p.output_channels;
  if (output_count == 0) return kKilnOk;
  const int64_t input_count = p.batch * p.input_height * p.input_width * p.input_channels;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 2);
  const KilnOpaqueTensor* filter = KilnOpaqueNodeGetInput(context, node, 1);
  const KilnOpaqueTensor* bias = GetOptionalInput(context, node, 3);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  const int64_t filter_count = reference::NumElements(TensorDims(filter));
  if (state->type == kKilnInt16) {
    const int16_t* in;
    const int8_t* w;
    const int64_t* b;
    int16_t* out;
    KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "input", input, input_count, &in));
    KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "filter", filter, filter_count, &w));
    KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "bias", bias, p.output_channels, &b));
    KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "output", output, output_count, &out));
    reference::TransposeConv16x8(p, state->quant, in, w, b, out);
    return kKilnOk;
  }
  if (state->type != kKilnFloat32) {
    const auto run = [&](auto type_tag) {
      using T = decltype(type_tag);
      const T *in, *w;
      const int32_t* b;
      T* out;
      KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "input", input, input_count, &in));
      KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "filter", filter, filter_count, &w));
      KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "bias", bias, p.output_channels, &b));
      KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "output", output, output_count, &out));
      reference::TransposeConvQuantized<T>(p, state->quant, in, w, b, out);
      return kKilnOk;
    };
    return state->type == kKilnUInt8 ? run(uint8_t{}) : run(int8_t{});
  }
  const float *in, *w, *b;
  float* out;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "input", input, input_count, &in));
  KILN_OPAQUE_ENSURE_STATUS(GetFloatWeightData(context, op, "filter", filter, filter_count, state->filter, &w));
  KILN_OPAQUE_ENSURE_STATUS(GetOptionalFloatData(context, op, "bias", bias, p.output_channels, &b));
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "output", output, output_count, &out));
  reference::TransposeConvFloat(p, in, w, b, out);
  return kKilnOk;
}

}  // namespace

void AddConvOps(std::vector<BuiltinOp>* table) {
  // CONV_2D: v2/v5 hybrid (int8 filter), v6 grouped; the others add integer types. DEPTHWISE_CONV_2D: v2
  // dilation, v4/v6 hybrid; the others add integer types.
  table->push_back(
      {kKilnBuiltinConv2d, 1, 8, MakeOperator<ConvState>(kKilnBuiltinConv2d, 8, &ConvPrepare, &ConvInvoke)});
  table->push_back(
      {kKilnBuiltinDepthwiseConv2d, 1, 7,
       MakeOperator<ConvState>(kKilnBuiltinDepthwiseConv2d, 7, &DepthwiseConvPrepare, &DepthwiseConvInvoke)});
  // TRANSPOSE_CONV: LiteRT registers v1-v5 (v2 integer types, v3 the bias input, v4 16x8, v5 fused
  // activations); Prepare reads the types and options at every version.
  table->push_back({kKilnBuiltinTransposeConv, 1, 5,
                    MakeOperator<TransposeConvState>(kKilnBuiltinTransposeConv, 5, &TransposeConvPrepare,
                                                     &TransposeConvInvoke)});
}

}  // namespace kiln::ops
