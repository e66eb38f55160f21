// 2-D convolutions over NHWC tensors (CONV_2D, DEPTHWISE_CONV_2D) and the SAME/VALID padding arithmetic
// shared with pooling, computed exactly as TFLite does.
#ifndef KILN_OPS_REFERENCE_CONV_H_
#define KILN_OPS_REFERENCE_CONV_H_

#include <cstdint>

#include "ops/reference/common.h"

namespace kiln::ops::reference {

enum class Padding { kSame, kValid };

// One spatial dimension of a windowed op.
struct WindowSize {
  int64_t output = 0;      // output size along the dimension
  int64_t pad_before = 0;  // implicit zero rows/columns before the input
  int64_t pad_after = 0;   // ... and after it; gets the odd one when the total padding is odd
};

// TFLite's arithmetic: with an effective filter size e = (filter - 1) * dilation + 1,
//   SAME:  output = ceil(input / stride)
//   VALID: output = (input + stride - e) / stride   (C division, so 0 when the filter barely misses)
// and total padding = max(0, (output - 1) * stride + e - input), split with the extra cell after.
// Returns false for non-positive filter/stride/dilation, a negative input, or a negative output size.
bool ComputeWindowSize(Padding padding, int64_t input, int64_t filter, int64_t stride, int64_t dilation,
                       WindowSize* size);

// CONV_2D. input [batch, in_h, in_w, in_c], filter [out_c, filter_h, filter_w, in_c / groups],
// bias [out_c] or null, output [batch, out_h, out_w, out_c]. With groups > 1 (grouped convolution), output
// channel o reads input channels [g * in_c/groups, (g + 1) * in_c/groups) for g = o / (out_c / groups).
struct ConvParams {
  int64_t batch = 0;
  int64_t input_height = 0, input_width = 0, input_channels = 0;
  int64_t output_height = 0, output_width = 0, output_channels = 0;
  int64_t filter_height = 0, filter_width = 0;
  int64_t stride_height = 1, stride_width = 1;
  int64_t dilation_height = 1, dilation_width = 1;
  int64_t pad_top = 0, pad_left = 0;
  int64_t groups = 1;
  Activation activation = Activation::kNone;
};

void ConvFloat(const ConvParams& params, const float* input, const float* filter, const float* bias,
               float* output);

// DEPTHWISE_CONV_2D. input [batch, in_h, in_w, in_c], filter [1, filter_h, filter_w, in_c * multiplier],
// bias [in_c * multiplier] or null, output [batch, out_h, out_w, in_c * multiplier]. Output channel
// c * multiplier + m reads input channel c only.
struct DepthwiseConvParams {
  int64_t batch = 0;
  int64_t input_height = 0, input_width = 0, input_channels = 0;
  int64_t output_height = 0, output_width = 0;
  int64_t depth_multiplier = 1;
  int64_t filter_height = 0, filter_width = 0;
  int64_t stride_height = 1, stride_width = 1;
  int64_t dilation_height = 1, dilation_width = 1;
  int64_t pad_top = 0, pad_left = 0;
  Activation activation = Activation::kNone;
};

void DepthwiseConvFloat(const DepthwiseConvParams& params, const float* input, const float* filter,
                        const float* bias, float* output);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_CONV_H_
