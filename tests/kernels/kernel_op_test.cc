// Kernel-backed ops: KilnOperatorSetKernel in the interpreter, with kilnc-compiled modules.
#include <gtest/gtest.h>

#include <cmath>

#include "atan_model.h"
#include "kiln/c_api.h"
#include "kiln/c_api_opaque.h"
#include "kiln/compute.h"
#include "kiln/operator.h"
#include "runtime/model/model_writer.h"
#include "tests/kernels/bound_inputs_op.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/test_util.h"

namespace kiln {
namespace {

using testing::KmodPath;
using testing::Messages;

const std::vector<float> kX = {-8.0f, 0.5f, 2.0f, 2.2f, 201.0f};
const std::vector<float> kY = {-1.4288993f, 0.98279375f, 1.2490457f, 1.2679114f, 1.5658458f};

struct KernelOp {
  KilnModule* module = nullptr;
  KilnOperator* op = nullptr;
  KernelOp(const std::string& kmod, const char* name, const char* kernel) {
    module = KilnModuleCreateFromFile(KmodPath(kmod).c_str());
    op = KilnOperatorCreate(kKilnBuiltinCustom, name, 1);
    if (module != nullptr) status = KilnOperatorSetKernel(op, module, kernel);
  }
  ~KernelOp() {
    KilnOperatorDelete(op);
    KilnModuleDelete(module);
  }
  KilnStatus status = kKilnError;
};

// Runs a one-input float model with `op` registered; empty on failure.
std::vector<float> RunModel(const std::vector<uint8_t>& model_bytes, KilnOperator* op, const std::vector<float>& x,
                       Messages* messages) {
  KilnModel* model = KilnModelCreate(model_bytes.data(), model_bytes.size());
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(options, Messages::Report, messages);
  KilnInterpreterOptionsAddOperator(options, op);
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, options);
  KilnInterpreterOptionsDelete(options);
  KilnModelDelete(model);
  std::vector<float> y;
  const int dims[1] = {static_cast<int>(x.size())};
  if (interpreter != nullptr && KilnInterpreterResizeInputTensor(interpreter, 0, dims, 1) == kKilnOk &&
      KilnInterpreterAllocateTensors(interpreter) == kKilnOk &&
      KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter, 0), x.data(), x.size() * 4) == kKilnOk &&
      KilnInterpreterInvoke(interpreter) == kKilnOk) {
    const KilnTensor* out = KilnInterpreterGetOutputTensor(interpreter, 0);
    y.resize(KilnTensorByteSize(out) / 4);
    KilnTensorCopyToBuffer(out, y.data(), y.size() * 4);
  }
  KilnInterpreterDelete(interpreter);
  return y;
}

TEST(KernelOp, AtanScenarioWithTheRsKernel) {
  KernelOp atan("atan_op", "Atan", "atan_op");
  ASSERT_EQ(atan.status, kKilnOk);
  Messages messages;
  const std::vector<float> y = RunModel(examples::AtanModel(examples::kTrainedOffset, 0.0f), atan.op, kX, &messages);
  ASSERT_EQ(y.size(), kY.size()) << messages.All();
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], kY[i], 1e-6f) << i;
}

TEST(KernelOp, OptionsSetTheGlobals) {
  KernelOp atan("atan_op", "Atan", "atan_op");
  Messages messages;
  // The offset split between the ADD and the op's `offset` option: right only if the option reaches the global.
  std::vector<float> y =
      RunModel(examples::AtanModel(0.5f, examples::kTrainedOffset - 0.5f), atan.op, kX, &messages);
  ASSERT_EQ(y.size(), kY.size()) << messages.All();
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], kY[i], 1e-6f) << i;
  y = RunModel(examples::AtanModel(examples::kTrainedOffset, 1.0f), atan.op, kX, &messages);
  ASSERT_EQ(y.size(), kY.size()) << messages.All();
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], std::atan(kX[i] + examples::kTrainedOffset + 1.0f), 1e-6f);
}

