// Helpers shared by the builtin op wrappers (op_util.h): checks that name the op and tensor, shapes, constants.

#include "ops/op_util.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

#include "ops/reference/dequantize.h"
#include "ops/reference/quantized.h"

namespace kiln::ops {

std::string TensorLabel(const KilnOpaqueTensor* tensor) {
  const char* name = tensor ? KilnOpaqueTensorName(tensor) : nullptr;
  if (name == nullptr || name[0] == '\0') return "(unnamed)";
  return std::string("'") + name + "'";
}

Dims TensorDims(const KilnOpaqueTensor* tensor) {
  const int32_t rank = KilnOpaqueTensorNumDims(tensor);
  Dims dims(rank > 0 ? rank : 0);
  for (int32_t i = 0; i < rank; ++i) dims[i] = KilnOpaqueTensorDim(tensor, i);
  return dims;
}

std::string DimsToString(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

bool IsConstant(const KilnOpaqueTensor* tensor) {
  return KilnOpaqueTensorGetAllocationType(tensor) == kKilnMmapRo;
}

KilnStatus CheckArity(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op, int min_inputs,
                      int max_inputs, int outputs) {
  const int num_inputs = KilnOpaqueNodeNumberOfInputs(node);
  if (num_inputs < min_inputs || num_inputs > max_inputs) {
    if (min_inputs == max_inputs) {
      KilnOpaqueContextReportError(context, "%s: expects %d inputs, got %d", op, min_inputs, num_inputs);
    } else {
      KilnOpaqueContextReportError(context, "%s: expects %d to %d inputs, got %d", op, min_inputs, max_inputs,
                                   num_inputs);
    }
    return kKilnError;
  }
  const int num_outputs = KilnOpaqueNodeNumberOfOutputs(node);
  if (num_outputs != outputs) {
    KilnOpaqueContextReportError(context, "%s: expects %d outputs, got %d", op, outputs, num_outputs);
    return kKilnError;
  }
  return kKilnOk;
}

KilnStatus GetRequiredInput(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op, int index,
                            const char* role, const KilnOpaqueTensor** tensor) {
  *tensor = KilnOpaqueNodeGetInput(context, node, index);
  if (*tensor == nullptr) {
    KilnOpaqueContextReportError(context, "%s: %s (input %d) is missing", op, role, index);
    return kKilnError;
  }
  return kKilnOk;
}

KilnStatus GetOutput(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op, int index,
                     KilnOpaqueTensor** tensor) {
  *tensor = KilnOpaqueNodeGetOutput(context, node, index);
  if (*tensor == nullptr) {
    KilnOpaqueContextReportError(context, "%s: output %d is missing", op, index);
    return kKilnError;
  }
  return kKilnOk;
}

const KilnOpaqueTensor* GetOptionalInput(KilnOpaqueContext* context, const KilnOpaqueNode* node, int index) {
  return KilnOpaqueNodeNumberOfInputs(node) > index ? KilnOpaqueNodeGetInput(context, node, index) : nullptr;
}

KilnStatus GetFloatInputOutput(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op,
                               int min_inputs, int max_inputs, const KilnOpaqueTensor** input,
                               KilnOpaqueTensor** output, const char* second_role,
                               const KilnOpaqueTensor** second) {
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, min_inputs, max_inputs, 1));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", input));
  if (second_role != nullptr) {
    KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, second_role, second));
  }
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, output));
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "input", *input));
  return CheckFloat32(context, op, "output", *output);
}

KilnStatus CheckType(KilnOpaqueContext* context, const char* op, const char* role,
                     const KilnOpaqueTensor* tensor, KilnType expected) {
  const KilnType type = KilnOpaqueTensorType(tensor);
  if (type != expected) {
    KilnOpaqueContextReportError(context, "%s: %s %s has type %s; Kiln implements it only for %s", op, role,
                                 TensorLabel(tensor).c_str(), KilnTypeGetName(type),
                                 KilnTypeGetName(expected));
    return kKilnError;
  }
  return kKilnOk;
}

