// IF, WHILE, CALL_ONCE and the resource variables through the interpreter, on multi-subgraph ModelWriter models;
// and the signature runners of the C API over signatures of different subgraphs.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api.h"
#include "runtime/model/model_writer.h"
#include "runtime/subgraph_hook.h"
#include "tests/ops/wrapper_runner.h"

namespace kiln::ops {
namespace {

using wrapper_testing::CollectErrors;
using wrapper_testing::ExpectErrorMentions;
using wrapper_testing::Runner;

const KilnAddParams kAdd = {kKilnActNone, false};
const KilnMulParams kMul = {kKilnActNone};

// A subgraph (made current) taking `dims` float32 `a` and giving a+a (double) or a*a (square).
int AddUnarySubgraph(ModelWriter& w, const std::string& name, const std::vector<int>& dims, bool square) {
  const int s = w.AddSubgraph(name);
  const int a = w.AddTensor(kKilnFloat32, dims, "a");
  const int b = w.AddTensor(kKilnFloat32, dims, "b");
  if (square) {
    w.AddOp(kKilnBuiltinMul, {a, a}, {b}, kMul);
  } else {
    w.AddOp(kKilnBuiltinAdd, {a, a}, {b}, kAdd);
  }
  w.SetInputs({a});
  w.SetOutputs({b});
  return s;
}

// Main: IF(cond, x) with then = double, else = square.
void BuildIf(ModelWriter& w, KilnType cond_type, const std::vector<int>& cond_dims, const std::vector<int>& dims,
             int then_index = 1, int else_index = 2) {
  const int c = w.AddTensor(cond_type, cond_dims, "cond");
  const int x = w.AddTensor(kKilnFloat32, dims, "x");
  const int y = w.AddTensor(kKilnFloat32, dims, "y");
  w.AddOp(kKilnBuiltinIf, {c, x}, {y}, KilnIfParams{then_index, else_index});
  w.SetInputs({c, x});
  w.SetOutputs({y});
  AddUnarySubgraph(w, "then", dims, false);
  AddUnarySubgraph(w, "else", dims, true);
}

TEST(IfWrapperTest, BothBranchesAndShapes) {
  for (const std::vector<int>& dims : std::vector<std::vector<int>>{{3}, {}, {2, 1, 2}, {1, 1, 1, 1, 1, 2}, {0}}) {
    ModelWriter w;
    BuildIf(w, kKilnBool, {}, dims);
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    size_t n = 1;
    for (int d : dims) n *= static_cast<size_t>(d);
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i) x[i] = 1.5f + static_cast<float>(i);
    if (n > 0) r.SetInput(1, x.data(), x.size() * 4);
    for (uint8_t cond : {uint8_t{1}, uint8_t{0}, uint8_t{7}}) {
      r.SetInput(0, &cond, 1);
      ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
      EXPECT_EQ(r.OutputDims(), dims);
      const std::vector<float> y = r.Output();
      ASSERT_EQ(y.size(), n);
      for (size_t i = 0; i < n; ++i) EXPECT_FLOAT_EQ(y[i], cond != 0 ? x[i] + x[i] : x[i] * x[i]);
    }
  }
}

TEST(IfWrapperTest, NumericConditions) {
  {
    ModelWriter w;
    BuildIf(w, kKilnInt32, {1}, {2});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float x[2] = {3, 4};
    r.SetInput(1, x, sizeof(x));
    for (int32_t cond : {-2, 0}) {
      r.SetInput(0, &cond, sizeof(cond));
      ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
      EXPECT_EQ(r.Output(), cond != 0 ? (std::vector<float>{6, 8}) : (std::vector<float>{9, 16}));
    }
  }
  {
    ModelWriter w;
    BuildIf(w, kKilnFloat32, {1, 1}, {2});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float x[2] = {3, 4};
    r.SetInput(1, x, sizeof(x));
    const float cond = 0.5f;
    r.SetInput(0, &cond, sizeof(cond));
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.Output(), (std::vector<float>{6, 8}));
  }
}

