// ARG_MAX, ARG_MIN and CAST (ops/reference/arg_cast.h) against std::max_element / std::min_element and a
// conversion written out from its rules (truncate, saturate, wrap modulo 2^bits) in wide arithmetic.

#include "ops/reference/arg_cast.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace kiln::ops::reference {
namespace {

// --- ARG_MAX / ARG_MIN ---

template <typename T>
void CheckArg(const Dims& dims, int64_t axis, bool is_max, const std::vector<T>& data, bool int64_index) {
  ArgParams params;
  Dims out_dims;
  std::string error;
  ASSERT_TRUE(MakeArgParams(dims, axis, is_max, &params, &out_dims, &error)) << error;
  const int64_t a = axis < 0 ? axis + static_cast<int64_t>(dims.size()) : axis;
  const ElementType type = std::is_same_v<T, float>     ? ElementType::kFloat32
                           : std::is_same_v<T, int32_t> ? ElementType::kInt32
                           : std::is_same_v<T, int8_t>  ? ElementType::kInt8
                                                        : ElementType::kUInt8;
  const int64_t out_count = NumElements(out_dims);
  std::vector<int64_t> got(static_cast<size_t>(out_count));
  if (int64_index) {
    ArgMinMax(params, type, data.data(), ElementType::kInt64, got.data());
  } else {
    std::vector<int32_t> got32(static_cast<size_t>(out_count));
    ArgMinMax(params, type, data.data(), ElementType::kInt32, got32.data());
    got.assign(got32.begin(), got32.end());
  }
  // Plain: each output's slice along the axis, then the first max / min element.
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(a) + 1; d < dims.size(); ++d) inner *= dims[d];
  const int64_t size = dims[static_cast<size_t>(a)];
  for (int64_t o = 0; o < out_count; ++o) {
    const int64_t outer_index = o / inner, inner_index = o % inner;
    std::vector<T> slice;
    for (int64_t k = 0; k < size; ++k)
      slice.push_back(data[static_cast<size_t>((outer_index * size + k) * inner + inner_index)]);
    const auto it =
        is_max ? std::max_element(slice.begin(), slice.end()) : std::min_element(slice.begin(), slice.end());
    ASSERT_EQ(got[static_cast<size_t>(o)], it - slice.begin()) << "output " << o << " axis " << axis;
  }
}

TEST(ArgMinMaxTest, MatchesFirstExtremeElement) {
  std::mt19937 rng(17);
  auto pick = [&](int lo, int hi) {
    return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1));
  };
  for (int iter = 0; iter < 1500; ++iter) {
    const int rank = pick(1, 6);
    Dims dims(static_cast<size_t>(rank));
    for (int64_t& d : dims) d = pick(1, 4);
    if (pick(0, 6) == 0) dims[static_cast<size_t>(pick(0, rank - 1))] = 0;
    const int64_t axis = pick(-rank, rank - 1);
    const int64_t a = axis < 0 ? axis + rank : axis;
    if (dims[static_cast<size_t>(a)] == 0) dims[static_cast<size_t>(a)] = 1;
    const int64_t n = NumElements(dims);
    const bool is_max = pick(0, 1) == 1;
    const bool wide = pick(0, 1) == 1;
    // Few distinct values, so ties are common; floats with NaNs and infinities.
    std::vector<float> f(static_cast<size_t>(n));
    for (float& v : f) {
      const int r = pick(0, 12);
      v = r == 0   ? std::numeric_limits<float>::quiet_NaN()
          : r == 1 ? -std::numeric_limits<float>::infinity()
                   : static_cast<float>(pick(-3, 3)) * 0.5f;
    }
    CheckArg(dims, axis, is_max, f, wide);
    std::vector<int32_t> i32(static_cast<size_t>(n));
    for (int32_t& v : i32) v = pick(0, 3) == 0 ? std::numeric_limits<int32_t>::min() : pick(-2, 2);
    CheckArg(dims, axis, is_max, i32, wide);
    std::vector<int8_t> i8(static_cast<size_t>(n));
    for (int8_t& v : i8) v = static_cast<int8_t>(pick(-128, 127));
    CheckArg(dims, axis, is_max, i8, wide);
    std::vector<uint8_t> u8(static_cast<size_t>(n));
    for (uint8_t& v : u8) v = static_cast<uint8_t>(pick(0, 3) * 85);
    CheckArg(dims, axis, is_max, u8, wide);
  }
}

