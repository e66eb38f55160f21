// SEGMENT_SUM, MATRIX_DIAG, MATRIX_SET_DIAG, DYNAMIC_UPDATE_SLICE, REVERSE_SEQUENCE, SPARSE_TO_DENSE,
// EMBEDDING_LOOKUP_SPARSE, RIGHT_SHIFT,
// BITWISE_XOR, BITCAST, BUCKETIZE, FAKE_QUANT, the StableHLO elementwise ops and the complex ops (REAL, IMAG,
// COMPLEX_ABS, RFFT2D) and RANDOM_UNIFORM/RANDOM_STANDARD_NORMAL through the interpreter, on single-op
// ModelWriter models: shapes, types, run-time start indices, empty tensors, and the refusals with their messages
// (naming the op and the tensor).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api.h"
#include "runtime/model/model_writer.h"
#include "tests/ops/wrapper_runner.h"

namespace kiln::ops {
namespace {

using wrapper_testing::ExpectErrorMentions;
using wrapper_testing::Runner;

TEST(SegmentSumWrapperTest, RunsAndRefusesClearly) {
  {
    ModelWriter w;
    const int data = w.AddTensor(kKilnFloat32, {4, 2}, "data");
    const int ids = w.AddConstTensor<int32_t>(kKilnInt32, {4}, "ids", {0, 0, 1, 2});
    const int y = w.AddTensor(kKilnFloat32, {1}, "y");  // the declared shape is replaced: [3, 2]
    w.AddOp(kKilnBuiltinSegmentSum, {data, ids}, {y});
    w.SetInputs({data});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float values[] = {1, 2, 3, 4, 5, 6, 7, 8};
    r.SetInput(0, values, sizeof(values));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{3, 2}));
    EXPECT_EQ(r.Output(), (std::vector<float>{4, 6, 5, 6, 7, 8}));
  }
  {
    ModelWriter w;  // no rows: no segments (ids at run time: a dynamic output, runtime_shapes_wrapper_test.cc)
    const int data = w.AddTensor(kKilnInt32, {0, 3}, "data");
    const int ids = w.AddTensor(kKilnInt32, {0}, "ids");
    const int y = w.AddTensor(kKilnInt32, {1, 3}, "y");
    w.AddOp(kKilnBuiltinSegmentSum, {data, ids}, {y});
    w.SetInputs({data, ids});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{0, 3}));
  }
  struct Case {
    KilnType type;
    std::vector<int> data_dims, id_dims;
    std::vector<int32_t> ids;
    std::vector<std::string> message;
  };
  const Case cases[] = {
      {kKilnFloat32, {4}, {4}, {0, 2, 2, 3}, {"SEGMENT_SUM", "segment id 2 at position 1 of segment_ids 'ids'"}},
      {kKilnFloat32, {3}, {3}, {1, 1, 2}, {"segment id 1 at position 0", "must start at 0"}},
      {kKilnFloat32, {3}, {3}, {0, 1, 0}, {"segment id 0 at position 2"}},
      {kKilnFloat32, {4, 2}, {3}, {0, 0, 1}, {"segment_ids 'ids' hold 3 ids; data 'data' has 4 rows"}},
      {kKilnFloat32, {2, 2}, {2, 2}, {0, 0, 0, 0}, {"segment_ids 'ids'", "rank"}},
      {kKilnFloat32, {}, {1}, {0}, {"data 'data'", "rank"}},
      {kKilnInt8, {2}, {2}, {0, 0}, {"data 'data' has type int8; expected float32 or int32"}},
  };
  for (const Case& c : cases) {
    ModelWriter w;
    const int data = w.AddTensor(c.type, c.data_dims, "data");
    const int ids = w.AddConstTensor<int32_t>(kKilnInt32, c.id_dims, "ids", c.ids);
    const int y = w.AddTensor(c.type, {1}, "y");
    w.AddOp(kKilnBuiltinSegmentSum, {data, ids}, {y});
    w.SetInputs({data});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, c.message);
  }
}

TEST(MatrixDiagWrapperTest, RunsAndRefusesClearly) {
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt8, {2, 3}, "x");
    const int y = w.AddTensor(kKilnInt8, {2, 3, 3}, "y");
    w.AddOp(kKilnBuiltinMatrixDiag, {x}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int8_t values[] = {1, -2, 3, 4, 5, -6};
    r.SetInput(0, values, sizeof(values));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int8_t>(), (std::vector<int8_t>{1, 0, 0, 0, -2, 0, 0, 0, 3, 4, 0, 0, 0, 5, 0, 0, 0, -6}));
  }
  {
    ModelWriter w;  // empty batch
    const int x = w.AddTensor(kKilnFloat32, {0, 4}, "x");
    const int y = w.AddTensor(kKilnFloat32, {0, 4, 4}, "y");
    w.AddOp(kKilnBuiltinMatrixDiag, {x}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{0, 4, 4}));
  }
  for (const auto& [type, dims, message] : std::vector<std::tuple<KilnType, std::vector<int>, std::string>>{
           {kKilnBool, {3}, "MATRIX_DIAG: input 'x' has type bool"}, {kKilnFloat32, {}, "input 'x'"}}) {
    ModelWriter w;
    const int x = w.AddTensor(type, dims, "x");
    const int y = w.AddTensor(type, {3, 3}, "y");
    w.AddOp(kKilnBuiltinMatrixDiag, {x}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {message});
  }
}

