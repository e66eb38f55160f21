#include "runtime/driver_loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
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
#include "runtime/kernel_device.h"
#include "runtime/kernel_module.h"

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

// ---------------------------------------------------------------------------------------------------------
// Decision log

void DecisionLog::Add(KilnDecisionKind kind, std::string subject, std::string message) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.push_back({kind, std::move(subject), std::move(message)});
}

size_t DecisionLog::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

const Decision* DecisionLog::Get(size_t index) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return index < entries_.size() ? &entries_[index] : nullptr;
}

const char* StatusName(KilnStatus s) {
  switch (s) {
    case kKilnOk: return "ok";
    case kKilnError: return "error";
    case kKilnDelegateError: return "driver error";
    case kKilnUnresolvedOps: return "unresolved ops";
    case kKilnInvalidArgument: return "invalid argument";
    case kKilnInvalidModel: return "invalid module";
    case kKilnUnsupported: return "unsupported";
    case kKilnOutOfMemory: return "out of memory";
  }
  return "unknown status";
}

const char* PolicyName(DevicePolicy policy) {
  return KilnDevicePolicyName(static_cast<KilnDevicePolicy>(policy));
}

// ---------------------------------------------------------------------------------------------------------
// ELF

namespace {

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
constexpr const char* kHostMachineName = "x86-64";
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
constexpr const char* kHostMachineName = "AArch64";
#else
constexpr uint16_t kHostMachine = EM_NONE;
constexpr const char* kHostMachineName = "this machine";
#endif

template <typename T>
bool ReadAt(const uint8_t* data, size_t size, uint64_t offset, T* out) {
  if (offset > size || sizeof(T) > size - offset) return false;
  std::memcpy(out, data + offset, sizeof(T));
  return true;
}

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool ReadElfDependencies(const uint8_t* data, size_t size, ElfDependencies* out, std::string* error) {
  out->needed.clear();
  Elf64_Ehdr eh;
  if (!ReadAt(data, size, 0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    *error = "not an ELF file";
    return false;
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
    *error = "not a 64-bit little-endian ELF file";
    return false;
  }
  if (eh.e_type != ET_DYN) {
    *error = "not a shared library (ELF type " + std::to_string(eh.e_type) + ")";
    return false;
  }
  if (eh.e_machine != kHostMachine) {
    *error = "built for ELF machine " + std::to_string(eh.e_machine) + ", this process is " + kHostMachineName;
    return false;
  }
  if (eh.e_phentsize < sizeof(Elf64_Phdr) || eh.e_phnum == 0) {
    *error = "program header entries of " + std::to_string(eh.e_phentsize) + " bytes (x" +
             std::to_string(eh.e_phnum) + ")";
    return false;
  }
  std::vector<Elf64_Phdr> phdrs(eh.e_phnum);
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    const uint64_t at = eh.e_phoff + static_cast<uint64_t>(i) * eh.e_phentsize;
    if (eh.e_phoff > size || !ReadAt(data, size, at, &phdrs[i])) {
      *error = "program header " + std::to_string(i) + " at offset " + Hex(at) + " is past the end of the file";
      return false;
    }
  }
  const Elf64_Phdr* dynamic = nullptr;
  for (const Elf64_Phdr& p : phdrs) {
    if (p.p_type == PT_DYNAMIC) dynamic = &p;
  }
  if (dynamic == nullptr) {
    *error = "no dynamic segment (PT_DYNAMIC): not a loadable shared library";
    return false;
  }
  if (dynamic->p_offset > size || dynamic->p_filesz > size - dynamic->p_offset) {
    *error = "the dynamic segment at offset " + Hex(dynamic->p_offset) + " (" + std::to_string(dynamic->p_filesz) +
             " bytes) is past the end of the file";
    return false;
  }
  std::vector<uint64_t> needed_offsets;
  uint64_t strtab_addr = 0, strtab_size = 0;
  bool have_strtab = false, have_strsz = false;
  const uint64_t count = dynamic->p_filesz / sizeof(Elf64_Dyn);
  for (uint64_t i = 0; i < count; ++i) {
    Elf64_Dyn dyn;
    ReadAt(data, size, dynamic->p_offset + i * sizeof(Elf64_Dyn), &dyn);  // in range: checked above
    if (dyn.d_tag == DT_NULL) break;
    if (dyn.d_tag == DT_NEEDED) needed_offsets.push_back(dyn.d_un.d_val);
    if (dyn.d_tag == DT_STRTAB) strtab_addr = dyn.d_un.d_ptr, have_strtab = true;
    if (dyn.d_tag == DT_STRSZ) strtab_size = dyn.d_un.d_val, have_strsz = true;
  }
  if (needed_offsets.empty()) return true;
  if (!have_strtab || !have_strsz) {
    *error = "DT_NEEDED entries without a DT_STRTAB/DT_STRSZ string table";
    return false;
  }
  // The string table is named by address; the PT_LOAD segment holding it gives its file offset.
  uint64_t strtab_offset = 0;
  bool mapped = false;
  for (const Elf64_Phdr& p : phdrs) {
    if (p.p_type != PT_LOAD || strtab_addr < p.p_vaddr || strtab_addr - p.p_vaddr >= p.p_filesz) continue;
    const uint64_t delta = strtab_addr - p.p_vaddr;
    if (strtab_size > p.p_filesz - delta) break;
    strtab_offset = p.p_offset + delta;
    mapped = true;
    break;
  }
  if (!mapped || strtab_offset > size || strtab_size > size - strtab_offset) {
    *error = "the dynamic string table at address " + Hex(strtab_addr) + " (" + std::to_string(strtab_size) +
             " bytes) is not inside a loaded segment of the file";
    return false;
  }
  const char* strtab = reinterpret_cast<const char*>(data + strtab_offset);
  for (uint64_t off : needed_offsets) {
    if (off >= strtab_size) {
      *error = "a DT_NEEDED name at string offset " + Hex(off) + " is past the string table (" +
               std::to_string(strtab_size) + " bytes)";
      return false;
    }
    const void* end = std::memchr(strtab + off, '\0', strtab_size - off);
    if (end == nullptr) {
      *error = "the DT_NEEDED name at string offset " + Hex(off) + " is not NUL-terminated";
      return false;
    }
    out->needed.emplace_back(strtab + off, static_cast<const char*>(end));
  }
  return true;
}

bool ReadElfDependenciesFromFile(const std::string& path, ElfDependencies* out, std::string* error) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = std::string("cannot open: ") + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
    close(fd);
    *error = "not a regular, non-empty file";
    return false;
  }
  void* map = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) {
    *error = std::string("cannot map: ") + std::strerror(errno);
    return false;
  }
  const bool ok = ReadElfDependencies(static_cast<const uint8_t*>(map), static_cast<size_t>(st.st_size), out, error);
  munmap(map, static_cast<size_t>(st.st_size));
  return ok;
}

