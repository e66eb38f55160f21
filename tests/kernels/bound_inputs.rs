// A kernel op that reads one of its node's inputs through a pointer global (KilnOperatorSetKernelInputGlobal) at
// another cell than its own, with globals its op's prepare sets from raw options (KilnOpaqueNodeSetKernelGlobal).
#pragma version(1)
#pragma rs java_package_name(com.kiln.tests)

float* gSrc;      // bound to a node input of the same shape as the output
int gCount = 0;   // elements of gSrc
int gRow = 1;     // the output's innermost extent
int gPlane = 1;   // the output's second innermost extent
float gScale = 1.0f;

// in + gSrc read backwards: cell (x, y, z) is element (z * gPlane + y) * gRow + x of a row-major tensor.
float RS_KERNEL add_reversed(float in, uint32_t x, uint32_t y, uint32_t z) {
  const int i = ((int)z * gPlane + (int)y) * gRow + (int)x;
  return in + gSrc[gCount - 1 - i] * gScale;
}
