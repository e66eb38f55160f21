// ARG_MAX, ARG_MIN (the index of the largest or smallest value along an axis) and CAST (element type
// conversion) over the numeric element types and bool.
#ifndef KILN_OPS_REFERENCE_ARG_CAST_H_
#define KILN_OPS_REFERENCE_ARG_CAST_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "ops/reference/common.h"

namespace kiln::ops::reference {

// The element types these kernels read and write; bool is one byte, any non-zero byte reading as true.
enum class ElementType { kBool, kUInt8, kInt8, kInt16, kUInt16, kInt32, kUInt32, kInt64, kFloat32, kFloat64 };

size_t ElementSize(ElementType type);

// ARG_MAX / ARG_MIN over the middle dimension of [outer, axis_size, inner]: the index of the first element
// that no later one beats strictly (ties and NaNs keep the earlier index, as LiteRT's std::greater /
// std::less). axis_size must be >= 1 where outer * inner > 0.
struct ArgParams {
  int64_t outer = 1;
  int64_t axis_size = 0;
  int64_t inner = 1;
  bool is_max = true;
};

bool MakeArgParams(const Dims& input, int64_t axis, bool is_max, ArgParams* params, Dims* output,
                   std::string* error);
// `index_type` kInt32 or kInt64. Unaligned data is fine: elements are read and written with memcpy.
void ArgMinMax(const ArgParams& params, ElementType input_type, const void* input, ElementType index_type,
               void* output);

// CAST: each element converted as C++'s static_cast where that is defined; to bool: x != 0 (NaN is true);
// from a floating type to an integer type: truncation toward zero, NaN to 0, values beyond the type's range
// saturate (static_cast is undefined there); float64 beyond float32's range becomes +-inf.
void Cast(ElementType from, const void* input, ElementType to, void* output, int64_t count);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_ARG_CAST_H_
