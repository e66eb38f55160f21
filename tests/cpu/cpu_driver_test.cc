// The CPU driver, end to end through its HAL table: real clang-19 bitcode (tests/cpu/kernels) is compiled by
// the driver, linked per script, and launched; results are checked against plain C++ loops.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "backends/cpu/object_cache.h"
#include "tests/cpu/cpu_driver_harness.h"

namespace kiln {
namespace {

using testing::CpuDriverHarness;
using testing::DenseView;
using testing::ForEachDesc;
using testing::ModuleDescBuilder;

std::string KernelBitcode(const char* name) {
  std::string bitcode = testing::ReadBinaryFile(std::string(KILN_CPU_TEST_KERNEL_DIR) + "/" + name + ".bc");
  EXPECT_FALSE(bitcode.empty()) << "missing kernel bitcode " << name
                                << ".bc (built by kiln_cpu_test_kernels)";
  return bitcode;
}

// A fresh, private cache folder per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/kiln-cpu-test-XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }
  std::vector<std::string> Files() const {
    std::vector<std::string> files;
    if (DIR* dir = opendir(path_.c_str())) {
      while (dirent* entry = readdir(dir)) {
        if (entry->d_name[0] != '.') files.push_back(path_ + "/" + entry->d_name);
      }
      closedir(dir);
    }
    return files;
  }

 private:
  std::string path_;
};

constexpr uint32_t kIn = KILN_HAL_SIG_IN;
constexpr uint32_t kOut = KILN_HAL_SIG_OUT;
constexpr uint32_t kKernel = KILN_HAL_SIG_KERNEL;

ModuleDescBuilder AtanModule() {
  ModuleDescBuilder builder("atan_op.rs", KernelBitcode("atan_op"));
  builder.Kernel("atan_op", kIn | kOut | kKernel, {4}, 4).Global("offset", 4);
  return builder;
}

// Kernel, invokable and reduction indices of ArithModule().
enum { kAdd = 0, kMad2d = 1, kCoords = 2 };
enum { kSetGain = 0, kBump = 1, kHello = 2, kBadAccess = 3, kNested = 4 };

ModuleDescBuilder ArithModule() {
  ModuleDescBuilder builder("arith.rs", KernelBitcode("arith"));
  builder.Kernel("add", kIn | kOut | kKernel, {4, 4}, 4)
      .Kernel("mad2d", kIn | kOut | kKernel | KILN_HAL_SIG_X | KILN_HAL_SIG_Y, {4}, 4)
      .Kernel("coords", kOut | kKernel | KILN_HAL_SIG_X | KILN_HAL_SIG_Y | KILN_HAL_SIG_Z, {}, 4)
      .Global("gain", 4)
      .Global("counter", 4)
      .Global("g_in", sizeof(void*), KILN_HAL_GLOBAL_ALLOCATION)
      .Global("g_out", sizeof(void*), KILN_HAL_GLOBAL_ALLOCATION)
      .Invokable("set_gain", 4)
      .Invokable("bump", 4)
      .Invokable("hello", 0)
      .Invokable("bad_access", 0)
      .Invokable("nested", 0)
      .Reduction("sum_i32", {4}, 8, 8, 8)
      .Flags(KILN_HAL_MODULE_HAS_INIT)
      .Import("__kiln_rt_debug")
      .Import("__kiln_rt_send_to_client");
  return builder;
}

class CpuDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    harness_ =
        std::make_unique<CpuDriverHarness>(std::map<std::string, std::string>{{"cache_dir", cache_.path()}});
    ASSERT_TRUE(harness_->ok()) << harness_->LastError();
  }
  void TearDown() override {
    for (KilnHalScript* script : scripts_) EXPECT_EQ(hal().script_destroy(script), kKilnOk);
    for (KilnHalModule* module : modules_) EXPECT_EQ(hal().module_unload(module), kKilnOk);
    for (KilnHalBuffer* buffer : buffers_) EXPECT_EQ(hal().buffer_destroy(buffer), kKilnOk);
    harness_.reset();
  }
  const KilnHalDriver& hal() { return harness_->hal(); }

  KilnHalModule* Load(ModuleDescBuilder& builder) {
    KilnHalModule* module = nullptr;
    KilnStatus status = hal().module_load(harness_->device(), builder.Build(), &module);
    EXPECT_EQ(status, kKilnOk) << harness_->LastError();
    if (module) modules_.push_back(module);
    return module;
  }
  KilnHalScript* NewScript(KilnHalModule* module, void* user_data = nullptr) {
    KilnHalScript* script = nullptr;
    EXPECT_EQ(hal().script_create(module, user_data, &script), kKilnOk) << harness_->LastError();
    if (script) scripts_.push_back(script);
    return script;
  }
  KilnHalBuffer* Wrap(void* host, uint64_t bytes) {
    KilnHalBuffer* buffer = harness_->CreateBuffer(bytes, host);
    EXPECT_NE(buffer, nullptr) << harness_->LastError();
    if (buffer) buffers_.push_back(buffer);
    return buffer;
  }

  // Runs atan_op over n floats and compares with std::atan(x + offset).
  void CheckAtan(KilnHalScript* script, uint32_t n, float offset) {
    std::vector<float> in(n), out(n, -100.0f);
    for (uint32_t i = 0; i < n; ++i) in[i] = static_cast<float>(static_cast<int>(i % 2001) - 1000) * 0.01f;
    KilnHalBufferView in_view = DenseView(Wrap(in.data(), n * 4ull), 4);
    KilnHalBufferView out_view = DenseView(Wrap(out.data(), n * 4ull), 4);
    KilnHalForEachDesc desc = ForEachDesc(0, n, 1, 1, &in_view, 1, &out_view);
    ASSERT_EQ(hal().launch_for_each(script, &desc), kKilnOk) << harness_->LastError();
    for (uint32_t i = 0; i < n; ++i) {
      float expected = std::atan(in[i] + offset);
      ASSERT_NEAR(out[i], expected, 2e-6f * std::max(1.0f, std::fabs(expected))) << "n=" << n << " i=" << i;
    }
  }

  TempDir cache_;
  std::unique_ptr<CpuDriverHarness> harness_;
  std::vector<KilnHalScript*> scripts_;
  std::vector<KilnHalModule*> modules_;
  std::vector<KilnHalBuffer*> buffers_;
};

