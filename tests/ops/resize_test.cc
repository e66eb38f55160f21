// RESIZE_BILINEAR's reference kernel against cases worked by hand for each of TFLite's three sampling rules.
#include "ops/reference/resize.h"

#include <gtest/gtest.h>

#include <vector>

namespace kiln::ops::reference {
namespace {

std::vector<float> Resize(int64_t out_h, int64_t out_w, bool align_corners, bool half_pixel_centers) {
  const std::vector<float> in = {1, 2, 3, 4};  // [[1, 2], [3, 4]], one channel
  ResizeBilinearParams p;
  p.batch = 1;
  p.input_height = 2;
  p.input_width = 2;
  p.channels = 1;
  p.output_height = out_h;
  p.output_width = out_w;
  p.align_corners = align_corners;
  p.half_pixel_centers = half_pixel_centers;
  std::vector<float> out(static_cast<size_t>(out_h * out_w));
  ResizeBilinearFloat(p, in.data(), out.data());
  return out;
}

TEST(ResizeBilinearTest, AlignCorners) {
  // scale (2 - 1) / (3 - 1) = 0.5: samples at 0, 0.5, 1 in both directions.
  EXPECT_EQ(Resize(3, 3, true, false), (std::vector<float>{1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4}));
}

TEST(ResizeBilinearTest, LegacyMapping) {
  // scale 2 / 4 = 0.5: samples at 0, 0.5, 1, 1.5; the last clamps to the edge pixel.
  EXPECT_EQ(Resize(4, 4, false, false), (std::vector<float>{1, 1.5f, 2, 2,  //
                                                            2, 2.5f, 3, 3,  //
                                                            3, 3.5f, 4, 4,  //
                                                            3, 3.5f, 4, 4}));
}

TEST(ResizeBilinearTest, HalfPixelCenters) {
  // samples at (i + 0.5) * 0.5 - 0.5 = -0.25, 0.25, 0.75, 1.25: clamped at both edges.
  EXPECT_EQ(Resize(4, 4, false, true), (std::vector<float>{1, 1.25f, 1.75f, 2,        //
                                                           1.5f, 1.75f, 2.25f, 2.5f,  //
                                                           2.5f, 2.75f, 3.25f, 3.5f,  //
                                                           3, 3.25f, 3.75f, 4}));
}

TEST(ResizeBilinearTest, SameSizeIsACopyAndChannelsStayApart) {
  ResizeBilinearParams p;
  p.batch = 2;
  p.input_height = p.output_height = 2;
  p.input_width = p.output_width = 3;
  p.channels = 2;
  std::vector<float> in(24);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i) * 0.5f - 3;
  std::vector<float> out(24);
  for (bool half : {false, true}) {
    p.half_pixel_centers = half;
    ResizeBilinearFloat(p, in.data(), out.data());
    EXPECT_EQ(out, in) << "half_pixel_centers " << half;
  }
}

}  // namespace
}  // namespace kiln::ops::reference
