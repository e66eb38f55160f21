// Small data-moving and integer ops: SEGMENT_SUM, MATRIX_DIAG, MATRIX_SET_DIAG, DYNAMIC_UPDATE_SLICE,
// REVERSE_SEQUENCE, SPARSE_TO_DENSE, the integer bit ops RIGHT_SHIFT and BITWISE_XOR, and BUCKETIZE and FAKE_QUANT.
// The moving kernels copy elements of any byte size.
#ifndef KILN_OPS_REFERENCE_MATRIX_H_
#define KILN_OPS_REFERENCE_MATRIX_H_

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ops/reference/common.h"

namespace kiln::ops::reference {

// SEGMENT_SUM's ids are sorted: the first is 0 and each next one equals its predecessor or exceeds it by one.
// Returns the number of segments (last id + 1; 0 for no ids), or -1 with `*bad` the position of the first id that
// breaks the rule.
int64_t SortedSegmentCount(const int32_t* ids, int64_t count, int64_t* bad);

// out[ids[i]][k] += data[i][k] over `count` rows of `inner` elements; `out` holds `segments` rows. The ids are
// sorted and below `segments` (SortedSegmentCount). int32 sums wrap (two's complement), as LiteRT's do.
template <typename T>
void SegmentSum(const T* data, const int32_t* ids, int64_t count, int64_t inner, int64_t segments, T* out) {
  for (int64_t i = 0; i < segments * inner; ++i) out[i] = T{0};
  for (int64_t i = 0; i < count; ++i) {
    T* row = out + static_cast<int64_t>(ids[i]) * inner;
    for (int64_t k = 0; k < inner; ++k) {
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        row[k] = static_cast<T>(static_cast<U>(static_cast<U>(row[k]) + static_cast<U>(data[i * inner + k])));
      } else {
        row[k] += data[i * inner + k];
      }
    }
  }
}

// MATRIX_DIAG: each of `batches` vectors of `n` elements becomes an n x n matrix with the vector on its diagonal
// and zero bytes elsewhere.
void MatrixDiag(const void* input, int64_t batches, int64_t n, size_t element_size, void* output);

// MATRIX_SET_DIAG: a copy of `batches` rows x cols matrices whose main diagonal (min(rows, cols) elements) is
// replaced by the matching row of `diagonal`.
void MatrixSetDiag(const void* input, const void* diagonal, int64_t batches, int64_t rows, int64_t cols,
                   size_t element_size, void* output);

// DYNAMIC_UPDATE_SLICE: each start index clamped into [0, operand[d] - update[d]] (update[d] <= operand[d]).
std::vector<int64_t> ClampUpdateStarts(const Dims& operand, const Dims& update, const std::vector<int64_t>& starts);
// Copies `operand` into `output` (unless they are one buffer), then `update` over it at `starts` (clamped).
void DynamicUpdateSlice(const Dims& operand, const Dims& update, const std::vector<int64_t>& starts,
                        size_t element_size, const void* operand_data, const void* update_data, void* output);

// RIGHT_SHIFT: x >> y with y clamped into [0, bits - 1] (so never undefined); signed values shift arithmetically.
template <typename T>
T RightShift(T x, T y) {
  constexpr int kMaxShift = static_cast<int>(sizeof(T) * 8 - 1);
  const int shift = y < 0 ? 0 : (y > static_cast<T>(kMaxShift) ? kMaxShift : static_cast<int>(y));
  return static_cast<T>(x >> shift);
}

template <typename T>
T BitwiseXor(T x, T y) {
  return static_cast<T>(x ^ y);
}

// REVERSE_SEQUENCE: along `seq_dim`, the first lengths[b] elements of each slice b of `batch_dim` in reverse
// order, the rest as they are. Each length is in [0, dims[seq_dim]] (the caller checks).
void ReverseSequence(const Dims& dims, int seq_dim, int batch_dim, const int64_t* lengths, size_t element_size,
                     const void* input, void* output);

// SPARSE_TO_DENSE: `output` (`count` elements) filled with `default_value`, then values[i] (or the single value,
// where `scalar_value`) written at the flat offset of each index tuple (`depth` entries, row-major in `dims`).
// Returns false, writing only the default, where an entry lies outside [0, dim): `*bad` is its tuple.
bool SparseToDense(const Dims& dims, const int64_t* indices, int64_t tuples, int64_t depth, const void* values,
                   bool scalar_value, const void* default_value, size_t element_size, void* output, int64_t* bad);

// STABLEHLO_SHIFT_LEFT: the low bits of x << count; a count outside [0, bits) gives 0 (StableHLO's definition).
template <typename T>
T ShiftLeft(T x, T count) {
  using U = std::make_unsigned_t<T>;
  if (count < 0 || count >= static_cast<T>(sizeof(T) * 8)) return T{0};
  return static_cast<T>(static_cast<U>(static_cast<uint32_t>(static_cast<U>(x)) << static_cast<uint32_t>(count)));
}

// Two's complement wrapping sum and product of integers (STABLEHLO_ADD and _MULTIPLY), in unsigned arithmetic of at
// least int's width (the narrow types are not promoted to signed int).
template <typename T>
T WrappingAdd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(0u + static_cast<U>(a) + static_cast<U>(b)));
}
template <typename T>
T WrappingMul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(1u * static_cast<U>(a) * static_cast<U>(b)));
}

// EMBEDDING_LOOKUP_SPARSE: `output` (buckets x width, zeroed here) gets weights[i] * params[ids[i]] added into
// row buckets[i] for each of the `count` lookups, in order; whenever the bucket changes from one lookup to the next,
// and after the last, the row just finished is divided by the combiner's divisor over the lookups that went into it
// since the change: kMean the sum of their weights, kSqrtn the square root of the sum of their squared weights
// (kSum: none). So a bucket met again later restarts its sums, as LiteRT's loop does. The ids and buckets are in
// range (the caller checks).
enum class Combiner { kSum, kMean, kSqrtn };
void EmbeddingLookupSparse(Combiner combiner, const int32_t* ids, const int64_t* buckets, const float* weights,
                           int64_t count, const float* params, int64_t width, int64_t output_rows, float* output);

// BUCKETIZE: the number of `boundaries` (sorted) not above x, with the comparison x < boundary made in the type
// C++ promotes the pair to (float for integers, double for double); NaN lies past every boundary.
template <typename T>
int32_t Bucketize(T x, const float* boundaries, int count) {
  int lo = 0, hi = count;  // the first boundary with x < boundary
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (x < boundaries[mid]) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

// FAKE_QUANT: [min, max] nudged so that real 0 is exactly representable on the grid of quant_min..quant_max
// (0..2^bits - 1), computed in float.
struct FakeQuantGrid {
  float scale, nudged_min, nudged_max;
};
FakeQuantGrid NudgeFakeQuant(float min, float max, int32_t quant_min, int32_t quant_max);
// Each value clamped into the nudged range and rounded (half away from zero) to the grid.
void FakeQuant(const FakeQuantGrid& grid, int64_t count, const float* input, float* output);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_MATRIX_H_