TEST(MatrixSetDiagWrapperTest, RunsAndRefusesClearly) {
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt32, {2, 3, 2}, "x");
    const int d = w.AddConstTensor<int32_t>(kKilnInt32, {2, 2}, "d", {-1, -2, -3, -4});
    const int y = w.AddTensor(kKilnInt32, {2, 3, 2}, "y");
    w.AddOp(kKilnBuiltinMatrixSetDiag, {x, d}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int32_t values[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    r.SetInput(0, values, sizeof(values));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int32_t>(), (std::vector<int32_t>{-1, 2, 3, -2, 5, 6, -3, 8, 9, -4, 11, 12}));
  }
  struct Case {
    KilnType type, diag_type;
    std::vector<int> dims, diag_dims;
    std::string message;
  };
  const Case cases[] = {
      {kKilnFloat32,
       kKilnFloat32,
       {3, 2},
       {3},
       "MATRIX_SET_DIAG: diagonal 'd' has shape [3]; input 'x' of shape [3, 2] "
       "needs [2]"},
      {kKilnFloat32, kKilnFloat32, {2, 2, 2}, {1, 2}, "needs [2, 2]"},
      {kKilnFloat32, kKilnFloat32, {3}, {3}, "input 'x'"},
      {kKilnFloat32, kKilnInt32, {2, 2}, {2}, "diagonal 'd' has type int32"},
      {kKilnBool, kKilnBool, {2, 2}, {2}, "input 'x' has type bool"},
  };
  for (const Case& c : cases) {
    ModelWriter w;
    const int x = w.AddTensor(c.type, c.dims, "x");
    const int d = w.AddTensor(c.diag_type, c.diag_dims, "d");
    const int y = w.AddTensor(c.type, c.dims, "y");
    w.AddOp(kKilnBuiltinMatrixSetDiag, {x, d}, {y});
    w.SetInputs({x, d});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {c.message});
  }
}

TEST(DynamicUpdateSliceWrapperTest, RunTimeStartsClampAndRefusalsAreClear) {
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {3, 3}, "x");
    const int u = w.AddConstTensor<float>(kKilnFloat32, {2, 1}, "u", {-1, -2});
    const int s = w.AddTensor(kKilnInt64, {2}, "s");
    const int y = w.AddTensor(kKilnFloat32, {3, 3}, "y");
    w.AddOp(kKilnBuiltinDynamicUpdateSlice, {x, u, s}, {y});
    w.SetInputs({x, s});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float values[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    r.SetInput(0, values, sizeof(values));
    const int64_t starts[] = {7, -5};  // clamped to [1, 0]
    r.SetInput(1, starts, sizeof(starts));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.Output(), (std::vector<float>{1, 2, 3, -1, 5, 6, -2, 8, 9}));
    const int64_t middle[] = {0, 1};
    r.SetInput(1, middle, sizeof(middle));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.Output(), (std::vector<float>{1, -1, 3, 4, -2, 6, 7, 8, 9}));
  }
  {
    ModelWriter w;  // rank 0: the update replaces the operand
    const int x = w.AddTensor(kKilnInt32, {}, "x");
    const int u = w.AddConstTensor<int32_t>(kKilnInt32, {}, "u", {42});
    const int s = w.AddTensor(kKilnInt32, {0}, "s");
    const int y = w.AddTensor(kKilnInt32, {}, "y");
    w.AddOp(kKilnBuiltinDynamicUpdateSlice, {x, u, s}, {y});
    w.SetInputs({x, s});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int32_t value = 5;
    r.SetInput(0, &value, sizeof(value));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int32_t>(), (std::vector<int32_t>{42}));
  }
  struct Case {
    KilnType update_type, index_type;
    std::vector<int> update_dims, index_dims;
    std::string message;
  };
  const Case cases[] = {
      {kKilnFloat32,
       kKilnInt32,
       {4, 1},
       {2},
       "DYNAMIC_UPDATE_SLICE: update 'u' of shape [4, 1] does not fit operand "
       "'x' of shape [3, 2]"},
      {kKilnFloat32, kKilnInt32, {1}, {2}, "does not fit"},
      {kKilnFloat32, kKilnInt32, {1, 1}, {3}, "start_indices 's' hold 3 values; operand 'x' has rank 2"},
      {kKilnFloat32, kKilnFloat32, {1, 1}, {2}, "start_indices 's' have type float32; expected int32 or int64"},
      {kKilnInt32, kKilnInt32, {1, 1}, {2}, "update 'u' has type int32"},
  };
  for (const Case& c : cases) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {3, 2}, "x");
    const int u = w.AddTensor(c.update_type, c.update_dims, "u");
    const int s = w.AddTensor(c.index_type, c.index_dims, "s");
    const int y = w.AddTensor(kKilnFloat32, {3, 2}, "y");
    w.AddOp(kKilnBuiltinDynamicUpdateSlice, {x, u, s}, {y});
    w.SetInputs({x, u, s});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {c.message});
  }
}

