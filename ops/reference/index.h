// Ops that index into tensors or build them from indices: ONE_HOT, GATHER_ND, SCATTER_ND, and ADD_N's sum. The
// moving kernels copy elements of any byte size; indices arrive as int64 values (the wrappers widen int32).
#ifndef KILN_OPS_REFERENCE_INDEX_H_
#define KILN_OPS_REFERENCE_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/reference/common.h"

namespace kiln::ops::reference {

// ONE_HOT: the output is the indices' shape with a dimension of `depth` inserted at `axis` (in [-1, rank]; -1
// is the end). Fails for an axis out of range or a negative depth.
bool OneHotOutputShape(const Dims& indices, int axis, int64_t depth, Dims* output, int* resolved_axis,
                       std::string* error);

// Writes `on` (element_size bytes) where index == position along the new dimension, else `off`. `outer` is the
// product of the index dimensions before axis, `inner` of those from axis. Indices outside [0, depth) give a row
// of `off`, as LiteRT.
void OneHot(const int64_t* indices, int64_t outer, int64_t depth, int64_t inner, const void* on, const void* off,
            size_t element_size, void* output);

// GATHER_ND: `indices`' last dimension (the index depth, at most the params' rank) picks a slice of params; the
// output is indices[:-1] + params[depth:].
struct GatherNdParams {
  int64_t count = 0;             // number of index tuples: product of indices[:-1]
  int64_t depth = 0;             // entries per tuple
  int64_t slice = 1;             // elements per picked slice: product of params[depth:]
  std::vector<int64_t> dims;     // params[:depth]
  std::vector<int64_t> strides;  // elements between neighbours along params[:depth]
};
bool MakeGatherNdParams(const Dims& params, const Dims& indices, GatherNdParams* p, Dims* output, std::string* error);
// Gathers; returns false, writing nothing, where an index entry lies outside [0, dim): `*bad` is its position in
// `indices` (flat).
bool GatherNdCopy(const GatherNdParams& p, size_t element_size, const void* params, const int64_t* indices,
                  void* output, int64_t* bad);

// SCATTER_ND into a zeroed output of shape `shape`: indices[:-1] tuples of depth indices[-1] (at most the rank of
// shape), updates of shape indices[:-1] + shape[depth:]. Fails for mismatched shapes.
bool MakeScatterNdParams(const Dims& shape, const Dims& indices, const Dims& updates, GatherNdParams* p,
                         std::string* error);
// Zeroes `output` and adds each update slice at its index (duplicates add up; bool: any true). Returns false
// where an index entry lies outside [0, dim), `*bad` its flat position in `indices`; the output is then zeros.
template <typename T>
bool ScatterNd(const GatherNdParams& p, const int64_t* indices, const T* updates, int64_t output_count, T* output,
               int64_t* bad);
// SCATTER_ND of bool bytes: any non-zero update byte sets the output element to 1 (true).
bool ScatterNdBool(const GatherNdParams& p, const int64_t* indices, const uint8_t* updates, int64_t output_count,
                   uint8_t* output, int64_t* bad);

// ADD_N: output = sum of `inputs` (each `count` elements); int32 sums wrap (two's complement) rather than
// overflow.
// UNSORTED_SEGMENT_SUM/PROD/MAX/MIN: row i of `data` (`inner` elements; `num_ids` rows) folds into output row
// ids[i] of `num_segments`, each output row starting at the fold's identity (0, 1, lowest(), max()). A negative
// id drops its row, as LiteRT does; an id >= num_segments returns false with *bad its position, nothing written
// past the output. Integer sums and products wrap.
enum class SegmentOp { kSum, kProd, kMax, kMin };
template <typename T>
bool UnsortedSegment(SegmentOp op, const T* data, const int32_t* ids, int64_t num_ids, int64_t inner,
                     int64_t num_segments, T* output, int64_t* bad);

void AddN(const std::vector<const float*>& inputs, int64_t count, float* output);
void AddN(const std::vector<const int32_t*>& inputs, int64_t count, int32_t* output);

// RANGE: the number of values start, start + delta, ... before limit (int32, int64, float32). Fails (with a
// reason) for a zero delta, a delta whose sign points away from limit, a non-finite float, or more than
// 2^31 - 1 values.
template <typename T>
bool RangeCount(T start, T limit, T delta, int64_t* count, std::string* error);
// Writes `count` values: integers start + i * delta, floats accumulated (value += delta) as LiteRT does.
template <typename T>
void Range(T start, T delta, int64_t count, T* output);

// TOPK_V2 along the last dimension: per row of `n` values the `k` largest, largest first, equal values in the
// order of their indices (the lower index first); `indices` their positions in the row. Float NaN ranks below
// every number.
template <typename T>
void TopK(const T* input, int64_t rows, int64_t n, int64_t k, T* values, int32_t* indices);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_INDEX_H_
