// ARG_MAX, ARG_MIN and CAST kernels (arg_cast.h): typed loops chosen at run time from the element types.
#include "ops/reference/arg_cast.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace kiln::ops::reference {
namespace {

template <typename T>
T Load(const void* base, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const unsigned char*>(base) + static_cast<size_t>(i) * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void Store(void* base, int64_t i, T v) {
  std::memcpy(static_cast<unsigned char*>(base) + static_cast<size_t>(i) * sizeof(T), &v, sizeof(T));
}

// bool is stored as one byte; reading it as uint8_t avoids loading a byte that is neither 0 nor 1 into a
// bool.
struct BoolByte {
  uint8_t value;
};

// Calls f(T{}) with the storage type of `type`.
template <typename F>
void Dispatch(ElementType type, F&& f) {
  switch (type) {
    case ElementType::kBool:
      return f(BoolByte{});
    case ElementType::kUInt8:
      return f(uint8_t{});
    case ElementType::kInt8:
      return f(int8_t{});
    case ElementType::kInt16:
      return f(int16_t{});
    case ElementType::kUInt16:
      return f(uint16_t{});
    case ElementType::kInt32:
      return f(int32_t{});
    case ElementType::kUInt32:
      return f(uint32_t{});
    case ElementType::kInt64:
      return f(int64_t{});
    case ElementType::kFloat32:
      return f(float{});
    case ElementType::kFloat64:
      return f(double{});
  }
}

// The value compared by ARG_MAX/ARG_MIN.
template <typename T>
auto Value(T v) {
  if constexpr (std::is_same_v<T, BoolByte>) {
    return v.value != 0 ? 1 : 0;
  } else {
    return v;
  }
}

template <typename To, typename From>
To Convert(From v) {
  if constexpr (std::is_same_v<From, BoolByte>) {
    return Convert<To>(static_cast<uint8_t>(v.value != 0 ? 1 : 0));
  } else if constexpr (std::is_same_v<To, BoolByte>) {
    return BoolByte{static_cast<uint8_t>(v != 0 ? 1 : 0)};
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    const double d = static_cast<double>(v);
    if (std::isnan(d)) return 0;
    // [lower, upper) are the values whose truncation fits To; both are exact powers of two (or 0) in double.
    const double upper = std::ldexp(1.0, std::numeric_limits<To>::digits);
    const double lower = std::is_signed_v<To> ? -upper : 0.0;
    if (d <= lower - 1.0) return std::numeric_limits<To>::lowest();
    if (d >= upper) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else if constexpr (std::is_same_v<From, double> && std::is_same_v<To, float>) {
    if (std::isfinite(v) && std::fabs(v) > static_cast<double>(std::numeric_limits<float>::max())) {
      return v > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
    }
    return static_cast<float>(v);
  } else {
    // Integer to integer wraps modulo 2^bits (C++20's definition, and what GCC and Clang do in C++17);
    // integer to floating rounds to nearest.
    return static_cast<To>(v);
  }
}

}  // namespace

size_t ElementSize(ElementType type) {
  size_t size = 0;
  Dispatch(type, [&](auto t) { size = sizeof(t); });
  return size;
}

bool MakeArgParams(const Dims& input, int64_t axis, bool is_max, ArgParams* params, Dims* output,
                   std::string* error) {
  const int64_t rank = static_cast<int64_t>(input.size());
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    *error = "axis " + std::to_string(axis) + " is out of range [" + std::to_string(-rank) + ", " +
             std::to_string(rank) + ") for an input of rank " + std::to_string(rank);
    return false;
  }
  *params = ArgParams();
  params->is_max = is_max;
  output->clear();
  for (int64_t d = 0; d < rank; ++d) {
    if (d < a) params->outer *= input[static_cast<size_t>(d)];
    if (d > a) params->inner *= input[static_cast<size_t>(d)];
    if (d != a) output->push_back(input[static_cast<size_t>(d)]);
  }
  params->axis_size = input[static_cast<size_t>(a)];
  if (params->axis_size == 0 && params->outer * params->inner > 0) {
    *error = "dimension " + std::to_string(a) + " is empty: there is no element to take the index of";
    return false;
  }
  return true;
}

void ArgMinMax(const ArgParams& p, ElementType input_type, const void* input, ElementType index_type,
               void* output) {
  Dispatch(input_type, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t o = 0; o < p.outer; ++o) {
      for (int64_t i = 0; i < p.inner; ++i) {
        const int64_t base = o * p.axis_size * p.inner + i;
        auto best = Value(Load<T>(input, base));
        int64_t best_index = 0;
        for (int64_t k = 1; k < p.axis_size; ++k) {
          const auto v = Value(Load<T>(input, base + k * p.inner));
          if (p.is_max ? (v > best) : (v < best)) {
            best = v;
            best_index = k;
          }
        }
        const int64_t out = o * p.inner + i;
        if (index_type == ElementType::kInt64) {
          Store<int64_t>(output, out, best_index);
        } else {
          Store<int32_t>(output, out, static_cast<int32_t>(best_index));
        }
      }
    }
  });
}

void Cast(ElementType from, const void* input, ElementType to, void* output, int64_t count) {
  Dispatch(from, [&](auto from_tag) {
    using From = decltype(from_tag);
    Dispatch(to, [&](auto to_tag) {
      using To = decltype(to_tag);
      for (int64_t i = 0; i < count; ++i) Store<To>(output, i, Convert<To>(Load<From>(input, i)));
    });
  });
}

}  // namespace kiln::ops::reference
