// The comparisons, logical ops, SELECT/SELECT_V2, ZEROS_LIKE, FILL, FLOOR_DIV, FLOOR_MOD, POW and SIGN through the
// interpreter, on single-op ModelWriter models: broadcasting (against an independent index computation written
// here), types, quantized comparisons, rank 0, empty tensors, and the errors with their messages.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kiln/c_api.h"
#include "runtime/model/model_writer.h"
#include "tests/ops/wrapper_runner.h"

namespace kiln::ops {
namespace {

using wrapper_testing::ExpectErrorMentions;
using wrapper_testing::Runner;

int64_t Product(const std::vector<int>& dims) {
  int64_t n = 1;
  for (int d : dims) n *= d;
  return n;
}

// The flat index into an operand of shape `in` of output element `flat` of shape `out` (numpy broadcasting): an
// independent formulation (div/mod of the flat index), not the odometer walk the kernels use.
int64_t SourceIndex(const std::vector<int>& in, const std::vector<int>& out, int64_t flat) {
  int64_t index = 0, stride = 1;
  int64_t rest = flat;
  for (size_t k = 0; k < out.size(); ++k) {
    const size_t d = out.size() - 1 - k;
    const int64_t coord = rest % out[d];
    rest /= out[d];
    if (k < in.size()) {
      const int64_t dim = in[in.size() - 1 - k];
      index += (dim == 1 ? 0 : coord) * stride;
      stride *= dim;
    }
  }
  return index;
}

std::vector<int> BroadcastDims(std::vector<int> a, std::vector<int> b) {
  while (a.size() < b.size()) a.insert(a.begin(), 1);
  while (b.size() < a.size()) b.insert(b.begin(), 1);
  for (size_t i = 0; i < a.size(); ++i) a[i] = a[i] == 1 ? b[i] : a[i];
  return a;
}

// A binary op with both operands model inputs; returns the runner after Invoke.
template <typename In>
std::vector<uint8_t> RunBinary(KilnBuiltinOperator code, KilnType type, KilnType out_type,
                               const std::vector<int>& a_dims, const std::vector<int>& b_dims, const std::vector<In>& a,
                               const std::vector<In>& b, std::vector<int>* out_dims, std::string* errors = nullptr) {
  ModelWriter w;
  const int ta = w.AddTensor(type, a_dims, "a");
  const int tb = w.AddTensor(type, b_dims, "b");
  const int ty = w.AddTensor(out_type, BroadcastDims(a_dims, b_dims), "y");
  w.AddOp(code, {ta, tb}, {ty});
  w.SetInputs({ta, tb});
  w.SetOutputs({ty});
  Runner r(w);
  EXPECT_EQ(r.status(), kKilnOk) << r.errors();
  if (r.status() != kKilnOk) return {};
  if (!a.empty()) r.SetInput(0, a.data(), a.size() * sizeof(In));  // an empty tensor has no data to set
  if (!b.empty()) r.SetInput(1, b.data(), b.size() * sizeof(In));
  const KilnStatus s = r.Invoke();
  if (errors != nullptr) *errors = r.errors();
  if (s != kKilnOk) return {};
  *out_dims = r.OutputDims();
  return r.OutputAs<uint8_t>();
}

template <typename T>
std::vector<T> Iota(int64_t n, T start, T step) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(start + static_cast<T>(i) * step);
  return v;
}

struct CompareCase {
  KilnBuiltinOperator code;
  std::function<bool(double, double)> fn;
};
const std::vector<CompareCase>& Comparisons() {
  static const std::vector<CompareCase> cases = {{kKilnBuiltinEqual, [](double a, double b) { return a == b; }},
                                                 {kKilnBuiltinNotEqual, [](double a, double b) { return a != b; }},
                                                 {kKilnBuiltinLess, [](double a, double b) { return a < b; }},
                                                 {kKilnBuiltinLessEqual, [](double a, double b) { return a <= b; }},
                                                 {kKilnBuiltinGreater, [](double a, double b) { return a > b; }},
                                                 {kKilnBuiltinGreaterEqual, [](double a, double b) { return a >= b; }}};
  return cases;
}

template <typename T>
void CheckComparisons(KilnType type, const std::vector<int>& a_dims, const std::vector<int>& b_dims) {
  const std::vector<int> out = BroadcastDims(a_dims, b_dims);
  // Small ranges so that equal values occur.
  std::vector<T> a = Iota<T>(Product(a_dims), T(-3), T(1));
  std::vector<T> b = Iota<T>(Product(b_dims), T(2), T(-1));
  for (const CompareCase& c : Comparisons()) {
    std::vector<int> dims;
    const std::vector<uint8_t> got = RunBinary<T>(c.code, type, kKilnBool, a_dims, b_dims, a, b, &dims);
    ASSERT_EQ(dims, out) << c.code;
    ASSERT_EQ(static_cast<int64_t>(got.size()), Product(out));
    for (int64_t i = 0; i < Product(out); ++i) {
      const bool want = c.fn(static_cast<double>(a[SourceIndex(a_dims, out, i)]),
                             static_cast<double>(b[SourceIndex(b_dims, out, i)]));
      ASSERT_EQ(got[i] != 0, want) << "op " << c.code << " element " << i;
    }
  }
}

TEST(CompareOpsTest, BroadcastShapesAndTypes) {
  const std::vector<std::pair<std::vector<int>, std::vector<int>>> shapes = {{{2, 3, 4}, {4}},
                                                                             {{3, 1, 5}, {1, 4, 1}},
                                                                             {{}, {}},
                                                                             {{}, {2, 3}},
                                                                             {{7}, {1}},
                                                                             {{1, 2, 1, 3, 1, 2}, {2, 1, 3, 1, 2, 1}},
                                                                             {{2, 1, 3, 1, 1, 2}, {1}}};
  for (const auto& [a, b] : shapes) {
    CheckComparisons<float>(kKilnFloat32, a, b);
    CheckComparisons<int32_t>(kKilnInt32, a, b);
    CheckComparisons<int64_t>(kKilnInt64, a, b);
  }
}

TEST(CompareOpsTest, EmptyBroadcast) {
  std::vector<int> dims;
  const std::vector<uint8_t> got =
      RunBinary<float>(kKilnBuiltinLess, kKilnFloat32, kKilnBool, {0, 3}, {3}, {}, {1, 2, 3}, &dims);
  EXPECT_EQ(dims, (std::vector<int>{0, 3}));
  EXPECT_TRUE(got.empty());
}

TEST(CompareOpsTest, BoolEquality) {
  const std::vector<uint8_t> a = {1, 0, 1, 0}, b = {1, 1};
  std::vector<int> dims;
  EXPECT_EQ(RunBinary<uint8_t>(kKilnBuiltinEqual, kKilnBool, kKilnBool, {2, 2}, {2}, a, b, &dims),
            (std::vector<uint8_t>{1, 0, 1, 0}));
  EXPECT_EQ(RunBinary<uint8_t>(kKilnBuiltinNotEqual, kKilnBool, kKilnBool, {2, 2}, {2}, a, b, &dims),
            (std::vector<uint8_t>{0, 1, 0, 1}));
}

// A quantized comparison: a and b model inputs with their own quantizations.
template <typename T>
std::vector<uint8_t> RunQuantizedCompare(KilnBuiltinOperator code, KilnType type, float a_scale, int a_zero,
                                         float b_scale, int b_zero, const std::vector<T>& a, const std::vector<T>& b,
                                         std::string* errors = nullptr) {
  ModelWriter w;
  const int n = static_cast<int>(a.size());
  const int ta = w.AddTensor(type, {n}, "qa");
  const int tb = w.AddTensor(type, {n}, "qb");
  const int ty = w.AddTensor(kKilnBool, {n}, "y");
  w.SetQuantization(ta, {a_scale}, {a_zero});
  w.SetQuantization(tb, {b_scale}, {b_zero});
  w.AddOp(code, {ta, tb}, {ty});
  w.SetInputs({ta, tb});
  w.SetOutputs({ty});
  Runner r(w);
  if (errors != nullptr) *errors = r.errors();
  if (r.status() != kKilnOk) return {};
  r.SetInput(0, a.data(), a.size() * sizeof(T));
  r.SetInput(1, b.data(), b.size() * sizeof(T));
  EXPECT_EQ(r.Invoke(), kKilnOk) << r.errors();
  return r.OutputAs<uint8_t>();
}

TEST(CompareOpsTest, QuantizedComparesRealValues) {
  // uint8: a = 0.5 * (q - 128), b = 0.25 * (q - 100): 130 and 104 are both 1.0; 126 (-1.0) and 108 (2.0).
  const std::vector<uint8_t> a = {130, 126, 140}, b = {104, 108, 100};
  EXPECT_EQ(RunQuantizedCompare<uint8_t>(kKilnBuiltinEqual, kKilnUInt8, 0.5f, 128, 0.25f, 100, a, b),
            (std::vector<uint8_t>{1, 0, 0}));
  EXPECT_EQ(RunQuantizedCompare<uint8_t>(kKilnBuiltinLess, kKilnUInt8, 0.5f, 128, 0.25f, 100, a, b),
            (std::vector<uint8_t>{0, 1, 0}));
  EXPECT_EQ(RunQuantizedCompare<uint8_t>(kKilnBuiltinGreaterEqual, kKilnUInt8, 0.5f, 128, 0.25f, 100, a, b),
            (std::vector<uint8_t>{1, 0, 1}));
  // int8 with a tiny scale: values are compared after ((q - zp) * 256) * scale is rounded to an integer, so 2 *
  // 256 * 0.0007 = 0.36 rounds to 0 and equals 0, while 3 * 256 * 0.0007 = 0.54 rounds to 1 (LiteRT's
  // rescaling, not the stored values).
  const std::vector<int8_t> qa = {2, 3, -2, -3}, qb = {0, 0, 0, 0};
  EXPECT_EQ(RunQuantizedCompare<int8_t>(kKilnBuiltinEqual, kKilnInt8, 0.0007f, 0, 0.0007f, 0, qa, qb),
            (std::vector<uint8_t>{1, 0, 1, 0}));
  EXPECT_EQ(RunQuantizedCompare<int8_t>(kKilnBuiltinGreater, kKilnInt8, 0.0007f, 0, 0.0007f, 0, qa, qb),
            (std::vector<uint8_t>{0, 1, 0, 0}));
}

TEST(CompareOpsTest, Int16QuantizedOrNot) {
  // Quantized: rescaled as the 8-bit types (2 * 256 * 0.0007 rounds to 0, 3 * 256 * 0.0007 to 1; 100 * 0.5 and
  // 200 * 0.25 are both 50).
  const std::vector<int16_t> qa = {2, 3, 100, -30000}, qb = {0, 0, 200, 30000};
  EXPECT_EQ(RunQuantizedCompare<int16_t>(kKilnBuiltinEqual, kKilnInt16, 0.0007f, 0, 0.0007f, 0, qa, qb),
            (std::vector<uint8_t>{1, 0, 0, 0}));
  // The ordering comparisons compare int16 as stored even when quantized (LiteRT, measured).
  EXPECT_EQ(RunQuantizedCompare<int16_t>(kKilnBuiltinLess, kKilnInt16, 0.5f, 0, 0.25f, 0, {100, 300}, {200, 201}),
            (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(RunQuantizedCompare<int16_t>(kKilnBuiltinEqual, kKilnInt16, 0.5f, 0, 0.25f, 0, {100, 100}, {200, 201}),
            (std::vector<uint8_t>{1, 0}));
  // Not quantized: the stored values.
  std::vector<int> dims;
  EXPECT_EQ(RunBinary<int16_t>(kKilnBuiltinGreater, kKilnInt16, kKilnBool, {3}, {1}, {2, 3, -4}, {2}, &dims),
            (std::vector<uint8_t>{0, 1, 0}));
}

TEST(CompareOpsTest, Errors) {
  std::string errors;
  RunQuantizedCompare<int8_t>(kKilnBuiltinEqual, kKilnInt8, 1.5f, 0, 0.5f, 0, {1}, {1}, &errors);
  EXPECT_NE(errors.find("EQUAL: input 0 'qa' has scale 1.5; quantized comparisons need a scale below 1"),
            std::string::npos)
      << errors;
  const auto build = [](KilnBuiltinOperator code, KilnType a_type, KilnType b_type, KilnType out_type,
                        std::vector<int> a_dims, std::vector<int> b_dims, std::vector<int> out_dims) {
    auto w = std::make_unique<ModelWriter>();
    const int ta = w->AddTensor(a_type, a_dims, "a");
    const int tb = w->AddTensor(b_type, b_dims, "b");
    const int ty = w->AddTensor(out_type, out_dims, "y");
    w->AddOp(code, {ta, tb}, {ty});
    w->SetInputs({ta, tb});
    w->SetOutputs({ty});
    return w;
  };
  {
    auto w = build(kKilnBuiltinLess, kKilnBool, kKilnBool, kKilnBool, {2}, {2}, {2});
    Runner r(*w);
    ExpectErrorMentions(r, {"LESS: input 0 'a' has type bool; expected one of float32"});
  }
  {
    auto w = build(kKilnBuiltinEqual, kKilnFloat32, kKilnInt32, kKilnBool, {2}, {2}, {2});
    Runner r(*w);
    ExpectErrorMentions(r, {"EQUAL: input 1 'b' has type int32, but input 0 'a' has type float32"});
  }
  {
    auto w = build(kKilnBuiltinGreater, kKilnFloat32, kKilnFloat32, kKilnFloat32, {2}, {2}, {2});
    Runner r(*w);
    ExpectErrorMentions(r, {"GREATER", "output 'y'", "float32"});
  }
  {
    auto w = build(kKilnBuiltinNotEqual, kKilnInt32, kKilnInt32, kKilnBool, {2, 3}, {2}, {2, 3});
    Runner r(*w);
    ExpectErrorMentions(r, {"NOT_EQUAL: input shapes [2, 3] ('a') and [2] ('b') do not broadcast"});
  }
  {
    auto w = build(kKilnBuiltinLessEqual, kKilnInt32, kKilnInt32, kKilnBool, {1, 1, 1, 1, 1, 1, 2}, {2}, {2});
    Runner r(*w);
    ExpectErrorMentions(r, {"LESS_EQUAL", "input 0 'a'"});
  }
  {
    // int16: both quantized (rescaled) or neither (compared as stored).
    auto w = build(kKilnBuiltinEqual, kKilnInt16, kKilnInt16, kKilnBool, {2}, {2}, {2});
    w->SetQuantization(0, {0.5f}, {0});
    Runner r(*w);
    ExpectErrorMentions(r, {"EQUAL: int16 input 0 'a' is quantized but input 1 'b' is not quantized"});
  }
  {
    auto w = build(kKilnBuiltinNotEqual, kKilnInt16, kKilnInt16, kKilnBool, {2}, {2}, {2});
    Runner r(*w);
    ExpectErrorMentions(r, {"NOT_EQUAL: input 0 'a' has type int16"});
  }
}

TEST(LogicalOpsTest, AndOrBroadcastAndNot) {
  const std::vector<int> a_dims = {2, 3, 1}, b_dims = {1, 4}, out = {2, 3, 4};
  std::vector<uint8_t> a(6), b(4);
  for (size_t i = 0; i < a.size(); ++i) a[i] = (i % 3) == 0;
  for (size_t i = 0; i < b.size(); ++i) b[i] = (i % 2) == 0;
  for (bool is_and : {true, false}) {
    std::vector<int> dims;
    const std::vector<uint8_t> got = RunBinary<uint8_t>(is_and ? kKilnBuiltinLogicalAnd : kKilnBuiltinLogicalOr,
                                                        kKilnBool, kKilnBool, a_dims, b_dims, a, b, &dims);
    ASSERT_EQ(dims, out);
    for (int64_t i = 0; i < Product(out); ++i) {
      const bool x = a[SourceIndex(a_dims, out, i)] != 0, y = b[SourceIndex(b_dims, out, i)] != 0;
      EXPECT_EQ(got[i] != 0, is_and ? (x && y) : (x || y)) << i;
    }
  }
  ModelWriter w;
  const int x = w.AddTensor(kKilnBool, {3}, "x");
  const int y = w.AddTensor(kKilnBool, {3}, "y");
  w.AddOp(kKilnBuiltinLogicalNot, {x}, {y});
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const uint8_t in[] = {1, 0, 1};
  r.SetInput(0, in, sizeof(in));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputAs<uint8_t>(), (std::vector<uint8_t>{0, 1, 0}));
}

TEST(LogicalOpsTest, Errors) {
  {
    ModelWriter w;
    const int a = w.AddTensor(kKilnFloat32, {2}, "fa");
    const int b = w.AddTensor(kKilnBool, {2}, "b");
    const int y = w.AddTensor(kKilnBool, {2}, "y");
    w.AddOp(kKilnBuiltinLogicalAnd, {a, b}, {y});
    w.SetInputs({a, b});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"LOGICAL_AND: input 0 'fa' has type float32"});
  }
  {
    ModelWriter w;
    const int a = w.AddTensor(kKilnInt32, {2}, "ia");
    const int y = w.AddTensor(kKilnInt32, {2}, "y");
    w.AddOp(kKilnBuiltinLogicalNot, {a}, {y});
    w.SetInputs({a});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"LOGICAL_NOT: input 'ia' has type int32; expected one of bool"});
  }
}

