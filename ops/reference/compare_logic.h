// The element math of the comparison, select and integer-aware arithmetic ops (ops/compare_logic_ops.cc):
// comparisons (with LiteRT's rescaling of 8-bit quantized inputs), FLOOR_DIV, FLOOR_MOD, POW, SIGN, and the
// three-operand broadcast walk of SELECT_V2.
#ifndef KILN_OPS_REFERENCE_COMPARE_LOGIC_H_
#define KILN_OPS_REFERENCE_COMPARE_LOGIC_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "ops/reference/common.h"
#include "ops/reference/quantized.h"

namespace kiln::ops::reference {

enum class CompareOp { kEqual, kNotEqual, kLess, kLessEqual, kGreater, kGreaterEqual };

template <typename T>
bool Compare(CompareOp op, T a, T b) {
  switch (op) {
    case CompareOp::kEqual: return a == b;
    case CompareOp::kNotEqual: return a != b;
    case CompareOp::kLess: return a < b;
    case CompareOp::kLessEqual: return a <= b;
    case CompareOp::kGreater: return a > b;
    case CompareOp::kGreaterEqual: return a >= b;
  }
  return false;
}

// LiteRT compares 8-bit (and quantized int16) inputs after bringing each to one fixed-point form: ((q - zero_point) * 2^8)
// times the input's scale as a multiplier below one (gemmlowp's double rounding). Inputs of different
// quantizations so compare by real value, and values closer than the rounding compare equal.
struct CompareScaling {
  int32_t offset = 0;  // -zero_point
  QuantizedMultiplier multiplier;
};
constexpr int kCompareLeftShift = 8;

// False where `scale` is not below 1 (LiteRT's kernel has no defined result then) or not finite and positive.
bool MakeCompareScaling(float scale, int32_t zero_point, CompareScaling* scaling);

// q's fixed-point form; |q + offset| <= 65535 (8-bit and int16 values with a zero point of their type).
int32_t ScaleForCompare(int32_t q, const CompareScaling& scaling);

// Integer floor division and modulo (the remainder has b's sign), exact; b != 0. The one overflowing case, the
// type's minimum divided by -1, wraps: the quotient is the minimum (LiteRT's result on x86), the remainder 0.
template <typename T>
T FloorDivInt(T a, T b) {
  using U = std::make_unsigned_t<T>;
  if (b == -1) return static_cast<T>(static_cast<U>(U{0} - static_cast<U>(a)));
  T q = static_cast<T>(a / b);
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
template <typename T>
T FloorModInt(T a, T b) {
  if (b == -1) return 0;
  const T r = static_cast<T>(a % b);
  return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
}
// Float FLOOR_MOD: fmod with the remainder moved to b's sign (NaN for b == 0).
inline float FloorModFloat(float a, float b) {
  const float r = std::fmod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// int32 a^b for b >= 0 as LiteRT computes it: in double, converted to int32; a result outside int32 gives
// INT32_MIN (what LiteRT's conversion gives on x86, here defined rather than undefined). Exact below 2^53.
inline int32_t PowInt32(int32_t a, int32_t b) {
  const double r = std::pow(static_cast<double>(a), static_cast<double>(b));
  if (!(r >= -2147483648.0 && r <= 2147483647.0)) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(r);
}

// -1, 0 or 1; NaN stays NaN (as LiteRT).
template <typename T>
T Sign(T x) {
  if (x != x) return x;
  return static_cast<T>((T(0) < x) - (x < T(0)));
}

// Calls visit(output_index, c_offset, x_offset, y_offset) for every element of `output_dims` in row-major order,
// each operand moving by its stride per output dimension (0 where it is broadcast; see BroadcastStrides).
template <typename Visit>
void ForEachBroadcast3(const Dims& output_dims, const Dims& c_strides, const Dims& x_strides, const Dims& y_strides,
                       Visit&& visit) {
  const int64_t count = NumElements(output_dims);
  const size_t rank = output_dims.size();
  std::vector<int64_t> index(rank, 0);
  int64_t ic = 0, ix = 0, iy = 0;
  for (int64_t i = 0; i < count; ++i) {
    visit(i, ic, ix, iy);
    for (size_t d = rank; d-- > 0;) {
      ++index[d];
      ic += c_strides[d];
      ix += x_strides[d];
      iy += y_strides[d];
      if (index[d] < output_dims[d]) break;
      ic -= c_strides[d] * index[d];
      ix -= x_strides[d] * index[d];
      iy -= y_strides[d] * index[d];
      index[d] = 0;
    }
  }
}

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_COMPARE_LOGIC_H_
