// The Vulkan driver through its HAL table, loaded with dlopen, on whatever Vulkan device the machine has
// (Mesa's lavapipe on CI). Kernels are GLSL 4.50 written by hand to kiln/spirv_abi.h, compiled with glslang
// and checked with SPIRV-Tools at run time. Every test runs with the Khronos validation layers and fails on
// any message.
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
namespace {

std::string MakeTempDir() {
  char pattern[] = "/tmp/kiln_vulkan_test_XXXXXX";
  const char* dir = mkdtemp(pattern);
  return dir ? dir : "/tmp";
}

void RemoveTree(const std::string& dir) {
  if (dir.rfind("/tmp/kiln_vulkan_test_", 0) == 0) {
    std::string command = "rm -rf '" + dir + "'";
    if (system(command.c_str()) != 0) fprintf(stderr, "could not remove %s\n", dir.c_str());
  }
}

const char kGuard[] =
    "  uvec3 p = gl_GlobalInvocationID + kiln.origin.xyz;\n"
    "  if (any(greaterThanEqual(p, kiln.dim.xyz))) return;\n";

// out = in0 * gScale + in1 + gOffset
GlslKernel ScaleAdd() {
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

// out = x + 1000 y + 1000000 z
GlslKernel Coords() {
  GlslKernel k;
  k.name = "coords";
  k.output_size = 4;
  k.glsl = KernelPreamble(1) +
           "layout(set = 0, binding = 9, std430) writeonly buffer Out { int out0[]; };\n"
           "void main() {\n" +
           kGuard + "  out0[kiln_index(0, p)] = int(p.x + 1000u * p.y + 1000000u * p.z);\n}\n";
  return k;
}

// uchar4: rgb inverted, alpha kept; packed as one uint per element (no 8-bit storage needed).
GlslKernel Invert() {
  GlslKernel k;
  k.name = "invert";
  k.input_sizes = {4};
  k.output_size = 4;
  k.glsl = KernelPreamble(2) +
           "layout(set = 0, binding = 1, std430) readonly buffer In0 { uint in0[]; };\n"
           "layout(set = 0, binding = 9, std430) writeonly buffer Out { uint out0[]; };\n"
           "void main() {\n" +
           kGuard +
           "  uint v = in0[kiln_index(0, p)];\n"
           "  uvec4 c = uvec4(v & 255u, (v >> 8) & 255u, (v >> 16) & 255u, v >> 24);\n"
           "  c.rgb = uvec3(255u) - c.rgb;\n"
           "  out0[kiln_index(1, p)] = c.r | (c.g << 8) | (c.b << 16) | (c.a << 24);\n}\n";
  return k;
}

GlslKernel AddOne() { return UnaryKernel("add_one", "float", "x + 1.0"); }

// uchar -> uchar through 8-bit storage.
GlslKernel HalveBytes() {
  GlslKernel k;
  k.name = "halve_bytes";
  k.input_sizes = {1};
  k.output_size = 1;
  k.required_features = KILN_SPIRV_FEATURE_STORAGE_8BIT | KILN_SPIRV_FEATURE_INT8;
  k.glsl = KernelPreamble(2,
                          "#extension GL_EXT_shader_8bit_storage : require\n"
                          "#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require\n") +
           "layout(set = 0, binding = 1, std430) readonly buffer In0 { uint8_t in0[]; };\n"
           "layout(set = 0, binding = 9, std430) writeonly buffer Out { uint8_t out0[]; };\n"
           "void main() {\n" +
           kGuard + "  out0[kiln_index(1, p)] = uint8_t(uint(in0[kiln_index(0, p)]) / 2u);\n}\n";
  return k;
}

// Neighbour reads through an rs_allocation global (rsGetElementAt with bounds), as a blur would do.
GlslKernel Neighbours() {
  GlslKernel k;
  k.name = "neighbours";
  k.output_size = 4;
  k.glsl = KernelPreamble(1) +
           "struct KilnAllocationInfo { uint dim_x, dim_y, dim_z, element_size, offset, stride_y, stride_z, "
           "unit; };\n"
           "layout(set = 0, binding = 0, std430) readonly buffer Globals { float gWeight; uint pad[3];\n"
           "                                                        KilnAllocationInfo gIn; };\n"
           "layout(set = 0, binding = 10, std430) readonly buffer A0 { float a0[]; };\n"
           "layout(set = 0, binding = 9, std430) writeonly buffer Out { float out0[]; };\n"
           "float get_gIn(uint x, uint y) {\n"
           "  if (x >= gIn.dim_x || y >= max(gIn.dim_y, 1u)) return 0.0;\n"
           "  return a0[gIn.offset + x * (gIn.element_size / gIn.unit) + y * gIn.stride_y];\n"
           "}\n"
           "void main() {\n" +
           kGuard +
           "  float left = p.x > 0u ? get_gIn(p.x - 1u, p.y) : 0.0;\n"
           "  out0[kiln_index(0, p)] = gWeight * get_gIn(p.x, p.y) + left + get_gIn(p.x + 1u, p.y)\n"
           "                           + 100.0 * float(gIn.dim_x);\n}\n";
  return k;
}

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
    if (out.module)
      EXPECT_EQ(hal().script_create(out.module, nullptr, &out.script), kKilnOk) << harness_->LastError();
    return out;
  }
  void Unload(Loaded& loaded) {
    if (loaded.script) EXPECT_EQ(hal().script_destroy(loaded.script), kKilnOk);
    if (loaded.module) EXPECT_EQ(hal().module_unload(loaded.module), kKilnOk);
  }
  template <typename T>
  KilnHalBuffer* Upload(const std::vector<T>& values) {
    KilnHalBuffer* buffer = harness_->CreateBuffer(values.size() * sizeof(T));
    EXPECT_NE(buffer, nullptr) << harness_->LastError();
    if (buffer) EXPECT_EQ(hal().buffer_write(buffer, 0, values.data(), values.size() * sizeof(T)), kKilnOk);
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

SpirvModuleBuilder ScaleAddModule() {
  SpirvModuleBuilder builder("scale_add.rs");
  float one = 1.0f;
  std::vector<uint8_t> default_scale(reinterpret_cast<uint8_t*>(&one), reinterpret_cast<uint8_t*>(&one) + 4);
  builder.Kernel(ScaleAdd())
      .Global({"gScale", 4, 0, false, 0, default_scale})
      .Global({"gOffset", 4, 4, false, 0, {}})
      .BlockSize(16);
  return builder;
}

TEST_F(VulkanDriverTest, DescribesDevices) {
  uint32_t count = 0;
  ASSERT_EQ(hal().device_count(hal().instance, &count), kKilnOk);
  ASSERT_GE(count, 1u);
  EXPECT_STREQ(hal().name, "kiln-vulkan");
  for (uint32_t i = 0; i < count; ++i) {
    KilnHalDeviceInfo info{};
    info.struct_size = sizeof(info);
    ASSERT_EQ(hal().device_get_info(hal().instance, i, &info), kKilnOk);
    EXPECT_NE(std::string(info.name).find("(Vulkan 1."), std::string::npos) << info.name;
    EXPECT_STREQ(info.payload_tags, "spirv");
    EXPECT_GT(info.memory_bytes, 0u);
    EXPECT_EQ(info.max_kernel_level, KILN_HAL_LEVEL(1, 0));
    EXPECT_GE(info.limits.max_inputs, 1u);
    EXPECT_LE(info.limits.max_inputs, 8u);
    EXPECT_GE(info.limits.max_threads, 128u);
    EXPECT_GE(info.limits.max_buffer_size, 1u << 27);
    if (std::string(info.name).find("llvmpipe") != std::string::npos) {
      // lavapipe is a CPU implementation: reported as such, zero-copy, with host-pointer import.
      EXPECT_EQ(info.type, kKilnHalDeviceCpu);
      EXPECT_NE(std::string(info.name).find(" cpu)"), std::string::npos);
      EXPECT_EQ(info.limits.max_inputs, 5u);  // 128 bytes of push constants: 32 + 16 per view
      EXPECT_TRUE(info.flags & KILN_HAL_DEVICE_HOST_SHARED_MEMORY);
      EXPECT_TRUE(info.flags & KILN_HAL_DEVICE_MAPPABLE_BUFFERS);
      EXPECT_EQ(info.limits.buffer_alignment, 4096u);
    }
  }
  KilnHalDeviceInfo info{};
  info.struct_size = sizeof(info);
  EXPECT_EQ(hal().device_get_info(hal().instance, count, &info), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("out of range"), std::string::npos);
}

TEST_F(VulkanDriverTest, DeviceOverrideByNameAndIndex) {
  KilnHalDeviceInfo first{};
  first.struct_size = sizeof(first);
  ASSERT_EQ(hal().device_get_info(hal().instance, 0, &first), kKilnOk);
  std::string name = first.name;
  std::string needle = name.substr(0, std::min<size_t>(name.find(' '), 8));
  {
    VulkanHarness by_name({{"cache_dir", "off"}, {"vulkan.device", needle}});
    ASSERT_TRUE(by_name.ok()) << by_name.LastError();
    KilnHalDeviceInfo info{};
    info.struct_size = sizeof(info);
    ASSERT_EQ(by_name.hal().device_get_info(by_name.hal().instance, 0, &info), kKilnOk);
    EXPECT_NE(std::string(info.name).find(needle), std::string::npos);
  }
  {
    VulkanHarness bad({{"cache_dir", "off"}, {"vulkan.device", "no-such-gpu-xyz"}});
    EXPECT_EQ(bad.query_status(), kKilnInvalidArgument);
    EXPECT_NE(bad.LastError().find("no-such-gpu-xyz"), std::string::npos) << bad.LastError();
    EXPECT_NE(bad.LastError().find(needle), std::string::npos) << "the message lists the devices";
  }
}

TEST_F(VulkanDriverTest, Buffers) {
  KilnHalBufferDesc desc{};
  desc.struct_size = sizeof(desc);
  desc.size = 0;
  KilnHalBuffer* buffer = nullptr;
  EXPECT_EQ(hal().buffer_create(device(), &desc, &buffer), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("at least 1"), std::string::npos);
  for (uint64_t size : {uint64_t{1}, uint64_t{7}, uint64_t{12345}, (uint64_t{40} << 20) + 3}) {
    KilnHalBuffer* b = harness_->CreateBuffer(size);
    ASSERT_NE(b, nullptr) << size << ": " << harness_->LastError();
    std::vector<uint8_t> data(size);
    for (size_t i = 0; i < size; ++i) data[i] = static_cast<uint8_t>(i * 31 + 7);
    ASSERT_EQ(hal().buffer_write(b, 0, data.data(), size), kKilnOk);
    std::vector<uint8_t> back(size);
    ASSERT_EQ(hal().buffer_read(b, 0, size, back.data()), kKilnOk);
    EXPECT_EQ(back, data) << size;
    uint8_t byte = 0;
    EXPECT_EQ(hal().buffer_read(b, size, 1, &byte), kKilnInvalidArgument);
    EXPECT_NE(harness_->LastError().find("outside the " + std::to_string(size) + "-byte buffer"),
              std::string::npos);
    void* mapped = nullptr;
    ASSERT_EQ(hal().buffer_map(b, size - 1, 1, &mapped), kKilnOk);
    EXPECT_EQ(*static_cast<uint8_t*>(mapped), data[size - 1]);
    *static_cast<uint8_t*>(mapped) = 0xAB;
    ASSERT_EQ(hal().buffer_unmap(b), kKilnOk);
    ASSERT_EQ(hal().buffer_read(b, size - 1, 1, &byte), kKilnOk);
    EXPECT_EQ(byte, 0xAB);
    EXPECT_EQ(hal().buffer_destroy(b), kKilnOk);
  }
}

TEST_F(VulkanDriverTest, HostWrapIsZeroCopy) {
  KilnHalDeviceInfo info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(hal().device_get_info(hal().instance, 0, &info), kKilnOk);
  if (!(info.flags & KILN_HAL_DEVICE_HOST_SHARED_MEMORY)) {
    std::vector<float> host(16);
    EXPECT_EQ(harness_->CreateBuffer(64, host.data()), nullptr);
    EXPECT_NE(harness_->LastError().find("HOST_WRAP"), std::string::npos);
    GTEST_SKIP() << "device cannot wrap host memory: " << info.name;
  }
  const size_t alignment = info.limits.buffer_alignment;
  const size_t count = 1001;  // not a whole page
  float* in =
      static_cast<float*>(aligned_alloc(alignment, (count * 4 + alignment - 1) / alignment * alignment));
  float* out =
      static_cast<float*>(aligned_alloc(alignment, (count * 4 + alignment - 1) / alignment * alignment));
  for (size_t i = 0; i < count; ++i) in[i] = static_cast<float>(i);
  KilnHalBuffer* a = harness_->CreateBuffer(count * 4, in);
  KilnHalBuffer* b = harness_->CreateBuffer(count * 4, out);
  ASSERT_NE(a, nullptr) << harness_->LastError();
  ASSERT_NE(b, nullptr) << harness_->LastError();
  EXPECT_EQ(harness_->CreateBuffer(16, reinterpret_cast<uint8_t*>(in) + 4), nullptr);
  EXPECT_NE(harness_->LastError().find("aligned"), std::string::npos);
  SpirvModuleBuilder builder("add_one.rs");
  builder.Kernel(AddOne());
  Loaded loaded = Load(builder);
  in[5] = 100.0f;  // written after wrapping: the device must see it
  KilnHalBufferView views[2] = {View(a, 4, 4), View(b, 4, 4)};
  KilnHalForEachDesc fe = ForEach(0, count, 1, 1, &views[0], 1, &views[1]);
  ASSERT_EQ(hal().launch_for_each(loaded.script, &fe), kKilnOk) << harness_->LastError();
  for (size_t i = 0; i < count; ++i) ASSERT_EQ(out[i], (i == 5 ? 100.0f : static_cast<float>(i)) + 1.0f) << i;
  Unload(loaded);
  hal().buffer_destroy(a);
  hal().buffer_destroy(b);
  free(in);
  free(out);
}

void CheckScaleAdd(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& out,
                   float scale, float offset) {
  for (size_t i = 0; i < out.size(); ++i) {
    ASSERT_FLOAT_EQ(out[i], a[i] * scale + b[i] + offset) << "cell " << i;
  }
}

TEST_F(VulkanDriverTest, ForEach1D) {
  SpirvModuleBuilder builder = ScaleAddModule();
  Loaded loaded = Load(builder);
  ASSERT_NE(loaded.script, nullptr);
  const float offset = 0.5f;
  ASSERT_EQ(hal().script_set_global(loaded.script, "gOffset", &offset, 4), kKilnOk);
  for (uint32_t n : {1u, 7u, 1000003u}) {
    std::vector<float> a(n), b(n);
    for (uint32_t i = 0; i < n; ++i) {
      a[i] = static_cast<float>(i % 1000) * 0.25f;
      b[i] = static_cast<float>(n - i);
    }
    KilnHalBuffer* ba = Upload(a);
    KilnHalBuffer* bb = Upload(b);
    KilnHalBuffer* bo = harness_->CreateBuffer(n * 4);
    KilnHalBufferView views[3] = {View(ba, 4, 4), View(bb, 4, 4), View(bo, 4, 4)};
    KilnHalForEachDesc fe = ForEach(0, n, 1, 1, views, 2, &views[2]);
    ASSERT_EQ(hal().launch_for_each(loaded.script, &fe), kKilnOk) << harness_->LastError();
    CheckScaleAdd(a, b, Download<float>(bo, n), 1.0f, offset);
    for (KilnHalBuffer* buffer : {ba, bb, bo}) hal().buffer_destroy(buffer);
  }
  Unload(loaded);
}

TEST_F(VulkanDriverTest, ForEach2DAnd3DCoordinates) {
  SpirvModuleBuilder builder("coords.rs");
  builder.Kernel(Coords());
  Loaded loaded = Load(builder);
  ASSERT_NE(loaded.script, nullptr);
  struct Case {
    uint32_t x, y, z;
  };
  // The last one needs more workgroups along x than a dispatch may have (65535 x 64): the driver splits it.
  for (Case c :
       {Case{317, 211, 1}, Case{7, 5, 3}, Case{1, 1, 9}, Case{65, 1, 2}, Case{65535 * 64 + 3, 1, 1}}) {
    const uint32_t n = c.x * c.y * c.z;
    KilnHalBuffer* out = harness_->CreateBuffer(n * 4);
    KilnHalBufferView view = View(out, 4, 4, 4 * c.x, 4 * c.x * c.y);
    KilnHalForEachDesc fe = ForEach(0, c.x, c.y, c.z, nullptr, 0, &view);
    ASSERT_EQ(hal().launch_for_each(loaded.script, &fe), kKilnOk) << harness_->LastError();
    std::vector<int32_t> values = Download<int32_t>(out, n);
    for (uint32_t z = 0; z < c.z; ++z) {
      for (uint32_t y = 0; y < c.y; ++y) {
        for (uint32_t x = 0; x < c.x; ++x) {
          ASSERT_EQ(values[(z * c.y + y) * c.x + x], static_cast<int32_t>(x + 1000 * y + 1000000 * z))
              << c.x << "x" << c.y << "x" << c.z << " at " << x << "," << y << "," << z;
        }
      }
    }
    hal().buffer_destroy(out);
  }
  // An offset output view with padded rows.
  const uint32_t pitch = 7;
  KilnHalBuffer* out = harness_->CreateBuffer((pitch * 3 + 2) * 4);
  std::vector<int32_t> fill(pitch * 3 + 2, -1);
  ASSERT_EQ(hal().buffer_write(out, 0, fill.data(), fill.size() * 4), kKilnOk);
  KilnHalBufferView view = View(out, 4, 4, 4 * pitch, 0, 8);
  KilnHalForEachDesc fe = ForEach(0, 4, 3, 1, nullptr, 0, &view);
  ASSERT_EQ(hal().launch_for_each(loaded.script, &fe), kKilnOk) << harness_->LastError();
  std::vector<int32_t> values = Download<int32_t>(out, fill.size());
  for (uint32_t i = 0; i < fill.size(); ++i) {
    const uint32_t x = (i - 2) % pitch, y = (i - 2) / pitch;
    const bool written = i >= 2 && x < 4 && y < 3;
    EXPECT_EQ(values[i], written ? static_cast<int32_t>(x + 1000 * y) : -1) << i;
  }
  hal().buffer_destroy(out);
  Unload(loaded);
}

TEST_F(VulkanDriverTest, BroadcastingStrides) {
  SpirvModuleBuilder builder = ScaleAddModule();
  Loaded loaded = Load(builder);
  ASSERT_NE(loaded.script, nullptr);
  const uint32_t w = 317, h = 211;
  std::vector<float> image(w * h), row(w), scalar = {3.0f};
  for (uint32_t i = 0; i < w * h; ++i) image[i] = static_cast<float>(i % 977);
  for (uint32_t x = 0; x < w; ++x) row[x] = static_cast<float>(x) * 2.0f;
  KilnHalBuffer* bi = Upload(image);
  KilnHalBuffer* br = Upload(row);
  KilnHalBuffer* bs = Upload(scalar);
  KilnHalBuffer* bo = harness_->CreateBuffer(w * h * 4);
  // in1 broadcast along y (one row for every row), then a scalar broadcast along x and y.
  KilnHalBufferView views[3] = {View(bi, 4, 4, 4 * w), View(br, 4, 4, 0), View(bo, 4, 4, 4 * w)};
  KilnHalForEachDesc fe = ForEach(0, w, h, 1, views, 2, &views[2]);
  ASSERT_EQ(hal().launch_for_each(loaded.script, &fe), kKilnOk) << harness_->LastError();
  std::vector<float> out = Download<float>(bo, w * h);
  for (uint32_t y = 0; y < h; ++y) {
    for (uint32_t x = 0; x < w; ++x)
      ASSERT_FLOAT_EQ(out[y * w + x], image[y * w + x] + row[x]) << x << "," << y;
  }
  views[1] = View(bs, 4, 0, 0);
  ASSERT_EQ(hal().launch_for_each(loaded.script, &fe), kKilnOk) << harness_->LastError();
  out = Download<float>(bo, w * h);
  for (uint32_t i = 0; i < w * h; ++i) ASSERT_FLOAT_EQ(out[i], image[i] + 3.0f) << i;
  // Strides the shader's unit does not divide, and views past the end, are refused with the reason.
  views[1] = View(bs, 4, 2, 0);
  EXPECT_EQ(hal().launch_for_each(loaded.script, &fe), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("input 1"), std::string::npos) << harness_->LastError();
  views[1] = View(br, 4, 4, 4);
  EXPECT_EQ(hal().launch_for_each(loaded.script, &fe), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("reaches past the end"), std::string::npos) << harness_->LastError();
  views[1] = View(br, 4, 4, 0);
  views[2] = View(bo, 4, 4, 0);  // output rows overlapping
  EXPECT_EQ(hal().launch_for_each(loaded.script, &fe), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("overlaps"), std::string::npos) << harness_->LastError();
  for (KilnHalBuffer* buffer : {bi, br, bs, bo}) hal().buffer_destroy(buffer);
  Unload(loaded);
}

TEST_F(VulkanDriverTest, Uchar4AndBytes) {
  SpirvModuleBuilder builder("image.rs");
  builder.Kernel(Invert()).Kernel(HalveBytes());
  Loaded loaded = Load(builder);
  ASSERT_NE(loaded.script, nullptr);
  const uint32_t w = 317, h = 211;
  std::vector<uint8_t> rgba(w * h * 4);
  for (size_t i = 0; i < rgba.size(); ++i) rgba[i] = static_cast<uint8_t>(i * 7 + i / 5);
  KilnHalBuffer* in = Upload(rgba);
  KilnHalBuffer* out = harness_->CreateBuffer(rgba.size());
  KilnHalBufferView views[2] = {View(in, 4, 4, 4 * w), View(out, 4, 4, 4 * w)};
  KilnHalForEachDesc fe = ForEach(0, w, h, 1, &views[0], 1, &views[1]);
  ASSERT_EQ(hal().launch_for_each(loaded.script, &fe), kKilnOk) << harness_->LastError();
  std::vector<uint8_t> result = Download<uint8_t>(out, rgba.size());
  for (size_t i = 0; i < rgba.size(); ++i) {
    ASSERT_EQ(result[i], i % 4 == 3 ? rgba[i] : 255 - rgba[i]) << "byte " << i;
  }
  bool supported = false;
  const char* reason = nullptr;
  ASSERT_EQ(hal().module_kernel_supported(loaded.module, 1, &supported, &reason), kKilnOk);
  if (!supported) {
    EXPECT_NE(std::string(reason).find("storage8"), std::string::npos) << reason;
  } else {
    // Odd sizes and offsets work at byte granularity with 8-bit storage.
    const uint32_t n = 1001;
    views[0] = View(in, 1, 1, 0, 0, 3);
    views[1] = View(out, 1, 1, 0, 0, 1);
    fe = ForEach(1, n, 1, 1, &views[0], 1, &views[1]);
    ASSERT_EQ(hal().launch_for_each(loaded.script, &fe), kKilnOk) << harness_->LastError();
    result = Download<uint8_t>(out, n + 1);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(result[1 + i], rgba[3 + i] / 2) << i;
  }
  hal().buffer_destroy(in);
  hal().buffer_destroy(out);
  Unload(loaded);
}

TEST_F(VulkanDriverTest, GlobalsArePerScript) {
  SpirvModuleBuilder builder = ScaleAddModule();
  Loaded first = Load(builder);
  ASSERT_NE(first.script, nullptr);
  KilnHalScript* second = nullptr;
  ASSERT_EQ(hal().script_create(first.module, nullptr, &second), kKilnOk);
  float scale = 0;
  ASSERT_EQ(hal().script_get_global(second, "gScale", 4, &scale), kKilnOk);
  EXPECT_EQ(scale, 1.0f) << "the default value";
  const float two = 2.0f, minus = -3.0f;
  ASSERT_EQ(hal().script_set_global(first.script, "gScale", &two, 4), kKilnOk);
  ASSERT_EQ(hal().script_set_global(second, "gScale", &minus, 4), kKilnOk);
  ASSERT_EQ(hal().script_get_global(first.script, "gScale", 4, &scale), kKilnOk);
  EXPECT_EQ(scale, 2.0f);
  EXPECT_EQ(hal().script_set_global(first.script, "gScale", &two, 8), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("is 4 bytes"), std::string::npos);
  EXPECT_EQ(hal().script_set_global(first.script, "gNope", &two, 4), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("gNope"), std::string::npos);
  const uint32_t n = 333;
  std::vector<float> a(n), b(n, 1.0f);
  std::iota(a.begin(), a.end(), 0.0f);
  KilnHalBuffer* ba = Upload(a);
  KilnHalBuffer* bb = Upload(b);
  KilnHalBuffer* bo = harness_->CreateBuffer(n * 4);
  KilnHalBufferView views[3] = {View(ba, 4, 4), View(bb, 4, 4), View(bo, 4, 4)};
  KilnHalForEachDesc fe = ForEach(0, n, 1, 1, views, 2, &views[2]);
  ASSERT_EQ(hal().launch_for_each(first.script, &fe), kKilnOk);
  CheckScaleAdd(a, b, Download<float>(bo, n), 2.0f, 0.0f);
  ASSERT_EQ(hal().launch_for_each(second, &fe), kKilnOk);
  CheckScaleAdd(a, b, Download<float>(bo, n), -3.0f, 0.0f);
  for (KilnHalBuffer* buffer : {ba, bb, bo}) hal().buffer_destroy(buffer);
  EXPECT_EQ(hal().module_unload(first.module), kKilnInvalidArgument) << "scripts still alive";
  hal().script_destroy(second);
  Unload(first);
}

TEST_F(VulkanDriverTest, AllocationGlobalsAndNeighbourReads) {
  SpirvModuleBuilder builder("neighbours.rs");
  float weight = 10.0f;
  std::vector<uint8_t> weight_bytes(reinterpret_cast<uint8_t*>(&weight),
                                    reinterpret_cast<uint8_t*>(&weight) + 4);
  builder.Kernel(Neighbours())
      .Global({"gWeight", 4, 0, false, 0, weight_bytes})
      .Global({"gIn", 0, 16, true, 4, {}})
      .BlockSize(48);
  Loaded loaded = Load(builder);
  ASSERT_NE(loaded.script, nullptr);
  const uint32_t w = 37, h = 5;
  std::vector<float> src(w * h + 2);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i * i % 101);
  KilnHalBuffer* bs = Upload(src);
  KilnHalBuffer* bo = harness_->CreateBuffer(w * h * 4);
  // Unbound: every read gives zero and dim_x is 0.
  KilnHalBufferView out_view = View(bo, 4, 4, 4 * w);
  KilnHalForEachDesc fe = ForEach(0, w, h, 1, nullptr, 0, &out_view);
  ASSERT_EQ(hal().launch_for_each(loaded.script, &fe), kKilnOk) << harness_->LastError();
  for (float v : Download<float>(bo, w * h)) ASSERT_EQ(v, 0.0f);
  // Bound at an offset of two elements, as a 2D allocation.
  KilnHalBufferView alloc = View(bs, 4, 4, 4 * w, 0, 8);
  ASSERT_EQ(hal().script_bind_allocation(loaded.script, "gIn", &alloc, kKilnFloat32, 1, w, h, 0), kKilnOk)
      << harness_->LastError();
  ASSERT_EQ(hal().launch_for_each(loaded.script, &fe), kKilnOk) << harness_->LastError();
  std::vector<float> out = Download<float>(bo, w * h);
  auto at = [&](int x, int y) -> float {
    return x < 0 || x >= static_cast<int>(w) ? 0.0f : src[2 + y * w + x];
  };
  for (uint32_t y = 0; y < h; ++y) {
    for (uint32_t x = 0; x < w; ++x) {
      const int xi = static_cast<int>(x), yi = static_cast<int>(y);
      ASSERT_FLOAT_EQ(out[y * w + x], 10.0f * at(xi, yi) + at(xi - 1, yi) + at(xi + 1, yi) + 100.0f * w)
          << x << "," << y;
    }
  }
  EXPECT_EQ(hal().script_bind_allocation(loaded.script, "gWeight", &alloc, kKilnFloat32, 1, w, h, 0),
            kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("not an allocation"), std::string::npos);
  ASSERT_EQ(hal().script_bind_allocation(loaded.script, "gIn", nullptr, 0, 0, 0, 0, 0), kKilnOk);
  hal().buffer_destroy(bs);
  ASSERT_EQ(hal().launch_for_each(loaded.script, &fe), kKilnOk) << "unbound again: " << harness_->LastError();
  for (float v : Download<float>(bo, w * h)) ASSERT_EQ(v, 0.0f);
  hal().buffer_destroy(bo);
  Unload(loaded);
}

TEST_F(VulkanDriverTest, BatchRunsInOrderWithBarriers) {
  SpirvModuleBuilder builder("chain.rs");
  builder.Kernel(AddOne());
  builder.Kernel(ScaleAdd())
      .Global({"gScale", 4, 0, false, 0, {}})
      .Global({"gOffset", 4, 4, false, 0, {}})
      .BlockSize(16);
  Loaded loaded = Load(builder);
  ASSERT_NE(loaded.script, nullptr);
  const uint32_t n = 100003;
  std::vector<float> zeros(n, 0.0f);
  KilnHalBuffer* a = Upload(zeros);
  KilnHalBuffer* b = Upload(zeros);
  KilnHalBatch* batch = nullptr;
  ASSERT_EQ(hal().batch_create(device(), &batch), kKilnOk);
  KilnHalBufferView va = View(a, 4, 4), vb = View(b, 4, 4);
  // a -> b -> a -> b ... ten launches, each reading what the one before wrote.
  for (int i = 0; i < 10; ++i) {
    KilnHalForEachDesc fe = ForEach(0, n, 1, 1, i % 2 ? &vb : &va, 1, i % 2 ? &va : &vb);
    ASSERT_EQ(hal().batch_record_for_each(batch, loaded.script, &fe), kKilnOk) << harness_->LastError();
  }
  // Globals are captured when a launch is recorded: b = a * 2 + b + 0, then a = b * 3 + a + 0.
  const float two = 2.0f, three = 3.0f;
  KilnHalBufferView scale_ab[3] = {va, vb, vb};
  KilnHalBufferView scale_ba[3] = {vb, va, va};
  ASSERT_EQ(hal().script_set_global(loaded.script, "gScale", &two, 4), kKilnOk);
  KilnHalForEachDesc fe1 = ForEach(1, n, 1, 1, scale_ab, 2, &scale_ab[2]);
  ASSERT_EQ(hal().batch_record_for_each(batch, loaded.script, &fe1), kKilnOk);
  ASSERT_EQ(hal().script_set_global(loaded.script, "gScale", &three, 4), kKilnOk);
  KilnHalForEachDesc fe2 = ForEach(1, n, 1, 1, scale_ba, 2, &scale_ba[2]);
  ASSERT_EQ(hal().batch_record_for_each(batch, loaded.script, &fe2), kKilnOk);
  KilnHalFence* fence = nullptr;
  ASSERT_EQ(hal().batch_submit(batch, &fence), kKilnOk) << harness_->LastError();
  bool done = false;
  ASSERT_EQ(hal().fence_wait(fence, 0, &done), kKilnOk);  // a poll
  ASSERT_EQ(hal().fence_wait(fence, UINT64_MAX, &done), kKilnOk);
  EXPECT_TRUE(done);
  // The same arithmetic on the host, in recording order.
  float ha = 0, hb = 0;
  auto run_on_host = [&] {
    for (int i = 0; i < 10; ++i) {
      if (i % 2) {
        ha = hb + 1;
      } else {
        hb = ha + 1;
      }
    }
    hb = ha * 2 + hb;
    ha = hb * 3 + ha;
  };
  run_on_host();
  ASSERT_EQ(hb, 29.0f);
  std::vector<float> ra = Download<float>(a, n), rb = Download<float>(b, n);
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(rb[i], hb) << i;
    ASSERT_EQ(ra[i], ha) << i;
  }
  ASSERT_EQ(hal().fence_destroy(fence), kKilnOk);
  // Submitted again once complete, the same recorded work runs again on the new contents.
  ASSERT_EQ(hal().batch_submit(batch, &fence), kKilnOk);
  ASSERT_EQ(hal().fence_wait(fence, UINT64_MAX, &done), kKilnOk);
  EXPECT_TRUE(done);
  run_on_host();
  ra = Download<float>(a, n);
  rb = Download<float>(b, n);
  EXPECT_EQ(ra[0], ha);
  EXPECT_EQ(ra[n - 1], ha);
  EXPECT_EQ(rb[n / 2], hb);
  ASSERT_EQ(hal().fence_destroy(fence), kKilnOk);
  ASSERT_EQ(hal().batch_destroy(batch), kKilnOk);
  hal().buffer_destroy(a);
  hal().buffer_destroy(b);
  Unload(loaded);
}