TEST(IfWrapperTest, BadInputFailsPrepare) {
  {  // the condition must be a single element
    ModelWriter w;
    BuildIf(w, kKilnBool, {2}, {2});
    Runner r(w);
    ExpectErrorMentions(r, {"IF", "condition 'cond'", "single element"});
  }
  {  // a string condition
    ModelWriter w;
    BuildIf(w, kKilnString, {}, {2});
    Runner r(w);
    ExpectErrorMentions(r, {"IF", "condition 'cond'", "expected bool or a number"});
  }
  {  // a subgraph index out of range
    ModelWriter w;
    BuildIf(w, kKilnBool, {}, {2}, 1, 5);
    Runner r(w);
    ExpectErrorMentions(r, {"IF", "subgraph index 5 is out of range", "3 subgraphs"});
  }
  {  // negative index
    ModelWriter w;
    BuildIf(w, kKilnBool, {}, {2}, -1, 2);
    Runner r(w);
    ExpectErrorMentions(r, {"IF", "subgraph index -1 is out of range"});
  }
  {  // a branch calling subgraph 0, the IF's own: recursion
    ModelWriter w;
    const int c = w.AddTensor(kKilnBool, {}, "cond");
    const int x = w.AddTensor(kKilnFloat32, {2}, "x");
    const int y = w.AddTensor(kKilnFloat32, {2}, "y");
    w.AddOp(kKilnBuiltinIf, {c, c, x}, {y}, KilnIfParams{0, 0});
    w.SetInputs({c, x});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"IF in subgraph 0 ('main') calls subgraph 0", "recursion"});
  }
  {  // the branch's input type differs from what the node passes
    ModelWriter w;
    const int c = w.AddTensor(kKilnBool, {}, "cond");
    const int x = w.AddTensor(kKilnFloat32, {2}, "x");
    const int y = w.AddTensor(kKilnFloat32, {2}, "y");
    w.AddOp(kKilnBuiltinIf, {c, x}, {y}, KilnIfParams{1, 2});
    w.SetInputs({c, x});
    w.SetOutputs({y});
    AddUnarySubgraph(w, "then", {2}, false);
    w.AddSubgraph("else");
    const int a = w.AddTensor(kKilnInt32, {2}, "ai");
    const int b = w.AddTensor(kKilnInt32, {2}, "bi");
    w.AddOp(kKilnBuiltinAdd, {a, a}, {b}, kAdd);
    w.SetInputs({a});
    w.SetOutputs({b});
    Runner r(w);
    ExpectErrorMentions(r, {"IF", "else subgraph 2 input 0 ('ai') is int32 but the node passes 'x' (float32)"});
  }
  {  // the branch's input count differs
    ModelWriter w;
    const int c = w.AddTensor(kKilnBool, {}, "cond");
    const int x = w.AddTensor(kKilnFloat32, {2}, "x");
    const int y = w.AddTensor(kKilnFloat32, {2}, "y");
    w.AddOp(kKilnBuiltinIf, {c, x, x}, {y}, KilnIfParams{1, 2});
    w.SetInputs({c, x});
    w.SetOutputs({y});
    AddUnarySubgraph(w, "then", {2}, false);
    AddUnarySubgraph(w, "else", {2}, true);
    Runner r(w);
    ExpectErrorMentions(r, {"IF", "then subgraph 1 has 1 inputs and 1 outputs; the node needs 2 and 1"});
  }
  {  // recursion through a nested IF: subgraph 1 calls subgraph 1
    ModelWriter w;
    BuildIf(w, kKilnBool, {}, {2});
    w.AddSubgraph("loop");  // subgraph 3: IF(c, c, a) -> itself
    const int c = w.AddTensor(kKilnBool, {}, "c3");
    const int a = w.AddTensor(kKilnFloat32, {2}, "a3");
    const int b = w.AddTensor(kKilnFloat32, {2}, "b3");
    w.AddOp(kKilnBuiltinIf, {c, c, a}, {b}, KilnIfParams{3, 3});
    w.SetInputs({c, a});
    w.SetOutputs({b});
    w.SetCurrentSubgraph(0);
    // Main now calls subgraph 3 through a second IF.
    const int c0 = 0, x0 = 1;
    const int z = w.AddTensor(kKilnFloat32, {2}, "z");
    w.AddOp(kKilnBuiltinIf, {c0, c0, x0}, {z}, KilnIfParams{3, 3});
    w.SetOutputs({2, z});
    Runner r(w);
    // The child's messages name it.
    ExpectErrorMentions(r, {"subgraph 3 ('loop'): IF in subgraph 3 ('loop') calls subgraph 3 ('loop')", "recursion",
                            "subgraph 3 ('loop'): Node number 0 (IF) failed to prepare."});
  }
}

