// Pooling, including clipped windows at the edges (ops/reference/pooling.h).

#include "ops/reference/pooling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ops/reference/conv.h"
#include "ops/reference/quantized_kernels.h"
#include "tests/ops/test_helpers.h"

namespace kiln::ops::reference {
namespace {

using testing::ExpectAllNear;
using testing::RandomFloats;

PoolParams Params3x3Same2x2() {
  PoolParams p;
  p.batch = 1;
  p.input_height = p.input_width = 3;
  p.channels = 1;
  p.filter_height = p.filter_width = 2;
  p.output_height = p.output_width = 3;  // SAME, stride 1: padding (0, 1)
  return p;
}

TEST(PoolingTest, AverageExcludesPaddingCells) {
  const std::vector<float> input = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<float> out(9);
  AveragePoolFloat(Params3x3Same2x2(), input.data(), out.data());
  // Interior windows average 4 cells; the right column 2, the bottom row 2, the corner 1.
  EXPECT_EQ(out, (std::vector<float>{3, 4, 4.5f, 6, 7, 7.5f, 7.5f, 8.5f, 9}));
}

TEST(PoolingTest, MaxHandComputed) {
  const std::vector<float> input = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<float> out(9);
  MaxPoolFloat(Params3x3Same2x2(), input.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{5, 6, 6, 8, 9, 9, 8, 9, 9}));
  // All-negative input: padding must not contribute a 0.
  const std::vector<float> negative = {-1, -2, -3, -4, -5, -6, -7, -8, -9};
  MaxPoolFloat(Params3x3Same2x2(), negative.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{-1, -2, -3, -4, -5, -6, -7, -8, -9}));
}

TEST(PoolingTest, ActivationApplies) {
  PoolParams p = Params3x3Same2x2();
  p.activation = Activation::kRelu6;
  const std::vector<float> input = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<float> out(9);
  MaxPoolFloat(p, input.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{5, 6, 6, 6, 6, 6, 6, 6, 6}));
}

// Brute force: for each output cell scan the whole input and keep the cells that fall in its window.
void NaivePool(const PoolParams& p, const std::vector<float>& input, std::vector<double>* avg,
               std::vector<double>* max) {
  avg->assign(p.batch * p.output_height * p.output_width * p.channels, 0);
  max->assign(avg->size(), 0);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t oy = 0; oy < p.output_height; ++oy)
      for (int64_t ox = 0; ox < p.output_width; ++ox)
        for (int64_t c = 0; c < p.channels; ++c) {
          double sum = 0, best = -std::numeric_limits<float>::max();
          int count = 0;
          for (int64_t y = 0; y < p.input_height; ++y)
            for (int64_t x = 0; x < p.input_width; ++x) {
              const int64_t dy = y - (oy * p.stride_height - p.pad_top);
              const int64_t dx = x - (ox * p.stride_width - p.pad_left);
              if (dy < 0 || dy >= p.filter_height || dx < 0 || dx >= p.filter_width) continue;
              const double v = input[((b * p.input_height + y) * p.input_width + x) * p.channels + c];
              sum += v;
              best = std::max(best, v);
              ++count;
            }
          const int64_t o = ((b * p.output_height + oy) * p.output_width + ox) * p.channels + c;
          (*avg)[o] = count ? sum / count : 0.0;
          (*max)[o] = best;
        }
}

TEST(PoolingTest, MatchesBruteForceOverManyShapes) {
  uint32_t seed = 3;
  int cases = 0;
  for (int64_t batch : {1, 2})
    for (int64_t h : {1, 2, 3, 5, 8})
      for (int64_t w : {1, 4, 7})
        for (int64_t fh : {1, 2, 3})
          for (int64_t fw : {1, 3})
            for (int64_t stride : {1, 2, 4})
              for (Padding padding : {Padding::kSame, Padding::kValid}) {
                WindowSize rows, cols;
                if (!ComputeWindowSize(padding, h, fh, stride, 1, &rows) ||
                    !ComputeWindowSize(padding, w, fw, stride, 1, &cols)) {
                  continue;
                }
                PoolParams p;
                p.batch = batch;
                p.input_height = h;
                p.input_width = w;
                p.channels = 1 + seed % 3;
                p.output_height = rows.output;
                p.output_width = cols.output;
                p.filter_height = fh;
                p.filter_width = fw;
                p.stride_height = stride;
                p.stride_width = stride;
                p.pad_top = rows.pad_before;
                p.pad_left = cols.pad_before;
                const auto input = RandomFloats(batch * h * w * p.channels, seed++, -3, 3);
                std::vector<double> avg, max;
                NaivePool(p, input, &avg, &max);
                std::vector<float> out(avg.size());
                const std::string what = "pool h" + std::to_string(h) + " w" + std::to_string(w) + " f" +
                                         std::to_string(fh) + "x" + std::to_string(fw) + " s" +
                                         std::to_string(stride);
                AveragePoolFloat(p, input.data(), out.data());
                ExpectAllNear(out, avg, "average " + what);
                MaxPoolFloat(p, input.data(), out.data());
                ExpectAllNear(out, max, "max " + what, 0);
                ++cases;
              }
  EXPECT_GT(cases, 300);
}

