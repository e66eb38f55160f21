#include "ops/reference/index.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>

namespace kiln::ops::reference {

bool OneHotOutputShape(const Dims& indices, int axis, int64_t depth, Dims* output, int* resolved_axis,
                       std::string* error) {
  const int rank = static_cast<int>(indices.size());
  if (axis < -1 || axis > rank) {
    *error = "axis " + std::to_string(axis) + " is out of range [-1, " + std::to_string(rank) + "]";
    return false;
  }
  if (depth < 0) {
    *error = "depth " + std::to_string(depth) + " is negative";
    return false;
  }
  *resolved_axis = axis == -1 ? rank : axis;
  *output = indices;
  output->insert(output->begin() + *resolved_axis, depth);
  return true;
}

void OneHot(const int64_t* indices, int64_t outer, int64_t depth, int64_t inner, const void* on, const void* off,
            size_t element_size, void* output) {
  auto* out = static_cast<uint8_t*>(output);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t d = 0; d < depth; ++d) {
      for (int64_t i = 0; i < inner; ++i) {
        const bool hot = indices[o * inner + i] == d;
        std::memcpy(out, hot ? on : off, element_size);
        out += element_size;
      }
    }
  }
}

bool MakeGatherNdParams(const Dims& params, const Dims& indices, GatherNdParams* p, Dims* output, std::string* error) {
  if (params.empty()) {
    *error = "params must have rank 1 or more";
    return false;
  }
  if (indices.empty()) {
    *error = "indices must have rank 1 or more";
    return false;
  }
  const int64_t depth = indices.back();
  if (depth > static_cast<int64_t>(params.size())) {
    *error = "index depth " + std::to_string(depth) + " (the indices' last dimension) exceeds the params' rank " +
             std::to_string(params.size());
    return false;
  }
  *p = GatherNdParams();
  p->depth = depth;
  p->count = NumElements(Dims(indices.begin(), indices.end() - 1));
  p->dims.assign(params.begin(), params.begin() + depth);
  p->slice = NumElements(Dims(params.begin() + depth, params.end()));
  p->strides.assign(static_cast<size_t>(depth), 0);
  int64_t stride = p->slice;
  for (int64_t d = depth - 1; d >= 0; --d) {
    p->strides[static_cast<size_t>(d)] = stride;
    stride *= params[static_cast<size_t>(d)];
  }
  *output = Dims(indices.begin(), indices.end() - 1);
  output->insert(output->end(), params.begin() + depth, params.end());
  return true;
}

namespace {

// The flat element offset of tuple `t`, or false with `*bad` set.
bool TupleOffset(const GatherNdParams& p, const int64_t* indices, int64_t t, int64_t* offset, int64_t* bad) {
  int64_t at = 0;
  for (int64_t d = 0; d < p.depth; ++d) {
    const int64_t index = indices[t * p.depth + d];
    if (index < 0 || index >= p.dims[static_cast<size_t>(d)]) {
      *bad = t * p.depth + d;
      return false;
    }
    at += index * p.strides[static_cast<size_t>(d)];
  }
  *offset = at;
  return true;
}

}  // namespace

bool GatherNdCopy(const GatherNdParams& p, size_t element_size, const void* params, const int64_t* indices,
                  void* output, int64_t* bad) {
  for (int64_t t = 0; t < p.count; ++t) {
    int64_t offset;
    if (!TupleOffset(p, indices, t, &offset, bad)) return false;
  }
  const auto* in = static_cast<const uint8_t*>(params);
  auto* out = static_cast<uint8_t*>(output);
  const size_t slice_bytes = static_cast<size_t>(p.slice) * element_size;
  for (int64_t t = 0; t < p.count; ++t) {
    int64_t offset = 0;
    TupleOffset(p, indices, t, &offset, bad);
    if (slice_bytes != 0)
      std::memcpy(out + t * slice_bytes, in + offset * static_cast<int64_t>(element_size), slice_bytes);
  }
  return true;
}

bool MakeScatterNdParams(const Dims& shape, const Dims& indices, const Dims& updates, GatherNdParams* p,
                         std::string* error) {
  Dims expected;
  if (!MakeGatherNdParams(shape, indices, p, &expected, error)) return false;
  if (updates != expected) {
    std::string want = "[", got = "[";
    for (size_t i = 0; i < expected.size(); ++i) want += (i ? "," : "") + std::to_string(expected[i]);
    for (size_t i = 0; i < updates.size(); ++i) got += (i ? "," : "") + std::to_string(updates[i]);
    *error = "updates have shape " + got + "]; indices and shape need " + want + "]";
    return false;
  }
  return true;
}

