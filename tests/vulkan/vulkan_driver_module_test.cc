// vulkan_driver_tests, modules: kernels the Vulkan driver cannot run and says why (CPU-only, fixed workgroup
// size, missing features, wrong bindings, broken SPIR-V), modules with init() refused, and the on-disk
// pipeline cache (miss, hit, corrupt or foreign files rebuilt).
#include "tests/vulkan/vulkan_driver_fixture.h"

namespace kiln {
namespace testing {
namespace {

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

// A module with init() loads and its kernels run: this driver runs no host code, so script_create leaves the
// globals at their defaults, and the runtime runs init() on the CPU driver and sets what it wrote (kiln/hal.h).
TEST_F(VulkanDriverTest, ModulesWithInitLoadAndLeaveInitToTheRuntime) {
  SpirvModuleBuilder builder("with_init.rs");
  builder.Kernel(AddOne()).Flags(KILN_HAL_MODULE_HAS_INIT);
  std::string error;
  ASSERT_TRUE(builder.Compile(&error)) << error;
  KilnHalModule* module = nullptr;
  ASSERT_EQ(hal().module_load(device(), builder.Build(), &module), kKilnOk);
  bool supported = false;
  const char* reason = nullptr;
  ASSERT_EQ(hal().module_kernel_supported(module, 0, &supported, &reason), kKilnOk);
  EXPECT_TRUE(supported) << (reason ? reason : "");
  KilnHalScript* script = nullptr;
  ASSERT_EQ(hal().script_create(module, nullptr, &script), kKilnOk) << harness_->LastError();
  EXPECT_EQ(hal().script_destroy(script), kKilnOk);
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
    if (*result == kKilnHalCacheHit) {
      EXPECT_EQ(info.compile_ns, 0u);
    }
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

}  // namespace
}  // namespace testing
}  // namespace kiln
