// The interpreter through the public C API: the Atan scenario, op resolution, resizing, memory planning,
// temporaries and error paths.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

#include "atan_model.h"
#include "atan_op.h"
#include "kiln/c_api.h"
#include "kiln/c_api_opaque.h"
#include "kiln/flex.h"
#include "runtime/model/model_writer.h"
#include "tests/test_util.h"

KilnOperator* AtanOpRegistration();  // examples/atan/atan_op_litert.cc, in LiteRT's names
KilnOperator* AtanOpRegistrationWithData(int** node_count);  // the same, in today's LiteRT idiom

namespace kiln {
namespace {

const std::vector<float> kX = {-8.0f, 0.5f, 2.0f, 2.2f, 201.0f};
const std::vector<float> kY = {-1.4288993f, 0.98279375f, 1.2490457f, 1.2679114f, 1.5658458f};

// Collects every message the error reporter receives.
struct Messages {
  std::vector<std::string> lines;
  std::string All() const {
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
  }
  static void Report(void* user_data, const char* format, va_list args) {
    char buffer[1024];
    std::vsnprintf(buffer, sizeof buffer, format, args);
    static_cast<Messages*>(user_data)->lines.push_back(buffer);
  }
};

struct ModelHandle {
  KilnModel* model = nullptr;
  explicit ModelHandle(const std::vector<uint8_t>& bytes) : model(KilnModelCreate(bytes.data(), bytes.size())) {}
  ~ModelHandle() { KilnModelDelete(model); }
};

// Builds an interpreter with the given operators; null on failure (messages collected).
KilnInterpreter* MakeInterpreter(const KilnModel* model, const std::vector<KilnOperator*>& ops, Messages* messages,
                                 KilnStatus* status = nullptr) {
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(options, Messages::Report, messages);
  for (KilnOperator* op : ops) KilnInterpreterOptionsAddOperator(options, op);
  KilnInterpreter* interpreter = KilnInterpreterCreateWithStatus(model, options, status);
  KilnInterpreterOptionsDelete(options);
  return interpreter;
}

// Runs a one-input one-output float model on `x`, returning the output (empty on failure).
std::vector<float> RunFloat(KilnInterpreter* interpreter, const std::vector<float>& x) {
  const int dims[1] = {static_cast<int>(x.size())};
  if (KilnInterpreterResizeInputTensor(interpreter, 0, dims, 1) != kKilnOk) return {};
  if (KilnInterpreterAllocateTensors(interpreter) != kKilnOk) return {};
  if (KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter, 0), x.data(), x.size() * 4) != kKilnOk) {
    return {};
  }
  if (KilnInterpreterInvoke(interpreter) != kKilnOk) return {};
  const KilnTensor* out = KilnInterpreterGetOutputTensor(interpreter, 0);
  std::vector<float> y(KilnTensorByteSize(out) / 4);
  KilnTensorCopyToBuffer(out, y.data(), y.size() * 4);
  return y;
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, float tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tolerance) << "element " << i;
}

TEST(AtanScenario, UnresolvedCustomOpFailsAtAllocate) {
  ModelHandle m(examples::AtanModel(examples::kTrainedOffset, 0.0f));
  ASSERT_NE(m.model, nullptr);
  Messages messages;
  KilnInterpreter* interpreter = MakeInterpreter(m.model, {}, &messages);
  ASSERT_NE(interpreter, nullptr) << "custom ops are resolved at AllocateTensors, not at creation";
  EXPECT_EQ(KilnInterpreterAllocateTensors(interpreter), kKilnUnresolvedOps);
  ASSERT_FALSE(messages.lines.empty());
  EXPECT_EQ(messages.lines[0], "Encountered unresolved custom op: Atan.");
  EXPECT_NE(KilnInterpreterInvoke(interpreter), kKilnOk);
  KilnInterpreterDelete(interpreter);
}

TEST(AtanScenario, COperatorGivesTheNumbers) {
  ModelHandle m(examples::AtanModel(examples::kTrainedOffset, 0.0f));
  Messages messages;
  KilnInterpreter* interpreter = MakeInterpreter(m.model, {AtanOperator()}, &messages);
  ASSERT_NE(interpreter, nullptr) << messages.All();
  ExpectNear(RunFloat(interpreter, kX), kY, 1e-6f);
  EXPECT_TRUE(messages.lines.empty()) << messages.All();
  KilnInterpreterDelete(interpreter);
}

TEST(AtanScenario, LiteRTSourceCompilesAndGivesTheSameNumbers) {
  ModelHandle m(examples::AtanModel(examples::kTrainedOffset, 0.0f));
  Messages messages;
  KilnInterpreter* interpreter = MakeInterpreter(m.model, {AtanOpRegistration()}, &messages);
  ASSERT_NE(interpreter, nullptr) << messages.All();
  ExpectNear(RunFloat(interpreter, kX), kY, 1e-6f);
  KilnInterpreterDelete(interpreter);
}