TEST(BitOpsWrapperTest, BroadcastsAndRefusesClearly) {
  {
    ModelWriter w;
    const int a = w.AddTensor(kKilnInt16, {2, 1}, "a");
    const int b = w.AddConstTensor<int16_t>(kKilnInt16, {3}, "b", {-1, 2, 40});
    const int y = w.AddTensor(kKilnInt16, {2, 3}, "y");
    w.AddOp(kKilnBuiltinRightShift, {a, b}, {y});
    w.SetInputs({a});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int16_t values[] = {-100, 1000};
    r.SetInput(0, values, sizeof(values));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int16_t>(), (std::vector<int16_t>{-100, -25, -1, 1000, 250, 0}));
  }
  {
    ModelWriter w;
    const int a = w.AddTensor(kKilnUInt32, {3}, "a");
    const int b = w.AddConstTensor<uint32_t>(kKilnUInt32, {}, "b", {0xffff0000u});
    const int y = w.AddTensor(kKilnUInt32, {3}, "y");
    w.AddOp(kKilnBuiltinBitwiseXor, {a, b}, {y});
    w.SetInputs({a});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const uint32_t values[] = {0, 0xffffffffu, 0x12345678u};
    r.SetInput(0, values, sizeof(values));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<uint32_t>(), (std::vector<uint32_t>{0xffff0000u, 0x0000ffffu, 0xedcb5678u}));
  }
  struct Case {
    KilnBuiltinOperator code;
    KilnType a_type, b_type;
    std::vector<int> a_dims, b_dims;
    std::string message;
  };
  const Case cases[] = {
      {kKilnBuiltinRightShift, kKilnFloat32, kKilnFloat32, {2}, {2}, "RIGHT_SHIFT: input 0 'a' has type float32"},
      {kKilnBuiltinBitwiseXor, kKilnInt64, kKilnInt64, {2}, {2}, "BITWISE_XOR: input 0 'a' has type int64"},
      {kKilnBuiltinBitwiseXor, kKilnBool, kKilnBool, {2}, {2}, "input 0 'a' has type bool"},
      {kKilnBuiltinRightShift, kKilnInt32, kKilnInt8, {2}, {2}, "input 1 'b' has type int8"},
      {kKilnBuiltinBitwiseXor,
       kKilnInt8,
       kKilnInt8,
       {2, 3},
       {2},
       "input shapes [2, 3] ('a') and [2] ('b') do not "
       "broadcast"},
      {kKilnBuiltinRightShift, kKilnInt8, kKilnInt8, {1, 1, 1, 1, 1, 1, 2}, {2}, "input 0 'a'"},
  };
  for (const Case& c : cases) {
    ModelWriter w;
    const int a = w.AddTensor(c.a_type, c.a_dims, "a");
    const int b = w.AddTensor(c.b_type, c.b_dims, "b");
    const int y = w.AddTensor(c.a_type, c.a_dims, "y");
    w.AddOp(c.code, {a, b}, {y});
    w.SetInputs({a, b});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {c.message});
  }
}

TEST(BitcastWrapperTest, ShapesFollowElementSizes) {
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt8, {2, 4}, "x");
    const int y = w.AddTensor(kKilnInt32, {2}, "y");
    w.AddOp(kKilnBuiltinBitcast, {x}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int8_t values[] = {1, 0, 0, 0, -1, -1, -1, -1};
    r.SetInput(0, values, sizeof(values));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{2}));
    EXPECT_EQ(r.OutputAs<int32_t>(), (std::vector<int32_t>{1, -1}));
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {}, "x");
    const int y = w.AddTensor(kKilnUInt16, {2}, "y");
    w.AddOp(kKilnBuiltinBitcast, {x}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float one = 1.0f;  // 0x3f800000
    r.SetInput(0, &one, sizeof(one));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<uint16_t>(), (std::vector<uint16_t>{0x0000, 0x3f80}));
  }
  for (const auto& [in_type, dims, out_type, message] :
       std::vector<std::tuple<KilnType, std::vector<int>, KilnType, std::string>>{
           {kKilnInt8,
            {2, 3},
            kKilnInt32,
            "BITCAST: input 'x' of shape [2, 3] and type int8: its last dimension must "
            "be 4"},
           {kKilnInt16, {}, kKilnInt32, "last dimension must be 2"},
           {kKilnString, {2}, kKilnInt32, "input 'x' has type string"},
           {kKilnInt32, {2}, kKilnResource, "output 'y' has type resource"}}) {
    ModelWriter w;
    const int x = w.AddTensor(in_type, dims, "x");
    const int y = w.AddTensor(out_type, {1}, "y");
    w.AddOp(kKilnBuiltinBitcast, {x}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {message});
  }
}

