// A script with state: init() sets defaults, invokables with arguments of several types change them, a
// static global counts the calls, and a kernel uses the result.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.invoke)

float gScale;
int gBias;
float4 gColor;
long gTotal;
int gInvocations;
static int sCalls;

void init() {
  gScale = 1.5f;
  gBias = 7;
  gColor = (float4){0.25f, 0.5f, 0.75f, 1.0f};
  gTotal = -1;
}

void setParams(float scale, int bias, float4 color) {
  gScale = scale;
  gBias = bias;
  gColor = color;
  gInvocations = ++sCalls;
}

void accumulate(long amount, uchar times, short sign) {
  for (uchar i = 0; i < times; ++i) gTotal += amount * sign;
  gInvocations = ++sCalls;
}

void reset(void) {
  gTotal = 0;
  gInvocations = ++sCalls;
}

int RS_KERNEL apply(int in) { return in * (int)gScale + gBias; }

float4 RS_KERNEL tint(float4 in) { return in * gColor; }
