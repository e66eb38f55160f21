#include "ops/reference/random.h"

#include <cmath>
#include <cstring>

namespace kiln::ops::reference {

Philox::Philox(uint64_t seed, uint64_t seed2)
    : key_{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)},
      counter_{0, 0, static_cast<uint32_t>(seed2), static_cast<uint32_t>(seed2 >> 32)} {}

std::array<uint32_t, 4> Philox::Next() {
  constexpr uint32_t kMulA = 0xD2511F53u, kMulB = 0xCD9E8D57u;
  constexpr uint32_t kKeyA = 0x9E3779B9u, kKeyB = 0xBB67AE85u;
  std::array<uint32_t, 4> c = counter_;
  std::array<uint32_t, 2> k = key_;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{kMulA} * c[0], p1 = uint64_t{kMulB} * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
    k[0] += kKeyA;
    k[1] += kKeyB;
  }
  for (uint32_t& word : counter_) {  // 128-bit increment
    if (++word != 0) break;
  }
  return c;
}

float Uint32ToFloat(uint32_t x) {
  const uint32_t bits = (x & 0x7fffffu) | 0x3f800000u;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f - 1.0f;
}

void BoxMuller(uint32_t x0, uint32_t x1, float* f0, float* f1) {
  const float epsilon = 1.0e-7f;
  float u1 = Uint32ToFloat(x0);
  if (u1 < epsilon) u1 = epsilon;
  const float v1 = static_cast<float>(2.0f * 3.14159265358979323846 * Uint32ToFloat(x1));
  const float u2 = std::sqrt(-2.0f * std::log(u1));
  *f0 = std::sin(v1) * u2;
  *f1 = std::cos(v1) * u2;
}

}  // namespace kiln::ops::reference