namespace {

// Libraries a driver may need: the C and C++ runtimes, the dynamic loader, the Vulkan loader and LLVM 19.
// The counterpart of Android's VNDK-SP list: nothing that could bring in a second copy of the runtime or
// another library whose version the runtime does not control.
constexpr const char* kAllowedBases[] = {"libc",     "libm",    "libdl",          "libpthread",       "librt",
                                         "libgcc_s", "libstdc++", "ld-linux-x86-64", "ld-linux-aarch64",
                                         "libvulkan"};

}  // namespace

bool IsAllowedDriverDependency(const std::string& soname) {
  if (soname.rfind("libLLVM.so.19", 0) == 0 || soname.rfind("libLLVM-19.so", 0) == 0) return true;
  const size_t so = soname.find(".so");
  if (so == std::string::npos) return false;
  const size_t after = so + 3;
  if (after != soname.size() && soname[after] != '.') return false;
  const std::string base = soname.substr(0, so);
  for (const char* allowed : kAllowedBases) {
    if (base == allowed) return true;
  }
  return false;
}

const char* DriverDependencyAllowList() {
  return "libc, libm, libdl, libpthread, librt, libgcc_s, libstdc++, ld-linux-x86-64, ld-linux-aarch64, "
         "libvulkan, libLLVM 19";
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
// entries appended since (module_reduction_supported in 1.1) then stay zero, i.e. NULL, in the runtime's copy.
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
#define KILN_ENTRY(name) {#name, offsetof(KilnHalDriver, name)}
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
  return v != nullptr && (std::strcmp(v, "1") == 0 || std::strcmp(v, "true") == 0 || std::strcmp(v, "yes") == 0);
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
  if (kiln_cpu_driver_query(KILN_HAL_VERSION_MAJOR, KILN_HAL_VERSION_MINOR, &d->services_, &d->table_) != kKilnOk) {
    *error = "the CPU driver refused to start";
    return nullptr;
  }
  d->ready_ = true;
  d->name_ = d->table_.name ? d->table_.name : "kiln-cpu";
  d->has_batches_ = true;
  return d;
}

