/* Convolution2DTransposeBias served by a kilnc kernel: KilnOperatorSetKernel does the launching; this file
 * only says how the node's inputs and raw options reach the kernel's globals. */
#include "conv_transpose_bias_op.h"

#include <stdio.h>

#include "kiln/c_api.h"
#include "kiln/c_api_opaque.h"
#include "kiln/compute.h"

static int32_t ReadLittleEndianInt32(const unsigned char* p) {
  const uint32_t v = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
  return (int32_t)v;
}

KilnStatus ConvTransposeBiasParseOptions(const void* data, int size, ConvTransposeBiasOptions* out_options) {
  if (data == NULL || size < kConvTransposeBiasOptionsSize || out_options == NULL) return kKilnError;
  const unsigned char* bytes = (const unsigned char*)data;
  out_options->padding = ReadLittleEndianInt32(bytes);
  out_options->stride_width = ReadLittleEndianInt32(bytes + 4);
  out_options->stride_height = ReadLittleEndianInt32(bytes + 8);
  if (out_options->padding != kConvTransposeBiasPaddingSame &&
      out_options->padding != kConvTransposeBiasPaddingValid)
    return kKilnError;
  if (out_options->stride_width < 1 || out_options->stride_height < 1) return kKilnError;
  return kKilnOk;
}

void ConvTransposeBiasOutputSize(int32_t padding, int in, int kernel, int stride, int* out_size,
                                 int* out_pad_before) {
  int total = 0;
  if (padding == kConvTransposeBiasPaddingSame) {
    total = kernel - (in - 1) % stride - 1;
    if (total < 0) total = 0;
  }
  *out_size = stride * (in - 1) + kernel - total;
  *out_pad_before = total / 2;
}

static KilnStatus SetInt(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* name, int value) {
  const int32_t v = value;
  return KilnOpaqueNodeSetKernelGlobal(context, node, name, &v, sizeof v);
}

/* Runs before the kernel op's own checks of the output: validates, sizes the output, sets the globals. */
static KilnStatus Prepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  KILN_OPAQUE_ENSURE_EQ(context, KilnOpaqueNodeNumberOfInputs(node), 3);
  KILN_OPAQUE_ENSURE_EQ(context, KilnOpaqueNodeNumberOfOutputs(node), 1);
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* weights = KilnOpaqueNodeGetInput(context, node, 1);
  const KilnOpaqueTensor* bias = KilnOpaqueNodeGetInput(context, node, 2);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  KILN_OPAQUE_ENSURE(context, input != NULL && weights != NULL && bias != NULL && output != NULL);
  KILN_OPAQUE_ENSURE_TYPES_EQ(context, KilnOpaqueTensorType(input), kKilnFloat32);
  KILN_OPAQUE_ENSURE_TYPES_EQ(context, KilnOpaqueTensorType(weights), kKilnFloat32);
  KILN_OPAQUE_ENSURE_TYPES_EQ(context, KilnOpaqueTensorType(bias), kKilnFloat32);
  KILN_OPAQUE_ENSURE_EQ(context, KilnOpaqueTensorNumDims(input), 4);
  KILN_OPAQUE_ENSURE_EQ(context, KilnOpaqueTensorNumDims(weights), 4);
  KILN_OPAQUE_ENSURE_EQ(context, KilnOpaqueTensorNumDims(bias), 1);
  /* Weights are [out_channels, kernel_height, kernel_width, in_channels] (OHWI). */
  KILN_OPAQUE_ENSURE_EQ(context, KilnOpaqueTensorDim(weights, 3), KilnOpaqueTensorDim(input, 3));
  KILN_OPAQUE_ENSURE_EQ(context, KilnOpaqueTensorDim(weights, 0), KilnOpaqueTensorDim(bias, 0));

  const void* raw = NULL;
  int raw_size = 0;
  ConvTransposeBiasOptions options;
  if (KilnOpaqueNodeGetCustomInitialData(node, &raw, &raw_size) != kKilnOk ||
      ConvTransposeBiasParseOptions(raw, raw_size, &options) != kKilnOk) {
    KilnOpaqueContextReportError(
        context,
        "Convolution2DTransposeBias: the options must be 12 bytes (padding 1 or 2, two "
        "strides >= 1), got %d bytes",
        raw_size);
    return kKilnError;
  }
  const int in_height = KilnOpaqueTensorDim(input, 1);
  const int in_width = KilnOpaqueTensorDim(input, 2);
  const int kernel_height = KilnOpaqueTensorDim(weights, 1);
  const int kernel_width = KilnOpaqueTensorDim(weights, 2);
  int out_height = 0, out_width = 0, pad_top = 0, pad_left = 0;
  ConvTransposeBiasOutputSize(options.padding, in_height, kernel_height, options.stride_height, &out_height,
                              &pad_top);
  ConvTransposeBiasOutputSize(options.padding, in_width, kernel_width, options.stride_width, &out_width,
                              &pad_left);
  KILN_OPAQUE_ENSURE(context, out_height > 0 && out_width > 0);

  KilnStatus status = kKilnOk;
  if (status == kKilnOk) status = SetInt(context, node, "gInHeight", in_height);
  if (status == kKilnOk) status = SetInt(context, node, "gInWidth", in_width);
  if (status == kKilnOk) status = SetInt(context, node, "gInChannels", KilnOpaqueTensorDim(input, 3));
  if (status == kKilnOk) status = SetInt(context, node, "gOutHeight", out_height);
  if (status == kKilnOk) status = SetInt(context, node, "gKernelHeight", kernel_height);
  if (status == kKilnOk) status = SetInt(context, node, "gKernelWidth", kernel_width);
  if (status == kKilnOk) status = SetInt(context, node, "gStrideHeight", options.stride_height);
  if (status == kKilnOk) status = SetInt(context, node, "gStrideWidth", options.stride_width);
  if (status == kKilnOk) status = SetInt(context, node, "gPadTop", pad_top);
  if (status == kKilnOk) status = SetInt(context, node, "gPadLeft", pad_left);
  if (status != kKilnOk) return status;

  KilnIntArray* shape = KilnIntArrayCreate(4);
  if (shape == NULL) return kKilnOutOfMemory;
  shape->data[0] = KilnOpaqueTensorDim(input, 0);
  shape->data[1] = out_height;
  shape->data[2] = out_width;
  shape->data[3] = KilnOpaqueTensorDim(weights, 0);
  return KilnOpaqueContextResizeTensor(context, output, shape); /* takes ownership */
}

KilnOperator* ConvTransposeBiasOperatorCreate(const KilnModule* module) {
  KilnOperator* op = KilnOperatorCreate(kKilnBuiltinCustom, "Convolution2DTransposeBias", 1);
  if (op == NULL) return NULL;
  /* The one call that makes the kernel the op; the rest says where inputs and options go. */
  if (KilnOperatorSetKernel(op, module, "conv_transpose_bias") != kKilnOk ||
      KilnOperatorSetKernelInputGlobal(op, 0, "gInput") != kKilnOk ||
      KilnOperatorSetKernelInputGlobal(op, 1, "gWeights") != kKilnOk ||
      KilnOperatorSetKernelInputGlobal(op, 2, "gBias") != kKilnOk ||
      KilnOperatorSetKernelOptionsAsGlobals(op, false) != kKilnOk) {
    KilnOperatorDelete(op);
    return NULL;
  }
  KilnOperatorSetPrepare(op, Prepare);
  return op;
}
