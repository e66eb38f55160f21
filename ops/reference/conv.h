// 2-D convolutions over NHWC tensors (CONV_2D, DEPTHWISE_CONV_2D) and the SAME/VALID padding arithmetic
// shared with pooling, computed exactly as TFLite does.
#ifndef KILN_OPS_REFERENCE_CONV_H_
#define KILN_OPS_REFERENCE_CONV_H_

#include <cstdint>
#include <type_traits>

#include "ops/reference/common.h"
#include "ops/reference/quantized.h"

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

// TRANSPOSE_CONV, LiteRT's "scatter" formulation: the output starts at zero; every input element (b, y, x, ci)
// adds input * filter[co, fy, fx, ci] to output (b, y * stride - pad_top + fy, x * stride - pad_left + fx, co)
// where that lies inside the output, visiting input rows, columns, input channels, filter rows, columns and
// output channels in that order; then the bias and the activation. input [batch, in_h, in_w, in_c], filter
// [out_c, filter_h, filter_w, in_c], bias [out_c] or null, output [batch, out_h, out_w, out_c]. The padding is
// that of a convolution from the output's size back to the input's (TransposeConvPadding).
struct TransposeConvParams {
  int64_t batch = 0;
  int64_t input_height = 0, input_width = 0, input_channels = 0;
  int64_t output_height = 0, output_width = 0, output_channels = 0;
  int64_t filter_height = 0, filter_width = 0;
  int64_t stride_height = 1, stride_width = 1;
  int64_t pad_top = 0, pad_left = 0;
  Activation activation = Activation::kNone;
};

// LiteRT's padding for TRANSPOSE_CONV along one dimension: that of a convolution of the output's size with the
// filter and stride (ComputeWindowSize), its leading half. False for a non-positive filter or stride.
bool TransposeConvPadding(Padding padding, int64_t output_size, int64_t filter, int64_t stride, int64_t* pad);

void TransposeConvFloat(const TransposeConvParams& params, const float* input, const float* filter,
                        const float* bias, float* output);

// The scatter loop that TRANSPOSE_CONV's float and quantized kernels share: adds input_value(input element) *
// filter_value(filter element) into `acc` (zeroed by the caller) in LiteRT's order. Integer sums wrap as
// LiteRT's int32 ones do (WrapAdd: a crafted model can overflow them; plain += would be undefined behaviour).
template <typename In, typename F, typename Acc, typename InputValue, typename FilterValue>
void ScatterTransposeConv(const TransposeConvParams& p, const In* input, const F* filter, Acc* acc,
                          InputValue input_value, FilterValue filter_value) {
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t y = 0; y < p.input_height; ++y) {
      for (int64_t x = 0; x < p.input_width; ++x) {
        const In* in = input + ((b * p.input_height + y) * p.input_width + x) * p.input_channels;
        const int64_t oy0 = y * p.stride_height - p.pad_top, ox0 = x * p.stride_width - p.pad_left;
        for (int64_t ci = 0; ci < p.input_channels; ++ci) {
          const Acc value = input_value(in[ci]);
          for (int64_t fy = 0; fy < p.filter_height; ++fy) {
            const int64_t oy = oy0 + fy;
            if (oy < 0 || oy >= p.output_height) continue;
            for (int64_t fx = 0; fx < p.filter_width; ++fx) {
              const int64_t ox = ox0 + fx;
              if (ox < 0 || ox >= p.output_width) continue;
              Acc* out = acc + ((b * p.output_height + oy) * p.output_width + ox) * p.output_channels;
              for (int64_t co = 0; co < p.output_channels; ++co) {
                const Acc w =
                    filter_value(filter[((co * p.filter_height + fy) * p.filter_width + fx) * p.input_channels + ci]);
                if constexpr (std::is_integral_v<Acc>) {
                  out[co] = WrapAdd(out[co], value * w);
                } else {
                  out[co] += value * w;
                }
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_CONV_H_
