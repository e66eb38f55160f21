// Invokables taking rs_allocation arguments (RenderScript's `script.invoke_sum(allocation, 2.0f)`): the host
// passes a tensor, the invokable reads and writes it, and a kernel uses what the invokable computed.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.invokealloc)

float gSum;
int gCount;

void sum(rs_allocation a, float scale) {
  if (!rsIsObject(a)) {
    gCount = -1;
    return;
  }
  float s = 0.0f;
  const uint32_t n = rsAllocationGetDimX(a);
  for (uint32_t x = 0; x < n; ++x) s += rsGetElementAt_float(a, x);
  gSum = s * scale;
  gCount = (int)n;
}

void scaleInPlace(rs_allocation a, float k) {
  for (uint32_t x = 0; x < rsAllocationGetDimX(a); ++x) rsSetElementAt_float(a, rsGetElementAt_float(a, x) * k, x);
}

void pixels(int unused, rs_allocation image) {
  gCount = (int)(rsAllocationGetDimX(image) * 1000u + rsAllocationGetDimY(image));
  gSum = (float)rsGetElementAt_uchar4(image, 1, 2).y;
}

float RS_KERNEL times_sum(float in) { return in * gSum; }
