// The SEGMENT_SUM, MATRIX_DIAG, MATRIX_SET_DIAG, DYNAMIC_UPDATE_SLICE, REVERSE_SEQUENCE, SPARSE_TO_DENSE,
// EMBEDDING_LOOKUP_SPARSE, RIGHT_SHIFT, BITWISE_XOR, BUCKETIZE, FAKE_QUANT and the StableHLO integer helpers
// (ShiftLeft, WrappingAdd, WrappingMul) reference kernels against independent formulations written here (each output
// element from its coordinates by div/mod, a shift as a floor division): every rank up to 6, empty tensors, clamped
// start indices, wrapping sums, and every 8-bit shift pair.
#include "ops/reference/matrix.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

namespace kiln::ops::reference {
namespace {

std::vector<int64_t> Coords(const Dims& dims, int64_t flat) {
  std::vector<int64_t> c(dims.size());
  for (size_t k = dims.size(); k-- > 0;) {
    c[k] = flat % dims[k];
    flat /= dims[k];
  }
  return c;
}

TEST(SegmentSumTest, SortedIdsAndPlainSums) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 30; ++trial) {
    const int64_t rows = static_cast<int64_t>(rng() % 12), inner = static_cast<int64_t>(rng() % 4);
    std::vector<int32_t> ids(rows);
    for (int64_t i = 0; i < rows; ++i) ids[i] = i == 0 ? 0 : ids[i - 1] + static_cast<int32_t>(rng() % 2);
    int64_t bad = -1;
    const int64_t segments = SortedSegmentCount(ids.data(), rows, &bad);
    ASSERT_EQ(segments, rows == 0 ? 0 : ids.back() + 1);
    std::vector<int32_t> data(rows * inner);
    for (int32_t& v : data) v = static_cast<int32_t>(rng());  // full range: sums wrap
    std::vector<int32_t> want(segments * inner, 0);
    for (int64_t s = 0; s < segments; ++s) {
      for (int64_t k = 0; k < inner; ++k) {
        uint32_t acc = 0;
        for (int64_t i = 0; i < rows; ++i) {
          if (ids[i] == s) acc += static_cast<uint32_t>(data[i * inner + k]);
        }
        want[s * inner + k] = static_cast<int32_t>(acc);
      }
    }
    std::vector<int32_t> got(segments * inner, 7);
    SegmentSum<int32_t>(data.data(), ids.data(), rows, inner, segments, got.data());
    EXPECT_EQ(got, want) << trial;
  }
  const float data[] = {1, 2, 3, 4, 5};
  const int32_t ids[] = {0, 0, 1, 1, 1};
  float out[2];
  SegmentSum<float>(data, ids, 5, 1, 2, out);
  EXPECT_EQ(out[0], 3);
  EXPECT_EQ(out[1], 12);
  // The order rules: the first id must be 0, each step 0 or 1.
  const struct {
    std::vector<int32_t> ids;
    int64_t bad;
  } wrong[] = {{{1, 1}, 0},     {{0, 2}, 1}, {{0, 1, 1, 0}, 3},
               {{0, 0, -1}, 2}, {{-1}, 0},   {{0, std::numeric_limits<int32_t>::min()}, 1}};
  for (const auto& w : wrong) {
    int64_t bad = -1;
    EXPECT_EQ(SortedSegmentCount(w.ids.data(), static_cast<int64_t>(w.ids.size()), &bad), -1);
    EXPECT_EQ(bad, w.bad);
  }
}

TEST(MatrixDiagTest, MatchesPlainDiagonals) {
  for (int64_t batches : {0, 1, 3}) {
    for (int64_t n : {0, 1, 2, 5}) {
      std::vector<int16_t> in(batches * n);
      for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int16_t>(100 + i);
      std::vector<int16_t> got(batches * n * n, -1);
      MatrixDiag(in.data(), batches, n, sizeof(int16_t), got.data());
      for (int64_t f = 0; f < batches * n * n; ++f) {
        const std::vector<int64_t> c = Coords({batches, n, n}, f);
        EXPECT_EQ(got[f], c[1] == c[2] ? in[c[0] * n + c[1]] : 0) << batches << " " << n << " " << f;
      }
    }
  }
}

