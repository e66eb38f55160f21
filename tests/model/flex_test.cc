// The C accessors of kiln/flex.h over maps built by FlexMap, and over bytes that are not a map.
#include "kiln/flex.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "flatbuffers/flexbuffers.h"
#include "runtime/model/model_writer.h"
#include "tests/test_util.h"

namespace kiln {
namespace {

std::vector<uint8_t> SampleMap() {
  return FlexMap()
      .Float("offset", 0.5f)
      .Int("n", -3)
      .Bool("flag", true)
      .String("mode", "fast")
      .FloatVector("weights", {1.0f, 2.5f, -4.0f})
      .IntVector("dims", {7, 8})
      .Finish();
}

TEST(FlexTest, ReadsEveryKindOfValue) {
  std::vector<uint8_t> m = SampleMap();
  float f = 0;
  ASSERT_EQ(KilnFlexMapGetFloat(m.data(), m.size(), "offset", &f), kKilnOk);
  EXPECT_EQ(f, 0.5f);
  // Integers convert to float; floats do not convert to integers.
  ASSERT_EQ(KilnFlexMapGetFloat(m.data(), m.size(), "n", &f), kKilnOk);
  EXPECT_EQ(f, -3.0f);
  int64_t i = 0;
  ASSERT_EQ(KilnFlexMapGetInt(m.data(), m.size(), "n", &i), kKilnOk);
  EXPECT_EQ(i, -3);
  EXPECT_EQ(KilnFlexMapGetInt(m.data(), m.size(), "offset", &i), kKilnInvalidArgument);
  ASSERT_EQ(KilnFlexMapGetInt(m.data(), m.size(), "flag", &i), kKilnOk);
  EXPECT_EQ(i, 1);
  bool b = false;
  ASSERT_EQ(KilnFlexMapGetBool(m.data(), m.size(), "flag", &b), kKilnOk);
  EXPECT_TRUE(b);
  EXPECT_EQ(KilnFlexMapGetBool(m.data(), m.size(), "mode", &b), kKilnInvalidArgument);
  const char* s = nullptr;
  ASSERT_EQ(KilnFlexMapGetString(m.data(), m.size(), "mode", &s), kKilnOk);
  EXPECT_STREQ(s, "fast");
  EXPECT_EQ(KilnFlexMapGetString(m.data(), m.size(), "n", &s), kKilnInvalidArgument);

  float v[8] = {};
  int length = 0;
  ASSERT_EQ(KilnFlexMapGetFloatVector(m.data(), m.size(), "weights", v, 8, &length), kKilnOk);
  ASSERT_EQ(length, 3);
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[1], 2.5f);
  EXPECT_EQ(v[2], -4.0f);
  ASSERT_EQ(KilnFlexMapGetFloatVector(m.data(), m.size(), "dims", v, 8, &length), kKilnOk);
  ASSERT_EQ(length, 2);
  EXPECT_EQ(v[0], 7.0f);
  EXPECT_EQ(v[1], 8.0f);
  // A short buffer gets the first elements and the full length.
  float one[1] = {};
  ASSERT_EQ(KilnFlexMapGetFloatVector(m.data(), m.size(), "weights", one, 1, &length), kKilnOk);
  EXPECT_EQ(length, 3);
  EXPECT_EQ(one[0], 1.0f);
  ASSERT_EQ(KilnFlexMapGetFloatVector(m.data(), m.size(), "weights", nullptr, 0, &length), kKilnOk);
  EXPECT_EQ(length, 3);
  EXPECT_EQ(KilnFlexMapGetFloatVector(m.data(), m.size(), "mode", v, 8, &length), kKilnInvalidArgument);
  EXPECT_EQ(KilnFlexMapGetFloatVector(m.data(), m.size(), "weights", v, -1, &length), kKilnInvalidArgument);
}

TEST(FlexTest, EnumeratesEntriesInKeyOrder) {
  std::vector<uint8_t> m = SampleMap();
  int count = 0;
  ASSERT_EQ(KilnFlexMapSize(m.data(), m.size(), &count), kKilnOk);
  ASSERT_EQ(count, 6);
  std::vector<std::pair<std::string, KilnFlexValueKind>> entries;
  for (int i = 0; i < count; ++i) {
    const char* key = nullptr;
    KilnFlexValueKind kind = kKilnFlexOther;
    ASSERT_EQ(KilnFlexMapEntry(m.data(), m.size(), i, &key, &kind), kKilnOk);
    entries.emplace_back(key, kind);
  }
  std::vector<std::pair<std::string, KilnFlexValueKind>> expected = {
      {"dims", kKilnFlexVector}, {"flag", kKilnFlexBool},    {"mode", kKilnFlexString},
      {"n", kKilnFlexInt},       {"offset", kKilnFlexFloat}, {"weights", kKilnFlexVector}};
  EXPECT_EQ(entries, expected);
  const char* key = nullptr;
  KilnFlexValueKind kind;
  EXPECT_EQ(KilnFlexMapEntry(m.data(), m.size(), 6, &key, &kind), kKilnInvalidArgument);
  EXPECT_EQ(KilnFlexMapEntry(m.data(), m.size(), -1, &key, &kind), kKilnInvalidArgument);
}

TEST(FlexTest, MissingKeysAndNullArguments) {
  std::vector<uint8_t> m = SampleMap();
  float f = 0;
  EXPECT_EQ(KilnFlexMapGetFloat(m.data(), m.size(), "absent", &f), kKilnInvalidArgument);
  EXPECT_EQ(KilnFlexMapGetFloat(m.data(), m.size(), nullptr, &f), kKilnInvalidArgument);
  EXPECT_EQ(KilnFlexMapGetFloat(m.data(), m.size(), "offset", nullptr), kKilnInvalidArgument);
  // No options at all: an empty map.
  int count = -1;
  ASSERT_EQ(KilnFlexMapSize(nullptr, 0, &count), kKilnOk);
  EXPECT_EQ(count, 0);
  EXPECT_EQ(KilnFlexMapGetFloat(nullptr, 0, "offset", &f), kKilnInvalidArgument);
  EXPECT_EQ(KilnFlexMapGetFloat(nullptr, 16, "offset", &f), kKilnInvalidArgument);
}

TEST(FlexTest, LaterValuesReplaceEarlierOnes) {
  std::vector<uint8_t> m = FlexMap().Int("n", 1).Int("n", 2).Finish();
  int64_t n = 0;
  ASSERT_EQ(KilnFlexMapGetInt(m.data(), m.size(), "n", &n), kKilnOk);
  EXPECT_EQ(n, 2);
}

TEST(FlexTest, RootThatIsNotAMap) {
  flexbuffers::Builder builder;
  builder.Vector([&] {
    builder.Int(1);
    builder.Int(2);
  });
  builder.Finish();
  std::vector<uint8_t> v = builder.GetBuffer();
  int count = 0;
  EXPECT_EQ(KilnFlexMapSize(v.data(), v.size(), &count), kKilnInvalidArgument);
  int64_t n = 0;
  EXPECT_EQ(KilnFlexMapGetInt(v.data(), v.size(), "n", &n), kKilnInvalidArgument);
}

TEST(FlexTest, TruncatedAndCorruptMapsAreRefusedWithoutCrashing) {
  std::vector<uint8_t> m = SampleMap();
  for (size_t size = 0; size < m.size(); ++size) {
    std::vector<uint8_t> truncated(m.begin(), m.begin() + static_cast<long>(size));
    float f = 0;
    int count = 0;
    // A prefix of a flexbuffer is never the same map: the root is read from the end.
    EXPECT_EQ(KilnFlexMapGetFloat(truncated.data(), truncated.size(), "offset", &f), kKilnInvalidArgument)
        << size;
    if (size > 0) {
      EXPECT_EQ(KilnFlexMapSize(truncated.data(), truncated.size(), &count), kKilnInvalidArgument);
    }
  }
  std::mt19937 rng(99);
  for (int round = 0; round < 3000; ++round) {
    std::vector<uint8_t> corrupt = m;
    for (int flips = 0; flips < 2; ++flips)
      corrupt[rng() % corrupt.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    float f = 0;
    int64_t i = 0;
    const char* s = nullptr;
    float v[4];
    int length = 0, count = 0;
    KilnFlexMapGetFloat(corrupt.data(), corrupt.size(), "offset", &f);
    KilnFlexMapGetInt(corrupt.data(), corrupt.size(), "n", &i);
    KilnFlexMapGetString(corrupt.data(), corrupt.size(), "mode", &s);
    if (s != nullptr) {
      // A string handed out lies inside the buffer, terminator included.
      EXPECT_GE(reinterpret_cast<const uint8_t*>(s), corrupt.data());
      EXPECT_LT(reinterpret_cast<const uint8_t*>(s) + std::strlen(s), corrupt.data() + corrupt.size());
    }
    KilnFlexMapGetFloatVector(corrupt.data(), corrupt.size(), "weights", v, 4, &length);
    if (KilnFlexMapSize(corrupt.data(), corrupt.size(), &count) == kKilnOk) {
      for (int e = 0; e < count; ++e) {
        const char* key = nullptr;
        KilnFlexValueKind kind;
        if (KilnFlexMapEntry(corrupt.data(), corrupt.size(), e, &key, &kind) == kKilnOk) {
          EXPECT_LT(reinterpret_cast<const uint8_t*>(key) + std::strlen(key),
                    corrupt.data() + corrupt.size());
        }
      }
    }
  }
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> garbage(1 + rng() % 64);
    for (uint8_t& byte : garbage) byte = static_cast<uint8_t>(rng());
    int count = 0;
    float f;
    KilnFlexMapSize(garbage.data(), garbage.size(), &count);
    KilnFlexMapGetFloat(garbage.data(), garbage.size(), "offset", &f);
  }
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// ../shared/repro/flex_unterminated_key.bin: a map whose key starts inside the buffer but has no terminator
// in it. The flexbuffers verifier accepts it; Kiln must refuse the map rather than hand out the key.
TEST(FlexTest, MapWithAnUnterminatedKeyIsRefused) {
  const std::string path = std::string(KILN_REPRO_DIR) + "/flex_unterminated_key.bin";
  const std::vector<uint8_t> bytes = testing::ReadFileBytes(path);
  KILN_SKIP_WITHOUT_SHARED_DATA(bytes.empty(), path << " is absent (the shared repro folder is not there)");
  int count = 0;
  EXPECT_EQ(KilnFlexMapSize(bytes.data(), bytes.size(), &count), kKilnInvalidArgument);
  const char* key = nullptr;
  KilnFlexValueKind kind;
  EXPECT_EQ(KilnFlexMapEntry(bytes.data(), bytes.size(), 0, &key, &kind), kKilnInvalidArgument);
  EXPECT_EQ(key, nullptr);
  float f = 0;
  EXPECT_EQ(KilnFlexMapGetFloat(bytes.data(), bytes.size(), "a", &f), kKilnInvalidArgument);
}

// A string value whose terminator byte is not 0: the FlexBuffers verifier checks that the string's bytes and one
// more lie inside the buffer, not that the byte is a NUL, so handing out c_str() let a reader run past the buffer
// (found by flex_fuzzer's campaign of 2026-12-05: heap-buffer-overflow in strlen of the returned string). The
// string is refused; the map's other values still read.
TEST(FlexTest, StringWithoutItsTerminatorIsRefused) {
  std::vector<uint8_t> m = FlexMap().String("mode", "fast").Int("n", 7).Finish();
  const char* s = nullptr;
  ASSERT_EQ(KilnFlexMapGetString(m.data(), m.size(), "mode", &s), kKilnOk);
  EXPECT_STREQ(s, "fast");
  const std::string fast = "fast";
  auto at = std::search(m.begin(), m.end(), fast.begin(), fast.end());
  ASSERT_NE(at, m.end());
  ASSERT_LT(at + 4, m.end());
  ASSERT_EQ(at[4], 0);
  at[4] = 'X';  // the terminator
  s = nullptr;
  EXPECT_EQ(KilnFlexMapGetString(m.data(), m.size(), "mode", &s), kKilnInvalidArgument);
  EXPECT_EQ(s, nullptr);
  int64_t n = 0;
  ASSERT_EQ(KilnFlexMapGetInt(m.data(), m.size(), "n", &n), kKilnOk);
  EXPECT_EQ(n, 7);
}

}  // namespace
}  // namespace kiln
