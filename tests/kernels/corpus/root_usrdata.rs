// The old RenderScript form: root(const T* in, U* out, const void* usrData, uint32_t x, uint32_t y).
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.root)

void root(const uchar4* in, float4* out, const void* usrData, uint32_t x, uint32_t y) {
  *out = convert_float4(*in) + (float4){(float)x, (float)y, usrData == NULL ? 0.0f : 1.0f, 1.0f};
}
