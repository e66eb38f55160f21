// Shared helpers of the kernel runtime tests.
#ifndef KILN_TESTS_KERNELS_KERNEL_TEST_UTIL_H_
#define KILN_TESTS_KERNELS_KERNEL_TEST_UTIL_H_

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <climits>
#include <string>
#include <vector>

#include "kiln/compute.h"

namespace kiln::testing {

inline std::string KmodPath(const std::string& name) { return std::string(KILN_TEST_KMOD_DIR) + "/" + name + ".kmod"; }

// Collects error-reporter messages.
struct Messages {
  std::vector<std::string> lines;
  std::string All() const {
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
  }
  bool Contains(const std::string& text) const { return All().find(text) != std::string::npos; }
  static void Report(void* user_data, const char* format, va_list args) {
    char buffer[2048];
    std::vsnprintf(buffer, sizeof buffer, format, args);
    static_cast<Messages*>(user_data)->lines.push_back(buffer);
  }
};

// The distance between two floats in units in the last place.
inline int64_t UlpDistance(float a, float b) {
  if (a == b) return 0;
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  if (ia < 0) ia = INT32_MIN - ia;
  if (ib < 0) ib = INT32_MIN - ib;
  return ia > ib ? static_cast<int64_t>(ia) - ib : static_cast<int64_t>(ib) - ia;
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_KERNELS_KERNEL_TEST_UTIL_H_