TEST_F(CpuDriverTest, DeviceInfoDescribesTheHost) {
  uint32_t count = 0;
  ASSERT_EQ(hal().device_count(hal().instance, &count), kKilnOk);
  EXPECT_EQ(count, 1u);
  KilnHalDeviceInfo info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(hal().device_get_info(hal().instance, 0, &info), kKilnOk);
  EXPECT_EQ(info.type, static_cast<uint32_t>(kKilnHalDeviceCpu));
  EXPECT_EQ(info.max_kernel_level, KILN_HAL_LEVEL(KILN_KERNEL_HAL_LEVEL_MAJOR, KILN_KERNEL_HAL_LEVEL_MINOR));
  EXPECT_TRUE(info.flags & KILN_HAL_DEVICE_HOST_SHARED_MEMORY);
  EXPECT_STREQ(info.payload_tags, "llvm-bc");
  EXPECT_GT(info.memory_bytes, 0u);
  EXPECT_GE(info.limits.max_threads, 1u);
  EXPECT_EQ(info.limits.max_inputs, static_cast<uint32_t>(KILN_KERNEL_MAX_INPUTS));
  EXPECT_EQ(hal().hal_major, KILN_HAL_VERSION_MAJOR);
  KilnHalDeviceInfo missing{};
  missing.struct_size = sizeof(missing);
  EXPECT_EQ(hal().device_get_info(hal().instance, 1, &missing), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("device index 1"), std::string::npos);
}

TEST(CpuDriverQueryTest, RefusesAnotherHalMajor) {
  KilnHalDriver driver{};
  driver.struct_size = sizeof(driver);
  EXPECT_EQ(kiln_cpu_driver_query(KILN_HAL_VERSION_MAJOR + 1, 0, nullptr, &driver), kKilnUnsupported);
  EXPECT_EQ(driver.shutdown, nullptr);
}

TEST_F(CpuDriverTest, ForEachMatchesAPlainLoopAtEverySize) {
  ModuleDescBuilder builder = AtanModule();
  KilnHalModule* module = Load(builder);
  ASSERT_NE(module, nullptr);
  bool supported = false;
  ASSERT_EQ(hal().module_kernel_supported(module, 0, &supported, nullptr), kKilnOk);
  EXPECT_TRUE(supported);
  KilnHalScript* script = NewScript(module);
  ASSERT_NE(script, nullptr);
  for (uint32_t n : {1u, 7u, 1000003u}) CheckAtan(script, n, 0.0f);
  const float offset = 0.25f;
  ASSERT_EQ(hal().script_set_global(script, "offset", &offset, sizeof(offset)), kKilnOk);
  CheckAtan(script, 1000003, offset);
}

TEST_F(CpuDriverTest, VectorMathOptionKeepsResults) {
  // veclib=libmvec lets the vectorizer call glibc's vector atanf (the kernel is compiled with
  // -fno-math-errno, as kilnc compiles kernels); the results stay within a few ulp of std::atan.
  for (const char* options : {"veclib=libmvec", "veclib=libmvec,prefer-vector-width=512"}) {
    ModuleDescBuilder builder = AtanModule();
    builder.Options(options);
    KilnHalScript* script = NewScript(Load(builder));
    ASSERT_NE(script, nullptr) << options;
    for (uint32_t n : {7u, 100003u}) CheckAtan(script, n, 0.0f);
  }
  ModuleDescBuilder bad = AtanModule();
  bad.Options("veclib=magic");
  KilnHalModule* module = nullptr;
  EXPECT_EQ(hal().module_load(harness_->device(), bad.Build(), &module), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("atan_op.rs: compile option \"veclib=magic\""), std::string::npos)
      << harness_->LastError();
}

