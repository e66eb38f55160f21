// Plain formulations of LiteRT's fixed-point rounding for the int8 kernel tests, written from the definitions
// (long double and int64 arithmetic) rather than with the library's helpers, plus random int8 data.
#ifndef KILN_TESTS_OPS_QUANTIZED_TEST_HELPERS_H_
#define KILN_TESTS_OPS_QUANTIZED_TEST_HELPERS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "ops/reference/quantized.h"

namespace kiln::ops::reference::testing {

// One rounding: round(x * q * 2^(shift - 31)), ties up.
inline int64_t ApplySingle(int64_t x, const QuantizedMultiplier& m) {
  return static_cast<int64_t>(
      std::floor(std::ldexp(static_cast<long double>(x) * m.multiplier, m.shift - 31) + 0.5L));
}

// gemmlowp's two roundings, from their definitions: h = nearest(x' * q / 2^31) with ties of positive products
// up and of negative ones toward zero (x' = x * 2^max(shift, 0), wrapped to 32 bits as LiteRT's int32
// multiplication wraps), then h / 2^max(-shift, 0) with ties away from zero.
inline int64_t ApplyDouble(int64_t x, const QuantizedMultiplier& m) {
  const int64_t left = m.shift > 0 ? m.shift : 0, right = m.shift > 0 ? 0 : -m.shift;
  const int64_t shifted = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(x) << left));
  const long double product = static_cast<long double>(shifted) * m.multiplier / 2147483648.0L;
  long double h = product >= 0 ? std::floor(product + 0.5L) : -std::floor(-product + 0.5L);
  if (product < 0 && -product - std::floor(-product) == 0.5L) h = -std::floor(-product);  // tie toward zero
  const long double q = std::ldexp(h, -static_cast<int>(right));
  return static_cast<int64_t>(q >= 0 ? std::floor(q + 0.5L) : -std::floor(-q + 0.5L));
}

inline int8_t Clamp(int64_t v, int64_t lo = -128, int64_t hi = 127) {
  return static_cast<int8_t>(std::min(std::max(v, lo), hi));
}

inline std::vector<int8_t> RandomInt8(size_t n, std::mt19937& rng) {
  std::vector<int8_t> v(n);
  for (int8_t& x : v) x = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
  return v;
}

// Every int8 value once, in order.
inline std::vector<int8_t> AllInt8() {
  std::vector<int8_t> v(256);
  for (int i = 0; i < 256; ++i) v[static_cast<size_t>(i)] = static_cast<int8_t>(i - 128);
  return v;
}

}  // namespace kiln::ops::reference::testing

#endif  // KILN_TESTS_OPS_QUANTIZED_TEST_HELPERS_H_
