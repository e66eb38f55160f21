// The int8 reference kernels (quantized_kernels.h).
#include "ops/reference/quantized_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace kiln::ops::reference {
namespace {

// round(acc * real) half away from zero, in double (exact for an int32 acc but for the product's one rounding),
// saturated to int32.
int32_t ApplyRealMultiplier(int32_t acc, double real) {
  const double scaled = std::round(static_cast<double>(acc) * real);
  if (!(scaled > -2147483648.0)) return std::numeric_limits<int32_t>::min();  // NaN too (not reached: finite)
  if (scaled >= 2147483647.0) return std::numeric_limits<int32_t>::max();
  return static_cast<int32_t>(scaled);
}

int32_t Finish(const WeightedQuantParams& q, int64_t channel, int32_t acc) {
  if (!q.real_multipliers.empty()) {
    acc = ApplyRealMultiplier(acc, q.real_multipliers[static_cast<size_t>(channel)]);
  } else {
    acc = MultiplyByQuantizedMultiplier(acc, q.multipliers[static_cast<size_t>(channel)], q.rounding);
  }
  acc = WrapAdd(acc, q.output_zero_point);
  acc = std::max(acc, q.activation_min);
  acc = std::min(acc, q.activation_max);
  return acc;
}

// 16x8: the int64 accumulator through LiteRT's int64 multiply.
int32_t Finish(const WeightedQuantParams& q, int64_t channel, int64_t acc) {
  const QuantizedMultiplier& m = q.multipliers[static_cast<size_t>(channel)];
  if (!q.wide_multiply) {
    return Finish(q, channel, static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(acc))));
  }
  int32_t value =
      WrapAdd(MultiplyByQuantizedMultiplierInt64(acc, m.multiplier, m.shift), q.output_zero_point);
  value = std::max(value, q.activation_min);
  value = std::min(value, q.activation_max);
  return value;
}

// A bias entry read without assuming its alignment: constant tensors point into the model file, where an
// int64 bias need not be 8-byte aligned (a misaligned load is undefined behaviour).
template <typename B>
B LoadBias(const B* bias, int64_t index) {
  B value;
  const auto* bytes = reinterpret_cast<const unsigned char*>(bias);
  std::memcpy(&value, bytes + static_cast<size_t>(index) * sizeof(B), sizeof(B));
  return value;
}

// The accumulator: int64 where the bias is (16x8), else int32.
template <typename B>
using AccumulatorFor = std::conditional_t<std::is_same_v<B, int64_t>, int64_t, int32_t>;

}  // namespace

std::vector<double> RealMultipliers(float input_scale, const std::vector<float>& filter_scales, float output_scale,
                                    int64_t channels) {
  std::vector<double> result(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    const float filter_scale = filter_scales.size() == 1 ? filter_scales[0] : filter_scales[static_cast<size_t>(c)];
    result[static_cast<size_t>(c)] =
        static_cast<double>(input_scale) * static_cast<double>(filter_scale) / static_cast<double>(output_scale);
  }
  return result;
}

template <typename T, typename W, typename B>
void FullyConnectedQuantized(const FullyConnectedParams& p, const WeightedQuantParams& q, const T* input,
                             const W* weights, const B* bias, T* output) {
  using Acc = AccumulatorFor<B>;
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t u = 0; u < p.num_units; ++u) {
      Acc acc = 0;
      for (int64_t i = 0; i < p.input_size; ++i) {
        acc = WrapAdd(acc, static_cast<Acc>(
                               (static_cast<int32_t>(input[b * p.input_size + i]) - q.input_zero_point) *
                               (static_cast<int32_t>(weights[u * p.input_size + i]) - q.filter_zero_point)));
      }
      if (bias != nullptr) acc = WrapAdd(acc, static_cast<Acc>(LoadBias(bias, u)));
      output[b * p.num_units + u] = static_cast<T>(Finish(q, u, acc));
    }
  }
}

template <typename T, typename W, typename B>
void ConvQuantized(const ConvParams& p, const WeightedQuantParams& q, const T* input, const W* filter,
                   const B* bias, T* output) {
  using Acc = AccumulatorFor<B>;
  const int64_t group_in_channels = p.input_channels / p.groups;
  const int64_t group_out_channels = p.output_channels / p.groups;
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t oy = 0; oy < p.output_height; ++oy) {
      for (int64_t ox = 0; ox < p.output_width; ++ox) {
        for (int64_t oc = 0; oc < p.output_channels; ++oc) {
          const int64_t first_in_channel = (oc / group_out_channels) * group_in_channels;
          Acc acc = 0;
          for (int64_t fy = 0; fy < p.filter_height; ++fy) {
            const int64_t iy = oy * p.stride_height - p.pad_top + fy * p.dilation_height;
            if (iy < 0 || iy >= p.input_height) continue;  // padding: skipped, as LiteRT (not zero point)
            for (int64_t fx = 0; fx < p.filter_width; ++fx) {
              const int64_t ix = ox * p.stride_width - p.pad_left + fx * p.dilation_width;
              if (ix < 0 || ix >= p.input_width) continue;
              const T* in_pixel = input +
                                  ((b * p.input_height + iy) * p.input_width + ix) * p.input_channels +
                                  first_in_channel;
              const W* taps =
                  filter + ((oc * p.filter_height + fy) * p.filter_width + fx) * group_in_channels;
              for (int64_t ic = 0; ic < group_in_channels; ++ic) {
                acc =
                    WrapAdd(acc, static_cast<Acc>((static_cast<int32_t>(in_pixel[ic]) - q.input_zero_point) *
                                                  (static_cast<int32_t>(taps[ic]) - q.filter_zero_point)));
              }
            }
          }
          if (bias != nullptr) acc = WrapAdd(acc, static_cast<Acc>(LoadBias(bias, oc)));
          output[((b * p.output_height + oy) * p.output_width + ox) * p.output_channels + oc] =
              static_cast<T>(Finish(q, oc, acc));
        }
      }
    }
  }
}

