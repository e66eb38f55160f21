// The device policy applied: what one interpreter or compute context runs on (the CPU device always, and at
// most one accelerator device) and where each kernel and reduction of each module runs on them. The one place
// in the runtime that decides (docs/hal.md, "The loader").
#ifndef KILN_RUNTIME_DEVICE_DEVICE_SET_H_
#define KILN_RUNTIME_DEVICE_DEVICE_SET_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/device/hal_driver.h"
#include "runtime/device/kernel_device.h"

namespace kiln {

const char* PolicyName(DevicePolicy policy);

// Where each kernel and reduction of one module runs in a DeviceSet.
struct ModulePlacement {
  std::vector<bool> kernel_on_accelerator;
  std::vector<bool> reduction_on_accelerator;
  std::vector<std::string> kernel_reason;  // why a kernel runs on the CPU ("" when it does not)
};

class DeviceSet {
 public:
  // Applies the policy: opens the CPU device, searches and loads drivers (unless cpu-only), picks the
  // accelerator. Null (reported, and recorded in `log`) when the CPU cannot be opened or, under gpu-only, no
  // driver device can be used. `log` must outlive the set.
  static std::unique_ptr<DeviceSet> Open(const DriverOptions& options, DecisionLog* log, KilnStatus* status);
  ~DeviceSet();

  KernelDevice* cpu() const { return cpu_.get(); }
  // The chosen driver device, while it works: null when none was chosen or after a run-time failure.
  KernelDevice* accelerator() const { return accelerator_failed_ ? nullptr : accelerator_.get(); }
  DecisionLog* log() const { return log_; }
  const DriverOptions& options() const { return options_; }

  // Where the kernels of `module` run; decided and recorded on the first call for a module.
  const ModulePlacement& Place(const std::shared_ptr<const KernelModule>& module);
  // A run-time failure of the accelerator while doing `what` (e.g. "kernel 'blur' of blur.kmod"): records it
  // and moves all later work of this set to the CPU. `errors` are the driver's messages.
  void AcceleratorFailed(const std::string& what, KilnStatus status, const std::string& errors);

 private:
  DeviceSet() = default;
  DriverOptions options_;
  DecisionLog* log_ = nullptr;
  std::unique_ptr<KernelDevice> cpu_;
  std::unique_ptr<KernelDevice> accelerator_;
  std::atomic<bool> accelerator_failed_{false};
  std::mutex mutex_;
  struct Placed {
    std::shared_ptr<const KernelModule> module;  // keeps the key alive
    ModulePlacement placement;
  };
  std::map<const KernelModule*, Placed> placements_;
};

}  // namespace kiln

#endif  // KILN_RUNTIME_DEVICE_DEVICE_SET_H_
