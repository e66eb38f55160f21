// Malformed models: each is refused with a message that says what is wrong and where.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/builtin_ops.h"
#include "runtime/model/model.h"
#include "runtime/model/model_writer.h"
#include "tests/model/model_test_util.h"
#include "tests/test_util.h"

namespace kiln {
namespace {

// x -> ADD(x, k) -> y -> MUL(y, x) -> z, with k constant.
struct SmallModel {
  ModelWriter w;
  int x, k, y, z;
  int add, mul;
  explicit SmallModel(bool unchecked = true) {
    w.set_unchecked(unchecked);
    x = w.AddTensor(kKilnFloat32, {1, 4}, "x");
    k = w.AddConstTensor<float>(kKilnFloat32, {1, 4}, "k", {1, 2, 3, 4});
    y = w.AddTensor(kKilnFloat32, {1, 4}, "y");
    z = w.AddTensor(kKilnFloat32, {1, 4}, "z");
    add = w.AddOp(kKilnBuiltinAdd, {x, k}, {y}, KilnAddParams{kKilnActNone, false});
    mul = w.AddOp(kKilnBuiltinMul, {y, x}, {z}, KilnMulParams{kKilnActNone});
    w.SetInputs({x});
    w.SetOutputs({z});
  }
};

TEST(MalformedModelTest, TheBaseModelIsValid) {
  SmallModel m;
  std::vector<uint8_t> bytes = m.w.Finish();
  ModelDesc model;
  std::string error;
  EXPECT_TRUE(ReadModel(bytes.data(), bytes.size(), &model, &error)) << error;
}

TEST(MalformedModelTest, EveryTruncationIsRefused) {
  SmallModel m;
  std::vector<uint8_t> bytes = m.w.Finish();
  ASSERT_GT(bytes.size(), 100u);
  for (size_t size = 0; size < bytes.size(); ++size) {
    SCOPED_TRACE("truncated to " + std::to_string(size) + " bytes");
    std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + static_cast<long>(size));
    EXPECT_MODEL_ERROR(truncated, "truncated");
  }
}

TEST(MalformedModelTest, TruncatedRealModelsAreRefused) {
  KILN_REQUIRE_MODELS();
  for (const char* file : {"lr_add.tflite", "lr_mobilenet_like.tflite", "tm_micro_speech_int8.tflite"}) {
    std::vector<uint8_t> bytes = ::kiln::testing::ReadFileBytes(::kiln::testing::ModelPath(file));
    ASSERT_FALSE(bytes.empty()) << file;
    size_t step = std::max<size_t>(1, bytes.size() / 300);
    ModelDesc full;
    std::string error;
    ASSERT_TRUE(ReadModel(bytes.data(), bytes.size(), &full, &error)) << error;
    std::vector<size_t> sizes;
    for (size_t size = 0; size < bytes.size(); size += step) sizes.push_back(size);
    for (size_t cut = 1; cut <= 32 && cut <= bytes.size(); ++cut) sizes.push_back(bytes.size() - cut);
    for (size_t size : sizes) {
      SCOPED_TRACE(std::string(file) + " truncated to " + std::to_string(size) + " bytes");
      std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + static_cast<long>(size));
      ModelDesc model;
      if (ReadModel(truncated.data(), truncated.size(), &model, &error)) {
        // Only trailing padding that nothing refers to may go; the model must then read the same.
        EXPECT_GE(size + 16, bytes.size());
        ASSERT_EQ(model.subgraphs.size(), full.subgraphs.size());
        EXPECT_EQ(model.subgraphs[0].tensors.size(), full.subgraphs[0].tensors.size());
        EXPECT_EQ(model.subgraphs[0].operators.size(), full.subgraphs[0].operators.size());
        continue;
      }
      EXPECT_NE(error.find("truncated"), std::string::npos) << error;
    }
  }
}

TEST(MalformedModelTest, NullAndTinyInputs) {
  ModelDesc model;
  std::string error;
  EXPECT_FALSE(ReadModel(nullptr, 64, &model, &error));
  EXPECT_NE(error.find("no data"), std::string::npos) << error;
  EXPECT_FALSE(ReadModel(nullptr, 0, &model, &error));
  EXPECT_NE(error.find("truncated: 0 bytes"), std::string::npos) << error;
  EXPECT_MODEL_ERROR(std::vector<uint8_t>{}, "truncated: 0 bytes");
}

