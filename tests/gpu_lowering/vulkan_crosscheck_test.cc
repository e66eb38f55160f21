// kilnc's GPU lowering end to end: RenderScript-style kernels compiled by kilnc (both payloads), the module
// loaded the way the runtime loads it (runtime/device/kernel_module.h), then launched through the HAL on the CPU
// driver (the bitcode) and on the Vulkan driver (the SPIR-V, on lavapipe in CI, validation layers on), with
// the same inputs, globals and allocations. The outputs must agree within each kernel's tolerance.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/compiler.h"
#include "runtime/device/kernel_module.h"
#include "tests/cpu/cpu_driver_harness.h"
#include "tests/vulkan/vulkan_harness.h"

namespace kiln {
namespace {

std::string ReadSource(const std::string& relative) {
  std::ifstream in(std::string(KILN_SOURCE_DIR) + "/" + relative);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::shared_ptr<const KernelModule> CompileModule(const std::string& source, const std::string& name) {
  CompileResult result;
  CompileKernelSource(source, name, CompileOptions(), &result);
  EXPECT_TRUE(result.ok) << result.diagnostics;
  if (!result.ok) return nullptr;
  std::string error;
  auto module = KernelModule::Create(result.kmod.data(), result.kmod.size(), name, &error);
  EXPECT_TRUE(module) << error;
  return module;
}

// One launch's data: raw input bytes with their views, globals to set, allocations to bind.
struct Binding {
  std::string global;
  std::vector<uint8_t> bytes;
  uint32_t element_size = 0;
  uint32_t element_type = 0;
  uint32_t vector_size = 1;
  uint32_t dim_x = 0, dim_y = 0;
};
struct Launch {
  std::string kernel;
  uint32_t dim_x = 1, dim_y = 1;
  std::vector<std::vector<uint8_t>> inputs;
  std::vector<uint32_t> input_sizes;
  uint32_t output_size = 0;
  std::vector<std::pair<std::string, std::vector<uint8_t>>> globals;
  std::vector<Binding> allocations;
  std::vector<uint8_t> usr_data;  // an old-style root()'s usrData (none: NULL)
};

template <typename T>
std::vector<uint8_t> Bytes(const std::vector<T>& values) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(values.data());
  return std::vector<uint8_t>(p, p + values.size() * sizeof(T));
}

// Runs `launch` on any HAL driver; returns the output bytes, or fails the test.
template <typename Harness>
std::vector<uint8_t> RunOn(Harness& harness, const KernelModule& module, const Launch& launch,
                           KilnHalModule* preloaded = nullptr, KilnStatus expect = kKilnOk) {
  const KilnHalDriver& hal = harness.hal();
  std::vector<uint8_t> out;
  KilnHalModule* loaded = preloaded;
  if (!loaded && hal.module_load(harness.device(), &module.hal_desc(), &loaded) != kKilnOk) {
    ADD_FAILURE() << "module_load: " << harness.LastError();
    return out;
  }
  const int index = module.KernelIndex(launch.kernel);
  bool supported = false;
  const char* reason = nullptr;
  EXPECT_EQ(hal.module_kernel_supported(loaded, static_cast<uint32_t>(index), &supported, &reason), kKilnOk);
  EXPECT_TRUE(supported) << launch.kernel << ": " << (reason ? reason : "");
  KilnHalScript* script = nullptr;
  EXPECT_EQ(hal.script_create(loaded, nullptr, &script), kKilnOk) << harness.LastError();
  std::vector<KilnHalBuffer*> buffers;
  auto upload = [&](const std::vector<uint8_t>& bytes) {
    KilnHalBuffer* buffer = harness.CreateBuffer(bytes.size());
    EXPECT_NE(buffer, nullptr) << harness.LastError();
    EXPECT_EQ(hal.buffer_write(buffer, 0, bytes.data(), bytes.size()), kKilnOk);
    buffers.push_back(buffer);
    return buffer;
  };
  for (const auto& global : launch.globals) {
    EXPECT_EQ(hal.script_set_global(script, global.first.c_str(), global.second.data(), global.second.size()),
              kKilnOk)
        << global.first << ": " << harness.LastError();
  }
  for (const Binding& binding : launch.allocations) {
    KilnHalBufferView view{};
    view.struct_size = sizeof(view);
    view.buffer = upload(binding.bytes);
    view.element_size = binding.element_size;
    view.stride_x = binding.element_size;
    view.stride_y = uint64_t{binding.element_size} * binding.dim_x;
    EXPECT_EQ(hal.script_bind_allocation(script, binding.global.c_str(), &view, binding.element_type,
                                         binding.vector_size, binding.dim_x, binding.dim_y, 0),
              kKilnOk)
        << harness.LastError();
  }
  std::vector<KilnHalBufferView> inputs;
  for (size_t i = 0; i < launch.inputs.size(); ++i) {
    KilnHalBufferView view{};
    view.struct_size = sizeof(view);
    view.buffer = upload(launch.inputs[i]);
    view.element_size = launch.input_sizes[i];
    view.stride_x = launch.input_sizes[i];
    view.stride_y = uint64_t{launch.input_sizes[i]} * launch.dim_x;
    inputs.push_back(view);
  }
  const uint64_t out_bytes = uint64_t{launch.output_size} * launch.dim_x * launch.dim_y;
  KilnHalBufferView output{};
  output.struct_size = sizeof(output);
  output.buffer = upload(std::vector<uint8_t>(out_bytes, 0xcd));
  output.element_size = launch.output_size;
  output.stride_x = launch.output_size;
  output.stride_y = uint64_t{launch.output_size} * launch.dim_x;
  KilnHalForEachDesc desc{};
  desc.struct_size = sizeof(desc);
  desc.kernel_index = static_cast<uint32_t>(index);
  desc.dim_x = launch.dim_x;
  desc.dim_y = launch.dim_y;
  desc.dim_z = 1;
  desc.num_inputs = static_cast<uint32_t>(inputs.size());
  desc.inputs = inputs.data();
  desc.output = &output;
  if (!launch.usr_data.empty()) {
    desc.usr_data = launch.usr_data.data();
    desc.usr_size = launch.usr_data.size();
  }
  EXPECT_EQ(hal.launch_for_each(script, &desc), expect) << harness.LastError();
  out.resize(out_bytes);
  EXPECT_EQ(hal.buffer_read(output.buffer, 0, out_bytes, out.data()), kKilnOk);
  EXPECT_EQ(hal.script_destroy(script), kKilnOk);
  for (KilnHalBuffer* buffer : buffers) hal.buffer_destroy(buffer);
  if (!preloaded) {
    EXPECT_EQ(hal.module_unload(loaded), kKilnOk);
  }
  return out;
}

std::string MakeTempDir() {
  char pattern[] = "/tmp/kiln_gpu_lowering_XXXXXX";
  const char* dir = mkdtemp(pattern);
  return dir ? dir : "/tmp";
}

class GpuLoweringVulkanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_dir_ = MakeTempDir();
    vulkan_ = std::make_unique<testing::VulkanHarness>(
        std::map<std::string, std::string>{{"cache_dir", cache_dir_}, {"vulkan.validation", "1"}});
    if (vulkan_->query_status() == kKilnUnsupported &&
        vulkan_->LastError().find("no Vulkan") != std::string::npos) {
      GTEST_SKIP() << "no Vulkan device on this machine: " << vulkan_->LastError();
    }
    ASSERT_TRUE(vulkan_->ok()) << vulkan_->LastError();
    ASSERT_TRUE(vulkan_->LogContains("validation layers enabled")) << "the validation layers must be active";
    cpu_ =
        std::make_unique<testing::CpuDriverHarness>(std::map<std::string, std::string>{{"cache_dir", "off"}});
    ASSERT_TRUE(cpu_->ok()) << cpu_->LastError();
  }
  void TearDown() override {
    if (vulkan_) {
      for (const std::string& message : vulkan_->ValidationMessages()) ADD_FAILURE() << message;
    }
    vulkan_.reset();
    cpu_.reset();
    if (cache_dir_.rfind("/tmp/kiln_gpu_lowering_", 0) == 0) {
      const std::string command = "rm -rf '" + cache_dir_ + "'";
      if (system(command.c_str()) != 0) {
        ADD_FAILURE() << "could not remove " << cache_dir_;
      }
    }
  }

