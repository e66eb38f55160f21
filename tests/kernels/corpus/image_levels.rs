// Levels: an input black/white point, a gamma and an output range, after a saturation matrix; the derived
// values come from an invokable, as in RenderScript's image-processing samples.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.image.levels)
#pragma rs_fp_relaxed

float gInBlack = 0.0f;
float gOutBlack = 0.0f;
float gOverInRange = 1.0f / 255.0f;
float gOutRange = 255.0f;
float gGamma = 1.0f;
rs_matrix3x3 gSaturation;

void setLevels(float inBlack, float inWhite, float outBlack, float outWhite, float gamma, float saturation) {
  gInBlack = inBlack;
  gOutBlack = outBlack;
  gOverInRange = 1.0f / (inWhite - inBlack);
  gOutRange = outWhite - outBlack;
  gGamma = gamma;
  const float rw = 0.299f * (1.0f - saturation);
  const float gw = 0.587f * (1.0f - saturation);
  const float bw = 0.114f * (1.0f - saturation);
  const float m[9] = {rw + saturation, rw, rw, gw, gw + saturation, gw, bw, bw, bw + saturation};
  rsMatrixLoad(&gSaturation, m);
}

uchar4 RS_KERNEL levels(uchar4 in) {
  float3 p = rsMatrixMultiply(&gSaturation, convert_float3(in.rgb));
  p = clamp((p - gInBlack) * gOverInRange, 0.0f, 1.0f);
  p = pow(p, (float3){gGamma, gGamma, gGamma});
  p = clamp(p * gOutRange + gOutBlack + 0.5f, 0.0f, 255.0f);
  uchar4 out;
  out.rgb = convert_uchar3(p);
  out.a = in.a;
  return out;
}