template <typename T, typename W, typename B>
void DepthwiseConvQuantized(const DepthwiseConvParams& p, const WeightedQuantParams& q, const T* input,
                            const W* filter, const B* bias, T* output) {
  using Acc = AccumulatorFor<B>;
  const int64_t output_channels = p.input_channels * p.depth_multiplier;
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t oy = 0; oy < p.output_height; ++oy) {
      for (int64_t ox = 0; ox < p.output_width; ++ox) {
        for (int64_t ic = 0; ic < p.input_channels; ++ic) {
          for (int64_t m = 0; m < p.depth_multiplier; ++m) {
            const int64_t oc = ic * p.depth_multiplier + m;
            Acc acc = 0;
            for (int64_t fy = 0; fy < p.filter_height; ++fy) {
              const int64_t iy = oy * p.stride_height - p.pad_top + fy * p.dilation_height;
              if (iy < 0 || iy >= p.input_height) continue;
              for (int64_t fx = 0; fx < p.filter_width; ++fx) {
                const int64_t ix = ox * p.stride_width - p.pad_left + fx * p.dilation_width;
                if (ix < 0 || ix >= p.input_width) continue;
                acc = WrapAdd(
                    acc,
                    static_cast<Acc>(
                        (static_cast<int32_t>(
                             input[((b * p.input_height + iy) * p.input_width + ix) * p.input_channels +
                                   ic]) -
                         q.input_zero_point) *
                        (static_cast<int32_t>(filter[(fy * p.filter_width + fx) * output_channels + oc]) -
                         q.filter_zero_point)));
              }
            }
            if (bias != nullptr) acc = WrapAdd(acc, static_cast<Acc>(LoadBias(bias, oc)));
            output[((b * p.output_height + oy) * p.output_width + ox) * output_channels + oc] =
                static_cast<T>(Finish(q, oc, acc));
          }
        }
      }
    }
  }
}

#define KILN_INSTANTIATE_WEIGHTED(T, W, B)                                                                \
  template void FullyConnectedQuantized<T, W, B>(const FullyConnectedParams&, const WeightedQuantParams&, \
                                                 const T*, const W*, const B*, T*);                       \
  template void ConvQuantized<T, W, B>(const ConvParams&, const WeightedQuantParams&, const T*, const W*, \
                                       const B*, T*);                                                     \
  template void DepthwiseConvQuantized<T, W, B>(const DepthwiseConvParams&, const WeightedQuantParams&,   \
                                                const T*, const W*, const B*, T*);
KILN_INSTANTIATE_WEIGHTED(int8_t, int8_t, int32_t)
KILN_INSTANTIATE_WEIGHTED(uint8_t, uint8_t, int32_t)
KILN_INSTANTIATE_WEIGHTED(int16_t, int8_t, int64_t)
#undef KILN_INSTANTIATE_WEIGHTED

template <typename T>
void TransposeConvQuantized(const TransposeConvParams& p, const WeightedQuantParams& q, const T* input, const T* filter,
                            const int32_t* bias, T* output) {
  const int64_t count = p.batch * p.output_height * p.output_width * p.output_channels;
  std::vector<int32_t> acc(static_cast<size_t>(count), 0);
  const int32_t input_zero_point = q.input_zero_point, filter_zero_point = q.filter_zero_point;
  ScatterTransposeConv(
      p, input, filter, acc.data(), [input_zero_point](T v) { return static_cast<int32_t>(v) - input_zero_point; },
      [filter_zero_point](T v) { return static_cast<int32_t>(v) - filter_zero_point; });
  for (int64_t i = 0; i < count; ++i) {
    const int64_t channel = i % p.output_channels;
    int32_t value = acc[static_cast<size_t>(i)];
    if (bias != nullptr) value = WrapAdd(value, LoadBias(bias, channel));
    output[i] = static_cast<T>(Finish(q, channel, value));
  }
}
template void TransposeConvQuantized<int8_t>(const TransposeConvParams&, const WeightedQuantParams&, const int8_t*,
                                             const int8_t*, const int32_t*, int8_t*);