  // Runs on both drivers; returns {cpu, gpu}.
  std::pair<std::vector<uint8_t>, std::vector<uint8_t>> Both(const KernelModule& module,
                                                             const Launch& launch) {
    return {RunOn(*cpu_, module, launch), RunOn(*vulkan_, module, launch)};
  }

  std::string cache_dir_;
  std::unique_ptr<testing::VulkanHarness> vulkan_;
  std::unique_ptr<testing::CpuDriverHarness> cpu_;
};

uint32_t UlpDistance(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  if (ia < 0) ia = INT32_MIN - ia;
  if (ib < 0) ib = INT32_MIN - ib;
  const int64_t d = static_cast<int64_t>(ia) - ib;
  return static_cast<uint32_t>(d < 0 ? -d : d);
}

// The largest ulp distance between the two drivers' float outputs (`lanes` per input), failing the test past
// `bound` or where only one is NaN. Denormal CPU results are skipped: a GPU may flush them.
uint32_t WorstUlp(const std::vector<uint8_t>& cpu, const std::vector<uint8_t>& gpu, const std::vector<float>& in,
                  size_t lanes, uint32_t bound) {
  uint32_t worst = 0;
  for (size_t i = 0; i < in.size() * lanes && (i + 1) * 4 <= std::min(cpu.size(), gpu.size()); ++i) {
    float c, g;
    std::memcpy(&c, &cpu[i * 4], 4);
    std::memcpy(&g, &gpu[i * 4], 4);
    if (std::fpclassify(c) == FP_SUBNORMAL) continue;
    EXPECT_EQ(std::isnan(c), std::isnan(g)) << "input " << in[i / lanes] << " lane " << i % lanes;
    EXPECT_LE(UlpDistance(c, g), bound) << "input " << in[i / lanes] << " lane " << i % lanes << ": CPU " << c
                                        << ", Vulkan " << g;
    if (std::isnan(c) != std::isnan(g) || UlpDistance(c, g) > bound) return UINT32_MAX;  // first failure only
    worst = std::max(worst, UlpDistance(c, g));
  }
  return worst;
}

TEST_F(GpuLoweringVulkanTest, AtanOpMatchesTheCpuDriver) {
  auto module = CompileModule(ReadSource("examples/atan/atan_op.rs"), "atan_op.rs");
  ASSERT_TRUE(module);
  ASSERT_TRUE(module->desc().kernels[0].cpu_only_reasons.empty());
  std::vector<float> in;
  for (int i = 0; i < 20011; ++i) in.push_back(-200.0f + 0.02f * static_cast<float>(i));
  for (float special : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e30f, -1e30f, INFINITY, -INFINITY, NAN, 0.41421356f,
                        2.4142135f, 1.0f, -1.0f}) {
    in.push_back(special);
  }
  Launch launch;
  launch.kernel = "atan_op";
  launch.dim_x = static_cast<uint32_t>(in.size());
  launch.inputs = {Bytes(in)};
  launch.input_sizes = {4};
  launch.output_size = 4;
  const float offset = 0.25f;
  launch.globals = {{"offset", Bytes(std::vector<float>{offset})}};
  auto [cpu, gpu] = Both(*module, launch);
  ASSERT_EQ(cpu.size(), in.size() * 4);
  ASSERT_EQ(gpu.size(), cpu.size());
  uint32_t worst = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    float c, g;
    std::memcpy(&c, &cpu[i * 4], 4);
    std::memcpy(&g, &gpu[i * 4], 4);
    ASSERT_EQ(std::isnan(c), std::isnan(g)) << "atan(" << in[i] << " + offset)";
    if (std::isnan(c)) continue;
    EXPECT_NEAR(g, c, 1e-6) << "atan(" << in[i] << " + offset)";
    worst = std::max(worst, UlpDistance(c, g));
    EXPECT_NEAR(c, std::atan(static_cast<double>(in[i] + offset)), 1e-6);
  }
  std::printf("atan_op: CPU vs Vulkan, worst %u ulp over %zu inputs\n", worst, in.size());
  EXPECT_LE(worst, 4u);
}

