// kilnc's GPU lowering: kernels from Clang's AST to GLSL 4.50 compute shaders (kiln/spirv_abi.h).
//
// The AST is structured, so the lowering walks it and writes GLSL text as the source reads: statements,
// loops and branches as written, every helper function the kernel reaches (the script's own and the
// prelude's inline ones: mad, clamp, dot, convert_*, rsPackColorTo8888...) as a GLSL function, and the few
// things GLSL spells differently (C's remainder, integer promotions, comparisons that yield int, 8- and
// 16-bit values kept in 32-bit registers and wrapped where C would truncate) through small helpers. The
// runtime functions that touch memory or the launch (rsGetElementAt_*, rsSetElementAt_*, rsAllocationGetDim*,
// rsGetDim*) and the math library's external functions are mapped by name.
//
// Anything else (pointers, atomics, rsDebug, half, math functions with no GPU form of the CPU's precision...)
// makes the kernel CPU-only, with the construct and its source location as the reason. That is never an
// error: the CPU payload always has every kernel.
#include "compiler/glsl_lowering.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "clang/AST/APValue.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/RecordLayout.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "compiler/frontend.h"
#include "compiler/glsl_types.h"
#include "kiln/spirv_abi.h"

namespace kiln {
namespace compiler {
namespace {

constexpr char kPreludeDir[] = "/__kiln_prelude__";  // where frontend.cc's in-memory prelude lives

// ---- The GLSL helper library: emitted into a shader only when used ----

struct LibraryEntry {
  const char* name;
  const char* deps;  // space-separated
  const char* text;
};

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
    {"kiln_fmin", "",
     "float kiln_fmin(float a, float b) { return isnan(a) ? b : (isnan(b) ? a : min(a, b)); }\n"},
    {"kiln_fmax", "",
     "float kiln_fmax(float a, float b) { return isnan(a) ? b : (isnan(b) ? a : max(a, b)); }\n"},
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
    {"kiln_atan2pi", "kiln_atan2",
     "float kiln_atan2pi(float y, float x) { return kiln_atan2(y, x) * 0.318309873; }\n"},
};

const LibraryEntry* FindLibrary(const std::string& name) {
  for (const LibraryEntry& e : kLibrary) {
    if (name == e.name) return &e;
  }
  return nullptr;
}

// The scalar helpers that take and return floats get per-component vector overloads.
const std::set<std::string> kComponentwise = {
    "kiln_copysign", "kiln_fmin",    "kiln_fmax", "kiln_round",  "kiln_fract",  "kiln_atan", "kiln_atanpi",
    "kiln_atan2",    "kiln_atan2pi", "kiln_exp",  "kiln_exp2",   "kiln_exp10",  "kiln_log",  "kiln_log2",
    "kiln_log10",    "kiln_asin",    "kiln_acos", "kiln_asinpi", "kiln_acospi", "kiln_fdim",
    "kiln_sin",      "kiln_cos",     "kiln_tan"};

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
    {"native_sin", "sin", MathKind::kImprecise, 1},
    {"native_cos", "cos", MathKind::kImprecise, 1},
    {"native_tan", "tan", MathKind::kImprecise, 1},
    {"native_exp", "exp", MathKind::kImprecise, 1},
    {"native_exp2", "exp2", MathKind::kImprecise, 1},
    // Vulkan bounds GLSL's log/log2 only by an absolute error near 1 (relative error unbounded there), which
    // breaks even the relaxed ULP bounds: the log family always uses the ported helpers.
    {"native_log", "kiln_log", MathKind::kHelper, 1},
    {"native_log2", "kiln_log2", MathKind::kHelper, 1},
    {"native_powr", "pow", MathKind::kImprecise, 2},
    {"half_sin", "sin", MathKind::kImprecise, 1},
    {"half_cos", "cos", MathKind::kImprecise, 1},
    {"half_tan", "tan", MathKind::kImprecise, 1},
    {"half_exp", "exp", MathKind::kImprecise, 1},
    {"half_exp2", "exp2", MathKind::kImprecise, 1},
    {"half_log", "kiln_log", MathKind::kHelper, 1},
    {"half_log2", "kiln_log2", MathKind::kHelper, 1},
    {"half_powr", "pow", MathKind::kImprecise, 2},
    // sin/cos/tan: the ported helpers above. Full-precision functions whose GLSL builtins do not meet OpenCL's
    // bounds and that have no helper yet: only in rs_fp_imprecise.
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
    {"sinh", "sinh", MathKind::kImprecise, 1},
    {"cosh", "cosh", MathKind::kImprecise, 1},
    {"tanh", "tanh", MathKind::kImprecise, 1},
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
    {"pow", "pow", MathKind::kImprecise, 2},
    {"powr", "pow", MathKind::kImprecise, 2},
};

bool IsNativeOrHalf(const std::string& name) {
  return name.rfind("native_", 0) == 0 || name.rfind("half_", 0) == 0;
}

// ---- Which file-scope variables any function writes (a static one that nobody writes is a constant) ----

class GlobalWriteScanner : public clang::RecursiveASTVisitor<GlobalWriteScanner> {
 public:
  std::set<const clang::VarDecl*> written;

  bool VisitBinaryOperator(clang::BinaryOperator* op) {
    if (op->isAssignmentOp()) Mark(op->getLHS());
    return true;
  }
  bool VisitUnaryOperator(clang::UnaryOperator* op) {
    if (op->isIncrementDecrementOp() || op->getOpcode() == clang::UO_AddrOf) Mark(op->getSubExpr());
    return true;
  }

 private:
  void Mark(const clang::Expr* e) {
    for (int depth = 0; e && depth < 64; ++depth) {
      e = e->IgnoreParenImpCasts();
      if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
        if (const auto* var = llvm::dyn_cast<clang::VarDecl>(ref->getDecl())) {
          if (var->hasGlobalStorage()) written.insert(var->getCanonicalDecl());
        }
        return;
      }
      if (const auto* member = llvm::dyn_cast<clang::MemberExpr>(e)) {
        e = member->getBase();
      } else if (const auto* subscript = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) {
        e = subscript->getBase();
      } else if (const auto* swizzle = llvm::dyn_cast<clang::ExtVectorElementExpr>(e)) {
        e = swizzle->getBase();
      } else {
        return;
      }
    }
  }
};

// ---- Script globals on the GPU ----

struct GlobalSlot {
  int row = -1;        // index into GpuLowering::globals
  std::string member;  // GLSL member declaration inside the global block (without offset)
  std::string read;    // GLSL expression for the value (register form)
  uint32_t offset = 0;
  bool allocation = false;      // rs_allocation or a pointer global
  int allocation_index = -1;    // k: binding 10 + k
  clang::QualType pointee;      // pointer globals: the element type
  clang::QualType struct_type;  // struct globals: the type whose GLSL struct the read constructs
  std::string why_not;          // non-empty: the global has no GPU form
};

// ---- The lowering of one kernel ----

class Failure {};  // thrown inside a kernel's lowering, caught at its top (never crosses the TU)

class ScriptLowering;

class KernelLowering {
 public:
  KernelLowering(ScriptLowering* script, clang::ASTContext& context) : script_(script), context_(context) {}

  bool Lower(const clang::FunctionDecl* kernel, const KernelDesc& desc, const KernelInfo& info,
             GpuKernelLowering* out);
  // The functions a reduction's pragma names; all but `accumulator` may be NULL.
  struct ReductionFunctions {
    const clang::FunctionDecl* initializer = nullptr;
    const clang::FunctionDecl* accumulator = nullptr;
    const clang::FunctionDecl* combiner = nullptr;
    const clang::FunctionDecl* outconverter = nullptr;
  };
  bool LowerReduction(const ReductionDesc& desc, const ReductionInfo& info, const ReductionFunctions& fns,
                      GpuReductionLowering* out);
  const std::string& reason() const { return reason_; }

 private:
  std::string Assemble(const std::string& what, clang::SourceLocation loc, const std::vector<Storage>& inputs,
                       size_t views, const std::string& preamble, const std::string& bindings,
                       const std::string& main);
  Storage ElementStorage(clang::QualType type, const char* role, clang::SourceLocation loc);
  std::string Argument(ArgKind kind, const clang::ParmVarDecl* param, const std::vector<clang::QualType>& input_types,
                       const std::vector<Storage>& storages, const std::string& pad, size_t* input, std::string* main);
  uint32_t Std430Size(clang::QualType type, uint32_t* align, clang::SourceLocation loc);
  void StoreBytes(clang::QualType type, const std::string& value, const std::string& offset, int depth,
                  int indent, clang::SourceLocation loc, std::string* out);
  [[noreturn]] void Fail(clang::SourceLocation loc, const std::string& what);
  std::string Where(clang::SourceLocation loc) const;

  std::string Type(clang::QualType type, clang::SourceLocation loc);
  std::string Declare(clang::QualType type, const std::string& name, clang::SourceLocation loc);
  std::string Zero(clang::QualType type, clang::SourceLocation loc);
  std::string StructName(const clang::RecordDecl* record, clang::SourceLocation loc);
  std::string ValueLiteral(const clang::APValue& value, clang::QualType type, clang::SourceLocation loc);
  std::string Wrap(const std::string& text, clang::QualType type);
  std::string Convert(const std::string& text, clang::QualType from, clang::QualType to,
                      clang::SourceLocation loc);
  std::string ToBool(const std::string& text, clang::QualType type, clang::SourceLocation loc);

  std::string Expr(const clang::Expr* e);
  std::string Cond(const clang::Expr* e);
  std::string Cast(const clang::CastExpr* e);
  std::string Binary(const clang::BinaryOperator* e);
  std::string Unary(const clang::UnaryOperator* e);
  std::string Call(const clang::CallExpr* e);
  std::string InitList(const clang::InitListExpr* e, clang::QualType type);
  std::string VarRef(const clang::VarDecl* var, clang::SourceLocation loc);
  std::string LocalName(const clang::VarDecl* var);
  std::string FunctionName(const clang::FunctionDecl* fd, clang::SourceLocation loc);
  void LowerFunction(const clang::FunctionDecl* fd);
  void CheckWritable(const clang::Expr* target, clang::SourceLocation loc);
  std::string PointerRead(const clang::VarDecl* var, const clang::Expr* index, clang::SourceLocation loc);
  std::string Allocation(const clang::Expr* arg, clang::SourceLocation loc, GlobalSlot** slot);
  std::string AllocationAccessor(GlobalSlot* slot, const clang::VarDecl* var, clang::QualType element,
                                 bool write, clang::SourceLocation loc);
  void Use(const std::string& library);
  void UseGlobal(const clang::VarDecl* var);

  void Stmt(const clang::Stmt* s, int indent, std::string* out);
  void Block(const clang::Stmt* s, int indent, std::string* out);
  void VarDecl(const clang::VarDecl* var, int indent, std::string* out);

  ScriptLowering* script_;
  clang::ASTContext& context_;
  std::string reason_;
  bool needs_int64_ = false;
  bool needs_8bit_ = false;
  bool needs_16bit_ = false;
  bool needs_allocation_info_ = false;
  bool needs_fault_ = false;  // an allocation access can fault: declare the fault record (binding 27)
  std::set<const clang::VarDecl*> pointer_params_;  // pointer parameters lowered to in/inout parameters
  // The GLSL name of a pointer parameter that `e` names, or "" when `e` is not one.
  std::string PointerParam(const clang::Expr* e) {
    const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParenImpCasts());
    const auto* var = ref ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
    return var && pointer_params_.count(var) ? locals_.at(var) : std::string();
  }

  std::map<const clang::FunctionDecl*, std::string> function_names_;
  std::set<const clang::FunctionDecl*> lowering_;
  std::vector<std::string> function_text_;  // in dependency order
  std::map<const clang::RecordDecl*, std::string> struct_names_;
  std::vector<std::string> struct_text_;
  std::vector<std::string> library_order_;
  std::set<std::string> library_;
  std::map<const clang::VarDecl*, std::string> locals_;
  int local_counter_ = 0;
  std::set<const clang::VarDecl*> globals_used_;
  std::map<const clang::VarDecl*, std::string> constants_;  // file-scope constants: name -> definition
  std::vector<std::string> constant_text_;
  struct AllocationUse {
    std::string storage_type;
    bool write = false;
  };
  std::map<int, AllocationUse> allocations_;      // by allocation index
  std::map<std::string, std::string> accessors_;  // name -> text
  std::vector<std::string> accessor_order_;
  const clang::FunctionDecl* kernel_ = nullptr;
  // The script's call into the prelude being lowered, for reasons that arise inside the prelude.
  clang::SourceLocation user_site_;
  std::string user_callee_;
};

