// Helpers for the reference kernel tests: deterministic data and tolerant comparison.
#ifndef KILN_TESTS_OPS_TEST_HELPERS_H_
#define KILN_TESTS_OPS_TEST_HELPERS_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace kiln::ops::testing {

// Values in [lo, hi), the same on every run.
inline std::vector<float> RandomFloats(size_t count, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::vector<float> values(count);
  for (float& v : values) v = lo + (hi - lo) * static_cast<float>(rng() >> 8) / static_cast<float>(1u << 24);
  return values;
}

// Element-wise comparison with a tolerance relative to the magnitude of the expected value. `what` describes
// the case, for the failure message.
inline void ExpectAllNear(const std::vector<float>& actual, const std::vector<double>& expected,
                          const std::string& what, double tolerance = 1e-5) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(actual[i])) << what << " at " << i;
      continue;
    }
    ASSERT_NEAR(actual[i], expected[i], tolerance * (1.0 + std::fabs(expected[i]))) << what << " at " << i;
  }
}

inline std::vector<double> ToDouble(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}

}  // namespace kiln::ops::testing

#endif  // KILN_TESTS_OPS_TEST_HELPERS_H_