// exp, exp2, exp10, log, log2, log10, asin, acos: rslib's float algorithms ported to GLSL helpers; over every
// binade the two drivers stay within 4 ulp of each other (each is within 3 ulp of the exact result on the
// CPU; GLSL's division may add a little on a real GPU). Denormal results are excluded: a GPU may flush them.
TEST_F(GpuLoweringVulkanTest, ExpLogAsinAcosHelpersMatchTheCpuDriver) {
  auto module = CompileModule(R"(
#pragma version(1)
#pragma rs java_package_name(t)
float4 RS_KERNEL explog(float in) {
  return (float4){exp(in * 0.01f), exp2(in * 0.01f), log(fabs(in)), log2(fabs(in)) + log10(fabs(in))};
}
float2 RS_KERNEL arcs(float in) { return (float2){asin(in), acos(in)}; }
)",
                              "explog.rs");
  ASSERT_TRUE(module);
  ASSERT_TRUE(module->desc().kernels[0].cpu_only_reasons.empty())
      << module->desc().kernels[0].cpu_only_reasons[0];
  std::vector<float> in;
  for (int e = -120; e <= 120; ++e) {
    for (int k = 0; k < 64; ++k) in.push_back(std::ldexp(1.0f + k / 64.0f, e) * (k % 2 ? -1.0f : 1.0f));
  }
  for (float special : {0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 8800.0f, -8800.0f})
    in.push_back(special);
  Launch launch;
  launch.kernel = "explog";
  launch.dim_x = static_cast<uint32_t>(in.size());
  launch.inputs = {Bytes(in)};
  launch.input_sizes = {4};
  launch.output_size = 16;
  auto [cpu, gpu] = Both(*module, launch);
  ASSERT_EQ(cpu.size(), in.size() * 16);
  ASSERT_EQ(gpu.size(), cpu.size());
  const uint32_t worst = WorstUlp(cpu, gpu, in, 4, 4);
  std::printf("exp/exp2/log/log2+log10: CPU vs Vulkan, worst %u ulp over %zu inputs\n", worst, in.size());

  // asin/acos over [-1.0625, 1.0625] (NaN outside [-1, 1]).
  std::vector<float> unit;
  for (int i = -17000; i <= 17000; ++i) unit.push_back(static_cast<float>(i) / 16000.0f);
  launch.kernel = "arcs";
  launch.dim_x = static_cast<uint32_t>(unit.size());
  launch.inputs = {Bytes(unit)};
  launch.output_size = 8;
  auto [cpu_arcs, gpu_arcs] = Both(*module, launch);
  ASSERT_EQ(cpu_arcs.size(), unit.size() * 8);
  ASSERT_EQ(gpu_arcs.size(), cpu_arcs.size());
  const uint32_t worst_arcs = WorstUlp(cpu_arcs, gpu_arcs, unit, 2, 4);
  std::printf("asin/acos: CPU vs Vulkan, worst %u ulp over %zu inputs\n", worst_arcs, unit.size());
}

// sin, cos, tan: rslib's double-precision reduction and polynomials ported to GLSL helpers (they need the
// device's FLOAT64 feature). Over every binade below 2^31 (so 3x stays inside the reduction's accurate range,
// |x| < 2^33) plus special values, the two drivers agree within 1 ulp: both round nearly the same double
// result to float (the CPU may fuse multiply-adds that the GPU form keeps `precise`).
TEST_F(GpuLoweringVulkanTest, SinCosTanHelpersMatchTheCpuDriver) {
  auto module = CompileModule(R"(
#pragma version(1)
#pragma rs java_package_name(t)
float4 RS_KERNEL trig(float in) { return (float4){sin(in), cos(in), tan(in), sin(in * 0.5f) + cos(in * 3.0f)}; }
)",
                              "trig.rs");
  ASSERT_TRUE(module);
  ASSERT_TRUE(module->desc().kernels[0].cpu_only_reasons.empty())
      << module->desc().kernels[0].cpu_only_reasons[0];
  std::vector<float> in;
  for (int e = -30; e <= 30; ++e) {
    for (int k = 0; k < 128; ++k) in.push_back(std::ldexp(1.0f + k / 128.0f, e) * (k % 2 ? -1.0f : 1.0f));
  }
  for (float special : {0.0f, -0.0f, 1e-40f, 3.14159274f, 1.57079637f, 0.785398185f, 100000.0f, INFINITY,
                        -INFINITY, NAN})
    in.push_back(special);
  Launch launch;
  launch.kernel = "trig";
  launch.dim_x = static_cast<uint32_t>(in.size());
  launch.inputs = {Bytes(in)};
  launch.input_sizes = {4};
  launch.output_size = 16;
  auto [cpu, gpu] = Both(*module, launch);
  ASSERT_EQ(cpu.size(), in.size() * 16);
  ASSERT_EQ(gpu.size(), cpu.size());
  const uint32_t worst = WorstUlp(cpu, gpu, in, 4, 1);
  std::printf("sin/cos/tan: CPU vs Vulkan, worst %u ulp over %zu inputs\n", worst, in.size());
}

// An allocation access out of range fails the launch on the GPU as on the CPU (kiln/spirv_abi.h, "Faults"),
// with a message naming the allocation and the access; the next launch, in range, runs and is right.
TEST_F(GpuLoweringVulkanTest, OutOfRangeAllocationAccessFailsTheLaunchOnBothDrivers) {
  auto module = CompileModule(R"(
#pragma version(1)
#pragma rs java_package_name(t)
rs_allocation gIn;
rs_allocation gOut;
float RS_KERNEL shifted(uint32_t x) { return rsGetElementAt_float(gIn, x + 3); }
float RS_KERNEL scatter(float in, uint32_t x) {
  rsSetElementAt_float(gOut, in, x * 2);
  return in;
}
)",
                              "faults.rs");
  ASSERT_TRUE(module);
  for (const KernelDesc& k : module->desc().kernels) ASSERT_TRUE(k.cpu_only_reasons.empty()) << k.name;
  std::vector<float> data(10);
  for (int i = 0; i < 10; ++i) data[i] = static_cast<float>(i) * 1.5f;
  Launch launch;
  launch.kernel = "shifted";
  launch.dim_x = 10;
  launch.output_size = 4;
  launch.allocations = {{"gIn", Bytes(data), 4, kKilnFloat32, 1, 10, 0}, {"gOut", Bytes(data), 4, kKilnFloat32, 1, 10, 0}};
  // The kernel's own bad access: kKilnInvalidArgument on both drivers (kiln/hal.h, "Launches"), so the runtime
  // does not take it for a device fault.
  RunOn(*cpu_, *module, launch, nullptr, kKilnInvalidArgument);
  EXPECT_NE(cpu_->LastError().find("element access (10, 0, 0) of 4-byte elements outside an allocation of 10x0x0"),
            std::string::npos)
      << cpu_->LastError();
  RunOn(*vulkan_, *module, launch, nullptr, kKilnInvalidArgument);
  const std::string gpu_error = vulkan_->LastError();
  EXPECT_NE(gpu_error.find("kernel shifted: element access ("), std::string::npos) << gpu_error;
  EXPECT_NE(gpu_error.find(", 0, 0) of 4-byte elements outside allocation 'gIn' of 10x0x0 4-byte elements"),
            std::string::npos)
      << gpu_error;
  // In range, the same kernel runs on both and agrees.
  launch.dim_x = 7;
  auto [cpu, gpu] = Both(*module, launch);
  ASSERT_EQ(gpu.size(), 28u);
  EXPECT_EQ(cpu, gpu);
  float first;
  std::memcpy(&first, gpu.data(), 4);
  EXPECT_EQ(first, 4.5f);
  // Writes: x * 2 leaves gOut from x = 5.
  launch.kernel = "scatter";
  launch.dim_x = 10;
  launch.inputs = {Bytes(data)};
  launch.input_sizes = {4};
  RunOn(*cpu_, *module, launch, nullptr, kKilnInvalidArgument);
  RunOn(*vulkan_, *module, launch, nullptr, kKilnInvalidArgument);
  EXPECT_NE(vulkan_->LastError().find("kernel scatter: element write ("), std::string::npos) << vulkan_->LastError();
  EXPECT_NE(vulkan_->LastError().find("outside allocation 'gOut'"), std::string::npos) << vulkan_->LastError();
}

