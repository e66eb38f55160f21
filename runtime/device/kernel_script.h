// The top of the device layer: a script as the application (compute_api.cc) or a kernel-backed op
// (kernel_op.cc) sees it. One module instance whose kernels run where the DeviceSet placed them, falling back
// to the CPU when a driver fails.
#ifndef KILN_RUNTIME_DEVICE_KERNEL_SCRIPT_H_
#define KILN_RUNTIME_DEVICE_KERNEL_SCRIPT_H_

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kiln/compute.h"
#include "runtime/device/device_set.h"
#include "runtime/device/kernel_device.h"

namespace kiln {

// A script as the application or an op sees it: one module instance whose kernels run on the device the
// DeviceSet placed them on, with the CPU as the fallback. Globals live in a host shadow and reach each device
// instance before it runs; invokables run on the CPU (as in RenderScript), and what they change in the
// globals reaches the device before its next launch.
class KernelScript {
 public:
  // Null (reported) on failure.
  static std::unique_ptr<KernelScript> Create(DeviceSet* devices, std::shared_ptr<const KernelModule> module,
                                              void* user_data);
  ~KernelScript();

  const KernelModule& module() const { return *module_; }

  KilnStatus SetGlobal(const std::string& name, const void* data, size_t size);
  KilnStatus GetGlobal(const std::string& name, void* data, size_t size);
  // `lanes` 0 infers the element (a uint8 [..., 4] tensor is uchar4 pixels, otherwise scalars); 2..4 binds
  // elements of that many lanes of the tensor's type along its innermost dimension.
  KilnStatus BindAllocation(const std::string& name, KilnTensor* tensor, uint32_t lanes = 0);
  // `tensor` is being deleted: every global bound to it is unbound on every instance, as if NULL had been
  // bound, so that nothing reads it afterwards. Quiet; a launch that then fails names those globals.
  void ForgetTensor(const KilnTensor* tensor);
  // Sets globals from a custom op's FlexBuffers options: every key must name a settable global whose type
  // the value converts to. `what` names the op in messages.
  KilnStatus SetGlobalsFromOptions(const uint8_t* data, size_t size, const std::string& what);

  // output[cell] = kernel(inputs[cell]...), inputs broadcast against the output.
  KilnStatus ForEach(int kernel_index, const KilnTensor* const* inputs, int num_inputs, KilnTensor* output,
                     const KilnLaunchOptions* options);
  KilnStatus Invoke(int invokable_index, const void* args, size_t size);
  KilnStatus Reduce(int reduction_index, const KilnTensor* const* inputs, int num_inputs, void* result,
                    size_t result_size, const KilnLaunchOptions* options);

  // Whether every pointer global kernel `kernel_index` may use (KernelDesc::pointer_globals) has a tensor
  // bound; reports each one that has none and returns kKilnInvalidArgument. ForEach checks it; a caller that
  // launches the kernel itself (the interpreter's partitions) must too, since the generated code dereferences
  // such a pointer unchecked.
  KilnStatus CheckKernelBindings(int kernel_index) const;

  // For the interpreter's partitions: whether kernel `k` runs on the accelerator now, and its instance there
  // with the globals brought up to date (null when it does not).
  bool KernelOnAccelerator(int kernel_index) const;
  DeviceScript* PrepareAccelerator();
  KernelDevice* DeviceFor(int kernel_index) const;
  // Runs an already planned forEach on the CPU (the fallback of a failed partition).
  KilnStatus RunOnCpu(const ForEachPlan& plan);
  // After batched work on the accelerator instance: kernels may have changed globals, which the shadow
  // learns.
  void AcceleratorWorkDone();
  // Records that the accelerator failed work of this script; later work runs on the CPU.
  void AcceleratorFailed(const std::string& what, KilnStatus status, bool hung = false);
  // A launch of kernel (or reduction) `index` failed on the accelerator: it is quarantined (DeviceSet).
  void KernelFailed(bool reduction, int index, const std::string& what, KilnStatus status);

 private:
  struct Instance {
    std::unique_ptr<DeviceScript> script;
    std::map<std::string, uint64_t> seen;  // shadow version of each global this instance holds
  };
  KernelScript() = default;
  bool accelerator_usable() const;
  Instance* Cpu();  // created on first use; null (reported) on failure
  KilnStatus Sync(Instance* instance);
  void ReadBack(Instance* instance);
  KilnStatus ApplyBindings(Instance* instance);
  // After a failed launch or invokable: names the rs_allocation globals left without a tensor (deleted while
  // bound by KilnTensorDelete, or never bound though the script accesses them), the likely cause: the drivers'
  // messages cannot name an unbound allocation's global. Passes `status` on.
  KilnStatus NoteForgotten(KilnStatus status);
  // Refuses a launch of `what` `name` (reported, kKilnInvalidArgument) when one of the pointer globals its
  // code may use has no tensor bound.
  KilnStatus CheckPointerGlobals(const char* what, const std::string& name,
                                 const std::vector<std::string>& pointer_globals) const;
  // Runs `work` on the CPU instance with the globals brought up to date, then reads back what it changed
  // so that it reaches the accelerator before its next launch.
  KilnStatus OnCpu(const std::function<KilnStatus(DeviceScript*)>& work);
  KernelDevice* reporter() const;
  std::string Subject(const char* what, const std::string& name) const;

  DeviceSet* devices_ = nullptr;
  std::shared_ptr<const KernelModule> module_;
  void* user_data_ = nullptr;
  const ModulePlacement* placement_ = nullptr;
  bool accel_failed_ = false;
  Instance accel_;
  Instance cpu_;
  std::map<std::string, std::vector<uint8_t>> shadow_;
  std::map<std::string, uint64_t> version_;
  uint64_t next_version_ = 1;
  struct Binding {
    KilnTensor* tensor;
    uint32_t lanes;
  };
  std::map<std::string, Binding> bindings_;
  // Globals unbound by ForgetTensor and not bound since.
  std::set<std::string> forgotten_;
};

}  // namespace kiln

#endif  // KILN_RUNTIME_DEVICE_KERNEL_SCRIPT_H_