KilnStatus CheckFloat32(KilnOpaqueContext* context, const char* op, const char* role,
                        const KilnOpaqueTensor* tensor) {
  return CheckType(context, op, role, tensor, kKilnFloat32);
}

KilnStatus CheckRank(KilnOpaqueContext* context, const char* op, const char* role,
                     const KilnOpaqueTensor* tensor, int min_rank, int max_rank) {
  const int rank = KilnOpaqueTensorNumDims(tensor);
  if (rank < min_rank || rank > max_rank) {
    const std::string shape = DimsToString(TensorDims(tensor));
    if (min_rank == max_rank) {
      KilnOpaqueContextReportError(context, "%s: %s %s has rank %d (shape %s); expected rank %d", op, role,
                                   TensorLabel(tensor).c_str(), rank, shape.c_str(), min_rank);
    } else {
      KilnOpaqueContextReportError(context, "%s: %s %s has rank %d (shape %s); expected rank %d to %d", op,
                                   role, TensorLabel(tensor).c_str(), rank, shape.c_str(), min_rank,
                                   max_rank);
    }
    return kKilnError;
  }
  return kKilnOk;
}

KilnStatus ResizeOutput(KilnOpaqueContext* context, const char* op, KilnOpaqueTensor* tensor,
                        const Dims& dims) {
  for (int64_t d : dims) {
    if (d < 0 || d > INT_MAX) {
      KilnOpaqueContextReportError(context, "%s: output shape %s of %s is out of range", op,
                                   DimsToString(dims).c_str(), TensorLabel(tensor).c_str());
      return kKilnError;
    }
  }
  KilnIntArray* shape = KilnIntArrayCreate(static_cast<int>(dims.size()));
  if (shape == nullptr) {
    KilnOpaqueContextReportError(context, "%s: out of memory", op);
    return kKilnOutOfMemory;
  }
  for (size_t i = 0; i < dims.size(); ++i) shape->data[i] = static_cast<int>(dims[i]);
  const KilnStatus status = KilnOpaqueContextResizeTensor(context, tensor, shape);  // takes `shape`
  if (status != kKilnOk) {
    KilnOpaqueContextReportError(context, "%s: cannot resize output %s to %s", op,
                                 TensorLabel(tensor).c_str(), DimsToString(dims).c_str());
  }
  return status;
}

KilnStatus MakeOutputDynamic(KilnOpaqueContext* context, const char* op, KilnOpaqueTensor* output) {
  if (KilnOpaqueTensorSetAllocationTypeToDynamic(output) != kKilnOk) {
    KilnOpaqueContextReportError(context,
                                 "%s: output %s cannot be dynamic (a constant or a variable), but its shape depends "
                                 "on values known only at Invoke",
                                 op, TensorLabel(output).c_str());
    return kKilnError;
  }
  return kKilnOk;
}

KilnStatus CheckData(KilnOpaqueContext* context, const char* op, const char* role,
                     const KilnOpaqueTensor* tensor, int64_t count, size_t element_size) {
  if (count == 0) return kKilnOk;
  if (KilnOpaqueTensorData(tensor) == nullptr ||
      KilnOpaqueTensorByteSize(tensor) < static_cast<size_t>(count) * element_size) {
    KilnOpaqueContextReportError(context, "%s: %s %s has no data or fewer than %lld elements of data", op,
                                 role, TensorLabel(tensor).c_str(), static_cast<long long>(count));
    return kKilnError;
  }
  return kKilnOk;
}

KilnStatus GetFloatInvokeData(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op,
                              int64_t input_count, int64_t output_count, const float** input,
                              float** output) {
  return GetInvokeData(context, node, op, input_count, output_count, input, output);
}

KilnStatus GetFloatWeightData(KilnOpaqueContext* context, const char* op, const char* role,
                              const KilnOpaqueTensor* tensor, int64_t count, const FloatWeights& weights,
                              const float** data) {
  if (weights.is_dequantized) {
    *data = weights.dequantized.data();
    return kKilnOk;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, role, tensor, count, 4));
  *data = FloatData(tensor);
  return kKilnOk;
}