// Windows far larger than what the output needs (a hostile model's filter sizes) take the separable path
// (pooling.h, UseSeparablePool): it must give the brute force's values, for float, int8 and uint8, with windows
// partly and wholly outside the input, and finish in linear time for a 2^30 window over a 1000x1000 input.
TEST(PoolingTest, HugeWindowsMatchBruteForce) {
  uint32_t seed = 11;
  int separable = 0;
  for (int64_t h : {17, 30})
    for (int64_t w : {23, 40})
      for (int64_t f : {int64_t{15}, int64_t{29}, int64_t{1000}, int64_t{1} << 30})
        for (int64_t stride : {1, 3})
          for (Padding padding : {Padding::kSame, Padding::kValid}) {
            WindowSize rows, cols;
            if (!ComputeWindowSize(padding, h, f, stride, 1, &rows) ||
                !ComputeWindowSize(padding, w, f, stride, 1, &cols) || rows.output <= 0 || cols.output <= 0) {
              continue;
            }
            PoolParams p;
            p.batch = 2;
            p.input_height = h;
            p.input_width = w;
            p.channels = 2;
            p.output_height = rows.output;
            p.output_width = cols.output;
            p.filter_height = p.filter_width = f;
            p.stride_height = p.stride_width = stride;
            p.pad_top = rows.pad_before;
            p.pad_left = cols.pad_before;
            if (!UseSeparablePool(p)) continue;
            ++separable;
            const std::string what = "h" + std::to_string(h) + " w" + std::to_string(w) + " f" + std::to_string(f) +
                                     " s" + std::to_string(stride);
            const auto input = RandomFloats(2 * h * w * 2, seed++, -3, 3);
            std::vector<double> avg, max;
            NaivePool(p, input, &avg, &max);
            std::vector<float> out(avg.size());
            AveragePoolFloat(p, input.data(), out.data());
            ExpectAllNear(out, avg, "average " + what);
            MaxPoolFloat(p, input.data(), out.data());
            ExpectAllNear(out, max, "max " + what, 0);
            // int8 and uint8: the inputs scaled to integers; the average rounds half away from zero.
            std::vector<int8_t> q8(input.size());
            std::vector<uint8_t> u8(input.size());
            std::vector<float> q8f(input.size()), u8f(input.size());
            for (size_t i = 0; i < input.size(); ++i) {
              q8[i] = static_cast<int8_t>(std::lround(input[i] * 40));
              u8[i] = static_cast<uint8_t>(std::lround(input[i] * 40 + 128));
              q8f[i] = q8[i];
              u8f[i] = u8[i];
            }
            std::vector<double> q8_avg, q8_max, u8_avg, u8_max;
            NaivePool(p, q8f, &q8_avg, &q8_max);
            NaivePool(p, u8f, &u8_avg, &u8_max);
            std::vector<int8_t> q8_out(out.size());
            std::vector<uint8_t> u8_out(out.size());
            MaxPoolQuantized<int8_t>(p, -128, 127, q8.data(), q8_out.data());
            for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(q8_out[i], q8_max[i]) << "int8 max " << what << " " << i;
            AveragePoolQuantized<int8_t>(p, -128, 127, q8.data(), q8_out.data());
            for (size_t i = 0; i < out.size(); ++i) {
              ASSERT_EQ(q8_out[i], std::lround(q8_avg[i])) << "int8 average " << what << " " << i;
            }
            MaxPoolQuantized<uint8_t>(p, 0, 255, u8.data(), u8_out.data());
            for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(u8_out[i], u8_max[i]) << "uint8 max " << what << " " << i;
            AveragePoolQuantized<uint8_t>(p, 0, 255, u8.data(), u8_out.data());
            for (size_t i = 0; i < out.size(); ++i) {
              ASSERT_EQ(u8_out[i], std::lround(u8_avg[i])) << "uint8 average " << what << " " << i;
            }
          }
  EXPECT_GT(separable, 10);

  PoolParams huge;
  huge.batch = 1;
  huge.input_height = huge.input_width = huge.output_height = huge.output_width = 1000;
  huge.channels = 1;
  huge.filter_height = huge.filter_width = int64_t{1} << 30;
  huge.pad_top = huge.pad_left = ((1000 - 1) + (int64_t{1} << 30) - 1000) / 2;  // SAME, stride 1
  ASSERT_TRUE(UseSeparablePool(huge));
  std::vector<float> input(1000 * 1000, 1.0f), out(input.size());
  input[123456] = 5.0f;
  MaxPoolFloat(huge, input.data(), out.data());  // every window covers the whole input
  EXPECT_EQ(out.front(), 5.0f);
  EXPECT_EQ(out.back(), 5.0f);
  L2PoolFloat(huge, input.data(), out.data());
  EXPECT_NEAR(out[500500], std::sqrt((999999.0 + 25.0) / 1e6), 1e-6);
}

}  // namespace
}  // namespace kiln::ops::reference
