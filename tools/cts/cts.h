// kiln-cts: the HAL conformance suite. Everything the test files share: the driver under test and the
// reference CPU driver (each behind a recording KilnHalServices), real kernel modules read from .kmod files,
// RAII handles, and the comparison of results between the two drivers.
#ifndef KILN_TOOLS_CTS_CTS_H_
#define KILN_TOOLS_CTS_CTS_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/hal.h"
#include "formats/kmod/hal_view.h"
#include "formats/kmod/module.h"

namespace kiln {
namespace cts {

// ---- Command line
// ------------------------------------------------------------------------------------------

struct Options {
  std::string driver;  // a path to a driver .so, or "builtin:cpu"
  std::string kmod_dir;
  std::string summary_path;
  std::map<std::string, std::string> config;  // answered through KilnHalServices.get_config
};
Options& GetOptions();

// ---- The runtime side of one driver instance
// ----------------------------------------------------------------

struct ClientMessage {
  void* script_user_data;
  int32_t command;
  std::vector<uint8_t> data;
};

// A KilnHalServices that records what a driver reports. Thread-safe, as the contract requires.
class Services {
 public:
  explicit Services(std::map<std::string, std::string> config);
  Services(const Services&) = delete;
  Services& operator=(const Services&) = delete;

  const KilnHalServices* get() const { return &services_; }
  size_t ErrorCount();
  std::string LastError();
  std::vector<std::string> ErrorsSince(size_t index);
  std::vector<ClientMessage> Messages();
  void ClearMessages();

 private:
  std::map<std::string, std::string> config_;
  KilnHalServices services_;
  std::mutex mutex_;
  std::vector<std::string> errors_;
  std::vector<std::string> logs_;
  std::vector<ClientMessage> messages_;
};

// One driver: loaded (dlopen of a path, or the built-in CPU driver), queried, with its devices opened on
// demand and everything closed in order at the end.
class Driver {
 public:
  // `spec` is a path to a .so exporting kiln_driver_query, or "builtin:cpu". Never fails: a driver that does
  // not load or query is kept with the reason (usable() is false), so the suite can report it.
  static std::unique_ptr<Driver> Load(const std::string& spec,
                                      const std::map<std::string, std::string>& config);
  ~Driver();

  const std::string& spec() const { return spec_; }
  KilnDriverQueryFn query_fn() const { return query_; }
  KilnStatus query_status() const { return query_status_; }
  const KilnHalDriver& hal() const { return hal_; }
  Services& services() { return *services_; }
  // The HAL table is there and speaks this runtime's major version.
  bool usable() const { return problem_.empty(); }
  const std::string& problem() const { return problem_; }
  uint32_t device_count() const { return device_count_; }
  // Opened on first use, shared by every test, closed at shutdown. nullptr with a test failure if it fails.
  KilnHalDevice* Device(uint32_t index);
  // "kiln-cpu 0.1.0 (HAL 1.1)".
  std::string Describe() const;

  // A module of the suite (e.g. "cts_types") loaded once per device and kept until shutdown. Returns
  // nullptr and sets *out_error when the driver refuses it.
  KilnHalModule* Module(uint32_t device, const std::string& name, std::string* out_error);
  // Unloads cached modules and closes devices (in that order), then shuts the instance down.
  void Shutdown();

 private:
  Driver() = default;
  std::string spec_;
  void* library_ = nullptr;
  KilnDriverQueryFn query_ = nullptr;
  KilnStatus query_status_ = kKilnError;
  KilnHalDriver hal_{};
  std::unique_ptr<Services> services_;
  std::string problem_;
  uint32_t device_count_ = 0;
  std::mutex mutex_;
  std::map<uint32_t, KilnHalDevice*> devices_;
  struct CachedModule {
    KilnHalModule* module = nullptr;
    std::string error;
  };
  std::map<std::pair<uint32_t, std::string>, CachedModule> modules_;
  bool shut_down_ = false;
};

Driver& Dut();        // the driver under test
Driver& Reference();  // the built-in CPU driver, the reference every result is compared with
void SetDrivers(std::unique_ptr<Driver> dut, std::unique_ptr<Driver> reference);
void ShutdownDrivers();

// ---- Modules
// ------------------------------------------------------------------------------------------------

// A .kmod of the suite, read and verified by the runtime's reader, and described in the HAL's plain structs
// the way the runtime describes it (runtime/kernel_module.cc). Tests may edit the description (a kernel's
// level, a payload's tag) before passing desc() to a driver.
class ModuleFile {
 public:
  static std::shared_ptr<ModuleFile> Open(const std::string& name, std::string* out_error);
  // A private, editable copy.
  std::unique_ptr<ModuleFile> Clone() const;

  const KernelModuleDesc& reflection() const { return module_; }
  KilnHalModuleDesc* desc() { return view_.mutable_desc(); }
  std::vector<KilnHalKernelDesc>& kernels() { return view_.kernels(); }
  std::vector<KilnHalPayload>& payloads() { return view_.payloads(); }
  int KernelIndex(const std::string& name) const;
  int InvokableIndex(const std::string& name) const;
  int ReductionIndex(const std::string& name) const;
  // Storage for strings a test puts into the description.
  const char* Keep(std::string text);

