// AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D over NHWC tensors (pooling.h).

#include "ops/reference/pooling.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::ops::reference {

namespace {

// The part of the window at output (oy, ox) that lies inside the input, as half-open input ranges.
struct Window {
  int64_t y_begin, y_end, x_begin, x_end;
};

Window ClippedWindow(const PoolParams& p, int64_t oy, int64_t ox) {
  const int64_t y0 = oy * p.stride_height - p.pad_top;
  const int64_t x0 = ox * p.stride_width - p.pad_left;
  Window w;
  w.y_begin = std::max<int64_t>(y0, 0);
  w.y_end = std::min(y0 + p.filter_height, p.input_height);
  w.x_begin = std::max<int64_t>(x0, 0);
  w.x_end = std::min(x0 + p.filter_width, p.input_width);
  return w;
}

template <typename Reduce>
void Pool(const PoolParams& p, const float* input, float* output, Reduce reduce) {
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t oy = 0; oy < p.output_height; ++oy) {
      for (int64_t ox = 0; ox < p.output_width; ++ox) {
        const Window w = ClippedWindow(p, oy, ox);
        for (int64_t c = 0; c < p.channels; ++c) {
          const float value = reduce(w, [&](int64_t y, int64_t x) {
            return input[((b * p.input_height + y) * p.input_width + x) * p.channels + c];
          });
          output[((b * p.output_height + oy) * p.output_width + ox) * p.channels + c] =
              Activate(p.activation, value);
        }
      }
    }
  }
}

}  // namespace

void AveragePoolFloat(const PoolParams& params, const float* input, float* output) {
  if (UseSeparablePool(params)) {
    SeparablePool<double>(
        params, [&](int64_t i) { return static_cast<double>(input[i]); }, &SumRanges<double>,
        [&](double sum, int64_t cells, int64_t o) {
          output[o] = Activate(params.activation, cells == 0 ? 0.0f : static_cast<float>(sum / cells));
        });
    return;
  }
  Pool(params, input, output, [](const Window& w, auto at) {
    float sum = 0.0f;
    int64_t count = 0;
    for (int64_t y = w.y_begin; y < w.y_end; ++y) {
      for (int64_t x = w.x_begin; x < w.x_end; ++x) {
        sum += at(y, x);
        ++count;
      }
    }
    return count == 0 ? 0.0f : sum / static_cast<float>(count);
  });
}

void MaxPoolFloat(const PoolParams& params, const float* input, float* output) {
  if (UseSeparablePool(params)) {
    constexpr float kLowest = std::numeric_limits<float>::lowest();
    SeparablePool<float>(
        params, [&](int64_t i) { return input[i]; },
        [](const float* v, int64_t n, const std::vector<PoolRange>& r, float* out) {
          MaxRanges(v, n, r, out, kLowest);
        },
        [&](float max, int64_t, int64_t o) { output[o] = Activate(params.activation, max); });
    return;
  }
  Pool(params, input, output, [](const Window& w, auto at) {
    float max = std::numeric_limits<float>::lowest();
    for (int64_t y = w.y_begin; y < w.y_end; ++y) {
      for (int64_t x = w.x_begin; x < w.x_end; ++x) max = std::max(max, at(y, x));
    }
    return max;
  });
}

void L2PoolFloat(const PoolParams& params, const float* input, float* output) {
  if (UseSeparablePool(params)) {
    SeparablePool<double>(
        params, [&](int64_t i) { return static_cast<double>(input[i]) * input[i]; }, &SumRanges<double>,
        [&](double sum_squares, int64_t cells, int64_t o) {
          output[o] =
              Activate(params.activation, cells == 0 ? 0.0f : static_cast<float>(std::sqrt(sum_squares / cells)));
        });
    return;
  }
  Pool(params, input, output, [](const Window& w, auto at) {
    float sum_squares = 0.0f;
    int64_t count = 0;
    for (int64_t y = w.y_begin; y < w.y_end; ++y) {
      for (int64_t x = w.x_begin; x < w.x_end; ++x) {
        const float v = at(y, x);
        sum_squares += v * v;
        ++count;
      }
    }
    return count == 0 ? 0.0f : std::sqrt(sum_squares / static_cast<float>(count));
  });
}

}  // namespace kiln::ops::reference
