// Dynamic tensors in the interpreter: outputs whose shape is known only at Invoke (WHERE, UNIQUE, a user op that
// makes its output dynamic), the nodes after them prepared again at each Invoke, host runs and partitions that
// leave them out, resizing afterwards, and memory that stays bounded over many invokes.
#include <gtest/gtest.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kiln/c_api.h"
#include "kiln/c_api_opaque.h"
#include "runtime/interpreter.h"
#include "runtime/model/model_writer.h"

namespace kiln {
namespace {

void Collect(void* user_data, const char* format, va_list args) {
  char buffer[1024];
  std::vsnprintf(buffer, sizeof buffer, format, args);
  *static_cast<std::string*>(user_data) += std::string(buffer) + "\n";
}

struct DynamicRun {
  std::vector<uint8_t> bytes;
  KilnModel* model = nullptr;
  KilnInterpreter* interpreter = nullptr;
  std::string errors;
  DynamicRun(ModelWriter& w, const std::vector<KilnOperator*>& ops = {}) {
    bytes = w.Finish();
    model = KilnModelCreate(bytes.data(), bytes.size());
    KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
    KilnInterpreterOptionsSetErrorReporter(options, &Collect, &errors);
    for (KilnOperator* op : ops) KilnInterpreterOptionsAddOperator(options, op);
    interpreter = KilnInterpreterCreate(model, options);
    KilnInterpreterOptionsDelete(options);
  }
  ~DynamicRun() {
    KilnInterpreterDelete(interpreter);
    KilnModelDelete(model);
  }
  Interpreter* impl() const { return interpreter->impl.get(); }
  template <typename T>
  void Set(int input, const std::vector<T>& values) {
    ASSERT_EQ(KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter, input), values.data(),
                                       values.size() * sizeof(T)),
              kKilnOk);
  }
  std::vector<int> Dims(int output) const {
    const KilnTensor* t = KilnInterpreterGetOutputTensor(interpreter, output);
    std::vector<int> dims(KilnTensorNumDims(t));
    for (size_t i = 0; i < dims.size(); ++i) dims[i] = KilnTensorDim(t, static_cast<int32_t>(i));
    return dims;
  }
  template <typename T>
  std::vector<T> Get(int output) const {
    const KilnTensor* t = KilnInterpreterGetOutputTensor(interpreter, output);
    std::vector<T> v(KilnTensorByteSize(t) / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), KilnTensorData(t), v.size() * sizeof(T));
    return v;
  }
};

// x [rows, 3] float and c [rows, 3] bool (model inputs): y = GATHER_ND(x, WHERE(c)) + 10, a dynamic chain.
void BuildChain(ModelWriter& w, int rows) {
  const int x = w.AddTensor(kKilnFloat32, {rows, 3}, "x");
  const int c = w.AddTensor(kKilnBool, {rows, 3}, "c");
  const int where = w.AddTensor(kKilnInt64, {1, 2}, "where");
  const int g = w.AddTensor(kKilnFloat32, {1}, "gathered");
  const int ten = w.AddConstTensor(kKilnFloat32, {1}, "ten", std::vector<float>{10.0f});
  const int y = w.AddTensor(kKilnFloat32, {1}, "y");
  w.AddOp(kKilnBuiltinWhere, {c}, {where});
  w.AddOp(kKilnBuiltinGatherNd, {x, where}, {g});
  w.AddOp(kKilnBuiltinAdd, {g, ten}, {y}, KilnAddParams{kKilnActNone, false});
  w.SetInputs({x, c});
  w.SetOutputs({y, where});
}

// The plain expectation: x's elements where c is true, plus 10, in row-major order.
std::vector<float> Expected(const std::vector<float>& x, const std::vector<uint8_t>& c) {
  std::vector<float> y;
  for (size_t i = 0; i < x.size(); ++i) {
    if (c[i]) y.push_back(x[i] + 10.0f);
  }
  return y;
}

