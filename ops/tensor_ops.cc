// RESHAPE, SQUEEZE (any element type: they only copy bytes), CONCATENATION, PAD, PADV2, TRANSPOSE (float32, int8
// or uint8), MEAN and SUM (float32 or int8).
#include "ops/reference/tensor_ops.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/quantized_kernels.h"

namespace kiln::ops {
namespace {

// The ranks TFLite's kernels accept for these ops.
constexpr int kMaxTransposeRank = 6;
constexpr int kMaxPadRank = 8;

// Checks that input and output share a sized element type, for the byte-copying ops.
KilnStatus CheckCopyTypes(KilnOpaqueContext* context, const char* op, const KilnOpaqueTensor* input,
                          const KilnOpaqueTensor* output) {
  const KilnType type = KilnOpaqueTensorType(input);
  size_t element_size = 0;
  if (KilnOpaqueContextGetSizeOfType(context, type, &element_size) != kKilnOk || element_size == 0) {
    KilnOpaqueContextReportError(context, "%s: input %s has type %s, which has no fixed element size", op,
                                 TensorLabel(input).c_str(), KilnTypeGetName(type));
    return kKilnError;
  }
  return CheckType(context, op, "output", output, type);
}

// Copies the input's bytes to the output (RESHAPE and SQUEEZE keep the data as it is).
KilnStatus CopyInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op) {
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  const size_t bytes = KilnOpaqueTensorByteSize(input);
  if (bytes == 0) return kKilnOk;
  const void* src = KilnOpaqueTensorData(input);
  void* dst = KilnOpaqueTensorData(output);
  if (src == nullptr || dst == nullptr || KilnOpaqueTensorByteSize(output) != bytes) {
    KilnOpaqueContextReportError(context, "%s: input %s (%zu bytes) and output %s (%zu bytes) cannot be copied", op,
                                 TensorLabel(input).c_str(), bytes, TensorLabel(output).c_str(),
                                 KilnOpaqueTensorByteSize(output));
    return kKilnError;
  }
  if (src != dst) std::memmove(dst, src, bytes);
  return kKilnOk;
}

KilnStatus ReshapePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "RESHAPE";
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 2, 1));
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckCopyTypes(context, op, input, output));
  const auto* options = static_cast<const KilnReshapeParams*>(KilnOpaqueNodeGetBuiltinData(node));
  const bool options_have_shape = options != nullptr && options->num_dimensions > 0;
  const KilnOpaqueTensor* shape_tensor = GetOptionalInput(context, node, 1);

  // As LiteRT: a 1-D int32 second input gives the shape; otherwise the options do. A shape computed at run
  // time is only usable here when the options state the same shape.
  std::vector<int32_t> requested;
  const bool shape_is_vector = shape_tensor != nullptr && KilnOpaqueTensorNumDims(shape_tensor) == 1 &&
                               KilnOpaqueTensorType(shape_tensor) == kKilnInt32;
  if (shape_is_vector && !IsConstant(shape_tensor) && !options_have_shape) {
    return MakeOutputDynamic(context, op, output);  // as LiteRT: shaped at Invoke from the values (ReshapeInvoke)
  }
  if (shape_is_vector && (IsConstant(shape_tensor) || !options_have_shape)) {
    KILN_OPAQUE_ENSURE_STATUS(ReadConstantInts(context, op, "shape", shape_tensor, false, &requested));
  } else if (options != nullptr) {
    const int n = options->num_dimensions;
    if (n < 0 || n > KILN_RESHAPE_MAX_DIMENSIONS) {
      KilnOpaqueContextReportError(context, "%s: new_shape option has %d dimensions", op, n);
      return kKilnError;
    }
    requested.assign(options->shape, options->shape + n);
    // Old converters wrote new_shape [0] to mean a scalar.
    if (n == 1 && requested[0] == 0) requested.clear();
  }
  Dims output_dims;
  std::string error;
  const Dims input_dims = TensorDims(input);
  if (!reference::ReshapeOutputShape(input_dims, requested, &output_dims, &error)) {
    KilnOpaqueContextReportError(context, "%s: input %s: %s", op, TensorLabel(input).c_str(), error.c_str());
    return kKilnError;
  }
  return ResizeOutput(context, op, output, output_dims);
}

KilnStatus ReshapeInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "RESHAPE";
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  const auto* options = static_cast<const KilnReshapeParams*>(KilnOpaqueNodeGetBuiltinData(node));
  const KilnOpaqueTensor* shape_tensor = GetOptionalInput(context, node, 1);
  if (KilnOpaqueTensorGetAllocationType(output) == kKilnDynamic && shape_tensor != nullptr &&
      !IsConstant(shape_tensor) && KilnOpaqueTensorNumDims(shape_tensor) == 1 &&
      KilnOpaqueTensorType(shape_tensor) == kKilnInt32 && !(options != nullptr && options->num_dimensions > 0)) {
    // The shape computed at run time (as Prepare decided): read now, checked against the input's element count.
    const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
    std::vector<int64_t> values;
    KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "shape", shape_tensor, &values));
    std::vector<int32_t> requested;
    for (int64_t v : values) {
      if (v < INT32_MIN || v > INT32_MAX) {
        KilnOpaqueContextReportError(context, "%s: shape %s holds %lld, out of range", op,
                                     TensorLabel(shape_tensor).c_str(), static_cast<long long>(v));
        return kKilnError;
      }
      requested.push_back(static_cast<int32_t>(v));
    }
    Dims output_dims;
    std::string error;
    if (!reference::ReshapeOutputShape(TensorDims(input), requested, &output_dims, &error)) {
      KilnOpaqueContextReportError(context, "%s: input %s with the run-time shape %s: %s", op,
                                   TensorLabel(input).c_str(), TensorLabel(shape_tensor).c_str(), error.c_str());
      return kKilnError;
    }
    KILN_OPAQUE_ENSURE_STATUS(ResizeOutput(context, op, output, output_dims));
  }
  return CopyInvoke(context, node, op);
}