// The op registered as today's LiteRT does it (TfLiteOperatorCreate with user_data, WithData callbacks):
// the same numbers, and the operator's user data reaches the callbacks.
TEST(AtanScenario, CurrentLiteRTRegistrationCompilesAndRuns) {
  int* nodes = nullptr;
  KilnOperator* op = AtanOpRegistrationWithData(&nodes);
  ASSERT_NE(op, nullptr);
  ASSERT_NE(nodes, nullptr);
  EXPECT_EQ(KilnOperatorGetInplaceOperator(op), static_cast<uint64_t>(kKilnInplaceOpInput0Shared));
  const int before = *nodes;
  ModelHandle m(examples::AtanModel(examples::kTrainedOffset, 0.0f));
  Messages messages;
  KilnInterpreter* interpreter = MakeInterpreter(m.model, {op}, &messages);
  ASSERT_NE(interpreter, nullptr) << messages.All();
  ExpectNear(RunFloat(interpreter, kX), kY, 1e-6f);
  KilnInterpreterDelete(interpreter);
  EXPECT_EQ(*nodes, before + 1) << "InitWithData did not receive the operator's user data";
  EXPECT_EQ(KilnOperatorSetInvokeWithData(nullptr, nullptr), kKilnError);
}

// Graph inputs keep their values through Invoke (no later tensor takes their arena memory): a second Invoke
// without setting the inputs again gives the same outputs, on the reference kernels and the fast path.
TEST(Interpreter, InputsSurviveInvoke) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {64}, "x");
  const int a = w.AddTensor(kKilnFloat32, {64}, "a");
  const int b = w.AddTensor(kKilnFloat32, {64}, "b");
  const int c = w.AddTensor(kKilnFloat32, {64}, "c");
  const int y = w.AddTensor(kKilnFloat32, {64}, "y");
  w.AddOp(kKilnBuiltinAdd, {x, x}, {a}, KilnAddParams{kKilnActNone, false});
  w.AddOp(kKilnBuiltinTanh, {a}, {b});  // a reference kernel between engine runs
  w.AddOp(kKilnBuiltinMul, {b, b}, {c}, KilnMulParams{kKilnActNone});
  w.AddOp(kKilnBuiltinAdd, {c, c}, {y}, KilnAddParams{kKilnActNone, false});
  w.SetInputs({x});
  w.SetOutputs({y});
  const std::vector<uint8_t> bytes = w.Finish();
  ASSERT_FALSE(bytes.empty()) << w.error();
  for (bool reference : {true, false}) {
    ModelHandle m(bytes);
    KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
    KilnInterpreterOptionsSetUseReferenceKernels(options, reference);
    KilnInterpreter* interpreter = KilnInterpreterCreate(m.model, options);
    KilnInterpreterOptionsDelete(options);
    ASSERT_NE(interpreter, nullptr);
    ASSERT_EQ(KilnInterpreterAllocateTensors(interpreter), kKilnOk);
    std::vector<float> in(64);
    for (int i = 0; i < 64; ++i) in[i] = 0.01f * static_cast<float>(i - 32);
    KilnTensor* input = KilnInterpreterGetInputTensor(interpreter, 0);
    ASSERT_EQ(KilnTensorCopyFromBuffer(input, in.data(), in.size() * 4), kKilnOk);
    std::vector<float> first(64), second(64), after(64);
    ASSERT_EQ(KilnInterpreterInvoke(interpreter), kKilnOk);
    KilnTensorCopyToBuffer(KilnInterpreterGetOutputTensor(interpreter, 0), first.data(), first.size() * 4);
    KilnTensorCopyToBuffer(input, after.data(), after.size() * 4);
    EXPECT_EQ(after, in) << "Invoke overwrote its input (reference kernels: " << reference << ")";
    ASSERT_EQ(KilnInterpreterInvoke(interpreter), kKilnOk);
    KilnTensorCopyToBuffer(KilnInterpreterGetOutputTensor(interpreter, 0), second.data(), second.size() * 4);
    EXPECT_EQ(second, first) << "reference kernels: " << reference;
    for (int i = 0; i < 64; ++i) {
      const float t = std::tanh(2.0f * in[i]);
      EXPECT_NEAR(first[i], 2.0f * t * t, 1e-5f) << i;
    }
    KilnInterpreterDelete(interpreter);
  }
}

TEST(AtanScenario, CustomOptionsReachInit) {
  // The same function with the offset split between the ADD and the op's option: only right if Init reads it.
  ModelHandle split(examples::AtanModel(0.5f, examples::kTrainedOffset - 0.5f));
  Messages messages;
  KilnInterpreter* interpreter = MakeInterpreter(split.model, {AtanOperator()}, &messages);
  ASSERT_NE(interpreter, nullptr) << messages.All();
  ExpectNear(RunFloat(interpreter, kX), kY, 1e-6f);
  KilnInterpreterDelete(interpreter);

  ModelHandle shifted(examples::AtanModel(examples::kTrainedOffset, 1.0f));
  interpreter = MakeInterpreter(shifted.model, {AtanOperator()}, &messages);
  const std::vector<float> y = RunFloat(interpreter, kX);
  ASSERT_EQ(y.size(), kX.size());
  for (size_t i = 0; i < y.size(); ++i) {
    EXPECT_NEAR(y[i], std::atan(kX[i] + examples::kTrainedOffset + 1.0f), 1e-6f);
  }
  KilnInterpreterDelete(interpreter);
}