TEST(DynamicShapes, WhereGatherNdAddChainFollowsTheValues) {
  ModelWriter w;
  BuildChain(w, 4);
  DynamicRun r(w);
  ASSERT_NE(r.interpreter, nullptr) << r.errors;
  ASSERT_EQ(KilnInterpreterAllocateTensors(r.interpreter), kKilnOk) << r.errors;
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i) x[i] = 0.5f * i - 2.0f;
  r.Set(0, x);
  // Different counts each time: the output's shape follows, and so do the nodes after WHERE.
  const std::vector<std::vector<uint8_t>> patterns = {
      {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0},
      {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      {0, 2, 0, 255, 0, 0, 0, 0, 0, 7, 0, 1}};  // any non-zero byte is true
  for (const auto& c : patterns) {
    r.Set(1, c);
    ASSERT_EQ(KilnInterpreterInvoke(r.interpreter), kKilnOk) << r.errors;
    const std::vector<float> want = Expected(x, c);
    EXPECT_EQ(r.Dims(0), std::vector<int>{static_cast<int>(want.size())});
    EXPECT_EQ(r.Get<float>(0), want);
    EXPECT_EQ(r.Dims(1), (std::vector<int>{static_cast<int>(want.size()), 2}));
    std::vector<int64_t> coords;
    for (int i = 0; i < 12; ++i) {
      if (c[i]) coords.insert(coords.end(), {i / 3, i % 3});
    }
    EXPECT_EQ(r.Get<int64_t>(1), coords);
  }
  // Neither the host engine nor a partition takes a node whose shapes are dynamic; the reason is recorded.
  EXPECT_NE(r.impl()->host_placement(1).find("input 'where' is dynamic"), std::string::npos)
      << r.impl()->host_placement(1);
  EXPECT_NE(r.impl()->host_placement(2).find("input 'gathered' is dynamic"), std::string::npos)
      << r.impl()->host_placement(2);
  EXPECT_NE(r.impl()->host_placement(0).find("output 'where' is dynamic"), std::string::npos)
      << r.impl()->host_placement(0);
  bool explained = false;
  for (size_t i = 0; i < r.impl()->decisions().size(); ++i) {
    const std::string& message = r.impl()->decisions().Get(i)->message;
    if (message.find("node 2 (ADD)") != std::string::npos && message.find("dynamic") != std::string::npos) {
      explained = true;
    }
  }
  EXPECT_TRUE(explained);
  EXPECT_EQ(KilnInterpreterGetOutputTensor(r.interpreter, 0)->allocation, kKilnDynamic);
}

TEST(DynamicShapes, ResizeInputAndAllocateAgainStillWork) {
  ModelWriter w;
  BuildChain(w, 4);
  DynamicRun r(w);
  ASSERT_EQ(KilnInterpreterAllocateTensors(r.interpreter), kKilnOk) << r.errors;
  r.Set(0, std::vector<float>(12, 1.0f));
  r.Set(1, std::vector<uint8_t>(12, 1));
  ASSERT_EQ(KilnInterpreterInvoke(r.interpreter), kKilnOk) << r.errors;
  EXPECT_EQ(r.Dims(0), std::vector<int>{12});
  const int dims[2] = {2, 3};
  ASSERT_EQ(KilnInterpreterResizeInputTensor(r.interpreter, 0, dims, 2), kKilnOk);
  ASSERT_EQ(KilnInterpreterResizeInputTensor(r.interpreter, 1, dims, 2), kKilnOk);
  ASSERT_EQ(KilnInterpreterAllocateTensors(r.interpreter), kKilnOk) << r.errors;
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const std::vector<uint8_t> c = {0, 1, 0, 1, 1, 0};
  r.Set(0, x);
  r.Set(1, c);
  ASSERT_EQ(KilnInterpreterInvoke(r.interpreter), kKilnOk) << r.errors;
  EXPECT_EQ(r.Get<float>(0), Expected(x, c));
  // Allocating again without a resize keeps working too (the arena is planned again: inputs set anew).
  ASSERT_EQ(KilnInterpreterAllocateTensors(r.interpreter), kKilnOk) << r.errors;
  r.Set(0, x);
  r.Set(1, c);
  ASSERT_EQ(KilnInterpreterInvoke(r.interpreter), kKilnOk) << r.errors;
  EXPECT_EQ(r.Get<float>(0), Expected(x, c));
}

