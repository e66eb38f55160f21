// ELF checks on a driver library, made before anything of it runs: its DT_NEEDED names against the allow-list
// of docs/hal.md.
#ifndef KILN_RUNTIME_DEVICE_DRIVER_ELF_H_
#define KILN_RUNTIME_DEVICE_DRIVER_ELF_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

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

}  // namespace kiln

#endif  // KILN_RUNTIME_DEVICE_DRIVER_ELF_H_
