// Kiln's float GEMM of 1x1 convolutions (ops/simd/float_gemm.h), each form (AVX2/FMA and AVX-512F), against a plain
// double-precision sum: rows around the form's step (6; 8) and output channels around its vectors and blocks (8,
// 16; 16, 32), K = 1 to 641, padded row strides, row ranges (as the host engine splits a node across threads), no
// bias, the activation clamps, and NaN and infinity passing through. The bound is the float error of a sum of K
// products: |c - exact| <= 2 (K + 2) eps sum |a w| (+ the bias's). A form is skipped on a CPU without its
// instructions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ops/simd/float_gemm.h"
#include "tests/ops/simd_oracle.h"

namespace kiln::ops::gemm {
namespace {

using simd_test::kInf;
using Case = simd_test::DenseCase;

const char* Name(Width width) { return width == Width::kAvx512 ? "Avx512" : "Avx2"; }

class FloatGemmTest : public ::testing::TestWithParam<Width> {
 protected:
  void SetUp() override {
    if (!Available(GetParam())) {
      GTEST_SKIP() << (GetParam() == Width::kAvx512 ? "this CPU has no AVX-512F" : "this CPU has no AVX2 and FMA")
                   << " (or KILN_DISABLE_GEMM is set)";
    }
  }

  // In two row ranges, as two threads would run it.
  void Check(const Case& c, uint32_t seed) const {
    const Width width = GetParam();
    simd_test::CheckDense(c, seed, [&c, width](const float* a, int64_t lda, const float* w, const float* bias,
                                               float* out, int64_t ldc) {
      const PackedGemm packed = PackGemm(w, c.n, c.k, bias, c.min, c.max, width);
      Gemm(packed, a, lda, out, ldc, 0, c.rows / 2);
      Gemm(packed, a, lda, out, ldc, c.rows / 2, c.rows);
    });
  }
};

TEST_P(FloatGemmTest, PackedLayout) {
  // n = 11, k = 3: one block of B = 16 (AVX2) or 32 (AVX-512), the rest padded, k-major inside the block.
  const int64_t block = GetParam() == Width::kAvx512 ? 32 : 16;
  std::vector<float> w(33);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i + 1);
  const PackedGemm p = PackGemm(w.data(), 11, 3, nullptr, -kInf, kInf, GetParam());
  EXPECT_EQ(p.width, GetParam());
  EXPECT_EQ(p.columns, block);
  EXPECT_EQ(p.rows, GetParam() == Width::kAvx512 ? kRows512 : kRows);
  EXPECT_EQ(p.blocks, 1);
  ASSERT_EQ(p.weights.size(), static_cast<size_t>(3 * block));
  for (int64_t kk = 0; kk < 3; ++kk) {
    for (int64_t j = 0; j < block; ++j) {
      const float want = j < 11 ? w[static_cast<size_t>(j * 3 + kk)] : 0.0f;
      EXPECT_EQ(p.weights[static_cast<size_t>(kk * block + j)], want) << "k " << kk << " output " << j;
    }
  }
  EXPECT_EQ(p.bias, simd::AlignedVector<float>(static_cast<size_t>(block), 0.0f));
}

TEST_P(FloatGemmTest, MobileNetLayers) {
  Check({112 * 112, 8, 16}, 1);
  Check({56 * 56, 16, 32}, 2);
  Check({14 * 14, 128, 128}, 3);
  Check({7 * 7, 256, 256}, 4);
}

TEST_P(FloatGemmTest, SizesAroundTheSteps) {
  uint32_t seed = 10;
  for (int64_t rows : {1, 2, 5, 6, 7, 8, 9, 12, 13, 15, 16, 17, 35}) {
    for (int64_t n : {1, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 47, 48, 65}) {
      for (int64_t k : {1, 5, 8, 17, 641}) Check({rows, k, n}, seed++);
    }
  }
}

TEST_P(FloatGemmTest, StridesBiasAndClamps) {
  Check({20, 40, 24, false, -kInf, kInf, 3, 5}, 100);
  Check({13, 33, 70, true, 0.0f, kInf}, 101);   // RELU
  Check({9, 64, 20, true, 0.0f, 6.0f, 1, 0}, 102);  // RELU6
  Check({8, 65, 35, true, -1.0f, 1.0f}, 103);   // RELU_N1_TO_1
}

TEST_P(FloatGemmTest, NanAndInfinityPassThrough) {
  const int64_t n = 19, k = 4, rows = 7;
  std::vector<float> w(static_cast<size_t>(n * k), 1.0f), a(static_cast<size_t>(rows * k), 1.0f);
  w[0] = std::numeric_limits<float>::quiet_NaN();  // output 0: NaN
  w[static_cast<size_t>(k)] = kInf;                // output 1: +inf
  const PackedGemm packed = PackGemm(w.data(), n, k, nullptr, -kInf, kInf, GetParam());
  std::vector<float> c(static_cast<size_t>(rows * n));
  Gemm(packed, a.data(), k, c.data(), n, 0, rows);
  for (int64_t r = 0; r < rows; ++r) {
    EXPECT_TRUE(std::isnan(c[static_cast<size_t>(r * n)])) << r;
    EXPECT_EQ(c[static_cast<size_t>(r * n + 1)], kInf) << r;
    for (int64_t j = 2; j < n; ++j) EXPECT_EQ(c[static_cast<size_t>(r * n + j)], 4.0f) << r << " " << j;
  }
  const PackedGemm relu6 = PackGemm(w.data(), n, k, nullptr, 0.0f, 6.0f, GetParam());
  Gemm(relu6, a.data(), k, c.data(), n, 0, rows);
  EXPECT_EQ(c[1], 6.0f);
}

INSTANTIATE_TEST_SUITE_P(Widths, FloatGemmTest, ::testing::Values(Width::kAvx2, Width::kAvx512),
                         [](const ::testing::TestParamInfo<Width>& info) { return Name(info.param); });

}  // namespace
}  // namespace kiln::ops::gemm
