// A vignette: darkens each pixel by its distance from the centre, using the kernel's x and y.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.image.vignette)
#pragma rs_fp_relaxed

float2 gCenter = {0.0f, 0.0f};
float gInvRadius = 1.0f;
float gStrength = 0.8f;

uchar4 RS_KERNEL vignette(uchar4 in, uint32_t x, uint32_t y) {
  const float2 d = ((float2){(float)x, (float)y} - gCenter) * gInvRadius;
  const float keep = clamp(1.0f - gStrength * dot(d, d), 0.0f, 1.0f);
  float4 c = rsUnpackColor8888(in);
  c.rgb *= keep;
  return rsPackColorTo8888(c);
}
