// FULLY_CONNECTED (float32 weights, or constant int8 weights dequantized once: hybrid models), SOFTMAX and
// BATCH_MATMUL.
#include <algorithm>
#include <cmath>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/fully_connected.h"
#include "ops/reference/quantized_int16.h"
#include "ops/reference/quantized_kernels.h"

namespace kiln::ops {
namespace {

struct FullyConnectedState {
  reference::FullyConnectedParams params;
  FloatWeights weights;
  bool is_int8 = false;  // an 8-bit quantized path: int8, or uint8 (`type`)
  KilnType type = kKilnFloat32;
  reference::WeightedQuantParams quant;
};

KilnStatus FullyConnectedPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "FULLY_CONNECTED";
  KILN_OPS_GET_STATE(FullyConnectedState, state, context, node, op);
  const KilnOpaqueTensor* input;
  const KilnOpaqueTensor* weights;
  KilnOpaqueTensor* output;
  state->type = IsInt16Input(context, node) ? kKilnInt16 : Quantized8InputType(context, node);
  state->is_int8 = state->type != kKilnNoType;
  if (state->is_int8) {
    // int8 (or uint8): input, weights and output of that type (checked with their quantization below), bias
    // int32; int16: 16x8, int8 weights and int64 bias.
    KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 3, 1));
    KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
    KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "weights", &weights));
    KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  } else {
    KILN_OPAQUE_ENSURE_STATUS(
        GetFloatInputOutput(context, node, op, 2, 3, &input, &output, "weights", &weights));
  }
  const KilnOpaqueTensor* bias = GetOptionalInput(context, node, 2);
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "weights", weights, 2, 2));
  const auto* options = static_cast<const KilnFullyConnectedParams*>(KilnOpaqueNodeGetBuiltinData(node));
  const KilnFullyConnectedParams defaults = {kKilnActNone, kKilnFullyConnectedWeightsFormatDefault, false,
                                             false};
  if (options == nullptr) options = &defaults;
  if (options->weights_format != kKilnFullyConnectedWeightsFormatDefault) {
    KilnOpaqueContextReportError(context, "%s: shuffled weights format %d is not supported", op,
                                 static_cast<int>(options->weights_format));
    return kKilnError;
  }
  reference::Activation activation;
  KILN_OPAQUE_ENSURE_STATUS(ToActivation(context, op, options->activation, &activation));

  const Dims input_dims = TensorDims(input);
  const Dims weight_dims = TensorDims(weights);
  const int64_t num_units = weight_dims[0];
  const int64_t input_size = weight_dims[1];
  const int64_t input_count = reference::NumElements(input_dims);
  // The batch is every leading element group of input_size values, whatever the input's rank.
  if (input_size <= 0 || input_count % input_size != 0 ||
      (options->keep_num_dims && (input_dims.empty() || input_dims.back() != input_size))) {
    KilnOpaqueContextReportError(context, "%s: input %s of shape %s does not fit weights %s of shape %s%s",
                                 op, TensorLabel(input).c_str(), DimsToString(input_dims).c_str(),
                                 TensorLabel(weights).c_str(), DimsToString(weight_dims).c_str(),
                                 options->keep_num_dims ? " (keep_num_dims needs the last input dimension to "
                                                          "equal the weights' second)"
                                                        : "");
    return kKilnError;
  }
  if (state->is_int8) {
    if (state->type == kKilnInt16) {
      KILN_OPAQUE_ENSURE_STATUS(PrepareWeighted16x8(context, op, "weights", input, weights, bias, output,
                                                    /*quantized_dimension=*/0, num_units, activation, &state->quant));
      // Per-tensor weights: the package narrows the sum and multiplies as for int8 (quantized_kernels.h).
      std::vector<float> scales;
      std::vector<int32_t> zero_points;
      int dim = 0;
      state->quant.wide_multiply = GetQuantization(weights, &scales, &zero_points, &dim) && scales.size() > 1;
    } else {
      KILN_OPAQUE_ENSURE_STATUS(PrepareWeighted8(context, op, "weights", state->type, input, weights, bias, output,
                                                 /*quantized_dimension=*/0, num_units, activation, &state->quant));
    }
    // LiteRT's reference kernels apply the real multiplier in double, rounding half away from zero
    // (quantized_kernels.h; the fixed-point form with single rounding, ties away, agrees below sums of about
    // 2^24 and is kept for the fast path's bound). The 16x8 per-channel kernel keeps its int64 multiply.
    state->quant.rounding = reference::Rounding::kSingleAway;
    state->quant.real_multipliers.clear();
    if (state->type != kKilnInt16 || !state->quant.wide_multiply) {
      std::vector<float> input_scales, weight_scales, output_scales;
      std::vector<int32_t> zero_points;
      int dim = 0;
      if (GetQuantization(input, &input_scales, &zero_points, &dim) &&
          GetQuantization(weights, &weight_scales, &zero_points, &dim) &&
          GetQuantization(output, &output_scales, &zero_points, &dim)) {
        state->quant.real_multipliers =
            reference::RealMultipliers(input_scales[0], weight_scales, output_scales[0], num_units);
      }
    }
  } else if (bias != nullptr) {
    KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "bias", bias));
    const Dims bias_dims = TensorDims(bias);
    if (reference::NumElements(bias_dims) != num_units) {
      KilnOpaqueContextReportError(context, "%s: bias %s has shape %s; expected %lld elements", op,
                                   TensorLabel(bias).c_str(), DimsToString(bias_dims).c_str(),
                                   static_cast<long long>(num_units));
      return kKilnError;
    }
  }
  if (!state->is_int8) {
    KILN_OPAQUE_ENSURE_STATUS(
        PrepareFloatWeights(context, op, "weights", weights, /*quantized_dimension=*/0, &state->weights));
  }
  reference::FullyConnectedParams& p = state->params;
  p.batch = input_count / input_size;
  p.input_size = input_size;
  p.num_units = num_units;
  p.activation = activation;
  Dims output_dims;
  if (options->keep_num_dims) {
    output_dims = input_dims;
    output_dims.back() = num_units;
  } else {
    output_dims = {p.batch, num_units};
  }
  return ResizeOutput(context, op, output, output_dims);
}