template void TransposeConvQuantized<uint8_t>(const TransposeConvParams&, const WeightedQuantParams&, const uint8_t*,
                                              const uint8_t*, const int32_t*, uint8_t*);

void TransposeConv16x8(const TransposeConvParams& p, const WeightedQuantParams& q, const int16_t* input,
                       const int8_t* filter, const int64_t* bias, int16_t* output) {
  const int64_t count = p.batch * p.output_height * p.output_width * p.output_channels;
  std::vector<int64_t> acc(static_cast<size_t>(count), 0);
  ScatterTransposeConv(
      p, input, filter, acc.data(), [](int16_t v) { return static_cast<int64_t>(v); },
      [](int8_t v) { return static_cast<int64_t>(v); });
  for (int64_t i = 0; i < count; ++i) {
    const int64_t channel = i % p.output_channels;
    int64_t value = acc[static_cast<size_t>(i)];
    if (bias != nullptr) value = WrapAdd(value, LoadBias(bias, channel));
    output[i] = static_cast<int16_t>(Finish(q, channel, value));
  }
}

void PrepareAddInt8(float a_scale, float b_scale, float output_scale, AddInt8Params* params) {
  // As LiteRT: the max of the float scales, doubled in double; the output's divisor 2^left_shift * scale in
  // float (exact: a power of two).
  const double twice_max_input_scale = 2 * static_cast<double>(std::max(a_scale, b_scale));
  params->a_multiplier = QuantizeMultiplier(static_cast<double>(a_scale) / twice_max_input_scale);
  params->b_multiplier = QuantizeMultiplier(static_cast<double>(b_scale) / twice_max_input_scale);
  const float divisor = static_cast<float>(1 << params->left_shift) * output_scale;
  params->output_multiplier = QuantizeMultiplier(twice_max_input_scale / static_cast<double>(divisor));
}

namespace {

// ADD of two stored values (any 8-bit type), clamped to the activation bounds.
int32_t AddValues(const AddInt8Params& p, int32_t a, int32_t b) {
  const int32_t shifted_a = (a - p.a_zero_point) * (int32_t{1} << p.left_shift);
  const int32_t shifted_b = (b - p.b_zero_point) * (int32_t{1} << p.left_shift);
  // Double rounding, as the published LiteRT package (measured: single rounding differs from its reference
  // kernels on 27 of 120 outputs of an ADD of two tensors of scale 0.05, double rounding on none).
  const int32_t sum = WrapAdd(MultiplyByQuantizedMultiplier(shifted_a, p.a_multiplier, Rounding::kDouble),
                              MultiplyByQuantizedMultiplier(shifted_b, p.b_multiplier, Rounding::kDouble));
  const int32_t out = WrapAdd(MultiplyByQuantizedMultiplier(sum, p.output_multiplier, Rounding::kDouble),
                              p.output_zero_point);
  return std::min(std::max(out, p.activation_min), p.activation_max);
}

}  // namespace

template <typename T>
void AddQuantized(const BinaryParams& shape, const AddInt8Params& params, const T* a, const T* b, T* output) {
  ForEachBroadcast(shape, [&](int64_t i, int64_t a_offset, int64_t b_offset) {
    output[i] = static_cast<T>(AddValues(params, a[a_offset], b[b_offset]));
  });
}
template void AddQuantized<int8_t>(const BinaryParams&, const AddInt8Params&, const int8_t*, const int8_t*,
                                   int8_t*);
template void AddQuantized<uint8_t>(const BinaryParams&, const AddInt8Params&, const uint8_t*, const uint8_t*,
                                    uint8_t*);
template void AddQuantized<int16_t>(const BinaryParams&, const AddInt8Params&, const int16_t*, const int16_t*,
                                    int16_t*);

int8_t AddInt8(const AddInt8Params& p, int8_t a, int8_t b) { return static_cast<int8_t>(AddValues(p, a, b)); }

namespace {

// AveragePoolQuantized's direct form, its sums of type Sum.
template <typename Sum, typename T>
void AveragePoolWindows(const PoolParams& p, int32_t activation_min, int32_t activation_max, const T* input,
                        T* output) {
  std::vector<Sum> sums(static_cast<size_t>(p.channels));
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t oy = 0; oy < p.output_height; ++oy) {
      for (int64_t ox = 0; ox < p.output_width; ++ox) {
        const int64_t y0 = oy * p.stride_height - p.pad_top;
        const int64_t x0 = ox * p.stride_width - p.pad_left;
        const int64_t fy_begin = std::max<int64_t>(0, -y0),
                      fy_end = std::min(p.filter_height, p.input_height - y0);
        const int64_t fx_begin = std::max<int64_t>(0, -x0),
                      fx_end = std::min(p.filter_width, p.input_width - x0);
        std::fill(sums.begin(), sums.end(), Sum{0});
        for (int64_t fy = fy_begin; fy < fy_end; ++fy) {
          for (int64_t fx = fx_begin; fx < fx_end; ++fx) {
            const T* cell = input + ((b * p.input_height + y0 + fy) * p.input_width + x0 + fx) * p.channels;
            for (int64_t c = 0; c < p.channels; ++c) sums[static_cast<size_t>(c)] += cell[c];
          }
        }
        const int64_t count = std::max<int64_t>(0, fy_end - fy_begin) * std::max<int64_t>(0, fx_end - fx_begin);
        T* out = output + ((b * p.output_height + oy) * p.output_width + ox) * p.channels;
        for (int64_t c = 0; c < p.channels; ++c) {
          const int64_t sum = sums[static_cast<size_t>(c)];
          int64_t average = 0;
          if (count > 0) average = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
          out[c] = static_cast<T>(std::clamp<int64_t>(average, activation_min, activation_max));
        }
      }
    }
  }
}

}  // namespace

