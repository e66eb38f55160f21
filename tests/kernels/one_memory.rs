// Kernels whose launch tensors are also bound to rs_allocation globals of the same script, as RenderScript
// apps bind them: a tensor must be one memory on every device (compute_test.cc, OneMemory), whether the
// device wraps host memory or holds a copy.
#pragma version(1)
#pragma rs java_package_name(com.kiln.tests)

rs_allocation gOut;  // bound to the launch's output
rs_allocation gIn;   // bound to the launch's input
rs_allocation gA;    // gA and gB: bound to one tensor
rs_allocation gB;

float RS_KERNEL twice(float v) { return 2.0f * v; }

float RS_KERNEL plus_bound_input(float v, uint32_t x) { return v + rsGetElementAt_float(gIn, x); }

float RS_KERNEL store_through_a(float v, uint32_t x) {
  rsSetElementAt_float(gA, v + 1.0f, x);
  return v;
}
