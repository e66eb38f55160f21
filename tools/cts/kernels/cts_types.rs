// One kernel per element type the conformance suite launches: out = a * 3 + b + (x + 2y + 3z), with every
// scalar type from char to ulong, float and double, and 2-, 3- and 4-lane vectors. Integer lanes wrap as C
// conversions do; the suite computes the same on the host.
#pragma version(1)
#pragma rs java_package_name(com.kiln.cts)

#define CTS_MAD(T)                                                                      \
  T RS_KERNEL mad_##T(T a, T b, uint32_t x, uint32_t y, uint32_t z) {                   \
    return a * (T)3 + b + (T)(x + 2 * y + 3 * z);                                       \
  }

CTS_MAD(char)
CTS_MAD(uchar)
CTS_MAD(short)
CTS_MAD(ushort)
CTS_MAD(int)
CTS_MAD(uint)
CTS_MAD(long)
CTS_MAD(ulong)
CTS_MAD(float)
CTS_MAD(double)
CTS_MAD(char2)
CTS_MAD(uchar4)
CTS_MAD(short3)
CTS_MAD(ushort2)
CTS_MAD(int2)
CTS_MAD(int3)
CTS_MAD(int4)
CTS_MAD(uint3)
CTS_MAD(long2)
CTS_MAD(ulong3)
CTS_MAD(float2)
CTS_MAD(float3)
CTS_MAD(float4)
CTS_MAD(double2)
CTS_MAD(double3)
CTS_MAD(double4)

// A byte copy, for device-side copies between buffers at any offset.
uchar RS_KERNEL copy_bytes(uchar in) { return in; }
