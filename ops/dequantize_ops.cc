// DEQUANTIZE: int8, uint8, int16 (per tensor or per channel) and float16 to float32.
#include <type_traits>

#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/quantized_kernels.h"
#include "ops/reference/dequantize.h"

namespace kiln::ops {
namespace {

struct DequantizeState {
  reference::DequantizeParams params;
  KilnType input_type = kKilnNoType;
  int64_t count = 0;
};

KilnStatus DequantizePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "DEQUANTIZE";
  KILN_OPS_GET_STATE(DequantizeState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, 1));
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "output", output));
  const KilnType type = KilnOpaqueTensorType(input);
  const Dims dims = TensorDims(input);
  state->input_type = type;
  state->count = reference::NumElements(dims);
  if (type == kKilnFloat16) return ResizeOutput(context, op, output, dims);
  if (type != kKilnInt8 && type != kKilnUInt8 && type != kKilnInt16) {
    KilnOpaqueContextReportError(context, "%s: input %s has type %s; expected int8, uint8, int16 or float16",
                                 op, TensorLabel(input).c_str(), KilnTypeGetName(type));
    return kKilnError;
  }
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
  int quantized_dimension = 0;
  if (!GetQuantization(input, &scales, &zero_points, &quantized_dimension)) {
    KilnOpaqueContextReportError(context, "%s: input %s has no quantization parameters", op,
                                 TensorLabel(input).c_str());
    return kKilnError;
  }
  const int channels = static_cast<int>(scales.size());
  if (channels > 1 && (quantized_dimension < 0 || quantized_dimension >= static_cast<int>(dims.size()) ||
                       dims[quantized_dimension] != channels)) {
    KilnOpaqueContextReportError(context,
                                 "%s: input %s of shape %s has %d scales along dimension %d, which does not "
                                 "match its size",
                                 op, TensorLabel(input).c_str(), DimsToString(dims).c_str(), channels,
                                 quantized_dimension);
    return kKilnError;
  }
  state->params =
      reference::MakeDequantizeParams(dims, quantized_dimension, std::move(scales), std::move(zero_points));
  return ResizeOutput(context, op, output, dims);
}

KilnStatus DequantizeInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "DEQUANTIZE";
  KILN_OPS_GET_STATE(DequantizeState, state, context, node, op);
  if (state->count == 0) return kKilnOk;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  const size_t element_size = state->input_type == kKilnInt8 || state->input_type == kKilnUInt8 ? 1 : 2;
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input", input, state->count, element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, state->count, 4));
  const void* in = KilnOpaqueTensorData(input);
  float* out = FloatData(output);
  switch (state->input_type) {
    case kKilnInt8:
      reference::DequantizeFloat(state->params, static_cast<const int8_t*>(in), out);
      break;
    case kKilnUInt8:
      reference::DequantizeFloat(state->params, static_cast<const uint8_t*>(in), out);
      break;
    case kKilnInt16:
      reference::DequantizeFloat(state->params, static_cast<const int16_t*>(in), out);
      break;
    default:
      reference::HalfToFloatArray(state->count, static_cast<const uint16_t*>(in), out);
      break;
  }
  return kKilnOk;
}

// QUANTIZE: float32 -> int8 (per tensor), and int8 -> int8 (requantize to the output's scale and zero point).
struct QuantizeState {
  bool from_float = true;
  KilnType input_type = kKilnFloat32, output_type = kKilnInt8;  // int8 or uint8 each
  int64_t count = 0;
  float scale = 1.0f;                 // float32 input: the output's
  int32_t input_zero_point = 0, output_zero_point = 0;
  reference::QuantizedMultiplier multiplier;  // int8 input: input scale / output scale
};