KilnStatus GetOptionalFloatData(KilnOpaqueContext* context, const char* op, const char* role,
                                const KilnOpaqueTensor* tensor, int64_t count, const float** data) {
  *data = nullptr;
  if (tensor == nullptr) return kKilnOk;
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, role, tensor, count, 4));
  *data = FloatData(tensor);
  return kKilnOk;
}

KilnStatus ReadConstantInts(KilnOpaqueContext* context, const char* op, const char* role,
                            const KilnOpaqueTensor* tensor, bool allow_int64, std::vector<int32_t>* values) {
  const KilnType type = KilnOpaqueTensorType(tensor);
  if (type != kKilnInt32 && !(allow_int64 && type == kKilnInt64)) {
    KilnOpaqueContextReportError(context, "%s: %s %s has type %s; expected int32%s", op, role,
                                 TensorLabel(tensor).c_str(), KilnTypeGetName(type),
                                 allow_int64 ? " or int64" : "");
    return kKilnError;
  }
  if (!IsConstant(tensor)) {
    KilnOpaqueContextReportError(context,
                                 "%s: %s %s is computed at run time; this kernel needs it to be a constant "
                                 "tensor of the model",
                                 op, role, TensorLabel(tensor).c_str());
    return kKilnError;
  }
  return ReadInt32Values(context, op, role, tensor, allow_int64, values);
}

KilnStatus ReadInt32Values(KilnOpaqueContext* context, const char* op, const char* role, const KilnOpaqueTensor* tensor,
                           bool allow_int64, std::vector<int32_t>* values) {
  const KilnType type = KilnOpaqueTensorType(tensor);
  if (type != kKilnInt32 && !(allow_int64 && type == kKilnInt64)) {
    KilnOpaqueContextReportError(context, "%s: %s %s has type %s; expected int32%s", op, role,
                                 TensorLabel(tensor).c_str(), KilnTypeGetName(type), allow_int64 ? " or int64" : "");
    return kKilnError;
  }
  const int64_t count = reference::NumElements(TensorDims(tensor));
  const size_t element_size = type == kKilnInt64 ? 8 : 4;
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, role, tensor, count, element_size));
  values->resize(count);
  const void* data = KilnOpaqueTensorData(tensor);
  for (int64_t i = 0; i < count; ++i) {
    if (type == kKilnInt32) {
      int32_t v;
      std::memcpy(&v, static_cast<const char*>(data) + i * 4, 4);
      (*values)[i] = v;
    } else {
      int64_t v;
      std::memcpy(&v, static_cast<const char*>(data) + i * 8, 8);
      if (v < INT32_MIN || v > INT32_MAX) {
        KilnOpaqueContextReportError(context, "%s: %s %s holds %lld at element %lld, out of int32 range", op,
                                     role, TensorLabel(tensor).c_str(), static_cast<long long>(v),
                                     static_cast<long long>(i));
        return kKilnError;
      }
      (*values)[i] = static_cast<int32_t>(v);
    }
  }
  return kKilnOk;
}

KilnStatus ReadIntValues(KilnOpaqueContext* context, const char* op, const char* role,
                         const KilnOpaqueTensor* tensor, std::vector<int64_t>* values) {
  const KilnType type = KilnOpaqueTensorType(tensor);
  if (type != kKilnInt32 && type != kKilnInt64) {
    KilnOpaqueContextReportError(context, "%s: %s %s has type %s; expected int32 or int64", op, role,
                                 TensorLabel(tensor).c_str(), KilnTypeGetName(type));
    return kKilnError;
  }
  const int64_t count = reference::NumElements(TensorDims(tensor));
  const size_t element_size = type == kKilnInt64 ? 8 : 4;
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, role, tensor, count, element_size));
  values->resize(static_cast<size_t>(count));
  const char* data = static_cast<const char*>(KilnOpaqueTensorData(tensor));
  for (int64_t i = 0; i < count; ++i) {
    if (type == kKilnInt32) {
      int32_t v;
      std::memcpy(&v, data + i * 4, 4);
      (*values)[static_cast<size_t>(i)] = v;
    } else {
      int64_t v;
      std::memcpy(&v, data + i * 8, 8);
      (*values)[static_cast<size_t>(i)] = v;
    }
  }
  return kKilnOk;
}

