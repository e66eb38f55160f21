// kilnc's rejections: each must be a Clang-style diagnostic naming the file, line and column, with the
// offending source line.
#include <string>

#include "compiler/compiler.h"
#include "gtest/gtest.h"

namespace kiln {
namespace {

constexpr char kHeader[] = "#pragma version(1)\n#pragma rs java_package_name(a.b)\n";

// Compiles kHeader + body (so body line 1 is file line 3) and expects failure.
std::string ExpectError(const std::string& body) {
  CompileResult result;
  CompileKernelSource(kHeader + body, "diag.rs", CompileOptions(), &result);
  EXPECT_FALSE(result.ok) << "compiled although it should not:\n" << body;
  EXPECT_TRUE(result.kmod.empty());
  return result.diagnostics;
}

// Checks that `diagnostics` holds "diag.rs:<line>:<col>: error: <message...>" and the quoted source line.
void ExpectDiagnostic(const std::string& diagnostics, int line, int column, const std::string& message,
                      const std::string& source_line) {
  const std::string location = "diag.rs:" + std::to_string(line) + ":" + std::to_string(column) + ": error: ";
  const size_t at = diagnostics.find(location);
  ASSERT_NE(at, std::string::npos) << "no error at " << location << " in:\n" << diagnostics;
  const size_t end = diagnostics.find('\n', at);
  EXPECT_NE(diagnostics.substr(at, end - at).find(message), std::string::npos)
      << "expected '" << message << "' in:\n"
      << diagnostics;
  EXPECT_NE(diagnostics.find(source_line, end), std::string::npos)
      << "expected the source line '" << source_line << "' in:\n"
      << diagnostics;
}

// init() runs at script creation, before anything can be bound: using a pointer global there is refused, even
// through a helper; comparing it with NULL is not a use.
TEST(DiagnosticsTest, InitUsingAPointerGlobal) {
  const std::string d = ExpectError(
      "float* gWeights;\n"
      "float gFirst;\n"
      "static float first(void) { return gWeights[0]; }\n"
      "void init(void) { gFirst = first(); }\n"
      "float RS_KERNEL k(float in) { return in * gFirst; }\n");
  ExpectDiagnostic(d, 6, 6, "init() uses pointer global 'gWeights', which is still unbound when init() runs",
                   "void init(void) { gFirst = first(); }");
  CompileResult ok;
  CompileKernelSource(std::string(kHeader) +
                          "float* gWeights;\nfloat gFirst;\n"
                          "void init(void) { gFirst = gWeights != NULL ? 1.0f : 0.0f; }\n"
                          "float RS_KERNEL k(float in) { return in * gFirst * gWeights[0]; }\n",
                      "diag.rs", CompileOptions(), &ok);
  EXPECT_TRUE(ok.ok) << ok.diagnostics;
}

TEST(DiagnosticsTest, DirectRecursion) {
  const std::string d = ExpectError(
      "static int fact(int n) {\n"
      "  return n <= 1 ? 1 : n * fact(n - 1);\n"
      "}\n"
      "int RS_KERNEL k(int in) { return fact(in); }\n");
  ExpectDiagnostic(d, 4, 27, "recursive call to 'fact' (fact -> fact)",
                   "return n <= 1 ? 1 : n * fact(n - 1);");
}

TEST(DiagnosticsTest, MutualRecursion) {
  const std::string d = ExpectError(
      "static int odd(int n);\n"
      "static int even(int n) { return n == 0 ? 1 : odd(n - 1); }\n"
      "static int odd(int n) { return n == 0 ? 0 : even(n - 1); }\n"
      "int RS_KERNEL k(int in) { return even(in); }\n");
  EXPECT_NE(d.find("recursive call to 'even' (even -> odd -> even)"), std::string::npos) << d;
  EXPECT_NE(d.find("diag.rs:5:"), std::string::npos) << d;
}

TEST(DiagnosticsTest, FunctionPointers) {
  const std::string d = ExpectError(
      "static int twice(int a) { return 2 * a; }\n"
      "int RS_KERNEL k(int in) {\n"
      "  int (*fn)(int) = twice;\n"
      "  return fn(in);\n"
      "}\n");
  ExpectDiagnostic(d, 5, 9, "function pointers are not supported: 'fn' has type", "int (*fn)(int) = twice;");
  ExpectDiagnostic(d, 5, 20, "'twice' is used as a value", "int (*fn)(int) = twice;");
  ExpectDiagnostic(d, 6, 10, "indirect call", "return fn(in);");
}

TEST(DiagnosticsTest, UnknownRuntimeFunction) {
  const std::string d = ExpectError("float RS_KERNEL k(float in) { return rsFrobnicate(in); }\n");
  ExpectDiagnostic(d, 3, 38, "call to unknown RenderScript runtime function 'rsFrobnicate'",
                   "return rsFrobnicate(in);");
}

TEST(DiagnosticsTest, DeclaredButUndefinedAndUndeclared) {
  const std::string d = ExpectError(
      "float external_helper(float);\n"
      "float RS_KERNEL k(float in) { return external_helper(in) + undeclared_helper(in); }\n");
  ExpectDiagnostic(d, 4, 38, "function 'external_helper' is declared but never defined",
                   "external_helper(in)");
  ExpectDiagnostic(d, 4, 60, "call to undeclared function 'undeclared_helper'", "undeclared_helper(in)");
}

TEST(DiagnosticsTest, KernelSignatures) {
  ExpectDiagnostic(ExpectError("float RS_KERNEL k(const float* in) { return *in; }\n"), 3, 32,
                   "kernel 'k': parameter 'in' is a pointer", "float RS_KERNEL k(const float* in)");
  ExpectDiagnostic(ExpectError("float RS_KERNEL k(float in, float x) { return in; }\n"), 3, 35,
                   "special parameter 'x' must have type uint32_t or int",
                   "float RS_KERNEL k(float in, float x)");
  ExpectDiagnostic(ExpectError("float RS_KERNEL k(float in, uint32_t y, uint32_t x) { return in; }\n"), 3, 50,
                   "special parameter 'x' is out of order", "uint32_t y, uint32_t x");
  ExpectDiagnostic(ExpectError("float RS_KERNEL k(uint32_t x, float in) { return in; }\n"), 3, 37,
                   "input parameter 'in' follows a special parameter", "uint32_t x, float in");
  ExpectDiagnostic(ExpectError("float RS_KERNEL k(float in, int context) { return in; }\n"), 3, 33,
                   "special parameter 'context' must have type rs_kernel_context", "int context");
  ExpectDiagnostic(ExpectError("uint RS_KERNEL k(uint in, rs_kernel_context ctx) { return in; }\n"), 3, 45,
                   "the rs_kernel_context parameter 'ctx' must be named 'context'", "rs_kernel_context ctx");
  ExpectDiagnostic(
      ExpectError("int RS_KERNEL k(int a, int b, int c, int d, int e, int f, int g, int h, int i) "
                  "{ return a; }\n"),
      3, 15, "has 9 inputs; at most 8 are allowed", "int RS_KERNEL k(int a");
  ExpectDiagnostic(ExpectError("float* RS_KERNEL k(float in) { return 0; }\n"), 3, 18,
                   "cannot return float *", "float* RS_KERNEL k");
}

TEST(DiagnosticsTest, RootForm) {
  ExpectDiagnostic(ExpectError("int root(const float* in, float* out) { return 0; }\n"), 3, 5,
                   "old-style root() must return void", "int root(const float* in");
  ExpectDiagnostic(ExpectError("void root(const void* in, float* out) { }\n"), 3, 23,
                   "must point to a concrete element type", "void root(const void* in");
}

TEST(DiagnosticsTest, Reductions) {
  ExpectDiagnostic(ExpectError("#pragma rs reduce(r) accumulator(missingFn)\n"), 3, 34,
                   "reduction 'r': accumulator function 'missingFn' is not defined",
                   "#pragma rs reduce(r) accumulator(missingFn)");
  ExpectDiagnostic(ExpectError("#pragma rs reduce(r) initializer(i)\nstatic void i(int* a) {}\n"), 3, 12,
                   "a reduction needs an accumulator(f) clause", "#pragma rs reduce(r)");
  ExpectDiagnostic(ExpectError("#pragma rs reduce(r) accumulator(acc) bogus(acc)\n"
                               "static void acc(int* a, int v) { *a += v; }\n"),
                   3, 39, "unknown clause", "bogus(acc)");
  ExpectDiagnostic(ExpectError("#pragma rs reduce(r) accumulator(acc)\n"
                               "static void acc(int a, int v) { }\n"),
                   4, 21, "non-const pointer to the accumulator data type", "static void acc(int a, int v)");
  // Without a combiner the accumulator must be able to combine: one input of the accumulator's type.
  ExpectDiagnostic(ExpectError("#pragma rs reduce(r) accumulator(acc)\n"
                               "static void acc(int* a, float v) { *a += (int)v; }\n"),
                   3, 19, "without a combiner", "#pragma rs reduce(r)");
  ExpectDiagnostic(ExpectError("#pragma rs reduce(acc) accumulator(acc)\n"
                               "static void acc(int* a, int v) { *a += v; }\n"),
                   3, 19, "reduction 'acc': the name is already used by a function or global", "reduce(acc)");
  ExpectDiagnostic(ExpectError("#pragma rs reduce(r) accumulator(acc) combiner(comb)\n"
                               "static void acc(int* a, int v) { *a += v; }\n"
                               "static void comb(int* a, const float* b) { }\n"),
                   5, 13, "combiner 'comb' must be void comb(int* accum, const int* other)",
                   "static void comb");
}

TEST(DiagnosticsTest, InvokablesAndForEach) {
  // (A pointer first would make it an old-style kernel, as in RenderScript; see OldStyleKernelsByAnyName.)
  ExpectDiagnostic(ExpectError("void setData(int n, float* data) { }\n"), 3, 28,
                   "invokable 'setData': parameter 'data' has type float *", "void setData(int n, float* data)");
  ExpectDiagnostic(ExpectError("rs_allocation a, b;\nvoid run() { rsForEach(nothere, a, b); }\n"), 4, 14,
                   "rsForEach: 'nothere' is not a kernel of this script", "rsForEach(nothere, a, b);");
  ExpectDiagnostic(ExpectError("int init() { return 1; }\n"), 3, 5, "init must be declared 'void init(void)'",
                   "int init()");
  ExpectDiagnostic(ExpectError("rs_allocation a;\n"
                               "int RS_KERNEL twice(int in) { return 2 * in; }\n"
                               "static void launch(void) { rsForEach(twice, a, a); }\n"
                               "int RS_KERNEL nested(int in) { launch(); return in; }\n"),
                   6, 15, "kernel 'nested': calls rsForEach; only invokables and init() may launch kernels",
                   "int RS_KERNEL nested(int in)");
}

// A void function exported with a pointer first is an old-style kernel whatever its name, as RenderScript has
// it; the same function made static is a helper, and with no pointer first it is an invokable.
TEST(DiagnosticsTest, OldStyleKernelsByAnyName) {
  CompileResult result;
  CompileKernelSource("#pragma version(1)\n#pragma rs java_package_name(t)\n"
                      "void fill(float* out, uint32_t x) { *out = (float)x; }\n"
                      "static void helper(float* p) { *p = 1.0f; }\n"
                      "float g;\nvoid set_g(float v) { g = v; }\n",
                      "named.rs", CompileOptions(), &result);
  ASSERT_TRUE(result.ok) << result.diagnostics;
  ASSERT_EQ(result.module.kernels.size(), 1u);
  EXPECT_EQ(result.module.kernels[0].name, "fill");
  EXPECT_TRUE(result.module.kernels[0].root_style);
  ASSERT_EQ(result.module.invokables.size(), 1u);
  EXPECT_EQ(result.module.invokables[0].name, "set_g");
}

TEST(DiagnosticsTest, MalformedPragmas) {
  ExpectDiagnostic(ExpectError("#pragma rs reduce(\n"), 3, 12, "malformed '#pragma rs reduce'",
                   "#pragma rs reduce(");
  CompileResult result;
  CompileKernelSource("#pragma version(2)\nint RS_KERNEL k(int a) { return a; }\n", "diag.rs",
                      CompileOptions(), &result);
  EXPECT_FALSE(result.ok);
  ExpectDiagnostic(result.diagnostics, 1, 17, "unsupported script version 2", "#pragma version(2)");
}

TEST(DiagnosticsTest, ClangErrorsPassThrough) {
  ExpectDiagnostic(ExpectError("float RS_KERNEL k(float in) { return in +; }\n"), 3, 42,
                   "expected expression", "return in +;");
}

}  // namespace
}  // namespace kiln
