// Math GPU forms through the compute API (issue #12 item 5): sinh under rs_fp_imprecise, the case that returned
// 2.98e-8 for sinh(1e-8) on Vulkan (compute_test.cc, MathOnEveryDevice).
#pragma version(1)
#pragma rs java_package_name(com.kiln.tests)
#pragma rs_fp_imprecise

float RS_KERNEL imprecise_sinh(float v) { return sinh(v); }
float4 RS_KERNEL imprecise_mix(float v) { return (float4){cosh(v), tanh(v), native_sin(v), pow(v, 3.0f)}; }