const std::vector<KilnType>& MovedTypes() {
  static const std::vector<KilnType> types = {kKilnFloat32, kKilnInt32, kKilnInt64, kKilnInt8,
                                              kKilnUInt8,   kKilnInt16, kKilnBool};
  return types;
}

KilnStatus CheckMovedTypes(KilnOpaqueContext* context, const char* op, const KilnOpaqueTensor* input,
                           const KilnOpaqueTensor* output, const std::vector<KilnType>& allowed,
                           size_t* element_size) {
  const KilnType type = KilnOpaqueTensorType(input);
  if (std::find(allowed.begin(), allowed.end(), type) == allowed.end()) {
    std::string names;
    for (KilnType t : allowed) names += std::string(names.empty() ? "" : ", ") + KilnTypeGetName(t);
    KilnOpaqueContextReportError(context, "%s: input %s has type %s; expected one of %s", op,
                                 TensorLabel(input).c_str(), KilnTypeGetName(type), names.c_str());
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "output", output, type));
  if (KilnOpaqueContextGetSizeOfType(context, type, element_size) != kKilnOk || *element_size == 0) {
    KilnOpaqueContextReportError(context, "%s: input %s has type %s, which has no fixed element size", op,
                                 TensorLabel(input).c_str(), KilnTypeGetName(type));
    return kKilnError;
  }
  if (type != kKilnInt8 && type != kKilnUInt8 && type != kKilnInt16) return kKilnOk;
  std::vector<float> in_scales, out_scales;
  std::vector<int32_t> in_zero_points, out_zero_points;
  int in_dim = 0, out_dim = 0;
  const bool in_quantized = GetQuantization(input, &in_scales, &in_zero_points, &in_dim);
  const bool out_quantized = GetQuantization(output, &out_scales, &out_zero_points, &out_dim);
  if (in_quantized == out_quantized &&
      (!in_quantized || (in_scales == out_scales && in_zero_points == out_zero_points &&
                         (in_scales.size() <= 1 || in_dim == out_dim)))) {
    return kKilnOk;
  }
  auto describe = [](bool quantized, const std::vector<float>& scales, const std::vector<int32_t>& zero_points) {
    if (!quantized) return std::string("no quantization");
    if (scales.size() != 1) return std::to_string(scales.size()) + " per-channel scales";
    return "scale " + std::to_string(scales[0]) + ", zero point " + std::to_string(zero_points[0]);
  };
  KilnOpaqueContextReportError(context, "%s: %s output %s (%s) must have the quantization of input %s (%s)", op,
                               KilnTypeGetName(type), TensorLabel(output).c_str(),
                               describe(out_quantized, out_scales, out_zero_points).c_str(),
                               TensorLabel(input).c_str(), describe(in_quantized, in_scales, in_zero_points).c_str());
  return kKilnError;
}

KilnStatus ToActivation(KilnOpaqueContext* context, const char* op, KilnFusedActivation activation,
                        reference::Activation* out) {
  switch (activation) {
    case kKilnActNone:
      *out = reference::Activation::kNone;
      return kKilnOk;
    case kKilnActRelu:
      *out = reference::Activation::kRelu;
      return kKilnOk;
    case kKilnActReluN1To1:
      *out = reference::Activation::kReluN1To1;
      return kKilnOk;
    case kKilnActRelu6:
      *out = reference::Activation::kRelu6;
      return kKilnOk;
    case kKilnActTanh:
      *out = reference::Activation::kTanh;
      return kKilnOk;
    case kKilnActSigmoid:
      *out = reference::Activation::kSigmoid;
      return kKilnOk;
    default:
      KilnOpaqueContextReportError(context, "%s: fused activation %d is not supported", op,
                                   static_cast<int>(activation));
      return kKilnError;
  }
}