TEST_F(CpuDriverTest, TwoDimensionalLaunchWithPaddedRows) {
  ModuleDescBuilder builder = ArithModule();
  KilnHalScript* script = NewScript(Load(builder));
  ASSERT_NE(script, nullptr);
  const uint32_t w = 317, h = 211, in_pitch = 320, out_pitch = 333;  // in floats
  std::vector<float> in(in_pitch * h), out(out_pitch * h, -1.0f);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 97) * 0.5f;
  const float gain = 3.0f;
  ASSERT_EQ(hal().script_invoke(script, kSetGain, &gain, sizeof(gain)), kKilnOk);
  KilnHalBufferView in_view = DenseView(Wrap(in.data(), in.size() * 4), 4);
  in_view.stride_y = in_pitch * 4;
  KilnHalBufferView out_view = DenseView(Wrap(out.data(), out.size() * 4), 4);
  out_view.stride_y = out_pitch * 4;
  KilnHalForEachDesc desc = ForEachDesc(kMad2d, w, h, 1, &in_view, 1, &out_view);
  ASSERT_EQ(hal().launch_for_each(script, &desc), kKilnOk) << harness_->LastError();
  for (uint32_t y = 0; y < h; ++y) {
    for (uint32_t x = 0; x < out_pitch; ++x) {
      float expected = x < w ? in[y * in_pitch + x] * gain + x - 2.0f * y : -1.0f;  // padding untouched
      ASSERT_EQ(out[y * out_pitch + x], expected) << "x=" << x << " y=" << y;
    }
  }
}

TEST_F(CpuDriverTest, ThreeDimensionalLaunchSeesEveryCoordinate) {
  ModuleDescBuilder builder = ArithModule();
  KilnHalScript* script = NewScript(Load(builder));
  ASSERT_NE(script, nullptr);
  const uint32_t w = 5000, h = 3, d = 4;  // rows longer than a slice: x is chunked too
  std::vector<int32_t> out(static_cast<size_t>(w) * h * d, -1);
  KilnHalBufferView out_view = DenseView(Wrap(out.data(), out.size() * 4), 4, w, h);
  KilnHalForEachDesc desc = ForEachDesc(kCoords, w, h, d, nullptr, 0, &out_view);
  ASSERT_EQ(hal().launch_for_each(script, &desc), kKilnOk) << harness_->LastError();
  for (uint32_t z = 0; z < d; ++z) {
    for (uint32_t y = 0; y < h; ++y) {
      for (uint32_t x = 0; x < w; ++x) {
        ASSERT_EQ(out[(static_cast<size_t>(z) * h + y) * w + x],
                  static_cast<int32_t>(x + 1000 * y + 1000000 * z));
      }
    }
  }
}

TEST_F(CpuDriverTest, BroadcastStrides) {
  ModuleDescBuilder builder = ArithModule();
  KilnHalScript* script = NewScript(Load(builder));
  ASSERT_NE(script, nullptr);
  const uint32_t w = 1000, h = 37;
  std::vector<float> a(w * h), row_bias(w), column_bias(h), scalar{10.0f}, out(w * h);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i);
  for (uint32_t x = 0; x < w; ++x) row_bias[x] = 0.5f * x;
  for (uint32_t y = 0; y < h; ++y) column_bias[y] = -3.0f * y;
  KilnHalBufferView inputs[2] = {DenseView(Wrap(a.data(), a.size() * 4), 4, w), {}};
  KilnHalBufferView out_view = DenseView(Wrap(out.data(), out.size() * 4), 4, w);
  KilnHalBuffer* row = Wrap(row_bias.data(), row_bias.size() * 4);
  KilnHalBuffer* column = Wrap(column_bias.data(), column_bias.size() * 4);
  KilnHalBuffer* single = Wrap(scalar.data(), 4);

  struct Case {
    const char* name;
    KilnHalBuffer* buffer;
    uint64_t sx, sy;
    float (*expected)(const std::vector<float>&, const std::vector<float>&, const std::vector<float>&,
                      uint32_t, uint32_t);
  };
  const Case cases[] = {
      {"same row for every y", row, 4, 0,
       [](const std::vector<float>& r, const std::vector<float>&, const std::vector<float>&, uint32_t x,
          uint32_t) { return r[x]; }},
      {"one value per row", column, 0, 4,
       [](const std::vector<float>&, const std::vector<float>& c, const std::vector<float>&, uint32_t,
          uint32_t y) { return c[y]; }},
      {"a single scalar", single, 0, 0,
       [](const std::vector<float>&, const std::vector<float>&, const std::vector<float>& s, uint32_t,
          uint32_t) { return s[0]; }},
  };
  for (const Case& c : cases) {
    inputs[1] = DenseView(c.buffer, 4);
    inputs[1].stride_x = c.sx;
    inputs[1].stride_y = c.sy;
    std::fill(out.begin(), out.end(), -1.0f);
    KilnHalForEachDesc desc = ForEachDesc(kAdd, w, h, 1, inputs, 2, &out_view);
    ASSERT_EQ(hal().launch_for_each(script, &desc), kKilnOk) << c.name << ": " << harness_->LastError();
    for (uint32_t y = 0; y < h; ++y) {
      for (uint32_t x = 0; x < w; ++x) {
        ASSERT_EQ(out[y * w + x], a[y * w + x] + c.expected(row_bias, column_bias, scalar, x, y))
            << c.name << " x=" << x << " y=" << y;
      }
    }
  }
}