TEST(ReverseSequenceWrapperTest, RunTimeLengthsAndRefusals) {
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt16, {2, 4}, "x");
    const int l = w.AddTensor(kKilnInt64, {2}, "l");
    const int y = w.AddTensor(kKilnInt16, {2, 4}, "y");
    w.AddOp(kKilnBuiltinReverseSequence, {x, l}, {y}, KilnReverseSequenceParams{1, 0});
    w.SetInputs({x, l});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int16_t values[] = {1, 2, 3, 4, 5, 6, 7, 8};
    r.SetInput(0, values, sizeof(values));
    const int64_t lengths[] = {3, 4};
    r.SetInput(1, lengths, sizeof(lengths));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int16_t>(), (std::vector<int16_t>{3, 2, 1, 4, 8, 7, 6, 5}));
    const int64_t too_long[] = {5, 0};
    r.SetInput(1, too_long, sizeof(too_long));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("REVERSE_SEQUENCE: seq_lengths 'l' hold 5 at position 0; expected a length in [0, 4]"),
              std::string::npos)
        << r.errors();
    const int64_t negative[] = {0, -1};
    r.SetInput(1, negative, sizeof(negative));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("hold -1 at position 1"), std::string::npos) << r.errors();
  }
  struct Case {
    KilnType type, length_type;
    std::vector<int> dims, length_dims;
    int seq_dim, batch_dim;
    std::string message;
  };
  const Case cases[] = {
      {kKilnFloat32, kKilnInt32, {2, 3}, {2}, 0, 0, "seq_dim 0 and batch_dim 0 must be two different dimensions"},
      {kKilnFloat32, kKilnInt32, {2, 3}, {2}, -1, 0, "seq_dim -1 and batch_dim 0"},
      {kKilnFloat32, kKilnInt32, {2, 3}, {2}, 2, 0, "of input 'x' (rank 2)"},
      {kKilnFloat32, kKilnInt32, {2, 3}, {3}, 1, 0, "seq_lengths 'l' hold 3 values; input 'x' has 2 along batch_dim 0"},
      {kKilnInt8, kKilnInt32, {2, 3}, {2}, 1, 0, "REVERSE_SEQUENCE: input 'x' has type int8"},
      {kKilnFloat32, kKilnFloat32, {2, 3}, {2}, 1, 0, "seq_lengths 'l' have type float32"},
  };
  for (const Case& c : cases) {
    ModelWriter w;
    const int x = w.AddTensor(c.type, c.dims, "x");
    const int l = w.AddTensor(c.length_type, c.length_dims, "l");
    const int y = w.AddTensor(c.type, c.dims, "y");
    w.AddOp(kKilnBuiltinReverseSequence, {x, l}, {y}, KilnReverseSequenceParams{c.seq_dim, c.batch_dim});
    w.SetInputs({x, l});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {c.message});
  }
}

TEST(SparseToDenseWrapperTest, RunTimeIndicesAndRefusals) {
  {
    ModelWriter w;
    const int i = w.AddTensor(kKilnInt32, {3, 2}, "i");
    const int s = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "s", {2, 3});
    const int v = w.AddConstTensor<int8_t>(kKilnInt8, {3}, "v", {1, 2, 3});
    const int d = w.AddConstTensor<int8_t>(kKilnInt8, {}, "d", {-1});
    const int y = w.AddTensor(kKilnInt8, {2, 3}, "y");
    w.AddOp(kKilnBuiltinSparseToDense, {i, s, v, d}, {y});
    w.SetInputs({i});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int32_t indices[] = {0, 0, 1, 2, 0, 0};  // a duplicate: the later value wins
    r.SetInput(0, indices, sizeof(indices));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int8_t>(), (std::vector<int8_t>{3, -1, -1, -1, -1, 2}));
    const int32_t outside[] = {0, 0, 1, 3, 0, 0};
    r.SetInput(0, outside, sizeof(outside));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("SPARSE_TO_DENSE: index tuple 1 of indices 'i', [1, 3], lies outside the output's shape "
                              "[2, 3]"),
              std::string::npos)
        << r.errors();
  }
  {
    ModelWriter w;  // a run-time output shape
    const int i = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "i", {0});
    const int s = w.AddTensor(kKilnInt32, {1}, "s");
    const int v = w.AddConstTensor<float>(kKilnFloat32, {}, "v", {1});
    const int d = w.AddConstTensor<float>(kKilnFloat32, {}, "d", {0});
    const int y = w.AddTensor(kKilnFloat32, {3}, "y");
    w.AddOp(kKilnBuiltinSparseToDense, {i, s, v, d}, {y});
    w.SetInputs({s});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();  // a dynamic output, sized at Invoke
    const int32_t three[] = {3}, bad[] = {-1};
    r.SetInput(0, three, sizeof(three));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{3}));
    EXPECT_EQ(r.Output(), (std::vector<float>{1, 0, 0}));
    r.SetInput(0, bad, sizeof(bad));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("SPARSE_TO_DENSE: output_shape 's' holds -1 at 0"), std::string::npos) << r.errors();
  }
  struct Case {
    KilnType type;
    std::vector<int> index_dims;
    std::vector<int32_t> shape;
    std::vector<int> value_dims, default_dims;
    std::string message;
  };
  const Case cases[] = {
      {kKilnFloat32, {2, 2}, {3}, {2}, {}, "give index tuples of 2 entries; output_shape 's' has 1 dimensions"},
      {kKilnFloat32,
       {2, 2},
       {3, 3},
       {3},
       {},
       "values 'v' of shape [3]; expected a scalar or one value for each of "
       "the 2 index tuples"},
      {kKilnFloat32, {2, 2}, {3, 3}, {2}, {2}, "default_value 'd' has shape [2]; expected a single value"},
      {kKilnFloat32, {2, 5}, {1, 1, 1, 1, 1}, {2}, {}, "output_shape 's' holds 5 dimensions; expected 1 to 4"},
      {kKilnFloat32, {1, 2}, {3, -1}, {1}, {}, "output_shape 's' holds -1 at 1"},
      {kKilnInt16, {1, 1}, {3}, {1}, {}, "SPARSE_TO_DENSE: values 'v' has type int16"},
      {kKilnFloat32, {1, 1, 1}, {3}, {1}, {}, "indices 'i'"},
  };
  for (const Case& c : cases) {
    ModelWriter w;
    const int i = w.AddTensor(kKilnInt32, c.index_dims, "i");
    const int s = w.AddConstTensor<int32_t>(kKilnInt32, {static_cast<int>(c.shape.size())}, "s", c.shape);
    const int v = w.AddTensor(c.type, c.value_dims, "v");
    const int d = w.AddTensor(c.type, c.default_dims, "d");
    const int y = w.AddTensor(c.type, {1}, "y");
    w.AddOp(kKilnBuiltinSparseToDense, {i, s, v, d}, {y});
    w.SetInputs({i, v, d});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {c.message});
  }
}

