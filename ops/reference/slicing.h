// Ops that pick elements out of a tensor without arithmetic: STRIDED_SLICE, SLICE, GATHER, EXPAND_DIMS (shape
// only). The kernels move elements of any byte size, so one kernel serves every element type.
#ifndef KILN_OPS_REFERENCE_SLICING_H_
#define KILN_OPS_REFERENCE_SLICING_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/reference/common.h"

namespace kiln::ops::reference {

// A strided box of the input: along effective dimension d, `count[d]` elements starting at `start[d]`,
// `step[d]` apart. Effective dimensions are the input's with STRIDED_SLICE's new axes inserted (input_stride
// 0, size 1).
struct StridedSlicePlan {
  std::vector<int64_t> start;
  std::vector<int64_t> step;
  std::vector<int64_t> count;
  std::vector<int64_t> input_stride;  // elements of the input between neighbours along the dimension
  Dims output_dims;                   // the output's shape: the counts, less the shrunk dimensions
};

// STRIDED_SLICE as LiteRT's kernel reads its inputs: begin, end and strides (one entry each per spec entry)
// and the options' masks.
struct StridedSliceSpec {
  std::vector<int64_t> begin, end, strides;
  uint32_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_axis_mask = 0;
  bool offset = false;  // end[i] counts from begin[i]
};

// The most effective dimensions (input rank plus new axes) LiteRT's STRIDED_SLICE accepts.
constexpr int kMaxStridedSliceDims = 5;

// Resolves `spec` against an input of shape `input`: masks, ellipsis, new axes, negative indices, clamping
// (as LiteRT's strided_slice_logic). Fails (with a reason) for a zero stride, more than one ellipsis, more
// spec entries than dimensions, more than kMaxStridedSliceDims effective dimensions, or a shrunk index
// outside
// [-size, size).
bool MakeStridedSlicePlan(const Dims& input, const StridedSliceSpec& spec, StridedSlicePlan* plan,
                          std::string* error);

// The output shape STRIDED_SLICE with the offset option has whatever `spec.begin` holds: per sliced dimension
// ceil(end / stride) (at least 0), as LiteRT sizes it. begin is not read.
bool StridedSliceOffsetShape(const Dims& input, const StridedSliceSpec& spec, Dims* output,
                             std::string* error);

// SLICE: begin and size per dimension; size -1 takes the rest of the dimension. Fails unless
// 0 <= begin <= dim and begin + size <= dim.
bool MakeSlicePlan(const Dims& input, const std::vector<int64_t>& begin, const std::vector<int64_t>& size,
                   StridedSlicePlan* plan, std::string* error);

// Copies the box `plan` describes from `input` to `output` (elements of `element_size` bytes).
void StridedSliceCopy(const StridedSlicePlan& plan, size_t element_size, const void* input, void* output);

// GATHER along `axis` with the first `batch_dims` dimensions shared by input and indices.
struct GatherParams {
  int64_t batch = 1;        // product of the first batch_dims input dimensions
  int64_t outer = 1;        // product of the input dimensions from batch_dims to axis
  int64_t axis_size = 0;    // input dimension `axis`
  int64_t inner = 1;        // product of the input dimensions after axis
  int64_t num_indices = 0;  // indices per batch: product of the index dimensions after batch_dims
};

// `axis` and `batch_dims` may be negative (counted from the back of the input and the indices). Output shape
// input[:axis] + indices[batch_dims:] + input[axis + 1:].
bool MakeGatherParams(const Dims& input, const Dims& indices, int axis, int batch_dims, GatherParams* params,
                      Dims* output, std::string* error);

// Gathers; returns false, writing nothing, where an index lies outside [0, axis_size): `*bad` is the position
// of the first such index in `indices`.
bool GatherCopy(const GatherParams& params, size_t element_size, const void* input, const int32_t* indices,
                void* output, int64_t* bad);
bool GatherCopy(const GatherParams& params, size_t element_size, const void* input, const int64_t* indices,
                void* output, int64_t* bad);

// EXPAND_DIMS: inserts a dimension of size 1 before dimension `axis` (in [-(rank + 1), rank]).
bool ExpandDimsOutputShape(const Dims& input, int64_t axis, Dims* output, std::string* error);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_SLICING_H_