// A model whose custom op `Op` has the given options and inputs x (shape `a`) and a constant (shape `b`).
std::vector<uint8_t> TwoInputModel(const std::vector<int>& a, const std::vector<int>& b, const std::vector<float>& bv,
                                   const std::vector<uint8_t>& options) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, a, "x");
  const int c = w.AddConstTensor<float>(kKilnFloat32, b, "c", bv);
  const int y = w.AddTensor(kKilnFloat32, {}, "y");
  w.AddCustomOp("Op", {x, c}, {y}, options);
  w.SetInputs({x});
  w.SetOutputs({y});
  return w.Finish();
}

TEST(KernelOp, OutputTakesTheBroadcastShape) {
  KernelOp add("add2", "Op", "add2");
  ASSERT_EQ(add.status, kKilnOk);
  const std::vector<uint8_t> bytes =
      TwoInputModel({2, 3}, {3}, {10, 20, 30}, FlexMap().Float("scale", 2.0f).Int("bias", 1).Finish());
  KilnModel* model = KilnModelCreate(bytes.data(), bytes.size());
  Messages messages;
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(options, Messages::Report, &messages);
  KilnInterpreterOptionsAddOperator(options, add.op);
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, options);
  KilnInterpreterOptionsDelete(options);
  KilnModelDelete(model);
  ASSERT_NE(interpreter, nullptr) << messages.All();
  ASSERT_EQ(KilnInterpreterAllocateTensors(interpreter), kKilnOk) << messages.All();
  const float x[6] = {1, 2, 3, 4, 5, 6};
  ASSERT_EQ(KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter, 0), x, sizeof x), kKilnOk);
  ASSERT_EQ(KilnInterpreterInvoke(interpreter), kKilnOk) << messages.All();
  const KilnTensor* out = KilnInterpreterGetOutputTensor(interpreter, 0);
  ASSERT_EQ(KilnTensorNumDims(out), 2);
  EXPECT_EQ(KilnTensorDim(out, 0), 2);
  EXPECT_EQ(KilnTensorDim(out, 1), 3);
  const float* y = static_cast<const float*>(KilnTensorData(out));
  const float c[3] = {10, 20, 30};
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(y[i], (x[i] + c[i % 3]) * 2.0f + 1.0f) << i;
  KilnInterpreterDelete(interpreter);
}

KilnStatus PrepareWithOptions(const std::vector<uint8_t>& options, Messages* messages) {
  KernelOp add("add2", "Op", "add2");
  const std::vector<uint8_t> bytes = TwoInputModel({3}, {3}, {1, 2, 3}, options);
  KilnModel* model = KilnModelCreate(bytes.data(), bytes.size());
  KilnInterpreterOptions* o = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(o, Messages::Report, messages);
  KilnInterpreterOptionsAddOperator(o, add.op);
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, o);
  KilnInterpreterOptionsDelete(o);
  KilnModelDelete(model);
  const KilnStatus s = KilnInterpreterAllocateTensors(interpreter);
  KilnInterpreterDelete(interpreter);
  return s;
}

TEST(KernelOp, UnknownOptionNamesKeyAndGlobals) {
  Messages messages;
  EXPECT_NE(PrepareWithOptions(FlexMap().Float("sclae", 2.0f).Finish(), &messages), kKilnOk);
  EXPECT_TRUE(messages.Contains("custom option 'sclae' matches no global")) << messages.All();
  EXPECT_TRUE(messages.Contains("scale, bias")) << messages.All();
  EXPECT_TRUE(messages.Contains("node 0 (Op, kernel 'add2')")) << messages.All();
}

// The attributes TensorFlow's converter adds to every custom op ("T", "_output_shapes"...) are ignored with a
// note; the options that do match globals still apply.
TEST(KernelOp, ConverterAttributesAreIgnoredWithANote) {
  Messages messages;
  EXPECT_EQ(PrepareWithOptions(FlexMap().Int("T", 1).Float("scale", 2.0f).Int("_output_quantized", 0).Finish(),
                               &messages),
            kKilnOk)
      << messages.All();
  EXPECT_TRUE(messages.Contains("note: custom option 'T' (an attribute TensorFlow's converter adds) matches no "
                                "global of "))
      << messages.All();
  EXPECT_TRUE(messages.Contains("add2.kmod; ignored"))
      << messages.All();
  EXPECT_TRUE(messages.Contains("note: custom option '_output_quantized'")) << messages.All();
}