TEST_F(VulkanDriverTest, UnsupportedKernelsSayWhy) {
  SpirvModuleBuilder builder("mixed.rs");
  GlslKernel cpu_only;
  cpu_only.name = "recursive";
  cpu_only.output_size = 4;
  cpu_only.cpu_only_reason = "calls itself recursively, which GLSL cannot express";
  GlslKernel fixed = AddOne();
  fixed.name = "fixed_size";
  fixed.glsl.replace(fixed.glsl.find("local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2"),
                     strlen("local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2"),
                     "local_size_x = 64");
  GlslKernel exotic = AddOne();
  exotic.name = "needs_future_feature";
  exotic.required_features = 0x100;
  GlslKernel wrong_binding = AddOne();
  wrong_binding.name = "wrong_binding";
  wrong_binding.glsl.replace(wrong_binding.glsl.find("binding = 1"), strlen("binding = 1"), "binding = 5");
  builder.Kernel(cpu_only).Kernel(fixed).Kernel(exotic).Kernel(wrong_binding).Kernel(AddOne());
  Loaded loaded = Load(builder);
  ASSERT_NE(loaded.script, nullptr);
  const char* expected[] = {"CPU-only: calls itself recursively", "specialization constant", "lacks",
                            "binding 5", nullptr};
  for (uint32_t i = 0; i < 5; ++i) {
    bool supported = true;
    const char* reason = nullptr;
    ASSERT_EQ(hal().module_kernel_supported(loaded.module, i, &supported, &reason), kKilnOk);
    if (!expected[i]) {
      EXPECT_TRUE(supported) << reason;
      continue;
    }
    ASSERT_FALSE(supported) << i;
    EXPECT_NE(std::string(reason).find(expected[i]), std::string::npos) << reason;
  }
  KilnHalModuleInfo info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(hal().module_get_info(loaded.module, &info), kKilnOk);
  EXPECT_EQ(info.num_kernels_supported, 1u);
  KilnHalBuffer* out = harness_->CreateBuffer(16);
  KilnHalBufferView view = View(out, 4, 4);
  KilnHalForEachDesc fe = ForEach(0, 4, 1, 1, nullptr, 0, &view);
  EXPECT_EQ(hal().launch_for_each(loaded.script, &fe), kKilnUnsupported);
  EXPECT_NE(harness_->LastError().find("kernel recursive: cannot run on Vulkan"), std::string::npos)
      << harness_->LastError();
  EXPECT_EQ(hal().script_invoke, nullptr) << "invokables are host code";
  hal().buffer_destroy(out);
  Unload(loaded);
}

