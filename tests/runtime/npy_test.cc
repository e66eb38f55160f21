// The .npy reader and writer: round trips, and clear errors on malformed files (tools/npy.h).

#include "tools/npy.h"

#include <gtest/gtest.h>

#include <cstring>

#include "tests/test_util.h"

namespace kiln {
namespace {

TEST(Npy, RoundTripFloat) {
  const float values[6] = {1.5f, -2.0f, 3.25f, 0.0f, 1e-8f, 42.0f};
  const std::vector<uint8_t> bytes = SerializeNpy(kKilnFloat32, {2, 3}, values, sizeof values);
  EXPECT_EQ((bytes.size() - sizeof values) % 64, 0u) << "data must start 64-byte aligned";
  NpyArray array;
  std::string error;
  ASSERT_TRUE(ParseNpy(bytes, &array, &error)) << error;
  EXPECT_EQ(array.type, kKilnFloat32);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(array.data.size(), sizeof values);
  EXPECT_EQ(std::memcmp(array.data.data(), values, sizeof values), 0);
}

TEST(Npy, OneDimensionalAndScalarShapes) {
  const int8_t v[3] = {-1, 0, 1};
  NpyArray array;
  std::string error;
  ASSERT_TRUE(ParseNpy(SerializeNpy(kKilnInt8, {3}, v, 3), &array, &error)) << error;
  EXPECT_EQ(array.shape, (std::vector<int64_t>{3}));
  ASSERT_TRUE(ParseNpy(SerializeNpy(kKilnInt8, {}, v, 1), &array, &error)) << error;
  EXPECT_TRUE(array.shape.empty());
  EXPECT_EQ(array.data.size(), 1u);
}

TEST(Npy, RejectsBadInput) {
  NpyArray array;
  std::string error;
  EXPECT_FALSE(ParseNpy({1, 2, 3}, &array, &error));
  EXPECT_NE(error.find("magic"), std::string::npos) << error;
  const float v[4] = {};
  std::vector<uint8_t> bytes = SerializeNpy(kKilnFloat32, {4}, v, sizeof v);
  bytes.resize(bytes.size() - 3);
  EXPECT_FALSE(ParseNpy(bytes, &array, &error));
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  std::vector<uint8_t> big = SerializeNpy(kKilnFloat32, {4}, v, sizeof v);
  const std::string header(big.begin(), big.end());
  const size_t pos = header.find("<f4");
  big[pos] = '>';
  EXPECT_FALSE(ParseNpy(big, &array, &error));
  EXPECT_NE(error.find("not supported"), std::string::npos) << error;
}

TEST(Npy, RoundTripEveryIntegerTypeAndBool) {
  struct Case {
    KilnType type;
    const char* descr;
    size_t size;
  };
  for (const Case& c : {Case{kKilnInt8, "|i1", 1}, Case{kKilnUInt8, "|u1", 1}, Case{kKilnInt16, "<i2", 2},
                        Case{kKilnUInt16, "<u2", 2}, Case{kKilnInt32, "<i4", 4}, Case{kKilnUInt32, "<u4", 4},
                        Case{kKilnInt64, "<i8", 8}, Case{kKilnUInt64, "<u8", 8}, Case{kKilnBool, "|b1", 1}}) {
    SCOPED_TRACE(c.descr);
    EXPECT_EQ(NpyDescr(c.type), c.descr);
    std::vector<uint8_t> data(3 * 2 * c.size);
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = c.type == kKilnBool ? i % 2 : static_cast<uint8_t>(0xf0 + i);
    const std::vector<uint8_t> bytes = SerializeNpy(c.type, {3, 2}, data.data(), data.size());
    EXPECT_NE(std::string(bytes.begin(), bytes.end()).find(std::string("'descr': '") + c.descr + "'"),
              std::string::npos);
    NpyArray array;
    std::string error;
    ASSERT_TRUE(ParseNpy(bytes, &array, &error)) << error;
    EXPECT_EQ(array.type, c.type);
    EXPECT_EQ(array.shape, (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(array.data, data);
  }
}

TEST(Npy, DequantizePerTensorAndPerChannel) {
  // int16 [2, 3, 2], three channels along dimension 1: element i is in channel (i / 2) % 3.
  NpyArray q;
  q.type = kKilnInt16;
  q.shape = {2, 3, 2};
  const int16_t values[12] = {0, 1, 2, 3, 4, 5, -6, -7, 8, 9, 30000, -30000};
  q.data.assign(reinterpret_cast<const uint8_t*>(values),
                reinterpret_cast<const uint8_t*>(values) + sizeof values);
  Quantization per_channel{{0.5f, 0.25f, 2.0f}, {1, -1, 0}, 1};
  NpyArray real;
  std::string error;
  ASSERT_TRUE(Dequantize(q, per_channel, &real, &error)) << error;
  EXPECT_EQ(real.type, kKilnFloat32);
  EXPECT_EQ(real.shape, q.shape);
  ASSERT_EQ(real.data.size(), 12 * sizeof(float));
  std::vector<float> got(12);
  std::memcpy(got.data(), real.data.data(), real.data.size());
  const std::vector<float> expected = {-0.5f, 0.0f,  0.75f, 1.0f, 8.0f,     10.0f,
                                       -3.5f, -4.0f, 2.25f, 2.5f, 60000.0f, -60000.0f};
  EXPECT_EQ(got, expected);

  Quantization per_tensor{{0.5f}, {2}, 7};  // one scale: the dimension is not used
  ASSERT_TRUE(Dequantize(q, per_tensor, &real, &error)) << error;
  std::memcpy(got.data(), real.data.data(), real.data.size());
  EXPECT_EQ(got[0], -1.0f);
  EXPECT_EQ(got[11], -15001.0f);

  Quantization wrong{{0.5f, 0.25f}, {0, 0}, 1};  // two scales for a dimension of 3
  EXPECT_FALSE(Dequantize(q, wrong, &real, &error));
  EXPECT_NE(error.find("do not match dimension 1"), std::string::npos) << error;
  EXPECT_FALSE(Dequantize(q, Quantization{}, &real, &error));
  EXPECT_NE(error.find("not quantized"), std::string::npos) << error;
  q.type = kKilnFloat32;
  EXPECT_FALSE(Dequantize(q, per_tensor, &real, &error));
  EXPECT_NE(error.find("cannot dequantize a float32"), std::string::npos) << error;
}

TEST(Npy, ReadsOracleFiles) {
  KILN_REQUIRE_MODELS();
  NpyArray array;
  std::string error;
  ASSERT_TRUE(ReadNpyFile(testing::ModelPath("oracle/lr_add/input_0.npy"), &array, &error)) << error;
  EXPECT_EQ(array.type, kKilnFloat32);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{1, 8, 8, 3}));
}

}  // namespace
}  // namespace kiln
