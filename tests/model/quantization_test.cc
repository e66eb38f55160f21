// Quantization parameters the reader refuses at load (scales, zero points, counts, quantized_dimension), each
// named by tensor index and name, and the ones it must accept, on built models and on mutated real models.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/builtin_ops.h"
#include "runtime/model/model.h"
#include "runtime/model/model_writer.h"
#include "tests/model/model_test_util.h"
#include "tests/test_util.h"
#include "tflite_generated.h"

namespace kiln {
namespace {

// x -> ADD(x, k) -> y, with x, k and y of `type` and shape [2, 3]; k constant. Quantization is left to the
// test.
struct QuantModel {
  ModelWriter w;
  int x, k, y;
  explicit QuantModel(KilnType type = kKilnInt8) {
    w.set_unchecked(true);
    x = w.AddTensor(type, {2, 3}, "x");
    k = w.AddConstTensor<uint8_t>(type, {2, 3}, "k", std::vector<uint8_t>(6 * TypeSize(type), 0));
    y = w.AddTensor(type, {2, 3}, "y");
    w.AddOp(kKilnBuiltinAdd, {x, k}, {y}, KilnAddParams{kKilnActNone, false});
    w.SetInputs({x});
    w.SetOutputs({y});
  }
};

bool Reads(const std::vector<uint8_t>& bytes, ModelDesc* model, std::string* error) {
  return ReadModel(bytes.data(), bytes.size(), model, error);
}

TEST(QuantizationTest, ScalesMustBePositiveAndFinite) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    float scale;
    const char* shown;
  };
  for (const Case& c : {Case{0.0f, "is 0;"}, Case{-0.0f, "is -0;"}, Case{-0.5f, "is -0.5;"},
                        Case{nan, "is nan;"}, Case{inf, "is inf;"}, Case{-inf, "is -inf;"}}) {
    SCOPED_TRACE(c.shown);
    QuantModel m;
    m.w.SetQuantization(m.x, {0.5f}, {0});
    m.w.SetQuantization(m.y, {c.scale}, {0});
    EXPECT_MODEL_ERROR(m.w.Finish(), std::string("subgraph 0, tensor 2 'y': quantization scale 0 ") +
                                         c.shown + " a scale must be positive and finite");
  }
  // One bad channel among good ones is named by its index.
  QuantModel channels;
  channels.w.SetQuantization(channels.k, {0.5f, 0.0f}, {0, 0}, 0);
  EXPECT_MODEL_ERROR(channels.w.Finish(), "tensor 1 'k': quantization scale 1 is 0;");
  // The smallest positive scale is a scale.
  QuantModel tiny;
  tiny.w.SetQuantization(tiny.y, {std::numeric_limits<float>::denorm_min()}, {0});
  ModelDesc model;
  std::string error;
  EXPECT_TRUE(Reads(tiny.w.Finish(), &model, &error)) << error;
}

TEST(QuantizationTest, ZeroPointsMustFitTheTensorType) {
  struct Case {
    KilnType type;
    int64_t zero_point;
    const char* expected;  // nullptr: the model loads
  };
  const Case cases[] = {
      {kKilnInt8, -128, nullptr},
      {kKilnInt8, 127, nullptr},
      {kKilnInt8, 128, "zero point 0 is 128, outside the int8 range [-128, 127]"},
      {kKilnInt8, -129, "zero point 0 is -129, outside the int8 range [-128, 127]"},
      {kKilnUInt8, 0, nullptr},
      {kKilnUInt8, 255, nullptr},
      {kKilnUInt8, -1, "zero point 0 is -1, outside the uint8 range [0, 255]"},
      {kKilnUInt8, 256, "zero point 0 is 256, outside the uint8 range [0, 255]"},
      // LiteRT's int16 kernels want 0, but that is their check at prepare; at load only the range counts.
      {kKilnInt16, 5, nullptr},
      {kKilnInt16, -32768, nullptr},
      {kKilnInt16, 32768, "zero point 0 is 32768, outside the int16 range [-32768, 32767]"},
      // int32 (and int64) tensors are held to 32 bits only.
      {kKilnInt32, int64_t{1} << 30, nullptr},
      {kKilnInt32, int64_t{1} << 31, "zero point 0 (2147483648) does not fit in 32 bits"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(TypeName(c.type)) + " zero point " + std::to_string(c.zero_point));
    QuantModel m(c.type);
    m.w.SetQuantization(m.x, {0.25f}, {c.zero_point});
    std::vector<uint8_t> bytes = m.w.Finish();
    if (c.expected == nullptr) {
      ModelDesc model;
      std::string error;
      ASSERT_TRUE(Reads(bytes, &model, &error)) << error;
      EXPECT_EQ(model.subgraphs[0].tensors[0].quantization.zero_point,
                std::vector<int32_t>{static_cast<int32_t>(c.zero_point)});
    } else {
      EXPECT_MODEL_ERROR(bytes, std::string("subgraph 0, tensor 0 'x': quantization ") + c.expected);
    }
  }
  // A per-channel zero point is checked channel by channel.
  QuantModel channels;
  channels.w.SetQuantization(channels.k, {0.5f, 0.5f}, {0, 300}, 0);
  EXPECT_MODEL_ERROR(channels.w.Finish(),
                     "tensor 1 'k': quantization zero point 1 is 300, outside the int8 range");
}