// SELECT / SELECT_V2 on float32 x and y (model inputs) with a constant condition.
std::vector<float> RunSelect(KilnBuiltinOperator code, const std::vector<int>& c_dims, const std::vector<uint8_t>& c,
                             const std::vector<int>& x_dims, const std::vector<int>& y_dims,
                             const std::vector<int>& out_dims, const std::vector<float>& x, const std::vector<float>& y,
                             std::string* errors = nullptr) {
  ModelWriter w;
  const int tc = w.AddConstTensor<uint8_t>(kKilnBool, c_dims, "cond", c);
  const int tx = w.AddTensor(kKilnFloat32, x_dims, "x");
  const int ty = w.AddTensor(kKilnFloat32, y_dims, "y");
  const int to = w.AddTensor(kKilnFloat32, out_dims, "out");
  w.AddOp(code, {tc, tx, ty}, {to});
  w.SetInputs({tx, ty});
  w.SetOutputs({to});
  Runner r(w);
  if (errors != nullptr) *errors = r.errors();
  if (r.status() != kKilnOk) return {};
  if (!x.empty()) r.SetInput(0, x.data(), x.size() * 4);
  if (!y.empty()) r.SetInput(1, y.data(), y.size() * 4);
  EXPECT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputDims(), out_dims);
  return r.Output();
}

