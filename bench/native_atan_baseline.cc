// y = atan(x + offset) written by hand, compiled -O3 -march=native (see cpu_driver.cmake). Compilers do not
// vectorize calls to libm's atanf, so this is the scalar libm loop a C++ programmer would get.
#include <cmath>
#include <cstddef>

namespace kiln {
namespace bench {

void NativeAtan(const float* __restrict in, float* __restrict out, size_t begin, size_t end, float offset) {
  for (size_t i = begin; i < end; ++i) out[i] = std::atan(in[i] + offset);
}

}  // namespace bench
}  // namespace kiln