TEST(MatrixSetDiagTest, MatchesPlainReplacement) {
  for (int64_t batches : {0, 1, 2}) {
    for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{3, 3}, {2, 5}, {5, 2}, {1, 4}, {0, 3}}) {
      const int64_t n = std::min(rows, cols);
      std::vector<int64_t> in(batches * rows * cols), diag(batches * n);
      for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int64_t>(i) * 3;
      for (size_t i = 0; i < diag.size(); ++i) diag[i] = -1 - static_cast<int64_t>(i);
      std::vector<int64_t> got(in.size(), 99);
      MatrixSetDiag(in.data(), diag.data(), batches, rows, cols, sizeof(int64_t), got.data());
      for (int64_t f = 0; f < static_cast<int64_t>(in.size()); ++f) {
        const std::vector<int64_t> c = Coords({batches, rows, cols}, f);
        EXPECT_EQ(got[f], c[1] == c[2] ? diag[c[0] * n + c[1]] : in[f]) << rows << "x" << cols << " " << f;
      }
    }
  }
}

TEST(DynamicUpdateSliceTest, MatchesPlainOverwriteWithClampedStarts) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t rank = trial % 7;  // 0 to 6
    Dims operand(rank), update(rank);
    std::vector<int64_t> starts(rank);
    for (size_t d = 0; d < rank; ++d) {
      operand[d] = static_cast<int64_t>(rng() % 4);  // 0: an empty operand now and then
      update[d] = operand[d] == 0 ? 0 : static_cast<int64_t>(rng() % (operand[d] + 1));
      starts[d] = static_cast<int64_t>(rng() % 9) - 4;  // below 0 and past the end: clamped
    }
    const int64_t count = NumElements(operand), update_count = NumElements(update);
    std::vector<float> in(count), up(update_count), got(count, -7);
    for (int64_t i = 0; i < count; ++i) in[i] = static_cast<float>(i);
    for (int64_t i = 0; i < update_count; ++i) up[i] = static_cast<float>(1000 + i);
    const std::vector<int64_t> clamped = ClampUpdateStarts(operand, update, starts);
    DynamicUpdateSlice(operand, update, clamped, sizeof(float), in.data(), up.data(), got.data());
    for (int64_t f = 0; f < count; ++f) {
      const std::vector<int64_t> c = Coords(operand, f);
      bool inside = true;
      int64_t u = 0;
      for (size_t d = 0; d < rank; ++d) {
        const int64_t s = std::clamp<int64_t>(starts[d], 0, operand[d] - update[d]);
        inside = inside && c[d] >= s && c[d] < s + update[d];
        u = u * update[d] + (c[d] - s);
      }
      EXPECT_EQ(got[f], inside ? up[u] : in[f]) << trial << " " << f;
    }
  }
}

// x >> y as floor(x / 2^min(max(y, 0), bits - 1)): arithmetic for negative values.
template <typename T>
T PlainShift(T x, T y) {
  const int64_t bits = static_cast<int64_t>(sizeof(T)) * 8;
  const int64_t s = std::clamp<int64_t>(static_cast<int64_t>(y), 0, bits - 1);
  const int64_t p = int64_t{1} << s;
  const int64_t v = static_cast<int64_t>(x);
  return static_cast<T>(v >= 0 ? v / p : -((-v + p - 1) / p));
}

TEST(BitOpsTest, RightShiftMatchesFloorDivisionAndXorMatchesBits) {
  for (int x = -128; x < 128; ++x) {
    for (int y = -128; y < 128; ++y) {
      ASSERT_EQ(RightShift<int8_t>(static_cast<int8_t>(x), static_cast<int8_t>(y)),
                PlainShift<int8_t>(static_cast<int8_t>(x), static_cast<int8_t>(y)))
          << x << " " << y;
      ASSERT_EQ(RightShift<uint8_t>(static_cast<uint8_t>(x + 128), static_cast<uint8_t>(y + 128)),
                PlainShift<uint8_t>(static_cast<uint8_t>(x + 128), static_cast<uint8_t>(y + 128)));
    }
  }
  std::mt19937 rng(8);
  for (int i = 0; i < 2000; ++i) {
    const uint32_t a = rng(), b = rng() % 40;
    EXPECT_EQ(RightShift<int32_t>(static_cast<int32_t>(a), static_cast<int32_t>(b) - 4),
              PlainShift<int32_t>(static_cast<int32_t>(a), static_cast<int32_t>(b) - 4));
    EXPECT_EQ(RightShift<uint32_t>(a, b), PlainShift<uint32_t>(a, b));
    EXPECT_EQ(RightShift<int16_t>(static_cast<int16_t>(a), static_cast<int16_t>(b) - 4),
              PlainShift<int16_t>(static_cast<int16_t>(a), static_cast<int16_t>(b) - 4));
    EXPECT_EQ(RightShift<uint16_t>(static_cast<uint16_t>(a), static_cast<uint16_t>(b)),
              PlainShift<uint16_t>(static_cast<uint16_t>(a), static_cast<uint16_t>(b)));
    const uint32_t c = rng();
    EXPECT_EQ(static_cast<uint32_t>(BitwiseXor<int32_t>(static_cast<int32_t>(a), static_cast<int32_t>(c))), a ^ c);
  }
  EXPECT_EQ(RightShift<int32_t>(std::numeric_limits<int32_t>::min(), 100), -1);
  EXPECT_EQ(RightShift<int8_t>(-100, -1), -100);
  EXPECT_EQ(BitwiseXor<int8_t>(-1, 5), -6);
  EXPECT_EQ(BitwiseXor<uint16_t>(0xff00, 0x0ff0), 0xf0f0);
}

