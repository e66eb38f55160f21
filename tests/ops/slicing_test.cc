// STRIDED_SLICE, SLICE, GATHER and EXPAND_DIMS (ops/reference/slicing.h) against hand-worked cases and plain
// implementations written here from the ops' definitions (Python slicing, TF's gather with batch_dims).

#include "ops/reference/slicing.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>
#include <string>

namespace kiln::ops::reference {
namespace {

std::vector<int64_t> RowMajorStrides(const Dims& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) s[d - 1] = s[d] * dims[d];
  return s;
}

std::vector<float> Iota(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

std::string Text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// --- STRIDED_SLICE, the plain way: make the spec dense, list the indices each dimension takes (Python's
// slice rules), then walk their cartesian product. ---

struct DenseEntry {
  bool new_axis = false, shrink = false;
  std::vector<int64_t> picks;  // input indices taken (new axis: {0})
  int input_dim = -1;
};

// False where the spec is invalid (the kernel must fail too).
bool NaiveStridedSlice(const Dims& input, const StridedSliceSpec& spec, const std::vector<float>& data,
                       std::vector<float>* out, Dims* out_dims) {
  const int n = static_cast<int>(spec.begin.size());
  const int rank = static_cast<int>(input.size());
  auto bit = [](uint32_t m, int i) { return ((m >> i) & 1u) != 0; };
  int ellipses = 0, news = 0;
  for (int i = 0; i < n; ++i) {
    if (bit(spec.ellipsis_mask, i)) {
      ++ellipses;
    } else if (bit(spec.new_axis_mask, i)) {
      ++news;
    }
  }
  if (ellipses > 1 || rank + news > kMaxStridedSliceDims || n > rank + news) return false;
  // The input dimensions named by entries other than the ellipsis and new axes.
  const int named = n - ellipses - news;
  std::vector<DenseEntry> dense;
  int d = 0;
  auto full = [&](int dim) {
    DenseEntry e;
    e.input_dim = dim;
    for (int64_t k = 0; k < input[dim]; ++k) e.picks.push_back(k);
    dense.push_back(e);
  };
  for (int i = 0; i < n; ++i) {
    if (bit(spec.ellipsis_mask, i)) {
      const int cover = std::max(1, rank - named + 0);
      for (int k = 0; k < cover && d < rank; ++k) full(d++);
      continue;
    }
    if (bit(spec.new_axis_mask, i)) {
      DenseEntry e;
      e.new_axis = true;
      e.picks = {0};
      dense.push_back(e);
      continue;
    }
    if (spec.strides[i] == 0) return false;
    const int64_t D = input[d];
    DenseEntry e;
    e.input_dim = d;
    const int64_t s = spec.strides[i];
    if (bit(spec.shrink_axis_mask, i)) {
      const int64_t b = spec.begin[i];
      if (b < -D || b >= D) return false;
      e.shrink = true;
      e.picks = {b < 0 ? b + D : b};
    } else if (D > 0) {
      int64_t start, stop;
      const int64_t b = spec.begin[i];
      if (s > 0) {
        start = bit(spec.begin_mask, i) ? 0 : (b < 0 ? std::max<int64_t>(0, b + D) : std::min(b, D));
      } else {
        start = bit(spec.begin_mask, i) ? D - 1 : (b < 0 ? std::max<int64_t>(-1, b + D) : std::min(b, D - 1));
      }
      int64_t en = spec.offset ? start + spec.end[i] : spec.end[i];
      if (s > 0) {
        stop = bit(spec.end_mask, i) ? D : (en < 0 ? std::max<int64_t>(0, en + D) : std::min(en, D));
        for (int64_t k = start; k < stop; k += s) e.picks.push_back(k);
      } else {
        stop = bit(spec.end_mask, i) ? -1 : (en < 0 ? std::max<int64_t>(-1, en + D) : std::min(en, D - 1));
        for (int64_t k = start; k > stop; k += s) e.picks.push_back(k);
      }
    }
    dense.push_back(e);
    ++d;
  }
  while (d < rank) full(d++);
  // The product.
  const std::vector<int64_t> strides = RowMajorStrides(input);
  out->clear();
  out_dims->clear();
  for (const DenseEntry& e : dense) {
    if (!e.shrink) out_dims->push_back(static_cast<int64_t>(e.picks.size()));
  }
  std::vector<size_t> at(dense.size(), 0);
  int64_t total = 1;
  for (const DenseEntry& e : dense) total *= static_cast<int64_t>(e.picks.size());
  for (int64_t o = 0; o < total; ++o) {
    int64_t flat = 0;
    for (size_t k = 0; k < dense.size(); ++k) {
      if (!dense[k].new_axis) flat += dense[k].picks[at[k]] * strides[dense[k].input_dim];
    }
    out->push_back(data[static_cast<size_t>(flat)]);
    for (size_t k = dense.size(); k-- > 0;) {
      if (++at[k] < dense[k].picks.size()) break;
      at[k] = 0;
    }
  }
  return true;
}

std::vector<float> RunPlan(const StridedSlicePlan& plan, const std::vector<float>& input) {
  std::vector<float> out(static_cast<size_t>(NumElements(plan.output_dims)), -1.0f);
  StridedSliceCopy(plan, sizeof(float), input.data(), out.data());
  return out;
}

TEST(StridedSliceTest, HandCases) {
  StridedSlicePlan plan;
  std::string error;
  const std::vector<float> x = Iota(24);  // [2, 3, 4]
  StridedSliceSpec s;
  // x[:, 1:, ::-2]
  s.begin = {0, 1, 0};
  s.end = {0, 0, 0};
  s.strides = {1, 1, -2};
  s.begin_mask = 0b101;
  s.end_mask = 0b111;
  ASSERT_TRUE(MakeStridedSlicePlan({2, 3, 4}, s, &plan, &error)) << error;
  EXPECT_EQ(plan.output_dims, (Dims{2, 2, 2}));
  EXPECT_EQ(RunPlan(plan, x), (std::vector<float>{7, 5, 11, 9, 19, 17, 23, 21}));
  // x[-1, ..., 2]: shrink both ends, ellipsis in the middle.
  s = StridedSliceSpec();
  s.begin = {-1, 0, 2};
  s.end = {0, 0, 3};
  s.strides = {1, 1, 1};
  s.ellipsis_mask = 0b010;
  s.shrink_axis_mask = 0b101;
  ASSERT_TRUE(MakeStridedSlicePlan({2, 3, 4}, s, &plan, &error)) << error;
  EXPECT_EQ(plan.output_dims, (Dims{3}));
  EXPECT_EQ(RunPlan(plan, x), (std::vector<float>{14, 18, 22}));
  // x[tf.newaxis, 1, :2]
  s = StridedSliceSpec();
  s.begin = {0, 1, 0};
  s.end = {0, 2, 2};
  s.strides = {1, 1, 1};
  s.new_axis_mask = 0b001;
  s.shrink_axis_mask = 0b010;
  ASSERT_TRUE(MakeStridedSlicePlan({2, 3, 4}, s, &plan, &error)) << error;
  EXPECT_EQ(plan.output_dims, (Dims{1, 2, 4}));
  EXPECT_EQ(RunPlan(plan, x), (std::vector<float>{12, 13, 14, 15, 16, 17, 18, 19}));
  // offset: begin 1, end counts 2 from it along the last axis.
  s = StridedSliceSpec();
  s.begin = {0, 0, 1};
  s.end = {2, 3, 2};
  s.strides = {1, 1, 1};
  s.offset = true;
  ASSERT_TRUE(MakeStridedSlicePlan({2, 3, 4}, s, &plan, &error)) << error;
  EXPECT_EQ(plan.output_dims, (Dims{2, 3, 2}));
  Dims offset_shape;
  ASSERT_TRUE(StridedSliceOffsetShape({2, 3, 4}, s, &offset_shape, &error)) << error;
  EXPECT_EQ(offset_shape, plan.output_dims);
  // Out-of-range begin and end clamp; a reversed range is empty.
  s = StridedSliceSpec();
  s.begin = {-100};
  s.end = {100};
  s.strides = {1};
  ASSERT_TRUE(MakeStridedSlicePlan({5}, s, &plan, &error)) << error;
  EXPECT_EQ(plan.output_dims, (Dims{5}));
  s.begin = {3};
  s.end = {1};
  ASSERT_TRUE(MakeStridedSlicePlan({5}, s, &plan, &error)) << error;
  EXPECT_EQ(plan.output_dims, (Dims{0}));
  // A rank-0 input with an empty spec is copied.
  s = StridedSliceSpec();
  ASSERT_TRUE(MakeStridedSlicePlan({}, s, &plan, &error)) << error;
  EXPECT_EQ(plan.output_dims, Dims{});
  EXPECT_EQ(RunPlan(plan, {42.0f}), (std::vector<float>{42.0f}));
}

TEST(StridedSliceTest, Errors) {
  StridedSlicePlan plan;
  std::string error;
  StridedSliceSpec s;
  s.begin = {0};
  s.end = {1};
  s.strides = {0};
  EXPECT_FALSE(MakeStridedSlicePlan({4}, s, &plan, &error));
  EXPECT_NE(error.find("strides[0] is 0"), std::string::npos) << error;
  s.strides = {1};
  s.shrink_axis_mask = 1;
  s.begin = {4};
  EXPECT_FALSE(MakeStridedSlicePlan({4}, s, &plan, &error));
  EXPECT_NE(error.find("begin[0] = 4 is out of range"), std::string::npos) << error;
  s.begin = {-5};
  EXPECT_FALSE(MakeStridedSlicePlan({4}, s, &plan, &error));
  s = StridedSliceSpec();
  s.begin = {0, 0};
  s.end = {1, 1};
  s.strides = {1};
  EXPECT_FALSE(MakeStridedSlicePlan({4, 4}, s, &plan, &error));
  EXPECT_NE(error.find("same number"), std::string::npos) << error;
  s.strides = {1, 1};
  EXPECT_FALSE(MakeStridedSlicePlan({4}, s, &plan, &error));  // more entries than dimensions
  EXPECT_NE(error.find("2 entries but the input has rank 1"), std::string::npos) << error;
  s.ellipsis_mask = 0b11;
  EXPECT_FALSE(MakeStridedSlicePlan({4, 4}, s, &plan, &error));
  EXPECT_NE(error.find("more than one bit"), std::string::npos) << error;
  s = StridedSliceSpec();
  s.begin = {0, 0};
  s.end = {1, 1};
  s.strides = {1, 1};
  s.new_axis_mask = 0b11;
  EXPECT_FALSE(MakeStridedSlicePlan({2, 2, 2, 2}, s, &plan, &error));  // 6 effective dimensions
  EXPECT_NE(error.find("at most 5"), std::string::npos) << error;
}

// Random specs over ranks 0 to 5 (with new axes up to 5 effective dimensions), sizes 0 to 4, every mask,
// negative indices and strides, offset on and off, elements of 1, 2, 4, 8 and 3 bytes.
TEST(StridedSliceTest, MatchesNaive) {
  std::mt19937 rng(11);
  auto pick = [&](int lo, int hi) {
    return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1));
  };
  int checked = 0, refused = 0;
  for (int iter = 0; iter < 6000; ++iter) {
    const int rank = pick(0, 5);
    Dims input(static_cast<size_t>(rank));
    for (int64_t& d : input) d = pick(0, 4) == 0 ? 0 : pick(1, 4);
    if (iter % 3 != 0) {
      for (int64_t& d : input) d = std::max<int64_t>(d, 1);
    }
    StridedSliceSpec s;
    const int n = pick(0, std::min(rank + 1, 5));
    for (int i = 0; i < n; ++i) {
      s.begin.push_back(pick(-6, 6));
      s.end.push_back(pick(-6, 6));
      int st = pick(-3, 3);
      if (st == 0 && pick(0, 20) != 0) st = 1;
      s.strides.push_back(st);
    }
    const uint32_t all = n == 0 ? 0u : ((1u << n) - 1u);
    s.begin_mask = rng() & all;
    s.end_mask = rng() & all;
    s.shrink_axis_mask = pick(0, 2) == 0 ? (rng() & all) : 0u;
    s.new_axis_mask = pick(0, 2) == 0 ? (rng() & all) : 0u;
    if (n > 0 && pick(0, 2) == 0) s.ellipsis_mask = 1u << pick(0, n - 1);
    if (pick(0, 20) == 0) s.ellipsis_mask = all;
    s.offset = pick(0, 4) == 0;
    // The oracle resolves the ellipsis only as the kernel does when an ellipsis and a new axis do not share a
    // bit.
    s.new_axis_mask &= ~s.ellipsis_mask;
    const std::vector<float> data = Iota(NumElements(input));
    std::vector<float> expected;
    Dims expected_dims;
    const bool ok = NaiveStridedSlice(input, s, data, &expected, &expected_dims);
    StridedSlicePlan plan;
    std::string error;
    const bool made = MakeStridedSlicePlan(input, s, &plan, &error);
    const std::string what = "input " + Text(input) + " begin " + Text(s.begin) + " end " + Text(s.end) +
                             " strides " + Text(s.strides) + " masks b" + std::to_string(s.begin_mask) +
                             " e" + std::to_string(s.end_mask) + " ell" + std::to_string(s.ellipsis_mask) +
                             " new" + std::to_string(s.new_axis_mask) + " shr" +
                             std::to_string(s.shrink_axis_mask) + (s.offset ? " offset" : "");
    ASSERT_EQ(made, ok) << what << ": " << error;
    if (!ok) {
      ++refused;
      continue;
    }
    ++checked;
    ASSERT_EQ(plan.output_dims, expected_dims) << what;
    ASSERT_EQ(RunPlan(plan, data), expected) << what;
    // The same box in other element sizes: each element's bytes tagged with its index.
    for (size_t size : {size_t{1}, size_t{2}, size_t{3}, size_t{8}}) {
      std::vector<unsigned char> in(data.size() * size), out(expected.size() * size, 0xEE);
      for (size_t i = 0; i < data.size(); ++i) {
        for (size_t b = 0; b < size; ++b) in[i * size + b] = static_cast<unsigned char>(i * 7 + b);
      }
      StridedSliceCopy(plan, size, in.data(), out.data());
      for (size_t i = 0; i < expected.size(); ++i) {
        const size_t src = static_cast<size_t>(expected[i]);
        for (size_t b = 0; b < size; ++b) {
          ASSERT_EQ(out[i * size + b], static_cast<unsigned char>(src * 7 + b)) << what << " size " << size;
        }
      }
    }
  }
  EXPECT_GT(checked, 3000);
  EXPECT_GT(refused, 50);
}

