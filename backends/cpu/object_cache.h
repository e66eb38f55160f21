// The on-disk cache of compiled objects. One file per entry, named by the key; each starts with a header that
// repeats the key and carries the payload's length and checksum, so a truncated, corrupted or misplaced file
// is detected instead of linked. Writes go to a temporary file that is renamed into place, so readers in
// other processes see either the old entry or the whole new one.
#ifndef KILN_BACKENDS_CPU_OBJECT_CACHE_H_
#define KILN_BACKENDS_CPU_OBJECT_CACHE_H_

#include <cstdint>
#include <string>

namespace kiln {
namespace cpu {

// Everything that changes the generated code. Two inputs that differ in any field get different keys.
struct CacheKeyInputs {
  const void* bitcode = nullptr;
  size_t bitcode_size = 0;
  std::string compile_options;
  std::string target_triple;
  std::string target_cpu;
  std::string target_features;
  uint32_t kernel_abi_version = 0;
  uint32_t kernel_level = 0;
  std::string llvm_version;
  std::string driver_version;
};

// 32 lowercase hex digits.
std::string ComputeCacheKey(const CacheKeyInputs& inputs);

// What identifies this driver's code generator beyond its version: the GNU build ID of the ELF object it is
// linked into ("build-id:<hex>"), so that a rebuilt Kiln of the same version never loads native code an older
// build compiled; without a build ID, the object's path, size and modification time ("file:..."). Computed
// once per process.
const std::string& DriverCodeIdentity();

class ObjectCache {
 public:
  enum class LoadResult { kMiss, kHit, kCorrupt };

  // An empty `dir` disables the cache: every Load misses and Store does nothing.
  explicit ObjectCache(std::string dir) : dir_(std::move(dir)) {}

  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }
  std::string PathFor(const std::string& key) const;

  // kCorrupt: the file exists but cannot be used; `out_problem` says why.
  LoadResult Load(const std::string& key, std::string* out_object, std::string* out_problem) const;
  // Returns false with `out_problem` set when the entry could not be written (the cache is only an
  // optimisation, so callers log and go on).
  bool Store(const std::string& key, const std::string& object, std::string* out_problem) const;

 private:
  std::string dir_;
};

}  // namespace cpu
}  // namespace kiln

#endif  // KILN_BACKENDS_CPU_OBJECT_CACHE_H_
