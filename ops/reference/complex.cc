#include "ops/reference/complex.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

namespace kiln::ops::reference {

namespace {

// exp(-2 pi i k / n) for k in [0, n), from the exact angle of k mod n.
std::vector<std::complex<double>> Twiddles(int64_t n) {
  std::vector<std::complex<double>> w(static_cast<size_t>(n));
  const double pi = std::acos(-1.0);
  for (int64_t k = 0; k < n; ++k) {
    const double angle = -2.0 * pi * static_cast<double>(k) / static_cast<double>(n);
    w[static_cast<size_t>(k)] = {std::cos(angle), std::sin(angle)};
  }
  return w;
}

}  // namespace

void Rfft2d(const float* input, int64_t batches, int64_t rows, int64_t cols, int64_t fft_rows, int64_t fft_cols,
            float* output) {
  const int64_t out_cols = fft_cols / 2 + 1;
  const int64_t used_rows = std::min(rows, fft_rows), used_cols = std::min(cols, fft_cols);
  const std::vector<std::complex<double>> w_cols = Twiddles(fft_cols), w_rows = Twiddles(fft_rows);
  // Along the columns first (real -> the non-negative half of the spectrum), then along the rows; the padding is
  // zeros, so only the used rows and columns contribute.
  std::vector<std::complex<double>> half(static_cast<size_t>(used_rows * out_cols));
  for (int64_t b = 0; b < batches; ++b) {
    const float* in = input + b * rows * cols;
    for (int64_t y = 0; y < used_rows; ++y) {
      for (int64_t v = 0; v < out_cols; ++v) {
        std::complex<double> sum = 0;
        for (int64_t x = 0; x < used_cols; ++x) {
          sum += static_cast<double>(in[y * cols + x]) * w_cols[static_cast<size_t>((v * x) % fft_cols)];
        }
        half[static_cast<size_t>(y * out_cols + v)] = sum;
      }
    }
    float* out = output + b * fft_rows * out_cols * 2;
    for (int64_t u = 0; u < fft_rows; ++u) {
      for (int64_t v = 0; v < out_cols; ++v) {
        std::complex<double> sum = 0;
        for (int64_t y = 0; y < used_rows; ++y) {
          sum += half[static_cast<size_t>(y * out_cols + v)] * w_rows[static_cast<size_t>((u * y) % fft_rows)];
        }
        out[(u * out_cols + v) * 2] = static_cast<float>(sum.real());
        out[(u * out_cols + v) * 2 + 1] = static_cast<float>(sum.imag());
      }
    }
  }
}

}  // namespace kiln::ops::reference
