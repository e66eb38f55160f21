// Script globals: non-static ones (scalars, vectors, arrays, a struct) are reflected and set from the API;
// const globals are read by kernels but cannot be set; static globals are private to the script.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.globals)

typedef struct Tone {
  float gain;
  int offset;
  uchar4 tint;
  float3 weights;
} Tone;

float gGain = 1.0f;
int4 gOffsets = {1, 2, 3, 4};
int gTable[8];
Tone gTone = {2.0f, -5, {10, 20, 30, 40}, {0.5f, 0.25f, 0.125f}};
const float kScale = 0.5f;
const int kPrimes[4] = {2, 3, 5, 7};
static int sBias = 100;

float RS_KERNEL apply_gain(float in) { return in * gGain * kScale; }

int4 RS_KERNEL apply_offsets(int in, uint32_t x) {
  return (int4){in, in, in, in} + gOffsets + gTable[x % 8u] * kPrimes[x % 4u] + sBias;
}

float4 RS_KERNEL apply_tone(uchar4 in) {
  const float3 rgb = convert_float3(in.rgb + gTone.tint.rgb);
  return (float4){rgb.r * gTone.weights.x, rgb.g * gTone.weights.y, rgb.b * gTone.weights.z,
                  (float)(in.a + gTone.offset) * gTone.gain};
}

/* Changes the static global, which the API cannot see. */
void setBias(int bias) { sBias = bias; }