TEST(KernelOp, WrongOptionTypeNamesBoth) {
  Messages messages;
  EXPECT_NE(PrepareWithOptions(FlexMap().String("scale", "big").Finish(), &messages), kKilnOk);
  EXPECT_TRUE(messages.Contains("custom option 'scale' has the wrong type for global 'float scale'"))
      << messages.All();
  messages.lines.clear();
  EXPECT_NE(PrepareWithOptions(FlexMap().Float("bias", 0.5f).Finish(), &messages), kKilnOk);
  EXPECT_TRUE(messages.Contains("a float value for an integer global")) << messages.All();
  messages.lines.clear();
  EXPECT_NE(PrepareWithOptions(FlexMap().FloatVector("unused_vector", {1, 2}).Finish(), &messages), kKilnOk);
  EXPECT_TRUE(messages.Contains("expected 3 number(s), got 2")) << messages.All();
  messages.lines.clear();
  EXPECT_EQ(PrepareWithOptions(FlexMap().FloatVector("unused_vector", {1, 2, 3}).Int("bias", 4).Finish(), &messages),
            kKilnOk)
      << messages.All();
}

TEST(KernelOp, MismatchedShapesAreRejectedAtPrepare) {
  KernelOp add("add2", "Op", "add2");
  const std::vector<uint8_t> bytes = TwoInputModel({4}, {3}, {1, 2, 3}, {});
  KilnModel* model = KilnModelCreate(bytes.data(), bytes.size());
  Messages messages;
  KilnInterpreterOptions* o = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(o, Messages::Report, &messages);
  KilnInterpreterOptionsAddOperator(o, add.op);
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, o);
  KilnInterpreterOptionsDelete(o);
  KilnModelDelete(model);
  EXPECT_EQ(KilnInterpreterAllocateTensors(interpreter), kKilnError);
  EXPECT_TRUE(messages.Contains("does not broadcast")) << messages.All();
  KilnInterpreterDelete(interpreter);
}

KilnStatus FixedShapePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  KilnIntArray* dims = KilnIntArrayCreate(2);
  dims->data[0] = 2;
  dims->data[1] = 3;
  return KilnOpaqueContextResizeTensor(context, KilnOpaqueNodeGetOutput(context, node, 0), dims);
}

TEST(KernelOp, UserPrepareOverridesTheShapeRule) {
  KernelOp add("add2", "Op", "add2");
  KilnOperatorSetPrepare(add.op, FixedShapePrepare);  // broadcasts [3] + [3] into [2, 3]
  const std::vector<uint8_t> bytes = TwoInputModel({3}, {3}, {1, 2, 3}, {});
  KilnModel* model = KilnModelCreate(bytes.data(), bytes.size());
  Messages messages;
  KilnInterpreterOptions* o = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(o, Messages::Report, &messages);
  KilnInterpreterOptionsAddOperator(o, add.op);
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, o);
  KilnInterpreterOptionsDelete(o);
  KilnModelDelete(model);
  ASSERT_EQ(KilnInterpreterAllocateTensors(interpreter), kKilnOk) << messages.All();
  const float x[3] = {5, 6, 7};
  KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter, 0), x, sizeof x);
  ASSERT_EQ(KilnInterpreterInvoke(interpreter), kKilnOk) << messages.All();
  const KilnTensor* out = KilnInterpreterGetOutputTensor(interpreter, 0);
  ASSERT_EQ(KilnTensorByteSize(out), 24u);
  const float* y = static_cast<const float*>(KilnTensorData(out));
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(y[i], x[i % 3] + (i % 3 + 1)) << i;
  KilnInterpreterDelete(interpreter);
}

