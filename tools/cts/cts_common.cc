// What every kiln-cts test shares (cts.h): loading the driver under test, the kernel modules, handles and checks.

#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "backends/cpu/cpu_driver.h"
#include "tools/cts/cts.h"

namespace kiln {
namespace cts {

Options& GetOptions() {
  static Options options;
  return options;
}

std::string StatusName(KilnStatus status) {
  switch (status) {
    case kKilnOk:
      return "kKilnOk";
    case kKilnError:
      return "kKilnError";
    case kKilnDelegateError:
      return "kKilnDelegateError";
    case kKilnUnresolvedOps:
      return "kKilnUnresolvedOps";
    case kKilnInvalidArgument:
      return "kKilnInvalidArgument";
    case kKilnInvalidModel:
      return "kKilnInvalidModel";
    case kKilnUnsupported:
      return "kKilnUnsupported";
    case kKilnOutOfMemory:
      return "kKilnOutOfMemory";
  }
  return "status " + std::to_string(static_cast<int>(status));
}

// ---- Services
// ----------------------------------------------------------------------------------------------

Services::Services(std::map<std::string, std::string> config) : config_(std::move(config)) {
  memset(&services_, 0, sizeof(services_));
  services_.struct_size = sizeof(services_);
  services_.user_data = this;
  services_.log = [](void* self, KilnHalLogLevel level, const char* message) {
    auto* s = static_cast<Services*>(self);
    std::lock_guard<std::mutex> lock(s->mutex_);
    s->logs_.push_back(std::to_string(level) + ": " + (message ? message : "(null)"));
  };
  services_.report_error = [](void* self, KilnStatus status, const char* message) {
    auto* s = static_cast<Services*>(self);
    std::lock_guard<std::mutex> lock(s->mutex_);
    s->errors_.push_back(message ? message : "");
  };
  services_.allocate = [](void*, size_t size, size_t alignment) -> void* {
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    void* ptr = nullptr;
    return posix_memalign(&ptr, alignment, size ? size : 1) == 0 ? ptr : nullptr;
  };
  services_.free = [](void*, void* ptr) { free(ptr); };
  services_.now_ns = [](void*) -> uint64_t {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  services_.get_config = [](void* self, const char* key) -> const char* {
    auto* s = static_cast<Services*>(self);
    auto it = s->config_.find(key ? key : "");
    return it == s->config_.end() ? nullptr : it->second.c_str();
  };
  services_.send_to_client = [](void* self, void* script_user_data, int32_t command, const void* data,
                                size_t size) {
    auto* s = static_cast<Services*>(self);
    std::lock_guard<std::mutex> lock(s->mutex_);
    const uint8_t* bytes = static_cast<const uint8_t*>(data);
    s->messages_.push_back(
        {script_user_data, command, std::vector<uint8_t>(bytes, bytes + (data ? size : 0))});
  };
}

size_t Services::ErrorCount() {
  std::lock_guard<std::mutex> lock(mutex_);
  return errors_.size();
}

std::string Services::LastError() {
  std::lock_guard<std::mutex> lock(mutex_);
  return errors_.empty() ? "" : errors_.back();
}

std::vector<std::string> Services::ErrorsSince(size_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  return index < errors_.size() ? std::vector<std::string>(errors_.begin() + index, errors_.end())
                                : std::vector<std::string>();
}

std::vector<ClientMessage> Services::Messages() {
  std::lock_guard<std::mutex> lock(mutex_);
  return messages_;
}

void Services::ClearMessages() {
  std::lock_guard<std::mutex> lock(mutex_);
  messages_.clear();
}

// ---- Driver -----------------------------------------------------------------------------------------------

std::unique_ptr<Driver> Driver::Load(const std::string& spec,
                                     const std::map<std::string, std::string>& config) {
  std::unique_ptr<Driver> driver(new Driver());
  driver->spec_ = spec;
  driver->services_ = std::make_unique<Services>(config);
  if (spec == "builtin:cpu") {
    driver->query_ = kiln_cpu_driver_query;
  } else {
    // RTLD_LOCAL: the driver's symbols stay its own, as the runtime's loader keeps them.
    driver->library_ = dlopen(spec.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!driver->library_) {
      const char* error = dlerror();
      driver->problem_ = "cannot load " + spec + ": " + (error ? error : "dlopen failed");
      return driver;
    }
    driver->query_ = reinterpret_cast<KilnDriverQueryFn>(dlsym(driver->library_, KILN_DRIVER_QUERY_SYMBOL));
    if (!driver->query_) {
      driver->problem_ = spec + " does not export " KILN_DRIVER_QUERY_SYMBOL;
      return driver;
    }
  }
  driver->hal_.struct_size = sizeof(driver->hal_);
  const size_t errors_before = driver->services_->ErrorCount();
  driver->query_status_ =
      driver->query_(KILN_HAL_VERSION_MAJOR, KILN_HAL_VERSION_MINOR, driver->services_->get(), &driver->hal_);
  if (driver->query_status_ != kKilnOk) {
    std::vector<std::string> errors = driver->services_->ErrorsSince(errors_before);
    driver->problem_ = KILN_DRIVER_QUERY_SYMBOL " returned " + StatusName(driver->query_status_) + ": " +
                       (errors.empty() ? "(no message reported)" : errors.back());
    return driver;
  }
  const KilnHalDriver& hal = driver->hal_;
  if (hal.hal_major != KILN_HAL_VERSION_MAJOR) {
    driver->problem_ = "the driver reports HAL " + std::to_string(hal.hal_major) + "." +
                       std::to_string(hal.hal_minor) + ", this runtime speaks " +
                       std::to_string(KILN_HAL_VERSION_MAJOR) + "." + std::to_string(KILN_HAL_VERSION_MINOR) +
                       " (a different major is refused)";
  } else if (hal.struct_size < offsetof(KilnHalDriver, fence_destroy) + sizeof(void*)) {
    driver->problem_ = "the driver filled " + std::to_string(hal.struct_size) +
                       " bytes of KilnHalDriver; HAL " + std::to_string(KILN_HAL_VERSION_MAJOR) + ".0 has " +
                       std::to_string(sizeof(KilnHalDriver));
  } else if (!hal.instance || !hal.shutdown || !hal.device_count || !hal.device_get_info ||
             !hal.device_open || !hal.device_close) {
    driver->problem_ = "the driver's table lacks an instance or a device entry (shutdown, device_*)";
  } else if (hal.device_count(hal.instance, &driver->device_count_) != kKilnOk ||
             driver->device_count_ == 0) {
    driver->problem_ = "device_count fails or reports no device";
  }
  return driver;
}

Driver::~Driver() { Shutdown(); }

std::string Driver::Describe() const {
  if (query_status_ != kKilnOk) return spec_ + " (not queried)";
  return std::string(hal_.name ? hal_.name : "(no name)") + " " +
         (hal_.version ? hal_.version : "(no version)") + " (HAL " + std::to_string(hal_.hal_major) + "." +
         std::to_string(hal_.hal_minor) + ")";
}

KilnHalDevice* Driver::Device(uint32_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = devices_.find(index);
  if (it != devices_.end()) return it->second;
  KilnHalDevice* device = nullptr;
  const size_t errors_before = services_->ErrorCount();
  KilnStatus status = usable() ? hal_.device_open(hal_.instance, index, &device) : kKilnError;
  if (status != kKilnOk || !device) {
    std::vector<std::string> errors = services_->ErrorsSince(errors_before);
    ADD_FAILURE() << spec_ << ": device_open(" << index << ") returned " << StatusName(status) << ": "
                  << (errors.empty() ? problem_ : errors.back());
    return nullptr;
  }
  devices_[index] = device;
  return device;
}

KilnHalModule* Driver::Module(uint32_t device_index, const std::string& name, std::string* out_error) {
  KilnHalDevice* device = Device(device_index);
  if (!device) {
    *out_error = "the device did not open";
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto key = std::make_pair(device_index, name);
  auto it = modules_.find(key);
  if (it == modules_.end()) {
    CachedModule cached;
    std::shared_ptr<ModuleFile> file = ModuleFile::Open(name, &cached.error);
    if (file) {
      const size_t errors_before = services_->ErrorCount();
      KilnStatus status = hal_.module_load(device, file->desc(), &cached.module);
      if (status != kKilnOk) {
        std::vector<std::string> errors = services_->ErrorsSince(errors_before);
        cached.module = nullptr;
        cached.error = "module_load(" + name + ") returned " + StatusName(status) + ": " +
                       (errors.empty() ? "(no message reported)" : errors.back());
      }
    }
    it = modules_.emplace(key, cached).first;
  }
  *out_error = it->second.error;
  return it->second.module;
}

void Driver::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  // A table of another major cannot be read, so not even its shutdown is called (as the runtime's loader does).
  if (query_status_ == kKilnOk && hal_.instance && hal_.hal_major == KILN_HAL_VERSION_MAJOR) {
    for (auto& [key, cached] : modules_) {
      if (cached.module && hal_.module_unload(cached.module) != kKilnOk) {
        fprintf(stderr, "kiln-cts: %s: module_unload(%s) failed: %s\n", spec_.c_str(), key.second.c_str(),
                services_->LastError().c_str());
      }
    }
    for (auto& [index, device] : devices_) {
      if (hal_.device_close(device) != kKilnOk) {
        fprintf(stderr, "kiln-cts: %s: device_close(%u) failed: %s\n", spec_.c_str(), index,
                services_->LastError().c_str());
      }
    }
    if (hal_.shutdown && hal_.shutdown(hal_.instance) != kKilnOk) {
      fprintf(stderr, "kiln-cts: %s: shutdown failed: %s\n", spec_.c_str(), services_->LastError().c_str());
    }
  }
  modules_.clear();
  devices_.clear();
  // The library stays loaded: code it registered (atexit handlers, thread-locals) may still run.
}

namespace {
std::unique_ptr<Driver> g_dut;
std::unique_ptr<Driver> g_reference;
}  // namespace

Driver& Dut() { return *g_dut; }
Driver& Reference() { return *g_reference; }
void SetDrivers(std::unique_ptr<Driver> dut, std::unique_ptr<Driver> reference) {
  g_dut = std::move(dut);
  g_reference = std::move(reference);
}
void ShutdownDrivers() {
  if (g_dut) g_dut->Shutdown();
  if (g_reference) g_reference->Shutdown();
}

// ---- Modules ----------------------------------------------------------------------------------------------

std::shared_ptr<ModuleFile> ModuleFile::Open(const std::string& name, std::string* out_error) {
  std::string ignored;
  if (!out_error) out_error = &ignored;
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<ModuleFile>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  const std::string path = GetOptions().kmod_dir + "/" + name + ".kmod";
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *out_error =
        "cannot open " + path + " (set the folder of the suite's modules with --kmods or KILN_CTS_KMODS)";
    return nullptr;
  }
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto file = std::shared_ptr<ModuleFile>(new ModuleFile());
  file->name_ = name + ".kmod";
  if (!ReadKernelModule(bytes.data(), bytes.size(), &file->module_, out_error)) {
    *out_error = path + ": " + *out_error;
    return nullptr;
  }
  file->Build();
  cache[name] = file;
  return file;
}

std::unique_ptr<ModuleFile> ModuleFile::Clone() const {
  auto copy = std::unique_ptr<ModuleFile>(new ModuleFile());
  copy->name_ = name_;
  copy->module_ = module_;
  copy->Build();
  return copy;
}

const char* ModuleFile::Keep(std::string text) {
  kept_.push_back(std::move(text));
  return kept_.back().c_str();
}

int ModuleFile::KernelIndex(const std::string& name) const {
  for (size_t i = 0; i < module_.kernels.size(); ++i) {
    if (module_.kernels[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int ModuleFile::InvokableIndex(const std::string& name) const {
  for (size_t i = 0; i < module_.invokables.size(); ++i) {
    if (module_.invokables[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int ModuleFile::ReductionIndex(const std::string& name) const {
  for (size_t i = 0; i < module_.reductions.size(); ++i) {
    if (module_.reductions[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

// The same description the runtime builds for a driver (formats/kmod/hal_view.h).
void ModuleFile::Build() { view_.Build(module_, name_); }

// ---- Handles ----------------------------------------------------------------------------------------------

Buffer::Buffer(const Side& side, uint64_t size, void* host_ptr) : side_(side), size_(size) {
  KilnHalBufferDesc desc{};
  desc.struct_size = sizeof(desc);
  desc.size = size;
  desc.flags = host_ptr ? KILN_HAL_BUFFER_HOST_WRAP : 0;
  desc.host_ptr = host_ptr;
  KilnHalDevice* device = side.device();
  status_ = device ? side.hal().buffer_create(device, &desc, &buffer_) : kKilnError;
  if (status_ != kKilnOk) buffer_ = nullptr;
}

Buffer::~Buffer() {
  if (buffer_) {
    EXPECT_EQ(side_.hal().buffer_destroy(buffer_), kKilnOk) << side_.role << ": buffer_destroy";
  }
}

bool Buffer::Write(const void* data, uint64_t size, uint64_t offset) {
  if (!buffer_) return false;
  KilnStatus status = side_.hal().buffer_write(buffer_, offset, data, size);
  EXPECT_EQ(status, kKilnOk) << side_.role << ": buffer_write of " << size << " bytes at " << offset << ": "
                             << side_.driver->services().LastError();
  return status == kKilnOk;
}

std::vector<uint8_t> Buffer::Read(uint64_t offset, uint64_t size) {
  if (size == UINT64_MAX) size = size_ - offset;
  std::vector<uint8_t> bytes(size);
  if (!buffer_) return bytes;
  KilnStatus status = side_.hal().buffer_read(buffer_, offset, size, bytes.data());
  EXPECT_EQ(status, kKilnOk) << side_.role << ": buffer_read of " << size << " bytes at " << offset << ": "
                             << side_.driver->services().LastError();
  return bytes;
}

Script::Script(const Side& side, KilnHalModule* module, void* user_data) : side_(side) {
  if (!module) return;
  const size_t errors_before = side.driver->services().ErrorCount();
  KilnStatus status = side.hal().script_create(module, user_data, &script_);
  if (status != kKilnOk) {
    script_ = nullptr;
    std::vector<std::string> errors = side.driver->services().ErrorsSince(errors_before);
    ADD_FAILURE() << side.role << ": script_create returned " << StatusName(status) << ": "
                  << (errors.empty() ? "(no message reported)" : errors.back());
  }
}

Script::~Script() {
  if (script_) {
    EXPECT_EQ(side_.hal().script_destroy(script_), kKilnOk) << side_.role << ": script_destroy";
  }
}

KilnHalBufferView DenseView(const Buffer& buffer, uint32_t element_size, uint32_t dim_x, uint32_t dim_y) {
  KilnHalBufferView view{};
  view.struct_size = sizeof(view);
  view.element_size = element_size;
  view.buffer = buffer.get();
  view.stride_x = element_size;
  view.stride_y = uint64_t{element_size} * dim_x;
  view.stride_z = view.stride_y * dim_y;
  return view;
}

KilnHalForEachDesc ForEach(uint32_t kernel, const uint32_t dims[3], const KilnHalBufferView* inputs,
                           uint32_t num_inputs, const KilnHalBufferView* output) {
  KilnHalForEachDesc desc{};
  desc.struct_size = sizeof(desc);
  desc.kernel_index = kernel;
  desc.dim_x = dims[0];
  desc.dim_y = dims[1];
  desc.dim_z = dims[2];
  desc.num_inputs = num_inputs;
  desc.inputs = inputs;
  desc.output = output;
  return desc;
}

// ---- Comparing
// ----------------------------------------------------------------------------------------------

namespace {

uint32_t LaneSize(KilnType type) {
  switch (type) {
    case kKilnInt8:
    case kKilnUInt8:
    case kKilnBool:
      return 1;
    case kKilnInt16:
    case kKilnUInt16:
      return 2;
    case kKilnInt32:
    case kKilnUInt32:
    case kKilnFloat32:
      return 4;
    default:
      return 8;
  }
}

std::string LaneText(KilnType type, const uint8_t* p) {
  std::ostringstream out;
  switch (type) {
    case kKilnFloat32: {
      float v;
      memcpy(&v, p, 4);
      out.precision(9);
      out << v;
      break;
    }
    case kKilnFloat64: {
      double v;
      memcpy(&v, p, 8);
      out.precision(17);
      out << v;
      break;
    }
    default: {
      uint64_t bits = 0;
      memcpy(&bits, p, LaneSize(type));
      const bool is_signed =
          type == kKilnInt8 || type == kKilnInt16 || type == kKilnInt32 || type == kKilnInt64;
      const int shift = 64 - 8 * static_cast<int>(LaneSize(type));
      if (is_signed) {
        out << (static_cast<int64_t>(bits << shift) >> shift);
      } else {
        out << bits;
      }
    }
  }
  return out.str();
}

bool LanesMatch(KilnType type, const uint8_t* want, const uint8_t* got) {
  if (type == kKilnFloat32 || type == kKilnFloat64) {
    double a, b;
    if (type == kKilnFloat32) {
      float fa, fb;
      memcpy(&fa, want, 4);
      memcpy(&fb, got, 4);
      a = fa;
      b = fb;
    } else {
      memcpy(&a, want, 8);
      memcpy(&b, got, 8);
    }
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    const double tolerance = type == kKilnFloat32 ? 2e-6 : 1e-13;
    return std::fabs(a - b) <= tolerance * std::max(1.0, std::fabs(a));
  }
  return memcmp(want, got, LaneSize(type)) == 0;
}

}  // namespace

::testing::AssertionResult CellsMatch(const std::vector<uint8_t>& want, const std::vector<uint8_t>& got,
                                      const CellLayout& layout, const uint32_t dims[3], const char* what) {
  const uint64_t cells = uint64_t{dims[0]} * dims[1] * dims[2];
  if (want.size() < cells * layout.element_size || got.size() < cells * layout.element_size) {
    return ::testing::AssertionFailure() << what << ": expected " << cells * layout.element_size
                                         << " bytes, have " << want.size() << " and " << got.size();
  }
  const uint32_t lane_size = LaneSize(layout.lane_type);
  uint64_t mismatches = 0;
  std::ostringstream detail;
  for (uint64_t cell = 0; cell < cells; ++cell) {
    for (uint32_t lane = 0; lane < layout.lanes; ++lane) {
      const size_t at = cell * layout.element_size + lane * lane_size;
      if (LanesMatch(layout.lane_type, &want[at], &got[at])) continue;
      if (++mismatches <= 5) {
        detail << "\n  cell (" << cell % dims[0] << ", " << cell / dims[0] % dims[1] << ", "
               << cell / (uint64_t{dims[0]} * dims[1]) << ") lane " << lane << ": expected "
               << LaneText(layout.lane_type, &want[at]) << ", got " << LaneText(layout.lane_type, &got[at]);
      }
    }
  }
  if (mismatches == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": " << mismatches << " lane(s) differ over " << dims[0]
                                       << "x" << dims[1] << "x" << dims[2] << " cells" << detail.str();
}

std::vector<uint8_t> PatternBytes(size_t size, uint32_t seed) {
  std::vector<uint8_t> bytes(size);
  uint32_t state = seed * 2654435761u + 1;
  for (size_t i = 0; i < size; ++i) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    bytes[i] = static_cast<uint8_t>(state >> 7);
  }
  return bytes;
}

::testing::AssertionResult FailsWithMessage(Driver& driver, KilnStatus status, size_t errors_before,
                                            const char* what) {
  if (status == kKilnOk) return ::testing::AssertionFailure() << what << " succeeded; it must fail";
  std::vector<std::string> errors = driver.services().ErrorsSince(errors_before);
  if (errors.empty() || errors.back().empty()) {
    return ::testing::AssertionFailure()
           << what << " returned " << StatusName(status) << " but reported no message through report_error";
  }
  return ::testing::AssertionSuccess() << what << " -> " << StatusName(status) << ": " << errors.back();
}

// ---- Fixtures ---------------------------------------------------------------------------------------------

std::vector<uint32_t> DeviceIndices() {
  std::vector<uint32_t> indices;
  for (uint32_t i = 0; i < std::max(1u, Dut().device_count()); ++i) indices.push_back(i);
  return indices;
}

std::string DeviceParamName(const ::testing::TestParamInfo<uint32_t>& info) {
  return "device" + std::to_string(info.param);
}

void DeviceTest::SetUp() {
  if (!Dut().usable()) GTEST_SKIP() << "the driver is not usable: " << Dut().problem();
  ASSERT_TRUE(Reference().usable()) << "the reference CPU driver: " << Reference().problem();
  ASSERT_NE(dut().device(), nullptr);
  ASSERT_NE(ref().device(), nullptr);
}

KilnHalDeviceInfo DeviceTest::DutInfo() const {
  KilnHalDeviceInfo info{};
  info.struct_size = sizeof(info);
  EXPECT_EQ(Dut().hal().device_get_info(Dut().hal().instance, GetParam(), &info), kKilnOk);
  return info;
}

std::string DeviceTest::DutUnsupportedReason(KilnHalModule* module, int kernel) {
  bool supported = true;
  const char* reason = nullptr;
  if (!Dut().hal().module_kernel_supported) return "";  // every kernel is taken as supported
  EXPECT_EQ(Dut().hal().module_kernel_supported(module, kernel, &supported, &reason), kKilnOk);
  if (supported) return "";
  EXPECT_TRUE(reason && *reason) << "kernel " << kernel << " is unsupported without a reason";
  return reason && *reason ? reason : "(no reason given)";
}

std::string DeviceTest::DutUnsupportedReductionReason(KilnHalModule* module, int reduction) {
  bool supported = true;
  const char* reason = nullptr;
  if (!Dut().hal().launch_reduce) return "the driver has no reductions (launch_reduce is NULL)";
  if (!Dut().hal().module_reduction_supported) return "";  // every reduction is taken as supported
  EXPECT_EQ(Dut().hal().module_reduction_supported(module, reduction, &supported, &reason), kKilnOk)
      << Dut().services().LastError();
  if (supported) return "";
  EXPECT_TRUE(reason && *reason) << "reduction " << reduction << " is unsupported without a reason";
  return reason && *reason ? reason : "(no reason given)";
}

std::string DeviceTest::DutScriptRefusedReason(KilnHalModule* module, uint32_t num_kernels) {
  const size_t errors_before = Dut().services().ErrorCount();
  KilnHalScript* script = nullptr;
  const KilnStatus status = Dut().hal().script_create(module, nullptr, &script);
  if (status == kKilnOk) {
    EXPECT_NE(script, nullptr) << "script_create returned kKilnOk and no script";
    if (script) {
      EXPECT_EQ(Dut().hal().script_destroy(script), kKilnOk) << Dut().services().LastError();
    }
    return "";
  }
  const std::vector<std::string> errors = Dut().services().ErrorsSince(errors_before);
  const std::string message = errors.empty() ? "" : errors.back();
  EXPECT_EQ(status, kKilnUnsupported) << "script_create failed with " << StatusName(status) << ": "
                                      << (message.empty() ? "(no message reported)" : message);
  EXPECT_FALSE(message.empty()) << "script_create refused the module without a message";
  if (!Dut().hal().module_kernel_supported) {
    ADD_FAILURE() << "script_create refused the module, yet without module_kernel_supported every kernel "
                     "is taken as supported: "
                  << message;
  } else {
    for (uint32_t k = 0; k < num_kernels; ++k) {
      bool supported = false;
      const char* reason = nullptr;
      EXPECT_EQ(Dut().hal().module_kernel_supported(module, k, &supported, &reason), kKilnOk);
      EXPECT_FALSE(supported) << "script_create refuses the module, but kernel " << k
                              << " is reported supported";
    }
  }
  return "script_create refused the module: " + (message.empty() ? StatusName(status) : message);
}

bool DeviceTest::LoadModule(const std::string& name, KilnHalModule** out_ref, KilnHalModule** out_dut) {
  std::string error;
  *out_ref = Reference().Module(0, name, &error);
  if (!*out_ref) {
    ADD_FAILURE() << "reference: " << error;
    return false;
  }
  *out_dut = Dut().Module(GetParam(), name, &error);
  if (!*out_dut) {
    ADD_FAILURE() << "driver: " << error;
    return false;
  }
  return true;
}

}  // namespace cts
}  // namespace kiln
