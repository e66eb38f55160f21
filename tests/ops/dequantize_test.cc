// DEQUANTIZE and float16 conversion against hand-worked values (ops/reference/dequantize.h).

#include "ops/reference/dequantize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace kiln::ops::reference {
namespace {

TEST(DequantizeTest, PerTensor) {
  const auto p = MakeDequantizeParams({4}, 0, {0.5f}, {-2});
  const int8_t q8[] = {-128, -2, 0, 127};
  float out[4];
  DequantizeFloat(p, q8, out);
  EXPECT_EQ(out[0], -63.0f);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], 1.0f);
  EXPECT_EQ(out[3], 64.5f);
  const uint8_t qu[] = {0, 128, 255, 1};
  const auto pu = MakeDequantizeParams({2, 2}, 0, {0.25f}, {128});
  DequantizeFloat(pu, qu, out);
  EXPECT_EQ(out[0], -32.0f);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], 31.75f);
  EXPECT_EQ(out[3], -31.75f);
  const int16_t q16[] = {-32768, 0, 32767, 100};
  const auto p16 = MakeDequantizeParams({4}, 0, {1.0f / 1024}, {0});
  DequantizeFloat(p16, q16, out);
  EXPECT_EQ(out[0], -32.0f);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], 32767.0f / 1024);
  EXPECT_EQ(out[3], 100.0f / 1024);
}

TEST(DequantizeTest, PerChannelAlongEachDimension) {
  // A [2, 3] tensor, channels along dimension 0 and then along dimension 1.
  const int8_t q[] = {1, 2, 3, 4, 5, 6};
  float out[6];
  DequantizeFloat(MakeDequantizeParams({2, 3}, 0, {1.0f, 10.0f}, {0, 1}), q, out);
  const float rows[] = {1, 2, 3, 30, 40, 50};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], rows[i]) << i;
  DequantizeFloat(MakeDequantizeParams({2, 3}, 1, {1.0f, 2.0f, 4.0f}, {0, 0, 1}), q, out);
  const float cols[] = {1, 4, 8, 4, 10, 20};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], cols[i]) << i;
  // A [1, 2, 2, 3] depthwise filter quantized along its last dimension.
  int8_t f[12];
  for (int i = 0; i < 12; ++i) f[i] = static_cast<int8_t>(i);
  float fo[12];
  DequantizeFloat(MakeDequantizeParams({1, 2, 2, 3}, 3, {1.0f, 0.5f, 0.25f}, {0, 0, 0}), f, fo);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(fo[i], i * (i % 3 == 0 ? 1.0f : i % 3 == 1 ? 0.5f : 0.25f)) << i;
}

TEST(HalfToFloatTest, KnownValues) {
  EXPECT_EQ(HalfToFloat(0x0000), 0.0f);
  EXPECT_TRUE(std::signbit(HalfToFloat(0x8000)));
  EXPECT_EQ(HalfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfToFloat(0xc000), -2.0f);
  EXPECT_EQ(HalfToFloat(0x3555), 0.333251953125f);
  EXPECT_EQ(HalfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(HalfToFloat(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(HalfToFloat(0x0400), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_EQ(HalfToFloat(0x7c00), INFINITY);
  EXPECT_EQ(HalfToFloat(0xfc00), -INFINITY);
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(HalfToFloat(0xfc01)));
}

#if defined(__FLT16_MAX__)
// The compiler's own _Float16 conversion is an independent oracle for all 65536 bit patterns.
TEST(HalfToFloatTest, MatchesCompilerFloat16ForEveryValue) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const uint16_t b = static_cast<uint16_t>(bits);
    _Float16 h;
    std::memcpy(&h, &b, 2);
    const float expected = static_cast<float>(h);
    const float actual = HalfToFloat(b);
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(actual)) << std::hex << bits;
    } else {
      ASSERT_EQ(actual, expected) << std::hex << bits;
      ASSERT_EQ(std::signbit(actual), std::signbit(expected)) << std::hex << bits;
    }
  }
}
#endif

}  // namespace
}  // namespace kiln::ops::reference
