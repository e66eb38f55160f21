// SPLIT, SPLIT_V, UNPACK, PACK, TILE and BROADCAST_TO (ops/reference/split_pack.h) against plain versions
// written here by unravelling every output coordinate.

#include "ops/reference/split_pack.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <string>

namespace kiln::ops::reference {
namespace {

std::vector<int64_t> Unravel(int64_t flat, const Dims& dims) {
  std::vector<int64_t> c(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    c[d] = flat % dims[d];
    flat /= dims[d];
  }
  return c;
}

int64_t Ravel(const std::vector<int64_t>& c, const Dims& dims) {
  int64_t flat = 0;
  for (size_t d = 0; d < dims.size(); ++d) flat = flat * dims[d] + c[d];
  return flat;
}

std::vector<int32_t> Iota(int64_t n, int32_t from = 0) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), from);
  return v;
}

std::string Text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

class Rng {
 public:
  explicit Rng(uint32_t seed) : rng_(seed) {}
  int Pick(int lo, int hi) { return lo + static_cast<int>(rng_() % static_cast<uint32_t>(hi - lo + 1)); }

 private:
  std::mt19937 rng_;
};

// Splits `input` into pieces of `sizes` along `axis` the plain way and checks SplitCopy, then joins them
// back.
void CheckSplit(const Dims& input, int64_t axis, const AxisPieces& pieces, const std::string& what) {
  const std::vector<int32_t> data = Iota(NumElements(input));
  std::vector<std::vector<int32_t>> outs;
  std::vector<void*> out_ptrs;
  for (int64_t s : pieces.sizes) {
    outs.emplace_back(static_cast<size_t>(NumElements(PieceShape(input, axis, s))), -1);
  }
  for (auto& o : outs) out_ptrs.push_back(o.data());
  SplitCopy(pieces, sizeof(int32_t), data.data(), out_ptrs.data());
  int64_t offset = 0;
  for (size_t i = 0; i < pieces.sizes.size(); ++i) {
    const Dims shape = PieceShape(input, axis, pieces.sizes[i]);
    for (int64_t o = 0; o < NumElements(shape); ++o) {
      std::vector<int64_t> c = Unravel(o, shape);
      c[static_cast<size_t>(axis)] += offset;
      ASSERT_EQ(outs[i][static_cast<size_t>(o)], data[static_cast<size_t>(Ravel(c, input))])
          << what << " piece " << i;
    }
    offset += pieces.sizes[i];
  }
  std::vector<const void*> in_ptrs(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) in_ptrs[i] = outs[i].data();
  std::vector<int32_t> joined(data.size(), -1);
  JoinCopy(pieces, sizeof(int32_t), in_ptrs.data(), joined.data());
  ASSERT_EQ(joined, data) << what << " joined back";
}

TEST(SplitTest, SplitAndSplitVMatchNaive) {
  Rng rng(3);
  for (int iter = 0; iter < 2000; ++iter) {
    const int rank = rng.Pick(1, 6);
    Dims input(static_cast<size_t>(rank));
    for (int64_t& d : input) d = rng.Pick(0, 4);
    const int64_t axis = rng.Pick(0, rank - 1);
    std::string error;
    AxisPieces pieces;
    const int n = rng.Pick(1, 4);
    input[static_cast<size_t>(axis)] = n * rng.Pick(0, 3);
    ASSERT_TRUE(MakeSplit(input, axis, n, &pieces, &error)) << error;
    CheckSplit(input, axis, pieces, "split " + Text(input) + " axis " + std::to_string(axis));
    // SPLIT_V: random sizes, one maybe -1.
    std::vector<int64_t> sizes;
    int64_t left = input[static_cast<size_t>(axis)];
    for (int i = 0; i < n - 1; ++i) {
      const int64_t s = rng.Pick(0, static_cast<int>(left));
      sizes.push_back(s);
      left -= s;
    }
    sizes.push_back(left);
    if (rng.Pick(0, 1)) sizes[static_cast<size_t>(rng.Pick(0, n - 1))] = -1;
    ASSERT_TRUE(MakeSplitV(input, axis, sizes, &pieces, &error)) << error;
    CheckSplit(input, axis, pieces, "split_v " + Text(input) + " sizes " + Text(sizes));
  }
}