TEST(IfWrapperTest, BranchWithAnUnsupportedOpFailsPrepare) {
  ModelWriter w;
  const int c = w.AddTensor(kKilnBool, {}, "cond");
  const int x = w.AddTensor(kKilnFloat32, {2}, "x");
  const int y = w.AddTensor(kKilnFloat32, {2}, "y");
  w.AddOp(kKilnBuiltinIf, {c, x}, {y}, KilnIfParams{1, 1});
  w.SetInputs({c, x});
  w.SetOutputs({y});
  w.AddSubgraph("then");
  const int a = w.AddTensor(kKilnFloat32, {2}, "a");
  const int b = w.AddTensor(kKilnFloat32, {2}, "b");
  w.AddOp(kKilnBuiltinHashtable, {a}, {b});
  w.SetInputs({a});
  w.SetOutputs({b});
  Runner r(w);  // the interpreter is made (subgraph 0 resolves); the branch fails when IF prepares it
  ExpectErrorMentions(r, {"subgraph 1 ('then'): Unsupported builtin op HASHTABLE", "IF: subgraph 1 could not be built",
                          "Node number 0 (IF) failed to prepare."});
}

// Main: WHILE(i, acc) with cond i < limit and body (i + 1, acc + acc).
void BuildCountingWhile(ModelWriter& w, const std::vector<int>& dims, float limit) {
  const int i = w.AddTensor(kKilnFloat32, {}, "i");
  const int acc = w.AddTensor(kKilnFloat32, dims, "acc");
  const int i_out = w.AddTensor(kKilnFloat32, {}, "i_out");
  const int acc_out = w.AddTensor(kKilnFloat32, dims, "acc_out");
  w.AddOp(kKilnBuiltinWhile, {i, acc}, {i_out, acc_out}, KilnWhileParams{1, 2});
  w.SetInputs({i, acc});
  w.SetOutputs({i_out, acc_out});
  w.AddSubgraph("cond");
  {
    const int ci = w.AddTensor(kKilnFloat32, {}, "ci");
    const int ca = w.AddTensor(kKilnFloat32, dims, "ca");
    const int lim = w.AddConstTensor(kKilnFloat32, {}, "limit", std::vector<float>{limit});
    const int go = w.AddTensor(kKilnBool, {}, "go");
    w.AddOp(kKilnBuiltinLess, {ci, lim}, {go});
    w.SetInputs({ci, ca});
    w.SetOutputs({go});
  }
  w.AddSubgraph("body");
  {
    const int bi = w.AddTensor(kKilnFloat32, {}, "bi");
    const int ba = w.AddTensor(kKilnFloat32, dims, "ba");
    const int one = w.AddConstTensor(kKilnFloat32, {}, "one", std::vector<float>{1});
    const int bi2 = w.AddTensor(kKilnFloat32, {}, "bi2");
    const int ba2 = w.AddTensor(kKilnFloat32, dims, "ba2");
    w.AddOp(kKilnBuiltinAdd, {bi, one}, {bi2}, kAdd);
    w.AddOp(kKilnBuiltinAdd, {ba, ba}, {ba2}, kAdd);
    w.SetInputs({bi, ba});
    w.SetOutputs({bi2, ba2});
  }
}

TEST(WhileWrapperTest, CountingLoopAndZeroIterations) {
  for (const std::vector<int>& dims : std::vector<std::vector<int>>{{2}, {}, {1, 2, 1}, {0}}) {
    ModelWriter w;
    BuildCountingWhile(w, dims, 5);
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    size_t n = 1;
    for (int d : dims) n *= static_cast<size_t>(d);
    std::vector<float> acc(n);
    for (size_t k = 0; k < n; ++k) acc[k] = 1.0f + static_cast<float>(k);
    if (n > 0) r.SetInput(1, acc.data(), acc.size() * 4);
    for (float start : {0.0f, 3.0f, 5.0f, 7.0f, -2.0f}) {
      r.SetInput(0, &start, sizeof(start));
      ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
      const int iterations = start < 5 ? 5 - static_cast<int>(start) : 0;
      EXPECT_EQ(r.Output(0), std::vector<float>{start + static_cast<float>(iterations)});
      const std::vector<float> out = r.Output(1);
      ASSERT_EQ(out.size(), n);
      for (size_t k = 0; k < n; ++k) EXPECT_FLOAT_EQ(out[k], acc[k] * static_cast<float>(1 << iterations));
    }
  }
}

