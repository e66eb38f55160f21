// Sparse constants (SparsityParameters): Densify against a plain dense-to-sparse encoder written here (random
// tensors of rank 1 to 4, every DENSE/SPARSE_CSR mix, a block on the last dimension), the reader giving the tensor
// its dense form (int32, uint16 and uint8 index vectors, float32, int8, float16), and every inconsistency refused
// with a message naming the tensor.
#include "runtime/model/sparsity.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kiln/builtin_ops.h"
#include "runtime/model/model.h"
#include "runtime/model/model_writer.h"
#include "tests/model/model_test_util.h"

namespace kiln {
namespace {

using SparseDimension = ModelWriter::SparseDimension;

// The sparse form of row-major `dense` (`shape`), levels in natural order, `csr[l]` choosing SPARSE_CSR for level
// l, and with `block` > 0 the last dimension split into blocks of that size (one more level, DENSE). A CSR level
// lists the entries under which some value is not zero, as LiteRT's converter does.
struct Encoded {
  SparsityDesc sparsity;
  std::vector<float> values;
};

Encoded Encode(const std::vector<float>& dense, const std::vector<int>& shape, const std::vector<bool>& csr,
               int block) {
  std::vector<int> expanded = shape;
  const size_t rank = shape.size();
  if (block > 0) {
    expanded.back() = shape.back() / block;
    expanded.push_back(block);
  }
  const size_t levels = expanded.size();
  Encoded e;
  e.sparsity.traversal_order.resize(levels);
  for (size_t l = 0; l < levels; ++l) e.sparsity.traversal_order[l] = static_cast<int>(l);
  if (block > 0) e.sparsity.block_map = {static_cast<int>(rank - 1)};
  e.sparsity.dims.resize(levels);
  for (size_t l = 0; l < levels; ++l) {
    e.sparsity.dims[l].csr = csr[l];
    if (csr[l])
      e.sparsity.dims[l].segments = {0};
    else
      e.sparsity.dims[l].dense_size = expanded[l];
  }
  // The dense offset of expanded coordinates.
  auto offset = [&](const std::vector<int>& c) {
    std::vector<int> orig(c.begin(), c.begin() + static_cast<long>(rank));
    if (block > 0) orig[rank - 1] = c[rank - 1] * block + c[rank];
    int64_t o = 0;
    for (size_t j = 0; j < rank; ++j) o = o * shape[j] + orig[j];
    return o;
  };
  // Whether anything under the prefix `c` (of length `level`) is not zero.
  std::function<bool(std::vector<int>&, size_t)> any = [&](std::vector<int>& c, size_t level) {
    if (level == levels) return dense[static_cast<size_t>(offset(c))] != 0.0f;
    for (int i = 0; i < expanded[level]; ++i) {
      c[level] = i;
      if (any(c, level + 1)) return true;
    }
    return false;
  };
  std::function<void(std::vector<int>&, size_t)> visit = [&](std::vector<int>& c, size_t level) {
    if (level == levels) {
      e.values.push_back(dense[static_cast<size_t>(offset(c))]);
      return;
    }
    SparseDimensionDesc& d = e.sparsity.dims[level];
    for (int i = 0; i < expanded[level]; ++i) {
      c[level] = i;
      if (d.csr) {
        std::vector<int> probe = c;
        if (!any(probe, level + 1)) continue;
        d.indices.push_back(i);
      }
      visit(c, level + 1);
    }
    if (d.csr) d.segments.push_back(static_cast<int64_t>(d.indices.size()));
  };
  std::vector<int> c(levels, 0);
  visit(c, 0);
  return e;
}

TEST(SparsityTest, RandomTensorsRoundTrip) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  int cases = 0;
  for (int rank = 1; rank <= 4; ++rank) {
    for (int block : {0, 2}) {
      for (int mask = 0; mask < (1 << (rank + (block > 0 ? 1 : 0))); ++mask) {
        std::vector<int> shape(static_cast<size_t>(rank));
        for (int& d : shape) d = 1 + static_cast<int>(gen() % 4);
        if (block > 0) shape.back() = block * (1 + static_cast<int>(gen() % 3));
        size_t total = 1;
        for (int d : shape) total *= static_cast<size_t>(d);
        std::vector<float> dense(total);
        for (float& v : dense) v = (gen() % 3 == 0) ? value(gen) : 0.0f;
        const size_t levels = static_cast<size_t>(rank) + (block > 0 ? 1 : 0);
        std::vector<bool> csr(levels);
        for (size_t l = 0; l < levels; ++l) csr[l] = (mask >> l) & 1;
        if (block > 0) csr.back() = false;  // blocks are dense
        const Encoded e = Encode(dense, shape, csr, block);
        std::vector<uint8_t> out;
        std::string error;
        ASSERT_TRUE(Densify(shape, e.sparsity, reinterpret_cast<const uint8_t*>(e.values.data()),
                            e.values.size() * sizeof(float), sizeof(float), &out, &error))
            << error;
        ASSERT_EQ(out.size(), total * sizeof(float));
        EXPECT_EQ(std::memcmp(out.data(), dense.data(), out.size()), 0) << "case " << cases;
        ++cases;
      }
    }
  }
  EXPECT_GT(cases, 50);
}

TEST(SparsityTest, TraversalOrderAndBlocksOnTheFirstDimension) {
  // A 4x2 matrix stored column-major (traversal order 1, 0) with the rows in blocks of 2 (block_map 0).
  const std::vector<float> dense = {1, 0, 0, 2, 3, 0, 0, 0};  // row-major [[1,0],[0,2],[3,0],[0,0]]
  SparsityDesc s;
  s.traversal_order = {1, 0, 2};
  s.block_map = {0};
  s.dims.resize(3);
  s.dims[0].dense_size = 2;  // column
  s.dims[1].csr = true;      // row block (2 of them) per column
  s.dims[1].segments = {0, 2, 3};
  s.dims[1].indices = {0, 1, 0};
  s.dims[2].dense_size = 2;  // the 2 rows of a block
  // Column 0: block 0 rows (1, 0), block 1 rows (3, 0); column 1: block 0 rows (0, 2).
  const std::vector<float> values = {1, 0, 3, 0, 0, 2};
  std::vector<uint8_t> out;
  std::string error;
  ASSERT_TRUE(Densify({4, 2}, s, reinterpret_cast<const uint8_t*>(values.data()), values.size() * 4, 4, &out, &error))
      << error;
  std::vector<float> got(8);
  std::memcpy(got.data(), out.data(), 32);
  EXPECT_EQ(got, dense);
}

// Each inconsistency, with the words its message must hold.
TEST(SparsityTest, InconsistenciesAreRefused) {
  const std::vector<float> values = {1, 2, 3};
  auto make = [] {
    SparsityDesc s;  // [2, 4]: row 0 holds columns 1 and 3, row 1 column 0
    s.traversal_order = {0, 1};
    s.dims.resize(2);
    s.dims[0].dense_size = 2;
    s.dims[1].csr = true;
    s.dims[1].segments = {0, 2, 3};
    s.dims[1].indices = {1, 3, 0};
    return s;
  };
  auto refuse = [&](const SparsityDesc& s, const std::vector<int>& shape, size_t value_count,
                    const std::string& words) {
    std::vector<uint8_t> out;
    std::string error;
    EXPECT_FALSE(Densify(shape, s, reinterpret_cast<const uint8_t*>(values.data()), value_count * 4, 4, &out, &error))
        << words;
    EXPECT_NE(error.find(words), std::string::npos) << error << " / expected: " << words;
  };
  {
    std::vector<uint8_t> out;
    std::string error;
    ASSERT_TRUE(Densify({2, 4}, make(), reinterpret_cast<const uint8_t*>(values.data()), 12, 4, &out, &error));
    std::vector<float> got(8);
    std::memcpy(got.data(), out.data(), 32);
    EXPECT_EQ(got, (std::vector<float>{0, 1, 0, 2, 3, 0, 0, 0}));
  }
  SparsityDesc s = make();
  s.dims[1].indices[1] = 4;
  refuse(s, {2, 4}, 3, "array_indices entry 1 is 4, outside [0, 4)");
  s = make();
  s.dims[1].indices[2] = -1;
  refuse(s, {2, 4}, 3, "entry 2 is -1");
  s = make();
  s.dims[1].segments = {0, 2};
  refuse(s, {2, 4}, 3, "array_segments has 2 entries");
  s = make();
  s.dims[1].segments = {0, 3, 2};
  refuse(s, {2, 4}, 3, "array_segments must run from 0");
  s = make();
  s.dims[1].segments = {0, 3, 1, 3};
  s.dims[0].dense_size = 3;
  refuse(s, {3, 4}, 3, "decreases");
  s = make();  // a later decrease must be found before the first segment runs past array_indices
  s.dims[1].segments = {0, 5, 3};
  refuse(s, {2, 4}, 3, "decreases at entry 2");
  s = make();
  s.dims[1].segments = {1, 2, 3};
  refuse(s, {2, 4}, 3, "from 0");
  refuse(make(), {2, 4}, 2, "the buffer holds 2 values");
  s = make();
  s.dims[0].dense_size = 3;
  refuse(s, {2, 4}, 3, "DENSE size 3; the dimension has 2");
  s = make();
  s.traversal_order = {1, 0};
  s.dims[0].dense_size = 4;
  refuse(s, {2, 4}, 3, "array_segments has 3 entries");  // 4 positions above need 5
  s = make();
  s.traversal_order = {0, 0};
  refuse(s, {2, 4}, 3, "traversal_order must order");
  s = make();
  s.traversal_order = {0};
  refuse(s, {2, 4}, 3, "traversal_order has 1 entries");
  s = make();
  s.block_map = {1};
  s.traversal_order = {0, 1, 2};
  s.dims.push_back(SparseDimensionDesc{false, 3, {}, {}});
  refuse(s, {2, 4}, 3, "size dividing dimension 1");
  s.block_map = {5};
  refuse(s, {2, 4}, 3, "block_map entry 0 is 5");
  s = make();  // a few stored values cannot ask for more than kMaxDenseBytes of dense data
  s.dims[0].dense_size = 1 << 20;
  s.dims[1].segments.assign((1 << 20) + 1, 3);
  s.dims[1].segments[0] = 0;
  s.dims[1].segments[1] = 2;
  refuse(s, {1 << 20, 1 << 10}, 3, "more than the 1073741824 Kiln densifies");
  s = make();  // the values are counted before the positions are walked
  s.dims[0].dense_size = 2;
  refuse(make(), {2, 4}, 4, "the buffer holds 4 values");
  s = make();
  s.dims[1].segments = {0, 2, 9};
  s.dims[1].indices.assign(9, 0);
  refuse(s, {2, 4}, 9, "more positions than the dense tensor has elements");  // fails before reading values
}

// The reader: a sparse constant read back dense, for each index vector type and the value types DENSIFY takes.
TEST(SparsityTest, ReaderDensifiesConstants) {
  for (KilnType index_type : {kKilnInt32, kKilnUInt16, kKilnUInt8}) {
    ModelWriter w;
    const int k = w.AddSparseConstTensor<float>(
        kKilnFloat32, {2, 4}, "k", {1, 2, 3}, {0, 1}, {},
        {SparseDimension{false, 2, {}, {}, index_type}, SparseDimension{true, 0, {0, 2, 3}, {1, 3, 0}, index_type}});
    const int y = w.AddTensor(kKilnFloat32, {2, 4}, "y");
    w.AddOp(kKilnBuiltinDensify, {k}, {y});
    w.SetInputs({});
    w.SetOutputs({y});
    const std::vector<uint8_t> bytes = w.Finish();
    ASSERT_FALSE(bytes.empty()) << w.error();
    ModelDesc model;
    std::string error;
    ASSERT_TRUE(ReadModel(bytes.data(), bytes.size(), &model, &error)) << error;
    const TensorDesc& t = model.subgraphs[0].tensors[static_cast<size_t>(k)];
    ASSERT_EQ(t.data_size, 32u);
    std::vector<float> got(8);
    std::memcpy(got.data(), t.data, 32);
    EXPECT_EQ(got, (std::vector<float>{0, 1, 0, 2, 3, 0, 0, 0}));
  }
  ModelWriter w;  // int8 with a quantization, and float16 (bytes copied as they are)
  const int q =
      w.AddSparseConstTensor<int8_t>(kKilnInt8, {4}, "q", {-5, 7}, {0}, {}, {SparseDimension{true, 0, {0, 2}, {0, 3}}});
  w.SetQuantization(q, {0.5f}, {0});
  const int h = w.AddSparseConstTensor<uint16_t>(kKilnFloat16, {3}, "h", {0x3c00}, {0}, {},
                                                 {SparseDimension{true, 0, {0, 1}, {2}}});
  const int y = w.AddTensor(kKilnInt8, {4}, "y");
  w.AddOp(kKilnBuiltinDensify, {q}, {y});
  w.SetInputs({});
  w.SetOutputs({y});
  const std::vector<uint8_t> bytes = w.Finish();
  ModelDesc model;
  std::string error;
  ASSERT_TRUE(ReadModel(bytes.data(), bytes.size(), &model, &error)) << error;
  const TensorDesc& tq = model.subgraphs[0].tensors[static_cast<size_t>(q)];
  ASSERT_EQ(tq.data_size, 4u);
  EXPECT_EQ(std::vector<int8_t>(tq.data, tq.data + 4), (std::vector<int8_t>{-5, 0, 0, 7}));
  EXPECT_EQ(tq.quantization.scale, (std::vector<float>{0.5f}));
  const TensorDesc& th = model.subgraphs[0].tensors[static_cast<size_t>(h)];
  ASSERT_EQ(th.data_size, 6u);
  uint16_t half[3];
  std::memcpy(half, th.data, 6);
  EXPECT_EQ(half[0], 0);
  EXPECT_EQ(half[2], 0x3c00);
}

TEST(SparsityTest, ReaderRefusesBadSparsityNamingTheTensor) {
  auto build = [](const std::vector<SparseDimension>& dims, bool constant = true) {
    ModelWriter w;
    w.set_unchecked(true);
    const int k = constant ? w.AddConstTensor<float>(kKilnFloat32, {2, 4}, "weights", {1, 2, 3})
                           : w.AddTensor(kKilnFloat32, {2, 4}, "weights");
    w.SetSparsity(k, {0, 1}, {}, dims);
    const int y = w.AddTensor(kKilnFloat32, {2, 4}, "y");
    w.AddOp(kKilnBuiltinDensify, {k}, {y});
    w.SetInputs(constant ? std::vector<int>{} : std::vector<int>{k});
    w.SetOutputs({y});
    return w.Finish();
  };
  const SparseDimension rows{false, 2, {}, {}};
  EXPECT_MODEL_ERROR(build({rows, SparseDimension{true, 0, {0, 2, 3}, {1, 9, 0}}}), "'weights'");
  EXPECT_MODEL_ERROR(build({rows, SparseDimension{true, 0, {0, 2, 3}, {1, 9, 0}}}),
                     "array_indices entry 1 is 9, outside [0, 4)");
  EXPECT_MODEL_ERROR(build({rows, SparseDimension{true, 0, {0, 2, 3}, {1, 300, 0}, kKilnUInt16}}), "entry 1 is 300");
  EXPECT_MODEL_ERROR(build({rows, SparseDimension{true, 0, {0, 2, 3}, {1, 2, 0}, kKilnUInt8}, rows}),
                     "traversal_order has 2 entries and dim_metadata 3");
  EXPECT_MODEL_ERROR(build({rows, SparseDimension{true, 0, {0, 2, 3}, {1, 2, 0}}}, false),
                     "a sparse tensor must be a constant");
  EXPECT_MODEL_ERROR(build({rows, SparseDimension{true, 0, {0, 1, 2}, {1, 2}}}), "the buffer holds 3 values");
}

}  // namespace
}  // namespace kiln