TEST(SplitTest, Errors) {
  AxisPieces p;
  std::string error;
  EXPECT_FALSE(MakeSplit({5, 2}, 0, 2, &p, &error));
  EXPECT_NE(error.find("does not split evenly into 2"), std::string::npos) << error;
  EXPECT_FALSE(MakeSplit({4}, 0, 0, &p, &error));
  EXPECT_FALSE(MakeSplitV({5}, 0, {2, 2}, &p, &error));
  EXPECT_NE(error.find("sum to 4, not dimension 0 of size 5"), std::string::npos) << error;
  EXPECT_FALSE(MakeSplitV({5}, 0, {-1, -1}, &p, &error));
  EXPECT_NE(error.find("more than one -1"), std::string::npos) << error;
  EXPECT_FALSE(MakeSplitV({5}, 0, {6, -1}, &p, &error));
  EXPECT_FALSE(MakeSplitV({5}, 0, {-2, 7}, &p, &error));
  EXPECT_NE(error.find("size_splits[0] is -2"), std::string::npos) << error;
  int64_t axis = 0;
  EXPECT_TRUE(NormalizeAxis(-1, 3, &axis, &error));
  EXPECT_EQ(axis, 2);
  EXPECT_FALSE(NormalizeAxis(3, 3, &axis, &error));
  EXPECT_NE(error.find("axis 3 is out of range [-3, 3)"), std::string::npos) << error;
  EXPECT_FALSE(NormalizeAxis(0, 0, &axis, &error));
}

TEST(PackTest, PackAndUnpackMatchNaive) {
  Rng rng(9);
  for (int iter = 0; iter < 2000; ++iter) {
    const int rank = rng.Pick(0, 5);
    Dims input(static_cast<size_t>(rank));
    for (int64_t& d : input) d = rng.Pick(0, 3);
    const int count = rng.Pick(1, 4);
    const int axis = rng.Pick(-rank - 1, rank);
    const int64_t a = axis < 0 ? axis + rank + 1 : axis;
    AxisPieces pieces;
    Dims out_dims;
    std::string error;
    ASSERT_TRUE(MakePack(input, axis, count, &pieces, &out_dims, &error)) << error;
    Dims expected_dims = input;
    expected_dims.insert(expected_dims.begin() + a, count);
    ASSERT_EQ(out_dims, expected_dims);
    std::vector<std::vector<int32_t>> ins;
    std::vector<const void*> in_ptrs;
    for (int i = 0; i < count; ++i) ins.push_back(Iota(NumElements(input), 1000 * i));
    for (auto& v : ins) in_ptrs.push_back(v.data());
    std::vector<int32_t> out(static_cast<size_t>(NumElements(out_dims)), -1);
    JoinCopy(pieces, sizeof(int32_t), in_ptrs.data(), out.data());
    for (int64_t o = 0; o < NumElements(out_dims); ++o) {
      std::vector<int64_t> c = Unravel(o, out_dims);
      const int64_t which = c[static_cast<size_t>(a)];
      c.erase(c.begin() + a);
      ASSERT_EQ(out[static_cast<size_t>(o)],
                ins[static_cast<size_t>(which)][static_cast<size_t>(Ravel(c, input))])
          << Text(input) << " axis " << axis;
    }
    // UNPACK of the packed tensor gives the inputs back.
    AxisPieces unpack;
    Dims piece_dims;
    ASSERT_TRUE(MakeUnpack(out_dims, axis < 0 ? a - static_cast<int64_t>(out_dims.size()) : a, count, &unpack,
                           &piece_dims, &error))
        << error;
    ASSERT_EQ(piece_dims, input);
    std::vector<std::vector<int32_t>> back(static_cast<size_t>(count),
                                           std::vector<int32_t>(static_cast<size_t>(NumElements(input)), -1));
    std::vector<void*> back_ptrs;
    for (auto& v : back) back_ptrs.push_back(v.data());
    SplitCopy(unpack, sizeof(int32_t), out.data(), back_ptrs.data());
    ASSERT_EQ(back, ins);
  }
  AxisPieces p;
  Dims out;
  std::string error;
  EXPECT_FALSE(MakePack({2, 3}, 3, 2, &p, &out, &error));
  EXPECT_NE(error.find("axis 3 is out of range [-3, 3)"), std::string::npos) << error;
  EXPECT_FALSE(MakeUnpack({2, 3}, 1, 2, &p, &out, &error));
  EXPECT_NE(error.find("has size 3, not num 2"), std::string::npos) << error;
  EXPECT_FALSE(MakeUnpack({}, 0, 1, &p, &out, &error));
}

