// Full-precision math names in an rs_fp_relaxed script, mixed with arithmetic the compiler may contract.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.relaxed)
#pragma rs_fp_relaxed

float RS_KERNEL relaxed_sin(float in) { return sin(in); }
float RS_KERNEL relaxed_exp(float in) { return exp(in); }
float RS_KERNEL relaxed_log(float in) { return log(in); }
float RS_KERNEL relaxed_atan2(float a, float b) { return atan2(a, b); }
float RS_KERNEL relaxed_pow(float a, float b) { return pow(a, b); }
/* a * b + c across statements: contraction is allowed here. */
float RS_KERNEL relaxed_poly(float in) {
  float t = in * 0.75f;
  t = t + 2.0f;
  return t * in - 1.0f;
}
