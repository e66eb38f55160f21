// Launch shapes: several inputs (some broadcast with stride 0), no inputs at all, and void kernels.
#pragma version(1)
#pragma rs java_package_name(com.kiln.cts)

float RS_KERNEL blend4(float a, float b, float c, float d) {
  return a + 2.0f * b + 3.0f * c + 4.0f * d;
}

int RS_KERNEL iota(uint32_t x, uint32_t y, uint32_t z) {
  return (int)(x + 100u * y + 10000u * z);
}

int gPositives;

void RS_KERNEL count_positive(int in) {
  if (in > 0) rsAtomicInc(&gPositives);
}

// An old-style root() with usrData (a struct of mixed field sizes, read through a local pointer):
// out = in * scale + table[x % 4] + offset + x + y.
typedef struct UsrParams {
  float scale;
  uchar pad;
  short offset;
  float table[4];
} UsrParams;
void root(const float *in, float *out, const void *usrData, uint32_t x, uint32_t y) {
  const UsrParams *p = (const UsrParams *)usrData;
  *out = *in * p->scale + p->table[x & 3] + (float)p->offset + (float)(x + y);
}
