// The prelude headers, embedded into kilnc at build time (generated prelude_files.cc; see CMakeLists.txt).
#ifndef KILN_COMPILER_PRELUDE_FILES_H_
#define KILN_COMPILER_PRELUDE_FILES_H_

#include <cstddef>

namespace kiln {
namespace compiler {

struct EmbeddedFile {
  const char* path;  // relative to the prelude include directory: "rs_core.rsh", "kiln/kernel_abi.h"
  const char* data;  // NUL-terminated; size excludes the terminator
  size_t size;
};

extern const EmbeddedFile kPreludeFiles[];
extern const size_t kPreludeFileCount;

// Where the prelude appears to live; no such directory exists on disk.
inline constexpr char kPreludeDir[] = "/__kiln_prelude__";

}  // namespace compiler
}  // namespace kiln

#endif  // KILN_COMPILER_PRELUDE_FILES_H_
