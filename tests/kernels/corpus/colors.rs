// rsUnpackColor8888 and rsPackColorTo8888 (float4, float3 and four-float forms).
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.colors)

float4 RS_KERNEL unpack(uchar4 in) { return rsUnpackColor8888(in); }
uchar4 RS_KERNEL pack4(float4 in) { return rsPackColorTo8888(in); }
uchar4 RS_KERNEL pack3(float3 in) { return rsPackColorTo8888(in); }
uchar4 RS_KERNEL pack_rgba(float4 in) { return rsPackColorTo8888(in.w, in.z, in.y, in.x); }
uchar4 RS_KERNEL roundtrip(uchar4 in) { return rsPackColorTo8888(rsUnpackColor8888(in)); }
