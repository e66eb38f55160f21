// RESIZE_BILINEAR's reference kernels against cases worked by hand for each of TFLite's three sampling rules and,
// for the integer kernels and RESIZE_NEAREST_NEIGHBOR, against plain restatements of LiteRT's formulas.
#include "ops/reference/resize.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
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

struct ResizeCase {
  int64_t batch, in_h, in_w, channels, out_h, out_w;
};
const std::vector<ResizeCase> kResizeCases = {{1, 4, 5, 3, 7, 9},  {2, 6, 7, 2, 3, 4},   {1, 1, 3, 2, 5, 1},
                                              {1, 5, 5, 1, 16, 13}, {1, 3, 3, 1, 3, 3}, {1, 7, 2, 2, 1, 1},
                                              {1, 2, 9, 1, 8, 17}};

ResizeBilinearParams MakeResize(const ResizeCase& c, bool align, bool half) {
  ResizeBilinearParams p;
  p.batch = c.batch;
  p.input_height = c.in_h;
  p.input_width = c.in_w;
  p.channels = c.channels;
  p.output_height = c.out_h;
  p.output_width = c.out_w;
  p.align_corners = align;
  p.half_pixel_centers = half;
  return p;
}

// LiteRT's integer bilinear, restated: a source coordinate in 1024ths, the neighbours and weights from it, and
// the weighted sum divided by 2^20 rounding half away from zero.
template <typename T>
std::vector<T> PlainBilinearInteger(const ResizeBilinearParams& p, const std::vector<T>& in) {
  const auto scale = [&](int64_t i, int64_t o) -> int64_t {
    if (p.align_corners && o > 1) return (1024 * (i - 1) + (o - 1) / 2) / (o - 1);
    return (1024 * i + o / 2) / o;
  };
  const int64_t sy = scale(p.input_height, p.output_height), sx = scale(p.input_width, p.output_width);
  std::vector<T> out;
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t y = 0; y < p.output_height; ++y) {
      for (int64_t x = 0; x < p.output_width; ++x) {
        const int64_t py = y * sy + (p.half_pixel_centers ? sy / 2 - 512 : 0);
        const int64_t px = x * sx + (p.half_pixel_centers ? sx / 2 - 512 : 0);
        const int64_t y0 = std::max<int64_t>(py / 1024, 0), y1 = std::min<int64_t>((py + 1023) / 1024, p.input_height - 1);
        const int64_t x0 = std::max<int64_t>(px / 1024, 0), x1 = std::min<int64_t>((px + 1023) / 1024, p.input_width - 1);
        const int64_t fy = py - 1024 * y0, fx = px - 1024 * x0;
        for (int64_t c = 0; c < p.channels; ++c) {
          const auto at = [&](int64_t yy, int64_t xx) -> int64_t {
            return in[static_cast<size_t>(((b * p.input_height + yy) * p.input_width + xx) * p.channels + c)];
          };
          const int64_t v = at(y0, x0) * (1024 - fy) * (1024 - fx) + at(y1, x0) * fy * (1024 - fx) +
                            at(y0, x1) * (1024 - fy) * fx + at(y1, x1) * fy * fx;
          const long double q = static_cast<long double>(v) / (1 << 20);
          out.push_back(static_cast<T>(q >= 0 ? std::floor(q + 0.5L) : -std::floor(-q + 0.5L)));
        }
      }
    }
  }
  return out;
}

