// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR over NHWC tensors, with TFLite's sampling rules: align_corners (the corner pixels
// coincide), half_pixel_centers (TF2: pixels sampled at their centres) or neither (TF1's legacy mapping).
#ifndef KILN_OPS_REFERENCE_RESIZE_H_
#define KILN_OPS_REFERENCE_RESIZE_H_

#include <cstddef>
#include <cstdint>

namespace kiln::ops::reference {

struct ResizeBilinearParams {
  int64_t batch = 0;
  int64_t input_height = 0;
  int64_t input_width = 0;
  int64_t channels = 0;
  int64_t output_height = 0;
  int64_t output_width = 0;
  bool align_corners = false;
  bool half_pixel_centers = false;
};

void ResizeBilinearFloat(const ResizeBilinearParams& params, const float* input, float* output);

// RESIZE_BILINEAR on stored integer values (input and output quantized alike), LiteRT's two kernels:
//  - ResizeBilinearGeneric (its reference uint8 kernel): the float kernel's arithmetic on the stored values, plus
//    0.5, truncated to the type;
//  - ResizeBilinearInteger (its reference int8 and int16 kernel): no float. Scales in 1/1024ths, rounded:
//    s = (1024 * in + out / 2) / out (align_corners: (1024 * (in - 1) + (out - 1) / 2) / (out - 1)); the source
//    coordinate p = o * s (half-pixel centres: o * s + s / 2 - 512), neighbours max(p / 1024, 0) and
//    min((p + 1023) / 1024, in - 1) (C++ division, truncating); the four products of value and weights
//    (1024ths) summed in int64 and divided by 2^20, rounded half away from zero.
template <typename T>
void ResizeBilinearGeneric(const ResizeBilinearParams& params, const T* input, T* output);
template <typename T>
void ResizeBilinearInteger(const ResizeBilinearParams& params, const T* input, T* output);

// RESIZE_NEAREST_NEIGHBOR, LiteRT's kernel for every type (elements moved, `element_size` bytes each): the
// source index of output o is, in float, floor((o + offset) * scale) (align_corners: round half away from
// zero), at most in - 1 and, with half-pixel centres, at least 0; scale = in / out ((in - 1) / (out - 1) with
// align_corners and out > 1), offset 0.5 with half-pixel centres, else 0.
int64_t NearestNeighborIndex(int64_t out, int64_t in_size, int64_t out_size, bool align_corners,
                             bool half_pixel_centers);
void ResizeNearestNeighbor(const ResizeBilinearParams& params, size_t element_size, const void* input,
                           void* output);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_RESIZE_H_
