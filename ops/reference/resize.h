// RESIZE_BILINEAR over NHWC tensors, with TFLite's sampling rules: align_corners (the corner pixels
// coincide), half_pixel_centers (TF2: pixels sampled at their centres) or neither (TF1's legacy mapping).
#ifndef KILN_OPS_REFERENCE_RESIZE_H_
#define KILN_OPS_REFERENCE_RESIZE_H_

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

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_RESIZE_H_
