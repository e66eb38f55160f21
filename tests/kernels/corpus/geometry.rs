// Geometry: dot, cross, length, distance, normalize on float2/3/4, and their fast_/native_ forms.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.geometry)

float RS_KERNEL k_dot4(float4 a, float4 b) { return dot(a, b); }
float RS_KERNEL k_dot3(float3 a, float3 b) { return dot(a, b); }
float3 RS_KERNEL k_cross3(float3 a, float3 b) { return cross(a, b); }
float4 RS_KERNEL k_cross4(float4 a, float4 b) { return cross(a, b); }
float RS_KERNEL k_length3(float3 in) { return length(in); }
float RS_KERNEL k_length2(float2 in) { return length(in); }
float RS_KERNEL k_distance4(float4 a, float4 b) { return distance(a, b); }
float4 RS_KERNEL k_normalize4(float4 in) { return normalize(in); }
float3 RS_KERNEL k_normalize3(float3 in) { return normalize(in); }
float RS_KERNEL k_native_length3(float3 in) { return native_length(in); }
float3 RS_KERNEL k_fast_normalize3(float3 in) { return fast_normalize(in); }
