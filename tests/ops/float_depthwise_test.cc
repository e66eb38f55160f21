// Kiln's depthwise convolution (ops/simd/float_depthwise.h), each form (AVX2/FMA and AVX-512F), against a plain
// double-precision DEPTHWISE_CONV_2D written here: channel counts around the form's vectors (8; 16), kernel sizes
// 1 to 7 (3x3 and 5x5 have their own compiled forms), strides 1 to 3, SAME and VALID padding (windows crossing
// every edge), widths below, at and above a step of pixels, batches, row ranges (as the host engine splits a node
// across threads), no bias, the activation clamps, and NaN and infinity passing through. The bound is the float
// error of a sum of K products: |y - exact| <= 2 (K + 2) eps sum |x w| (+ the bias's). A form is skipped on a CPU
// without its instructions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ops/simd/float_depthwise.h"
#include "tests/ops/simd_oracle.h"

namespace kiln::ops::depthwise {
namespace {

using simd_test::kInf;

// A depthwise case: the channel count in place of CONV_2D's input and output channels.
struct Case {
  int64_t batch, in_h, in_w, channels, kernel_h, kernel_w, stride_h, stride_w;
  bool same = true;
  bool bias = true;
  float min = -kInf, max = kInf;
};

class FloatDepthwiseTest : public ::testing::TestWithParam<Width> {
 protected:
  void SetUp() override {
    if (!Available(GetParam())) {
      GTEST_SKIP() << (GetParam() == Width::kAvx512 ? "this CPU has no AVX-512F" : "this CPU has no AVX2 and FMA")
                   << " (or KILN_DISABLE_DEPTHWISE is set)";
    }
  }