KilnStatus SqueezePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "SQUEEZE";
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, 1));
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckCopyTypes(context, op, input, output));
  const auto* options = static_cast<const KilnSqueezeParams*>(KilnOpaqueNodeGetBuiltinData(node));
  std::vector<int32_t> squeeze_dims;
  if (options != nullptr) {
    const int n = options->num_squeeze_dims;
    if (n < 0 || n > KILN_RESHAPE_MAX_DIMENSIONS) {
      KilnOpaqueContextReportError(context, "%s: squeeze_dims option has %d entries", op, n);
      return kKilnError;
    }
    squeeze_dims.assign(options->squeeze_dims, options->squeeze_dims + n);
  }
  Dims output_dims;
  std::string error;
  if (!reference::SqueezeOutputShape(TensorDims(input), squeeze_dims, &output_dims, &error)) {
    KilnOpaqueContextReportError(context, "%s: input %s: %s", op, TensorLabel(input).c_str(), error.c_str());
    return kKilnError;
  }
  return ResizeOutput(context, op, output, output_dims);
}

KilnStatus SqueezeInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return CopyInvoke(context, node, "SQUEEZE");
}

struct ConcatState {
  reference::ConcatParams params;
  reference::ConcatParams byte_params;  // int16: the same concatenation in bytes
  size_t element_size = 4;
  bool is_int8 = false;  // a quantized byte copy: int8, uint8 or int16
  size_t num_inputs = 0;
  std::vector<const float*> float_inputs;  // reused by Invoke
  std::vector<const int8_t*> int8_inputs;
};

// int8 CONCATENATION copies stored values, so every input must be quantized as the output (LiteRT's int8 kernel
// has the same restriction).
KilnStatus CheckConcatInt8Input(KilnOpaqueContext* context, const char* op, const char* role,
                                const KilnOpaqueTensor* input, const KilnOpaqueTensor* output, KilnType type,
                                float output_scale, int32_t output_zero_point) {
  float scale;
  int32_t zero_point;
  KILN_OPAQUE_ENSURE_STATUS(GetQuantization8(context, op, role, input, type, &scale, &zero_point));
  if (scale == output_scale && zero_point == output_zero_point) return kKilnOk;
  KilnOpaqueContextReportError(context,
                               "%s: int8 %s %s (scale %g, zero point %d) must have the quantization of output %s "
                               "(scale %g, zero point %d)",
                               op, role, TensorLabel(input).c_str(), static_cast<double>(scale),
                               static_cast<int>(zero_point), TensorLabel(output).c_str(),
                               static_cast<double>(output_scale), static_cast<int>(output_zero_point));
  return kKilnError;
}

KilnStatus ConcatPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "CONCATENATION";
  KILN_OPS_GET_STATE(ConcatState, state, context, node, op);
  const int num_inputs = KilnOpaqueNodeNumberOfInputs(node);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, num_inputs > 1 ? num_inputs : 1, 1));
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  // int8, uint8 or int16 (the same copy of stored values): `type`.
  const KilnType type = IsInt16Input(context, node) ? kKilnInt16 : Quantized8InputType(context, node);
  state->is_int8 = type != kKilnNoType;
  state->element_size = type == kKilnInt16 ? 2 : state->is_int8 ? 1 : 4;
  float output_scale = 0.0f;
  int32_t output_zero_point = 0;
  if (state->is_int8) {
    KILN_OPAQUE_ENSURE_STATUS(GetQuantization8(context, op, "output", output, type, &output_scale, &output_zero_point));
  } else {
    KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "output", output));
  }
  std::vector<Dims> input_dims;
  for (int i = 0; i < num_inputs; ++i) {
    const std::string role = "input " + std::to_string(i);
    const KilnOpaqueTensor* input;
    KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, i, role.c_str(), &input));
    if (state->is_int8) {
      KILN_OPAQUE_ENSURE_STATUS(
          CheckConcatInt8Input(context, op, role.c_str(), input, output, type, output_scale, output_zero_point));
    } else {
      KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, role.c_str(), input));
    }
    input_dims.push_back(TensorDims(input));
  }
  const auto* options = static_cast<const KilnConcatenationParams*>(KilnOpaqueNodeGetBuiltinData(node));
  const int rank = static_cast<int>(input_dims[0].size());
  int axis = options != nullptr ? options->axis : 0;
  if (axis < 0) axis += rank;
  reference::Activation activation = reference::Activation::kNone;
  if (options != nullptr) KILN_OPAQUE_ENSURE_STATUS(ToActivation(context, op, options->activation, &activation));
  if (state->is_int8 && activation != reference::Activation::kNone) {
    // LiteRT's int8 kernel ignores the option; Kiln refuses rather than guess which answer the model means.
    KilnOpaqueContextReportError(context,
                                 "%s: int8 output %s: a fused activation on int8 CONCATENATION is not "
                                 "supported",
                                 op, TensorLabel(output).c_str());
    return kKilnError;
  }
  Dims output_dims;
  std::string error;
  if (!reference::ConcatOutputShape(input_dims, axis, &output_dims, &error)) {
    KilnOpaqueContextReportError(context, "%s: %s (axis option %d)", op, error.c_str(),
                                 options != nullptr ? options->axis : 0);
    return kKilnError;
  }
  state->params = reference::MakeConcatParams(input_dims, axis, activation);
  state->byte_params = state->params;
  for (int64_t& slice : state->byte_params.slice_sizes) slice *= static_cast<int64_t>(state->element_size);
  state->num_inputs = static_cast<size_t>(num_inputs);
  state->float_inputs.assign(state->is_int8 ? 0 : state->num_inputs, nullptr);
  state->int8_inputs.assign(state->is_int8 ? state->num_inputs : 0, nullptr);
  return ResizeOutput(context, op, output, output_dims);
}