TEST(DynamicShapes, MemoryStaysBoundedOverManyInvokes) {
  ModelWriter w;
  BuildChain(w, 50);
  DynamicRun r(w);
  ASSERT_EQ(KilnInterpreterAllocateTensors(r.interpreter), kKilnOk) << r.errors;
  const size_t arena = r.impl()->arena_bytes();
  std::vector<float> x(150);
  for (int i = 0; i < 150; ++i) x[i] = static_cast<float>(i);
  r.Set(0, x);
  uint32_t seed = 12345;
  for (int run = 0; run < 1000; ++run) {
    std::vector<uint8_t> c(150);
    const uint32_t density = run % 7;  // 0: none true ... 6: most true
    for (auto& v : c) {
      seed = seed * 1664525u + 1013904223u;
      v = (seed >> 24) % 7 < density ? 1 : 0;
    }
    r.Set(1, c);
    ASSERT_EQ(KilnInterpreterInvoke(r.interpreter), kKilnOk) << r.errors;
    if (run % 97 == 0) { EXPECT_EQ(r.Get<float>(0), Expected(x, c)); }
  }
  EXPECT_EQ(r.impl()->arena_bytes(), arena);
  // Each dynamic tensor holds at most the largest shape it had (150 elements), never more.
  for (size_t t = 0; t < r.impl()->tensor_count(); ++t) {
    const KilnTensor* tensor = r.impl()->tensor(static_cast<int>(t));
    if (tensor->allocation != kKilnDynamic) continue;
    EXPECT_LE(tensor->capacity, 150u * 2 * sizeof(int64_t)) << tensor->name;
  }
}

// A user op that sizes its output in Prepare (an arena tensor) and tries another shape in Invoke.
KilnStatus SameShapePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const KilnOpaqueTensor* a = KilnOpaqueNodeGetInput(context, node, 0);
  KilnIntArray* dims = KilnIntArrayCreate(1);
  dims->data[0] = static_cast<int>(KilnOpaqueTensorByteSize(a) / 4);
  return KilnOpaqueContextResizeTensor(context, KilnOpaqueNodeGetOutput(context, node, 0), dims);
}

// Output: the input's positive elements (its length known only at Invoke).
KilnStatus PositivesInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const KilnOpaqueTensor* a = KilnOpaqueNodeGetInput(context, node, 0);
  const float* in = static_cast<const float*>(KilnOpaqueTensorData(a));
  std::vector<float> kept;
  for (size_t i = 0; i < KilnOpaqueTensorByteSize(a) / 4; ++i) {
    if (in[i] > 0) kept.push_back(in[i]);
  }
  KilnOpaqueTensor* out = KilnOpaqueNodeGetOutput(context, node, 0);
  KilnIntArray* dims = KilnIntArrayCreate(1);
  dims->data[0] = static_cast<int>(kept.size());
  KILN_OPAQUE_ENSURE_STATUS(KilnOpaqueContextResizeTensor(context, out, dims));
  if (!kept.empty()) std::memcpy(KilnOpaqueTensorData(out), kept.data(), kept.size() * 4);
  return kKilnOk;
}

KilnStatus DynamicPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  return KilnOpaqueTensorSetAllocationTypeToDynamic(KilnOpaqueNodeGetOutput(context, node, 0));
}

// x [n] -> Positives (user op) -> p -> ADD p + p -> y.
void BuildPositives(ModelWriter& w) {
  const int x = w.AddTensor(kKilnFloat32, {5}, "x");
  const int p = w.AddTensor(kKilnFloat32, {5}, "p");
  const int y = w.AddTensor(kKilnFloat32, {5}, "y");
  w.AddCustomOp("Positives", {x}, {p});
  w.AddOp(kKilnBuiltinAdd, {p, p}, {y}, KilnAddParams{kKilnActNone, false});
  w.SetInputs({x});
  w.SetOutputs({y});
}

