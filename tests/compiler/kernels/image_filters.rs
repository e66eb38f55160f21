// An image-processing script written the way Android RenderScript samples were: both kernel spellings,
// rs_allocation globals read with rsGetElementAt, a histogram with atomics, a context parameter, an
// invokable that launches a kernel with rsForEach, and the math/color helpers.
#pragma version(1)
#pragma rs java_package_name(com.example.android.rs.filters)
#pragma rs_fp_relaxed

rs_allocation gIn;
rs_allocation gOut;
int gWidth;
int gHeight;
float gRadius = 2.0f;
uint32_t gHistogram[256];
rs_matrix4x4 gColorMatrix;

static float4 sample(int x, int y) {
  x = clamp(x, 0, gWidth - 1);
  y = clamp(y, 0, gHeight - 1);
  return rsUnpackColor8888(rsGetElementAt_uchar4(gIn, x, y));
}

uchar4 __attribute__((kernel)) blur(uchar4 in, uint32_t x, uint32_t y) {
  float4 sum = 0.0f;
  const int r = (int)gRadius;
  for (int dy = -r; dy <= r; dy++) {
    for (int dx = -r; dx <= r; dx++) {
      sum += sample((int)x + dx, (int)y + dy);
    }
  }
  sum /= (float)((2 * r + 1) * (2 * r + 1));
  return rsPackColorTo8888(sum);
}

void RS_KERNEL histogram(uchar4 in) {
  const uchar luma = (uchar)((in.r * 77 + in.g * 151 + in.b * 28) >> 8);
  rsAtomicInc(&gHistogram[luma]);
}

float4 RS_KERNEL tint(float4 in, rs_kernel_context context, uint32_t x) {
  const float t = (float)x / (float)rsGetDimX(context);
  return mix(in, (float4){1.0f, 0.5f, 0.25f, 1.0f}, t);
}

uchar4 RS_KERNEL colorMatrix(uchar4 in) {
  return rsPackColorTo8888(rsMatrixMultiply(&gColorMatrix, rsUnpackColor8888(in)));
}

void filter() {
  gWidth = rsAllocationGetDimX(gIn);
  gHeight = rsAllocationGetDimY(gIn);
  rsDebug("filter width", gWidth);
  rsForEach(blur, gIn, gOut);
}