TEST(MalformedModelTest, WrongFileIdentifier) {
  SmallModel m;
  m.w.OverrideFileIdentifier("ABCD");
  EXPECT_MODEL_ERROR(m.w.Finish(), "not a .tflite model: file identifier is 'ABCD', expected 'TFL3'");

  std::string text = "this is a text file, not a model at all";
  EXPECT_MODEL_ERROR(std::vector<uint8_t>(text.begin(), text.end()),
                     "file identifier is ' is ', expected 'TFL3'");
}

// Signatures are read (names and tensors in order), and one that points outside the model is refused by name.
TEST(MalformedModelTest, SignaturesAreCheckedAgainstTheirSubgraph) {
  SmallModel good;
  good.w.AddSignature("serving_default", 0, {{"in_x", good.x}}, {{"out_z", good.z}, {"out_y", good.y}});
  std::vector<uint8_t> bytes = good.w.Finish();
  ModelDesc model;
  std::string error;
  ASSERT_TRUE(ReadModel(bytes.data(), bytes.size(), &model, &error)) << error;
  ASSERT_EQ(model.signatures.size(), 1u);
  EXPECT_EQ(model.signatures[0].key, "serving_default");
  ASSERT_EQ(model.signatures[0].outputs.size(), 2u);
  EXPECT_EQ(model.signatures[0].outputs[1].name, "out_y");
  EXPECT_EQ(model.signatures[0].outputs[1].tensor_index, good.y);

  SmallModel bad_tensor;
  bad_tensor.w.AddSignature("run", 0, {{"in_x", 99}}, {});
  EXPECT_MODEL_ERROR(bad_tensor.w.Finish(),
                     "signature 0 ('run'): input 0 ('in_x') refers to tensor 99, but subgraph 0 has 4 tensors");
  SmallModel bad_subgraph;
  bad_subgraph.w.AddSignature("train", 3, {}, {});
  EXPECT_MODEL_ERROR(bad_subgraph.w.Finish(), "signature 0 ('train'): subgraph 3 does not exist (the model has 1)");
}

TEST(MalformedModelTest, CorruptRootOffset) {
  SmallModel m;
  std::vector<uint8_t> bytes = m.w.Finish();
  uint32_t huge = 0x7ffffff0;
  std::memcpy(bytes.data(), &huge, 4);
  EXPECT_MODEL_ERROR(bytes, "FlatBuffers verification failed");
}

TEST(MalformedModelTest, RandomByteFlipsNeverCrash) {
  SmallModel m;
  std::vector<uint8_t> bytes = m.w.Finish();
  std::mt19937 rng(1234);
  int refused = 0;
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> corrupt = bytes;
    for (int flips = 0; flips < 3; ++flips)
      corrupt[rng() % corrupt.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    ModelDesc model;
    std::string error;
    if (!ReadModel(corrupt.data(), corrupt.size(), &model, &error)) {
      ++refused;
      EXPECT_FALSE(error.empty());
    }
  }
  EXPECT_GT(refused, 100);
}

TEST(MalformedModelTest, UnsupportedSchemaVersion) {
  // Newer and older versions alike, as LiteRT refuses them (an absent version field reads as 0).
  for (uint32_t version : {4u, 2u, 0u}) {
    SmallModel m;
    m.w.OverrideSchemaVersion(version);
    EXPECT_MODEL_ERROR(m.w.Finish(), "unsupported .tflite schema version " + std::to_string(version) +
                                         " (Kiln reads version 3, the only one LiteRT loads)");
  }
}

TEST(MalformedModelTest, BufferIndexOutOfRange) {
  SmallModel m;
  m.w.OverrideTensorBuffer(m.k, 99);
  EXPECT_MODEL_ERROR(m.w.Finish(),
                     "subgraph 0, tensor 1 'k': buffer index 99 is out of range (the model has 2 buffers)");
}

