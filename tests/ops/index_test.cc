// The ONE_HOT, GATHER_ND, SCATTER_ND and ADD_N reference kernels against independent formulations written here
// (each output element from its coordinates by div/mod, not the kernels' nested loops): every rank up to 6,
// every axis, empty tensors, out-of-range indices and wrapping integer sums.
#include "ops/reference/index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
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

int64_t Flat(const Dims& dims, const std::vector<int64_t>& c) {
  int64_t flat = 0;
  for (size_t k = 0; k < dims.size(); ++k) flat = flat * dims[k] + c[k];
  return flat;
}

TEST(OneHotTest, EveryRankAndAxisAgainstCoordinates) {
  std::mt19937 gen(3);
  for (int rank = 0; rank <= 5; ++rank) {
    for (int axis = -1; axis <= rank; ++axis) {
      for (int64_t depth : {0, 1, 3}) {
        Dims index_dims;
        for (int d = 0; d < rank; ++d) index_dims.push_back(1 + static_cast<int64_t>(gen() % 3));
        const int64_t n = NumElements(index_dims);
        std::vector<int64_t> indices(static_cast<size_t>(n));
        for (auto& v : indices) v = static_cast<int64_t>(gen() % 6) - 1;  // -1..4: some out of range
        Dims out_dims;
        int resolved = 0;
        std::string error;
        ASSERT_TRUE(OneHotOutputShape(index_dims, axis, depth, &out_dims, &resolved, &error)) << error;
        ASSERT_EQ(out_dims.size(), index_dims.size() + 1);
        const int64_t outer = NumElements(Dims(index_dims.begin(), index_dims.begin() + resolved));
        const int64_t inner = NumElements(Dims(index_dims.begin() + resolved, index_dims.end()));
        const float on = 2.5f, off = -1.0f;
        std::vector<float> out(static_cast<size_t>(NumElements(out_dims)), 99.0f);
        OneHot(indices.data(), outer, depth, inner, &on, &off, sizeof(float), out.data());
        for (int64_t i = 0; i < NumElements(out_dims); ++i) {
          std::vector<int64_t> c = Coords(out_dims, i);
          const int64_t hot = c[static_cast<size_t>(resolved)];
          c.erase(c.begin() + resolved);
          const float want = indices[static_cast<size_t>(Flat(index_dims, c))] == hot ? on : off;
          ASSERT_EQ(out[static_cast<size_t>(i)], want) << "rank " << rank << " axis " << axis << " at " << i;
        }
      }
    }
  }
}

TEST(OneHotTest, RefusesBadAxisAndDepth) {
  Dims out;
  int axis = 0;
  std::string error;
  EXPECT_FALSE(OneHotOutputShape({2, 3}, 3, 4, &out, &axis, &error));
  EXPECT_NE(error.find("axis 3 is out of range [-1, 2]"), std::string::npos) << error;
  EXPECT_FALSE(OneHotOutputShape({2, 3}, -2, 4, &out, &axis, &error));
  EXPECT_FALSE(OneHotOutputShape({2}, 0, -1, &out, &axis, &error));
  EXPECT_NE(error.find("depth -1 is negative"), std::string::npos) << error;
  ASSERT_TRUE(OneHotOutputShape({}, -1, 4, &out, &axis, &error));
  EXPECT_EQ(out, Dims({4}));
}

