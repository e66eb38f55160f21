// vulkan_driver_tests, reductions (kiln/spirv_abi.h, "Reductions"): a hand-written two-pass reduction over
// shapes and views, in batches after for_each, with globals and allocations, the reductions the driver
// refuses, and cached reduction pipelines; then the same work through staging buffers, and a driver asked
// for another HAL major version.
#include "tests/vulkan/vulkan_driver_fixture.h"

namespace kiln {
namespace testing {
namespace {

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
  spirv::SpirvPayload payload;
  ASSERT_TRUE(spirv::ParseSpirvPayload(counted.payload_bytes().data(), counted.payload_bytes().size(), &payload,
                                        &error))
      << error;
  payload.reductions.pop_back();
  counted.payload_bytes() = spirv::WriteSpirvPayload(payload);
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
