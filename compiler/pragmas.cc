// The handlers of kilnc's pragmas, kept apart from the analysis: they run inside Clang's preprocessor, in
// both passes, and report malformed pragmas as Clang diagnostics.
#include "compiler/pragmas.h"

#include <string>
#include <utility>
#include <vector>

#include "clang/Basic/Diagnostic.h"
#include "clang/Lex/Pragma.h"
#include "clang/Lex/Preprocessor.h"

namespace kiln {
namespace compiler {
namespace {

// Lexes the rest of a pragma line.
std::vector<clang::Token> LexPragmaLine(clang::Preprocessor& pp) {
  std::vector<clang::Token> tokens;
  clang::Token tok;
  pp.Lex(tok);
  while (tok.isNot(clang::tok::eod) && tok.isNot(clang::tok::eof)) {
    tokens.push_back(tok);
    pp.Lex(tok);
  }
  return tokens;
}

unsigned PragmaError(clang::DiagnosticsEngine& diags) {
  return diags.getCustomDiagID(clang::DiagnosticsEngine::Error, "malformed '#pragma %0': %1");
}

// #pragma version(1)
class VersionPragmaHandler : public clang::PragmaHandler {
 public:
  VersionPragmaHandler() : clang::PragmaHandler("version") {}
  void HandlePragma(clang::Preprocessor& pp, clang::PragmaIntroducer, clang::Token& first) override {
    std::vector<clang::Token> t = LexPragmaLine(pp);
    if (t.size() != 3 || t[0].isNot(clang::tok::l_paren) || t[1].isNot(clang::tok::numeric_constant) ||
        t[2].isNot(clang::tok::r_paren)) {
      pp.getDiagnostics().Report(first.getLocation(), PragmaError(pp.getDiagnostics()))
          << "version"
          << "expected '#pragma version(1)'";
      return;
    }
    if (pp.getSpelling(t[1]) != "1") {
      pp.getDiagnostics().Report(t[1].getLocation(), pp.getDiagnostics().getCustomDiagID(
                                                         clang::DiagnosticsEngine::Error,
                                                         "unsupported script version %0; only 1 exists"))
          << pp.getSpelling(t[1]);
    }
  }
};

// #pragma rs_fp_full / rs_fp_relaxed / rs_fp_imprecise
class PrecisionPragmaHandler : public clang::PragmaHandler {
 public:
  PrecisionPragmaHandler(const char* name, KernelPrecision precision, PragmaState* state)
      : clang::PragmaHandler(name), precision_(precision), state_(state) {}
  void HandlePragma(clang::Preprocessor& pp, clang::PragmaIntroducer, clang::Token& first) override {
    if (!LexPragmaLine(pp).empty()) {
      pp.getDiagnostics().Report(first.getLocation(), PragmaError(pp.getDiagnostics()))
          << getName() << "it takes no arguments";
      return;
    }
    state_->precision = precision_;
  }

 private:
  KernelPrecision precision_;
  PragmaState* state_;
};

// #pragma rs java_package_name(a.b.c)
class PackagePragmaHandler : public clang::PragmaHandler {
 public:
  explicit PackagePragmaHandler(PragmaState* state)
      : clang::PragmaHandler("java_package_name"), state_(state) {}
  void HandlePragma(clang::Preprocessor& pp, clang::PragmaIntroducer, clang::Token& first) override {
    std::vector<clang::Token> t = LexPragmaLine(pp);
    if (t.size() < 3 || t.front().isNot(clang::tok::l_paren) || t.back().isNot(clang::tok::r_paren)) {
      pp.getDiagnostics().Report(first.getLocation(), PragmaError(pp.getDiagnostics()))
          << "rs java_package_name"
          << "expected '(package.name)'";
      return;
    }
    std::string name;
    for (size_t i = 1; i + 1 < t.size(); ++i) name += pp.getSpelling(t[i]);
    state_->package_name = name;
  }

 private:
  PragmaState* state_;
};

// #pragma rs reduce(name) initializer(f) accumulator(f) combiner(f) outconverter(f)
class ReducePragmaHandler : public clang::PragmaHandler {
 public:
  explicit ReducePragmaHandler(PragmaState* state) : clang::PragmaHandler("reduce"), state_(state) {}
  void HandlePragma(clang::Preprocessor& pp, clang::PragmaIntroducer, clang::Token& first) override {
    std::vector<clang::Token> t = LexPragmaLine(pp);
    clang::DiagnosticsEngine& diags = pp.getDiagnostics();
    auto fail = [&](clang::SourceLocation loc, const char* what) {
      diags.Report(loc.isValid() ? loc : first.getLocation(), PragmaError(diags)) << "rs reduce" << what;
    };
    if (t.size() < 3 || t[0].isNot(clang::tok::l_paren) || t[1].isNot(clang::tok::identifier) ||
        t[2].isNot(clang::tok::r_paren)) {
      return fail(first.getLocation(), "expected 'reduce(name)'");
    }
    ReducePragma reduce;
    reduce.name = pp.getSpelling(t[1]);
    reduce.location = t[1].getLocation();
    for (size_t i = 3; i < t.size(); i += 4) {
      if (i + 3 >= t.size() || t[i].isNot(clang::tok::identifier) || t[i + 1].isNot(clang::tok::l_paren) ||
          t[i + 2].isNot(clang::tok::identifier) || t[i + 3].isNot(clang::tok::r_paren)) {
        return fail(t[i].getLocation(),
                    "expected 'initializer(f)', 'accumulator(f)', 'combiner(f)' or "
                    "'outconverter(f)'");
      }
      const std::string key = pp.getSpelling(t[i]);
      if (key != "initializer" && key != "accumulator" && key != "combiner" && key != "outconverter") {
        return fail(t[i].getLocation(),
                    "unknown clause; expected initializer, accumulator, combiner or "
                    "outconverter");
      }
      if (reduce.functions.count(key)) return fail(t[i].getLocation(), "clause given twice");
      reduce.functions[key] = pp.getSpelling(t[i + 2]);
      reduce.function_locations[key] = t[i + 2].getLocation();
    }
    if (!reduce.functions.count("accumulator")) {
      return fail(first.getLocation(), "a reduction needs an accumulator(f) clause");
    }
    state_->reductions.push_back(std::move(reduce));
  }

 private:
  PragmaState* state_;
};

}  // namespace

void AddPragmaHandlers(clang::Preprocessor& pp, PragmaState* state) {
  pp.AddPragmaHandler(new VersionPragmaHandler());
  pp.AddPragmaHandler(new PrecisionPragmaHandler("rs_fp_full", KernelPrecision::kFull, state));
  pp.AddPragmaHandler(new PrecisionPragmaHandler("rs_fp_relaxed", KernelPrecision::kRelaxed, state));
  pp.AddPragmaHandler(new PrecisionPragmaHandler("rs_fp_imprecise", KernelPrecision::kImprecise, state));
  pp.AddPragmaHandler("rs", new PackagePragmaHandler(state));
  pp.AddPragmaHandler("rs", new ReducePragmaHandler(state));
}

}  // namespace compiler
}  // namespace kiln
