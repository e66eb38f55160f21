// The bottom of the device layer: one driver instance behind kiln/hal.h (the built-in CPU driver, or a shared
// library that passed the checks: ELF DT_NEEDED allow-list, entry point, HAL version, struct sizes, required
// entries), the HAL version rules, and the driver search path (docs/hal.md, "The loader").
//
// The device layer is layered: hal_driver.h < kernel_device.h < device_set.h < kernel_script.h. Nothing in
// runtime/device/ knows about interpreters, ops or partitions.
#ifndef KILN_RUNTIME_DEVICE_HAL_DRIVER_H_
#define KILN_RUNTIME_DEVICE_HAL_DRIVER_H_

#include <cstdarg>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "kiln/common.h"
#include "kiln/hal.h"
#include "runtime/device/decision_log.h"

namespace kiln {

class KernelModule;

// ---- Version rules ----

// Why a kernel (or reduction) needing `kernel_level` cannot run on a device of `device_level` (packed
// KILN_HAL_LEVEL values), or "" when it can: "needs HAL 1.2, driver has 1.1".
std::string KernelLevelRefusal(uint32_t kernel_level, uint32_t device_level);
// Why a module of `module_level` cannot run on that device at all, or "": a different major.
std::string ModuleLevelRefusal(uint32_t module_level, uint32_t device_level);
std::string LevelString(uint32_t level);  // "1.2"
// A module's name in decisions: its file name without the folder ("atan_op.kmod"), or "<memory>".
std::string ModuleLabel(const KernelModule& module);
// A path's file name, without the folder.
std::string BaseName(const std::string& path);

// ---- Drivers ----

enum class DevicePolicy { kAuto = 0, kCpuOnly = 1, kPreferGpu = 2, kGpuOnly = 3 };

struct DriverOptions {
  DevicePolicy policy = DevicePolicy::kAuto;
  std::string driver_path;  // from the options call; empty: none
  bool allow_any_dependency =
      false;  // from the options call (KILN_DRIVER_ALLOW_ANY_DEPENDENCY=1 also allows)
  int num_threads = -1;
  uint64_t batch_timeout_ns = 0;  // how long a batch may take before it is given up; 0: forever
  KilnErrorReporter reporter = nullptr;
  void* reporter_user_data = nullptr;
  // rsSendToClient: the script's user data, command, payload.
  std::function<void(void* script_user_data, int32_t command, const void* data, size_t size)> on_message;
};

class HalDriver {
 public:
  static std::shared_ptr<HalDriver> OpenBuiltinCpu(const DriverOptions& options, std::string* error);
  // Checks and loads the driver at `path`. Null with `*refusal` (a full sentence) when it is refused; notes
  // (a check overridden by the user) go to `log`.
  static std::shared_ptr<HalDriver> Load(const std::string& path, const DriverOptions& options,
                                         DecisionLog* log, std::string* refusal);
  ~HalDriver();
  HalDriver(const HalDriver&) = delete;
  HalDriver& operator=(const HalDriver&) = delete;

  const KilnHalDriver& table() const { return table_; }
  // "kiln-cpu", or the driver's own name; `file()` is the library's file name ("" for the built-in one).
  const std::string& name() const { return name_; }
  const std::string& file() const { return file_; }
  bool builtin() const { return file_.empty(); }
  bool has_batches() const { return has_batches_; }
  const DriverOptions& options() const { return options_; }

  // The messages the driver reported (report_error) on the calling thread since this thread last took them,
  // joined with "; ". Each thread has its own channel, so two threads whose calls fail at once each get their
  // own call's message (hal.h: a driver reports on the thread of the failing call). A loaded driver's
  // messages are kept for the decision that handles the failure; the CPU driver's go to the reporter at once.
  std::string TakeErrors();
  void ReportError(const char* format, ...) __attribute__((format(printf, 2, 3)));

  // Adds a message of the runtime's own to what TakeErrors returns next (e.g. a batch given up).
  void NoteError(const std::string& message);

 private:
  HalDriver() = default;
  void InitServices();
  static void Log(void* self, KilnHalLogLevel level, const char* message);
  static void DriverError(void* self, KilnStatus status, const char* message);
  static const char* GetConfig(void* self, const char* key);
  static void SendToClient(void* self, void* script_user_data, int32_t command, const void* data,
                           size_t size);

  DriverOptions options_;
  std::string threads_config_;
  std::string name_;
  std::string file_;
  KilnHalServices services_{};
  KilnHalDriver table_{};
  bool ready_ = false;
  bool has_batches_ = false;
  // Undelivered messages by the thread that reported them (at most kMaxErrorThreads threads, 4 KiB each).
  std::mutex errors_mutex_;
  std::unordered_map<std::thread::id, std::string> errors_;
};

// Driver files in search order, recording where they were looked for. Exposed for `kiln inspect --devices`.
std::vector<std::string> FindDriverFiles(const DriverOptions& options, DecisionLog* log);

}  // namespace kiln

#endif  // KILN_RUNTIME_DEVICE_HAL_DRIVER_H_