TEST(SelectOpsTest, SelectShapes) {
  const std::vector<float> x = Iota<float>(6, 1, 1), y = Iota<float>(6, -1, -1);
  EXPECT_EQ(RunSelect(kKilnBuiltinSelect, {2, 3}, {1, 0, 1, 0, 0, 1}, {2, 3}, {2, 3}, {2, 3}, x, y),
            (std::vector<float>{1, -2, 3, -4, -5, 6}));
  EXPECT_EQ(RunSelect(kKilnBuiltinSelect, {2}, {0, 1}, {2, 3}, {2, 3}, {2, 3}, x, y),
            (std::vector<float>{-1, -2, -3, 4, 5, 6}));
  EXPECT_EQ(RunSelect(kKilnBuiltinSelect, {}, {0}, {2, 3}, {2, 3}, {2, 3}, x, y), y);
  EXPECT_EQ(RunSelect(kKilnBuiltinSelect, {}, {1}, {}, {}, {}, {5}, {7}), (std::vector<float>{5}));
  std::string errors;
  RunSelect(kKilnBuiltinSelect, {1, 3}, {1, 0, 1}, {2, 3}, {2, 3}, {2, 3}, x, y, &errors);
  EXPECT_NE(errors.find("SELECT: condition 'cond' has shape [1, 3]; it must have x's shape [2, 3]"), std::string::npos)
      << errors;
  RunSelect(kKilnBuiltinSelect, {2, 3}, {1, 0, 1, 0, 0, 1}, {2, 3}, {3, 2}, {2, 3}, x, y, &errors);
  EXPECT_NE(errors.find("SELECT: x 'x' has shape [2, 3] but y 'y' has shape [3, 2]"), std::string::npos) << errors;
}

