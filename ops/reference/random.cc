#include "ops/reference/random.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

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

void Philox::Skip(uint64_t count) {
  const uint32_t low = static_cast<uint32_t>(count);
  uint32_t high = static_cast<uint32_t>(count >> 32);
  counter_[0] += low;
  if (counter_[0] < low) ++high;
  counter_[1] += high;
  if (counter_[1] < high && ++counter_[2] == 0) ++counter_[3];
}

double Uint64ToDouble(uint32_t x0, uint32_t x1) {
  const uint64_t bits = (uint64_t{1023} << 52) | (uint64_t{x0 & 0xfffffu} << 32) | x1;
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d - 1.0;
}

template <typename T>
void Multinomial(Philox* rng, const float* logits, int64_t batch, int64_t classes, int64_t samples, T* out) {
  Philox draws = *rng;
  const uint64_t rounded = (static_cast<uint64_t>(samples) + 3) / 4 * 4;
  rng->Skip(static_cast<uint64_t>(batch) * rounded * 2 * 256);  // wraps as LiteRT's size_t product
  std::array<uint32_t, 4> block{};
  int used = 4;
  std::vector<double> cdf(static_cast<size_t>(classes));
  for (int64_t b = 0; b < batch; ++b) {
    const float* row = logits + b * classes;
    float max = std::numeric_limits<float>::lowest();
    for (int64_t c = 0; c < classes; ++c) {
      if (std::isfinite(row[c])) max = std::max(max, row[c]);
    }
    double total = 0.0;
    for (int64_t c = 0; c < classes; ++c) {
      if (std::isfinite(row[c])) total += std::exp(static_cast<double>(row[c]) - static_cast<double>(max));
      cdf[static_cast<size_t>(c)] = total;
    }
    for (int64_t j = 0; j < samples; ++j) {
      if (used == 4) {
        block = draws.Next();
        used = 0;
      }
      const double target = Uint64ToDouble(block[used], block[used + 1]) * total;
      used += 2;
      out[b * samples + j] = static_cast<T>(std::upper_bound(cdf.begin(), cdf.end(), target) - cdf.begin());
    }
  }
}

template void Multinomial<int32_t>(Philox*, const float*, int64_t, int64_t, int64_t, int32_t*);
template void Multinomial<int64_t>(Philox*, const float*, int64_t, int64_t, int64_t, int64_t*);

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
