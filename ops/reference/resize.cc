// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR (resize.h). The float arithmetic is TFLite's, in float as it
// computes it: the scale in / out (or (in - 1) / (out - 1) with align_corners), the source coordinate out * scale (or
// (out + 0.5) * scale - 0.5 with half-pixel centres), its lower neighbour floor(.) clamped at 0, its upper
// neighbour ceil(.) clamped at the last pixel, and weights from the coordinate's distance to the lower one.
#include "ops/reference/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

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

template <typename T>
void ResizeBilinearGeneric(const ResizeBilinearParams& p, const T* input, T* output) {
  // The float kernel's expression on the stored values; integers get 0.5 added before the truncation.
  constexpr bool kInteger = std::numeric_limits<T>::is_integer;
  const float rounding = kInteger ? 0.5f : 0.0f;
  const float height_scale = Scale(p.input_height, p.output_height, p.align_corners);
  const float width_scale = Scale(p.input_width, p.output_width, p.align_corners);
  const int64_t c = p.channels;
  for (int64_t b = 0; b < p.batch; ++b) {
    const T* image = input + b * p.input_height * p.input_width * c;
    for (int64_t y = 0; y < p.output_height; ++y) {
      const Sample sy = SampleAt(y, height_scale, p.half_pixel_centers, p.input_height);
      const float dy = sy.at - static_cast<float>(sy.lower);
      for (int64_t x = 0; x < p.output_width; ++x) {
        const Sample sx = SampleAt(x, width_scale, p.half_pixel_centers, p.input_width);
        const float dx = sx.at - static_cast<float>(sx.lower);
        const T* top_left = image + (sy.lower * p.input_width + sx.lower) * c;
        const T* top_right = image + (sy.lower * p.input_width + sx.upper) * c;
        const T* bottom_left = image + (sy.upper * p.input_width + sx.lower) * c;
        const T* bottom_right = image + (sy.upper * p.input_width + sx.upper) * c;
        for (int64_t ch = 0; ch < c; ++ch) {
          const float value = static_cast<float>(top_left[ch]) * (1 - dy) * (1 - dx) +
                              static_cast<float>(bottom_left[ch]) * dy * (1 - dx) +
                              static_cast<float>(top_right[ch]) * (1 - dy) * dx +
                              static_cast<float>(bottom_right[ch]) * dy * dx + rounding;
          if constexpr (kInteger) {
            // The weights sum to 1, so the value is in range; clamped all the same, so the conversion is defined.
            const float lo = static_cast<float>(std::numeric_limits<T>::min());
            const float hi = static_cast<float>(std::numeric_limits<T>::max());
            *output++ = static_cast<T>(std::min(std::max(value, lo), hi));
          } else {
            *output++ = value;
          }
        }
      }
    }
  }
}

void ResizeBilinearFloat(const ResizeBilinearParams& p, const float* input, float* output) {
  ResizeBilinearGeneric<float>(p, input, output);
}

namespace {

// The integer kernel's scale in 1/1024ths, rounded to nearest.
int64_t Scale10(int64_t in, int64_t out, bool align_corners) {
  if (align_corners && out > 1) return (1024 * (in - 1) + (out - 1) / 2) / (out - 1);
  return (1024 * in + out / 2) / out;
}

struct Sample10 {
  int64_t at;  // the source coordinate in 1/1024ths
  int64_t lower, upper;
};

Sample10 SampleAt10(int64_t out, int64_t scale_10, bool half_pixel_centers, int64_t in_size) {
  Sample10 s;
  s.at = half_pixel_centers ? out * scale_10 + scale_10 / 2 - 512 : out * scale_10;
  // C++ division truncates toward zero, as LiteRT's.
  s.lower = std::max<int64_t>(s.at / 1024, 0);
  s.upper = std::min<int64_t>((s.at + 1023) / 1024, in_size - 1);
  return s;
}

}  // namespace