TEST(SelectOpsTest, SelectV2Broadcasts) {
  const std::vector<std::vector<std::vector<int>>> cases = {{{3, 1}, {1, 4}, {1}},
                                                            {{}, {2, 3}, {2, 3}},
                                                            {{1, 2, 1, 3, 1, 2}, {2, 1, 1, 3, 2, 1}, {2}},
                                                            {{2, 2}, {2, 2}, {2, 2}},
                                                            {{2, 1, 1}, {1, 0}, {1}}};
  for (const auto& shapes : cases) {
    const std::vector<int> out = BroadcastDims(BroadcastDims(shapes[0], shapes[1]), shapes[2]);
    std::vector<uint8_t> c(Product(shapes[0]));
    for (size_t i = 0; i < c.size(); ++i) c[i] = (i * 7 + 1) % 3 == 0;
    const std::vector<float> x = Iota<float>(Product(shapes[1]), 1, 1);
    const std::vector<float> y = Iota<float>(Product(shapes[2]), -1, -1);
    const std::vector<float> got = RunSelect(kKilnBuiltinSelectV2, shapes[0], c, shapes[1], shapes[2], out, x, y);
    ASSERT_EQ(static_cast<int64_t>(got.size()), Product(out));
    for (int64_t i = 0; i < Product(out); ++i) {
      const float want =
          c[SourceIndex(shapes[0], out, i)] ? x[SourceIndex(shapes[1], out, i)] : y[SourceIndex(shapes[2], out, i)];
      EXPECT_EQ(got[i], want) << i;
    }
  }
  std::string errors;
  RunSelect(kKilnBuiltinSelectV2, {3}, {1, 0, 1}, {2}, {1}, {3}, {1, 2}, {3}, &errors);
  EXPECT_NE(errors.find("SELECT_V2: shapes [3] (condition 'cond'), [2] (x 'x') and [1] (y 'y') do not broadcast"),
            std::string::npos)
      << errors;
}

