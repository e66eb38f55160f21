// Running kernel modules on one opened device through the driver HAL: the device (KernelDevice), tensors as
// driver buffers (TensorBuffer), one module instance on the device (DeviceScript), and a sequence of launches
// recorded into one batch (DeviceBatch). The only layer of the runtime that calls a driver's entries.
#ifndef KILN_RUNTIME_DEVICE_KERNEL_DEVICE_H_
#define KILN_RUNTIME_DEVICE_KERNEL_DEVICE_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/hal.h"
#include "runtime/core.h"
#include "runtime/device/hal_driver.h"
#include "runtime/device/kernel_module.h"
#include "runtime/device/launch_plan.h"

namespace kiln {

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
  // Uses `buffer`, owned elsewhere (a bound allocation's device copy, which moves with the bindings), instead.
  void Share(KilnHalBuffer* buffer) {
    buffer_ = buffer;
    shared_ = true;
  }
  KilnStatus Finish();  // copies a copied output back into the tensor
  KilnHalBuffer* get() const { return buffer_; }
  bool copied() const { return copied_; }

 private:
  KernelDevice* device_;
  const KilnTensor* tensor_;
  bool is_output_;
  bool copied_ = false;
  bool shared_ = false;
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
  // The device copy of `tensor` when a global of this script is bound to it and the device could not wrap its
  // memory: a launch over the same tensor must use this buffer, or the launch and the binding would be two
  // memories and DownloadBindings would copy the older one over the other's result. Null otherwise.
  KilnHalBuffer* BoundCopy(const KilnTensor* tensor) const;

 private:
  DeviceScript() = default;
  KernelDevice* device_ = nullptr;
  std::shared_ptr<const KernelModule> module_;
  KilnHalModule* hal_module_ = nullptr;
  KilnHalScript* script_ = nullptr;
  struct Binding {
    // Shared by every global bound to the same tensor, so a tensor is one memory on the device too.
    std::shared_ptr<KilnHalBuffer> buffer;
    KilnTensor* tensor = nullptr;
    bool copied = false;
  };
  // Buffers of bound tensors, kept until rebound or the script goes.
  std::map<std::string, Binding> bound_;
};

// A sequence of forEach launches on one device: recorded into one batch and run by Submit when the driver has
// batches, otherwise launched one at a time as they come. Statuses are the driver's; the caller says what failed.
class DeviceBatch {
 public:
  explicit DeviceBatch(KernelDevice* device) : device_(device) {}
  ~DeviceBatch() { Release(); }
  DeviceBatch(const DeviceBatch&) = delete;
  DeviceBatch& operator=(const DeviceBatch&) = delete;

  // Creates the driver's batch when it has batches (a driver that returns none fails with kKilnDelegateError).
  KilnStatus Begin();
  // Whether launches are being recorded into a batch (else each is launched at once).
  bool recording() const { return batch_ != nullptr; }
  // Records, or launches, one forEach of `script`.
  KilnStatus ForEach(DeviceScript* script, const KilnHalForEachDesc& desc);
  // Submits the batch and waits until it has run; nothing to do without one.
  KilnStatus Submit();
  // Destroys the batch, submitted or not, unless it was given up.
  void Release();
  // Whether Submit gave the batch up at the device timeout (DriverOptions::batch_timeout_ns): the driver may
  // still use the batch and the memory its launches name, so none of it may be freed.
  bool abandoned() const { return abandoned_; }

 private:
  KernelDevice* device_;
  KilnHalBatch* batch_ = nullptr;
  bool abandoned_ = false;
};

}  // namespace kiln

#endif  // KILN_RUNTIME_DEVICE_KERNEL_DEVICE_H_