// --- SLICE ---

TEST(SliceTest, MatchesNaive) {
  std::mt19937 rng(5);
  auto pick = [&](int lo, int hi) {
    return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1));
  };
  int checked = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    const int rank = pick(0, 5);
    Dims input(static_cast<size_t>(rank));
    for (int64_t& d : input) d = pick(0, 4);
    std::vector<int64_t> begin(static_cast<size_t>(rank)), size(static_cast<size_t>(rank));
    bool valid = true;
    for (int d = 0; d < rank; ++d) {
      begin[d] = pick(-1, static_cast<int>(input[d]) + 1);
      size[d] = pick(-2, static_cast<int>(input[d]) + 1);
      const int64_t real = size[d] == -1 ? input[d] - begin[d] : size[d];
      if (begin[d] < 0 || begin[d] > input[d] || size[d] < -1 || begin[d] + real > input[d]) valid = false;
    }
    StridedSlicePlan plan;
    std::string error;
    ASSERT_EQ(MakeSlicePlan(input, begin, size, &plan, &error), valid)
        << Text(input) << " " << Text(begin) << " " << Text(size) << ": " << error;
    if (!valid) continue;
    ++checked;
    Dims out_dims;
    for (int d = 0; d < rank; ++d) out_dims.push_back(size[d] == -1 ? input[d] - begin[d] : size[d]);
    ASSERT_EQ(plan.output_dims, out_dims);
    const std::vector<float> data = Iota(NumElements(input));
    const std::vector<int64_t> strides = RowMajorStrides(input);
    std::vector<float> expected;
    const int64_t total = NumElements(out_dims);
    for (int64_t o = 0; o < total; ++o) {
      int64_t rest = o, flat = 0;
      for (int d = rank; d-- > 0;) {
        flat += (begin[d] + rest % out_dims[d]) * strides[d];
        rest /= out_dims[d];
      }
      expected.push_back(data[static_cast<size_t>(flat)]);
    }
    ASSERT_EQ(RunPlan(plan, data), expected) << Text(input) << " " << Text(begin) << " " << Text(size);
  }
  EXPECT_GT(checked, 500);
}