TEST(SelectOpsTest, Int64AndTypeErrors) {
  {
    ModelWriter w;
    const int c = w.AddConstTensor<uint8_t>(kKilnBool, {2}, "cond", {1, 0});
    const int x = w.AddConstTensor<int64_t>(kKilnInt64, {2}, "x", {int64_t{1} << 40, 2});
    const int y = w.AddTensor(kKilnInt64, {2}, "y");
    const int o = w.AddTensor(kKilnInt64, {2}, "o");
    w.AddOp(kKilnBuiltinSelectV2, {c, x, y}, {o});
    w.SetInputs({y});
    w.SetOutputs({o});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int64_t in[] = {-5, -6};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int64_t>(), (std::vector<int64_t>{int64_t{1} << 40, -6}));
  }
  {
    ModelWriter w;
    const int c = w.AddTensor(kKilnInt32, {2}, "icond");
    const int x = w.AddTensor(kKilnFloat32, {2}, "x");
    const int y = w.AddTensor(kKilnFloat32, {2}, "y");
    const int o = w.AddTensor(kKilnFloat32, {2}, "o");
    w.AddOp(kKilnBuiltinSelect, {c, x, y}, {o});
    w.SetInputs({c, x, y});
    w.SetOutputs({o});
    Runner r(w);
    ExpectErrorMentions(r, {"SELECT", "condition 'icond'", "int32"});
  }
  {
    ModelWriter w;
    const int c = w.AddTensor(kKilnBool, {2}, "cond");
    const int x = w.AddTensor(kKilnFloat32, {2}, "x");
    const int y = w.AddTensor(kKilnInt32, {2}, "iy");
    const int o = w.AddTensor(kKilnFloat32, {2}, "o");
    w.AddOp(kKilnBuiltinSelectV2, {c, x, y}, {o});
    w.SetInputs({c, x, y});
    w.SetOutputs({o});
    Runner r(w);
    ExpectErrorMentions(r, {"SELECT_V2: y 'iy' has type int32, but x 'x' has type float32"});
  }
}