TEST(WhileWrapperTest, NestedIfInBody) {
  // body: acc' = i < 2 ? acc + acc : acc * acc (an IF on subgraphs 3 and 4), i' = i + 1; loop while i < 4.
  ModelWriter w;
  const int i = w.AddTensor(kKilnFloat32, {}, "i");
  const int acc = w.AddTensor(kKilnFloat32, {2}, "acc");
  const int i_out = w.AddTensor(kKilnFloat32, {}, "i_out");
  const int acc_out = w.AddTensor(kKilnFloat32, {2}, "acc_out");
  w.AddOp(kKilnBuiltinWhile, {i, acc}, {i_out, acc_out}, KilnWhileParams{1, 2});
  w.SetInputs({i, acc});
  w.SetOutputs({i_out, acc_out});
  w.AddSubgraph("cond");
  {
    const int ci = w.AddTensor(kKilnFloat32, {}, "ci");
    const int ca = w.AddTensor(kKilnFloat32, {2}, "ca");
    const int lim = w.AddConstTensor(kKilnFloat32, {}, "limit", std::vector<float>{4});
    const int go = w.AddTensor(kKilnBool, {}, "go");
    w.AddOp(kKilnBuiltinLess, {ci, lim}, {go});
    w.SetInputs({ci, ca});
    w.SetOutputs({go});
  }
  w.AddSubgraph("body");
  {
    const int bi = w.AddTensor(kKilnFloat32, {}, "bi");
    const int ba = w.AddTensor(kKilnFloat32, {2}, "ba");
    const int one = w.AddConstTensor(kKilnFloat32, {}, "one", std::vector<float>{1});
    const int two = w.AddConstTensor(kKilnFloat32, {}, "two", std::vector<float>{2});
    const int small = w.AddTensor(kKilnBool, {}, "small");
    const int bi2 = w.AddTensor(kKilnFloat32, {}, "bi2");
    const int ba2 = w.AddTensor(kKilnFloat32, {2}, "ba2");
    w.AddOp(kKilnBuiltinLess, {bi, two}, {small});
    w.AddOp(kKilnBuiltinIf, {small, ba}, {ba2}, KilnIfParams{3, 4});
    w.AddOp(kKilnBuiltinAdd, {bi, one}, {bi2}, kAdd);
    w.SetInputs({bi, ba});
    w.SetOutputs({bi2, ba2});
  }
  AddUnarySubgraph(w, "then", {2}, false);
  AddUnarySubgraph(w, "else", {2}, true);
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const float start = 0;
  const float a[2] = {1.0f, 0.5f};
  r.SetInput(0, &start, sizeof(start));
  r.SetInput(1, a, sizeof(a));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  // i=0: x2, i=1: x2, i=2: square, i=3: square.
  EXPECT_EQ(r.Output(0), std::vector<float>{4});
  EXPECT_EQ(r.Output(1), (std::vector<float>{256.0f, 16.0f}));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();  // again: same answer
  EXPECT_EQ(r.Output(1), (std::vector<float>{256.0f, 16.0f}));
}

TEST(WhileWrapperTest, BadInputFailsPrepare) {
  {  // the body changes a loop variable's shape
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2}, "x");
    const int y = w.AddTensor(kKilnFloat32, {2}, "y");
    w.AddOp(kKilnBuiltinWhile, {x}, {y}, KilnWhileParams{1, 2});
    w.SetInputs({x});
    w.SetOutputs({y});
    w.AddSubgraph("cond");
    const int ca = w.AddTensor(kKilnFloat32, {2}, "ca");
    const int go = w.AddConstTensor(kKilnBool, {}, "go", std::vector<uint8_t>{0});
    w.SetInputs({ca});
    w.SetOutputs({go});
    w.AddSubgraph("body");
    const int ba = w.AddTensor(kKilnFloat32, {2}, "ba");
    const int k = w.AddConstTensor(kKilnFloat32, {3}, "k", std::vector<float>{1, 2, 3});
    w.SetInputs({ba});
    w.SetOutputs({k});
    Runner r(w);
    ExpectErrorMentions(r, {"WHILE", "loop variable 0 ('x')", "from shape [2] to [3]"});
  }
  {  // a cond subgraph whose output is not bool
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2}, "x");
    const int y = w.AddTensor(kKilnFloat32, {2}, "y");
    w.AddOp(kKilnBuiltinWhile, {x}, {y}, KilnWhileParams{1, 1});
    w.SetInputs({x});
    w.SetOutputs({y});
    AddUnarySubgraph(w, "cond", {2}, false);
    Runner r(w);
    ExpectErrorMentions(r, {"WHILE", "cond subgraph 1 output 'b' is float32; expected bool"});
  }
  {  // inputs and outputs differ in count
    ModelWriter w;
    BuildCountingWhile(w, {2}, 3);
    w.SetCurrentSubgraph(0);
    const int z = w.AddTensor(kKilnFloat32, {}, "z");
    const int z2 = w.AddTensor(kKilnFloat32, {2}, "z2");
    w.AddOp(kKilnBuiltinWhile, {0}, {z, z2}, KilnWhileParams{1, 2});
    Runner r(w);
    ExpectErrorMentions(r, {"WHILE", "1 inputs and 2 outputs"});
  }
  {  // the body is the WHILE's own subgraph
    ModelWriter w2;
    const int i = w2.AddTensor(kKilnInt32, {}, "i");
    const int i_out = w2.AddTensor(kKilnInt32, {}, "i_out");
    w2.AddOp(kKilnBuiltinWhile, {i}, {i_out}, KilnWhileParams{0, 0});
    w2.SetInputs({i});
    w2.SetOutputs({i_out});
    Runner r(w2);
    ExpectErrorMentions(r, {"WHILE", "recursion"});
  }
}