// GATHER_ND's output element from its coordinates: the tuple's entries, then the slice coordinates.
TEST(GatherNdTest, EveryDepthAgainstCoordinates) {
  std::mt19937 gen(5);
  for (int rank = 1; rank <= 6; ++rank) {
    for (int depth = 0; depth <= rank; ++depth) {
      for (int prefix = 0; prefix <= 2; ++prefix) {
        Dims params;
        for (int d = 0; d < rank; ++d) params.push_back(1 + static_cast<int64_t>(gen() % 3));
        Dims index_dims;
        for (int d = 0; d < prefix; ++d) index_dims.push_back(static_cast<int64_t>(gen() % 3));  // 0 too
        index_dims.push_back(depth);
        const int64_t tuples = NumElements(Dims(index_dims.begin(), index_dims.end() - 1));
        std::vector<int64_t> indices;
        for (int64_t t = 0; t < tuples; ++t)
          for (int d = 0; d < depth; ++d) indices.push_back(static_cast<int64_t>(gen() % params[d]));
        std::vector<int32_t> input(static_cast<size_t>(NumElements(params)));
        for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<int32_t>(i * 7 + 1);
        GatherNdParams p;
        Dims out_dims;
        std::string error;
        ASSERT_TRUE(MakeGatherNdParams(params, index_dims, &p, &out_dims, &error)) << error;
        std::vector<int32_t> out(static_cast<size_t>(NumElements(out_dims)), -1);
        int64_t bad = -1;
        ASSERT_TRUE(GatherNdCopy(p, sizeof(int32_t), input.data(), indices.data(), out.data(), &bad));
        for (int64_t i = 0; i < NumElements(out_dims); ++i) {
          const std::vector<int64_t> c = Coords(out_dims, i);
          const int64_t t =
              Flat(Dims(index_dims.begin(), index_dims.end() - 1), std::vector<int64_t>(c.begin(), c.begin() + prefix));
          std::vector<int64_t> src(indices.begin() + t * depth, indices.begin() + (t + 1) * depth);
          src.insert(src.end(), c.begin() + prefix, c.end());
          ASSERT_EQ(out[static_cast<size_t>(i)], input[static_cast<size_t>(Flat(params, src))]) << i;
        }
      }
    }
  }
}

TEST(GatherNdTest, OutOfRangeIndexWritesNothing) {
  GatherNdParams p;
  Dims out_dims;
  std::string error;
  ASSERT_TRUE(MakeGatherNdParams({4, 3}, {3, 2}, &p, &out_dims, &error));
  const std::vector<float> input(12, 1.0f);
  for (const std::vector<int64_t>& indices :
       {std::vector<int64_t>{0, 1, 3, 3, 1, 0}, std::vector<int64_t>{0, 1, -1, 0, 1, 0},
        std::vector<int64_t>{0, 1, 1, 0, 4, 0}}) {
    std::vector<float> out(3, 7.0f);
    int64_t bad = -1;
    EXPECT_FALSE(GatherNdCopy(p, sizeof(float), input.data(), indices.data(), out.data(), &bad));
    EXPECT_EQ(indices[static_cast<size_t>(bad)] < 0 || indices[static_cast<size_t>(bad)] >= (bad % 2 ? 3 : 4), true);
    EXPECT_EQ(out, std::vector<float>(3, 7.0f));
  }
  EXPECT_FALSE(MakeGatherNdParams({4, 3}, {2, 3}, &p, &out_dims, &error));
  EXPECT_NE(error.find("index depth 3"), std::string::npos) << error;
  EXPECT_FALSE(MakeGatherNdParams({}, {2, 0}, &p, &out_dims, &error));
  EXPECT_FALSE(MakeGatherNdParams({3}, {}, &p, &out_dims, &error));
}