template <typename T, typename W = T, typename B = int32_t>
KilnStatus FullyConnectedInvokeQuantized(KilnOpaqueContext* context, KilnOpaqueNode* node,
                                         const FullyConnectedState& state) {
  constexpr const char* op = "FULLY_CONNECTED";
  const reference::FullyConnectedParams& p = state.params;
  const T* input;
  const W* weights;
  const B* bias;
  T* output;
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "input", KilnOpaqueNodeGetInput(context, node, 0), p.batch * p.input_size, &input));
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "weights", KilnOpaqueNodeGetInput(context, node, 1),
                                         p.num_units * p.input_size, &weights));
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "bias", GetOptionalInput(context, node, 2), p.num_units, &bias));
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "output", KilnOpaqueNodeGetOutput(context, node, 0),
                                         p.batch * p.num_units, &output));
  reference::FullyConnectedQuantized<T, W, B>(p, state.quant, input, weights, bias, output);
  return kKilnOk;
}

KilnStatus FullyConnectedInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "FULLY_CONNECTED";
  KILN_OPS_GET_STATE(FullyConnectedState, state, context, node, op);
  const reference::FullyConnectedParams& p = state->params;
  if (p.batch * p.num_units == 0) return kKilnOk;
  if (state->is_int8) {
    if (state->type == kKilnUInt8) return FullyConnectedInvokeQuantized<uint8_t>(context, node, *state);
    if (state->type == kKilnInt16) {
      return FullyConnectedInvokeQuantized<int16_t, int8_t, int64_t>(context, node, *state);
    }
    return FullyConnectedInvokeQuantized<int8_t>(context, node, *state);
  }
  const float *input, *weights, *bias;
  float* output;
  KILN_OPAQUE_ENSURE_STATUS(
      GetFloatInvokeData(context, node, op, p.batch * p.input_size, p.batch * p.num_units, &input, &output));
  KILN_OPAQUE_ENSURE_STATUS(GetFloatWeightData(context, op, "weights",
                                               KilnOpaqueNodeGetInput(context, node, 1),
                                               p.num_units * p.input_size, state->weights, &weights));
  KILN_OPAQUE_ENSURE_STATUS(
      GetOptionalFloatData(context, op, "bias", GetOptionalInput(context, node, 2), p.num_units, &bias));
  reference::FullyConnectedFloat(p, input, weights, bias, output);
  return kKilnOk;
}

