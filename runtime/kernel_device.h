// Running kernel modules on a device through the driver HAL: the runtime's side of kiln/hal.h.
//
// A KernelDevice is one opened device of one driver instance (today: the built-in CPU driver). A KernelScript
// is one instance of a module on it, with its own globals. Both the compute API (compute_api.cc) and kernel-
// backed ops (kernel_op.cc) launch work only through these classes, so there is one place that maps tensors to
// launches and one place that talks to drivers.
#ifndef KILN_RUNTIME_KERNEL_DEVICE_H_
#define KILN_RUNTIME_KERNEL_DEVICE_H_

#include <cstdarg>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/compute.h"
#include "kiln/hal.h"
#include "runtime/core.h"
#include "runtime/kernel_module.h"

namespace kiln {

struct KernelDeviceOptions {
  int num_threads = -1;
  KilnErrorReporter reporter = nullptr;
  void* reporter_user_data = nullptr;
  // rsSendToClient: the script's user data (what KernelScript::Create got), command, payload.
  std::function<void(void* script_user_data, int32_t command, const void* data, size_t size)> on_message;
};

class KernelDevice {
 public:
  // Opens the first device of the built-in CPU driver. Null (reported) on failure.
  static std::unique_ptr<KernelDevice> OpenCpu(const KernelDeviceOptions& options);
  ~KernelDevice();
  KernelDevice(const KernelDevice&) = delete;
  KernelDevice& operator=(const KernelDevice&) = delete;

  const KilnHalDriver& driver() const { return driver_; }
  KilnHalDevice* device() const { return device_; }
  const KilnHalDeviceInfo& info() const { return info_; }

  // The module prepared for this device, loaded on first use. Null (reported) on failure.
  KilnHalModule* LoadModule(const std::shared_ptr<const KernelModule>& module);

  void ReportError(const char* format, ...) __attribute__((format(printf, 2, 3)));

 private:
  KernelDevice() = default;
  static void Log(void* self, KilnHalLogLevel level, const char* message);
  static void DriverError(void* self, KilnStatus status, const char* message);
  static const char* GetConfig(void* self, const char* key);
  static void SendToClient(void* self, void* script_user_data, int32_t command, const void* data, size_t size);

  KernelDeviceOptions options_;
  std::string threads_config_;
  KilnHalServices services_{};
  KilnHalDriver driver_{};
  bool driver_ready_ = false;
  KilnHalDevice* device_ = nullptr;
  KilnHalDeviceInfo info_{};
  std::mutex mutex_;
  struct Loaded {
    std::shared_ptr<const KernelModule> module;
    KilnHalModule* handle;
  };
  std::map<const KernelModule*, Loaded> modules_;
};

class KernelScript {
 public:
  // A new instance of `module` on `device` (globals at defaults, init() run). `user_data` identifies the script
  // in rsSendToClient messages. Null (reported) on failure.
  static std::unique_ptr<KernelScript> Create(KernelDevice* device, std::shared_ptr<const KernelModule> module,
                                              void* user_data);
  ~KernelScript();

  const KernelModule& module() const { return *module_; }
  KernelDevice* device() const { return device_; }

  KilnStatus SetGlobal(const std::string& name, const void* data, size_t size);
  KilnStatus GetGlobal(const std::string& name, void* data, size_t size) const;
  KilnStatus BindAllocation(const std::string& name, KilnTensor* tensor);
  // Sets globals from a custom op's FlexBuffers options: every key must name a settable global whose type
  // the value converts to. `what` names the op in messages.
  KilnStatus SetGlobalsFromOptions(const uint8_t* data, size_t size, const std::string& what);

  // output[cell] = kernel(inputs[cell]...), inputs broadcast against the output.
  KilnStatus ForEach(int kernel_index, const KilnTensor* const* inputs, int num_inputs, KilnTensor* output,
                     const KilnLaunchOptions* options);
  KilnStatus Invoke(int invokable_index, const void* args, size_t size);
  KilnStatus Reduce(int reduction_index, const KilnTensor* const* inputs, int num_inputs, void* result,
                    size_t result_size, const KilnLaunchOptions* options);

 private:
  KernelScript() = default;
  KernelDevice* device_ = nullptr;
  std::shared_ptr<const KernelModule> module_;
  KilnHalModule* hal_module_ = nullptr;
  KilnHalScript* script_ = nullptr;
  // Buffers wrapping bound tensors, kept until rebound or the script goes.
  std::map<std::string, KilnHalBuffer*> bound_;
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
