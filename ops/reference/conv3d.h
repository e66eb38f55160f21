// CONV_3D: a 3-D convolution over NDHWC float32 data with a [D, H, W, in_c, out_c] filter.
#ifndef KILN_OPS_REFERENCE_CONV3D_H_
#define KILN_OPS_REFERENCE_CONV3D_H_

#include <cstdint>

#include "ops/reference/common.h"
#include "ops/reference/conv.h"

namespace kiln::ops::reference {

struct Conv3DShape {
  int64_t batches = 0, in_depth = 0, in_height = 0, in_width = 0, in_channels = 0, out_channels = 0;
  int64_t filter_depth = 0, filter_height = 0, filter_width = 0;
  int64_t stride_depth = 1, stride_height = 1, stride_width = 1;
  int64_t dilation_depth = 1, dilation_height = 1, dilation_width = 1;
  WindowSize depth, rows, cols;  // the output size and padding along each (ComputeWindowSize)
  Activation activation = Activation::kNone;
};

// output[n, z, y, x, o] = activation(bias[o] + sum over the filter taps inside the input of
// input[n, z * sd - pad_d + kz * dd, ..., c] * filter[kz, ky, kx, c, o]); `bias` may be null.
void Conv3D(const Conv3DShape& s, const float* input, const float* filter, const float* bias, float* output);

// CONV_3D_TRANSPOSE: the gradient of Conv3D with respect to its input. The shape describes the forward
// convolution from the output (in_* are the output's sizes) to the input (the windows' `output` sizes), with a
// [D, H, W, out_c, in_c] filter (out_c = s.in_channels here, in_c = s.out_channels): every input element
// input[n, z, y, x, c] adds input * filter[kz, ky, kx, o, c] to output[n, z * sd - pad_d + kz * dd, ..., o] where
// that lies inside; then bias (may be null) and the activation.
void Conv3DTranspose(const Conv3DShape& s, const float* input, const float* filter, const float* bias, float* output);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_CONV3D_H_