TEST(KernelOp, SetKernelRejectsUnknownKernel) {
  KilnModule* module = KilnModuleCreateFromFile(KmodPath("add2").c_str());
  ASSERT_NE(module, nullptr);
  KilnOperator* op = KilnOperatorCreate(kKilnBuiltinCustom, "Op", 1);
  EXPECT_EQ(KilnOperatorSetKernel(op, module, "nope"), kKilnInvalidArgument);
  EXPECT_EQ(KilnOperatorSetKernel(op, nullptr, "add2"), kKilnInvalidArgument);
  EXPECT_EQ(KilnModuleGetKernelCount(module), 1);
  EXPECT_STREQ(KilnModuleGetKernelName(module, 0), "add2");
  KilnOperatorDelete(op);
  KilnModuleDelete(module);
}

TEST(KernelOp, ModuleOutlivesItsHandle) {
  KilnModule* module = KilnModuleCreateFromFile(KmodPath("atan_op").c_str());
  KilnOperator* op = KilnOperatorCreate(kKilnBuiltinCustom, "Atan", 1);
  ASSERT_EQ(KilnOperatorSetKernel(op, module, "atan_op"), kKilnOk);
  KilnModuleDelete(module);  // the operator keeps the module alive
  Messages messages;
  const std::vector<float> y = RunModel(examples::AtanModel(examples::kTrainedOffset, 0.0f), op, kX, &messages);
  EXPECT_EQ(y.size(), kX.size()) << messages.All();
  KilnOperatorDelete(op);
}

// --- Inputs bound to globals, raw options (KilnOperatorSetKernelInputGlobal,
// KilnOperatorSetKernelOptionsAsGlobals, KilnOpaqueNodeSetKernelGlobal) ---

// Small integers and a scale of 3: every result is exact, whether or not the kernel's multiply-add is fused.
std::vector<float> Ramp(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i % 97);
  return v;
}

struct Interp {
  KilnInterpreter* interpreter = nullptr;
  Interp(const std::vector<uint8_t>& bytes, KilnOperator* op, Messages* messages) {
    KilnModel* model = KilnModelCreate(bytes.data(), bytes.size());
    KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
    KilnInterpreterOptionsSetErrorReporter(options, Messages::Report, messages);
    KilnInterpreterOptionsAddOperator(options, op);
    interpreter = KilnInterpreterCreate(model, options);
    KilnInterpreterOptionsDelete(options);
    KilnModelDelete(model);
  }
  ~Interp() { KilnInterpreterDelete(interpreter); }
  std::vector<float> Output() const {
    const KilnTensor* out = KilnInterpreterGetOutputTensor(interpreter, 0);
    std::vector<float> y(KilnTensorByteSize(out) / 4);
    KilnTensorCopyToBuffer(out, y.data(), y.size() * 4);
    return y;
  }
};

TEST(KernelOp, BoundInputIsReadAtOtherCellsAndFollowsEachInvoke) {
  KernelOp op("bound_inputs", "AddReversed", "add_reversed");
  ASSERT_EQ(op.status, kKilnOk);
  ASSERT_TRUE(testing::ConfigureAddReversed(op.op));
  const std::vector<int> shape = {2, 3, 4, 5};  // 4-D: the bound tensor's outer dimensions fold into z
  Messages messages;
  Interp run(testing::AddReversedModel(shape, 3.0f, {}), op.op, &messages);
  ASSERT_NE(run.interpreter, nullptr) << messages.All();
  ASSERT_EQ(KilnInterpreterAllocateTensors(run.interpreter), kKilnOk) << messages.All();
  const std::vector<float> x = Ramp(120, -7.0f, 1.0f);
  // Twice with different bound data: the binding must see each Invoke's tensor, not the first one's.
  for (float start : {1.0f, -40.0f}) {
    const std::vector<float> src = Ramp(120, start, 2.0f);
    ASSERT_EQ(KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(run.interpreter, 0), x.data(), 480),
              kKilnOk);
    ASSERT_EQ(KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(run.interpreter, 1), src.data(), 480),
              kKilnOk);
    ASSERT_EQ(KilnInterpreterInvoke(run.interpreter), kKilnOk) << messages.All();
    const std::vector<float> y = run.Output();
    const std::vector<float> want = testing::AddReversedReference(x, src, 3.0f);
    ASSERT_EQ(y.size(), want.size());
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_EQ(y[i], want[i]) << "element " << i << ", src start " << start;
  }
}

