// Static globals a script computes on the CPU and its kernels read (the image-filter pattern): init() and
// setters fill a lookup table, a weight vector and a struct the API cannot see; the kernels that read them get a
// GPU form, and the runtime carries the values to the device before each launch.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.statictables)

typedef struct Window {
  int lo;
  int hi;
  uchar4 fill;
} Window;

static float sLut[256];
static int4 sWeights;
static Window sWindow;
static int sCalls;
int gOffset;  // set from the API, beside the static ones

static void fillLut(float gain) {
  for (int i = 0; i < 256; ++i) sLut[i] = (float)i * gain;
  ++sCalls;
}

void init() {
  sWeights = (int4){3, -5, 7, 11};
  sWindow.lo = -100;
  sWindow.hi = 100;
  sWindow.fill = (uchar4){1, 2, 3, 4};
  fillLut(0.5f);
}

void setGain(float gain) { fillLut(gain); }

void setWindow(int lo, int hi, uchar4 fill) {
  sWindow.lo = lo;
  sWindow.hi = hi;
  sWindow.fill = fill;
  ++sCalls;
}

void setWeights(int4 weights) { sWeights = weights; }

float RS_KERNEL lut(uchar in) { return sLut[in]; }

int RS_KERNEL weigh(int4 in) {
  return in.x * sWeights.x + in.y * sWeights.y + in.z * sWeights.z + in.w * sWeights.w + gOffset;
}

int RS_KERNEL window(int in) { return clamp(in, sWindow.lo, sWindow.hi) + sCalls; }

uchar4 RS_KERNEL tint(uchar4 in) { return in + sWindow.fill; }
