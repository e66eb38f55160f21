// Vectors of 2, 3 and 4 lanes of several element types, with swizzles (xyzw, rgba and sN spellings), lane
// assignment through swizzles and element-wise operators.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.vectors)

float4 RS_KERNEL swizzle_float4(float4 in) { return in.wzyx - in.xxyy; }

float3 RS_KERNEL swizzle_float3(float3 in) { return in.zxy * in.yyz; }

float2 RS_KERNEL swizzle_float2(float2 in) { return in.yx / (in.xx + 4.0f); }

int4 RS_KERNEL swizzle_int4(int4 in) {
  int4 r = in;
  r.xw = in.wx;
  r.s12 = in.s21 ^ 0xff;
  return r;
}

uchar3 RS_KERNEL swizzle_uchar3(uchar3 in) { return in.bgr + (uchar3){1, 2, 3}; }

short2 RS_KERNEL swizzle_short2(short2 in) { return (short2){in.y, (short)(in.x >> 1)}; }

ulong3 RS_KERNEL swizzle_ulong3(ulong3 in) { return in.zzx ^ (in.yxz << 3); }

uchar4 RS_KERNEL rgba_to_bgra(uchar4 in) { return in.bgra; }
