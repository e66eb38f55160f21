// The #pragma lines of a script (version, rs_fp_*, rs java_package_name, rs reduce): both Clang passes
// install the same handlers, and the analysis pass reads what they recorded.
#ifndef KILN_COMPILER_PRAGMAS_H_
#define KILN_COMPILER_PRAGMAS_H_

#include <map>
#include <string>
#include <vector>

#include "clang/Basic/SourceLocation.h"
#include "compiler/script_info.h"

namespace clang {
class Preprocessor;
}  // namespace clang

namespace kiln {
namespace compiler {

struct ReducePragma {
  std::string name;
  clang::SourceLocation location;
  std::map<std::string, std::string> functions;  // "initializer" -> function name, ...
  std::map<std::string, clang::SourceLocation> function_locations;
};

struct PragmaState {
  std::string package_name;
  KernelPrecision precision = KernelPrecision::kFull;
  std::vector<ReducePragma> reductions;
};

// Installs kilnc's pragma handlers on `pp`; they record into *state, which must outlive the preprocessor.
void AddPragmaHandlers(clang::Preprocessor& pp, PragmaState* state);

}  // namespace compiler
}  // namespace kiln

#endif  // KILN_COMPILER_PRAGMAS_H_