int64_t FlatOf(const Dims& dims, const std::vector<int64_t>& c) {
  int64_t flat = 0;
  for (size_t d = 0; d < dims.size(); ++d) flat = flat * dims[d] + c[d];
  return flat;
}

TEST(ReverseSequenceTest, MatchesPlainReversalPerBatch) {
  std::mt19937 rng(12);
  for (int trial = 0; trial < 150; ++trial) {
    const size_t rank = 2 + trial % 5;  // 2 to 6
    Dims dims(rank);
    for (int64_t& d : dims) d = static_cast<int64_t>(rng() % 4);
    const int seq = static_cast<int>(rng() % rank);
    const int batch = static_cast<int>((seq + 1 + rng() % (rank - 1)) % rank);
    std::vector<int64_t> lengths(dims[batch]);
    for (int64_t& l : lengths) l = static_cast<int64_t>(rng() % (dims[seq] + 1));
    const int64_t count = NumElements(dims);
    std::vector<int32_t> in(count), got(count, -1);
    for (int64_t i = 0; i < count; ++i) in[i] = static_cast<int32_t>(i * 7);
    ReverseSequence(dims, seq, batch, lengths.data(), sizeof(int32_t), in.data(), got.data());
    for (int64_t f = 0; f < count; ++f) {
      std::vector<int64_t> c = Coords(dims, f);
      const int64_t l = lengths[c[batch]];
      if (c[seq] < l) c[seq] = l - 1 - c[seq];
      EXPECT_EQ(got[f], in[FlatOf(dims, c)]) << trial << " " << f;
    }
  }
}

TEST(SparseToDenseTest, MatchesPlainScatterAndRefusesOutOfRange) {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 60; ++trial) {
    const size_t rank = 1 + trial % 4;
    Dims dims(rank);
    for (int64_t& d : dims) d = 1 + static_cast<int64_t>(rng() % 4);
    const int64_t tuples = static_cast<int64_t>(rng() % 6);
    std::vector<int64_t> indices(tuples * rank);
    for (int64_t t = 0; t < tuples; ++t) {
      for (size_t k = 0; k < rank; ++k) indices[t * rank + k] = static_cast<int64_t>(rng() % dims[k]);
    }
    std::vector<int64_t> values(tuples);
    for (int64_t t = 0; t < tuples; ++t) values[t] = 100 + t;
    const int64_t fill = -9;
    const bool scalar = trial % 3 == 0;
    std::vector<int64_t> want(NumElements(dims), fill), got(want.size(), 0);
    for (int64_t t = 0; t < tuples; ++t) {  // later tuples win, as LiteRT writes them in order
      want[FlatOf(dims, std::vector<int64_t>(indices.begin() + t * rank, indices.begin() + (t + 1) * rank))] =
          scalar ? values.empty() ? 0 : values[0] : values[t];
    }
    int64_t bad = -1;
    ASSERT_TRUE(SparseToDense(dims, indices.data(), tuples, static_cast<int64_t>(rank), values.data(), scalar, &fill,
                              sizeof(int64_t), got.data(), &bad));
    EXPECT_EQ(got, want) << trial;
  }
  const Dims dims = {2, 3};
  const int64_t indices[] = {0, 1, 2, 0};  // tuple 1 is past dimension 0
  const float values[] = {1, 2}, fill = 5;
  float out[6];
  int64_t bad = -1;
  EXPECT_FALSE(SparseToDense(dims, indices, 2, 2, values, false, &fill, sizeof(float), out, &bad));
  EXPECT_EQ(bad, 1);
  for (float v : out) EXPECT_EQ(v, 5);  // nothing written over the default
  const int64_t negative[] = {-1, 0};
  EXPECT_FALSE(SparseToDense(dims, negative, 1, 2, values, false, &fill, sizeof(float), out, &bad));
  EXPECT_EQ(bad, 0);
}

