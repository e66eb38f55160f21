// One driver instance behind the HAL: the built-in CPU driver, or a shared library that passed every check;
// the version rules; and where drivers are searched for.
#include "runtime/device/hal_driver.h"

#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backends/cpu/cpu_driver.h"
#include "runtime/core.h"
#include "runtime/device/driver_elf.h"
#include "runtime/device/kernel_module.h"

#ifndef KILN_DRIVER_INSTALL_DIR
#define KILN_DRIVER_INSTALL_DIR ""
#endif
#ifndef KILN_DRIVER_BUILD_ROOT
#define KILN_DRIVER_BUILD_ROOT ""
#endif
#ifndef KILN_DRIVER_BUILD_DIRS
#define KILN_DRIVER_BUILD_DIRS ""
#endif

namespace kiln {

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string ModuleLabel(const KernelModule& module) { return BaseName(module.name()); }

// ---------------------------------------------------------------------------------------------------------
// Version rules

std::string LevelString(uint32_t level) {
  return std::to_string(KILN_HAL_LEVEL_MAJOR(level)) + "." + std::to_string(KILN_HAL_LEVEL_MINOR(level));
}

std::string ModuleLevelRefusal(uint32_t module_level, uint32_t device_level) {
  if (KILN_HAL_LEVEL_MAJOR(module_level) == KILN_HAL_LEVEL_MAJOR(device_level)) return "";
  return "needs HAL level " + LevelString(module_level) + ", driver has " + LevelString(device_level) +
         " (a different major)";
}

std::string KernelLevelRefusal(uint32_t kernel_level, uint32_t device_level) {
  if (KILN_HAL_LEVEL_MAJOR(kernel_level) != KILN_HAL_LEVEL_MAJOR(device_level)) {
    return ModuleLevelRefusal(kernel_level, device_level);
  }
  if (kernel_level <= device_level) return "";
  return "needs HAL " + LevelString(kernel_level) + ", driver has " + LevelString(device_level);
}

// ---------------------------------------------------------------------------------------------------------
// HalDriver

namespace {

// Bytes of KilnHalDriver in HAL 1.0: every entry up to fence_destroy. A 1.0 driver's table ends there; the
// entries appended since (module_reduction_supported in 1.1) then stay zero, i.e. NULL, in the runtime's
// copy.
constexpr size_t kHal10TableSize = offsetof(KilnHalDriver, fence_destroy) + sizeof(void*);
// Room after a struct handed to a driver, so a driver that writes more than the struct_size it was given
// overwrites a guard instead of the runtime's memory, and is caught.
constexpr size_t kGuardBytes = 512;
constexpr uint8_t kGuardByte = 0xA5;

bool GuardIntact(const uint8_t* guard) {
  for (size_t i = 0; i < kGuardBytes; ++i) {
    if (guard[i] != kGuardByte) return false;
  }
  return true;
}

struct RequiredEntry {
  const char* name;
  size_t offset;
};
#define KILN_ENTRY(name) \
  { #name, offsetof(KilnHalDriver, name) }
constexpr RequiredEntry kRequiredEntries[] = {
    KILN_ENTRY(shutdown),        KILN_ENTRY(device_count),      KILN_ENTRY(device_get_info),
    KILN_ENTRY(device_open),     KILN_ENTRY(device_close),      KILN_ENTRY(buffer_create),
    KILN_ENTRY(buffer_destroy),  KILN_ENTRY(buffer_write),      KILN_ENTRY(buffer_read),
    KILN_ENTRY(module_load),     KILN_ENTRY(module_unload),     KILN_ENTRY(script_create),
    KILN_ENTRY(script_destroy),  KILN_ENTRY(script_set_global), KILN_ENTRY(script_get_global),
    KILN_ENTRY(launch_for_each),
};
constexpr RequiredEntry kBatchEntries[] = {
    KILN_ENTRY(batch_create), KILN_ENTRY(batch_destroy), KILN_ENTRY(batch_record_for_each),
    KILN_ENTRY(batch_submit), KILN_ENTRY(fence_wait),    KILN_ENTRY(fence_destroy),
};
#undef KILN_ENTRY

bool EntryPresent(const KilnHalDriver& table, size_t offset) {
  void* p;
  std::memcpy(&p, reinterpret_cast<const uint8_t*>(&table) + offset, sizeof p);
  return p != nullptr;
}

bool EnvFlag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr &&
         (std::strcmp(v, "1") == 0 || std::strcmp(v, "true") == 0 || std::strcmp(v, "yes") == 0);
}

}  // namespace

void HalDriver::InitServices() {
  if (options_.num_threads > 0) threads_config_ = std::to_string(options_.num_threads);
  services_.struct_size = sizeof(KilnHalServices);
  services_.user_data = this;
  services_.log = &HalDriver::Log;
  services_.report_error = &HalDriver::DriverError;
  services_.allocate = [](void*, size_t size, size_t alignment) -> void* {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) return nullptr;
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    if (size > SIZE_MAX - alignment) return nullptr;
    return std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  };
  services_.free = [](void*, void* p) { std::free(p); };
  services_.now_ns = [](void*) -> uint64_t {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
  };
  services_.get_config = &HalDriver::GetConfig;
  services_.send_to_client = &HalDriver::SendToClient;
}