template <typename T>
void AveragePoolQuantized(const PoolParams& p, int32_t activation_min, int32_t activation_max, const T* input,
                          T* output) {
  if (UseSeparablePool(p)) {  // a huge window: linear time (pooling.h), the same integer result
    SeparablePool<int64_t>(
        p, [&](int64_t i) { return static_cast<int64_t>(input[i]); }, &SumRanges<int64_t>,
        [&](int64_t sum, int64_t count, int64_t o) {
          int64_t average = 0;
          if (count > 0) average = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
          output[o] = static_cast<T>(std::clamp<int64_t>(average, activation_min, activation_max));
        });
    return;
  }
  // Each window's cells are summed a pixel's channels at a time (the innermost loop runs over contiguous
  // channels, which the compiler vectorises); in int32 where no sum can leave it (fewer than 2^15 cells of 16-bit
  // values at most), else int64. The integers are the same either way.
  if (p.filter_height * p.filter_width < (int64_t{1} << 15)) {
    AveragePoolWindows<int32_t>(p, activation_min, activation_max, input, output);
  } else {
    AveragePoolWindows<int64_t>(p, activation_min, activation_max, input, output);
  }
}

template <typename T>
void MaxPoolQuantized(const PoolParams& p, int32_t activation_min, int32_t activation_max, const T* input,
                      T* output) {
  if (UseSeparablePool(p)) {  // a huge window: linear time (pooling.h), the same result
    SeparablePool<int32_t>(
        p, [&](int64_t i) { return static_cast<int32_t>(input[i]); },
        [](const int32_t* v, int64_t n, const std::vector<PoolRange>& r, int32_t* out) {
          MaxRanges<int32_t>(v, n, r, out, std::numeric_limits<T>::min());
        },
        [&](int32_t max, int64_t, int64_t o) {
          output[o] = static_cast<T>(std::min(std::max(max, activation_min), activation_max));
        });
    return;
  }
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t oy = 0; oy < p.output_height; ++oy) {
      for (int64_t ox = 0; ox < p.output_width; ++ox) {
        const int64_t y0 = oy * p.stride_height - p.pad_top;
        const int64_t x0 = ox * p.stride_width - p.pad_left;
        const int64_t fy_begin = std::max<int64_t>(0, -y0),
                      fy_end = std::min(p.filter_height, p.input_height - y0);
        const int64_t fx_begin = std::max<int64_t>(0, -x0),
                      fx_end = std::min(p.filter_width, p.input_width - x0);
        for (int64_t c = 0; c < p.channels; ++c) {
          int32_t max = std::numeric_limits<T>::min();
          for (int64_t fy = fy_begin; fy < fy_end; ++fy) {
            for (int64_t fx = fx_begin; fx < fx_end; ++fx) {
              max = std::max<int32_t>(
                  max, input[((b * p.input_height + y0 + fy) * p.input_width + x0 + fx) * p.channels + c]);
            }
          }
          max = std::min(std::max(max, activation_min), activation_max);
          output[((b * p.output_height + oy) * p.output_width + ox) * p.channels + c] = static_cast<T>(max);
        }
      }
    }
  }
}

template void AveragePoolQuantized<int8_t>(const PoolParams&, int32_t, int32_t, const int8_t*, int8_t*);
template void AveragePoolQuantized<uint8_t>(const PoolParams&, int32_t, int32_t, const uint8_t*, uint8_t*);
template void MaxPoolQuantized<int8_t>(const PoolParams&, int32_t, int32_t, const int8_t*, int8_t*);
template void MaxPoolQuantized<uint8_t>(const PoolParams&, int32_t, int32_t, const uint8_t*, uint8_t*);
template void AveragePoolQuantized<int16_t>(const PoolParams&, int32_t, int32_t, const int16_t*, int16_t*);
template void MaxPoolQuantized<int16_t>(const PoolParams&, int32_t, int32_t, const int16_t*, int16_t*);

void AveragePoolInt8(const PoolParams& p, int32_t activation_min, int32_t activation_max, const int8_t* input,
                     int8_t* output) {
  AveragePoolQuantized(p, activation_min, activation_max, input, output);
}
void MaxPoolInt8(const PoolParams& p, int32_t activation_min, int32_t activation_max, const int8_t* input,
                 int8_t* output) {
  MaxPoolQuantized(p, activation_min, activation_max, input, output);
}

