// A script with state: globals with defaults, a struct global, an allocation, init() and invokables.
#pragma version(1)
#pragma rs java_package_name(com.example.state)

typedef struct Params {
  float gain;
  int bias;
  uchar4 tint;
} Params;

float gScale = 2.5f;
int gCounter;
const int kLimit = 42;
Params gParams = {1.5f, -3, {1, 2, 3, 4}};
rs_allocation gLookup;
float *gBound;
static float sHidden = 7.0f;

void init() {
  gCounter = 10;
}

void setScale(float scale, int counter) {
  gScale = scale;
  gCounter = counter + kLimit;
}

void bump(void) {
  gCounter++;
  rsDebug("bumped", gCounter);
}

float RS_KERNEL scaled(float in, uint32_t x) {
  return in * gScale + (float)x + sHidden * 0.0f + rsGetElementAt_float(gLookup, x % rsAllocationGetDimX(gLookup));
}

void RS_KERNEL count_positive(int in) {
  if (in > 0) rsAtomicInc(&gCounter);
}

void root(const float *in, float *out, const void *usrData, uint32_t x, uint32_t y) {
  *out = *in + (float)(x + y);
}
