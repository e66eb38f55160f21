#include "ops/reference/conv3d.h"

namespace kiln::ops::reference {

void Conv3D(const Conv3DShape& s, const float* input, const float* filter, const float* bias, float* output) {
  const int64_t in_c = s.in_channels, out_c = s.out_channels;
  float* out = output;
  for (int64_t n = 0; n < s.batches; ++n) {
    for (int64_t z = 0; z < s.depth.output; ++z) {
      for (int64_t y = 0; y < s.rows.output; ++y) {
        for (int64_t x = 0; x < s.cols.output; ++x) {
          for (int64_t o = 0; o < out_c; ++o) {
            float total = 0.0f;
            for (int64_t kz = 0; kz < s.filter_depth; ++kz) {
              const int64_t iz = z * s.stride_depth - s.depth.pad_before + kz * s.dilation_depth;
              if (iz < 0 || iz >= s.in_depth) continue;
              for (int64_t ky = 0; ky < s.filter_height; ++ky) {
                const int64_t iy = y * s.stride_height - s.rows.pad_before + ky * s.dilation_height;
                if (iy < 0 || iy >= s.in_height) continue;
                for (int64_t kx = 0; kx < s.filter_width; ++kx) {
                  const int64_t ix = x * s.stride_width - s.cols.pad_before + kx * s.dilation_width;
                  if (ix < 0 || ix >= s.in_width) continue;
                  const float* in = input + (((n * s.in_depth + iz) * s.in_height + iy) * s.in_width + ix) * in_c;
                  const float* f = filter + ((kz * s.filter_height + ky) * s.filter_width + kx) * in_c * out_c + o;
                  for (int64_t c = 0; c < in_c; ++c) total += in[c] * f[c * out_c];
                }
              }
            }
            if (bias != nullptr) total += bias[o];
            *out++ = Activate(s.activation, total);
          }
        }
      }
    }
  }
}

void Conv3DTranspose(const Conv3DShape& s, const float* input, const float* filter, const float* bias, float* output) {
  // Here the "input" sizes of `s` are the output's and the windows' output sizes the input's.
  const int64_t out_c = s.in_channels, in_c = s.out_channels;
  const int64_t out_count = s.batches * s.in_depth * s.in_height * s.in_width * out_c;
  for (int64_t i = 0; i < out_count; ++i) output[i] = 0.0f;
  const float* in = input;
  for (int64_t n = 0; n < s.batches; ++n) {
    for (int64_t z = 0; z < s.depth.output; ++z) {
      for (int64_t y = 0; y < s.rows.output; ++y) {
        for (int64_t x = 0; x < s.cols.output; ++x, in += in_c) {
          for (int64_t kz = 0; kz < s.filter_depth; ++kz) {
            const int64_t oz = z * s.stride_depth - s.depth.pad_before + kz * s.dilation_depth;
            if (oz < 0 || oz >= s.in_depth) continue;
            for (int64_t ky = 0; ky < s.filter_height; ++ky) {
              const int64_t oy = y * s.stride_height - s.rows.pad_before + ky * s.dilation_height;
              if (oy < 0 || oy >= s.in_height) continue;
              for (int64_t kx = 0; kx < s.filter_width; ++kx) {
                const int64_t ox = x * s.stride_width - s.cols.pad_before + kx * s.dilation_width;
                if (ox < 0 || ox >= s.in_width) continue;
                float* out = output + (((n * s.in_depth + oz) * s.in_height + oy) * s.in_width + ox) * out_c;
                const float* f = filter + ((kz * s.filter_height + ky) * s.filter_width + kx) * out_c * in_c;
                for (int64_t o = 0; o < out_c; ++o) {
                  float total = 0.0f;
                  for (int64_t c = 0; c < in_c; ++c) total += in[c] * f[o * in_c + c];
                  out[o] += total;
                }
              }
            }
          }
        }
      }
    }
  }
  for (int64_t i = 0; i < out_count; ++i) {
    output[i] = Activate(s.activation, output[i] + (bias != nullptr ? bias[i % out_c] : 0.0f));
  }
}

}  // namespace kiln::ops::reference
