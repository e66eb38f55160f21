#pragma version(1)
#pragma rs java_package_name(com.example)

float offset = 0.0f;

float RS_KERNEL atan_op(float in) {
  return atan(in + offset);
}