namespace {

template <typename T>
void QuantizeFloat(int64_t count, float scale, int32_t zero_point, const float* input, T* output) {
  constexpr int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  for (int64_t i = 0; i < count; ++i) {
    const float scaled = std::round(input[i] / scale);
    // Out-of-range (and NaN) values clamp before the cast, so the conversion is defined.
    int32_t value;
    if (!(scaled > -1e9f)) {
      value = std::isnan(scaled) ? 0 : -1000000000;
    } else if (scaled > 1e9f) {
      value = 1000000000;
    } else {
      value = static_cast<int32_t>(scaled);
    }
    value += zero_point;
    output[i] = static_cast<T>(std::min(std::max(value, lo), hi));
  }
}

}  // namespace

void QuantizeFloatToInt8(int64_t count, float scale, int32_t zero_point, const float* input, int8_t* output) {
  QuantizeFloat(count, scale, zero_point, input, output);
}

void QuantizeFloatToUInt8(int64_t count, float scale, int32_t zero_point, const float* input,
                          uint8_t* output) {
  QuantizeFloat(count, scale, zero_point, input, output);
}

void QuantizeFloatToInt16(int64_t count, float scale, int32_t zero_point, const float* input,
                          int16_t* output) {
  QuantizeFloat(count, scale, zero_point, input, output);
}

template <typename In, typename Out>
void Requantize(int64_t count, int32_t input_zero_point, const QuantizedMultiplier& multiplier,
                int32_t output_zero_point, const In* input, Out* output) {
  constexpr int32_t lo = std::numeric_limits<Out>::min(), hi = std::numeric_limits<Out>::max();
  for (int64_t i = 0; i < count; ++i) {
    // Double rounding, as the published LiteRT package (measured on a single-op model, input scale 0.05 and
    // output scale 0.2: single rounding differs on 122 of 1024 outputs, double rounding on none).
    const int32_t value =
        WrapAdd(MultiplyByQuantizedMultiplier(static_cast<int32_t>(input[i]) - input_zero_point, multiplier,
                                              Rounding::kDouble),
                output_zero_point);
    output[i] = static_cast<Out>(std::min(std::max(value, lo), hi));
  }
}
template void Requantize<int8_t, int8_t>(int64_t, int32_t, const QuantizedMultiplier&, int32_t, const int8_t*,
                                         int8_t*);
template void Requantize<int8_t, uint8_t>(int64_t, int32_t, const QuantizedMultiplier&, int32_t,
                                          const int8_t*, uint8_t*);
template void Requantize<uint8_t, int8_t>(int64_t, int32_t, const QuantizedMultiplier&, int32_t,
                                          const uint8_t*, int8_t*);
template void Requantize<uint8_t, uint8_t>(int64_t, int32_t, const QuantizedMultiplier&, int32_t,
                                           const uint8_t*, uint8_t*);
template void Requantize<int16_t, int16_t>(int64_t, int32_t, const QuantizedMultiplier&, int32_t,
                                           const int16_t*, int16_t*);
template void Requantize<int16_t, int8_t>(int64_t, int32_t, const QuantizedMultiplier&, int32_t,
                                          const int16_t*, int8_t*);
template void Requantize<int8_t, int16_t>(int64_t, int32_t, const QuantizedMultiplier&, int32_t,
                                          const int8_t*, int16_t*);

void RequantizeInt8(int64_t count, int32_t input_zero_point, const QuantizedMultiplier& multiplier,
                    int32_t output_zero_point, const int8_t* input, int8_t* output) {
  Requantize(count, input_zero_point, multiplier, output_zero_point, input, output);
}

void PrepareSoftmaxInt8(float input_scale, float beta, SoftmaxInt8Params* params) {
  const float scale = -input_scale * beta;
  for (int32_t d = 0; d <= 255; ++d) params->table[255 - d] = std::exp(scale * static_cast<float>(d));
}

template <typename T>
void SoftmaxQuantized(const SoftmaxInt8Params& p, const T* input, T* output) {
  constexpr int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  for (int64_t row = 0; row < p.outer; ++row) {
    const T* in = input + row * p.depth;
    T* out = output + row * p.depth;
    int32_t max = lo;
    for (int64_t j = 0; j < p.depth; ++j) max = std::max<int32_t>(max, in[j]);
    // Entry 255 - (max - x): exp(-(max - x) * input_scale * beta).
    const auto entry = [&](T x) { return p.table[255 - (max - static_cast<int32_t>(x))]; };
    float sum = 0.0f;
    for (int64_t j = 0; j < p.depth; ++j) sum += entry(in[j]);
    const float inverse = 1.0f / (sum * p.output_scale);
    for (int64_t j = 0; j < p.depth; ++j) {
      // entry <= sum, so the quotient is at most 1 / output_scale: clamped in float before the cast, as a
      // tiny scale can put it past int32.
      const float scaled = std::min(std::round(entry(in[j]) * inverse), 1e9f);
      const int32_t q = static_cast<int32_t>(scaled) + p.output_zero_point;
      out[j] = static_cast<T>(std::min(std::max(q, lo), hi));
    }
  }
}

