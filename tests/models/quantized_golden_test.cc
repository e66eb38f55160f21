// The int8 models against the reference data that ships with them (../shared/models/MANIFEST.md) and against
// figures measured once from LiteRT (ai-edge-litert): its reference resolver (OpResolverType.BUILTIN_REF) for
// Kiln's reference kernels, its default XNNPACK path for Kiln's default path. These need neither LiteRT nor the
// network, so they hold on every build. tests/models/litert_compare.py checks the
// same models byte for byte against LiteRT itself on seeded inputs where LiteRT is installed.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/c_api.h"
#include "tests/test_util.h"

namespace kiln {
namespace {

enum Path { kDefaultPath, kReferenceKernels };

// Runs `model` on one int8 input and returns output 0's bytes; fails the test on any error.
std::vector<int8_t> RunInt8(const std::string& model, const std::vector<int8_t>& input,
                            Path path = kReferenceKernels) {
  std::vector<int8_t> result;
  KilnModel* m = KilnModelCreateFromFile(testing::ModelPath(model).c_str());
  EXPECT_NE(m, nullptr) << model;
  if (m == nullptr) return result;
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetUseReferenceKernels(options, path == kReferenceKernels);
  KilnInterpreter* interpreter = KilnInterpreterCreate(m, options);
  KilnInterpreterOptionsDelete(options);
  EXPECT_NE(interpreter, nullptr) << model;
  if (interpreter != nullptr && KilnInterpreterAllocateTensors(interpreter) == kKilnOk) {
    KilnTensor* in = KilnInterpreterGetInputTensor(interpreter, 0);
    EXPECT_EQ(KilnTensorType(in), kKilnInt8);
    EXPECT_EQ(KilnTensorByteSize(in), input.size()) << model;
    if (KilnTensorByteSize(in) == input.size() &&
        KilnTensorCopyFromBuffer(in, input.data(), input.size()) == kKilnOk &&
        KilnInterpreterInvoke(interpreter) == kKilnOk) {
      const KilnTensor* out = KilnInterpreterGetOutputTensor(interpreter, 0);
      const int8_t* data = static_cast<const int8_t*>(KilnTensorData(out));
      result.assign(data, data + KilnTensorByteSize(out));
    } else {
      ADD_FAILURE() << model << ": invoke failed";
    }
  } else {
    ADD_FAILURE() << model << ": AllocateTensors failed";
  }
  KilnInterpreterDelete(interpreter);
  KilnModelDelete(m);
  return result;
}

std::vector<int8_t> ReadInt8(const std::string& path) {
  const std::vector<uint8_t> bytes = testing::ReadFileBytes(path);
  return std::vector<int8_t>(bytes.begin(), bytes.end());
}

TEST(QuantizedGoldenTest, NetworkTesterEqualsItsExpectedOutput) {
  KILN_REQUIRE_MODELS();
  const std::vector<int8_t> input = ReadInt8(testing::ModelPath("tm_network_tester_ref/input0.bin"));
  const std::vector<int8_t> expected = ReadInt8(testing::ModelPath("tm_network_tester_ref/expected_output0.bin"));
  ASSERT_EQ(input.size(), 1024u);
  ASSERT_EQ(expected.size(), 256u);
  EXPECT_EQ(RunInt8("tm_network_tester.tflite", input), expected);
  // The default path rounds XNNPACK's way: within one step of the golden everywhere, and exactly as LiteRT's
  // default path, which also gives 2 of the 256 values one step off.
  const std::vector<int8_t> fast = RunInt8("tm_network_tester.tflite", input, kDefaultPath);
  ASSERT_EQ(fast.size(), expected.size());
  int off = 0;
  for (size_t i = 0; i < fast.size(); ++i) {
    EXPECT_LE(std::abs(fast[i] - expected[i]), 1) << "element " << i;
    off += fast[i] != expected[i];
  }
  EXPECT_LE(off, 2);
}

TEST(QuantizedGoldenTest, HelloWorldFollowsSine) {
  KILN_REQUIRE_MODELS();
  // MANIFEST.md: inputs -96, -63, -34, 0 stand for 0.77, 1.57, 2.3, 3.14; dequantized outputs within 0.05 of sin.
  KilnModel* m = KilnModelCreateFromFile(testing::ModelPath("tm_hello_world_int8.tflite").c_str());
  ASSERT_NE(m, nullptr);
  KilnInterpreter* interpreter = KilnInterpreterCreate(m, nullptr);
  ASSERT_NE(interpreter, nullptr);
  ASSERT_EQ(KilnInterpreterAllocateTensors(interpreter), kKilnOk);
  const KilnQuantizationParams q = KilnTensorQuantizationParams(KilnInterpreterGetOutputTensor(interpreter, 0));
  KilnInterpreterDelete(interpreter);
  KilnModelDelete(m);
  const int8_t inputs[] = {-96, -63, -34, 0};
  const double xs[] = {0.77, 1.57, 2.3, 3.14};
  for (int i = 0; i < 4; ++i) {
    const std::vector<int8_t> y = RunInt8("tm_hello_world_int8.tflite", {inputs[i]});
    ASSERT_EQ(y.size(), 1u);
    const double value = (y[0] - q.zero_point) * static_cast<double>(q.scale);
    EXPECT_NEAR(value, std::sin(xs[i]), 0.05) << "x = " << xs[i];
  }
}

TEST(QuantizedGoldenTest, KeywordSpottingReferenceInputGivesLiteRTsOutput) {
  KILN_REQUIRE_MODELS();
  const std::vector<int8_t> input = ReadInt8(testing::ModelPath("mt_kws_dscnn_ref/input0_int8_1x49x10x1.bin"));
  ASSERT_EQ(input.size(), 490u);
  // LiteRT's reference resolver (and its default path) on this input.
  const std::vector<int8_t> litert = {-128, -128, -128, -128, -128, 127, -128, -128, -128, -128, -128, -128};
  EXPECT_EQ(RunInt8("mt_kws_dscnn_int8.tflite", input), litert);
  EXPECT_EQ(RunInt8("mt_kws_dscnn_int8.tflite", input, kDefaultPath), litert);
}

TEST(QuantizedGoldenTest, MobileNetV2ClassifiesTheDogAsLiteRTDoes) {
  KILN_REQUIRE_MODELS();
  const std::vector<int8_t> input =
      ReadInt8(testing::ModelPath("tm_mobilenet_v2_int8_224_ref/dog_input_1x3x224x224_int8.bin"));
  ASSERT_EQ(input.size(), 3u * 224 * 224);
  const std::vector<int8_t> out = RunInt8("tm_mobilenet_v2_int8_224.tflite", input);
  ASSERT_EQ(out.size(), 1000u);
  size_t best = 0;
  for (size_t i = 1; i < out.size(); ++i) {
    if (out[i] > out[best]) best = i;
  }
  // LiteRT's reference resolver on this input: class 258 with score 101.
  EXPECT_EQ(best, 258u);
  EXPECT_EQ(out[best], 101);
  // LiteRT's default path (XNNPACK) on this input: the same class, with score 107 (its requantization rounds
  // in float, and 52 layers apart the two paths are several steps apart).
  const std::vector<int8_t> fast =
      RunInt8("tm_mobilenet_v2_int8_224.tflite", input, kDefaultPath);
  ASSERT_EQ(fast.size(), 1000u);
  size_t fast_best = 0;
  for (size_t i = 1; i < fast.size(); ++i) {
    if (fast[i] > fast[fast_best]) fast_best = i;
  }
  EXPECT_EQ(fast_best, 258u);
  EXPECT_EQ(fast[fast_best], 107);
}

}  // namespace
}  // namespace kiln
