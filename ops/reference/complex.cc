#include "ops/reference/complex.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <utility>
#include <vector>

namespace kiln::ops::reference {

namespace {

using Complex = std::complex<double>;

// exp(-2 pi i k / n) for k in [0, n / 2), each from its exact angle (no accumulated rotation); n a power of two.
std::vector<Complex> Twiddles(int64_t n) {
  std::vector<Complex> w(static_cast<size_t>(n / 2));
  const double pi = std::acos(-1.0);
  for (int64_t k = 0; k < n / 2; ++k) {
    const double angle = -2.0 * pi * static_cast<double>(k) / static_cast<double>(n);
    w[static_cast<size_t>(k)] = {std::cos(angle), std::sin(angle)};
  }
  return w;
}

// In place, data[k] becomes sum_j data[j] * exp(-2 pi i j k / n): an iterative radix-2 decimation-in-time FFT of
// n = 2 * w.size() values (n a power of two; n 1 leaves data as it is), with w from Twiddles(n).
void Fft(Complex* data, int64_t n, const std::vector<Complex>& w) {
  // The bit-reversal permutation, then butterflies of spans 2, 4, ..., n.
  for (int64_t i = 1, j = 0; i < n; ++i) {
    int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j |= bit;
    if (i < j) std::swap(data[i], data[j]);
  }
  for (int64_t span = 2; span <= n; span *= 2) {
    const int64_t half = span / 2, step = n / span;
    for (int64_t start = 0; start < n; start += span) {
      for (int64_t k = 0; k < half; ++k) {
        const Complex even = data[start + k];
        const Complex odd = data[start + k + half] * w[static_cast<size_t>(k * step)];
        data[start + k] = even + odd;
        data[start + k + half] = even - odd;
      }
    }
  }
}

}  // namespace

void Rfft2d(const float* input, int64_t batches, int64_t rows, int64_t cols, int64_t fft_rows, int64_t fft_cols,
            float* output) {
  const int64_t out_cols = fft_cols / 2 + 1;
  const int64_t used_rows = std::min(rows, fft_rows), used_cols = std::min(cols, fft_cols);
  const std::vector<Complex> w_cols = Twiddles(fft_cols), w_rows = Twiddles(fft_rows);
  // Along the columns first (each real row, cropped or zero-padded, through a complex FFT, keeping the non-negative
  // half of its spectrum), then along the rows (each column of that half, the padding rows zeros).
  std::vector<Complex> half(static_cast<size_t>(used_rows * out_cols));
  std::vector<Complex> row(static_cast<size_t>(fft_cols)), column(static_cast<size_t>(fft_rows));
  for (int64_t b = 0; b < batches; ++b) {
    const float* in = input + b * rows * cols;
    for (int64_t y = 0; y < used_rows; ++y) {
      for (int64_t x = 0; x < fft_cols; ++x) {
        row[static_cast<size_t>(x)] = x < used_cols ? static_cast<double>(in[y * cols + x]) : 0.0;
      }
      Fft(row.data(), fft_cols, w_cols);
      std::copy_n(row.begin(), out_cols, half.begin() + y * out_cols);
    }
    float* out = output + b * fft_rows * out_cols * 2;
    for (int64_t v = 0; v < out_cols; ++v) {
      for (int64_t y = 0; y < fft_rows; ++y) {
        column[static_cast<size_t>(y)] = y < used_rows ? half[static_cast<size_t>(y * out_cols + v)] : Complex(0);
      }
      Fft(column.data(), fft_rows, w_rows);
      for (int64_t u = 0; u < fft_rows; ++u) {
        out[(u * out_cols + v) * 2] = static_cast<float>(column[static_cast<size_t>(u)].real());
        out[(u * out_cols + v) * 2 + 1] = static_cast<float>(column[static_cast<size_t>(u)].imag());
      }
    }
  }
}

}  // namespace kiln::ops::reference
