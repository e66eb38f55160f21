// Two inputs that broadcast against each other, and a scale set from an op's options.
#pragma version(1)
#pragma rs java_package_name(com.kiln.tests)

float scale = 1.0f;
int bias = 0;
float3 unused_vector;

float RS_KERNEL add2(float a, float b) {
  return (a + b) * scale + (float)bias;
}