KilnStatus ConcatInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "CONCATENATION";
  KILN_OPS_GET_STATE(ConcatState, state, context, node, op);
  const reference::ConcatParams& p = state->params;
  const size_t element_size = state->element_size;
  int64_t total = 0;
  for (size_t i = 0; i < state->num_inputs; ++i) {
    const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, static_cast<int>(i));
    const int64_t count = p.outer * p.slice_sizes[i];
    KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input", input, count, element_size));
    const void* data = count == 0 ? nullptr : KilnOpaqueTensorData(input);
    if (state->is_int8) {
      state->int8_inputs[i] = static_cast<const int8_t*>(data);
    } else {
      state->float_inputs[i] = static_cast<const float*>(data);
    }
    total += count;
  }
  if (total == 0) return kKilnOk;
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, total, element_size));
  if (state->is_int8) {
    // Stored values of any width, copied as bytes (int16: the byte-sized slices).
    reference::ConcatInt8(state->element_size == 1 ? p : state->byte_params, state->int8_inputs.data(),
                          static_cast<int8_t*>(KilnOpaqueTensorData(output)));
  } else {
    reference::ConcatFloat(p, state->float_inputs.data(), FloatData(output));
  }
  return kKilnOk;
}

// The start of Prepare for an op that moves values without arithmetic (PAD, TRANSPOSE): float32, or int8 or
// uint8 (`type`) with the output quantized as the input (its zero point returned: PAD's fill value). PADV2 takes
// a third input (`max_inputs` 3).
KilnStatus GetMovingInputOutput(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op,
                                const char* second_role, const KilnOpaqueTensor** input,
                                const KilnOpaqueTensor** second, KilnOpaqueTensor** output, KilnType* type,
                                int32_t* zero_point, int max_inputs = 2) {
  *type = Quantized8InputType(context, node);
  if (*type == kKilnNoType) {
    *type = kKilnFloat32;
    return GetFloatInputOutput(context, node, op, 2, max_inputs, input, output, second_role, second);
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, max_inputs, 1));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", input));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, second_role, second));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, output));
  float input_scale, output_scale;
  int32_t input_zero_point;
  KILN_OPAQUE_ENSURE_STATUS(GetQuantization8(context, op, "input", *input, *type, &input_scale, &input_zero_point));
  KILN_OPAQUE_ENSURE_STATUS(GetQuantization8(context, op, "output", *output, *type, &output_scale, zero_point));
  if (input_scale != output_scale || input_zero_point != *zero_point) {
    KilnOpaqueContextReportError(context,
                                 "%s: %s output %s (scale %g, zero point %d) must have the quantization of "
                                 "input %s (scale %g, zero point %d)",
                                 op, KilnTypeGetName(*type), TensorLabel(*output).c_str(),
                                 static_cast<double>(output_scale), static_cast<int>(*zero_point),
                                 TensorLabel(*input).c_str(), static_cast<double>(input_scale),
                                 static_cast<int>(input_zero_point));
    return kKilnError;
  }
  return kKilnOk;
}

struct PadState {
  reference::PadParams params;
  KilnType type = kKilnFloat32;  // or int8, uint8
  int32_t zero_point = 0;
  bool has_value = false;  // PADV2 with constant_values: the fill value is read from it in Invoke
  bool dynamic = false;    // paddings computed at run time: Invoke reads them and sizes the output
};

// Reads paddings' values ([rank, 2], each >= 0) and sizes PAD's output.
KilnStatus PadSize(KilnOpaqueContext* context, const char* op, const KilnOpaqueTensor* paddings,
                   KilnOpaqueTensor* output, PadState* state) {
  std::vector<int64_t> values;
  KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "paddings", paddings, &values));
  reference::PadParams& p = state->params;
  const int64_t rank = static_cast<int64_t>(p.input_dims.size());
  if (static_cast<int64_t>(values.size()) != 2 * rank) {
    KilnOpaqueContextReportError(context, "%s: paddings %s has %zu values; expected %lld", op,
                                 TensorLabel(paddings).c_str(), values.size(), static_cast<long long>(2 * rank));
    return kKilnError;
  }
  p.before.assign(rank, 0);
  p.after.assign(rank, 0);
  for (int64_t d = 0; d < rank; ++d) {
    if (values[2 * d] < 0 || values[2 * d + 1] < 0 || values[2 * d] > INT32_MAX || values[2 * d + 1] > INT32_MAX) {
      KilnOpaqueContextReportError(
          context, "%s: paddings %s has padding (%lld, %lld) for dimension %lld; each must be in [0, 2^31)", op,
          TensorLabel(paddings).c_str(), static_cast<long long>(values[2 * d]),
          static_cast<long long>(values[2 * d + 1]), static_cast<long long>(d));
      return kKilnError;
    }
    p.before[d] = values[2 * d];
    p.after[d] = values[2 * d + 1];
  }
  p.value = 0.0f;
  return ResizeOutput(context, op, output, reference::PadOutputShape(p));
}

// PADV2's optional constant_values: one element of the input's type (int8, uint8: quantized as the output, so
// that its stored value is the fill, as LiteRT requires).
KilnStatus CheckPadValue(KilnOpaqueContext* context, const char* op, const KilnOpaqueTensor* value,
                         const KilnOpaqueTensor* output, KilnType type) {
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "constant_values", value, type));
  const int64_t count = reference::NumElements(TensorDims(value));
  if (count != 1) {
    KilnOpaqueContextReportError(context, "%s: constant_values %s has %lld elements; expected 1", op,
                                 TensorLabel(value).c_str(), static_cast<long long>(count));
    return kKilnError;
  }
  if (type == kKilnFloat32) return kKilnOk;
  float value_scale, output_scale;
  int32_t value_zero_point, output_zero_point;
  KILN_OPAQUE_ENSURE_STATUS(
      GetQuantization8(context, op, "constant_values", value, type, &value_scale, &value_zero_point));
  KILN_OPAQUE_ENSURE_STATUS(GetQuantization8(context, op, "output", output, type, &output_scale, &output_zero_point));
  if (value_scale != output_scale || value_zero_point != output_zero_point) {
    KilnOpaqueContextReportError(context,
                                 "%s: %s constant_values %s (scale %g, zero point %d) must have the quantization of "
                                 "output %s (scale %g, zero point %d)",
                                 op, KilnTypeGetName(type), TensorLabel(value).c_str(),
                                 static_cast<double>(value_scale), static_cast<int>(value_zero_point),
                                 TensorLabel(output).c_str(), static_cast<double>(output_scale),
                                 static_cast<int>(output_zero_point));
    return kKilnError;
  }
  return kKilnOk;
}