std::shared_ptr<HalDriver> HalDriver::OpenBuiltinCpu(const DriverOptions& options, std::string* error) {
  std::shared_ptr<HalDriver> d(new HalDriver());
  d->options_ = options;
  d->InitServices();
  d->table_.struct_size = sizeof(KilnHalDriver);
  if (kiln_cpu_driver_query(KILN_HAL_VERSION_MAJOR, KILN_HAL_VERSION_MINOR, &d->services_, &d->table_) !=
      kKilnOk) {
    *error = "the CPU driver refused to start";
    return nullptr;
  }
  d->ready_ = true;
  d->name_ = d->table_.name ? d->table_.name : "kiln-cpu";
  d->has_batches_ = true;
  return d;
}

std::shared_ptr<HalDriver> HalDriver::Load(const std::string& path, const DriverOptions& options,
                                           DecisionLog* log, std::string* refusal) {
  const std::string file = BaseName(path);
  auto refuse = [&](const std::string& why) {
    *refusal = "driver " + file + " refused: " + why;
    return nullptr;
  };

  // 1. What the library would bring in, before any of its code runs.
  ElfDependencies deps;
  std::string error;
  if (!ReadElfDependenciesFromFile(path, &deps, &error)) return refuse(error);
  std::vector<std::string> disallowed;
  for (const std::string& needed : deps.needed) {
    if (needed.rfind("libkiln.so", 0) == 0) {
      return refuse("it links " + needed + "; a driver reaches the runtime only through KilnHalServices");
    }
    if (!IsAllowedDriverDependency(needed)) disallowed.push_back(needed);
  }
  if (!disallowed.empty()) {
    std::string names;
    for (const std::string& n : disallowed) names += (names.empty() ? "" : ", ") + n;
    const bool by_env = EnvFlag("KILN_DRIVER_ALLOW_ANY_DEPENDENCY");
    if (!options.allow_any_dependency && !by_env) {
      return refuse("it needs " + names + ", not on the allow-list (" + DriverDependencyAllowList() +
                    "); set KILN_DRIVER_ALLOW_ANY_DEPENDENCY=1 to load it anyway");
    }
    log->Add(kKilnDecisionDriver, file,
             "driver " + file + ": needs " + names + ", not on the allow-list; loaded anyway because " +
                 (options.allow_any_dependency ? "the application allowed any dependency"
                                               : "KILN_DRIVER_ALLOW_ANY_DEPENDENCY=1"));
  }

  // 2. Load it. RTLD_NODELETE: GPU stacks commonly cannot be unloaded and loaded again safely, so a driver
  // stays mapped until the process exits (shutdown still releases everything it holds).
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* why = dlerror();
    return refuse(std::string("dlopen failed: ") + (why ? why : "unknown error"));
  }
  auto query = reinterpret_cast<KilnDriverQueryFn>(dlsym(handle, KILN_DRIVER_QUERY_SYMBOL));
  if (query == nullptr) return refuse("it exports no " KILN_DRIVER_QUERY_SYMBOL " entry point");

  // 3. Ask it for its table, into a guarded buffer.
  std::shared_ptr<HalDriver> d(new HalDriver());
  d->options_ = options;
  d->file_ = file;
  d->InitServices();
  std::vector<uint8_t> buffer(sizeof(KilnHalDriver) + kGuardBytes, kGuardByte);
  KilnHalDriver table{};
  table.struct_size = sizeof(KilnHalDriver);
  std::memcpy(buffer.data(), &table, sizeof table);
  const KilnStatus status = query(KILN_HAL_VERSION_MAJOR, KILN_HAL_VERSION_MINOR, &d->services_,
                                  reinterpret_cast<KilnHalDriver*>(buffer.data()));
  std::memcpy(&table, buffer.data(), sizeof table);
  // A table of this major that is refused still holds an instance: give it back (never for another major,
  // whose layout, shutdown included, is unknown).
  auto release = [&]() {
    if (status == kKilnOk && table.hal_major == KILN_HAL_VERSION_MAJOR && table.shutdown != nullptr) {
      table.shutdown(table.instance);
    }
  };
  if (!GuardIntact(buffer.data() + sizeof(KilnHalDriver))) {
    release();
    return refuse("kiln_driver_query wrote past the " + std::to_string(sizeof(KilnHalDriver)) +
                  "-byte KilnHalDriver the runtime passed (it ignores struct_size)");
  }
  const std::string runtime_version =
      std::to_string(KILN_HAL_VERSION_MAJOR) + "." + std::to_string(KILN_HAL_VERSION_MINOR);
  const std::string driver_version = std::to_string(table.hal_major) + "." + std::to_string(table.hal_minor);
  std::string messages = d->TakeErrors();
  if (status != kKilnOk) {
    std::string why = table.hal_major != 0 && table.hal_major != KILN_HAL_VERSION_MAJOR
                          ? "HAL " + driver_version + ", runtime " + runtime_version
                          : std::string("kiln_driver_query failed (") + StatusName(status) + ")";
    return refuse(why + (messages.empty() ? "" : ": " + messages));
  }
  // A different major means a different table layout: nothing in it, not even shutdown, can be called.
  if (table.hal_major != KILN_HAL_VERSION_MAJOR) {
    return refuse("HAL " + driver_version + ", runtime " + runtime_version);
  }
  if (table.struct_size > sizeof(KilnHalDriver)) {
    release();
    return refuse("its KilnHalDriver struct_size is " + std::to_string(table.struct_size) +
                  " bytes, larger than the " + std::to_string(sizeof(KilnHalDriver)) + " the runtime passed");
  }
  if (table.struct_size < kHal10TableSize) {
    release();
    return refuse("its KilnHalDriver struct_size is " + std::to_string(table.struct_size) + " bytes; HAL " +
                  driver_version + " needs at least " + std::to_string(kHal10TableSize));
  }
  // Entries past the driver's struct_size are of a newer minor than it implements: NULL, whatever is there.
  std::memset(reinterpret_cast<uint8_t*>(&table) + table.struct_size, 0,
              sizeof(KilnHalDriver) - table.struct_size);
  std::string missing;
  for (const RequiredEntry& e : kRequiredEntries) {
    if (!EntryPresent(table, e.offset)) missing += (missing.empty() ? "" : ", ") + std::string(e.name);
  }
  if (!missing.empty()) {
    release();
    return refuse("required entry point(s) NULL: " + missing);
  }
  d->table_ = table;
  d->ready_ = true;
  d->name_ = table.name != nullptr ? std::string(table.name, strnlen(table.name, 64)) : file;
  if (d->name_.empty()) d->name_ = file;
  std::string no_batches;
  for (const RequiredEntry& e : kBatchEntries) {
    if (!EntryPresent(table, e.offset)) no_batches += (no_batches.empty() ? "" : ", ") + std::string(e.name);
  }
  d->has_batches_ = no_batches.empty();
  const std::string version =
      table.version != nullptr ? std::string(table.version, strnlen(table.version, 64)) : "?";
  std::string note = "driver " + file + " loaded: " + d->name_ + " " + version + ", HAL " + driver_version +
                     " (runtime " + runtime_version + ")";
  if (table.hal_minor > KILN_HAL_VERSION_MINOR) note += "; its newer minor is accepted";
  if (!d->has_batches_) note += "; no batches (" + no_batches + " NULL): launches run one at a time";
  log->Add(kKilnDecisionDriver, file, note);
  return d;
}

