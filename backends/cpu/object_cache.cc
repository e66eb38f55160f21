// The CPU driver's on-disk object cache (object_cache.h): cache keys, and entries read back with header and
// payload checksums checked; written through backends/common/cache_file.h (temporary file, then rename).

#include "backends/cpu/object_cache.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "backends/common/cache_file.h"
#include "llvm/Support/xxhash.h"

namespace kiln {
namespace cpu {
namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'O', 'B', 'J', '\0'};
constexpr uint32_t kFormatVersion = 1;

// Fixed little-endian layout (the cache never leaves the machine that wrote it).
struct EntryHeader {
  char magic[8];
  uint32_t format_version;
  uint32_t header_size;
  char key[32];
  uint64_t payload_size;
  uint64_t payload_checksum;
  uint64_t header_checksum;  // of every byte before this field
};
static_assert(sizeof(EntryHeader) == 72, "the cache header layout is part of the format");

uint64_t HeaderChecksum(const EntryHeader& header) {
  return llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(&header),
                                                   offsetof(EntryHeader, header_checksum)));
}

uint64_t PayloadChecksum(const std::string& payload) { return llvm::xxh3_64bits(llvm::StringRef(payload)); }

// Appends `bytes` with its length in front, so that field boundaries cannot be confused.
void AppendField(std::string& out, const void* bytes, size_t size) {
  uint64_t length = size;
  out.append(reinterpret_cast<const char*>(&length), sizeof(length));
  out.append(static_cast<const char*>(bytes), size);
}
void AppendField(std::string& out, const std::string& text) { AppendField(out, text.data(), text.size()); }

}  // namespace

std::string ComputeCacheKey(const CacheKeyInputs& in) {
  std::string material;
  material.reserve(in.bitcode_size + 256);
  AppendField(material, "kiln-cpu-object-cache", 21);
  AppendField(material, in.bitcode, in.bitcode_size);
  AppendField(material, in.compile_options);
  AppendField(material, in.target_triple);
  AppendField(material, in.target_cpu);
  AppendField(material, in.target_features);
  AppendField(material, &in.kernel_abi_version, sizeof(in.kernel_abi_version));
  AppendField(material, &in.kernel_level, sizeof(in.kernel_level));
  AppendField(material, in.llvm_version);
  AppendField(material, in.driver_version);
  llvm::XXH128_hash_t hash = llvm::xxh3_128bits(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(material.data()), material.size()));
  char hex[33];
  snprintf(hex, sizeof(hex), "%016llx%016llx", static_cast<unsigned long long>(hash.high64),
           static_cast<unsigned long long>(hash.low64));
  return std::string(hex, 32);
}

namespace {

struct Found {
  uintptr_t address = 0;  // an address inside this driver's code
  std::string build_id;
  bool found = false;  // the object holding `address` was seen
};

// The GNU build ID note among an object's PT_NOTE segments, as lowercase hex; empty if it has none.
std::string BuildIdOf(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    if (phdr.p_type != PT_NOTE) continue;
    const uint8_t* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + phdr.p_vaddr);
    const uint8_t* end = p + phdr.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, p, sizeof note);
      const uint8_t* name = p + sizeof note;
      const uint8_t* desc = name + ((note.n_namesz + 3) & ~3u);
      const uint8_t* next = desc + ((note.n_descsz + 3) & ~3u);
      if (next > end) break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        std::string hex;
        char digits[3];
        for (uint32_t k = 0; k < note.n_descsz; ++k) {
          std::snprintf(digits, sizeof digits, "%02x", desc[k]);
          hex += digits;
        }
        return hex;
      }
      p = next;
    }
  }
  return "";
}

int FindBuildId(dl_phdr_info* info, size_t, void* data) {
  Found* found = static_cast<Found*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    const uintptr_t start = info->dlpi_addr + phdr.p_vaddr;
    if (phdr.p_type == PT_LOAD && found->address >= start && found->address < start + phdr.p_memsz) {
      found->found = true;
      found->build_id = BuildIdOf(info);
      return 1;  // stop
    }
  }
  return 0;
}

}  // namespace