TEST(MalformedModelTest, ExternalBufferOutOfRange) {
  SmallModel m;
  m.w.OverrideExternalBuffer(m.k, 1u << 20, 16);
  EXPECT_MODEL_ERROR(m.w.Finish(),
                     "buffer 1: external data at offset 1048576 with size 16 lies outside the model");

  SmallModel wraps;
  wraps.w.OverrideExternalBuffer(wraps.k, 64, ~uint64_t{0} - 8);
  EXPECT_MODEL_ERROR(wraps.w.Finish(), "lies outside the model");
}

TEST(MalformedModelTest, ExternalBufferOfTheWrongSize) {
  SmallModel m;
  m.w.OverrideExternalBuffer(m.k, 16, 8);
  EXPECT_MODEL_ERROR(
      m.w.Finish(),
      "tensor 1 'k' (float32[1, 4]): constant data in buffer 1 is 8 bytes, but the shape needs 16");
}

TEST(MalformedModelTest, NegativeDimension) {
  SmallModel m;
  m.w.AddTensor(kKilnFloat32, {2, -3}, "bad");
  EXPECT_MODEL_ERROR(m.w.Finish(),
                     "subgraph 0, tensor 4 'bad': negative dimension -3 at index 1 of shape [2, -3]");
}

TEST(MalformedModelTest, HugeDimensionsOverflow) {
  SmallModel m;
  m.w.AddTensor(kKilnFloat32, {1 << 30, 1 << 30, 1 << 30}, "huge");
  EXPECT_MODEL_ERROR(m.w.Finish(),
                     "tensor 4 'huge': shape [1073741824, 1073741824, 1073741824] is too large");

  SmallModel big;
  big.w.AddTensor(kKilnComplex128, {1 << 16, 1 << 16, 1 << 6}, "big");  // 2^38 elements * 16 bytes
  EXPECT_MODEL_ERROR(big.w.Finish(), "tensor 4 'big'");
}

// A tensor of 0 elements that nothing writes holds no data (no buffer, or a buffer of 0 bytes): LiteRT takes it,
// and so does Kiln, as an empty constant. One with elements and no data is still refused.
TEST(MalformedModelTest, EmptyTensorWithoutDataIsAnEmptyConstant) {
  for (bool zero_byte_buffer : {false, true}) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int e = zero_byte_buffer ? w.AddConstTensor(kKilnFloat32, {0, 3}, "e", nullptr, 0)
                                   : w.AddTensor(kKilnFloat32, {0, 3}, "e");
    const int y = w.AddTensor(kKilnFloat32, {2, 3}, "y");
    w.AddOp(kKilnBuiltinConcatenation, {x, e}, {y}, KilnConcatenationParams{0, kKilnActNone});
    w.SetInputs({x});
    w.SetOutputs({y});
    const std::vector<uint8_t> bytes = w.Finish();
    ASSERT_FALSE(bytes.empty()) << w.error();
    ModelDesc model;
    std::string error;
    ASSERT_TRUE(ReadModel(bytes.data(), bytes.size(), &model, &error)) << error;
    const TensorDesc& empty = model.subgraphs[0].tensors[static_cast<size_t>(e)];
    EXPECT_NE(empty.data, nullptr);
    EXPECT_EQ(empty.data_size, 0u);
  }
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {2, 3}, "x");
  const int e = w.AddTensor(kKilnFloat32, {1, 3}, "e");
  const int y = w.AddTensor(kKilnFloat32, {3, 3}, "y");
  w.AddOp(kKilnBuiltinConcatenation, {x, e}, {y}, KilnConcatenationParams{0, kKilnActNone});
  w.SetInputs({x});
  w.SetOutputs({y});
  EXPECT_MODEL_ERROR(w.Finish(), "input 1 reads tensor 1 'e' before it has a value");
}

TEST(MalformedModelTest, OpReadsATensorThatDoesNotExist) {
  SmallModel m;
  m.w.OverrideOpInputs(m.mul, {m.y, 57});
  EXPECT_MODEL_ERROR(
      m.w.Finish(),
      "subgraph 0, operator 1 (MUL): input 1 refers to tensor 57, but the subgraph has 4 tensors");

  SmallModel negative;
  negative.w.OverrideOpInputs(negative.mul, {negative.y, -2});
  EXPECT_MODEL_ERROR(negative.w.Finish(), "input 1 refers to tensor -2");
}