TEST(QuantizationTest, CountsMustMatch) {
  QuantModel zero_points;
  zero_points.w.SetQuantization(zero_points.k, {0.5f, 0.25f}, {0, 0, 0}, 0);
  EXPECT_MODEL_ERROR(
      zero_points.w.Finish(),
      "subgraph 0, tensor 1 'k': quantization has 2 scales but 3 zero points (they must match)");

  // Three scales along dimension 1 (size 3) is right; along dimension 0 (size 2) it is not.
  QuantModel right;
  right.w.SetQuantization(right.k, {0.5f, 0.25f, 0.125f}, {0, 0, 0}, 1);
  ModelDesc model;
  std::string error;
  ASSERT_TRUE(Reads(right.w.Finish(), &model, &error)) << error;
  EXPECT_EQ(model.subgraphs[0].tensors[1].quantization.quantized_dimension, 1);
  QuantModel wrong;
  wrong.w.SetQuantization(wrong.k, {0.5f, 0.25f, 0.125f}, {0, 0, 0}, 0);
  EXPECT_MODEL_ERROR(
      wrong.w.Finish(),
      "subgraph 0, tensor 1 'k': 3 per-channel scales, but dimension 0 of shape [2, 3] has size 2");
}

TEST(QuantizationTest, QuantizedDimensionMattersOnlyWithSeveralScales) {
  // A bias of shape [8] with one scale and quantized_dimension 3 (as TOCO wrote them): the dimension is
  // meaningless with one scale, so the model loads. (LiteRT's InterpreterBuilder refuses a dimension at or
  // past the rank even then; TFLite Micro ignores it, and so does Kiln.)
  ModelWriter w;
  w.set_unchecked(true);
  int x = w.AddTensor(kKilnInt32, {8}, "x");
  int bias = w.AddConstTensor<int32_t>(kKilnInt32, {8}, "bias", std::vector<int32_t>(8, 7));
  int y = w.AddTensor(kKilnInt32, {8}, "y");
  w.AddOp(kKilnBuiltinAdd, {x, bias}, {y}, KilnAddParams{kKilnActNone, false});
  w.SetInputs({x});
  w.SetOutputs({y});
  w.SetQuantization(bias, {0.125f}, {0}, 3);
  ModelDesc model;
  std::string error;
  ASSERT_TRUE(Reads(w.Finish(), &model, &error)) << error;
  EXPECT_EQ(model.subgraphs[0].tensors[1].quantization.scale, std::vector<float>{0.125f});

  // With more than one scale the dimension must exist.
  QuantModel past;
  past.w.SetQuantization(past.k, {0.5f, 0.25f}, {0, 0}, 2);
  EXPECT_MODEL_ERROR(past.w.Finish(),
                     "subgraph 0, tensor 1 'k': quantized_dimension 2 is out of range for shape [2, 3]");
  // A negative dimension is refused whatever the count.
  QuantModel negative;
  negative.w.SetQuantization(negative.k, {0.5f}, {0}, -1);
  EXPECT_MODEL_ERROR(negative.w.Finish(), "tensor 1 'k': quantized_dimension -1 is out of range");
}

