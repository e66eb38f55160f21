/* MediaPipe's custom op Convolution2DTransposeBias served by the kilnc kernel conv_transpose_bias
 * (conv_transpose_bias.rs): the operator an application registers to run mp_selfie_segmentation.tflite. */
#ifndef KILN_EXAMPLES_SELFIE_CONV_TRANSPOSE_BIAS_OP_H_
#define KILN_EXAMPLES_SELFIE_CONV_TRANSPOSE_BIAS_OP_H_

#include "kiln/common.h"
#include "kiln/operator.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The options MediaPipe stores for the op: not FlexBuffers but the raw little-endian bytes of three int32,
 * LiteRT's TfLiteTransposeConvParams (padding, stride_width, stride_height). */
enum { kConvTransposeBiasOptionsSize = 12 };
enum { kConvTransposeBiasPaddingSame = 1, kConvTransposeBiasPaddingValid = 2 };
typedef struct ConvTransposeBiasOptions {
  int32_t padding; /* kConvTransposeBiasPadding* */
  int32_t stride_width;
  int32_t stride_height;
} ConvTransposeBiasOptions;

/* Reads the options from `size` bytes; kKilnError when they are too short or out of range. */
KilnStatus ConvTransposeBiasParseOptions(const void* data, int size, ConvTransposeBiasOptions* out_options);

/* The output extent along one spatial dimension and the padding before it, as MediaPipe computes them:
 * SAME pads max(0, kernel - (in - 1) % stride - 1) in total (the smaller half before), VALID none, and the
 * output is stride * (in - 1) + kernel - total padding. */
void ConvTransposeBiasOutputSize(int32_t padding, int in, int kernel, int stride, int* out_size,
                                 int* out_pad_before);

/* The operator for custom op "Convolution2DTransposeBias" (version 1), served by kernel
 * `conv_transpose_bias` of `module`: inputs 0, 1, 2 (activation, weights, bias) are bound to the pointer
 * globals gInput, gWeights, gBias, and its prepare reads the raw options, sizes the output and sets the shape
 * globals. NULL (reported to stderr) when the module has no such kernel. Delete it with KilnOperatorDelete
 * after every interpreter that uses it. */
KilnOperator* ConvTransposeBiasOperatorCreate(const KilnModule* module);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_EXAMPLES_SELFIE_CONV_TRANSPOSE_BIAS_OP_H_ */
