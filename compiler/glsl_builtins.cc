// The RenderScript runtime and math functions on the GPU: the GLSL helper library a shader pulls in by name,
// the math functions mapped to GLSL builtins or helpers by precision, and the lowering of every call.
#include <cctype>
#include <string>
#include <utility>

#include "compiler/glsl_lowering_internal.h"

namespace kiln {
namespace compiler {
namespace {

// ---- The GLSL helper library: emitted into a shader only when used ----

// Scalar helpers get vec2/3/4 overloads applied per component (see VectorOverloads).
const LibraryEntry kLibrary[] = {
    {"kiln_index", "",
     "uint kiln_index(uint v, uvec3 p) {\n"
     "  return kiln.view[v].x + p.x * kiln.view[v].y + p.y * kiln.view[v].z + p.z * kiln.view[v].w;\n}\n"},
    {"kiln_unpack_u8", "",
     "uvec4 kiln_unpack_u8(uint w) { return uvec4(w & 255u, (w >> 8) & 255u, (w >> 16) & 255u, w >> 24); "
     "}\n"},
    {"kiln_unpack_i8", "",
     "ivec4 kiln_unpack_i8(uint w) {\n"
     "  int s = int(w);\n"
     "  return ivec4(bitfieldExtract(s, 0, 8), bitfieldExtract(s, 8, 8), bitfieldExtract(s, 16, 8),\n"
     "               bitfieldExtract(s, 24, 8));\n}\n"},
    {"kiln_pack_8", "",
     "uint kiln_pack_8(uvec4 v) {\n"
     "  v &= uvec4(255u);\n"
     "  return v.x | (v.y << 8) | (v.z << 16) | (v.w << 24);\n}\n"},
    {"kiln_unpack_u16", "", "uvec2 kiln_unpack_u16(uint w) { return uvec2(w & 65535u, w >> 16); }\n"},
    {"kiln_unpack_i16", "",
     "ivec2 kiln_unpack_i16(uint w) {\n"
     "  return ivec2(bitfieldExtract(int(w), 0, 16), bitfieldExtract(int(w), 16, 16));\n}\n"},
    {"kiln_pack_16", "", "uint kiln_pack_16(uvec2 v) { return (v.x & 65535u) | (v.y << 16); }\n"},
    // A float rounded to the nearest half value, ties to even, as a float; with integer operations, so that the
    // result does not depend on the device's float16 rounding (Vulkan leaves it open; lavapipe rounds ties away
    // from zero). Overflow gives an infinity (from 65520 up, as in IEEE 754), below 2^-14 the steps of half's
    // subnormals (2^-24), NaN and infinities stay.
    {"kiln_h", "",
     "float kiln_h(float x) {\n"
     "  uint b = floatBitsToUint(x);\n"
     "  uint a = b & 0x7fffffffu;\n"
     "  if (a >= 0x7f800000u) return x;\n"
     "  uint s = b & 0x80000000u;\n"
     "  if (a >= 0x477ff000u) return uintBitsToFloat(s | 0x7f800000u);\n"
     "  if (a < 0x38800000u) return uintBitsToFloat(s | floatBitsToUint(roundEven(uintBitsToFloat(a) * 16777216.0) "
     "* 5.9604644775390625e-8));\n"
     "  return uintBitsToFloat(s | ((a + 0xfffu + ((a >> 13) & 1u)) & 0xffffe000u));\n}\n"},
    // rsMatrixMultiply(&m, v): column-major m times a column vector, summed in the CPU library's order
    // (compiler/rslib/rs_util.c); `precise` keeps the products and sums from being fused.
    {"kiln_matmul4", "",
     "vec4 kiln_matmul4(float a[16], vec4 v) {\n"
     "  precise vec4 r = vec4(a[0] * v.x + a[4] * v.y + a[8] * v.z + a[12] * v.w,\n"
     "                        a[1] * v.x + a[5] * v.y + a[9] * v.z + a[13] * v.w,\n"
     "                        a[2] * v.x + a[6] * v.y + a[10] * v.z + a[14] * v.w,\n"
     "                        a[3] * v.x + a[7] * v.y + a[11] * v.z + a[15] * v.w);\n"
     "  return r;\n}\n"},
    {"kiln_matmul3", "",
     "vec3 kiln_matmul3(float a[9], vec3 v) {\n"
     "  precise vec3 r = vec3(a[0] * v.x + a[3] * v.y + a[6] * v.z, a[1] * v.x + a[4] * v.y + a[7] * v.z,\n"
     "                        a[2] * v.x + a[5] * v.y + a[8] * v.z);\n"
     "  return r;\n}\n"},
    {"kiln_matmul2", "",
     "vec2 kiln_matmul2(float a[4], vec2 v) {\n"
     "  precise vec2 r = vec2(a[0] * v.x + a[2] * v.y, a[1] * v.x + a[3] * v.y);\n"
     "  return r;\n}\n"},
    // C's % truncates toward zero (the sign of the dividend); GLSL leaves negative operands undefined.
    {"kiln_rem", "",
     "int kiln_rem(int a, int b) { return a - b * (a / b); }\n"
     "ivec2 kiln_rem(ivec2 a, ivec2 b) { return a - b * (a / b); }\n"
     "ivec3 kiln_rem(ivec3 a, ivec3 b) { return a - b * (a / b); }\n"
     "ivec4 kiln_rem(ivec4 a, ivec4 b) { return a - b * (a / b); }\n"},
    {"kiln_rem64", "", "int64_t kiln_rem(int64_t a, int64_t b) { return a - b * (a / b); }\n"},
    {"kiln_copysign", "",
     "float kiln_copysign(float m, float s) {\n"
     "  return uintBitsToFloat((floatBitsToUint(m) & 0x7fffffffu) | (floatBitsToUint(s) & "
     "0x80000000u));\n}\n"},
    // fmin/fmax: with one NaN operand, the other (C99 and OpenCL); GLSL's min/max leave NaN undefined.
    {"kiln_fmin", "", "float kiln_fmin(float a, float b) { return isnan(a) ? b : (isnan(b) ? a : min(a, b)); }\n"},
    {"kiln_fmax", "", "float kiln_fmax(float a, float b) { return isnan(a) ? b : (isnan(b) ? a : max(a, b)); }\n"},
    {"kiln_fdim", "",
     "float kiln_fdim(float a, float b) { return (isnan(a) || isnan(b)) ? a + b : (a > b ? a - b : 0.0); "
     "}\n"},
    // C's round: halfway cases away from zero (GLSL's round may pick either).
    {"kiln_round", "",
     "float kiln_round(float v) {\n"
     "  float t = trunc(v);\n"
     "  return abs(v - t) >= 0.5 ? t + sign(v) : t;\n}\n"},
    // RenderScript's one-argument fract: v - floor(v), at most the largest float below 1.
    {"kiln_fract", "", "float kiln_fract(float v) { return min(v - floor(v), 0.99999994); }\n"},
    // atan/atan2 with rslib's reduction and polynomial (compiler/rslib/math_trig.c), so that the CPU and
    // the GPU agree within a few ulp; GLSL's own atan may be 4096 ulp off.
    {"kiln_atan_pos", "",
     "float kiln_atan_pos(float a) {\n"
     "  bool big = a > 2.4142135;\n"
     "  bool mid = a > 0.41421356;\n"
     "  float num = big ? -1.0 : (mid ? a - 1.0 : a);\n"
     "  float den = big ? a : (mid ? a + 1.0 : 1.0);\n"
     "  float t = num / den;\n"
     "  float base_hi = big ? 1.57079637 : (mid ? 0.785398185 : 0.0);\n"
     "  float base_lo = big ? -4.37113883e-08 : (mid ? -2.18556941e-08 : 0.0);\n"
     "  float z = t * t;\n"
     "  float p = -6.078213403e-02;\n"
     "  p = p * z + 1.059381027e-01;\n"
     "  p = p * z - 1.424353282e-01;\n"
     "  p = p * z + 1.999847148e-01;\n"
     "  p = p * z - 3.333331519e-01;\n"
     "  return base_hi + (base_lo + (t + t * z * p));\n}\n"},
    {"kiln_atan", "kiln_atan_pos kiln_copysign",
     "float kiln_atan(float x) { return kiln_copysign(kiln_atan_pos(abs(x)), x); }\n"},
    {"kiln_atanpi", "kiln_atan", "float kiln_atanpi(float x) { return kiln_atan(x) * 0.318309873; }\n"},
    {"kiln_atan2", "kiln_atan_pos kiln_copysign",
     "float kiln_atan2(float y, float x) {\n"
     "  float ax = abs(x), ay = abs(y);\n"
     "  bool y_bigger = ay > ax;\n"
     "  float mx = y_bigger ? ay : ax;\n"
     "  float mn = y_bigger ? ax : ay;\n"
     "  float t = mn / mx;\n"
     "  t = mx == 0.0 ? 0.0 : t;\n"
     "  t = (isinf(ax) && isinf(ay)) ? 1.0 : t;\n"
     "  t = (isnan(x) || isnan(y)) ? x + y : t;\n"
     "  float a = kiln_atan_pos(t);\n"
     "  a = y_bigger ? 1.57079637 + (-4.37113883e-08 - a) : a;\n"
     "  a = (floatBitsToUint(x) >> 31) != 0u ? 3.14159274 + (-8.74227766e-08 - a) : a;\n"
     "  return kiln_copysign(a, y);\n}\n"},
    // sin/cos/tan: rslib's algorithm (compiler/rslib/math_trig.c): Cody-Waite reduction by pi/2 in four
    // parts in double, then the double polynomials on |r| <= pi/4, so that the CPU and the GPU agree (GLSL's
    // own sin/cos/tan are bounded only on [-pi, pi], and loosely). Double arithmetic makes these kernels need
    // the FLOAT64 device feature; `precise` keeps the reduction exact.
    {"kiln_trig_parts", "",
     "double kiln_sin_poly(double r) {\n"
     "  precise double z = r * r;\n"
     "  precise double s = -2.505210838544172e-08lf;\n"
     "  s = s * z + 2.7557319223985893e-06lf;\n"
     "  s = s * z - 0.0001984126984126984lf;\n"
     "  s = s * z + 0.008333333333333333lf;\n"
     "  s = s * z - 0.16666666666666666lf;\n"
     "  precise double v = r + r * z * s;\n"
     "  return v;\n}\n"
     "double kiln_cos_poly(double r) {\n"
     "  precise double z = r * r;\n"
     "  precise double c = 2.08767569878681e-09lf;\n"
     "  c = c * z - 2.755731922398589e-07lf;\n"
     "  c = c * z + 2.48015873015873e-05lf;\n"
     "  c = c * z - 0.001388888888888889lf;\n"
     "  c = c * z + 0.041666666666666664lf;\n"
     "  c = c * z - 0.5lf;\n"
     "  precise double v = 1.0lf + z * c;\n"
     "  return v;\n}\n"
     "double kiln_trig_reduce(float x, out int q) {\n"
     "  precise double xd = double(x);\n"
     "  precise double t = xd * 0.6366197723675814lf + 6755399441055744.0lf;\n"
     "  precise double n = t - 6755399441055744.0lf;\n"
     "  q = int(unpackDouble2x32(t).x & 3u);\n"
     "  precise double r = (((xd - n * 1.5707969665527344lf) - n * -6.39757672615815e-07lf) -\n"
     "                      n * -1.651400370616951e-13lf) - n * 8.333742918520879e-20lf;\n"
     "  r = r < -0.7853981633974483lf ? -0.7853981633974483lf : r;\n"
     "  return r > 0.7853981633974483lf ? 0.7853981633974483lf : r;\n}\n"},
    {"kiln_sin", "kiln_trig_parts",
     "float kiln_sin(float x) {\n"
     "  int q;\n"
     "  double r = kiln_trig_reduce(x, q);\n"
     "  double v = (q & 1) != 0 ? kiln_cos_poly(r) : kiln_sin_poly(r);\n"
     "  float res = float((q & 2) != 0 ? -v : v);\n"
     "  return x == 0.0 ? x : res;\n}\n"},
    {"kiln_cos", "kiln_trig_parts",
     "float kiln_cos(float x) {\n"
     "  int q;\n"
     "  double r = kiln_trig_reduce(x, q);\n"
     "  double v = (q & 1) != 0 ? kiln_sin_poly(r) : kiln_cos_poly(r);\n"
     "  return float(((q + 1) & 2) != 0 ? -v : v);\n}\n"},
    {"kiln_tan", "kiln_trig_parts",
     "float kiln_tan(float x) {\n"
     "  int q;\n"
     "  double r = kiln_trig_reduce(x, q);\n"
     "  double s = kiln_sin_poly(r), c = kiln_cos_poly(r);\n"
     "  float t = float((q & 1) != 0 ? -c / s : s / c);\n"
     "  return x == 0.0 ? x : t;\n}\n"},
    // exp/exp2/exp10/log/log2/log10: rslib's float algorithms (compiler/rslib/math_explog.c): Cody-Waite
    // reduction, the same polynomials, the two-step scaling by 2^n. `precise` keeps the reductions exact
    // (no contraction or reassociation by the device compiler).
    {"kiln_exp_parts", "",
     "float kiln_pow2(int n) { return uintBitsToFloat(uint(n + 127) << 23); }\n"
     "float kiln_scale2(float p, int n) {\n"
     "  int n1 = n >> 1;\n"
     "  return p * kiln_pow2(n1) * kiln_pow2(n - n1);\n}\n"
     "float kiln_clamp_nan(float x, float lo, float hi) {\n"
     "  x = x < lo ? lo : x;\n"
     "  return x > hi ? hi : x;\n}\n"
     "float kiln_exp_q(float r) {\n"
     "  float q = 1.381461100e-03;\n"
     "  q = q * r + 8.368710035e-03;\n"
     "  q = q * r + 4.166838741e-02;\n"
     "  q = q * r + 1.666652069e-01;\n"
     "  return q * r + 4.999999345e-01;\n}\n"},
    {"kiln_exp", "kiln_exp_parts",
     "float kiln_exp(float x) {\n"
     "  precise float xc = kiln_clamp_nan(x, -104.0, 89.0);\n"
     "  precise float n = roundEven(xc * 1.44269502);\n"
     "  int ni = isnan(x) ? 0 : int(n);\n"
     "  precise float r = (xc - n * 0.693145752) - n * 1.42860677e-06;\n"
     "  precise float p = 1.0 + (r + r * r * kiln_exp_q(r));\n"
     "  return kiln_scale2(p, ni);\n}\n"},
    {"kiln_exp2", "kiln_exp_parts",
     "float kiln_exp2(float x) {\n"
     "  precise float xc = kiln_clamp_nan(x, -151.0, 129.0);\n"
     "  precise float n = roundEven(xc);\n"
     "  int ni = isnan(x) ? 0 : int(n);\n"
     "  precise float r = xc - n;\n"
     "  precise float q = 1.535336062e-04;\n"
     "  q = q * r + 1.339887487e-03;\n"
     "  q = q * r + 9.618437366e-03;\n"
     "  q = q * r + 5.550332470e-02;\n"
     "  q = q * r + 2.402264791e-01;\n"
     "  q = q * r + 6.931472029e-01;\n"
     "  return kiln_scale2(1.0 + r * q, ni);\n}\n"},
    {"kiln_exp10", "kiln_exp_parts",
     "float kiln_exp10(float x) {\n"
     "  precise float xc = kiln_clamp_nan(x, -46.0, 39.0);\n"
     "  precise float n = roundEven(xc * 3.32192802);\n"
     "  int ni = isnan(x) ? 0 : int(n);\n"
     "  precise float r = (xc - n * 0.301025391) - n * 4.60503907e-06;\n"
     "  precise float q = 2.063216569e-01;\n"
     "  q = q * r + 5.420251889e-01;\n"
     "  q = q * r + 1.171292687e+00;\n"
     "  q = q * r + 2.034649853e+00;\n"
     "  q = q * r + 2.650948748e+00;\n"
     "  q = q * r + 2.302585167e+00;\n"
     "  return kiln_scale2(1.0 + r * q, ni);\n}\n"},
    {"kiln_log_parts", "",
     "float kiln_log_parts(float x, out float e_out) {\n"
     "  bool den = x < 1.17549435e-38;\n"
     "  float xs = den ? x * 8388608.0 : x;\n"
     "  uint t = floatBitsToUint(xs) - 0x3f3504f3u;\n"
     "  int e = (int(t) >> 23) - (den ? 23 : 0);\n"
     "  precise float m = uintBitsToFloat((t & 0x007fffffu) + 0x3f3504f3u);\n"
     "  precise float f = m - 1.0;\n"
     "  precise float s = f / (2.0 + f);\n"
     "  precise float z = s * s;\n"
     "  precise float r = 2.358147466e-01;\n"
     "  r = r * z + 2.853734681e-01;\n"
     "  r = r * z + 4.000033454e-01;\n"
     "  r = r * z + 6.666666565e-01;\n"
     "  r = r * z;\n"
     "  e_out = float(e);\n"
     "  return f - s * (f - r);\n}\n"
     "float kiln_log_specials(float x, float result) {\n"
     "  result = (isinf(x) && x > 0.0) ? x : result;\n"
     "  result = x == 0.0 ? uintBitsToFloat(0xff800000u) : result;\n"
     "  result = x < 0.0 ? uintBitsToFloat(0x7fc00000u) : result;\n"
     "  return isnan(x) ? x : result;\n}\n"},
    {"kiln_log", "kiln_log_parts",
     "float kiln_log(float x) {\n"
     "  float ef;\n"
     "  precise float m = kiln_log_parts(x, ef);\n"
     "  precise float v = ef * 0.693145752 + (m + ef * 1.42860677e-06);\n"
     "  return kiln_log_specials(x, v);\n}\n"},
    {"kiln_log2", "kiln_log_parts",
     "float kiln_log2(float x) {\n"
     "  float ef;\n"
     "  precise float m = kiln_log_parts(x, ef);\n"
     "  precise float v = ef + m * 1.44269502;\n"
     "  return kiln_log_specials(x, v);\n}\n"},
    {"kiln_log10", "kiln_log_parts",
     "float kiln_log10(float x) {\n"
     "  float ef;\n"
     "  precise float m = kiln_log_parts(x, ef);\n"
     "  precise float v = ef * 0.301025391 + (ef * 4.60503907e-06 + m * 0.434294492);\n"
     "  return kiln_log_specials(x, v);\n}\n"},
    // asin/acos: rslib's float algorithm (compiler/rslib/math_trig.c).
    {"kiln_asin_poly", "",
     "float kiln_asin_poly(float s, float z) {\n"
     "  float p = 3.751645101e-02;\n"
     "  p = p * z + 1.443860425e-02;\n"
     "  p = p * z + 3.180771859e-02;\n"
     "  p = p * z + 4.451695516e-02;\n"
     "  p = p * z + 7.500504185e-02;\n"
     "  p = p * z + 1.666665999e-01;\n"
     "  return s + s * z * p;\n}\n"},
    {"kiln_asin", "kiln_asin_poly kiln_copysign",
     "float kiln_asin(float x) {\n"
     "  float a = abs(x);\n"
     "  bool big = a > 0.5;\n"
     "  precise float z = big ? (1.0 - a) * 0.5 : a * a;\n"
     "  float s = big ? sqrt(z) : a;\n"
     "  precise float p = kiln_asin_poly(s, z);\n"
     "  precise float r = big ? 1.57079637 - (2.0 * p - -4.37113883e-08) : p;\n"
     "  r = a > 1.0 ? uintBitsToFloat(0x7fc00000u) : r;\n"
     "  return kiln_copysign(r, x);\n}\n"},
    {"kiln_acos", "kiln_asin_poly",
     "float kiln_acos(float x) {\n"
     "  float a = abs(x);\n"
     "  bool big = a > 0.5;\n"
     "  precise float z = big ? (1.0 - a) * 0.5 : a * a;\n"
     "  float s = big ? sqrt(z) : x;\n"
     "  precise float p = kiln_asin_poly(s, z);\n"
     "  precise float small_r = 1.57079637 - (p - -4.37113883e-08);\n"
     "  precise float pos_r = 2.0 * p;\n"
     "  precise float neg_r = 3.14159274 - (2.0 * p - -8.74227766e-08);\n"
     "  float r = big ? (x > 0.0 ? pos_r : neg_r) : small_r;\n"
     "  r = a > 1.0 ? uintBitsToFloat(0x7fc00000u) : r;\n"
     "  return isnan(x) ? x : r;\n}\n"},
    {"kiln_asinpi", "kiln_asin", "float kiln_asinpi(float x) { return kiln_asin(x) * 0.318309873; }\n"},
    {"kiln_acospi", "kiln_acos", "float kiln_acospi(float x) { return kiln_acos(x) * 0.318309873; }\n"},
    {"kiln_atan2pi", "kiln_atan2", "float kiln_atan2pi(float y, float x) { return kiln_atan2(y, x) * 0.318309873; }\n"},
    // sinh/cosh: rslib's double algorithm (compiler/rslib/math_hyp.c with the double kernels of
    // rslib_internal.h), so small arguments keep full relative accuracy (GLSL's sinh is (e^x - e^-x) / 2, which
    // cancels: 2.98e-8 for sinh(1e-8)). Double arithmetic: the kernel needs the FLOAT64 device feature.
    {"kiln_exp_d", "",
     "double kiln_pow2d(int n) { return packDouble2x32(uvec2(0u, uint(n + 1023) << 20)); }\n"
     "double kiln_exp_d(double x) {\n"
     "  precise double xc = x < -800.0lf ? -800.0lf : (x > 800.0lf ? 800.0lf : x);\n"
     "  precise double t = xc * 1.4426950408889634lf + 6755399441055744.0lf;\n"
     "  precise double n = t - 6755399441055744.0lf;\n"
     "  int ni = isnan(x) ? 0 : int(unpackDouble2x32(t).x);\n"
     "  precise double r = (xc - n * 0.6931471803691238lf) - n * 1.9082149292705877e-10lf;\n"
     "  precise double p = 2.08767569878681e-09lf;\n"
     "  p = p * r + 2.505210838544172e-08lf;\n"
     "  p = p * r + 2.755731922398589e-07lf;\n"
     "  p = p * r + 2.7557319223985893e-06lf;\n"
     "  p = p * r + 2.48015873015873e-05lf;\n"
     "  p = p * r + 0.0001984126984126984lf;\n"
     "  p = p * r + 0.001388888888888889lf;\n"
     "  p = p * r + 0.008333333333333333lf;\n"
     "  p = p * r + 0.041666666666666664lf;\n"
     "  p = p * r + 0.16666666666666666lf;\n"
     "  p = p * r + 0.5lf;\n"
     "  p = 1.0lf + (r + r * r * p);\n"
     "  int n1 = ni >> 1;\n"
     "  precise double v = p * kiln_pow2d(n1) * kiln_pow2d(ni - n1);\n"
     "  return v;\n}\n"
     "double kiln_expm1_d(double x) {\n"
     "  precise double p = 1.6059043836821613e-10lf;\n"
     "  p = p * x + 2.08767569878681e-09lf;\n"
     "  p = p * x + 2.505210838544172e-08lf;\n"
     "  p = p * x + 2.755731922398589e-07lf;\n"
     "  p = p * x + 2.7557319223985893e-06lf;\n"
     "  p = p * x + 2.48015873015873e-05lf;\n"
     "  p = p * x + 0.0001984126984126984lf;\n"
     "  p = p * x + 0.001388888888888889lf;\n"
     "  p = p * x + 0.008333333333333333lf;\n"
     "  p = p * x + 0.041666666666666664lf;\n"
     "  p = p * x + 0.16666666666666666lf;\n"
     "  p = p * x + 0.5lf;\n"
     "  precise double small_r = x + x * x * p;\n"
     "  precise double large_r = kiln_exp_d(x) - 1.0lf;\n"
     "  return abs(x) < 0.35lf ? small_r : large_r;\n}\n"},
    {"kiln_sinh", "kiln_exp_d kiln_copysign",
     "float kiln_sinh(float x) {\n"
     "  double a = abs(double(x));\n"
     "  a = a < 100.0lf ? a : 100.0lf;\n"
     "  double e = kiln_expm1_d(a);\n"
     "  precise double v = 0.5lf * (e + e / (e + 1.0lf));\n"
     "  float r = float(v);\n"
     "  r = isinf(x) ? uintBitsToFloat(0x7f800000u) : r;\n"
     "  r = kiln_copysign(r, x);\n"
     "  return isnan(x) ? x : r;\n}\n"},
    {"kiln_cosh", "kiln_exp_d",
     "float kiln_cosh(float x) {\n"
     "  double a = abs(double(x));\n"
     "  a = a < 100.0lf ? a : 100.0lf;\n"
     "  double e = kiln_exp_d(a);\n"
     "  precise double v = 0.5lf * (e + 1.0lf / e);\n"
     "  return isnan(x) ? x : float(v);\n}\n"},
    // tanh: rslib's float algorithm (an odd polynomial below 0.55, 1 - 2 / (e^2a + 1) above).
    {"kiln_tanh", "kiln_exp kiln_copysign",
     "float kiln_tanh(float x) {\n"
     "  float a = abs(x);\n"
     "  precise float z = a * a;\n"
     "  precise float p = 2.395819831e-03;\n"
     "  p = p * z - 8.413955228e-03;\n"
     "  p = p * z + 2.178282504e-02;\n"
     "  p = p * z - 5.395965015e-02;\n"
     "  p = p * z + 1.333329370e-01;\n"
     "  p = p * z - 3.333333272e-01;\n"
     "  precise float small_r = a + a * z * p;\n"
     "  float e = kiln_exp(2.0 * a);\n"
     "  precise float large_r = 1.0 - 2.0 / (e + 1.0);\n"
     "  float r = a < 0.55 ? small_r : large_r;\n"
     "  r = kiln_copysign(r, x);\n"
     "  return isnan(x) ? x : r;\n}\n"},
    // native_exp2/exp/exp10/powr and native_sin/cos/tan: rslib's native algorithms (compiler/rslib/
    // math_native.c), pure float, so both drivers meet the native bounds of docs/kernel-math.md over every
    // binade (GLSL's builtins are bounded only in absolute error, or only on [-pi, pi]).
    {"kiln_native_exp2", "kiln_exp_parts",
     "float kiln_native_exp2(float x) {\n"
     "  precise float xc = kiln_clamp_nan(x, -127.0, 128.0);\n"
     "  precise float t = xc + 12582912.0;\n"
     "  precise float n = t - 12582912.0;\n"
     "  int ni = isnan(x) ? 0 : int(floatBitsToUint(t) - floatBitsToUint(12582912.0));\n"
     "  precise float r = xc - n;\n"
     "  precise float q = 9.582850681e-03;\n"
     "  q = q * r + 5.590642825e-02;\n"
     "  q = q * r + 2.402409868e-01;\n"
     "  q = q * r + 6.931241928e-01;\n"
     "  precise float p = 1.0 + r * q;\n"
     "  int n1 = ni >> 1;\n"
     "  precise float res = p * kiln_pow2(n1) * kiln_pow2(ni - n1);\n"
     "  res = xc >= 128.0 ? uintBitsToFloat(0x7f800000u) : res;\n"
     "  return xc <= -127.0 ? 0.0 : res;\n}\n"},
    {"kiln_native_exp", "kiln_native_exp2",
     "float kiln_native_exp(float x) { precise float y = x * 1.44269502; return kiln_native_exp2(y); }\n"},
    {"kiln_native_log2", "",
     "float kiln_native_log2(float x) {\n"
     "  uint t = floatBitsToUint(x) - 0x3f3504f3u;\n"
     "  int e = int(t) >> 23;\n"
     "  precise float f = uintBitsToFloat((t & 0x007fffffu) + 0x3f3504f3u) - 1.0;\n"
     "  precise float q = -2.061885340e-01;\n"
     "  q = q * f + 3.181991335e-01;\n"
     "  q = q * f - 3.664920031e-01;\n"
     "  q = q * f + 4.798119226e-01;\n"
     "  q = q * f - 7.212063818e-01;\n"
     "  q = q * f + 1.442701617e+00;\n"
     "  precise float r = float(e) + f * q;\n"
     "  r = (isinf(x) && x > 0.0) ? x : r;\n"
     "  r = x < 1.17549435e-38 ? uintBitsToFloat(0xff800000u) : r;\n"
     "  r = x < 0.0 ? uintBitsToFloat(0x7fc00000u) : r;\n"
     "  return isnan(x) ? x : r;\n}\n"},
    {"kiln_native_powr", "kiln_native_exp2 kiln_native_log2",
     "float kiln_native_powr(float x, float y) {\n"
     "  precise float l = y * kiln_native_log2(x);\n"
     "  float r = kiln_native_exp2(l);\n"
     "  return x < 0.0 ? uintBitsToFloat(0x7fc00000u) : r;\n}\n"},
    // pow under rs_fp_imprecise: native_powr of |x|, with C's sign rule for a negative base and an integer
    // exponent, pow(x, 0) = pow(1, y) = 1 (the bound is native_powr's; docs/kernel-math.md).
    {"kiln_pow_imprecise", "kiln_native_powr",
     "float kiln_pow_imprecise(float x, float y) {\n"
     "  float r = kiln_native_powr(abs(x), y);\n"
     "  bool y_int = y == trunc(y);\n"
     "  bool y_odd = y_int && abs(mod(y, 2.0)) == 1.0;\n"
     "  r = x < 0.0 ? (y_int ? (y_odd ? -r : r) : uintBitsToFloat(0x7fc00000u)) : r;\n"
     "  return (y == 0.0 || x == 1.0) ? 1.0 : r;\n}\n"},
    {"kiln_native_trig", "kiln_exp_parts",
     "float kiln_native_reduce(float x, out int q) {\n"
     "  precise float xc = kiln_clamp_nan(x, -4194304.0, 4194304.0);\n"
     "  precise float t = xc * 0.636619747 + 12582912.0;\n"
     "  precise float n = t - 12582912.0;\n"
     "  q = int((floatBitsToUint(t) - floatBitsToUint(12582912.0)) & 3u);\n"
     "  precise float r = ((xc - n * 1.57080078) - n * -4.45358455e-06) - n * -8.70551575e-10;\n"
     "  return r;\n}\n"
     "float kiln_native_sin_poly(float r, float z) {\n"
     "  precise float s = -1.951528210e-04;\n"
     "  s = s * z + 8.332160752e-03;\n"
     "  s = s * z - 1.666665461e-01;\n"
     "  precise float v = r + r * z * s;\n"
     "  return v;\n}\n"
     "float kiln_native_cos_poly(float z) {\n"
     "  precise float c = 2.443315513e-05;\n"
     "  c = c * z - 1.388731623e-03;\n"
     "  c = c * z + 4.166664568e-02;\n"
     "  precise float v = 1.0 - 0.5 * z + z * z * c;\n"
     "  return v;\n}\n"},
    {"kiln_native_sin", "kiln_native_trig",
     "float kiln_native_sin(float x) {\n"
     "  int q;\n"
     "  float r = kiln_native_reduce(x, q);\n"
     "  precise float z = r * r;\n"
     "  float v = (q & 1) != 0 ? kiln_native_cos_poly(z) : kiln_native_sin_poly(r, z);\n"
     "  v = (q & 2) != 0 ? -v : v;\n"
     "  v = x == 0.0 ? x : v;\n"
     "  return isinf(x) ? uintBitsToFloat(0x7fc00000u) : v;\n}\n"},
    {"kiln_native_cos", "kiln_native_trig",
     "float kiln_native_cos(float x) {\n"
     "  int q;\n"
     "  float r = kiln_native_reduce(x, q);\n"
     "  precise float z = r * r;\n"
     "  float v = (q & 1) != 0 ? kiln_native_sin_poly(r, z) : kiln_native_cos_poly(z);\n"
     "  v = ((q + 1) & 2) != 0 ? -v : v;\n"
     "  return isinf(x) ? uintBitsToFloat(0x7fc00000u) : v;\n}\n"},
    {"kiln_native_tan", "kiln_native_trig",
     "float kiln_native_tan(float x) {\n"
     "  int q;\n"
     "  float r = kiln_native_reduce(x, q);\n"
     "  precise float z = r * r;\n"
     "  float s = kiln_native_sin_poly(r, z), c = kiln_native_cos_poly(z);\n"
     "  precise float v = (q & 1) != 0 ? -c / s : s / c;\n"
     "  v = x == 0.0 ? x : v;\n"
     "  return isinf(x) ? uintBitsToFloat(0x7fc00000u) : v;\n}\n"},
};

// ---- rsSample (see KernelLowering::SampleCall): the index and wrap rules of the prelude's __kiln_sample ----
const LibraryEntry kSamplerLibrary = {"kiln_sampler", "",
                                      "int kiln_sampler_index(float v) {\n"
                                      "  v = isnan(v) ? 0.0 : v;\n"
                                      "  v = v < -16777216.0 ? -16777216.0 : (v > 16777216.0 ? 16777216.0 : v);\n"
                                      "  return int(floor(v));\n}\n"
                                      "int kiln_sampler_wrap(uint mode, int i, int n) {\n"
                                      "  if (mode == 3u) {\n"
                                      "    int m = i - n * (i / n);\n"
                                      "    return m < 0 ? m + n : m;\n"
                                      "  }\n"
                                      "  if (mode == 6u) {\n"
                                      "    int period = 2 * n;\n"
                                      "    int m = i - period * (i / period);\n"
                                      "    m = m < 0 ? m + period : m;\n"
                                      "    return m < n ? m : period - 1 - m;\n"
                                      "  }\n"
                                      "  return i < 0 ? 0 : (i >= n ? n - 1 : i);\n}\n"};

// ---- rsRand (see KernelLowering::Call) ----
const LibraryEntry kRandLibrary = {
    "kiln_rand", "",
    "uint kiln_rand_calls = 0u;\n"
    "uint kiln_rand_next() {\n"
    "  uvec4 c = uvec4(gl_GlobalInvocationID + kiln.origin.xyz, kiln_rand_calls);\n"
    "  kiln_rand_calls += 1u;\n"
    "  uvec2 k = uvec2(kiln.dim.w, 0x4b494c4eu);\n"
    "  for (int i = 0; i < 10; ++i) {\n"
    "    uint hi0, lo0, hi1, lo1;\n"
    "    umulExtended(0xd2511f53u, c.x, hi0, lo0);\n"
    "    umulExtended(0xcd9e8d57u, c.z, hi1, lo1);\n"
    "    c = uvec4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);\n"
    "    k += uvec2(0x9e3779b9u, 0xbb67ae85u);\n"
    "  }\n"
    "  return c.x;\n}\n"
    "float kiln_rand_unit() { return float(kiln_rand_next() >> 8) * 5.96046448e-08; }\n"
    "int kiln_rand_int(int max_value) {\n"
    "  uint hi, lo;\n"
    "  umulExtended(kiln_rand_next(), uint(max(max_value, 0)), hi, lo);\n"
    "  return int(hi);\n}\n"
    "int kiln_rand_int(int min_value, int max_value) {\n"
    "  uint r = kiln_rand_next();\n"
    "  uint hi, lo;\n"
    "  umulExtended(r, uint(max_value) - uint(min_value), hi, lo);\n"
    "  return max_value <= min_value ? min_value : int(uint(min_value) + hi);\n}\n"
    "float kiln_rand_float(float max_value) { precise float v = kiln_rand_unit() * max_value; return v; }\n"
    "float kiln_rand_float(float min_value, float max_value) {\n"
    "  precise float v = min_value + kiln_rand_unit() * (max_value - min_value);\n"
    "  return v;\n}\n"};

// ---- Math functions of the kernel library without a body in the prelude ----

enum class MathKind {
  kBuiltin,    // a GLSL builtin with the bound Kiln documents (exact, or Vulkan's bound within OpenCL's)
  kHelper,     // a kiln_* helper above
  kImprecise,  // GLSL builtin, allowed only when the precision bound does not apply (native_*, half_*,
               // rs_fp_imprecise)
};

struct MathEntry {
  const char* name;
  const char* glsl;
  MathKind kind;
  int arity;
};

const MathEntry kMath[] = {
    {"fabs", "abs", MathKind::kBuiltin, 1},
    {"floor", "floor", MathKind::kBuiltin, 1},
    {"ceil", "ceil", MathKind::kBuiltin, 1},
    {"trunc", "trunc", MathKind::kBuiltin, 1},
    {"rint", "roundEven", MathKind::kBuiltin, 1},
    {"round", "kiln_round", MathKind::kHelper, 1},
    {"copysign", "kiln_copysign", MathKind::kHelper, 2},
    {"fmin", "kiln_fmin", MathKind::kHelper, 2},
    {"fmax", "kiln_fmax", MathKind::kHelper, 2},
    {"fdim", "kiln_fdim", MathKind::kHelper, 2},
    {"fract", "kiln_fract", MathKind::kHelper, 1},
    {"rsFrac", "kiln_fract", MathKind::kHelper, 1},
    {"sqrt", "sqrt", MathKind::kBuiltin, 1},
    {"rsqrt", "inversesqrt", MathKind::kBuiltin, 1},
    {"atan", "kiln_atan", MathKind::kHelper, 1},
    {"atanpi", "kiln_atanpi", MathKind::kHelper, 1},
    {"atan2", "kiln_atan2", MathKind::kHelper, 2},
    {"atan2pi", "kiln_atan2pi", MathKind::kHelper, 2},
    {"native_atan", "kiln_atan", MathKind::kHelper, 1},
    {"native_atanpi", "kiln_atanpi", MathKind::kHelper, 1},
    {"native_atan2", "kiln_atan2", MathKind::kHelper, 2},
    {"native_sqrt", "sqrt", MathKind::kBuiltin, 1},
    {"native_rsqrt", "inversesqrt", MathKind::kBuiltin, 1},
    {"half_sqrt", "sqrt", MathKind::kBuiltin, 1},
    {"half_rsqrt", "inversesqrt", MathKind::kBuiltin, 1},
    {"length", "length", MathKind::kBuiltin, 1},
    {"distance", "distance", MathKind::kBuiltin, 2},
    {"normalize", "normalize", MathKind::kBuiltin, 1},
    {"fast_length", "length", MathKind::kBuiltin, 1},
    {"native_length", "length", MathKind::kBuiltin, 1},
    {"native_distance", "distance", MathKind::kBuiltin, 2},
    {"native_normalize", "normalize", MathKind::kBuiltin, 1},
    {"fast_distance", "distance", MathKind::kBuiltin, 2},
    {"fast_normalize", "normalize", MathKind::kBuiltin, 1},
    {"native_sin", "kiln_native_sin", MathKind::kHelper, 1},
    {"native_cos", "kiln_native_cos", MathKind::kHelper, 1},
    {"native_tan", "kiln_native_tan", MathKind::kHelper, 1},
    {"native_exp", "kiln_native_exp", MathKind::kHelper, 1},
    {"native_exp2", "kiln_native_exp2", MathKind::kHelper, 1},
    // Vulkan bounds GLSL's log/log2 only by an absolute error near 1 (relative error unbounded there), which
    // breaks even the relaxed ULP bounds: the log family always uses the ported helpers.
    {"native_log", "kiln_log", MathKind::kHelper, 1},
    {"native_log2", "kiln_log2", MathKind::kHelper, 1},
    {"native_powr", "kiln_native_powr", MathKind::kHelper, 2},
    {"half_sin", "kiln_sin", MathKind::kHelper, 1},
    {"half_cos", "kiln_cos", MathKind::kHelper, 1},
    {"half_tan", "kiln_tan", MathKind::kHelper, 1},
    {"half_exp", "kiln_native_exp", MathKind::kHelper, 1},
    {"half_exp2", "kiln_native_exp2", MathKind::kHelper, 1},
    {"half_log", "kiln_log", MathKind::kHelper, 1},
    {"half_log2", "kiln_log2", MathKind::kHelper, 1},
    {"half_powr", "kiln_native_powr", MathKind::kHelper, 2},
    // sin/cos/tan: the ported helpers above. Full-precision functions whose GLSL builtins do not meet
    // OpenCL's bounds and that have no helper yet: only in rs_fp_imprecise.
    {"sin", "kiln_sin", MathKind::kHelper, 1},
    {"cos", "kiln_cos", MathKind::kHelper, 1},
    {"tan", "kiln_tan", MathKind::kHelper, 1},
    {"asin", "kiln_asin", MathKind::kHelper, 1},
    {"acos", "kiln_acos", MathKind::kHelper, 1},
    {"asinpi", "kiln_asinpi", MathKind::kHelper, 1},
    {"acospi", "kiln_acospi", MathKind::kHelper, 1},
    {"native_asin", "kiln_asin", MathKind::kHelper, 1},
    {"native_acos", "kiln_acos", MathKind::kHelper, 1},
    {"native_asinpi", "kiln_asinpi", MathKind::kHelper, 1},
    {"native_acospi", "kiln_acospi", MathKind::kHelper, 1},
    {"sinh", "kiln_sinh", MathKind::kHelper, 1},
    {"native_sinh", "kiln_sinh", MathKind::kHelper, 1},
    {"cosh", "kiln_cosh", MathKind::kHelper, 1},
    {"native_cosh", "kiln_cosh", MathKind::kHelper, 1},
    {"tanh", "kiln_tanh", MathKind::kHelper, 1},
    {"native_tanh", "kiln_tanh", MathKind::kHelper, 1},
    {"exp", "kiln_exp", MathKind::kHelper, 1},
    {"exp2", "kiln_exp2", MathKind::kHelper, 1},
    {"exp10", "kiln_exp10", MathKind::kHelper, 1},
    {"log", "kiln_log", MathKind::kHelper, 1},
    {"log2", "kiln_log2", MathKind::kHelper, 1},
    {"log10", "kiln_log10", MathKind::kHelper, 1},
    {"native_exp10", "kiln_exp10", MathKind::kHelper, 1},
    {"native_log10", "kiln_log10", MathKind::kHelper, 1},
    {"half_exp10", "kiln_exp10", MathKind::kHelper, 1},
    {"half_log10", "kiln_log10", MathKind::kHelper, 1},
    {"pow", "kiln_pow_imprecise", MathKind::kImprecise, 2},
    {"powr", "kiln_native_powr", MathKind::kImprecise, 2},
};

bool IsNativeOrHalf(const std::string& name) {
  return name.rfind("native_", 0) == 0 || name.rfind("half_", 0) == 0;
}

}  // namespace

const LibraryEntry* FindLibrary(const std::string& name) {
  if (name == kRandLibrary.name) return &kRandLibrary;
  if (name == kSamplerLibrary.name) return &kSamplerLibrary;
  for (const LibraryEntry& e : kLibrary) {
    if (name == e.name) return &e;
  }
  return nullptr;
}

const std::set<std::string> kComponentwise = {
    "kiln_copysign",   "kiln_fmin",       "kiln_fmax",        "kiln_round",       "kiln_fract",
    "kiln_atan",       "kiln_atanpi",     "kiln_atan2",       "kiln_atan2pi",     "kiln_exp",
    "kiln_exp2",       "kiln_exp10",      "kiln_log",         "kiln_log2",        "kiln_log10",
    "kiln_asin",       "kiln_acos",       "kiln_asinpi",      "kiln_acospi",      "kiln_fdim",
    "kiln_sin",        "kiln_cos",        "kiln_tan",         "kiln_sinh",        "kiln_cosh",
    "kiln_tanh",       "kiln_native_exp", "kiln_native_exp2", "kiln_native_powr", "kiln_pow_imprecise",
    "kiln_native_sin", "kiln_native_cos", "kiln_native_tan", "kiln_h"};

std::string VectorOverloads(const std::string& name, int arity) {
  std::string out;
  static const char kLanes[] = "xyzw";
  for (int n = 2; n <= 4; ++n) {
    const std::string v = "vec" + std::to_string(n);
    out += v + " " + name + "(";
    for (int a = 0; a < arity; ++a) out += std::string(a ? ", " : "") + v + " a" + std::to_string(a);
    out += ") { return " + v + "(";
    for (int i = 0; i < n; ++i) {
      out += std::string(i ? ", " : "") + name + "(";
      for (int a = 0; a < arity; ++a) {
        out += std::string(a ? ", " : "") + "a" + std::to_string(a) + "." + kLanes[i];
      }
      out += ")";
    }
    out += "); }\n";
  }
  return out;
}

// rsSample(a, s, location[, lod]) on the GPU: the prelude's rules (rs_core.rsh, __kiln_sample) with the texels
// read as 32-bit words, so that one form serves float4 allocations (four words) and uchar4 ones (one word, c /
// 255), chosen by the bound allocation's element size as on the CPU. The allocation's unit is then 4 bytes, so
// a kernel of the same script that reads it with rsGetElementAt_float4 stays on the CPU (and the reverse).
std::string KernelLowering::SampleCall(const clang::CallExpr* e) {
  const clang::SourceLocation loc = e->getBeginLoc();
  GlobalSlot* slot = nullptr;
  Allocation(e->getArg(0), loc, &slot);
  const auto* ref = llvm::cast<clang::DeclRefExpr>(e->getArg(0)->IgnoreParenImpCasts());
  const std::string var = llvm::cast<clang::VarDecl>(ref->getDecl())->getNameAsString();
  std::string why;
  if (!script_->ClaimAllocationUnit(*slot, 4, &why)) Fail(loc, why);
  AllocationUse& use = allocations_[slot->allocation_index];
  if (!use.storage_type.empty() && use.storage_type != "uint") {
    Fail(loc, "allocation '" + var + "' read as two different element types in one kernel (rsSample reads words)");
  }
  use.storage_type = "uint";
  Use("kiln_unpack_u8");
  Use("kiln_sampler");
  needs_fault_ = true;
  (void)Type(e->getArg(1)->getType(), loc);  // declares the rs_sampler struct
  const std::string k = std::to_string(slot->allocation_index);
  const std::string info = slot->read;
  const std::string buffer = "a" + k;
  std::string suffix;
  for (char c : var) suffix += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  const std::string texel = "kiln_texel_" + suffix;
  const std::string sample = "kiln_sample_" + suffix;
  if (!accessors_.count(texel)) {
    accessors_[texel] = "vec4 " + texel +
                        "(int x, int y) {\n"
                        "  uint es = " +
                        info +
                        ".element_size;\n"
                        "  if ((es != 16u && es != 4u) || uint(x) >= " +
                        info + ".dim_x || uint(y) >= max(" + info +
                        ".dim_y, 1u)) {\n"
                        "    kiln_fault_report(1u, " +
                        k +
                        "u, uint(x), uint(y), 0u, 16u);\n"
                        "    return vec4(0.0);\n"
                        "  }\n"
                        "  uint i = " +
                        info + ".offset + uint(x) * (es / 4u) + uint(y) * " + info +
                        ".stride_y;\n"
                        "  if (es == 4u) return vec4(kiln_unpack_u8(" +
                        buffer +
                        "[i])) * (1.0 / 255.0);\n"
                        "  return vec4(uintBitsToFloat(" +
                        buffer + "[i]), uintBitsToFloat(" + buffer + "[i + 1u]), uintBitsToFloat(" + buffer +
                        "[i + 2u]), uintBitsToFloat(" + buffer + "[i + 3u]));\n}\n";
    accessor_order_.push_back(texel);
    accessors_[sample] =
        "vec4 " + sample +
        "(uvec4 m, float u_in, float v_in, bool two_d, float lod) {\n"
        "  int w = int(clamp(" +
        info +
        ".dim_x, 1u, 0x40000000u));\n"
        "  int h = two_d ? int(clamp(" +
        info +
        ".dim_y, 1u, 0x40000000u)) : 1;\n"
        "  uint mode = lod <= 0.0 ? m.y : m.x;\n"
        "  if (mode == 0u) {\n"
        "    int x = kiln_sampler_wrap(m.z, kiln_sampler_index(u_in * float(w)), w);\n"
        "    int y = two_d ? kiln_sampler_wrap(m.w, kiln_sampler_index(v_in * float(h)), h) : 0;\n"
        "    return " +
        texel +
        "(x, y);\n"
        "  }\n"
        "  precise float u = u_in * float(w) - 0.5;\n"
        "  precise float v = two_d ? v_in * float(h) - 0.5 : 0.0;\n"
        "  int iu = kiln_sampler_index(u), iv = kiln_sampler_index(v);\n"
        "  precise float tu = isnan(u) ? 0.0 : u - float(iu);\n"
        "  precise float tv = (two_d && !isnan(v)) ? v - float(iv) : 0.0;\n"
        "  tu = tu < 0.0 ? 0.0 : (tu > 1.0 ? 1.0 : tu);\n"
        "  tv = tv < 0.0 ? 0.0 : (tv > 1.0 ? 1.0 : tv);\n"
        "  int x0 = kiln_sampler_wrap(m.z, iu, w), x1 = kiln_sampler_wrap(m.z, iu + 1, w);\n"
        "  int y0 = two_d ? kiln_sampler_wrap(m.w, iv, h) : 0, y1 = two_d ? kiln_sampler_wrap(m.w, iv + 1, h) : 0;\n"
        "  vec4 p00 = " +
        texel + "(x0, y0), p10 = " + texel +
        "(x1, y0);\n"
        "  vec4 p01 = " +
        texel + "(x0, y1), p11 = " + texel +
        "(x1, y1);\n"
        "  precise vec4 top = p00 + (p10 - p00) * tu;\n"
        "  precise vec4 bottom = p01 + (p11 - p01) * tu;\n"
        "  precise vec4 r = top + (bottom - top) * tv;\n"
        "  return r;\n}\n"
        "vec4 " +
        sample + "_2d(uvec4 m, vec2 uv, float lod) { return " + sample + "(m, uv.x, uv.y, true, lod); }\n";
    accessor_order_.push_back(sample);
  }
  const std::string sampler = "(" + Expr(e->getArg(1)) + ")";
  const std::string modes = "uvec4(" + sampler + ".f_min_filter, " + sampler + ".f_mag_filter, " + sampler +
                            ".f_wrap_s, " + sampler + ".f_wrap_t)";
  const clang::Expr* location = e->getArg(2);
  const bool two_d = location->getType()->isVectorType();
  const std::string at = Expr(location);
  const std::string lod = e->getNumArgs() == 4 ? "float(" + Expr(e->getArg(3)) + ")" : "0.0";
  if (two_d) return sample + "_2d(" + modes + ", " + at + ", " + lod + ")";
  return sample + "(" + modes + ", float(" + at + "), 0.0, false, " + lod + ")";
}

// A read of an rs_matrix2x2/3x3/4x4 through `&matrix`: the matrix's `m` array (column-major, element (col, row)
// at col * N + row, as compiler/rslib/rs_util.c stores it) multiplied by a vector or indexed.
std::string KernelLowering::MatrixCall(const clang::CallExpr* e, bool get) {
  const clang::SourceLocation loc = e->getBeginLoc();
  const std::string name = get ? "rsMatrixGet" : "rsMatrixMultiply";
  const auto* address = llvm::dyn_cast<clang::UnaryOperator>(e->getArg(0)->IgnoreParenImpCasts());
  if (!address || address->getOpcode() != clang::UO_AddrOf) {
    Fail(loc, "a call to '" + name + "' whose matrix is not written '&matrix' (a matrix pointer)");
  }
  const clang::QualType matrix = address->getSubExpr()->getType().getCanonicalType().getUnqualifiedType();
  const auto* record = matrix->getAs<clang::RecordType>();
  const std::string record_name = record ? record->getDecl()->getNameAsString() : "";
  const int dim = record_name == "rs_matrix4x4"   ? 4
                  : record_name == "rs_matrix3x3" ? 3
                  : record_name == "rs_matrix2x2" ? 2
                                                  : 0;
  if (dim == 0) Fail(loc, "a call to '" + name + "' on a '" + matrix.getAsString() + "'");
  const std::string values = "(" + Expr(address->getSubExpr()) + ").f_m";
  if (get) {
    // Out-of-range (col, row) is undefined in C; here it reads the last element rather than past the array.
    return values + "[min(uint(" + Expr(e->getArg(1)) + ") * " + std::to_string(dim) + "u + uint(" +
           Expr(e->getArg(2)) + "), " + std::to_string(dim * dim - 1) + "u)]";
  }
  const clang::QualType vector = e->getArg(1)->getType().getCanonicalType();
  const auto* vt = vector->getAs<clang::VectorType>();
  const unsigned lanes = vt ? vt->getNumElements() : 0;
  std::string v = Expr(e->getArg(1));
  if (lanes == 0 || lanes > static_cast<unsigned>(dim) || lanes < 2) {
    Fail(loc, "a call to 'rsMatrixMultiply' with a '" + vector.getAsString() + "'");
  }
  // RenderScript's widening: a missing z is 0 and a missing w is 1.
  if (dim == 4 && lanes == 3) v = "vec4(" + v + ", 1.0)";
  if (dim == 4 && lanes == 2) v = "vec4(" + v + ", 0.0, 1.0)";
  if (dim == 3 && lanes == 2) v = "vec3(" + v + ", 0.0)";
  const std::string helper = "kiln_matmul" + std::to_string(dim);
  Use(helper);
  return helper + "(" + values + ", " + v + ")";
}

void KernelLowering::Use(const std::string& name) {
  if (library_.count(name)) return;
  if (name.size() > 4 && name.compare(name.size() - 4, 4, "#vec") == 0) {
    library_.insert(name);  // a marker: emit the vector overloads of the helper
    return;
  }
  const LibraryEntry* entry = FindLibrary(name);
  if (!entry) return;
  library_.insert(name);
  std::string deps = entry->deps;
  size_t start = 0;
  while (start < deps.size()) {
    size_t end = deps.find(' ', start);
    if (end == std::string::npos) end = deps.size();
    if (end > start) Use(deps.substr(start, end - start));
    start = end + 1;
  }
  library_order_.push_back(name);
}

std::string KernelLowering::Call(const clang::CallExpr* e) {
  const clang::SourceLocation loc = e->getBeginLoc();
  const clang::FunctionDecl* callee = e->getDirectCallee();
  if (!callee) Fail(loc, "an indirect call");
  const std::string name = callee->getNameAsString();
  const unsigned n = e->getNumArgs();
  auto arg = [&](unsigned i) { return Expr(e->getArg(i)); };
  auto coordinates = [&](unsigned first) {
    std::string out;
    for (unsigned i = 0; i < 3; ++i) {
      out += std::string(i ? ", " : "") + (first + i < n ? "uint(" + arg(first + i) + ")" : "0u");
    }
    return out;
  };
  // Builtins first: clang's elementwise builtins and constant ones (__builtin_inff, ...).
  if (callee->getBuiltinID() != 0) {
    clang::Expr::EvalResult constant;
    if (e->EvaluateAsRValue(constant, context_) && !constant.HasSideEffects) {
      return ValueLiteral(constant.Val, e->getType(), loc);
    }
    if (name == "__builtin_elementwise_min" || name == "__builtin_elementwise_max") {
      return Wrap(
          std::string(name == "__builtin_elementwise_min" ? "min(" : "max(") + arg(0) + ", " + arg(1) + ")",
          e->getType());
    }
    if (name == "__builtin_elementwise_abs") return "abs(" + arg(0) + ")";
    if (name == "__builtin_fabsf") return "abs(" + arg(0) + ")";
    // clz's count (its argument is a uint): findMSB gives the highest set bit's index, -1 for 0.
    if (name == "__builtin_clz") return "(31 - findMSB(" + arg(0) + "))";
    if (name == "__builtin_isnan") return "int(isnan(" + arg(0) + "))";
    if (name == "__builtin_isinf") return "int(isinf(" + arg(0) + "))";
    Fail(loc, "the builtin '" + name + "'");
  }
  if (name.rfind("rsGetElementAt_", 0) == 0 && n >= 2) {
    GlobalSlot* slot = nullptr;
    Allocation(e->getArg(0), loc, &slot);
    const auto* ref = llvm::cast<clang::DeclRefExpr>(e->getArg(0)->IgnoreParenImpCasts());
    const std::string accessor =
        AllocationAccessor(slot, llvm::cast<clang::VarDecl>(ref->getDecl()), e->getType(), false, loc);
    return accessor + "(" + coordinates(1) + ")";
  }
  if (name.rfind("rsSetElementAt_", 0) == 0 && n >= 3) {
    GlobalSlot* slot = nullptr;
    Allocation(e->getArg(0), loc, &slot);
    const auto* ref = llvm::cast<clang::DeclRefExpr>(e->getArg(0)->IgnoreParenImpCasts());
    const std::string accessor = AllocationAccessor(slot, llvm::cast<clang::VarDecl>(ref->getDecl()),
                                                    e->getArg(1)->getType(), true, loc);
    return accessor + "(" + arg(1) + ", " + coordinates(2) + ")";
  }
  if (name == "rsAllocationGetDimX" || name == "rsAllocationGetDimY" || name == "rsAllocationGetDimZ") {
    GlobalSlot* slot = nullptr;
    Allocation(e->getArg(0), loc, &slot);
    const char axis = name.back();
    return slot->read + ".dim_" + static_cast<char>(std::tolower(axis));
  }
  if (name == "rsGetDimX") return "kiln.dim.x";
  if (name == "rsGetDimY") return "kiln.dim.y";
  if (name == "rsGetDimZ") return "kiln.dim.z";
  // rsMatrixMultiply(&m, v) and rsMatrixGet(&m, col, row) read a matrix value (a global or a local); the forms
  // that write a matrix (Load*, Set, Multiply(&m, &rhs), Inverse, ...) stay on the CPU.
  if ((name == "rsMatrixMultiply" && n == 2 && !e->getType()->isVoidType()) || (name == "rsMatrixGet" && n == 3)) {
    return MatrixCall(e, name == "rsMatrixGet");
  }
  // Launches and allocations without levels of detail, cube faces or array dimensions (as on the CPU).
  static const std::set<std::string> kAbsentDims = {
      "rsGetLod",       "rsGetArray0",    "rsGetArray1",    "rsGetArray2",           "rsGetArray3",
      "rsGetDimLod",    "rsGetDimArray0", "rsGetDimArray1", "rsGetDimArray2",        "rsGetDimArray3",
      "rsAllocationGetDimLOD", "rsAllocationGetDimFaces"};
  if (kAbsentDims.count(name)) return "0u";
  if (name == "rsGetFace") return "0";  // RS_ALLOCATION_CUBEMAP_FACE_POSITIVE_X (an enum: int)
  if (name == "rsGetDimHasFaces") return "false";
  // rsRand on the GPU: a counter-based generator (Philox4x32-10) keyed by the launch's seed (kiln.dim.w, which
  // the driver advances per launch of the script) and counting over (cell, call number in the invocation), with
  // the CPU library's mapping of the random bits to the ranges (docs/kernel-math.md, "Random numbers").
  if (name == "rsRand" && (n == 1 || n == 2)) {
    if (reduction_) Fail(loc, "a call to 'rsRand' in a reduction, which has no GPU form (no per-launch seed)");
    const bool is_float = callee->getParamDecl(0)->getType()->isRealFloatingType();
    Use("kiln_rand");
    std::string out = is_float ? "kiln_rand_float(" : "kiln_rand_int(";
    for (unsigned i = 0; i < n; ++i) out += std::string(i ? ", " : "") + (is_float ? "float(" : "int(") + arg(i) + ")";
    return out + ")";
  }
  if (name == "rsSample" && (n == 3 || n == 4)) return SampleCall(e);
  // Runtime functions that need the CPU driver (kiln/kernel_abi.h services, script state, pointers).
  static const std::pair<const char*, const char*> kCpuOnly[] = {
      {"rsAtomic", "atomics"},
      {"rsDebug", "debug output to the host"},
      {"rsSendToClient", "messages to the host"},
      {"rsForEach", "launching kernels"},
      {"rsMatrix", "rs_matrix functions"},
      {"rsGetElementAtYuv", "YUV allocation access"},
      {"rsAllocationCopy", "allocation copies"},
      {"rsAllocationVLoad", "vector loads from allocations"},
      {"rsAllocationVStore", "vector stores to allocations"},
      {"rsCreate", "creating runtime objects"},
      {"rsUptime", "the host clock"},
      {"rsTime", "the host clock"},
      {"rsLocaltime", "the host clock"},
      {"rsIsObject", "runtime objects"},
      {"rsClearObject", "runtime objects"},
      {"rsSetObject", "runtime objects"},
      {"rsElement", "runtime objects"},
      {"rsType", "runtime objects"},
      {"rsAllocationGetElement", "runtime objects"},
  };
  for (const auto& entry : kCpuOnly) {
    if (name.rfind(entry.first, 0) == 0) {
      Fail(loc, "a call to '" + name + "', which has no GPU form (" + entry.second + ")");
    }
  }
  if (name == "rsGetElementAt" || name == "rsSetElementAt") {
    Fail(loc, "'" + name + "' without a type suffix (an untyped pointer); use rsGetElementAt_<T>");
  }
  const clang::FunctionDecl* definition = callee->getDefinition();
  const bool prelude = script_->IsPrelude(callee->getLocation());
  if (!definition || !definition->hasBody()) {
    for (const MathEntry& m : kMath) {
      if (name != m.name || static_cast<int>(n) != m.arity) continue;
      bool float_args = true;
      for (unsigned i = 0; i < n; ++i) {
        const Lane lane = LaneOf(e->getArg(i)->getType());
        float_args = float_args && lane.ok && lane.is_float && lane.bits == 32;
      }
      if (!float_args) break;
      if (m.kind == MathKind::kImprecise && !IsNativeOrHalf(name) &&
          script_->precision() != KernelPrecision::kImprecise) {
        bool has_native = false;
        for (const MathEntry& other : kMath) has_native = has_native || "native_" + name == other.name;
        Fail(loc, "'" + name + "': the GPU form (" + m.glsl +
                      ", native_powr's algorithm) does not meet the CPU's precision bound and kilnc has no "
                      "full-precision GPU helper for it yet "
                      "(under rs_fp_imprecise" +
                      (has_native ? ", or as native_" + name + "," : "") + " it would run on the GPU)");
      }
      if (m.kind == MathKind::kHelper || std::string(m.glsl).rfind("kiln_", 0) == 0) {
        Use(m.glsl);
        if (kComponentwise.count(m.glsl)) Use(std::string(m.glsl) + "#vec");
      }
      std::string out = std::string(m.glsl) + "(";
      for (unsigned i = 0; i < n; ++i) out += (i ? ", " : "") + arg(i);
      return out + ")";
    }
    if (name == "native_recip" || name == "half_recip") return "(1.0 / " + arg(0) + ")";
    if (name == "native_divide" || name == "half_divide") return "(" + arg(0) + " / " + arg(1) + ")";
    Fail(loc, "a call to '" + name + "', which has no GPU form");
  }
  std::string function;
  if (prelude && !script_->IsPrelude(loc)) {
    const clang::SourceLocation saved_site = user_site_;
    const std::string saved_callee = user_callee_;
    user_site_ = loc;
    user_callee_ = name;
    function = FunctionName(definition, loc);
    user_site_ = saved_site;
    user_callee_ = saved_callee;
  } else {
    function = FunctionName(definition, loc);
  }
  std::string out = function + "(";
  bool first = true;
  for (unsigned i = 0; i < n; ++i) {
    const clang::QualType type = e->getArg(i)->getType();
    if (const auto* pointer = type->getAs<clang::PointerType>()) {
      const auto* record = pointer->getPointeeType()->getAs<clang::RecordType>();
      if (record && record->getDecl()->getName() == "KilnKernelLaunch") continue;  // the context
      // &lvalue (or a pointer parameter passed on) for an in/inout parameter; GLSL copies in and out, which
      // only differs from C when two arguments alias.
      const clang::Expr* a = e->getArg(i)->IgnoreParenImpCasts();
      std::string value = PointerParam(a);
      if (value.empty()) {
        const auto* address = llvm::dyn_cast<clang::UnaryOperator>(a);
        if (!address || address->getOpcode() != clang::UO_AddrOf) {
          Fail(e->getArg(i)->getExprLoc(), "a pointer argument other than &variable");
        }
        if (!pointer->getPointeeType().isConstQualified()) CheckWritable(address->getSubExpr(), loc);
        value = Expr(address->getSubExpr());
      }
      out += (first ? "" : ", ") + value;
      first = false;
      continue;
    }
    out += (first ? "" : ", ") + arg(i);
    first = false;
  }
  return out + ")";
}

}  // namespace compiler
}  // namespace kiln
