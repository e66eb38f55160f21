// The loader's checks that run before any driver code: the ELF DT_NEEDED reader, the allow-list, and the
// version rules, on real shared libraries and on damaged copies of them.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <random>

#include "kiln/hal.h"
#include "runtime/device/decision_log.h"
#include "runtime/device/driver_elf.h"
#include "runtime/device/hal_driver.h"

namespace kiln {
namespace {

std::string DriverPath(const std::string& variant) {
  return std::string(KILN_TEST_DRIVER_DIR) + "/libkiln_test_" + variant + ".so";
}

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool Contains(const std::vector<std::string>& list, const std::string& prefix) {
  for (const std::string& s : list) {
    if (s.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

TEST(Elf, ReadsTheNeededLibrariesOfARealDriver) {
  ElfDependencies deps;
  std::string error;
  ASSERT_TRUE(ReadElfDependenciesFromFile(DriverPath("good"), &deps, &error)) << error;
  EXPECT_TRUE(Contains(deps.needed, "libLLVM")) << "the wrapped CPU driver needs LLVM";
  EXPECT_TRUE(Contains(deps.needed, "libc.so"));
  for (const std::string& n : deps.needed) EXPECT_TRUE(IsAllowedDriverDependency(n)) << n;

  ASSERT_TRUE(ReadElfDependenciesFromFile(DriverPath("disallowed_dependency"), &deps, &error)) << error;
  EXPECT_TRUE(Contains(deps.needed, "libkiln_test_dummy_dep.so"));
}

TEST(Elf, RefusesWhatIsNotA64BitSharedLibrary) {
  std::string error;
  ElfDependencies deps;
  const std::string text = "#!/bin/sh\necho not a driver\n";
  EXPECT_FALSE(ReadElfDependencies(reinterpret_cast<const uint8_t*>(text.data()), text.size(), &deps, &error));
  EXPECT_EQ(error, "not an ELF file");
  std::vector<uint8_t> bytes = ReadBytes(DriverPath("good"));
  ASSERT_GT(bytes.size(), 64u);
  bytes[4] = 1;  // ELFCLASS32
  EXPECT_FALSE(ReadElfDependencies(bytes.data(), bytes.size(), &deps, &error));
  EXPECT_EQ(error, "not a 64-bit little-endian ELF file");
  bytes = ReadBytes(DriverPath("good"));
  bytes[16] = 2;  // ET_EXEC
  EXPECT_FALSE(ReadElfDependencies(bytes.data(), bytes.size(), &deps, &error));
  EXPECT_NE(error.find("not a shared library"), std::string::npos) << error;
  bytes = ReadBytes(DriverPath("good"));
  bytes[18] = 40;  // EM_ARM
  EXPECT_FALSE(ReadElfDependencies(bytes.data(), bytes.size(), &deps, &error));
  EXPECT_NE(error.find("built for ELF machine 40"), std::string::npos) << error;
  EXPECT_FALSE(ReadElfDependenciesFromFile(std::string(KILN_TEST_DRIVER_DIR) + "/no-such.so", &deps, &error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
}

TEST(Elf, TruncatedAndDamagedFilesAreRefusedWithoutACrash) {
  const std::vector<uint8_t> original = ReadBytes(DriverPath("good"));
  ElfDependencies deps;
  std::string error;
  // Every prefix of the headers, then prefixes at page steps: each is either read fully or refused.
  for (size_t n = 0; n < original.size(); n += (n < 8192 ? 1 : 4093)) {
    std::vector<uint8_t> prefix(original.begin(), original.begin() + n);  // its own allocation: ASan sees overreads
    if (!ReadElfDependencies(prefix.data(), prefix.size(), &deps, &error)) {
      EXPECT_FALSE(error.empty()) << n;
    }
  }
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    std::vector<uint8_t> bytes(original.begin(), original.begin() + std::min<size_t>(original.size(), 16384));
    for (int k = 0; k < 8; ++k) bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
    if (!ReadElfDependencies(bytes.data(), bytes.size(), &deps, &error)) {
      EXPECT_FALSE(error.empty());
    }
  }
}

TEST(AllowList, NamesWhatADriverMayNeed) {
  for (const char* ok : {"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", "libgcc_s.so.1",
                         "libstdc++.so.6", "ld-linux-x86-64.so.2", "libvulkan.so.1", "libLLVM.so.19.1",
                         "libLLVM-19.so"}) {
    EXPECT_TRUE(IsAllowedDriverDependency(ok)) << ok;
  }
  for (const char* bad : {"libz.so.1", "libkiln.so.0", "libLLVM.so.18.1", "libLLVM-18.so", "libcx.so", "libc",
                          "libvulkan_radeon.so", "libm.so6"}) {
    EXPECT_FALSE(IsAllowedDriverDependency(bad)) << bad;
  }
}

TEST(VersionRules, KernelsAndModules) {
  // A kernel needing a newer minor than the device runs on the CPU; an older or equal one runs on the device.
  EXPECT_EQ(KernelLevelRefusal(KILN_HAL_LEVEL(1, 2), KILN_HAL_LEVEL(1, 1)), "needs HAL 1.2, driver has 1.1");
  EXPECT_EQ(KernelLevelRefusal(KILN_HAL_LEVEL(1, 1), KILN_HAL_LEVEL(1, 1)), "");
  EXPECT_EQ(KernelLevelRefusal(KILN_HAL_LEVEL(1, 0), KILN_HAL_LEVEL(1, 3)), "");
  // A module of another major runs wholly on the CPU, whichever way round.
  EXPECT_EQ(ModuleLevelRefusal(KILN_HAL_LEVEL(2, 0), KILN_HAL_LEVEL(1, 3)),
            "needs HAL level 2.0, driver has 1.3 (a different major)");
  EXPECT_NE(ModuleLevelRefusal(KILN_HAL_LEVEL(1, 0), KILN_HAL_LEVEL(2, 0)), "");
  EXPECT_EQ(ModuleLevelRefusal(KILN_HAL_LEVEL(1, 0), KILN_HAL_LEVEL(1, 7)), "");
  EXPECT_NE(KernelLevelRefusal(KILN_HAL_LEVEL(2, 0), KILN_HAL_LEVEL(1, 9)), "");
}

TEST(DecisionKinds, HaveNames) {
  EXPECT_STREQ(KilnDecisionKindName(kKilnDecisionFallback), "fallback");
  EXPECT_STREQ(KilnDecisionKindName(static_cast<KilnDecisionKind>(99)), "unknown");
  EXPECT_STREQ(KilnDevicePolicyName(kKilnDevicePreferGpu), "prefer-gpu");
}

}  // namespace
}  // namespace kiln
