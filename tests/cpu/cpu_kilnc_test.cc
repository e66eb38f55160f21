// kilnc -> CPU driver: RenderScript-style sources compiled by the real compiler library (compiler/), turned
// into the HAL's plain-struct module description the way the runtime will, and run through the driver's
// table.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>

#include "compiler/compiler.h"
#include "formats/kmod/hal_view.h"
#include "tests/cpu/cpu_driver_harness.h"

namespace kiln {
namespace {

// What the runtime does with a read .kmod (formats/kmod/hal_view.h), plus lookups by name.
class HalModuleFromKmod {
 public:
  explicit HalModuleFromKmod(const KernelModuleDesc& module) : module_(module) { view_.Build(module_, name_); }
  const KilnHalModuleDesc* desc() const { return &view_.desc(); }
  int KernelIndex(const std::string& name) const {
    for (size_t i = 0; i < module_.kernels.size(); ++i) {
      if (module_.kernels[i].name == name) return static_cast<int>(i);
    }
    return -1;
  }
  int InvokableIndex(const std::string& name) const {
    for (size_t i = 0; i < module_.invokables.size(); ++i) {
      if (module_.invokables[i].name == name) return static_cast<int>(i);
    }
    return -1;
  }

 private:
  KernelModuleDesc module_;
  std::string name_ = module_.source_name;
  HalModuleView view_;
};

constexpr char kSource[] = R"(#pragma version(1)
#pragma rs java_package_name(com.example.kiln)

float gain = 2.0f;
int counter;

float RS_KERNEL scale(float in, uint32_t x) { return in * gain + (float)x; }

void bump(int by) { counter += by; }

void init() { counter = 40; }
)";

TEST(CpuKilncTest, CompiledScriptRunsOnTheDriver) {
  CompileResult compiled;
  CompileKernelSource(kSource, "scale.rs", CompileOptions(), &compiled);
  ASSERT_TRUE(compiled.ok) << compiled.diagnostics;
  HalModuleFromKmod hal_module(compiled.module);

  testing::CpuDriverHarness harness(std::map<std::string, std::string>{{"cache_dir", "off"}});
  ASSERT_TRUE(harness.ok()) << harness.LastError();
  const KilnHalDriver& hal = harness.hal();
  KilnHalModule* module = nullptr;
  ASSERT_EQ(hal.module_load(harness.device(), hal_module.desc(), &module), kKilnOk) << harness.LastError();
  KilnHalScript* script = nullptr;
  ASSERT_EQ(hal.script_create(module, nullptr, &script), kKilnOk) << harness.LastError();

  int32_t counter = 0;
  ASSERT_EQ(hal.script_get_global(script, "counter", 4, &counter), kKilnOk) << harness.LastError();
  EXPECT_EQ(counter, 40) << "init() did not run at script creation";
  const int32_t by = 2;
  ASSERT_GE(hal_module.InvokableIndex("bump"), 0);
  ASSERT_EQ(hal.script_invoke(script, hal_module.InvokableIndex("bump"), &by, sizeof(by)), kKilnOk)
      << harness.LastError();
  ASSERT_EQ(hal.script_get_global(script, "counter", 4, &counter), kKilnOk);
  EXPECT_EQ(counter, 42);

  const float gain = 0.5f;
  ASSERT_EQ(hal.script_set_global(script, "gain", &gain, 4), kKilnOk);
  const uint32_t n = 100003;
  std::vector<float> in(n), out(n);
  for (uint32_t i = 0; i < n; ++i) in[i] = static_cast<float>(i % 1000);
  KilnHalBuffer* in_buffer = harness.CreateBuffer(n * 4ull, in.data());
  KilnHalBuffer* out_buffer = harness.CreateBuffer(n * 4ull, out.data());
  KilnHalBufferView in_view = testing::DenseView(in_buffer, 4), out_view = testing::DenseView(out_buffer, 4);
  ASSERT_GE(hal_module.KernelIndex("scale"), 0);
  KilnHalForEachDesc desc =
      testing::ForEachDesc(hal_module.KernelIndex("scale"), n, 1, 1, &in_view, 1, &out_view);
  ASSERT_EQ(hal.launch_for_each(script, &desc), kKilnOk) << harness.LastError();
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], in[i] * gain + static_cast<float>(i)) << "i=" << i;

  hal.buffer_destroy(in_buffer);
  hal.buffer_destroy(out_buffer);
  EXPECT_EQ(hal.script_destroy(script), kKilnOk);
  EXPECT_EQ(hal.module_unload(module), kKilnOk);
}

}  // namespace
}  // namespace kiln