TEST(AtanScenario, CommittedModelIsTheWritersOutput) {
  const std::vector<uint8_t> committed = testing::ReadFileBytes(KILN_SOURCE_DIR "/examples/atan/atan.tflite");
  EXPECT_EQ(committed, examples::AtanModel(examples::kTrainedOffset, 0.0f))
      << "regenerate with: make_atan_model examples/atan/atan.tflite";
}

TEST(AtanScenario, ModelFromFileOutlivesItsHandle) {
  KilnModel* model = KilnModelCreateFromFile(KILN_SOURCE_DIR "/examples/atan/atan.tflite");
  ASSERT_NE(model, nullptr);
  Messages messages;
  KilnInterpreter* interpreter = MakeInterpreter(model, {AtanOperator()}, &messages);
  KilnModelDelete(model);  // the interpreter keeps what it needs
  ASSERT_NE(interpreter, nullptr);
  ExpectNear(RunFloat(interpreter, kX), kY, 1e-6f);
  KilnInterpreterDelete(interpreter);
}

// A tool learns which ops to register from the model alone, through the public API (kiln run --op does).
TEST(AtanScenario, ModelListsItsOperatorsWithoutAnInterpreter) {
  KilnModel* model = KilnModelCreateFromFile(KILN_SOURCE_DIR "/examples/atan/atan.tflite");
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(KilnModelGetOperatorCount(model), 2);
  KilnBuiltinOperator code;
  const char* name = nullptr;
  int32_t version = 0;
  ASSERT_EQ(KilnModelGetOperator(model, 0, &code, &name, &version), kKilnOk);
  EXPECT_EQ(code, kKilnBuiltinAdd);
  EXPECT_EQ(name, nullptr);
  ASSERT_EQ(KilnModelGetOperator(model, 1, &code, &name, &version), kKilnOk);
  EXPECT_EQ(code, kKilnBuiltinCustom);
  ASSERT_NE(name, nullptr);
  EXPECT_STREQ(name, "Atan");
  EXPECT_EQ(version, 1);
  EXPECT_EQ(KilnModelGetOperator(model, 2, &code, &name, &version), kKilnInvalidArgument);
  EXPECT_EQ(KilnModelGetOperator(model, -1, nullptr, nullptr, nullptr), kKilnInvalidArgument);
  EXPECT_EQ(KilnModelGetOperator(nullptr, 0, nullptr, nullptr, nullptr), kKilnInvalidArgument);
  EXPECT_EQ(KilnModelGetOperatorCount(nullptr), 0);
  KilnModelDelete(model);
}

// A custom op's options are readable without an interpreter (kiln inspect prints them); a builtin has none.
TEST(AtanScenario, ModelGivesACustomOpsOptions) {
  KilnModel* model = KilnModelCreateFromFile(KILN_SOURCE_DIR "/examples/atan/atan.tflite");
  ASSERT_NE(model, nullptr);
  const void* data = reinterpret_cast<const void*>(1);
  size_t size = 1;
  ASSERT_EQ(KilnModelGetOperatorCustomOptions(model, 0, &data, &size), kKilnOk);
  EXPECT_EQ(data, nullptr);
  EXPECT_EQ(size, 0u);
  ASSERT_EQ(KilnModelGetOperatorCustomOptions(model, 1, &data, &size), kKilnOk);
  ASSERT_NE(data, nullptr);
  int count = 0;
  ASSERT_EQ(KilnFlexMapSize(data, size, &count), kKilnOk);
  EXPECT_EQ(count, 1);
  float offset = -1;
  ASSERT_EQ(KilnFlexMapGetFloat(data, size, "offset", &offset), kKilnOk);
  EXPECT_EQ(offset, 0.0f);
  EXPECT_EQ(KilnModelGetOperatorCustomOptions(model, 2, &data, &size), kKilnInvalidArgument);
  EXPECT_EQ(KilnModelGetOperatorCustomOptions(model, 1, nullptr, &size), kKilnInvalidArgument);
  EXPECT_EQ(KilnModelGetOperatorCustomOptions(nullptr, 0, &data, &size), kKilnInvalidArgument);
  KilnModelDelete(model);
}