// PAD, and PADV2 (`v2`: an optional third input gives the fill value).
KilnStatus PadPrepareImpl(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, bool v2) {
  KILN_OPS_GET_STATE(PadState, state, context, node, op);
  const KilnOpaqueTensor* input;
  const KilnOpaqueTensor* paddings;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetMovingInputOutput(context, node, op, "paddings", &input, &paddings, &output,
                                                 &state->type, &state->zero_point, v2 ? 3 : 2));
  const KilnOpaqueTensor* value = v2 ? GetOptionalInput(context, node, 2) : nullptr;
  state->has_value = value != nullptr;
  if (value != nullptr) KILN_OPAQUE_ENSURE_STATUS(CheckPadValue(context, op, value, output, state->type));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 0, kMaxPadRank));
  const Dims input_dims = TensorDims(input);
  const Dims padding_dims = TensorDims(paddings);
  const int64_t rank = static_cast<int64_t>(input_dims.size());
  if (padding_dims.size() != 2 || padding_dims[0] != rank || padding_dims[1] != 2) {
    KilnOpaqueContextReportError(context, "%s: paddings %s has shape %s; expected [%lld, 2] for input %s", op,
                                 TensorLabel(paddings).c_str(), DimsToString(padding_dims).c_str(),
                                 static_cast<long long>(rank), TensorLabel(input).c_str());
    return kKilnError;
  }
  const KilnType paddings_type = KilnOpaqueTensorType(paddings);
  if (paddings_type != kKilnInt32 && paddings_type != kKilnInt64) {
    KilnOpaqueContextReportError(context, "%s: paddings %s has type %s; expected int32 or int64", op,
                                 TensorLabel(paddings).c_str(), KilnTypeGetName(paddings_type));
    return kKilnError;
  }
  state->params.input_dims = input_dims;
  // Paddings computed at run time: a dynamic output, sized at Invoke (as LiteRT).
  state->dynamic = !IsConstant(paddings);
  if (state->dynamic) {
    state->params.before.assign(rank, 0);
    state->params.after.assign(rank, 0);
    return MakeOutputDynamic(context, op, output);
  }
  return PadSize(context, op, paddings, output, state);
}

KilnStatus PadInvokeImpl(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op) {
  KILN_OPS_GET_STATE(PadState, state, context, node, op);
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(PadSize(context, op, KilnOpaqueNodeGetInput(context, node, 1),
                                      KilnOpaqueNodeGetOutput(context, node, 0), state));
  }
  reference::PadParams& p = state->params;
  const int64_t output_count = reference::NumElements(reference::PadOutputShape(p));
  if (output_count == 0) return kKilnOk;
  // PADV2's fill value, read now (constant_values may be computed at run time).
  int32_t fill = state->zero_point;
  if (state->has_value) {
    const KilnOpaqueTensor* value = KilnOpaqueNodeGetInput(context, node, 2);
    const size_t size = state->type == kKilnFloat32 ? 4 : 1;
    KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "constant_values", value, 1, size));
    const void* data = KilnOpaqueTensorData(value);
    if (state->type == kKilnFloat32) {
      std::memcpy(&p.value, data, sizeof(float));
    } else {
      fill = state->type == kKilnUInt8 ? *static_cast<const uint8_t*>(data) : *static_cast<const int8_t*>(data);
    }
  }
  if (state->type != kKilnFloat32) {
    const auto run = [&](auto type_tag) {
      using T = decltype(type_tag);
      const T* input;
      T* output;
      KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "input", KilnOpaqueNodeGetInput(context, node, 0),
                                             reference::NumElements(p.input_dims), &input));
      KILN_OPAQUE_ENSURE_STATUS(
          GetTypedData(context, op, "output", KilnOpaqueNodeGetOutput(context, node, 0), output_count, &output));
      reference::PadQuantized<T>(p, static_cast<T>(fill), input, output);
      return kKilnOk;
    };
    return state->type == kKilnUInt8 ? run(uint8_t{}) : run(int8_t{});
  }
  const float* input;
  float* output;
  KILN_OPAQUE_ENSURE_STATUS(
      GetFloatInvokeData(context, node, op, reference::NumElements(p.input_dims), output_count, &input, &output));
  reference::PadFloat(p, input, output);
  return kKilnOk;
}

KilnStatus PadPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return PadPrepareImpl(context, node, "PAD", false);
}
KilnStatus PadInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) { return PadInvokeImpl(context, node, "PAD"); }
KilnStatus PadV2Prepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return PadPrepareImpl(context, node, "PADV2", true);
}
KilnStatus PadV2Invoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return PadInvokeImpl(context, node, "PADV2");
}

struct TransposeState {
  reference::TransposeParams params;
  KilnType type = kKilnFloat32;  // or int8, uint8
  bool dynamic = false;          // perm computed at run time: Invoke reads it and sizes the output
};

// Reads perm's values (a permutation of the input's dimensions) and sizes TRANSPOSE's output.
KilnStatus TransposeSize(KilnOpaqueContext* context, const char* op, const KilnOpaqueTensor* input,
                         const KilnOpaqueTensor* perm, KilnOpaqueTensor* output, TransposeState* state) {
  std::vector<int32_t> values;
  KILN_OPAQUE_ENSURE_STATUS(ReadInt32Values(context, op, "perm", perm, true, &values));
  const Dims input_dims = TensorDims(input);
  Dims output_dims;
  std::string error;
  if (!reference::TransposeOutputShape(input_dims, values, &output_dims, &error)) {
    KilnOpaqueContextReportError(context, "%s: perm %s holds %s: %s", op, TensorLabel(perm).c_str(),
                                 DimsToString(Dims(values.begin(), values.end())).c_str(), error.c_str());
    return kKilnError;
  }
  state->params.input_dims = input_dims;
  state->params.perm = std::move(values);
  return ResizeOutput(context, op, output, output_dims);
}

