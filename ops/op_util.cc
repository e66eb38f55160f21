#include "ops/op_util.h"

#include <climits>
#include <cstring>

#include "ops/reference/dequantize.h"

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

KilnStatus CheckType(KilnOpaqueContext* context, const char* op, const char* role,
                     const KilnOpaqueTensor* tensor, KilnType expected) {
  const KilnType type = KilnOpaqueTensorType(tensor);
  if (type != expected) {
    KilnOpaqueContextReportError(context, "%s: %s %s has type %s; this kernel supports only %s", op, role,
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

KilnStatus PrepareFloatWeights(KilnOpaqueContext* context, const char* op, const char* role,
                               const KilnOpaqueTensor* tensor, int quantized_dimension,
                               std::vector<float>* storage, bool* dequantized) {
  const KilnType type = KilnOpaqueTensorType(tensor);
  *dequantized = false;
  storage->clear();
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
  const float* scales = nullptr;
  const int32_t* zero_points = nullptr;
  int channels = 0;
  int quantized_dim = 0;
  if (KilnOpaqueTensorGetPerChannelQuantization(tensor, &scales, &zero_points, &channels, &quantized_dim) !=
          kKilnOk ||
      channels <= 0 || scales == nullptr) {
    KilnOpaqueContextReportError(context, "%s: int8 %s %s has no quantization parameters", op, role,
                                 TensorLabel(tensor).c_str());
    return kKilnError;
  }
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
  std::vector<int32_t> zps(channels, 0);
  if (zero_points != nullptr) zps.assign(zero_points, zero_points + channels);
  const reference::DequantizeParams params = reference::MakeDequantizeParams(
      dims, quantized_dim, std::vector<float>(scales, scales + channels), std::move(zps));
  storage->resize(count);
  if (count > 0) {
    reference::DequantizeFloat(params, static_cast<const int8_t*>(KilnOpaqueTensorData(tensor)),
                               storage->data());
  }
  *dequantized = true;
  return kKilnOk;
}

}  // namespace kiln::ops