TEST(ArgMinMaxTest, BoolAndErrors) {
  ArgParams p;
  Dims out;
  std::string error;
  ASSERT_TRUE(MakeArgParams({2, 3}, 1, true, &p, &out, &error));
  EXPECT_EQ(out, (Dims{2}));
  const uint8_t b[] = {0, 2, 1, 0, 0, 0};  // a non-zero byte is true
  int32_t idx[2] = {-1, -1};
  ArgMinMax(p, ElementType::kBool, b, ElementType::kInt32, idx);
  EXPECT_EQ(idx[0], 1);
  EXPECT_EQ(idx[1], 0);
  EXPECT_FALSE(MakeArgParams({2, 3}, 2, true, &p, &out, &error));
  EXPECT_NE(error.find("axis 2 is out of range [-2, 2)"), std::string::npos) << error;
  EXPECT_FALSE(MakeArgParams({}, 0, true, &p, &out, &error));
  EXPECT_FALSE(MakeArgParams({2, 0}, 1, true, &p, &out, &error));
  EXPECT_NE(error.find("dimension 1 is empty"), std::string::npos) << error;
  ASSERT_TRUE(MakeArgParams({0, 3}, 1, true, &p, &out, &error)) << "no outputs, nothing to take";
  EXPECT_EQ(out, (Dims{0}));
}

// --- CAST ---

const ElementType kAll[] = {ElementType::kBool,   ElementType::kUInt8,  ElementType::kInt8,
                            ElementType::kInt16,  ElementType::kUInt16, ElementType::kInt32,
                            ElementType::kUInt32, ElementType::kInt64,  ElementType::kFloat32,
                            ElementType::kFloat64};

bool IsFloat(ElementType t) { return t == ElementType::kFloat32 || t == ElementType::kFloat64; }
bool IsSigned(ElementType t) {
  return t == ElementType::kInt8 || t == ElementType::kInt16 || t == ElementType::kInt32 ||
         t == ElementType::kInt64;
}
int Bits(ElementType t) { return static_cast<int>(ElementSize(t) * 8); }

// A stored element read as a wide value.
struct Wide {
  bool is_float = false;
  long double f = 0;
  int64_t i = 0;
};

Wide Read(ElementType t, const unsigned char* p) {
  Wide w;
  switch (t) {
    case ElementType::kBool:
      w.i = p[0] != 0 ? 1 : 0;
      break;
    case ElementType::kUInt8:
      w.i = p[0];
      break;
    case ElementType::kInt8: {
      int8_t v;
      std::memcpy(&v, p, 1);
      w.i = v;
      break;
    }
    case ElementType::kInt16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      w.i = v;
      break;
    }
    case ElementType::kUInt16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      w.i = v;
      break;
    }
    case ElementType::kInt32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      w.i = v;
      break;
    }
    case ElementType::kUInt32: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      w.i = v;
      break;
    }
    case ElementType::kInt64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      w.i = v;
      break;
    }
    case ElementType::kFloat32: {
      float v;
      std::memcpy(&v, p, 4);
      w.is_float = true;
      w.f = v;
      break;
    }
    case ElementType::kFloat64: {
      double v;
      std::memcpy(&v, p, 8);
      w.is_float = true;
      w.f = v;
      break;
    }
  }
  return w;
}

// The expected bytes of `w` cast to `to`, from the rules.
std::vector<unsigned char> Expected(const Wide& w, ElementType to) {
  std::vector<unsigned char> out(ElementSize(to));
  if (to == ElementType::kBool) {
    out[0] = (w.is_float ? w.f != 0 : w.i != 0) ? 1 : 0;  // NaN != 0
    return out;
  }
  if (to == ElementType::kFloat32) {
    float v;
    if (!w.is_float) {
      v = static_cast<float>(w.i);
    } else if (std::isnan(w.f)) {
      v = std::numeric_limits<float>::quiet_NaN();
    } else if (std::isfinite(w.f) && std::fabs(w.f) > std::numeric_limits<float>::max()) {
      v = w.f > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
    } else {
      v = static_cast<float>(static_cast<double>(w.f));
    }
    std::memcpy(out.data(), &v, 4);
    return out;
  }
  if (to == ElementType::kFloat64) {
    const double v = w.is_float ? static_cast<double>(w.f) : static_cast<double>(w.i);
    std::memcpy(out.data(), &v, 8);
    return out;
  }
  const int bits = Bits(to);
  const long double lo = IsSigned(to) ? -std::ldexp(1.0L, bits - 1) : 0.0L;
  const long double hi = IsSigned(to) ? std::ldexp(1.0L, bits - 1) - 1 : std::ldexp(1.0L, bits) - 1;
  int64_t result;
  if (w.is_float) {
    if (std::isnan(w.f)) {
      result = 0;
    } else {
      const long double t = std::trunc(w.f);
      result = t <= lo   ? static_cast<int64_t>(lo)
               : t >= hi ? static_cast<int64_t>(hi)
                         : static_cast<int64_t>(t);
    }
  } else if (bits == 64) {
    result = w.i;
  } else {
    // Wrap modulo 2^bits into the type's range.
    const int64_t m = int64_t{1} << bits;
    int64_t r = ((w.i % m) + m) % m;
    if (IsSigned(to) && r >= m / 2) r -= m;
    result = r;
  }
  // Little-endian low bytes of the two's-complement result.
  for (size_t b = 0; b < out.size(); ++b)
    out[b] = static_cast<unsigned char>((static_cast<uint64_t>(result) >> (8 * b)) & 0xFFu);
  return out;
}