// SCATTER_ND against a map of sums per output element.
TEST(ScatterNdTest, DuplicatesAddUpAgainstMap) {
  std::mt19937 gen(9);
  for (int rank = 1; rank <= 6; ++rank) {
    for (int depth = 0; depth <= rank; ++depth) {
      Dims shape;
      for (int d = 0; d < rank; ++d) shape.push_back(1 + static_cast<int64_t>(gen() % 3));
      const int64_t tuples = static_cast<int64_t>(gen() % 5);
      const Dims index_dims = {tuples, depth};
      Dims update_dims = {tuples};
      update_dims.insert(update_dims.end(), shape.begin() + depth, shape.end());
      std::vector<int64_t> indices;
      for (int64_t t = 0; t < tuples; ++t)
        for (int d = 0; d < depth; ++d) indices.push_back(static_cast<int64_t>(gen() % shape[d]));
      std::vector<int32_t> updates(static_cast<size_t>(NumElements(update_dims)));
      for (auto& u : updates) u = static_cast<int32_t>(gen() % 100) - 50;
      GatherNdParams p;
      std::string error;
      ASSERT_TRUE(MakeScatterNdParams(shape, index_dims, update_dims, &p, &error)) << error;
      std::vector<int32_t> out(static_cast<size_t>(NumElements(shape)), 12345);
      int64_t bad = -1;
      ASSERT_TRUE(ScatterNd<int32_t>(p, indices.data(), updates.data(), NumElements(shape), out.data(), &bad));
      std::map<int64_t, int32_t> want;
      for (int64_t u = 0; u < NumElements(update_dims); ++u) {
        const std::vector<int64_t> c = Coords(update_dims, u);
        std::vector<int64_t> dst(indices.begin() + c[0] * depth, indices.begin() + (c[0] + 1) * depth);
        dst.insert(dst.end(), c.begin() + 1, c.end());
        want[Flat(shape, dst)] += updates[static_cast<size_t>(u)];
      }
      for (int64_t i = 0; i < NumElements(shape); ++i) {
        const auto it = want.find(i);
        ASSERT_EQ(out[static_cast<size_t>(i)], it == want.end() ? 0 : it->second) << "rank " << rank << " " << i;
      }
    }
  }
}

TEST(ScatterNdTest, WrapsBoolsAndOutOfRange) {
  GatherNdParams p;
  std::string error;
  ASSERT_TRUE(MakeScatterNdParams({3}, {3, 1}, {3}, &p, &error)) << error;
  const std::vector<int64_t> indices = {1, 1, 0};
  int64_t bad = -1;
  const std::vector<int8_t> u8 = {100, 100, -128};
  std::vector<int8_t> o8(3);
  ASSERT_TRUE(ScatterNd<int8_t>(p, indices.data(), u8.data(), 3, o8.data(), &bad));
  EXPECT_EQ(o8, (std::vector<int8_t>{-128, -56, 0}));
  const std::vector<int32_t> u32 = {std::numeric_limits<int32_t>::max(), 1, 0};
  std::vector<int32_t> o32(3);
  ASSERT_TRUE(ScatterNd<int32_t>(p, indices.data(), u32.data(), 3, o32.data(), &bad));
  EXPECT_EQ(o32[1], std::numeric_limits<int32_t>::min());
  const std::vector<uint8_t> ub = {2, 1, 0};  // any non-zero byte is true
  std::vector<uint8_t> ob(3, 9);
  ASSERT_TRUE(ScatterNdBool(p, indices.data(), ub.data(), 3, ob.data(), &bad));
  EXPECT_EQ(ob, (std::vector<uint8_t>{0, 1, 0}));
  const std::vector<int64_t> out_of_range = {0, 3, 1};
  std::vector<float> of(3, 5.0f);
  const std::vector<float> uf = {1, 2, 3};
  EXPECT_FALSE(ScatterNd<float>(p, out_of_range.data(), uf.data(), 3, of.data(), &bad));
  EXPECT_EQ(bad, 1);
  EXPECT_EQ(of, std::vector<float>(3, 0.0f));
  EXPECT_FALSE(MakeScatterNdParams({3, 2}, {3, 1}, {3}, &p, &error));
  EXPECT_NE(error.find("updates have shape [3]; indices and shape need [3,2]"), std::string::npos) << error;
}

TEST(AddNTest, SumsAndWraps) {
  const std::vector<float> a = {1, 2, 3}, b = {0.5f, -2, 4}, c = {0, 0, -7};
  std::vector<float> out(3);
  AddN(std::vector<const float*>{a.data(), b.data(), c.data()}, 3, out.data());
  EXPECT_EQ(out, (std::vector<float>{1.5f, 0, 0}));
  const std::vector<int32_t> x = {std::numeric_limits<int32_t>::max(), -5}, y = {1, 5};
  std::vector<int32_t> o(2);
  AddN(std::vector<const int32_t*>{x.data(), y.data()}, 2, o.data());
  EXPECT_EQ(o, (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), 0}));
  AddN(std::vector<const int32_t*>{x.data(), y.data()}, 0, o.data());  // empty: nothing read
}