TEST_F(VulkanDriverTest, BrokenSpirvIsAnUnsupportedKernelNotACrash) {
  std::vector<uint32_t> good;
  std::string error;
  ASSERT_TRUE(compiler::CompileGlslToSpirv(AddOne().glsl, &good, &error)) << error;
  GlslKernel corrupt = AddOne();
  corrupt.name = "corrupt";
  corrupt.spirv_override = good;
  for (size_t i = good.size() / 2; i < good.size(); i += 3) corrupt.spirv_override[i] ^= 0x5a5a0000u;
  GlslKernel truncated = AddOne();
  truncated.name = "truncated";
  truncated.spirv_override.assign(good.begin(), good.begin() + good.size() / 3);
  GlslKernel garbage = AddOne();
  garbage.name = "garbage";
  garbage.spirv_override = {0xdeadbeef, 1, 2, 3, 4, 5};
  GlslKernel wrong_entry = AddOne();
  wrong_entry.name = "wrong_entry";
  SpirvModuleBuilder builder("broken.rs");
  builder.Kernel(corrupt).Kernel(truncated).Kernel(garbage).Kernel(AddOne());
  Loaded loaded = Load(builder);
  ASSERT_NE(loaded.module, nullptr);
  for (uint32_t i = 0; i < 3; ++i) {
    bool supported = true;
    const char* reason = nullptr;
    ASSERT_EQ(hal().module_kernel_supported(loaded.module, i, &supported, &reason), kKilnOk);
    EXPECT_FALSE(supported) << i;
    EXPECT_NE(std::string(reason ? reason : "").find("SPIR-V"), std::string::npos) << reason;
  }
  bool supported = false;
  ASSERT_EQ(hal().module_kernel_supported(loaded.module, 3, &supported, nullptr), kKilnOk);
  EXPECT_TRUE(supported) << "the module's good kernel still runs";
  Unload(loaded);

  // A payload that does not parse fails the module with the offset of the problem.
  std::string compile_error;
  SpirvModuleBuilder bad("bad_payload.rs");
  bad.Kernel(AddOne());
  ASSERT_TRUE(bad.Compile(&compile_error)) << compile_error;
  const KilnHalModuleDesc* desc = bad.Build();
  KilnHalModule* module = nullptr;
  std::string& bytes = bad.payload_bytes();
  bytes.resize(40);
  desc = bad.Build();
  EXPECT_EQ(hal().module_load(device(), desc, &module), kKilnInvalidModel);
  EXPECT_NE(harness_->LastError().find("bad_payload.rs: spirv payload"), std::string::npos)
      << harness_->LastError();
  ASSERT_TRUE(bad.Compile(&compile_error));
  bytes[0] = 'X';
  desc = bad.Build();
  EXPECT_EQ(hal().module_load(device(), desc, &module), kKilnInvalidModel);
  EXPECT_NE(harness_->LastError().find("magic"), std::string::npos) << harness_->LastError();
  ASSERT_TRUE(bad.Compile(&compile_error));
  KilnSpirvPayloadHeader header;
  memcpy(&header, bytes.data(), sizeof(header));
  KilnSpirvKernelEntry row;
  memcpy(&row, bytes.data() + header.kernels_offset, sizeof(row));
  row.code_size = 1u << 30;
  memcpy(&bytes[header.kernels_offset], &row, sizeof(row));
  desc = bad.Build();
  EXPECT_EQ(hal().module_load(device(), desc, &module), kKilnInvalidModel);
  EXPECT_NE(harness_->LastError().find("kernel row 0 at offset " + std::to_string(header.kernels_offset)),
            std::string::npos)
      << harness_->LastError();
  // No spirv payload at all.
  KilnHalPayload other{};
  other.struct_size = sizeof(other);
  other.tag = "llvm-bc";
  other.data = "BC";
  other.size = 2;
  KilnHalModuleDesc no_spirv = *desc;
  no_spirv.payloads = &other;
  EXPECT_EQ(hal().module_load(device(), &no_spirv, &module), kKilnUnsupported);
  EXPECT_NE(harness_->LastError().find("no \"spirv\" payload"), std::string::npos);
}

