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
  KernelDevice* accelerator() const { return accelerator_failed_ || cpu_only_ > 0 ? nullptr : accelerator_.get(); }
  // While one lives, accelerator() is null: work that failed on the device is redone on the CPU, all of it.
  class CpuOnly {
   public:
    explicit CpuOnly(DeviceSet* set) : set_(set) { ++set_->cpu_only_; }
    ~CpuOnly() { --set_->cpu_only_; }
    CpuOnly(const CpuOnly&) = delete;
    CpuOnly& operator=(const CpuOnly&) = delete;

   private:
    DeviceSet* set_;
  };
  DecisionLog* log() const { return log_; }
  const DriverOptions& options() const { return options_; }

  // Where the kernels of `module` run; decided and recorded on the first call for a module.
  const ModulePlacement& Place(const std::shared_ptr<const KernelModule>& module);
  // Run-time faults of the accelerator, and the quarantine rule (docs/hal.md, "Run-time failure and the
  // fallback"): the failed work is always redone on the CPU; then
  //  - a kernel or reduction whose launch failed runs on the CPU from then on, in this set (KernelFailed); the
  //    device keeps the module's other kernels;
  //  - a failure no single kernel owns (a buffer, the globals, a batch: AcceleratorFailed) quarantines nothing
  //    by itself;
  //  - every fault counts against the device, which is given up (all later work of the set on the CPU) at its
  //    kDeviceFaultLimit-th fault, or at once when a batch hung past the deadline (`hung`);
  //  - but a failure with kKilnInvalidArgument is the launch's own (an access out of range or through an
  //    unbound allocation: kiln/hal.h, "Launches"): redone on the CPU, it quarantines and counts nothing.
  // Each step is a decision (fallback). `errors` are the driver's messages.
  static constexpr int kDeviceFaultLimit = 3;
  // Faults so far: a change means placements may have changed.
  int faults() const { return faults_.load(); }
  void KernelFailed(const KernelModule* module, bool reduction, int index, const std::string& what, KilnStatus status,
                    const std::string& errors);
  void AcceleratorFailed(const std::string& what, KilnStatus status, const std::string& errors, bool hung = false);

 private:
  DeviceSet() = default;
  DriverOptions options_;
  DecisionLog* log_ = nullptr;
  std::unique_ptr<KernelDevice> cpu_;
  std::unique_ptr<KernelDevice> accelerator_;
  std::atomic<bool> accelerator_failed_{false};
  std::atomic<int> faults_{0};
  std::atomic<int> cpu_only_{0};
  // Records one fault: the decision's text, and whether it gives the device up.
  void Fault(const std::string& what, KilnStatus status, const std::string& errors, const std::string& quarantined,
             bool hung);
  std::mutex mutex_;
  struct Placed {
    std::shared_ptr<const KernelModule> module;  // keeps the key alive
    ModulePlacement placement;
  };
  std::map<const KernelModule*, Placed> placements_;
};

}  // namespace kiln

#endif  // KILN_RUNTIME_DEVICE_DEVICE_SET_H_