KilnStatus ToPadding(KilnOpaqueContext* context, const char* op, KilnPadding padding,
                     reference::Padding* out) {
  switch (padding) {
    case kKilnPaddingSame:
      *out = reference::Padding::kSame;
      return kKilnOk;
    case kKilnPaddingValid:
      *out = reference::Padding::kValid;
      return kKilnOk;
    default:
      KilnOpaqueContextReportError(context, "%s: padding %d is neither SAME nor VALID", op,
                                   static_cast<int>(padding));
      return kKilnError;
  }
}

KilnStatus ComputeWindows(KilnOpaqueContext* context, const char* op, KilnPadding padding,
                          const Dims& input_dims, const Window2d& window, bool has_dilation,
                          reference::WindowSize* rows, reference::WindowSize* cols) {
  reference::Padding pad;
  KILN_OPAQUE_ENSURE_STATUS(ToPadding(context, op, padding, &pad));
  if (!reference::ComputeWindowSize(pad, input_dims[1], window.filter_height, window.stride_height,
                                    window.dilation_height, rows) ||
      !reference::ComputeWindowSize(pad, input_dims[2], window.filter_width, window.stride_width,
                                    window.dilation_width, cols)) {
    const std::string dilation = has_dilation ? ", dilation " + std::to_string(window.dilation_height) + "x" +
                                                    std::to_string(window.dilation_width)
                                              : "";
    KilnOpaqueContextReportError(
        context,
        "%s: invalid window: input %lldx%lld, filter %lldx%lld, stride %dx%d%s (each "
        "must be positive and the output size non-negative)",
        op, static_cast<long long>(input_dims[1]), static_cast<long long>(input_dims[2]),
        static_cast<long long>(window.filter_height), static_cast<long long>(window.filter_width),
        window.stride_height, window.stride_width, dilation.c_str());
    return kKilnError;
  }
  return kKilnOk;
}

bool GetQuantization(const KilnOpaqueTensor* tensor, std::vector<float>* scales,
                     std::vector<int32_t>* zero_points, int* quantized_dimension) {
  const float* scale_data = nullptr;
  const int32_t* zero_point_data = nullptr;
  int channels = 0;
  *quantized_dimension = 0;
  if (KilnOpaqueTensorGetPerChannelQuantization(tensor, &scale_data, &zero_point_data, &channels,
                                                quantized_dimension) != kKilnOk ||
      channels <= 0 || scale_data == nullptr) {
    return false;
  }
  scales->assign(scale_data, scale_data + channels);
  zero_points->assign(channels, 0);
  if (zero_point_data != nullptr) zero_points->assign(zero_point_data, zero_point_data + channels);
  return true;
}

bool IsInt8Input(KilnOpaqueContext* context, const KilnOpaqueNode* node) {
  if (KilnOpaqueNodeNumberOfInputs(node) < 1) return false;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  return input != nullptr && KilnOpaqueTensorType(input) == kKilnInt8;
}

namespace {

KilnStatus CheckScale(KilnOpaqueContext* context, const char* op, const char* role,
                      const KilnOpaqueTensor* tensor, float scale) {
  if (!(scale > 0.0f) || !std::isfinite(scale)) {
    KilnOpaqueContextReportError(context, "%s: int8 %s %s has scale %g; a quantized tensor needs a finite scale > 0",
                                 op, role, TensorLabel(tensor).c_str(), static_cast<double>(scale));
    return kKilnError;
  }
  return kKilnOk;
}

}  // namespace

KilnStatus GetInt8Quantization(KilnOpaqueContext* context, const char* op, const char* role,
                               const KilnOpaqueTensor* tensor, float* scale, int32_t* zero_point) {
  return GetQuantization8(context, op, role, tensor, kKilnInt8, scale, zero_point);
}

KilnStatus GetInt16Quantization(KilnOpaqueContext* context, const char* op, const char* role,
                                const KilnOpaqueTensor* tensor, float* scale) {
  int32_t zero_point = 0;
  KILN_OPAQUE_ENSURE_STATUS(GetQuantization8(context, op, role, tensor, kKilnInt16, scale, &zero_point));
  if (zero_point != 0) {
    KilnOpaqueContextReportError(context, "%s: int16 %s %s has zero point %d; int16 tensors must be symmetric (0)",
                                 op, role, TensorLabel(tensor).c_str(), static_cast<int>(zero_point));
    return kKilnError;
  }
  return kKilnOk;
}