TEST(WhileWrapperTest, IterationLimitStopsEndlessLoop) {
  ModelWriter w;
  BuildCountingWhile(w, {2}, 1e30f);
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const float start = 0;
  const float acc[2] = {0, 0};
  r.SetInput(0, &start, sizeof(start));
  r.SetInput(1, acc, sizeof(acc));
  subgraph_hook::SetWhileIterationLimit(100);
  EXPECT_NE(r.Invoke(), kKilnOk);
  subgraph_hook::SetWhileIterationLimit(0);
  EXPECT_NE(r.errors().find("WHILE: stopped after 100 iterations"), std::string::npos) << r.errors();
}

// The TF converter's pattern for a stateful model: main runs CALL_ONCE(init), whose subgraph assigns the
// variable its initial value; main reads it, adds x, outputs the sum and assigns it back.
void BuildCallOnceVariable(ModelWriter& w, bool with_init) {
  const int x = w.AddTensor(kKilnFloat32, {2}, "x");
  const int h = w.AddTensor(kKilnResource, {}, "handle");
  const int v = w.AddTensor(kKilnFloat32, {2}, "v");
  const int y = w.AddTensor(kKilnFloat32, {2}, "y");
  if (with_init) w.AddOp(kKilnBuiltinCallOnce, {}, {}, KilnCallOnceParams{1});
  w.AddOp(kKilnBuiltinVarHandle, {}, {h}, KilnVarHandleParams{"", "total"});
  w.AddOp(kKilnBuiltinReadVariable, {h}, {v});
  w.AddOp(kKilnBuiltinAdd, {v, x}, {y}, kAdd);
  w.AddOp(kKilnBuiltinAssignVariable, {h, y}, {});
  w.SetInputs({x});
  w.SetOutputs({y});
  w.AddSubgraph("init");
  const int ih = w.AddTensor(kKilnResource, {}, "init_handle");
  const int k = w.AddConstTensor(kKilnFloat32, {2}, "k", std::vector<float>{10, 20});
  w.AddOp(kKilnBuiltinVarHandle, {}, {ih}, KilnVarHandleParams{"", "total"});
  w.AddOp(kKilnBuiltinAssignVariable, {ih, k}, {});
  w.SetInputs({});
  w.SetOutputs({});
}

TEST(CallOnceWrapperTest, InitsVariableOnceAndStatepersists) {
  ModelWriter w;
  BuildCallOnceVariable(w, true);
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const float x[2] = {1, 2};
  r.SetInput(0, x, sizeof(x));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.Output(), (std::vector<float>{11, 22}));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.Output(), (std::vector<float>{12, 24}));
  // Prepare again: the variable and the call-once survive it.
  ASSERT_EQ(KilnInterpreterAllocateTensors(r.interpreter()), kKilnOk) << r.errors();
  r.SetInput(0, x, sizeof(x));
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.Output(), (std::vector<float>{13, 26}));
}

