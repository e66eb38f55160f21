// The same `Atan` op written against LiteRT's opaque API names, as a LiteRT user would have it. It compiles
// unchanged against kiln/compat/litert.h: only the include line differs from the LiteRT original. The options
// are read with FlexBuffers, as LiteRT custom ops do. Two registrations: LiteRT's older idiom (three-argument
// TfLiteOperatorCreate, plain callbacks) and today's (TfLiteOperatorCreate with user_data, the WithData
// callbacks, whose setters return a status, and the in-place hint).
#include <cmath>

#include "flatbuffers/flexbuffers.h"
#include "kiln/compat/litert.h"  // LiteRT: "tensorflow/lite/core/c/c_api.h" + "c_api_opaque.h"

namespace {

struct AtanOpData {
  float offset = 0.0f;
};

void* Init(TfLiteOpaqueContext* context, const char* buffer, size_t length) {
  auto* data = new AtanOpData;
  if (length > 0) {
    const flexbuffers::Map m = flexbuffers::GetRoot(reinterpret_cast<const uint8_t*>(buffer), length).AsMap();
    if (!m["offset"].IsNull()) data->offset = m["offset"].AsFloat();
  }
  return data;
}

void Free(TfLiteOpaqueContext* context, void* data) { delete static_cast<AtanOpData*>(data); }

TfLiteStatus Prepare(TfLiteOpaqueContext* context, TfLiteOpaqueNode* node) {
  TF_LITE_OPAQUE_ENSURE_EQ(context, TfLiteOpaqueNodeNumberOfInputs(node), 1);
  TF_LITE_OPAQUE_ENSURE_EQ(context, TfLiteOpaqueNodeNumberOfOutputs(node), 1);
  const TfLiteOpaqueTensor* input = TfLiteOpaqueNodeGetInput(context, node, 0);
  TfLiteOpaqueTensor* output = TfLiteOpaqueNodeGetOutput(context, node, 0);
  TF_LITE_OPAQUE_ENSURE_TYPES_EQ(context, TfLiteOpaqueTensorType(input), kTfLiteFloat32);

  const int num_dims = TfLiteOpaqueTensorNumDims(input);
  TfLiteIntArray* output_size = TfLiteIntArrayCreate(num_dims);
  for (int i = 0; i < num_dims; ++i) output_size->data[i] = TfLiteOpaqueTensorDim(input, i);
  return TfLiteOpaqueContextResizeTensor(context, output, output_size);
}

TfLiteStatus Eval(TfLiteOpaqueContext* context, TfLiteOpaqueNode* node) {
  const auto* data = static_cast<const AtanOpData*>(TfLiteOpaqueNodeGetUserData(node));
  const TfLiteOpaqueTensor* input = TfLiteOpaqueNodeGetInput(context, node, 0);
  TfLiteOpaqueTensor* output = TfLiteOpaqueNodeGetOutput(context, node, 0);
  const float* in = static_cast<const float*>(TfLiteOpaqueTensorData(input));
  float* out = static_cast<float*>(TfLiteOpaqueTensorData(output));
  size_t count = 1;
  for (int i = 0; i < TfLiteOpaqueTensorNumDims(input); ++i) count *= TfLiteOpaqueTensorDim(input, i);
  for (size_t i = 0; i < count; ++i) out[i] = std::atan(in[i] + data->offset);
  return kTfLiteOk;
}

}  // namespace

namespace {

// Today's form: the operator's user data (here, a count of the nodes it made) reaches every callback.
struct AtanOperatorData {
  int nodes = 0;
};

void* InitWithData(void* user_data, TfLiteOpaqueContext* context, const char* buffer, size_t length) {
  static_cast<AtanOperatorData*>(user_data)->nodes += 1;
  return Init(context, buffer, length);
}
void FreeWithData(void* user_data, TfLiteOpaqueContext* context, void* data) { Free(context, data); }
TfLiteStatus PrepareWithData(void* user_data, TfLiteOpaqueContext* context, TfLiteOpaqueNode* node) {
  return Prepare(context, node);
}
TfLiteStatus EvalWithData(void* user_data, TfLiteOpaqueContext* context, TfLiteOpaqueNode* node) {
  return Eval(context, node);
}

}  // namespace

// LiteRT's current registration idiom, unchanged.
TfLiteOperator* AtanOpRegistrationWithData(int** node_count) {
  static AtanOperatorData op_data;
  static TfLiteOperator* atan_op = [] {
    TfLiteOperator* r = TfLiteOperatorCreate(kTfLiteBuiltinCustom, "Atan", /*version=*/1, &op_data);
    if (TfLiteOperatorSetInitWithData(r, InitWithData) != kTfLiteOk ||
        TfLiteOperatorSetFreeWithData(r, FreeWithData) != kTfLiteOk ||
        TfLiteOperatorSetPrepareWithData(r, PrepareWithData) != kTfLiteOk ||
        TfLiteOperatorSetInvokeWithData(r, EvalWithData) != kTfLiteOk) {
      return static_cast<TfLiteOperator*>(nullptr);
    }
    TfLiteOperatorSetInplaceOperator(r, kTfLiteInplaceOpInput0Shared);
    return r;
  }();
  if (node_count != nullptr) *node_count = &op_data.nodes;
  return atan_op;
}

// LiteRT's older registration idiom, unchanged.
TfLiteOperator* AtanOpRegistration() {
  static TfLiteOperator* atan_op = [] {
    TfLiteOperator* r = TfLiteOperatorCreate(kTfLiteBuiltinCustom, "Atan", /*version=*/1);
    TfLiteOperatorSetInit(r, Init);
    TfLiteOperatorSetFree(r, Free);
    TfLiteOperatorSetPrepare(r, Prepare);
    TfLiteOperatorSetInvoke(r, Eval);
    return r;
  }();
  return atan_op;
}
