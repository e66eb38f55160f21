// complex64 ops: REAL, IMAG and COMPLEX_ABS per element, and RFFT2D (the 2-D discrete Fourier transform of real
// input, computed by radix-2 FFTs in double).
#ifndef KILN_OPS_REFERENCE_COMPLEX_H_
#define KILN_OPS_REFERENCE_COMPLEX_H_

#include <cstdint>

namespace kiln::ops::reference {

// RFFT2D of `batches` real rows x cols matrices into fft_rows x (fft_cols / 2 + 1) complex matrices (interleaved
// re, im floats): each input cropped or zero-padded to fft_rows x fft_cols, then
// out[u][v] = sum_{y, x} in[y][x] * exp(-2 pi i (u y / fft_rows + v x / fft_cols)), computed in double by an
// iterative radix-2 FFT along each row, then along each column of the kept half (fft_rows and fft_cols powers of
// two; the cost is O(fft_rows * fft_cols * log(fft_rows * fft_cols)) per matrix).
void Rfft2d(const float* input, int64_t batches, int64_t rows, int64_t cols, int64_t fft_rows, int64_t fft_cols,
            float* output);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_COMPLEX_H_