TEST(CallOnceWrapperTest, Errors) {
  {  // reading a variable nothing assigned
    ModelWriter w;
    BuildCallOnceVariable(w, false);
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const float x[2] = {1, 2};
    r.SetInput(0, x, sizeof(x));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("READ_VARIABLE: variable '/total' is read before any ASSIGN_VARIABLE"), std::string::npos)
        << r.errors();
  }
  {  // an init subgraph with inputs
    ModelWriter w;
    w.AddOp(kKilnBuiltinCallOnce, {}, {}, KilnCallOnceParams{1});
    w.SetInputs({});
    w.SetOutputs({});
    AddUnarySubgraph(w, "init", {2}, false);
    Runner r(w);
    ExpectErrorMentions(r, {"CALL_ONCE", "init subgraph 1 has 1 inputs and 1 outputs; the node needs 0 and 0"});
  }
  {  // an init subgraph out of range, and one that is main itself
    for (int index : {4, 0}) {
      ModelWriter w;
      w.AddOp(kKilnBuiltinCallOnce, {}, {}, KilnCallOnceParams{index});
      w.SetInputs({});
      w.SetOutputs({});
      Runner r(w);
      ExpectErrorMentions(r, {"CALL_ONCE", index == 4 ? "subgraph index 4 is out of range" : "recursion"});
    }
  }
  {  // a VAR_HANDLE whose output is not a resource
    ModelWriter w;
    const int h = w.AddTensor(kKilnInt32, {}, "h");
    w.AddOp(kKilnBuiltinVarHandle, {}, {h}, KilnVarHandleParams{"c", "n"});
    w.SetInputs({});
    w.SetOutputs({h});
    Runner r(w);
    ExpectErrorMentions(r, {"VAR_HANDLE", "'h'", "resource"});
  }
  {  // READ_VARIABLE of a variable whose type differs from its output's
    ModelWriter w;
    const int h = w.AddTensor(kKilnResource, {}, "h");
    const int k = w.AddConstTensor(kKilnInt32, {2}, "k", std::vector<int32_t>{1, 2});
    const int v = w.AddTensor(kKilnFloat32, {2}, "v");
    w.AddOp(kKilnBuiltinVarHandle, {}, {h}, KilnVarHandleParams{"", "n"});
    w.AddOp(kKilnBuiltinAssignVariable, {h, k}, {});
    w.AddOp(kKilnBuiltinReadVariable, {h}, {v});
    w.SetInputs({});
    w.SetOutputs({v});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("READ_VARIABLE: variable '/n' holds int32 but output 'v' is float32"), std::string::npos)
        << r.errors();
  }
  {  // a resource tensor holding an id no VAR_HANDLE made
    ModelWriter w;
    const int h = w.AddTensor(kKilnResource, {}, "h");
    const int v = w.AddTensor(kKilnFloat32, {2}, "v");
    w.AddOp(kKilnBuiltinReadVariable, {h}, {v});
    w.SetInputs({h});
    w.SetOutputs({v});
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int32_t id = 12345;
    r.SetInput(0, &id, sizeof(id));
    EXPECT_NE(r.Invoke(), kKilnOk);
    EXPECT_NE(r.errors().find("READ_VARIABLE: resource 'h' holds id 12345, which no VAR_HANDLE made"),
              std::string::npos)
        << r.errors();
  }
}

// Two signatures on two subgraphs: "add_one" (subgraph 0: y = x + 1) and "square" (subgraph 1: out = in * in).
std::vector<uint8_t> TwoSignatureModel() {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {2}, "x");
  const int one = w.AddConstTensor(kKilnFloat32, {1}, "one", std::vector<float>{1});
  const int y = w.AddTensor(kKilnFloat32, {2}, "y");
  w.AddOp(kKilnBuiltinAdd, {x, one}, {y}, kAdd);
  w.SetInputs({x});
  w.SetOutputs({y});
  AddUnarySubgraph(w, "square", {3}, true);
  w.AddSignature("add_one", 0, {{"input", x}}, {{"output", y}});
  w.AddSignature("square", 1, {{"value", 0}}, {{"squared", 1}});
  std::vector<uint8_t> bytes = w.Finish();
  EXPECT_FALSE(bytes.empty()) << w.error();
  return bytes;
}

