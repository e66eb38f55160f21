// Elementwise ops and broadcasting against hand-worked values (ops/reference/elementwise.h).

#include "ops/reference/elementwise.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/ops/test_helpers.h"

namespace kiln::ops::reference {
namespace {

using testing::ExpectAllNear;
using testing::RandomFloats;

TEST(BroadcastShapeTest, NumpyRules) {
  Dims out;
  ASSERT_TRUE(BroadcastShape({2, 3}, {3}, &out));
  EXPECT_EQ(out, (Dims{2, 3}));
  ASSERT_TRUE(BroadcastShape({4, 1, 5}, {3, 1}, &out));
  EXPECT_EQ(out, (Dims{4, 3, 5}));
  ASSERT_TRUE(BroadcastShape({}, {2, 2}, &out));
  EXPECT_EQ(out, (Dims{2, 2}));
  ASSERT_TRUE(BroadcastShape({1}, {}, &out));
  EXPECT_EQ(out, (Dims{1}));
  // A 1 broadcasts even against 0; 0 against anything but 0 or 1 does not.
  ASSERT_TRUE(BroadcastShape({0, 3}, {1, 3}, &out));
  EXPECT_EQ(out, (Dims{0, 3}));
  EXPECT_FALSE(BroadcastShape({0, 3}, {2, 3}, &out));
  EXPECT_FALSE(BroadcastShape({2, 3}, {3, 2}, &out));
  EXPECT_FALSE(BroadcastShape({4}, {5}, &out));
}

TEST(BinaryFloatTest, HandComputed) {
  BinaryParams params;
  // [2,3] + [3]
  ASSERT_TRUE(MakeBinaryParams(BinaryOp::kAdd, Activation::kNone, {2, 3}, {3}, &params));
  std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {10, 20, 30}, out(6);
  BinaryFloat(params, a.data(), b.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{11, 22, 33, 14, 25, 36}));
  // [2,1] - [1,3]: an outer difference.
  ASSERT_TRUE(MakeBinaryParams(BinaryOp::kSub, Activation::kNone, {2, 1}, {1, 3}, &params));
  std::vector<float> c = {1, 2}, d = {1, 2, 3};
  BinaryFloat(params, c.data(), d.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{0, -1, -2, 1, 0, -1}));
  // Scalar * tensor with RELU6.
  ASSERT_TRUE(MakeBinaryParams(BinaryOp::kMul, Activation::kRelu6, {}, {4}, &params));
  std::vector<float> s = {3}, e = {-1, 1, 2, 3}, out4(4);
  BinaryFloat(params, s.data(), e.data(), out4.data());
  EXPECT_EQ(out4, (std::vector<float>{0, 3, 6, 6}));
  // DIV with RELU_N1_TO_1.
  ASSERT_TRUE(MakeBinaryParams(BinaryOp::kDiv, Activation::kReluN1To1, {4}, {4}, &params));
  std::vector<float> n = {1, -6, 1, 3}, m = {4, 2, -2, 2};
  BinaryFloat(params, n.data(), m.data(), out4.data());
  EXPECT_EQ(out4, (std::vector<float>{0.25f, -1, -0.5f, 1}));
  // ATAN2(y, x) picks the quadrant from both signs.
  ASSERT_TRUE(MakeBinaryParams(BinaryOp::kAtan2, Activation::kNone, {4}, {4}, &params));
  std::vector<float> y = {1, 1, -1, 0}, x = {1, -1, -1, -1};
  BinaryFloat(params, y.data(), x.data(), out4.data());
  EXPECT_FLOAT_EQ(out4[0], static_cast<float>(M_PI / 4));
  EXPECT_FLOAT_EQ(out4[1], static_cast<float>(3 * M_PI / 4));
  EXPECT_FLOAT_EQ(out4[2], static_cast<float>(-3 * M_PI / 4));
  EXPECT_FLOAT_EQ(out4[3], static_cast<float>(M_PI));
  // TANH as a fused activation.
  ASSERT_TRUE(MakeBinaryParams(BinaryOp::kAdd, Activation::kTanh, {1}, {1}, &params));
  std::vector<float> one = {0.25f}, two = {0.25f}, r(1);
  BinaryFloat(params, one.data(), two.data(), r.data());
  EXPECT_FLOAT_EQ(r[0], std::tanh(0.5f));
}

