// A kernel module described in the driver HAL's plain structs (kiln/hal.h): what a driver's module_load takes.
// The one place that turns a KernelModuleDesc into a KilnHalModuleDesc; the runtime, the conformance suite and
// the driver tests all use it.
#ifndef KILN_FORMATS_KMOD_HAL_VIEW_H_
#define KILN_FORMATS_KMOD_HAL_VIEW_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/hal.h"
#include "formats/kmod/module.h"

namespace kiln {

class HalModuleView {
 public:
  // Describes `module` under `name` (for messages). The view points into `module` and `name`: both must
  // outlive it and stay unchanged while it is used. Build again after changing them.
  void Build(const KernelModuleDesc& module, const std::string& name);

  const KilnHalModuleDesc& desc() const { return desc_; }
  // Editable, for tests that hand a driver a deliberately altered description.
  KilnHalModuleDesc* mutable_desc() { return &desc_; }
  std::vector<KilnHalKernelDesc>& kernels() { return kernels_; }
  std::vector<KilnHalPayload>& payloads() { return payloads_; }

 private:
  std::vector<KilnHalPayload> payloads_;
  std::vector<KilnHalKernelDesc> kernels_;
  std::vector<std::vector<uint32_t>> kernel_input_sizes_;
  std::vector<KilnHalGlobalDesc> globals_;
  std::vector<KilnHalInvokableDesc> invokables_;
  std::vector<KilnHalReductionDesc> reductions_;
  std::vector<std::vector<uint32_t>> reduction_input_sizes_;
  std::vector<const char*> imports_;
  std::string compile_options_;
  KilnHalModuleDesc desc_{};
};

inline uint32_t PackLevel(const HalLevel& level) { return KILN_HAL_LEVEL(level.major, level.minor); }

}  // namespace kiln

#endif  // KILN_FORMATS_KMOD_HAL_VIEW_H_