KilnType Quantized8InputType(KilnOpaqueContext* context, const KilnOpaqueNode* node) {
  if (KilnOpaqueNodeNumberOfInputs(node) < 1) return kKilnNoType;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  if (input == nullptr) return kKilnNoType;
  const KilnType type = KilnOpaqueTensorType(input);
  return type == kKilnInt8 || type == kKilnUInt8 ? type : kKilnNoType;
}

KilnStatus GetQuantization8(KilnOpaqueContext* context, const char* op, const char* role,
                            const KilnOpaqueTensor* tensor, KilnType type, float* scale, int32_t* zero_point) {
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, role, tensor, type));
  const char* name = KilnTypeGetName(type);
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
  int dim = 0;
  if (!GetQuantization(tensor, &scales, &zero_points, &dim)) {
    KilnOpaqueContextReportError(context, "%s: %s %s %s has no quantization parameters", op, name, role,
                                 TensorLabel(tensor).c_str());
    return kKilnError;
  }
  if (scales.size() != 1) {
    KilnOpaqueContextReportError(context, "%s: %s %s %s has %zu scales; this kernel needs one (per tensor)", op,
                                 name, role, TensorLabel(tensor).c_str(), scales.size());
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckScale(context, op, role, tensor, scales[0]));
  if (zero_points[0] < TypeMin(type) || zero_points[0] > TypeMax(type)) {
    KilnOpaqueContextReportError(context, "%s: %s %s %s has zero point %d, outside [%d, %d]", op, name, role,
                                 TensorLabel(tensor).c_str(), static_cast<int>(zero_points[0]),
                                 static_cast<int>(TypeMin(type)), static_cast<int>(TypeMax(type)));
    return kKilnError;
  }
  *scale = scales[0];
  *zero_point = zero_points[0];
  return kKilnOk;
}

KilnStatus GetInt8WeightScales(KilnOpaqueContext* context, const char* op, const char* role,
                               const KilnOpaqueTensor* tensor, int quantized_dimension, int64_t channels,
                               std::vector<float>* scales) {
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, role, tensor, kKilnInt8));
  std::vector<int32_t> zero_points;
  int dim = 0;
  if (!GetQuantization(tensor, scales, &zero_points, &dim)) {
    KilnOpaqueContextReportError(context, "%s: int8 %s %s has no quantization parameters", op, role,
                                 TensorLabel(tensor).c_str());
    return kKilnError;
  }
  if (scales->size() != 1 && (dim != quantized_dimension || static_cast<int64_t>(scales->size()) != channels)) {
    KilnOpaqueContextReportError(context,
                                 "%s: int8 %s %s has %zu scales along dimension %d; expected 1, or %lld along "
                                 "dimension %d",
                                 op, role, TensorLabel(tensor).c_str(), scales->size(), dim,
                                 static_cast<long long>(channels), quantized_dimension);
    return kKilnError;
  }
  for (size_t i = 0; i < scales->size(); ++i) {
    KILN_OPAQUE_ENSURE_STATUS(CheckScale(context, op, role, tensor, (*scales)[i]));
    if (zero_points[i] != 0) {
      KilnOpaqueContextReportError(context, "%s: int8 %s %s has zero point %d; int8 weights must be symmetric (0)",
                                   op, role, TensorLabel(tensor).c_str(), static_cast<int>(zero_points[i]));
      return kKilnError;
    }
  }
  return kKilnOk;
}

KilnStatus CheckInt32Bias(KilnOpaqueContext* context, const char* op, const KilnOpaqueTensor* bias, int64_t count) {
  if (bias == nullptr) return kKilnOk;
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "bias", bias, kKilnInt32));
  const Dims dims = TensorDims(bias);
  if (reference::NumElements(dims) != count) {
    KilnOpaqueContextReportError(context, "%s: bias %s has shape %s; expected %lld elements", op,
                                 TensorLabel(bias).c_str(), DimsToString(dims).c_str(), static_cast<long long>(count));
    return kKilnError;
  }
  return kKilnOk;
}