template void SoftmaxQuantized<int8_t>(const SoftmaxInt8Params&, const int8_t*, int8_t*);
template void SoftmaxQuantized<uint8_t>(const SoftmaxInt8Params&, const uint8_t*, uint8_t*);

namespace {

// LiteRT's fold of 1 / count into a multiplier (its QuantizedMeanOrSum and integer Mean).
QuantizedMultiplier FoldCount(QuantizedMultiplier base, int64_t count) {
  if (count <= 0) return base;
  int k = 0;
  while ((count >> (k + 1)) != 0) ++k;  // floor(log2 count)
  k = std::min(k, 32);
  k = std::max(0, std::min(k, 31 + base.shift));
  QuantizedMultiplier result;
  result.multiplier = static_cast<int32_t>((static_cast<int64_t>(base.multiplier) << k) / count);
  result.shift = base.shift - k;
  return result;
}

}  // namespace

void PrepareLogSoftmaxInt8(float input_scale, LogSoftmaxInt8Params* params) {
  constexpr int kInputBits = 5;
  const double real =
      std::min(static_cast<double>(input_scale) * static_cast<double>(int64_t{1} << (31 - kInputBits)),
               static_cast<double>((int64_t{1} << 31) - 1));
  params->input_multiplier = QuantizeMultiplier(real);
  const int left_shift = params->input_multiplier.shift;
  params->reverse_multiplier = QuantizeMultiplier(std::ldexp(1.0, 31 - left_shift) /
                                                  static_cast<double>(params->input_multiplier.multiplier));
  const double max_input_rescaled = static_cast<double>((1 << kInputBits) - 1) *
                                    static_cast<double>(int64_t{1} << (31 - kInputBits)) /
                                    std::ldexp(1.0, left_shift);
  params->diff_min = -static_cast<int32_t>(std::floor(max_input_rescaled));
}

template <typename T>
void LogSoftmaxQuantized(const LogSoftmaxInt8Params& p, const T* input, T* output) {
  constexpr int kInputBits = 5, kAccumulationBits = 12, kOutputBits = 4;
  // The output's zero point is the type's top (127, 255): log-probabilities are <= 0.
  constexpr int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  constexpr int32_t kOutputZeroPoint = hi;
  for (int64_t row = 0; row < p.outer; ++row) {
    const T* in = input + row * p.depth;
    T* out = output + row * p.depth;
    int32_t max = lo;
    for (int64_t j = 0; j < p.depth; ++j) max = std::max<int32_t>(max, in[j]);
    int32_t sum_of_exps = 0;  // Q12.19
    for (int64_t j = 0; j < p.depth; ++j) {
      const int32_t diff = in[j] - max;
      if (diff >= p.diff_min) {
        const int32_t diff_q5 = MultiplyByQuantizedMultiplier(diff, p.input_multiplier, p.rounding);
        const int32_t e =
            fixed_point::Rescale(fixed_point::ExpOnNegativeValues(diff_q5, kInputBits), 0, kAccumulationBits);
        sum_of_exps = static_cast<int32_t>(static_cast<uint32_t>(sum_of_exps) + static_cast<uint32_t>(e));
      }
    }
    const int32_t log_sum_q5 =
        fixed_point::LogXForXGreaterThanOrEqualTo1(sum_of_exps, kAccumulationBits, kInputBits);
    const int32_t shifted_log_sum = static_cast<int32_t>(
        static_cast<uint32_t>(log_sum_q5) + static_cast<uint32_t>(std::numeric_limits<int32_t>::min()));
    const int32_t adjusted_diff_min = std::max(
        p.diff_min - 1, MultiplyByQuantizedMultiplier(shifted_log_sum, p.reverse_multiplier, p.rounding));
    for (int64_t j = 0; j < p.depth; ++j) {
      const int32_t diff = in[j] - max;
      if (diff > adjusted_diff_min) {
        const int32_t diff_q5 = MultiplyByQuantizedMultiplier(diff, p.input_multiplier, p.rounding);
        const int32_t delta =
            static_cast<int32_t>(static_cast<uint32_t>(diff_q5) - static_cast<uint32_t>(log_sum_q5));
        int32_t value = RoundingDivideByPOT(delta, 31 - kInputBits - kOutputBits) + kOutputZeroPoint;
        value = std::min(std::max(value, lo), hi);
        out[j] = static_cast<T>(value);
      } else {
        out[j] = static_cast<T>(lo);
      }
    }
  }
}

template void LogSoftmaxQuantized<int8_t>(const LogSoftmaxInt8Params&, const int8_t*, int8_t*);
template void LogSoftmaxQuantized<uint8_t>(const LogSoftmaxInt8Params&, const uint8_t*, uint8_t*);

void PrepareMeanHwInt8(float input_scale, float output_scale, MeanHwInt8Params* params) {
  const QuantizedMultiplier base =
      QuantizeMultiplier(static_cast<double>(input_scale) / static_cast<double>(output_scale));
  params->multiplier = FoldCount(base, params->height * params->width);
}