HalDriver::~HalDriver() {
  if (ready_ && table_.shutdown != nullptr) table_.shutdown(table_.instance);
}

namespace {

// A thread that reports but never takes (a driver's own worker, against hal.h's rule) must not grow the map
// without bound: past this many threads with undelivered messages, the others' are dropped.
constexpr size_t kMaxErrorThreads = 256;
constexpr size_t kMaxErrorBytes = 4096;

void AppendError(std::unordered_map<std::thread::id, std::string>& errors, const std::string& message) {
  const std::thread::id self = std::this_thread::get_id();
  auto it = errors.find(self);
  if (it == errors.end()) {
    if (errors.size() >= kMaxErrorThreads) errors.clear();
    it = errors.emplace(self, std::string()).first;
  }
  std::string& text = it->second;
  if (text.size() < kMaxErrorBytes) text += (text.empty() ? "" : "; ") + message;
}

}  // namespace

std::string HalDriver::TakeErrors() {
  std::lock_guard<std::mutex> lock(errors_mutex_);
  std::string out;
  auto it = errors_.find(std::this_thread::get_id());
  if (it != errors_.end()) {
    out.swap(it->second);
    errors_.erase(it);
  }
  return out;
}

void HalDriver::NoteError(const std::string& message) {
  std::lock_guard<std::mutex> lock(errors_mutex_);
  AppendError(errors_, message);
}