KilnStatus TransposePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "TRANSPOSE";
  KILN_OPS_GET_STATE(TransposeState, state, context, node, op);
  const KilnOpaqueTensor* input;
  const KilnOpaqueTensor* perm;
  KilnOpaqueTensor* output;
  int32_t zero_point = 0;
  KILN_OPAQUE_ENSURE_STATUS(
      GetMovingInputOutput(context, node, op, "perm", &input, &perm, &output, &state->type, &zero_point));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 0, kMaxTransposeRank));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "perm", perm, 1, 1));
  const KilnType perm_type = KilnOpaqueTensorType(perm);
  if (perm_type != kKilnInt32 && perm_type != kKilnInt64) {
    KilnOpaqueContextReportError(context, "%s: perm %s has type %s; expected int32 or int64", op,
                                 TensorLabel(perm).c_str(), KilnTypeGetName(perm_type));
    return kKilnError;
  }
  // perm computed at run time: a dynamic output, sized at Invoke (as LiteRT).
  state->dynamic = !IsConstant(perm);
  if (state->dynamic) {
    state->params.input_dims = TensorDims(input);
    state->params.perm.clear();
    return MakeOutputDynamic(context, op, output);
  }
  return TransposeSize(context, op, input, perm, output, state);
}

KilnStatus TransposeInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "TRANSPOSE";
  KILN_OPS_GET_STATE(TransposeState, state, context, node, op);
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(TransposeSize(context, op, KilnOpaqueNodeGetInput(context, node, 0),
                                            KilnOpaqueNodeGetInput(context, node, 1),
                                            KilnOpaqueNodeGetOutput(context, node, 0), state));
  }
  const int64_t count = reference::NumElements(state->params.input_dims);
  if (count == 0) return kKilnOk;
  if (state->type != kKilnFloat32) {
    const auto run = [&](auto type_tag) {
      using T = decltype(type_tag);
      const T* input;
      T* output;
      KILN_OPAQUE_ENSURE_STATUS(GetInvokeData(context, node, op, count, count, &input, &output));
      reference::TransposeQuantized<T>(state->params, input, output);
      return kKilnOk;
    };
    return state->type == kKilnUInt8 ? run(uint8_t{}) : run(int8_t{});
  }
  const float* input;
  float* output;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInvokeData(context, node, op, count, count, &input, &output));
  reference::TransposeFloat(state->params, input, output);
  return kKilnOk;
}

// A reduction whose axes are computed at run time (as LiteRT): Prepare checks the axes tensor's rank and type and
// makes the output dynamic; Invoke runs Prepare again with the values there (`at_invoke`), which sizes the output.
KilnStatus DeferReductionAxes(KilnOpaqueContext* context, const char* op, const KilnOpaqueTensor* axes,
                              KilnOpaqueTensor* output) {
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "axes", axes, 0, 1));
  const KilnType type = KilnOpaqueTensorType(axes);
  if (type != kKilnInt32 && type != kKilnInt64) {
    KilnOpaqueContextReportError(context, "%s: axes %s has type %s; expected int32 or int64", op,
                                 TensorLabel(axes).c_str(), KilnTypeGetName(type));
    return kKilnError;
  }
  return MakeOutputDynamic(context, op, output);
}

// The axes of a reduction (MEAN, SUM, REDUCE_*): an int32/int64 scalar or 1-D tensor, read as written
// into `values`, and with the keep_dims option the reduction's shape and output dimensions.
KilnStatus PrepareReductionAxes(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op,
                                const KilnOpaqueTensor* input, const KilnOpaqueTensor* axes,
                                std::vector<int32_t>* values, reference::MeanParams* params, Dims* output_dims) {
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "axes", axes, 0, 1));
  KILN_OPAQUE_ENSURE_STATUS(ReadInt32Values(context, op, "axes", axes, true, values));
  const auto* options = static_cast<const KilnReducerParams*>(KilnOpaqueNodeGetBuiltinData(node));
  const bool keep_dims = options != nullptr && options->keep_dims;
  std::string error;
  if (!reference::MakeMeanParams(TensorDims(input), *values, keep_dims, params, output_dims, &error)) {
    KilnOpaqueContextReportError(context, "%s: axes %s: %s", op, TensorLabel(axes).c_str(), error.c_str());
    return kKilnError;
  }
  return kKilnOk;
}

struct MeanState {
  reference::MeanParams params;
  int64_t output_count = 0;
  bool is_int8 = false;  // a quantized path: int8, uint8 or int16 (`type`)
  KilnType type = kKilnFloat32;
  bool hw = false;  // int8 over height and width with keep_dims: LiteRT's integer Mean kernel
  reference::MeanHwInt8Params int8;
  reference::ReduceInt8Params reduce;
  bool dynamic = false;    // axes computed at run time: Invoke prepares again and sizes the output
  bool at_invoke = false;  // Prepare running from Invoke (PrepareAtInvoke)
};

