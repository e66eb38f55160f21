// A loaded kernel module (what the C API calls KilnModule) and its description in the HAL's plain structs.
#ifndef KILN_RUNTIME_KERNEL_MODULE_H_
#define KILN_RUNTIME_KERNEL_MODULE_H_

#include <memory>
#include <string>
#include <vector>

#include "kiln/hal.h"
#include "runtime/module/module.h"

namespace kiln {

// A verified module plus the KilnHalModuleDesc a driver's module_load takes. Immutable once built; shared by
// every script and op that uses it.
class KernelModule {
 public:
  // Reads and verifies `data`. `name` (a file name, or "<memory>") appears in messages.
  static std::shared_ptr<const KernelModule> Create(const uint8_t* data, size_t size, const std::string& name,
                                                    std::string* error);

  const KernelModuleDesc& desc() const { return desc_; }
  const KilnHalModuleDesc& hal_desc() const { return hal_desc_; }
  const std::string& name() const { return name_; }

  // Index into desc().kernels (and the HAL's kernels array), or -1.
  int KernelIndex(const std::string& name) const;
  int InvokableIndex(const std::string& name) const;
  int ReductionIndex(const std::string& name) const;

 private:
  KernelModule() = default;
  void BuildHalDesc();

  std::string name_;
  KernelModuleDesc desc_;
  // Storage the HAL structs point into.
  std::vector<KilnHalPayload> payloads_;
  std::vector<KilnHalKernelDesc> kernels_;
  std::vector<std::vector<uint32_t>> kernel_input_sizes_;
  std::vector<KilnHalGlobalDesc> globals_;
  std::vector<KilnHalInvokableDesc> invokables_;
  std::vector<KilnHalReductionDesc> reductions_;
  std::vector<std::vector<uint32_t>> reduction_input_sizes_;
  std::vector<const char*> imports_;
  std::string compile_options_;
  KilnHalModuleDesc hal_desc_{};
};

inline uint32_t PackLevel(const HalLevel& level) { return KILN_HAL_LEVEL(level.major, level.minor); }

}  // namespace kiln

struct KilnModule {
  std::shared_ptr<const kiln::KernelModule> impl;
};

#endif  // KILN_RUNTIME_KERNEL_MODULE_H_