TEST(FillOpsTest, ZerosLike) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnInt64, {2, 3}, "x");
  const int y = w.AddTensor(kKilnInt64, {2, 3}, "y");
  w.AddOp(kKilnBuiltinZerosLike, {x}, {y});
  w.SetInputs({x});
  w.SetOutputs({y});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const int64_t in[] = {1, 2, 3, 4, 5, 6};
  r.SetInput(0, in, sizeof(in));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 3}));
  EXPECT_EQ(r.OutputAs<int64_t>(), std::vector<int64_t>(6, 0));

  ModelWriter w2;
  const int b = w2.AddTensor(kKilnBool, {2}, "bx");
  const int by = w2.AddTensor(kKilnBool, {2}, "by");
  w2.AddOp(kKilnBuiltinZerosLike, {b}, {by});
  w2.SetInputs({b});
  w2.SetOutputs({by});
  Runner r2(w2);
  ExpectErrorMentions(r2, {"ZEROS_LIKE: input 'bx' has type bool; expected one of float32, int32, int64"});
}

TEST(FillOpsTest, FillShapesAndTypes) {
  {
    ModelWriter w;
    const int d = w.AddConstTensor<int64_t>(kKilnInt64, {3}, "dims", {2, 1, 3});
    const int v = w.AddTensor(kKilnFloat32, {}, "value");
    const int y = w.AddTensor(kKilnFloat32, {1}, "y");
    w.AddOp(kKilnBuiltinFill, {d, v}, {y});
    w.SetInputs({v});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in = 2.5f;
    r.SetInput(0, &in, 4);
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{2, 1, 3}));
    EXPECT_EQ(r.Output(), std::vector<float>(6, 2.5f));
  }
  {
    ModelWriter w;
    const int d = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "dims", {3});
    const int v = w.AddConstTensor<uint8_t>(kKilnBool, {}, "value", {1});
    const int y = w.AddTensor(kKilnBool, {}, "y");
    w.AddOp(kKilnBuiltinFill, {d, v}, {y});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{3}));
    EXPECT_EQ(r.OutputAs<uint8_t>(), (std::vector<uint8_t>{1, 1, 1}));
  }
  {
    ModelWriter w;
    const int d = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "dims", {4, 0});
    const int v = w.AddConstTensor<int32_t>(kKilnInt32, {}, "value", {7});
    const int y = w.AddTensor(kKilnInt32, {4, 0}, "y");
    w.AddOp(kKilnBuiltinFill, {d, v}, {y});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{4, 0}));
  }
}

TEST(FillOpsTest, FillErrors) {
  {
    ModelWriter w;
    const int d = w.AddTensor(kKilnInt32, {2}, "run_time_dims");
    const int v = w.AddTensor(kKilnFloat32, {}, "value");
    const int y = w.AddTensor(kKilnFloat32, {2, 2}, "y");
    w.AddOp(kKilnBuiltinFill, {d, v}, {y});
    w.SetInputs({d, v});
    w.SetOutputs({y});
    Runner r(w);
    // Run-time dims: a dynamic output sized at Invoke; a negative entry fails there naming it.
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float value = 2.5f;
    r.SetInput(1, &value, sizeof(value));
    const int32_t dims[] = {3, 1};
    r.SetInput(0, dims, sizeof(dims));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{3, 1}));
    EXPECT_EQ(r.Output(), (std::vector<float>{2.5f, 2.5f, 2.5f}));
    const int32_t empty[] = {0, 7};
    r.SetInput(0, empty, sizeof(empty));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(), (std::vector<int>{0, 7}));
    const int32_t bad[] = {2, -3};
    r.SetInput(0, bad, sizeof(bad));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("FILL: dims 'run_time_dims' holds -3 at element 1"), std::string::npos) << r.errors();
  }
  {
    ModelWriter w;
    const int d = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "dims", {2, -1});
    const int v = w.AddTensor(kKilnFloat32, {}, "value");
    const int y = w.AddTensor(kKilnFloat32, {2, 2}, "y");
    w.AddOp(kKilnBuiltinFill, {d, v}, {y});
    w.SetInputs({v});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"FILL: dims 'dims' holds -1 at element 1; dimensions must be in [0, 2^31)"});
  }
  {
    ModelWriter w;
    const int d = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "dims", {2});
    const int v = w.AddTensor(kKilnFloat32, {1}, "vec_value");
    const int y = w.AddTensor(kKilnFloat32, {2}, "y");
    w.AddOp(kKilnBuiltinFill, {d, v}, {y});
    w.SetInputs({v});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"FILL", "value 'vec_value'"});
  }
  {
    ModelWriter w;
    const int d = w.AddConstTensor<int32_t>(kKilnInt32, {1}, "dims", {2});
    const int v = w.AddTensor(kKilnFloat32, {}, "value");
    const int y = w.AddTensor(kKilnInt32, {2}, "iy");
    w.AddOp(kKilnBuiltinFill, {d, v}, {y});
    w.SetInputs({v});
    w.SetOutputs({y});
    Runner r(w);
    // The output takes the value's type (as LiteRT), so a float32 value fills a float32 output.
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  }
}

