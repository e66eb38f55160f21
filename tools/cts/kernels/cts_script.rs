// Script state: globals of several types with defaults, a const, a struct, an allocation, init() and
// invokables with packed arguments, and a message to the client.
#pragma version(1)
#pragma rs java_package_name(com.kiln.cts)

typedef struct Params {
  float gain;
  int bias;
  uchar4 tint;
} Params;

float gScale = 2.5f;
int gCounter;
double gOffset = 0.25;
float4 gTint = {1.0f, 2.0f, 3.0f, 4.0f};
long gBig = -5;
const int kLimit = 42;
Params gParams = {1.5f, -3, {1, 2, 3, 4}};
int gInitRan;
rs_allocation gLookup;

void init() {
  gInitRan = 7;
  gCounter = 10;
}

void setScale(float scale, int counter) {
  gScale = scale;
  gCounter = counter + kLimit;
}

void addOffset(double offset, long big) {
  gOffset += offset;
  gBig += big;
}

void bump(void) {
  gCounter++;
}

void notify(int value) {
  int payload[2] = {value, gCounter};
  rsSendToClient(value, payload, sizeof(payload));
}

float RS_KERNEL scaled(float in) {
  return in * gScale + (float)gOffset + gParams.gain * (float)gParams.bias + gTint.y + (float)gBig;
}

// Reads the bound allocation at x: a launch wider than the allocation is an out-of-range access, which a
// driver must turn into a failed launch with a message.
float RS_KERNEL lookup(uint32_t x) {
  return rsGetElementAt_float(gLookup, x) * 2.0f;
}