std::shared_ptr<HalDriver> HalDriver::Load(const std::string& path, const DriverOptions& options, DecisionLog* log,
                                           std::string* refusal) {
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
    log->Add(KILN_DECISION_DRIVER, file,
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
  std::memset(reinterpret_cast<uint8_t*>(&table) + table.struct_size, 0, sizeof(KilnHalDriver) - table.struct_size);
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
  const std::string version = table.version != nullptr ? std::string(table.version, strnlen(table.version, 64)) : "?";
  std::string note = "driver " + file + " loaded: " + d->name_ + " " + version + ", HAL " + driver_version +
                     " (runtime " + runtime_version + ")";
  if (table.hal_minor > KILN_HAL_VERSION_MINOR) note += "; its newer minor is accepted";
  if (!d->has_batches_) note += "; no batches (" + no_batches + " NULL): launches run one at a time";
  log->Add(KILN_DECISION_DRIVER, file, note);
  return d;
}

HalDriver::~HalDriver() {
  if (ready_ && table_.shutdown != nullptr) table_.shutdown(table_.instance);
}

std::string HalDriver::TakeErrors() {
  std::lock_guard<std::mutex> lock(errors_mutex_);
  std::string out;
  out.swap(errors_);
  return out;
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
  if (d->errors_.size() < 4096) {
    d->errors_ += (d->errors_.empty() ? "" : "; ") + std::string(message) + " (" + StatusName(status) + ")";
  }
}

const char* HalDriver::GetConfig(void* self, const char* key) {
  auto* d = static_cast<HalDriver*>(self);
  if (key != nullptr && std::strcmp(key, "cpu.threads") == 0 && !d->threads_config_.empty()) {
    return d->threads_config_.c_str();
  }
  return nullptr;  // the driver's defaults (and its environment variables) apply
}

void HalDriver::SendToClient(void* self, void* script_user_data, int32_t command, const void* data, size_t size) {
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
  if (dladdr(reinterpret_cast<void*>(&RunningFromBuildTree), &info) == 0 || info.dli_fname == nullptr) return false;
  char self[PATH_MAX], build[PATH_MAX];
  if (realpath(info.dli_fname, self) == nullptr || realpath(root.c_str(), build) == nullptr) return false;
  const std::string s = self, b = std::string(build) + "/";
  return s.compare(0, b.size(), b) == 0;
}

}  // namespace