TEST_F(CpuDriverTest, GlobalsArePerScriptInstance) {
  ModuleDescBuilder builder = ArithModule();
  KilnHalModule* module = Load(builder);
  KilnHalScript* first = NewScript(module);
  KilnHalScript* second = NewScript(module);
  ASSERT_TRUE(first && second);
  int32_t counter = 0;
  // init() ran at creation in each script.
  ASSERT_EQ(hal().script_get_global(first, "counter", 4, &counter), kKilnOk);
  EXPECT_EQ(counter, 7);
  const int32_t by = 5;
  ASSERT_EQ(hal().script_invoke(first, kBump, &by, sizeof(by)), kKilnOk);
  ASSERT_EQ(hal().script_invoke(first, kBump, &by, sizeof(by)), kKilnOk);
  ASSERT_EQ(hal().script_get_global(first, "counter", 4, &counter), kKilnOk);
  EXPECT_EQ(counter, 17);
  ASSERT_EQ(hal().script_get_global(second, "counter", 4, &counter), kKilnOk);
  EXPECT_EQ(counter, 7);

  const float gain_a = 2.0f, gain_b = -1.0f;
  ASSERT_EQ(hal().script_set_global(first, "gain", &gain_a, 4), kKilnOk);
  ASSERT_EQ(hal().script_set_global(second, "gain", &gain_b, 4), kKilnOk);
  float read = 0;
  ASSERT_EQ(hal().script_get_global(first, "gain", 4, &read), kKilnOk);
  EXPECT_EQ(read, gain_a);
  ASSERT_EQ(hal().script_get_global(second, "gain", 4, &read), kKilnOk);
  EXPECT_EQ(read, gain_b);

  // The kernels see their own script's value.
  std::vector<float> a{1, 2, 3}, b{10, 20, 30}, out_a(3), out_b(3);
  KilnHalBufferView inputs[2] = {DenseView(Wrap(a.data(), 12), 4), DenseView(Wrap(b.data(), 12), 4)};
  KilnHalBufferView view_a = DenseView(Wrap(out_a.data(), 12), 4),
                    view_b = DenseView(Wrap(out_b.data(), 12), 4);
  KilnHalForEachDesc desc_a = ForEachDesc(kAdd, 3, 1, 1, inputs, 2, &view_a);
  KilnHalForEachDesc desc_b = ForEachDesc(kAdd, 3, 1, 1, inputs, 2, &view_b);
  ASSERT_EQ(hal().launch_for_each(first, &desc_a), kKilnOk);
  ASSERT_EQ(hal().launch_for_each(second, &desc_b), kKilnOk);
  EXPECT_EQ(out_a, (std::vector<float>{21, 42, 63}));
  EXPECT_EQ(out_b, (std::vector<float>{-9, -18, -27}));

  // Errors name the problem.
  EXPECT_EQ(hal().script_set_global(first, "gain", &gain_a, 8), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("gain is 4 bytes"), std::string::npos) << harness_->LastError();
  EXPECT_EQ(hal().script_get_global(first, "no_such_global", 4, &read), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("no_such_global"), std::string::npos);
}

TEST_F(CpuDriverTest, InvokablesAndRuntimeServices) {
  ModuleDescBuilder builder = ArithModule();
  int user_data = 0;
  KilnHalScript* script = NewScript(Load(builder), &user_data);
  ASSERT_NE(script, nullptr);
  const int32_t by = 35;
  ASSERT_EQ(hal().script_invoke(script, kBump, &by, sizeof(by)), kKilnOk);
  ASSERT_EQ(hal().script_invoke(script, kHello, nullptr, 0), kKilnOk) << harness_->LastError();
  std::vector<testing::RecordedMessage> messages = harness_->Messages();
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].command, 42);
  ASSERT_EQ(messages[0].data.size(), 4u);
  int32_t payload = 0;
  memcpy(&payload, messages[0].data.data(), 4);
  EXPECT_EQ(payload, 42);  // 7 from init() + 35
  bool logged = false;
  for (const std::string& line : harness_->Logs())
    logged |= line.find("arith.rs: hello {1.5, -2}") != std::string::npos;
  EXPECT_TRUE(logged);

  EXPECT_EQ(hal().script_invoke(script, kBump, &by, 2), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("takes 4 bytes"), std::string::npos) << harness_->LastError();
  EXPECT_EQ(hal().script_invoke(script, 99, nullptr, 0), kKilnInvalidArgument);

  // An out-of-range element access fails the invocation with the script's name and the coordinates, as the
  // script's own fault (kKilnInvalidArgument: kiln/hal.h, "Launches").
  EXPECT_EQ(hal().script_invoke(script, kBadAccess, nullptr, 0), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("arith.rs, invokable bad_access: element access (5, 6, 0)"),
            std::string::npos)
      << harness_->LastError();
}