TEST(BucketizeTest, CountsBoundariesNotAbove) {
  const std::vector<float> boundaries = {-2.5f, 0.0f, 0.0f, 1.0f, 16777216.0f};
  const auto plain = [&](auto x) {
    int32_t n = 0;
    for (float b : boundaries) n += !(x < b);
    return n;
  };
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {-3.0f, -2.5f, -1.0f, -0.0f, 0.0f, 0.5f, 1.0f, 2.0f, 16777216.0f, inf, -inf,
                  std::numeric_limits<float>::quiet_NaN()}) {
    EXPECT_EQ(Bucketize<float>(x, boundaries.data(), 5), plain(x)) << x;
    EXPECT_EQ(Bucketize<double>(x, boundaries.data(), 5), plain(static_cast<double>(x))) << x;
  }
  EXPECT_EQ(Bucketize<float>(std::numeric_limits<float>::quiet_NaN(), boundaries.data(), 5), 5);  // past all
  for (int32_t x : {-3, 0, 1, 16777216, 16777217, std::numeric_limits<int32_t>::max()}) {
    EXPECT_EQ(Bucketize<int32_t>(x, boundaries.data(), 5), plain(x)) << x;
  }
  EXPECT_EQ(Bucketize<int64_t>(int64_t{1} << 40, boundaries.data(), 5), 5);
  EXPECT_EQ(Bucketize<float>(1.0f, boundaries.data(), 0), 0);
}

TEST(FakeQuantTest, MatchesLiteRtAndStaysOnTheGrid) {
  // LiteRT 2.3.0's outputs for min -1, max 1, 8 bits (its zero point nudges to 127: 1 / (2 / 255) is 127.49999 in
  // float).
  const float x[] = {-2, -1, -0.51f, -0.5f, -0.49f, 0, 0.003f, 0.0039f, 0.5f, 0.99f, 1, 1.5f};
  const float want[] = {-0.9960785f, -0.9960785f, -0.50980395f, -0.5019608f, -0.48627454f, 0,
                        0,           0,           0.50196075f,  0.98823535f, 1.0039215f,   1.0039215f};
  float got[12];
  FakeQuant(NudgeFakeQuant(-1, 1, 0, 255), 12, x, got);
  for (int i = 0; i < 12; ++i) EXPECT_FLOAT_EQ(got[i], want[i]) << i;
  std::mt19937 rng(14);
  std::uniform_real_distribution<float> uniform(-3, 3);
  for (const auto& [lo, hi, bits] : std::vector<std::tuple<float, float, int>>{
           {-1, 1, 8}, {0, 6, 8}, {-0.3f, 2.7f, 4}, {0.5f, 1.5f, 8}, {-2, -1, 8}, {-1, 1, 16}, {-5, 0.1f, 2}}) {
    const FakeQuantGrid g = NudgeFakeQuant(lo, hi, 0, (1 << bits) - 1);
    EXPECT_LE(g.nudged_min, 0.0f);  // 0 lies on the grid
    EXPECT_GE(g.nudged_max, 0.0f);
    for (int i = 0; i < 200; ++i) {
      const float v = uniform(rng);
      float out;
      FakeQuant(g, 1, &v, &out);
      const float clamped = std::min(g.nudged_max, std::max(g.nudged_min, v));
      EXPECT_LE(std::fabs(out - clamped), g.scale * 0.5f + 1e-5f) << v;
      const float steps = (out - g.nudged_min) / g.scale;
      EXPECT_NEAR(steps, std::round(steps), 1e-3) << v;
    }
  }
}

