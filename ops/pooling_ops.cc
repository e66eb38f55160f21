// AVERAGE_POOL_2D and MAX_POOL_2D (NHWC: float32, int8, uint8, int16) and L2_POOL_2D (float32).
#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/conv.h"
#include "ops/reference/pooling.h"
#include "ops/reference/quantized_kernels.h"

namespace kiln::ops {
namespace {

struct PoolState {
  reference::PoolParams params;
  bool is_int8 = false;  // an 8-bit quantized path: int8, or uint8 (`type`)
  KilnType type = kKilnFloat32;
  int32_t activation_min = -128, activation_max = 127;  // int8/uint8: the fused activation as a clamp
};

enum class PoolKind { kAverage, kMax, kL2 };

constexpr const char* PoolName(PoolKind kind) {
  return kind == PoolKind::kMax ? "MAX_POOL_2D" : kind == PoolKind::kL2 ? "L2_POOL_2D" : "AVERAGE_POOL_2D";
}

template <PoolKind kKind>
KilnStatus PoolPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = PoolName(kKind);
  KILN_OPS_GET_STATE(PoolState, state, context, node, op);
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  state->type = Quantized8InputType(context, node);
  if (KilnOpaqueNodeNumberOfInputs(node) > 0 && KilnOpaqueNodeGetInput(context, node, 0) != nullptr &&
      KilnOpaqueTensorType(KilnOpaqueNodeGetInput(context, node, 0)) == kKilnInt16) {
    state->type = kKilnInt16;  // LiteRT's int16 pools: the int8 arithmetic on int16
  }
  if (kKind == PoolKind::kL2) state->type = kKilnNoType;  // LiteRT's L2_POOL_2D is float32 only
  state->is_int8 = state->type != kKilnNoType;
  if (state->is_int8) {
    KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, 1));
    KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
    KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  } else {
    KILN_OPAQUE_ENSURE_STATUS(GetFloatInputOutput(context, node, op, 1, 1, &input, &output));
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 4, 4));
  const KilnPoolParams* options;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &options));
  reference::Activation activation;
  KILN_OPAQUE_ENSURE_STATUS(ToActivation(context, op, options->activation, &activation));
  if (state->is_int8) {
    // As LiteRT: the output keeps the input's quantization; values pass through unscaled.
    float input_scale, output_scale;
    int32_t input_zero_point, output_zero_point;
    KILN_OPAQUE_ENSURE_STATUS(
        GetQuantization8(context, op, "input", input, state->type, &input_scale, &input_zero_point));
    KILN_OPAQUE_ENSURE_STATUS(
        GetQuantization8(context, op, "output", output, state->type, &output_scale, &output_zero_point));
    if (input_scale != output_scale || input_zero_point != output_zero_point) {
      KilnOpaqueContextReportError(context,
                                   "%s: int8 output %s (scale %g, zero point %d) must have the quantization of "
                                   "input %s (scale %g, zero point %d)",
                                   op, TensorLabel(output).c_str(), static_cast<double>(output_scale),
                                   static_cast<int>(output_zero_point), TensorLabel(input).c_str(),
                                   static_cast<double>(input_scale), static_cast<int>(input_zero_point));
      return kKilnError;
    }
    if (!reference::QuantizedActivationRange(static_cast<int>(activation), output_scale, output_zero_point,
                                             &state->activation_min, &state->activation_max,
                                             TypeMin(state->type), TypeMax(state->type))) {
      KilnOpaqueContextReportError(context, "%s: the fused activation TANH/SIGMOID has no int8 kernel", op);
      return kKilnError;
    }
  }
  const Dims dims = TensorDims(input);
  const Window2d window = {
      options->filter_height, options->filter_width, options->stride_height, options->stride_width, 1, 1};
  reference::WindowSize rows, cols;
  KILN_OPAQUE_ENSURE_STATUS(
      ComputeWindows(context, op, options->padding, dims, window, /*has_dilation=*/false, &rows, &cols));
  reference::PoolParams& p = state->params;
  p.batch = dims[0];
  p.input_height = dims[1];
  p.input_width = dims[2];
  p.channels = dims[3];
  p.output_height = rows.output;
  p.output_width = cols.output;
  p.filter_height = options->filter_height;
  p.filter_width = options->filter_width;
  p.stride_height = options->stride_height;
  p.stride_width = options->stride_width;
  p.pad_top = rows.pad_before;
  p.pad_left = cols.pad_before;
  p.activation = activation;
  return ResizeOutput(context, op, output, {p.batch, p.output_height, p.output_width, p.channels});
}

