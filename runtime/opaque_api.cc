// What ops see (kiln/c_api_opaque.h): nodes, the context and tensors, all through accessors.
#include "kiln/c_api_opaque.h"

#include <cstring>
#include <new>

#include "runtime/core.h"
#include "runtime/interpreter.h"

using kiln::AsOpaque;
using kiln::AsTensor;
using kiln::Interpreter;
using kiln::Node;

namespace {

const Node* AsNode(const KilnOpaqueNode* n) { return reinterpret_cast<const Node*>(n); }
Node* AsNode(KilnOpaqueNode* n) { return reinterpret_cast<Node*>(n); }

}  // namespace

struct KilnOpaqueTensorBuilder {
  KilnType type = kKilnFloat32;
  void* data = nullptr;
  KilnAllocationType allocation = kKilnArenaRw;
  KilnQuantizationParams quant{0.0f, 0};
};

extern "C" {

int KilnOpaqueNodeNumberOfInputs(const KilnOpaqueNode* node) {
  return node ? static_cast<int>(AsNode(node)->inputs.size()) : 0;
}

int KilnOpaqueNodeNumberOfOutputs(const KilnOpaqueNode* node) {
  return node ? static_cast<int>(AsNode(node)->outputs.size()) : 0;
}

const KilnOpaqueTensor* KilnOpaqueNodeGetInput(const KilnOpaqueContext* context, const KilnOpaqueNode* node,
                                               int index) {
  if (context == nullptr || node == nullptr) return nullptr;
  const Node* n = AsNode(node);
  if (index < 0 || index >= static_cast<int>(n->inputs.size())) return nullptr;
  auto* interpreter = const_cast<Interpreter*>(Interpreter::FromContext(context));
  KilnTensor* t = interpreter->tensor(n->inputs[index]);
  return t ? AsOpaque(t) : nullptr;
}

KilnOpaqueTensor* KilnOpaqueNodeGetOutput(KilnOpaqueContext* context, const KilnOpaqueNode* node, int index) {
  if (context == nullptr || node == nullptr) return nullptr;
  const Node* n = AsNode(node);
  if (index < 0 || index >= static_cast<int>(n->outputs.size())) return nullptr;
  KilnTensor* t = Interpreter::FromContext(context)->tensor(n->outputs[index]);
  return t ? AsOpaque(t) : nullptr;
}

KilnStatus KilnOpaqueNodeInputs(const KilnOpaqueNode* node, const int** inputs, int* num_inputs) {
  if (node == nullptr || inputs == nullptr || num_inputs == nullptr) return kKilnInvalidArgument;
  *inputs = AsNode(node)->inputs.data();
  *num_inputs = static_cast<int>(AsNode(node)->inputs.size());
  return kKilnOk;
}

KilnStatus KilnOpaqueNodeOutputs(const KilnOpaqueNode* node, const int** outputs, int* num_outputs) {
  if (node == nullptr || outputs == nullptr || num_outputs == nullptr) return kKilnInvalidArgument;
  *outputs = AsNode(node)->outputs.data();
  *num_outputs = static_cast<int>(AsNode(node)->outputs.size());
  return kKilnOk;
}

void* KilnOpaqueNodeGetUserData(const KilnOpaqueNode* node) { return node ? AsNode(node)->user_data : nullptr; }

void* KilnOpaqueNodeGetBuiltinData(const KilnOpaqueNode* node) {
  return node ? AsNode(node)->desc->builtin_data.get() : nullptr;
}

KilnStatus KilnOpaqueNodeGetCustomInitialData(const KilnOpaqueNode* node, const void** init_data, int* size) {
  if (node == nullptr || init_data == nullptr || size == nullptr) return kKilnInvalidArgument;
  *init_data = AsNode(node)->desc->custom_options;
  *size = static_cast<int>(AsNode(node)->desc->custom_options_size);
  return kKilnOk;
}

KilnStatus KilnOpaqueNodeSetTemporaries(KilnOpaqueNode* node, const int* temporaries, int num_temporaries) {
  if (node == nullptr || num_temporaries < 0 || (num_temporaries > 0 && temporaries == nullptr)) {
    return kKilnInvalidArgument;
  }
  AsNode(node)->temporaries.assign(temporaries, temporaries + num_temporaries);
  return kKilnOk;
}

KilnStatus KilnOpaqueNodeTemporaries(const KilnOpaqueNode* node, const int** temporaries,
                                     int* num_temporaries) {
  if (node == nullptr || temporaries == nullptr || num_temporaries == nullptr) return kKilnInvalidArgument;
  *temporaries = AsNode(node)->temporaries.data();
  *num_temporaries = static_cast<int>(AsNode(node)->temporaries.size());
  return kKilnOk;
}

KilnStatus KilnOpaqueContextResizeTensor(KilnOpaqueContext* context, KilnOpaqueTensor* tensor,
                                         KilnIntArray* new_size) {
  if (context == nullptr) {
    KilnIntArrayFree(new_size);
    return kKilnInvalidArgument;
  }
  return Interpreter::FromContext(context)->ResizeTensor(AsTensor(tensor), new_size);
}

KilnOpaqueTensor* KilnOpaqueContextGetOpaqueTensor(const KilnOpaqueContext* context, int index) {
  if (context == nullptr) return nullptr;
  KilnTensor* t = const_cast<Interpreter*>(Interpreter::FromContext(context))->tensor(index);
  return t ? AsOpaque(t) : nullptr;
}

KilnStatus KilnOpaqueContextGetSizeOfType(KilnOpaqueContext* context, KilnType type, size_t* bytes) {
  if (bytes == nullptr) return kKilnInvalidArgument;
  *bytes = kiln::TypeSize(type);
  return *bytes == 0 ? kKilnInvalidArgument : kKilnOk;
}

void KilnOpaqueContextReportErrorVa(KilnOpaqueContext* context, const char* format, va_list vlist) {
  if (context == nullptr) {
    kiln::ReportV(nullptr, nullptr, format, vlist);
    return;
  }
  Interpreter::FromContext(context)->ReportErrorV(format, vlist);
}

void KilnOpaqueContextReportError(KilnOpaqueContext* context, const char* format, ...) {
  va_list args;
  va_start(args, format);
  KilnOpaqueContextReportErrorVa(context, format, args);
  va_end(args);
}

KilnOpaqueTensorBuilder* KilnOpaqueTensorBuilderCreate(void) { return new (std::nothrow) KilnOpaqueTensorBuilder; }

void KilnOpaqueTensorBuilderDelete(KilnOpaqueTensorBuilder* builder) { delete builder; }

KilnOpaqueTensorBuilder* KilnOpaqueTensorBuilderSetType(KilnOpaqueTensorBuilder* builder, KilnType type) {
  if (builder) builder->type = type;
  return builder;
}

KilnOpaqueTensorBuilder* KilnOpaqueTensorBuilderSetData(KilnOpaqueTensorBuilder* builder, void* data) {
  if (builder) {
    builder->data = data;
    builder->allocation = kKilnCustom;
  }
  return builder;
}

KilnOpaqueTensorBuilder* KilnOpaqueTensorBuilderSetAllocationType(KilnOpaqueTensorBuilder* builder,
                                                                  KilnAllocationType allocation_type) {
  if (builder) builder->allocation = allocation_type;
  return builder;
}

KilnOpaqueTensorBuilder* KilnOpaqueTensorBuilderSetQuantizationParams(KilnOpaqueTensorBuilder* builder,
                                                                      KilnQuantizationParams params) {
  if (builder) builder->quant = params;
  return builder;
}

KilnStatus KilnOpaqueContextAddTensor(KilnOpaqueContext* context, KilnOpaqueTensorBuilder* builder,
                                      int* new_tensor_index) {
  if (context == nullptr || builder == nullptr || new_tensor_index == nullptr) return kKilnInvalidArgument;
  if (builder->allocation != kKilnArenaRw && builder->allocation != kKilnDynamic &&
      builder->allocation != kKilnCustom) {
    Interpreter::FromContext(context)->ReportError(
        "AddTensor: allocation type %d is not one an op may request (arena, dynamic or custom)",
        builder->allocation);
    return kKilnInvalidArgument;
  }
  return Interpreter::FromContext(context)->AddTensor(builder->type, builder->allocation, builder->quant,
                                                      builder->data, new_tensor_index);
}

KilnType KilnOpaqueTensorType(const KilnOpaqueTensor* tensor) { return tensor ? AsTensor(tensor)->type : kKilnNoType; }

int32_t KilnOpaqueTensorNumDims(const KilnOpaqueTensor* tensor) {
  return KilnTensorNumDims(reinterpret_cast<const KilnTensor*>(tensor));
}

int32_t KilnOpaqueTensorDim(const KilnOpaqueTensor* tensor, int32_t dim_index) {
  return KilnTensorDim(reinterpret_cast<const KilnTensor*>(tensor), dim_index);
}

size_t KilnOpaqueTensorByteSize(const KilnOpaqueTensor* tensor) { return tensor ? AsTensor(tensor)->bytes : 0; }

void* KilnOpaqueTensorData(const KilnOpaqueTensor* tensor) { return tensor ? AsTensor(tensor)->data : nullptr; }

KilnAllocationType KilnOpaqueTensorGetAllocationType(const KilnOpaqueTensor* tensor) {
  return tensor ? AsTensor(tensor)->allocation : kKilnMemNone;
}

KilnStatus KilnOpaqueTensorSetAllocationTypeToDynamic(KilnOpaqueTensor* tensor) {
  if (tensor == nullptr) return kKilnInvalidArgument;
  KilnTensor* t = AsTensor(tensor);
  if (t->allocation == kKilnDynamic) return kKilnOk;
  if (t->allocation != kKilnArenaRw || t->context != nullptr) return kKilnError;
  t->allocation = kKilnDynamic;
  t->data = nullptr;  // memory of its own comes with its shape (Interpreter::EnsureDynamicMemory)
  return kKilnOk;
}

const char* KilnOpaqueTensorName(const KilnOpaqueTensor* tensor) {
  return tensor ? AsTensor(tensor)->name.c_str() : "";
}

KilnQuantizationParams KilnOpaqueTensorGetQuantizationParams(const KilnOpaqueTensor* tensor) {
  return tensor ? AsTensor(tensor)->quant : KilnQuantizationParams{0.0f, 0};
}

KilnStatus KilnOpaqueTensorGetPerChannelQuantization(const KilnOpaqueTensor* tensor, const float** out_scales,
                                                     const int32_t** out_zero_points, int* out_count,
                                                     int* out_quantized_dimension) {
  return KilnTensorGetPerChannelQuantization(AsTensor(tensor), out_scales, out_zero_points, out_count,
                                             out_quantized_dimension);
}

KilnStatus KilnOpaqueTensorCopyFromBuffer(KilnOpaqueTensor* tensor, const void* input_data,
                                          size_t input_data_size) {
  return KilnTensorCopyFromBuffer(reinterpret_cast<KilnTensor*>(tensor), input_data, input_data_size);
}

KilnStatus KilnOpaqueTensorCopyToBuffer(const KilnOpaqueTensor* tensor, void* output_data,
                                        size_t output_data_size) {
  return KilnTensorCopyToBuffer(reinterpret_cast<const KilnTensor*>(tensor), output_data, output_data_size);
}

}  // extern "C"