void HalDriver::ReportError(const char* format, ...) {
  va_list args;
  va_start(args, format);
  ReportV(options_.reporter, options_.reporter_user_data, format, args);
  va_end(args);
}

void HalDriver::Log(void* self, KilnHalLogLevel level, const char* message) {
  // rsDebug and driver warnings reach the user's error reporter; tracing does not.
  auto* d = static_cast<HalDriver*>(self);
  if (level == kKilnHalLogInfo || message == nullptr) return;
  if (d->builtin()) {
    d->ReportError("%s", message);
  } else {
    d->ReportError("%s: %s", d->name_.empty() ? d->file_.c_str() : d->name_.c_str(), message);
  }
}

void HalDriver::DriverError(void* self, KilnStatus status, const char* message) {
  auto* d = static_cast<HalDriver*>(self);
  if (message == nullptr) message = "(no message)";
  if (d->builtin()) {
    d->ReportError("%s (%s)", message, StatusName(status));
    return;
  }
  std::lock_guard<std::mutex> lock(d->errors_mutex_);
  AppendError(d->errors_, std::string(message) + " (" + StatusName(status) + ")");
}

const char* HalDriver::GetConfig(void* self, const char* key) {
  auto* d = static_cast<HalDriver*>(self);
  if (key != nullptr && std::strcmp(key, "cpu.threads") == 0 && !d->threads_config_.empty()) {
    return d->threads_config_.c_str();
  }
  return nullptr;  // the driver's defaults (and its environment variables) apply
}

void HalDriver::SendToClient(void* self, void* script_user_data, int32_t command, const void* data,
                             size_t size) {
  auto* d = static_cast<HalDriver*>(self);
  if (d->options_.on_message) d->options_.on_message(script_user_data, command, data, size);
}

// ---------------------------------------------------------------------------------------------------------
// Finding drivers

namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Shared libraries in `dir`, by name.
std::vector<std::string> LibrariesIn(const std::string& dir) {
  std::vector<std::string> files;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return files;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    const size_t so = name.find(".so");
    if (so == std::string::npos || (so + 3 != name.size() && name[so + 3] != '.')) continue;
    const std::string path = dir + "/" + name;
    if (IsRegularFile(path)) files.push_back(path);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  // libfoo.so -> libfoo.so.1 links: keep one file per real library.
  std::vector<std::string> unique;
  std::vector<std::string> seen;
  for (const std::string& f : files) {
    char real[PATH_MAX];
    const std::string key = realpath(f.c_str(), real) ? real : f;
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    unique.push_back(f);
  }
  return unique;
}