TEST(BucketizeWrapperTest, BucketsAndRefusals) {
  const float boundaries[] = {0.0f, 1.0f, 1.0f, 10.0f};
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt64, {5}, "x");
    const int y = w.AddTensor(kKilnInt32, {5}, "y");
    w.AddOp(kKilnBuiltinBucketize, {x}, {y}, KilnBucketizeParams{boundaries, 4});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int64_t values[] = {-5, 0, 1, 9, 100};
    r.SetInput(0, values, sizeof(values));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int32_t>(), (std::vector<int32_t>{0, 1, 3, 3, 4}));
  }
  const float unsorted[] = {0.0f, 2.0f, 1.0f};
  const float nan[] = {std::numeric_limits<float>::quiet_NaN()};
  struct Case {
    KilnType type, output_type;
    KilnBucketizeParams params;
    std::string message;
  };
  const Case cases[] = {
      {kKilnFloat32,
       kKilnInt32,
       {unsorted, 3},
       "BUCKETIZE: boundary 2 is 1; the boundaries must be numbers in "
       "ascending order"},
      {kKilnFloat32, kKilnInt32, {nan, 1}, "boundary 0 is nan"},
      {kKilnInt8, kKilnInt32, {boundaries, 4}, "BUCKETIZE: input 'x' has type int8"},
      {kKilnFloat32, kKilnInt64, {boundaries, 4}, "output 'y' has type int64"},
  };
  for (const Case& c : cases) {
    ModelWriter w;
    const int x = w.AddTensor(c.type, {2}, "x");
    const int y = w.AddTensor(c.output_type, {2}, "y");
    w.AddOp(kKilnBuiltinBucketize, {x}, {y}, c.params);
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {c.message});
  }
}

TEST(FakeQuantWrapperTest, RunsAndRefusesBadRanges) {
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {4}, "x");
    const int y = w.AddTensor(kKilnFloat32, {4}, "y");
    w.AddOp(kKilnBuiltinFakeQuant, {x}, {y}, KilnFakeQuantParams{0.0f, 6.0f, 8, false});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float values[] = {-1.0f, 0.5f, 1.0f, 7.0f};
    r.SetInput(0, values, sizeof(values));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    const std::vector<float> got = r.Output();
    const std::vector<float> want = {0.0f, 0.49411765f, 1.0117648f, 6.0f};  // LiteRT's values
    for (size_t i = 0; i < want.size(); ++i) EXPECT_FLOAT_EQ(got[i], want[i]) << i;
  }
  struct Case {
    KilnType type;
    KilnFakeQuantParams params;
    std::string message;
  };
  const Case cases[] = {
      {kKilnFloat32, {-1, 1, 8, true}, "FAKE_QUANT: narrow_range is set"},
      {kKilnFloat32, {-1, 1, 1, false}, "num_bits is 1; expected 2 to 16"},
      {kKilnFloat32, {-1, 1, 17, false}, "num_bits is 17"},
      {kKilnFloat32, {1, 1, 8, false}, "min 1 and max 1 must be finite with min < max"},
      {kKilnFloat32, {1, -1, 8, false}, "min 1 and max -1"},
      {kKilnFloat32, {-std::numeric_limits<float>::infinity(), 1, 8, false}, "min -inf"},
      {kKilnInt8, {-1, 1, 8, false}, "FAKE_QUANT"},
  };
  for (const Case& c : cases) {
    ModelWriter w;
    const int x = w.AddTensor(c.type, {2}, "x");
    const int y = w.AddTensor(c.type, {2}, "y");
    w.AddOp(kKilnBuiltinFakeQuant, {x}, {y}, c.params);
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {c.message});
  }
}