// Naive broadcasting: unravel each output index and clamp it into each operand's shape.
std::vector<double> NaiveBinary(BinaryOp op, Activation activation, const Dims& a_dims,
                                const std::vector<float>& a, const Dims& b_dims, const std::vector<float>& b,
                                const Dims& out_dims) {
  const size_t rank = out_dims.size();
  auto pad = [&](const Dims& d) {
    Dims p(rank - d.size(), 1);
    p.insert(p.end(), d.begin(), d.end());
    return p;
  };
  const Dims pa = pad(a_dims), pb = pad(b_dims);
  std::vector<double> out(NumElements(out_dims));
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t rem = static_cast<int64_t>(i);
    Dims idx(rank);
    for (size_t d = rank; d-- > 0;) {
      idx[d] = rem % out_dims[d];
      rem /= out_dims[d];
    }
    int64_t ia = 0, ib = 0;
    for (size_t d = 0; d < rank; ++d) {
      ia = ia * pa[d] + (pa[d] == 1 ? 0 : idx[d]);
      ib = ib * pb[d] + (pb[d] == 1 ? 0 : idx[d]);
    }
    const double x = a[ia], y = b[ib];
    double v = 0;
    switch (op) {
      case BinaryOp::kAdd:
        v = x + y;
        break;
      case BinaryOp::kSub:
        v = x - y;
        break;
      case BinaryOp::kMul:
        v = x * y;
        break;
      case BinaryOp::kDiv:
        v = x / y;
        break;
      case BinaryOp::kAtan2:
        v = std::atan2(x, y);
        break;
      case BinaryOp::kMaximum:
        v = std::fmax(x, y);
        break;
      case BinaryOp::kMinimum:
        v = std::fmin(x, y);
        break;
      case BinaryOp::kSquaredDifference:
        v = (x - y) * (x - y);
        break;
      case BinaryOp::kPrelu:
        v = x >= 0 ? x : x * y;
        break;
    }
    switch (activation) {
      case Activation::kNone:
        break;
      case Activation::kRelu:
        v = std::max(0.0, v);
        break;
      case Activation::kReluN1To1:
        v = std::min(1.0, std::max(-1.0, v));
        break;
      case Activation::kRelu6:
        v = std::min(6.0, std::max(0.0, v));
        break;
      case Activation::kTanh:
        v = std::tanh(v);
        break;
      case Activation::kSigmoid:
        v = 1.0 / (1.0 + std::exp(-v));
        break;
    }
    out[i] = v;
  }
  return out;
}

TEST(BinaryFloatTest, MatchesNaiveBroadcastingUpTo6D) {
  const std::vector<std::pair<Dims, Dims>> cases = {
      {{1}, {1}},
      {{7}, {1}},
      {{1}, {7}},
      {{}, {3, 5}},
      {{3, 5}, {}},
      {{2, 3, 5}, {3, 1}},
      {{2, 1, 5}, {1, 3, 1}},
      {{1, 4, 1, 3}, {2, 1, 5, 1}},
      {{2, 3, 1, 1, 2}, {1, 1, 4, 3, 1}},
      {{2, 1, 3, 1, 2, 1}, {1, 2, 1, 3, 1, 2}},
      {{3, 1, 2, 1, 1, 5}, {5}},
      {{1, 1, 1, 1, 1, 1}, {2, 3}},
      {{0, 3}, {1, 3}},
      {{4, 0}, {4, 1}},
  };
  const BinaryOp ops[] = {
      BinaryOp::kAdd,   BinaryOp::kSub,     BinaryOp::kMul,     BinaryOp::kDiv,
      BinaryOp::kAtan2, BinaryOp::kMaximum, BinaryOp::kMinimum, BinaryOp::kSquaredDifference,
      BinaryOp::kPrelu};
  const Activation acts[] = {Activation::kNone,  Activation::kRelu, Activation::kReluN1To1,
                             Activation::kRelu6, Activation::kTanh, Activation::kSigmoid};
  uint32_t seed = 1;
  for (const auto& [a_dims, b_dims] : cases) {
    for (BinaryOp op : ops) {
      for (Activation act : acts) {
        BinaryParams params;
        ASSERT_TRUE(MakeBinaryParams(op, act, a_dims, b_dims, &params));
        const auto a = RandomFloats(NumElements(a_dims), seed++, -4, 4);
        // Keep divisors away from zero.
        const auto b = RandomFloats(NumElements(b_dims), seed++, 0.5f, 4);
        std::vector<float> out(NumElements(params.output_dims));
        BinaryFloat(params, a.data(), b.data(), out.data());
        ExpectAllNear(out, NaiveBinary(op, act, a_dims, a, b_dims, b, params.output_dims),
                      "case seed " + std::to_string(seed));
      }
    }
  }
}