// MEAN and SUM: float32, or int8, uint8 and int16 (the int8 kernels and cases LiteRT's reference reduce has;
// int16 symmetric, as LiteRT requires).
KilnStatus ReducePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, bool is_sum) {
  KILN_OPS_GET_STATE(MeanState, state, context, node, op);
  const KilnOpaqueTensor* input;
  const KilnOpaqueTensor* axes;
  KilnOpaqueTensor* output;
  state->type = IsInt16Input(context, node) ? kKilnInt16 : Quantized8InputType(context, node);
  state->is_int8 = state->type != kKilnNoType;
  if (state->is_int8) {
    KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
    KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
    KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "axes", &axes));
    KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  } else {
    KILN_OPAQUE_ENSURE_STATUS(GetFloatInputOutput(context, node, op, 2, 2, &input, &output, "axes", &axes));
  }
  state->dynamic = !IsConstant(axes);
  if (state->dynamic && !state->at_invoke) return DeferReductionAxes(context, op, axes, output);
  std::vector<int32_t> values;  // as written (LiteRT's MEAN picks its kernel by them)
  Dims output_dims;
  KILN_OPAQUE_ENSURE_STATUS(
      PrepareReductionAxes(context, node, op, input, axes, &values, &state->params, &output_dims));
  state->output_count = reference::NumElements(output_dims);
  if (state->is_int8) {
    const Dims dims = TensorDims(input);
    float input_scale, output_scale;
    int32_t input_zero_point = 0, output_zero_point = 0;
    if (state->type == kKilnInt16) {
      KILN_OPAQUE_ENSURE_STATUS(GetInt16Quantization(context, op, "input", input, &input_scale));
      KILN_OPAQUE_ENSURE_STATUS(GetInt16Quantization(context, op, "output", output, &output_scale));
    } else {
      KILN_OPAQUE_ENSURE_STATUS(
          GetQuantization8(context, op, "input", input, state->type, &input_scale, &input_zero_point));
      KILN_OPAQUE_ENSURE_STATUS(
          GetQuantization8(context, op, "output", output, state->type, &output_scale, &output_zero_point));
    }
    // LiteRT's MEAN takes its integer height-and-width kernel only for these axes as written (not [-3, -2]).
    const auto* options = static_cast<const KilnReducerParams*>(KilnOpaqueNodeGetBuiltinData(node));
    const bool keep_dims = options != nullptr && options->keep_dims;
    state->hw = !is_sum && dims.size() == 4 && keep_dims && values.size() == 2 &&
                ((values[0] == 1 && values[1] == 2) || (values[0] == 2 && values[1] == 1));
    // uint8 and int16 take the general kernel for this case too: the same arithmetic (quantized_kernels.h).
    if (state->type != kKilnInt8) state->hw = false;
    if (state->hw) {
      reference::MeanHwInt8Params& q = state->int8;
      q.input_zero_point = input_zero_point;
      q.output_zero_point = output_zero_point;
      q.batch = dims[0];
      q.height = dims[1];
      q.width = dims[2];
      q.channels = dims[3];
      reference::PrepareMeanHwInt8(input_scale, output_scale, &q);
    } else {
      reference::ReduceInt8Params& q = state->reduce;
      q.shape = state->params;
      q.input_zero_point = input_zero_point;
      q.output_zero_point = output_zero_point;
      reference::PrepareReduceInt8(is_sum, input_scale, output_scale, &q);
    }
  }
  return ResizeOutput(context, op, output, output_dims);
}

KilnStatus ReduceInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, bool is_sum) {
  KILN_OPS_GET_STATE(MeanState, state, context, node, op);
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(PrepareAtInvoke(state, [&] { return ReducePrepare(context, node, op, is_sum); }));
  }
  if (state->output_count == 0) return kKilnOk;
  const int64_t input_count = reference::NumElements(state->params.input_dims);
  if (state->is_int8) {
    const auto run = [&](auto type_tag) {
      using T = decltype(type_tag);
      const T* input;
      T* output;
      KILN_OPAQUE_ENSURE_STATUS(
          GetTypedData(context, op, "input", KilnOpaqueNodeGetInput(context, node, 0), input_count, &input));
      KILN_OPAQUE_ENSURE_STATUS(
          GetTypedData(context, op, "output", KilnOpaqueNodeGetOutput(context, node, 0), state->output_count, &output));
      if constexpr (std::is_same_v<T, int8_t>) {
        if (state->hw) {
          reference::MeanHwInt8(state->int8, input, output);
          return kKilnOk;
        }
      }
      reference::ReduceQuantized<T>(state->reduce, input, output);
      return kKilnOk;
    };
    if (state->type == kKilnInt16) return run(int16_t{});
    return state->type == kKilnUInt8 ? run(uint8_t{}) : run(int8_t{});
  }
  const float* input;
  float* output;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInvokeData(context, node, op, input_count, state->output_count, &input, &output));
  if (is_sum) {
    reference::SumFloat(state->params, input, output);
  } else {
    reference::MeanFloat(state->params, input, output);
  }
  return kKilnOk;
}

KilnStatus MeanPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return ReducePrepare(context, node, "MEAN", false);
}
KilnStatus MeanInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return ReduceInvoke(context, node, "MEAN", false);
}
KilnStatus SumPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return ReducePrepare(context, node, "SUM", true);
}
KilnStatus SumInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return ReduceInvoke(context, node, "SUM", true);
}


// ---- REDUCE_MAX, REDUCE_MIN, REDUCE_PROD (the stored values: an int8, uint8 or int16 output keeps the input's
// quantization), REDUCE_ANY and REDUCE_ALL (bool). Axes and keep_dims as MEAN.

using reference::ReduceKind;

constexpr const char* ReduceName(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kMax: return "REDUCE_MAX";
    case ReduceKind::kMin: return "REDUCE_MIN";
    case ReduceKind::kProd: return "REDUCE_PROD";
    case ReduceKind::kAny: return "REDUCE_ANY";
    case ReduceKind::kAll: return "REDUCE_ALL";
  }
  return "?";
}

// The input types each reduction takes, as LiteRT 2.3.0's kernels do (REDUCE_PROD on quantized int8 and int16,
// LiteRT's rescaled product, is prepared apart: PrepareQuantizedProd).
const std::vector<KilnType>& ReduceTypes(ReduceKind kind) {
  static const std::vector<KilnType> extremes = {kKilnFloat32, kKilnInt32, kKilnInt64,
                                                 kKilnInt8,    kKilnUInt8, kKilnInt16};
  static const std::vector<KilnType> products = {kKilnFloat32, kKilnInt32, kKilnInt64};
  static const std::vector<KilnType> logical = {kKilnBool};
  if (kind == ReduceKind::kProd) return products;
  return kind == ReduceKind::kMax || kind == ReduceKind::kMin ? extremes : logical;
}

struct ReduceElementsState {
  reference::MeanParams params;
  int64_t output_count = 0;
  KilnType type = kKilnFloat32;
  bool quantized_prod = false;  // REDUCE_PROD on quantized int8 or int16 (`prod`)
  reference::ReduceProdQuantizedParams prod;
  bool dynamic = false;    // axes computed at run time: Invoke prepares again and sizes the output
  bool at_invoke = false;  // Prepare running from Invoke (PrepareAtInvoke)
};

