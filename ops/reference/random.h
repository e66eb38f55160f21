// RANDOM_UNIFORM and RANDOM_STANDARD_NORMAL: TensorFlow's Philox4x32-10 counter-based generator (as LiteRT uses
// it), its uint32 -> float conversion and its Box-Muller transform.
#ifndef KILN_OPS_REFERENCE_RANDOM_H_
#define KILN_OPS_REFERENCE_RANDOM_H_

#include <array>
#include <cstdint>

namespace kiln::ops::reference {

class Philox {
 public:
  // The key from `seed`, the counter's upper half from `seed2` (TensorFlow's PhiloxRandom(seed, seed2)).
  Philox(uint64_t seed, uint64_t seed2);
  // The next block of four uint32 values; the 128-bit counter then steps by one.
  std::array<uint32_t, 4> Next();

 private:
  std::array<uint32_t, 2> key_;
  std::array<uint32_t, 4> counter_;
};

// A float in [0, 1) from the low 23 bits of `x` (the mantissa of a float in [1, 2), minus 1).
float Uint32ToFloat(uint32_t x);

// Two standard normal values from two uint32 values: Box-Muller in float, as TensorFlow's BoxMullerFloat.
void BoxMuller(uint32_t x0, uint32_t x1, float* f0, float* f1);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_RANDOM_H_
