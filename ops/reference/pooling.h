// AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D over NHWC tensors. Windows are clipped to the input: padding cells are
// neither averaged (the divisor counts only cells inside the input, as TFLite does) nor maxed.
#ifndef KILN_OPS_REFERENCE_POOLING_H_
#define KILN_OPS_REFERENCE_POOLING_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "ops/reference/common.h"

namespace kiln::ops::reference {

struct PoolParams {
  int64_t batch = 0;
  int64_t input_height = 0, input_width = 0, channels = 0;
  int64_t output_height = 0, output_width = 0;
  int64_t filter_height = 0, filter_width = 0;
  int64_t stride_height = 1, stride_width = 1;
  int64_t pad_top = 0, pad_left = 0;
  Activation activation = Activation::kNone;
};

// A window with no cell inside the input (only possible with unusual padding) averages to 0.
void AveragePoolFloat(const PoolParams& params, const float* input, float* output);
// A window with no cell inside the input yields the lowest float, as TFLite's reference does.
void MaxPoolFloat(const PoolParams& params, const float* input, float* output);
// sqrt(mean of x^2) over the window's cells inside the input, as TFLite's reference L2Pool (0 for a window
// with none, where TFLite would divide by zero).
void L2PoolFloat(const PoolParams& params, const float* input, float* output);

// Huge windows (a hostile model's filter of millions over a large input): a direct pass visits every output's
// window clipped to the input, batch x channels x (rows summed over output rows) x (columns summed over output
// columns) cells, which can be 10^12 for a 1000x1000 input. When that is more than kSeparableFactor times the
// cells of the input and output, the kernels reduce along rows, then along columns, in time linear in the input
// and output: each clipped window is a rectangle whose row and column ranges start and end move forward with the
// output index, so running sums (average, L2) and a monotonic queue (max) give every window's value. Max is
// exact either way; sums are taken in a wider type (double, int64), so a huge average may differ from the
// direct pass's float sum in the last bits. Real models' windows (3x3, a global 7x7) stay on the direct pass.
constexpr double kSeparableFactor = 64;

struct PoolRange {
  int64_t begin, end;  // half-open, inside [0, size]
};

inline PoolRange ClippedPoolRange(int64_t o, int64_t stride, int64_t pad, int64_t filter, int64_t size) {
  const int64_t start = o * stride - pad;
  return {std::clamp<int64_t>(start, 0, size), std::clamp<int64_t>(start + filter, 0, size)};
}

inline bool UseSeparablePool(const PoolParams& p) {
  double rows = 0, cols = 0;
  for (int64_t o = 0; o < p.output_height; ++o) {
    const PoolRange r = ClippedPoolRange(o, p.stride_height, p.pad_top, p.filter_height, p.input_height);
    rows += static_cast<double>(r.end - r.begin);
  }
  for (int64_t o = 0; o < p.output_width; ++o) {
    const PoolRange r = ClippedPoolRange(o, p.stride_width, p.pad_left, p.filter_width, p.input_width);
    cols += static_cast<double>(r.end - r.begin);
  }
  const double direct = rows * cols;
  const double linear = static_cast<double>(p.input_height) * static_cast<double>(p.input_width) +
                        static_cast<double>(p.input_height) * static_cast<double>(p.output_width) +
                        static_cast<double>(p.output_height) * static_cast<double>(p.output_width);
  return direct > kSeparableFactor * linear;
}

// Reduces along columns for every (batch, input row, output column, channel), then along rows for every output.
// `reduce(values, n, ranges, out)` writes, for each range k, the reduction of values[i] over i in ranges[k] to
// out[k]. `finish(acc, cells, output index)` writes one output from the window's reduction and its cell count.
template <typename Acc, typename Load, typename Reduce1d, typename Finish>
void SeparablePool(const PoolParams& p, Load load, Reduce1d reduce, Finish finish) {
  std::vector<PoolRange> row_ranges(static_cast<size_t>(p.output_height)),
      col_ranges(static_cast<size_t>(p.output_width));
  for (int64_t o = 0; o < p.output_height; ++o) {
    row_ranges[static_cast<size_t>(o)] =
        ClippedPoolRange(o, p.stride_height, p.pad_top, p.filter_height, p.input_height);
  }
  for (int64_t o = 0; o < p.output_width; ++o) {
    col_ranges[static_cast<size_t>(o)] = ClippedPoolRange(o, p.stride_width, p.pad_left, p.filter_width, p.input_width);
  }
  const int64_t h = p.input_height, w = p.input_width, c = p.channels, ow = p.output_width;
  std::vector<Acc> row(static_cast<size_t>(w)), by_cols(static_cast<size_t>(h * ow)), column(static_cast<size_t>(h));
  std::vector<Acc> out_column(static_cast<size_t>(p.output_height));
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t y = 0; y < h; ++y) {
        for (int64_t x = 0; x < w; ++x) row[static_cast<size_t>(x)] = load(((b * h + y) * w + x) * c + ch);
        reduce(row.data(), w, col_ranges, by_cols.data() + y * ow);
      }
      for (int64_t ox = 0; ox < ow; ++ox) {
        for (int64_t y = 0; y < h; ++y) column[static_cast<size_t>(y)] = by_cols[static_cast<size_t>(y * ow + ox)];
        reduce(column.data(), h, row_ranges, out_column.data());
        const int64_t cols = col_ranges[static_cast<size_t>(ox)].end - col_ranges[static_cast<size_t>(ox)].begin;
        for (int64_t oy = 0; oy < p.output_height; ++oy) {
          const PoolRange& r = row_ranges[static_cast<size_t>(oy)];
          finish(out_column[static_cast<size_t>(oy)], (r.end - r.begin) * cols,
                 ((b * p.output_height + oy) * ow + ox) * c + ch);
        }
      }
    }
  }
}

// Reduce1d for sums: prefix sums, each range a difference.
template <typename Acc>
void SumRanges(const Acc* values, int64_t n, const std::vector<PoolRange>& ranges, Acc* out) {
  std::vector<Acc> prefix(static_cast<size_t>(n) + 1, Acc{0});
  for (int64_t i = 0; i < n; ++i) prefix[static_cast<size_t>(i) + 1] = prefix[static_cast<size_t>(i)] + values[i];
  for (size_t k = 0; k < ranges.size(); ++k) out[k] = prefix[ranges[k].end] - prefix[ranges[k].begin];
}

// Reduce1d for max: a monotonic queue over ranges whose ends never move back; `lowest` for an empty range.
template <typename Acc>
void MaxRanges(const Acc* values, int64_t n, const std::vector<PoolRange>& ranges, Acc* out, Acc lowest) {
  std::deque<int64_t> queue;
  int64_t next = 0;
  for (size_t k = 0; k < ranges.size(); ++k) {
    for (; next < ranges[k].end && next < n; ++next) {
      while (!queue.empty() && values[queue.back()] <= values[next]) queue.pop_back();
      queue.push_back(next);
    }
    while (!queue.empty() && queue.front() < ranges[k].begin) queue.pop_front();
    out[k] = queue.empty() ? lowest : values[queue.front()];
  }
}

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_POOLING_H_
