// kilnc -> CPU driver: RenderScript-style sources compiled by the real compiler library (compiler/), turned
// into the HAL's plain-struct module description the way the runtime will, and run through the driver's
// table.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>

#include "compiler/compiler.h"
#include "tests/cpu/cpu_driver_harness.h"

namespace kiln {
namespace {

// What the runtime does with a read .kmod: a KilnHalModuleDesc pointing into storage that outlives the load.
class HalModuleFromKmod {
 public:
  explicit HalModuleFromKmod(const KernelModuleDesc& module) : module_(module) {
    for (const KernelDesc& kernel : module_.kernels) {
      sizes_.emplace_back();
      for (const KernelTypeDesc& input : kernel.inputs) sizes_.back().push_back(input.size);
      KilnHalKernelDesc k{};
      k.struct_size = sizeof(k);
      k.name = kernel.name.c_str();
      k.expand_symbol = kernel.expand_symbol.c_str();
      k.signature = kernel.signature;
      k.kernel_level = KILN_HAL_LEVEL(kernel.hal_level.major, kernel.hal_level.minor);
      k.num_inputs = static_cast<uint32_t>(kernel.inputs.size());
      k.input_element_sizes = sizes_.back().data();
      k.output_element_size = kernel.has_output() ? kernel.output.size : 0;
      kernels_.push_back(k);
    }
    for (const GlobalDesc& global : module_.globals) {
      KilnHalGlobalDesc g{};
      g.struct_size = sizeof(g);
      g.name = global.name.c_str();
      g.size = global.size;
      g.default_data = global.default_value.empty() ? nullptr : global.default_value.data();
      g.flags =
          (global.is_const ? KILN_HAL_GLOBAL_CONST : 0) |
          (global.is_allocation ? (global.type.kind == KernelTypeKind::kPointer ? KILN_HAL_GLOBAL_POINTER
                                                                                : KILN_HAL_GLOBAL_ALLOCATION)
                                : 0);
      globals_.push_back(g);
    }
    for (const InvokableDesc& invokable : module_.invokables) {
      KilnHalInvokableDesc v{};
      v.struct_size = sizeof(v);
      v.name = invokable.name.c_str();
      v.symbol = invokable.symbol.c_str();
      v.args_size = invokable.args_size;
      v.kernel_level = KILN_HAL_LEVEL(invokable.hal_level.major, invokable.hal_level.minor);
      invokables_.push_back(v);
    }
    for (const ReductionDesc& reduction : module_.reductions) {
      sizes_.emplace_back();
      for (const KernelTypeDesc& input : reduction.inputs) sizes_.back().push_back(input.size);
      KilnHalReductionDesc r{};
      r.struct_size = sizeof(r);
      r.name = reduction.name.c_str();
      r.init_symbol = reduction.init_symbol.c_str();
      r.accum_symbol = reduction.accum_symbol.c_str();
      r.combine_symbol = reduction.combine_symbol.c_str();
      r.out_symbol = reduction.out_symbol.c_str();
      r.kernel_level = KILN_HAL_LEVEL(reduction.hal_level.major, reduction.hal_level.minor);
      r.num_inputs = static_cast<uint32_t>(reduction.inputs.size());
      r.input_element_sizes = sizes_.back().data();
      r.accumulator_size = reduction.accumulator_size;
      r.accumulator_alignment = reduction.accumulator_alignment;
      r.result_size = reduction.result.size;
      reductions_.push_back(r);
    }
    for (const PayloadDesc& payload : module_.payloads) {
      KilnHalPayload p{};
      p.struct_size = sizeof(p);
      p.tag = payload.target.c_str();
      p.data = payload.data.data();
      p.size = payload.data.size();
      payloads_.push_back(p);
    }
    for (const std::string& import : module_.imports) imports_.push_back(import.c_str());
    desc_.struct_size = sizeof(desc_);
    desc_.name = module_.source_name.c_str();
    desc_.num_payloads = static_cast<uint32_t>(payloads_.size());
    desc_.payloads = payloads_.data();
    desc_.num_kernels = static_cast<uint32_t>(kernels_.size());
    desc_.kernels = kernels_.data();
    desc_.num_globals = static_cast<uint32_t>(globals_.size());
    desc_.globals = globals_.data();
    desc_.num_invokables = static_cast<uint32_t>(invokables_.size());
    desc_.invokables = invokables_.data();
    desc_.num_reductions = static_cast<uint32_t>(reductions_.size());
    desc_.reductions = reductions_.data();
    desc_.flags = module_.has_init ? KILN_HAL_MODULE_HAS_INIT : 0;
    desc_.hal_level = KILN_HAL_LEVEL(module_.hal_level.major, module_.hal_level.minor);
    desc_.abi_version = module_.abi_version;
    desc_.num_imports = static_cast<uint32_t>(imports_.size());
    desc_.imports = imports_.data();
  }
  const KilnHalModuleDesc* desc() const { return &desc_; }
  int KernelIndex(const std::string& name) const {
    for (size_t i = 0; i < module_.kernels.size(); ++i)
      if (module_.kernels[i].name == name) return static_cast<int>(i);
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
  std::deque<std::vector<uint32_t>> sizes_;
  std::vector<KilnHalKernelDesc> kernels_;
  std::vector<KilnHalGlobalDesc> globals_;
  std::vector<KilnHalInvokableDesc> invokables_;
  std::vector<KilnHalReductionDesc> reductions_;
  std::vector<KilnHalPayload> payloads_;
  std::vector<const char*> imports_;
  KilnHalModuleDesc desc_{};
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

  testing::CpuDriverHarness harness({{"cache_dir", "off"}});
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