KilnStatus PrepareWeightedInt8(KilnOpaqueContext* context, const char* op, const char* weights_role,
                               const KilnOpaqueTensor* input,
                               const KilnOpaqueTensor* weights, const KilnOpaqueTensor* bias,
                               const KilnOpaqueTensor* output, int quantized_dimension, int64_t channels,
                               reference::Activation activation, reference::WeightedQuantParams* params) {
  float input_scale, output_scale;
  KILN_OPAQUE_ENSURE_STATUS(
      GetInt8Quantization(context, op, "input", input, &input_scale, &params->input_zero_point));
  KILN_OPAQUE_ENSURE_STATUS(
      GetInt8Quantization(context, op, "output", output, &output_scale, &params->output_zero_point));
  std::vector<float> scales;
  KILN_OPAQUE_ENSURE_STATUS(
      GetInt8WeightScales(context, op, weights_role, weights, quantized_dimension, channels, &scales));
  KILN_OPAQUE_ENSURE_STATUS(CheckInt32Bias(context, op, bias, channels));
  if (!reference::QuantizedActivationRange(static_cast<int>(activation), output_scale, params->output_zero_point,
                                           &params->activation_min, &params->activation_max)) {
    KilnOpaqueContextReportError(context, "%s: the fused activation TANH/SIGMOID has no int8 kernel", op);
    return kKilnError;
  }
  params->multipliers = reference::PerChannelMultipliers(input_scale, scales, output_scale, channels);
  return kKilnOk;
}

KilnStatus PrepareWeighted8(KilnOpaqueContext* context, const char* op, const char* weights_role, KilnType type,
                            const KilnOpaqueTensor* input, const KilnOpaqueTensor* weights,
                            const KilnOpaqueTensor* bias, const KilnOpaqueTensor* output, int quantized_dimension,
                            int64_t channels, reference::Activation activation, reference::WeightedQuantParams* params,
                            reference::ScaleProduct uint8_product) {
  if (type != kKilnUInt8) {
    params->filter_zero_point = 0;
    return PrepareWeightedInt8(context, op, weights_role, input, weights, bias, output, quantized_dimension,
                               channels, activation, params);
  }
  float input_scale, weights_scale, output_scale;
  KILN_OPAQUE_ENSURE_STATUS(
      GetQuantization8(context, op, "input", input, kKilnUInt8, &input_scale, &params->input_zero_point));
  KILN_OPAQUE_ENSURE_STATUS(
      GetQuantization8(context, op, weights_role, weights, kKilnUInt8, &weights_scale, &params->filter_zero_point));
  KILN_OPAQUE_ENSURE_STATUS(
      GetQuantization8(context, op, "output", output, kKilnUInt8, &output_scale, &params->output_zero_point));
  KILN_OPAQUE_ENSURE_STATUS(CheckInt32Bias(context, op, bias, channels));
  if (!reference::QuantizedActivationRange(static_cast<int>(activation), output_scale, params->output_zero_point,
                                           &params->activation_min, &params->activation_max, 0, 255)) {
    KilnOpaqueContextReportError(context, "%s: the fused activation TANH/SIGMOID has no uint8 kernel", op);
    return kKilnError;
  }
  params->multipliers =
      reference::PerChannelMultipliers(input_scale, {weights_scale}, output_scale, channels, uint8_product);
  return kKilnOk;
}

bool IsInt16Input(KilnOpaqueContext* context, const KilnOpaqueNode* node) {
  if (KilnOpaqueNodeNumberOfInputs(node) < 1) return false;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  return input != nullptr && KilnOpaqueTensorType(input) == kKilnInt16;
}

