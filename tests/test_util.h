// Helpers shared by Kiln's tests.
#ifndef KILN_TESTS_TEST_UTIL_H_
#define KILN_TESTS_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace kiln::testing {

// Kiln's float bound for a model output against a reference output, relative to the output's scale:
// |got - ref| <= relative * (|ref| + max |ref| over the tensor) + absolute. The second term keeps elements near 0
// (where summation order dominates) from failing on rounding alone. Counts the elements outside the bound and
// reports the first `max_reported` with ADD_FAILURE, naming `what`; *worst gets the largest difference and *scale
// the output's scale (max |ref|).
inline size_t CountOutsideScaledBound(const float* got, const float* ref, size_t n, double relative,
                                      double absolute, const std::string& what, double* worst, double* scale,
                                      size_t max_reported = 3) {
  double max_ref = 0, max_diff = 0;
  for (size_t k = 0; k < n; ++k) max_ref = std::max(max_ref, std::fabs(static_cast<double>(ref[k])));
  size_t bad = 0;
  for (size_t k = 0; k < n; ++k) {
    const double diff = std::fabs(static_cast<double>(got[k]) - ref[k]);
    max_diff = std::max(max_diff, diff);
    if (!(diff <= relative * (std::fabs(static_cast<double>(ref[k])) + max_ref) + absolute) &&
        bad++ < max_reported) {
      ADD_FAILURE() << what << "[" << k << "]: " << got[k] << " vs reference " << ref[k];
    }
  }
  if (worst) *worst = max_diff;
  if (scale) *scale = max_ref;
  return bad;
}

// The folder of real models (../shared/models), as configured at build time.
inline std::string ModelsDir() { return KILN_MODELS_DIR; }

inline bool ModelsAvailable() {
  struct stat st;
  return stat((ModelsDir() + "/MANIFEST.md").c_str(), &st) == 0;
}

inline std::string ModelPath(const std::string& file) { return ModelsDir() + "/" + file; }

// Whether the shared data (../shared/models, ../shared/repro) must be there: CI sets KILN_REQUIRE_SHARED_DATA
// (.ci/run), and there a missing folder is a failure rather than a skip.
inline bool SharedDataRequired() {
  const char* value = std::getenv("KILN_REQUIRE_SHARED_DATA");
  return value != nullptr && *value != '\0' && std::string(value) != "0";
}

inline std::vector<uint8_t> ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A KilnErrorReporter that appends each message, and a newline, to the std::string at `user_data`.
inline void CollectErrors(void* user_data, const char* format, va_list args) {
  char buffer[1024];
  std::vsnprintf(buffer, sizeof buffer, format, args);
  *static_cast<std::string*>(user_data) += std::string(buffer) + "\n";
}

}  // namespace kiln::testing

// Skips the current test with `message` when `missing` (a condition on the shared data) holds; fails it
// instead where the shared data is required (CI sets KILN_REQUIRE_SHARED_DATA).
#define KILN_SKIP_WITHOUT_SHARED_DATA(missing, message)                                              \
  do {                                                                                               \
    if (missing) {                                                                                   \
      if (::kiln::testing::SharedDataRequired()) FAIL() << message << " (KILN_REQUIRE_SHARED_DATA)"; \
      GTEST_SKIP() << message;                                                                       \
    }                                                                                                \
  } while (0)

// Skips the current test, with a clear message, when ../shared/models is absent (fails it in CI).
#define KILN_REQUIRE_MODELS()                                                                  \
  KILN_SKIP_WITHOUT_SHARED_DATA(!::kiln::testing::ModelsAvailable(),                           \
                                "real models not found at "                                    \
                                    << ::kiln::testing::ModelsDir()                            \
                                    << " (expected ../shared/models beside the checkout; set " \
                                       "-DKILN_MODELS_DIR=...)")

#endif  // KILN_TESTS_TEST_UTIL_H_
