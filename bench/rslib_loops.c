/* The rslib functions inlined into plain x-loops, compiled -O3 -march=native (bench/rslib.cmake): what a
 * kernel's expanded loop runs after kilnc links kiln_rslib.bc and the CPU driver optimizes for the host. The
 * library sources are included so that their bodies inline here, as they do after bitcode linking. */
#include "compiler/rslib/math_basic.c"
#include "compiler/rslib/math_explog.c"
#include "compiler/rslib/math_hyp.c"
#include "compiler/rslib/math_native.c"
#include "compiler/rslib/math_trig.c"

#define RB_LOOP(name, expr)                                                       \
  void rslib_bench_##name(const float* restrict in, float* restrict out, int n) { \
    for (int i = 0; i < n; ++i) out[i] = expr;                                    \
  }
RB_LOOP(atan, atan(in[i]))
RB_LOOP(exp, exp(in[i]))
RB_LOOP(log, log(in[i]))
RB_LOOP(sin, sin(in[i]))
RB_LOOP(tanh, tanh(in[i]))
RB_LOOP(pow, pow(in[i], 1.7f))
RB_LOOP(native_exp, native_exp(in[i]))
RB_LOOP(native_sin, native_sin(in[i]))