TEST(SliceTest, Errors) {
  StridedSlicePlan plan;
  std::string error;
  EXPECT_FALSE(MakeSlicePlan({4}, {0, 0}, {1, 1}, &plan, &error));
  EXPECT_NE(error.find("needs 1"), std::string::npos) << error;
  EXPECT_FALSE(MakeSlicePlan({4}, {3}, {2}, &plan, &error));
  EXPECT_NE(error.find("exceeds dimension 0 of size 4"), std::string::npos) << error;
  EXPECT_FALSE(MakeSlicePlan({4}, {-1}, {1}, &plan, &error));
  EXPECT_NE(error.find("begin[0] = -1 is out of range"), std::string::npos) << error;
  EXPECT_FALSE(MakeSlicePlan({4}, {0}, {-2}, &plan, &error));
  EXPECT_NE(error.find("only -1"), std::string::npos) << error;
}

// --- GATHER ---

// out[b..., o..., i..., n...] = in[b..., o..., idx[b..., i...], n...], by unravelling every output index.
std::vector<float> NaiveGather(const Dims& input, const Dims& indices, const std::vector<int64_t>& idx,
                               int axis, int batch_dims, const std::vector<float>& data, Dims* out_dims) {
  Dims out(input.begin(), input.begin() + axis);
  out.insert(out.end(), indices.begin() + batch_dims, indices.end());
  out.insert(out.end(), input.begin() + axis + 1, input.end());
  *out_dims = out;
  const std::vector<int64_t> in_strides = RowMajorStrides(input), idx_strides = RowMajorStrides(indices);
  const int idx_rank = static_cast<int>(indices.size());
  std::vector<float> result;
  for (int64_t o = 0; o < NumElements(out); ++o) {
    std::vector<int64_t> coord(out.size());
    int64_t rest = o;
    for (size_t d = out.size(); d-- > 0;) {
      coord[d] = rest % out[d];
      rest /= out[d];
    }
    // Index position: the batch coordinates then the index coordinates.
    int64_t ipos = 0;
    for (int d = 0; d < batch_dims; ++d) ipos += coord[d] * idx_strides[d];
    for (int d = batch_dims; d < idx_rank; ++d) ipos += coord[axis + d - batch_dims] * idx_strides[d];
    int64_t flat = 0;
    for (int d = 0; d < axis; ++d) flat += coord[d] * in_strides[d];
    flat += idx[static_cast<size_t>(ipos)] * in_strides[axis];
    for (size_t d = axis + 1; d < input.size(); ++d)
      flat += coord[d - 1 + idx_rank - batch_dims] * in_strides[d];
    result.push_back(data[static_cast<size_t>(flat)]);
  }
  return result;
}

