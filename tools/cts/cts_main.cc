// kiln-cts --driver PATH.so [--kmods DIR] [--summary FILE] [--config KEY=VALUE]... [gtest flags]
//
// Runs the HAL conformance suite against a driver, comparing every result with the built-in CPU driver, and
// ends with a summary a vendor can attach to a bug report. Exits non-zero when any test fails.
#include <limits.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "tools/cts/cts.h"

// Where the suite's modules are, relative to the folder of the kiln-cts executable: the same in an
// installation (bin/kiln-cts, share/kiln/cts) and in the build tree, which stages that layout
// (tools/cts/CMakeLists.txt).
#ifndef KILN_CTS_KMOD_RELATIVE_DIR
#define KILN_CTS_KMOD_RELATIVE_DIR "../share/kiln/cts"
#endif
#ifndef KILN_CTS_VERSION
#define KILN_CTS_VERSION "0"
#endif

namespace kiln {
namespace cts {
namespace {

const char kUsage[] =
    "usage: kiln-cts --driver PATH.so|builtin:cpu [--kmods DIR] [--summary FILE] [--config KEY=VALUE]...\n"
    "                [--gtest_filter=...] [other GoogleTest flags]\n"
    "  --driver      the driver to test: a shared library exporting kiln_driver_query, or builtin:cpu\n"
    "  --kmods       the folder of the suite's compiled kernel modules (default: $KILN_CTS_KMODS, else\n"
    "                " KILN_CTS_KMOD_RELATIVE_DIR
    " beside the kiln-cts executable)\n"
    "  --summary     also write the summary to FILE\n"
    "  --config      a configuration value both drivers read through KilnHalServices.get_config\n"
    "                (default: cache_dir=off, so the run leaves nothing behind)\n";

// The folder of the suite's modules when --kmods does not name one: KILN_CTS_KMODS, else
// KILN_CTS_KMOD_RELATIVE_DIR from the folder of this executable (found through /proc/self/exe, which resolves
// symbolic links, so a kiln-cts linked into another bin/ still finds its installation's modules).
std::string DefaultKmodDir(const char* argv0) {
  if (const char* env = std::getenv("KILN_CTS_KMODS"); env != nullptr && *env != '\0') return env;
  char path[PATH_MAX];
  std::string exe;
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n > 0) {
    exe.assign(path, static_cast<size_t>(n));
  } else if (realpath(argv0, path) != nullptr) {
    exe = path;
  } else {
    exe = argv0;
  }
  const size_t slash = exe.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : exe.substr(0, slash);
  return dir + "/" + KILN_CTS_KMOD_RELATIVE_DIR;
}

// The area a test belongs to: its suite name without the instantiation prefix ("device0/Buffers" -> Buffers).
std::string AreaOf(const ::testing::TestInfo& test) {
  std::string suite = test.test_suite_name();
  size_t slash = suite.find('/');
  return slash == std::string::npos ? suite : suite.substr(slash + 1);
}

// One line for the summary: the assertion's own explanation where GoogleTest wrapped it ("Actual: false
// (...)"), else the first lines joined.
std::string OneLine(const std::string& text, size_t max = 240) {
  std::string line;
  const size_t actual = text.find("Actual: false (");
  if (actual != std::string::npos) {
    line = text.substr(actual + 15);
    const size_t end = line.find("\nExpected: true");
    line = line.substr(0, end == std::string::npos ? line.size() : end);
    if (!line.empty() && line.back() == ')') line.pop_back();
  } else {
    line = text;
  }
  std::string collapsed;  // one line, single spaces
  for (char c : line) {
    if (c == '\n' || c == '\t') c = ' ';
    if (c != ' ' || (!collapsed.empty() && collapsed.back() != ' ')) collapsed += c;
  }
  line = collapsed;
  return line.size() > max ? line.substr(0, max) + "..." : line;
}

struct AreaResult {
  int passed = 0, failed = 0, skipped = 0;
  std::vector<std::string> notes;                                // failures, with reasons
  std::map<std::string, std::vector<std::string>> skip_reasons;  // reason -> the tests skipped for it
};

const char* DeviceTypeName(uint32_t type) {
  switch (type) {
    case kKilnHalDeviceCpu:
      return "cpu";
    case kKilnHalDeviceGpu:
      return "gpu";
    case kKilnHalDeviceAccelerator:
      return "accelerator";
    case kKilnHalDeviceOther:
      return "other";
  }
  return "unknown";
}

std::string LevelText(uint32_t level) {
  return std::to_string(KILN_HAL_LEVEL_MAJOR(level)) + "." + std::to_string(KILN_HAL_LEVEL_MINOR(level));
}

std::string DescribeDevices(Driver& driver) {
  std::ostringstream out;
  if (!driver.usable()) return "  (no devices: " + driver.problem() + ")\n";
  for (uint32_t i = 0; i < driver.device_count(); ++i) {
    KilnHalDeviceInfo info{};
    info.struct_size = sizeof(info);
    if (driver.hal().device_get_info(driver.hal().instance, i, &info) != kKilnOk) {
      out << "  device " << i << ": device_get_info failed: " << driver.services().LastError() << "\n";
      continue;
    }
    info.name[sizeof(info.name) - 1] = info.vendor[sizeof(info.vendor) - 1] = 0;
    info.payload_tags[sizeof(info.payload_tags) - 1] = 0;
    out << "  device " << i << ": \"" << info.name << "\", vendor \"" << info.vendor << "\", "
        << DeviceTypeName(info.type) << ", " << (info.memory_bytes >> 20) << " MiB, kernel level up to "
        << LevelText(info.max_kernel_level) << ", payloads \"" << info.payload_tags << "\", flags"
        << ((info.flags & KILN_HAL_DEVICE_HOST_SHARED_MEMORY) ? " host-shared" : "")
        << ((info.flags & KILN_HAL_DEVICE_MAPPABLE_BUFFERS) ? " mappable" : "")
        << ((info.flags & KILN_HAL_DEVICE_ASYNC_BATCHES) ? " async-batches" : "") << "\n"
        << "    limits: inputs " << info.limits.max_inputs << ", dims " << info.limits.max_dim_x << "x"
        << info.limits.max_dim_y << "x" << info.limits.max_dim_z << ", threads " << info.limits.max_threads
        << ", buffer " << info.limits.max_buffer_size << " bytes aligned to " << info.limits.buffer_alignment
        << "\n";
  }
  return out.str();
}

// Collects results per area as tests end, and renders the summary.
class SummaryListener : public ::testing::EmptyTestEventListener {
 public:
  void OnTestEnd(const ::testing::TestInfo& test) override {
    const ::testing::TestResult& result = *test.result();
    AreaResult& area = areas_[AreaOf(test)];
    const std::string name = std::string(test.test_suite_name()) + "." + test.name();
    if (result.Skipped()) {
      ++area.skipped;
      std::string reason;
      for (int i = 0; i < result.total_part_count(); ++i) {
        if (result.GetTestPartResult(i).skipped()) reason = result.GetTestPartResult(i).message();
      }
      area.skip_reasons[OneLine(reason)].push_back(name);
    } else if (result.Failed()) {
      ++area.failed;
      for (int i = 0; i < result.total_part_count(); ++i) {
        const ::testing::TestPartResult& part = result.GetTestPartResult(i);
        if (part.failed()) {
          area.notes.push_back("FAILED " + name + ": " + OneLine(part.message()));
          break;
        }
      }
    } else {
      ++area.passed;
    }
  }

