// Reads a driver library's ELF dependencies before anything of it runs, and the allow-list they must meet.
#include "runtime/device/driver_elf.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace kiln {

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

}  // namespace kiln