TEST_F(GpuLoweringVulkanTest, GreyscaleOverAnOddSizedUchar4ImageMatchesTheCpuDriver) {
  auto module = CompileModule(ReadSource("tests/compiler/kernels/greyscale.rs"), "greyscale.rs");
  ASSERT_TRUE(module);
  const uint32_t w = 317, h = 211;
  std::vector<uint8_t> image(w * h * 4);
  uint32_t seed = 12345;
  for (uint8_t& v : image) {
    seed = seed * 1664525u + 1013904223u;
    v = static_cast<uint8_t>(seed >> 24);
  }
  Launch launch;
  launch.kernel = "greyscale";
  launch.dim_x = w;
  launch.dim_y = h;
  launch.inputs = {image};
  launch.input_sizes = {4};
  launch.output_size = 4;
  auto [cpu, gpu] = Both(*module, launch);
  ASSERT_EQ(cpu.size(), image.size());
  ASSERT_EQ(gpu.size(), cpu.size());
  size_t exact = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    ASSERT_LE(std::abs(int{cpu[i]} - int{gpu[i]}), 1) << "byte " << i;
    exact += cpu[i] == gpu[i];
    if (i % 4 == 3) {
      ASSERT_EQ(gpu[i], image[i]) << "alpha is kept";
    }
  }
  // The luma is rounded from float on both; only a contraction (fma) on one side can move a .5 case.
  EXPECT_GE(exact, cpu.size() - cpu.size() / 1000);
}

// RenderScript's blur, unchanged: uchar4 neighbours read through rsGetElementAt_uchar4 on an rs_allocation
// global, x and y, int and float globals, a static helper, loops, clamp and the color packers.
TEST_F(GpuLoweringVulkanTest, NeighbourBlurThroughAnAllocationMatchesTheCpuDriver) {
  auto module = CompileModule(ReadSource("tests/compiler/kernels/image_filters.rs"), "image_filters.rs");
  ASSERT_TRUE(module);
  ASSERT_TRUE(module->desc().kernels[module->KernelIndex("blur")].cpu_only_reasons.empty());
  const uint32_t w = 67, h = 41;
  std::vector<uint8_t> image(w * h * 4);
  for (uint32_t y = 0; y < h; ++y) {
    for (uint32_t x = 0; x < w; ++x) {
      for (uint32_t c = 0; c < 4; ++c)
        image[(y * w + x) * 4 + c] = static_cast<uint8_t>((x * 7 + y * 13 + c * 50) % 256);
    }
  }
  Launch launch;
  launch.kernel = "blur";
  launch.dim_x = w;
  launch.dim_y = h;
  launch.inputs = {image};
  launch.input_sizes = {4};
  launch.output_size = 4;
  launch.globals = {{"gWidth", Bytes(std::vector<int32_t>{static_cast<int32_t>(w)})},
                    {"gHeight", Bytes(std::vector<int32_t>{static_cast<int32_t>(h)})},
                    {"gRadius", Bytes(std::vector<float>{1.0f})}};
  Binding in;
  in.global = "gIn";
  in.bytes = image;
  in.element_size = 4;
  in.element_type = kKilnUInt8;
  in.vector_size = 4;
  in.dim_x = w;
  in.dim_y = h;
  launch.allocations = {in};
  auto [cpu, gpu] = Both(*module, launch);
  ASSERT_EQ(cpu.size(), image.size());
  ASSERT_EQ(gpu.size(), cpu.size());
  size_t differ = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    ASSERT_LE(std::abs(int{cpu[i]} - int{gpu[i]}), 1) << "byte " << i;
    differ += cpu[i] != gpu[i];
  }
  // And the result is a blur: an interior pixel is the rounded mean of its 3x3 neighbourhood.
  const uint32_t x = 10, y = 10, c = 0;
  int sum = 0;
  for (int dy = -1; dy <= 1; ++dy) {
    for (int dx = -1; dx <= 1; ++dx) sum += image[((y + dy) * w + (x + dx)) * 4 + c];
  }
  EXPECT_NEAR(gpu[(y * w + x) * 4 + c], sum / 9.0, 1.0);
  std::printf("blur: %zu of %zu bytes differ by one between the CPU and Vulkan\n", differ, cpu.size());
}

// A float 3x3 convolution written for this test: x, y, an allocation read at clamped neighbours, a global
// weight array, and a 2D launch whose rows are not a multiple of any workgroup size.
TEST_F(GpuLoweringVulkanTest, FloatConvolutionWithGlobalWeightsMatchesTheCpuDriver) {
  auto module = CompileModule(R"(
#pragma version(1)
#pragma rs java_package_name(t)
rs_allocation gIn;
float gWeights[9] = {1, 2, 1, 2, 4, 2, 1, 2, 1};
float gNorm = 16.0f;

static float at(int x, int y) {
  x = clamp(x, 0, (int)rsAllocationGetDimX(gIn) - 1);
  y = clamp(y, 0, (int)rsAllocationGetDimY(gIn) - 1);
  return rsGetElementAt_float(gIn, x, y);
}

float RS_KERNEL convolve(uint32_t x, uint32_t y) {
  float sum = 0.0f;
  for (int j = 0; j < 3; ++j) {
    for (int i = 0; i < 3; ++i) sum += gWeights[j * 3 + i] * at((int)x + i - 1, (int)y + j - 1);
  }
  return sum / gNorm;
}
)",
                              "convolve.rs");
  ASSERT_TRUE(module);
  ASSERT_TRUE(module->desc().kernels[0].cpu_only_reasons.empty());
  const uint32_t w = 101, h = 37;
  std::vector<float> image(w * h);
  for (size_t i = 0; i < image.size(); ++i) image[i] = std::sin(static_cast<float>(i) * 0.37f) * 10.0f;
  Launch launch;
  launch.kernel = "convolve";
  launch.dim_x = w;
  launch.dim_y = h;
  launch.output_size = 4;
  launch.globals = {{"gNorm", Bytes(std::vector<float>{8.0f})}};
  Binding in;
  in.global = "gIn";
  in.bytes = Bytes(image);
  in.element_size = 4;
  in.element_type = kKilnFloat32;
  in.dim_x = w;
  in.dim_y = h;
  launch.allocations = {in};
  auto [cpu, gpu] = Both(*module, launch);
  ASSERT_EQ(cpu.size(), image.size() * 4);
  ASSERT_EQ(gpu.size(), cpu.size());
  for (size_t i = 0; i < image.size(); ++i) {
    float c, g;
    std::memcpy(&c, &cpu[i * 4], 4);
    std::memcpy(&g, &gpu[i * 4], 4);
    ASSERT_NEAR(g, c, 1e-5f * std::max(1.0f, std::fabs(c))) << "pixel " << i;
  }
  // Pixel (0, 0) clamps its neighbours to itself and (1, 0), (0, 1), (1, 1); the norm set above is used.
  const float expected = (4 * image[0] + 2 * image[0] + 2 * image[1] + 2 * image[0] + 2 * image[w] +
                          image[0] + image[1] + image[w] + image[w + 1]) /
                         8.0f;
  float g0;
  std::memcpy(&g0, gpu.data(), 4);
  EXPECT_NEAR(g0, expected, 1e-4f);
}