TEST_F(VulkanDriverTest, ModulesWithInitAreRefused) {
  SpirvModuleBuilder builder("with_init.rs");
  builder.Kernel(AddOne()).Flags(KILN_HAL_MODULE_HAS_INIT);
  std::string error;
  ASSERT_TRUE(builder.Compile(&error)) << error;
  KilnHalModule* module = nullptr;
  ASSERT_EQ(hal().module_load(device(), builder.Build(), &module), kKilnOk);
  bool supported = true;
  const char* reason = nullptr;
  ASSERT_EQ(hal().module_kernel_supported(module, 0, &supported, &reason), kKilnOk);
  EXPECT_FALSE(supported);
  EXPECT_NE(std::string(reason).find("init()"), std::string::npos);
  KilnHalScript* script = nullptr;
  EXPECT_EQ(hal().script_create(module, nullptr, &script), kKilnUnsupported);
  hal().module_unload(module);
}

// The on-disk pipeline cache: a miss, then a hit in a new driver instance, then a corrupted file is a
// reported miss (rebuilt), never a failure.
TEST_F(VulkanDriverTest, PipelineCacheMissHitCorrupt) {
  auto load_once = [&](KilnHalCacheResult* result) {
    VulkanHarness harness({{"cache_dir", cache_dir_}, {"vulkan.validation", "1"}});
    ASSERT_TRUE(harness.ok()) << harness.LastError();
    SpirvModuleBuilder builder = ScaleAddModule();
    std::string error;
    ASSERT_TRUE(builder.Compile(&error)) << error;
    KilnHalModule* module = nullptr;
    ASSERT_EQ(harness.hal().module_load(harness.device(), builder.Build(), &module), kKilnOk)
        << harness.LastError();
    KilnHalModuleInfo info{};
    info.struct_size = sizeof(info);
    ASSERT_EQ(harness.hal().module_get_info(module, &info), kKilnOk);
    *result = static_cast<KilnHalCacheResult>(info.cache_result);
    if (*result == kKilnHalCacheHit) EXPECT_EQ(info.compile_ns, 0u);
    bool supported = false;
    ASSERT_EQ(harness.hal().module_kernel_supported(module, 0, &supported, nullptr), kKilnOk);
    EXPECT_TRUE(supported);
    harness.hal().module_unload(module);
    for (const std::string& message : harness.ValidationMessages()) ADD_FAILURE() << message;
  };
  KilnHalCacheResult result;
  load_once(&result);
  EXPECT_EQ(result, kKilnHalCacheMiss);
  // The first module load (in SetUp's harness nothing was loaded) wrote exactly one file.
  std::string listing;
  FILE* ls = popen(("ls " + cache_dir_ + "/vulkan").c_str(), "r");
  char line[256];
  while (ls && fgets(line, sizeof(line), ls)) listing += line;
  if (ls) pclose(ls);
  ASSERT_NE(listing.find(".kvpc"), std::string::npos) << listing;
  const std::string path = cache_dir_ + "/vulkan/" + listing.substr(0, listing.find('\n'));
  load_once(&result);
  EXPECT_EQ(result, kKilnHalCacheHit);
  // Flip bytes in the middle of the file.
  std::string contents;
  {
    std::ifstream in(path, std::ios::binary);
    contents.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(contents.size(), 100u);
  std::string corrupted = contents;
  for (size_t i = 90; i < corrupted.size(); i += 7) corrupted[i] = static_cast<char>(corrupted[i] ^ 0x41);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << corrupted;
  load_once(&result);
  EXPECT_EQ(result, kKilnHalCacheRebuilt);
  load_once(&result);
  EXPECT_EQ(result, kKilnHalCacheHit) << "the rebuilt file is good again";
  // Truncated to half its header, and a file from another Kiln version: misses as well.
  std::ofstream(path, std::ios::binary | std::ios::trunc) << contents.substr(0, 30);
  load_once(&result);
  EXPECT_EQ(result, kKilnHalCacheRebuilt);
  std::string other_version = contents;
  const size_t version_at = other_version.find("0.1.0");
  ASSERT_NE(version_at, std::string::npos);
  other_version[version_at] = '9';
  std::ofstream(path, std::ios::binary | std::ios::trunc) << other_version;
  load_once(&result);
  EXPECT_TRUE(result == kKilnHalCacheMiss || result == kKilnHalCacheRebuilt) << result;
}

// ---- Reductions (kiln/spirv_abi.h, "Reductions")

// A two-pass reduction over int cells: the wrapping sum of the values, a wrapping sum of x + 1000 y + 1000000 z
// (so the cell-to-coordinate mapping is checked too), and the count. Accumulator and result: three uints.
std::string SumCountGlsl(const std::string& pass_declaration = "layout(constant_id = 3) const uint kPass = 0u;\n",
                         int partials_binding = 26) {
  return KernelPreamble(1) + pass_declaration +
         "layout(set = 0, binding = 1, std430) readonly buffer In0 { int in0[]; };\n"
         "layout(set = 0, binding = 9, std430) writeonly buffer Result { uint result[]; };\n"
         "struct Acc { uint sum; uint coords; uint count; };\n"
         "layout(set = 0, binding = " +
         std::to_string(partials_binding) +
         ", std430) buffer Partials { Acc partials[]; };\n"
         "shared Acc acc[gl_WorkGroupSize.x];\n"
         "void combine(inout Acc a, Acc b) { a.sum += b.sum; a.coords += b.coords; a.count += b.count; }\n"
         "void main() {\n"
         "  uint lid = gl_LocalInvocationID.x;\n"
         "  Acc a = Acc(0u, 0u, 0u);\n"
         "  if (kPass == 0u) {\n"
         "    uint cells = kiln.dim.x * kiln.dim.y * kiln.dim.z;\n"
         "    for (uint c = gl_GlobalInvocationID.x; c < cells; c += kiln.dim.w * gl_WorkGroupSize.x) {\n"
         "      uvec3 p = uvec3(c % kiln.dim.x, (c / kiln.dim.x) % kiln.dim.y, c / (kiln.dim.x * kiln.dim.y));\n"
         "      a.sum += uint(in0[kiln_index(0u, p)]);\n"
         "      a.coords += p.x + 1000u * p.y + 1000000u * p.z;\n"
         "      a.count += 1u;\n"
         "    }\n"
         "  } else {\n"
         "    for (uint g = lid; g < kiln.dim.w; g += gl_WorkGroupSize.x) combine(a, partials[g]);\n"
         "  }\n"
         "  acc[lid] = a;\n"
         "  memoryBarrierShared();\n"
         "  barrier();\n"
         "  for (uint step = gl_WorkGroupSize.x / 2u; step > 0u; step /= 2u) {\n"
         "    if (lid < step) combine(acc[lid], acc[lid + step]);\n"
         "    memoryBarrierShared();\n"
         "    barrier();\n"
         "  }\n"
         "  if (lid == 0u) {\n"
         "    if (kPass == 0u) {\n"
         "      partials[gl_WorkGroupID.x] = acc[0];\n"
         "    } else {\n"
         "      result[0] = acc[0].sum;\n"
         "      result[1] = acc[0].coords;\n"
         "      result[2] = acc[0].count;\n"
         "    }\n"
         "  }\n"
         "}\n";
}

GlslReduction SumCount() {
  GlslReduction r;
  r.name = "sum_count";
  r.glsl = SumCountGlsl();
  r.input_sizes = {4};
  r.accumulator_stride = 12;
  r.result_size = 12;
  return r;
}

// out = in + 1 over ints: the for_each a batch records before its reductions.
GlslKernel IncInt() { return UnaryKernel("inc_int", "int", "x + 1"); }

struct SumCountResult {
  uint32_t sum = 0xEEEEEEEEu, coords = 0xEEEEEEEEu, count = 0xEEEEEEEEu;
  bool operator==(const SumCountResult& o) const { return sum == o.sum && coords == o.coords && count == o.count; }
};

std::ostream& operator<<(std::ostream& out, const SumCountResult& r) {
  return out << "{sum " << static_cast<int32_t>(r.sum) << ", coords " << r.coords << ", count " << r.count << "}";
}

// The same reduction as a C++ loop over a view given in elements (offset, strides).
SumCountResult HostSumCount(const std::vector<int32_t>& data, uint32_t dx, uint32_t dy, uint32_t dz,
                            size_t offset, size_t sx, size_t sy, size_t sz, int32_t add = 0) {
  SumCountResult r{0, 0, 0};
  for (uint32_t z = 0; z < dz; ++z) {
    for (uint32_t y = 0; y < dy; ++y) {
      for (uint32_t x = 0; x < dx; ++x) {
        r.sum += static_cast<uint32_t>(data[offset + x * sx + y * sy + z * sz] + add);
        r.coords += x + 1000u * y + 1000000u * z;
        r.count += 1;
      }
    }
  }
  return r;
}

TEST_F(VulkanDriverTest, ReduceOverShapes) {
  ASSERT_NE(hal().launch_reduce, nullptr);
  ASSERT_NE(hal().module_reduction_supported, nullptr);
  SpirvModuleBuilder builder("sum_count.rs");
  builder.Reduction(SumCount());
  Loaded loaded = Load(builder);
  ASSERT_NE(loaded.script, nullptr);
  bool supported = false;
  const char* reason = nullptr;
  ASSERT_EQ(hal().module_reduction_supported(loaded.module, 0, &supported, &reason), kKilnOk);
  ASSERT_TRUE(supported) << reason;
  struct Case {
    uint32_t x, y, z;
    size_t pitch;  // elements per row; 0: dense
    size_t offset;
  };
  // 1000003 cells need more workgroups than the 1024 partials allow: each invocation then takes several cells.
  for (Case c : {Case{1, 1, 1, 0, 0}, Case{7, 1, 1, 0, 0}, Case{1000, 1, 1, 0, 0}, Case{100003, 1, 1, 0, 0},
                 Case{1000003, 1, 1, 0, 0}, Case{317, 13, 1, 320, 4}, Case{11, 7, 5, 0, 0}, Case{1, 1, 9, 0, 0}}) {
    SCOPED_TRACE(std::to_string(c.x) + "x" + std::to_string(c.y) + "x" + std::to_string(c.z));
    const size_t sy = c.pitch ? c.pitch : c.x;
    const size_t sz = sy * c.y;
    std::vector<int32_t> data(c.offset + sz * c.z);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<int32_t>(i * 7919 % 20011) - 10000;
    KilnHalBuffer* in = Upload(data);
    KilnHalBufferView view = View(in, 4, 4, 4 * sy, 4 * sz, 4 * c.offset);
    KilnHalReduceDesc desc = Reduce(0, c.x, c.y, c.z, &view, 1);
    SumCountResult got;
    ASSERT_EQ(hal().launch_reduce(loaded.script, &desc, sizeof(got), &got), kKilnOk) << harness_->LastError();
    EXPECT_EQ(got, HostSumCount(data, c.x, c.y, c.z, c.offset, 1, sy, sz));
    hal().buffer_destroy(in);
  }
  // A broadcast input (stride 0): every cell reads the same value.
  std::vector<int32_t> one = {-3};
  KilnHalBuffer* scalar = Upload(one);
  KilnHalBufferView view = View(scalar, 4, 0, 0, 0);
  KilnHalReduceDesc desc = Reduce(0, 1000, 3, 1, &view, 1);
  SumCountResult got;
  ASSERT_EQ(hal().launch_reduce(loaded.script, &desc, sizeof(got), &got), kKilnOk) << harness_->LastError();
  EXPECT_EQ(static_cast<int32_t>(got.sum), -9000);
  EXPECT_EQ(got.count, 3000u);
  hal().buffer_destroy(scalar);
  Unload(loaded);
}

// Only the reflection's result_size bytes reach the caller, though the shader writes whole words.
TEST_F(VulkanDriverTest, ReduceCopiesResultSizeBytes) {
  GlslReduction short_result = SumCount();
  short_result.name = "sum_count_10";
  short_result.result_size = 10;  // three words, the last half used
  SpirvModuleBuilder builder("sum_count_10.rs");
  builder.Reduction(short_result);
  Loaded loaded = Load(builder);
  ASSERT_NE(loaded.script, nullptr);
  std::vector<int32_t> data = {5, 6, 7};
  KilnHalBuffer* in = Upload(data);
  KilnHalBufferView view = View(in, 4, 4);
  KilnHalReduceDesc desc = Reduce(0, 3, 1, 1, &view, 1);
  uint8_t out[12];
  memset(out, 0xEE, sizeof(out));
  ASSERT_EQ(hal().launch_reduce(loaded.script, &desc, 10, out), kKilnOk) << harness_->LastError();
  uint32_t words[2];
  memcpy(words, out, 8);
  EXPECT_EQ(words[0], 18u);
  EXPECT_EQ(words[1], 3u);  // coords 0 + 1 + 2
  EXPECT_EQ(out[8], 3);     // the count's low bytes
  EXPECT_EQ(out[9], 0);
  EXPECT_EQ(out[10], 0xEE) << "a byte past result_size was written";
  EXPECT_EQ(out[11], 0xEE) << "a byte past result_size was written";
  hal().buffer_destroy(in);
  Unload(loaded);
}

// for_each, reduce, for_each, reduce in one batch: each reduction sees the writes recorded before it, the
// results arrive when the fence completes, and a second submission delivers new results.
TEST_F(VulkanDriverTest, BatchForEachThenReduce) {
  ASSERT_NE(hal().batch_record_reduce, nullptr);
  SpirvModuleBuilder builder("inc_and_sum.rs");
  builder.Kernel(IncInt()).Reduction(SumCount());
  Loaded loaded = Load(builder);
  ASSERT_NE(loaded.script, nullptr);
  const uint32_t n = 100003;
  std::vector<int32_t> a0(n);
  for (uint32_t i = 0; i < n; ++i) a0[i] = static_cast<int32_t>(i % 1000) - 500;
  KilnHalBuffer* a = Upload(a0);
  KilnHalBuffer* b = harness_->CreateBuffer(n * 4);
  KilnHalBufferView va = View(a, 4, 4), vb = View(b, 4, 4);
  KilnHalBatch* batch = nullptr;
  ASSERT_EQ(hal().batch_create(device(), &batch), kKilnOk);
  SumCountResult r1, r2;
  KilnHalForEachDesc a_to_b = ForEach(0, n, 1, 1, &va, 1, &vb);
  KilnHalForEachDesc b_to_a = ForEach(0, n, 1, 1, &vb, 1, &va);
  KilnHalReduceDesc sum_b = Reduce(0, n, 1, 1, &vb, 1);
  KilnHalReduceDesc sum_a = Reduce(0, n, 1, 1, &va, 1);
  ASSERT_EQ(hal().batch_record_for_each(batch, loaded.script, &a_to_b), kKilnOk) << harness_->LastError();
  ASSERT_EQ(hal().batch_record_reduce(batch, loaded.script, &sum_b, sizeof(r1), &r1), kKilnOk)
      << harness_->LastError();
  ASSERT_EQ(hal().batch_record_for_each(batch, loaded.script, &b_to_a), kKilnOk) << harness_->LastError();
  ASSERT_EQ(hal().batch_record_reduce(batch, loaded.script, &sum_a, sizeof(r2), &r2), kKilnOk)
      << harness_->LastError();
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("submission " + std::to_string(round + 1));
    KilnHalFence* fence = nullptr;
    ASSERT_EQ(hal().batch_submit(batch, &fence), kKilnOk) << harness_->LastError();
    bool done = false;
    ASSERT_EQ(hal().fence_wait(fence, UINT64_MAX, &done), kKilnOk) << harness_->LastError();
    EXPECT_TRUE(done);
    EXPECT_EQ(r1, HostSumCount(a0, n, 1, 1, 0, 1, n, n, 2 * round + 1));
    EXPECT_EQ(r2, HostSumCount(a0, n, 1, 1, 0, 1, n, n, 2 * round + 2));
    ASSERT_EQ(hal().fence_destroy(fence), kKilnOk);
  }
  // The batch may go before its fence is waited on: the fence still delivers the results.
  r1 = r2 = SumCountResult();
  KilnHalFence* fence = nullptr;
  ASSERT_EQ(hal().batch_submit(batch, &fence), kKilnOk) << harness_->LastError();
  bool destroyed = false;
  for (int i = 0; i < 100000 && !destroyed; ++i) {
    destroyed = hal().batch_destroy(batch) == kKilnOk;
    if (!destroyed) usleep(100);
  }
  ASSERT_TRUE(destroyed) << harness_->LastError();
  bool done = false;
  ASSERT_EQ(hal().fence_wait(fence, UINT64_MAX, &done), kKilnOk) << harness_->LastError();
  EXPECT_EQ(r1, HostSumCount(a0, n, 1, 1, 0, 1, n, n, 5));
  EXPECT_EQ(r2, HostSumCount(a0, n, 1, 1, 0, 1, n, n, 6));
  ASSERT_EQ(hal().fence_destroy(fence), kKilnOk);
  hal().buffer_destroy(a);
  hal().buffer_destroy(b);
  Unload(loaded);
}

