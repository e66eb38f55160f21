// The same `Atan` op written against LiteRT's opaque API names, as a LiteRT user would have it. It compiles
// unchanged against kiln/compat/litert.h: only the include line differs from the LiteRT original. The options
// are read with FlexBuffers, as LiteRT custom ops do.
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

// LiteRT's registration idiom, unchanged.
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
