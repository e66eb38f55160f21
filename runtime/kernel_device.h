// Running kernel modules on a device through the driver HAL: the runtime's side of kiln/hal.h.
//
// A KernelDevice is one opened device of one driver instance. A DeviceScript is one instance of a module on
// it. A KernelScript is what the compute API (compute_api.cc) and kernel-backed ops (kernel_op.cc) use: a
// module instance whose kernels run where the DeviceSet (driver_loader.h) placed them, falling back to the CPU
// when a driver fails. There is one place that maps tensors to launches (PlanForEach) and one place that talks
// to drivers (DeviceScript).
#ifndef KILN_RUNTIME_KERNEL_DEVICE_H_
#define KILN_RUNTIME_KERNEL_DEVICE_H_

#include <array>
#include <cstdarg>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "kiln/compute.h"
#include "kiln/hal.h"
#include "runtime/core.h"
#include "runtime/driver_loader.h"
#include "runtime/kernel_module.h"

namespace kiln {

class DeviceSet;
class HalDriver;

// One opened device of one driver instance: the built-in CPU driver's, or a loaded driver's.
class KernelDevice {
 public:
  // Opens device `index` of `driver`, checking what device_get_info reports (struct sizes, strings). Null with
  // `*refusal` (why) on failure.
  static std::unique_ptr<KernelDevice> Open(std::shared_ptr<HalDriver> driver, uint32_t index,
                                            std::string* refusal);
  ~KernelDevice();
  KernelDevice(const KernelDevice&) = delete;
  KernelDevice& operator=(const KernelDevice&) = delete;

  const KilnHalDriver& driver() const;
  HalDriver* hal() const { return hal_.get(); }
  KilnHalDevice* device() const { return device_; }
  const KilnHalDeviceInfo& info() const { return info_; }
  // "kiln-cpu" for the built-in driver, "<driver> (<device name>)" for others.
  const std::string& label() const { return label_; }
  bool builtin() const;

  // The module prepared for this device, loaded on first use. Null on failure (reported for the CPU driver;
  // a loaded driver's messages are left for the caller, HalDriver::TakeErrors).
  KilnHalModule* LoadModule(const std::shared_ptr<const KernelModule>& module);

  void ReportError(const char* format, ...) __attribute__((format(printf, 2, 3)));

 private:
  KernelDevice() = default;

  std::shared_ptr<HalDriver> hal_;
  KilnHalDevice* device_ = nullptr;
  KilnHalDeviceInfo info_{};
  std::string label_;
  std::mutex mutex_;
  struct Loaded {
    std::shared_ptr<const KernelModule> module;
    KilnHalModule* handle;
  };
  std::map<const KernelModule*, Loaded> modules_;
};

// One launch of a forEach: up to 3 dims (x innermost), and per tensor (inputs, then the output) the byte offset
// of cell (0, 0, 0) and the byte strides.
struct LaunchGeometry {
  uint32_t dim[3] = {1, 1, 1};
  std::vector<uint64_t> base;
  std::vector<std::array<uint64_t, 3>> strides;
};

// A forEach checked against the kernel's reflection and cut into launches; the runtime's half of a launch,
// before any driver is involved (so a failure after it is the driver's).
struct ForEachPlan {
  int kernel_index = -1;
  std::vector<const KilnTensor*> tensors;  // inputs, then the output when the kernel has one
  std::vector<uint32_t> element_sizes;     // per tensor
  int num_inputs = 0;
  bool has_output = false;
  bool empty = false;  // nothing to compute (a zero extent)
  std::vector<LaunchGeometry> launches;
};
// Checks a forEach of kernel `kernel_index` and plans it. Reports through `reporter` and returns an error for
// anything wrong with the arguments.
KilnStatus PlanForEach(const KernelModule& module, int kernel_index, const KilnTensor* const* inputs, int num_inputs,
                       KilnTensor* output, const KilnLaunchOptions* options, KernelDevice* reporter,
                       ForEachPlan* plan);

// The buffer views of one launch of geometry `g`: tensor t in `buffer_of(t)`, with `element_sizes[t]`.
std::vector<KilnHalBufferView> LaunchViews(const LaunchGeometry& g,
                                           const std::vector<uint32_t>& element_sizes,
                                           const std::function<KilnHalBuffer*(size_t)>& buffer_of);
// One launch of `plan` with geometry `g` over `views` (LaunchViews), which must outlive the launch.
KilnHalForEachDesc ForEachLaunch(const ForEachPlan& plan, const LaunchGeometry& g,
                                 const std::vector<KilnHalBufferView>& views);

struct ReducePlan {
  int reduction_index = -1;
  std::vector<const KilnTensor*> inputs;
  std::vector<uint32_t> element_sizes;
  LaunchGeometry launch;
  size_t result_size = 0;
};
KilnStatus PlanReduce(const KernelModule& module, int reduction_index, const KilnTensor* const* inputs,
                      int num_inputs, size_t result_size, const KilnLaunchOptions* options, KernelDevice* reporter,
                      ReducePlan* plan);

// A tensor as a driver buffer: wrapped without a copy when the device shares host memory and the data is
// aligned, otherwise copied into device memory (and back, for outputs, by Finish).
class TensorBuffer {
 public:
  TensorBuffer(KernelDevice* device, const KilnTensor* tensor, bool is_output)
      : device_(device), tensor_(tensor), is_output_(is_output) {}
  ~TensorBuffer();
  TensorBuffer(const TensorBuffer&) = delete;
  TensorBuffer& operator=(const TensorBuffer&) = delete;
  // `upload`: copy the tensor's bytes into a buffer that does not wrap it.
  KilnStatus Acquire(bool upload = true);
  KilnStatus Finish();  // copies a copied output back into the tensor
  KilnHalBuffer* get() const { return buffer_; }
  bool copied() const { return copied_; }