// A reduction reads the script's globals as they were when it was recorded, and its allocation bindings: each
// value is in0 + gBias + (the first element of gTable, or 0 while unbound).
TEST_F(VulkanDriverTest, ReductionsSeeGlobalsAndAllocations) {
  GlslReduction biased = SumCount();
  biased.name = "biased_sum";
  const std::string read = "uint(in0[kiln_index(0u, p)])";
  biased.glsl.replace(biased.glsl.find(read), read.size(),
                      "uint(in0[kiln_index(0u, p)] + gBias + (gTable.dim_x > 0u ? t0[gTable.offset] : 0))");
  const std::string globals =
      "struct KilnAllocationInfo { uint dim_x, dim_y, dim_z, element_size, offset, stride_y, stride_z, unit; };\n"
      "layout(set = 0, binding = 0, std430) readonly buffer Globals { int gBias; uint pad[3];\n"
      "                                                        KilnAllocationInfo gTable; };\n"
      "layout(set = 0, binding = 10, std430) readonly buffer A0 { int t0[]; };\n";
  biased.glsl.insert(biased.glsl.find("struct Acc"), globals);
  SpirvModuleBuilder builder("biased.rs");
  builder.Reduction(biased).Global({"gBias", 4, 0, false, 0, {}}).Global({"gTable", 0, 16, true, 4, {}}).BlockSize(48);
  Loaded loaded = Load(builder);
  ASSERT_NE(loaded.script, nullptr);
  const uint32_t n = 1000;
  std::vector<int32_t> data(n);
  for (uint32_t i = 0; i < n; ++i) data[i] = static_cast<int32_t>(i % 77);
  std::vector<int32_t> table = {-1, 40, 50};
  KilnHalBuffer* in = Upload(data);
  KilnHalBuffer* tb = Upload(table);
  KilnHalBufferView view = View(in, 4, 4);
  KilnHalReduceDesc desc = Reduce(0, n, 1, 1, &view, 1);
  KilnHalBatch* batch = nullptr;
  ASSERT_EQ(hal().batch_create(device(), &batch), kKilnOk);
  SumCountResult first, second, third;
  const int32_t bias1 = 3, bias2 = -7;
  ASSERT_EQ(hal().script_set_global(loaded.script, "gBias", &bias1, 4), kKilnOk);
  ASSERT_EQ(hal().batch_record_reduce(batch, loaded.script, &desc, 12, &first), kKilnOk) << harness_->LastError();
  ASSERT_EQ(hal().script_set_global(loaded.script, "gBias", &bias2, 4), kKilnOk);
  KilnHalBufferView alloc = View(tb, 4, 4, 0, 0, 4);  // from element 1: gTable[0] is 40
  ASSERT_EQ(hal().script_bind_allocation(loaded.script, "gTable", &alloc, kKilnInt32, 1, 2, 0, 0), kKilnOk)
      << harness_->LastError();
  ASSERT_EQ(hal().batch_record_reduce(batch, loaded.script, &desc, 12, &second), kKilnOk) << harness_->LastError();
  KilnHalFence* fence = nullptr;
  ASSERT_EQ(hal().batch_submit(batch, &fence), kKilnOk) << harness_->LastError();
  bool done = false;
  ASSERT_EQ(hal().fence_wait(fence, UINT64_MAX, &done), kKilnOk) << harness_->LastError();
  ASSERT_EQ(hal().fence_destroy(fence), kKilnOk);
  ASSERT_EQ(hal().batch_destroy(batch), kKilnOk);
  EXPECT_EQ(first, HostSumCount(data, n, 1, 1, 0, 1, n, n, bias1));
  EXPECT_EQ(second, HostSumCount(data, n, 1, 1, 0, 1, n, n, bias2 + 40));
  ASSERT_EQ(hal().launch_reduce(loaded.script, &desc, 12, &third), kKilnOk) << harness_->LastError();
  EXPECT_EQ(third, second);
  hal().buffer_destroy(in);
  hal().buffer_destroy(tb);
  Unload(loaded);
}