TEST(CastTest, EveryPairMatchesTheRules) {
  std::mt19937_64 rng(5);
  const std::vector<double> specials = {0.0,
                                        -0.0,
                                        0.5,
                                        -0.5,
                                        0.999,
                                        -0.999,
                                        1.5,
                                        -1.5,
                                        127.9,
                                        -128.9,
                                        128.0,
                                        -129.0,
                                        255.5,
                                        256.0,
                                        32767.5,
                                        -32769.0,
                                        65535.9,
                                        65536.0,
                                        2147483520.0,
                                        2147483648.0,
                                        -2147483648.0,
                                        -2147483904.0,
                                        4294967295.0,
                                        4294967296.0,
                                        9.2233720368547748e18,
                                        -9.2233720368547758e18,
                                        -9.3e18,
                                        1e30,
                                        -1e30,
                                        1e300,
                                        -1e300,
                                        std::numeric_limits<double>::infinity(),
                                        -std::numeric_limits<double>::infinity(),
                                        std::numeric_limits<double>::quiet_NaN()};
  for (ElementType from : kAll) {
    const size_t in_size = ElementSize(from);
    std::vector<unsigned char> in;
    auto push = [&](const void* p) {
      const auto* b = static_cast<const unsigned char*>(p);
      in.insert(in.end(), b, b + in_size);
    };
    if (from == ElementType::kFloat32) {
      for (double s : specials) {
        const float v =
            std::fabs(s) > 3.4e38 && std::isfinite(s) ? (s > 0 ? 3.0e38f : -3.0e38f) : static_cast<float>(s);
        push(&v);
      }
      for (int k = 0; k < 200; ++k) {
        const float v = static_cast<float>(
            std::ldexp(static_cast<double>(rng() % 2000000) - 1e6, static_cast<int>(rng() % 60) - 20));
        push(&v);
      }
    } else if (from == ElementType::kFloat64) {
      for (double s : specials) push(&s);
      for (int k = 0; k < 200; ++k) {
        const double v =
            std::ldexp(static_cast<double>(rng() % 2000000) - 1e6, static_cast<int>(rng() % 80) - 20);
        push(&v);
      }
    } else {
      // Any bit pattern is a valid integer; bool bytes other than 0 and 1 read as true.
      for (int k = 0; k < 300; ++k) {
        const uint64_t bits = k < 4 ? (k == 0   ? 0
                                       : k == 1 ? ~uint64_t{0}
                                       : k == 2 ? 1
                                                : uint64_t{1} << (in_size * 8 - 1))
                                    : rng();
        push(&bits);
      }
    }
    const int64_t count = static_cast<int64_t>(in.size() / in_size);
    for (ElementType to : kAll) {
      const size_t out_size = ElementSize(to);
      std::vector<unsigned char> out(static_cast<size_t>(count) * out_size, 0xAB);
      Cast(from, in.data(), to, out.data(), count);
      for (int64_t i = 0; i < count; ++i) {
        const Wide w = Read(from, in.data() + static_cast<size_t>(i) * in_size);
        const std::vector<unsigned char> expected = Expected(w, to);
        const unsigned char* got = out.data() + static_cast<size_t>(i) * out_size;
        if (IsFloat(to) && w.is_float && std::isnan(w.f)) {
          const Wide g = Read(to, got);
          EXPECT_TRUE(std::isnan(g.f)) << "NaN stays NaN";
          continue;
        }
        ASSERT_EQ(std::vector<unsigned char>(got, got + out_size), expected)
            << "from " << static_cast<int>(from) << " to " << static_cast<int>(to) << " element " << i
            << " value " << (w.is_float ? static_cast<double>(w.f) : static_cast<double>(w.i));
      }
    }
  }
}

}  // namespace
}  // namespace kiln::ops::reference
