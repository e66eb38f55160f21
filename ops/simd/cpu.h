// What Kiln's own SIMD kernels (ops/simd) ask before they run: whether the build has x86-64 vector code, and
// whether the user turned a kernel off through the environment. Each kernel's Available() reads these once.
#ifndef KILN_OPS_SIMD_CPU_H_
#define KILN_OPS_SIMD_CPU_H_

#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KILN_SIMD_X86_BUILD 1
#else
#define KILN_SIMD_X86_BUILD 0
#endif

namespace kiln::ops::simd {

// The vector width a float kernel's packed form runs at (ops/simd/vec.h): 8 floats with AVX2 and FMA, or 16 with
// AVX-512F. Chosen when the weights are packed, so one node sums in one order on every run.
enum class Width { kAvx2, kAvx512 };

// An allocator whose blocks start on a 64-byte cache line. The kernels' packed weights live in these: from a large
// std::vector's 16-byte alignment (glibc puts such blocks 16 bytes past a page) half of the AVX2 loads and every
// AVX-512 load straddle two cache lines, which cost the GEMV a third of its speed where the weights stream from L2
// (mt_ad01_fc_float).
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{64};
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}  // NOLINT: rebinding converts implicitly
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, kAlignment); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const noexcept { return true; }
  template <typename U>
  bool operator!=(const CacheLineAllocator<U>&) const noexcept { return false; }
};

// A packed-weight buffer: a std::vector on cache-line-aligned storage.
template <typename T>
using AlignedVector = std::vector<T, CacheLineAllocator<T>>;

// Whether environment variable `name` (KILN_DISABLE_GEMV, ...) is set to something other than "" or "0".
inline bool DisabledByEnv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' && value[0] != '0';
}

#if KILN_SIMD_X86_BUILD
// Whether this CPU has AVX2 and FMA (the float kernels' instructions).
inline bool HasAvx2Fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

// Whether an AVX2/FMA kernel may run: this CPU has the instructions and `disable_env` does not turn it off.
inline bool Avx2FmaKernelEnabled(const char* disable_env) { return !DisabledByEnv(disable_env) && HasAvx2Fma(); }

// Whether this CPU has AVX-512F: Kiln's GEMM then has its AVX-512 form (ops/simd/float_gemm.h), and XNNPACK runs
// float convolutions with its 16-float kernels, so the host engine gives each of Kiln's own convolutions only the
// nodes where it was measured faster than those (ops/xnnpack/xnnpack_engine.cc: DirectConv, DirectDepthwise,
// PointwiseConv).
inline bool HasAvx512f() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}
#endif

}  // namespace kiln::ops::simd

#endif  // KILN_OPS_SIMD_CPU_H_