TEST(StablehloWrapperTest, ElementwiseTypesAndRefusals) {
  {
    ModelWriter w;  // bool ADD is OR and MULTIPLY is AND, any non-zero byte true
    const int a = w.AddTensor(kKilnBool, {4}, "a");
    const int b = w.AddConstTensor<uint8_t>(kKilnBool, {4}, "b", {0, 7, 0, 1});
    const int sum = w.AddTensor(kKilnBool, {4}, "sum");
    const int product = w.AddTensor(kKilnBool, {4}, "product");
    w.AddOp(kKilnBuiltinStablehloAdd, {a, b}, {sum});
    w.AddOp(kKilnBuiltinStablehloMultiply, {a, b}, {product});
    w.SetInputs({a});
    w.SetOutputs({sum, product});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const uint8_t values[] = {0, 0, 9, 2};
    r.SetInput(0, values, sizeof(values));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<uint8_t>(0), (std::vector<uint8_t>{0, 1, 1, 1}));
    EXPECT_EQ(r.OutputAs<uint8_t>(1), (std::vector<uint8_t>{0, 0, 0, 1}));
  }
  {
    ModelWriter w;  // int8: wrapping sums, maximum, shifts (a count past the width gives 0)
    const int a = w.AddTensor(kKilnInt8, {4}, "a");
    const int b = w.AddConstTensor<int8_t>(kKilnInt8, {4}, "b", {100, -1, 7, 8});
    const int sum = w.AddTensor(kKilnInt8, {4}, "sum");
    const int most = w.AddTensor(kKilnInt8, {4}, "most");
    const int shifted = w.AddTensor(kKilnInt8, {4}, "shifted");
    w.AddOp(kKilnBuiltinStablehloAdd, {a, b}, {sum});
    w.AddOp(kKilnBuiltinStablehloMaximum, {a, b}, {most});
    w.AddOp(kKilnBuiltinStablehloShiftLeft, {a, b}, {shifted});
    w.SetInputs({a});
    w.SetOutputs({sum, most, shifted});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int8_t values[] = {100, 3, 1, 1};
    r.SetInput(0, values, sizeof(values));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int8_t>(0), (std::vector<int8_t>{-56, 2, 8, 9}));
    EXPECT_EQ(r.OutputAs<int8_t>(1), (std::vector<int8_t>{100, 3, 7, 8}));
    EXPECT_EQ(r.OutputAs<int8_t>(2), (std::vector<int8_t>{0, 0, -128, 0}));
  }
  struct Case {
    KilnBuiltinOperator code;
    KilnType a_type, b_type;
    std::vector<int> a_dims, b_dims;
    std::string message;
  };
  const Case cases[] = {
      {kKilnBuiltinStablehloAnd,
       kKilnFloat32,
       kKilnFloat32,
       {2},
       {2},
       "STABLEHLO_AND: input 0 'a' has type float32, "
       "which STABLEHLO_AND does not take"},
      {kKilnBuiltinStablehloShiftLeft,
       kKilnInt64,
       kKilnInt64,
       {2},
       {2},
       "STABLEHLO_SHIFT_LEFT: input 0 'a' has type "
       "int64"},
      {kKilnBuiltinStablehloAdd, kKilnFloat16, kKilnFloat16, {2}, {2}, "type float16"},
      {kKilnBuiltinStablehloMinimum, kKilnInt32, kKilnInt16, {2}, {2}, "input 1 'b' has type int16"},
      {kKilnBuiltinStablehloMultiply,
       kKilnFloat32,
       kKilnFloat32,
       {2, 3},
       {3},
       "input shapes [2, 3] ('a') and [3] "
       "('b') differ"},
      {kKilnBuiltinStablehloShiftLeft, kKilnInt32, kKilnInt32, {2, 3}, {3}, "StableHLO ops do not broadcast"},
  };
  for (const Case& c : cases) {
    ModelWriter w;
    const int a = w.AddTensor(c.a_type, c.a_dims, "a");
    const int b = w.AddTensor(c.b_type, c.b_dims, "b");
    const int y = w.AddTensor(c.a_type, c.a_dims, "y");
    w.AddOp(c.code, {a, b}, {y});
    w.SetInputs({a, b});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {c.message});
  }
}

