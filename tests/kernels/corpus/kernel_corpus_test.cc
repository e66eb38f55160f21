// kernel_corpus_tests: a corpus of RS-style kernels (tests/kernels/corpus/*.rs, compiled by the project's kilnc
// at build time) run through the compute API (kiln/compute.h) and checked against plain C++ references.
//
// Sizes: every elementwise kernel runs over 1, 7 and 1000003 cells and over a 2D 317x211 grid (dims {211, 317});
// kernels that take x/y/z also run over a 3D grid. Exceptions are stated at the test.
//
// Checks: integer, bit, conversion and exactly-rounded results are compared bit for bit. Transcendentals in
// rs_fp_full are held to the OpenCL full-profile bounds that docs/kernel-math.md documents (the bound is in each
// table row); native_* to the "test bound" column of kernel-math.md over its tested domains; half_* to 8192 ulp.
// kernel-math.md gives no separate bound for rs_fp_relaxed: kernel-language.md says relaxed only allows
// contraction across expressions, so relaxed kernels get the full bound for the function plus an error bound
// for the contracted arithmetic around it. Plain float arithmetic that the compiler may contract (mix, mad,
// smoothstep, dot, cross, matrix products) is accepted either as computed by the fused or the unfused
// evaluation, or within the classic gamma_n error bound of a sum of n products. Image kernels in rs_fp_relaxed
// are accepted within 1 in 255 per channel (the rounding of a contracted weighted sum); the ones whose
// arithmetic is exact (convolution with dyadic coefficients) must match exactly.
//
// Coverage (file: kernels -> features):
//   scalar_types.rs      mix_char..mix_ulong, is_multiple_of_3   char, uchar, short, ushort, int, uint, long, ulong, bool
//   float_double.rs      rational_float, square_exact, rational_double, narrow    float and double elements
//   half_types.rs        half_add, to_half2, from_half4, half_twice              half, half2, half4 (convert_half2)
//   vectors.rs           swizzle_float4/3/2, swizzle_int4, swizzle_uchar3, swizzle_short2, swizzle_ulong3,
//                        rgba_to_bgra                         2/3/4-lane vectors, xyzw/rgba/sN swizzles, swizzle stores
//   multi_input.rs       in1..in8                             RS_KERNEL with 1..8 inputs by value, broadcasting
//   void_kernels.rs      scatter_reversed, count_even         void kernels, rsSetElementAt_int, rsAtomicInc/Max/Min
//   coords.rs            coord_x, coord_xy, coord_xyz, coord_int   uint32_t x, y, z (and int x, y); no-input kernel
//   kernel_context.rs    launch_dims, mirror_x                rs_kernel_context, rsGetDimX/Y/Z
//   root_usrdata.rs      root                                 old root(const T*, U*, const void* usrData, x, y)
//   root_plain.rs        root                                 old root(const T*, U*)
//   globals.rs           apply_gain, apply_offsets, apply_tone, setBias   non-static globals set from the API (scalar,
//                        vector, array, struct), const globals (not settable), static globals (invisible)
//   pointer_globals.rs   weighted, tally                      pointer globals bound to allocations (read, atomic write)
//   allocations.rs       transpose, lookup, volume_add, store_swapped, quad_neighbours, extents
//                        rs_allocation globals, rsGetElementAt_<T>/rsSetElementAt_<T> in 1/2/3D, rsAllocationGetDimX/Y/Z
//   init_invoke.rs       init, setParams, accumulate, reset, apply, tint   init(), invokables with arguments
//   foreach_invokable.rs add_bias, square, pipeline, square_range    rsForEach / rsForEachWithOptions from an invokable
//   reduce_sum.rs        sum_long, dot_int, mean, wrapping_sum     reductions: initializer/accumulator/combiner/
//                        outconverter, two inputs, accumulator as combiner
//   reduce_minmax.rs     minmax_index, max_uchar              min/max with index (x, y), uchar max
//   reduce_histogram.rs  histogram, mode                      array accumulator (histogram), outconverter (mode)
//   math_trig.rs         k_sin..k_atanh, k_atan2, k_atan2pi, k_sincos, k_atan4   trig, hyperbolic, pi forms (rs_fp_full)
//   math_explog.rs       k_exp..k_cbrt, k_pow, k_powr, k_pown, k_rootn, k_hypot, k_exp3, k_pow2
//                                                             exp/log families, pow/pown/powr/rootn, sqrt/rsqrt/cbrt, hypot
//   math_exact.rs        k_fabs, k_floor, k_ceil, k_round, k_trunc, k_rint, k_fract, k_rsFrac, k_fmin, k_fmax,
//                        k_fmod, k_copysign, k_fdim, k_fract_floor, k_floor4      exact functions, rsFrac
//   math_common.rs       k_clamp, k_mix, k_mix4, k_step, k_step4, k_smoothstep, k_sign, k_mad, k_minmax, k_degrees,
//                        k_radians, k_int_minmax, k_abs, k_uchar_clamp, k_short_minmax, k_long_clamp
//                                                             clamp/mix/step/smoothstep/sign/mad, min/max/abs (float, int)
//   geometry.rs          k_dot4, k_dot3, k_cross3, k_cross4, k_length3, k_length2, k_distance4, k_normalize4,
//                        k_normalize3, k_native_length3, k_fast_normalize3   dot/cross/length/distance/normalize
//   math_native.rs       k_native_exp..k_native_atan2, k_native_exp4     native_* forms
//   math_half.rs         k_half_exp..k_half_powr              half_* forms
//   math_relaxed.rs      relaxed_sin, relaxed_exp, relaxed_log, relaxed_atan2, relaxed_pow, relaxed_poly
//                                                             #pragma rs_fp_relaxed (math + contraction)
//   conversions.rs       float4_to_int4 .. int3_to_long3      convert_<T><N>
//   colors.rs            unpack, pack4, pack3, pack_rgba, roundtrip   rsUnpackColor8888, rsPackColorTo8888
//   clamp_frac.rs        clamp_char..clamp_uint, frac          rsClamp, rsFrac
//   random.rs            rand_below, rand_between, rand_unit, rand_range   rsRand (ranges and statistics)
//   matrix.rs            mul4, mul3, mul2, build              rs_matrix2x2/3x3/4x4 globals, rsMatrix* functions
//   messages.rs          report, flag_negative                rsDebug -> error reporter, rsSendToClient(Blocking) ->
//                                                             KilnContextOptionsSetMessageHandler
//   image_grey.rs        grey                                 RS app: greyscale over uchar4 (rs_fp_relaxed)
//   image_levels.rs      setLevels, levels                    RS app: levels (matrix, gamma via pow), invokable
//   image_color_matrix.rs color_matrix                        RS app: 4x4 color matrix + offset
//   image_convolve.rs    convolve                             RS app: 3x3 convolution via rsGetElementAt_uchar4, x, y
//   image_blur.rs        init, setRadius, blur, horizontal, vertical   RS app: separable Gaussian blur; a script with
//                                                             init() and invokables that rsForEach its two passes
//   image_vignette.rs    vignette                             RS app: a kernel using x, y
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
namespace {

using testing::KmodPath;
using testing::Messages;

using Cells = std::vector<int>;

// The odd sizes every elementwise kernel runs over: 1, 7 and 1000003 cells, and 317 (x) by 211 (y).
const std::vector<Cells>& OddShapes() {
  static const std::vector<Cells> shapes = {{1}, {7}, {1000003}, {211, 317}};
  return shapes;
}
// The same plus a 3D grid, for kernels that take z.
const std::vector<Cells>& OddShapes3D() {
  static const std::vector<Cells> shapes = {{1}, {7}, {1000003}, {211, 317}, {3, 5, 7}};
  return shapes;
}

size_t CellCount(const Cells& cells) {
  size_t n = 1;
  for (int d : cells) n *= static_cast<size_t>(d);
  return n;
}

std::string ShapeName(const Cells& cells) {
  std::string s = "cells [";
  for (size_t i = 0; i < cells.size(); ++i) s += (i ? "x" : "") + std::to_string(cells[i]);
  return s + "]";
}

// x, y, z of cell `index` (x innermost).
std::array<uint32_t, 3> Coords(const Cells& cells, size_t index) {
  std::array<uint32_t, 3> c = {0, 0, 0};
  for (size_t k = 0; k < cells.size() && k < 3; ++k) {
    const size_t dim = static_cast<size_t>(cells[cells.size() - 1 - k]);
    c[k] = static_cast<uint32_t>(index % dim);
    index /= dim;
  }
  return c;
}
uint32_t DimOf(const Cells& cells, int axis) {  // launch extent along x (0), y (1), z (2); 1 when absent
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
template <typename T>
std::vector<T> RandomFull(size_t n, uint32_t seed) {
  return RandomInts<T>(n, std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), seed);
}

std::vector<float> RandomFloats(size_t n, double lo, double hi, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(dist(rng));
  return v;
}
// |x| = 2^e with e uniform in [min_exp, max_exp] (every binade equally likely), random sign when `signed_values`.
std::vector<float> RandomLogFloats(size_t n, double min_exp, double max_exp, bool signed_values, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(min_exp, max_exp);
  std::vector<float> v(n);
  for (float& x : v) {
    x = static_cast<float>(std::exp2(dist(rng)));
    if (signed_values && (rng() & 1)) x = -x;
  }
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

// The error of `got` in units in the last place of the float nearest to `exact` (OpenCL's definition).
double UlpError(float got, double exact) {
  if (std::isnan(exact)) return std::isnan(got) ? 0.0 : INFINITY;
  if (std::isnan(got)) return INFINITY;
  if (std::isinf(exact)) return static_cast<double>(got) == exact ? 0.0 : INFINITY;
  // Past FLT_MAX + half an ulp the correctly rounded result is an infinity.
  if (std::fabs(exact) >= std::ldexp(1.0, 128) - std::ldexp(1.0, 103) && std::isinf(got) &&
      std::signbit(got) == std::signbit(exact)) {
    return 0.0;
  }
  double g = got;
  if (std::isinf(got)) g = std::copysign(std::ldexp(1.0, 128), got);  // the first value past FLT_MAX
  int e = 0;
  std::frexp(exact, &e);  // |exact| in [2^(e-1), 2^e)
  const double ulp = exact == 0.0 ? std::ldexp(1.0, -149) : std::ldexp(1.0, std::max(e - 24, -149));
  return std::fabs(g - exact) / ulp;
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
      KilnContextOptionsSetDevicePolicy(options, KILN_DEVICE_PREFER_GPU);
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
        if (KilnContextGetDecision(context_, i, &kind, &subject, &message) != kKilnOk || kind != KILN_DECISION_KERNEL) {
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
      if (!scripts_.empty()) EXPECT_GT(on_driver + on_cpu, 0) << "no kernel placement was recorded";
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
    if (t) EXPECT_EQ(KilnTensorCopyFromBuffer(t, data.data(), data.size() * sizeof(T)), kKilnOk) << messages_.All();
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
std::function<std::vector<float>(size_t, uint32_t)> Uniform(double lo, double hi) {
  return [lo, hi](size_t n, uint32_t seed) { return RandomFloats(n, lo, hi, seed); };
}

// ---------------------------------------------------------------------------------------------------------
// Scalar types, floating point, half, vectors

TEST_F(Corpus, IntegerScalarTypes) {
  KilnScript* s = Script("scalar_types");
  ExpectExact1<int8_t, int8_t>(s, "mix_char", 1, 1, 1, FullRange<int8_t>(), [](const int8_t* in, int8_t* out) {
    *out = static_cast<int8_t>((*in ^ 0x5a) + (*in >> 2) - *in / 3);
  });
  ExpectExact1<uint8_t, uint8_t>(s, "mix_uchar", 1, 1, 1, FullRange<uint8_t>(), [](const uint8_t* in, uint8_t* out) {
    *out = static_cast<uint8_t>(static_cast<uint8_t>(*in * 3u + 7u) ^ static_cast<uint8_t>(*in >> 5));
  });
  ExpectExact1<int16_t, int16_t>(s, "mix_short", 1, 1, 1, FullRange<int16_t>(), [](const int16_t* in, int16_t* out) {
    *out = static_cast<int16_t>(static_cast<int16_t>((static_cast<uint16_t>(*in) << 1) ^ (*in >> 3)) +
                                static_cast<int16_t>(*in % 7));
  });
  ExpectExact1<uint16_t, uint16_t>(s, "mix_ushort", 1, 1, 1, FullRange<uint16_t>(),
                                   [](const uint16_t* in, uint16_t* out) {
                                     *out = static_cast<uint16_t>(static_cast<uint16_t>(uint32_t{*in} * *in + 1u) |
                                                                  static_cast<uint16_t>(*in / 255u));
                                   });
  ExpectExact1<int32_t, int32_t>(s, "mix_int", 1, 1, 1, FullRange<int32_t>(), [](const int32_t* in, int32_t* out) {
    *out = static_cast<int32_t>(static_cast<uint32_t>(*in) * 2654435761u) ^ (*in >> 7) ^ (*in % 1000);
  });
  ExpectExact1<uint32_t, uint32_t>(s, "mix_uint", 1, 1, 1, FullRange<uint32_t>(),
                                   [](const uint32_t* in, uint32_t* out) {
                                     *out = ((*in >> 3) | (*in << 29)) + 0x9e3779b9u - *in / 17u;
                                   });
  ExpectExact1<int64_t, int64_t>(s, "mix_long", 1, 1, 1, FullRange<int64_t>(), [](const int64_t* in, int64_t* out) {
    *out = static_cast<int64_t>(static_cast<uint64_t>(*in) * 6364136223846793005ull + 1442695040888963407ull) ^
           (*in >> 17) ^ (*in / 12345);
  });
  ExpectExact1<uint64_t, uint64_t>(s, "mix_ulong", 1, 1, 1, FullRange<uint64_t>(),
                                   [](const uint64_t* in, uint64_t* out) {
                                     *out = *in ^ (*in >> 31) ^ (*in << 7) ^ (*in % 1000003ull);
                                   });
  ExpectExact1<int32_t, RsBool>(s, "is_multiple_of_3", 1, 1, 1, FullRange<int32_t>(),
                                [](const int32_t* in, RsBool* out) { out->value = *in % 3 == 0; });
}

TEST_F(Corpus, FloatAndDoubleExactArithmetic) {
  KilnScript* s = Script("float_double");
  ExpectExact1<float, float>(s, "rational_float", 1, 1, 1, Uniform(-100, 100), [](const float* in, float* out) {
    const float x = *in;
    const float num = (x + 3.0f) * (x - 0.5f);
    const float den = (x - 2.0f) * (x + 1.0f);
    *out = num / den;
  });
  ExpectExact1<float, double>(s, "square_exact", 1, 1, 1, Uniform(-1e6, 1e6), [](const float* in, double* out) {
    *out = static_cast<double>(*in) * static_cast<double>(*in);
  });
  const auto doubles = [](size_t n, uint32_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> dist(-1e3, 1e3);
    std::vector<double> v(n);
    for (double& x : v) x = dist(rng);
    return v;
  };
  ExpectExact1<double, double>(s, "rational_double", 1, 1, 1, doubles, [](const double* in, double* out) {
    *out = (*in + 0.25) / (*in - 3.0);
  });
  ExpectExact1<double, float>(s, "narrow", 1, 1, 1, doubles,
                              [](const double* in, float* out) { *out = static_cast<float>(*in); });
}

// half: single operations and conversions, each correctly rounded to half (float has enough precision that
// computing in float and rounding to half is innocuous for one operation).
TEST_F(Corpus, HalfTypes) {
  KilnScript* s = Script("half_types");
  ASSERT_NE(s, nullptr) << messages_.All();
  const auto halves = [](size_t n, uint32_t seed) {
    std::vector<float> f = RandomFloats(n, -60000, 60000, seed);
    std::vector<_Float16> h(n);
    for (size_t i = 0; i < n; ++i) h[i] = static_cast<_Float16>(i % 3 == 0 ? f[i] / 4096.0f : f[i]);
    return h;
  };
  uint32_t seed = 7;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const std::vector<_Float16> a = halves(n, seed++), b = halves(n, seed++);
    const std::vector<_Float16> sum = Map<_Float16>(s, "half_add", {In(cells, 1, a), In(cells, 1, b)}, cells);
    ASSERT_EQ(sum.size(), n);
    Mismatches bad;
    for (size_t i = 0; i < n; ++i) {
      const _Float16 want = static_cast<_Float16>(static_cast<double>(a[i]) + static_cast<double>(b[i]));
      if (!Same(sum[i], want)) bad.Add(i, Text(a[i]) + " + " + Text(b[i]) + " got " + Text(sum[i]));
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
  ExpectExact1<float, _Float16>(s, "to_half2", 2, 2, 2, Uniform(-70000, 70000), [](const float* in, _Float16* out) {
    out[0] = static_cast<_Float16>(in[0]);
    out[1] = static_cast<_Float16>(in[1]);
  });
  ExpectExact1<_Float16, float>(s, "from_half4", 4, 4, 4, halves, [](const _Float16* in, float* out) {
    for (int l = 0; l < 4; ++l) out[l] = static_cast<float>(in[3 - l]);
  });
  ExpectExact1<_Float16, _Float16>(s, "half_twice", 1, 1, 1, halves, [](const _Float16* in, _Float16* out) {
    *out = static_cast<_Float16>(static_cast<float>(*in) * 2.0f);
  });
}

TEST_F(Corpus, VectorsAndSwizzles) {
  KilnScript* s = Script("vectors");
  ExpectExact1<float, float>(s, "swizzle_float4", 4, 4, 4, Uniform(-1e3, 1e3), [](const float* v, float* o) {
    const float xxyy[4] = {v[0], v[0], v[1], v[1]};
    for (int l = 0; l < 4; ++l) o[l] = v[3 - l] - xxyy[l];
  });
  ExpectExact1<float, float>(s, "swizzle_float3", 4, 4, 3, Uniform(-1e3, 1e3), [](const float* v, float* o) {
    o[0] = v[2] * v[1];
    o[1] = v[0] * v[1];
    o[2] = v[1] * v[2];
  });
  ExpectExact1<float, float>(s, "swizzle_float2", 2, 2, 2, Uniform(0, 1e3), [](const float* v, float* o) {
    const float d = v[0] + 4.0f;
    o[0] = v[1] / d;
    o[1] = v[0] / d;
  });
  ExpectExact1<int32_t, int32_t>(s, "swizzle_int4", 4, 4, 4, FullRange<int32_t>(), [](const int32_t* v, int32_t* o) {
    o[0] = v[3];
    o[3] = v[0];
    o[1] = v[2] ^ 0xff;
    o[2] = v[1] ^ 0xff;
  });
  ExpectExact1<uint8_t, uint8_t>(s, "swizzle_uchar3", 4, 4, 3, FullRange<uint8_t>(), [](const uint8_t* v, uint8_t* o) {
    o[0] = static_cast<uint8_t>(v[2] + 1);
    o[1] = static_cast<uint8_t>(v[1] + 2);
    o[2] = static_cast<uint8_t>(v[0] + 3);
  });
  ExpectExact1<int16_t, int16_t>(s, "swizzle_short2", 2, 2, 2, FullRange<int16_t>(), [](const int16_t* v, int16_t* o) {
    o[0] = v[1];
    o[1] = static_cast<int16_t>(v[0] >> 1);
  });
  ExpectExact1<uint64_t, uint64_t>(s, "swizzle_ulong3", 4, 4, 3, FullRange<uint64_t>(),
                                   [](const uint64_t* v, uint64_t* o) {
                                     o[0] = v[2] ^ (v[1] << 3);
                                     o[1] = v[2] ^ (v[0] << 3);
                                     o[2] = v[0] ^ (v[2] << 3);
                                   });
  ExpectExact1<uint8_t, uint8_t>(s, "rgba_to_bgra", 4, 4, 4, FullRange<uint8_t>(), [](const uint8_t* v, uint8_t* o) {
    o[0] = v[2];
    o[1] = v[1];
    o[2] = v[0];
    o[3] = v[3];
  });
}

// ---------------------------------------------------------------------------------------------------------
// Kernel signatures

TEST_F(Corpus, OneToEightInputs) {
  KilnScript* s = Script("multi_input");
  ASSERT_NE(s, nullptr) << messages_.All();
  uint32_t seed = 100;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto f = RandomFloats(n, -1e4, 1e4, seed++);
    const auto i32 = RandomInts<int32_t>(n, -1000000, 1000000, seed++);
    const auto i16 = RandomFull<int16_t>(n, seed++);
    const auto i8 = RandomFull<int8_t>(n, seed++);
    const auto u8 = RandomFull<uint8_t>(n, seed++);
    const auto u16 = RandomFull<uint16_t>(n, seed++);
    const auto u32 = RandomInts<uint32_t>(n, 0, 4000000000u, seed++);
    const auto i64 = RandomInts<int64_t>(n, -(int64_t{1} << 50), int64_t{1} << 50, seed++);
    std::vector<double> d(n);
    for (size_t i = 0; i < n; ++i) d[i] = static_cast<double>(i64[i]) * 0.5;
    KilnTensor *tf = In(cells, 1, f), *ti32 = In(cells, 1, i32), *ti16 = In(cells, 1, i16), *ti8 = In(cells, 1, i8),
               *tu8 = In(cells, 1, u8), *tu16 = In(cells, 1, u16), *tu32 = In(cells, 1, u32),
               *ti64 = In(cells, 1, i64), *td = In(cells, 1, d);
    Mismatches bad;
    const auto o1 = Map<float>(s, "in1", {tf}, cells);
    const auto o2 = Map<float>(s, "in2", {tf, ti32}, cells);
    const auto o3 = Map<int32_t>(s, "in3", {ti32, ti16, ti8}, cells);
    const auto o5 = Map<int32_t>(s, "in5", {ti32, ti32, ti32, ti32, ti32}, cells);
    const auto o6 = Map<int64_t>(s, "in6", {ti64, tu32, tu16, tu8, ti8, ti16}, cells);
    const auto o7 = Map<double>(s, "in7", {tf, ti32, tu8, ti16, tu32, ti8, tu16}, cells);
    const auto o8 = Map<double>(s, "in8", {tf, ti32, tu8, ti16, tu32, ti8, tu16, td}, cells);
    ASSERT_TRUE(o1.size() == n && o2.size() == n && o3.size() == n && o5.size() == n && o6.size() == n &&
                o7.size() == n && o8.size() == n);
    for (size_t i = 0; i < n; ++i) {
      if (!Same(o1[i], f[i] * 2.0f)) bad.Add(i, "in1 got " + Text(o1[i]));
      if (!Same(o2[i], f[i] + static_cast<float>(i32[i]))) bad.Add(i, "in2 got " + Text(o2[i]));
      if (o3[i] != i32[i] - i16[i] * i8[i]) bad.Add(i, "in3 got " + Text(o3[i]));
      if (o5[i] != i32[i]) bad.Add(i, "in5 got " + Text(o5[i]));  // a - a + a - a + a
      const int64_t w6 = i64[i] + u32[i] - u16[i] + u8[i] * i8[i] - i16[i];
      if (o6[i] != w6) bad.Add(i, "in6 got " + Text(o6[i]) + " want " + Text(w6));
      const double w7 = static_cast<double>(f[i]) + i32[i] + u8[i] + i16[i] + u32[i] + i8[i] + u16[i];
      if (!Same(o7[i], w7)) bad.Add(i, "in7 got " + Text(o7[i]) + " want " + Text(w7));
      if (!Same(o8[i], w7 + d[i])) bad.Add(i, "in8 got " + Text(o8[i]) + " want " + Text(w7 + d[i]));
    }
    // in4 with small integers (exact whether or not (a - b) * c + d is fused), and c broadcast from one value.
    std::vector<float> a4 = RandomFloats(n * 4, -100, 100, seed++), b4 = RandomFloats(n * 4, -100, 100, seed++);
    for (float& v : a4) v = std::round(v);
    for (float& v : b4) v = std::round(v);
    const std::vector<float> c = {3.0f};
    const auto d4 = RandomFull<uint8_t>(n * 4, seed++);
    const auto o4 = Map<float>(s, "in4", {In(cells, 4, a4), In(cells, 4, b4), In<float>({1}, 1, c), In(cells, 4, d4)},
                               cells, 4);
    ASSERT_EQ(o4.size(), n * 4);
    for (size_t i = 0; i < n * 4; ++i) {
      if (!Same(o4[i], (a4[i] - b4[i]) * 3.0f + d4[i])) bad.Add(i / 4, "in4 got " + Text(o4[i]));
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
}

// scatter_reversed writes a 1D allocation by x, so it runs over the 1D sizes only (a 2D launch would have
// every row write the same cells). count_even runs over every size.
TEST_F(Corpus, VoidKernels) {
  KilnScript* s = Script("void_kernels");
  ASSERT_NE(s, nullptr) << messages_.All();
  uint32_t seed = 200;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto in = RandomInts<int32_t>(n, -100000, 100000, seed++);
    KilnTensor* tin = In(cells, 1, in);
    if (cells.size() == 1) {
      KilnTensor* scattered = Out<int32_t>(cells);
      ASSERT_EQ(KilnScriptBindAllocation(s, "gScattered", scattered), kKilnOk) << messages_.All();
      ASSERT_EQ(KilnScriptForEach(s, "scatter_reversed", &tin, 1, nullptr, nullptr), kKilnOk) << messages_.All();
      const auto got = Read<int32_t>(scattered);
      Mismatches bad;
      for (size_t i = 0; i < n; ++i) {
        if (got[n - 1 - i] != in[i] * 3) bad.Add(i, "got " + Text(got[n - 1 - i]));
      }
      EXPECT_EQ(bad.count(), 0) << bad.Report();
      KilnScriptBindAllocation(s, "gScattered", nullptr);  // the tensor goes with Release()
    }
    const int32_t zero = 0, big = INT32_MAX;
    const uint32_t uzero = 0;
    ASSERT_EQ(KilnScriptSetGlobal(s, "gEvenCount", &zero, 4), kKilnOk);
    ASSERT_EQ(KilnScriptSetGlobal(s, "gMaxSeen", &uzero, 4), kKilnOk);
    ASSERT_EQ(KilnScriptSetGlobal(s, "gMinSeen", &big, 4), kKilnOk);
    ASSERT_EQ(KilnScriptForEach(s, "count_even", &tin, 1, nullptr, nullptr), kKilnOk) << messages_.All();
    int32_t even = -1, min_seen = 0;
    uint32_t max_seen = 0;
    KilnScriptGetGlobal(s, "gEvenCount", &even, 4);
    KilnScriptGetGlobal(s, "gMaxSeen", &max_seen, 4);
    KilnScriptGetGlobal(s, "gMinSeen", &min_seen, 4);
    int32_t want_even = 0, want_min = INT32_MAX;
    uint32_t want_max = 0;
    for (int32_t v : in) {
      want_even += (v & 1) == 0;
      want_max = std::max(want_max, static_cast<uint32_t>(v));
      want_min = std::min(want_min, v);
    }
    EXPECT_EQ(even, want_even);
    EXPECT_EQ(max_seen, want_max);
    EXPECT_EQ(min_seen, want_min);
    Release();
  }
}

TEST_F(Corpus, CoordinatesXYZ) {
  KilnScript* s = Script("coords");
  ASSERT_NE(s, nullptr) << messages_.All();
  uint32_t seed = 300;
  for (const Cells& cells : OddShapes3D()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto u = RandomFull<uint32_t>(n, seed++);
    const auto i = RandomFull<int32_t>(n, seed++);
    const auto sh = RandomFull<int16_t>(n, seed++);
    const auto ox = Map<uint32_t>(s, "coord_x", {In(cells, 1, u)}, cells);
    const auto oxy = Map<int32_t>(s, "coord_xy", {In(cells, 1, i)}, cells);
    const auto oxyz = Map<uint32_t>(s, "coord_xyz", {}, cells, 4);
    const auto oint = Map<int32_t>(s, "coord_int", {In(cells, 1, sh)}, cells, 2);
    ASSERT_TRUE(ox.size() == n && oxy.size() == n && oxyz.size() == 4 * n && oint.size() == 2 * n);
    Mismatches bad;
    for (size_t k = 0; k < n; ++k) {
      const auto [x, y, z] = Coords(cells, k);
      if (ox[k] != u[k] + x * 3u) bad.Add(k, "coord_x got " + Text(ox[k]));
      if (oxy[k] != (i[k] ^ static_cast<int32_t>(x * 1000u + y))) bad.Add(k, "coord_xy got " + Text(oxy[k]));
      if (oxyz[4 * k] != x || oxyz[4 * k + 1] != y || oxyz[4 * k + 2] != z || oxyz[4 * k + 3] != x * y + z) {
        bad.Add(k, "coord_xyz got " + Text(oxyz[4 * k]) + "," + Text(oxyz[4 * k + 1]) + "," + Text(oxyz[4 * k + 2]));
      }
      if (oint[2 * k] != sh[k] - static_cast<int32_t>(x) || oint[2 * k + 1] != static_cast<int32_t>(y) - sh[k]) {
        bad.Add(k, "coord_int got " + Text(oint[2 * k]));
      }
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
}

// rsGetDimX/Y/Z report the launch's extents; kernel_abi.h documents absent dimensions as 1 in a launch.
TEST_F(Corpus, KernelContextDims) {
  KilnScript* s = Script("kernel_context");
  ASSERT_NE(s, nullptr) << messages_.All();
  uint32_t seed = 400;
  for (const Cells& cells : OddShapes3D()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto dims = Map<uint32_t>(s, "launch_dims", {In(cells, 1, std::vector<uint8_t>(n))}, cells, 4);
    ASSERT_EQ(dims.size(), 4 * n);
    Mismatches bad;
    for (size_t k = 0; k < n; ++k) {
      if (dims[4 * k] != DimOf(cells, 0) || dims[4 * k + 1] != DimOf(cells, 1) || dims[4 * k + 2] != DimOf(cells, 2) ||
          dims[4 * k + 3] != Coords(cells, k)[0]) {
        bad.Add(k, "got " + Text(dims[4 * k]) + "x" + Text(dims[4 * k + 1]) + "x" + Text(dims[4 * k + 2]));
      }
    }
    if (cells.size() <= 2) {  // mirror_x reads a 2D (or 1D) allocation
      const auto src = RandomFloats(n, -1, 1, seed++);
      ASSERT_EQ(KilnScriptBindAllocation(s, "gSource", In(cells, 1, src)), kKilnOk) << messages_.All();
      const auto mirrored = Map<float>(s, "mirror_x", {}, cells);
      ASSERT_EQ(mirrored.size(), n);
      const uint32_t w = DimOf(cells, 0);
      for (size_t k = 0; k < n; ++k) {
        const auto c = Coords(cells, k);
        if (!Same(mirrored[k], src[c[1] * w + (w - 1 - c[0])])) bad.Add(k, "mirror_x got " + Text(mirrored[k]));
      }
      // A bound tensor must outlive its binding (kiln/compute.h): unbind before Release() deletes it.
      KilnScriptBindAllocation(s, "gSource", nullptr);
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
}

TEST_F(Corpus, OldStyleRoot) {
  KilnScript* usr = Script("root_usrdata");
  ASSERT_NE(usr, nullptr) << messages_.All();
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto px = RandomFull<uint8_t>(n * 4, 500);
    const auto out = Map<float>(usr, "root", {In(cells, 4, px)}, cells, 4);
    ASSERT_EQ(out.size(), n * 4);
    Mismatches bad;
    for (size_t k = 0; k < n; ++k) {
      const auto c = Coords(cells, k);
      // KilnScriptForEach passes no usrData: the kernel sees NULL.
      const float want[4] = {px[4 * k] + static_cast<float>(c[0]), px[4 * k + 1] + static_cast<float>(c[1]),
                             static_cast<float>(px[4 * k + 2]), px[4 * k + 3] + 1.0f};
      for (int l = 0; l < 4; ++l) {
        if (!Same(out[4 * k + l], want[l])) bad.Add(k, "lane " + std::to_string(l) + " got " + Text(out[4 * k + l]));
      }
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
  ExpectExact1<int16_t, int32_t>(Script("root_plain"), "root", 1, 1, 1, FullRange<int16_t>(),
                                 [](const int16_t* in, int32_t* out) { *out = int32_t{*in} * 3 - 1; });
}

// ---------------------------------------------------------------------------------------------------------
// Globals, allocations, init and invokables

// The C++ mirror of globals.rs's Tone: float3 has the size and alignment of a float4.
struct Tone {
  float gain;
  int32_t offset;
  uint8_t tint[4];
  alignas(16) float weights[4];
};
static_assert(sizeof(Tone) == 32, "Tone mirrors the script's 32-byte struct");

TEST_F(Corpus, GlobalsSetFromTheApi) {
  KilnScript* s = Script("globals");
  ASSERT_NE(s, nullptr) << messages_.All();
  Tone tone{};
  ASSERT_EQ(KilnScriptGetGlobal(s, "gTone", &tone, sizeof tone), kKilnOk) << messages_.All();
  EXPECT_EQ(tone.gain, 2.0f);
  EXPECT_EQ(tone.offset, -5);
  EXPECT_EQ(tone.tint[2], 30);
  EXPECT_EQ(tone.weights[2], 0.125f);
  int32_t primes[4] = {};
  ASSERT_EQ(KilnScriptGetGlobal(s, "kPrimes", primes, sizeof primes), kKilnOk) << messages_.All();
  EXPECT_EQ(primes[3], 7);

  // const globals cannot be set; static ones are not visible.
  const float half = 2.0f;
  EXPECT_EQ(KilnScriptSetGlobal(s, "kScale", &half, 4), kKilnInvalidArgument);
  EXPECT_EQ(KilnScriptSetGlobal(s, "kPrimes", primes, sizeof primes), kKilnInvalidArgument);
  const int32_t bias = 1;
  EXPECT_EQ(KilnScriptSetGlobal(s, "sBias", &bias, 4), kKilnInvalidArgument);
  EXPECT_EQ(KilnScriptGetGlobal(s, "sBias", primes, 4), kKilnInvalidArgument);

  const float gain = 3.0f;
  ASSERT_EQ(KilnScriptSetGlobal(s, "gGain", &gain, 4), kKilnOk);
  const int32_t offsets[4] = {-7, 0, 11, 1 << 20};
  ASSERT_EQ(KilnScriptSetGlobal(s, "gOffsets", offsets, sizeof offsets), kKilnOk);
  const int32_t table[8] = {1, -2, 3, -4, 5, -6, 7, -8};
  ASSERT_EQ(KilnScriptSetGlobal(s, "gTable", table, sizeof table), kKilnOk);
  tone = Tone{0.5f, 9, {5, 6, 7, 8}, {0.25f, 2.0f, -1.0f, 0.0f}};
  ASSERT_EQ(KilnScriptSetGlobal(s, "gTone", &tone, sizeof tone), kKilnOk);
  const int32_t new_bias = -33;
  ASSERT_EQ(KilnScriptInvoke(s, "setBias", &new_bias, sizeof new_bias), kKilnOk) << messages_.All();

  ExpectExact1<float, float>(s, "apply_gain", 1, 1, 1, Uniform(-1e6, 1e6), [&](const float* in, float* out) {
    const float scaled = *in * gain;
    *out = scaled * 0.5f;
  });
  ExpectExact1<uint8_t, float>(s, "apply_tone", 4, 4, 4, FullRange<uint8_t>(), [&](const uint8_t* in, float* out) {
    for (int l = 0; l < 3; ++l) out[l] = static_cast<float>(static_cast<uint8_t>(in[l] + tone.tint[l])) * tone.weights[l];
    out[3] = static_cast<float>(in[3] + tone.offset) * tone.gain;
  });
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto in = RandomInts<int32_t>(n, -1000000, 1000000, 600);
    const auto out = Map<int32_t>(s, "apply_offsets", {In(cells, 1, in)}, cells, 4);
    ASSERT_EQ(out.size(), 4 * n);
    Mismatches bad;
    for (size_t k = 0; k < n; ++k) {
      const uint32_t x = Coords(cells, k)[0];
      for (int l = 0; l < 4; ++l) {
        const int32_t want = in[k] + offsets[l] + table[x % 8] * primes[x % 4] + new_bias;
        if (out[4 * k + l] != want) bad.Add(k, "lane " + std::to_string(l) + " got " + Text(out[4 * k + l]));
      }
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
}

TEST_F(Corpus, PointerGlobalsBoundToAllocations) {
  KilnScript* s = Script("pointer_globals");
  ASSERT_NE(s, nullptr) << messages_.All();
  const std::vector<float> weights = RandomFloats(13, -4, 4, 700);
  const int32_t count = 13;
  ASSERT_EQ(KilnScriptSetGlobal(s, "gNumWeights", &count, 4), kKilnOk);
  uint32_t seed = 701;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    ASSERT_EQ(KilnScriptBindAllocation(s, "gWeights", In<float>({13}, 1, weights)), kKilnOk) << messages_.All();
    const auto in = RandomFloats(n, -1e3, 1e3, seed++);
    const auto out = Map<float>(s, "weighted", {In(cells, 1, in)}, cells);
    ASSERT_EQ(out.size(), n);
    Mismatches bad;
    for (size_t k = 0; k < n; ++k) {
      const float want = in[k] * weights[Coords(cells, k)[0] % 13];
      if (!Same(out[k], want)) bad.Add(k, "got " + Text(out[k]) + " want " + Text(want));
    }
    KilnTensor* counts = Out<int32_t>({16});
    ASSERT_EQ(KilnScriptBindAllocation(s, "gCounts", counts), kKilnOk) << messages_.All();
    const auto bytes = RandomFull<uint8_t>(n, seed++);
    KilnTensor* tb = In(cells, 1, bytes);
    ASSERT_EQ(KilnScriptForEach(s, "tally", &tb, 1, nullptr, nullptr), kKilnOk) << messages_.All();
    std::vector<int32_t> want(16);
    for (uint8_t b : bytes) ++want[b & 15];
    EXPECT_EQ(Read<int32_t>(counts), want);
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    ASSERT_EQ(KilnScriptBindAllocation(s, "gCounts", nullptr), kKilnOk);
    ASSERT_EQ(KilnScriptBindAllocation(s, "gWeights", nullptr), kKilnOk);
    Release();
  }
}

TEST_F(Corpus, AllocationAccessors) {
  KilnScript* s = Script("allocations");
  ASSERT_NE(s, nullptr) << messages_.All();
  std::vector<uint8_t> lut(256);
  for (int i = 0; i < 256; ++i) lut[i] = static_cast<uint8_t>((i * 167 + 13) & 255);
  uint32_t seed = 800;
  for (const Cells& cells : OddShapes3D()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    Mismatches bad;
    ASSERT_EQ(KilnScriptBindAllocation(s, "gLut", In<uint8_t>({256}, 1, lut)), kKilnOk) << messages_.All();
    // volume_add and extents over every shape (the volume has the launch's shape).
    const auto vol = RandomInts<int32_t>(n, -1000000, 1000000, seed++);
    ASSERT_EQ(KilnScriptBindAllocation(s, "gVolume", In(cells, 1, vol)), kKilnOk) << messages_.All();
    const auto in = RandomInts<int32_t>(n, -1000000, 1000000, seed++);
    const auto summed = Map<int32_t>(s, "volume_add", {In(cells, 1, in)}, cells);
    const auto ext = Map<uint32_t>(s, "extents", {In(cells, 1, std::vector<uint8_t>(n))}, cells, 4);
    ASSERT_TRUE(summed.size() == n && ext.size() == 4 * n);
    for (size_t k = 0; k < n; ++k) {
      if (summed[k] != in[k] + vol[k]) bad.Add(k, "volume_add got " + Text(summed[k]));
      // An allocation's absent dimension is 0 (RenderScript's rsAllocationGetDimY of a 1D allocation).
      const uint32_t want_y = cells.size() >= 2 ? DimOf(cells, 1) : 0u, want_z = cells.size() >= 3 ? DimOf(cells, 2) : 0u;
      if (ext[4 * k] != DimOf(cells, 0) || ext[4 * k + 1] != want_y || ext[4 * k + 2] != want_z || ext[4 * k + 3] != 0) {
        bad.Add(k, "extents got " + Text(ext[4 * k]) + "x" + Text(ext[4 * k + 1]) + "x" + Text(ext[4 * k + 2]) +
                       " lut y " + Text(ext[4 * k + 3]));
      }
    }
    const auto bytes = RandomFull<uint8_t>(n, seed++);
    const auto looked = Map<uint8_t>(s, "lookup", {In(cells, 1, bytes)}, cells);
    ASSERT_EQ(looked.size(), n);
    for (size_t k = 0; k < n; ++k) {
      if (looked[k] != lut[bytes[k]]) bad.Add(k, "lookup got " + Text(looked[k]));
    }
    if (cells.size() <= 2) {
      // transpose: gMatrix is rows x cols (a 1D shape is one row); the output is cols x rows.
      const int rows = cells.size() == 2 ? cells[0] : 1, cols = cells.back();
      const auto m = RandomFloats(n, -1, 1, seed++);
      ASSERT_EQ(KilnScriptBindAllocation(s, "gMatrix", In<float>({rows, cols}, 1, m)), kKilnOk) << messages_.All();
      const auto t = Map<float>(s, "transpose", {}, {cols, rows});
      ASSERT_EQ(t.size(), n);
      for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) {
          if (!Same(t[static_cast<size_t>(c) * rows + r], m[static_cast<size_t>(r) * cols + c])) {
            bad.Add(static_cast<size_t>(c) * rows + r, "transpose");
          }
        }
      }
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    for (const char* name : {"gLut", "gVolume", "gMatrix"}) KilnScriptBindAllocation(s, name, nullptr);
    Release();
  }
}

// rs_allocation globals of vector elements other than uchar4 (short2, float4), bound with the element stated
// (KilnScriptBindAllocationWithElement), as RenderScript apps created them with Element.I16_2 / F32_4.
TEST_F(Corpus, VectorElementAllocations) {
  KilnScript* s = Script("allocations");
  ASSERT_NE(s, nullptr) << messages_.All();
  uint32_t seed = 850;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    Mismatches bad;
    // store_swapped: a void kernel writing short2 elements of a 2D allocation at (x, y).
    const auto pairs = RandomFull<int16_t>(2 * n, seed++);
    KilnTensor* dst = Out<int16_t>(cells, 2);
    KilnTensor* src = In(cells, 2, pairs);
    ASSERT_EQ(KilnScriptBindAllocationWithElement(s, "gPairs", dst, 2), kKilnOk) << messages_.All();
    ASSERT_EQ(KilnScriptForEach(s, "store_swapped", &src, 1, nullptr, nullptr), kKilnOk) << messages_.All();
    const auto stored = Read<int16_t>(dst);
    for (size_t k = 0; k < n; ++k) {
      if (stored[2 * k] != pairs[2 * k + 1] || stored[2 * k + 1] != pairs[2 * k]) bad.Add(k, "store_swapped");
    }
    // quad_neighbours: a float4 allocation as wide as a row.
    const uint32_t w = DimOf(cells, 0);
    const auto quads = RandomFloats(4 * w, -10, 10, seed++);
    ASSERT_EQ(KilnScriptBindAllocationWithElement(s, "gQuads", In<float>({static_cast<int>(w)}, 4, quads), 4),
              kKilnOk)
        << messages_.All();
    const auto q_in = RandomFloats(4 * n, -10, 10, seed++);
    const auto q_out = Map<float>(s, "quad_neighbours", {In(cells, 4, q_in)}, cells, 4);
    ASSERT_EQ(q_out.size(), 4 * n);
    for (size_t k = 0; k < n; ++k) {
      const uint32_t next = (Coords(cells, k)[0] + 1) % w;
      for (int l = 0; l < 4; ++l) {
        if (!Same(q_out[4 * k + l], q_in[4 * k + l] + quads[4 * next + l])) bad.Add(k, "quad_neighbours");
      }
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    for (const char* name : {"gPairs", "gQuads"}) KilnScriptBindAllocation(s, name, nullptr);
    Release();
  }
}

TEST_F(Corpus, InitAndInvokables) {
  KilnScript* s = Script("init_invoke");
  ASSERT_NE(s, nullptr) << messages_.All();
  float scale = 0;
  int32_t bias = 0;
  int64_t total = 0;
  float color[4] = {};
  KilnScriptGetGlobal(s, "gScale", &scale, 4);
  KilnScriptGetGlobal(s, "gBias", &bias, 4);
  KilnScriptGetGlobal(s, "gTotal", &total, 8);
  KilnScriptGetGlobal(s, "gColor", color, 16);
  EXPECT_EQ(scale, 1.5f) << "init() ran at creation";
  EXPECT_EQ(bias, 7);
  EXPECT_EQ(total, -1);
  EXPECT_EQ(color[2], 0.75f);
  ExpectExact1<int32_t, int32_t>(s, "apply", 1, 1, 1, [](size_t n, uint32_t seed) {
    return RandomInts<int32_t>(n, -100000, 100000, seed);
  }, [](const int32_t* in, int32_t* out) { *out = *in * 1 + 7; });

  struct {
    float scale;
    int32_t bias;
    alignas(16) float color[4];
  } params = {3.0f, -4, {2.0f, 0.5f, -1.0f, 0.0f}};
  static_assert(sizeof params == 32, "setParams packs float, int, float4 at offsets 0, 4, 16");
  ASSERT_EQ(KilnScriptInvoke(s, "setParams", &params, sizeof params), kKilnOk) << messages_.All();
  EXPECT_EQ(KilnScriptInvoke(s, "setParams", &params, 24), kKilnInvalidArgument);
  struct {
    int64_t amount;
    uint8_t times;
    int16_t sign;
  } acc = {1000000000000, 3, -1};
  static_assert(sizeof acc == 16, "accumulate packs long, uchar, short at offsets 0, 8, 10");
  ASSERT_EQ(KilnScriptInvoke(s, "accumulate", &acc, sizeof acc), kKilnOk) << messages_.All();
  KilnScriptGetGlobal(s, "gTotal", &total, 8);
  EXPECT_EQ(total, -1 - 3000000000000);
  ASSERT_EQ(KilnScriptInvoke(s, "reset", nullptr, 0), kKilnOk) << messages_.All();
  int32_t invocations = 0;
  KilnScriptGetGlobal(s, "gTotal", &total, 8);
  KilnScriptGetGlobal(s, "gInvocations", &invocations, 4);
  EXPECT_EQ(total, 0);
  EXPECT_EQ(invocations, 3) << "a static global kept its count across invokables";
  EXPECT_EQ(KilnScriptInvoke(s, "missing", nullptr, 0), kKilnInvalidArgument);

  ExpectExact1<int32_t, int32_t>(s, "apply", 1, 1, 1, [](size_t n, uint32_t seed) {
    return RandomInts<int32_t>(n, -100000, 100000, seed);
  }, [](const int32_t* in, int32_t* out) { *out = *in * 3 - 4; });
  ExpectExact1<float, float>(s, "tint", 4, 4, 4, Uniform(-1e3, 1e3), [&](const float* in, float* out) {
    for (int l = 0; l < 4; ++l) out[l] = in[l] * params.color[l];
  });
}

TEST_F(Corpus, ForEachFromAnInvokable) {
  KilnScript* s = Script("foreach_invokable");
  ASSERT_NE(s, nullptr) << messages_.All();
  uint32_t seed = 900;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto in = RandomFloats(n, -100, 100, seed++);
    KilnTensor* tin = In(cells, 1, in);
    KilnTensor* tmp = Out<float>(cells);
    KilnTensor* out = Out<float>(cells);
    ASSERT_EQ(KilnScriptBindAllocation(s, "gIn", tin), kKilnOk) << messages_.All();
    ASSERT_EQ(KilnScriptBindAllocation(s, "gTmp", tmp), kKilnOk) << messages_.All();
    ASSERT_EQ(KilnScriptBindAllocation(s, "gOut", out), kKilnOk) << messages_.All();
    const float bias = 0.375f;
    ASSERT_EQ(KilnScriptInvoke(s, "pipeline", &bias, sizeof bias), kKilnOk) << messages_.All();
    const auto got = Read<float>(out);
    Mismatches bad;
    for (size_t k = 0; k < n; ++k) {
      const float b = in[k] + bias;
      if (!Same(got[k], b * b)) bad.Add(k, "pipeline got " + Text(got[k]));
    }
    // square_range over [start, end) of x only: a fresh output keeps zeros elsewhere.
    KilnTensor* ranged = Out<float>(cells);
    ASSERT_EQ(KilnScriptBindAllocation(s, "gOut", ranged), kKilnOk);
    const uint32_t w = DimOf(cells, 0);
    const uint32_t range[2] = {w / 3, w - w / 4};
    ASSERT_EQ(KilnScriptInvoke(s, "square_range", range, sizeof range), kKilnOk) << messages_.All();
    const auto part = Read<float>(ranged);
    for (size_t k = 0; k < n; ++k) {
      const uint32_t x = Coords(cells, k)[0];
      const float want = x >= range[0] && x < range[1] ? in[k] * in[k] : 0.0f;
      if (!Same(part[k], want)) bad.Add(k, "square_range got " + Text(part[k]) + " want " + Text(want));
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    for (const char* name : {"gIn", "gTmp", "gOut"}) KilnScriptBindAllocation(s, name, nullptr);
    Release();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Reductions

TEST_F(Corpus, SumReductions) {
  KilnScript* s = Script("reduce_sum");
  ASSERT_NE(s, nullptr) << messages_.All();
  uint32_t seed = 1000;
  for (const Cells& cells : OddShapes3D()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto a = RandomFull<int32_t>(n, seed++), b = RandomInts<int32_t>(n, -3, 3, seed++);
    KilnTensor* ta = In(cells, 1, a);
    KilnTensor* tb = In(cells, 1, b);
    int64_t want_sum = 0, want_dot = 0;
    for (size_t k = 0; k < n; ++k) {
      want_sum += a[k];
      want_dot += int64_t{a[k]} * b[k];
    }
    int64_t got = 0;
    ASSERT_EQ(KilnScriptReduce(s, "sum_long", &ta, 1, &got, 8, nullptr), kKilnOk) << messages_.All();
    EXPECT_EQ(got, want_sum);
    KilnTensor* pair[2] = {ta, tb};
    ASSERT_EQ(KilnScriptReduce(s, "dot_int", pair, 2, &got, 8, nullptr), kKilnOk) << messages_.All();
    EXPECT_EQ(got, want_dot);
    // Multiples of 2^-10 below 2^10 in magnitude: their sum is exact in double in any order.
    auto f = RandomFloats(n, -1000, 1000, seed++);
    double sum = 0;
    for (float& v : f) sum += (v = std::round(v * 1024.0f) / 1024.0f);
    float mean = 0;
    KilnTensor* tf = In(cells, 1, f);
    ASSERT_EQ(KilnScriptReduce(s, "mean", &tf, 1, &mean, 4, nullptr), kKilnOk) << messages_.All();
    EXPECT_EQ(mean, static_cast<float>(sum / static_cast<double>(n)));
    const auto u = RandomFull<uint32_t>(n, seed++);
    uint32_t wrapped = 0, want_wrapped = 0;
    for (uint32_t v : u) want_wrapped += v;
    KilnTensor* tu = In(cells, 1, u);
    ASSERT_EQ(KilnScriptReduce(s, "wrapping_sum", &tu, 1, &wrapped, 4, nullptr), kKilnOk) << messages_.All();
    EXPECT_EQ(wrapped, want_wrapped);
    Release();
  }
}

TEST_F(Corpus, MinMaxWithIndex) {
  KilnScript* s = Script("reduce_minmax");
  ASSERT_NE(s, nullptr) << messages_.All();
  uint32_t seed = 1100;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    // Few distinct values, so the extremes repeat and the first occurrence has to win.
    auto v = RandomFloats(n, -500, 500, seed++);
    for (float& x : v) x = std::round(x);
    KilnTensor* tv = In(cells, 1, v);
    uint32_t got[4] = {};
    ASSERT_EQ(KilnScriptReduce(s, "minmax_index", &tv, 1, got, sizeof got, nullptr), kKilnOk) << messages_.All();
    const size_t lo = std::min_element(v.begin(), v.end()) - v.begin();
    const size_t hi = std::max_element(v.begin(), v.end()) - v.begin();
    EXPECT_EQ(got[0], Coords(cells, lo)[0]);
    EXPECT_EQ(got[1], Coords(cells, lo)[1]);
    EXPECT_EQ(got[2], Coords(cells, hi)[0]);
    EXPECT_EQ(got[3], Coords(cells, hi)[1]);
    const auto bytes = RandomInts<uint8_t>(n, 0, 254, seed++);
    uint8_t max_byte = 0;
    KilnTensor* tb = In(cells, 1, bytes);
    ASSERT_EQ(KilnScriptReduce(s, "max_uchar", &tb, 1, &max_byte, 1, nullptr), kKilnOk) << messages_.All();
    EXPECT_EQ(max_byte, *std::max_element(bytes.begin(), bytes.end()));
    Release();
  }
}

TEST_F(Corpus, HistogramAndMode) {
  KilnScript* s = Script("reduce_histogram");
  ASSERT_NE(s, nullptr) << messages_.All();
  uint32_t seed = 1200;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    auto px = RandomFull<uint8_t>(4 * n, seed++);
    for (size_t k = 0; k < px.size(); ++k) px[k] = static_cast<uint8_t>(px[k] / 2 + (k % 7) * 16);  // uneven
    KilnTensor* t = In(cells, 4, px);
    std::vector<uint32_t> want(256), got(256);
    for (size_t k = 0; k < n; ++k) {
      ++want[(px[4 * k] * 77u + px[4 * k + 1] * 151u + px[4 * k + 2] * 28u) >> 8];
    }
    ASSERT_EQ(KilnScriptReduce(s, "histogram", &t, 1, got.data(), 1024, nullptr), kKilnOk) << messages_.All();
    EXPECT_EQ(got, want);
    int32_t mode[2] = {};
    ASSERT_EQ(KilnScriptReduce(s, "mode", &t, 1, mode, sizeof mode, nullptr), kKilnOk) << messages_.All();
    const size_t best = std::max_element(want.begin(), want.end()) - want.begin();
    EXPECT_EQ(mode[0], static_cast<int32_t>(best));
    EXPECT_EQ(mode[1], static_cast<int32_t>(want[best]));
    Release();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Math: table-driven ULP checks against double-precision references

// Where a math case draws its arguments: uniform in [lo, hi], or (log) |x| = 2^e with e uniform in [lo, hi].
// With a quantum, every other value is rounded to a multiple of it (to hit halves for the rounding functions).
struct Domain {
  double lo, hi;
  bool log = false;
  bool signed_values = false;
  double quantum = 0;
};
Domain Lin(double lo, double hi, double quantum = 0) { return {lo, hi, false, false, quantum}; }
Domain Log(double lo_exp, double hi_exp, bool signed_values) { return {lo_exp, hi_exp, true, signed_values, 0}; }

std::vector<float> Draw(const Domain& d, size_t n, uint32_t seed) {
  std::vector<float> v = d.log ? RandomLogFloats(n, d.lo, d.hi, d.signed_values, seed) : RandomFloats(n, d.lo, d.hi, seed);
  if (d.quantum > 0) {
    for (size_t i = 0; i < n; i += 2) v[i] = static_cast<float>(std::round(v[i] / d.quantum) * d.quantum);
  }
  return v;
}

using RefFn = double (*)(double, double);

struct MathCase {
  const char* kernel;
  double bound;  // ulp; the source of each bound is the table's comment
  RefFn ref;
  int arity;  // 1: f(float); 2: f(float, float); -2: f(float, int)
  Domain a;
  Domain b = Lin(0, 0);
  int lanes = 1;  // the element's vector width (a 3-vector is stored in 4 lanes)
};

double SinPi(double x) {
  const double n = std::nearbyint(x), r = x - n;  // exact; |r| <= 1/2
  const double s = std::sin(M_PI * r);
  return std::fmod(n, 2.0) != 0.0 ? -s : s;
}
double CosPi(double x) {
  const double n = std::nearbyint(x), r = x - n;
  const double c = std::sin(M_PI * (0.5 - std::fabs(r)));  // exact zero at the half-integers
  return std::fmod(n, 2.0) != 0.0 ? -c : c;
}
double TanPi(double x) {
  const double n = std::floor(x), r = x - n;
  if (r == 0.5) return std::fmod(n, 2.0) == 0.0 ? INFINITY : -INFINITY;  // C23: tanpi(n + 1/2)
  return std::tan(M_PI * (x - std::nearbyint(x)));
}
double RootN(double x, double n) {
  if (n == 0 || (x < 0 && std::fmod(n, 2.0) == 0.0)) return NAN;
  return x < 0 ? -std::pow(-x, 1.0 / n) : std::pow(x, 1.0 / n);
}
double Fract(double x) { return std::min(x - std::floor(x), 0x1.fffffep-1); }

#define R1(expr) [](double a, double) -> double { return expr; }
#define R2(expr) [](double a, double b) -> double { return expr; }

class CorpusMath : public Corpus {
 protected:
  // Runs every case over the odd sizes; a case fails when any lane's error exceeds its bound. Prints the worst
  // error seen per kernel.
  void RunTable(const char* kmod, const std::vector<MathCase>& cases) {
    KilnScript* s = Script(kmod);
    ASSERT_NE(s, nullptr) << messages_.All();
    uint32_t seed = 5000;
    for (const MathCase& c : cases) {
      double worst = 0;
      Mismatches bad;
      const int stored = c.lanes == 3 ? 4 : c.lanes;
      for (const Cells& cells : OddShapes()) {
        SCOPED_TRACE(std::string(c.kernel) + " " + ShapeName(cells));
        const size_t n = CellCount(cells);
        const std::vector<float> a = Draw(c.a, n * stored, seed++);
        std::vector<float> b;
        std::vector<int32_t> bi;
        std::vector<KilnTensor*> inputs = {In(cells, stored, a)};
        if (c.arity == 2) {
          b = Draw(c.b, n * stored, seed++);
          inputs.push_back(In(cells, stored, b));
        } else if (c.arity == -2) {
          bi = RandomInts<int32_t>(n * stored, static_cast<int32_t>(c.b.lo), static_cast<int32_t>(c.b.hi), seed++);
          inputs.push_back(In(cells, stored, bi));
        }
        const std::vector<float> out = Map<float>(s, c.kernel, inputs, cells, stored);
        ASSERT_EQ(out.size(), n * stored);
        for (size_t k = 0; k < n; ++k) {
          for (int l = 0; l < c.lanes; ++l) {
            const size_t i = k * stored + l;
            const double second = c.arity == 2 ? b[i] : c.arity == -2 ? bi[i] : 0.0;
            const double exact = c.ref(a[i], second);
            const double err = UlpError(out[i], exact);
            worst = std::max(worst, err);
            if (!(err <= c.bound)) {
              bad.Add(k, std::string(c.kernel) + "(" + Text(a[i]) + (c.arity != 1 ? ", " + Text(second) : "") +
                             ") = " + Text(out[i]) + ", exact " + Text(exact) + ": " + Text(err) + " ulp");
            }
          }
        }
        Release();
      }
      EXPECT_EQ(bad.count(), 0) << c.kernel << " (bound " << c.bound << " ulp): " << bad.Report();
      std::printf("  %-22s bound %7g ulp   max seen %.3f\n", c.kernel, c.bound, worst);
    }
  }
};

// rs_fp_full bounds: docs/kernel-math.md "Accuracy: full-precision functions" (OpenCL full profile).
TEST_F(CorpusMath, TrigAndHyperbolicFull) {
  RunTable("math_trig", {
      {"k_sin", 4, R1(std::sin(a)), 1, Lin(-1e5, 1e5)},
      {"k_cos", 4, R1(std::cos(a)), 1, Lin(-1e5, 1e5)},
      {"k_tan", 5, R1(std::tan(a)), 1, Lin(-1e5, 1e5)},
      {"k_asin", 4, R1(std::asin(a)), 1, Lin(-1, 1)},
      {"k_acos", 4, R1(std::acos(a)), 1, Lin(-1, 1)},
      {"k_atan", 5, R1(std::atan(a)), 1, Log(-20, 20, true)},
      {"k_sinpi", 4, R1(SinPi(a)), 1, Lin(-1e3, 1e3, 0.25)},
      {"k_cospi", 4, R1(CosPi(a)), 1, Lin(-1e3, 1e3, 0.25)},
      {"k_tanpi", 6, R1(TanPi(a)), 1, Lin(-1e3, 1e3, 0.25)},
      {"k_asinpi", 5, R1(std::asin(a) / M_PI), 1, Lin(-1, 1)},
      {"k_acospi", 5, R1(std::acos(a) / M_PI), 1, Lin(-1, 1)},
      {"k_atanpi", 5, R1(std::atan(a) / M_PI), 1, Log(-20, 20, true)},
      {"k_sinh", 4, R1(std::sinh(a)), 1, Lin(-89, 89)},
      {"k_cosh", 4, R1(std::cosh(a)), 1, Lin(-89, 89)},
      {"k_tanh", 5, R1(std::tanh(a)), 1, Lin(-12, 12)},
      {"k_asinh", 4, R1(std::asinh(a)), 1, Log(-30, 60, true)},
      {"k_acosh", 4, R1(std::acosh(a)), 1, Log(0, 60, false)},
      {"k_atanh", 5, R1(std::atanh(a)), 1, Lin(-1, 1)},
      {"k_atan2", 6, R2(std::atan2(a, b)), 2, Lin(-100, 100), Lin(-100, 100)},
      {"k_atan2pi", 6, R2(std::atan2(a, b) / M_PI), 2, Lin(-100, 100), Lin(-100, 100)},
      {"k_atan4", 5, R1(std::atan(a)), 1, Lin(-50, 50), Lin(0, 0), 4},
  });
}

TEST_F(CorpusMath, SincosFull) {
  KilnScript* s = Script("math_trig");
  ASSERT_NE(s, nullptr) << messages_.All();
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto a = RandomFloats(n, -1e4, 1e4, 77);
    const auto out = Map<float>(s, "k_sincos", {In(cells, 1, a)}, cells, 2);
    ASSERT_EQ(out.size(), 2 * n);
    Mismatches bad;
    for (size_t k = 0; k < n; ++k) {  // bound 4 ulp for sin and cos (kernel-math.md: sincos)
      if (UlpError(out[2 * k], std::sin(a[k])) > 4 || UlpError(out[2 * k + 1], std::cos(a[k])) > 4) {
        bad.Add(k, "sincos(" + Text(a[k]) + ") = " + Text(out[2 * k]) + ", " + Text(out[2 * k + 1]));
      }
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
}

TEST_F(CorpusMath, ExpLogPowFull) {
  RunTable("math_explog", {
      {"k_exp", 3, R1(std::exp(a)), 1, Lin(-104, 89)},
      {"k_exp2", 3, R1(std::exp2(a)), 1, Lin(-150, 128.5)},
      {"k_exp10", 3, R1(std::pow(10.0, a)), 1, Lin(-45, 38.6)},
      {"k_expm1", 3, R1(std::expm1(a)), 1, Lin(-20, 89)},
      {"k_log", 3, R1(std::log(a)), 1, Log(-149, 127.99, false)},
      {"k_log2", 3, R1(std::log2(a)), 1, Log(-149, 127.99, false)},
      {"k_log10", 3, R1(std::log10(a)), 1, Log(-149, 127.99, false)},
      {"k_log1p", 2, R1(std::log1p(a)), 1, Lin(-0.999, 100)},
      {"k_sqrt", 0.5, R1(std::sqrt(a)), 1, Log(-149, 127.99, false)},  // correctly rounded
      {"k_rsqrt", 2, R1(1.0 / std::sqrt(a)), 1, Log(-149, 127.99, false)},
      {"k_cbrt", 2, R1(std::cbrt(a)), 1, Log(-149, 127.99, true)},
      {"k_pow", 16, R2(std::pow(a, b)), 2, Lin(0, 50), Lin(-8, 8)},
      {"k_powr", 16, R2(std::pow(a, b)), 2, Lin(0, 50), Lin(-8, 8)},
      {"k_hypot", 4, R2(std::hypot(a, b)), 2, Lin(-1e3, 1e3), Lin(-1e3, 1e3)},
      {"k_pown", 16, R2(std::pow(a, b)), -2, Lin(-10, 10), Lin(-8, 8)},
      {"k_rootn", 16, R2(RootN(a, b)), -2, Lin(-1e3, 1e3), Lin(-6, 6)},
      {"k_exp3", 3, R1(std::exp(a)), 1, Lin(-87, 88), Lin(0, 0), 3},
      {"k_pow2", 16, R2(std::pow(a, b)), 2, Lin(0, 20), Lin(-4, 4), 2},
  });
}

// Exact functions (kernel-math.md: 0 ulp), fract/rsFrac correctly rounded (0.5 ulp of the exact x - floor(x)).
TEST_F(CorpusMath, ExactFunctions) {
  RunTable("math_exact", {
      {"k_fabs", 0, R1(std::fabs(a)), 1, Lin(-1e4, 1e4)},
      {"k_floor", 0, R1(std::floor(a)), 1, Lin(-1e4, 1e4, 0.5)},
      {"k_ceil", 0, R1(std::ceil(a)), 1, Lin(-1e4, 1e4, 0.5)},
      {"k_round", 0, R1(std::round(a)), 1, Lin(-1e4, 1e4, 0.5)},
      {"k_trunc", 0, R1(std::trunc(a)), 1, Lin(-1e4, 1e4, 0.5)},
      {"k_rint", 0, R1(std::nearbyint(a)), 1, Lin(-1e4, 1e4, 0.5)},
      {"k_fract", 0.5, R1(Fract(a)), 1, Lin(-1e4, 1e4, 0.5)},
      {"k_rsFrac", 0.5, R1(Fract(a)), 1, Lin(-1e4, 1e4, 0.5)},
      {"k_fmin", 0, R2(std::fmin(a, b)), 2, Lin(-1e3, 1e3), Lin(-1e3, 1e3)},
      {"k_fmax", 0, R2(std::fmax(a, b)), 2, Lin(-1e3, 1e3), Lin(-1e3, 1e3)},
      {"k_fmod", 0, R2(std::fmod(a, b)), 2, Lin(-1e4, 1e4), Lin(-50, 50)},
      {"k_copysign", 0, R2(std::copysign(a, b)), 2, Lin(-1e4, 1e4), Lin(-1, 1)},
      {"k_fdim", 0, R2(static_cast<double>(std::fdim(static_cast<float>(a), static_cast<float>(b)))), 2,
       Lin(-1e4, 1e4), Lin(-1e4, 1e4)},
  });
}

TEST_F(CorpusMath, FractWithFloorAndVectorRounding) {
  KilnScript* s = Script("math_exact");
  ExpectExact1<float, float>(s, "k_fract_floor", 1, 2, 2, Uniform(-1e4, 1e4), [](const float* in, float* out) {
    out[0] = static_cast<float>(Fract(*in));
    out[1] = std::floor(*in);
  });
  ExpectExact1<float, float>(s, "k_floor4", 4, 4, 4, Uniform(-1e4, 1e4), [](const float* in, float* out) {
    for (int l = 0; l < 4; ++l) out[l] = std::floor(in[l]) + std::ceil(in[3 - l]);
  });
}

// native_*: the "Test bound" column of kernel-math.md's native table over its tested domains; the native forms
// documented as the full-precision function (sinh, cbrt, atan2) get that function's full bound.
TEST_F(CorpusMath, NativeForms) {
  RunTable("math_native", {
      {"k_native_exp", 256, R1(std::exp(a)), 1, Lin(-87, 88)},
      {"k_native_exp2", 256, R1(std::exp2(a)), 1, Lin(-126, 127.99)},
      {"k_native_exp10", 256, R1(std::pow(10.0, a)), 1, Lin(-37, 38)},
      {"k_native_log", 256, R1(std::log(a)), 1, Log(-126, 127, false)},
      {"k_native_log2", 256, R1(std::log2(a)), 1, Log(-126, 127, false)},
      {"k_native_log10", 256, R1(std::log10(a)), 1, Log(-126, 127, false)},
      {"k_native_sin", 256, R1(std::sin(a)), 1, Lin(-6400, 6400)},
      {"k_native_cos", 256, R1(std::cos(a)), 1, Lin(-6400, 6400)},
      {"k_native_tan", 256, R1(std::tan(a)), 1, Lin(-6400, 6400)},
      {"k_native_atan", 256, R1(std::atan(a)), 1, Log(-60, 60, true)},
      {"k_native_recip", 1, R1(1.0 / a), 1, Log(-125, 125, true)},
      {"k_native_sqrt", 1, R1(std::sqrt(a)), 1, Log(-149, 127.99, false)},
      {"k_native_rsqrt", 2, R1(1.0 / std::sqrt(a)), 1, Log(-126, 127.99, false)},
      {"k_native_sinh", 4, R1(std::sinh(a)), 1, Lin(-89, 89)},
      {"k_native_cbrt", 2, R1(std::cbrt(a)), 1, Log(-149, 127.99, true)},
      // native_powr: x in [2^-15, 2^15], y in [-8, 8] keeps every result normal, as the tested domain requires.
      {"k_native_powr", 8192, R2(std::pow(a, b)), 2, Log(-15, 15, false), Lin(-8, 8)},
      {"k_native_divide", 1, R2(a / b), 2, Lin(-1e3, 1e3), Log(-20, 20, true)},
      {"k_native_atan2", 6, R2(std::atan2(a, b)), 2, Lin(-100, 100), Lin(-100, 100)},
      {"k_native_exp4", 256, R1(std::exp(a)), 1, Lin(-87, 88), Lin(0, 0), 4},
  });
}

// half_*: OpenCL's 8192 ulp (kernel-math.md "half_* (OpenCL bound 8192 ulp)"); half_exp* and half_log* are the
// native forms, so they are drawn from the native forms' tested domains; half_sin/cos/tan over |x| <= 2^16.
TEST_F(CorpusMath, HalfForms) {
  RunTable("math_half", {
      {"k_half_exp", 8192, R1(std::exp(a)), 1, Lin(-87, 88)},
      {"k_half_exp2", 8192, R1(std::exp2(a)), 1, Lin(-126, 127.99)},
      {"k_half_exp10", 8192, R1(std::pow(10.0, a)), 1, Lin(-37, 38)},
      {"k_half_log", 8192, R1(std::log(a)), 1, Log(-126, 127, false)},
      {"k_half_log2", 8192, R1(std::log2(a)), 1, Log(-126, 127, false)},
      {"k_half_log10", 8192, R1(std::log10(a)), 1, Log(-126, 127, false)},
      {"k_half_sin", 8192, R1(std::sin(a)), 1, Lin(-65536, 65536)},
      {"k_half_cos", 8192, R1(std::cos(a)), 1, Lin(-65536, 65536)},
      {"k_half_tan", 8192, R1(std::tan(a)), 1, Lin(-65536, 65536)},
      {"k_half_sqrt", 8192, R1(std::sqrt(a)), 1, Log(-126, 127.99, false)},
      {"k_half_rsqrt", 8192, R1(1.0 / std::sqrt(a)), 1, Log(-126, 127.99, false)},
      {"k_half_recip", 8192, R1(1.0 / a), 1, Log(-125, 125, true)},
      {"k_half_divide", 8192, R2(a / b), 2, Lin(-1e3, 1e3), Log(-20, 20, true)},
      {"k_half_powr", 8192, R2(std::pow(a, b)), 2, Log(-15, 15, false), Lin(-8, 8)},
  });
}

// rs_fp_relaxed changes contraction only (kernel-language.md), and kernel-math.md has no relaxed table, so
// the math calls keep their full bounds.
TEST_F(CorpusMath, RelaxedPrecisionMath) {
  RunTable("math_relaxed", {
      {"relaxed_sin", 4, R1(std::sin(a)), 1, Lin(-1e5, 1e5)},
      {"relaxed_exp", 3, R1(std::exp(a)), 1, Lin(-87, 88)},
      {"relaxed_log", 3, R1(std::log(a)), 1, Log(-149, 127.99, false)},
      {"relaxed_atan2", 6, R2(std::atan2(a, b)), 2, Lin(-100, 100), Lin(-100, 100)},
      {"relaxed_pow", 16, R2(std::pow(a, b)), 2, Lin(0, 50), Lin(-8, 8)},
  });
}

// relaxed_poly: t = x * 0.75; t = t + 2; t * x - 1, which relaxed code may contract in any way. Three
// roundings at most: |error| <= 3u (1 + 3u) (|0.75 x^2| + |2x| + 1) with u = 2^-24, for any contraction.
TEST_F(Corpus, RelaxedContraction) {
  KilnScript* s = Script("math_relaxed");
  ASSERT_NE(s, nullptr) << messages_.All();
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto x = RandomFloats(n, -1e3, 1e3, 88);
    const auto out = Map<float>(s, "relaxed_poly", {In(cells, 1, x)}, cells);
    ASSERT_EQ(out.size(), n);
    Mismatches bad;
    const double u = std::ldexp(1.0, -24);
    for (size_t k = 0; k < n; ++k) {
      const double v = x[k];
      const double exact = (v * 0.75 + 2.0) * v - 1.0;
      const double bound = 3 * u * (1 + 3 * u) * (0.75 * v * v + 2 * std::fabs(v) + 1);
      if (std::fabs(out[k] - exact) > bound) bad.Add(k, "x " + Text(x[k]) + " got " + Text(out[k]));
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Common functions, geometry

// Plain float arithmetic that the compiler may contract (C allows a * b + c to fuse within an expression): the
// result must equal the fused or the unfused evaluation exactly.
bool FusedOrNot(float got, float fused, float unfused) { return Same(got, fused) || Same(got, unfused); }

TEST_F(Corpus, CommonFunctions) {
  KilnScript* s = Script("math_common");
  ASSERT_NE(s, nullptr) << messages_.All();
  const float e0 = -0.5f, e1 = 0.75f;
  ExpectExact1<float, float>(s, "k_clamp", 1, 1, 1, Uniform(-5, 5),
                             [](const float* in, float* out) { *out = std::min(std::max(*in, -1.0f), 2.0f); });
  ExpectExact1<float, float>(s, "k_step", 1, 1, 1, [](size_t n, uint32_t seed) {
    auto v = RandomFloats(n, -1, 1, seed);
    for (size_t i = 0; i < n; i += 5) v[i] = 0.25f;  // the edge itself gives 1
    return v;
  }, [](const float* in, float* out) { *out = *in < 0.25f ? 0.0f : 1.0f; });
  ExpectExact1<float, float>(s, "k_sign", 1, 1, 1, [](size_t n, uint32_t seed) {
    auto v = RandomFloats(n, -1, 1, seed);
    for (size_t i = 0; i < n; i += 3) v[i] = i % 2 ? -0.0f : 0.0f;
    return v;
  }, [](const float* in, float* out) { *out = *in > 0 ? 1.0f : *in < 0 ? -1.0f : *in; });
  ExpectExact1<float, float>(s, "k_degrees", 1, 1, 1, Uniform(-10, 10),
                             [](const float* in, float* out) { *out = *in * 57.295779513082320876f; });
  ExpectExact1<float, float>(s, "k_radians", 1, 1, 1, Uniform(-1000, 1000),
                             [](const float* in, float* out) { *out = *in * 0.017453292519943295769f; });
  ExpectExact1<int32_t, uint32_t>(s, "k_abs", 1, 1, 1, FullRange<int32_t>(), [](const int32_t* in, uint32_t* out) {
    *out = *in < 0 ? 0u - static_cast<uint32_t>(*in) : static_cast<uint32_t>(*in);
  });
  ExpectExact1<uint8_t, uint8_t>(s, "k_uchar_clamp", 4, 4, 4, FullRange<uint8_t>(), [](const uint8_t* in, uint8_t* out) {
    for (int l = 0; l < 4; ++l) out[l] = std::min<uint8_t>(std::max<uint8_t>(in[l], 40), 200);
  });
  ExpectExact1<int64_t, int64_t>(s, "k_long_clamp", 2, 2, 2, FullRange<int64_t>(), [](const int64_t* in, int64_t* out) {
    out[0] = std::min<int64_t>(std::max<int64_t>(in[0], -1000000000000), 0);
    out[1] = std::min<int64_t>(std::max<int64_t>(in[1], 0), 1000000000000);
  });
  uint32_t seed = 1300;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    Mismatches bad;
    const auto a = RandomFloats(4 * n, -100, 100, seed++), b = RandomFloats(4 * n, -100, 100, seed++);
    const auto t = RandomFloats(4 * n, 0, 1, seed++), c = RandomFloats(n, -100, 100, seed++);
    KilnTensor *ta = In(cells, 1, std::vector<float>(a.begin(), a.begin() + n)),
               *tb = In(cells, 1, std::vector<float>(b.begin(), b.begin() + n)), *tc = In(cells, 1, c);
    const auto mix = Map<float>(s, "k_mix", {ta, tb}, cells);
    const auto mad = Map<float>(s, "k_mad", {ta, tb, tc}, cells);
    const auto mm = Map<float>(s, "k_minmax", {ta, tb}, cells, 2);
    const auto smooth = Map<float>(s, "k_smoothstep", {ta}, cells);
    const auto mix4 = Map<float>(s, "k_mix4", {In(cells, 4, a), In(cells, 4, b), In(cells, 4, t)}, cells, 4);
    const auto step4 = Map<float>(s, "k_step4", {In(cells, 4, a), In(cells, 4, b)}, cells, 4);
    ASSERT_TRUE(mix.size() == n && mad.size() == n && mm.size() == 2 * n && smooth.size() == n &&
                mix4.size() == 4 * n && step4.size() == 4 * n);
    const auto mix_ok = [](float got, float x, float y, float w) {  // x + (y - x) * w
      const float d = y - x;
      const float p = d * w;
      return FusedOrNot(got, std::fma(d, w, x), x + p);
    };
    for (size_t k = 0; k < n; ++k) {
      if (!mix_ok(mix[k], a[k], b[k], 0.3f)) bad.Add(k, "mix got " + Text(mix[k]));
      const float p = a[k] * b[k];
      if (!FusedOrNot(mad[k], std::fma(a[k], b[k], c[k]), p + c[k])) bad.Add(k, "mad got " + Text(mad[k]));
      if (mm[2 * k] != std::min(a[k], b[k]) || mm[2 * k + 1] != std::max(a[k], b[k])) bad.Add(k, "min/max");
      // smoothstep: u = clamp((v - e0) / (e1 - e0), 0, 1); u * u * (3 - 2u), where 3 - 2u may fuse.
      const float u = std::min(std::max((a[k] - e0) / (e1 - e0), 0.0f), 1.0f);
      const float two_u = 2.0f * u;
      const float uu = u * u;
      if (!FusedOrNot(smooth[k], uu * std::fma(-2.0f, u, 3.0f), uu * (3.0f - two_u))) {
        bad.Add(k, "smoothstep(" + Text(a[k]) + ") got " + Text(smooth[k]));
      }
      for (int l = 0; l < 4; ++l) {
        const size_t i = 4 * k + l;
        if (!mix_ok(mix4[i], a[i], b[i], t[i])) bad.Add(k, "mix4 got " + Text(mix4[i]));
        if (step4[i] != (b[i] < a[i] ? 0.0f : 1.0f)) bad.Add(k, "step4 got " + Text(step4[i]));
      }
    }
    const auto ia = RandomFull<int32_t>(4 * n, seed++), ib = RandomFull<int32_t>(4 * n, seed++);
    const auto imm = Map<int32_t>(s, "k_int_minmax", {In(cells, 4, ia), In(cells, 4, ib)}, cells, 4);
    const auto sa = RandomFull<int16_t>(n, seed++), sb = RandomFull<int16_t>(n, seed++);
    const auto smm = Map<int16_t>(s, "k_short_minmax", {In(cells, 1, sa), In(cells, 1, sb)}, cells);
    ASSERT_TRUE(imm.size() == 4 * n && smm.size() == n);
    for (size_t k = 0; k < n; ++k) {
      for (int l = 0; l < 4; ++l) {
        const size_t i = 4 * k + l;
        if (imm[i] != (l < 2 ? std::min(ia[i], ib[i]) : std::max(ia[i], ib[i]))) bad.Add(k, "int min/max");
      }
      const int16_t want = static_cast<int16_t>(std::max(sa[k], sb[k]) - std::min(sa[k], sb[k]));
      if (smm[k] != want) bad.Add(k, "short min/max got " + Text(smm[k]) + " want " + Text(want));
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
  // gEdge0/gEdge1 are script globals: the smoothstep above used their defaults.
  float edge = 0;
  EXPECT_EQ(KilnScriptGetGlobal(s, "gEdge1", &edge, 4), kKilnOk);
  EXPECT_EQ(edge, e1);
}

// dot and the matrix products: any evaluation order, fused or not, is within gamma_n * sum |a_i b_i|,
// gamma_n = n u / (1 - n u), u = 2^-24 (the classic bound for a sum of n products). cross: gamma_2 per lane.
// length/distance: OpenCL's 3 + 0.5 * ((0.5 * n) + (0.5 * (n - 1))) ulp; normalize: 2.5 + n ulp per lane
// (kernel-math.md: "3 + ..." and "2.5 + ..."); native_/fast_ forms: OpenCL's fast_* bound, 8192 ulp.
double Gamma(int n) {
  const double u = std::ldexp(1.0, -24);
  return n * u / (1 - n * u);
}

TEST_F(Corpus, Geometry) {
  KilnScript* s = Script("geometry");
  ASSERT_NE(s, nullptr) << messages_.All();
  uint32_t seed = 1400;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto a = RandomFloats(4 * n, -100, 100, seed++), b = RandomFloats(4 * n, -100, 100, seed++);
    KilnTensor *ta = In(cells, 4, a), *tb = In(cells, 4, b);
    const std::vector<float> a2(a.begin(), a.begin() + 2 * n);
    const auto dot4 = Map<float>(s, "k_dot4", {ta, tb}, cells);
    const auto dot3 = Map<float>(s, "k_dot3", {ta, tb}, cells);
    const auto cross3 = Map<float>(s, "k_cross3", {ta, tb}, cells, 4);
    const auto cross4 = Map<float>(s, "k_cross4", {ta, tb}, cells, 4);
    const auto len3 = Map<float>(s, "k_length3", {ta}, cells);
    const auto len2 = Map<float>(s, "k_length2", {In(cells, 2, a2)}, cells);
    const auto dist4 = Map<float>(s, "k_distance4", {ta, tb}, cells);
    const auto norm4 = Map<float>(s, "k_normalize4", {ta}, cells, 4);
    const auto norm3 = Map<float>(s, "k_normalize3", {ta}, cells, 4);
    const auto nlen3 = Map<float>(s, "k_native_length3", {ta}, cells);
    const auto fnorm3 = Map<float>(s, "k_fast_normalize3", {ta}, cells, 4);
    ASSERT_TRUE(dot4.size() == n && dot3.size() == n && cross3.size() == 4 * n && cross4.size() == 4 * n &&
                len3.size() == n && len2.size() == n && dist4.size() == n && norm4.size() == 4 * n &&
                norm3.size() == 4 * n && nlen3.size() == n && fnorm3.size() == 4 * n);
    Mismatches bad;
    const auto length_bound = [](int lanes) { return 3 + 0.5 * (0.5 * lanes + 0.5 * (lanes - 1)); };
    for (size_t k = 0; k < n; ++k) {
      const float* x = &a[4 * k];
      const float* y = &b[4 * k];
      for (int lanes : {3, 4}) {
        double exact = 0, mag = 0;
        for (int l = 0; l < lanes; ++l) {
          exact += static_cast<double>(x[l]) * y[l];
          mag += std::fabs(static_cast<double>(x[l]) * y[l]);
        }
        const float got = lanes == 4 ? dot4[k] : dot3[k];
        if (std::fabs(got - exact) > Gamma(lanes) * mag) bad.Add(k, "dot" + std::to_string(lanes) + " " + Text(got));
      }
      const int next[3] = {1, 2, 0}, prev[3] = {2, 0, 1};
      for (int l = 0; l < 3; ++l) {
        const double p = static_cast<double>(x[next[l]]) * y[prev[l]], q = static_cast<double>(x[prev[l]]) * y[next[l]];
        const double tol = Gamma(2) * (std::fabs(p) + std::fabs(q));
        if (std::fabs(cross3[4 * k + l] - (p - q)) > tol) bad.Add(k, "cross3 lane " + std::to_string(l));
        if (std::fabs(cross4[4 * k + l] - (p - q)) > tol) bad.Add(k, "cross4 lane " + std::to_string(l));
      }
      if (cross4[4 * k + 3] != 0.0f) bad.Add(k, "cross4 w " + Text(cross4[4 * k + 3]));
      double ss3 = 0, ss4 = 0, dd4 = 0;
      const double ss2 = static_cast<double>(a2[2 * k]) * a2[2 * k] + static_cast<double>(a2[2 * k + 1]) * a2[2 * k + 1];
      for (int l = 0; l < 4; ++l) {
        const double v = x[l];
        if (l < 3) ss3 += v * v;
        ss4 += v * v;
        dd4 += (v - y[l]) * (v - y[l]);
      }
      if (UlpError(len3[k], std::sqrt(ss3)) > length_bound(3)) bad.Add(k, "length3 " + Text(len3[k]));
      if (UlpError(len2[k], std::sqrt(ss2)) > length_bound(2)) bad.Add(k, "length2 " + Text(len2[k]));
      if (UlpError(dist4[k], std::sqrt(dd4)) > length_bound(4)) bad.Add(k, "distance4 " + Text(dist4[k]));
      if (UlpError(nlen3[k], std::sqrt(ss3)) > 8192) bad.Add(k, "native_length3 " + Text(nlen3[k]));
      for (int l = 0; l < 4; ++l) {
        if (UlpError(norm4[4 * k + l], x[l] / std::sqrt(ss4)) > 2.5 + 4) bad.Add(k, "normalize4 " + Text(norm4[4 * k + l]));
        if (l == 3) continue;
        if (UlpError(norm3[4 * k + l], x[l] / std::sqrt(ss3)) > 2.5 + 3) bad.Add(k, "normalize3 " + Text(norm3[4 * k + l]));
        if (UlpError(fnorm3[4 * k + l], x[l] / std::sqrt(ss3)) > 8192) bad.Add(k, "fast_normalize3");
      }
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Conversions, colors, rsClamp/rsFrac, rsRand, matrices, messages

TEST_F(Corpus, Conversions) {
  KilnScript* s = Script("conversions");
  ExpectExact1<float, int32_t>(s, "float4_to_int4", 4, 4, 4, Uniform(-2e9, 2e9), [](const float* in, int32_t* out) {
    for (int l = 0; l < 4; ++l) out[l] = static_cast<int32_t>(in[l]);  // truncation toward zero
  });
  ExpectExact1<int32_t, float>(s, "int4_to_float4", 4, 4, 4, FullRange<int32_t>(), [](const int32_t* in, float* out) {
    for (int l = 0; l < 4; ++l) out[l] = static_cast<float>(in[l]);
  });
  ExpectExact1<uint8_t, float>(s, "uchar3_to_float3", 4, 4, 3, FullRange<uint8_t>(), [](const uint8_t* in, float* out) {
    for (int l = 0; l < 3; ++l) out[l] = in[l];
  });
  ExpectExact1<float, uint8_t>(s, "float4_to_uchar4", 4, 4, 4, Uniform(0, 255.99), [](const float* in, uint8_t* out) {
    for (int l = 0; l < 4; ++l) out[l] = static_cast<uint8_t>(in[l]);
  });
  ExpectExact1<int16_t, int32_t>(s, "short2_to_int2", 2, 2, 2, FullRange<int16_t>(), [](const int16_t* in, int32_t* out) {
    out[0] = in[0];
    out[1] = in[1];
  });
  ExpectExact1<int32_t, int8_t>(s, "int4_to_char4", 4, 4, 4, FullRange<int32_t>(), [](const int32_t* in, int8_t* out) {
    for (int l = 0; l < 4; ++l) out[l] = static_cast<int8_t>(in[l]);  // integer narrowing wraps
  });
  ExpectExact1<uint64_t, float>(s, "ulong2_to_float2", 2, 2, 2, FullRange<uint64_t>(), [](const uint64_t* in, float* out) {
    out[0] = static_cast<float>(in[0]);
    out[1] = static_cast<float>(in[1]);
  });
  ExpectExact1<double, float>(s, "double2_to_float2", 2, 2, 2, [](size_t n, uint32_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> dist(-1e30, 1e30);
    std::vector<double> v(n);
    for (double& x : v) x = dist(rng) * std::ldexp(1.0, -static_cast<int>(rng() % 200));
    return v;
  }, [](const double* in, float* out) {
    out[0] = static_cast<float>(in[0]);
    out[1] = static_cast<float>(in[1]);
  });
  ExpectExact1<uint32_t, uint16_t>(s, "uint4_to_ushort4", 4, 4, 4, FullRange<uint32_t>(), [](const uint32_t* in, uint16_t* out) {
    for (int l = 0; l < 4; ++l) out[l] = static_cast<uint16_t>(in[l]);
  });
  ExpectExact1<int32_t, int64_t>(s, "int3_to_long3", 4, 4, 3, FullRange<int32_t>(), [](const int32_t* in, int64_t* out) {
    for (int l = 0; l < 3; ++l) out[l] = in[l];
  });
}

// rsPackColorTo8888(c) = (uchar4)(clamp(c, 0, 1) * 255 + 0.5), where the multiply-add may fuse.
uint8_t PackLane(float v, bool fused) {
  const float c = std::min(std::max(v, 0.0f), 1.0f);
  const float p = c * 255.0f;
  return static_cast<uint8_t>(fused ? std::fma(c, 255.0f, 0.5f) : p + 0.5f);
}

TEST_F(Corpus, Colors) {
  KilnScript* s = Script("colors");
  ExpectExact1<uint8_t, float>(s, "unpack", 4, 4, 4, FullRange<uint8_t>(), [](const uint8_t* in, float* out) {
    for (int l = 0; l < 4; ++l) out[l] = static_cast<float>(in[l]) * (1.0f / 255.0f);
  });
  ExpectExact1<uint8_t, uint8_t>(s, "roundtrip", 4, 4, 4, FullRange<uint8_t>(),
                                 [](const uint8_t* in, uint8_t* out) { std::memcpy(out, in, 4); });
  ASSERT_NE(s, nullptr);
  uint32_t seed = 1500;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto f = RandomFloats(4 * n, -0.2, 1.2, seed++);
    KilnTensor* tf = In(cells, 4, f);
    const auto p4 = Map<uint8_t>(s, "pack4", {tf}, cells, 4);
    const auto p3 = Map<uint8_t>(s, "pack3", {tf}, cells, 4);
    const auto prgba = Map<uint8_t>(s, "pack_rgba", {tf}, cells, 4);
    ASSERT_TRUE(p4.size() == 4 * n && p3.size() == 4 * n && prgba.size() == 4 * n);
    Mismatches bad;
    for (size_t k = 0; k < n; ++k) {
      for (int l = 0; l < 4; ++l) {
        const auto ok = [&](uint8_t got, float v) { return got == PackLane(v, true) || got == PackLane(v, false); };
        if (!ok(p4[4 * k + l], f[4 * k + l])) bad.Add(k, "pack4 lane " + std::to_string(l));
        if (!ok(p3[4 * k + l], l == 3 ? 1.0f : f[4 * k + l])) bad.Add(k, "pack3 lane " + std::to_string(l));
        if (!ok(prgba[4 * k + l], f[4 * k + 3 - l])) bad.Add(k, "pack_rgba lane " + std::to_string(l));
      }
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
}

TEST_F(Corpus, RsClampAndRsFrac) {
  KilnScript* s = Script("clamp_frac");
  ExpectExact1<int8_t, int8_t>(s, "clamp_char", 1, 1, 1, FullRange<int8_t>(),
                               [](const int8_t* in, int8_t* out) { *out = std::min<int8_t>(std::max<int8_t>(*in, -20), 90); });
  ExpectExact1<uint8_t, uint8_t>(s, "clamp_uchar", 1, 1, 1, FullRange<uint8_t>(),
                                 [](const uint8_t* in, uint8_t* out) { *out = std::min<uint8_t>(std::max<uint8_t>(*in, 16), 235); });
  ExpectExact1<int16_t, int16_t>(s, "clamp_short", 1, 1, 1, FullRange<int16_t>(), [](const int16_t* in, int16_t* out) {
    *out = std::min<int16_t>(std::max<int16_t>(*in, -1000), 1000);
  });
  ExpectExact1<uint16_t, uint16_t>(s, "clamp_ushort", 1, 1, 1, FullRange<uint16_t>(), [](const uint16_t* in, uint16_t* out) {
    *out = std::min<uint16_t>(std::max<uint16_t>(*in, 300), 60000);
  });
  ExpectExact1<int32_t, int32_t>(s, "clamp_int", 1, 1, 1, FullRange<int32_t>(),
                                 [](const int32_t* in, int32_t* out) { *out = std::min(std::max(*in, -123456), 654321); });
  ExpectExact1<uint32_t, uint32_t>(s, "clamp_uint", 1, 1, 1, FullRange<uint32_t>(), [](const uint32_t* in, uint32_t* out) {
    *out = std::min(std::max(*in, 1000u), 4000000000u);
  });
  ExpectExact1<float, float>(s, "frac", 1, 1, 1, Uniform(-1e4, 1e4),
                             [](const float* in, float* out) { *out = static_cast<float>(Fract(*in)); });
  // A clamp range set from the API.
  const int8_t lo = 5, hi = 6;
  ASSERT_EQ(KilnScriptSetGlobal(s, "gLowChar", &lo, 1), kKilnOk);
  ASSERT_EQ(KilnScriptSetGlobal(s, "gHighChar", &hi, 1), kKilnOk);
  ExpectExact1<int8_t, int8_t>(s, "clamp_char", 1, 1, 1, FullRange<int8_t>(),
                               [](const int8_t* in, int8_t* out) { *out = std::min<int8_t>(std::max<int8_t>(*in, 5), 6); });
}

// rsRand's values depend on how threads interleave, so only ranges and statistics are checked. The stream is a
// counter, so the multiset of values in one launch is deterministic and the statistics bounds cannot flake.
TEST_F(Corpus, RandomRangesAndStatistics) {
  KilnScript* s = Script("random");
  ASSERT_NE(s, nullptr) << messages_.All();
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    KilnTensor* t = In(cells, 1, std::vector<uint8_t>(n));
    const auto below = Map<int32_t>(s, "rand_below", {t}, cells);
    const auto between = Map<int32_t>(s, "rand_between", {t}, cells);
    const auto unit = Map<float>(s, "rand_unit", {t}, cells);
    const auto range = Map<float>(s, "rand_range", {t}, cells);
    ASSERT_TRUE(below.size() == n && between.size() == n && unit.size() == n && range.size() == n);
    std::vector<double> below_hist(10), between_hist(100), unit_hist(10);
    double unit_sum = 0, range_sum = 0;
    Mismatches bad;
    for (size_t k = 0; k < n; ++k) {
      if (below[k] < 0 || below[k] >= 10) bad.Add(k, "rsRand(10) = " + Text(below[k]));
      else ++below_hist[below[k]];
      if (between[k] < -50 || between[k] >= 50) bad.Add(k, "rsRand(-50, 50) = " + Text(between[k]));
      else ++between_hist[between[k] + 50];
      if (!(unit[k] >= 0.0f && unit[k] < 1.0f)) bad.Add(k, "rsRand(1.0f) = " + Text(unit[k]));
      else ++unit_hist[static_cast<int>(unit[k] * 10)];
      if (!(range[k] >= -2.0f && range[k] < 6.0f)) bad.Add(k, "rsRand(-2, 6) = " + Text(range[k]));
      unit_sum += unit[k];
      range_sum += range[k];
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    if (n >= 100000) {
      // Chi-square against uniform buckets: 9 and 99 degrees of freedom, limits far beyond p = 1e-6.
      const auto chi2 = [n](const std::vector<double>& hist) {
        const double expect = static_cast<double>(n) / hist.size();
        double x = 0;
        for (double h : hist) x += (h - expect) * (h - expect) / expect;
        return x;
      };
      EXPECT_LT(chi2(below_hist), 45.0);
      EXPECT_LT(chi2(unit_hist), 45.0);
      EXPECT_LT(chi2(between_hist), 190.0);
      const double sd = std::sqrt(1.0 / 12.0 / n);  // of the mean of n uniform [0, 1) values
      EXPECT_NEAR(unit_sum / n, 0.5, 6 * sd);
      EXPECT_NEAR(range_sum / n, 2.0, 6 * 8 * sd);
    }
    // The rsRand(min, max) bounds come from globals set through the API.
    const int32_t lo = 1000, hi = 1003;
    KilnScriptSetGlobal(s, "gMin", &lo, 4);
    KilnScriptSetGlobal(s, "gMax", &hi, 4);
    const auto narrow = Map<int32_t>(s, "rand_between", {t}, cells);
    for (int32_t v : narrow) EXPECT_TRUE(v >= 1000 && v < 1003) << v;
    const int32_t dlo = -50, dhi = 50;
    KilnScriptSetGlobal(s, "gMin", &dlo, 4);
    KilnScriptSetGlobal(s, "gMax", &dhi, 4);
    Release();
  }
}

// rsMatrixMultiply(&m, v): each lane is a sum of n products, within gamma_n * sum |m v| (see Geometry).
TEST_F(Corpus, MatrixGlobalsAndProducts) {
  KilnScript* s = Script("matrix");
  ASSERT_NE(s, nullptr) << messages_.All();
  const auto m4 = RandomFloats(16, -2, 2, 1600), m3 = RandomFloats(9, -2, 2, 1601), m2 = RandomFloats(4, -2, 2, 1602);
  ASSERT_EQ(KilnScriptSetGlobal(s, "gM4", m4.data(), 64), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptSetGlobal(s, "gM3", m3.data(), 36), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptSetGlobal(s, "gM2", m2.data(), 16), kKilnOk) << messages_.All();
  uint32_t seed = 1610;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto v = RandomFloats(4 * n, -100, 100, seed++);
    KilnTensor* tv = In(cells, 4, v);
    const std::vector<float> v2(v.begin(), v.begin() + 2 * n);
    const auto o4 = Map<float>(s, "mul4", {tv}, cells, 4);
    const auto o3 = Map<float>(s, "mul3", {tv}, cells, 4);
    const auto o2 = Map<float>(s, "mul2", {In(cells, 2, v2)}, cells, 2);
    ASSERT_TRUE(o4.size() == 4 * n && o3.size() == 4 * n && o2.size() == 2 * n);
    Mismatches bad;
    const auto check = [&](const char* what, const std::vector<float>& m, int dim, const float* in, const float* got,
                           size_t k) {
      for (int r = 0; r < dim; ++r) {
        double exact = 0, mag = 0;
        for (int c = 0; c < dim; ++c) {
          exact += static_cast<double>(m[c * dim + r]) * in[c];  // column-major: m[column * N + row]
          mag += std::fabs(static_cast<double>(m[c * dim + r]) * in[c]);
        }
        if (std::fabs(got[r] - exact) > Gamma(dim) * mag) bad.Add(k, std::string(what) + " row " + std::to_string(r));
      }
    };
    for (size_t k = 0; k < n; ++k) {
      check("mul4", m4, 4, &v[4 * k], &o4[4 * k], k);
      check("mul3", m3, 3, &v[4 * k], &o3[4 * k], k);
      check("mul2", m2, 2, &v2[2 * k], &o2[2 * k], k);
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
}

// build(angle, scale, tx): T(tx) * S(scale) * Rz(angle) (post-multiplied, degrees), its inverse, and
// rsMatrixGet/Set/Transpose. Compared with a double-precision construction within 1e-5 (entries are O(1)).
TEST_F(Corpus, MatrixTransformsFromAnInvokable) {
  KilnScript* s = Script("matrix");
  ASSERT_NE(s, nullptr) << messages_.All();
  const float args[3] = {30.0f, 2.0f, 5.0f};
  ASSERT_EQ(KilnScriptInvoke(s, "build", args, sizeof args), kKilnOk) << messages_.All();
  float built[16], inverse[16], m2[4];
  bool invertible = false;
  float probe = 0;
  KilnScriptGetGlobal(s, "gBuilt", built, 64);
  KilnScriptGetGlobal(s, "gInverse", inverse, 64);
  KilnScriptGetGlobal(s, "gInvertible", &invertible, 1);
  KilnScriptGetGlobal(s, "gProbe", &probe, 4);
  KilnScriptGetGlobal(s, "gM2", m2, 16);
  const double c = std::cos(30.0 * M_PI / 180), sn = std::sin(30.0 * M_PI / 180);
  // Row-major math notation of T * S * R.
  const double want[4][4] = {{2 * c, -2 * sn, 0, 5}, {2 * sn, 2 * c, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}};
  for (int r = 0; r < 4; ++r) {
    for (int col = 0; col < 4; ++col) EXPECT_NEAR(built[col * 4 + r], want[r][col], 1e-5) << r << "," << col;
  }
  EXPECT_TRUE(invertible);
  for (int r = 0; r < 4; ++r) {
    for (int col = 0; col < 4; ++col) {
      double sum = 0;
      for (int k = 0; k < 4; ++k) sum += static_cast<double>(inverse[k * 4 + r]) * built[col * 4 + k];
      EXPECT_NEAR(sum, r == col ? 1.0 : 0.0, 1e-5) << "inverse * built at " << r << "," << col;
    }
  }
  EXPECT_NEAR(probe, 5.0f, 1e-6);
  EXPECT_EQ(m2[2], probe) << "rsMatrixSet(&gM2, 1, 0, ...) writes column 1, row 0";
}

TEST_F(Corpus, DebugAndClientMessages) {
  KilnScript* s = Script("messages");
  ASSERT_NE(s, nullptr) << messages_.All();
  const int32_t args[2] = {3, 4};
  ASSERT_EQ(KilnScriptInvoke(s, "report", args, sizeof args), kKilnOk) << messages_.All();
  EXPECT_TRUE(messages_.Contains("corpus progress 3")) << messages_.All();
  EXPECT_TRUE(messages_.Contains("corpus fraction 0.75")) << messages_.All();
  EXPECT_TRUE(messages_.Contains("corpus pair {3, 4}")) << messages_.All();
  {
    std::lock_guard<std::mutex> lock(client_mutex_);
    ASSERT_EQ(client_messages_.size(), 2u);
    EXPECT_EQ(client_messages_[0].script, s);
    EXPECT_EQ(client_messages_[0].command, 7);
    ASSERT_EQ(client_messages_[0].data.size(), 8u);
    int32_t done = 0;
    float fraction = 0;
    std::memcpy(&done, client_messages_[0].data.data(), 4);
    std::memcpy(&fraction, client_messages_[0].data.data() + 4, 4);
    EXPECT_EQ(done, 3);
    EXPECT_EQ(fraction, 0.75f);
    EXPECT_EQ(client_messages_[1].command, 8);
    EXPECT_TRUE(client_messages_[1].data.empty());
    client_messages_.clear();
  }
  // From a kernel, on every thread: one message per negative input, command 100 + x.
  uint32_t seed = 1700;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    auto in = RandomInts<int32_t>(n, 0, 1000, seed++);
    std::multiset<int32_t> want;
    for (size_t k = 0; k < n; ++k) {
      if (k % 97 == 3 || n == 1) {
        in[k] = -1;
        want.insert(100 + static_cast<int32_t>(Coords(cells, k)[0]));
      }
    }
    KilnTensor* t = In(cells, 1, in);
    ASSERT_EQ(KilnScriptForEach(s, "flag_negative", &t, 1, nullptr, nullptr), kKilnOk) << messages_.All();
    std::multiset<int32_t> got;
    {
      std::lock_guard<std::mutex> lock(client_mutex_);
      for (const ClientMessage& m : client_messages_) got.insert(m.command);
      client_messages_.clear();
    }
    EXPECT_TRUE(got == want) << "got " << got.size() << " messages, want " << want.size();
    Release();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Image kernels as RenderScript apps wrote them: uchar4 pixels in a uint8 tensor [H, W, 4] (or [W, 4])

// Within one step of 255 per channel (rs_fp_relaxed: a contracted weighted sum may round across .5).
void ExpectWithinOne(const std::vector<uint8_t>& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  Mismatches bad;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::fabs(got[i] - want[i]) > 1.0) bad.Add(i / 4, std::string(what) + " lane " + std::to_string(i % 4) +
                                                          " got " + Text(got[i]) + " want " + Text(want[i]));
  }
  EXPECT_EQ(bad.count(), 0) << bad.Report();
}
// (uchar)(clamp(v, 0, 1) * 255 + 0.5) in exact arithmetic.
double PackExact(double v) { return std::floor(std::min(std::max(v, 0.0), 1.0) * 255 + 0.5); }

std::vector<uint8_t> RandomImage(size_t pixels, uint32_t seed) {
  // Smooth-ish content with noise, like a photo, rather than pure noise.
  auto px = RandomFull<uint8_t>(4 * pixels, seed);
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>((px[i] / 4) + ((i / 4) % 191));
  return px;
}

TEST_F(Corpus, ImageGreyscale) {
  KilnScript* s = Script("image_grey");
  ASSERT_NE(s, nullptr) << messages_.All();
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto px = RandomImage(n, 1800);
    const auto out = Map<uint8_t>(s, "grey", {In(cells, 4, px)}, cells, 4);
    std::vector<double> want(4 * n);
    for (size_t k = 0; k < n; ++k) {
      const double y = (0.2126 * px[4 * k] + 0.7152 * px[4 * k + 1] + 0.0722 * px[4 * k + 2]) / 255.0;
      want[4 * k] = want[4 * k + 1] = want[4 * k + 2] = PackExact(y);
      want[4 * k + 3] = px[4 * k + 3];
    }
    ExpectWithinOne(out, want, "grey");
    Release();
  }
}

TEST_F(Corpus, ImageLevels) {
  KilnScript* s = Script("image_levels");
  ASSERT_NE(s, nullptr) << messages_.All();
  const float args[6] = {20.0f, 230.0f, 10.0f, 250.0f, 0.8f, 1.3f};
  ASSERT_EQ(KilnScriptInvoke(s, "setLevels", args, sizeof args), kKilnOk) << messages_.All();
  const double sat = args[5];
  const double w[3] = {0.299 * (1 - sat), 0.587 * (1 - sat), 0.114 * (1 - sat)};
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto px = RandomImage(n, 1900);
    const auto out = Map<uint8_t>(s, "levels", {In(cells, 4, px)}, cells, 4);
    std::vector<double> want(4 * n);
    for (size_t k = 0; k < n; ++k) {
      const uint8_t* p = &px[4 * k];
      for (int ch = 0; ch < 3; ++ch) {
        // Row ch of the column-major saturation matrix: w[col] + (col == ch ? sat : 0).
        double v = 0;
        for (int col = 0; col < 3; ++col) v += (w[col] + (col == ch ? sat : 0.0)) * p[col];
        v = std::min(std::max((v - args[0]) / (args[1] - args[0]), 0.0), 1.0);
        v = std::pow(v, static_cast<double>(args[4]));
        want[4 * k + ch] = std::floor(std::min(std::max(v * (args[3] - args[2]) + args[2] + 0.5, 0.0), 255.0));
      }
      want[4 * k + 3] = p[3];
    }
    ExpectWithinOne(out, want, "levels");
    Release();
  }
}

TEST_F(Corpus, ImageColorMatrix) {
  KilnScript* s = Script("image_color_matrix");
  ASSERT_NE(s, nullptr) << messages_.All();
  // Sepia on RGB (column-major), alpha kept, plus a small offset.
  const float m[16] = {0.393f, 0.349f, 0.272f, 0, 0.769f, 0.686f, 0.534f, 0, 0.189f, 0.168f, 0.131f, 0, 0, 0, 0, 1};
  const float add[4] = {0.02f, -0.01f, 0.0f, 0.0f};
  ASSERT_EQ(KilnScriptSetGlobal(s, "gMatrix", m, sizeof m), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptSetGlobal(s, "gAdd", add, sizeof add), kKilnOk) << messages_.All();
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto px = RandomImage(n, 2000);
    const auto out = Map<uint8_t>(s, "color_matrix", {In(cells, 4, px)}, cells, 4);
    std::vector<double> want(4 * n);
    for (size_t k = 0; k < n; ++k) {
      for (int r = 0; r < 4; ++r) {
        double v = add[r];
        for (int c = 0; c < 4; ++c) v += static_cast<double>(m[c * 4 + r]) * (px[4 * k + c] / 255.0);
        want[4 * k + r] = PackExact(v);
      }
    }
    ExpectWithinOne(out, want, "color_matrix");
    Release();
  }
}

// With dyadic (1/16) and integer coefficients every sum is exact in float, so the result must match exactly.
TEST_F(Corpus, ImageConvolve3x3) {
  KilnScript* s = Script("image_convolve");
  ASSERT_NE(s, nullptr) << messages_.All();
  const float gaussian[9] = {1 / 16.f, 2 / 16.f, 1 / 16.f, 2 / 16.f, 4 / 16.f, 2 / 16.f, 1 / 16.f, 2 / 16.f, 1 / 16.f};
  const float sharpen[9] = {0, -1, 0, -1, 5, -1, 0, -1, 0};
  for (const float* coeffs : {gaussian, sharpen}) {
    ASSERT_EQ(KilnScriptSetGlobal(s, "gCoeffs", coeffs, 36), kKilnOk) << messages_.All();
    for (const Cells& cells : OddShapes()) {
      SCOPED_TRACE(ShapeName(cells) + (coeffs == sharpen ? " sharpen" : " gaussian"));
      const size_t n = CellCount(cells);
      const auto px = RandomImage(n, 2100);
      ASSERT_EQ(KilnScriptBindAllocation(s, "gIn", In(cells, 4, px)), kKilnOk) << messages_.All();
      const auto out = Map<uint8_t>(s, "convolve", {}, cells, 4);
      ASSERT_EQ(out.size(), 4 * n);
      const int w = static_cast<int>(DimOf(cells, 0)), h = static_cast<int>(DimOf(cells, 1));
      Mismatches bad;
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
          for (int ch = 0; ch < 4; ++ch) {
            float sum = 0;
            for (int j = -1; j <= 1; ++j) {
              for (int i = -1; i <= 1; ++i) {
                const int xi = std::min(std::max(x + i, 0), w - 1), yj = std::min(std::max(y + j, 0), h - 1);
                sum += px[(static_cast<size_t>(yj) * w + xi) * 4 + ch] * coeffs[(j + 1) * 3 + (i + 1)];
              }
            }
            const uint8_t want = static_cast<uint8_t>(std::min(std::max(sum + 0.5f, 0.0f), 255.0f));
            const size_t idx = (static_cast<size_t>(y) * w + x) * 4 + ch;
            if (out[idx] != want) bad.Add(idx / 4, "got " + Text(out[idx]) + " want " + Text(want));
          }
        }
      }
      EXPECT_EQ(bad.count(), 0) << bad.Report();
      KilnScriptBindAllocation(s, "gIn", nullptr);
      Release();
    }
  }
}

// One blur pass over channel-interleaved RGBA: sum of weights[i + r] * src at the clamped neighbour i along x
// (horizontal) or y, in double.
template <typename T>
std::vector<double> BlurPass(const std::vector<T>& src, int w, int h, const float* weights, int r, bool horizontal) {
  std::vector<double> out(src.size());
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int ch = 0; ch < 4; ++ch) {
        double sum = 0;
        for (int i = -r; i <= r; ++i) {
          const int xi = horizontal ? std::min(std::max(x + i, 0), w - 1) : x;
          const int yi = horizontal ? y : std::min(std::max(y + i, 0), h - 1);
          sum += static_cast<double>(src[(static_cast<size_t>(yi) * w + xi) * 4 + ch]) * weights[i + r];
        }
        out[(static_cast<size_t>(y) * w + x) * 4 + ch] = sum;
      }
    }
  }
  return out;
}
std::vector<double> ToPixels(std::vector<double> sums) {
  for (double& v : sums) v = std::floor(std::min(std::max(v + 0.5, 0.0), 255.0));
  return sums;
}

class CorpusBlur : public Corpus {
 protected:
  // Runs the script's `invokable` (blur or blurFloat) at radius 3 (init's default) and 5 (setRadius) and checks
  // each pass: the intermediate image against the horizontal pass of the input, the output against the
  // vertical pass of the intermediate the script actually produced (each within 1 in 255, rs_fp_relaxed).
  template <typename Tmp>
  void RunBlur(const char* invokable, const char* tmp_name) {
    KilnScript* s = Script("image_blur");
    ASSERT_NE(s, nullptr) << messages_.All();
    int32_t radius = 0;
    ASSERT_EQ(KilnScriptGetGlobal(s, "gRadius", &radius, 4), kKilnOk);
    EXPECT_EQ(radius, 3) << "init() computed the default weights";
    for (int r : {3, 5}) {
      if (r != 3) ASSERT_EQ(KilnScriptInvoke(s, "setRadius", &r, 4), kKilnOk) << messages_.All();
      float weights[17] = {};
      ASSERT_EQ(KilnScriptGetGlobal(s, "gWeights", weights, sizeof weights), kKilnOk);
      // A normalized Gaussian with sigma = 0.4 r + 0.6 (exp within 3 ulp, then float sums and a division).
      const double sigma = 0.4 * r + 0.6;
      double total = 0;
      for (int i = -r; i <= r; ++i) total += std::exp(-(i * i) / (2 * sigma * sigma));
      for (int i = -r; i <= r; ++i) {
        EXPECT_NEAR(weights[i + r], std::exp(-(i * i) / (2 * sigma * sigma)) / total, 1e-6) << "weight " << i;
      }
      for (const Cells& cells : OddShapes()) {
        SCOPED_TRACE(ShapeName(cells) + " radius " + std::to_string(r));
        const size_t n = CellCount(cells);
        const auto px = RandomImage(n, 2200);
        KilnTensor* tmp = Out<Tmp>(cells, 4);
        KilnTensor* out = Out<uint8_t>(cells, 4);
        ASSERT_EQ(KilnScriptBindAllocation(s, "gIn", In(cells, 4, px)), kKilnOk) << messages_.All();
        ASSERT_EQ(KilnScriptBindAllocationWithElement(s, tmp_name, tmp, 4), kKilnOk) << messages_.All();
        ASSERT_EQ(KilnScriptBindAllocation(s, "gOut", out), kKilnOk) << messages_.All();
        ASSERT_EQ(KilnScriptInvoke(s, invokable, nullptr, 0), kKilnOk) << messages_.All();
        const int w = static_cast<int>(DimOf(cells, 0)), h = static_cast<int>(DimOf(cells, 1));
        const std::vector<Tmp> got_tmp = Read<Tmp>(tmp);
        const std::vector<double> want_tmp = BlurPass(px, w, h, weights, r, true);
        if constexpr (std::is_same_v<Tmp, uint8_t>) {
          ExpectWithinOne(got_tmp, ToPixels(want_tmp), "horizontal");
        } else {
          Mismatches bad;  // 17 float products and sums of values <= 255: well within 1e-3
          for (size_t i = 0; i < got_tmp.size(); ++i) {
            if (std::fabs(got_tmp[i] - want_tmp[i]) > 1e-3) bad.Add(i / 4, "horizontal got " + Text(got_tmp[i]));
          }
          EXPECT_EQ(bad.count(), 0) << bad.Report();
        }
        ExpectWithinOne(Read<uint8_t>(out), ToPixels(BlurPass(got_tmp, w, h, weights, r, false)), "vertical");
        for (const char* name : {"gIn", tmp_name, "gOut"}) KilnScriptBindAllocation(s, name, nullptr);
        Release();
      }
    }
  }
};

TEST_F(CorpusBlur, ImageBlurScriptWithInitAndInvokables) { RunBlur<uint8_t>("blur", "gTmp"); }

// The same blur with a float4 intermediate image, bound as float4 elements.
TEST_F(CorpusBlur, ImageBlurWithFloatIntermediate) { RunBlur<float>("blurFloat", "gTmpF"); }

TEST_F(Corpus, ImageVignetteUsesXY) {
  KilnScript* s = Script("image_vignette");
  ASSERT_NE(s, nullptr) << messages_.All();
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const float center[2] = {DimOf(cells, 0) / 2.0f, DimOf(cells, 1) / 2.0f};
    const float inv_radius = 1.0f / std::max(center[0], center[1]);
    ASSERT_EQ(KilnScriptSetGlobal(s, "gCenter", center, 8), kKilnOk);
    ASSERT_EQ(KilnScriptSetGlobal(s, "gInvRadius", &inv_radius, 4), kKilnOk);
    const auto px = RandomImage(n, 2300);
    const auto out = Map<uint8_t>(s, "vignette", {In(cells, 4, px)}, cells, 4);
    std::vector<double> want(4 * n);
    for (size_t k = 0; k < n; ++k) {
      const auto c = Coords(cells, k);
      const double dx = (c[0] - static_cast<double>(center[0])) * inv_radius;
      const double dy = (c[1] - static_cast<double>(center[1])) * inv_radius;
      const double keep = std::min(std::max(1.0 - 0.8 * (dx * dx + dy * dy), 0.0), 1.0);
      for (int ch = 0; ch < 3; ++ch) want[4 * k + ch] = PackExact(px[4 * k + ch] / 255.0 * keep);
      want[4 * k + 3] = px[4 * k + 3];
    }
    ExpectWithinOne(out, want, "vignette");
    Release();
  }
}

// Under KILN_TEST_DRIVER, the run as a whole must have placed kernels on the driver, or it tested only the CPU.
class DriverPlacementCheck : public ::testing::Environment {
 public:
  void TearDown() override {
    const char* driver = std::getenv("KILN_TEST_DRIVER");
    if (driver == nullptr || *driver == '\0') return;
    std::printf("kernels placed on %s over the run: %d\n", driver, Corpus::total_on_driver_);
    // A kernel placed on the driver in one test and on the CPU in none counts as running on the driver.
    std::set<std::string> cpu_only;
    for (const std::string& k : Corpus::unique_on_cpu_) {
      if (!Corpus::unique_on_driver_.count(k)) cpu_only.insert(k);
    }
    const size_t all = Corpus::unique_on_driver_.size() + cpu_only.size();
    std::printf("distinct kernels and reductions on the driver: %zu of %zu (%.1f%%)\n",
                Corpus::unique_on_driver_.size(), all,
                all ? 100.0 * static_cast<double>(Corpus::unique_on_driver_.size()) / static_cast<double>(all) : 0.0);
    EXPECT_GT(Corpus::total_on_driver_, 0) << "no corpus kernel ran on " << driver;
  }
};
::testing::Environment* const kDriverPlacementCheck = ::testing::AddGlobalTestEnvironment(new DriverPlacementCheck);

}  // namespace
}  // namespace kiln
