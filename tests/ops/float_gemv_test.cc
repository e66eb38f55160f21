// Kiln's AVX2/FMA float GEMV (ops/simd/float_gemv.h) against a plain double-precision FULLY_CONNECTED: sizes that
// are and are not multiples of the kernel's vectors (8 outputs) and blocks (32 outputs), K = 1 and odd K (the
// kernel splits k into even and odd sums), 1 to 4 rows with padded row strides, block ranges (as the host engine
// splits a node across threads), no bias, the activation clamps, and NaN and infinity passing through. The bound
// is the float error of a sum of K products in any order: |y - exact| <= 2 K eps sum_k |x w| (+ the bias's).
// Each case runs on both forms (AVX2, AVX-512F), each skipped on a CPU without its instructions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ops/simd/float_gemv.h"
#include "tests/ops/simd_oracle.h"

namespace kiln::ops::gemv {
namespace {

using Case = simd_test::DenseCase;

// In two block ranges, as two threads would run it.
void Check(const Case& c, uint32_t seed, Width width) {
  simd_test::CheckDense(c, seed, [&c, width](const float* x, int64_t ldx, const float* w, const float* bias,
                                             float* y, int64_t ldy) {
    const PackedGemv packed = PackGemv(w, c.n, c.k, bias, c.min, c.max, width);
    const int64_t middle = packed.blocks / 2;
    Gemv(packed, x, ldx, y, ldy, c.rows, 0, middle);
    Gemv(packed, x, ldx, y, ldy, c.rows, middle, packed.blocks);
  });
}

class FloatGemvTest : public ::testing::TestWithParam<Width> {
 protected:
  void SetUp() override {
    if (!Available(GetParam())) {
      GTEST_SKIP() << (GetParam() == Width::kAvx512 ? "this CPU has no AVX-512F" : "this CPU has no AVX2 and FMA")
                   << " (or KILN_DISABLE_GEMV is set)";
    }
  }
  void Check(const Case& c, uint32_t seed) const { gemv::Check(c, seed, GetParam()); }
};

TEST_P(FloatGemvTest, PackedLayout) {
  // n = 11, k = 3: one block of 2 vectors (the second padded), k-major inside the block.
  std::vector<float> w(33);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i + 1);
  const PackedGemv p = PackGemv(w.data(), 11, 3, nullptr, 0.0f, 1.0f, GetParam());
  EXPECT_EQ(p.blocks, 1);
  ASSERT_EQ(p.weights.size(), 3u * 16u);
  for (int64_t kk = 0; kk < 3; ++kk) {
    for (int64_t j = 0; j < 16; ++j) {
      const float want = j < 11 ? w[static_cast<size_t>(j * 3 + kk)] : 0.0f;
      EXPECT_EQ(p.weights[static_cast<size_t>(kk * 16 + j)], want) << "k " << kk << " output " << j;
    }
  }
  EXPECT_EQ(p.bias, simd::AlignedVector<float>(16, 0.0f));
}

TEST_P(FloatGemvTest, SizesAroundTheBlocks) {
  uint32_t seed = 1;
  for (int64_t n : {1, 7, 8, 9, 16, 24, 31, 32, 33, 40, 64, 65, 100, 128, 640}) {
    for (int64_t k : {1, 2, 3, 8, 17, 128, 641}) Check({1, k, n}, seed++);
  }
}

TEST_P(FloatGemvTest, RowsStridesAndBias) {
  Check({2, 128, 128, true, -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(), 3, 5},
        100);
  Check({3, 33, 70, false}, 101);
  Check({4, 640, 8, true, -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(), 1, 0},
        102);
}

TEST_P(FloatGemvTest, ActivationClamps) {
  Check({1, 64, 96, true, 0.0f, std::numeric_limits<float>::infinity()}, 200);  // RELU
  Check({2, 64, 96, true, 0.0f, 6.0f}, 201);                                    // RELU6
  Check({1, 65, 35, true, -1.0f, 1.0f}, 202);                                   // RELU_N1_TO_1
}

TEST_P(FloatGemvTest, NanAndInfinityPassThrough) {
  const int64_t n = 9, k = 4;
  std::vector<float> w(static_cast<size_t>(n * k), 1.0f), x = {1.0f, 2.0f, 3.0f, 4.0f};
  w[0] = std::numeric_limits<float>::quiet_NaN();                 // output 0: NaN
  w[static_cast<size_t>(k)] = std::numeric_limits<float>::infinity();  // output 1: +inf
  const float inf = std::numeric_limits<float>::infinity();
  const PackedGemv packed = PackGemv(w.data(), n, k, nullptr, -inf, inf, GetParam());
  std::vector<float> y(static_cast<size_t>(n));
  Gemv(packed, x.data(), k, y.data(), n, 1, 0, packed.blocks);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], inf);
  for (int64_t j = 2; j < n; ++j) EXPECT_EQ(y[static_cast<size_t>(j)], 10.0f) << j;
  // With RELU6, +inf clamps to 6.
  const PackedGemv relu6 = PackGemv(w.data(), n, k, nullptr, 0.0f, 6.0f, GetParam());
  Gemv(relu6, x.data(), k, y.data(), n, 1, 0, relu6.blocks);
  EXPECT_EQ(y[1], 6.0f);
  EXPECT_EQ(y[2], 6.0f);
}

INSTANTIATE_TEST_SUITE_P(Widths, FloatGemvTest, ::testing::Values(Width::kAvx2, Width::kAvx512),
                         [](const ::testing::TestParamInfo<Width>& info) {
                           return std::string(info.param == Width::kAvx512 ? "Avx512" : "Avx2");
                         });

}  // namespace
}  // namespace kiln::ops::gemv
