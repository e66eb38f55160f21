// The WHERE, UNIQUE and NON_MAX_SUPPRESSION reference kernels (ops/reference/dynamic.h) against plain loops written
// here: many shapes and ranks, empty tensors, bool bytes other than 0 and 1, signed zeros and NaN.
#include "ops/reference/dynamic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace kiln::ops::reference {
namespace {

// Plain WHERE: every flat index whose element is non-zero, unravelled by repeated division.
template <typename T>
std::vector<int64_t> PlainWhere(const std::vector<T>& input, const Dims& dims) {
  std::vector<int64_t> out;
  for (size_t flat = 0; flat < input.size(); ++flat) {
    if (!(input[flat] != T(0))) continue;
    std::vector<int64_t> coordinate(dims.size());
    int64_t rest = static_cast<int64_t>(flat);
    for (size_t d = dims.size(); d-- > 0;) {
      coordinate[d] = rest % dims[d];
      rest /= dims[d];
    }
    out.insert(out.end(), coordinate.begin(), coordinate.end());
  }
  return out;
}

template <typename T>
void CheckWhere(const std::vector<T>& input, const Dims& dims) {
  const int64_t count = CountNonZero(input.data(), static_cast<int64_t>(input.size()));
  std::vector<int64_t> got(static_cast<size_t>(count) * dims.size() + 1, -7);  // one guard element
  WhereCoordinates(input.data(), dims, got.data());
  EXPECT_EQ(got.back(), -7) << "wrote past the end";
  got.pop_back();
  EXPECT_EQ(got, PlainWhere(input, dims));
}

TEST(WhereTest, ShapesRanksAndTypes) {
  std::mt19937 rng(5);
  const std::vector<Dims> shapes = {{1},
                                    {7},
                                    {3, 4},
                                    {2, 1, 5},
                                    {2, 3, 1, 2},
                                    {1, 2, 2, 1, 3},
                                    {2, 2, 1, 2, 3, 2},
                                    {0},
                                    {3, 0, 2},
                                    {1, 1, 1, 1, 1, 1}};
  for (const Dims& dims : shapes) {
    const size_t n = static_cast<size_t>(NumElements(dims));
    std::vector<uint8_t> bytes(n);
    std::vector<float> floats(n);
    std::vector<int32_t> ints(n);
    std::vector<int64_t> longs(n);
    std::vector<int8_t> chars(n);
    for (size_t i = 0; i < n; ++i) {
      bytes[i] = rng() % 3 == 0 ? 0 : static_cast<uint8_t>(rng() % 256 | 1);  // bool bytes other than 1 too
      floats[i] = rng() % 2 ? 0.0f : static_cast<float>(static_cast<int>(rng() % 9) - 4);
      ints[i] = static_cast<int32_t>(rng() % 3) - 1;
      longs[i] = rng() % 2 ? 0 : (int64_t{1} << 40);
      chars[i] = static_cast<int8_t>(rng() % 3) - 1;
    }
    CheckWhere(bytes, dims);
    CheckWhere(floats, dims);
    CheckWhere(ints, dims);
    CheckWhere(longs, dims);
    CheckWhere(chars, dims);
  }
}

TEST(WhereTest, SignedZeroIsFalseNaNIsTrue) {
  const std::vector<float> x = {-0.0f, 0.0f, NAN, 1e-45f};
  EXPECT_EQ(CountNonZero(x.data(), 4), 2);
  std::vector<int64_t> got(2);
  WhereCoordinates(x.data(), Dims{4}, got.data());
  EXPECT_EQ(got, (std::vector<int64_t>{2, 3}));
}

// Plain UNIQUE: a linear search of the values seen so far (== equality).
template <typename T>
void CheckUnique(const std::vector<T>& input) {
  std::vector<T> want_values;
  std::vector<int32_t> want_idx;
  for (const T& v : input) {
    size_t j = 0;
    while (j < want_values.size() && !(want_values[j] == v)) ++j;
    if (j == want_values.size()) want_values.push_back(v);
    want_idx.push_back(static_cast<int32_t>(j));
  }
  std::vector<T> values;
  std::vector<int32_t> idx(input.size());
  Unique(input.data(), static_cast<int64_t>(input.size()), &values, idx.data());
  EXPECT_EQ(values, want_values);
  EXPECT_EQ(idx, want_idx);
  std::vector<int64_t> idx64(input.size());
  Unique(input.data(), static_cast<int64_t>(input.size()), &values, idx64.data());
  EXPECT_EQ(std::vector<int32_t>(idx64.begin(), idx64.end()), want_idx);
}

TEST(UniqueTest, OrderOfFirstAppearance) {
  std::mt19937 rng(9);
  for (size_t n : {0u, 1u, 2u, 17u, 300u}) {
    std::vector<int8_t> a(n);
    std::vector<uint8_t> b(n);
    std::vector<int16_t> c(n);
    std::vector<int32_t> d(n);
    std::vector<int64_t> e(n);
    std::vector<float> f(n);
    for (size_t i = 0; i < n; ++i) {
      a[i] = static_cast<int8_t>(rng() % 256 - 128);
      b[i] = static_cast<uint8_t>(rng() % 7);
      c[i] = static_cast<int16_t>(rng() % 40 - 20);
      d[i] = static_cast<int32_t>(rng() % 11) - 5;
      e[i] = (rng() % 2 ? -1 : 1) * (int64_t{1} << 50) + static_cast<int64_t>(rng() % 3);
      f[i] = static_cast<float>(rng() % 5) * 0.25f - 0.5f;
    }
    CheckUnique(a);
    CheckUnique(b);
    CheckUnique(c);
    CheckUnique(d);
    CheckUnique(e);
    CheckUnique(f);
  }
}

TEST(UniqueTest, SignedZerosAreOneValue) {
  const std::vector<float> x = {0.0f, -0.0f, 1.0f, 0.0f};
  std::vector<float> values;
  std::vector<int32_t> idx(4);
  Unique(x.data(), 4, &values, idx.data());
  ASSERT_EQ(values.size(), 2u);
  EXPECT_FALSE(std::signbit(values[0]));  // the first appearance is kept
  EXPECT_EQ(idx, (std::vector<int32_t>{0, 0, 1, 0}));
}

// Plain hard NMS: candidates sorted by score (distinct scores here), each kept unless it overlaps a kept box by
// iou >= threshold; the IoU written out from the corner formula.
std::vector<int32_t> PlainNms(const std::vector<float>& boxes, const std::vector<float>& scores, int max_out,
                              float iou_threshold, float score_threshold) {
  std::vector<int> order;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (scores[i] > score_threshold) order.push_back(static_cast<int>(i));
  }
  std::sort(order.begin(), order.end(), [&](int a, int b) { return scores[a] > scores[b]; });
  auto iou = [&](int a, int b) {
    auto lo = [](float u, float v) { return u < v ? u : v; };
    auto hi = [](float u, float v) { return u < v ? v : u; };
    const float* p = &boxes[4 * a];
    const float* q = &boxes[4 * b];
    const float pa = (hi(p[0], p[2]) - lo(p[0], p[2])) * (hi(p[1], p[3]) - lo(p[1], p[3]));
    const float qa = (hi(q[0], q[2]) - lo(q[0], q[2])) * (hi(q[1], q[3]) - lo(q[1], q[3]));
    if (pa <= 0 || qa <= 0) return 0.0f;
    const float ih = hi(0.0f, lo(hi(p[0], p[2]), hi(q[0], q[2])) - hi(lo(p[0], p[2]), lo(q[0], q[2])));
    const float iw = hi(0.0f, lo(hi(p[1], p[3]), hi(q[1], q[3])) - hi(lo(p[1], p[3]), lo(q[1], q[3])));
    return ih * iw / (pa + qa - ih * iw);
  };
  std::vector<int32_t> kept;
  for (int c : order) {
    if (static_cast<int>(kept.size()) >= max_out) break;
    bool ok = true;
    for (int k : kept) ok = ok && iou(c, k) < iou_threshold;
    if (ok) kept.push_back(c);
  }
  return kept;
}