  std::string Render(Driver& dut, Driver& reference) {
    std::ostringstream out;
    int passed = 0, failed = 0, skipped = 0;
    for (const auto& [name, area] : areas_) {
      passed += area.passed;
      failed += area.failed;
      skipped += area.skipped;
    }
    out << "\n==================== Kiln HAL conformance summary ====================\n"
        << "kiln-cts " << KILN_CTS_VERSION << ", runtime HAL " << KILN_HAL_VERSION_MAJOR << "."
        << KILN_HAL_VERSION_MINOR << ", kernel ABI " << KILN_KERNEL_ABI_VERSION << ", kernel HAL level "
        << KILN_KERNEL_HAL_LEVEL_MAJOR << "." << KILN_KERNEL_HAL_LEVEL_MINOR << "\n"
        << "driver:    " << dut.spec() << "\n"
        << "           " << dut.Describe() << (dut.usable() ? "" : "  -- NOT USABLE: " + dut.problem())
        << "\n"
        << DescribeDevices(dut) << "reference: " << reference.Describe() << " (built-in CPU driver)\n"
        << "\narea              passed  failed  skipped\n";
    for (const auto& [name, area] : areas_) {
      char line[128];
      snprintf(line, sizeof(line), "%-16s %7d %7d %8d%s\n", name.c_str(), area.passed, area.failed,
               area.skipped, area.failed ? "   <-- FAIL" : "");
      out << line;
    }
    bool any_notes = false;
    for (const auto& [name, area] : areas_) {
      std::vector<std::string> notes = area.notes;
      for (const auto& [reason, tests] : area.skip_reasons) {
        notes.push_back(tests.size() == 1 ? "skipped " + tests[0] + ": " + reason
                                          : "skipped " + std::to_string(tests.size()) + " tests (" +
                                                tests[0] + ", ...): " + reason);
      }
      for (const std::string& note : notes) {
        if (!any_notes) out << "\ndetails:\n";
        any_notes = true;
        out << "  [" << name << "] " << note << "\n";
      }
    }
    // A driver may decline kernels (the runtime runs them on the CPU), but one that runs none of the suite's
    // kernels (LaunchTypes: every element type, compared with the reference) has shown nothing: it does not
    // pass. A run filtered to other areas is not judged on this.
    int launched = 0, launch_tests = 0;
    if (auto it = areas_.find("LaunchTypes"); it != areas_.end()) {
      launched = it->second.passed;
      launch_tests = it->second.passed + it->second.failed + it->second.skipped;
    }
    const bool ran_kernels = launch_tests == 0 || launched > 0;
    if (!ran_kernels && dut.usable()) {
      out << "\nno kernel ran on the driver: it declined every kernel of LaunchTypes, so nothing was "
             "compared "
             "with the reference\n";
    }
    out << "\nRESULT: " << (failed == 0 && dut.usable() && ran_kernels ? "PASS" : "FAIL") << " (" << passed
        << " passed, " << failed << " failed, " << skipped << " skipped)\n"
        << "======================================================================\n";
    return out.str();
  }

