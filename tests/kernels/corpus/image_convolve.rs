// A 3x3 convolution reading the neighbours through rsGetElementAt_uchar4, edges clamped.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.image.convolve)

rs_allocation gIn;
float gCoeffs[9];

uchar4 RS_KERNEL convolve(uint32_t x, uint32_t y) {
  const uint32_t w = rsAllocationGetDimX(gIn);
  const uint32_t h = max(rsAllocationGetDimY(gIn), 1u);
  const uint32_t xs[3] = {x > 0u ? x - 1u : 0u, x, min(x + 1u, w - 1u)};
  const uint32_t ys[3] = {y > 0u ? y - 1u : 0u, y, min(y + 1u, h - 1u)};
  float4 sum = 0.0f;
  for (int j = 0; j < 3; ++j) {
    for (int i = 0; i < 3; ++i) {
      sum += convert_float4(rsGetElementAt_uchar4(gIn, xs[i], ys[j])) * gCoeffs[j * 3 + i];
    }
  }
  return convert_uchar4(clamp(sum + 0.5f, 0.0f, 255.0f));
}