// True when this code runs from Kiln's own build tree (tests, a developer's `kiln`), where the build's driver
// folders are searched too. An installed Kiln never looks into a build directory.
bool RunningFromBuildTree() {
  const std::string root = KILN_DRIVER_BUILD_ROOT;
  if (root.empty()) return false;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&RunningFromBuildTree), &info) == 0 || info.dli_fname == nullptr)
    return false;
  char self[PATH_MAX], build[PATH_MAX];
  if (realpath(info.dli_fname, self) == nullptr || realpath(root.c_str(), build) == nullptr) return false;
  const std::string s = self, b = std::string(build) + "/";
  return s.compare(0, b.size(), b) == 0;
}

// The driver folder of the install this code runs from, found from the file that holds it (libkiln, or a tool
// that links the runtime statically) and the install layout's relative paths; empty when there is none (a
// build tree, or a layout that does not match).
std::string RelocatedDriverDir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&RelocatedDriverDir), &info) == 0 || info.dli_fname == nullptr)
    return "";
  char self[PATH_MAX];
  if (realpath(info.dli_fname, self) == nullptr) return "";
  const std::string file = self;
  const std::string dir = file.substr(0, file.rfind('/'));
  for (const char* relative : {KILN_DRIVER_DIR_FROM_LIB, KILN_DRIVER_DIR_FROM_BIN}) {
    const std::string candidate = dir + "/" + relative;
    char real[PATH_MAX];
    if (IsDirectory(candidate) && realpath(candidate.c_str(), real) != nullptr) return real;
  }
  return "";
}

}  // namespace

std::vector<std::string> FindDriverFiles(const DriverOptions& options, DecisionLog* log) {
  std::vector<std::string> files;
  auto add_path = [&](const std::string& path, const std::string& source) -> bool {
    if (IsDirectory(path)) {
      std::vector<std::string> found = LibrariesIn(path);
      std::string names;
      for (const std::string& f : found) names += (names.empty() ? "" : ", ") + BaseName(f);
      log->Add(kKilnDecisionPolicy, path,
               "searched " + source + " " + path + ": " + (found.empty() ? "no drivers" : names));
      files.insert(files.end(), found.begin(), found.end());
      return true;
    }
    if (IsRegularFile(path)) {
      log->Add(kKilnDecisionPolicy, path, "driver " + path + " (from " + source + ")");
      files.push_back(path);
      return true;
    }
    log->Add(kKilnDecisionPolicy, path,
             source + " " + path +
                 " does not exist (point Kiln at a driver file or folder with KILN_DRIVER, kiln --driver, or "
                 "Kiln*OptionsSetDriverPath)");
    return false;
  };
  if (!options.driver_path.empty()) {
    add_path(options.driver_path, "the driver path set by the application");
    return files;
  }
  if (const char* env = std::getenv("KILN_DRIVER"); env != nullptr && *env != '\0') {
    add_path(env, "KILN_DRIVER");
    return files;
  }
  // The install's own driver folder first, wherever the install now is; then the folder configured at build
  // time, unless it is the same one.
  const std::string relocated = RelocatedDriverDir();
  if (!relocated.empty()) add_path(relocated, "the driver directory beside this Kiln");
  const std::string install_dir = KILN_DRIVER_INSTALL_DIR;
  char real[PATH_MAX];
  const bool same = !relocated.empty() && realpath(install_dir.c_str(), real) != nullptr && relocated == real;
  if (!install_dir.empty() && !same) add_path(install_dir, "the default driver directory");
  if (relocated.empty() &&
      RunningFromBuildTree()) {  // an install (even one inside a build tree) is not a build
    std::string dirs = KILN_DRIVER_BUILD_DIRS;
    size_t start = 0;
    while (start <= dirs.size()) {
      const size_t end = std::min(dirs.find(';', start), dirs.size());
      const std::string dir = dirs.substr(start, end - start);
      if (!dir.empty() && IsDirectory(dir)) add_path(dir, "the build tree's driver folder");
      start = end + 1;
    }
  }
  return files;
}

}  // namespace kiln