class ScriptLowering {
 public:
  ScriptLowering(clang::ASTContext& context, ScriptInfo* info) : context_(context), info_(info) {}

  void Run() {
    GlobalWriteScanner scanner;
    scanner.TraverseDecl(context_.getTranslationUnitDecl());
    written_ = std::move(scanner.written);
    CollectDecls();
    LayOutGlobals();
    GpuLowering& gpu = info_->gpu;
    gpu.kernels.assign(info_->module.kernels.size(), GpuKernelLowering());
    bool any_reads_globals = false;
    for (size_t i = 0; i < info_->module.kernels.size(); ++i) {
      const KernelDesc& desc = info_->module.kernels[i];
      GpuKernelLowering& out = gpu.kernels[i];
      auto it = functions_.find(info_->kernels[i].function);
      if (it == functions_.end()) {
        out.cpu_only_reason = "internal: kilnc did not find the kernel's definition";
        continue;
      }
      KernelLowering lowering(this, context_);
      reads_globals_ = false;
      const auto saved_units = allocation_units_;
      if (!lowering.Lower(it->second, desc, info_->kernels[i], &out)) {
        out.glsl.clear();
        out.cpu_only_reason = lowering.reason();
        allocation_units_ = saved_units;
        continue;
      }
      any_reads_globals = any_reads_globals || reads_globals_;
    }
    gpu.reductions.assign(info_->module.reductions.size(), GpuReductionLowering());
    for (size_t i = 0; i < info_->module.reductions.size(); ++i) {
      const ReductionDesc& desc = info_->module.reductions[i];
      GpuReductionLowering& out = gpu.reductions[i];
      KernelLowering::ReductionFunctions fns;
      auto find = [&](const std::string& name) -> const clang::FunctionDecl* {
        auto it = name.empty() ? functions_.end() : functions_.find(name);
        return it == functions_.end() ? nullptr : it->second;
      };
      fns.initializer = find(desc.initializer);
      fns.accumulator = find(desc.accumulator);
      fns.combiner = find(desc.combiner);
      fns.outconverter = find(desc.outconverter);
      if (!fns.accumulator || (!desc.initializer.empty() && !fns.initializer) ||
          (!desc.combiner.empty() && !fns.combiner) || (!desc.outconverter.empty() && !fns.outconverter)) {
        out.cpu_only_reason = "internal: kilnc did not find the reduction's functions";
        continue;
      }
      KernelLowering lowering(this, context_);
      reads_globals_ = false;
      const auto saved_units = allocation_units_;
      if (!lowering.LowerReduction(desc, info_->reductions[i], fns, &out)) {
        out.glsl.clear();
        out.cpu_only_reason = lowering.reason();
        allocation_units_ = saved_units;
        continue;
      }
      any_reads_globals = any_reads_globals || reads_globals_;
    }
    for (const auto& entry : allocation_units_) gpu.globals[entry.first].unit_size = entry.second;
    if (!any_reads_globals) {
      gpu.globals.clear();
      gpu.global_block_size = 0;
    } else {
      gpu.global_block_size = (block_size_ + 15) / 16 * 16;
    }
    gpu.done = true;
  }

  clang::ASTContext& context() { return context_; }
  KernelPrecision precision() const { return info_->module.precision; }
  bool IsWritten(const clang::VarDecl* var) const { return written_.count(var->getCanonicalDecl()) != 0; }
  GlobalSlot* FindGlobal(const clang::VarDecl* var) {
    auto it = globals_.find(var->getCanonicalDecl());
    return it == globals_.end() ? nullptr : &it->second;
  }
  void NoteGlobalRead() { reads_globals_ = true; }
  // The unit size an allocation global's binding uses; all GPU kernels of a module must agree.
  bool ClaimAllocationUnit(const GlobalSlot& slot, uint32_t unit, std::string* why) {
    auto it = allocation_units_.find(slot.row);
    if (it == allocation_units_.end()) {
      allocation_units_[slot.row] = unit;
      return true;
    }
    if (it->second == unit) return true;
    *why = "allocation '" + info_->gpu.globals[slot.row].name + "' is read with " + std::to_string(unit) +
           "-byte units here but with " + std::to_string(it->second) + "-byte units by another GPU kernel";
    return false;
  }
  // One GLSL name per struct type of the script, the same in every kernel (global reads construct them).
  std::string StructName(const clang::RecordDecl* record) {
    record = record->getDefinition() ? record->getDefinition() : record;
    auto it = struct_names_.find(record);
    if (it != struct_names_.end()) return it->second;
    const std::string name = record->getName().empty() ? "S_anon" + std::to_string(struct_names_.size())
                                                       : "S_" + record->getNameAsString();
    struct_names_[record] = name;
    return name;
  }
  bool IsPrelude(clang::SourceLocation loc) const {
    const clang::SourceManager& sm = context_.getSourceManager();
    if (loc.isInvalid()) return true;
    return sm.getFilename(sm.getExpansionLoc(loc)).starts_with(kPreludeDir);
  }

 private:
  void CollectDecls() {
    for (const clang::Decl* decl : context_.getTranslationUnitDecl()->decls()) {
      if (const auto* fd = llvm::dyn_cast<clang::FunctionDecl>(decl)) {
        if (fd->doesThisDeclarationHaveABody() && !IsPrelude(fd->getLocation())) {
          functions_[fd->getNameAsString()] = fd;
        }
      } else if (const auto* var = llvm::dyn_cast<clang::VarDecl>(decl)) {
        if (!IsPrelude(var->getLocation())) vars_[var->getNameAsString()] = var->getCanonicalDecl();
      }
    }
  }

  void LayOutGlobals() {
    uint32_t cursor = 0;
    int allocations = 0;
    for (const GlobalDesc& g : info_->module.globals) {
      auto it = vars_.find(g.name);
      if (it == vars_.end()) continue;
      const clang::VarDecl* var = it->second;
      GlobalSlot slot;
      GpuGlobalSlot row;
      row.name = g.name;
      const std::string member = "g_" + g.name;
      if (g.is_allocation) {
        if (allocations >= static_cast<int>(KILN_SPIRV_MAX_ALLOCATIONS)) {
          slot.why_not = "more than " + std::to_string(KILN_SPIRV_MAX_ALLOCATIONS) + " allocation globals";
          globals_[var] = slot;
          continue;
        }
        cursor = (cursor + 15) / 16 * 16;
        slot.allocation = true;
        slot.allocation_index = allocations++;
        slot.offset = cursor;
        slot.member = "KilnAllocationInfo " + member;
        slot.read = member;
        if (const auto* pointer = var->getType()->getAs<clang::PointerType>()) {
          slot.pointee = pointer->getPointeeType();
        }
        row.kind = KILN_SPIRV_GLOBAL_ALLOCATION;
        row.block_offset = cursor;
        row.unit_size = 1;  // until a kernel reads it (a unit of 1 divides every view)
        cursor += sizeof(KilnSpirvAllocationInfo);
      } else {
        const clang::QualType type = var->getType();
        clang::QualType element = type;
        std::string dims;
        while (const auto* array = context_.getAsConstantArrayType(element)) {
          dims += "[" + std::to_string(array->getSize().getZExtValue()) + "]";
          element = array->getElementType();
        }
        const Lane lane = LaneOf(element);
        uint32_t align = 4;
        if (element->getAs<clang::RecordType>()) {
          // handled below
        } else if (!lane.ok || lane.is_half) {
          slot.why_not = "its type '" + type.getAsString() + "' has no GPU layout";
        }
        const bool is_struct = element->getAs<clang::RecordType>() != nullptr;
        if (!slot.why_not.empty()) {
          // no GPU form
        } else if (!is_struct && lane.bits >= 32) {
          slot.member = RegisterType(lane) + " " + member + dims;
          slot.read = member;
          const uint32_t lane_bytes = lane.bits / 8;
          align = lane_bytes * (lane.count == 1 ? 1 : (lane.count == 2 ? 2 : 4));
        } else if (is_struct && dims.empty()) {
          // A struct: its C bytes as uint words, each field rebuilt from them.
          const uint32_t words = (g.size + 3) / 4;
          slot.member = "uint " + member + "[" + std::to_string(words) + "]";
          if (!WordRead(type, 0, member, &slot.read, &slot.why_not)) slot.read.clear();
          slot.struct_type = type;
        } else if (!dims.empty()) {
          slot.why_not = "it is an array of 8- or 16-bit values or of structs";
        } else {
          // Packed into uint words and unpacked in the shader (bool, char, short and their vectors).
          const uint32_t words = (g.size + 3) / 4;
          slot.member = "uint " + member + "[" + std::to_string(words) + "]";
          std::vector<std::string> lanes;
          const uint32_t bytes = lane.bits / 8;
          for (uint32_t i = 0; i < lane.count; ++i) {
            const uint32_t byte = i * bytes;
            const std::string word = member + "[" + std::to_string(byte / 4) + "]";
            const std::string shift = std::to_string((byte % 4) * 8);
            const std::string bits = std::to_string(lane.bits);
            if (lane.is_bool) {
              lanes.push_back("(bitfieldExtract(" + word + ", " + shift + ", 8) != 0u)");
            } else if (lane.is_signed) {
              lanes.push_back("bitfieldExtract(int(" + word + "), " + shift + ", " + bits + ")");
            } else {
              lanes.push_back("bitfieldExtract(" + word + ", " + shift + ", " + bits + ")");
            }
          }
          if (lane.count == 1) {
            slot.read = lanes[0];
          } else {
            slot.read = RegisterType(lane) + "(";
            for (size_t i = 0; i < lanes.size(); ++i) slot.read += (i ? ", " : "") + lanes[i];
            slot.read += ")";
          }
        }
        if (slot.why_not.empty()) {
          cursor = (cursor + align - 1) / align * align;
          slot.offset = cursor;
          row.kind = KILN_SPIRV_GLOBAL_VALUE;
          row.size = g.size;
          row.block_offset = cursor;
          cursor += g.size;
        }
      }
      if (!slot.why_not.empty()) {
        globals_[var] = slot;
        continue;
      }
      slot.row = static_cast<int>(info_->gpu.globals.size());
      info_->gpu.globals.push_back(row);
      globals_[var] = slot;
    }
    block_size_ = cursor;
  }

  // The register value of `type` stored at `offset` bytes into the uint word array `words`.
  bool WordRead(clang::QualType type, uint32_t offset, const std::string& words, std::string* out,
                std::string* why) {
    const clang::QualType t = type.getCanonicalType().getUnqualifiedType();
    if (const auto* array = context_.getAsConstantArrayType(t)) {
      const uint64_t n = array->getSize().getZExtValue();
      const uint32_t stride =
          static_cast<uint32_t>(context_.getTypeSizeInChars(array->getElementType()).getQuantity());
      if (n > 64) {
        *why = "it holds an array of more than 64 elements inside a struct";
        return false;
      }
      std::string element_type;
      std::string parts;
      for (uint64_t i = 0; i < n; ++i) {
        std::string part;
        if (!WordRead(array->getElementType(), offset + static_cast<uint32_t>(i) * stride, words, &part,
                      why)) {
          return false;
        }
        parts += (i ? ", " : "") + part;
      }
      if (!TypeName(t, &element_type, why)) return false;
      *out = element_type + "(" + parts + ")";
      return true;
    }
    if (const auto* record = t->getAs<clang::RecordType>()) {
      const clang::RecordDecl* decl = record->getDecl()->getDefinition();
      if (!decl || decl->isUnion()) {
        *why = "it is a union or incomplete struct";
        return false;
      }
      const clang::ASTRecordLayout& layout = context_.getASTRecordLayout(decl);
      std::string parts;
      for (const clang::FieldDecl* field : decl->fields()) {
        if (field->isBitField()) {
          *why = "it has a bit-field";
          return false;
        }
        std::string part;
        const uint32_t field_offset =
            offset + static_cast<uint32_t>(layout.getFieldOffset(field->getFieldIndex()) / 8);
        if (!WordRead(field->getType(), field_offset, words, &part, why)) return false;
        parts += (parts.empty() ? "" : ", ") + part;
      }
      *out = StructName(decl) + "(" + parts + ")";
      return true;
    }
    const Lane lane = LaneOf(t);
    if (!lane.ok || lane.is_half || lane.bits == 64) {
      *why = "it holds a '" + type.getAsString() + "' field (no word layout for it)";
      return false;
    }
    std::vector<std::string> lanes;
    const uint32_t bytes = lane.bits / 8;
    for (uint32_t i = 0; i < lane.count; ++i) {
      const uint32_t byte = offset + i * bytes;
      const std::string word = words + "[" + std::to_string(byte / 4) + "]";
      const std::string shift = std::to_string((byte % 4) * 8);
      if (lane.bits == 32) {
        lanes.push_back(lane.is_float ? "uintBitsToFloat(" + word + ")"
                                      : (lane.is_signed ? "int(" + word + ")" : word));
      } else if (lane.is_bool) {
        lanes.push_back("(bitfieldExtract(" + word + ", " + shift + ", 8) != 0u)");
      } else if (lane.is_signed) {
        lanes.push_back("bitfieldExtract(int(" + word + "), " + shift + ", " + std::to_string(lane.bits) +
                        ")");
      } else {
        lanes.push_back("bitfieldExtract(" + word + ", " + shift + ", " + std::to_string(lane.bits) + ")");
      }
    }
    if (lane.count == 1) {
      *out = lanes[0];
    } else {
      *out = RegisterType(lane) + "(";
      for (size_t i = 0; i < lanes.size(); ++i) *out += (i ? ", " : "") + lanes[i];
      *out += ")";
    }
    return true;
  }