// C's integer semantics where GLSL's differ: 8- and 16-bit wrapping (casts, compound assignments, ++ in
// both forms, unpromoted vector arithmetic), % and / on negative values, comparisons that yield int, and
// a switch with fall-through. Bit-exact against the CPU driver.
TEST_F(GpuLoweringVulkanTest, IntegerSemanticsMatchTheCpuDriver) {
  auto module = CompileModule(R"(
#pragma version(1)
#pragma rs java_package_name(t)
int4 RS_KERNEL ints(int in, uint32_t x) {
  uchar c = (uchar)(in * 37);
  uchar old = c++;
  char s = (char)(in * 11);
  s += 100;
  short h = (short)(in * 3000);
  h *= 7;
  uchar4 v = (uchar4){c, old, (uchar)s, (uchar)h};
  v = v * (uchar4){3, 5, 7, 11} + (uchar4){200, 1, 2, 3};
  int r = in % 7 + (in / -3) * 100 + (int)(in < 3) * 1000 + (-in >> 2);
  switch (x % 4) {
    case 0: r += 1;
    case 1: r += 10; break;
    default: r -= 5;
  }
  ushort u = (ushort)in;
  u--;
  return (int4){(int)v.x + ((int)v.y << 8) + ((int)v.z << 16) + ((int)v.w << 24), r, (int)old + (int)s * 3,
                (int)h + (int)u};
}
)",
                              "ints.rs");
  ASSERT_TRUE(module);
  ASSERT_TRUE(module->desc().kernels[0].cpu_only_reasons.empty())
      << module->desc().kernels[0].cpu_only_reasons[0];
  std::vector<int32_t> in;
  for (int i = -3000; i <= 3000; ++i) in.push_back(i * 7 + (i % 5) * 100000);
  Launch launch;
  launch.kernel = "ints";
  launch.dim_x = static_cast<uint32_t>(in.size());
  launch.inputs = {Bytes(in)};
  launch.input_sizes = {4};
  launch.output_size = 16;
  auto [cpu, gpu] = Both(*module, launch);
  ASSERT_EQ(cpu.size(), in.size() * 16);
  ASSERT_EQ(gpu.size(), cpu.size());
  for (size_t i = 0; i < in.size(); ++i) {
    int32_t c[4], g[4];
    std::memcpy(c, &cpu[i * 16], 16);
    std::memcpy(g, &gpu[i * 16], 16);
    for (int l = 0; l < 4; ++l) ASSERT_EQ(c[l], g[l]) << "input " << in[i] << " lane " << l;
  }
}