void MeanHwInt8(const MeanHwInt8Params& p, const int8_t* input, int8_t* output) {
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t c = 0; c < p.channels; ++c) {
      int32_t acc = 0;
      for (int64_t y = 0; y < p.height; ++y) {
        for (int64_t x = 0; x < p.width; ++x) {
          acc += input[((b * p.height + y) * p.width + x) * p.channels + c] - p.input_zero_point;
        }
      }
      acc = WrapAdd(MultiplyByQuantizedMultiplier(acc, p.multiplier, Rounding::kDouble), p.output_zero_point);
      output[b * p.channels + c] = static_cast<int8_t>(std::min(std::max(acc, int32_t{-128}), int32_t{127}));
    }
  }
}

void PrepareReduceInt8(bool is_sum, float input_scale, float output_scale, ReduceInt8Params* params) {
  params->is_sum = is_sum;
  params->count = ReducedCount(params->shape);
  params->multiplier =
      FoldCount(QuantizeMultiplier(static_cast<double>(input_scale) / static_cast<double>(output_scale)),
                params->count);
  // As LiteRT writes it: (-zero_point * scale) * n, each step in float.
  params->scale = input_scale / output_scale;
  params->bias =
      static_cast<float>(-params->input_zero_point) * params->scale * static_cast<float>(params->count);
}

template <typename T>
void ReduceQuantized(const ReduceInt8Params& p, const T* input, T* output) {
  constexpr int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  int64_t outputs = 1;
  for (size_t d = 0; d < p.shape.input_dims.size(); ++d) {
    if (!p.shape.reduced[d]) outputs *= p.shape.input_dims[d];
  }
  if (outputs == 0) return;
  if (p.count == 0) {
    for (int64_t o = 0; o < outputs; ++o) output[o] = 0;
    return;
  }
  std::vector<int64_t> sums(static_cast<size_t>(outputs));
  if constexpr (std::is_same_v<T, uint8_t>) {
    SumUInt8(p.shape, input, sums.data());
  } else if constexpr (std::is_same_v<T, int16_t>) {
    SumInt16(p.shape, input, sums.data());
  } else {
    SumInt8(p.shape, input, sums.data());
  }
  for (int64_t o = 0; o < outputs; ++o) {
    // LiteRT sums in int32 (exact below 2^24 inputs); wrap as it would beyond, rather than overflow.
    const auto sum =
        static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(sums[static_cast<size_t>(o)])));
    int32_t value;
    if (p.is_sum) {
      const float real = std::round(static_cast<float>(sum) * p.scale + p.bias);
      // Clamped in float first, so the conversion is defined (NaN cannot occur: finite scales).
      value = static_cast<int32_t>(std::min(std::max(real, -1e6f), 1e6f)) + p.output_zero_point;
    } else {
      // s - n * zp in int64, narrowed to int32 as LiteRT does.
      const int64_t shifted = static_cast<int64_t>(sum) - p.count * static_cast<int64_t>(p.input_zero_point);
      const auto x = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(shifted)));
      value = WrapAdd(MultiplyByQuantizedMultiplier(x, p.multiplier, Rounding::kDouble), p.output_zero_point);
    }
    output[o] = static_cast<T>(std::min(std::max(value, lo), hi));
  }
}

template void ReduceQuantized<int8_t>(const ReduceInt8Params&, const int8_t*, int8_t*);
template void ReduceQuantized<uint8_t>(const ReduceInt8Params&, const uint8_t*, uint8_t*);
template void ReduceQuantized<int16_t>(const ReduceInt8Params&, const int16_t*, int16_t*);

bool PrepareReduceProdQuantized(float input_scale, float output_scale, ReduceProdQuantizedParams* params) {
  params->count = ReducedCount(params->shape);
  params->output_scale = output_scale;
  if (params->count == 0) return true;
  const double scaling = static_cast<double>(input_scale) /
                         std::pow(static_cast<double>(output_scale), 1.0 / static_cast<double>(params->count));
  params->multiplier = QuantizeMultiplier(scaling);
  return params->multiplier.shift <= 14;
}