TEST(KernelOp, ConstantBoundInput) {
  KernelOp op("bound_inputs", "AddReversed", "add_reversed");
  ASSERT_TRUE(testing::ConfigureAddReversed(op.op));
  const std::vector<float> src = Ramp(24, 5.0f, -1.0f);
  Messages messages;
  Interp run(testing::AddReversedModel({4, 6}, 0.5f, src), op.op, &messages);
  ASSERT_EQ(KilnInterpreterAllocateTensors(run.interpreter), kKilnOk) << messages.All();
  const std::vector<float> x = Ramp(24, 1.0f, 1.0f);
  for (int pass = 0; pass < 2; ++pass) {
    ASSERT_EQ(KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(run.interpreter, 0), x.data(), 96),
              kKilnOk);
    ASSERT_EQ(KilnInterpreterInvoke(run.interpreter), kKilnOk) << messages.All();
    EXPECT_EQ(run.Output(), testing::AddReversedReference(x, src, 0.5f)) << "pass " << pass;
  }
}

TEST(KernelOp, RawOptionsNeedTheOptionsLeftToPrepare) {
  KernelOp op("bound_inputs", "AddReversed", "add_reversed");
  ASSERT_EQ(KilnOperatorSetKernelInputGlobal(op.op, 1, "gSrc"), kKilnOk);
  KilnOperatorSetPrepare(op.op, testing::AddReversedPrepare);
  // Options as globals (the default): 4 raw bytes are no FlexBuffers map.
  Messages messages;
  Interp run(testing::AddReversedModel({3}, 2.0f, {1, 2, 3}), op.op, &messages);
  EXPECT_NE(KilnInterpreterAllocateTensors(run.interpreter), kKilnOk);
  EXPECT_TRUE(messages.Contains("not a valid FlexBuffers map")) << messages.All();
}

// Custom options whose map key has no terminator inside them (../shared/repro/flex_unterminated_key.bin): the
// options-to-globals reader refuses them as the kiln/flex.h accessors do. It used to verify the bytes only with
// the FlexBuffers verifier and read the key as a C string past the options' end.
TEST(KernelOp, OptionsWithAnUnterminatedKeyAreRefused) {
  const std::string path = std::string(KILN_REPRO_DIR) + "/flex_unterminated_key.bin";
  const std::vector<uint8_t> options = testing::ReadFileBytes(path);
  KILN_SKIP_WITHOUT_SHARED_DATA(options.empty(), path << " is absent (the shared repro folder is not there)");
  KernelOp op("bound_inputs", "AddReversed", "add_reversed");
  ASSERT_EQ(KilnOperatorSetKernelInputGlobal(op.op, 1, "gSrc"), kKilnOk);
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {3}, "x");
  const int src = w.AddTensor(kKilnFloat32, {3}, "s");
  const int y = w.AddTensor(kKilnFloat32, {3}, "y");
  w.AddCustomOp("AddReversed", {x, src}, {y}, options);
  w.SetInputs({x, src});
  w.SetOutputs({y});
  Messages messages;
  Interp run(w.Finish(), op.op, &messages);
  EXPECT_NE(KilnInterpreterAllocateTensors(run.interpreter), kKilnOk);
  EXPECT_TRUE(messages.Contains("not a valid FlexBuffers map")) << messages.All();
}