// kiln inspect describes a model, including ops Kiln cannot run, from the public API alone.
TEST(AtanScenario, ModelDescribesItsTensorsWithoutAnInterpreter) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
  const int y = w.AddTensor(kKilnInt8, {6}, "y");
  w.AddOp(kKilnBuiltinAdd, {x, x}, {y}, KilnAddParams{kKilnActNone, false});
  w.SetInputs({x});
  w.SetOutputs({y});
  const std::vector<uint8_t> bytes = w.Finish();
  ModelHandle handle(bytes);
  const KilnModel* model = handle.model;
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(KilnModelGetSubgraphCount(model), 1);
  EXPECT_EQ(KilnModelGetTensorCount(model), 2);
  ASSERT_EQ(KilnModelGetInputCount(model), 1);
  ASSERT_EQ(KilnModelGetOutputCount(model), 1);
  EXPECT_EQ(KilnModelGetInputTensorIndex(model, 0), x);
  EXPECT_EQ(KilnModelGetOutputTensorIndex(model, 0), y);
  EXPECT_EQ(KilnModelGetInputTensorIndex(model, 1), -1);
  EXPECT_EQ(KilnModelGetOutputTensorIndex(model, -1), -1);
  const char* name = nullptr;
  KilnType type = kKilnNoType;
  int32_t num_dims = 0;
  const int32_t* dims = nullptr;
  ASSERT_EQ(KilnModelGetTensor(model, x, &name, &type, &num_dims, &dims), kKilnOk);
  EXPECT_STREQ(name, "x");
  EXPECT_EQ(type, kKilnFloat32);
  ASSERT_EQ(num_dims, 2);
  EXPECT_EQ(dims[0], 2);
  EXPECT_EQ(dims[1], 3);
  ASSERT_EQ(KilnModelGetTensor(model, y, &name, &type, &num_dims, nullptr), kKilnOk);
  EXPECT_STREQ(name, "y");
  EXPECT_EQ(type, kKilnInt8);
  EXPECT_EQ(num_dims, 1);
  EXPECT_EQ(KilnModelGetTensor(model, 2, nullptr, nullptr, nullptr, nullptr), kKilnInvalidArgument);
  EXPECT_EQ(KilnModelGetTensor(nullptr, 0, nullptr, nullptr, nullptr, nullptr), kKilnInvalidArgument);
  EXPECT_STREQ(KilnModelGetDescription(nullptr), "");
  EXPECT_EQ(KilnModelGetTensorCount(nullptr), 0);
  EXPECT_EQ(KilnModelGetInputCount(nullptr), 0);
  EXPECT_STREQ(KilnBuiltinOperatorGetName(kKilnBuiltinConv2d), "CONV_2D");
  EXPECT_STREQ(KilnBuiltinOperatorGetName(kKilnBuiltinCustom), "CUSTOM");
  // 250: past the schema's last op (209), inside what the enum can hold (C++ sanitizers check that).
  EXPECT_STREQ(KilnBuiltinOperatorGetName(static_cast<KilnBuiltinOperator>(250)), "UNKNOWN");
  EXPECT_EQ(KilnTypeGetSize(kKilnFloat32), 4u);
  EXPECT_EQ(KilnTypeGetSize(kKilnInt8), 1u);
  EXPECT_EQ(KilnTypeGetSize(kKilnString), 0u);
}

TEST(BuiltinOps, SupportIsVisibleThroughTheApi) {
  EXPECT_TRUE(KilnBuiltinOpIsSupported(kKilnBuiltinAdd, 1));
  EXPECT_TRUE(KilnBuiltinOpIsSupported(kKilnBuiltinAdd, 0));
  EXPECT_FALSE(KilnBuiltinOpIsSupported(kKilnBuiltinAdd, 1000));
  EXPECT_FALSE(KilnBuiltinOpIsSupported(kKilnBuiltinCustom, 0));
}

// y = x + x, then z = y * y: a chain used by several tests below.
std::vector<uint8_t> ChainModel(int length) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {length}, "x");
  const int y = w.AddTensor(kKilnFloat32, {length}, "y");
  const int z = w.AddTensor(kKilnFloat32, {length}, "z");
  const int u = w.AddTensor(kKilnFloat32, {length}, "u");
  w.AddOp(kKilnBuiltinAdd, {x, x}, {y}, KilnAddParams{kKilnActNone, false});
  w.AddOp(kKilnBuiltinMul, {y, y}, {z}, KilnMulParams{kKilnActNone});
  w.AddOp(kKilnBuiltinAdd, {z, z}, {u}, KilnAddParams{kKilnActNone, false});
  w.SetInputs({x});
  w.SetOutputs({u});
  return w.Finish();
}