  // The GLSL spelling of an array type (for constructors), e.g. "float[3]" or "S_Point[2]".
  bool TypeName(clang::QualType type, std::string* out, std::string* why) {
    const clang::QualType t = type.getCanonicalType().getUnqualifiedType();
    if (const auto* array = context_.getAsConstantArrayType(t)) {
      std::string element;
      if (!TypeName(array->getElementType(), &element, why)) return false;
      const size_t bracket = element.find('[');
      const std::string dim = "[" + std::to_string(array->getSize().getZExtValue()) + "]";
      *out = bracket == std::string::npos ? element + dim
                                          : element.substr(0, bracket) + dim + element.substr(bracket);
      return true;
    }
    if (const auto* record = t->getAs<clang::RecordType>()) {
      *out = StructName(record->getDecl());
      return true;
    }
    const Lane lane = LaneOf(t);
    if (!lane.ok || lane.is_half) {
      *why = "it holds a '" + type.getAsString() + "'";
      return false;
    }
    *out = RegisterType(lane);
    return true;
  }

  clang::ASTContext& context_;
  ScriptInfo* info_;
  std::set<const clang::VarDecl*> written_;
  std::map<std::string, const clang::FunctionDecl*> functions_;
  std::map<std::string, const clang::VarDecl*> vars_;
  std::map<const clang::VarDecl*, GlobalSlot> globals_;
  std::map<int, uint32_t> allocation_units_;  // global row -> unit size
  std::map<const clang::RecordDecl*, std::string> struct_names_;
  uint32_t block_size_ = 0;
  bool reads_globals_ = false;
};

// ---- KernelLowering ----

std::string KernelLowering::Where(clang::SourceLocation loc) const {
  const clang::SourceManager& sm = context_.getSourceManager();
  const clang::PresumedLoc presumed = sm.getPresumedLoc(sm.getExpansionLoc(loc));
  if (presumed.isInvalid()) return "<unknown location>";
  std::string file = presumed.getFilename();
  const size_t slash = file.find_last_of('/');
  if (slash != std::string::npos) file = file.substr(slash + 1);
  return file + ":" + std::to_string(presumed.getLine()) + ":" + std::to_string(presumed.getColumn());
}