TEST(MalformedModelTest, OpWritesATensorThatDoesNotExistOrIsAbsent) {
  SmallModel m;
  m.w.AddOp(kKilnBuiltinRelu, {m.z}, {9});
  EXPECT_MODEL_ERROR(m.w.Finish(),
                     "operator 2 (RELU): output 0 refers to tensor 9, but the subgraph has 4 tensors");

  SmallModel absent;
  absent.w.AddOp(kKilnBuiltinRelu, {absent.z}, {-1});
  EXPECT_MODEL_ERROR(absent.w.Finish(), "output 0 refers to tensor -1");
}

TEST(MalformedModelTest, OpcodeIndexOutOfRange) {
  SmallModel m;
  m.w.OverrideOpcodeIndex(m.mul, 9);
  EXPECT_MODEL_ERROR(
      m.w.Finish(),
      "subgraph 0, operator 1: opcode_index 9 is out of range (the model has 2 operator codes)");
}

TEST(MalformedModelTest, CyclicGraph) {
  ModelWriter w;
  int x = w.AddTensor(kKilnFloat32, {2}, "x");
  int a = w.AddTensor(kKilnFloat32, {2}, "a");
  int b = w.AddTensor(kKilnFloat32, {2}, "b");
  w.AddOp(kKilnBuiltinAdd, {x, b}, {a});  // reads b, which the next op computes from a
  w.AddOp(kKilnBuiltinRelu, {a}, {b});
  w.SetInputs({x});
  w.SetOutputs({b});
  EXPECT_MODEL_ERROR(
      w.Finish(),
      "subgraph 0, operator 0 (ADD): input 1 reads tensor 2 'b' before it has a value: it is written "
      "by operator 1 (RELU), which comes later");
}

TEST(MalformedModelTest, OpReadingItsOwnOutput) {
  ModelWriter w;
  int x = w.AddTensor(kKilnFloat32, {2}, "x");
  int a = w.AddTensor(kKilnFloat32, {2}, "a");
  w.AddOp(kKilnBuiltinAdd, {x, a}, {a});
  w.SetInputs({x});
  w.SetOutputs({a});
  EXPECT_MODEL_ERROR(w.Finish(),
                     "operator 0 (ADD): input 1 reads tensor 1 'a' before it has a value: the operator "
                     "writes it itself");
}

TEST(MalformedModelTest, UnsortedGraph) {
  ModelWriter w;
  int x = w.AddTensor(kKilnFloat32, {2}, "x");
  int a = w.AddTensor(kKilnFloat32, {2}, "a");
  int b = w.AddTensor(kKilnFloat32, {2}, "b");
  w.AddOp(kKilnBuiltinTanh, {a}, {b});  // needs a, computed by the op after it
  w.AddOp(kKilnBuiltinRelu, {x}, {a});
  w.SetInputs({x});
  w.SetOutputs({b});
  EXPECT_MODEL_ERROR(w.Finish(),
                     "operator 0 (TANH): input 0 reads tensor 1 'a' before it has a value: it is "
                     "written by operator 1 (RELU), which comes later: the operators are not in "
                     "execution order");
}

TEST(MalformedModelTest, InputThatNothingProduces) {
  ModelWriter w;
  int x = w.AddTensor(kKilnFloat32, {2}, "x");
  int orphan = w.AddTensor(kKilnFloat32, {2}, "orphan");
  int y = w.AddTensor(kKilnFloat32, {2}, "y");
  w.AddOp(kKilnBuiltinAdd, {x, orphan}, {y});
  w.SetInputs({x});
  w.SetOutputs({y});
  EXPECT_MODEL_ERROR(w.Finish(),
                     "input 1 reads tensor 1 'orphan' before it has a value: no operator writes it");
}

