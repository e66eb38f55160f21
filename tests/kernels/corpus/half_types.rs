// half (_Float16) elements and vectors: single operations and conversions, each rounded once to half.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.half)

half RS_KERNEL half_add(half a, half b) { return a + b; }

half2 RS_KERNEL to_half2(float2 in) { return convert_half2(in); }

float4 RS_KERNEL from_half4(half4 in) { return convert_float4(in.wzyx); }

half RS_KERNEL half_twice(half in) { return in * (half)2.0f; }
