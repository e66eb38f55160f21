// The Philox4x32-10 generator against the published known-answer vector (Random123's, key and counter 0) and
// against LiteRT 2.3.0's measured outputs for seeds (1, 2); the uint32 -> float conversion's ends; Box-Muller.
#include "ops/reference/random.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

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

TEST(PhiloxTest, SkipStepsTheCounter) {
  for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{7}, uint64_t{1000}}) {
    Philox a(3, 4), b(3, 4);
    a.Skip(n);
    for (uint64_t i = 0; i < n; ++i) b.Next();
    EXPECT_EQ(a.Next(), b.Next()) << n;
  }
  // Carries: the low word wrapping into the next, and 2^64 blocks reaching the upper half of the counter, which
  // (like seed2) keys the sequence: so Skip(2^64) from seed2 0 equals seed2 1.
  Philox c(9, 0), d(9, 0);
  c.Skip(0xffffffffu);
  c.Skip(1);
  d.Skip(uint64_t{1} << 32);
  EXPECT_EQ(c.Next(), d.Next());
  Philox e(9, 0), f(9, 1);
  e.Skip(0xffffffffffffffffu);
  e.Next();  // the 128-bit increment carries into the upper half
  EXPECT_EQ(e.Next(), f.Next());
}

TEST(PhiloxTest, Uint64ToDoubleRange) {
  EXPECT_EQ(Uint64ToDouble(0, 0), 0.0);
  EXPECT_EQ(Uint64ToDouble(0xffffffffu, 0xffffffffu), 1.0 - std::ldexp(1.0, -52));
  EXPECT_EQ(Uint64ToDouble(0x00080000u, 0), 0.5);  // the top mantissa bit
  EXPECT_EQ(Uint64ToDouble(0xfff00000u, 0), 0.0);  // x0's top 12 bits are not used
  EXPECT_EQ(Uint64ToDouble(0, 1), std::ldexp(1.0, -52));
}

// A plain MULTINOMIAL: the generator's blocks as a flat list of uint32 (after the skip is taken from a copy), each
// draw from the next two, the class found by a linear scan for the first cumulative sum above the target.
template <typename T>
std::vector<T> PlainMultinomial(uint64_t seed, uint64_t seed2, const std::vector<float>& logits, int64_t batch,
                                int64_t classes, int64_t samples) {
  Philox rng(seed, seed2);
  std::vector<uint32_t> words;
  while (static_cast<int64_t>(words.size()) < 2 * batch * samples) {
    for (uint32_t w : rng.Next()) words.push_back(w);
  }
  std::vector<T> out;
  size_t next = 0;
  for (int64_t b = 0; b < batch; ++b) {
    double m = -std::numeric_limits<double>::max();
    bool any = false;
    for (int64_t c = 0; c < classes; ++c) {
      const float v = logits[b * classes + c];
      if (std::isfinite(v)) {
        m = any ? std::max(m, static_cast<double>(v)) : static_cast<double>(v);
        any = true;
      }
    }
    if (!any) m = static_cast<double>(std::numeric_limits<float>::lowest());
    std::vector<double> sums;
    double total = 0;
    for (int64_t c = 0; c < classes; ++c) {
      const float v = logits[b * classes + c];
      if (std::isfinite(v)) total += std::exp(static_cast<double>(v) - m);
      sums.push_back(total);
    }
    for (int64_t j = 0; j < samples; ++j) {
      const double target = Uint64ToDouble(words[next], words[next + 1]) * total;
      next += 2;
      int64_t k = 0;
      while (k < classes && !(sums[k] > target)) ++k;
      out.push_back(static_cast<T>(k));
    }
  }
  return out;
}

TEST(MultinomialTest, MatchesPlainDrawsAndSkipsAhead) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  struct Case {
    int64_t batch, classes, samples;
    std::vector<float> logits;
  };
  const std::vector<Case> cases = {
      {1, 3, 10, {0.0f, 1.0f, 2.0f}},
      {2, 4, 5, {-1.0f, 0.5f, 3.0f, 0.0f, 100.0f, -100.0f, 100.0f, 0.0f}},  // odd counts: blocks carry across rows
      {3, 1, 3, {0.0f, -5.0f, 7.0f}},                                       // one class: always 0
      {2, 3, 4, {nan, 1.0f, inf, -inf, -inf, nan}},  // non-finite logits skipped; none finite: `classes`
      {2, 5, 0, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},     // no samples
      {0, 2, 4, {}},                                 // no rows
      {1, 300, 33, std::vector<float>(300, 0.25f)},
  };
  for (const Case& c : cases) {
    std::vector<int64_t> got(static_cast<size_t>(c.batch * c.samples));
    Philox rng(7, 11);
    Multinomial<int64_t>(&rng, c.logits.data(), c.batch, c.classes, c.samples, got.data());
    EXPECT_EQ(got, PlainMultinomial<int64_t>(7, 11, c.logits, c.batch, c.classes, c.samples))
        << c.batch << "x" << c.classes << " " << c.samples;
    // The node's generator skipped batch * round_up(samples, 4) * 512 blocks for the next Invoke.
    Philox skipped(7, 11);
    skipped.Skip(static_cast<uint64_t>(c.batch) * ((c.samples + 3) / 4 * 4) * 512);
    EXPECT_EQ(rng.Next(), skipped.Next());
    std::vector<int32_t> got32(got.size());
    Philox rng32(7, 11);
    Multinomial<int32_t>(&rng32, c.logits.data(), c.batch, c.classes, c.samples, got32.data());
    EXPECT_EQ(std::vector<int64_t>(got32.begin(), got32.end()), got);
  }
  // Rows of all non-finite logits give `classes`, as LiteRT (no read past the sums).
  std::vector<int64_t> none(4);
  Philox rng(1, 2);
  const std::vector<float> bad = {nan, -inf};
  Multinomial<int64_t>(&rng, bad.data(), 1, 2, 4, none.data());
  EXPECT_EQ(none, (std::vector<int64_t>{2, 2, 2, 2}));
}

}  // namespace
}  // namespace kiln::ops::reference
