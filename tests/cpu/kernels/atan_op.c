/* y = atan(x + offset), written by hand the way kilnc expands a kernel (kiln/kernel_abi.h):
 *
 *   float RS_KERNEL atan_op(float in) { return atan(in + offset); }
 *
 * The driver, not this file, vectorizes the x-loop; it is compiled with -fno-vectorize so that the driver's
 * retargeted O3 pipeline does the work. */
#include <math.h>

#include "kiln/kernel_abi.h"

float offset = 0.0f;

static inline float atan_op(float in, float offset_now) { return atanf(in + offset_now); }

void __kiln_expand_atan_op(const KilnKernelLaunch* launch, uint32_t x_begin, uint32_t x_end, uint32_t y,
                           uint32_t z) {
  const uint8_t* in = launch->in[0] + y * launch->in_stride_y[0] + z * launch->in_stride_z[0];
  uint8_t* out = launch->out + y * launch->out_stride_y + z * launch->out_stride_z;
  const uint64_t in_stride = launch->in_stride_x[0];
  const uint64_t out_stride = launch->out_stride_x;
  /* Read once: the output pointer may alias any global as far as the compiler knows, which would force a
   * reload per element and keep the loop scalar. */
  const float offset_now = offset;
  if (in_stride == sizeof(float) && out_stride == sizeof(float)) {
    /* The common dense case gets its own loop so the vectorizer needs no gathers. */
    const float* restrict src = (const float*)in;
    float* restrict dst = (float*)out;
    for (uint32_t x = x_begin; x < x_end; ++x) dst[x] = atan_op(src[x], offset_now);
    return;
  }
  for (uint32_t x = x_begin; x < x_end; ++x) {
    *(float*)(out + x * out_stride) = atan_op(*(const float*)(in + x * in_stride), offset_now);
  }
}