 private:
  void Build();
  std::string name_;
  KernelModuleDesc module_;
  HalModuleView view_;  // points into module_ and name_
  std::deque<std::string> kept_;
};

// ---- RAII handles on one side (reference or driver under test)
// ----------------------------------------------

struct Side {
  Driver* driver;
  uint32_t device_index;
  const char* role;  // "reference" or "driver"
  const KilnHalDriver& hal() const { return driver->hal(); }
  KilnHalDevice* device() const { return driver->Device(device_index); }
};

class Buffer {
 public:
  // A buffer of `size` bytes, or one wrapping `host_ptr`. ok() says whether it was created.
  Buffer(const Side& side, uint64_t size, void* host_ptr = nullptr);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  bool ok() const { return buffer_ != nullptr; }
  KilnStatus status() const { return status_; }
  KilnHalBuffer* get() const { return buffer_; }
  uint64_t size() const { return size_; }
  bool Write(const void* data, uint64_t size, uint64_t offset = 0);
  std::vector<uint8_t> Read(uint64_t offset = 0, uint64_t size = UINT64_MAX);

 private:
  Side side_;
  KilnHalBuffer* buffer_ = nullptr;
  uint64_t size_;
  KilnStatus status_;
};

class Script {
 public:
  Script(const Side& side, KilnHalModule* module, void* user_data = nullptr);
  ~Script();
  Script(const Script&) = delete;
  Script& operator=(const Script&) = delete;
  bool ok() const { return script_ != nullptr; }
  KilnHalScript* get() const { return script_; }

 private:
  Side side_;
  KilnHalScript* script_ = nullptr;
};

// A dense view: `element_size` bytes per cell, rows of dim_x, planes of dim_x * dim_y.
KilnHalBufferView DenseView(const Buffer& buffer, uint32_t element_size, uint32_t dim_x, uint32_t dim_y);
KilnHalForEachDesc ForEach(uint32_t kernel, const uint32_t dims[3], const KilnHalBufferView* inputs,
                           uint32_t num_inputs, const KilnHalBufferView* output);

// ---- Comparing results
// ----------------------------------------------------------------------------------------

// How to compare cells: `lanes` values of `lane_type` at the start of each `element_size`-byte cell (a
// 3-vector's fourth lane is padding and not compared). Floats compare with a relative tolerance, because
// drivers may contract a*b+c into an FMA or sum in another order; integers compare exactly.
struct CellLayout {
  KilnType lane_type;
  uint32_t lanes;
  uint32_t element_size;
};

// Compares `got` with `want` cell by cell over dims; names up to five differing cells with coordinates.
::testing::AssertionResult CellsMatch(const std::vector<uint8_t>& want, const std::vector<uint8_t>& got,
                                      const CellLayout& layout, const uint32_t dims[3], const char* what);

std::string StatusName(KilnStatus status);

// Deterministic test data (xorshift), so a failure reproduces.
std::vector<uint8_t> PatternBytes(size_t size, uint32_t seed);

// ---- Fixtures
// -------------------------------------------------------------------------------------------------

// Tests parameterised over the driver under test's devices; the reference is always CPU device 0.
class DeviceTest : public ::testing::TestWithParam<uint32_t> {
 protected:
  void SetUp() override;
  Side dut() const { return Side{&Dut(), GetParam(), "driver"}; }
  Side ref() const { return Side{&Reference(), 0, "reference"}; }
  KilnHalDeviceInfo DutInfo() const;
  // The module on both sides; fails the test (and returns false) when either refuses it.
  bool LoadModule(const std::string& name, KilnHalModule** out_ref, KilnHalModule** out_dut);
  // Whether the driver can run `kernel`. When it cannot, checks that it says why and returns the reason (a
  // test then skips with it rather than launching); "" when it can.
  std::string DutUnsupportedReason(KilnHalModule* module, int kernel);
  // The same for a reduction (HAL 1.1's module_reduction_supported; without it every reduction counts as
  // supported when launch_reduce is there). Without launch_reduce, that is the reason.
  std::string DutUnsupportedReductionReason(KilnHalModule* module, int reduction);
  // A driver may be unable to create scripts of a module at all (e.g. one with init() on a device that runs
  // no host code). That is accepted only as kKilnUnsupported with a message, and with every kernel of the
  // module reported unsupported (so the runtime never sends it work it cannot take); the reason is returned
  // for the test to skip with. "" when script_create works; anything else fails the test.
  std::string DutScriptRefusedReason(KilnHalModule* module, uint32_t num_kernels);
};

// Every device index of the driver under test (at least {0}, so that an unusable driver still shows up as
// skipped tests with its reason rather than as none).
std::vector<uint32_t> DeviceIndices();
std::string DeviceParamName(const ::testing::TestParamInfo<uint32_t>& info);

// Checks that a call failed and that the driver said why through report_error. `what` describes the call.
::testing::AssertionResult FailsWithMessage(Driver& driver, KilnStatus status, size_t errors_before,
                                            const char* what);
#define CTS_EXPECT_FAILS(driver, call)                                                 \
  do {                                                                                 \
    size_t cts_errors_before = (driver).services().ErrorCount();                       \
    KilnStatus cts_status = (call);                                                    \
    ::testing::AssertionResult cts_result =                                            \
        ::kiln::cts::FailsWithMessage((driver), cts_status, cts_errors_before, #call); \
    if (!cts_result) ADD_FAILURE() << cts_result.message();                            \
  } while (0)

#define CTS_ASSERT_OK(side, call)                                                                 \
  do {                                                                                            \
    size_t cts_errors_before = (side).driver->services().ErrorCount();                            \
    KilnStatus cts_status = (call);                                                               \
    ASSERT_EQ(cts_status, kKilnOk) << (side).role << ": " #call " returned "                      \
                                   << ::kiln::cts::StatusName(cts_status) << ": "                 \
                                   << ((side).driver->services().ErrorCount() > cts_errors_before \
                                           ? (side).driver->services().LastError()                \
                                           : std::string("(no message reported)"));               \
  } while (0)

}  // namespace cts
}  // namespace kiln

#endif  // KILN_TOOLS_CTS_CTS_H_
