// What the vulkan_driver_tests sources share: the VulkanDriverTest fixture (a driver loaded with the
// validation layers on and a pipeline cache in a temporary folder, module loading, buffer upload and
// download), the kernels more than one part runs (scale_add, add_one) and the check of scale_add's output.
#ifndef KILN_TESTS_VULKAN_VULKAN_DRIVER_FIXTURE_H_
#define KILN_TESTS_VULKAN_VULKAN_DRIVER_FIXTURE_H_

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "tests/vulkan/vulkan_harness.h"

namespace kiln {
namespace testing {

inline std::string MakeTempDir() {
  char pattern[] = "/tmp/kiln_vulkan_test_XXXXXX";
  const char* dir = mkdtemp(pattern);
  return dir ? dir : "/tmp";
}

inline void RemoveTree(const std::string& dir) {
  if (dir.rfind("/tmp/kiln_vulkan_test_", 0) == 0) {
    std::string command = "rm -rf '" + dir + "'";
    if (system(command.c_str()) != 0) fprintf(stderr, "could not remove %s\n", dir.c_str());
  }
}

inline const char kGuard[] =
    "  uvec3 p = gl_GlobalInvocationID + kiln.origin.xyz;\n"
    "  if (any(greaterThanEqual(p, kiln.dim.xyz))) return;\n";

// out = in0 * gScale + in1 + gOffset
inline GlslKernel ScaleAdd() {
  GlslKernel k;
  k.name = "scale_add";
  k.input_sizes = {4, 4};
  k.output_size = 4;
  k.glsl =
      KernelPreamble(3) +
      "layout(set = 0, binding = 0, std430) readonly buffer Globals { float gScale; float gOffset; };\n"
      "layout(set = 0, binding = 1, std430) readonly buffer In0 { float in0[]; };\n"
      "layout(set = 0, binding = 2, std430) readonly buffer In1 { float in1[]; };\n"
      "layout(set = 0, binding = 9, std430) writeonly buffer Out { float out0[]; };\n"
      "void main() {\n" +
      kGuard +
      "  out0[kiln_index(2, p)] = in0[kiln_index(0, p)] * gScale + in1[kiln_index(1, p)] + gOffset;\n}\n";
  return k;
}

inline GlslKernel AddOne() { return UnaryKernel("add_one", "float", "x + 1.0"); }

class VulkanDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_dir_ = MakeTempDir();
    harness_ = std::make_unique<VulkanHarness>(Config());
    if (harness_->query_status() == kKilnUnsupported &&
        harness_->LastError().find("no Vulkan") != std::string::npos) {
      GTEST_SKIP() << "no Vulkan device on this machine: " << harness_->LastError();
    }
    ASSERT_TRUE(harness_->ok()) << harness_->LastError();
    ASSERT_TRUE(harness_->LogContains("validation layers enabled")) << "the validation layers must be active";
  }
  void TearDown() override {
    if (harness_) {
      for (const std::string& message : harness_->ValidationMessages()) ADD_FAILURE() << message;
    }
    harness_.reset();
    RemoveTree(cache_dir_);
  }
  virtual std::map<std::string, std::string> Config() {
    return {{"cache_dir", cache_dir_}, {"vulkan.validation", "1"}};
  }

  const KilnHalDriver& hal() { return harness_->hal(); }
  KilnHalDevice* device() { return harness_->device(); }

  // Loads a module and one script; both released in TearDown order by the caller's scope.
  struct Loaded {
    KilnHalModule* module = nullptr;
    KilnHalScript* script = nullptr;
  };
  Loaded Load(SpirvModuleBuilder& builder) {
    Loaded out;
    std::string error;
    EXPECT_TRUE(builder.Compile(&error)) << error;
    EXPECT_EQ(hal().module_load(device(), builder.Build(), &out.module), kKilnOk) << harness_->LastError();
    if (out.module) {
      EXPECT_EQ(hal().script_create(out.module, nullptr, &out.script), kKilnOk) << harness_->LastError();
    }
    return out;
  }
  void Unload(Loaded& loaded) {
    if (loaded.script) {
      EXPECT_EQ(hal().script_destroy(loaded.script), kKilnOk);
    }
    if (loaded.module) {
      EXPECT_EQ(hal().module_unload(loaded.module), kKilnOk);
    }
  }
  template <typename T>
  KilnHalBuffer* Upload(const std::vector<T>& values) {
    KilnHalBuffer* buffer = harness_->CreateBuffer(values.size() * sizeof(T));
    EXPECT_NE(buffer, nullptr) << harness_->LastError();
    if (buffer) {
      EXPECT_EQ(hal().buffer_write(buffer, 0, values.data(), values.size() * sizeof(T)), kKilnOk);
    }
    return buffer;
  }
  template <typename T>
  std::vector<T> Download(KilnHalBuffer* buffer, size_t count) {
    std::vector<T> out(count);
    EXPECT_EQ(hal().buffer_read(buffer, 0, count * sizeof(T), out.data()), kKilnOk) << harness_->LastError();
    return out;
  }

  std::string cache_dir_;
  std::unique_ptr<VulkanHarness> harness_;
};

inline SpirvModuleBuilder ScaleAddModule() {
  SpirvModuleBuilder builder("scale_add.rs");
  float one = 1.0f;
  std::vector<uint8_t> default_scale(reinterpret_cast<uint8_t*>(&one), reinterpret_cast<uint8_t*>(&one) + 4);
  builder.Kernel(ScaleAdd())
      .Global({"gScale", 4, 0, false, 0, default_scale})
      .Global({"gOffset", 4, 4, false, 0, {}})
      .BlockSize(16);
  return builder;
}

inline void CheckScaleAdd(const std::vector<float>& a, const std::vector<float>& b,
                          const std::vector<float>& out, float scale, float offset) {
  for (size_t i = 0; i < out.size(); ++i) {
    ASSERT_FLOAT_EQ(out[i], a[i] * scale + b[i] + offset) << "cell " << i;
  }
}

}  // namespace testing
}  // namespace kiln

#endif  // KILN_TESTS_VULKAN_VULKAN_DRIVER_FIXTURE_H_