TEST(Interpreter, ResizeReplansAndRecomputes) {
  ModelHandle m(ChainModel(4));
  Messages messages;
  // The reference kernels, so that every tensor is the arena's (the host engine keeps y and z to itself).
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(options, Messages::Report, &messages);
  KilnInterpreterOptionsSetUseReferenceKernels(options, true);
  KilnInterpreter* interpreter = KilnInterpreterCreate(m.model, options);
  KilnInterpreterOptionsDelete(options);
  ASSERT_NE(interpreter, nullptr) << messages.All();
  for (const std::vector<float>& x : {std::vector<float>{1, 2, 3}, std::vector<float>{0.5f, -1, 2, 4, 8, 9, 10}}) {
    const std::vector<float> u = RunFloat(interpreter, x);
    ASSERT_EQ(u.size(), x.size()) << messages.All();
    for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(u[i], 8 * x[i] * x[i]);
  }
  size_t arena = 0, naive = 0;
  ASSERT_EQ(KilnInterpreterGetArenaStats(interpreter, &arena, &naive), kKilnOk);
  EXPECT_GT(arena, 0u);
  EXPECT_LT(arena, naive) << "x and z can share memory";
  KilnInterpreterDelete(interpreter);
}

TEST(Interpreter, InvokeNeedsAllocateAfterResize) {
  ModelHandle m(ChainModel(4));
  Messages messages;
  KilnInterpreter* interpreter = MakeInterpreter(m.model, {}, &messages);
  EXPECT_NE(KilnInterpreterInvoke(interpreter), kKilnOk);
  ASSERT_EQ(KilnInterpreterAllocateTensors(interpreter), kKilnOk);
  EXPECT_EQ(KilnInterpreterInvoke(interpreter), kKilnOk);
  const int dims[1] = {9};
  ASSERT_EQ(KilnInterpreterResizeInputTensor(interpreter, 0, dims, 1), kKilnOk);
  messages.lines.clear();
  EXPECT_NE(KilnInterpreterInvoke(interpreter), kKilnOk);
  EXPECT_NE(messages.All().find("before KilnInterpreterAllocateTensors"), std::string::npos) << messages.All();
  const int bad[1] = {-3};
  EXPECT_EQ(KilnInterpreterResizeInputTensor(interpreter, 0, bad, 1), kKilnInvalidArgument);
  EXPECT_EQ(KilnInterpreterResizeInputTensor(interpreter, 5, dims, 1), kKilnInvalidArgument);
  KilnInterpreterDelete(interpreter);
}

KilnStatus NegateInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const KilnOpaqueTensor* a = KilnOpaqueNodeGetInput(context, node, 0);
  const float* in = static_cast<const float*>(KilnOpaqueTensorData(a));
  float* out = static_cast<float*>(KilnOpaqueTensorData(KilnOpaqueNodeGetOutput(context, node, 0)));
  for (size_t i = 0; i < KilnOpaqueTensorByteSize(a) / 4; ++i) out[i] = -in[i] - in[i];
  return kKilnOk;
}

KilnStatus SameShapePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const KilnOpaqueTensor* a = KilnOpaqueNodeGetInput(context, node, 0);
  KilnIntArray* dims = KilnIntArrayCreate(KilnOpaqueTensorNumDims(a));
  for (int i = 0; i < dims->size; ++i) dims->data[i] = KilnOpaqueTensorDim(a, i);
  return KilnOpaqueContextResizeTensor(context, KilnOpaqueNodeGetOutput(context, node, 0), dims);
}

TEST(Interpreter, UserOperatorOverridesBuiltin) {
  // An ADD override (version 1) that computes -(a + a): the first and last ops of the chain use it.
  KilnOperator* add = KilnOperatorCreate(kKilnBuiltinAdd, nullptr, 1);
  KilnOperatorSetPrepare(add, SameShapePrepare);
  KilnOperatorSetInvoke(add, NegateInvoke);
  ModelHandle m(ChainModel(3));
  Messages messages;
  KilnInterpreter* interpreter = MakeInterpreter(m.model, {add}, &messages);
  ASSERT_NE(interpreter, nullptr) << messages.All();
  const std::vector<float> u = RunFloat(interpreter, {1, 2, 3});
  ASSERT_EQ(u.size(), 3u) << messages.All();
  for (int i = 0; i < 3; ++i) {
    const float y = -2.0f * (i + 1);
    EXPECT_FLOAT_EQ(u[i], -2.0f * y * y);
  }
  KilnInterpreterDelete(interpreter);
  KilnOperatorDelete(add);
}

TEST(Interpreter, UnsupportedBuiltinVersionFailsAtCreate) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {2}, "x");
  const int y = w.AddTensor(kKilnFloat32, {2}, "y");
  const int z = w.AddTensor(kKilnFloat32, {2}, "z");
  w.AddOp(kKilnBuiltinAdd, {x, x}, {y}, KilnAddParams{kKilnActNone, false});
  const int op = w.AddOp(kKilnBuiltinAdd, {y, y}, {z}, KilnAddParams{kKilnActNone, false});
  w.SetOpVersion(op, 99);
  w.SetInputs({x});
  w.SetOutputs({z});
  ModelHandle m(w.Finish());
  ASSERT_NE(m.model, nullptr);
  Messages messages;
  KilnStatus status = kKilnOk;
  EXPECT_EQ(MakeInterpreter(m.model, {}, &messages, &status), nullptr);
  EXPECT_EQ(status, kKilnUnsupported);
  const std::string all = messages.All();
  EXPECT_NE(all.find("ADD"), std::string::npos) << all;
  EXPECT_NE(all.find("version 99"), std::string::npos) << all;
  EXPECT_NE(all.find("node 1"), std::string::npos) << all;
}