TEST(SignatureRunnerTest, TwoSignaturesOnDifferentSubgraphs) {
  const std::vector<uint8_t> bytes = TwoSignatureModel();
  KilnModel* model = KilnModelCreate(bytes.data(), bytes.size());
  ASSERT_NE(model, nullptr);
  std::string errors;
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(options, &CollectErrors, &errors);
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, options);
  KilnInterpreterOptionsDelete(options);
  ASSERT_NE(interpreter, nullptr) << errors;
  ASSERT_EQ(KilnInterpreterGetSignatureCount(interpreter), 2);
  EXPECT_STREQ(KilnInterpreterGetSignatureKey(interpreter, 0), "add_one");
  EXPECT_STREQ(KilnInterpreterGetSignatureKey(interpreter, 1), "square");
  EXPECT_EQ(KilnInterpreterGetSignatureKey(interpreter, 2), nullptr);
  EXPECT_EQ(KilnInterpreterGetSignatureKey(interpreter, -1), nullptr);

  KilnSignatureRunner* square = KilnInterpreterGetSignatureRunner(interpreter, "square");
  ASSERT_NE(square, nullptr) << errors;
  EXPECT_EQ(KilnSignatureRunnerGetInputCount(square), 1u);
  EXPECT_EQ(KilnSignatureRunnerGetOutputCount(square), 1u);
  EXPECT_STREQ(KilnSignatureRunnerGetInputName(square, 0), "value");
  EXPECT_STREQ(KilnSignatureRunnerGetOutputName(square, 0), "squared");
  EXPECT_EQ(KilnSignatureRunnerGetInputName(square, 1), nullptr);
  EXPECT_EQ(KilnSignatureRunnerGetOutputName(square, -1), nullptr);
  EXPECT_EQ(KilnSignatureRunnerGetInputTensor(square, "nope"), nullptr);
  EXPECT_EQ(KilnSignatureRunnerGetOutputTensor(square, "value"), nullptr);
  ASSERT_EQ(KilnSignatureRunnerAllocateTensors(square), kKilnOk) << errors;
  const float in[3] = {1, 2, 3};
  ASSERT_EQ(KilnTensorCopyFromBuffer(KilnSignatureRunnerGetInputTensor(square, "value"), in, sizeof(in)), kKilnOk);
  ASSERT_EQ(KilnSignatureRunnerInvoke(square), kKilnOk) << errors;
  float out[3];
  ASSERT_EQ(KilnTensorCopyToBuffer(KilnSignatureRunnerGetOutputTensor(square, "squared"), out, sizeof(out)), kKilnOk);
  EXPECT_EQ(std::vector<float>(out, out + 3), (std::vector<float>{1, 4, 9}));

  // Resizing by name: the square runner on 4 elements.
  const int dims[1] = {4};
  EXPECT_EQ(KilnSignatureRunnerResizeInputTensor(square, "nope", dims, 1), kKilnError);
  EXPECT_NE(errors.find("signature 'square' has no input 'nope'"), std::string::npos) << errors;
  ASSERT_EQ(KilnSignatureRunnerResizeInputTensor(square, "value", dims, 1), kKilnOk);
  EXPECT_NE(KilnSignatureRunnerInvoke(square), kKilnOk);  // not allocated since the resize
  ASSERT_EQ(KilnSignatureRunnerAllocateTensors(square), kKilnOk) << errors;
  const float in4[4] = {1, -2, 3, 0.5f};
  ASSERT_EQ(KilnTensorCopyFromBuffer(KilnSignatureRunnerGetInputTensor(square, "value"), in4, sizeof(in4)), kKilnOk);
  ASSERT_EQ(KilnSignatureRunnerInvoke(square), kKilnOk) << errors;
  float out4[4];
  ASSERT_EQ(KilnTensorCopyToBuffer(KilnSignatureRunnerGetOutputTensor(square, "squared"), out4, sizeof(out4)), kKilnOk);
  EXPECT_EQ(std::vector<float>(out4, out4 + 4), (std::vector<float>{1, 4, 9, 0.25f}));

  // NULL key: the first signature, over subgraph 0.
  KilnSignatureRunner* add = KilnInterpreterGetSignatureRunner(interpreter, nullptr);
  ASSERT_NE(add, nullptr);
  EXPECT_STREQ(KilnSignatureRunnerGetInputName(add, 0), "input");
  ASSERT_EQ(KilnSignatureRunnerAllocateTensors(add), kKilnOk) << errors;
  const float x[2] = {5, 6};
  ASSERT_EQ(KilnTensorCopyFromBuffer(KilnSignatureRunnerGetInputTensor(add, "input"), x, sizeof(x)), kKilnOk);
  ASSERT_EQ(KilnSignatureRunnerInvoke(add), kKilnOk) << errors;
  float y[2];
  ASSERT_EQ(KilnTensorCopyToBuffer(KilnSignatureRunnerGetOutputTensor(add, "output"), y, sizeof(y)), kKilnOk);
  EXPECT_EQ(std::vector<float>(y, y + 2), (std::vector<float>{6, 7}));

  EXPECT_EQ(KilnInterpreterGetSignatureRunner(interpreter, "missing"), nullptr);
  EXPECT_NE(errors.find("the model has no signature 'missing'"), std::string::npos) << errors;
  EXPECT_EQ(KilnInterpreterGetSignatureRunner(nullptr, "square"), nullptr);
  EXPECT_EQ(KilnSignatureRunnerGetInputCount(nullptr), 0u);
  EXPECT_EQ(KilnSignatureRunnerInvoke(nullptr), kKilnInvalidArgument);
  EXPECT_EQ(KilnInterpreterGetSignatureCount(nullptr), 0);
  KilnSignatureRunnerDelete(add);
  KilnSignatureRunnerDelete(square);
  KilnSignatureRunnerDelete(nullptr);
  KilnInterpreterDelete(interpreter);
  KilnModelDelete(model);
}

