// The LLVM side of the CPU driver: bitcode -> host object code (retarget, O3, codegen), and linking objects
// into per-script JIT images. No LLVM type appears here, so only jit.cc pays for LLVM's headers.
#ifndef KILN_BACKENDS_CPU_JIT_H_
#define KILN_BACKENDS_CPU_JIT_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kiln/common.h"

namespace kiln {
namespace cpu {

// What code is generated for. Empty fields are filled from the host.
struct TargetSpec {
  std::string triple;
  std::string cpu;
  std::string features;  // LLVM feature string: "+avx2,+fma,-avx512f,..."
};

// The host's triple, CPU name and features as LLVM detects them, with `cpu_override` / `features_override`
// replacing them when non-empty (features_override is appended, so "-avx512f" turns one feature off).
TargetSpec HostTargetSpec(const std::string& cpu_override, const std::string& features_override);

std::string LlvmVersionString();

// Parses the module's self-contained bitcode, retargets every function to `target`, runs the O3 pipeline with
// the target's TargetMachine (so the loop vectorizer sees the real vector width) and emits an ELF object.
// `options` is the module's comma-separated compile options; known ones: "veclib=libmvec" (let the vectorizer
// call glibc's vector math for libm calls). `what` names the module in messages.
KilnStatus CompileBitcode(const void* bitcode, size_t size, const std::string& what, const TargetSpec& target,
                          const std::string& options, std::string* out_object, std::string* out_error);

// The global symbols an object defines.
KilnStatus ListDefinedSymbols(const std::string& object, std::vector<std::string>* out_symbols,
                              std::string* out_error);

// Links objects in-process with ORC/JITLink. Each Link makes a new JITDylib, so two images of the same object
// have separate globals. Thread-safe.
class JitLinker {
 public:
  struct Image;
  static std::unique_ptr<JitLinker> Create(std::string* out_error);
  ~JitLinker();

  // Links `object` with `runtime_symbols` (defined at the given addresses) and the process's own C library
  // symbols (memcpy, libm), then resolves `names` into `out_addresses` (same order). Undefined references are
  // an error naming them.
  KilnStatus Link(const std::string& object,
                  const std::vector<std::pair<std::string, void*>>& runtime_symbols,
                  const std::vector<std::string>& names, Image** out_image, std::vector<void*>* out_addresses,
                  std::string* out_error);
  void Unlink(Image* image);

 private:
  struct Impl;
  explicit JitLinker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cpu
}  // namespace kiln

#endif  // KILN_BACKENDS_CPU_JIT_H_