struct SoftmaxState {
  reference::SoftmaxParams params;
  bool is_int8 = false;  // a quantized path: int8, uint8 or int16 (`type`)
  KilnType type = kKilnFloat32;
  reference::SoftmaxInt8Params int8;
  reference::SoftmaxInt16Params int16;
  // int8 / uint8 input, int16 output (LiteRT's reference gemmlowp kernel; the output written as 1/65536, -32768).
  bool to16 = false;
  reference::SoftmaxTo16Params to16_params;
};

// SOFTMAX int16 (LiteRT's reference SoftmaxInt16), LiteRT's Prepare and Eval checks: input and output
// symmetric, the output scale within 0.1% of 1/32768, ranks 1 to 4 (LiteRT's Eval refuses the others).
KilnStatus PrepareSoftmaxInt16(KilnOpaqueContext* context, const char* op, const KilnOpaqueTensor* input,
                               const KilnOpaqueTensor* output, float beta, SoftmaxState* state) {
  float input_scale = 0.0f, output_scale = 0.0f;
  KILN_OPAQUE_ENSURE_STATUS(GetInt16Quantization(context, op, "input", input, &input_scale));
  KILN_OPAQUE_ENSURE_STATUS(GetInt16Quantization(context, op, "output", output, &output_scale));
  if (std::fabs(output_scale - 1.0f / 32768) > 0.001f * 1.0f / 32768) {
    KilnOpaqueContextReportError(context, "%s: int16 output %s has scale %g; SOFTMAX needs 1/32768 (within 0.1%%)",
                                 op, TensorLabel(output).c_str(), static_cast<double>(output_scale));
    return kKilnError;
  }
  const size_t rank = TensorDims(input).size();
  if (rank > 4) {
    KilnOpaqueContextReportError(context,
                                 "%s: int16 input %s has rank %d; the int16 kernel takes ranks 1 to 4 (as LiteRT)", op,
                                 TensorLabel(input).c_str(), static_cast<int>(rank));
    return kKilnError;
  }
  state->int16.outer = state->params.outer;
  state->int16.depth = state->params.depth;
  reference::PrepareSoftmaxInt16(input_scale, beta, &state->int16);
  return kKilnOk;
}