template <typename T>
bool ScatterNd(const GatherNdParams& p, const int64_t* indices, const T* updates, int64_t output_count, T* output,
               int64_t* bad) {
  for (int64_t i = 0; i < output_count; ++i) output[i] = T();
  for (int64_t t = 0; t < p.count; ++t) {
    int64_t offset;
    if (!TupleOffset(p, indices, t, &offset, bad)) return false;
  }
  for (int64_t t = 0; t < p.count; ++t) {
    int64_t offset = 0;
    TupleOffset(p, indices, t, &offset, bad);
    for (int64_t k = 0; k < p.slice; ++k) {
      T& out = output[offset + k];
      const T& update = updates[t * p.slice + k];
      if constexpr (std::is_same_v<T, float>) {
        out += update;
      } else {  // integers wrap as two's complement, as the hardware LiteRT runs on does
        using U = std::make_unsigned_t<T>;
        out = static_cast<T>(static_cast<U>(static_cast<U>(out) + static_cast<U>(update)));
      }
    }
  }
  return true;
}

template bool ScatterNd<float>(const GatherNdParams&, const int64_t*, const float*, int64_t, float*, int64_t*);
template bool ScatterNd<int32_t>(const GatherNdParams&, const int64_t*, const int32_t*, int64_t, int32_t*, int64_t*);
template bool ScatterNd<int64_t>(const GatherNdParams&, const int64_t*, const int64_t*, int64_t, int64_t*, int64_t*);
template bool ScatterNd<int8_t>(const GatherNdParams&, const int64_t*, const int8_t*, int64_t, int8_t*, int64_t*);
template bool ScatterNd<uint8_t>(const GatherNdParams&, const int64_t*, const uint8_t*, int64_t, uint8_t*, int64_t*);

bool ScatterNdBool(const GatherNdParams& p, const int64_t* indices, const uint8_t* updates, int64_t output_count,
                   uint8_t* output, int64_t* bad) {
  std::memset(output, 0, static_cast<size_t>(output_count));
  for (int64_t t = 0; t < p.count; ++t) {
    int64_t offset;
    if (!TupleOffset(p, indices, t, &offset, bad)) return false;
  }
  for (int64_t t = 0; t < p.count; ++t) {
    int64_t offset = 0;
    TupleOffset(p, indices, t, &offset, bad);
    for (int64_t k = 0; k < p.slice; ++k) {
      if (updates[t * p.slice + k] != 0) output[offset + k] = 1;
    }
  }
  return true;
}

void AddN(const std::vector<const float*>& inputs, int64_t count, float* output) {
  for (int64_t i = 0; i < count; ++i) {
    float sum = inputs[0][i];
    for (size_t k = 1; k < inputs.size(); ++k) sum += inputs[k][i];
    output[i] = sum;
  }
}

void AddN(const std::vector<const int32_t*>& inputs, int64_t count, int32_t* output) {
  for (int64_t i = 0; i < count; ++i) {
    uint32_t sum = static_cast<uint32_t>(inputs[0][i]);
    for (size_t k = 1; k < inputs.size(); ++k) sum += static_cast<uint32_t>(inputs[k][i]);
    output[i] = static_cast<int32_t>(sum);
  }
}

namespace {

template <typename T>
std::string RangeText(T start, T limit, T delta) {
  return "start " + std::to_string(start) + ", limit " + std::to_string(limit) + ", delta " + std::to_string(delta);
}

}  // namespace

template <typename T>
bool RangeCount(T start, T limit, T delta, int64_t* count, std::string* error) {
  constexpr int64_t kMaxCount = std::numeric_limits<int32_t>::max();
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta)) {
      *error = RangeText(start, limit, delta) + ": every value must be finite";
      return false;
    }
  }
  if (delta == 0) {
    *error = RangeText(start, limit, delta) + ": delta must not be zero";
    return false;
  }
  if ((start < limit && delta < 0) || (start > limit && delta > 0)) {
    *error = RangeText(start, limit, delta) + ": delta's sign points away from limit";
    return false;
  }
  if constexpr (std::is_floating_point_v<T>) {
    const T n = std::ceil(std::abs((limit - start) / delta));  // in T, as LiteRT sizes it
    if (!(n <= static_cast<T>(kMaxCount))) {
      *error = RangeText(start, limit, delta) + ": more than 2^31 - 1 values";
      return false;
    }
    *count = static_cast<int64_t>(n);
  } else {
    // |limit - start| and |delta| in unsigned arithmetic: no signed overflow for any values.
    using U = std::make_unsigned_t<T>;
    const U span = start < limit ? static_cast<U>(static_cast<U>(limit) - static_cast<U>(start))
                                 : static_cast<U>(static_cast<U>(start) - static_cast<U>(limit));
    const U step = delta < 0 ? static_cast<U>(U(0) - static_cast<U>(delta)) : static_cast<U>(delta);
    const U n = span / step + (span % step != 0 ? 1 : 0);
    if (n > static_cast<U>(kMaxCount)) {
      *error = RangeText(start, limit, delta) + ": more than 2^31 - 1 values";
      return false;
    }
    *count = static_cast<int64_t>(n);
  }
  return true;
}