// Invoke on 8-bit storage type T.
template <PoolKind kKind, typename T>
KilnStatus PoolInvokeQuantized(KilnOpaqueContext* context, KilnOpaqueNode* node, const PoolState& state,
                               int64_t output_count) {
  constexpr const char* op = PoolName(kKind);
  const reference::PoolParams& p = state.params;
  const T* input;
  T* output;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "input", KilnOpaqueNodeGetInput(context, node, 0),
                                         p.batch * p.input_height * p.input_width * p.channels, &input));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "output", KilnOpaqueNodeGetOutput(context, node, 0), output_count, &output));
  if (kKind == PoolKind::kMax) {
    reference::MaxPoolQuantized<T>(p, state.activation_min, state.activation_max, input, output);
  } else {
    reference::AveragePoolQuantized<T>(p, state.activation_min, state.activation_max, input, output);
  }
  return kKilnOk;
}

template <PoolKind kKind>
KilnStatus PoolInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = PoolName(kKind);
  KILN_OPS_GET_STATE(PoolState, state, context, node, op);
  const reference::PoolParams& p = state->params;
  const int64_t output_count = p.batch * p.output_height * p.output_width * p.channels;
  if (output_count == 0) return kKilnOk;
  if (state->is_int8) {
    if (state->type == kKilnUInt8) return PoolInvokeQuantized<kKind, uint8_t>(context, node, *state, output_count);
    if (state->type == kKilnInt16) return PoolInvokeQuantized<kKind, int16_t>(context, node, *state, output_count);
    return PoolInvokeQuantized<kKind, int8_t>(context, node, *state, output_count);
  }
  const float* input;
  float* output;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInvokeData(context, node, op,
                                               p.batch * p.input_height * p.input_width * p.channels,
                                               output_count, &input, &output));
  if (kKind == PoolKind::kMax) {
    reference::MaxPoolFloat(p, input, output);
  } else if (kKind == PoolKind::kL2) {
    reference::L2PoolFloat(p, input, output);
  } else {
    reference::AveragePoolFloat(p, input, output);
  }
  return kKilnOk;
}

}  // namespace

void AddPoolingOps(std::vector<BuiltinOp>* table) {
  // v2 adds int8, v3 int16.
  table->push_back(
      {kKilnBuiltinAveragePool2d, 1, 3,
       MakeOperator<PoolState>(kKilnBuiltinAveragePool2d, 3, &PoolPrepare<PoolKind::kAverage>,
                               &PoolInvoke<PoolKind::kAverage>)});
  table->push_back({kKilnBuiltinMaxPool2d, 1, 3,
                    MakeOperator<PoolState>(kKilnBuiltinMaxPool2d, 3, &PoolPrepare<PoolKind::kMax>,
                                            &PoolInvoke<PoolKind::kMax>)});
  // L2_POOL_2D: float32, version 1 only (as LiteRT).
  table->push_back({kKilnBuiltinL2Pool2d, 1, 1,
                    MakeOperator<PoolState>(kKilnBuiltinL2Pool2d, 1, &PoolPrepare<PoolKind::kL2>,
                                            &PoolInvoke<PoolKind::kL2>)});
}

}  // namespace kiln::ops