// Every kernel of the test corpora that has a GPU form and reads no allocation, launched over 1000 cells
// with generated inputs on both drivers: float results agree within a few ulp (GLSL's division and sqrt are
// not correctly rounded, and either side may contract a * b + c), everything else bit for bit.
TEST_F(GpuLoweringVulkanTest, CorpusKernelsWithoutAllocationsMatchTheCpuDriver) {
  int compared = 0, skipped = 0;
  for (const char* folder : {"tests/compiler/kernels", "tools/cts/kernels", "tests/kernels/corpus"}) {
    const std::string dir = std::string(KILN_SOURCE_DIR) + "/" + folder;
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() == ".rs") files.push_back(entry.path().filename().string());
    }
    std::sort(files.begin(), files.end());
    for (const std::string& file : files) {
      auto module = CompileModule(ReadSource(std::string(folder) + "/" + file), file);
      ASSERT_TRUE(module) << file;
      // Each module is loaded once per driver (the CPU driver JIT-compiles the whole module).
      KilnHalModule* on_cpu = nullptr;
      KilnHalModule* on_vulkan = nullptr;
      ASSERT_EQ(cpu_->hal().module_load(cpu_->device(), &module->hal_desc(), &on_cpu), kKilnOk) << file;
      ASSERT_EQ(vulkan_->hal().module_load(vulkan_->device(), &module->hal_desc(), &on_vulkan), kKilnOk)
          << file;
      for (const KernelDesc& kernel : module->desc().kernels) {
        bool uses_allocation = false;
        for (const GlobalDesc& g : module->desc().globals)
          uses_allocation = uses_allocation || g.is_allocation;
        if (!kernel.cpu_only_reasons.empty() || uses_allocation || !kernel.has_output() ||
            (module->desc().has_init)) {
          ++skipped;  // CPU-only, reads allocations (unbound: the CPU fails the launch), or needs init()
          continue;
        }
        if (file == "random.rs") {
          ++skipped;  // rsRand: each driver its own stream (statistics: kernel_corpus_vulkan, RandomStreams)
          continue;
        }
        // A kernel this device cannot run (e.g. more push constants than it has) runs on the CPU instead.
        {
          bool supported = false;
          const char* reason = nullptr;
          vulkan_->hal().module_kernel_supported(
              on_vulkan, static_cast<uint32_t>(module->KernelIndex(kernel.name)), &supported, &reason);
          if (!supported) {
            std::printf("  %s %s: not on this device: %s\n", file.c_str(), kernel.name.c_str(),
                        reason ? reason : "");
            ++skipped;
            continue;
          }
        }
        Launch launch;
        launch.kernel = kernel.name;
        launch.dim_x = 1000;
        for (size_t i = 0; i < kernel.inputs.size(); ++i) {
          const KernelTypeDesc& type = kernel.inputs[i];
          const uint32_t lane =
              type.element_type == kKilnFloat32 || type.element_type == kKilnInt32 ||
                      type.element_type == kKilnUInt32
                  ? 4
                  : (type.element_type == kKilnFloat64 || type.element_type == kKilnInt64 ||
                             type.element_type == kKilnUInt64
                         ? 8
                         : (type.element_type == kKilnInt16 || type.element_type == kKilnUInt16 ||
                                    type.element_type == kKilnFloat16
                                ? 2
                                : 1));
          std::vector<uint8_t> bytes(uint64_t{type.size} * launch.dim_x);
          for (uint32_t cell = 0; cell < launch.dim_x; ++cell) {
            for (uint32_t l = 0; l < type.vector_size; ++l) {
              uint8_t* p = &bytes[uint64_t{cell} * type.size + l * lane];
              const int value = static_cast<int>((cell * 37 + l * 11 + i * 5) % 41) - 20;
              // Float to unsigned conversions of negative values are undefined (in C and in GLSL): an
              // unsigned result gets non-negative floats.
              const bool unsigned_out =
                  kernel.output.element_type == kKilnUInt8 || kernel.output.element_type == kKilnUInt16 ||
                  kernel.output.element_type == kKilnUInt32 || kernel.output.element_type == kKilnUInt64;
              const int float_value = unsigned_out ? value + 20 : value;
              if (type.element_type == kKilnFloat32) {
                const float f = static_cast<float>(float_value) * 0.37f + 0.125f;
                std::memcpy(p, &f, 4);
              } else if (type.element_type == kKilnFloat16) {
                const _Float16 h = static_cast<_Float16>(static_cast<float>(float_value) * 0.37f + 0.125f);
                std::memcpy(p, &h, 2);
              } else if (type.element_type == kKilnFloat64) {
                const double d = static_cast<double>(float_value) * 0.37 + 0.125;
                std::memcpy(p, &d, 8);
              } else if (type.element_type == kKilnBool) {
                *p = static_cast<uint8_t>(value & 1);
              } else {
                const int64_t v = value * 7;
                std::memcpy(p, &v, lane);
              }
            }
          }
          launch.inputs.push_back(bytes);
          launch.input_sizes.push_back(type.size);
        }
        launch.output_size = kernel.output.size;
        if (kernel.signature & kKernelSigUsr) {
          // A root() may read usrData without testing it (cts_shapes.rs): 64 bytes of 0.5f, finite whichever
          // field types the kernel reads them as.
          const float half = 0.5f;
          for (int i = 0; i < 16; ++i) {
            const uint8_t* b = reinterpret_cast<const uint8_t*>(&half);
            launch.usr_data.insert(launch.usr_data.end(), b, b + 4);
          }
        }
        const std::vector<uint8_t> cpu = RunOn(*cpu_, *module, launch, on_cpu);
        const std::vector<uint8_t> gpu = RunOn(*vulkan_, *module, launch, on_vulkan);
        ASSERT_EQ(cpu.size(), gpu.size()) << file << " " << kernel.name;
        const KernelTypeDesc& out = kernel.output;
        const bool is_float = out.element_type == kKilnFloat32 && out.kind == KernelTypeKind::kScalar;
        const uint32_t lanes = out.vector_size == 3 ? 3 : out.vector_size;
        for (uint32_t cell = 0; cell < launch.dim_x && !cpu.empty(); ++cell) {
          const uint8_t* c = &cpu[uint64_t{cell} * out.size];
          const uint8_t* g = &gpu[uint64_t{cell} * out.size];
          if (is_float) {
            for (uint32_t l = 0; l < lanes; ++l) {
              float cf, gf;
              std::memcpy(&cf, c + l * 4, 4);
              std::memcpy(&gf, g + l * 4, 4);
              // The kernels that call native_* and half_* math (k_native_*, k_half_* in math_native.rs and
              // math_half.rs) have relaxed bounds (docs/kernel-math.md: up to 8192 ulp, native_powr's and
              // half_*'s); on the GPU they are ports of the CPU's algorithms. Everything else, conversions
              // included, is held to 4 ulp.
              const bool relaxed =
                  kernel.name.rfind("k_native_", 0) == 0 || kernel.name.rfind("k_half_", 0) == 0;
              const uint32_t bound = relaxed ? 8192 : 4;
              const bool close = UlpDistance(cf, gf) <= bound || std::fabs(cf - gf) <= 1e-6f;
              ASSERT_TRUE(close) << file << " " << kernel.name << " cell " << cell << " lane " << l
                                 << ": CPU " << cf << ", Vulkan " << gf;
            }
          } else if (out.element_type == kKilnFloat16 && out.kind == KernelTypeKind::kScalar) {
            // half: each operation rounds to half on both drivers (docs/kernel-language.md), so bit for bit;
            // a NaN is a NaN whatever its payload.
            for (uint32_t l = 0; l < lanes; ++l) {
              _Float16 ch, gh;
              std::memcpy(&ch, c + l * 2, 2);
              std::memcpy(&gh, g + l * 2, 2);
              const bool same = (ch != ch && gh != gh) || std::memcmp(&ch, &gh, 2) == 0;
              ASSERT_TRUE(same) << file << " " << kernel.name << " cell " << cell << " lane " << l << ": CPU "
                                << static_cast<float>(ch) << ", Vulkan " << static_cast<float>(gh);
            }
          } else {
            const uint32_t bytes = out.vector_size == 3 ? out.size / 4 * 3 : out.size;
            std::string cpu_hex, gpu_hex;
            for (uint32_t b = 0; b < bytes; ++b) {
              cpu_hex += std::to_string(c[b]) + " ";
              gpu_hex += std::to_string(g[b]) + " ";
            }
            ASSERT_EQ(std::memcmp(c, g, bytes), 0) << file << " " << kernel.name << " cell " << cell
                                                   << ": CPU " << cpu_hex << "Vulkan " << gpu_hex;
          }
        }
        ++compared;
      }
      cpu_->hal().module_unload(on_cpu);
      vulkan_->hal().module_unload(on_vulkan);
    }
  }
  std::printf("compared %d kernels on the CPU and Vulkan drivers (%d skipped)\n", compared, skipped);
  EXPECT_GT(compared, 50);
}

// ---- Issue #12 item 5: every math function's GPU form meets the bound docs/kernel-math.md states for its
// precision pragma ("GPU forms and precision pragmas"), over every binade of both signs (subnormals included)
// and the special values, on the CPU driver and on the Vulkan driver, against long double references.

