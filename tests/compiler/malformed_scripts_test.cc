// kilnc on malformed scripts (issue #12): no input, however wrong, may make kilnc crash or report an internal error;
// every failure is a diagnostic with a source location ("file.rs:LINE:COL: error: ..."), and an input that compiles
// still gives a module (the GPU lowering included). The inputs are seeded mutations of real scripts of the test
// corpora: truncations, deleted, doubled and swapped lines, characters replaced by punctuation, and RenderScript
// fragments (pragmas, kernel attributes, reduction and allocation syntax) inserted in the middle of other code.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/compiler.h"

namespace kiln {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

// One seeded mutation of `source` (kind chosen by the caller), described in *what.
std::string Mutate(const std::string& source, int kind, std::mt19937* rng, std::string* what) {
  auto pick = [rng](size_t n) { return n == 0 ? size_t{0} : std::uniform_int_distribution<size_t>(0, n - 1)(*rng); };
  std::vector<std::string> lines = Lines(source);
  static const char* const kFragments[] = {
      "#pragma rs reduce(",       "#pragma rs reduce(r) accumulator(",  "#pragma version(",
      "RS_KERNEL",                "rs_allocation",                      "static",
      "__attribute__((kernel))",  "uchar4 RS_KERNEL k(",                "rsGetElementAt_float(",
      "#pragma rs_fp_relaxed",    "typedef struct { float a[",          "void root(const float* in, float* out",
      "#include \"nothere.rsh\"", "half",                               "rs_matrix4x4 m; rsMatrixLoad(&m,",
  };
  static const char kPunctuation[] = "{}()[];,*&#\"'\\@$`<>.=+-/%~!?:^|";
  switch (kind) {
    case 0: {  // truncated
      const size_t at = pick(source.size());
      *what = "truncated at byte " + std::to_string(at);
      return source.substr(0, at);
    }
    case 1: {  // a line deleted
      const size_t at = pick(lines.size());
      *what = "line " + std::to_string(at + 1) + " deleted";
      if (!lines.empty()) lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(at));
      return Join(lines);
    }
    case 2: {  // a line doubled
      const size_t at = pick(lines.size());
      *what = "line " + std::to_string(at + 1) + " doubled";
      if (!lines.empty()) lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(at), lines[at]);
      return Join(lines);
    }
    case 3: {  // two lines swapped
      const size_t a = pick(lines.size()), b = pick(lines.size());
      *what = "lines " + std::to_string(a + 1) + " and " + std::to_string(b + 1) + " swapped";
      if (!lines.empty()) std::swap(lines[a], lines[b]);
      return Join(lines);
    }
    case 4: {  // characters replaced by punctuation
      std::string text = source;
      *what = "characters replaced at";
      for (int i = 0; i < 3 && !text.empty(); ++i) {
        const size_t at = pick(text.size());
        text[at] = kPunctuation[pick(sizeof(kPunctuation) - 1)];
        *what += " " + std::to_string(at);
      }
      return text;
    }
    default: {  // a RenderScript fragment inserted
      const char* fragment = kFragments[pick(sizeof(kFragments) / sizeof(kFragments[0]))];
      const size_t at = pick(source.size() + 1);
      *what = std::string("'") + fragment + "' inserted at byte " + std::to_string(at);
      return source.substr(0, at) + fragment + source.substr(at);
    }
  }
}

// A failure kilnc reports well: an error with the script's name, line and column, and no internal error.
bool LocatedFailure(const std::string& diagnostics) {
  static const std::regex located(R"((^|\n)[^\n:]+\.rs:[0-9]+:[0-9]+: (fatal )?error: )");
  return std::regex_search(diagnostics, located) && diagnostics.find("internal error") == std::string::npos;
}

TEST(MalformedScripts, TheCheckTellsLocatedErrorsFromOthers) {
  EXPECT_TRUE(LocatedFailure("k.rs:3:14: error: use of undeclared identifier 'x'\n  x = 1;\n  ^\n"));
  EXPECT_TRUE(LocatedFailure("k.rs:1:1: warning: w\nk.rs:9:2: fatal error: 'a.rsh' file not found\n"));
  EXPECT_FALSE(LocatedFailure("kilnc: internal error: the IR does not verify after inlining:\n"));
  EXPECT_FALSE(LocatedFailure("k.rs:3:14: error: x\nkilnc: internal error: linking the math library failed\n"));
  EXPECT_FALSE(LocatedFailure("error: no kernels\n"));
  EXPECT_FALSE(LocatedFailure("k.rs: error: something\n"));
}

TEST(MalformedScripts, EveryFailureIsALocatedDiagnosticAndNoneIsInternal) {
  // Scripts of each feature area: the compiler's examples, the conformance suite's, and a spread of the corpus.
  const std::vector<std::string> scripts = {
      "tests/compiler/kernels/image_filters.rs", "tests/compiler/kernels/script_state.rs",
      "tests/compiler/kernels/sum_reduce.rs",    "tools/cts/kernels/cts_shapes.rs",
      "tests/kernels/corpus/root_usrdata.rs",    "tests/kernels/corpus/old_style_named.rs",
      "examples/atan/atan_op.rs",
  };
  constexpr int kMutationsPerScript = 6;  // one of each kind
  // The optimizer does not change what is diagnosed; at -O0 a compile takes about a third of the time.
  CompileOptions options;
  options.opt_level = 0;
  std::mt19937 rng(20261205);
  int compiled = 0, refused = 0;
  for (const std::string& script : scripts) {
    const std::string source = ReadFile(std::string(KILN_SOURCE_DIR) + "/" + script);
    ASSERT_FALSE(source.empty()) << script;
    const std::string name = script.substr(script.rfind('/') + 1);
    for (int m = 0; m < kMutationsPerScript; ++m) {
      std::string what;
      const std::string mutated = Mutate(source, m % 6, &rng, &what);
      SCOPED_TRACE(script + ", " + what);
      CompileResult result;
      CompileKernelSource(mutated, name, options, &result);
      EXPECT_EQ(result.diagnostics.find("internal error"), std::string::npos) << result.diagnostics;
      if (result.ok) {
        ++compiled;
        EXPECT_FALSE(result.kmod.empty());
      } else {
        ++refused;
        EXPECT_TRUE(LocatedFailure(result.diagnostics)) << "a failure without a located error:\n"
                                                        << result.diagnostics;
      }
    }
  }
  std::printf("%d mutated scripts compiled, %d refused with a located error\n", compiled, refused);
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace kiln
