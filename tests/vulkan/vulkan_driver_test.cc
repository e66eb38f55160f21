// The Vulkan driver through its HAL table, loaded with dlopen, on whatever Vulkan device the machine has
// (Mesa's lavapipe on CI). Kernels are GLSL 4.50 written by hand to kiln/spirv_abi.h, compiled with glslang
// and checked with SPIRV-Tools at run time. Every test runs with the Khronos validation layers and fails on
// any message.
//
// The tests are split: vulkan_driver_test.cc (devices, buffers, for_each launches, batches),
// vulkan_driver_module_test.cc (kernels and modules the driver refuses, the pipeline cache) and
// vulkan_driver_reduce_test.cc (reductions, the staging path, the HAL version check). vulkan_driver_fixture.h
// has what they share.
#include "tests/vulkan/vulkan_driver_fixture.h"

namespace kiln {
namespace testing {
namespace {

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

}  // namespace
}  // namespace testing
}  // namespace kiln