TEST(MalformedModelTest, ConstantDataOfTheWrongSize) {
  SmallModel m;
  m.w.AddConstTensor<float>(kKilnFloat32, {2, 2}, "short", {1, 2, 3});
  EXPECT_MODEL_ERROR(m.w.Finish(),
                     "subgraph 0, tensor 4 'short' (float32[2, 2]): constant data in buffer 2 is 12 "
                     "bytes, but the shape needs 16");
}

TEST(MalformedModelTest, TensorWrittenTwice) {
  SmallModel m;
  m.w.AddOp(kKilnBuiltinRelu, {m.x}, {m.y});
  EXPECT_MODEL_ERROR(m.w.Finish(),
                     "subgraph 0: tensor 2 'y' is written by both operator 0 (ADD) and operator 2 (RELU)");
}

TEST(MalformedModelTest, OpWritesAConstant) {
  SmallModel m;
  m.w.AddOp(kKilnBuiltinRelu, {m.x}, {m.k});
  EXPECT_MODEL_ERROR(m.w.Finish(), "operator 2 (RELU): output 0 writes tensor 1 'k', which is a constant");
}

TEST(MalformedModelTest, SubgraphInputsAndOutputsOutOfRange) {
  SmallModel m;
  m.w.SetOutputs({m.z, 40});
  EXPECT_MODEL_ERROR(m.w.Finish(),
                     "subgraph 0: output 1 refers to tensor 40, but the subgraph has 4 tensors");

  SmallModel in;
  in.w.SetInputs({-1});
  EXPECT_MODEL_ERROR(in.w.Finish(), "subgraph 0: input 0 refers to tensor -1");
}

TEST(MalformedModelTest, OutputThatNothingWrites) {
  SmallModel m;
  int lonely = m.w.AddTensor(kKilnFloat32, {1}, "lonely");
  m.w.SetOutputs({m.z, lonely});
  EXPECT_MODEL_ERROR(m.w.Finish(), "subgraph 0: output 1 is tensor 4 'lonely', which no operator writes");
}

TEST(MalformedModelTest, ReshapeWithTooManyDimensions) {
  SmallModel m;
  int r = m.w.AddTensor(kKilnFloat32, {4}, "r");
  int op = m.w.AddOp(kKilnBuiltinReshape, {m.z}, {r});
  m.w.OverrideNewShape(op, {1, 1, 1, 1, 1, 1, 1, 1, 4});
  EXPECT_MODEL_ERROR(m.w.Finish(),
                     "operator 2 (RESHAPE): new_shape has 9 dimensions, more than the 8 Kiln supports");
}

TEST(MalformedModelTest, OptionsOfTheWrongType) {
  SmallModel m;
  int r = m.w.AddTensor(kKilnFloat32, {1, 4}, "r");
  m.w.AddOp(kKilnBuiltinConv2d, {m.z, m.k}, {r}, KilnAddParams{kKilnActNone, false});
  EXPECT_MODEL_ERROR(m.w.Finish(),
                     "operator 2 (CONV_2D): builtin options are AddOptions, expected Conv2DOptions");
}

TEST(MalformedModelTest, UnknownEnumValuesInOptions) {
  SmallModel m;
  int r = m.w.AddTensor(kKilnFloat32, {1, 4}, "r");
  m.w.AddOp(kKilnBuiltinAdd, {m.z, m.k}, {r}, KilnAddParams{kKilnActSigmoid, false});
  EXPECT_MODEL_ERROR(m.w.Finish(), "operator 2 (ADD): unknown fused activation function 6");

  SmallModel pad;
  int p = pad.w.AddTensor(kKilnFloat32, {1, 4}, "p");
  pad.w.AddOp(kKilnBuiltinMaxPool2d, {pad.z}, {p},
              KilnPoolParams{kKilnPaddingUnknown, 1, 1, 1, 1, kKilnActNone});
  EXPECT_MODEL_ERROR(pad.w.Finish(), "operator 2 (MAX_POOL_2D): unknown padding -1");
}