TEST(SignatureRunnerTest, SignaturesShareVariables) {
  // "read" (subgraph 0) reads variable "state"; "write" (subgraph 1) assigns it its input.
  ModelWriter w;
  const int h = w.AddTensor(kKilnResource, {}, "h");
  const int v = w.AddTensor(kKilnFloat32, {2}, "v");
  w.AddOp(kKilnBuiltinVarHandle, {}, {h}, KilnVarHandleParams{"c", "state"});
  w.AddOp(kKilnBuiltinReadVariable, {h}, {v});
  w.SetInputs({});
  w.SetOutputs({v});
  w.AddSubgraph("write");
  const int x = w.AddTensor(kKilnFloat32, {2}, "x");
  const int h1 = w.AddTensor(kKilnResource, {}, "h1");
  w.AddOp(kKilnBuiltinVarHandle, {}, {h1}, KilnVarHandleParams{"c", "state"});
  w.AddOp(kKilnBuiltinAssignVariable, {h1, x}, {});
  w.SetInputs({x});
  w.SetOutputs({});
  w.AddSignature("read", 0, {}, {{"value", v}});
  w.AddSignature("write", 1, {{"new_value", x}}, {});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  KilnSignatureRunner* read = KilnInterpreterGetSignatureRunner(r.interpreter(), "read");
  KilnSignatureRunner* write = KilnInterpreterGetSignatureRunner(r.interpreter(), "write");
  ASSERT_NE(read, nullptr);
  ASSERT_NE(write, nullptr);
  ASSERT_EQ(KilnSignatureRunnerAllocateTensors(read), kKilnOk) << r.errors();
  EXPECT_NE(KilnSignatureRunnerInvoke(read), kKilnOk);  // nothing assigned yet
  EXPECT_NE(r.errors().find("variable 'c/state' is read before any ASSIGN_VARIABLE"), std::string::npos);
  ASSERT_EQ(KilnSignatureRunnerAllocateTensors(write), kKilnOk) << r.errors();
  for (float base : {3.0f, -1.0f}) {
    const float x_values[2] = {base, base * 2};
    ASSERT_EQ(KilnTensorCopyFromBuffer(KilnSignatureRunnerGetInputTensor(write, "new_value"), x_values, 8), kKilnOk);
    ASSERT_EQ(KilnSignatureRunnerInvoke(write), kKilnOk) << r.errors();
    ASSERT_EQ(KilnSignatureRunnerInvoke(read), kKilnOk) << r.errors();
    float out[2];
    ASSERT_EQ(KilnTensorCopyToBuffer(KilnSignatureRunnerGetOutputTensor(read, "value"), out, 8), kKilnOk);
    EXPECT_EQ(out[0], base);
    EXPECT_EQ(out[1], base * 2);
  }
  KilnSignatureRunnerDelete(read);
  KilnSignatureRunnerDelete(write);
}

TEST(SignatureRunnerTest, ModelWithoutSignatures) {
  ModelWriter w;
  BuildIf(w, kKilnBool, {}, {2});
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  EXPECT_EQ(KilnInterpreterGetSignatureCount(r.interpreter()), 0);
  EXPECT_EQ(KilnInterpreterGetSignatureRunner(r.interpreter(), nullptr), nullptr);
}

}  // namespace
}  // namespace kiln::ops