TEST(DynamicShapes, UserOpMakesItsOutputDynamic) {
  // Declared first, so deleted after the interpreter (an operator must outlive the interpreters using it).
  std::unique_ptr<KilnOperator, void (*)(KilnOperator*)> owned(KilnOperatorCreate(kKilnBuiltinCustom, "Positives", 1),
                                                               KilnOperatorDelete);
  KilnOperator* op = owned.get();
  KilnOperatorSetPrepare(op, DynamicPrepare);
  KilnOperatorSetInvoke(op, PositivesInvoke);
  ModelWriter w;
  BuildPositives(w);
  DynamicRun r(w, {op});
  ASSERT_EQ(KilnInterpreterAllocateTensors(r.interpreter), kKilnOk) << r.errors;
  r.Set(0, std::vector<float>{1, -2, 3, 0, 5});
  ASSERT_EQ(KilnInterpreterInvoke(r.interpreter), kKilnOk) << r.errors;
  EXPECT_EQ(r.Get<float>(0), (std::vector<float>{2, 6, 10}));
  r.Set(0, std::vector<float>{-1, -2, -3, 0, 4});
  ASSERT_EQ(KilnInterpreterInvoke(r.interpreter), kKilnOk) << r.errors;
  EXPECT_EQ(r.Dims(0), std::vector<int>{1});
  EXPECT_EQ(r.Get<float>(0), (std::vector<float>{8}));
}

TEST(DynamicShapes, ResizingAnArenaTensorInInvokeFailsClearly) {
  std::unique_ptr<KilnOperator, void (*)(KilnOperator*)> owned(KilnOperatorCreate(kKilnBuiltinCustom, "Positives", 1),
                                                               KilnOperatorDelete);  // outlives the interpreter
  KilnOperator* op = owned.get();
  KilnOperatorSetPrepare(op, SameShapePrepare);  // not dynamic: planned in the arena
  KilnOperatorSetInvoke(op, PositivesInvoke);
  ModelWriter w;
  BuildPositives(w);
  DynamicRun r(w, {op});
  ASSERT_EQ(KilnInterpreterAllocateTensors(r.interpreter), kKilnOk) << r.errors;
  r.Set(0, std::vector<float>{1, 2, 3, 4, 5});  // all kept: the same shape, allowed
  ASSERT_EQ(KilnInterpreterInvoke(r.interpreter), kKilnOk) << r.errors;
  r.Set(0, std::vector<float>{1, -2, 3, 0, 5});
  EXPECT_NE(KilnInterpreterInvoke(r.interpreter), kKilnOk);
  EXPECT_NE(r.errors.find("tensor 'p' is planned in the arena and cannot change shape during Invoke"),
            std::string::npos)
      << r.errors;
  EXPECT_NE(r.errors.find("Node number 0 (Positives) failed to invoke"), std::string::npos) << r.errors;
  // Constants and variables can never become dynamic.
  EXPECT_EQ(KilnOpaqueTensorSetAllocationTypeToDynamic(nullptr), kKilnInvalidArgument);
}

TEST(DynamicShapes, ALaterNodeThatFailsItsInvokeTimePrepareIsNamed) {
  // x [3] and c [2, 2]: ADD(GATHER_ND(x, WHERE(c)) ...) where the gather's indices have depth 2 but x rank 1.
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {3}, "x");
  const int c = w.AddTensor(kKilnBool, {2, 2}, "c");
  const int where = w.AddTensor(kKilnInt64, {1, 2}, "where");
  const int g = w.AddTensor(kKilnFloat32, {1}, "gathered");
  w.AddOp(kKilnBuiltinWhere, {c}, {where});
  w.AddOp(kKilnBuiltinGatherNd, {x, where}, {g});
  w.SetInputs({x, c});
  w.SetOutputs({g});
  DynamicRun r(w);
  ASSERT_EQ(KilnInterpreterAllocateTensors(r.interpreter), kKilnOk) << r.errors;
  r.Set(1, std::vector<uint8_t>{1, 0, 0, 1});
  EXPECT_NE(KilnInterpreterInvoke(r.interpreter), kKilnOk);
  EXPECT_NE(r.errors.find("GATHER_ND"), std::string::npos) << r.errors;
  EXPECT_NE(r.errors.find("failed to prepare at Invoke (input 'where' is dynamic"), std::string::npos) << r.errors;
}

}  // namespace
}  // namespace kiln