void KernelLowering::Fail(clang::SourceLocation loc, const std::string& what) {
  // A construct met inside a prelude function is reported where the script calls into the prelude.
  if (reason_.empty()) {
    if (script_->IsPrelude(loc) && user_site_.isValid()) {
      reason_ = what + ", in the runtime function '" + user_callee_ + "' called at " + Where(user_site_);
    } else {
      reason_ = what + " (" + Where(loc) + ")";
    }
  }
  throw Failure();
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

std::string KernelLowering::StructName(const clang::RecordDecl* record, clang::SourceLocation loc) {
  record = record->getDefinition();
  if (!record) Fail(loc, "an incomplete struct type");
  auto it = struct_names_.find(record);
  if (it != struct_names_.end()) return it->second;
  if (record->isUnion()) Fail(loc, "a union ('" + record->getNameAsString() + "'), which GLSL lacks");
  const std::string name = script_->StructName(record);
  struct_names_[record] = name;
  std::string text = "struct " + name + " {\n";
  for (const clang::FieldDecl* field : record->fields()) {
    if (field->isBitField()) Fail(field->getLocation(), "a bit-field ('" + field->getNameAsString() + "')");
    text += "  " + Declare(field->getType(), "f_" + field->getNameAsString(), field->getLocation()) + ";\n";
  }
  if (record->field_empty()) Fail(loc, "an empty struct");
  text += "};\n";
  struct_text_.push_back(text);
  return name;
}

std::string KernelLowering::Type(clang::QualType type, clang::SourceLocation loc) {
  const clang::QualType t = type.getCanonicalType().getUnqualifiedType();
  if (t->isVoidType()) return "void";
  if (context_.getAsConstantArrayType(t)) {
    std::string dims;
    clang::QualType element = t;
    while (const auto* array = context_.getAsConstantArrayType(element)) {
      dims += "[" + std::to_string(array->getSize().getZExtValue()) + "]";
      element = array->getElementType();
    }
    return Type(element, loc) + dims;
  }
  if (t->isPointerType()) Fail(loc, "a pointer ('" + type.getAsString() + "'), which GLSL lacks");
  if (t->isArrayType()) Fail(loc, "an array of unknown size");
  if (const auto* record = t->getAs<clang::RecordType>()) {
    const std::string name = record->getDecl()->getName().str();
    if (name == "rs_allocation" || name == "rs_element" || name == "rs_type" || name == "rs_script" ||
        name == "rs_sampler" || name.rfind("rs_matrix", 0) == 0 || name == "rs_tm") {
      Fail(loc, "a value of type '" + name + "' (only script globals can be used as allocations on the GPU)");
    }
    return StructName(record->getDecl(), loc);
  }
  const Lane lane = LaneOf(t);
  if (!lane.ok) Fail(loc, "the type '" + type.getAsString() + "'");
  if (lane.is_half) Fail(loc, "the type '" + type.getAsString() + "' (half is not lowered to GLSL)");
  if (lane.bits == 64 && !lane.is_float) needs_int64_ = true;
  return RegisterType(lane);
}

std::string KernelLowering::Declare(clang::QualType type, const std::string& name,
                                    clang::SourceLocation loc) {
  const std::string full = Type(type, loc);
  const size_t bracket = full.find('[');
  if (bracket == std::string::npos) return full + " " + name;
  return full.substr(0, bracket) + " " + name + full.substr(bracket);
}

std::string KernelLowering::Zero(clang::QualType type, clang::SourceLocation loc) {
  const clang::QualType t = type.getCanonicalType().getUnqualifiedType();
  if (const auto* array = context_.getAsConstantArrayType(t)) {
    const std::string element = Zero(array->getElementType(), loc);
    const uint64_t n = array->getSize().getZExtValue();
    std::string out = Type(t, loc) + "(";
    for (uint64_t i = 0; i < n; ++i) out += (i ? ", " : "") + element;
    return out + ")";
  }
  if (const auto* record = t->getAs<clang::RecordType>()) {
    std::string out = Type(t, loc) + "(";
    bool first = true;
    for (const clang::FieldDecl* field : record->getDecl()->getDefinition()->fields()) {
      out += (first ? "" : ", ") + Zero(field->getType(), loc);
      first = false;
    }
    return out + ")";
  }
  Type(t, loc);  // fails for what GLSL cannot hold
  return ZeroOf(LaneOf(t));
}

std::string KernelLowering::ValueLiteral(const clang::APValue& value, clang::QualType type,
                                         clang::SourceLocation loc) {
  const clang::QualType t = type.getCanonicalType().getUnqualifiedType();
  if (const auto* array = context_.getAsConstantArrayType(t)) {
    if (!value.isArray()) Fail(loc, "a constant that kilnc cannot evaluate");
    const uint64_t n = array->getSize().getZExtValue();
    std::string out = Type(t, loc) + "(";
    for (uint64_t i = 0; i < n; ++i) {
      const clang::APValue& element = i < value.getArrayInitializedElts()
                                          ? value.getArrayInitializedElt(static_cast<unsigned>(i))
                                          : value.getArrayFiller();
      out += (i ? ", " : "") + ValueLiteral(element, array->getElementType(), loc);
    }
    return out + ")";
  }
  if (const auto* record = t->getAs<clang::RecordType>()) {
    if (!value.isStruct()) Fail(loc, "a constant that kilnc cannot evaluate");
    std::string out = Type(t, loc) + "(";
    unsigned i = 0;
    for (const clang::FieldDecl* field : record->getDecl()->getDefinition()->fields()) {
      out += (i ? ", " : "") + ValueLiteral(value.getStructField(i), field->getType(), loc);
      ++i;
    }
    return out + ")";
  }
  const Lane lane = LaneOf(t);
  Type(t, loc);
  auto scalar = [&](const clang::APValue& v) -> std::string {
    if (v.isInt())
      return IntLiteral(v.getInt(),
                        Lane{true, lane.is_bool, lane.is_float, lane.is_signed, false, lane.bits, 1});
    if (v.isFloat()) {
      const bool is_double = lane.bits == 64;
      const double d = is_double ? v.getFloat().convertToDouble() : v.getFloat().convertToFloat();
      const std::string text = FloatLiteral(d, is_double);
      if (text.empty()) Fail(loc, "an infinite or NaN double constant");
      return text;
    }
    Fail(loc, "a constant that kilnc cannot evaluate");
  };
  if (lane.count == 1) return scalar(value);
  if (!value.isVector()) Fail(loc, "a constant that kilnc cannot evaluate");
  std::string out = RegisterType(lane) + "(";
  for (unsigned i = 0; i < lane.count; ++i) out += (i ? ", " : "") + scalar(value.getVectorElt(i));
  return out + ")";
}

// C truncates a value stored into an 8- or 16-bit integer; registers are 32-bit, so wrap explicitly.
std::string KernelLowering::Wrap(const std::string& text, clang::QualType type) {
  const Lane lane = LaneOf(type);
  if (!lane.ok || lane.is_bool || lane.is_float || lane.bits >= 32) return text;
  const std::string bits = std::to_string(lane.bits);
  if (lane.is_signed) return "bitfieldExtract(" + text + ", 0, " + bits + ")";
  return "(" + text + (lane.bits == 8 ? " & 255u)" : " & 65535u)");
}

std::string KernelLowering::ToBool(const std::string& text, clang::QualType type, clang::SourceLocation loc) {
  const Lane lane = LaneOf(type);
  if (!lane.ok || lane.count != 1) Fail(loc, "a condition of type '" + type.getAsString() + "'");
  if (lane.is_bool) return text;
  return "(" + text + " != " + ZeroOf(lane) + ")";
}

std::string KernelLowering::Convert(const std::string& text, clang::QualType from, clang::QualType to,
                                    clang::SourceLocation loc) {
  const Lane src = LaneOf(from);
  const Lane dst = LaneOf(to);
  if (!src.ok || !dst.ok)
    Fail(loc, "a conversion from '" + from.getAsString() + "' to '" + to.getAsString() + "'");
  const std::string dst_type = Type(to, loc);
  Type(from, loc);
  if (dst.is_bool && dst.count == 1) return ToBool(text, from, loc);
  if (RegisterType(src) == RegisterType(dst) && src.count == dst.count) {
    // Same register type: only narrowing to a smaller integer changes the value.
    return (dst.bits < src.bits || src.is_signed != dst.is_signed) ? Wrap(text, to) : text;
  }
  return Wrap(dst_type + "(" + text + ")", to);
}

std::string KernelLowering::LocalName(const clang::VarDecl* var) {
  auto it = locals_.find(var);
  if (it != locals_.end()) return it->second;
  std::string base = var->getNameAsString();
  std::string clean;
  for (char c : base) {
    if (c == '_' && !clean.empty() && clean.back() == '_') continue;  // GLSL reserves "__"
    clean += c;
  }
  const std::string name = "l" + std::to_string(local_counter_++) + "_" + clean;
  locals_[var] = name;
  return name;
}

void KernelLowering::UseGlobal(const clang::VarDecl* var) {
  globals_used_.insert(var->getCanonicalDecl());
  script_->NoteGlobalRead();
}

std::string KernelLowering::VarRef(const clang::VarDecl* var, clang::SourceLocation loc) {
  if (!var->hasGlobalStorage()) {
    if (!locals_.count(var)) Fail(loc, "a variable kilnc did not declare ('" + var->getNameAsString() + "')");
    return locals_[var];
  }
  if (var->isStaticLocal()) Fail(loc, "a static local variable ('" + var->getNameAsString() + "')");
  const clang::VarDecl* canonical = var->getCanonicalDecl();
  GlobalSlot* slot = script_->FindGlobal(canonical);
  const bool is_const = var->getType().isConstQualified();
  // Constants (const globals, and static globals nothing writes) are folded into the shader.
  if (is_const || (!slot && !script_->IsWritten(canonical))) {
    auto it = constants_.find(canonical);
    if (it != constants_.end()) return it->second;
    const clang::VarDecl* definition = var->getDefinition() ? var->getDefinition() : var;
    const clang::APValue* value = definition->getInit() ? definition->evaluateValue() : nullptr;
    const std::string name = "c_" + var->getNameAsString();
    std::string init;
    if (value) {
      init = ValueLiteral(*value, var->getType(), loc);
    } else if (!definition->getInit()) {
      init = Zero(var->getType(), loc);
    } else {
      Fail(loc, "global '" + var->getNameAsString() + "', whose initializer is not a constant");
    }
    constant_text_.push_back("const " + Declare(var->getType(), name, loc) + " = " + init + ";\n");
    constants_[canonical] = name;
    return name;
  }
  if (!slot) {
    Fail(loc, "static global '" + var->getNameAsString() +
                  "', which the script writes and the GPU cannot see (make it a non-static global)");
  }
  if (!slot->why_not.empty()) Fail(loc, "global '" + var->getNameAsString() + "': " + slot->why_not);
  if (slot->allocation) {
    Fail(loc, "allocation global '" + var->getNameAsString() +
                  "' used other than through rsGetElementAt_*/rsSetElementAt_*/rsAllocationGetDim*");
  }
  UseGlobal(canonical);
  if (!slot->struct_type.isNull()) Type(slot->struct_type, loc);  // emits the struct definitions it builds
  return slot->read;
}

std::string KernelLowering::FunctionName(const clang::FunctionDecl* fd, clang::SourceLocation loc) {
  const clang::FunctionDecl* definition = fd->getDefinition();
  if (!definition) Fail(loc, "a call to '" + fd->getNameAsString() + "', which has no GPU form");
  auto it = function_names_.find(definition);
  if (it != function_names_.end()) return it->second;
  const std::string name =
      "fn" + std::to_string(function_names_.size()) + "_" + definition->getNameAsString();
  function_names_[definition] = name;
  LowerFunction(definition);
  return name;
}

void KernelLowering::LowerFunction(const clang::FunctionDecl* fd) {
  const std::string name = function_names_.at(fd);
  std::string text = Type(fd->getReturnType(), fd->getLocation()) + " " + name + "(";
  bool first = true;
  for (const clang::ParmVarDecl* param : fd->parameters()) {
    const clang::QualType type = param->getType();
    if (const auto* pointer = type->getAs<clang::PointerType>()) {
      if (pointer->getPointeeType().isConstQualified() &&
          pointer->getPointeeType()->getAs<clang::RecordType>() &&
          pointer->getPointeeType()->getAs<clang::RecordType>()->getDecl()->getName() == "KilnKernelLaunch") {
        continue;  // rs_kernel_context: rsGetDim* read the push constants instead
      }
      // T* p (and root()'s in/out): a GLSL `in`/`inout` parameter; the body may use *p, p->f and p[0].
      const clang::QualType pointee = pointer->getPointeeType();
      if (pointee->isVoidType()) {
        Fail(param->getLocation(), "untyped pointer parameter '" + param->getNameAsString() + "' of '" +
                                       fd->getNameAsString() + "'");
      }
      pointer_params_.insert(param);
      text += (first ? "" : ", ") + std::string(pointee.isConstQualified() ? "in " : "inout ") +
              Declare(pointee.getUnqualifiedType(), LocalName(param), param->getLocation());
      first = false;
      continue;
    }
    text += (first ? "" : ", ") + Declare(type, LocalName(param), param->getLocation());
    first = false;
  }
  text += ") ";
  if (fd->isVariadic()) Fail(fd->getLocation(), "a variadic function");
  std::string body;
  Block(fd->getBody(), 0, &body);
  function_text_.push_back(text + body + "\n");
}

std::string KernelLowering::Cond(const clang::Expr* e) {
  e = e->IgnoreParens();
  if (const auto* cast = llvm::dyn_cast<clang::ImplicitCastExpr>(e)) {
    if (cast->getCastKind() == clang::CK_IntegralToBoolean ||
        cast->getCastKind() == clang::CK_FloatingToBoolean) {
      return Cond(cast->getSubExpr());
    }
  }
  if (const auto* op = llvm::dyn_cast<clang::BinaryOperator>(e)) {
    const Lane lhs = LaneOf(op->getLHS()->getType());
    if (op->isComparisonOp() && lhs.ok && lhs.count == 1) {
      return "(" + Expr(op->getLHS()) + " " + op->getOpcodeStr().str() + " " + Expr(op->getRHS()) + ")";
    }
    if (op->isLogicalOp()) {
      return "(" + Cond(op->getLHS()) + " " + op->getOpcodeStr().str() + " " + Cond(op->getRHS()) + ")";
    }
  }
  if (const auto* op = llvm::dyn_cast<clang::UnaryOperator>(e)) {
    if (op->getOpcode() == clang::UO_LNot) return "(!" + Cond(op->getSubExpr()) + ")";
  }
  return ToBool(Expr(e), e->getType(), e->getExprLoc());
}

std::string KernelLowering::Cast(const clang::CastExpr* e) {
  const clang::Expr* sub = e->getSubExpr();
  const clang::SourceLocation loc = e->getExprLoc();
  switch (e->getCastKind()) {
    case clang::CK_LValueToRValue:
    case clang::CK_NoOp:
    case clang::CK_ToVoid:
      return Expr(sub);
    case clang::CK_IntegralCast:
    case clang::CK_IntegralToFloating:
    case clang::CK_FloatingToIntegral:
    case clang::CK_FloatingCast:
    case clang::CK_IntegralToBoolean:
    case clang::CK_FloatingToBoolean:
      if (e->getCastKind() == clang::CK_IntegralToBoolean ||
          e->getCastKind() == clang::CK_FloatingToBoolean) {
        return ToBool(Expr(sub), sub->getType(), loc);
      }
      return Convert(Expr(sub), sub->getType(), e->getType(), loc);
    case clang::CK_BooleanToSignedIntegral:
      return "(" + Expr(sub) + " ? -1 : 0)";
    case clang::CK_VectorSplat: {
      const clang::QualType element_type = e->getType()->getAs<clang::VectorType>()->getElementType();
      return Type(e->getType(), loc) + "(" + Convert(Expr(sub), sub->getType(), element_type, loc) + ")";
    }
    case clang::CK_BitCast: {
      const Lane src = LaneOf(sub->getType());
      const Lane dst = LaneOf(e->getType());
      if (src.ok && dst.ok && src.count == dst.count && src.bits == 32 && dst.bits == 32) {
        const std::string value = Expr(sub);
        if (src.is_float == dst.is_float && src.is_signed == dst.is_signed) return value;
        if (src.is_float)
          return std::string(dst.is_signed ? "floatBitsToInt(" : "floatBitsToUint(") + value + ")";
        if (dst.is_float) return (src.is_signed ? "intBitsToFloat(" : "uintBitsToFloat(") + value + ")";
        return Type(e->getType(), loc) + "(" + value + ")";
      }
      Fail(loc,
           "a bit cast from '" + sub->getType().getAsString() + "' to '" + e->getType().getAsString() + "'");
    }
    default:
      Fail(loc,
           std::string("a '") + e->getCastKindName() + "' conversion (pointers or other types GLSL lacks)");
  }
}

// GPU kernels see script globals read-only (kiln/spirv_abi.h: globals are snapshotted per launch).
void KernelLowering::CheckWritable(const clang::Expr* target, clang::SourceLocation loc) {
  const clang::Expr* e = target;
  for (int depth = 0; e && depth < 64; ++depth) {
    e = e->IgnoreParenImpCasts();
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
      const auto* var = llvm::dyn_cast<clang::VarDecl>(ref->getDecl());
      if (var && var->hasGlobalStorage()) {
        Fail(loc, "a write to script global '" + var->getNameAsString() +
                      "' (on the GPU, kernels read globals and cannot write them)");
      }
      return;
    }
    if (const auto* member = llvm::dyn_cast<clang::MemberExpr>(e)) {
      e = member->getBase();
    } else if (const auto* subscript = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) {
      e = subscript->getBase();
    } else if (const auto* swizzle = llvm::dyn_cast<clang::ExtVectorElementExpr>(e)) {
      e = swizzle->getBase();
    } else {
      return;
    }
  }
}

std::string KernelLowering::Binary(const clang::BinaryOperator* e) {
  const clang::SourceLocation loc = e->getOperatorLoc();
  const clang::BinaryOperatorKind op = e->getOpcode();
  const clang::Expr* lhs = e->getLHS();
  const clang::Expr* rhs = e->getRHS();
  if (op == clang::BO_Comma) return "(" + Expr(lhs) + ", " + Expr(rhs) + ")";
  if (e->isLogicalOp()) return Convert("(" + Cond(e) + ")", context_.BoolTy, e->getType(), loc);
  if (e->isComparisonOp()) {
    const Lane lane = LaneOf(lhs->getType());
    if (!lane.ok) Fail(loc, "a comparison of '" + lhs->getType().getAsString() + "' values");
    if (lane.count == 1) return Convert("(" + Cond(e) + ")", context_.BoolTy, e->getType(), loc);
    static const std::map<clang::BinaryOperatorKind, const char*> kVector = {
        {clang::BO_LT, "lessThan"},         {clang::BO_GT, "greaterThan"}, {clang::BO_LE, "lessThanEqual"},
        {clang::BO_GE, "greaterThanEqual"}, {clang::BO_EQ, "equal"},       {clang::BO_NE, "notEqual"}};
    // A vector comparison yields -1 (all bits set) per true lane, as in OpenCL.
    return "(-" + Type(e->getType(), loc) + "(" + kVector.at(op) + "(" + Expr(lhs) + ", " + Expr(rhs) + ")))";
  }
  if (e->isAssignmentOp()) {
    CheckWritable(lhs, loc);
    if (lhs->HasSideEffects(context_) && op != clang::BO_Assign) {
      Fail(loc, "a compound assignment whose target has side effects");
    }
    const std::string target = Expr(lhs);
    if (op == clang::BO_Assign) return "(" + target + " = " + Expr(rhs) + ")";
    const auto* compound = llvm::cast<clang::CompoundAssignOperator>(e);
    const clang::QualType computation = compound->getComputationLHSType();
    const clang::BinaryOperatorKind base = clang::BinaryOperator::getOpForCompoundAssignment(op);
    std::string left = Convert(target, lhs->getType(), computation, loc);
    std::string right = Expr(rhs);
    std::string value;
    const Lane lane = LaneOf(computation);
    if ((base == clang::BO_Rem) && lane.ok && lane.is_signed && !lane.is_float) {
      Use(lane.bits == 64 ? "kiln_rem64" : "kiln_rem");
      value = "kiln_rem(" + left + ", " + right + ")";
    } else {
      value = "(" + left + " " + clang::BinaryOperator::getOpcodeStr(base).str() + " " + right + ")";
    }
    value = Convert(value, compound->getComputationResultType(), lhs->getType(), loc);
    return "(" + target + " = " + value + ")";
  }
  const Lane lane = LaneOf(e->getType());
  if (!lane.ok) Fail(loc, "arithmetic on '" + e->getType().getAsString() + "' (pointer arithmetic?)");
  std::string value;
  if (op == clang::BO_Rem && lane.is_signed && !lane.is_float) {
    Use(lane.bits == 64 ? "kiln_rem64" : "kiln_rem");
    value = "kiln_rem(" + Expr(lhs) + ", " + Expr(rhs) + ")";
  } else if (op == clang::BO_Rem && lane.is_float) {
    Fail(loc, "'%' on floating-point values");
  } else {
    value = "(" + Expr(lhs) + " " + e->getOpcodeStr().str() + " " + Expr(rhs) + ")";
  }
  return Wrap(value, e->getType());  // 8/16-bit vectors are not promoted in C
}