KilnStatus PrepareWeighted16x8(KilnOpaqueContext* context, const char* op, const char* weights_role,
                               const KilnOpaqueTensor* input, const KilnOpaqueTensor* weights,
                               const KilnOpaqueTensor* bias, const KilnOpaqueTensor* output, int quantized_dimension,
                               int64_t channels, reference::Activation activation,
                               reference::WeightedQuantParams* params) {
  float input_scale, output_scale;
  KILN_OPAQUE_ENSURE_STATUS(GetInt16Quantization(context, op, "input", input, &input_scale));
  KILN_OPAQUE_ENSURE_STATUS(GetInt16Quantization(context, op, "output", output, &output_scale));
  params->input_zero_point = 0;
  params->output_zero_point = 0;
  params->filter_zero_point = 0;
  params->wide_multiply = true;
  std::vector<float> scales;
  KILN_OPAQUE_ENSURE_STATUS(
      GetInt8WeightScales(context, op, weights_role, weights, quantized_dimension, channels, &scales));
  if (bias != nullptr) {
    KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "bias", bias, kKilnInt64));
    const Dims dims = TensorDims(bias);
    if (reference::NumElements(dims) != channels) {
      KilnOpaqueContextReportError(context, "%s: bias %s has shape %s; expected %lld elements", op,
                                   TensorLabel(bias).c_str(), DimsToString(dims).c_str(),
                                   static_cast<long long>(channels));
      return kKilnError;
    }
  }
  if (!reference::QuantizedActivationRange(static_cast<int>(activation), output_scale, 0, &params->activation_min,
                                           &params->activation_max, -32768, 32767)) {
    KilnOpaqueContextReportError(context, "%s: the fused activation TANH/SIGMOID has no int16 kernel", op);
    return kKilnError;
  }
  params->multipliers = reference::PerChannelMultipliers(input_scale, scales, output_scale, channels);
  return kKilnOk;
}

KilnStatus PrepareFloatWeights(KilnOpaqueContext* context, const char* op, const char* role,
                               const KilnOpaqueTensor* tensor, int quantized_dimension,
                               FloatWeights* weights) {
  const KilnType type = KilnOpaqueTensorType(tensor);
  weights->is_dequantized = false;
  weights->dequantized.clear();
  if (type == kKilnFloat32) {
    // Constant weights are checked now, so that weights stored in another layout (sparse) fail in Prepare.
    if (!IsConstant(tensor)) return kKilnOk;
    return CheckData(context, op, role, tensor, reference::NumElements(TensorDims(tensor)), 4);
  }
  if (type != kKilnInt8) {
    KilnOpaqueContextReportError(context,
                                 "%s: %s %s has type %s; this kernel supports float32, or constant int8 "
                                 "(hybrid) weights",
                                 op, role, TensorLabel(tensor).c_str(), KilnTypeGetName(type));
    return kKilnError;
  }
  if (!IsConstant(tensor)) {
    KilnOpaqueContextReportError(context, "%s: int8 %s %s must be a constant tensor of the model", op, role,
                                 TensorLabel(tensor).c_str());
    return kKilnError;
  }
  const Dims dims = TensorDims(tensor);
  const int64_t count = reference::NumElements(dims);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, role, tensor, count, 1));
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
  int quantized_dim = 0;
  if (!GetQuantization(tensor, &scales, &zero_points, &quantized_dim)) {
    KilnOpaqueContextReportError(context, "%s: int8 %s %s has no quantization parameters", op, role,
                                 TensorLabel(tensor).c_str());
    return kKilnError;
  }
  const int channels = static_cast<int>(scales.size());
  if (channels > 1) {
    if (quantized_dim != quantized_dimension || quantized_dim >= static_cast<int>(dims.size()) ||
        dims[quantized_dim] != channels) {
      KilnOpaqueContextReportError(
          context,
          "%s: int8 %s %s of shape %s is quantized with %d scales along dimension %d; "
          "expected one per entry of dimension %d",
          op, role, TensorLabel(tensor).c_str(), DimsToString(dims).c_str(), channels, quantized_dim,
          quantized_dimension);
      return kKilnError;
    }
  }
  const reference::DequantizeParams params =
      reference::MakeDequantizeParams(dims, quantized_dim, std::move(scales), std::move(zero_points));
  weights->dequantized.resize(count);
  if (count > 0) {
    reference::DequantizeFloat(params, static_cast<const int8_t*>(KilnOpaqueTensorData(tensor)),
                               weights->dequantized.data());
  }
  weights->is_dequantized = true;
  return kKilnOk;
}

}  // namespace kiln::ops
