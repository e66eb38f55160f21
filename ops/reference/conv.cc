// CONV_2D and DEPTHWISE_CONV_2D over NHWC tensors, and the padding arithmetic (conv.h).

#include "ops/reference/conv.h"

namespace kiln::ops::reference {

bool ComputeWindowSize(Padding padding, int64_t input, int64_t filter, int64_t stride, int64_t dilation,
                       WindowSize* size) {
  if (filter <= 0 || stride <= 0 || dilation <= 0 || input < 0) return false;
  const int64_t effective_filter = (filter - 1) * dilation + 1;
  const int64_t output = padding == Padding::kSame ? (input + stride - 1) / stride
                                                   : (input + stride - effective_filter) / stride;
  if (output < 0) return false;
  int64_t total_padding = (output - 1) * stride + effective_filter - input;
  if (total_padding < 0 || output == 0) total_padding = 0;
  size->output = output;
  size->pad_before = total_padding / 2;
  size->pad_after = total_padding - total_padding / 2;
  return true;
}

void ConvFloat(const ConvParams& p, const float* input, const float* filter, const float* bias,
               float* output) {
  const int64_t group_in_channels = p.input_channels / p.groups;
  const int64_t group_out_channels = p.output_channels / p.groups;
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t oy = 0; oy < p.output_height; ++oy) {
      for (int64_t ox = 0; ox < p.output_width; ++ox) {
        for (int64_t oc = 0; oc < p.output_channels; ++oc) {
          const int64_t first_in_channel = (oc / group_out_channels) * group_in_channels;
          float sum = 0.0f;
          for (int64_t fy = 0; fy < p.filter_height; ++fy) {
            const int64_t iy = oy * p.stride_height - p.pad_top + fy * p.dilation_height;
            if (iy < 0 || iy >= p.input_height) continue;  // a padding row: contributes zero
            for (int64_t fx = 0; fx < p.filter_width; ++fx) {
              const int64_t ix = ox * p.stride_width - p.pad_left + fx * p.dilation_width;
              if (ix < 0 || ix >= p.input_width) continue;
              const float* in_pixel = input +
                                      ((b * p.input_height + iy) * p.input_width + ix) * p.input_channels +
                                      first_in_channel;
              const float* taps =
                  filter + ((oc * p.filter_height + fy) * p.filter_width + fx) * group_in_channels;
              for (int64_t ic = 0; ic < group_in_channels; ++ic) sum += in_pixel[ic] * taps[ic];
            }
          }
          if (bias != nullptr) sum += bias[oc];
          output[((b * p.output_height + oy) * p.output_width + ox) * p.output_channels + oc] =
              Activate(p.activation, sum);
        }
      }
    }
  }
}

void DepthwiseConvFloat(const DepthwiseConvParams& p, const float* input, const float* filter,
                        const float* bias, float* output) {
  const int64_t output_channels = p.input_channels * p.depth_multiplier;
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t oy = 0; oy < p.output_height; ++oy) {
      for (int64_t ox = 0; ox < p.output_width; ++ox) {
        for (int64_t ic = 0; ic < p.input_channels; ++ic) {
          for (int64_t m = 0; m < p.depth_multiplier; ++m) {
            const int64_t oc = ic * p.depth_multiplier + m;
            float sum = 0.0f;
            for (int64_t fy = 0; fy < p.filter_height; ++fy) {
              const int64_t iy = oy * p.stride_height - p.pad_top + fy * p.dilation_height;
              if (iy < 0 || iy >= p.input_height) continue;
              for (int64_t fx = 0; fx < p.filter_width; ++fx) {
                const int64_t ix = ox * p.stride_width - p.pad_left + fx * p.dilation_width;
                if (ix < 0 || ix >= p.input_width) continue;
                sum += input[((b * p.input_height + iy) * p.input_width + ix) * p.input_channels + ic] *
                       filter[(fy * p.filter_width + fx) * output_channels + oc];
              }
            }
            if (bias != nullptr) sum += bias[oc];
            output[((b * p.output_height + oy) * p.output_width + ox) * output_channels + oc] =
                Activate(p.activation, sum);
          }
        }
      }
    }
  }
}

bool TransposeConvPadding(Padding padding, int64_t output_size, int64_t filter, int64_t stride, int64_t* pad) {
  WindowSize size;
  if (!ComputeWindowSize(padding, output_size, filter, stride, 1, &size)) return false;
  *pad = size.pad_before;
  return true;
}

void TransposeConvFloat(const TransposeConvParams& p, const float* input, const float* filter, const float* bias,
                        float* output) {
  const int64_t count = p.batch * p.output_height * p.output_width * p.output_channels;
  for (int64_t i = 0; i < count; ++i) output[i] = 0.0f;
  const auto same = [](float v) { return v; };
  ScatterTransposeConv(p, input, filter, output, same, same);
  for (int64_t i = 0; i < count; ++i) {
    float acc = output[i];
    if (bias != nullptr) acc += bias[i % p.output_channels];
    output[i] = Activate(p.activation, acc);
  }
}

}  // namespace kiln::ops::reference