TEST(RangeTest, CountsValuesAndRefuses) {
  struct Case {
    int64_t start, limit, delta, count;
  };
  for (const Case& c :
       std::vector<Case>{{0, 10, 3, 4}, {10, 0, -3, 4}, {5, 5, 1, 0}, {5, 5, -2, 0}, {-3, 4, 7, 1}, {0, 9, 3, 3}}) {
    int64_t n = -1;
    std::string error;
    ASSERT_TRUE(RangeCount<int32_t>(static_cast<int32_t>(c.start), static_cast<int32_t>(c.limit),
                                    static_cast<int32_t>(c.delta), &n, &error))
        << error;
    ASSERT_EQ(n, c.count);
    std::vector<int32_t> out(static_cast<size_t>(n));
    Range<int32_t>(static_cast<int32_t>(c.start), static_cast<int32_t>(c.delta), n, out.data());
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(out[static_cast<size_t>(i)], c.start + i * c.delta);
  }
  int64_t n = 0;
  std::string error;
  EXPECT_FALSE(RangeCount<int32_t>(0, 3, 0, &n, &error));
  EXPECT_NE(error.find("start 0, limit 3, delta 0: delta must not be zero"), std::string::npos) << error;
  EXPECT_FALSE(RangeCount<int64_t>(0, 3, -1, &n, &error));
  EXPECT_NE(error.find("sign points away from limit"), std::string::npos) << error;
  // The extremes: no signed overflow in the count; too many values refused.
  ASSERT_TRUE(RangeCount<int32_t>(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
                                  std::numeric_limits<int32_t>::max(), &n, &error));
  EXPECT_EQ(n, 3);  // (2^32 - 1) / (2^31 - 1) rounded up
  std::vector<int32_t> three(3);
  Range<int32_t>(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), 3, three.data());
  EXPECT_EQ(three, (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), -1, 2147483646}));
  EXPECT_FALSE(
      RangeCount<int64_t>(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), 1, &n, &error));
  EXPECT_NE(error.find("more than 2^31 - 1 values"), std::string::npos) << error;
  EXPECT_FALSE(RangeCount<float>(0, 1e9f, 1e-3f, &n, &error));
  EXPECT_FALSE(RangeCount<float>(0, std::numeric_limits<float>::infinity(), 1, &n, &error));
  EXPECT_NE(error.find("must be finite"), std::string::npos) << error;
  ASSERT_TRUE(RangeCount<float>(0, 1, 0.3f, &n, &error));
  EXPECT_EQ(n, 4);
  std::vector<float> f(4);
  Range<float>(0, 0.3f, 4, f.data());
  float acc = 0;  // accumulated, as LiteRT
  for (int i = 0; i < 4; ++i, acc += 0.3f) EXPECT_EQ(f[static_cast<size_t>(i)], acc);
}