TEST_F(CpuDriverTest, NestedForEachOverBoundAllocations) {
  ModuleDescBuilder builder = ArithModule();
  KilnHalScript* script = NewScript(Load(builder));
  ASSERT_NE(script, nullptr);
  const uint32_t w = 640, h = 48;
  std::vector<float> in(w * h), out(w * h, 0.0f);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 13);
  KilnHalBufferView in_view = DenseView(Wrap(in.data(), in.size() * 4), 4, w);
  KilnHalBufferView out_view = DenseView(Wrap(out.data(), out.size() * 4), 4, w);
  ASSERT_EQ(hal().script_bind_allocation(script, "g_in", &in_view, kKilnFloat32, 1, w, h, 0), kKilnOk)
      << harness_->LastError();
  ASSERT_EQ(hal().script_bind_allocation(script, "g_out", &out_view, kKilnFloat32, 1, w, h, 0), kKilnOk);
  ASSERT_EQ(hal().script_invoke(script, kNested, nullptr, 0), kKilnOk) << harness_->LastError();
  int32_t counter = 0;
  ASSERT_EQ(hal().script_get_global(script, "counter", 4, &counter), kKilnOk);
  EXPECT_EQ(counter, 7) << "the nested rsForEach reported failure";
  for (uint32_t y = 0; y < h; ++y) {
    for (uint32_t x = 0; x < w; ++x) ASSERT_EQ(out[y * w + x], in[y * w + x] + x - 2.0f * y);
  }
  // A view that does not fit the buffer is refused.
  EXPECT_EQ(hal().script_bind_allocation(script, "g_in", &in_view, kKilnFloat32, 1, w, h + 1, 0),
            kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("past the end"), std::string::npos) << harness_->LastError();
}

TEST_F(CpuDriverTest, ReductionWithPerThreadAccumulators) {
  ModuleDescBuilder builder = ArithModule();
  KilnHalScript* script = NewScript(Load(builder));
  ASSERT_NE(script, nullptr);
  for (uint32_t n : {1u, 7u, 1000003u}) {
    std::vector<int32_t> values(n);
    int64_t expected = 0;
    for (uint32_t i = 0; i < n; ++i) {
      values[i] = static_cast<int32_t>((i * 2654435761u) % 2000001u) - 1000000;
      expected += values[i];
    }
    KilnHalBufferView view = DenseView(Wrap(values.data(), n * 4ull), 4);
    KilnHalReduceDesc desc{};
    desc.struct_size = sizeof(desc);
    desc.reduction_index = 0;
    desc.dim_x = n;
    desc.dim_y = desc.dim_z = 1;
    desc.num_inputs = 1;
    desc.inputs = &view;
    int64_t result = 0;
    ASSERT_EQ(hal().launch_reduce(script, &desc, sizeof(result), &result), kKilnOk) << harness_->LastError();
    EXPECT_EQ(result, expected) << "n=" << n;
  }
  int32_t unused = 0;
  KilnHalBufferView view = DenseView(Wrap(&unused, 4), 4);
  KilnHalReduceDesc desc{};
  desc.struct_size = sizeof(desc);
  desc.dim_x = desc.dim_y = desc.dim_z = 1;
  desc.num_inputs = 1;
  desc.inputs = &view;
  int32_t small = 0;
  EXPECT_EQ(hal().launch_reduce(script, &desc, sizeof(small), &small), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("needs 8 bytes"), std::string::npos) << harness_->LastError();
}

TEST_F(CpuDriverTest, CacheMissThenHit) {
  ModuleDescBuilder builder = AtanModule();
  KilnHalModule* first = Load(builder);
  ASSERT_NE(first, nullptr);
  KilnHalModuleInfo info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(hal().module_get_info(first, &info), kKilnOk);
  EXPECT_EQ(info.cache_result, static_cast<uint32_t>(kKilnHalCacheMiss));
  EXPECT_GT(info.compile_ns, 0u);
  EXPECT_EQ(cache_.Files().size(), 1u);

  KilnHalModule* second = Load(builder);
  ASSERT_NE(second, nullptr);
  ASSERT_EQ(hal().module_get_info(second, &info), kKilnOk);
  EXPECT_EQ(info.cache_result, static_cast<uint32_t>(kKilnHalCacheHit));
  EXPECT_EQ(info.compile_ns, 0u);
  EXPECT_EQ(info.num_kernels_supported, 1u);
  CheckAtan(NewScript(second), 1000, 0.0f);

  // Other compile options are another entry.
  builder.Options("prefer-vector-width=256");
  KilnHalModule* third = Load(builder);
  ASSERT_NE(third, nullptr);
  ASSERT_EQ(hal().module_get_info(third, &info), kKilnOk);
  EXPECT_EQ(info.cache_result, static_cast<uint32_t>(kKilnHalCacheMiss));
  EXPECT_EQ(cache_.Files().size(), 2u);
}

TEST_F(CpuDriverTest, CorruptedCacheEntryIsReportedAndRebuilt) {
  ModuleDescBuilder builder = AtanModule();
  ASSERT_NE(Load(builder), nullptr);
  std::vector<std::string> files = cache_.Files();
  ASSERT_EQ(files.size(), 1u);
  const std::string original = testing::ReadBinaryFile(files[0]);
  ASSERT_GT(original.size(), 200u);

  const std::string corruptions[] = {
      original.substr(0, original.size() / 2),  // truncated
      [&] {
        std::string s = original;
        s[s.size() - 100] ^= 0x5a;
        return s;
      }(),  // payload bit flip
      [&] {
        std::string s = original;
        s[20] ^= 0x01;
        return s;
      }(),  // header bit flip
      std::string("garbage"),
  };
  for (const std::string& corrupted : corruptions) {
    {
      std::ofstream out(files[0], std::ios::binary | std::ios::trunc);
      out.write(corrupted.data(), static_cast<std::streamsize>(corrupted.size()));
    }
    const size_t logs_before = harness_->Logs().size();
    KilnHalModule* module = Load(builder);
    ASSERT_NE(module, nullptr);
    KilnHalModuleInfo info{};
    info.struct_size = sizeof(info);
    ASSERT_EQ(hal().module_get_info(module, &info), kKilnOk);
    EXPECT_EQ(info.cache_result, static_cast<uint32_t>(kKilnHalCacheRebuilt));
    std::vector<std::string> logs = harness_->Logs();
    ASSERT_GT(logs.size(), logs_before);
    EXPECT_NE(logs.back().find("discarding the cached object"), std::string::npos) << logs.back();
    CheckAtan(NewScript(module), 100, 0.0f);
    // The rebuilt entry is whole again.
    EXPECT_EQ(testing::ReadBinaryFile(files[0]), original);
  }
}