TEST(Interpreter, BuiltinWithoutKernelFailsAtCreate) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {2}, "x");
  const int y = w.AddTensor(kKilnFloat32, {2}, "y");
  w.AddOp(kKilnBuiltinLshProjection, {x}, {y});
  w.SetInputs({x});
  w.SetOutputs({y});
  ModelHandle m(w.Finish());
  ASSERT_NE(m.model, nullptr);
  Messages messages;
  EXPECT_EQ(MakeInterpreter(m.model, {}, &messages), nullptr);
  EXPECT_NE(messages.All().find("LSH_PROJECTION version 1 at node 0"), std::string::npos) << messages.All();
}

KilnStatus FailingPrepare(KilnOpaqueContext* context, KilnOpaqueNode*) {
  KilnOpaqueContextReportError(context, "Atan: this op refuses to prepare (%d)", 42);
  return kKilnError;
}

TEST(Interpreter, PrepareFailureNamesTheNode) {
  KilnOperator* op = KilnOperatorCreate(kKilnBuiltinCustom, "Atan", 1);
  KilnOperatorSetPrepare(op, FailingPrepare);
  ModelHandle m(examples::AtanModel(examples::kTrainedOffset, 0.0f));
  Messages messages;
  KilnInterpreter* interpreter = MakeInterpreter(m.model, {op}, &messages);
  ASSERT_NE(interpreter, nullptr);
  EXPECT_EQ(KilnInterpreterAllocateTensors(interpreter), kKilnError);
  const std::string all = messages.All();
  EXPECT_NE(all.find("refuses to prepare (42)"), std::string::npos) << all;
  EXPECT_NE(all.find("Node number 1 (Atan) failed to prepare."), std::string::npos) << all;
  KilnInterpreterDelete(interpreter);
  KilnOperatorDelete(op);
}

// An op that asks the interpreter for a temporary in Prepare and uses it in Invoke: out = (in * 3) via scratch.
struct TemporaryOpState {
  int prepared = 0;
};

KilnStatus TemporaryPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const KilnOpaqueTensor* in = KilnOpaqueNodeGetInput(context, node, 0);
  int index = -1;
  KilnOpaqueTensorBuilder* builder = KilnOpaqueTensorBuilderCreate();
  KilnOpaqueTensorBuilderSetType(builder, kKilnFloat32);
  KILN_OPAQUE_ENSURE_STATUS(KilnOpaqueContextAddTensor(context, builder, &index));
  KilnOpaqueTensorBuilderDelete(builder);
  KilnIntArray* dims = KilnIntArrayCreate(1);
  dims->data[0] = static_cast<int>(KilnOpaqueTensorByteSize(in) / 4);
  KILN_OPAQUE_ENSURE_STATUS(
      KilnOpaqueContextResizeTensor(context, KilnOpaqueContextGetOpaqueTensor(context, index), dims));
  KILN_OPAQUE_ENSURE_STATUS(KilnOpaqueNodeSetTemporaries(node, &index, 1));
  return SameShapePrepare(context, node);
}

KilnStatus TemporaryInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const int* temporaries = nullptr;
  int count = 0;
  KILN_OPAQUE_ENSURE_STATUS(KilnOpaqueNodeTemporaries(node, &temporaries, &count));
  KILN_OPAQUE_ENSURE_EQ(context, count, 1);
  KilnOpaqueTensor* scratch = KilnOpaqueContextGetOpaqueTensor(context, temporaries[0]);
  KILN_OPAQUE_ENSURE(context, KilnOpaqueTensorData(scratch) != nullptr);
  KILN_OPAQUE_ENSURE_EQ(context, KilnOpaqueTensorGetAllocationType(scratch), kKilnArenaRw);
  const KilnOpaqueTensor* in = KilnOpaqueNodeGetInput(context, node, 0);
  const float* x = static_cast<const float*>(KilnOpaqueTensorData(in));
  float* s = static_cast<float*>(KilnOpaqueTensorData(scratch));
  float* out = static_cast<float*>(KilnOpaqueTensorData(KilnOpaqueNodeGetOutput(context, node, 0)));
  const size_t n = KilnOpaqueTensorByteSize(in) / 4;
  for (size_t i = 0; i < n; ++i) s[i] = x[i] * 3;
  for (size_t i = 0; i < n; ++i) out[i] = s[i];
  return kKilnOk;
}

TEST(Interpreter, TemporariesArePlannedInTheArena) {
  KilnOperator* op = KilnOperatorCreate(kKilnBuiltinCustom, "Atan", 1);
  KilnOperatorSetPrepare(op, TemporaryPrepare);
  KilnOperatorSetInvoke(op, TemporaryInvoke);
  ModelHandle m(examples::AtanModel(1.0f, 0.0f));
  Messages messages;
  KilnInterpreter* interpreter = MakeInterpreter(m.model, {op}, &messages);
  const std::vector<float> y = RunFloat(interpreter, {1, 2, 3, 4});
  ASSERT_EQ(y.size(), 4u) << messages.All();
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(y[i], 3.0f * (i + 2));
  KilnInterpreterDelete(interpreter);
  KilnOperatorDelete(op);
}