// Real models with one quantization value overwritten in place: the flatbuffer stays valid, only the value is
// bad, as a corrupted or hand-edited file would be.
class MutatedRealModel {
 public:
  explicit MutatedRealModel(const std::string& file)
      : bytes_(testing::ReadFileBytes(testing::ModelPath(file))) {}
  bool empty() const { return bytes_.empty(); }
  // The tensor's label as the reader prints it: "tensor 3 'name'".
  std::string Label(int tensor) const {
    return "tensor " + std::to_string(tensor) + " '" + Tensor(tensor)->name()->str() + "'";
  }
  void SetScale(int tensor, size_t i, float value) {
    const auto* scale = Tensor(tensor)->quantization()->scale();
    ASSERT_LT(i, scale->size());
    std::memcpy(At(scale->Data()) + 4 * i, &value, 4);
  }
  void SetZeroPoint(int tensor, size_t i, int64_t value) {
    const auto* zero_point = Tensor(tensor)->quantization()->zero_point();
    ASSERT_LT(i, zero_point->size());
    std::memcpy(At(zero_point->Data()) + 8 * i, &value, 8);
  }
  size_t ScaleCount(int tensor) const { return Tensor(tensor)->quantization()->scale()->size(); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  const tflite::Tensor* Tensor(int t) const {
    return tflite::GetModel(bytes_.data())
        ->subgraphs()
        ->Get(0)
        ->tensors()
        ->Get(static_cast<flatbuffers::uoffset_t>(t));
  }
  uint8_t* At(const uint8_t* p) { return bytes_.data() + (p - bytes_.data()); }
  std::vector<uint8_t> bytes_;
};

TEST(QuantizationTest, MutatedRealModelsAreRefused) {
  KILN_REQUIRE_MODELS();
  // tm_hello_world_int8: the input's per-tensor scale and zero point.
  {
    MutatedRealModel original("tm_hello_world_int8.tflite");
    ASSERT_FALSE(original.empty());
    ModelDesc model;
    std::string error;
    ASSERT_TRUE(Reads(original.bytes(), &model, &error)) << error;
    const int input = model.subgraphs[0].inputs[0];
    ASSERT_EQ(model.subgraphs[0].tensors[static_cast<size_t>(input)].type, kKilnInt8);
    const std::string label = "subgraph 0, " + original.Label(input);
    for (float bad : {0.0f, -0.02f, std::numeric_limits<float>::quiet_NaN()}) {
      MutatedRealModel m = original;
      m.SetScale(input, 0, bad);
      EXPECT_MODEL_ERROR(m.bytes(), label + ": quantization scale 0 is ");
    }
    MutatedRealModel zero_point = original;
    zero_point.SetZeroPoint(input, 0, 200);
    EXPECT_MODEL_ERROR(zero_point.bytes(),
                       label + ": quantization zero point 0 is 200, outside the int8 range");
  }
  // tm_micro_speech_int8: one channel of the per-channel convolution filter.
  {
    MutatedRealModel original("tm_micro_speech_int8.tflite");
    ASSERT_FALSE(original.empty());
    ModelDesc model;
    std::string error;
    ASSERT_TRUE(Reads(original.bytes(), &model, &error)) << error;
    int filter = -1;
    for (size_t t = 0; t < model.subgraphs[0].tensors.size(); ++t) {
      const TensorDesc& desc = model.subgraphs[0].tensors[t];
      if (desc.type == kKilnInt8 && desc.quantization.scale.size() > 1) filter = static_cast<int>(t);
    }
    ASSERT_GE(filter, 0) << "no per-channel int8 tensor";
    const size_t last = original.ScaleCount(filter) - 1;
    MutatedRealModel m = original;
    m.SetScale(filter, last, -std::numeric_limits<float>::infinity());
    EXPECT_MODEL_ERROR(m.bytes(), "subgraph 0, " + original.Label(filter) + ": quantization scale " +
                                      std::to_string(last) + " is -inf;");
  }
}

}  // namespace
}  // namespace kiln