// Error of `got` in ulps of the exact result `ref` (the float ulp at |ref|; 0.5 = correctly rounded). An
// infinite `got` counts as 2^128 (and so does an exact result beyond it), so an overflow at the threshold
// costs a fraction of an ulp.
double UlpError(float got, long double ref) {
  if (std::isnan(got) || std::isnan(ref)) return std::isnan(got) == std::isnan(ref) ? 0.0 : 1e30;
  long double g = got;
  const long double big = std::ldexp(1.0L, 128);
  if (std::isinf(got)) g = got > 0 ? big : -big;
  long double r = ref;
  if (std::fabs(ref) > big) r = ref > 0 ? big : -big;  // beyond 2^128 the float result is inf
  const long double a = std::fabs(r);
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  const long double ulp = a < std::ldexp(1.0L, -126) ? std::ldexp(1.0L, -149) : std::ldexp(1.0L, e - 24);
  return static_cast<double>(std::fabs(g - r) / ulp);
}

struct MathCase {
  const char* function;  // called as function(in) (or with the constant second argument below)
  const char* second;    // nullptr, or a float literal for a two-argument function
  std::function<long double(long double)> ref;
  double bound;        // ulps, the documented bound
  double lo, hi;       // |x| range where the bound applies ([0, inf] = every float)
  bool positive_only;  // the domain is x > 0 only (native_powr)
};

// Checks one driver's outputs against the case's bound; returns the worst error inside the domain. A
// subnormal input may be read as zero and a result below 2^-126 may be flushed to zero (Vulkan allows both;
// the native_ forms flush on the CPU too). Under rs_fp_imprecise infinities and NaNs are out of scope.
double CheckBound(const MathCase& c, const std::vector<float>& in, const std::vector<uint8_t>& out, const char* driver,
                  bool imprecise) {
  double worst = 0;
  int failures = 0;
  for (size_t i = 0; i < in.size() && (i + 1) * 4 <= out.size(); ++i) {
    const float x = in[i];
    float got;
    std::memcpy(&got, &out[i * 4], 4);
    const long double ref = c.ref(x);
    const float a = std::fabs(x);
    const bool finite_case = std::isfinite(x) && std::isfinite(ref) && std::fabs(ref) <= FLT_MAX;
    if (imprecise && !finite_case) continue;
    const bool in_domain = std::isnan(x) || (a >= c.lo && a <= c.hi && (!c.positive_only || x > 0 || std::isnan(x)));
    if (!in_domain) {
      // Outside the documented range only NaN-ness is promised (a finite input gives a non-NaN result).
      if (std::isfinite(x) && !std::isnan(ref) && std::isnan(got) && failures++ < 5)
        ADD_FAILURE() << driver << " " << c.function << "(" << x << ") is NaN";
      continue;
    }
    double err = UlpError(got, ref);
    if (std::fpclassify(x) == FP_SUBNORMAL) err = std::min(err, UlpError(got, c.ref(std::copysign(0.0f, x))));
    if (std::fabs(ref) < std::ldexp(1.0L, -126) && std::fabs(got) <= std::ldexp(1.0f, -126)) err = 0;
    if (err > c.bound && failures++ < 5) {
      ADD_FAILURE() << driver << " " << c.function << "(" << x << (c.second ? std::string(", ") + c.second : "")
                    << ") = " << got << ", exact " << static_cast<double>(ref) << ": " << err << " ulp, bound "
                    << c.bound;
    }
    if (err <= c.bound) worst = std::max(worst, err);
  }
  return worst;
}