KilnStatus SoftmaxPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "SOFTMAX";
  KILN_OPS_GET_STATE(SoftmaxState, state, context, node, op);
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  state->type = IsInt16Input(context, node) ? kKilnInt16 : Quantized8InputType(context, node);
  state->is_int8 = state->type != kKilnNoType;
  if (state->is_int8) {
    KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, 1));
    KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
    KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  } else {
    KILN_OPAQUE_ENSURE_STATUS(GetFloatInputOutput(context, node, op, 1, 1, &input, &output));
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 1, 8));
  const auto* options = static_cast<const KilnSoftmaxParams*>(KilnOpaqueNodeGetBuiltinData(node));
  const Dims dims = TensorDims(input);
  reference::SoftmaxParams& p = state->params;
  p.depth = dims.back();
  p.outer = p.depth == 0 ? 0 : reference::NumElements(dims) / p.depth;
  p.beta = options != nullptr ? options->beta : 1.0f;
  state->to16 = state->is_int8 && state->type != kKilnInt16 && KilnOpaqueTensorType(output) == kKilnInt16;
  if (state->to16) {
    float input_scale, output_scale;
    int32_t input_zero_point, output_zero_point;
    KILN_OPAQUE_ENSURE_STATUS(
        GetQuantization8(context, op, "input", input, state->type, &input_scale, &input_zero_point));
    // LiteRT's reference kernel writes 1/65536 with zero point -32768 whatever the output says, and its default
    // path honours the output's quantization: only the one both agree on is served.
    KILN_OPAQUE_ENSURE_STATUS(
        GetQuantization8(context, op, "output", output, kKilnInt16, &output_scale, &output_zero_point));
    if (output_scale != 1.0f / 65536 || output_zero_point != -32768) {
      KilnOpaqueContextReportError(context,
                                   "%s: int16 output %s is quantized as %g, %d; a %s input's int16 SOFTMAX needs "
                                   "1/65536, -32768 (LiteRT's reference kernel writes that whatever the tensor says)",
                                   op, TensorLabel(output).c_str(), static_cast<double>(output_scale),
                                   static_cast<int>(output_zero_point), KilnTypeGetName(state->type));
      return kKilnError;
    }
    state->to16_params.outer = p.outer;
    state->to16_params.depth = p.depth;
    reference::PrepareSoftmaxTo16(input_scale, p.beta, &state->to16_params);
  } else if (state->type == kKilnInt16) {
    KILN_OPAQUE_ENSURE_STATUS(PrepareSoftmaxInt16(context, op, input, output, p.beta, state));
  } else if (state->is_int8) {
    float input_scale;
    int32_t input_zero_point;
    reference::SoftmaxInt8Params& q = state->int8;
    KILN_OPAQUE_ENSURE_STATUS(
        GetQuantization8(context, op, "input", input, state->type, &input_scale, &input_zero_point));
    KILN_OPAQUE_ENSURE_STATUS(
        GetQuantization8(context, op, "output", output, state->type, &q.output_scale, &q.output_zero_point));
    q.outer = p.outer;
    q.depth = p.depth;
    reference::PrepareSoftmaxInt8(input_scale, p.beta, &q);
  }
  return ResizeOutput(context, op, output, dims);
}

KilnStatus SoftmaxInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "SOFTMAX";
  KILN_OPS_GET_STATE(SoftmaxState, state, context, node, op);
  const reference::SoftmaxParams& p = state->params;
  const int64_t count = p.outer * p.depth;
  if (count == 0) return kKilnOk;
  if (state->is_int8) {
    const auto run = [&](auto type_tag) {
      using T = decltype(type_tag);
      const T* input;
      T* output;
      KILN_OPAQUE_ENSURE_STATUS(GetInvokeData(context, node, op, count, count, &input, &output));
      reference::SoftmaxQuantized<T>(state->int8, input, output);
      return kKilnOk;
    };
    if (state->to16) {
      const auto run16 = [&](auto type_tag) {
        using T = decltype(type_tag);
        const T* input;
        int16_t* output;
        KILN_OPAQUE_ENSURE_STATUS(
            GetTypedData(context, op, "input", KilnOpaqueNodeGetInput(context, node, 0), count, &input));
        KILN_OPAQUE_ENSURE_STATUS(
            GetTypedData(context, op, "output", KilnOpaqueNodeGetOutput(context, node, 0), count, &output));
        if (!reference::SoftmaxTo16<T>(state->to16_params, input, output)) {
          KilnOpaqueContextReportError(context, "%s: input %s: a row's sum of exponentials is outside LiteRT's range",
                                       op, TensorLabel(KilnOpaqueNodeGetInput(context, node, 0)).c_str());
          return kKilnError;
        }
        return kKilnOk;
      };
      return state->type == kKilnUInt8 ? run16(uint8_t{}) : run16(int8_t{});
    }
    if (state->type == kKilnInt16) {
      const int16_t* input;
      int16_t* output;
      KILN_OPAQUE_ENSURE_STATUS(GetInvokeData(context, node, op, count, count, &input, &output));
      if (!reference::SoftmaxInt16(state->int16, input, output)) {
        KilnOpaqueContextReportError(context,
                                     "%s: int16 input %s: a row's sum of exponentials exceeds int32 (rows of more "
                                     "than 65537 elements near the maximum), which LiteRT's int16 kernel does not "
                                     "handle",
                                     op, TensorLabel(KilnOpaqueNodeGetInput(context, node, 0)).c_str());
        return kKilnError;
      }
      return kKilnOk;
    }
    return state->type == kKilnUInt8 ? run(uint8_t{}) : run(int8_t{});
  }
  const float* input;
  float* output;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInvokeData(context, node, op, count, count, &input, &output));
  reference::SoftmaxFloat(p, input, output);
  return kKilnOk;
}