TEST(CpuCacheKeyTest, EveryInputChangesTheKey) {
  const std::string bitcode = "BC\xc0\xde-some-bitcode";
  cpu::CacheKeyInputs base;
  base.bitcode = bitcode.data();
  base.bitcode_size = bitcode.size();
  base.compile_options = "";
  base.target_triple = "x86_64-unknown-linux-gnu";
  base.target_cpu = "rocketlake";
  base.target_features = "+avx512f,+avx2";
  base.kernel_abi_version = 1;
  base.kernel_level = KILN_HAL_LEVEL(1, 0);
  base.llvm_version = "19.1.7";
  base.driver_version = "0.1.0";
  const std::string key = cpu::ComputeCacheKey(base);
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(cpu::ComputeCacheKey(base), key);
  std::vector<cpu::CacheKeyInputs> variants(9, base);
  const std::string other_bitcode = "BC\xc0\xde-some-bitcodf";
  variants[0].bitcode = other_bitcode.data();
  variants[1].compile_options = "veclib=libmvec";
  variants[2].target_triple = "x86_64-pc-linux-gnu";
  variants[3].target_cpu = "skylake";
  variants[4].target_features = "+avx512f,-avx2";
  variants[5].kernel_abi_version = 2;
  variants[6].kernel_level = KILN_HAL_LEVEL(1, 1);
  variants[7].llvm_version = "19.1.8";
  variants[8].driver_version = "0.1.1";
  for (size_t i = 0; i < variants.size(); ++i)
    EXPECT_NE(cpu::ComputeCacheKey(variants[i]), key) << "field " << i;
  // Field boundaries matter: moving a byte from one field to the next is another key.
  cpu::CacheKeyInputs shifted = base;
  shifted.target_triple = base.target_triple + "r";
  shifted.target_cpu = "ocketlake";
  EXPECT_NE(cpu::ComputeCacheKey(shifted), key);
}

// The driver's code identity goes into every key: a rebuilt driver (another build ID) misses the cache even
// at the same version.
TEST(CpuCacheKeyTest, TheDriverBuildIsPartOfTheKey) {
  const std::string& identity = cpu::DriverCodeIdentity();
  EXPECT_EQ(identity.rfind("build-id:", 0), 0u) << identity << " (this build links with --build-id)";
  EXPECT_GT(identity.size(), std::strlen("build-id:") + 8);
  EXPECT_EQ(&cpu::DriverCodeIdentity(), &identity);  // computed once
  cpu::CacheKeyInputs a;
  a.driver_version = "0.1.0/" + identity;
  cpu::CacheKeyInputs b = a;
  b.driver_version = "0.1.0/build-id:0123456789abcdef";  // the same version, another build
  EXPECT_NE(cpu::ComputeCacheKey(a), cpu::ComputeCacheKey(b));
}

TEST(CpuDriverCacheTest, OtherCpuFeaturesAreAnotherCacheEntry) {
  TempDir cache;
  ModuleDescBuilder builder = AtanModule();
  KilnHalModuleInfo info{};
  info.struct_size = sizeof(info);
  for (const char* features : {"", "-avx512f", ""}) {
    std::map<std::string, std::string> config{{"cache_dir", cache.path()}};
    if (*features) config["cpu.target_features"] = features;
    CpuDriverHarness harness(config);
    ASSERT_TRUE(harness.ok()) << harness.LastError();
    KilnHalModule* module = nullptr;
    ASSERT_EQ(harness.hal().module_load(harness.device(), builder.Build(), &module), kKilnOk)
        << harness.LastError();
    ASSERT_EQ(harness.hal().module_get_info(module, &info), kKilnOk);
    EXPECT_EQ(harness.hal().module_unload(module), kKilnOk);
    // Host features: miss, then without AVX-512: miss (a new entry), then host again: hit.
    const bool expect_hit = cache.Files().size() == 2 && *features == '\0';
    EXPECT_EQ(info.cache_result, static_cast<uint32_t>(expect_hit ? kKilnHalCacheHit : kKilnHalCacheMiss))
        << "features '" << features << "'";
  }
  EXPECT_EQ(cache.Files().size(), 2u);
}