// TILE and BROADCAST_TO: out[c] = in[c[d] % in_dim[d]], input aligned to the output's rank.
void CheckRepeat(const RepeatParams& params, size_t element_size, const std::string& what) {
  const Dims& in_dims = params.input_dims;
  const Dims& out_dims = params.output_dims;
  const int64_t in_count = NumElements(in_dims);
  std::vector<unsigned char> in(static_cast<size_t>(in_count) * element_size);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 13 + 1);
  std::vector<unsigned char> out(static_cast<size_t>(NumElements(out_dims)) * element_size, 0);
  RepeatCopy(params, element_size, in.data(), out.data());
  for (int64_t o = 0; o < NumElements(out_dims); ++o) {
    std::vector<int64_t> c = Unravel(o, out_dims);
    for (size_t d = 0; d < c.size(); ++d) c[d] %= in_dims[d];
    const int64_t src = Ravel(c, in_dims);
    for (size_t b = 0; b < element_size; ++b) {
      ASSERT_EQ(out[static_cast<size_t>(o) * element_size + b],
                in[static_cast<size_t>(src) * element_size + b])
          << what << " at " << o;
    }
  }
}

TEST(RepeatTest, TileAndBroadcastToMatchNaive) {
  Rng rng(21);
  for (int iter = 0; iter < 2000; ++iter) {
    const int rank = rng.Pick(0, 6);
    Dims input(static_cast<size_t>(rank));
    for (int64_t& d : input) d = rng.Pick(0, 3);
    std::vector<int64_t> multiples(static_cast<size_t>(rank));
    for (int64_t& m : multiples) m = rng.Pick(0, 3);
    RepeatParams params;
    std::string error;
    ASSERT_TRUE(MakeTile(input, multiples, &params, &error)) << error;
    for (size_t d = 0; d < input.size(); ++d) ASSERT_EQ(params.output_dims[d], input[d] * multiples[d]);
    CheckRepeat(params, 1 + static_cast<size_t>(iter % 8), "tile " + Text(input) + " x " + Text(multiples));
    // BROADCAST_TO: a shape with up to 2 more leading dimensions; input dims of 1 stretch.
    std::vector<int64_t> shape;
    for (int k = rng.Pick(0, 2); k > 0; --k) shape.push_back(rng.Pick(0, 3));
    for (int64_t d : input) shape.push_back(d == 1 ? rng.Pick(0, 3) : d);
    ASSERT_TRUE(MakeBroadcastTo(input, shape, &params, &error)) << error;
    ASSERT_EQ(params.output_dims, shape);
    CheckRepeat(params, 4, "broadcast " + Text(input) + " to " + Text(shape));
  }
  RepeatParams p;
  std::string error;
  EXPECT_FALSE(MakeTile({2, 3}, {1}, &p, &error));
  EXPECT_NE(error.find("needs 2"), std::string::npos) << error;
  EXPECT_FALSE(MakeTile({2}, {-1}, &p, &error));
  EXPECT_NE(error.find("multiples[0] is -1"), std::string::npos) << error;
  EXPECT_FALSE(MakeBroadcastTo({2, 3}, {3}, &p, &error));
  EXPECT_NE(error.find("fewer dimensions"), std::string::npos) << error;
  EXPECT_FALSE(MakeBroadcastTo({2, 3}, {4, 3}, &p, &error));
  EXPECT_NE(error.find("does not broadcast to shape [4, 3]"), std::string::npos) << error;
  EXPECT_FALSE(MakeBroadcastTo({1}, {-1}, &p, &error));
}

}  // namespace
}  // namespace kiln::ops::reference