struct LogSoftmaxState {
  reference::SoftmaxParams params;
  bool is_int8 = false;  // a quantized path: int8, or uint8 (`type`)
  KilnType type = kKilnFloat32;
  reference::LogSoftmaxInt8Params int8;
};

// LOG_SOFTMAX over the last axis: float32, or int8 / uint8 with the output quantized as LiteRT requires (16/256,
// zero point 127 for int8, 255 for uint8).
KilnStatus LogSoftmaxPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "LOG_SOFTMAX";
  KILN_OPS_GET_STATE(LogSoftmaxState, state, context, node, op);
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  state->type = Quantized8InputType(context, node);
  state->is_int8 = state->type != kKilnNoType;
  if (state->is_int8) {
    KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, 1));
    KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
    KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  } else {
    KILN_OPAQUE_ENSURE_STATUS(GetFloatInputOutput(context, node, op, 1, 1, &input, &output));
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 1, 8));
  const Dims dims = TensorDims(input);
  reference::SoftmaxParams& p = state->params;
  p.depth = dims.back();
  p.outer = p.depth == 0 ? 0 : reference::NumElements(dims) / p.depth;
  if (state->is_int8) {
    float input_scale, output_scale;
    int32_t input_zero_point, output_zero_point;
    KILN_OPAQUE_ENSURE_STATUS(
        GetQuantization8(context, op, "input", input, state->type, &input_scale, &input_zero_point));
    KILN_OPAQUE_ENSURE_STATUS(
        GetQuantization8(context, op, "output", output, state->type, &output_scale, &output_zero_point));
    const int32_t required_zero_point = TypeMax(state->type);
    if (output_scale != 16.0f / 256 || output_zero_point != required_zero_point) {
      KilnOpaqueContextReportError(context,
                                   "%s: %s output %s has scale %g and zero point %d; LOG_SOFTMAX needs 16/256 "
                                   "and %d (as LiteRT)",
                                   op, KilnTypeGetName(state->type), TensorLabel(output).c_str(),
                                   static_cast<double>(output_scale), static_cast<int>(output_zero_point),
                                   static_cast<int>(required_zero_point));
      return kKilnError;
    }
    state->int8.outer = p.outer;
    state->int8.depth = p.depth;
    reference::PrepareLogSoftmaxInt8(input_scale, &state->int8);
  }
  return ResizeOutput(context, op, output, dims);
}

KilnStatus LogSoftmaxInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "LOG_SOFTMAX";
  KILN_OPS_GET_STATE(LogSoftmaxState, state, context, node, op);
  const reference::SoftmaxParams& p = state->params;
  const int64_t count = p.outer * p.depth;
  if (count == 0) return kKilnOk;
  if (state->is_int8) {
    const auto run = [&](auto type_tag) {
      using T = decltype(type_tag);
      const T* input;
      T* output;
      KILN_OPAQUE_ENSURE_STATUS(GetInvokeData(context, node, op, count, count, &input, &output));
      reference::LogSoftmaxQuantized<T>(state->int8, input, output);
      return kKilnOk;
    };
    return state->type == kKilnUInt8 ? run(uint8_t{}) : run(int8_t{});
  }
  const float* input;
  float* output;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInvokeData(context, node, op, count, count, &input, &output));
  reference::LogSoftmaxFloat(p, input, output);
  return kKilnOk;
}

}  // namespace

