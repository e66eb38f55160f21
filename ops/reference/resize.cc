// RESIZE_BILINEAR (resize.h). The arithmetic is TFLite's, in float as it computes it: the scale
// in / out (or (in - 1) / (out - 1) with align_corners), the source coordinate out * scale (or
// (out + 0.5) * scale - 0.5 with half-pixel centres), its lower neighbour floor(.) clamped at 0, its upper
// neighbour ceil(.) clamped at the last pixel, and weights from the coordinate's distance to the lower one.
#include "ops/reference/resize.h"

#include <algorithm>
#include <cmath>

namespace kiln::ops::reference {
namespace {

float Scale(int64_t in, int64_t out, bool align_corners) {
  if (align_corners && out > 1) return static_cast<float>(in - 1) / static_cast<float>(out - 1);
  return static_cast<float>(in) / static_cast<float>(out);
}

struct Sample {
  float at;       // the source coordinate
  int64_t lower;  // the neighbours it lies between
  int64_t upper;
};

Sample SampleAt(int64_t out, float scale, bool half_pixel_centers, int64_t in_size) {
  Sample s;
  s.at =
      half_pixel_centers ? (static_cast<float>(out) + 0.5f) * scale - 0.5f : static_cast<float>(out) * scale;
  s.lower = std::max<int64_t>(static_cast<int64_t>(std::floor(s.at)), 0);
  s.upper = std::min<int64_t>(static_cast<int64_t>(std::ceil(s.at)), in_size - 1);
  return s;
}

}  // namespace

void ResizeBilinearFloat(const ResizeBilinearParams& p, const float* input, float* output) {
  const float height_scale = Scale(p.input_height, p.output_height, p.align_corners);
  const float width_scale = Scale(p.input_width, p.output_width, p.align_corners);
  const int64_t c = p.channels;
  for (int64_t b = 0; b < p.batch; ++b) {
    const float* image = input + b * p.input_height * p.input_width * c;
    for (int64_t y = 0; y < p.output_height; ++y) {
      const Sample sy = SampleAt(y, height_scale, p.half_pixel_centers, p.input_height);
      const float dy = sy.at - static_cast<float>(sy.lower);
      for (int64_t x = 0; x < p.output_width; ++x) {
        const Sample sx = SampleAt(x, width_scale, p.half_pixel_centers, p.input_width);
        const float dx = sx.at - static_cast<float>(sx.lower);
        const float* top_left = image + (sy.lower * p.input_width + sx.lower) * c;
        const float* top_right = image + (sy.lower * p.input_width + sx.upper) * c;
        const float* bottom_left = image + (sy.upper * p.input_width + sx.lower) * c;
        const float* bottom_right = image + (sy.upper * p.input_width + sx.upper) * c;
        for (int64_t ch = 0; ch < c; ++ch) {
          *output++ = top_left[ch] * (1 - dy) * (1 - dx) + bottom_left[ch] * dy * (1 - dx) +
                      top_right[ch] * (1 - dy) * dx + bottom_right[ch] * dy * dx;
        }
      }
    }
  }
}

}  // namespace kiln::ops::reference