template <typename T>
T FloorDivRef(T a, T b) {
  return static_cast<T>(std::floor(static_cast<double>(a) / static_cast<double>(b)));
}
template <typename T>
T FloorModRef(T a, T b) {
  return static_cast<T>(a - FloorDivRef(a, b) * b);
}

template <typename T>
void CheckFloorDivMod(KilnType type, bool check_div) {
  const std::vector<int> a_dims = {2, 3, 4}, b_dims = {3, 1}, out = {2, 3, 4};
  const std::vector<T> a = Iota<T>(24, T(-12), T(1));
  const std::vector<T> b = {T(5), T(-3), T(1)};
  for (bool div : {true, false}) {
    if (div && !check_div) continue;
    std::vector<int> dims;
    const std::vector<uint8_t> bytes =
        RunBinary<T>(div ? kKilnBuiltinFloorDiv : kKilnBuiltinFloorMod, type, type, a_dims, b_dims, a, b, &dims);
    ASSERT_EQ(dims, out);
    std::vector<T> got(bytes.size() / sizeof(T));
    std::memcpy(got.data(), bytes.data(), bytes.size());
    for (int64_t i = 0; i < 24; ++i) {
      const T x = a[SourceIndex(a_dims, out, i)], y = b[SourceIndex(b_dims, out, i)];
      EXPECT_EQ(got[i], div ? FloorDivRef(x, y) : FloorModRef(x, y)) << x << " " << y;
    }
  }
}

TEST(ArithOpsTest, FloorDivAndFloorMod) {
  CheckFloorDivMod<int32_t>(kKilnInt32, true);
  CheckFloorDivMod<int8_t>(kKilnInt8, true);
  CheckFloorDivMod<int16_t>(kKilnInt16, true);
  CheckFloorDivMod<int64_t>(kKilnInt64, false);
  CheckFloorDivMod<float>(kKilnFloat32, true);
  // The one overflowing integer case is defined: INT32_MIN / -1 wraps to INT32_MIN (LiteRT's result on x86),
  // INT32_MIN mod -1 is 0.
  std::vector<int> dims;
  const int32_t min = std::numeric_limits<int32_t>::min();
  const std::vector<uint8_t> q =
      RunBinary<int32_t>(kKilnBuiltinFloorDiv, kKilnInt32, kKilnInt32, {2}, {2}, {min, 7}, {-1, -1}, &dims);
  std::vector<int32_t> qi(2);
  std::memcpy(qi.data(), q.data(), 8);
  EXPECT_EQ(qi, (std::vector<int32_t>{min, -7}));
  const std::vector<uint8_t> m =
      RunBinary<int32_t>(kKilnBuiltinFloorMod, kKilnInt32, kKilnInt32, {2}, {2}, {min, 7}, {-1, -1}, &dims);
  std::vector<int32_t> mi(2);
  std::memcpy(mi.data(), m.data(), 8);
  EXPECT_EQ(mi, (std::vector<int32_t>{0, 0}));
  // Float FLOOR_MOD by zero is NaN.
  const std::vector<uint8_t> f =
      RunBinary<float>(kKilnBuiltinFloorMod, kKilnFloat32, kKilnFloat32, {1}, {1}, {1.5f}, {0.0f}, &dims);
  float fv;
  std::memcpy(&fv, f.data(), 4);
  EXPECT_TRUE(std::isnan(fv));
}

