// The Philox4x32-10 generator against the published known-answer vector (Random123's, key and counter 0) and
// against LiteRT 2.3.0's measured outputs for seeds (1, 2); the uint32 -> float conversion's ends; Box-Muller.
#include "ops/reference/random.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>

namespace kiln::ops::reference {
namespace {

TEST(PhiloxTest, KnownAnswersAndLiteRtSequence) {
  Philox zero(0, 0);
  EXPECT_EQ(zero.Next(), (std::array<uint32_t, 4>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  // LiteRT's RANDOM_UNIFORM of 5 values with seeds (1, 2), twice: each Invoke takes whole blocks of four.
  const float first[] = {0.40639675f, 0.8575996f, 0.05539584f, 0.08587229f, 0.4121536f};
  const float second[] = {0.8690897f, 0.04222715f, 0.35364604f, 0.23803174f, 0.06833863f};
  Philox rng(1, 2);
  for (const float* want : {first, second}) {
    const std::array<uint32_t, 4> a = rng.Next(), b = rng.Next();
    for (int k = 0; k < 4; ++k) EXPECT_FLOAT_EQ(Uint32ToFloat(a[k]), want[k]) << k;
    EXPECT_FLOAT_EQ(Uint32ToFloat(b[0]), want[4]);
  }
  // RANDOM_STANDARD_NORMAL with seeds (1, 2): Box-Muller of pairs.
  Philox normal(1, 2);
  const std::array<uint32_t, 4> block = normal.Next();
  float f[4];
  BoxMuller(block[0], block[1], &f[0], &f[1]);
  BoxMuller(block[2], block[3], &f[2], &f[3]);
  const float want[] = {-1.0467793f, 0.8397046f, 1.2358364f, 2.0637853f};
  for (int k = 0; k < 4; ++k) EXPECT_FLOAT_EQ(f[k], want[k]) << k;
}

TEST(PhiloxTest, ConversionsStayInRange) {
  EXPECT_EQ(Uint32ToFloat(0), 0.0f);
  EXPECT_EQ(Uint32ToFloat(0xffffffffu), 1.0f - std::ldexp(1.0f, -23));
  float f0, f1;
  BoxMuller(0, 0, &f0, &f1);  // u1 clamped to 1e-7: finite
  EXPECT_TRUE(std::isfinite(f0) && std::isfinite(f1));
  EXPECT_NEAR(f1, std::sqrt(-2.0f * std::log(1.0e-7f)), 1e-4);
  // The 128-bit counter carries across words.
  Philox a(5, 0), b(5, 0);
  for (int i = 0; i < 3; ++i) a.Next();
  EXPECT_NE(a.Next(), b.Next());
}

}  // namespace
}  // namespace kiln::ops::reference