std::string KernelLowering::Unary(const clang::UnaryOperator* e) {
  const clang::SourceLocation loc = e->getOperatorLoc();
  const clang::Expr* sub = e->getSubExpr();
  switch (e->getOpcode()) {
    case clang::UO_Plus:
      return Expr(sub);
    case clang::UO_Minus:
      return Wrap("(-" + Expr(sub) + ")", e->getType());
    case clang::UO_Not:
      return Wrap("(~" + Expr(sub) + ")", e->getType());
    case clang::UO_LNot:
      return Convert("(" + Cond(e) + ")", context_.BoolTy, e->getType(), loc);
    case clang::UO_PreInc:
    case clang::UO_PreDec:
    case clang::UO_PostInc:
    case clang::UO_PostDec: {
      const Lane lane = LaneOf(sub->getType());
      if (!lane.ok || lane.is_bool) Fail(loc, "'++'/'--' on '" + sub->getType().getAsString() + "'");
      CheckWritable(sub, loc);
      const std::string target = Expr(sub);
      const char* token = e->isIncrementOp() ? "++" : "--";
      if (lane.bits >= 32)
        return e->isPrefix() ? "(" + std::string(token) + target + ")" : "(" + target + token + ")";
      // 8/16-bit: wraps like C. The target is written twice, so it must be free of side effects; a postfix
      // form yields the old value, recovered from the new one.
      if (sub->HasSideEffects(context_)) Fail(loc, "'++'/'--' on an 8- or 16-bit target with side effects");
      const std::string one = lane.is_signed ? "1" : "1u";
      const std::string step = std::string(e->isIncrementOp() ? " + " : " - ") + one;
      const std::string updated = "(" + target + " = " + Wrap(target + step, sub->getType()) + ")";
      if (e->isPrefix()) return updated;
      return Wrap("(" + updated + (e->isIncrementOp() ? " - " : " + ") + one + ")", sub->getType());
    }
    case clang::UO_Deref: {
      const std::string param = PointerParam(sub);
      if (param.empty()) Fail(loc, "a pointer dereference");
      return param;
    }
    case clang::UO_AddrOf:
      Fail(loc, "taking an address (pointers are CPU-only)");
    case clang::UO_Extension:
      return Expr(sub);
    default:
      Fail(loc, "the operator '" + clang::UnaryOperator::getOpcodeStr(e->getOpcode()).str() + "'");
  }
}

std::string KernelLowering::Allocation(const clang::Expr* arg, clang::SourceLocation loc, GlobalSlot** slot) {
  const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(arg->IgnoreParenImpCasts());
  const clang::VarDecl* var = ref ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
  if (!var || !var->hasGlobalStorage()) {
    Fail(loc, "an rs_allocation that is not a script global (parameters and locals cannot name GPU buffers)");
  }
  *slot = script_->FindGlobal(var->getCanonicalDecl());
  if (!*slot || !(*slot)->allocation) {
    Fail(loc, "allocation '" + var->getNameAsString() + "', which has no GPU binding" +
                  (*slot && !(*slot)->why_not.empty() ? ": " + (*slot)->why_not : ""));
  }
  UseGlobal(var->getCanonicalDecl());
  needs_allocation_info_ = true;
  return var->getNameAsString();
}

std::string KernelLowering::AllocationAccessor(GlobalSlot* slot, const clang::VarDecl* var,
                                               clang::QualType element, bool write,
                                               clang::SourceLocation loc) {
  Storage storage;
  std::string why;
  if (!StorageFor(element, context_, &storage, &why)) Fail(loc, "an allocation of " + why);
  needs_8bit_ = needs_8bit_ || storage.needs_8bit;
  needs_16bit_ = needs_16bit_ || storage.needs_16bit;
  if (!script_->ClaimAllocationUnit(*slot, storage.unit, &why)) Fail(loc, why);
  AllocationUse& use = allocations_[slot->allocation_index];
  if (!use.storage_type.empty() && use.storage_type != storage.type) {
    Fail(loc,
         "allocation '" + var->getNameAsString() + "' read as two different element types in one kernel");
  }
  use.storage_type = storage.type;
  use.write = use.write || write;
  for (const char* helper : {"kiln_unpack_u8", "kiln_unpack_i8", "kiln_pack_8", "kiln_unpack_u16",
                             "kiln_unpack_i16", "kiln_pack_16"}) {
    if (storage.load.find(helper) != std::string::npos || storage.store.find(helper) != std::string::npos) {
      Use(helper);
    }
  }
  const std::string reg = Type(element, loc);
  const std::string buffer = "a" + std::to_string(slot->allocation_index);
  const std::string info = slot->read;
  const uint32_t size = static_cast<uint32_t>(context_.getTypeSizeInChars(element).getQuantity());
  const std::string name = std::string(write ? "kiln_set_" : "kiln_get_") + var->getNameAsString() + "_" +
                           std::to_string(size) + "_" +
                           (reg == storage.type ? reg : storage.type + "_" + reg);
  std::string sanitized;
  for (char c : name) sanitized += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (accessors_.count(sanitized)) return sanitized;
  // rsGetElementAt on the GPU (kiln/spirv_abi.h, "Faults"): out-of-range coordinates or a different element
  // size read zero and write nothing, and record a fault, so that the driver fails the launch as the CPU
  // driver does.
  needs_fault_ = true;
  const std::string report = "kiln_fault_report(" + std::string(write ? "2u" : "1u") + ", " +
                             std::to_string(slot->allocation_index) + "u, x, y, z, " + std::to_string(size) + "u)";
  std::string text;
  const std::string check = "x >= " + info + ".dim_x || y >= max(" + info + ".dim_y, 1u) || z >= max(" +
                            info + ".dim_z, 1u) || " + info + ".element_size != " + std::to_string(size) +
                            "u";
  const std::string index = info + ".offset + x * (" + info + ".element_size / " + info +
                            ".unit_size) + y * " + info + ".stride_y + z * " + info + ".stride_z";
  if (write) {
    text = "void " + sanitized + "(" + reg + " v, uint x, uint y, uint z) {\n  if (" + check + ") {\n    " +
           report + ";\n    return;\n  }\n  " + buffer + "[" + index + "] = " + Fill(storage.store, "v") + ";\n}\n";
  } else {
    text = reg + " " + sanitized + "(uint x, uint y, uint z) {\n  if (" + check + ") {\n    " + report +
           ";\n    return " + Zero(element, loc) + ";\n  }\n  return " +
           Fill(storage.load, buffer + "[" + index + "]") + ";\n}\n";
  }
  accessors_[sanitized] = text;
  accessor_order_.push_back(sanitized);
  return sanitized;
}