KilnStatus QuantizePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "QUANTIZE";
  KILN_OPS_GET_STATE(QuantizeState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, 1));
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  const KilnType input_type = KilnOpaqueTensorType(input);
  const KilnType output_type = KilnOpaqueTensorType(output);
  // float32 -> int8, uint8, int16; int8 <-> uint8; int8 <-> int16; uint8 -> uint8; int16 -> int16.
  const bool supported =
      input_type == kKilnFloat32 ? (output_type == kKilnInt8 || output_type == kKilnUInt8 || output_type == kKilnInt16)
      : input_type == kKilnInt16 ? (output_type == kKilnInt8 || output_type == kKilnInt16)
      : input_type == kKilnInt8  ? (output_type == kKilnInt8 || output_type == kKilnUInt8 || output_type == kKilnInt16)
      : input_type == kKilnUInt8 ? (output_type == kKilnInt8 || output_type == kKilnUInt8)
                                 : false;
  if (!supported) {
    KilnOpaqueContextReportError(context,
                                 "%s: input %s of type %s to output %s of type %s: Kiln implements float32 -> "
                                 "int8/uint8/int16, int8 -> int8/uint8/int16, uint8 -> int8/uint8, int16 -> int8/int16",
                                 op, TensorLabel(input).c_str(), KilnTypeGetName(input_type),
                                 TensorLabel(output).c_str(), KilnTypeGetName(output_type));
    return kKilnError;
  }
  state->input_type = input_type;
  state->output_type = output_type;
  KILN_OPAQUE_ENSURE_STATUS(
      GetQuantization8(context, op, "output", output, output_type, &state->scale, &state->output_zero_point));
  state->from_float = input_type == kKilnFloat32;
  if (!state->from_float) {
    float input_scale;
    KILN_OPAQUE_ENSURE_STATUS(
        GetQuantization8(context, op, "input", input, input_type, &input_scale, &state->input_zero_point));
    // As LiteRT: the ratio in double from the float scales.
    state->multiplier =
        reference::QuantizeMultiplier(static_cast<double>(input_scale) / static_cast<double>(state->scale));
  }
  const Dims dims = TensorDims(input);
  state->count = reference::NumElements(dims);
  return ResizeOutput(context, op, output, dims);
}

// QUANTIZE from In (float, int8 or uint8) into Out (int8 or uint8).
template <typename In, typename Out>
KilnStatus QuantizeInvokeTyped(KilnOpaqueContext* context, KilnOpaqueNode* node, const QuantizeState& state) {
  constexpr const char* op = "QUANTIZE";
  const In* in;
  Out* out;
  KILN_OPAQUE_ENSURE_STATUS(GetInvokeData(context, node, op, state.count, state.count, &in, &out));
  if constexpr (std::is_same_v<In, float>) {
    if constexpr (std::is_same_v<Out, int8_t>) {
      reference::QuantizeFloatToInt8(state.count, state.scale, state.output_zero_point, in, out);
    } else if constexpr (std::is_same_v<Out, int16_t>) {
      reference::QuantizeFloatToInt16(state.count, state.scale, state.output_zero_point, in, out);
    } else {
      reference::QuantizeFloatToUInt8(state.count, state.scale, state.output_zero_point, in, out);
    }
  } else if constexpr ((std::is_same_v<In, uint8_t> && std::is_same_v<Out, int16_t>) ||
                       (std::is_same_v<In, int16_t> && std::is_same_v<Out, uint8_t>)) {
    return kKilnError;  // refused in Prepare
  } else {
    reference::Requantize(state.count, state.input_zero_point, state.multiplier, state.output_zero_point, in, out);
  }
  return kKilnOk;
}

template <typename Out>
KilnStatus QuantizeInvokeTo(KilnOpaqueContext* context, KilnOpaqueNode* node, const QuantizeState& state) {
  switch (state.input_type) {
    case kKilnFloat32:
      return QuantizeInvokeTyped<float, Out>(context, node, state);
    case kKilnUInt8:
      return QuantizeInvokeTyped<uint8_t, Out>(context, node, state);
    case kKilnInt16:
      return QuantizeInvokeTyped<int16_t, Out>(context, node, state);
    default:
      return QuantizeInvokeTyped<int8_t, Out>(context, node, state);
  }
}

KilnStatus QuantizeInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "QUANTIZE";
  KILN_OPS_GET_STATE(QuantizeState, state, context, node, op);
  if (state->count == 0) return kKilnOk;
  if (state->output_type == kKilnUInt8) return QuantizeInvokeTo<uint8_t>(context, node, *state);
  if (state->output_type == kKilnInt16) return QuantizeInvokeTo<int16_t>(context, node, *state);
  return QuantizeInvokeTo<int8_t>(context, node, *state);
}

}  // namespace

void AddDequantizeOps(std::vector<BuiltinOp>* table) {
  // QUANTIZE: v1 float to (u)int8, v2 int8 requantize, v3 int16; Kiln serves float32/int8/uint8 -> int8/uint8.
  table->push_back({kKilnBuiltinQuantize, 1, 3,
                    MakeOperator<QuantizeState>(kKilnBuiltinQuantize, 3, &QuantizePrepare, &QuantizeInvoke)});
  // v2 int8, v3 float16/int16, v4 per channel, v5 int16 per channel: all to float32.
  table->push_back(
      {kKilnBuiltinDequantize, 1, 5,
       MakeOperator<DequantizeState>(kKilnBuiltinDequantize, 5, &DequantizePrepare, &DequantizeInvoke)});
}

}  // namespace kiln::ops
