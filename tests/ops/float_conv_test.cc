// Kiln's AVX2/FMA direct convolution over few input channels (ops/simd/float_conv.h) against a plain double-precision
// CONV_2D written here: 1 to 4 input channels, output channels around the kernel's blocks (8 and 16), kernel sizes
// 1 to 7, strides 1 to 3, SAME and VALID padding (windows crossing every edge), widths below, at and above a step
// of pixels, batches, row ranges (as the host engine splits a node across threads), no bias, the activation clamps,
// and NaN and infinity passing through. The bound is the float error of a sum of K products in any order:
// |y - exact| <= 2 (K + 2) eps sum |x w| (+ the bias's). Skipped on a CPU without AVX2 and FMA.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ops/simd/float_conv.h"
#include "tests/ops/simd_oracle.h"

namespace kiln::ops::conv {
namespace {

using simd_test::ConvCase;
using simd_test::kInf;

void Check(const ConvCase& c, uint32_t seed) {
  simd_test::CheckConvolution(c, false, seed,
                              [](const ConvShape& s, const float* in, const float* w, const float* bias, float min,
                                 float max, float* out, int64_t begin, int64_t end) {
                                Conv(PackConv(s, w, bias, min, max), in, out, begin, end);
                              });
}

class FloatConvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Available()) GTEST_SKIP() << "this CPU has no AVX2 and FMA (or KILN_DISABLE_CONV is set)";
  }
};

TEST_F(FloatConvTest, PackedLayout) {
  // out_c = 11, 1x2 kernel, 3 channels: one block of 2 vectors (the second padded), taps (kx, c) in order.
  ConvShape s;
  s.in_h = 1;
  s.in_w = 2;
  s.in_c = 3;
  s.out_h = 1;
  s.out_w = 1;
  s.out_c = 11;
  s.kernel_w = 2;
  std::vector<float> w(11 * 2 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i + 1);
  const PackedConv p = PackConv(s, w.data(), nullptr, -kInf, kInf);
  EXPECT_EQ(p.vectors, 2);
  EXPECT_EQ(p.blocks, 1);
  ASSERT_EQ(p.weights.size(), 6u * 16u);
  for (int64_t t = 0; t < 6; ++t) {
    for (int64_t j = 0; j < 16; ++j) {
      const float want = j < 11 ? w[static_cast<size_t>(j * 6 + t)] : 0.0f;
      EXPECT_EQ(p.weights[static_cast<size_t>(t * 16 + j)], want) << "tap " << t << " output " << j;
    }
  }
  EXPECT_EQ(p.bias, simd::AlignedVector<float>(16, 0.0f));
}

TEST_F(FloatConvTest, FirstLayersOfImageModels) {
  Check({1, 224, 224, 3, 8, 3, 3, 2, 2}, 1);   // ts_mobilenet_v1_025_224_float's
  Check({1, 224, 224, 3, 32, 3, 3, 2, 2}, 2);  // mobilenet v1 and v2 at full width
  Check({1, 128, 128, 3, 24, 5, 5, 2, 2}, 3);  // a 5x5 stem
  Check({1, 96, 96, 3, 16, 7, 7, 2, 2}, 4);    // a 7x7 stem, odd padding
}

TEST_F(FloatConvTest, ChannelsKernelsStridesAndPadding) {
  uint32_t seed = 100;
  for (int64_t in_c : {1, 2, 3, 4}) {
    for (int64_t out_c : {1, 7, 8, 9, 16, 17, 33}) {
      for (int64_t kernel : {1, 2, 3, 5}) {
        for (int64_t stride : {1, 2, 3}) {
          for (bool same : {true, false}) {
            const int64_t size = 5 + static_cast<int64_t>(seed % 13);  // 5 to 17: below, at and above a step
            if (!same && size < kernel) continue;
            Check({1, size, size + 3, in_c, out_c, kernel, kernel, stride, stride, same}, seed++);
          }
        }
      }
    }
  }
}

TEST_F(FloatConvTest, RectangularKernelsStridesAndBatches) {
  Check({2, 9, 31, 3, 12, 1, 3, 1, 2, true}, 300);
  Check({3, 17, 10, 2, 8, 4, 2, 3, 1, true}, 301);
  Check({2, 12, 40, 4, 20, 3, 5, 2, 3, false}, 302);
  Check({1, 1, 1, 3, 16, 3, 3, 1, 1, true}, 303);  // every tap but the centre in the padding
  Check({1, 3, 3, 1, 5, 3, 3, 2, 2, true, false}, 304);
}

TEST_F(FloatConvTest, ActivationClamps) {
  Check({1, 20, 21, 3, 16, 3, 3, 2, 2, true, true, 0.0f, kInf}, 400);  // RELU
  Check({1, 20, 21, 3, 8, 3, 3, 1, 1, true, true, 0.0f, 6.0f}, 401);   // RELU6
  Check({1, 20, 21, 2, 24, 3, 3, 2, 2, false, true, -1.0f, 1.0f}, 402);  // RELU_N1_TO_1
}

TEST_F(FloatConvTest, NanAndInfinityPassThrough) {
  // A 1x1 convolution of 3 channels over 9 pixels: output 0 of pixel 4 reads a NaN, output 1 of every pixel an
  // infinite weight.
  ConvShape s;
  s.in_h = 3;
  s.in_w = 3;
  s.in_c = 3;
  s.out_h = 3;
  s.out_w = 3;
  s.out_c = 9;
  std::vector<float> in(27, 1.0f), w(27, 1.0f);
  in[4 * 3] = std::numeric_limits<float>::quiet_NaN();
  w[3] = kInf;
  const PackedConv packed = PackConv(s, w.data(), nullptr, -kInf, kInf);
  std::vector<float> out(81);
  Conv(packed, in.data(), out.data(), 0, 3);
  for (int64_t p = 0; p < 9; ++p) {
    for (int64_t o = 0; o < 9; ++o) {
      const float got = out[static_cast<size_t>(p * 9 + o)];
      if (p == 4 && o != 1) {
        EXPECT_TRUE(std::isnan(got)) << "pixel " << p << " output " << o;
      } else if (o == 1) {
        EXPECT_TRUE(p == 4 ? std::isnan(got) : got == kInf) << "pixel " << p << " output " << o << ": " << got;
      } else {
        EXPECT_EQ(got, 3.0f) << "pixel " << p << " output " << o;
      }
    }
  }
  const PackedConv relu6 = PackConv(s, w.data(), nullptr, 0.0f, 6.0f);
  Conv(relu6, in.data(), out.data(), 0, 3);
  EXPECT_EQ(out[1], 6.0f);
}

}  // namespace
}  // namespace kiln::ops::conv