TEST(UnaryFloatTest, HandComputed) {
  const std::vector<float> in = {-8, -1, -0.5f, 0, 0.5f, 1, 6.5f, 100};
  std::vector<float> out(in.size());
  UnaryFloat(UnaryOp::kRelu, in.size(), in.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{0, 0, 0, 0, 0.5f, 1, 6.5f, 100}));
  UnaryFloat(UnaryOp::kRelu6, in.size(), in.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{0, 0, 0, 0, 0.5f, 1, 6, 6}));
  UnaryFloat(UnaryOp::kReluN1To1, in.size(), in.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{-1, -1, -0.5f, 0, 0.5f, 1, 1, 1}));
  UnaryFloat(UnaryOp::kLogistic, in.size(), in.data(), out.data());
  for (size_t i = 0; i < in.size(); ++i) EXPECT_NEAR(out[i], 1.0 / (1.0 + std::exp(-double(in[i]))), 1e-7);
  UnaryFloat(UnaryOp::kTanh, in.size(), in.data(), out.data());
  for (size_t i = 0; i < in.size(); ++i) EXPECT_NEAR(out[i], std::tanh(double(in[i])), 1e-7);
  // Logistic saturates instead of overflowing.
  const std::vector<float> extreme = {-1000, 1000};
  std::vector<float> sat(2);
  UnaryFloat(UnaryOp::kLogistic, 2, extreme.data(), sat.data());
  EXPECT_EQ(sat[0], 0.0f);
  EXPECT_EQ(sat[1], 1.0f);
  // Zero elements touch nothing.
  float untouched = -5.0f;
  UnaryFloat(UnaryOp::kTanh, 0, extreme.data(), &untouched);
  EXPECT_EQ(untouched, -5.0f);
}

TEST(UnaryFloatTest, HardSwishAndElu) {
  const std::vector<float> in = {-8, -3, -1.5f, 0, 1.5f, 3, 8};
  std::vector<float> out(in.size());
  UnaryFloat(UnaryOp::kHardSwish, in.size(), in.data(), out.data());
  // x * relu6(x + 3) / 6, worked by hand: 0 up to -3, then x(x+3)/6 up to 3, then x.
  const std::vector<float> hard_swish = {0, 0, -0.375f, 0, 1.125f, 3, 8};
  for (size_t i = 0; i < in.size(); ++i) EXPECT_FLOAT_EQ(out[i], hard_swish[i]) << in[i];
  UnaryFloat(UnaryOp::kElu, in.size(), in.data(), out.data());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_NEAR(out[i], in[i] >= 0 ? in[i] : std::exp(double(in[i])) - 1.0, 1e-7) << in[i];
  }
  UnaryFloat(UnaryOp::kExp, in.size(), in.data(), out.data());
  for (size_t i = 0; i < in.size(); ++i) EXPECT_FLOAT_EQ(out[i], std::exp(in[i])) << in[i];
}

TEST(BinaryFloatTest, MaximumMinimumSquaredDifferenceHandComputed) {
  const std::vector<float> a = {1, -2, 3.5f, 0};
  const std::vector<float> b = {2};  // broadcast
  std::vector<float> out(4);
  BinaryParams params;
  ASSERT_TRUE(MakeBinaryParams(BinaryOp::kMaximum, Activation::kNone, {4}, {1}, &params));
  BinaryFloat(params, a.data(), b.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{2, 2, 3.5f, 2}));
  ASSERT_TRUE(MakeBinaryParams(BinaryOp::kMinimum, Activation::kNone, {4}, {1}, &params));
  BinaryFloat(params, a.data(), b.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{1, -2, 2, 0}));
  ASSERT_TRUE(MakeBinaryParams(BinaryOp::kSquaredDifference, Activation::kNone, {4}, {1}, &params));
  BinaryFloat(params, a.data(), b.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{1, 16, 2.25f, 4}));
  ASSERT_TRUE(MakeBinaryParams(BinaryOp::kPrelu, Activation::kNone, {4}, {1}, &params));
  const std::vector<float> alpha = {0.25f};
  BinaryFloat(params, a.data(), alpha.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{1, -0.5f, 3.5f, 0}));
}

// GELU in both forms against the formulas in double, and GELU(0) = 0, GELU(+inf) = +inf, NaN stays NaN, and
// GELU(-inf) is NaN (-inf * 0), as LiteRT's formula also gives it.
TEST(GeluTest, MatchesFormulasInDouble) {
  const auto input = RandomFloats(2000, 17, -6, 6);
  for (bool approximate : {false, true}) {
    std::vector<double> want(input.size());
    for (size_t i = 0; i < input.size(); ++i) {
      const double x = input[i];
      want[i] = approximate ? 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)))
                            : 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    }
    std::vector<float> got(input.size());
    GeluFloat(approximate, static_cast<int64_t>(input.size()), input.data(), got.data());
    ExpectAllNear(got, want, approximate ? "approximate" : "exact");
  }
  for (bool approximate : {false, true}) {
    EXPECT_EQ(Gelu(approximate, 0.0f), 0.0f);
    EXPECT_TRUE(std::isnan(Gelu(approximate, -INFINITY)));
    EXPECT_EQ(Gelu(approximate, INFINITY), INFINITY);
    EXPECT_TRUE(std::isnan(Gelu(approximate, NAN)));
    EXPECT_NEAR(Gelu(approximate, 1.0f), 0.8413, 2e-4);
  }
}

}  // namespace
}  // namespace kiln::ops::reference