TEST_F(VulkanDriverTest, UnsupportedReductionsSayWhy) {
  GlslReduction cpu_only = SumCount();
  cpu_only.name = "cpu_only";
  cpu_only.glsl.clear();
  cpu_only.cpu_only_reason = "its accumulator calls rsDebug";
  GlslReduction no_pass = SumCount();
  no_pass.name = "no_pass_constant";
  no_pass.glsl = SumCountGlsl("const uint kPass = 0u;\n");
  GlslReduction garbage = SumCount();
  garbage.name = "garbage";
  garbage.spirv_override = {0xdeadbeef, 1, 2, 3, 4, 5};
  GlslReduction wrong_binding = SumCount();
  wrong_binding.name = "wrong_binding";
  wrong_binding.glsl = SumCountGlsl("layout(constant_id = 3) const uint kPass = 0u;\n", 28);
  GlslReduction exotic = SumCount();
  exotic.name = "needs_future_feature";
  exotic.required_features = 0x100;
  GlslReduction huge = SumCount();
  huge.name = "huge_accumulator";
  huge.accumulator_stride = 1u << 19;  // not even two fit in any device's shared memory
  GlslReduction words = SumCount();
  words.name = "wrong_result_words";
  words.result_words = 5;
  SpirvModuleBuilder builder("reduce_unsupported.rs");
  builder.Reduction(cpu_only)
      .Reduction(no_pass)
      .Reduction(garbage)
      .Reduction(wrong_binding)
      .Reduction(exotic)
      .Reduction(huge)
      .Reduction(words)
      .Reduction(SumCount());
  Loaded loaded = Load(builder);
  ASSERT_NE(loaded.script, nullptr);
  const char* expected[] = {"CPU-only: its accumulator calls rsDebug",
                            "specialization constant 3",
                            "SPIR-V",
                            "binding 28",
                            "lacks",
                            "workgroup of two 524288-byte accumulators",
                            "5 result words",
                            nullptr};
  for (uint32_t i = 0; i < 8; ++i) {
    SCOPED_TRACE("reduction " + std::to_string(i));
    bool supported = !expected[i];
    const char* reason = nullptr;
    ASSERT_EQ(hal().module_reduction_supported(loaded.module, i, &supported, &reason), kKilnOk);
    if (!expected[i]) {
      EXPECT_TRUE(supported) << reason;
      continue;
    }
    ASSERT_FALSE(supported);
    ASSERT_NE(reason, nullptr);
    EXPECT_NE(std::string(reason).find(expected[i]), std::string::npos) << reason;
  }
  bool supported = true;
  EXPECT_EQ(hal().module_reduction_supported(loaded.module, 8, &supported, nullptr), kKilnInvalidArgument);
  EXPECT_NE(harness_->LastError().find("reduction index 8 out of range"), std::string::npos)
      << harness_->LastError();
  EXPECT_EQ(hal().module_reduction_supported(loaded.module, 0, nullptr, nullptr), kKilnInvalidArgument);
  // Launching or recording one is refused with the reduction's name and reason; the result stays untouched.
  std::vector<int32_t> data(64, 1);
  KilnHalBuffer* in = Upload(data);
  KilnHalBufferView view = View(in, 4, 4);
  KilnHalReduceDesc desc = Reduce(1, 64, 1, 1, &view, 1);
  SumCountResult result;
  EXPECT_EQ(hal().launch_reduce(loaded.script, &desc, sizeof(result), &result), kKilnUnsupported);
  EXPECT_NE(harness_->LastError().find("reduction no_pass_constant: cannot run on Vulkan: the SPIR-V does not "
                                       "take its pass from specialization constant 3"),
            std::string::npos)
      << harness_->LastError();
  EXPECT_EQ(result, SumCountResult());
  KilnHalBatch* batch = nullptr;
  ASSERT_EQ(hal().batch_create(device(), &batch), kKilnOk);
  desc.reduction_index = 2;
  EXPECT_EQ(hal().batch_record_reduce(batch, loaded.script, &desc, sizeof(result), &result), kKilnUnsupported);
  EXPECT_NE(harness_->LastError().find("reduction garbage: cannot run on Vulkan"), std::string::npos)
      << harness_->LastError();
  ASSERT_EQ(hal().batch_destroy(batch), kKilnOk);
  // The module's good reduction still runs.
  desc.reduction_index = 7;
  ASSERT_EQ(hal().launch_reduce(loaded.script, &desc, sizeof(result), &result), kKilnOk) << harness_->LastError();
  EXPECT_EQ(result, HostSumCount(data, 64, 1, 1, 0, 1, 64, 64));
  hal().buffer_destroy(in);
  Unload(loaded);
}