// TOPK_V2 against a full sort by (value descending, index ascending) written here.
TEST(TopKTest, LargestFirstTiesByIndex) {
  std::mt19937 gen(13);
  for (int64_t n : {1, 2, 5, 9}) {
    for (int64_t k = 0; k <= n; ++k) {
      const int64_t rows = 3;
      std::vector<int32_t> input(static_cast<size_t>(rows * n));
      for (auto& v : input) v = static_cast<int32_t>(gen() % 4);  // many ties
      std::vector<int32_t> values(static_cast<size_t>(rows * k)), indices(static_cast<size_t>(rows * k));
      TopK<int32_t>(input.data(), rows, n, k, values.data(), indices.data());
      for (int64_t r = 0; r < rows; ++r) {
        std::vector<int32_t> taken(static_cast<size_t>(n), 0);
        for (int64_t i = 0; i < k; ++i) {
          // The i-th pick: the largest value not taken yet, the lowest index among equals.
          int64_t best = -1;
          for (int64_t j = 0; j < n; ++j) {
            if (taken[static_cast<size_t>(j)]) continue;
            if (best < 0 || input[static_cast<size_t>(r * n + j)] > input[static_cast<size_t>(r * n + best)]) best = j;
          }
          taken[static_cast<size_t>(best)] = 1;
          ASSERT_EQ(indices[static_cast<size_t>(r * k + i)], best) << "n " << n << " k " << k << " row " << r;
          ASSERT_EQ(values[static_cast<size_t>(r * k + i)], input[static_cast<size_t>(r * n + best)]);
        }
      }
    }
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {1, nan, 3, nan, -1};
  std::vector<float> v(5);
  std::vector<int32_t> i(5);
  TopK<float>(x.data(), 1, 5, 5, v.data(), i.data());
  EXPECT_EQ(i, (std::vector<int32_t>{2, 0, 4, 1, 3}));  // NaN last, as LiteRT
}

// UNSORTED_SEGMENT_*: against a plain map from segment to the rows that fold into it, over random ids (negative
// ones dropped), empty segments at each fold's identity, wrapping int32 products, and an id past the segments.
TEST(UnsortedSegmentTest, MatchesPlainFolds) {
  std::mt19937 rng(9);
  const int64_t num_ids = 40, inner = 3, segments = 7;
  std::vector<int32_t> ids(num_ids);
  for (int32_t& id : ids) id = static_cast<int32_t>(rng() % 9) - 2;  // [-2, 6]: some dropped
  std::vector<int32_t> data(num_ids * inner);
  for (int32_t& v : data) v = static_cast<int32_t>(rng() % 2001) - 1000;
  const struct {
    SegmentOp op;
    int32_t identity;
  } cases[] = {{SegmentOp::kSum, 0},
               {SegmentOp::kProd, 1},
               {SegmentOp::kMax, std::numeric_limits<int32_t>::lowest()},
               {SegmentOp::kMin, std::numeric_limits<int32_t>::max()}};
  for (const auto& c : cases) {
    std::map<int64_t, std::vector<int64_t>> rows;  // segment -> its rows, in order
    for (int64_t i = 0; i < num_ids; ++i) {
      if (ids[i] >= 0) rows[ids[i]].push_back(i);
    }
    std::vector<int32_t> want(segments * inner, c.identity);
    for (const auto& [segment, members] : rows) {
      for (int64_t k = 0; k < inner; ++k) {
        uint32_t acc = static_cast<uint32_t>(c.identity);
        int32_t extreme = c.identity;
        for (int64_t i : members) {
          const int32_t v = data[i * inner + k];
          if (c.op == SegmentOp::kSum) acc += static_cast<uint32_t>(v);
          if (c.op == SegmentOp::kProd) acc *= static_cast<uint32_t>(v);
          if (c.op == SegmentOp::kMax) extreme = std::max(extreme, v);
          if (c.op == SegmentOp::kMin) extreme = std::min(extreme, v);
        }
        want[segment * inner + k] =
            c.op == SegmentOp::kSum || c.op == SegmentOp::kProd ? static_cast<int32_t>(acc) : extreme;
      }
    }
    std::vector<int32_t> got(segments * inner);
    int64_t bad = -1;
    ASSERT_TRUE(UnsortedSegment<int32_t>(c.op, data.data(), ids.data(), num_ids, inner, segments, got.data(), &bad));
    EXPECT_EQ(got, want) << static_cast<int>(c.op);
  }
  const float values[] = {1, 2, 3};
  const int32_t past[] = {0, 3, 1};
  float out[6] = {9, 9, 9, 9, 9, 9};
  int64_t bad = -1;
  EXPECT_FALSE(UnsortedSegment<float>(SegmentOp::kSum, values, past, 3, 1, 3, out, &bad));
  EXPECT_EQ(bad, 1);
}

}  // namespace
}  // namespace kiln::ops::reference