TEST(Interpreter, WithDataCallbacksReceiveOperatorUserData) {
  static int calls = 0;
  int token = 7;
  KilnOperator* op = KilnOperatorCreateWithData(kKilnBuiltinCustom, "Atan", 1, &token);
  EXPECT_EQ(KilnOperatorGetUserData(op), &token);
  EXPECT_STREQ(KilnOperatorGetCustomName(op), "Atan");
  EXPECT_EQ(KilnOperatorGetVersion(op), 1);
  EXPECT_EQ(KilnOperatorGetBuiltInCode(op), kKilnBuiltinCustom);
  KilnOperatorSetPrepareWithData(op, [](void* user_data, KilnOpaqueContext* c, KilnOpaqueNode* n) {
    calls += *static_cast<int*>(user_data);
    return SameShapePrepare(c, n);
  });
  KilnOperatorSetInvokeWithData(op, [](void* user_data, KilnOpaqueContext* c, KilnOpaqueNode* n) {
    calls += *static_cast<int*>(user_data);
    return NegateInvoke(c, n);
  });
  ModelHandle m(examples::AtanModel(0.0f, 0.0f));
  Messages messages;
  KilnInterpreter* interpreter = MakeInterpreter(m.model, {op}, &messages);
  calls = 0;
  ASSERT_EQ(RunFloat(interpreter, {1, 2}).size(), 2u) << messages.All();
  EXPECT_EQ(calls, 14);
  KilnInterpreterDelete(interpreter);
  KilnOperatorDelete(op);
}

TEST(Interpreter, OperatorCreateRejectsBadArguments) {
  EXPECT_EQ(KilnOperatorCreate(kKilnBuiltinCustom, nullptr, 1), nullptr);
  EXPECT_EQ(KilnOperatorCreate(kKilnBuiltinAdd, "Add", 1), nullptr);
  EXPECT_EQ(KilnOperatorCreate(kKilnBuiltinCustom, "", 1), nullptr);
  EXPECT_EQ(KilnOperatorCreate(kKilnBuiltinCustom, "X", 0), nullptr);
}

TEST(CApi, BadModelsGiveErrorsNotCrashes) {
  Messages messages;
  const std::vector<uint8_t> good = examples::AtanModel(examples::kTrainedOffset, 0.0f);
  for (size_t cut : {size_t{1}, size_t{8}, good.size() / 2, good.size() - 1}) {
    EXPECT_EQ(KilnModelCreateWithErrorReporter(good.data(), cut, Messages::Report, &messages), nullptr) << cut;
  }
  EXPECT_EQ(messages.lines.size(), 4u) << messages.All();
  EXPECT_EQ(KilnModelCreate(nullptr, 0), nullptr);
  EXPECT_EQ(KilnModelCreateFromFileWithErrorReporter("/nonexistent/model.tflite", Messages::Report, &messages),
            nullptr);
  EXPECT_NE(messages.All().find("/nonexistent/model.tflite"), std::string::npos);
  EXPECT_EQ(KilnInterpreterCreate(nullptr, nullptr), nullptr);
  EXPECT_EQ(KilnInterpreterAllocateTensors(nullptr), kKilnInvalidArgument);
  EXPECT_EQ(KilnInterpreterGetInputTensor(nullptr, 0), nullptr);
}

TEST(CApi, TensorAccessors) {
  ModelHandle m(examples::AtanModel(examples::kTrainedOffset, 0.0f));
  Messages messages;
  KilnInterpreter* interpreter = MakeInterpreter(m.model, {AtanOperator()}, &messages);
  ASSERT_EQ(KilnInterpreterGetInputTensorCount(interpreter), 1);
  ASSERT_EQ(KilnInterpreterGetOutputTensorCount(interpreter), 1);
  EXPECT_EQ(KilnInterpreterGetInputTensor(interpreter, 1), nullptr);
  EXPECT_EQ(KilnInterpreterGetOutputTensor(interpreter, -1), nullptr);
  ASSERT_EQ(KilnInterpreterAllocateTensors(interpreter), kKilnOk);
  KilnTensor* x = KilnInterpreterGetInputTensor(interpreter, 0);
  EXPECT_STREQ(KilnTensorName(x), "x");
  EXPECT_EQ(KilnTensorType(x), kKilnFloat32);
  EXPECT_EQ(KilnTensorNumDims(x), 1);
  EXPECT_EQ(KilnTensorDim(x, 0), 1);
  EXPECT_EQ(KilnTensorDim(x, 1), -1);
  EXPECT_EQ(KilnTensorByteSize(x), 4u);
  float v = 0;
  EXPECT_EQ(KilnTensorCopyFromBuffer(x, &v, 8), kKilnInvalidArgument) << "wrong size is refused";
  EXPECT_EQ(KilnInterpreterGetNodeCount(interpreter), 2);
  int32_t code = -1, version = -1;
  const char* name = nullptr;
  ASSERT_EQ(KilnInterpreterGetNodeInfo(interpreter, 1, &code, &name, &version), kKilnOk);
  EXPECT_EQ(code, kKilnBuiltinCustom);
  EXPECT_STREQ(name, "Atan");
  EXPECT_EQ(version, 1);
  EXPECT_STREQ(KilnTypeGetName(kKilnInt8), "int8");
  KilnInterpreterDelete(interpreter);
}

