// The "common" functions: clamp, mix, step, smoothstep, sign, mad, min/max/abs on floats and integers, clz,
// degrees/radians, scalar and vector forms.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.common)

float gEdge0 = -0.5f;
float gEdge1 = 0.75f;

float RS_KERNEL k_clamp(float in) { return clamp(in, -1.0f, 2.0f); }
float RS_KERNEL k_mix(float a, float b) { return mix(a, b, 0.3f); }
float4 RS_KERNEL k_mix4(float4 a, float4 b, float4 t) { return mix(a, b, t); }
float RS_KERNEL k_step(float in) { return step(0.25f, in); }
float4 RS_KERNEL k_step4(float4 edge, float4 in) { return step(edge, in); }
float RS_KERNEL k_smoothstep(float in) { return smoothstep(gEdge0, gEdge1, in); }
float RS_KERNEL k_sign(float in) { return sign(in); }
float RS_KERNEL k_mad(float a, float b, float c) { return mad(a, b, c); }
float2 RS_KERNEL k_minmax(float a, float b) { return (float2){min(a, b), max(a, b)}; }
float RS_KERNEL k_degrees(float in) { return degrees(in); }
float RS_KERNEL k_radians(float in) { return radians(in); }

int4 RS_KERNEL k_int_minmax(int4 a, int4 b) {
  int4 r = min(a, b);
  r.zw = max(a, b).zw;
  return r;
}
uint RS_KERNEL k_abs(int in) { return abs(in); }
uchar4 RS_KERNEL k_uchar_clamp(uchar4 in) { return clamp(in, (uchar)40, (uchar)200); }
short RS_KERNEL k_short_minmax(short a, short b) { return max(a, b) - min(a, b); }
// clz at each width: 8-bit, 16-bit, 32-bit, and lane by lane.
uchar RS_KERNEL k_clz_uchar(uchar in) { return clz(in); }
short RS_KERNEL k_clz_short(short in) { return clz(in); }
uint RS_KERNEL k_clz_uint(uint in) { return clz(in); }
int4 RS_KERNEL k_clz_int4(int4 in) { return clz(in); }
long2 RS_KERNEL k_long_clamp(long2 in) { return clamp(in, (long2){-1000000000000l, 0}, (long2){0, 1000000000000l}); }
