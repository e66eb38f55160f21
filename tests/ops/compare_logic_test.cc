// The element math of ops/reference/compare_logic.h against independent formulations written here: the
// quantized comparison rescaling against real-valued arithmetic, FLOOR_DIV/FLOOR_MOD against floor of a double
// quotient and the division identity, POW against repeated multiplication, and the three-operand broadcast walk
// against div/mod index arithmetic.
#include "ops/reference/compare_logic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ops/reference/elementwise.h"

namespace kiln::ops::reference {
namespace {

TEST(CompareLogicTest, ScalingRefusesScalesNotBelowOne) {
  CompareScaling s;
  EXPECT_TRUE(MakeCompareScaling(0.999f, 0, &s));
  EXPECT_FALSE(MakeCompareScaling(1.0f, 0, &s));
  EXPECT_FALSE(MakeCompareScaling(2.0f, 0, &s));
  EXPECT_FALSE(MakeCompareScaling(0.0f, 0, &s));
  EXPECT_FALSE(MakeCompareScaling(-0.5f, 0, &s));
  EXPECT_FALSE(MakeCompareScaling(std::numeric_limits<float>::infinity(), 0, &s));
}

TEST(CompareLogicTest, ScaledValuesTrackRealValues) {
  // Within one unit of (q - zp) * 256 * scale (two roundings), and never decreasing in q.
  for (float scale : {0.9f, 0.5f, 0.1f, 0.0234f, 0.0007f, 1e-5f}) {
    for (int zp : {-128, -3, 0, 17, 127}) {
      CompareScaling s;
      ASSERT_TRUE(MakeCompareScaling(scale, zp, &s));
      int32_t previous = std::numeric_limits<int32_t>::min();
      for (int q = -128; q <= 127; ++q) {
        const int32_t v = ScaleForCompare(q, s);
        const double real = static_cast<double>(q - zp) * 256.0 * static_cast<double>(scale);
        EXPECT_LE(std::fabs(v - real), 1.0) << scale << " " << zp << " " << q;
        EXPECT_GE(v, previous);
        previous = v;
      }
    }
  }
  // The hand case of the wrapper test: 2 * 256 * 0.0007 = 0.358 -> 0, 3 * 256 * 0.0007 = 0.538 -> 1.
  CompareScaling s;
  ASSERT_TRUE(MakeCompareScaling(0.0007f, 0, &s));
  EXPECT_EQ(ScaleForCompare(2, s), 0);
  EXPECT_EQ(ScaleForCompare(3, s), 1);
  EXPECT_EQ(ScaleForCompare(-2, s), 0);
  EXPECT_EQ(ScaleForCompare(-3, s), -1);
}

TEST(CompareLogicTest, CompareOps) {
  EXPECT_TRUE(Compare(CompareOp::kEqual, 2, 2));
  EXPECT_FALSE(Compare(CompareOp::kNotEqual, 2, 2));
  EXPECT_TRUE(Compare(CompareOp::kLess, -1.5f, 0.0f));
  EXPECT_TRUE(Compare(CompareOp::kLessEqual, int64_t{3}, int64_t{3}));
  EXPECT_FALSE(Compare(CompareOp::kGreater, 3, 3));
  EXPECT_TRUE(Compare(CompareOp::kGreaterEqual, 3, 3));
  const float nan = std::nanf("");
  EXPECT_FALSE(Compare(CompareOp::kEqual, nan, nan));
  EXPECT_TRUE(Compare(CompareOp::kNotEqual, nan, nan));
  EXPECT_FALSE(Compare(CompareOp::kLessEqual, nan, 1.0f));
}

template <typename T>
void CheckFloorDivMod(int lo, int hi) {
  for (int a = lo; a <= hi; ++a) {
    for (int b = lo; b <= hi; ++b) {
      if (b == 0) continue;
      const T q = FloorDivInt<T>(static_cast<T>(a), static_cast<T>(b));
      const T r = FloorModInt<T>(static_cast<T>(a), static_cast<T>(b));
      EXPECT_EQ(q, static_cast<T>(std::floor(static_cast<double>(a) / b))) << a << " / " << b;
      EXPECT_EQ(static_cast<int64_t>(q) * b + r, a) << a << " mod " << b;
      EXPECT_TRUE(r == 0 || ((r < 0) == (b < 0))) << a << " mod " << b;
    }
  }
}

TEST(CompareLogicTest, FloorDivAndMod) {
  CheckFloorDivMod<int32_t>(-40, 40);
  CheckFloorDivMod<int64_t>(-40, 40);
  CheckFloorDivMod<int16_t>(-40, 40);
  CheckFloorDivMod<int8_t>(-127, 127);  // -128 / -1 overflows: below
  EXPECT_EQ(FloorDivInt<int8_t>(-128, -1), -128);
  EXPECT_EQ(FloorModInt<int8_t>(-128, -1), 0);
  EXPECT_EQ(FloorDivInt<int32_t>(std::numeric_limits<int32_t>::min(), -1), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(FloorDivInt<int64_t>(std::numeric_limits<int64_t>::min(), -1), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(FloorModInt<int64_t>(std::numeric_limits<int64_t>::min(), -1), 0);
  EXPECT_EQ(FloorModFloat(-7.5f, 2.0f), 0.5f);
  EXPECT_EQ(FloorModFloat(7.5f, -2.0f), -0.5f);
  EXPECT_TRUE(std::isnan(FloorModFloat(1.0f, 0.0f)));
}

TEST(CompareLogicTest, PowInt32) {
  for (int a = -9; a <= 9; ++a) {
    int64_t p = 1;
    for (int b = 0; b <= 9; ++b) {
      EXPECT_EQ(PowInt32(a, b), static_cast<int32_t>(p)) << a << "^" << b;
      p *= a;
    }
  }
  EXPECT_EQ(PowInt32(-2, 31), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(PowInt32(2, 31), std::numeric_limits<int32_t>::min());  // beyond int32
  EXPECT_EQ(PowInt32(3, 40), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(PowInt32(0, 0), 1);
}

TEST(CompareLogicTest, Sign) {
  EXPECT_EQ(Sign(-3), -1);
  EXPECT_EQ(Sign(0), 0);
  EXPECT_EQ(Sign(std::numeric_limits<int32_t>::min()), -1);
  EXPECT_EQ(Sign(0.25f), 1.0f);
  EXPECT_EQ(Sign(-0.0f), 0.0f);
  EXPECT_TRUE(std::isnan(Sign(std::nanf(""))));
}

TEST(CompareLogicTest, BroadcastWalkOfThree) {
  const Dims c = {3, 1, 1}, x = {1, 4, 1}, y = {2}, out = {3, 4, 2};
  std::vector<int64_t> seen;
  ForEachBroadcast3(out, BroadcastStrides(c, out), BroadcastStrides(x, out), BroadcastStrides(y, out),
                    [&](int64_t i, int64_t ic, int64_t ix, int64_t iy) {
                      const int64_t i0 = i / 8, i1 = (i / 2) % 4, i2 = i % 2;
                      EXPECT_EQ(ic, i0) << i;
                      EXPECT_EQ(ix, i1) << i;
                      EXPECT_EQ(iy, i2) << i;
                      seen.push_back(i);
                    });
  EXPECT_EQ(seen.size(), 24u);
  int calls = 0;
  ForEachBroadcast3({2, 0}, {0, 0}, {0, 1}, {0, 1}, [&](int64_t, int64_t, int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  ForEachBroadcast3({}, {}, {}, {}, [&](int64_t i, int64_t ic, int64_t ix, int64_t iy) {
    EXPECT_EQ(i + ic + ix + iy, 0);
    ++calls;
  });
  EXPECT_EQ(calls, 1);  // rank 0: one element
}

}  // namespace
}  // namespace kiln::ops::reference