// x (int8) -> ADD(x, x) -> t -> ADD(t, x) -> y (int8), every scale 1 and zero point 0, with t declared
// `t_type`: as lr_add_int8 declares its first ADD's output float32, which LiteRT runs as int8 because its ADD
// sets the output's type to input 1's in Prepare.
std::vector<uint8_t> AddChainWithDeclaredType(KilnType t_type) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnInt8, {4}, "x");
  const int t = w.AddTensor(t_type, {4}, "t");
  const int y = w.AddTensor(kKilnInt8, {4}, "y");
  for (int tensor : {x, t, y}) w.SetQuantization(tensor, {1.0f}, {0});
  w.AddOp(kKilnBuiltinAdd, {x, x}, {t}, KilnAddParams{kKilnActNone, false});
  w.AddOp(kKilnBuiltinAdd, {t, x}, {y}, KilnAddParams{kKilnActNone, false});
  w.SetInputs({x});
  w.SetOutputs({y});
  return w.Finish();
}

TEST(Interpreter, AddOutputTakesInputOnesTypeAsInLiteRT) {
  ModelHandle m(AddChainWithDeclaredType(kKilnFloat32));
  ASSERT_NE(m.model, nullptr);
  KilnType declared = kKilnNoType;
  ASSERT_EQ(KilnModelGetTensor(m.model, 1, nullptr, &declared, nullptr, nullptr), kKilnOk);
  EXPECT_EQ(declared, kKilnFloat32);  // the model still says what the file says
  for (bool reference : {false, true}) {
    SCOPED_TRACE(reference ? "reference kernels" : "default path");
    KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
    Messages messages;
    KilnInterpreterOptionsSetErrorReporter(options, Messages::Report, &messages);
    KilnInterpreterOptionsSetUseReferenceKernels(options, reference);
    KilnInterpreter* interpreter = KilnInterpreterCreate(m.model, options);
    KilnInterpreterOptionsDelete(options);
    ASSERT_NE(interpreter, nullptr) << messages.All();
    ASSERT_EQ(KilnInterpreterAllocateTensors(interpreter), kKilnOk) << messages.All();
    const int8_t x[4] = {1, -3, 20, -100};
    ASSERT_EQ(KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter, 0), x, 4), kKilnOk);
    ASSERT_EQ(KilnInterpreterInvoke(interpreter), kKilnOk) << messages.All();
    int8_t y[4];
    ASSERT_EQ(KilnTensorCopyToBuffer(KilnInterpreterGetOutputTensor(interpreter, 0), y, 4), kKilnOk);
    // t = 2x saturates at -128 for -100, so y = t + x = {3, -9, 60, -128}.
    EXPECT_EQ(std::vector<int8_t>(y, y + 4), (std::vector<int8_t>{3, -9, 60, -128}));
    KilnInterpreterDelete(interpreter);
  }
}

KilnType g_declared_output_type = kKilnNoType;

KilnStatus RecordOutputTypePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  if (g_declared_output_type == kKilnNoType) g_declared_output_type = KilnOpaqueTensorType(output);
  return kKilnOk;
}

TEST(Interpreter, UserOperatorSeesTheDeclaredOutputType) {
  // The retyping is LiteRT's builtin kernel's doing: a user's ADD gets the tensor as the model declares it.
  KilnOperator* add = KilnOperatorCreate(kKilnBuiltinAdd, nullptr, 1);
  KilnOperatorSetPrepare(add, RecordOutputTypePrepare);
  KilnOperatorSetInvoke(add, [](KilnOpaqueContext*, KilnOpaqueNode*) { return kKilnOk; });
  ModelHandle m(AddChainWithDeclaredType(kKilnFloat32));
  Messages messages;
  KilnInterpreter* interpreter = MakeInterpreter(m.model, {add}, &messages);
  ASSERT_NE(interpreter, nullptr) << messages.All();
  g_declared_output_type = kKilnNoType;
  ASSERT_EQ(KilnInterpreterAllocateTensors(interpreter), kKilnOk) << messages.All();
  EXPECT_EQ(g_declared_output_type, kKilnFloat32);
  KilnInterpreterDelete(interpreter);
  KilnOperatorDelete(add);
}

}  // namespace
}  // namespace kiln