namespace {

// ---- BATCH_MATMUL (float32): lhs [..., r, k] x rhs [..., k, c] (adj_x / adj_y: stored transposed), rank 2-5,
// batch dimensions broadcast (numpy rules, aligned at the back).
constexpr int kMaxBatchMatMulRank = 5;

struct BatchMatMulState {
  reference::BatchMatMulParams params;
  int64_t lhs_count = 0, rhs_count = 0, output_count = 0;
  bool is_int8 = false, is_int16 = false;
  reference::BatchMatMulInt8Params int8;
  // Hybrid (float32 lhs and output, constant int8 rhs): the rhs dequantized once in Prepare (as the hybrid
  // FULLY_CONNECTED), the float kernel then.
  bool is_hybrid = false;
  FloatWeights rhs_weights;
};

KilnStatus BatchMatMulPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "BATCH_MATMUL";
  KILN_OPS_GET_STATE(BatchMatMulState, state, context, node, op);
  const KilnOpaqueTensor *lhs, *rhs;
  KilnOpaqueTensor* output;
  state->is_int8 = IsInt8Input(context, node);
  state->is_int16 = IsInt16Input(context, node);
  if (state->is_int8) {
    // int8 (LiteRT's v2+): per-tensor int8 lhs, rhs and output, each with its own zero point; the multiplier
    // lhs_scale * rhs_scale / output_scale, the scales' product taken in float as LiteRT's
    // GetQuantizedConvolutionMultipler.
    KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
    KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "lhs", &lhs));
    KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "rhs", &rhs));
    KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
    float lhs_scale, rhs_scale, output_scale;
    reference::BatchMatMulInt8Params& q = state->int8;
    KILN_OPAQUE_ENSURE_STATUS(GetQuantization8(context, op, "lhs", lhs, kKilnInt8, &lhs_scale, &q.lhs_zero_point));
    KILN_OPAQUE_ENSURE_STATUS(GetQuantization8(context, op, "rhs", rhs, kKilnInt8, &rhs_scale, &q.rhs_zero_point));
    KILN_OPAQUE_ENSURE_STATUS(
        GetQuantization8(context, op, "output", output, kKilnInt8, &output_scale, &q.output_zero_point));
    q.multiplier = reference::QuantizedConvolutionMultiplier(lhs_scale, rhs_scale, output_scale,
                                                             reference::ScaleProduct::kFloat);
    q.rounding = reference::Rounding::kDouble;  // measured: single rounding differs on q8_batch_matmul_2 and _7
  } else if (state->is_int16) {
    // int16 (LiteRT's v3+): symmetric int16 lhs, rhs and output (zero points 0, as LiteRT requires).
    KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
    KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "lhs", &lhs));
    KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "rhs", &rhs));
    KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
    float lhs_scale, rhs_scale, output_scale;
    reference::BatchMatMulInt8Params& q = state->int8;
    KILN_OPAQUE_ENSURE_STATUS(GetInt16Quantization(context, op, "lhs", lhs, &lhs_scale));
    KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "rhs", rhs, kKilnInt16));
    KILN_OPAQUE_ENSURE_STATUS(GetInt16Quantization(context, op, "rhs", rhs, &rhs_scale));
    KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "output", output, kKilnInt16));
    KILN_OPAQUE_ENSURE_STATUS(GetInt16Quantization(context, op, "output", output, &output_scale));
    q.multiplier = reference::QuantizedConvolutionMultiplier(lhs_scale, rhs_scale, output_scale,
                                                             reference::ScaleProduct::kFloat);
    q.wide_multiply = true;  // measured: the sum narrowed to int32 with double rounding differs (docs/ops.md)
  } else {
    KILN_OPAQUE_ENSURE_STATUS(GetFloatInputOutput(context, node, op, 2, 2, &lhs, &output, "rhs", &rhs));
    state->is_hybrid = KilnOpaqueTensorType(rhs) == kKilnInt8;
    if (!state->is_hybrid) KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "rhs", rhs));
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "lhs", lhs, 2, kMaxBatchMatMulRank));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "rhs", rhs, 2, kMaxBatchMatMulRank));
  const auto* options = static_cast<const KilnBatchMatMulParams*>(KilnOpaqueNodeGetBuiltinData(node));
  reference::BatchMatMulParams& p = state->params;
  p.adj_x = options != nullptr && options->adj_x;
  p.adj_y = options != nullptr && options->adj_y;
  const Dims a = TensorDims(lhs), b = TensorDims(rhs);
  const size_t ra = a.size(), rb = b.size();
  if (state->is_hybrid) {
    // Per tensor, or per channel along the rhs's columns (its last dimension, or the one before with adj_y).
    const int columns = static_cast<int>(rb) - (p.adj_y ? 2 : 1);
    KILN_OPAQUE_ENSURE_STATUS(PrepareFloatWeights(context, op, "rhs", rhs, columns, &state->rhs_weights));
  }
  p.rows = p.adj_x ? a[ra - 1] : a[ra - 2];
  p.depth = p.adj_x ? a[ra - 2] : a[ra - 1];
  const int64_t rhs_depth = p.adj_y ? b[rb - 1] : b[rb - 2];
  p.cols = p.adj_y ? b[rb - 2] : b[rb - 1];
  if (p.depth != rhs_depth) {
    KilnOpaqueContextReportError(context,
                                 "%s: lhs %s %s and rhs %s %s (adj_x %d, adj_y %d) disagree on the summed dimension: "
                                 "%lld and %lld",
                                 op, TensorLabel(lhs).c_str(), DimsToString(a).c_str(), TensorLabel(rhs).c_str(),
                                 DimsToString(b).c_str(), p.adj_x ? 1 : 0, p.adj_y ? 1 : 0,
                                 static_cast<long long>(p.depth), static_cast<long long>(rhs_depth));
    return kKilnError;
  }
  // The batch dimensions, broadcast: each output batch index maps to one matrix of each operand.
  const size_t batch_rank = std::max(ra, rb) - 2;
  Dims batch(batch_rank), a_batch(batch_rank, 1), b_batch(batch_rank, 1);
  for (size_t d = 0; d < batch_rank; ++d) {
    const size_t from_back = batch_rank - d;  // 1 = the last batch dimension
    if (from_back <= ra - 2) a_batch[d] = a[ra - 2 - from_back];
    if (from_back <= rb - 2) b_batch[d] = b[rb - 2 - from_back];
    if (a_batch[d] != b_batch[d] && a_batch[d] != 1 && b_batch[d] != 1) {
      KilnOpaqueContextReportError(context, "%s: the batch dimensions of lhs %s %s and rhs %s %s do not broadcast",
                                   op, TensorLabel(lhs).c_str(), DimsToString(a).c_str(), TensorLabel(rhs).c_str(),
                                   DimsToString(b).c_str());
      return kKilnError;
    }
    batch[d] = a_batch[d] == 1 ? b_batch[d] : a_batch[d];
  }
  const int64_t batches = reference::NumElements(batch);
  p.lhs_batch.assign(static_cast<size_t>(batches), 0);
  p.rhs_batch.assign(static_cast<size_t>(batches), 0);
  for (int64_t n = 0; n < batches; ++n) {
    int64_t rest = n, ia = 0, ib = 0, stride_a = 1, stride_b = 1;
    for (size_t d = batch_rank; d-- > 0;) {
      const int64_t coord = rest % batch[d];
      rest /= batch[d];
      ia += (a_batch[d] == 1 ? 0 : coord) * stride_a;
      ib += (b_batch[d] == 1 ? 0 : coord) * stride_b;
      stride_a *= a_batch[d];
      stride_b *= b_batch[d];
    }
    p.lhs_batch[n] = ia;
    p.rhs_batch[n] = ib;
  }
  Dims out = batch;
  out.push_back(p.rows);
  out.push_back(p.cols);
  state->lhs_count = reference::NumElements(a);
  state->rhs_count = reference::NumElements(b);
  state->output_count = reference::NumElements(out);
  return ResizeOutput(context, op, output, out);
}

