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
