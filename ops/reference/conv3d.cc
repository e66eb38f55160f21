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

}  // namespace kiln::ops::reference