TEST(GatherTest, MatchesNaive) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) {
    return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1));
  };
  for (int iter = 0; iter < 3000; ++iter) {
    const int rank = pick(1, 6);
    Dims input(static_cast<size_t>(rank));
    for (int64_t& d : input) d = pick(0, 5) == 0 ? 0 : pick(1, 4);
    const int axis = pick(0, rank - 1);
    const int batch_dims = pick(0, std::min(axis, 2));
    const int extra = pick(0, 2);
    Dims indices(input.begin(), input.begin() + batch_dims);
    for (int k = 0; k < extra; ++k) indices.push_back(pick(0, 3));
    std::vector<int64_t> idx(static_cast<size_t>(NumElements(indices)));
    for (int64_t& v : idx) v = input[axis] == 0 ? 0 : pick(0, static_cast<int>(input[axis]) - 1);
    const bool make_bad = !idx.empty() && pick(0, 5) == 0;
    if (make_bad)
      idx[static_cast<size_t>(pick(0, static_cast<int>(idx.size()) - 1))] = pick(0, 1) ? -1 : input[axis];
    // Negative axis and batch_dims name the same dimensions.
    const int given_axis = pick(0, 1) ? axis - rank : axis;
    const int given_batch = pick(0, 1) && batch_dims < static_cast<int>(indices.size())
                                ? batch_dims - static_cast<int>(indices.size())
                                : batch_dims;
    GatherParams params;
    Dims out_dims;
    std::string error;
    ASSERT_TRUE(MakeGatherParams(input, indices, given_axis, given_batch, &params, &out_dims, &error))
        << error;
    const std::vector<float> data = Iota(NumElements(input));
    Dims expected_dims;
    std::vector<int32_t> idx32(idx.begin(), idx.end());
    std::vector<float> out(static_cast<size_t>(NumElements(out_dims)), -1.0f);
    int64_t bad = -1;
    const std::string what = "input " + Text(input) + " indices " + Text(indices) + " axis " +
                             std::to_string(axis) + " batch_dims " + std::to_string(batch_dims);
    // Any index outside [0, size) (also every index into an empty axis) fails: the first is reported and
    // nothing is written.
    int64_t first = -1;
    for (size_t i = 0; i < idx.size(); ++i) {
      if (idx[i] < 0 || idx[i] >= input[axis]) {
        first = static_cast<int64_t>(i);
        break;
      }
    }
    if (first >= 0) {
      ASSERT_FALSE(GatherCopy(params, sizeof(float), data.data(), idx.data(), out.data(), &bad)) << what;
      EXPECT_EQ(bad, first) << what;
      for (float v : out) ASSERT_EQ(v, -1.0f) << what;
      continue;
    }
    const std::vector<float> expected =
        NaiveGather(input, indices, idx, axis, batch_dims, data, &expected_dims);
    ASSERT_EQ(out_dims, expected_dims) << what;
    ASSERT_TRUE(GatherCopy(params, sizeof(float), data.data(), idx.data(), out.data(), &bad)) << what;
    ASSERT_EQ(out, expected) << what;
    std::fill(out.begin(), out.end(), -1.0f);
    ASSERT_TRUE(GatherCopy(params, sizeof(float), data.data(), idx32.data(), out.data(), &bad)) << what;
    ASSERT_EQ(out, expected) << what;
  }
}