TEST(KernelOp, BindingSettersCheckTheirArguments) {
  KernelOp op("bound_inputs", "AddReversed", "add_reversed");
  EXPECT_EQ(KilnOperatorSetKernelInputGlobal(op.op, 1, "gScale"), kKilnInvalidArgument);  // not an allocation
  EXPECT_EQ(KilnOperatorSetKernelInputGlobal(op.op, 1, "gNope"), kKilnInvalidArgument);
  EXPECT_EQ(KilnOperatorSetKernelInputGlobal(op.op, -1, "gSrc"), kKilnInvalidArgument);
  EXPECT_EQ(KilnOperatorSetKernelInputGlobal(op.op, 1, nullptr), kKilnInvalidArgument);
  KilnOperator* plain = KilnOperatorCreate(kKilnBuiltinCustom, "Plain", 1);
  EXPECT_EQ(KilnOperatorSetKernelInputGlobal(plain, 0, "gSrc"), kKilnInvalidArgument);
  EXPECT_EQ(KilnOperatorSetKernelOptionsAsGlobals(plain, false), kKilnInvalidArgument);
  EXPECT_EQ(KilnOperatorSetKernelOptionsAsGlobals(nullptr, false), kKilnInvalidArgument);
  KilnOperatorDelete(plain);
}

TEST(KernelOp, BoundInputPastTheNodesInputsFailsPrepare) {
  KernelOp op("bound_inputs", "AddReversed", "add_reversed");
  // Input 4 bound, which the two-input node does not have.
  KilnOperator* other = KilnOperatorCreate(kKilnBuiltinCustom, "AddReversed", 1);
  ASSERT_EQ(KilnOperatorSetKernel(other, op.module, "add_reversed"), kKilnOk);
  ASSERT_EQ(KilnOperatorSetKernelInputGlobal(other, 4, "gSrc"), kKilnOk);
  ASSERT_EQ(KilnOperatorSetKernelOptionsAsGlobals(other, false), kKilnOk);
  Messages messages;
  {
    Interp run(testing::AddReversedModel({3}, 2.0f, {1, 2, 3}), other, &messages);
    EXPECT_NE(KilnInterpreterAllocateTensors(run.interpreter), kKilnOk);
  }
  EXPECT_TRUE(messages.Contains("input 4 is bound to global 'gSrc', but the node has 2 input(s)"))
      << messages.All();
  KilnOperatorDelete(other);
}

KilnStatus WrongSizePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const int16_t small = 1;
  return KilnOpaqueNodeSetKernelGlobal(context, node, "gCount", &small, sizeof small);
}

TEST(KernelOp, SetKernelGlobalChecksNameAndSize) {
  KernelOp op("bound_inputs", "AddReversed", "add_reversed");
  ASSERT_EQ(KilnOperatorSetKernelInputGlobal(op.op, 1, "gSrc"), kKilnOk);
  ASSERT_EQ(KilnOperatorSetKernelOptionsAsGlobals(op.op, false), kKilnOk);
  KilnOperatorSetPrepare(op.op, WrongSizePrepare);
  Messages messages;
  {
    Interp run(testing::AddReversedModel({3}, 2.0f, {1, 2, 3}), op.op, &messages);
    EXPECT_NE(KilnInterpreterAllocateTensors(run.interpreter), kKilnOk);
  }
  EXPECT_TRUE(
      messages.Contains("node 0 (AddReversed, kernel 'add_reversed'): setting global 'gCount' failed"))
      << messages.All();
}

TEST(KernelOp, SetKernelGlobalRefusesNodesWithoutKernel) {
  KilnOperator* plain = KilnOperatorCreate(kKilnBuiltinCustom, "AddReversed", 1);
  KilnOperatorSetPrepare(plain, testing::AddReversedPrepare);
  Messages messages;
  {
    Interp run(testing::AddReversedModel({3}, 2.0f, {1, 2, 3}), plain, &messages);
    EXPECT_NE(KilnInterpreterAllocateTensors(run.interpreter), kKilnOk);
  }
  EXPECT_TRUE(messages.Contains("is not served by a kernel")) << messages.All();
  KilnOperatorDelete(plain);
}

}  // namespace
}  // namespace kiln
