/* A script exercising every part of kernel_abi.h, expanded by hand as kilnc would:
 *
 *   float gain = 1.0f;                    // a settable global
 *   int32_t counter;                      // changed by invokables
 *   rs_allocation g_in, g_out;            // bound allocations for a nested rsForEach
 *   float RS_KERNEL add(float a, float b) { return a + b * gain; }
 *   float RS_KERNEL mad2d(float in, uint32_t x, uint32_t y) { return in * gain + x - 2.0f * y; }
 *   int32_t RS_KERNEL coords(uint32_t x, uint32_t y, uint32_t z) { return x + 1000 * y + 1000000 * z; }
 *   void set_gain(float g);  void bump(int32_t by);  void hello(void);  void bad_access(void);
 *   void nested(void) { rsForEach(mad2d, g_in, g_out); }
 *   #pragma rs reduce(sum_i32) accumulator(sum_accum) combiner(sum_combine)   // int64 accumulator
 *   void init(void) { counter = 7; } */
#include "kiln/kernel_abi.h"

float gain = 1.0f;
int32_t counter = 0;
KilnKernelAllocation* g_in = 0;
KilnKernelAllocation* g_out = 0;

void __kiln_expand_add(const KilnKernelLaunch* launch, uint32_t x_begin, uint32_t x_end, uint32_t y,
                       uint32_t z) {
  const uint8_t* a = launch->in[0] + y * launch->in_stride_y[0] + z * launch->in_stride_z[0];
  const uint8_t* b = launch->in[1] + y * launch->in_stride_y[1] + z * launch->in_stride_z[1];
  uint8_t* out = launch->out + y * launch->out_stride_y + z * launch->out_stride_z;
  for (uint32_t x = x_begin; x < x_end; ++x) {
    float va = *(const float*)(a + x * launch->in_stride_x[0]);
    float vb = *(const float*)(b + x * launch->in_stride_x[1]);
    *(float*)(out + x * launch->out_stride_x) = va + vb * gain;
  }
}

void __kiln_expand_mad2d(const KilnKernelLaunch* launch, uint32_t x_begin, uint32_t x_end, uint32_t y,
                         uint32_t z) {
  const uint8_t* in = launch->in[0] + y * launch->in_stride_y[0] + z * launch->in_stride_z[0];
  uint8_t* out = launch->out + y * launch->out_stride_y + z * launch->out_stride_z;
  for (uint32_t x = x_begin; x < x_end; ++x) {
    float v = *(const float*)(in + x * launch->in_stride_x[0]);
    *(float*)(out + x * launch->out_stride_x) = v * gain + (float)x - 2.0f * (float)y;
  }
}

void __kiln_expand_coords(const KilnKernelLaunch* launch, uint32_t x_begin, uint32_t x_end, uint32_t y,
                          uint32_t z) {
  uint8_t* out = launch->out + y * launch->out_stride_y + z * launch->out_stride_z;
  for (uint32_t x = x_begin; x < x_end; ++x) {
    *(int32_t*)(out + x * launch->out_stride_x) = (int32_t)(x + 1000u * y + 1000000u * z);
  }
}

void __kiln_invoke_set_gain(const void* args) { gain = *(const float*)args; }
void __kiln_invoke_bump(const void* args) { counter += *(const int32_t*)args; }
void __kiln_invoke_init(const void* args) { counter = 7; }

void __kiln_invoke_hello(const void* args) {
  float value[2] = {1.5f, -2.0f};
  __kiln_rt_debug("hello", 1 /* kKilnFloat32 */, 2, value);
  int32_t payload = counter;
  __kiln_rt_send_to_client(42, &payload, sizeof(payload), 0);
}

void __kiln_invoke_bad_access(const void* args) { __kiln_rt_element_access_error(g_in, 5, 6, 0, 4); }

void __kiln_invoke_nested(const void* args) {
  const KilnKernelAllocation* allocations[2] = {g_in, g_out};
  if (!__kiln_rt_for_each("mad2d", allocations, 2, 0)) counter = -1;
}

void __kiln_reduce_sum_i32_init(void* accum) { *(int64_t*)accum = 0; }
void __kiln_reduce_sum_i32_accum(const KilnKernelLaunch* launch, void* accum, uint32_t x_begin,
                                 uint32_t x_end, uint32_t y, uint32_t z) {
  const uint8_t* in = launch->in[0] + y * launch->in_stride_y[0] + z * launch->in_stride_z[0];
  int64_t sum = *(int64_t*)accum;
  for (uint32_t x = x_begin; x < x_end; ++x) sum += *(const int32_t*)(in + x * launch->in_stride_x[0]);
  *(int64_t*)accum = sum;
}
void __kiln_reduce_sum_i32_combine(void* accum, const void* other) {
  *(int64_t*)accum += *(const int64_t*)other;
}
void __kiln_reduce_sum_i32_out(void* result, const void* accum) {
  *(int64_t*)result = *(const int64_t*)accum;
}
