// Old-style kernels under names other than root (issue #12): RenderScript takes any exported function that
// returns void and takes a pointer first as a kernel, with root()'s parameter forms; a static helper and an
// invokable beside them stay what they are.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.oldstyle)

float gGain = 2.0f;

static float scaled(float v) { return v * gGain; }

void scale(const float* in, float* out) { *out = scaled(*in) + 1.0f; }

void scale_at(const float* in, float* out, const void* usrData, uint32_t x) {
  *out = *in + (float)x + (usrData == NULL ? 0.0f : 100.0f);
}

void coords_only(int* out, uint32_t x, uint32_t y) { *out = (int)(x * 1000 + y); }

void set_gain(float g) { gGain = g; }