 private:
  std::map<std::string, AreaResult> areas_;
};

}  // namespace
}  // namespace cts
}  // namespace kiln

int main(int argc, char** argv) {
  using namespace kiln::cts;  // NOLINT
  Options& options = GetOptions();
  options.kmod_dir = DefaultKmodDir(argv[0]);
  options.config["cache_dir"] = "off";
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      const size_t n = strlen(flag);
      if (arg.compare(0, n, flag) == 0 && arg.size() > n && arg[n] == '=') return argv[i] + n + 1;
      if (arg == flag && i + 1 < argc) return argv[++i];
      return nullptr;
    };
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (const char* v = value("--driver")) {
      options.driver = v;
    } else if (const char* v = value("--kmods")) {
      options.kmod_dir = v;
    } else if (const char* v = value("--summary")) {
      options.summary_path = v;
    } else if (const char* v = value("--config")) {
      std::string kv = v;
      size_t eq = kv.find('=');
      if (eq == std::string::npos) {
        std::cerr << "kiln-cts: --config expects KEY=VALUE, got \"" << kv << "\"\n" << kUsage;
        return 2;
      }
      options.config[kv.substr(0, eq)] = kv.substr(eq + 1);
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (options.driver.empty()) {
    std::cerr << "kiln-cts: --driver is required\n" << kUsage;
    return 2;
  }
  // Every module of the suite must be there before any test runs: a missing or unreadable one is one clear
  // error naming it, not a cascade of failures (or a crash in a test that takes its module for granted).
  for (const char* name : {"cts_types", "cts_shapes", "cts_script", "cts_reduce", "cts_foreach"}) {
    std::string error;
    if (ModuleFile::Open(name, &error) == nullptr) {
      std::cerr << "kiln-cts: " << error << "\n";
      return 1;
    }
  }

  // Before InitGoogleTest: the device-parameterised suites instantiate over the driver's devices.
  SetDrivers(Driver::Load(options.driver, options.config), Driver::Load("builtin:cpu", options.config));
  if (!Dut().usable()) std::cerr << "kiln-cts: " << Dut().problem() << "\n";

  int gtest_argc = static_cast<int>(rest.size());
  ::testing::InitGoogleTest(&gtest_argc, rest.data());
  auto* summary = new SummaryListener;  // owned by GoogleTest's listener list
  ::testing::UnitTest::GetInstance()->listeners().Append(summary);
  const int failed = RUN_ALL_TESTS();
  const std::string text = summary->Render(Dut(), Reference());
  ShutdownDrivers();
  std::cout << text << std::flush;
  if (!options.summary_path.empty()) {
    std::ofstream out(options.summary_path);
    out << text;
    if (!out) std::cerr << "kiln-cts: cannot write " << options.summary_path << "\n";
  }
  return failed != 0 || !Dut().usable() || text.find("\nRESULT: PASS") == std::string::npos ? 1 : 0;
}