TEST(ComplexWrapperTest, PartsSpectrumAndRefusals) {
  {
    ModelWriter w;  // constant complex64 (re, im pairs) -> REAL, IMAG, COMPLEX_ABS; RFFT2D -> REAL
    const int c = w.AddConstTensor<float>(kKilnComplex64, {2}, "c", {3, -4, -1, 0});
    const int re = w.AddTensor(kKilnFloat32, {2}, "re");
    const int im = w.AddTensor(kKilnFloat32, {2}, "im");
    const int abs = w.AddTensor(kKilnFloat32, {2}, "abs");
    w.AddOp(kKilnBuiltinReal, {c}, {re});
    w.AddOp(kKilnBuiltinImag, {c}, {im});
    w.AddOp(kKilnBuiltinComplexAbs, {c}, {abs});
    const int x = w.AddTensor(kKilnFloat32, {2, 2}, "x");
    const int length = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "length", {2, 2});
    const int spectrum = w.AddTensor(kKilnComplex64, {2, 2}, "spectrum");
    w.AddOp(kKilnBuiltinRfft2d, {x, length}, {spectrum});
    const int spectrum_re = w.AddTensor(kKilnFloat32, {2, 2}, "spectrum_re");
    w.AddOp(kKilnBuiltinReal, {spectrum}, {spectrum_re});
    w.SetInputs({x});
    w.SetOutputs({re, im, abs, spectrum_re});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float values[] = {1, 2, 3, 4};
    r.SetInput(0, values, sizeof(values));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.Output(0), (std::vector<float>{3, -1}));
    EXPECT_EQ(r.Output(1), (std::vector<float>{-4, 0}));
    EXPECT_EQ(r.Output(2), (std::vector<float>{5, 1}));
    EXPECT_EQ(r.OutputDims(3), (std::vector<int>{2, 2}));
    EXPECT_EQ(r.Output(3), (std::vector<float>{10, -2, -4, 0}));
  }
  for (const auto& [type, out_type, message] : std::vector<std::tuple<KilnType, KilnType, std::string>>{
           {kKilnFloat32, kKilnFloat32, "REAL: input 'c' has type float32; expected complex64 or complex128"},
           {kKilnComplex128, kKilnFloat32, "REAL: output 'y' has type float32"}}) {
    ModelWriter w;
    const int c = w.AddTensor(type, {2}, "c");
    const int y = w.AddTensor(out_type, {2}, "y");
    w.AddOp(kKilnBuiltinReal, {c}, {y});
    w.SetInputs({c});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {message});
  }
  struct Case {
    std::vector<int> dims;
    std::vector<int32_t> length;
    bool constant;
    std::string message;
  };
  const Case cases[] = {
      {{4, 4}, {4, 3}, true, "RFFT2D: fft_length 'l' holds 3 at 1; expected a power of two"},
      {{4, 4}, {0, 4}, true, "holds 0 at 0"},
      {{4, 4}, {4, 1}, true, "a transform 1 column wide"},
      {{4}, {4, 4}, true, "input 'x'"},
      {{4, 4}, {4, 4, 4}, true, "fft_length 'l' holds 3 values; expected 2"},
  };
  for (const Case& c : cases) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, c.dims, "x");
    const int l = c.constant ? w.AddConstTensor<int32_t>(kKilnInt32, {static_cast<int>(c.length.size())}, "l", c.length)
                             : w.AddTensor(kKilnInt32, {2}, "l");
    const int y = w.AddTensor(kKilnComplex64, {1}, "y");
    w.AddOp(kKilnBuiltinRfft2d, {x, l}, {y});
    w.SetInputs(c.constant ? std::vector<int>{x} : std::vector<int>{x, l});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {c.message});
  }
}