TEST_F(VulkanDriverTest, ReduceRefusesBadArguments) {
  SpirvModuleBuilder builder("sum_count.rs");
  builder.Reduction(SumCount());
  Loaded loaded = Load(builder);
  ASSERT_NE(loaded.script, nullptr);
  std::vector<int32_t> data(100, 2);
  KilnHalBuffer* in = Upload(data);
  KilnHalBufferView view = View(in, 4, 4);
  KilnHalReduceDesc desc = Reduce(0, 100, 1, 1, &view, 1);
  SumCountResult result;
  auto expect_refused = [&](const KilnHalReduceDesc& d, uint64_t size, void* out, KilnStatus status,
                            const std::string& message) {
    EXPECT_EQ(hal().launch_reduce(loaded.script, &d, size, out), status) << message;
    EXPECT_NE(harness_->LastError().find(message), std::string::npos) << harness_->LastError();
    EXPECT_EQ(result, SumCountResult()) << "a refused reduction wrote its result";
  };
  expect_refused(desc, 8, &result, kKilnInvalidArgument,
                 "reduction sum_count: the result needs 12 bytes, got 8");
  expect_refused(desc, 12, nullptr, kKilnInvalidArgument, "the result needs 12 bytes, got 12 (NULL)");
  KilnHalReduceDesc bad = desc;
  bad.num_inputs = 0;
  expect_refused(bad, 12, &result, kKilnInvalidArgument, "0 inputs given, the reduction takes 1");
  bad = Reduce(0, 101, 1, 1, &view, 1);
  expect_refused(bad, 12, &result, kKilnInvalidArgument, "input 0: the view");
  bad = Reduce(0, 0, 1, 1, &view, 1);
  expect_refused(bad, 12, &result, kKilnInvalidArgument, "launch extents 0x1x1");
  bad = Reduce(1, 100, 1, 1, &view, 1);
  expect_refused(bad, 12, &result, kKilnInvalidArgument, "reduction index 1 out of range (1 reductions)");
  KilnHalBufferView broadcast = View(in, 4, 0, 0, 0);
  bad = Reduce(0, 1u << 16, 1u << 15, 1, &broadcast, 1);
  expect_refused(bad, 12, &result, kKilnUnsupported, "2147483648 cells");
  KilnHalBufferView odd = View(in, 4, 4, 0, 0, 2);  // an offset the shader's 4-byte unit does not divide
  bad = Reduce(0, 10, 1, 1, &odd, 1);
  expect_refused(bad, 12, &result, kKilnInvalidArgument, "offset 2 is not a multiple");
  EXPECT_EQ(hal().launch_reduce(loaded.script, nullptr, 12, &result), kKilnInvalidArgument);
  // And the same module still reduces.
  ASSERT_EQ(hal().launch_reduce(loaded.script, &desc, 12, &result), kKilnOk) << harness_->LastError();
  EXPECT_EQ(result, HostSumCount(data, 100, 1, 1, 0, 1, 100, 100));
  hal().buffer_destroy(in);
  Unload(loaded);
}