// EMBEDDING_LOOKUP_SPARSE against runs written out: each maximal run of lookups into one output row adds its
// weighted params rows to what the row holds, then divides the row by the run's divisor.
TEST(EmbeddingLookupSparseTest, MatchesPlainRuns) {
  std::mt19937 rng(16);
  std::uniform_real_distribution<float> uniform(0.1f, 2.0f);
  for (Combiner combiner : {Combiner::kSum, Combiner::kMean, Combiner::kSqrtn}) {
    for (int trial = 0; trial < 20; ++trial) {
      const int64_t n = static_cast<int64_t>(rng() % 9), width = 1 + static_cast<int64_t>(rng() % 3);
      const int64_t rows = 1 + static_cast<int64_t>(rng() % 4), vocabulary = 5;
      std::vector<int32_t> ids(n);
      std::vector<int64_t> buckets(n);
      std::vector<float> weights(n), params(vocabulary * width);
      for (int64_t i = 0; i < n; ++i) {
        ids[i] = static_cast<int32_t>(rng() % vocabulary);
        buckets[i] = static_cast<int64_t>(rng() % rows);  // unsorted: rows met again restart
        weights[i] = uniform(rng);
      }
      for (float& v : params) v = uniform(rng);
      std::vector<float> want(rows * width, 0.0f);
      for (int64_t start = 0; start < n;) {
        int64_t end = start;
        while (end < n && buckets[end] == buckets[start]) ++end;
        float total = 0, squares = 0;
        for (int64_t i = start; i < end; ++i) {
          total += weights[i];
          squares += weights[i] * weights[i];
          for (int64_t k = 0; k < width; ++k)
            want[buckets[start] * width + k] += params[ids[i] * width + k] * weights[i];
        }
        const float divisor = combiner == Combiner::kSum    ? 1.0f
                              : combiner == Combiner::kMean ? total
                                                            : std::sqrt(squares);
        if (combiner != Combiner::kSum) {
          for (int64_t k = 0; k < width; ++k) want[buckets[start] * width + k] /= divisor;
        }
        start = end;
      }
      std::vector<float> got(rows * width, 42.0f);
      EmbeddingLookupSparse(combiner, ids.data(), buckets.data(), weights.data(), n, params.data(), width, rows,
                            got.data());
      for (size_t i = 0; i < want.size(); ++i) EXPECT_FLOAT_EQ(got[i], want[i]) << trial << " " << i;
    }
  }
}

// The StableHLO integer helpers against int64 arithmetic reduced mod 2^bits: every int8/uint8 pair, random wider
// ones; a shift count outside [0, bits) gives 0.
template <typename T>
T Reduce(int64_t v) {
  const int bits = static_cast<int>(sizeof(T) * 8);
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  return static_cast<T>(static_cast<uint64_t>(v) & mask);
}

template <typename T>
void CheckStablehloPair(T a, T b) {
  const int64_t bits = static_cast<int64_t>(sizeof(T)) * 8;
  ASSERT_EQ(WrappingAdd<T>(a, b), Reduce<T>(static_cast<int64_t>(a) + static_cast<int64_t>(b))) << +a << " " << +b;
  ASSERT_EQ(WrappingMul<T>(a, b), Reduce<T>(static_cast<int64_t>(a) * static_cast<int64_t>(b))) << +a << " " << +b;
  const int64_t count = static_cast<int64_t>(b);
  const T want = count < 0 || count >= bits ? T{0} : Reduce<T>(static_cast<int64_t>(a) * (int64_t{1} << count));
  ASSERT_EQ(ShiftLeft<T>(a, b), want) << +a << " << " << +b;
}

TEST(StablehloHelpersTest, WrapAndShiftAsPlainModularArithmetic) {
  for (int a = -128; a < 128; ++a) {
    for (int b = -128; b < 128; ++b) {
      CheckStablehloPair<int8_t>(static_cast<int8_t>(a), static_cast<int8_t>(b));
      CheckStablehloPair<uint8_t>(static_cast<uint8_t>(a + 128), static_cast<uint8_t>(b + 128));
    }
  }
  std::mt19937 rng(15);
  for (int i = 0; i < 5000; ++i) {
    const uint32_t a = rng(), b = rng();
    CheckStablehloPair<int16_t>(static_cast<int16_t>(a), static_cast<int16_t>(b % 40) - 4);
    CheckStablehloPair<uint16_t>(static_cast<uint16_t>(a), static_cast<uint16_t>(b));
    CheckStablehloPair<int32_t>(static_cast<int32_t>(a), static_cast<int32_t>(b % 70) - 10);
    ASSERT_EQ(WrappingAdd<uint32_t>(a, b), static_cast<uint32_t>(uint64_t{a} + b));
    ASSERT_EQ(WrappingMul<uint32_t>(a, b), static_cast<uint32_t>(uint64_t{a} * b));
  }
  EXPECT_EQ(WrappingAdd<int64_t>(std::numeric_limits<int64_t>::max(), 1), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(WrappingMul<int64_t>(std::numeric_limits<int64_t>::min(), -1), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(ShiftLeft<int32_t>(1, 31), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(ShiftLeft<int32_t>(1, 32), 0);
}

}  // namespace
}  // namespace kiln::ops::reference
