// What the kernel_corpus_tests sources share: the odd launch shapes, random inputs, exact comparison and
// printing of elements, the Corpus fixture (a context, its scripts and tensors, Map and ExpectExact1) and the
// error bounds that more than one part uses. What the corpus covers and how it checks it is at the top of
// kernel_corpus_test.cc.
#ifndef KILN_TESTS_KERNELS_CORPUS_KERNEL_CORPUS_FIXTURE_H_
#define KILN_TESTS_KERNELS_CORPUS_KERNEL_CORPUS_FIXTURE_H_

#include <gtest/gtest.h>

#include <cstdlib>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/c_api.h"
#include "kiln/compute.h"
#include "kiln/device.h"
#include "tests/kernels/kernel_test_util.h"

namespace kiln {
namespace corpus {

using testing::KmodPath;
using testing::Messages;

using Cells = std::vector<int>;

// The odd sizes every elementwise kernel runs over: 1, 7 and 1000003 cells, and 317 (x) by 211 (y).
inline const std::vector<Cells>& OddShapes() {
  static const std::vector<Cells> shapes = {{1}, {7}, {1000003}, {211, 317}};
  return shapes;
}
// The same plus a 3D grid, for kernels that take z.
inline const std::vector<Cells>& OddShapes3D() {
  static const std::vector<Cells> shapes = {{1}, {7}, {1000003}, {211, 317}, {3, 5, 7}};
  return shapes;
}

inline size_t CellCount(const Cells& cells) {
  size_t n = 1;
  for (int d : cells) n *= static_cast<size_t>(d);
  return n;
}

inline std::string ShapeName(const Cells& cells) {
  std::string s = "cells [";
  for (size_t i = 0; i < cells.size(); ++i) s += (i ? "x" : "") + std::to_string(cells[i]);
  return s + "]";
}

// x, y, z of cell `index` (x innermost).
inline std::array<uint32_t, 3> Coords(const Cells& cells, size_t index) {
  std::array<uint32_t, 3> c = {0, 0, 0};
  for (size_t k = 0; k < cells.size() && k < 3; ++k) {
    const size_t dim = static_cast<size_t>(cells[cells.size() - 1 - k]);
    c[k] = static_cast<uint32_t>(index % dim);
    index /= dim;
  }
  return c;
}
// The launch extent along x (0), y (1), z (2); 1 when absent.
inline uint32_t DimOf(const Cells& cells, int axis) {
  return axis < static_cast<int>(cells.size()) ? static_cast<uint32_t>(cells[cells.size() - 1 - axis]) : 1u;
}

// A kernel's bool element: one byte (std::vector<bool> is packed, so it cannot be a tensor's buffer).
struct RsBool {
  uint8_t value;
  bool operator==(const RsBool& other) const { return value == other.value; }
};

template <typename T>
struct TypeOf;
#define KILN_CORPUS_TYPE(T, K)                    \
  template <>                                     \
  struct TypeOf<T> {                              \
    static constexpr KilnType kType = K;          \
  };
KILN_CORPUS_TYPE(int8_t, kKilnInt8)
KILN_CORPUS_TYPE(uint8_t, kKilnUInt8)
KILN_CORPUS_TYPE(int16_t, kKilnInt16)
KILN_CORPUS_TYPE(uint16_t, kKilnUInt16)
KILN_CORPUS_TYPE(int32_t, kKilnInt32)
KILN_CORPUS_TYPE(uint32_t, kKilnUInt32)
KILN_CORPUS_TYPE(int64_t, kKilnInt64)
KILN_CORPUS_TYPE(uint64_t, kKilnUInt64)
KILN_CORPUS_TYPE(float, kKilnFloat32)
KILN_CORPUS_TYPE(double, kKilnFloat64)
KILN_CORPUS_TYPE(_Float16, kKilnFloat16)
KILN_CORPUS_TYPE(RsBool, kKilnBool)
#undef KILN_CORPUS_TYPE

template <typename T>
std::vector<T> RandomInts(size_t n, T lo, T hi, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  if constexpr (std::is_signed_v<T>) {
    std::uniform_int_distribution<int64_t> dist(lo, hi);
    for (T& x : v) x = static_cast<T>(dist(rng));
  } else {
    std::uniform_int_distribution<uint64_t> dist(lo, hi);
    for (T& x : v) x = static_cast<T>(dist(rng));
  }
  return v;
}
// Integers over their whole range (RandomFloats is the float counterpart).
template <typename T>
std::vector<T> RandomFull(size_t n, uint32_t seed) {
  static_assert(std::is_integral_v<T>, "RandomFull draws integers; use RandomFloats for floating point");
  return RandomInts<T>(n, std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), seed);
}

inline std::vector<float> RandomFloats(size_t n, double lo, double hi, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(dist(rng));
  return v;
}

template <typename T>
bool Same(T a, T b) {
  if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, _Float16>) {
    if (a != a && b != b) return true;  // both NaN
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  } else {
    return a == b;
  }
}

