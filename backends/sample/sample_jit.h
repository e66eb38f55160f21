// The sample driver's code generator: the only part of it that knows LLVM. A driver for a real device
// replaces this file with its own compiler (SPIR-V to the device ISA, say); the rest of the driver only needs
// the three calls below, so the HAL side of the template stays the same.
#ifndef KILN_SAMPLE_DRIVER_SAMPLE_JIT_H_
#define KILN_SAMPLE_DRIVER_SAMPLE_JIT_H_

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kiln_sample {

// Compiles a module's "llvm-bc" payload into a host object file (once per module_load) and lists the
// symbols it defines, so the driver can say per kernel whether it can run before any script exists.
// `what` names the module in messages. Returns false with *out_error set.
bool CompileBitcode(const void* bitcode, size_t size, const std::string& what, std::string* out_object,
                    std::vector<std::string>* out_defined_symbols, std::string* out_error);

// Links compiled objects in-process. Every Link makes a separate image, so two scripts of one module have
// their own copies of the globals. Thread-safe.
class Linker {
 public:
  struct Image;
  static std::unique_ptr<Linker> Create(std::string* out_error);
  ~Linker();

  // Links a private copy of `object`. `runtime_symbols` are the __kiln_rt_* services the kernels may call;
  // anything else (memcpy, libm) comes from the process. Returns nullptr with *out_error naming what failed.
  Image* Link(const std::string& object, const std::vector<std::pair<std::string, void*>>& runtime_symbols,
              std::string* out_error);
  // The address of `name` in `image`, or nullptr with *out_error set.
  void* Lookup(Image* image, const std::string& name, std::string* out_error);
  void Unlink(Image* image);

 private:
  struct Impl;
  explicit Linker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln_sample

#endif  // KILN_SAMPLE_DRIVER_SAMPLE_JIT_H_