template <typename T>
void ReduceProdQuantized(const ReduceProdQuantizedParams& p, const T* input, T* output) {
  constexpr int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  const Dims& dims = p.shape.input_dims;
  int64_t input_count = 1, output_count = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    input_count *= dims[d];
    if (!p.shape.reduced[d]) output_count *= dims[d];
  }
  if (output_count == 0) return;
  if (p.count == 0 || input_count == 0) {
    // 1 in the output's quantization (float arithmetic, clamped before the conversion).
    const float one = std::min(std::max(std::round(1.0f / p.output_scale), -1e6f), 1e6f);
    const int32_t value = std::clamp<int32_t>(static_cast<int32_t>(one) + p.output_zero_point, lo, hi);
    for (int64_t o = 0; o < output_count; ++o) output[o] = static_cast<T>(value);
    return;
  }
  std::vector<int32_t> products(static_cast<size_t>(output_count));
  std::vector<bool> started(static_cast<size_t>(output_count), false);
  std::vector<int64_t> coordinate(dims.size(), 0);
  for (int64_t i = 0; i < input_count; ++i) {
    // The output of input i: its coordinates in the kept dimensions, row-major.
    int64_t o = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (!p.shape.reduced[d]) o = o * dims[d] + coordinate[d];
    }
    const int32_t x = static_cast<int32_t>(input[i]) - p.input_zero_point;
    int32_t& product = products[static_cast<size_t>(o)];
    if (!started[static_cast<size_t>(o)]) {
      product = x;
      started[static_cast<size_t>(o)] = true;
    } else {
      product = MultiplyByQuantizedMultiplierInt64(static_cast<int64_t>(product) * x, p.multiplier.multiplier,
                                                   p.multiplier.shift);
    }
    for (size_t d = dims.size(); d-- > 0;) {  // the next coordinate, row-major
      if (++coordinate[d] < dims[d]) break;
      coordinate[d] = 0;
    }
  }
  for (int64_t o = 0; o < output_count; ++o) {
    const int32_t scaled = MultiplyByQuantizedMultiplierInt64(products[static_cast<size_t>(o)],
                                                              p.multiplier.multiplier, p.multiplier.shift);
    output[o] = static_cast<T>(std::clamp<int32_t>(WrapAdd(scaled, p.output_zero_point), lo, hi));
  }
}

template void ReduceProdQuantized<int8_t>(const ReduceProdQuantizedParams&, const int8_t*, int8_t*);
template void ReduceProdQuantized<int16_t>(const ReduceProdQuantizedParams&, const int16_t*, int16_t*);

void BatchMatMulInt8(const BatchMatMulParams& shape, const BatchMatMulInt8Params& quant, const int8_t* lhs,
                     const int8_t* rhs, int8_t* output) {
  WalkBatchMatMul(shape, lhs, rhs, output, [&quant](const auto& x, const auto& y, int64_t depth) {
    int32_t acc = 0;
    for (int64_t d = 0; d < depth; ++d) {
      // |(x - zp) * (y - zp)| <= 255 * 255
      acc = WrapAdd(acc, (x(d) - quant.lhs_zero_point) * (y(d) - quant.rhs_zero_point));
    }
    const int32_t scaled =
        WrapAdd(MultiplyByQuantizedMultiplier(acc, quant.multiplier, quant.rounding), quant.output_zero_point);
    return static_cast<int8_t>(std::clamp<int32_t>(scaled, -128, 127));
  });
}

void BatchMatMul16(const BatchMatMulParams& shape, const BatchMatMulInt8Params& quant, const int16_t* lhs,
                   const int16_t* rhs, int16_t* output) {
  WalkBatchMatMul(shape, lhs, rhs, output, [&quant](const auto& x, const auto& y, int64_t depth) {
    int64_t acc = 0;
    for (int64_t d = 0; d < depth; ++d) acc = WrapAdd(acc, static_cast<int64_t>(x(d)) * y(d));
    const int32_t scaled =
        quant.wide_multiply
            ? MultiplyByQuantizedMultiplierInt64(acc, quant.multiplier.multiplier, quant.multiplier.shift)
            : MultiplyByQuantizedMultiplier(static_cast<int32_t>(static_cast<uint64_t>(acc)), quant.multiplier,
                                            quant.rounding);
    return static_cast<int16_t>(std::clamp<int32_t>(WrapAdd(scaled, quant.output_zero_point), -32768, 32767));
  });
}

template <typename T>
void L2NormalizationQuantized(int64_t outer, int64_t depth, int32_t input_zero_point, int32_t output_zero_point,
                              Rounding rounding, const T* input, T* output) {
  constexpr int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  for (int64_t row = 0; row < outer; ++row) {
    const T* in = input + row * depth;
    T* out = output + row * depth;
    int32_t sum = 0;
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t diff = in[c] - input_zero_point;
      sum = WrapAdd(sum, diff * diff);  // |diff| <= 255
    }
    QuantizedMultiplier m;
    int right_shift = 0;
    fixed_point::InvSqrtMultiplier(sum, &m.multiplier, &right_shift);
    // uint8: 128 * diff times the multiplier; int8: diff times the multiplier with the 2^7 folded into the shift,
    // which rounds differently once the shift is a right one.
    const bool fold = std::is_same_v<T, int8_t>;
    m.shift = fold ? 7 - right_shift : -right_shift;
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t diff = in[c] - input_zero_point;
      const int32_t scaled = MultiplyByQuantizedMultiplier(fold ? diff : 128 * diff, m, rounding);
      out[c] = static_cast<T>(std::clamp<int32_t>(WrapAdd(scaled, output_zero_point), lo, hi));
    }
  }
}
template void L2NormalizationQuantized<int8_t>(int64_t, int64_t, int32_t, int32_t, Rounding, const int8_t*,
                                               int8_t*);
template void L2NormalizationQuantized<uint8_t>(int64_t, int64_t, int32_t, int32_t, Rounding, const uint8_t*,
                                                uint8_t*);

}  // namespace kiln::ops::reference