template <typename T>
void CheckBilinearInteger() {
  std::mt19937 rng(5);
  for (const ResizeCase& c : kResizeCases) {
    for (auto [align, half] : {std::pair{false, false}, {true, false}, {false, true}}) {
      const ResizeBilinearParams p = MakeResize(c, align, half);
      std::vector<T> in(static_cast<size_t>(c.batch * c.in_h * c.in_w * c.channels));
      std::uniform_int_distribution<int> dist(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
      for (T& v : in) v = static_cast<T>(dist(rng));
      std::vector<T> out(static_cast<size_t>(c.batch * c.out_h * c.out_w * c.channels));
      ResizeBilinearInteger(p, in.data(), out.data());
      ASSERT_EQ(out, PlainBilinearInteger(p, in)) << c.in_h << "x" << c.in_w << " -> " << c.out_h << "x" << c.out_w;
      // Same size without half-pixel centres: the identity.
      if (c.in_h == c.out_h && c.in_w == c.out_w && !half) {
        EXPECT_EQ(out, in);
      }
    }
  }
}

TEST(ResizeBilinearTest, IntegerKernelMatchesPlainFormula) {
  CheckBilinearInteger<int8_t>();
  CheckBilinearInteger<int16_t>();
  CheckBilinearInteger<uint8_t>();
}

// The generic kernel on integers is the float kernel's value plus 0.5, truncated.
TEST(ResizeBilinearTest, GenericUint8IsFloatKernelRounded) {
  std::mt19937 rng(9);
  for (const ResizeCase& c : kResizeCases) {
    for (auto [align, half] : {std::pair{false, false}, {true, false}, {false, true}}) {
      const ResizeBilinearParams p = MakeResize(c, align, half);
      std::vector<uint8_t> in(static_cast<size_t>(c.batch * c.in_h * c.in_w * c.channels));
      for (uint8_t& v : in) v = static_cast<uint8_t>(rng() % 256);
      const std::vector<float> in_f(in.begin(), in.end());
      std::vector<uint8_t> out(static_cast<size_t>(c.batch * c.out_h * c.out_w * c.channels));
      std::vector<float> out_f(out.size());
      ResizeBilinearGeneric(p, in.data(), out.data());
      ResizeBilinearFloat(p, in_f.data(), out_f.data());
      for (size_t i = 0; i < out.size(); ++i) {
        ASSERT_EQ(out[i], static_cast<uint8_t>(std::min(255.0f, out_f[i] + 0.5f))) << i;
      }
    }
  }
}

// RESIZE_NEAREST_NEIGHBOR: every output element is the input element at LiteRT's source indices, computed here
// from the rule (float scale, floor or round, clamps), for bytes of any width.
TEST(ResizeNearestNeighborTest, PicksLiteRtSourcePixels) {
  const auto source = [](int64_t o, int64_t in, int64_t out, bool align, bool half) -> int64_t {
    const float scale = align && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                         : static_cast<float>(in) / static_cast<float>(out);
    const float v = (static_cast<float>(o) + (half ? 0.5f : 0.0f)) * scale;
    int64_t i = static_cast<int64_t>(align ? std::round(v) : std::floor(v));
    i = std::min(i, in - 1);
    return half ? std::max<int64_t>(i, 0) : i;
  };
  for (const ResizeCase& c : kResizeCases) {
    for (auto [align, half] : {std::pair{false, false}, {true, false}, {false, true}, {true, true}}) {
      const ResizeBilinearParams p = MakeResize(c, align, half);
      // int16 elements, each holding its own flat index: the output says which element it took.
      std::vector<int16_t> in(static_cast<size_t>(c.batch * c.in_h * c.in_w * c.channels));
      for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int16_t>(i);
      std::vector<int16_t> out(static_cast<size_t>(c.batch * c.out_h * c.out_w * c.channels), -1);
      ResizeNearestNeighbor(p, sizeof(int16_t), in.data(), out.data());
      size_t k = 0;
      for (int64_t b = 0; b < c.batch; ++b) {
        for (int64_t y = 0; y < c.out_h; ++y) {
          for (int64_t x = 0; x < c.out_w; ++x) {
            const int64_t sy = source(y, c.in_h, c.out_h, align, half), sx = source(x, c.in_w, c.out_w, align, half);
            for (int64_t ch = 0; ch < c.channels; ++ch) {
              ASSERT_EQ(out[k++], ((b * c.in_h + sy) * c.in_w + sx) * c.channels + ch)
                  << c.in_h << "x" << c.in_w << " -> " << c.out_h << "x" << c.out_w << " at " << y << "," << x;
            }
          }
        }
      }
    }
  }
  // Worked by hand: 2 -> 4 pixels legacy takes 0, 0, 1, 1; 3 -> 2 with align_corners takes 0, 2.
  EXPECT_EQ(NearestNeighborIndex(1, 2, 4, false, false), 0);
  EXPECT_EQ(NearestNeighborIndex(2, 2, 4, false, false), 1);
  EXPECT_EQ(NearestNeighborIndex(1, 3, 2, true, false), 2);
  EXPECT_EQ(NearestNeighborIndex(0, 3, 5, false, true), 0);
}

}  // namespace
}  // namespace kiln::ops::reference