TEST_F(GpuLoweringVulkanTest, EveryMathFunctionsGpuFormMeetsItsDocumentedBoundOverEveryBinade) {
  const long double pi = 3.141592653589793238462643383279502884L;
  const double kAll = HUGE_VAL;
  const std::vector<MathCase> cases = {
      {"fabs", nullptr, [](long double x) { return std::fabs(x); }, 0, 0, kAll, false},
      {"floor", nullptr, [](long double x) { return std::floor(x); }, 0, 0, kAll, false},
      {"ceil", nullptr, [](long double x) { return std::ceil(x); }, 0, 0, kAll, false},
      {"trunc", nullptr, [](long double x) { return std::trunc(x); }, 0, 0, kAll, false},
      {"rint", nullptr, [](long double x) { return std::rint(x); }, 0, 0, kAll, false},
      {"round", nullptr, [](long double x) { return std::round(x); }, 0, 0, kAll, false},
      {"sqrt", nullptr, [](long double x) { return std::sqrt(x); }, 3, 0, kAll, false},
      {"rsqrt", nullptr, [](long double x) { return 1.0L / std::sqrt(x); }, 2, 0, kAll, false},
      {"atan", nullptr, [](long double x) { return std::atan(x); }, 5, 0, kAll, false},
      {"atanpi", nullptr, [pi](long double x) { return std::atan(x) / pi; }, 5, 0, kAll, false},
      {"asin", nullptr, [](long double x) { return std::asin(x); }, 4, 0, kAll, false},
      {"acos", nullptr, [](long double x) { return std::acos(x); }, 4, 0, kAll, false},
      {"asinpi", nullptr, [pi](long double x) { return std::asin(x) / pi; }, 5, 0, kAll, false},
      {"acospi", nullptr, [pi](long double x) { return std::acos(x) / pi; }, 5, 0, kAll, false},
      {"sin", nullptr, [](long double x) { return std::sin(x); }, 4, 0, 8589934592.0, false},
      {"cos", nullptr, [](long double x) { return std::cos(x); }, 4, 0, 8589934592.0, false},
      {"tan", nullptr, [](long double x) { return std::tan(x); }, 5, 0, 8589934592.0, false},
      {"sinh", nullptr, [](long double x) { return std::sinh(x); }, 4, 0, kAll, false},
      {"cosh", nullptr, [](long double x) { return std::cosh(x); }, 4, 0, kAll, false},
      {"tanh", nullptr, [](long double x) { return std::tanh(x); }, 5, 0, kAll, false},
      {"exp", nullptr, [](long double x) { return std::exp(x); }, 3, 0, kAll, false},
      {"exp2", nullptr, [](long double x) { return std::exp2(x); }, 3, 0, kAll, false},
      {"exp10", nullptr, [](long double x) { return std::pow(10.0L, x); }, 3, 0, kAll, false},
      {"log", nullptr, [](long double x) { return std::log(x); }, 3, 0, kAll, false},
      {"log2", nullptr, [](long double x) { return std::log2(x); }, 3, 0, kAll, false},
      {"log10", nullptr, [](long double x) { return std::log10(x); }, 3, 0, kAll, false},
      {"native_exp", nullptr, [](long double x) { return std::exp(x); }, 256, 0, 87, false},
      {"native_exp2", nullptr, [](long double x) { return std::exp2(x); }, 256, 0, 126, false},
      {"native_sin", nullptr, [](long double x) { return std::sin(x); }, 256, 0, 6400, false},
      {"native_cos", nullptr, [](long double x) { return std::cos(x); }, 256, 0, 6400, false},
      {"native_tan", nullptr, [](long double x) { return std::tan(x); }, 256, 0, 6400, false},
      {"native_powr", "1.5f", [](long double x) { return std::pow(x, 1.5L); }, 8192, 0x1p-20, 0x1p20, true},
      {"half_exp", nullptr, [](long double x) { return std::exp(x); }, 8192, 0, 87, false},
      {"half_sin", nullptr, [](long double x) { return std::sin(x); }, 8192, 0, 65536, false},
  };
  // Imprecise: the same bounds (the GPU forms are the same helpers), except pow/powr (native_powr's).
  const std::vector<MathCase> imprecise_cases = {
      {"sinh", nullptr, [](long double x) { return std::sinh(x); }, 4, 0, kAll, false},
      {"cosh", nullptr, [](long double x) { return std::cosh(x); }, 4, 0, kAll, false},
      {"tanh", nullptr, [](long double x) { return std::tanh(x); }, 5, 0, kAll, false},
      {"exp", nullptr, [](long double x) { return std::exp(x); }, 3, 0, kAll, false},
      {"sin", nullptr, [](long double x) { return std::sin(x); }, 4, 0, 8589934592.0, false},
      {"pow", "3.0f", [](long double x) { return x * x * x; }, 8192, 0x1p-20, 0x1p20, false},
      {"powr", "2.5f", [](long double x) { return std::pow(x, 2.5L); }, 8192, 0x1p-20, 0x1p20, true},
  };
  // Every binade of both signs, subnormal ones included, 16 mantissas each, and the special values.
  std::vector<float> in;
  for (int e = -149; e <= 127; ++e) {
    for (int k = 0; k < 16; ++k) {
      const float m = 1.0f + static_cast<float>(k) / 16.0f + (k % 3) * 0x1p-20f;
      const float v = e < -126 ? std::ldexp(1.0f, e) * (1.0f + k / 16.0f) : std::ldexp(m, e);
      if (std::isfinite(v)) {
        in.push_back(v);
        in.push_back(-v);
      }
    }
  }
  for (float special : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, FLT_MAX, -FLT_MAX, 0x1p-149f, -0x1p-149f, 1e-8f, -1e-30f,
                        88.72f, 89.41f, -103.97f, 0.5f, 1.0f, -1.0f, 3.14159274f, 1.57079637f}) {
    in.push_back(special);
  }
  for (const bool imprecise : {false, true}) {
    const std::vector<MathCase>& list = imprecise ? imprecise_cases : cases;
    std::string source = "#pragma version(1)\n#pragma rs java_package_name(t)\n";
    if (imprecise) source += "#pragma rs_fp_imprecise\n";
    for (size_t i = 0; i < list.size(); ++i) {
      source += "float RS_KERNEL k" + std::to_string(i) + "(float in) { return " + list[i].function + "(in" +
                (list[i].second ? std::string(", ") + list[i].second : "") + "); }\n";
    }
    auto module = CompileModule(source, imprecise ? "math_imprecise.rs" : "math_full.rs");
    ASSERT_TRUE(module);
    KilnHalModule* on_cpu = nullptr;
    KilnHalModule* on_vulkan = nullptr;
    ASSERT_EQ(cpu_->hal().module_load(cpu_->device(), &module->hal_desc(), &on_cpu), kKilnOk);
    ASSERT_EQ(vulkan_->hal().module_load(vulkan_->device(), &module->hal_desc(), &on_vulkan), kKilnOk);
    for (size_t i = 0; i < list.size(); ++i) {
      const KernelDesc& kernel = module->desc().kernels[module->KernelIndex("k" + std::to_string(i))];
      ASSERT_TRUE(kernel.cpu_only_reasons.empty()) << list[i].function << ": " << kernel.cpu_only_reasons[0];
      Launch launch;
      launch.kernel = kernel.name;
      launch.dim_x = static_cast<uint32_t>(in.size());
      launch.inputs = {Bytes(in)};
      launch.input_sizes = {4};
      launch.output_size = 4;
      const std::vector<uint8_t> cpu = RunOn(*cpu_, *module, launch, on_cpu);
      const std::vector<uint8_t> gpu = RunOn(*vulkan_, *module, launch, on_vulkan);
      ASSERT_EQ(cpu.size(), in.size() * 4);
      ASSERT_EQ(gpu.size(), cpu.size());
      const double worst_cpu = CheckBound(list[i], in, cpu, "CPU", imprecise);
      const double worst_gpu = CheckBound(list[i], in, gpu, "Vulkan", imprecise);
      std::printf("%s%s: bound %g ulp, worst CPU %.2f, Vulkan %.2f over %zu inputs\n",
                  imprecise ? "rs_fp_imprecise " : "", list[i].function, list[i].bound, worst_cpu, worst_gpu,
                  in.size());
    }
    EXPECT_EQ(cpu_->hal().module_unload(on_cpu), kKilnOk);
    EXPECT_EQ(vulkan_->hal().module_unload(on_vulkan), kKilnOk);
  }
}

// The issue's example: sinh under rs_fp_imprecise on Vulkan returned 2.98e-8 for sinh(1e-8) and -2.98e-8 for
// sinh(-1e-30); both drivers now round the exact result (small arguments keep their relative accuracy).
TEST_F(GpuLoweringVulkanTest, ImpreciseSinhOfTinyArgumentsIsAccurateOnBothDrivers) {
  auto module = CompileModule(R"(
#pragma version(1)
#pragma rs java_package_name(t)
#pragma rs_fp_imprecise
float RS_KERNEL hyp(float in) { return sinh(in); }
)",
                              "sinh_imprecise.rs");
  ASSERT_TRUE(module);
  ASSERT_TRUE(module->desc().kernels[0].cpu_only_reasons.empty());
  const std::vector<float> in = {1e-8f, -1e-30f, 1e-4f, -0.001f, 0.3f};
  Launch launch;
  launch.kernel = "hyp";
  launch.dim_x = static_cast<uint32_t>(in.size());
  launch.inputs = {Bytes(in)};
  launch.input_sizes = {4};
  launch.output_size = 4;
  auto [cpu, gpu] = Both(*module, launch);
  ASSERT_EQ(cpu.size(), in.size() * 4);
  ASSERT_EQ(gpu.size(), cpu.size());
  for (size_t i = 0; i < in.size(); ++i) {
    float c, g;
    std::memcpy(&c, &cpu[i * 4], 4);
    std::memcpy(&g, &gpu[i * 4], 4);
    const long double exact = std::sinh(static_cast<long double>(in[i]));
    EXPECT_LE(UlpError(c, exact), 4.0) << "CPU sinh(" << in[i] << ") = " << c;
    EXPECT_LE(UlpError(g, exact), 4.0) << "Vulkan sinh(" << in[i] << ") = " << g;
  }
}

}  // namespace
}  // namespace kiln