KilnStatus BatchMatMulInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "BATCH_MATMUL";
  KILN_OPS_GET_STATE(BatchMatMulState, state, context, node, op);
  if (state->output_count == 0) return kKilnOk;
  if (state->is_int8) {
    const int8_t *lhs, *rhs;
    int8_t* output;
    KILN_OPAQUE_ENSURE_STATUS(
        GetInvokeData(context, node, op, state->lhs_count, state->output_count, &lhs, &output));
    KILN_OPAQUE_ENSURE_STATUS(
        GetTypedData(context, op, "rhs", KilnOpaqueNodeGetInput(context, node, 1), state->rhs_count, &rhs));
    reference::BatchMatMulInt8(state->params, state->int8, lhs, rhs, output);
    return kKilnOk;
  }
  if (state->is_int16) {
    const int16_t *lhs, *rhs;
    int16_t* output;
    KILN_OPAQUE_ENSURE_STATUS(
        GetInvokeData(context, node, op, state->lhs_count, state->output_count, &lhs, &output));
    KILN_OPAQUE_ENSURE_STATUS(
        GetTypedData(context, op, "rhs", KilnOpaqueNodeGetInput(context, node, 1), state->rhs_count, &rhs));
    reference::BatchMatMul16(state->params, state->int8, lhs, rhs, output);
    return kKilnOk;
  }
  const float *lhs, *rhs;
  float* output;
  KILN_OPAQUE_ENSURE_STATUS(
      GetFloatInvokeData(context, node, op, state->lhs_count, state->output_count, &lhs, &output));
  if (state->is_hybrid) {
    KILN_OPAQUE_ENSURE_STATUS(GetFloatWeightData(context, op, "rhs", KilnOpaqueNodeGetInput(context, node, 1),
                                                 state->rhs_count, state->rhs_weights, &rhs));
  } else {
    KILN_OPAQUE_ENSURE_STATUS(
        GetTypedData(context, op, "rhs", KilnOpaqueNodeGetInput(context, node, 1), state->rhs_count, &rhs));
  }
  reference::BatchMatMulFloat(state->params, lhs, rhs, output);
  return kKilnOk;
}

}  // namespace

