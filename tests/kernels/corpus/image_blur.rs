// A separable Gaussian blur as a script with state: init() computes the default weights, the setRadius
// invokable recomputes them, and the blur invokable runs the horizontal and vertical passes with rsForEach,
// each reading neighbours through rsGetElementAt. blur keeps the intermediate image in uchar4, blurFloat in
// float4 (both are common in RenderScript apps).
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.image.blur)
#pragma rs_fp_relaxed

#define MAX_RADIUS 8

rs_allocation gIn;  /* uchar4 [h][w] */
rs_allocation gTmp; /* uchar4 [h][w] */
rs_allocation gTmpF; /* float4 [h][w] */
rs_allocation gOut; /* uchar4 [h][w] */
int gRadius;
float gWeights[2 * MAX_RADIUS + 1];

static void computeWeights(int radius) {
  gRadius = clamp(radius, 0, MAX_RADIUS);
  const float sigma = 0.4f * (float)gRadius + 0.6f;
  float total = 0.0f;
  for (int i = -gRadius; i <= gRadius; ++i) {
    const float w = exp(-(float)(i * i) / (2.0f * sigma * sigma));
    gWeights[i + gRadius] = w;
    total += w;
  }
  for (int i = 0; i <= 2 * gRadius; ++i) gWeights[i] /= total;
}

void init() { computeWeights(3); }

void setRadius(int radius) { computeWeights(radius); }

static float4 horizontalSum(uint32_t x, uint32_t y) {
  const int w = (int)rsAllocationGetDimX(gIn);
  float4 sum = 0.0f;
  for (int i = -gRadius; i <= gRadius; ++i) {
    const int xi = clamp((int)x + i, 0, w - 1);
    sum += convert_float4(rsGetElementAt_uchar4(gIn, xi, y)) * gWeights[i + gRadius];
  }
  return sum;
}

static uchar4 toPixel(float4 sum) { return convert_uchar4(clamp(sum + 0.5f, 0.0f, 255.0f)); }

uchar4 RS_KERNEL horizontal(uchar4 in, uint32_t x, uint32_t y) { return toPixel(horizontalSum(x, y)); }

uchar4 RS_KERNEL vertical(uchar4 in, uint32_t x, uint32_t y) {
  const int h = (int)max(rsAllocationGetDimY(gTmp), 1u);
  float4 sum = 0.0f;
  for (int i = -gRadius; i <= gRadius; ++i) {
    const int yi = clamp((int)y + i, 0, h - 1);
    sum += convert_float4(rsGetElementAt_uchar4(gTmp, x, yi)) * gWeights[i + gRadius];
  }
  return toPixel(sum);
}

float4 RS_KERNEL horizontalFloat(uchar4 in, uint32_t x, uint32_t y) { return horizontalSum(x, y); }

uchar4 RS_KERNEL verticalFloat(float4 in, uint32_t x, uint32_t y) {
  const int h = (int)max(rsAllocationGetDimY(gTmpF), 1u);
  float4 sum = 0.0f;
  for (int i = -gRadius; i <= gRadius; ++i) {
    const int yi = clamp((int)y + i, 0, h - 1);
    sum += rsGetElementAt_float4(gTmpF, x, yi) * gWeights[i + gRadius];
  }
  return toPixel(sum);
}

void blur() {
  rsForEach(horizontal, gIn, gTmp);
  rsForEach(vertical, gTmp, gOut);
}

void blurFloat() {
  rsForEach(horizontalFloat, gIn, gTmpF);
  rsForEach(verticalFloat, gTmpF, gOut);
}