  void Check(const Case& c, uint32_t seed) const {
    const simd_test::ConvCase conv_case{c.batch,    c.in_h,     c.in_w, c.channels, c.channels, c.kernel_h, c.kernel_w,
                                        c.stride_h, c.stride_w, c.same, c.bias,     c.min,      c.max};
    const Width width = GetParam();
    simd_test::CheckConvolution(conv_case, true, seed,
                                [width](const conv::ConvShape& s, const float* in, const float* w, const float* bias,
                                        float min, float max, float* out, int64_t begin, int64_t end) {
                                  Depthwise(PackDepthwise(s, w, bias, min, max, width), in, out, begin, end);
                                });
  }
};

TEST_P(FloatDepthwiseTest, PackedLayout) {
  // 11 channels, 1x2 kernel: two vectors of 8 or one of 16 (padded), taps in order inside each.
  conv::ConvShape s;
  s.in_h = s.out_h = 1;
  s.in_w = 2;
  s.out_w = 1;
  s.in_c = s.out_c = 11;
  s.kernel_w = 2;
  std::vector<float> w(22);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i + 1);
  const PackedDepthwise p = PackDepthwise(s, w.data(), nullptr, -kInf, kInf, GetParam());
  const int64_t lanes = GetParam() == Width::kAvx512 ? 16 : 8, vectors = (11 + lanes - 1) / lanes;
  EXPECT_EQ(p.width, GetParam());
  EXPECT_EQ(p.lanes, lanes);
  EXPECT_EQ(p.vectors, vectors);
  ASSERT_EQ(p.weights.size(), static_cast<size_t>(vectors * 2 * lanes));
  for (int64_t v = 0; v < vectors; ++v) {
    for (int64_t t = 0; t < 2; ++t) {
      for (int64_t j = 0; j < lanes; ++j) {
        const int64_t c = v * lanes + j;
        const float want = c < 11 ? w[static_cast<size_t>(t * 11 + c)] : 0.0f;
        EXPECT_EQ(p.weights[static_cast<size_t>((v * 2 + t) * lanes + j)], want) << "vector " << v << " tap " << t;
      }
    }
  }
  EXPECT_EQ(p.bias, simd::AlignedVector<float>(static_cast<size_t>(vectors * lanes), 0.0f));
}

TEST_P(FloatDepthwiseTest, MobileNetLayers) {
  Check({1, 112, 112, 8, 3, 3, 1, 1}, 1);  // ts_mobilenet_v1_025_224_float's first and second
  Check({1, 112, 112, 16, 3, 3, 2, 2}, 2);
  Check({1, 14, 14, 128, 3, 3, 1, 1}, 3);
  Check({1, 7, 7, 256, 3, 3, 1, 1}, 4);
  Check({1, 32, 32, 24, 5, 5, 1, 1}, 5);  // a 5x5 layer (MediaPipe's models)
}

TEST_P(FloatDepthwiseTest, ChannelsKernelsStridesAndPadding) {
  uint32_t seed = 100;
  for (int64_t channels : {1, 3, 7, 8, 9, 15, 16, 17, 21, 33}) {
    for (int64_t kernel : {1, 2, 3, 5, 7}) {
      for (int64_t stride : {1, 2, 3}) {
        for (bool same : {true, false}) {
          const int64_t size = 5 + static_cast<int64_t>(seed % 13);  // 5 to 17: below, at and above a step
          if (!same && size < kernel) continue;
          Check({1, size, size + 2, channels, kernel, kernel, stride, stride, same}, seed++);
        }
      }
    }
  }
}

TEST_P(FloatDepthwiseTest, RectangularKernelsStridesAndBatches) {
  Check({2, 9, 31, 12, 1, 3, 1, 2, true}, 300);
  Check({3, 17, 10, 5, 3, 2, 3, 1, true}, 301);
  Check({2, 12, 40, 20, 3, 5, 2, 3, false}, 302);
  Check({1, 1, 1, 16, 3, 3, 1, 1, true}, 303);  // every tap but the centre in the padding
  Check({1, 3, 3, 9, 3, 3, 2, 2, true, false}, 304);
  Check({1, 9, 11, 40, 3, 3, 1, 1, true}, 305);  // two full vectors of 16 and a tail of 8
  Check({1, 9, 11, 64, 5, 5, 2, 1, false}, 306);
}

TEST_P(FloatDepthwiseTest, ActivationClamps) {
  Check({1, 20, 21, 16, 3, 3, 2, 2, true, true, 0.0f, kInf}, 400);    // RELU
  Check({1, 20, 21, 8, 3, 3, 1, 1, true, true, 0.0f, 6.0f}, 401);     // RELU6
  Check({1, 20, 21, 13, 3, 3, 2, 2, false, true, -1.0f, 1.0f}, 402);  // RELU_N1_TO_1
}

TEST_P(FloatDepthwiseTest, NanAndInfinityPassThrough) {
  // A 1x1 depthwise convolution of 9 channels over 3 pixels: channel 0 of pixel 1 is NaN, channel 1's weight is
  // infinite.
  conv::ConvShape s;
  s.in_h = s.out_h = 1;
  s.in_w = s.out_w = 3;
  s.in_c = s.out_c = 9;
  std::vector<float> in(27, 1.0f), w(9, 2.0f);
  in[9] = std::numeric_limits<float>::quiet_NaN();
  w[1] = kInf;
  const PackedDepthwise packed = PackDepthwise(s, w.data(), nullptr, -kInf, kInf, GetParam());
  std::vector<float> out(27);
  Depthwise(packed, in.data(), out.data(), 0, 1);
  for (int64_t p = 0; p < 3; ++p) {
    for (int64_t c = 0; c < 9; ++c) {
      const float got = out[static_cast<size_t>(p * 9 + c)];
      if (p == 1 && c == 0) {
        EXPECT_TRUE(std::isnan(got));
      } else if (c == 1) {
        EXPECT_EQ(got, kInf) << "pixel " << p;
      } else {
        EXPECT_EQ(got, 2.0f) << "pixel " << p << " channel " << c;
      }
    }
  }
  const PackedDepthwise relu6 = PackDepthwise(s, w.data(), nullptr, 0.0f, 6.0f, GetParam());
  Depthwise(relu6, in.data(), out.data(), 0, 1);
  EXPECT_EQ(out[1], 6.0f);
}

INSTANTIATE_TEST_SUITE_P(Widths, FloatDepthwiseTest, ::testing::Values(Width::kAvx2, Width::kAvx512),
                         [](const ::testing::TestParamInfo<Width>& info) {
                           return info.param == Width::kAvx512 ? "Avx512" : "Avx2";
                         });

}  // namespace
}  // namespace kiln::ops::depthwise
