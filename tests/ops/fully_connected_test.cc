// FULLY_CONNECTED and SOFTMAX against hand-worked values (ops/reference/fully_connected.h).

#include "ops/reference/fully_connected.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tests/ops/test_helpers.h"

namespace kiln::ops::reference {
namespace {

using testing::ExpectAllNear;
using testing::RandomFloats;

TEST(FullyConnectedTest, HandComputed) {
  FullyConnectedParams p{2, 3, 2, Activation::kNone};
  const std::vector<float> input = {1, 2, 3, -1, 0, 1};
  const std::vector<float> weights = {1, 1, 1, 1, 0, -1};  // unit 0 sums, unit 1 takes first minus last
  const std::vector<float> bias = {0.5f, 10};
  std::vector<float> out(4);
  FullyConnectedFloat(p, input.data(), weights.data(), bias.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{6.5f, 8, 0.5f, 8}));
  p.activation = Activation::kRelu;
  FullyConnectedFloat(p, input.data(), weights.data(), nullptr, out.data());
  EXPECT_EQ(out, (std::vector<float>{6, 0, 0, 0}));
}

TEST(FullyConnectedTest, MatchesNaiveMatmul) {
  uint32_t seed = 11;
  for (int64_t batch : {1, 2, 5})
    for (int64_t input_size : {1, 3, 16, 31})
      for (int64_t units : {1, 2, 7}) {
        FullyConnectedParams p{batch, input_size, units, Activation::kNone};
        const auto input = RandomFloats(batch * input_size, seed++);
        const auto weights = RandomFloats(units * input_size, seed++);
        const auto bias = RandomFloats(units, seed++);
        std::vector<double> expected(batch * units);
        // Column-major walk of the weights, the other way round from the kernel.
        for (int64_t u = 0; u < units; ++u)
          for (int64_t b = 0; b < batch; ++b) {
            double sum = bias[u];
            for (int64_t i = 0; i < input_size; ++i)
              sum += double(input[b * input_size + i]) * weights[u * input_size + i];
            expected[b * units + u] = sum;
          }
        std::vector<float> out(batch * units);
        FullyConnectedFloat(p, input.data(), weights.data(), bias.data(), out.data());
        ExpectAllNear(
            out, expected,
            "fc " + std::to_string(batch) + "x" + std::to_string(input_size) + "x" + std::to_string(units));
      }
}

TEST(SoftmaxTest, HandComputed) {
  SoftmaxParams p{1, 3, 1.0f};
  const std::vector<float> input = {0, std::log(2.0f), std::log(5.0f)};
  std::vector<float> out(3);
  SoftmaxFloat(p, input.data(), out.data());
  EXPECT_NEAR(out[0], 1.0 / 8, 1e-7);
  EXPECT_NEAR(out[1], 2.0 / 8, 1e-7);
  EXPECT_NEAR(out[2], 5.0 / 8, 1e-7);
  // beta scales the logits: beta 0 gives a uniform distribution.
  p.beta = 0;
  SoftmaxFloat(p, input.data(), out.data());
  for (float v : out) EXPECT_NEAR(v, 1.0 / 3, 1e-7);
}

TEST(SoftmaxTest, StableForLargeLogits) {
  SoftmaxParams p{2, 2, 1.0f};
  const std::vector<float> input = {1000, 1000, -1000, -999};
  std::vector<float> out(4);
  SoftmaxFloat(p, input.data(), out.data());
  EXPECT_FLOAT_EQ(out[0], 0.5f);
  EXPECT_FLOAT_EQ(out[1], 0.5f);
  EXPECT_NEAR(out[2], 1.0 / (1.0 + std::exp(1.0)), 1e-6);
  EXPECT_NEAR(out[3], 1.0 / (1.0 + std::exp(-1.0)), 1e-6);
}

TEST(SoftmaxTest, MatchesNaiveRows) {
  uint32_t seed = 5;
  for (int64_t outer : {1, 3, 4})
    for (int64_t depth : {1, 2, 10, 33})
      for (float beta : {1.0f, 0.5f, 2.5f}) {
        const auto input = RandomFloats(outer * depth, seed++, -5, 5);
        std::vector<double> expected(outer * depth);
        for (int64_t o = 0; o < outer; ++o) {
          double sum = 0;
          for (int64_t i = 0; i < depth; ++i) sum += std::exp(beta * double(input[o * depth + i]));
          for (int64_t i = 0; i < depth; ++i)
            expected[o * depth + i] = std::exp(beta * double(input[o * depth + i])) / sum;
        }
        std::vector<float> out(outer * depth);
        SoftmaxFloat(SoftmaxParams{outer, depth, beta}, input.data(), out.data());
        ExpectAllNear(out, expected, "softmax " + std::to_string(outer) + "x" + std::to_string(depth));
      }
}

// BATCH_MATMUL against a plain triple loop in double over transposed operands and repeated (broadcast) matrices.
TEST(BatchMatMulTest, MatchesPlainOverAdjointsAndBatchMaps) {
  for (bool adj_x : {false, true}) {
    for (bool adj_y : {false, true}) {
      BatchMatMulParams p;
      p.rows = 3;
      p.depth = 5;
      p.cols = 4;
      p.adj_x = adj_x;
      p.adj_y = adj_y;
      p.lhs_batch = {0, 1, 0, 1};  // lhs has 2 matrices, rhs 1, 4 output batches
      p.rhs_batch = {0, 0, 0, 0};
      const auto lhs = RandomFloats(2 * 3 * 5, adj_x ? 3 : 4);
      const auto rhs = RandomFloats(5 * 4, adj_y ? 5 : 6);
      std::vector<double> want;
      for (size_t b = 0; b < p.lhs_batch.size(); ++b) {
        for (int64_t i = 0; i < 3; ++i) {
          for (int64_t j = 0; j < 4; ++j) {
            double sum = 0;
            for (int64_t d = 0; d < 5; ++d) {
              const float* a = lhs.data() + p.lhs_batch[b] * 15;
              const double x = adj_x ? a[d * 3 + i] : a[i * 5 + d];
              const double y = adj_y ? rhs[j * 5 + d] : rhs[d * 4 + j];
              sum += x * y;
            }
            want.push_back(sum);
          }
        }
      }
      std::vector<float> got(want.size());
      BatchMatMulFloat(p, lhs.data(), rhs.data(), got.data());
      ExpectAllNear(got, want, std::string("adj_x ") + (adj_x ? "1" : "0") + " adj_y " + (adj_y ? "1" : "0"));
    }
  }
}

}  // namespace
}  // namespace kiln::ops::reference
