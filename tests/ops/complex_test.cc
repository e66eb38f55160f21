// The RFFT2D reference kernel (radix-2 FFTs) against the 2-D DFT written out here as one double sum per output (no
// separation into rows and columns, no FFT): square, cropped, zero-padded and batched inputs, lengths 1 to 128 (one
// row, one column, 1 x 1), and a lone impulse.
#include "ops/reference/complex.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace kiln::ops::reference {
namespace {

TEST(Rfft2dTest, MatchesDirectTwoDimensionalDft) {
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> uniform(-1, 1);
  const double pi = std::acos(-1.0);
  const struct {
    int64_t batches, rows, cols, fft_rows, fft_cols;
  } cases[] = {{1, 4, 4, 4, 4},
               {2, 3, 5, 4, 8},
               {3, 6, 9, 4, 4},
               {1, 2, 16, 2, 16},
               {1, 1, 1, 1, 2},
               {2, 0, 3, 2, 2},
               {1, 5, 3, 8, 2},
               // Larger powers of two: every butterfly stage of the row and column FFTs.
               {1, 64, 128, 64, 128},
               {3, 16, 32, 16, 32},
               {2, 40, 100, 64, 128},
               {2, 100, 200, 32, 64},
               // 1 x 1, one row, one column (the kernel takes width 1; the op refuses it, as LiteRT gets it wrong).
               {1, 1, 1, 1, 1},
               {2, 1, 256, 1, 256},
               {1, 1, 100, 1, 128},
               {2, 256, 1, 256, 2},
               {1, 128, 1, 128, 1},
               {1, 3, 5, 1, 1}};
  for (const auto& c : cases) {
    std::vector<float> in(c.batches * c.rows * c.cols);
    for (float& v : in) v = uniform(rng);
    const int64_t out_cols = c.fft_cols / 2 + 1;
    std::vector<float> got(c.batches * c.fft_rows * out_cols * 2, 99);
    Rfft2d(in.data(), c.batches, c.rows, c.cols, c.fft_rows, c.fft_cols, got.data());
    for (int64_t b = 0; b < c.batches; ++b) {
      for (int64_t u = 0; u < c.fft_rows; ++u) {
        for (int64_t v = 0; v < out_cols; ++v) {
          double re = 0, im = 0;
          for (int64_t y = 0; y < std::min(c.rows, c.fft_rows); ++y) {
            for (int64_t x = 0; x < std::min(c.cols, c.fft_cols); ++x) {
              const double angle =
                  -2 * pi * (static_cast<double>(u * y) / c.fft_rows + static_cast<double>(v * x) / c.fft_cols);
              const double value = in[(b * c.rows + y) * c.cols + x];
              re += value * std::cos(angle);
              im += value * std::sin(angle);
            }
          }
          const int64_t at = ((b * c.fft_rows + u) * out_cols + v) * 2;
          // The float output's rounding grows with the value (sums of up to 8192 terms here).
          const double tolerance = 1e-5 + 1e-6 * std::hypot(re, im);
          EXPECT_NEAR(got[at], re, tolerance) << c.fft_rows << "x" << c.fft_cols << ": " << b << " " << u << " " << v;
          EXPECT_NEAR(got[at + 1], im, tolerance)
              << c.fft_rows << "x" << c.fft_cols << ": " << b << " " << u << " " << v;
        }
      }
    }
  }
  // An impulse at (1, 2) of a 4 x 4 transform: exp(-2 pi i (u / 4 + 2 v / 4)).
  std::vector<float> impulse(16, 0), out(4 * 3 * 2);
  impulse[1 * 4 + 2] = 1;
  Rfft2d(impulse.data(), 1, 4, 4, 4, 4, out.data());
  EXPECT_NEAR(out[(0 * 3 + 1) * 2], -1, 1e-6);      // u 0, v 1: exp(-i pi) = -1
  EXPECT_NEAR(out[(1 * 3 + 0) * 2 + 1], -1, 1e-6);  // u 1, v 0: exp(-i pi / 2) = -i
}

}  // namespace
}  // namespace kiln::ops::reference
