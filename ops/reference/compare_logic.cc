// The comparison rescaling of 8-bit quantized inputs (compare_logic.h).

#include "ops/reference/compare_logic.h"

namespace kiln::ops::reference {

bool MakeCompareScaling(float scale, int32_t zero_point, CompareScaling* scaling) {
  if (!(scale > 0.0f) || !std::isfinite(scale)) return false;
  scaling->offset = -zero_point;
  scaling->multiplier = QuantizeMultiplier(static_cast<double>(scale));
  return scaling->multiplier.shift <= 0;
}

int32_t ScaleForCompare(int32_t q, const CompareScaling& scaling) {
  return MultiplyByQuantizedMultiplierDoubleRounding((q + scaling.offset) * (1 << kCompareLeftShift),
                                                     scaling.multiplier.multiplier, scaling.multiplier.shift);
}

}  // namespace kiln::ops::reference