template <typename T>
std::string Text(T v) {
  std::ostringstream s;
  if constexpr (std::is_same_v<T, _Float16>) {
    s.precision(9);
    s << static_cast<float>(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    s.precision(std::is_same_v<T, float> ? 9 : 17);
    s << v;
  } else if constexpr (std::is_same_v<T, RsBool>) {
    s << static_cast<int>(v.value);
  } else if constexpr (sizeof(T) == 1) {
    s << static_cast<int>(v);
  } else {
    s << v;
  }
  return s.str();
}


// Counts mismatches and keeps the first few for the failure message.
class Mismatches {
 public:
  void Add(size_t index, const std::string& detail) {
    if (count_ < 8) text_ += "\n  cell " + std::to_string(index) + ": " + detail;
    ++count_;
  }
  int64_t count() const { return count_; }
  std::string Report() const { return std::to_string(count_) + " mismatches, first:" + text_; }

 private:
  int64_t count_ = 0;
  std::string text_;
};

struct ClientMessage {
  KilnScript* script;
  int32_t command;
  std::vector<uint8_t> data;
};

class Corpus : public ::testing::Test {
 public:
  // Kernels placed on the driver under KILN_TEST_DRIVER, over the whole run.
  static inline int total_on_driver_ = 0;
  // Distinct kernels and reductions ("module: kernel 'name'") by where they ran, over the whole run.
  static inline std::set<std::string> unique_on_driver_, unique_on_cpu_;

 protected:
  void SetUp() override {
    KilnContextOptions* options = KilnContextOptionsCreate();
    KilnContextOptionsSetErrorReporter(options, Messages::Report, &messages_);
    KilnContextOptionsSetMessageHandler(options, &Corpus::OnMessage, this);
    // KILN_TEST_DRIVER runs the whole corpus with the GPU policy on that driver (ctest kernel_corpus_vulkan):
    // kernels with a GPU form run there, the others on the CPU, all against the same references.
    if (const char* driver = std::getenv("KILN_TEST_DRIVER"); driver != nullptr && *driver != '\0') {
      KilnContextOptionsSetDevicePolicy(options, kKilnDevicePreferGpu);
      KilnContextOptionsSetDriverPath(options, driver);
    }
    context_ = KilnContextCreate(options);
    KilnContextOptionsDelete(options);
    ASSERT_NE(context_, nullptr) << messages_.All();
  }
  void TearDown() override {
    if (const char* driver = std::getenv("KILN_TEST_DRIVER"); driver != nullptr && *driver != '\0') {
      // On a driver, the decision log says where each kernel ran; at least one must have left the CPU.
      int on_driver = 0, on_cpu = 0;
      for (int i = 0; i < KilnContextGetDecisionCount(context_); ++i) {
        KilnDecisionKind kind;
        const char* subject = nullptr;
        const char* message = nullptr;
        if (KilnContextGetDecision(context_, i, &kind, &subject, &message) != kKilnOk || kind != kKilnDecisionKernel) {
          continue;
        }
        const std::string text = message;
        if (text.find(" runs on CPU") != std::string::npos) {
          ++on_cpu;
          if (subject) unique_on_cpu_.insert(subject);
        } else if (text.find(" runs on ") != std::string::npos) {
          ++on_driver;
          if (subject) unique_on_driver_.insert(subject);
        }
      }
      std::printf("  kernels on the driver: %d, on the CPU: %d\n", on_driver, on_cpu);
      if (!scripts_.empty()) {
        EXPECT_GT(on_driver + on_cpu, 0) << "no kernel placement was recorded";
      }
      total_on_driver_ += on_driver;
    }
    // Scripts first: they may still hold bindings to the tensors.
    for (KilnScript* s : scripts_) KilnScriptDelete(s);
    Release();
    for (KilnModule* m : modules_) KilnModuleDelete(m);
    KilnContextDelete(context_);
  }

  static void OnMessage(void* user_data, KilnScript* script, int32_t command, const void* data, size_t size) {
    Corpus* self = static_cast<Corpus*>(user_data);
    std::lock_guard<std::mutex> lock(self->client_mutex_);
    const uint8_t* bytes = static_cast<const uint8_t*>(data);
    self->client_messages_.push_back({script, command, std::vector<uint8_t>(bytes, bytes + (data ? size : 0))});
  }

  KilnScript* Script(const std::string& kmod) {
    KilnModule* module =
        KilnModuleCreateFromFileWithErrorReporter(KmodPath(kmod).c_str(), Messages::Report, &messages_);
    if (module == nullptr) return nullptr;
    modules_.push_back(module);
    KilnScript* script = KilnScriptCreate(context_, module);
    if (script != nullptr) scripts_.push_back(script);
    return script;
  }

  // Deletes the tensors made so far (the large sizes would otherwise pile up within a test).
  void Release() {
    for (KilnTensor* t : tensors_) KilnTensorDelete(t);
    tensors_.clear();
  }

  static Cells WithLanes(const Cells& cells, int lanes) {
    Cells dims = cells;
    if (lanes > 1) dims.push_back(lanes);
    return dims;
  }

  template <typename T>
  KilnTensor* Out(const Cells& cells, int lanes = 1) {
    const Cells dims = WithLanes(cells, lanes);
    KilnTensor* t = KilnTensorCreate(context_, TypeOf<T>::kType, dims.data(), static_cast<int32_t>(dims.size()));
    EXPECT_NE(t, nullptr) << messages_.All();
    if (t) tensors_.push_back(t);
    return t;
  }
  template <typename T>
  KilnTensor* In(const Cells& cells, int lanes, const std::vector<T>& data) {
    KilnTensor* t = Out<T>(cells, lanes);
    if (t) {
      EXPECT_EQ(KilnTensorCopyFromBuffer(t, data.data(), data.size() * sizeof(T)), kKilnOk) << messages_.All();
    }
    return t;
  }
  template <typename T>
  std::vector<T> Read(const KilnTensor* t) {
    std::vector<T> v(KilnTensorByteSize(t) / sizeof(T));
    EXPECT_EQ(KilnTensorCopyToBuffer(t, v.data(), v.size() * sizeof(T)), kKilnOk);
    return v;
  }

  // Runs `kernel` over `inputs` into a new output of `cells` x `lanes` elements of T; empty on failure.
  template <typename T>
  std::vector<T> Map(KilnScript* script, const char* kernel, std::vector<KilnTensor*> inputs, const Cells& cells,
                     int lanes = 1) {
    KilnTensor* out = Out<T>(cells, lanes);
    if (!out) return {};
    const KilnStatus status = KilnScriptForEach(script, kernel, inputs.data(), static_cast<int32_t>(inputs.size()),
                                                out, nullptr);
    EXPECT_EQ(status, kKilnOk) << kernel << " over " << ShapeName(cells) << ": " << messages_.All();
    if (status != kKilnOk) return {};
    return Read<T>(out);
  }

  // Under KILN_TEST_DRIVER: whether the decision log says kernel `kernel` of `kmod` ran on the driver (and
  // never on the CPU). Without a driver there is nothing to check, and it is true.
  bool RanOnDriver(const std::string& kmod, const std::string& kernel) const {
    const char* driver = std::getenv("KILN_TEST_DRIVER");
    if (driver == nullptr || *driver == '\0') return true;
    const std::string prefix = "kernel " + kernel + " (" + kmod + ".kmod) runs on ";
    bool on_driver = false;
    for (int i = 0; i < KilnContextGetDecisionCount(context_); ++i) {
      KilnDecisionKind kind;
      const char* subject = nullptr;
      const char* message = nullptr;
      if (KilnContextGetDecision(context_, i, &kind, &subject, &message) != kKilnOk || message == nullptr) continue;
      const std::string text = message;
      if (text.rfind(prefix, 0) != 0) continue;
      if (text.compare(prefix.size(), 3, "CPU") == 0) return false;
      on_driver = true;
    }
    return on_driver;
  }

  // A one-input kernel checked bit for bit: `ref(in_lanes_ptr, out_lanes_ptr)` per cell; `checked` output lanes
  // are compared (3 for a 3-vector, whose fourth lane is padding).
  template <typename InT, typename OutT, typename Ref>
  void ExpectExact1(KilnScript* script, const char* kernel, int in_lanes, int out_lanes, int checked,
                    const std::function<std::vector<InT>(size_t, uint32_t)>& gen, Ref ref) {
    ASSERT_NE(script, nullptr) << messages_.All();
    uint32_t seed = 1;
    for (const Cells& cells : OddShapes()) {
      SCOPED_TRACE(std::string(kernel) + " " + ShapeName(cells));
      const size_t n = CellCount(cells);
      const std::vector<InT> in = gen(n * in_lanes, seed++);
      const std::vector<OutT> out = Map<OutT>(script, kernel, {In<InT>(cells, in_lanes, in)}, cells, out_lanes);
      ASSERT_EQ(out.size(), n * out_lanes);
      Mismatches bad;
      std::vector<OutT> want(out_lanes);
      for (size_t i = 0; i < n; ++i) {
        ref(&in[i * in_lanes], want.data());
        for (int l = 0; l < checked; ++l) {
          if (!Same(out[i * out_lanes + l], want[l])) {
            bad.Add(i, "lane " + std::to_string(l) + " in " + Text(in[i * in_lanes]) + " got " +
                           Text(out[i * out_lanes + l]) + " want " + Text(want[l]));
          }
        }
      }
      EXPECT_EQ(bad.count(), 0) << bad.Report();
      Release();
    }
  }

  Messages messages_;
  KilnContext* context_ = nullptr;
  std::vector<KilnModule*> modules_;
  std::vector<KilnScript*> scripts_;
  std::vector<KilnTensor*> tensors_;
  std::mutex client_mutex_;
  std::vector<ClientMessage> client_messages_;
};

template <typename T>
std::function<std::vector<T>(size_t, uint32_t)> FullRange() {
  return [](size_t n, uint32_t seed) { return RandomFull<T>(n, seed); };
}
inline std::function<std::vector<float>(size_t, uint32_t)> Uniform(double lo, double hi) {
  return [lo, hi](size_t n, uint32_t seed) { return RandomFloats(n, lo, hi, seed); };
}

// gamma_n = n u / (1 - n u), u = 2^-24: the classic bound on the error of a sum of n products relative to
// the sum of their magnitudes (dot and matrix products, in any order, fused or not).
inline double Gamma(int n) {
  const double u = std::ldexp(1.0, -24);
  return n * u / (1 - n * u);
}
// fract(x) as RS defines it (x - floor(x), at most the float below 1), for fract and rsFrac.
inline double Fract(double x) { return std::min(x - std::floor(x), 0x1.fffffep-1); }

}  // namespace corpus
}  // namespace kiln

#endif  // KILN_TESTS_KERNELS_CORPUS_KERNEL_CORPUS_FIXTURE_H_
