/* A kernel that calls a runtime service no driver provides: linking must fail with its name, not crash. */
#include "kiln/kernel_abi.h"

void __kiln_rt_teleport(uint32_t x);

void __kiln_expand_warp(const KilnKernelLaunch* launch, uint32_t x_begin, uint32_t x_end, uint32_t y,
                        uint32_t z) {
  for (uint32_t x = x_begin; x < x_end; ++x) __kiln_rt_teleport(x);
}
