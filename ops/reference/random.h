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
  // Steps the 128-bit counter by `count` blocks (TensorFlow's PhiloxRandom::Skip).
  void Skip(uint64_t count);

 private:
  std::array<uint32_t, 2> key_;
  std::array<uint32_t, 4> counter_;
};

// A float in [0, 1) from the low 23 bits of `x` (the mantissa of a float in [1, 2), minus 1).
float Uint32ToFloat(uint32_t x);

// A double in [0, 1) from 52 bits: the low 20 of `x0` above the 32 of `x1` (TensorFlow's Uint64ToDouble).
double Uint64ToDouble(uint32_t x0, uint32_t x1);

// MULTINOMIAL as LiteRT 2.3.0 draws it: `samples` categories for each of `batch` rows of `classes` float logits
// (row-major), into out[batch][samples]. The draws come from a copy of `rng`, whose own counter first skips
// batch * round_up(samples, 4) * 2 * 256 blocks (so that the next Invoke draws afresh); two uint32 per draw
// (Uint64ToDouble), four per block, a block's rest carried into the next row. Per row: m the largest finite logit,
// the cumulative sums in double of exp(logit - m) over the finite logits, and a draw u * total picks the first
// class whose sum exceeds it (all logits non-finite: `classes`, as LiteRT).
template <typename T>
void Multinomial(Philox* rng, const float* logits, int64_t batch, int64_t classes, int64_t samples, T* out);

// Two standard normal values from two uint32 values: Box-Muller in float, as TensorFlow's BoxMullerFloat.
void BoxMuller(uint32_t x0, uint32_t x1, float* f0, float* f1);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_RANDOM_H_