template <typename T>
void Range(T start, T delta, int64_t count, T* output) {
  if constexpr (std::is_floating_point_v<T>) {
    T value = start;
    for (int64_t i = 0; i < count; ++i) {
      output[i] = value;
      value += delta;
    }
  } else {  // start + i * delta stays between start and limit; unsigned arithmetic keeps the steps defined
    using U = std::make_unsigned_t<T>;
    for (int64_t i = 0; i < count; ++i) {
      output[i] = static_cast<T>(static_cast<U>(static_cast<U>(start) + static_cast<U>(i) * static_cast<U>(delta)));
    }
  }
}

template bool RangeCount<int32_t>(int32_t, int32_t, int32_t, int64_t*, std::string*);
template bool RangeCount<int64_t>(int64_t, int64_t, int64_t, int64_t*, std::string*);
template bool RangeCount<float>(float, float, float, int64_t*, std::string*);
template void Range<int32_t>(int32_t, int32_t, int64_t, int32_t*);
template void Range<int64_t>(int64_t, int64_t, int64_t, int64_t*);
template void Range<float>(float, float, int64_t, float*);

template <typename T>
void TopK(const T* input, int64_t rows, int64_t n, int64_t k, T* values, int32_t* indices) {
  std::vector<int32_t> order(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = input + r * n;
    std::iota(order.begin(), order.end(), 0);
    // A strict weak order for every input: NaN below every number, equal values by index.
    auto before = [row](int32_t a, int32_t b) {
      const T x = row[a], y = row[b];
      if constexpr (std::is_floating_point_v<T>) {
        const bool nx = std::isnan(x), ny = std::isnan(y);
        if (nx || ny) return nx == ny ? a < b : ny;
      }
      if (x != y) return x > y;
      return a < b;
    };
    std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
    for (int64_t i = 0; i < k; ++i) {
      values[r * k + i] = row[order[static_cast<size_t>(i)]];
      indices[r * k + i] = order[static_cast<size_t>(i)];
    }
  }
}

template void TopK<float>(const float*, int64_t, int64_t, int64_t, float*, int32_t*);
template void TopK<int8_t>(const int8_t*, int64_t, int64_t, int64_t, int8_t*, int32_t*);
template void TopK<uint8_t>(const uint8_t*, int64_t, int64_t, int64_t, uint8_t*, int32_t*);
template void TopK<int16_t>(const int16_t*, int64_t, int64_t, int64_t, int16_t*, int32_t*);
template void TopK<int32_t>(const int32_t*, int64_t, int64_t, int64_t, int32_t*, int32_t*);
template void TopK<int64_t>(const int64_t*, int64_t, int64_t, int64_t, int64_t*, int32_t*);

template <typename T>
bool UnsortedSegment(SegmentOp op, const T* data, const int32_t* ids, int64_t num_ids, int64_t inner,
                     int64_t num_segments, T* output, int64_t* bad) {
  for (int64_t i = 0; i < num_ids; ++i) {
    if (ids[i] >= num_segments) {
      *bad = i;
      return false;
    }
  }
  T identity{};
  switch (op) {
    case SegmentOp::kSum: identity = T{0}; break;
    case SegmentOp::kProd: identity = T{1}; break;
    case SegmentOp::kMax: identity = std::numeric_limits<T>::lowest(); break;
    case SegmentOp::kMin: identity = std::numeric_limits<T>::max(); break;
  }
  std::fill(output, output + num_segments * inner, identity);
  using Wide = std::conditional_t<std::is_integral_v<T>, uint32_t, T>;  // integer sums and products wrap
  for (int64_t i = 0; i < num_ids; ++i) {
    if (ids[i] < 0) continue;
    T* out = output + ids[i] * inner;
    const T* in = data + i * inner;
    for (int64_t k = 0; k < inner; ++k) {
      switch (op) {
        case SegmentOp::kSum: out[k] = static_cast<T>(static_cast<Wide>(out[k]) + static_cast<Wide>(in[k])); break;
        case SegmentOp::kProd: out[k] = static_cast<T>(static_cast<Wide>(out[k]) * static_cast<Wide>(in[k])); break;
        case SegmentOp::kMax: out[k] = in[k] > out[k] ? in[k] : out[k]; break;
        case SegmentOp::kMin: out[k] = in[k] < out[k] ? in[k] : out[k]; break;
      }
    }
  }
  return true;
}

template bool UnsortedSegment<float>(SegmentOp, const float*, const int32_t*, int64_t, int64_t, int64_t, float*,
                                     int64_t*);
template bool UnsortedSegment<int32_t>(SegmentOp, const int32_t*, const int32_t*, int64_t, int64_t, int64_t,
                                       int32_t*, int64_t*);

}  // namespace kiln::ops::reference
