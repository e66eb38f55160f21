// A loaded kernel module (what the C API calls KilnModule) and its description in the HAL's plain structs.
#ifndef KILN_RUNTIME_DEVICE_KERNEL_MODULE_H_
#define KILN_RUNTIME_DEVICE_KERNEL_MODULE_H_

#include <memory>
#include <string>
#include <vector>

#include "kiln/hal.h"
#include "formats/kmod/hal_view.h"
#include "formats/kmod/module.h"

namespace kiln {

// A verified module plus the KilnHalModuleDesc a driver's module_load takes. Immutable once built; shared by
// every script and op that uses it.
class KernelModule {
 public:
  // Reads and verifies `data`. `name` (a file name, or "<memory>") appears in messages.
  static std::shared_ptr<const KernelModule> Create(const uint8_t* data, size_t size, const std::string& name,
                                                    std::string* error);

  const KernelModuleDesc& desc() const { return desc_; }
  const KilnHalModuleDesc& hal_desc() const { return view_.desc(); }
  const std::string& name() const { return name_; }

  // Index into desc().kernels (and the HAL's kernels array), or -1.
  int KernelIndex(const std::string& name) const;
  int InvokableIndex(const std::string& name) const;
  int ReductionIndex(const std::string& name) const;

 private:
  KernelModule() = default;
  std::string name_;
  KernelModuleDesc desc_;
  HalModuleView view_;  // points into desc_ and name_
};

}  // namespace kiln

struct KilnModule {
  std::shared_ptr<const kiln::KernelModule> impl;
};

#endif  // KILN_RUNTIME_DEVICE_KERNEL_MODULE_H_