template <typename T>
void ResizeBilinearInteger(const ResizeBilinearParams& p, const T* input, T* output) {
  const int64_t height_scale = Scale10(p.input_height, p.output_height, p.align_corners);
  const int64_t width_scale = Scale10(p.input_width, p.output_width, p.align_corners);
  const int64_t c = p.channels;
  for (int64_t b = 0; b < p.batch; ++b) {
    const T* image = input + b * p.input_height * p.input_width * c;
    for (int64_t y = 0; y < p.output_height; ++y) {
      const Sample10 sy = SampleAt10(y, height_scale, p.half_pixel_centers, p.input_height);
      const int64_t wy1 = sy.at - 1024 * sy.lower, wy0 = 1024 - wy1;
      for (int64_t x = 0; x < p.output_width; ++x) {
        const Sample10 sx = SampleAt10(x, width_scale, p.half_pixel_centers, p.input_width);
        const int64_t wx1 = sx.at - 1024 * sx.lower, wx0 = 1024 - wx1;
        const T* top_left = image + (sy.lower * p.input_width + sx.lower) * c;
        const T* top_right = image + (sy.lower * p.input_width + sx.upper) * c;
        const T* bottom_left = image + (sy.upper * p.input_width + sx.lower) * c;
        const T* bottom_right = image + (sy.upper * p.input_width + sx.upper) * c;
        for (int64_t ch = 0; ch < c; ++ch) {
          const int64_t sum = static_cast<int64_t>(top_left[ch]) * wy0 * wx0 +
                              static_cast<int64_t>(bottom_left[ch]) * wy1 * wx0 +
                              static_cast<int64_t>(top_right[ch]) * wy0 * wx1 +
                              static_cast<int64_t>(bottom_right[ch]) * wy1 * wx1;
          const int64_t rounded = (sum + (sum > 0 ? (1 << 19) : -(1 << 19))) / (1 << 20);
          const int64_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
          *output++ = static_cast<T>(std::min(std::max(rounded, lo), hi));
        }
      }
    }
  }
}

template void ResizeBilinearGeneric<int8_t>(const ResizeBilinearParams&, const int8_t*, int8_t*);
template void ResizeBilinearGeneric<uint8_t>(const ResizeBilinearParams&, const uint8_t*, uint8_t*);
template void ResizeBilinearGeneric<int16_t>(const ResizeBilinearParams&, const int16_t*, int16_t*);
template void ResizeBilinearInteger<int8_t>(const ResizeBilinearParams&, const int8_t*, int8_t*);
template void ResizeBilinearInteger<uint8_t>(const ResizeBilinearParams&, const uint8_t*, uint8_t*);
template void ResizeBilinearInteger<int16_t>(const ResizeBilinearParams&, const int16_t*, int16_t*);

int64_t NearestNeighborIndex(int64_t out, int64_t in_size, int64_t out_size, bool align_corners,
                             bool half_pixel_centers) {
  const float scale = align_corners && out_size > 1
                          ? static_cast<float>(in_size - 1) / static_cast<float>(out_size - 1)
                          : static_cast<float>(in_size) / static_cast<float>(out_size);
  const float offset = half_pixel_centers ? 0.5f : 0.0f;
  const float at = (static_cast<float>(out) + offset) * scale;
  int64_t index = static_cast<int64_t>(align_corners ? std::round(at) : std::floor(at));
  index = std::min(index, in_size - 1);
  if (half_pixel_centers) index = std::max<int64_t>(index, 0);
  return index;
}

void ResizeNearestNeighbor(const ResizeBilinearParams& p, size_t element_size, const void* input, void* output) {
  const auto* in = static_cast<const unsigned char*>(input);
  auto* out = static_cast<unsigned char*>(output);
  const size_t pixel = static_cast<size_t>(p.channels) * element_size;
  std::vector<int64_t> columns(static_cast<size_t>(p.output_width));
  for (int64_t x = 0; x < p.output_width; ++x) {
    columns[static_cast<size_t>(x)] =
        NearestNeighborIndex(x, p.input_width, p.output_width, p.align_corners, p.half_pixel_centers);
  }
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t y = 0; y < p.output_height; ++y) {
      const int64_t row =
          NearestNeighborIndex(y, p.input_height, p.output_height, p.align_corners, p.half_pixel_centers);
      for (int64_t x = 0; x < p.output_width; ++x) {
        const int64_t source = (b * p.input_height + row) * p.input_width + columns[static_cast<size_t>(x)];
        std::memcpy(out, in + static_cast<size_t>(source) * pixel, pixel);
        out += pixel;
      }
    }
  }
}

}  // namespace kiln::ops::reference