// REDUCE_PROD on a quantized int8 or int16 input (LiteRT's QuantizedReduceProd): the output of the same type,
// int16 symmetric (LiteRT's Prepare check); uint8 is refused, as LiteRT refuses it at Invoke.
KilnStatus PrepareQuantizedProd(KilnOpaqueContext* context, const char* op, const KilnOpaqueTensor* input,
                                const KilnOpaqueTensor* output, ReduceElementsState* state) {
  const KilnType type = KilnOpaqueTensorType(input);
  float input_scale = 0.0f, output_scale = 0.0f;
  reference::ReduceProdQuantizedParams& p = state->prod;
  if (type == kKilnInt16) {
    KILN_OPAQUE_ENSURE_STATUS(GetInt16Quantization(context, op, "input", input, &input_scale));
    KILN_OPAQUE_ENSURE_STATUS(GetInt16Quantization(context, op, "output", output, &output_scale));
    p.input_zero_point = p.output_zero_point = 0;
  } else {
    KILN_OPAQUE_ENSURE_STATUS(GetInt8Quantization(context, op, "input", input, &input_scale, &p.input_zero_point));
    KILN_OPAQUE_ENSURE_STATUS(
        GetInt8Quantization(context, op, "output", output, &output_scale, &p.output_zero_point));
  }
  p.shape = state->params;
  if (!reference::PrepareReduceProdQuantized(input_scale, output_scale, &p)) {
    KilnOpaqueContextReportError(context,
                                 "%s: %s output %s: input scale %g / output scale %g^(1/%lld) is 2^14 or more, "
                                 "beyond LiteRT's int64 multiply",
                                 op, KilnTypeGetName(type), TensorLabel(output).c_str(),
                                 static_cast<double>(input_scale), static_cast<double>(output_scale),
                                 static_cast<long long>(p.count));
    return kKilnError;
  }
  return kKilnOk;
}

// True where `tensor` has quantization scales (LiteRT's quantized REDUCE_PROD path).
bool HasScales(const KilnOpaqueTensor* tensor) {
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
  int dim = 0;
  return GetQuantization(tensor, &scales, &zero_points, &dim) && !scales.empty();
}

template <ReduceKind kKind>
KilnStatus ReduceElementsPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = ReduceName(kKind);
  KILN_OPS_GET_STATE(ReduceElementsState, state, context, node, op);
  const KilnOpaqueTensor* input;
  const KilnOpaqueTensor* axes;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "axes", &axes));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  state->type = KilnOpaqueTensorType(input);
  const bool quantized = state->type == kKilnInt8 || state->type == kKilnInt16 || state->type == kKilnUInt8;
  state->quantized_prod = kKind == ReduceKind::kProd && quantized && HasScales(input);
  if (kKind == ReduceKind::kProd && state->type == kKilnUInt8 && state->quantized_prod) {
    KilnOpaqueContextReportError(context,
                                 "%s: uint8 input %s: LiteRT has no quantized uint8 product (int8 and int16 only)", op,
                                 TensorLabel(input).c_str());
    return kKilnError;
  }
  if (!state->quantized_prod) {
    size_t element_size = 0;
    KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, input, output, ReduceTypes(kKind), &element_size));
  }
  state->dynamic = !IsConstant(axes);
  if (state->dynamic && !state->at_invoke) return DeferReductionAxes(context, op, axes, output);
  std::vector<int32_t> values;
  Dims output_dims;
  KILN_OPAQUE_ENSURE_STATUS(
      PrepareReductionAxes(context, node, op, input, axes, &values, &state->params, &output_dims));
  state->output_count = reference::NumElements(output_dims);
  if (state->quantized_prod) KILN_OPAQUE_ENSURE_STATUS(PrepareQuantizedProd(context, op, input, output, state));
  return ResizeOutput(context, op, output, output_dims);
}

template <ReduceKind kKind>
KilnStatus ReduceElementsInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = ReduceName(kKind);
  KILN_OPS_GET_STATE(ReduceElementsState, state, context, node, op);
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(PrepareAtInvoke(state, [&] { return ReduceElementsPrepare<kKind>(context, node); }));
  }
  if (state->output_count == 0) return kKilnOk;
  const int64_t input_count = reference::NumElements(state->params.input_dims);
  const auto run = [&](auto type_tag) {
    using T = decltype(type_tag);
    const T* input;
    T* output;
    KILN_OPAQUE_ENSURE_STATUS(GetInvokeData(context, node, op, input_count, state->output_count, &input, &output));
    if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, int16_t>) {
      if (state->quantized_prod) {
        reference::ReduceProdQuantized<T>(state->prod, input, output);
        return kKilnOk;
      }
    }
    reference::ReduceElements<T>(kKind, state->params, input, output);
    return kKilnOk;
  };
  switch (state->type) {
    case kKilnFloat32: return run(float{});
    case kKilnInt32: return run(int32_t{});
    case kKilnInt64: return run(int64_t{});
    case kKilnInt8: return run(int8_t{});
    case kKilnUInt8: return run(uint8_t{});
    case kKilnInt16: return run(int16_t{});
    case kKilnBool: return run(uint8_t{});  // as bytes (reference::ReduceElements)
    default: break;
  }
  KilnOpaqueContextReportError(context, "%s: input type %s was not prepared", op, KilnTypeGetName(state->type));
  return kKilnError;
}

// ---- CUMSUM: float32, int32 or int64 along a constant axis (int32 scalar or one-element tensor).

struct CumsumState {
  reference::CumsumParams params;
  KilnType type = kKilnFloat32;
  bool run_time_axis = false;  // axis computed at run time: read and checked at Invoke (the shape does not change)
};

// Reads CUMSUM's axis: one int32 value in [-rank, rank).
KilnStatus CumsumAxis(KilnOpaqueContext* context, const KilnOpaqueTensor* axis, const KilnOpaqueTensor* input,
                      CumsumState* state) {
  constexpr const char* op = "CUMSUM";
  std::vector<int32_t> values;
  KILN_OPAQUE_ENSURE_STATUS(ReadInt32Values(context, op, "axis", axis, false, &values));
  const int64_t rank = static_cast<int64_t>(state->params.dims.size());
  if (values.size() != 1 || values[0] < -rank || values[0] >= rank) {
    KilnOpaqueContextReportError(
        context, "%s: axis %s holds %s; it must be one value in [%lld, %lld) for input %s of rank %lld", op,
        TensorLabel(axis).c_str(), DimsToString(Dims(values.begin(), values.end())).c_str(),
        static_cast<long long>(-rank), static_cast<long long>(rank), TensorLabel(input).c_str(),
        static_cast<long long>(rank));
    return kKilnError;
  }
  state->params.axis = static_cast<int>(values[0] < 0 ? values[0] + rank : values[0]);
  return kKilnOk;
}

