// Test and benchmark scaffolding for the CPU driver: a runtime-side KilnHalServices that records what the
// driver reports, and a builder for module descriptions around real clang-19 bitcode. The driver is reached
// only through the KilnHalDriver table, as the runtime reaches it.
#ifndef KILN_TESTS_CPU_CPU_DRIVER_HARNESS_H_
#define KILN_TESTS_CPU_CPU_DRIVER_HARNESS_H_

#include <cstdint>
#include <deque>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_driver.h"
#include "kiln/hal.h"
#include "tests/hal_test_services.h"

namespace kiln {
namespace testing {

inline std::string ReadBinaryFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

// The runtime side of the HAL for one CPU driver instance, reached through the driver's query function.
class CpuDriverHarness : public HalTestHarness {
 public:
  // `config` answers get_config; "cache_dir" should point at a private folder (or "off").
  explicit CpuDriverHarness(std::map<std::string, std::string> config) : HalTestHarness(std::move(config)) {
    Open(&kiln_cpu_driver_query);
  }
};

// Builds a KilnHalModuleDesc (what the runtime would fill from a .kmod) with storage it owns.
class ModuleDescBuilder {
 public:
  ModuleDescBuilder(std::string name, std::string bitcode)
      : name_(std::move(name)), bitcode_(std::move(bitcode)) {}

  ModuleDescBuilder& Kernel(const char* name, uint32_t signature, std::vector<uint32_t> input_sizes,
                            uint32_t output_size) {
    sizes_.push_back(std::move(input_sizes));
    KilnHalKernelDesc k{};
    k.struct_size = sizeof(k);
    k.name = name;
    k.signature = signature;
    k.kernel_level = KILN_HAL_LEVEL(1, 0);
    k.num_inputs = static_cast<uint32_t>(sizes_.back().size());
    k.output_element_size = output_size;
    kernels_.push_back(k);
    return *this;
  }
  ModuleDescBuilder& Global(const char* name, uint64_t size, uint32_t flags = 0) {
    KilnHalGlobalDesc g{};
    g.struct_size = sizeof(g);
    g.name = name;
    g.size = size;
    g.flags = flags;
    globals_.push_back(g);
    return *this;
  }
  ModuleDescBuilder& Invokable(const char* name, uint32_t args_size) {
    KilnHalInvokableDesc v{};
    v.struct_size = sizeof(v);
    v.name = name;
    v.args_size = args_size;
    v.kernel_level = KILN_HAL_LEVEL(1, 0);
    invokables_.push_back(v);
    return *this;
  }
  ModuleDescBuilder& Reduction(const char* name, std::vector<uint32_t> input_sizes, uint32_t accum_size,
                               uint32_t accum_align, uint32_t result_size) {
    reduction_sizes_.push_back(std::move(input_sizes));
    KilnHalReductionDesc r{};
    r.struct_size = sizeof(r);
    r.name = name;
    r.kernel_level = KILN_HAL_LEVEL(1, 0);
    r.num_inputs = static_cast<uint32_t>(reduction_sizes_.back().size());
    r.accumulator_size = accum_size;
    r.accumulator_alignment = accum_align;
    r.result_size = result_size;
    reductions_.push_back(r);
    return *this;
  }
  ModuleDescBuilder& Flags(uint32_t flags) {
    flags_ = flags;
    return *this;
  }
  ModuleDescBuilder& Import(const char* symbol) {
    imports_.push_back(symbol);
    return *this;
  }
  ModuleDescBuilder& Options(std::string options) {
    options_ = std::move(options);
    return *this;
  }
  ModuleDescBuilder& PayloadTag(std::string tag) {
    tag_ = std::move(tag);
    return *this;
  }
  std::string& bitcode() { return bitcode_; }

  const KilnHalModuleDesc* Build() {
    for (size_t i = 0; i < kernels_.size(); ++i) kernels_[i].input_element_sizes = sizes_[i].data();
    for (size_t i = 0; i < reductions_.size(); ++i) {
      reductions_[i].input_element_sizes = reduction_sizes_[i].data();
    }
    payload_ = KilnHalPayload{};
    payload_.struct_size = sizeof(payload_);
    payload_.tag = tag_.c_str();
    payload_.data = bitcode_.data();
    payload_.size = bitcode_.size();
    desc_ = KilnHalModuleDesc{};
    desc_.struct_size = sizeof(desc_);
    desc_.name = name_.c_str();
    desc_.num_payloads = 1;
    desc_.payloads = &payload_;
    desc_.num_kernels = static_cast<uint32_t>(kernels_.size());
    desc_.kernels = kernels_.data();
    desc_.num_globals = static_cast<uint32_t>(globals_.size());
    desc_.globals = globals_.data();
    desc_.num_invokables = static_cast<uint32_t>(invokables_.size());
    desc_.invokables = invokables_.data();
    desc_.num_reductions = static_cast<uint32_t>(reductions_.size());
    desc_.reductions = reductions_.data();
    desc_.compile_options = options_.empty() ? nullptr : options_.c_str();
    desc_.flags = flags_;
    desc_.hal_level = KILN_HAL_LEVEL(1, 0);
    desc_.abi_version = KILN_KERNEL_ABI_VERSION;
    desc_.num_imports = static_cast<uint32_t>(imports_.size());
    desc_.imports = imports_.data();
    return &desc_;
  }

 private:
  std::string name_;
  std::string bitcode_;
  std::string tag_ = "llvm-bc";
  std::string options_;
  uint32_t flags_ = 0;
  std::deque<std::vector<uint32_t>> sizes_;
  std::deque<std::vector<uint32_t>> reduction_sizes_;
  std::vector<KilnHalKernelDesc> kernels_;
  std::vector<KilnHalGlobalDesc> globals_;
  std::vector<KilnHalInvokableDesc> invokables_;
  std::vector<KilnHalReductionDesc> reductions_;
  std::vector<const char*> imports_;
  KilnHalPayload payload_{};
  KilnHalModuleDesc desc_{};
};

// A dense view of `count` elements of `element_size` bytes laid out along x (and rows of `dim_x` along y).
inline KilnHalBufferView DenseView(KilnHalBuffer* buffer, uint32_t element_size, uint32_t dim_x = 0,
                                   uint32_t dim_y = 1) {
  KilnHalBufferView view{};
  view.struct_size = sizeof(view);
  view.buffer = buffer;
  view.element_size = element_size;
  view.stride_x = element_size;
  view.stride_y = static_cast<uint64_t>(element_size) * dim_x;
  view.stride_z = view.stride_y * dim_y;
  return view;
}

inline KilnHalForEachDesc ForEachDesc(uint32_t kernel, uint32_t dim_x, uint32_t dim_y, uint32_t dim_z,
                                      const KilnHalBufferView* inputs, uint32_t num_inputs,
                                      const KilnHalBufferView* output) {
  KilnHalForEachDesc desc{};
  desc.struct_size = sizeof(desc);
  desc.kernel_index = kernel;
  desc.dim_x = dim_x;
  desc.dim_y = dim_y;
  desc.dim_z = dim_z;
  desc.inputs = inputs;
  desc.num_inputs = num_inputs;
  desc.output = output;
  return desc;
}

}  // namespace testing
}  // namespace kiln

#endif  // KILN_TESTS_CPU_CPU_DRIVER_HARNESS_H_