// p[i] on a pointer global bound to an allocation (rsBind): element i of the allocation's packed data, as
// the CPU reads it; i past the last element reads zero.
std::string KernelLowering::PointerRead(const clang::VarDecl* var, const clang::Expr* index,
                                        clang::SourceLocation loc) {
  GlobalSlot* slot = script_->FindGlobal(var->getCanonicalDecl());
  if (!slot || !slot->allocation || slot->pointee.isNull()) {
    Fail(loc, "pointer global '" + var->getNameAsString() + "', which has no GPU binding");
  }
  UseGlobal(var->getCanonicalDecl());
  needs_allocation_info_ = true;
  const clang::QualType element = slot->pointee.getUnqualifiedType();
  Storage storage;
  std::string why;
  if (!StorageFor(element, context_, &storage, &why)) Fail(loc, "a pointer global to " + why);
  needs_8bit_ = needs_8bit_ || storage.needs_8bit;
  needs_16bit_ = needs_16bit_ || storage.needs_16bit;
  if (!script_->ClaimAllocationUnit(*slot, storage.unit, &why)) Fail(loc, why);
  AllocationUse& use = allocations_[slot->allocation_index];
  if (!use.storage_type.empty() && use.storage_type != storage.type) {
    Fail(loc, "pointer global '" + var->getNameAsString() + "' read as two different element types");
  }
  use.storage_type = storage.type;
  for (const char* helper : {"kiln_unpack_u8", "kiln_unpack_i8", "kiln_unpack_u16", "kiln_unpack_i16"}) {
    if (storage.load.find(helper) != std::string::npos) Use(helper);
  }
  const std::string reg = Type(element, loc);
  const std::string info = slot->read;
  const uint32_t size = static_cast<uint32_t>(context_.getTypeSizeInChars(element).getQuantity());
  const std::string name = "kiln_read_" + var->getNameAsString();
  if (!accessors_.count(name)) {
    needs_fault_ = true;
    const std::string count = info + ".dim_x * max(" + info + ".dim_y, 1u) * max(" + info + ".dim_z, 1u)";
    accessors_[name] =
        reg + " " + name + "(uint i) {\n  if (i >= " + count + " || " + info + ".element_size != " +
        std::to_string(size) + "u) {\n    kiln_fault_report(1u, " + std::to_string(slot->allocation_index) +
        "u, i, 0u, 0u, " + std::to_string(size) + "u);\n    return " + Zero(element, loc) + ";\n  }\n  return " +
        Fill(storage.load, "a" + std::to_string(slot->allocation_index) + "[" + info + ".offset + i * (" +
                               info + ".element_size / " + info + ".unit_size)]") +
        ";\n}\n";
    accessor_order_.push_back(name);
  }
  const Lane lane = LaneOf(index->getType());
  std::string i = Expr(index);
  if (lane.bits == 64 || lane.is_signed) i = "uint(" + i + ")";
  return name + "(" + i + ")";
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
  if (name == "rsGetLod" || name == "rsGetArray0" || name == "rsAllocationGetDimLOD" ||
      name == "rsAllocationGetDimFaces") {
    return "0u";
  }
  // Runtime functions that need the CPU driver (kiln/kernel_abi.h services, script state, pointers).
  static const std::pair<const char*, const char*> kCpuOnly[] = {
      {"rsAtomic", "atomics"},
      {"rsDebug", "debug output to the host"},
      {"rsSendToClient", "messages to the host"},
      {"rsForEach", "launching kernels"},
      {"rsRand", "the script's random stream"},
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
      // Vulkan bounds GLSL's sin/cos/tan only on [-pi, pi], while the half_ forms promise their bound up to
      // |x| = 2^16: without a range-reducing helper they stay on the CPU too.
      const bool half_trig = name == "half_sin" || name == "half_cos" || name == "half_tan";
      if (m.kind == MathKind::kImprecise && (!IsNativeOrHalf(name) || half_trig) &&
          script_->precision() != KernelPrecision::kImprecise) {
        bool has_native = false;
        for (const MathEntry& other : kMath) has_native = has_native || "native_" + name == other.name;
        Fail(loc, "'" + name + "': GLSL's " + m.glsl +
                      " does not meet the CPU's precision bound and kilnc has no GPU helper for it yet "
                      "(under rs_fp_imprecise" +
                      (has_native ? ", or as native_" + name + "," : "") + " it would run on the GPU)");
      }
      if (m.kind == MathKind::kHelper) {
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

std::string KernelLowering::InitList(const clang::InitListExpr* e, clang::QualType type) {
  const clang::SourceLocation loc = e->getBeginLoc();
  const clang::QualType t = type.getCanonicalType().getUnqualifiedType();
  if (const auto* array = context_.getAsConstantArrayType(t)) {
    const uint64_t count = array->getSize().getZExtValue();
    std::string out = Type(t, loc) + "(";
    for (uint64_t i = 0; i < count; ++i) {
      std::string value = i < e->getNumInits() ? Expr(e->getInit(static_cast<unsigned>(i)))
                                               : (e->hasArrayFiller() ? Expr(e->getArrayFiller())
                                                                      : Zero(array->getElementType(), loc));
      out += (i ? ", " : "") + value;
    }
    return out + ")";
  }
  if (const auto* record = t->getAs<clang::RecordType>()) {
    std::string out = Type(t, loc) + "(";
    unsigned i = 0;
    for (const clang::FieldDecl* field : record->getDecl()->getDefinition()->fields()) {
      out += (i ? ", " : "") + (i < e->getNumInits() ? Expr(e->getInit(i)) : Zero(field->getType(), loc));
      ++i;
    }
    return out + ")";
  }
  const Lane lane = LaneOf(t);
  if (lane.ok && lane.count > 1) {
    std::string out = Type(t, loc) + "(";
    unsigned lanes = 0;
    for (unsigned i = 0; i < e->getNumInits(); ++i) {
      const clang::Expr* init = e->getInit(i);
      const Lane part = LaneOf(init->getType());
      lanes += part.ok ? part.count : 1;
      out += (i ? ", " : "") + Expr(init);
    }
    Lane element = lane;
    element.count = 1;
    for (; lanes < lane.count; ++lanes) out += (lanes ? ", " : "") + ZeroOf(element);
    return out + ")";
  }
  if (e->getNumInits() == 1) return Expr(e->getInit(0));
  if (e->getNumInits() == 0) return Zero(t, loc);
  Fail(loc, "an initializer list kilnc cannot lower");
}

std::string KernelLowering::Expr(const clang::Expr* e) {
  const clang::SourceLocation loc = e->getExprLoc();
  if (const auto* paren = llvm::dyn_cast<clang::ParenExpr>(e)) return Expr(paren->getSubExpr());
  if (const auto* constant = llvm::dyn_cast<clang::ConstantExpr>(e)) return Expr(constant->getSubExpr());
  if (const auto* literal = llvm::dyn_cast<clang::IntegerLiteral>(e)) {
    const Lane lane = LaneOf(e->getType());
    if (lane.bits == 64) needs_int64_ = true;
    return IntLiteral(llvm::APSInt(literal->getValue(), !lane.is_signed), lane);
  }
  if (const auto* literal = llvm::dyn_cast<clang::CharacterLiteral>(e)) {
    return IntLiteral(llvm::APSInt(llvm::APInt(32, literal->getValue()), false), LaneOf(e->getType()));
  }
  if (const auto* literal = llvm::dyn_cast<clang::FloatingLiteral>(e)) {
    const Lane lane = LaneOf(e->getType());
    if (lane.is_half) Fail(loc, "a half literal");
    const std::string text = FloatLiteral(literal->getValueAsApproximateDouble(), lane.bits == 64);
    if (text.empty()) Fail(loc, "an infinite double literal");
    return text;
  }
  if (llvm::isa<clang::UnaryExprOrTypeTraitExpr>(e) || llvm::isa<clang::OffsetOfExpr>(e)) {
    clang::Expr::EvalResult result;
    if (!e->EvaluateAsInt(result, context_)) Fail(loc, "a sizeof kilnc cannot evaluate");
    return IntLiteral(result.Val.getInt(), LaneOf(e->getType()));
  }
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
    if (const auto* constant = llvm::dyn_cast<clang::EnumConstantDecl>(ref->getDecl())) {
      return IntLiteral(constant->getInitVal(), LaneOf(e->getType()));
    }
    if (const auto* var = llvm::dyn_cast<clang::VarDecl>(ref->getDecl())) {
      if (pointer_params_.count(var))
        Fail(loc, "pointer parameter '" + var->getNameAsString() + "' used as a value");
      if (var->getType()->isPointerType() && !var->hasGlobalStorage()) {
        const auto* record = var->getType()->getPointeeType()->getAs<clang::RecordType>();
        if (record && record->getDecl()->getName() == "KilnKernelLaunch") return "kiln";
      }
      return VarRef(var, loc);
    }
    Fail(loc, "a reference to '" + ref->getDecl()->getNameAsString() + "' as a value");
  }
  if (const auto* cast = llvm::dyn_cast<clang::CastExpr>(e)) return Cast(cast);
  if (const auto* convert = llvm::dyn_cast<clang::ConvertVectorExpr>(e)) {
    const clang::Expr* src = convert->getSrcExpr();
    return Convert(Expr(src), src->getType(), e->getType(), loc);
  }
  if (const auto* op = llvm::dyn_cast<clang::BinaryOperator>(e)) return Binary(op);
  if (const auto* op = llvm::dyn_cast<clang::UnaryOperator>(e)) return Unary(op);
  if (const auto* op = llvm::dyn_cast<clang::ConditionalOperator>(e)) {
    if (!LaneOf(op->getCond()->getType()).ok || LaneOf(op->getCond()->getType()).count != 1) {
      Fail(loc, "a vector condition in '?:'");
    }
    return "(" + Cond(op->getCond()) + " ? " + Expr(op->getTrueExpr()) + " : " + Expr(op->getFalseExpr()) +
           ")";
  }
  if (const auto* call = llvm::dyn_cast<clang::CallExpr>(e)) return Call(call);
  if (const auto* member = llvm::dyn_cast<clang::MemberExpr>(e)) {
    if (member->isArrow()) {
      const std::string param = PointerParam(member->getBase());
      if (param.empty()) Fail(loc, "'->' (a pointer)");
      return param + ".f_" + member->getMemberDecl()->getNameAsString();
    }
    return Expr(member->getBase()) + ".f_" + member->getMemberDecl()->getNameAsString();
  }
  if (const auto* swizzle = llvm::dyn_cast<clang::ExtVectorElementExpr>(e)) {
    if (swizzle->isArrow()) Fail(loc, "'->' on a vector pointer");
    llvm::SmallVector<uint32_t, 4> indices;
    swizzle->getEncodedElementAccess(indices);
    std::string letters;
    for (uint32_t i : indices) {
      if (i > 3) Fail(loc, "a swizzle beyond the fourth lane");
      letters += "xyzw"[i];
    }
    const clang::Expr* base = swizzle->getBase();
    if (!LaneOf(base->getType()).ok || LaneOf(base->getType()).count == 1) Fail(loc, "a swizzle of a scalar");
    return Expr(base) + "." + letters;
  }
  if (const auto* subscript = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) {
    const clang::Expr* base = subscript->getBase()->IgnoreParenImpCasts();
    std::string index = Expr(subscript->getIdx());
    const Lane index_lane = LaneOf(subscript->getIdx()->getType());
    if (index_lane.bits == 64) index = "int(" + index + ")";
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(base)) {
      const auto* var = llvm::dyn_cast<clang::VarDecl>(ref->getDecl());
      if (var && var->getType()->isPointerType() && var->hasGlobalStorage()) {
        return PointerRead(var, subscript->getIdx(), loc);
      }
    }
    if (!PointerParam(base).empty()) {
      clang::Expr::EvalResult index_value;
      if (subscript->getIdx()->EvaluateAsInt(index_value, context_) && index_value.Val.getInt() == 0) {
        return PointerParam(base);
      }
      Fail(loc, "indexing a pointer parameter past its element");
    }
    if (subscript->getBase()->getType()->isPointerType() && !base->getType()->isArrayType()) {
      Fail(loc, "indexing through a pointer");
    }
    return Expr(base) + "[" + index + "]";
  }
  if (const auto* compound = llvm::dyn_cast<clang::CompoundLiteralExpr>(e)) {
    const clang::Expr* init = compound->getInitializer();
    if (const auto* list = llvm::dyn_cast<clang::InitListExpr>(init)) return InitList(list, e->getType());
    return Expr(init);
  }
  if (const auto* list = llvm::dyn_cast<clang::InitListExpr>(e)) return InitList(list, e->getType());
  if (llvm::isa<clang::ImplicitValueInitExpr>(e)) return Zero(e->getType(), loc);
  if (llvm::isa<clang::StringLiteral>(e)) Fail(loc, "a string literal");
  Fail(loc, std::string("the expression kind '") + e->getStmtClassName() + "'");
}

void KernelLowering::VarDecl(const clang::VarDecl* var, int indent, std::string* out) {
  const std::string pad(indent * 2, ' ');
  if (var->isStaticLocal())
    Fail(var->getLocation(), "static local variable '" + var->getNameAsString() + "'");
  std::string init;
  if (const clang::Expr* e = var->getInit()) {
    const auto* list = llvm::dyn_cast<clang::InitListExpr>(e->IgnoreParens());
    init = list ? InitList(list, var->getType()) : Expr(e);
  }
  // Declared after the initializer is lowered: `int x = x;` is not C anyway, and shadowing stays right.
  const std::string decl = Declare(var->getType(), LocalName(var), var->getLocation());
  *out += pad + decl + (init.empty() ? "" : " = " + init) + ";\n";
}

void KernelLowering::Block(const clang::Stmt* s, int indent, std::string* out) {
  const std::string pad(indent * 2, ' ');
  if (const auto* compound = llvm::dyn_cast<clang::CompoundStmt>(s)) {
    *out += "{\n";
    for (const clang::Stmt* child : compound->body()) Stmt(child, indent + 1, out);
    *out += pad + "}";
    return;
  }
  *out += "{\n";
  Stmt(s, indent + 1, out);
  *out += pad + "}";
}

void KernelLowering::Stmt(const clang::Stmt* s, int indent, std::string* out) {
  const std::string pad(indent * 2, ' ');
  const clang::SourceLocation loc = s->getBeginLoc();
  if (const auto* compound = llvm::dyn_cast<clang::CompoundStmt>(s)) {
    *out += pad;
    Block(compound, indent, out);
    *out += "\n";
    return;
  }
  if (const auto* decl = llvm::dyn_cast<clang::DeclStmt>(s)) {
    for (const clang::Decl* d : decl->decls()) {
      if (const auto* var = llvm::dyn_cast<clang::VarDecl>(d)) {
        VarDecl(var, indent, out);
      } else if (!llvm::isa<clang::RecordDecl>(d) && !llvm::isa<clang::TypedefNameDecl>(d)) {
        Fail(d->getLocation(), "a local declaration kilnc cannot lower");
      }
    }
    return;
  }
  if (const auto* e = llvm::dyn_cast<clang::Expr>(s)) {
    std::string text = Expr(e);
    *out += pad + text + ";\n";
    return;
  }
  if (llvm::isa<clang::NullStmt>(s)) return;
  if (const auto* ret = llvm::dyn_cast<clang::ReturnStmt>(s)) {
    *out += pad + "return" + (ret->getRetValue() ? " " + Expr(ret->getRetValue()) : std::string()) + ";\n";
    return;
  }
  if (llvm::isa<clang::BreakStmt>(s)) {
    *out += pad + "break;\n";
    return;
  }
  if (llvm::isa<clang::ContinueStmt>(s)) {
    *out += pad + "continue;\n";
    return;
  }
  if (const auto* stmt = llvm::dyn_cast<clang::IfStmt>(s)) {
    if (stmt->getConditionVariable() || stmt->getInit()) Fail(loc, "a declaration in an if condition");
    *out += pad + "if " + Cond(stmt->getCond()) + " ";
    Block(stmt->getThen(), indent, out);
    if (stmt->getElse()) {
      *out += " else ";
      Block(stmt->getElse(), indent, out);
    }
    *out += "\n";
    return;
  }
  if (const auto* stmt = llvm::dyn_cast<clang::WhileStmt>(s)) {
    if (stmt->getConditionVariable()) Fail(loc, "a declaration in a while condition");
    *out += pad + "while " + Cond(stmt->getCond()) + " ";
    Block(stmt->getBody(), indent, out);
    *out += "\n";
    return;
  }
  if (const auto* stmt = llvm::dyn_cast<clang::DoStmt>(s)) {
    *out += pad + "do ";
    Block(stmt->getBody(), indent, out);
    *out += " while " + Cond(stmt->getCond()) + ";\n";
    return;
  }
  if (const auto* stmt = llvm::dyn_cast<clang::ForStmt>(s)) {
    if (stmt->getConditionVariable()) Fail(loc, "a declaration in a for condition");
    // { init; for (; cond; inc) body }: C's init may declare several variables or be any expression.
    *out += pad + "{\n";
    if (stmt->getInit()) Stmt(stmt->getInit(), indent + 1, out);
    *out += pad + "  for (; " + (stmt->getCond() ? Cond(stmt->getCond()) : std::string("true")) + "; " +
            (stmt->getInc() ? Expr(stmt->getInc()) : std::string()) + ") ";
    Block(stmt->getBody(), indent + 1, out);
    *out += "\n" + pad + "}\n";
    return;
  }
  if (const auto* stmt = llvm::dyn_cast<clang::SwitchStmt>(s)) {
    if (stmt->getConditionVariable() || stmt->getInit()) Fail(loc, "a declaration in a switch");
    const clang::Expr* cond = stmt->getCond();
    const Lane lane = LaneOf(cond->getType());
    if (!lane.ok || lane.bits > 32 || lane.is_float)
      Fail(loc, "a switch over '" + cond->getType().getAsString() + "'");
    *out += pad + "switch (" + Expr(cond) + ") {\n";
    const auto* body = llvm::dyn_cast<clang::CompoundStmt>(stmt->getBody());
    if (!body) Fail(loc, "a switch whose body is not a block");
    for (const clang::Stmt* child : body->body()) {
      const clang::Stmt* current = child;
      while (true) {
        if (const auto* c = llvm::dyn_cast<clang::CaseStmt>(current)) {
          if (c->getRHS()) Fail(c->getBeginLoc(), "a case range");
          clang::Expr::EvalResult value;
          if (!c->getLHS()->EvaluateAsInt(value, context_)) Fail(c->getBeginLoc(), "a non-constant case");
          *out += pad + "  case " + IntLiteral(value.Val.getInt(), lane) + ":\n";
          current = c->getSubStmt();
        } else if (const auto* d = llvm::dyn_cast<clang::DefaultStmt>(current)) {
          *out += pad + "  default:\n";
          current = d->getSubStmt();
        } else {
          break;
        }
      }
      Stmt(current, indent + 2, out);
    }
    *out += pad + "}\n";
    return;
  }
  if (llvm::isa<clang::CaseStmt>(s) || llvm::isa<clang::DefaultStmt>(s))
    Fail(loc, "a case label inside a nested statement");
  if (llvm::isa<clang::GotoStmt>(s) || llvm::isa<clang::LabelStmt>(s)) Fail(loc, "goto");
  Fail(loc, std::string("the statement kind '") + s->getStmtClassName() + "'");
}

bool KernelLowering::Lower(const clang::FunctionDecl* kernel, const KernelDesc& desc, const KernelInfo& info,
                           GpuKernelLowering* out) {
  kernel_ = kernel;
  try {
    if (desc.signature & kKernelSigUsr) {
      Fail(kernel->getLocation(), "root() with usrData (a host pointer the GPU cannot see)");
    }
    const size_t num_inputs = desc.inputs.size();
    const bool has_output = desc.has_output();
    // The element types, from the parameters (info.args is parallel to them): by value for RS_KERNEL, the
    // pointees of root()'s in and out pointers.
    std::vector<clang::QualType> input_types;
    clang::QualType output_type = kernel->getReturnType();
    if (info.args.size() != kernel->getNumParams())
      Fail(kernel->getLocation(), "internal: kernel arguments disagree");
    for (unsigned i = 0; i < kernel->getNumParams(); ++i) {
      const clang::QualType type = kernel->getParamDecl(i)->getType();
      if (info.args[i] == ArgKind::kInput) input_types.push_back(type);
      if (info.args[i] == ArgKind::kInputPtr)
        input_types.push_back(type->getPointeeType().getUnqualifiedType());
      if (info.args[i] == ArgKind::kOutputPtr) output_type = type->getPointeeType().getUnqualifiedType();
    }
    if (input_types.size() != num_inputs) Fail(kernel->getLocation(), "internal: kernel inputs disagree");
    std::vector<Storage> storages;
    std::vector<clang::QualType> element_types = input_types;
    if (has_output) element_types.push_back(output_type);
    for (size_t i = 0; i < element_types.size(); ++i) {
      const bool is_output = has_output && i == element_types.size() - 1;
      storages.push_back(ElementStorage(element_types[i], is_output ? "the output's " : "an input's ",
                                        kernel->getLocation()));
      out->unit_sizes[is_output ? KILN_KERNEL_MAX_INPUTS : i] = storages.back().unit;
    }
    Use("kiln_index");
    const std::string kernel_name = FunctionName(kernel, kernel->getLocation());

    // main(): the bounds guard, the loads, the call and the store.
    std::string main =
        "void main() {\n"
        "  uvec3 p = gl_GlobalInvocationID + kiln.origin.xyz;\n"
        "  if (any(greaterThanEqual(p, kiln.dim.xyz))) return;\n";
    const std::string out_element = "b_out[kiln_index(" + std::to_string(num_inputs) + "u, p)]";
    if (desc.root_style && has_output) {
      // root() writes through its out pointer, maybe not on every path: start from the element's value.
      main += "  " + Type(output_type, kernel->getLocation()) +
              " result = " + Fill(storages.back().load, out_element) + ";\n";
    }
    std::string call = kernel_name + "(";
    size_t input = 0;
    bool first = true;
    for (unsigned i = 0; i < kernel->getNumParams(); ++i) {
      const clang::ParmVarDecl* param = kernel->getParamDecl(i);
      if (info.args[i] == ArgKind::kContext) continue;
      const std::string value = info.args[i] == ArgKind::kOutputPtr
                                    ? std::string("result")
                                    : Argument(info.args[i], param, input_types, storages, "  ", &input, &main);
      call += (first ? "" : ", ") + value;
      first = false;
    }
    call += ")";
    if (has_output && !desc.root_style) {
      main += "  " + Type(output_type, kernel->getLocation()) + " result = " + call + ";\n";
    } else {
      main += "  " + call + ";\n";
    }
    if (has_output) main += "  " + out_element + " = " + Fill(storages.back().store, "result") + ";\n";
    main += "}\n";

    std::string bindings;
    if (has_output) {
      bindings += "layout(set = 0, binding = " + std::to_string(KILN_SPIRV_OUTPUT_BINDING) + ", std430) " +
                  (desc.root_style ? "" : "writeonly ") + "buffer Out { " + storages.back().type +
                  " b_out[]; };\n";
    }
    storages.resize(num_inputs);
    const std::string glsl = Assemble("kernel '" + desc.name + "'", kernel->getLocation(), storages,
                                      num_inputs + (has_output ? 1 : 0), "", bindings, main);
    out->glsl = glsl;
    out->cpu_only_reason.clear();
    return true;
  } catch (const Failure&) {
    return false;
  }
}

// ---- Reductions: the two-pass workgroup reduction of kiln/spirv_abi.h ("Reductions") ----

// Bytes and alignment of a register type in an std430 buffer (what the partials buffer holds): 8- and 16-bit
// integers and bools are 32-bit there, as in registers.
uint32_t KernelLowering::Std430Size(clang::QualType type, uint32_t* align, clang::SourceLocation loc) {
  const clang::QualType t = type.getCanonicalType().getUnqualifiedType();
  Type(t, loc);  // fails for what GLSL cannot hold
  if (const auto* array = context_.getAsConstantArrayType(t)) {
    uint32_t element_align = 1;
    const uint32_t element = Std430Size(array->getElementType(), &element_align, loc);
    *align = element_align;
    const uint64_t total = uint64_t{(element + element_align - 1) / element_align * element_align} *
                           array->getSize().getZExtValue();
    if (total > (1u << 20)) Fail(loc, "an accumulator of more than 1 MiB");
    return static_cast<uint32_t>(total);
  }
  if (const auto* record = t->getAs<clang::RecordType>()) {
    uint32_t offset = 0, max_align = 1;
    for (const clang::FieldDecl* field : record->getDecl()->getDefinition()->fields()) {
      uint32_t field_align = 1;
      const uint32_t size = Std430Size(field->getType(), &field_align, loc);
      offset = (offset + field_align - 1) / field_align * field_align + size;
      max_align = std::max(max_align, field_align);
    }
    *align = max_align;
    return (offset + max_align - 1) / max_align * max_align;
  }
  const Lane lane = LaneOf(t);
  const uint32_t scalar = lane.bits == 64 ? 8 : 4;
  *align = scalar * (lane.count == 1 ? 1 : (lane.count == 2 ? 2 : 4));
  return scalar * lane.count;
}

// What main() passes for a kernel's or accumulator's parameter of `kind` at cell p: a coordinate, or the next
// input (*input), loaded through its view into a local declared in `main` at `pad`.
std::string KernelLowering::Argument(ArgKind kind, const clang::ParmVarDecl* param,
                                     const std::vector<clang::QualType>& input_types,
                                     const std::vector<Storage>& storages, const std::string& pad, size_t* input,
                                     std::string* main) {
  if (kind == ArgKind::kX || kind == ArgKind::kY || kind == ArgKind::kZ) {
    const std::string coordinate =
        std::string("p.") + (kind == ArgKind::kX ? "x" : (kind == ArgKind::kY ? "y" : "z"));
    return LaneOf(param->getType()).is_signed ? "int(" + coordinate + ")" : coordinate;
  }
  if (kind != ArgKind::kInput && kind != ArgKind::kInputPtr) {
    Fail(param->getLocation(), "parameter '" + param->getNameAsString() + "'");
  }
  const size_t i = (*input)++;
  const std::string local = "in" + std::to_string(i);
  *main += pad + Type(input_types[i], param->getLocation()) + " " + local + " = " +
           Fill(storages[i].load, "b_in" + std::to_string(i) + "[kiln_index(" + std::to_string(i) + "u, p)]") +
           ";\n";
  return local;
}

// Code that ORs the C bytes of `value` (of `type`, at byte `offset`, an expression) into the uint words `w`.
void KernelLowering::StoreBytes(clang::QualType type, const std::string& value, const std::string& offset,
                                int depth, int indent, clang::SourceLocation loc, std::string* out) {
  const std::string pad(indent * 2, ' ');
  const clang::QualType t = type.getCanonicalType().getUnqualifiedType();
  if (const auto* array = context_.getAsConstantArrayType(t)) {
    const std::string i = "i" + std::to_string(depth);
    const uint64_t size = context_.getTypeSizeInChars(array->getElementType()).getQuantity();
    *out += pad + "for (uint " + i + " = 0u; " + i + " < " + std::to_string(array->getSize().getZExtValue()) +
            "u; ++" + i + ") {\n";
    StoreBytes(array->getElementType(), value + "[" + i + "]",
               "(" + offset + " + " + i + " * " + std::to_string(size) + "u)", depth + 1, indent + 1, loc, out);
    *out += pad + "}\n";
    return;
  }
  if (const auto* record = t->getAs<clang::RecordType>()) {
    const clang::RecordDecl* decl = record->getDecl()->getDefinition();
    const clang::ASTRecordLayout& layout = context_.getASTRecordLayout(decl);
    for (const clang::FieldDecl* field : decl->fields()) {
      const uint64_t field_offset = layout.getFieldOffset(field->getFieldIndex()) / 8;
      StoreBytes(field->getType(), value + ".f_" + field->getNameAsString(),
                 "(" + offset + " + " + std::to_string(field_offset) + "u)", depth, indent, loc, out);
    }
    return;
  }
  const Lane lane = LaneOf(t);
  if (!lane.ok || lane.is_half) Fail(loc, "a result of type '" + type.getAsString() + "'");
  const unsigned bytes = lane.bits / 8;
  for (unsigned k = 0; k < lane.count; ++k) {
    const std::string v = lane.count == 1 ? value : value + "." + "xyzw"[k];
    const std::string at = "(" + offset + " + " + std::to_string(k * bytes) + "u)";
    if (lane.bits == 64) {
      const std::string words = lane.is_float ? "unpackDouble2x32(" + v + ")" : "unpackUint2x32(uint64_t(" + v + "))";
      *out += pad + "{ uvec2 u = " + words + "; w[" + at + " / 4u] = u.x; w[" + at + " / 4u + 1u] = u.y; }\n";
    } else if (lane.bits == 32) {
      *out += pad + "w[" + at + " / 4u] = " + (lane.is_float ? "floatBitsToUint(" + v + ")" : "uint(" + v + ")") +
              ";\n";
    } else {
      const std::string bits = lane.is_bool ? "(" + v + " ? 1u : 0u)"
                                            : "(uint(" + v + ") & " + (lane.bits == 8 ? "255u" : "65535u") + ")";
      *out += pad + "w[" + at + " / 4u] |= " + bits + " << (8u * (" + at + " % 4u));\n";
    }
  }
}

bool KernelLowering::LowerReduction(const ReductionDesc& desc, const ReductionInfo& info,
                                    const ReductionFunctions& fns, GpuReductionLowering* out) {
  const clang::FunctionDecl* accumulator = fns.accumulator;
  kernel_ = accumulator;
  try {
    const clang::SourceLocation loc = accumulator->getLocation();
    if (accumulator->getNumParams() != info.accumulator_args.size() + 1)
      Fail(loc, "internal: the accumulator's arguments disagree");
    const clang::QualType accum_type =
        accumulator->getParamDecl(0)->getType()->getPointeeType().getUnqualifiedType();
    const clang::QualType result_type =
        fns.outconverter ? fns.outconverter->getParamDecl(0)->getType()->getPointeeType().getUnqualifiedType()
                         : accum_type;
    const uint64_t result_size = context_.getTypeSizeInChars(result_type).getQuantity();
    if (result_size != desc.result.size) Fail(loc, "internal: the result's size disagrees with the reflection");
    // Inputs: the accumulator's by-value parameters after the accumulator.
    std::vector<clang::QualType> input_types;
    for (size_t i = 0; i < info.accumulator_args.size(); ++i) {
      if (info.accumulator_args[i] == ArgKind::kInput) input_types.push_back(accumulator->getParamDecl(i + 1)->getType());
    }
    if (input_types.size() != desc.inputs.size()) Fail(loc, "internal: the reduction's inputs disagree");
    std::vector<Storage> storages;
    for (size_t i = 0; i < input_types.size(); ++i) {
      storages.push_back(ElementStorage(input_types[i], "an input's ", loc));
      out->unit_sizes[i] = storages.back().unit;
    }
    uint32_t accum_align = 1;
    const uint32_t accum_size = Std430Size(accum_type, &accum_align, loc);
    out->accumulator_stride = (accum_size + accum_align - 1) / accum_align * accum_align;
    out->result_words = static_cast<uint32_t>((result_size + 3) / 4);
    Use("kiln_index");
    const std::string accum_fn = FunctionName(accumulator, loc);
    const std::string init_fn = fns.initializer ? FunctionName(fns.initializer, fns.initializer->getLocation()) : "";
    const std::string combine_fn =
        fns.combiner ? FunctionName(fns.combiner, fns.combiner->getLocation()) : accum_fn;  // RS: no combiner
    const std::string out_fn = fns.outconverter ? FunctionName(fns.outconverter, fns.outconverter->getLocation()) : "";

    // Helpers: the initial value, the combine step, and the store of the result's C bytes.
    std::string helpers;
    helpers += "void kiln_init(out " + Declare(accum_type, "a", loc) + ") {\n  a = " + Zero(accum_type, loc) + ";\n";
    if (!init_fn.empty()) helpers += "  " + init_fn + "(a);\n";
    helpers += "}\n";
    helpers += "void kiln_combine(inout " + Declare(accum_type, "a", loc) + ", in " + Declare(accum_type, "b", loc) +
               ") {\n  " + combine_fn + "(a, b);\n}\n";
    helpers += "void kiln_store(in " + Declare(result_type, "r", loc) + ") {\n";
    helpers += "  uint w[" + std::to_string(out->result_words) + "];\n";
    helpers += "  for (uint i = 0u; i < " + std::to_string(out->result_words) + "u; ++i) w[i] = 0u;\n";
    StoreBytes(result_type, "r", "0u", 0, 1, loc, &helpers);
    helpers += "  for (uint i = 0u; i < " + std::to_string(out->result_words) + "u; ++i) b_out[i] = w[i];\n}\n";

    // Pass 0 accumulates cells into one partial per workgroup; pass 1 combines the partials into the result.
    std::string main = helpers;
    main += "void main() {\n  uint lid = gl_LocalInvocationID.x;\n";
    main += "  " + Declare(accum_type, "acc", loc) + ";\n  kiln_init(acc);\n";
    main += "  if (KILN_PASS == 0u) {\n";
    main += "    uint total = kiln.dim.x * kiln.dim.y * kiln.dim.z;\n";
    main += "    uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n";
    main += "    for (uint c = gl_GlobalInvocationID.x; c < total; c += step) {\n";
    main += "      uvec3 p = uvec3(c % kiln.dim.x, (c / kiln.dim.x) % kiln.dim.y, c / (kiln.dim.x * kiln.dim.y));\n";
    std::string call = accum_fn + "(acc";
    size_t input = 0;
    for (size_t i = 0; i < info.accumulator_args.size(); ++i) {
      if (info.accumulator_args[i] == ArgKind::kContext) continue;
      call += ", " + Argument(info.accumulator_args[i], accumulator->getParamDecl(i + 1), input_types, storages,
                              "      ", &input, &main);
    }
    main += "      " + call + ");\n    }\n";
    main += "  } else {\n";
    main += "    for (uint i = lid; i < kiln.dim.w; i += gl_WorkGroupSize.x) kiln_combine(acc, kiln_partials[i].v);\n";
    main += "  }\n";
    main += "  kiln_shared[lid].v = acc;\n  barrier();\n";
    main += "  for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1u) {\n";
    main += "    if (lid < s) {\n";
    main += "      " + Declare(accum_type, "mine", loc) + " = kiln_shared[lid].v;\n";
    main += "      kiln_combine(mine, kiln_shared[lid + s].v);\n";
    main += "      kiln_shared[lid].v = mine;\n    }\n    barrier();\n  }\n";
    main += "  if (lid == 0u) {\n";
    main += "    if (KILN_PASS == 0u) {\n      kiln_partials[gl_WorkGroupID.x].v = kiln_shared[0].v;\n";
    main += "    } else {\n";
    if (out_fn.empty()) {
      main += "      kiln_store(kiln_shared[0].v);\n";
    } else {
      main += "      " + Declare(result_type, "r", loc) + " = " + Zero(result_type, loc) + ";\n";
      main += "      " + out_fn + "(r, kiln_shared[0].v);\n      kiln_store(r);\n";
    }
    main += "    }\n  }\n}\n";

    const std::string preamble = "layout(constant_id = " + std::to_string(KILN_SPIRV_SPEC_REDUCE_PASS) +
                                 ") const uint KILN_PASS = 0u;\n";
    std::string bindings = "layout(set = 0, binding = " + std::to_string(KILN_SPIRV_RESULT_BINDING) +
                           ", std430) writeonly buffer Out { uint b_out[]; };\n";
    bindings += "struct KilnAccum {\n  " + Declare(accum_type, "v", loc) + ";\n};\n";
    bindings += "layout(set = 0, binding = " + std::to_string(KILN_SPIRV_PARTIALS_BINDING) +
                ", std430) buffer KilnPartials { KilnAccum kiln_partials[]; };\n";
    bindings += "shared KilnAccum kiln_shared[gl_WorkGroupSize.x];\n";
    out->glsl = Assemble("reduction '" + desc.name + "'", loc, storages, storages.size(), preamble, bindings, main);
    out->cpu_only_reason.clear();
    return true;
  } catch (const Failure&) {
    return false;
  }
}

// The shader around `main`: extensions, the launch block, structs, the buffers, constants, the helper library,
// allocation accessors and the lowered functions (callee first). `preamble` comes before the launch block,
// `bindings` after the inputs' buffers.
std::string KernelLowering::Assemble(const std::string& what, clang::SourceLocation loc,
                                     const std::vector<Storage>& inputs, size_t views, const std::string& preamble,
                                     const std::string& bindings, const std::string& main) {
  std::string glsl = "#version 450\n";
  glsl += "// Generated by kilnc from " + Where(loc) + ", " + what + " (kiln/spirv_abi.h version " +
          std::to_string(KILN_SPIRV_ABI_VERSION) + ").\n";
  if (needs_int64_) glsl += "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n";
  if (needs_8bit_) glsl += "#extension GL_EXT_shader_8bit_storage : require\n";
  if (needs_16bit_) glsl += "#extension GL_EXT_shader_16bit_storage : require\n";
  if (needs_8bit_ || needs_16bit_) {
    // Conversions to and from 8/16-bit storage types are arithmetic-type constructors in glslang.
    glsl += "#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require\n";
    glsl += "#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require\n";
  }
  glsl += "layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;\n";
  glsl += preamble;
  glsl += "layout(push_constant, std430) uniform KilnLaunch {\n  uvec4 dim;\n  uvec4 origin;\n";
  if (views > 0) glsl += "  uvec4 view[" + std::to_string(views) + "];\n";
  glsl += "} kiln;\n";
  if (needs_allocation_info_) {
    glsl +=
        "struct KilnAllocationInfo {\n  uint dim_x, dim_y, dim_z, element_size, offset, stride_y, "
        "stride_z, unit_size;\n};\n";
  }
  for (const std::string& text : struct_text_) glsl += text;
  if (!globals_used_.empty()) {
    std::vector<std::pair<uint32_t, std::string>> members;
    for (const clang::VarDecl* var : globals_used_) {
      const GlobalSlot* slot = script_->FindGlobal(var);
      members.push_back({slot->offset, slot->member});
    }
    std::sort(members.begin(), members.end());
    glsl += "layout(set = 0, binding = " + std::to_string(KILN_SPIRV_GLOBALS_BINDING) +
            ", std430) readonly buffer KilnGlobals {\n";
    for (const auto& m : members) glsl += "  layout(offset = " + std::to_string(m.first) + ") " + m.second + ";\n";
    glsl += "};\n";
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    glsl += "layout(set = 0, binding = " + std::to_string(KILN_SPIRV_FIRST_INPUT_BINDING + i) +
            ", std430) readonly buffer In" + std::to_string(i) + " { " + inputs[i].type + " b_in" +
            std::to_string(i) + "[]; };\n";
  }
  glsl += bindings;
  for (const auto& entry : allocations_) {
    glsl += "layout(set = 0, binding = " + std::to_string(KILN_SPIRV_FIRST_ALLOCATION_BINDING + entry.first) +
            ", std430) " + (entry.second.write ? "" : "readonly ") + "buffer A" + std::to_string(entry.first) +
            " { " + entry.second.storage_type + " a" + std::to_string(entry.first) + "[]; };\n";
  }
  for (const std::string& text : constant_text_) glsl += text;
  for (const std::string& name : library_order_) glsl += FindLibrary(name)->text;
  for (const std::string& name : library_order_) {
    if (kComponentwise.count(name) && library_.count(name + "#vec")) {
      const std::string text = FindLibrary(name)->text;
      const size_t open = text.find('('), close = text.find(')');
      const int arity = static_cast<int>(std::count(text.begin() + open, text.begin() + close, ',')) + 1;
      glsl += VectorOverloads(name, arity);
    }
  }
  if (needs_fault_) {
    // The first fault of the launch wins; its details are written once, by the invocation that set the code.
    glsl += "layout(set = 0, binding = " + std::to_string(KILN_SPIRV_FAULT_BINDING) +
            ", std430) buffer KilnFault { uint kiln_fault[8]; };\n"
            "void kiln_fault_report(uint code, uint allocation, uint x, uint y, uint z, uint size) {\n"
            "  if (atomicCompSwap(kiln_fault[0], 0u, code) != 0u) return;\n"
            "  kiln_fault[1] = allocation;\n  kiln_fault[2] = x;\n  kiln_fault[3] = y;\n  kiln_fault[4] = z;\n"
            "  kiln_fault[5] = size;\n}\n";
  }
  for (const std::string& name : accessor_order_) glsl += accessors_.at(name);
  for (const std::string& text : function_text_) glsl += text;  // appended callee-first
  return glsl + main;
}

// How an input, output or result element of `type` sits in its buffer; `role` starts the reason when it has
// no GPU layout.
Storage KernelLowering::ElementStorage(clang::QualType type, const char* role, clang::SourceLocation loc) {
  Storage storage;
  std::string why;
  if (!StorageFor(type, context_, &storage, &why)) Fail(loc, role + why);
  needs_8bit_ = needs_8bit_ || storage.needs_8bit;
  needs_16bit_ = needs_16bit_ || storage.needs_16bit;
  for (const char* helper :
       {"kiln_unpack_u8", "kiln_unpack_i8", "kiln_pack_8", "kiln_unpack_u16", "kiln_unpack_i16", "kiln_pack_16"}) {
    if (storage.load.find(helper) != std::string::npos || storage.store.find(helper) != std::string::npos) {
      Use(helper);
    }
  }
  return storage;
}

}  // namespace

void LowerKernelsToGlsl(clang::ASTContext& context, ScriptInfo* info) { ScriptLowering(context, info).Run(); }

}  // namespace compiler
}  // namespace kiln