void AddFullyConnectedOps(std::vector<BuiltinOp>* table) {
  // FULLY_CONNECTED: v3/v9/v12 are hybrid (int8 weights; v12 per channel), v5 keep_num_dims, v6 no bias; the
  // rest add integer types or sparse weights (v8, which this kernel rejects: the weights' data would not
  // match their shape). SOFTMAX: v2/v3 add integer types.
  table->push_back({kKilnBuiltinFullyConnected, 1, 12,
                    MakeOperator<FullyConnectedState>(kKilnBuiltinFullyConnected, 12, &FullyConnectedPrepare,
                                                      &FullyConnectedInvoke)});
  table->push_back({kKilnBuiltinSoftmax, 1, 3,
                    MakeOperator<SoftmaxState>(kKilnBuiltinSoftmax, 3, &SoftmaxPrepare, &SoftmaxInvoke)});
  // LOG_SOFTMAX: LiteRT registers v1-v2 (v2 int8; uint8 at v1).
  table->push_back({kKilnBuiltinLogSoftmax, 1, 2,
                    MakeOperator<LogSoftmaxState>(kKilnBuiltinLogSoftmax, 2, &LogSoftmaxPrepare,
                                                  &LogSoftmaxInvoke)});
  // BATCH_MATMUL: LiteRT's v1-v4 (v2+ add int8/int16 and hybrid weights: constant int8 rhs, dequantized).
  table->push_back({kKilnBuiltinBatchMatmul, 1, 4,
                    MakeOperator<BatchMatMulState>(kKilnBuiltinBatchMatmul, 4, &BatchMatMulPrepare,
                                                   &BatchMatMulInvoke)});
}

}  // namespace kiln::ops