const std::string& DriverCodeIdentity() {
  static const std::string identity = [] {
    Found found;
    found.address = reinterpret_cast<uintptr_t>(&ComputeCacheKey);
    dl_iterate_phdr(FindBuildId, &found);
    if (!found.build_id.empty()) return "build-id:" + found.build_id;
    Dl_info info;
    struct stat st;
    if (dladdr(reinterpret_cast<void*>(&ComputeCacheKey), &info) != 0 && info.dli_fname != nullptr &&
        stat(info.dli_fname, &st) == 0) {
      return "file:" + std::string(info.dli_fname) + ":" + std::to_string(st.st_size) + ":" +
             std::to_string(static_cast<long long>(st.st_mtime));
    }
    return std::string("unknown");
  }();
  return identity;
}

std::string ObjectCache::PathFor(const std::string& key) const { return dir_ + "/" + key + ".kobj"; }

ObjectCache::LoadResult ObjectCache::Load(const std::string& key, std::string* out_object,
                                          std::string* out_problem) const {
  if (!enabled()) return LoadResult::kMiss;
  const std::string path = PathFor(key);
  std::string contents;
  switch (driver::ReadWholeFile(path, &contents, out_problem)) {
    case driver::FileReadResult::kAbsent:
      return LoadResult::kMiss;
    case driver::FileReadResult::kFailed:
      return LoadResult::kCorrupt;
    case driver::FileReadResult::kRead:
      break;
  }
  EntryHeader header;
  if (contents.size() < sizeof(header)) {
    *out_problem = path + ": " + std::to_string(contents.size()) + " bytes, shorter than the " +
                   std::to_string(sizeof(header)) + "-byte header";
    return LoadResult::kCorrupt;
  }
  memcpy(&header, contents.data(), sizeof(header));
  if (memcmp(header.magic, kMagic, sizeof(kMagic)) != 0) {
    *out_problem = path + ": bad magic at offset 0";
    return LoadResult::kCorrupt;
  }
  if (HeaderChecksum(header) != header.header_checksum) {
    *out_problem = path + ": header checksum mismatch";
    return LoadResult::kCorrupt;
  }
  if (header.format_version != kFormatVersion || header.header_size != sizeof(header)) {
    *out_problem = path + ": format version " + std::to_string(header.format_version) + ", expected " +
                   std::to_string(kFormatVersion);
    return LoadResult::kCorrupt;
  }
  if (key.size() != sizeof(header.key) || memcmp(header.key, key.data(), sizeof(header.key)) != 0) {
    *out_problem = path + ": the entry belongs to another key";
    return LoadResult::kCorrupt;
  }
  if (header.payload_size != contents.size() - sizeof(header)) {
    *out_problem = path + ": payload is " + std::to_string(contents.size() - sizeof(header)) +
                   " bytes, header says " + std::to_string(header.payload_size);
    return LoadResult::kCorrupt;
  }
  contents.erase(0, sizeof(header));
  if (PayloadChecksum(contents) != header.payload_checksum) {
    *out_problem = path + ": payload checksum mismatch (the object was modified or partly written)";
    return LoadResult::kCorrupt;
  }
  *out_object = std::move(contents);
  return LoadResult::kHit;
}

bool ObjectCache::Store(const std::string& key, const std::string& object, std::string* out_problem) const {
  if (!enabled()) return true;
  EntryHeader header;
  memset(&header, 0, sizeof(header));
  memcpy(header.magic, kMagic, sizeof(kMagic));
  header.format_version = kFormatVersion;
  header.header_size = sizeof(header);
  memcpy(header.key, key.data(), std::min(key.size(), sizeof(header.key)));
  header.payload_size = object.size();
  header.payload_checksum = PayloadChecksum(object);
  header.header_checksum = HeaderChecksum(header);
  return driver::WriteFileAtomically(PathFor(key), &header, sizeof(header), object.data(), object.size(),
                                     out_problem);
}

}  // namespace cpu
}  // namespace kiln
