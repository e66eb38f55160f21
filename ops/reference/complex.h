// complex64 ops: REAL, IMAG and COMPLEX_ABS per element, and RFFT2D (the 2-D discrete Fourier transform of real
// input, computed directly in double).
#ifndef KILN_OPS_REFERENCE_COMPLEX_H_
#define KILN_OPS_REFERENCE_COMPLEX_H_

#include <cstdint>

namespace kiln::ops::reference {

// RFFT2D of `batches` real rows x cols matrices into fft_rows x (fft_cols / 2 + 1) complex matrices (interleaved
// re, im floats): each input cropped or zero-padded to fft_rows x fft_cols, then
// out[u][v] = sum_{y, x} in[y][x] * exp(-2 pi i (u y / fft_rows + v x / fft_cols)), accumulated in double.
void Rfft2d(const float* input, int64_t batches, int64_t rows, int64_t cols, int64_t fft_rows, int64_t fft_cols,
            float* output);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_COMPLEX_H_