// The payload's reduction rows must match the reflection; a payload without rows leaves them on the CPU.
TEST_F(VulkanDriverTest, ReductionRowsMatchTheReflection) {
  std::string error;
  KilnHalModule* module = nullptr;
  GlslReduction renamed = SumCount();
  renamed.reflected_name = "other_name";
  SpirvModuleBuilder mismatch("renamed.rs");
  mismatch.Reduction(renamed);
  ASSERT_TRUE(mismatch.Compile(&error)) << error;
  EXPECT_EQ(hal().module_load(device(), mismatch.Build(), &module), kKilnInvalidModel);
  EXPECT_NE(harness_->LastError().find("renamed.rs: spirv payload reduction row 0 (sum_count, 1 inputs) does not "
                                       "match reduction other_name"),
            std::string::npos)
      << harness_->LastError();

  SpirvModuleBuilder counted("counted.rs");
  GlslReduction second = SumCount();
  second.name = "second";
  counted.Reduction(SumCount()).Reduction(second);
  ASSERT_TRUE(counted.Compile(&error)) << error;
  vulkan::SpirvPayload payload;
  ASSERT_TRUE(vulkan::ParseSpirvPayload(counted.payload_bytes().data(), counted.payload_bytes().size(), &payload,
                                        &error))
      << error;
  payload.reductions.pop_back();
  counted.payload_bytes() = vulkan::WriteSpirvPayload(payload);
  EXPECT_EQ(hal().module_load(device(), counted.Build(), &module), kKilnInvalidModel);
  EXPECT_NE(harness_->LastError().find("counted.rs: the spirv payload describes 1 reductions, the module has 2"),
            std::string::npos)
      << harness_->LastError();

  SpirvModuleBuilder no_rows("no_rows.rs");
  no_rows.Kernel(AddOne()).Reduction(SumCount()).NoReductionRows();
  Loaded loaded = Load(no_rows);
  ASSERT_NE(loaded.module, nullptr);
  bool supported = true;
  const char* reason = nullptr;
  ASSERT_EQ(hal().module_reduction_supported(loaded.module, 0, &supported, &reason), kKilnOk);
  EXPECT_FALSE(supported);
  EXPECT_NE(std::string(reason ? reason : "").find("no reduction rows"), std::string::npos) << reason;
  ASSERT_EQ(hal().module_kernel_supported(loaded.module, 0, &supported, &reason), kKilnOk);
  EXPECT_TRUE(supported) << "the module's kernels still run: " << reason;
  Unload(loaded);
}

// Both passes' pipelines go through the pipeline cache: a second driver instance loads them without compiling.
TEST_F(VulkanDriverTest, ReductionPipelinesAreCached) {
  auto load_once = [&](KilnHalCacheResult* result) {
    VulkanHarness harness({{"cache_dir", cache_dir_}, {"vulkan.validation", "1"}});
    ASSERT_TRUE(harness.ok()) << harness.LastError();
    SpirvModuleBuilder builder("sum_count.rs");
    builder.Reduction(SumCount());
    std::string error;
    ASSERT_TRUE(builder.Compile(&error)) << error;
    KilnHalModule* module = nullptr;
    ASSERT_EQ(harness.hal().module_load(harness.device(), builder.Build(), &module), kKilnOk)
        << harness.LastError();
    KilnHalModuleInfo info{};
    info.struct_size = sizeof(info);
    ASSERT_EQ(harness.hal().module_get_info(module, &info), kKilnOk);
    *result = static_cast<KilnHalCacheResult>(info.cache_result);
    bool supported = false;
    ASSERT_EQ(harness.hal().module_reduction_supported(module, 0, &supported, nullptr), kKilnOk);
    EXPECT_TRUE(supported);
    harness.hal().module_unload(module);
    for (const std::string& message : harness.ValidationMessages()) ADD_FAILURE() << message;
  };
  KilnHalCacheResult result;
  load_once(&result);
  EXPECT_EQ(result, kKilnHalCacheMiss);
  load_once(&result);
  EXPECT_EQ(result, kKilnHalCacheHit);
}

// The same work through staging buffers, as on a discrete GPU.
class VulkanStagedTest : public VulkanDriverTest {
 protected:
  std::map<std::string, std::string> Config() override {
    return {{"cache_dir", cache_dir_}, {"vulkan.validation", "1"}, {"vulkan.force_staging", "1"}};
  }
};

TEST_F(VulkanStagedTest, BuffersAndLaunchesThroughStaging) {
  KilnHalDeviceInfo info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(hal().device_get_info(hal().instance, 0, &info), kKilnOk);
  EXPECT_FALSE(info.flags & KILN_HAL_DEVICE_MAPPABLE_BUFFERS);
  EXPECT_FALSE(info.flags & KILN_HAL_DEVICE_HOST_SHARED_MEMORY);
  std::vector<float> host(64);
  EXPECT_EQ(harness_->CreateBuffer(256, host.data()), nullptr);
  // Larger than the staging buffer, so the copy runs in chunks.
  const uint32_t n = (9u << 20) / 4 + 5;
  SpirvModuleBuilder builder = ScaleAddModule();
  Loaded loaded = Load(builder);
  ASSERT_NE(loaded.script, nullptr);
  std::vector<float> a(n), b(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i % 4099);
    b[i] = 1.0f;
  }
  KilnHalBuffer* ba = Upload(a);
  KilnHalBuffer* bb = Upload(b);
  KilnHalBuffer* bo = harness_->CreateBuffer(n * 4);
  KilnHalBufferView views[3] = {View(ba, 4, 4), View(bb, 4, 4), View(bo, 4, 4)};
  KilnHalForEachDesc fe = ForEach(0, n, 1, 1, views, 2, &views[2]);
  ASSERT_EQ(hal().launch_for_each(loaded.script, &fe), kKilnOk) << harness_->LastError();
  CheckScaleAdd(a, b, Download<float>(bo, n), 1.0f, 0.0f);
  void* mapped = nullptr;
  ASSERT_EQ(hal().buffer_map(bo, 8, 8, &mapped), kKilnOk);
  EXPECT_EQ(static_cast<float*>(mapped)[0], a[2] + 1.0f);
  static_cast<float*>(mapped)[1] = -7.0f;
  ASSERT_EQ(hal().buffer_unmap(bo), kKilnOk);
  EXPECT_EQ(Download<float>(bo, 4)[3], -7.0f);
  for (KilnHalBuffer* buffer : {ba, bb, bo}) hal().buffer_destroy(buffer);
  Unload(loaded);
}

// Partials in device memory, the result read back from host-visible memory, inputs through staging.
TEST_F(VulkanStagedTest, ReduceThroughStaging) {
  SpirvModuleBuilder builder("sum_count.rs");
  builder.Reduction(SumCount());
  Loaded loaded = Load(builder);
  ASSERT_NE(loaded.script, nullptr);
  const uint32_t n = 100003;
  std::vector<int32_t> data(n);
  for (uint32_t i = 0; i < n; ++i) data[i] = static_cast<int32_t>(i * 31 % 1001) - 500;
  KilnHalBuffer* in = Upload(data);
  KilnHalBufferView view = View(in, 4, 4);
  KilnHalReduceDesc desc = Reduce(0, n, 1, 1, &view, 1);
  SumCountResult got;
  ASSERT_EQ(hal().launch_reduce(loaded.script, &desc, sizeof(got), &got), kKilnOk) << harness_->LastError();
  EXPECT_EQ(got, HostSumCount(data, n, 1, 1, 0, 1, n, n));
  hal().buffer_destroy(in);
  Unload(loaded);
}

TEST(VulkanDriverLoad, RefusesAnotherHalMajor) {
  void* library = dlopen(KILN_VULKAN_DRIVER_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  auto query = reinterpret_cast<KilnDriverQueryFn>(dlsym(library, KILN_DRIVER_QUERY_SYMBOL));
  ASSERT_NE(query, nullptr);
  std::string message;
  KilnHalServices services{};
  services.struct_size = sizeof(services);
  services.user_data = &message;
  services.report_error = [](void* user, KilnStatus, const char* text) {
    *static_cast<std::string*>(user) = text;
  };
  KilnHalDriver driver{};
  driver.struct_size = sizeof(driver);
  EXPECT_EQ(query(KILN_HAL_VERSION_MAJOR + 1, 0, &services, &driver), kKilnUnsupported);
  EXPECT_NE(message.find("the runtime speaks 2.0"), std::string::npos) << message;
  dlclose(library);
}

}  // namespace
}  // namespace testing
}  // namespace kiln
