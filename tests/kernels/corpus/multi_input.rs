// Kernels with 1 to 8 inputs taken by value, of mixed types. Every sum is exact in its result type.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.inputs)

float RS_KERNEL in1(float a) { return a * 2.0f; }

float RS_KERNEL in2(float a, int b) { return a + (float)b; }

int RS_KERNEL in3(int a, short b, char c) { return a - b * c; }

float4 RS_KERNEL in4(float4 a, float4 b, float c, uchar4 d) { return (a - b) * c + convert_float4(d); /* small integers in the test: exact, fused or not */ }

int RS_KERNEL in5(int a, int b, int c, int d, int e) { return a - b + c - d + e; }

long RS_KERNEL in6(long a, uint b, ushort c, uchar d, char e, short f) { return a + b - c + d * e - f; }

double RS_KERNEL in7(float a, int b, uchar c, short d, uint e, char f, ushort g) {
  return (double)a + b + c + d + e + f + g;
}

double RS_KERNEL in8(float a, int b, uchar c, short d, uint e, char f, ushort g, double h) {
  return (double)a + b + c + d + e + f + g + h;
}
