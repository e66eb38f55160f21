/* The `Atan` custom op in C99: options are read in Init, shapes in Prepare, and Invoke only computes. */
#include "atan_op.h"

#include <math.h>
#include <stdlib.h>

#include "kiln/c_api_opaque.h"
#include "kiln/flex.h"

typedef struct AtanData {
  float offset;
} AtanData;

static void* AtanInit(KilnOpaqueContext* context, const char* buffer, size_t length) {
  AtanData* data = (AtanData*)malloc(sizeof(AtanData));
  if (data == NULL) return NULL;
  data->offset = 0.0f;
  if (length > 0 && KilnFlexMapGetFloat(buffer, length, "offset", &data->offset) != kKilnOk) {
    data->offset = 0.0f; /* the option is optional */
  }
  return data;
}

static void AtanFree(KilnOpaqueContext* context, void* data) { free(data); }

static KilnStatus AtanPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  KILN_OPAQUE_ENSURE(context, KilnOpaqueNodeGetUserData(node) != NULL);
  KILN_OPAQUE_ENSURE_EQ(context, KilnOpaqueNodeNumberOfInputs(node), 1);
  KILN_OPAQUE_ENSURE_EQ(context, KilnOpaqueNodeNumberOfOutputs(node), 1);
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  KILN_OPAQUE_ENSURE_TYPES_EQ(context, KilnOpaqueTensorType(input), kKilnFloat32);
  KILN_OPAQUE_ENSURE_TYPES_EQ(context, KilnOpaqueTensorType(output), kKilnFloat32);

  const int num_dims = KilnOpaqueTensorNumDims(input);
  KilnIntArray* output_size = KilnIntArrayCreate(num_dims);
  if (output_size == NULL) return kKilnOutOfMemory;
  for (int i = 0; i < num_dims; ++i) output_size->data[i] = KilnOpaqueTensorDim(input, i);
  /* The context takes ownership of output_size, even on failure. */
  return KilnOpaqueContextResizeTensor(context, output, output_size);
}

static KilnStatus AtanInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const AtanData* data = (const AtanData*)KilnOpaqueNodeGetUserData(node);
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  const float* in = (const float*)KilnOpaqueTensorData(input);
  float* out = (float*)KilnOpaqueTensorData(output);
  const size_t count = KilnOpaqueTensorByteSize(input) / sizeof(float);
  for (size_t i = 0; i < count; ++i) out[i] = atanf(in[i] + data->offset);
  return kKilnOk;
}

KilnOperator* AtanOperator(void) {
  static KilnOperator* op = NULL;
  if (op == NULL) {
    op = KilnOperatorCreate(kKilnBuiltinCustom, "Atan", 1);
    KilnOperatorSetInit(op, AtanInit);
    KilnOperatorSetFree(op, AtanFree);
    KilnOperatorSetPrepare(op, AtanPrepare);
    KilnOperatorSetInvoke(op, AtanInvoke);
  }
  return op;
}