TEST_F(CpuDriverTest, ConcurrentLaunchesFromSeveralThreads) {
  ModuleDescBuilder builder = AtanModule();
  KilnHalModule* module = Load(builder);
  ASSERT_NE(module, nullptr);
  constexpr int kThreads = 4;
  constexpr uint32_t kSize = 100000;
  std::vector<KilnHalScript*> scripts;
  for (int t = 0; t < kThreads; ++t) {
    scripts.push_back(NewScript(module));
    ASSERT_NE(scripts.back(), nullptr);
    const float offset = 0.1f * t;
    ASSERT_EQ(hal().script_set_global(scripts.back(), "offset", &offset, 4), kKilnOk);
  }
  std::vector<float> in(kSize);
  for (uint32_t i = 0; i < kSize; ++i) in[i] = i * 1e-4f - 5.0f;
  KilnHalBufferView in_view = DenseView(Wrap(in.data(), kSize * 4), 4);
  std::vector<std::vector<float>> outs(kThreads, std::vector<float>(kSize));
  std::vector<KilnHalBufferView> out_views;
  for (int t = 0; t < kThreads; ++t) out_views.push_back(DenseView(Wrap(outs[t].data(), kSize * 4), 4));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 10; ++round) {
        KilnHalForEachDesc desc = ForEachDesc(0, kSize, 1, 1, &in_view, 1, &out_views[t]);
        if (hal().launch_for_each(scripts[t], &desc) != kKilnOk) ++failures;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0) << harness_->LastError();
  for (int t = 0; t < kThreads; ++t) {
    for (uint32_t i = 0; i < kSize; i += 7) {
      ASSERT_NEAR(outs[t][i], std::atan(in[i] + 0.1f * t), 2e-6f) << "thread " << t << " i=" << i;
    }
  }
}

TEST_F(CpuDriverTest, BatchRunsLaunchesInOrderBehindAFence) {
  ModuleDescBuilder builder = ArithModule();
  KilnHalScript* script = NewScript(Load(builder));
  ASSERT_NE(script, nullptr);
  const uint32_t n = 50000;
  std::vector<float> a(n, 1.0f), b(n, 2.0f), tmp(n), out(n);
  std::vector<int32_t> ints(n, 3);
  KilnHalBufferView av = DenseView(Wrap(a.data(), n * 4), 4), bv = DenseView(Wrap(b.data(), n * 4), 4);
  KilnHalBufferView tv = DenseView(Wrap(tmp.data(), n * 4), 4), ov = DenseView(Wrap(out.data(), n * 4), 4);
  KilnHalBufferView iv = DenseView(Wrap(ints.data(), n * 4), 4);
  KilnHalBatch* batch = nullptr;
  ASSERT_EQ(hal().batch_create(harness_->device(), &batch), kKilnOk);
  KilnHalBufferView first_inputs[2] = {av, bv}, second_inputs[2] = {tv, bv};
  KilnHalForEachDesc first = ForEachDesc(kAdd, n, 1, 1, first_inputs, 2, &tv);    // tmp = a + b
  KilnHalForEachDesc second = ForEachDesc(kAdd, n, 1, 1, second_inputs, 2, &ov);  // out = tmp + b
  ASSERT_EQ(hal().batch_record_for_each(batch, script, &first), kKilnOk);
  ASSERT_EQ(hal().batch_record_for_each(batch, script, &second), kKilnOk);
  KilnHalReduceDesc reduce{};
  reduce.struct_size = sizeof(reduce);
  reduce.dim_x = n;
  reduce.dim_y = reduce.dim_z = 1;
  reduce.num_inputs = 1;
  reduce.inputs = &iv;
  int64_t sum = 0;
  ASSERT_EQ(hal().batch_record_reduce(batch, script, &reduce, sizeof(sum), &sum), kKilnOk);
  for (int submission = 0; submission < 2; ++submission) {
    KilnHalFence* fence = nullptr;
    ASSERT_EQ(hal().batch_submit(batch, &fence), kKilnOk);
    bool done = false;
    ASSERT_EQ(hal().fence_wait(fence, UINT64_MAX, &done), kKilnOk) << harness_->LastError();
    EXPECT_TRUE(done);
    ASSERT_EQ(hal().fence_wait(fence, 0, &done), kKilnOk);  // polling a finished fence
    EXPECT_TRUE(done);
    EXPECT_EQ(hal().fence_destroy(fence), kKilnOk);
    EXPECT_EQ(sum, 3 * static_cast<int64_t>(n));
    for (uint32_t i = 0; i < n; i += 101) ASSERT_EQ(out[i], 5.0f);
    sum = 0;
  }
  EXPECT_EQ(hal().batch_destroy(batch), kKilnOk);
}

