// AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D over NHWC tensors. Windows are clipped to the input: padding cells are
// neither averaged (the divisor counts only cells inside the input, as TFLite does) nor maxed.
#ifndef KILN_OPS_REFERENCE_POOLING_H_
#define KILN_OPS_REFERENCE_POOLING_H_

#include <cstdint>

#include "ops/reference/common.h"

namespace kiln::ops::reference {

struct PoolParams {
  int64_t batch = 0;
  int64_t input_height = 0, input_width = 0, channels = 0;
  int64_t output_height = 0, output_width = 0;
  int64_t filter_height = 0, filter_width = 0;
  int64_t stride_height = 1, stride_width = 1;
  int64_t pad_top = 0, pad_left = 0;
  Activation activation = Activation::kNone;
};

// A window with no cell inside the input (only possible with unusual padding) averages to 0.
void AveragePoolFloat(const PoolParams& params, const float* input, float* output);
// A window with no cell inside the input yields the lowest float, as TFLite's reference does.
void MaxPoolFloat(const PoolParams& params, const float* input, float* output);
// sqrt(mean of x^2) over the window's cells inside the input, as TFLite's reference L2Pool (0 for a window
// with none, where TFLite would divide by zero).
void L2PoolFloat(const PoolParams& params, const float* input, float* output);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_POOLING_H_