TEST(GatherTest, HandCaseAndErrors) {
  GatherParams p;
  Dims out;
  std::string error;
  // [[1, 2], [3, 4], [5, 6]] gathered rows [2, 0] -> [[5, 6], [1, 2]]; a scalar index drops the axis.
  ASSERT_TRUE(MakeGatherParams({3, 2}, {2}, 0, 0, &p, &out, &error));
  EXPECT_EQ(out, (Dims{2, 2}));
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  std::vector<float> y(4);
  const std::vector<int32_t> rows = {2, 0};
  int64_t bad = -1;
  ASSERT_TRUE(GatherCopy(p, sizeof(float), x.data(), rows.data(), y.data(), &bad));
  EXPECT_EQ(y, (std::vector<float>{5, 6, 1, 2}));
  ASSERT_TRUE(MakeGatherParams({3, 2}, {}, 1, 0, &p, &out, &error));
  EXPECT_EQ(out, (Dims{3}));
  EXPECT_FALSE(MakeGatherParams({3, 2}, {2}, 2, 0, &p, &out, &error));
  EXPECT_NE(error.find("axis 2 is out of range"), std::string::npos) << error;
  EXPECT_FALSE(MakeGatherParams({3, 2}, {3, 1}, 0, 1, &p, &out, &error));
  EXPECT_NE(error.find("must not exceed axis"), std::string::npos) << error;
  EXPECT_FALSE(MakeGatherParams({3, 2}, {2, 1}, 1, 1, &p, &out, &error));
  EXPECT_NE(error.find("batch dimension 0 differs"), std::string::npos) << error;
  EXPECT_FALSE(MakeGatherParams({}, {2}, 0, 0, &p, &out, &error));
  EXPECT_FALSE(MakeGatherParams({3, 2}, {2}, 0, 2, &p, &out, &error));
  EXPECT_NE(error.find("batch_dims 2 is out of range"), std::string::npos) << error;
}