TEST_F(CpuDriverTest, BadLaunchesAreRefusedWithTheProblem) {
  ModuleDescBuilder builder = ArithModule();
  KilnHalScript* script = NewScript(Load(builder));
  ASSERT_NE(script, nullptr);
  std::vector<float> a(100), out(100);
  KilnHalBufferView inputs[2] = {DenseView(Wrap(a.data(), 400), 4), DenseView(Wrap(a.data(), 400), 4)};
  KilnHalBufferView out_view = DenseView(Wrap(out.data(), 400), 4);

  KilnHalForEachDesc too_long = ForEachDesc(kAdd, 101, 1, 1, inputs, 2, &out_view);
  EXPECT_EQ(hal().launch_for_each(script, &too_long), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("kernel add, input 0"), std::string::npos) << harness_->LastError();
  EXPECT_NE(harness_->LastError().find("past the end of its 400-byte buffer"), std::string::npos);

  KilnHalBufferView overlapping = out_view;
  overlapping.stride_x = 0;
  KilnHalForEachDesc racy = ForEachDesc(kAdd, 100, 1, 1, inputs, 2, &overlapping);
  EXPECT_EQ(hal().launch_for_each(script, &racy), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("overlaps"), std::string::npos) << harness_->LastError();

  KilnHalForEachDesc one_input = ForEachDesc(kAdd, 100, 1, 1, inputs, 1, &out_view);
  EXPECT_EQ(hal().launch_for_each(script, &one_input), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("1 inputs given, the kernel takes 2"), std::string::npos);

  KilnHalBufferView wrong_size = inputs[0];
  wrong_size.element_size = 8;
  KilnHalBufferView mixed[2] = {wrong_size, inputs[1]};
  KilnHalForEachDesc wrong = ForEachDesc(kAdd, 10, 1, 1, mixed, 2, &out_view);
  EXPECT_EQ(hal().launch_for_each(script, &wrong), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("element size 8, the kernel's is 4"), std::string::npos);

  KilnHalForEachDesc empty = ForEachDesc(kAdd, 0, 1, 1, inputs, 2, &out_view);
  EXPECT_EQ(hal().launch_for_each(script, &empty), kKilnInvalidArgument);
  KilnHalForEachDesc no_kernel = ForEachDesc(17, 10, 1, 1, inputs, 2, &out_view);
  EXPECT_EQ(hal().launch_for_each(script, &no_kernel), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("kernel index 17"), std::string::npos);
}

TEST_F(CpuDriverTest, BadBitcodeIsAClearError) {
  ModuleDescBuilder garbage("garbage.rs", std::string(1000, '\x42'));
  garbage.Kernel("atan_op", kIn | kOut, {4}, 4);
  KilnHalModule* module = nullptr;
  EXPECT_EQ(hal().module_load(harness_->device(), garbage.Build(), &module), kKilnInvalidModel);
  EXPECT_EQ(module, nullptr);
  EXPECT_NE(
      harness_->LastError().find("garbage.rs: payload \"llvm-bc\" (1000 bytes) is not valid LLVM bitcode"),
      std::string::npos)
      << harness_->LastError();

  ModuleDescBuilder truncated = AtanModule();
  truncated.bitcode().resize(truncated.bitcode().size() / 2);
  EXPECT_EQ(hal().module_load(harness_->device(), truncated.Build(), &module), kKilnInvalidModel);
  EXPECT_NE(harness_->LastError().find("not valid LLVM bitcode"), std::string::npos) << harness_->LastError();

  ModuleDescBuilder empty("empty.rs", "");
  EXPECT_EQ(hal().module_load(harness_->device(), empty.Build(), &module), kKilnInvalidModel);

  ModuleDescBuilder spirv = AtanModule();
  spirv.PayloadTag("spirv");
  EXPECT_EQ(hal().module_load(harness_->device(), spirv.Build(), &module), kKilnUnsupported);
  EXPECT_NE(harness_->LastError().find("no \"llvm-bc\" payload for the CPU (it has: spirv)"),
            std::string::npos);

  ModuleDescBuilder future = AtanModule();
  future.Import("__kiln_rt_teleport");
  EXPECT_EQ(hal().module_load(harness_->device(), future.Build(), &module), kKilnUnsupported);
  EXPECT_NE(harness_->LastError().find("imports runtime service __kiln_rt_teleport"), std::string::npos);
  EXPECT_TRUE(cache_.Files().empty());
}

TEST_F(CpuDriverTest, UnresolvedRuntimeServiceFailsAtLink) {
  // Without the import list the module loads, but linking a script names the missing symbol.
  ModuleDescBuilder builder("unresolved.rs", KernelBitcode("unresolved"));
  builder.Kernel("warp", kKernel | KILN_HAL_SIG_X, {}, 0);
  KilnHalModule* module = Load(builder);
  ASSERT_NE(module, nullptr);
  KilnHalScript* script = nullptr;
  EXPECT_NE(hal().script_create(module, nullptr, &script), kKilnOk);
  EXPECT_EQ(script, nullptr);
  EXPECT_NE(harness_->LastError().find("__kiln_rt_teleport"), std::string::npos) << harness_->LastError();
}

TEST_F(CpuDriverTest, KernelMissingFromBitcodeIsReportedUnsupported) {
  ModuleDescBuilder builder = AtanModule();
  builder.Kernel("not_compiled", kIn | kOut, {4}, 4);
  KilnHalModule* module = Load(builder);
  ASSERT_NE(module, nullptr);
  bool supported = true;
  const char* reason = nullptr;
  ASSERT_EQ(hal().module_kernel_supported(module, 1, &supported, &reason), kKilnOk);
  EXPECT_FALSE(supported);
  ASSERT_NE(reason, nullptr);
  EXPECT_NE(std::string(reason).find("does not define __kiln_expand_not_compiled"), std::string::npos);
  EXPECT_EQ(hal().module_unload(module), kKilnOk);
  modules_.pop_back();
}

TEST_F(CpuDriverTest, UnloadWithLiveScriptIsRefused) {
  ModuleDescBuilder builder = AtanModule();
  KilnHalModule* module = Load(builder);
  ASSERT_NE(module, nullptr);
  ASSERT_NE(NewScript(module), nullptr);
  EXPECT_EQ(hal().module_unload(module), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("1 script(s) alive"), std::string::npos);
}

}  // namespace
}  // namespace kiln