TEST(MalformedModelTest, ZeroStridesAndFilters) {
  SmallModel m;
  int r = m.w.AddTensor(kKilnFloat32, {1, 4}, "r");
  m.w.AddOp(kKilnBuiltinAveragePool2d, {m.z}, {r},
            KilnPoolParams{kKilnPaddingSame, 1, 1, 0, 2, kKilnActNone});
  EXPECT_MODEL_ERROR(m.w.Finish(), "operator 2 (AVERAGE_POOL_2D): filter_width must be at least 1 (got 0)");

  SmallModel d;
  int q = d.w.AddTensor(kKilnFloat32, {1, 4}, "q");
  d.w.AddOp(kKilnBuiltinDepthwiseConv2d, {d.z, d.k}, {q},
            KilnDepthwiseConvParams{kKilnPaddingSame, 1, 1, 1, kKilnActNone, 1, 0});
  EXPECT_MODEL_ERROR(d.w.Finish(),
                     "operator 2 (DEPTHWISE_CONV_2D): dilation_h_factor must be at least 1 (got 0)");
}

TEST(MalformedModelTest, InconsistentQuantization) {
  SmallModel m;
  m.w.SetQuantization(m.x, {0.5f, 0.25f}, {0});
  EXPECT_MODEL_ERROR(m.w.Finish(), "tensor 0 'x': quantization has 2 scales but 1 zero points");

  SmallModel channels;
  channels.w.SetQuantization(channels.x, {0.5f, 0.25f, 0.1f}, {0, 0, 0}, 1);
  EXPECT_MODEL_ERROR(channels.w.Finish(),
                     "tensor 0 'x': 3 per-channel scales, but dimension 1 of shape [1, 4] has size 4");

  SmallModel dimension;
  dimension.w.SetQuantization(dimension.x, {0.5f, 0.25f}, {0, 0}, 7);
  EXPECT_MODEL_ERROR(dimension.w.Finish(), "quantized_dimension 7 is out of range for shape [1, 4]");

  SmallModel zero_point;
  zero_point.w.SetQuantization(zero_point.x, {0.5f}, {int64_t{1} << 40});
  EXPECT_MODEL_ERROR(zero_point.w.Finish(), "zero point 0 (1099511627776) does not fit in 32 bits");
}

TEST(MalformedModelTest, ShapeSignatureDisagreesWithShape) {
  SmallModel m;
  m.w.SetShapeSignature(m.x, {1, 5});
  EXPECT_MODEL_ERROR(m.w.Finish(),
                     "tensor 0 'x': shape_signature [1, 5] disagrees with shape [1, 4] at index 1");
}

TEST(MalformedModelTest, UnalignedData) {
  SmallModel m;
  std::vector<uint8_t> bytes = m.w.Finish();
  std::vector<uint8_t> shifted(bytes.size() + 1);
  std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
  ModelDesc model;
  std::string error;
  EXPECT_FALSE(ReadModel(shifted.data() + 1, bytes.size(), &model, &error));
  EXPECT_NE(error.find("4-byte aligned"), std::string::npos) << error;
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// ../shared/repro/model_reader_misaligned_int64.tflite: a quantization zero_point vector (int64) that is only
// 4-byte aligned. Reading it must not load misaligned 8-byte values (UBSan, in the asan preset, stops the
// test if it does); the model reads as it did before, or is refused with a message, never anything else.
TEST(MalformedModelTest, MisalignedInt64VectorIsReadSafely) {
  const std::string path = std::string(KILN_REPRO_DIR) + "/model_reader_misaligned_int64.tflite";
  const std::vector<uint8_t> bytes = testing::ReadFileBytes(path);
  KILN_SKIP_WITHOUT_SHARED_DATA(bytes.empty(), path << " is absent (the shared repro folder is not there)");
  // Also at an odd offset of an 8-aligned buffer, as a model embedded in a larger file would be.
  for (size_t shift : {0, 4}) {
    std::vector<uint64_t> storage(bytes.size() / 8 + 2);
    uint8_t* at = reinterpret_cast<uint8_t*>(storage.data()) + shift;
    std::memcpy(at, bytes.data(), bytes.size());
    ModelDesc model;
    std::string error;
    if (!ReadModel(at, bytes.size(), &model, &error)) {
      EXPECT_FALSE(error.empty());
    }
  }
}

}  // namespace
}  // namespace kiln