 private:
  KernelDevice* device_;
  const KilnTensor* tensor_;
  bool is_output_;
  bool copied_ = false;
  KilnHalBuffer* buffer_ = nullptr;
};

// One instance of a module on one device, with its own globals: the layer that calls the driver's script and
// launch entries. Errors from the driver come back as statuses; the caller decides what happens next.
class DeviceScript {
 public:
  // A new instance of `module` on `device` (globals at defaults, init() run). `user_data` identifies the script
  // in rsSendToClient messages. Null on failure (reported for the CPU driver).
  static std::unique_ptr<DeviceScript> Create(KernelDevice* device, std::shared_ptr<const KernelModule> module,
                                              void* user_data);
  ~DeviceScript();

  const KernelModule& module() const { return *module_; }
  KernelDevice* device() const { return device_; }
  KilnHalScript* handle() const { return script_; }

  // Raw accessors: the caller has checked name and size against the reflection.
  KilnStatus SetGlobal(const std::string& name, const void* data, size_t size);
  KilnStatus GetGlobal(const std::string& name, void* data, size_t size) const;
  // `lanes` 0 infers the element (a uint8 [..., 4] tensor is uchar4 pixels, otherwise scalars); 2..4 binds
  // elements of that many lanes of the tensor's type along its innermost dimension.
  KilnStatus BindAllocation(const std::string& name, KilnTensor* tensor, uint32_t lanes = 0);
  // Unbinds every global bound to `tensor`, as binding NULL does, and releases the buffers that mirror it.
  // The instance holds no pointer to `tensor` afterwards, even when the driver fails (the status says so).
  KilnStatus ForgetTensor(const KilnTensor* tensor);
  KilnStatus Invoke(int invokable_index, const void* args, size_t size);
  KilnStatus Run(const ForEachPlan& plan);
  KilnStatus Run(const ReducePlan& plan, void* result);

  // Bound tensors the device cannot share are copies: these move them in before and out after device work.
  KilnStatus UploadBindings();
  KilnStatus DownloadBindings();

 private:
  DeviceScript() = default;
  KernelDevice* device_ = nullptr;
  std::shared_ptr<const KernelModule> module_;
  KilnHalModule* hal_module_ = nullptr;
  KilnHalScript* script_ = nullptr;
  struct Binding {
    KilnHalBuffer* buffer = nullptr;
    KilnTensor* tensor = nullptr;
    bool copied = false;
  };
  // Buffers of bound tensors, kept until rebound or the script goes.
  std::map<std::string, Binding> bound_;
};

// A script as the application or an op sees it: one module instance whose kernels run on the device the
// DeviceSet placed them on, with the CPU as the fallback. Globals live in a host shadow and reach each device
// instance before it runs; invokables run on the CPU (as in RenderScript), and what they change in the globals
// reaches the device before its next launch.
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
  // After batched work on the accelerator instance: kernels may have changed globals, which the shadow learns.
  void AcceleratorWorkDone();
  // Records that the accelerator failed work of this script; later work runs on the CPU.
  void AcceleratorFailed(const std::string& what, KilnStatus status);

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
  // After a failed launch or invokable: names the globals that lost their tensor to KilnTensorDelete, the
  // likely cause (the drivers' messages cannot name an unbound allocation's global). Passes `status` on.
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

// The cells a kernel element type spans in `tensor`: its dims without the innermost one when the element is a
// vector (which must equal the vector's lanes). False with `*error` when the types or lanes do not match.
bool KernelCellDims(const KilnTensor& tensor, const KernelTypeDesc& element, std::vector<int64_t>* cells,
                    std::string* error);

// numpy broadcasting of cell shapes. False with `*error` when they are incompatible.
bool BroadcastCellDims(const std::vector<std::vector<int64_t>>& shapes, std::vector<int64_t>* out,
                       std::string* error);

}  // namespace kiln

#endif  // KILN_RUNTIME_KERNEL_DEVICE_H_