TEST(NonMaxSuppressionTest, HardSuppressionMatchesAPlainGreedyLoop) {
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int n : {0, 1, 2, 7, 40, 100}) {
    for (float iou_threshold : {0.0f, 0.3f, 0.7f, 1.0f}) {
      std::vector<float> boxes(4 * n), scores(n);
      for (float& b : boxes) b = u(rng);
      for (int i = 0; i < n; ++i) scores[i] = u(rng) + 1e-4f * i;  // distinct
      for (int max_out : {0, 3, n}) {
        std::vector<int32_t> got(max_out + 1, -9);
        const int count =
            NonMaxSuppression(boxes.data(), n, scores.data(), max_out, iou_threshold, -0.2f, 0.0f, got.data(), nullptr);
        EXPECT_EQ(got[max_out], -9) << "wrote past max_output_size";
        got.resize(count);
        EXPECT_EQ(got, PlainNms(boxes, scores, max_out, iou_threshold, -0.2f)) << n << " " << iou_threshold;
      }
    }
  }
}

TEST(NonMaxSuppressionTest, SoftSuppressionDecaysScores) {
  // Box 1 overlaps box 0 with IoU 1/3 (it is half of a box twice its size... see below); box 2 is apart.
  const std::vector<float> boxes = {0, 0, 1, 2, 0, 1, 1, 3, 5, 5, 6, 6};  // [0,1]x[0,2], [0,1]x[1,3], [5,6]x[5,6]
  const std::vector<float> scores = {0.9f, 0.8f, 0.7f};
  std::vector<int32_t> idx(3);
  std::vector<float> out(3);
  // IoU(0, 1) = 1 / (2 + 2 - 1) = 1/3: with sigma 0.5 box 1's score becomes 0.8 * exp(-(1/3)^2), below box 2's
  // 0.7? 0.8 * exp(-1/9) = 0.7158..., still above: order 0, 1, 2.
  const int count = NonMaxSuppression(boxes.data(), 3, scores.data(), 3, 1.0f, 0.0f, 0.5f, idx.data(), out.data());
  ASSERT_EQ(count, 3);
  EXPECT_EQ(idx, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_FLOAT_EQ(out[0], 0.9f);
  EXPECT_NEAR(out[1], 0.8f * std::exp(-1.0f / 9.0f), 1e-6f);
  EXPECT_FLOAT_EQ(out[2], 0.7f);
  // A score threshold above the decayed score drops box 1.
  const int kept = NonMaxSuppression(boxes.data(), 3, scores.data(), 3, 1.0f, 0.72f, 0.5f, idx.data(), out.data());
  ASSERT_EQ(kept, 1);
  EXPECT_EQ(idx[0], 0);
  // Hard suppression at iou_threshold 1/3 drops it too.
  const int hard = NonMaxSuppression(boxes.data(), 3, scores.data(), 3, 0.3f, 0.0f, 0.0f, idx.data(), nullptr);
  ASSERT_EQ(hard, 2);
  EXPECT_EQ(idx[0], 0);
  EXPECT_EQ(idx[1], 2);
}

TEST(BroadcastShapesTest, AgainstAPlainRule) {
  // Every pair of shapes of rank <= 3 over {0, 1, 2, 3}: the result, or the failure, by a plain per-axis rule.
  const std::vector<int32_t> values = {0, 1, 2, 3};
  std::vector<std::vector<int32_t>> shapes = {{}};
  for (size_t rank = 1; rank <= 3; ++rank) {
    const size_t count = shapes.size();
    for (size_t i = 0; i < count; ++i) {
      if (shapes[i].size() != rank - 1) continue;
      for (int32_t v : values) {
        std::vector<int32_t> s = shapes[i];
        s.push_back(v);
        shapes.push_back(s);
      }
    }
  }
  for (const auto& a : shapes) {
    for (const auto& b : shapes) {
      const size_t n = std::max(a.size(), b.size());
      std::vector<int32_t> want(n);
      bool ok = true;
      for (size_t k = 0; k < n; ++k) {  // k counts from the back
        const int32_t x = k < a.size() ? a[a.size() - 1 - k] : 1;
        const int32_t y = k < b.size() ? b[b.size() - 1 - k] : 1;
        if (x != y && x != 1 && y != 1) ok = false;
        want[n - 1 - k] = x == 1 ? y : x;
      }
      std::vector<int32_t> got;
      size_t bad = 0;
      ASSERT_EQ(BroadcastShapes(a, b, &got, &bad), ok);
      if (ok) { EXPECT_EQ(got, want); }
    }
  }
  std::vector<int64_t> got;
  size_t bad = 0;
  EXPECT_FALSE(BroadcastShapes<int64_t>({2, 3, 4}, {5, 4}, &got, &bad));
  EXPECT_EQ(bad, 1u);
}

}  // namespace
}  // namespace kiln::ops::reference
