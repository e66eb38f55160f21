// convert_<T><N> between integer and floating-point vectors (truncation toward zero, wrapping narrowing of
// integers, rounding of wide integers to float).
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.convert)

int4 RS_KERNEL float4_to_int4(float4 in) { return convert_int4(in); }
float4 RS_KERNEL int4_to_float4(int4 in) { return convert_float4(in); }
float3 RS_KERNEL uchar3_to_float3(uchar3 in) { return convert_float3(in); }
uchar4 RS_KERNEL float4_to_uchar4(float4 in) { return convert_uchar4(in); }
int2 RS_KERNEL short2_to_int2(short2 in) { return convert_int2(in); }
char4 RS_KERNEL int4_to_char4(int4 in) { return convert_char4(in); }
float2 RS_KERNEL ulong2_to_float2(ulong2 in) { return convert_float2(in); }
float2 RS_KERNEL double2_to_float2(double2 in) { return convert_float2(in); }
ushort4 RS_KERNEL uint4_to_ushort4(uint4 in) { return convert_ushort4(in); }
long3 RS_KERNEL int3_to_long3(int3 in) { return convert_long3(in); }