KilnStatus CumsumPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "CUMSUM";
  KILN_OPS_GET_STATE(CumsumState, state, context, node, op);
  const KilnOpaqueTensor* input;
  const KilnOpaqueTensor* axis;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "axis", &axis));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  size_t element_size = 0;
  KILN_OPAQUE_ENSURE_STATUS(
      CheckMovedTypes(context, op, input, output, {kKilnFloat32, kKilnInt32, kKilnInt64}, &element_size));
  state->type = KilnOpaqueTensorType(input);
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "axis", axis, kKilnInt32));
  const Dims dims = TensorDims(input);
  state->params.dims = dims;
  state->params.axis = 0;
  // An axis computed at run time (as LiteRT allows): the output keeps the input's shape; Invoke reads the axis.
  state->run_time_axis = !IsConstant(axis);
  if (state->run_time_axis) {
    const int64_t count = reference::NumElements(TensorDims(axis));
    if (count != 1) {
      KilnOpaqueContextReportError(context, "%s: axis %s has %lld elements; expected one value", op,
                                   TensorLabel(axis).c_str(), static_cast<long long>(count));
      return kKilnError;
    }
  } else {
    KILN_OPAQUE_ENSURE_STATUS(CumsumAxis(context, axis, input, state));
  }
  const auto* options = static_cast<const KilnCumsumParams*>(KilnOpaqueNodeGetBuiltinData(node));
  state->params.exclusive = options != nullptr && options->exclusive;
  state->params.reverse = options != nullptr && options->reverse;
  return ResizeOutput(context, op, output, dims);
}

KilnStatus CumsumInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "CUMSUM";
  KILN_OPS_GET_STATE(CumsumState, state, context, node, op);
  const int64_t count = reference::NumElements(state->params.dims);
  if (state->run_time_axis) {
    KILN_OPAQUE_ENSURE_STATUS(
        CumsumAxis(context, KilnOpaqueNodeGetInput(context, node, 1), KilnOpaqueNodeGetInput(context, node, 0), state));
  }
  if (count == 0) return kKilnOk;
  const auto run = [&](auto type_tag) {
    using T = decltype(type_tag);
    const T* input;
    T* output;
    KILN_OPAQUE_ENSURE_STATUS(GetInvokeData(context, node, op, count, count, &input, &output));
    reference::Cumsum<T>(state->params, input, output);
    return kKilnOk;
  };
  if (state->type == kKilnInt32) return run(int32_t{});
  if (state->type == kKilnInt64) return run(int64_t{});
  return run(float{});
}

template <ReduceKind kKind>
void AddReduceElements(std::vector<BuiltinOp>* table, KilnBuiltinOperator code, int max_version) {
  table->push_back({code, 1, max_version,
                    MakeOperator<ReduceElementsState>(code, max_version, &ReduceElementsPrepare<kKind>,
                                                      &ReduceElementsInvoke<kKind>)});
}

}  // namespace

void AddTensorOps(std::vector<BuiltinOp>* table) {
  // LiteRT registers RESHAPE at version 1 only; SQUEEZE v2, CONCATENATION v2-v4, PAD v2-v6 (LiteRT 2.3.0 loads
  // PAD up to v6; types are checked in Prepare), TRANSPOSE v2-v6 (v4/v6 raise the rank limit, here already 6) and
  // MEAN v2-v3 add integer types and ranks.
  table->push_back(
      {kKilnBuiltinReshape, 1, 1, MakeOperator<NoState>(kKilnBuiltinReshape, 1, &ReshapePrepare, &ReshapeInvoke)});
  table->push_back(
      {kKilnBuiltinSqueeze, 1, 2, MakeOperator<NoState>(kKilnBuiltinSqueeze, 2, &SqueezePrepare, &SqueezeInvoke)});
  table->push_back({kKilnBuiltinConcatenation, 1, 4,
                    MakeOperator<ConcatState>(kKilnBuiltinConcatenation, 4, &ConcatPrepare, &ConcatInvoke)});
  table->push_back({kKilnBuiltinPad, 1, 6, MakeOperator<PadState>(kKilnBuiltinPad, 6, &PadPrepare, &PadInvoke)});
  // PADV2: LiteRT 2.3.0's default resolver loads v1-v6 (the types are checked in Prepare whatever the version).
  table->push_back(
      {kKilnBuiltinPadv2, 1, 6, MakeOperator<PadState>(kKilnBuiltinPadv2, 6, &PadV2Prepare, &PadV2Invoke)});
  table->push_back({kKilnBuiltinTranspose, 1, 6,
                    MakeOperator<TransposeState>(kKilnBuiltinTranspose, 6, &TransposePrepare, &TransposeInvoke)});
  table->push_back({kKilnBuiltinMean, 1, 3, MakeOperator<MeanState>(kKilnBuiltinMean, 3, &MeanPrepare, &MeanInvoke)});
  // SUM: LiteRT registers v1-v2 (v2 adds int8).
  table->push_back(
      {kKilnBuiltinSum, 1, 2, MakeOperator<MeanState>(kKilnBuiltinSum, 2, &SumPrepare, &SumInvoke)});
  // LiteRT: REDUCE_MAX and REDUCE_MIN v1-3 (v2 int8, v3 int16), REDUCE_PROD v1-2, REDUCE_ANY and REDUCE_ALL v1.
  AddReduceElements<ReduceKind::kMax>(table, kKilnBuiltinReduceMax, 3);
  AddReduceElements<ReduceKind::kMin>(table, kKilnBuiltinReduceMin, 3);
  AddReduceElements<ReduceKind::kProd>(table, kKilnBuiltinReduceProd, 2);
  AddReduceElements<ReduceKind::kAny>(table, kKilnBuiltinReduceAny, 1);
  AddReduceElements<ReduceKind::kAll>(table, kKilnBuiltinReduceAll, 1);
  table->push_back(
      {kKilnBuiltinCumsum, 1, 1, MakeOperator<CumsumState>(kKilnBuiltinCumsum, 1, &CumsumPrepare, &CumsumInvoke)});
}

}  // namespace kiln::ops
