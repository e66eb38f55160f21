// half (_Float16) elements and vectors: single operations and conversions, each rounded once to half.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.half)

half RS_KERNEL half_add(half a, half b) { return a + b; }

half2 RS_KERNEL to_half2(float2 in) { return convert_half2(in); }

float4 RS_KERNEL from_half4(half4 in) { return convert_float4(in.wzyx); }

half RS_KERNEL half_twice(half in) { return in * (half)2.0f; }

// Several operations in one expression, a half3 (stored as a half4), a half literal, comparisons and a half
// script global: each operation rounds to half (kilnc compiles half arithmetic without excess precision), so
// the CPU driver and the GPU's float16_t agree bit for bit.
half gBias = 0.5f;

half RS_KERNEL half_chain(half a) { return a * a - a * (half)0.75f + gBias; }

half3 RS_KERNEL half3_affine(half3 in) {
  half3 t = in * (half)0.5f;
  return t + (half3){1.0f, -2.0f, 3.5f};
}

int RS_KERNEL half_compare(half in) { return in > (half)1.5f ? (int)in : (in == (half)0.0f ? 7 : -1); }