TEST(ArithOpsTest, DivisionByZeroFailsInvoke) {
  std::vector<int> dims;
  std::string errors;
  EXPECT_TRUE(
      RunBinary<int32_t>(kKilnBuiltinFloorDiv, kKilnInt32, kKilnInt32, {3}, {3}, {1, 2, 3}, {1, 0, 2}, &dims, &errors)
          .empty());
  EXPECT_NE(errors.find("FLOOR_DIV: input 1 'b' holds 0 at element 1: division by zero"), std::string::npos) << errors;
  EXPECT_TRUE(
      RunBinary<float>(kKilnBuiltinFloorDiv, kKilnFloat32, kKilnFloat32, {2}, {1}, {1, 2}, {-0.0f}, &dims, &errors)
          .empty());
  EXPECT_NE(errors.find("FLOOR_DIV: input 1 'b' holds 0 at element 0"), std::string::npos) << errors;
  EXPECT_TRUE(RunBinary<int64_t>(kKilnBuiltinFloorMod, kKilnInt64, kKilnInt64, {2}, {2}, {1, 2}, {3, 0}, &dims, &errors)
                  .empty());
  EXPECT_NE(errors.find("FLOOR_MOD: input 1 'b' holds 0 at element 1: division by zero"), std::string::npos) << errors;
  EXPECT_TRUE(
      RunBinary<int32_t>(kKilnBuiltinPow, kKilnInt32, kKilnInt32, {2}, {2}, {2, 2}, {1, -2}, &dims, &errors).empty());
  EXPECT_NE(errors.find("POW: input 1 'b' holds -2 at element 1: integers to negative powers are not allowed"),
            std::string::npos)
      << errors;
}

TEST(ArithOpsTest, PowAndTypeErrors) {
  std::vector<int> dims;
  const std::vector<uint8_t> p =
      RunBinary<int32_t>(kKilnBuiltinPow, kKilnInt32, kKilnInt32, {2, 3}, {3}, {2, -3, 7, 3, -2, 0}, {0, 3, 2}, &dims);
  std::vector<int32_t> pi(6);
  std::memcpy(pi.data(), p.data(), 24);
  EXPECT_EQ(pi, (std::vector<int32_t>{1, -27, 49, 1, -8, 0}));
  // Beyond int32: INT32_MIN, defined.
  const std::vector<uint8_t> o =
      RunBinary<int32_t>(kKilnBuiltinPow, kKilnInt32, kKilnInt32, {2}, {2}, {3, -2}, {40, 31}, &dims);
  std::vector<int32_t> oi(2);
  std::memcpy(oi.data(), o.data(), 8);
  EXPECT_EQ(oi, (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::min()}));
  const std::vector<uint8_t> f =
      RunBinary<float>(kKilnBuiltinPow, kKilnFloat32, kKilnFloat32, {3}, {}, {4, 9, 0.25f}, {0.5f}, &dims);
  std::vector<float> fv(3);
  std::memcpy(fv.data(), f.data(), 12);
  EXPECT_EQ(fv, (std::vector<float>{2, 3, 0.5f}));
  {
    ModelWriter w;
    const int a = w.AddTensor(kKilnInt64, {2}, "a64");
    const int b = w.AddTensor(kKilnInt64, {2}, "b");
    const int y = w.AddTensor(kKilnInt64, {2}, "y");
    w.AddOp(kKilnBuiltinFloorDiv, {a, b}, {y});
    w.SetInputs({a, b});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"FLOOR_DIV: input 0 'a64' has type int64"});
  }
  {
    ModelWriter w;
    const int a = w.AddTensor(kKilnInt64, {2}, "a64");
    const int b = w.AddTensor(kKilnInt64, {2}, "b");
    const int y = w.AddTensor(kKilnInt64, {2}, "y");
    w.AddOp(kKilnBuiltinPow, {a, b}, {y});
    w.SetInputs({a, b});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"POW: input 0 'a64' has type int64; expected one of float32, int32"});
  }
}

TEST(ArithOpsTest, Sign) {
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {5}, "x");
    const int y = w.AddTensor(kKilnFloat32, {5}, "y");
    w.AddOp(kKilnBuiltinSign, {x}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float in[] = {-2.5f, 0.0f, -0.0f, 1e-30f, std::nanf("")};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    const std::vector<float> out = r.Output();
    EXPECT_EQ(out[0], -1.0f);
    EXPECT_EQ(out[1], 0.0f);
    EXPECT_EQ(out[2], 0.0f);
    EXPECT_EQ(out[3], 1.0f);
    EXPECT_TRUE(std::isnan(out[4]));
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt32, {3}, "x");
    const int y = w.AddTensor(kKilnInt32, {3}, "y");
    w.AddOp(kKilnBuiltinSign, {x}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int32_t in[] = {std::numeric_limits<int32_t>::min(), 0, 9};
    r.SetInput(0, in, sizeof(in));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputAs<int32_t>(), (std::vector<int32_t>{-1, 0, 1}));
  }
  {
    ModelWriter w;
    const int x = w.AddTensor(kKilnInt64, {3}, "x64");
    const int y = w.AddTensor(kKilnInt64, {3}, "y");
    w.AddOp(kKilnBuiltinSign, {x}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"SIGN: input 'x64' has type int64; expected one of float32, int32"});
  }
}

}  // namespace
}  // namespace kiln::ops
