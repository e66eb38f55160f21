// The Atan op of examples/atan/atan.tflite as a kernel: y = atan(x + offset), written once in RenderScript's
// C99 dialect. kilnc compiles it for the CPU driver and the Vulkan driver; `kiln run --op Atan=atan_op.kmod:atan_op`
// serves the model's custom op with it (scripts/demo.sh), and the custom option "offset" sets the global.
#pragma version(1)
#pragma rs java_package_name(com.example)

float offset = 0.0f;

float RS_KERNEL atan_op(float in) {
  return atan(in + offset);
}