// --- EXPAND_DIMS ---

TEST(ExpandDimsTest, Shapes) {
  Dims out;
  std::string error;
  ASSERT_TRUE(ExpandDimsOutputShape({}, 0, &out, &error));
  EXPECT_EQ(out, (Dims{1}));
  ASSERT_TRUE(ExpandDimsOutputShape({}, -1, &out, &error));
  EXPECT_EQ(out, (Dims{1}));
  ASSERT_TRUE(ExpandDimsOutputShape({2, 3}, 2, &out, &error));
  EXPECT_EQ(out, (Dims{2, 3, 1}));
  ASSERT_TRUE(ExpandDimsOutputShape({2, 3}, -1, &out, &error));
  EXPECT_EQ(out, (Dims{2, 3, 1}));
  ASSERT_TRUE(ExpandDimsOutputShape({2, 3}, -3, &out, &error));
  EXPECT_EQ(out, (Dims{1, 2, 3}));
  ASSERT_TRUE(ExpandDimsOutputShape({2, 0, 1, 1, 1, 1}, 1, &out, &error));
  EXPECT_EQ(out, (Dims{2, 1, 0, 1, 1, 1, 1}));
  EXPECT_FALSE(ExpandDimsOutputShape({2, 3}, 3, &out, &error));
  EXPECT_NE(error.find("axis 3 is out of range [-3, 2]"), std::string::npos) << error;
  EXPECT_FALSE(ExpandDimsOutputShape({2, 3}, -4, &out, &error));
}

}  // namespace
}  // namespace kiln::ops::reference
