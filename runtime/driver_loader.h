// The driver loader and the device policy: the one place in the runtime that decides which driver and device
// work runs on (docs/hal.md, "The loader").
//
//   HalDriver   one driver instance: the built-in CPU driver, or a shared library that passed the checks
//               (ELF DT_NEEDED allow-list, entry point, HAL version, struct sizes, required entries).
//   DeviceSet   what a policy chose for one interpreter or compute context: the CPU device (always) and at
//               most one accelerator device, plus where each kernel of each module runs on them.
//   DecisionLog every decision above, with its reason, in the order it was made.
#ifndef KILN_RUNTIME_DRIVER_LOADER_H_
#define KILN_RUNTIME_DRIVER_LOADER_H_

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/common.h"
#include "kiln/device.h"
#include "kiln/hal.h"

namespace kiln {

class KernelDevice;
class KernelModule;

struct Decision {
  KilnDecisionKind kind;
  std::string subject;  // what it is about: "libfoo.so", "atan_op.kmod: kernel 'blur'", "node 3"
  std::string message;  // a whole sentence that names the subject and gives the reason
};

// Append-only and thread-safe: run-time fallbacks are recorded from whichever thread ran the work. Entries
// never move, so the strings Get hands out stay valid for the log's lifetime.
class DecisionLog {
 public:
  void Add(KilnDecisionKind kind, std::string subject, std::string message);
  size_t size() const;
  const Decision* Get(size_t index) const;

 private:
  mutable std::mutex mutex_;
  std::deque<Decision> entries_;
};

// ---- ELF checks, before anything of a driver runs ----

struct ElfDependencies {
  std::vector<std::string> needed;  // DT_NEEDED, in order
};
// Reads the DT_NEEDED names of a 64-bit little-endian ELF shared library for this machine from `data`, every
// offset bounds-checked. False with `*error` (what is wrong, with the offset) otherwise.
bool ReadElfDependencies(const uint8_t* data, size_t size, ElfDependencies* out, std::string* error);
bool ReadElfDependenciesFromFile(const std::string& path, ElfDependencies* out, std::string* error);
// Whether a driver may depend on library `soname` (the allow-list in docs/hal.md).
bool IsAllowedDriverDependency(const std::string& soname);
// The allow-list, for messages and docs: "libc, libm, ...".
const char* DriverDependencyAllowList();

// ---- Version rules ----

// Why a kernel (or reduction) needing `kernel_level` cannot run on a device of `device_level` (packed
// KILN_HAL_LEVEL values), or "" when it can: "needs HAL 1.2, driver has 1.1".
std::string KernelLevelRefusal(uint32_t kernel_level, uint32_t device_level);
// Why a module of `module_level` cannot run on that device at all, or "": a different major.
std::string ModuleLevelRefusal(uint32_t module_level, uint32_t device_level);
std::string LevelString(uint32_t level);  // "1.2"
// A module's name in decisions: its file name without the folder ("atan_op.kmod"), or "<memory>".
std::string ModuleLabel(const KernelModule& module);

// ---- Drivers ----

enum class DevicePolicy { kAuto = 0, kCpuOnly = 1, kPreferGpu = 2, kGpuOnly = 3 };

struct DriverOptions {
  DevicePolicy policy = DevicePolicy::kAuto;
  std::string driver_path;            // from the options call; empty: none
  bool allow_any_dependency = false;  // from the options call (KILN_DRIVER_ALLOW_ANY_DEPENDENCY=1 also allows)
  int num_threads = -1;
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
  static std::shared_ptr<HalDriver> Load(const std::string& path, const DriverOptions& options, DecisionLog* log,
                                         std::string* refusal);
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

  // The messages the driver reported (report_error) since the last call, joined with "; ". A loaded driver's
  // messages are kept for the decision that handles the failure; the CPU driver's go to the reporter at once.
  std::string TakeErrors();
  void ReportError(const char* format, ...) __attribute__((format(printf, 2, 3)));

 private:
  HalDriver() = default;
  void InitServices();
  static void Log(void* self, KilnHalLogLevel level, const char* message);
  static void DriverError(void* self, KilnStatus status, const char* message);
  static const char* GetConfig(void* self, const char* key);
  static void SendToClient(void* self, void* script_user_data, int32_t command, const void* data, size_t size);

  DriverOptions options_;
  std::string threads_config_;
  std::string name_;
  std::string file_;
  KilnHalServices services_{};
  KilnHalDriver table_{};
  bool ready_ = false;
  bool has_batches_ = false;
  std::mutex errors_mutex_;
  std::string errors_;
};

const char* StatusName(KilnStatus status);
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

// Driver files in search order, recording where they were looked for. Exposed for `kiln inspect --devices`.
std::vector<std::string> FindDriverFiles(const DriverOptions& options, DecisionLog* log);

}  // namespace kiln

#endif  // KILN_RUNTIME_DRIVER_LOADER_H_