TEST(EmbeddingLookupSparseWrapperTest, CombinesAndRefusesClearly) {
  {
    ModelWriter w;  // rows 0 and 2 of a [3] x [2] output; row 1 gets nothing
    const int ids = w.AddTensor(kKilnInt32, {3}, "ids");
    const int indices = w.AddConstTensor<int32_t>(kKilnInt32, {3, 2}, "indices", {0, 0, 0, 1, 2, 0});
    const int shape = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "shape", {3, 2});
    const int weights = w.AddConstTensor<float>(kKilnFloat32, {3}, "weights", {1, 3, 2});
    const int params = w.AddConstTensor<float>(kKilnFloat32, {3, 2}, "params", {1, 2, 10, 20, 100, 200});
    const int y = w.AddTensor(kKilnFloat32, {3, 2}, "y");
    w.AddOp(kKilnBuiltinEmbeddingLookupSparse, {ids, indices, shape, weights, params}, {y},
            KilnEmbeddingLookupSparseParams{kKilnCombinerMean});
    w.SetInputs({ids});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int32_t values[] = {0, 1, 2};
    r.SetInput(0, values, sizeof(values));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{3, 2}));
    EXPECT_EQ(r.Output(), (std::vector<float>{7.75f, 15.5f, 0, 0, 100, 200}));  // (1 * 1 + 3 * 10) / 4 = 7.75
    const int32_t past[] = {0, 3, 2};
    r.SetInput(0, past, sizeof(past));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("EMBEDDING_LOOKUP_SPARSE: id 3 at position 1 of ids 'ids' is outside [0, 3)"),
              std::string::npos)
        << r.errors();
  }
  {
    ModelWriter w;  // an index past dense_shape
    const int ids = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "ids", {0});
    const int indices = w.AddTensor(kKilnInt32, {1, 2}, "indices");
    const int shape = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "shape", {2, 2});
    const int weights = w.AddConstTensor<float>(kKilnFloat32, {1}, "weights", {1});
    const int params = w.AddConstTensor<float>(kKilnFloat32, {1, 1}, "params", {1});
    const int y = w.AddTensor(kKilnFloat32, {2, 1}, "y");
    w.AddOp(kKilnBuiltinEmbeddingLookupSparse, {ids, indices, shape, weights, params}, {y},
            KilnEmbeddingLookupSparseParams{kKilnCombinerSum});
    w.SetInputs({indices});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int32_t values[] = {2, 0};
    r.SetInput(0, values, sizeof(values));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("index 2 at [0, 0] of indices 'indices' is outside [0, 2)"), std::string::npos)
        << r.errors();
  }
  struct Case {
    std::vector<int> ids_dims, weight_dims, shape_dims;
    KilnType params_type;
    bool constant_shape;
    std::string message;
  };
  const Case cases[] = {
      {{2},
       {3},
       {2},
       kKilnFloat32,
       true,
       "ids 'ids' [2], weights 'weights' [3] and dense_shape 'shape' [2] do not "
       "match indices 'indices' [3, 2]"},
      {{3}, {3}, {3}, kKilnFloat32, true, "do not match"},
      {{3}, {3}, {2}, kKilnInt8, true, "params 'params'"},
  };
  for (const Case& c : cases) {
    ModelWriter w;
    const int ids = w.AddTensor(kKilnInt32, c.ids_dims, "ids");
    const int indices = w.AddTensor(kKilnInt32, {3, 2}, "indices");
    std::vector<int32_t> shape_values(static_cast<size_t>(c.shape_dims[0]), 2);
    const int shape = c.constant_shape ? w.AddConstTensor<int32_t>(kKilnInt32, c.shape_dims, "shape", shape_values)
                                       : w.AddTensor(kKilnInt32, c.shape_dims, "shape");
    const int weights = w.AddTensor(kKilnFloat32, c.weight_dims, "weights");
    const int params = w.AddTensor(c.params_type, {4, 2}, "params");
    const int y = w.AddTensor(kKilnFloat32, {2, 2}, "y");
    w.AddOp(kKilnBuiltinEmbeddingLookupSparse, {ids, indices, shape, weights, params}, {y},
            KilnEmbeddingLookupSparseParams{kKilnCombinerSqrtn});
    std::vector<int> inputs = {ids, indices, weights, params};
    if (!c.constant_shape) inputs.push_back(shape);
    w.SetInputs(inputs);
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {c.message});
  }
}

TEST(RandomWrapperTest, SeededSequencesContinueAndRefusals) {
  {
    ModelWriter w;  // seed 2^32 + 1 acts as 1 (LiteRT keeps the low 32 bits)
    const int shape = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "shape", {5});
    const int y = w.AddTensor(kKilnFloat32, {5}, "y");
    w.AddOp(kKilnBuiltinRandomUniform, {shape}, {y}, KilnRandomParams{(int64_t{1} << 32) + 1, 2});
    w.SetInputs({});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    const std::vector<float> first = r.Output();
    EXPECT_FLOAT_EQ(first[0], 0.40639675f);
    EXPECT_FLOAT_EQ(first[4], 0.4121536f);
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_FLOAT_EQ(r.Output()[0], 0.8690897f);  // the sequence continues, as LiteRT's
  }
  {
    ModelWriter w;  // seeds 0 and 0: drawn at random, values still in range
    const int shape = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "shape", {3, 3});
    const int y = w.AddTensor(kKilnFloat32, {3, 3}, "y");
    w.AddOp(kKilnBuiltinRandomUniform, {shape}, {y}, KilnRandomParams{0, 0});
    w.SetInputs({});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    for (float v : r.Output()) EXPECT_TRUE(v >= 0.0f && v < 1.0f) << v;
  }
  struct Case {
    KilnType shape_type, output_type;
    std::vector<int32_t> shape;
    bool constant;
    std::string message;
  };
  const Case cases[] = {
      {kKilnInt64, kKilnFloat32, {2}, true, "shape 's' has type int64"},
      {kKilnInt32, kKilnFloat64, {2}, true, "output 'y'"},
      {kKilnInt32, kKilnFloat32, {2, -1}, true, "shape 's' holds -1 at 1"},
  };
  for (const Case& c : cases) {
    ModelWriter w;
    const int n = static_cast<int>(c.shape.size());
    const int s = !c.constant                  ? w.AddTensor(c.shape_type, {n}, "s")
                  : c.shape_type == kKilnInt64 ? w.AddConstTensor<int64_t>(c.shape_type, {n}, "s", {2})
                                               : w.AddConstTensor<int32_t>(c.shape_type, {n}, "s", c.shape);
    const int y = w.AddTensor(c.output_type, {2}, "y");
    w.AddOp(kKilnBuiltinRandomStandardNormal, {s}, {y}, KilnRandomParams{1, 2});
    w.SetInputs(c.constant ? std::vector<int>{} : std::vector<int>{s});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {c.message});
  }
}

}  // namespace
}  // namespace kiln::ops