std::vector<std::string> FindDriverFiles(const DriverOptions& options, DecisionLog* log) {
  std::vector<std::string> files;
  auto add_path = [&](const std::string& path, const std::string& source) -> bool {
    if (IsDirectory(path)) {
      std::vector<std::string> found = LibrariesIn(path);
      std::string names;
      for (const std::string& f : found) names += (names.empty() ? "" : ", ") + BaseName(f);
      log->Add(KILN_DECISION_POLICY, path,
               "searched " + source + " " + path + ": " + (found.empty() ? "no drivers" : names));
      files.insert(files.end(), found.begin(), found.end());
      return true;
    }
    if (IsRegularFile(path)) {
      log->Add(KILN_DECISION_POLICY, path, "driver " + path + " (from " + source + ")");
      files.push_back(path);
      return true;
    }
    log->Add(KILN_DECISION_POLICY, path, source + " " + path + " does not exist");
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
  const std::string install_dir = KILN_DRIVER_INSTALL_DIR;
  if (!install_dir.empty()) add_path(install_dir, "the default driver directory");
  if (RunningFromBuildTree()) {
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

// ---------------------------------------------------------------------------------------------------------
// DeviceSet

namespace {

const char* DeviceTypeName(uint32_t type) {
  switch (type) {
    case kKilnHalDeviceCpu: return "cpu";
    case kKilnHalDeviceGpu: return "gpu";
    case kKilnHalDeviceAccelerator: return "accelerator";
    default: return "other";
  }
}

// Lower is better under prefer-gpu.
int DeviceRank(uint32_t type) {
  switch (type) {
    case kKilnHalDeviceGpu: return 0;
    case kKilnHalDeviceAccelerator: return 1;
    case kKilnHalDeviceCpu: return 3;
    default: return 2;
  }
}

std::string DescribeDevice(const KernelDevice& device) {
  const KilnHalDeviceInfo& i = device.info();
  const KilnHalDeviceLimits& l = i.limits;
  char buf[768];
  std::snprintf(buf, sizeof buf,
                "'%s' (%s, vendor '%s'), %.1f GiB, kernel level %s, payloads '%s'%s%s%s; limits: %u inputs, "
                "dims %ux%ux%u, %u threads, buffers up to %llu bytes aligned to %u",
                i.name, DeviceTypeName(i.type), i.vendor, static_cast<double>(i.memory_bytes) / (1u << 30),
                LevelString(i.max_kernel_level).c_str(), i.payload_tags,
                (i.flags & KILN_HAL_DEVICE_HOST_SHARED_MEMORY) ? ", host-shared memory" : "",
                (i.flags & KILN_HAL_DEVICE_MAPPABLE_BUFFERS) ? ", mappable buffers" : "",
                (i.flags & KILN_HAL_DEVICE_ASYNC_BATCHES) ? ", async batches" : "", l.max_inputs, l.max_dim_x,
                l.max_dim_y, l.max_dim_z, l.max_threads, static_cast<unsigned long long>(l.max_buffer_size),
                l.buffer_alignment);
  return buf;
}

}  // namespace

std::unique_ptr<DeviceSet> DeviceSet::Open(const DriverOptions& options, DecisionLog* log, KilnStatus* status) {
  *status = kKilnOk;
  std::unique_ptr<DeviceSet> set(new DeviceSet());
  set->options_ = options;
  set->log_ = log;
  std::string error;
  std::shared_ptr<HalDriver> cpu_driver = HalDriver::OpenBuiltinCpu(options, &error);
  if (cpu_driver != nullptr) set->cpu_ = KernelDevice::Open(cpu_driver, 0, &error);
  if (set->cpu_ == nullptr) {
    Report(options.reporter, options.reporter_user_data, "%s", error.c_str());
    log->Add(KILN_DECISION_DEVICE, "kiln-cpu", "the built-in CPU driver cannot be opened: " + error);
    *status = kKilnError;
    return nullptr;
  }
  log->Add(KILN_DECISION_DEVICE, set->cpu_->label(),
           "device 0 of kiln-cpu (built in): " + DescribeDevice(*set->cpu_));
  const std::string policy = PolicyName(options.policy);
  if (options.policy == DevicePolicy::kCpuOnly) {
    log->Add(KILN_DECISION_POLICY, "policy",
             "policy cpu-only: no driver is searched; kernels run on " + set->cpu_->label());
    return set;
  }

  struct Candidate {
    std::unique_ptr<KernelDevice> device;
    size_t order;
  };
  std::vector<Candidate> candidates;
  for (const std::string& path : FindDriverFiles(options, log)) {
    std::string refusal;
    std::shared_ptr<HalDriver> driver = HalDriver::Load(path, options, log, &refusal);
    if (driver == nullptr) {
      log->Add(KILN_DECISION_DRIVER, BaseName(path), refusal);
      continue;
    }
    uint32_t count = 0;
    if (driver->table().device_count(driver->table().instance, &count) != kKilnOk) {
      const std::string errors = driver->TakeErrors();
      log->Add(KILN_DECISION_DEVICE, driver->name(),
               "driver " + driver->file() + ": device_count failed" + (errors.empty() ? "" : ": " + errors));
      continue;
    }
    if (count == 0) log->Add(KILN_DECISION_DEVICE, driver->name(), "driver " + driver->file() + " has no devices");
    count = std::min<uint32_t>(count, 64);  // a driver claiming more is wrong; 64 is plenty to choose from
    for (uint32_t i = 0; i < count; ++i) {
      std::string why;
      std::unique_ptr<KernelDevice> device = KernelDevice::Open(driver, i, &why);
      const std::string subject = driver->name() + " device " + std::to_string(i);
      if (device == nullptr) {
        log->Add(KILN_DECISION_DEVICE, subject, "device " + std::to_string(i) + " of " + driver->name() + " (" +
                                                    driver->file() + ") refused: " + why);
        continue;
      }
      log->Add(KILN_DECISION_DEVICE, device->label(),
               "device " + std::to_string(i) + " of " + driver->name() + " (" + driver->file() +
                   "): " + DescribeDevice(*device));
      candidates.push_back({std::move(device), candidates.size()});
    }
  }

  int best = -1;
  for (size_t c = 0; c < candidates.size(); ++c) {
    const uint32_t type = candidates[c].device->info().type;
    if (options.policy == DevicePolicy::kAuto && type != kKilnHalDeviceGpu && type != kKilnHalDeviceAccelerator) {
      log->Add(KILN_DECISION_DEVICE, candidates[c].device->label(),
               candidates[c].device->label() + " not chosen: policy auto uses only GPU or accelerator devices, "
               "this one is a " + DeviceTypeName(type) + " (use prefer-gpu to run there)");
      continue;
    }
    if (best < 0 || DeviceRank(type) < DeviceRank(candidates[best].device->info().type)) best = static_cast<int>(c);
  }
  if (best < 0) {
    if (options.policy == DevicePolicy::kGpuOnly) {
      const std::string msg = "policy gpu-only: no driver device can be used (see the driver and device "
                              "decisions); refusing to run on the CPU";
      log->Add(KILN_DECISION_POLICY, "policy", msg);
      // The context or interpreter is not created, so its log cannot be read: the reasons go to the reporter.
      for (size_t i = 0; i < log->size(); ++i) {
        const Decision* d = log->Get(i);
        if (d->kind == KILN_DECISION_DRIVER || d->kind == KILN_DECISION_DEVICE || d->kind == KILN_DECISION_POLICY) {
          if (d->message.find("refused") != std::string::npos || d->message.find("not chosen") != std::string::npos ||
              d->message.find("does not exist") != std::string::npos) {
            Report(options.reporter, options.reporter_user_data, "%s", d->message.c_str());
          }
        }
      }
      Report(options.reporter, options.reporter_user_data, "%s", msg.c_str());
      *status = kKilnUnsupported;
      return nullptr;
    }
    log->Add(KILN_DECISION_POLICY, "policy",
             "policy " + policy + ": " + (candidates.empty() ? "no driver device loaded" : "no suitable device") +
                 "; kernels run on " + set->cpu_->label());
    return set;
  }
  for (size_t c = 0; c < candidates.size(); ++c) {
    if (static_cast<int>(c) != best && candidates[c].device != nullptr &&
        (options.policy != DevicePolicy::kAuto || DeviceRank(candidates[c].device->info().type) <= 1)) {
      log->Add(KILN_DECISION_DEVICE, candidates[c].device->label(),
               candidates[c].device->label() + " not chosen: " + candidates[best].device->label() +
                   " ranks higher (gpu, accelerator, other, cpu; then search order)");
    }
  }
  set->accelerator_ = std::move(candidates[best].device);
  log->Add(KILN_DECISION_POLICY, "policy",
           "policy " + policy + ": kernels run on " + set->accelerator_->label() +
               " where it supports them, otherwise on " + set->cpu_->label());
  return set;
}

DeviceSet::~DeviceSet() = default;

const ModulePlacement& DeviceSet::Place(const std::shared_ptr<const KernelModule>& module) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = placements_.find(module.get());
  if (it != placements_.end()) return it->second.placement;
  Placed& placed = placements_[module.get()];
  placed.module = module;
  const KernelModuleDesc& desc = module->desc();
  const KilnHalModuleDesc& hal = module->hal_desc();
  ModulePlacement& p = placed.placement;
  p.kernel_on_accelerator.assign(desc.kernels.size(), false);
  p.reduction_on_accelerator.assign(desc.reductions.size(), false);
  p.kernel_reason.assign(desc.kernels.size(), "");
  const std::string mod = ModuleLabel(*module);
  KernelDevice* accel = accelerator();
  auto record_all_cpu = [&](const std::string& reason) {
    for (size_t i = 0; i < desc.kernels.size(); ++i) {
      const KernelDesc& k = desc.kernels[i];
      p.kernel_reason[i] = reason;
      log_->Add(KILN_DECISION_KERNEL, mod + ": kernel '" + k.name + "'",
                "kernel " + k.name + " (" + mod + ") runs on " + cpu_->label() + ": " + reason);
    }
  };
  if (accel == nullptr) {
    record_all_cpu(accelerator_failed_ ? "the driver device failed earlier" : "no driver device in use");
    return p;
  }
  const uint32_t device_level = accel->info().max_kernel_level;
  const std::string whole = ModuleLevelRefusal(hal.hal_level, device_level);
  if (!whole.empty()) {
    log_->Add(KILN_DECISION_MODULE, mod,
              "module " + mod + " runs wholly on CPU: " + whole + " (" + accel->label() + ")");
    record_all_cpu("its module runs wholly on CPU");
    return p;
  }
  KilnHalModule* handle = accel->LoadModule(module);
  if (handle == nullptr) {
    const std::string errors = accel->hal()->TakeErrors();
    log_->Add(KILN_DECISION_MODULE, mod,
              "module " + mod + " runs wholly on CPU: " + accel->label() + " could not load it" +
                  (errors.empty() ? "" : ": " + errors));
    record_all_cpu("its module runs wholly on CPU");
    return p;
  }
  const KilnHalDriver& d = accel->driver();
  for (size_t i = 0; i < desc.kernels.size(); ++i) {
    const KernelDesc& k = desc.kernels[i];
    const std::string subject = mod + ": kernel '" + k.name + "'";
    std::string reason = KernelLevelRefusal(hal.kernels[i].kernel_level, device_level);
    if (reason.empty() && d.module_kernel_supported != nullptr) {
      bool supported = true;
      const char* why = nullptr;
      if (d.module_kernel_supported(handle, static_cast<uint32_t>(i), &supported, &why) != kKilnOk) {
        const std::string errors = accel->hal()->TakeErrors();
        reason = accel->label() + ": module_kernel_supported failed" + (errors.empty() ? "" : ": " + errors);
      } else if (!supported) {
        reason = accel->label() + " cannot run it: " + (why ? std::string(why, strnlen(why, 1024)) : "no reason given");
      }
    }
    if (reason.empty()) {
      p.kernel_on_accelerator[i] = true;
      log_->Add(KILN_DECISION_KERNEL, subject, "kernel " + k.name + " (" + mod + ") runs on " + accel->label());
    } else {
      p.kernel_reason[i] = reason;
      log_->Add(KILN_DECISION_KERNEL, subject, "kernel " + k.name + " (" + mod + ") runs on CPU: " + reason);
    }
  }
  for (size_t i = 0; i < desc.reductions.size(); ++i) {
    const ReductionDesc& r = desc.reductions[i];
    const std::string subject = mod + ": reduction '" + r.name + "'";
    std::string reason = KernelLevelRefusal(hal.reductions[i].kernel_level, device_level);
    if (reason.empty() && d.launch_reduce == nullptr) {
      reason = accel->label() + " has no reductions (launch_reduce NULL)";
    }
    // HAL 1.1: a driver with reductions may still be unable to run this one (no GPU form, a device limit).
    if (reason.empty() && d.module_reduction_supported != nullptr) {
      bool supported = true;
      const char* why = nullptr;
      if (d.module_reduction_supported(handle, static_cast<uint32_t>(i), &supported, &why) != kKilnOk) {
        const std::string errors = accel->hal()->TakeErrors();
        reason = accel->label() + ": module_reduction_supported failed" + (errors.empty() ? "" : ": " + errors);
      } else if (!supported) {
        reason = accel->label() + " cannot run it: " + (why ? std::string(why, strnlen(why, 1024)) : "no reason given");
      }
    }
    if (reason.empty()) {
      p.reduction_on_accelerator[i] = true;
      log_->Add(KILN_DECISION_KERNEL, subject, "reduction " + r.name + " (" + mod + ") runs on " + accel->label());
    } else {
      log_->Add(KILN_DECISION_KERNEL, subject, "reduction " + r.name + " (" + mod + ") runs on CPU: " + reason);
    }
  }
  return p;
}

void DeviceSet::AcceleratorFailed(const std::string& what, KilnStatus status, const std::string& errors) {
  if (accelerator_ == nullptr) return;
  const bool first = !accelerator_failed_.exchange(true);
  const std::string message = accelerator_->label() + " failed " + what + " (" + StatusName(status) + ")" +
                              (errors.empty() ? "" : ": " + errors) + "; redone on " + cpu_->label() +
                              (first ? ", and all later work of this interpreter or context runs there" : "");
  log_->Add(KILN_DECISION_FALLBACK, what, message);
  Report(options_.reporter, options_.reporter_user_data, "%s", message.c_str());
}

}  // namespace kiln

extern "C" {

const char* KilnDevicePolicyName(KilnDevicePolicy policy) {
  // C callers may pass any int: read it as one (an out-of-range enum load is undefined in C++).
  int value;
  std::memcpy(&value, &policy, sizeof value);
  switch (value) {
    case KILN_DEVICE_AUTO: return "auto";
    case KILN_DEVICE_CPU_ONLY: return "cpu-only";
    case KILN_DEVICE_PREFER_GPU: return "prefer-gpu";
    case KILN_DEVICE_GPU_ONLY: return "gpu-only";
  }
  return "unknown";
}

const char* KilnDecisionKindName(KilnDecisionKind kind) {
  int value;
  std::memcpy(&value, &kind, sizeof value);
  switch (value) {
    case KILN_DECISION_POLICY: return "policy";
    case KILN_DECISION_DRIVER: return "driver";
    case KILN_DECISION_DEVICE: return "device";
    case KILN_DECISION_MODULE: return "module";
    case KILN_DECISION_KERNEL: return "kernel";
    case KILN_DECISION_NODE: return "node";
    case KILN_DECISION_PARTITION: return "partition";
    case KILN_DECISION_FALLBACK: return "fallback";
  }
  return "unknown";
}

}  // extern "C"
