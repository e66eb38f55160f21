// Test and benchmark scaffolding for the Vulkan driver: loads libkiln_vulkan.so with dlopen (as the runtime's
// loader does), gives it a KilnHalServices that records what it reports, and builds module descriptions
// around hand-written GLSL compiled to SPIR-V and packed as a "spirv" payload (kiln/spirv_abi.h).
#ifndef KILN_TESTS_VULKAN_VULKAN_HARNESS_H_
#define KILN_TESTS_VULKAN_VULKAN_HARNESS_H_

#include <dlfcn.h>

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "formats/spirv/spirv_payload.h"
#include "kiln/hal.h"
#include "kiln/spirv_abi.h"
#include "tests/hal_test_services.h"
#include "compiler/glsl_to_spirv.h"

namespace kiln {
namespace testing {

// The runtime side of the HAL for one Vulkan driver instance, loaded with dlopen as the runtime's loader does.
class VulkanHarness : public HalTestHarness {
 public:
  explicit VulkanHarness(std::map<std::string, std::string> config) : HalTestHarness(std::move(config)) {
    library_ = dlopen(KILN_VULKAN_DRIVER_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!library_) {
      RecordError(std::string("dlopen: ") + dlerror());
      return;
    }
    auto query = reinterpret_cast<KilnDriverQueryFn>(dlsym(library_, KILN_DRIVER_QUERY_SYMBOL));
    if (!query) {
      RecordError("no kiln_driver_query in " KILN_VULKAN_DRIVER_PATH);
      return;
    }
    Open(query);
  }
  ~VulkanHarness() {
    Close();  // before the driver's code is unloaded
    if (library_) dlclose(library_);
  }

  // Every message the validation layers sent (the driver logs them with this prefix).
  std::vector<std::string> ValidationMessages() {
    std::vector<std::string> out;
    for (const std::string& line : Logs()) {
      if (line.find("Vulkan validation: ") != std::string::npos) out.push_back(line);
    }
    return out;
  }

 private:
  void* library_ = nullptr;
};

// A kernel written by hand to kiln/spirv_abi.h.
struct GlslKernel {
  std::string name;
  std::string glsl;  // empty: CPU-only, with `cpu_only_reason`
  std::vector<uint32_t> input_sizes;
  uint32_t output_size = 0;           // 0: returns void
  std::vector<uint32_t> input_units;  // default: the element sizes
  uint32_t output_unit = 0;
  uint32_t required_features = 0;
  std::string cpu_only_reason;
  std::vector<uint32_t> spirv_override;  // used instead of compiling `glsl` when not empty
};

// A two-pass reduction written by hand to kiln/spirv_abi.h ("Reductions"). The reflection's side
// (KilnHalReductionDesc) is filled from the same fields unless `reflected_*` override it.
struct GlslReduction {
  std::string name;
  std::string glsl;  // empty: CPU-only, with `cpu_only_reason`
  std::vector<uint32_t> input_sizes;
  std::vector<uint32_t> input_units;  // default: the element sizes
  uint32_t accumulator_stride = 0;
  uint32_t result_size = 0;
  uint32_t result_words = 0;  // default: (result_size + 3) / 4
  uint32_t required_features = 0;
  std::string cpu_only_reason;
  std::vector<uint32_t> spirv_override;  // used instead of compiling `glsl` when not empty
  std::string reflected_name;            // default: `name`
};

struct GlslGlobal {
  std::string name;
  uint32_t size = 0;  // value bytes; ignored for allocations
  uint32_t block_offset = 0;
  bool allocation = false;
  uint32_t unit_size = 0;
  std::vector<uint8_t> default_value;
};

// Builds a KilnHalModuleDesc with a "spirv" payload, owning all storage.
class SpirvModuleBuilder {
 public:
  explicit SpirvModuleBuilder(std::string name) : name_(std::move(name)) {}

  SpirvModuleBuilder& Kernel(GlslKernel kernel) {
    kernels_.push_back(std::move(kernel));
    return *this;
  }
  SpirvModuleBuilder& Reduction(GlslReduction reduction) {
    reductions_.push_back(std::move(reduction));
    return *this;
  }
  // Leaves the payload's reduction table empty (as a payload from before GPU reductions), whatever Reduction()
  // added: those then exist only in the reflection.
  SpirvModuleBuilder& NoReductionRows() {
    no_reduction_rows_ = true;
    return *this;
  }
  SpirvModuleBuilder& Global(GlslGlobal global) {
    globals_.push_back(std::move(global));
    return *this;
  }
  SpirvModuleBuilder& BlockSize(uint32_t size) {
    block_size_ = size;
    return *this;
  }
  SpirvModuleBuilder& Flags(uint32_t flags) {
    flags_ = flags;
    return *this;
  }

  // Compiles every kernel; false with the first compiler message.
  bool Compile(std::string* error) {
    spirv::SpirvPayload payload;
    payload.spirv_version = 0x00010300;
    payload.generator_version = compiler::GlslangVersion();
    payload.global_block_size = block_size_;
    for (const GlslKernel& k : kernels_) {
      spirv::SpirvKernel out;
      out.name = k.name;
      out.num_inputs = static_cast<uint32_t>(k.input_sizes.size());
      out.has_output = k.output_size != 0;
      out.required_features = k.required_features;
      for (size_t i = 0; i < k.input_sizes.size(); ++i) {
        out.unit_sizes[i] = i < k.input_units.size() ? k.input_units[i] : k.input_sizes[i];
      }
      out.unit_sizes[KILN_KERNEL_MAX_INPUTS] = k.output_unit ? k.output_unit : k.output_size;
      if (!k.spirv_override.empty()) {
        out.code = k.spirv_override;
      } else if (!k.glsl.empty()) {
        std::string message;
        if (!compiler::CompileGlslToSpirv(k.glsl, &out.code, &message)) {
          *error = k.name + ": " + message;
          return false;
        }
      } else {
        out.cpu_only_reason = k.cpu_only_reason;
      }
      payload.kernels.push_back(std::move(out));
    }
    for (const GlslReduction& r : reductions_) {
      if (no_reduction_rows_) break;
      spirv::SpirvReduction out;
      out.name = r.name;
      out.num_inputs = static_cast<uint32_t>(r.input_sizes.size());
      out.required_features = r.required_features;
      out.accumulator_stride = r.accumulator_stride;
      out.result_words = r.result_words ? r.result_words : (r.result_size + 3) / 4;
      for (size_t i = 0; i < r.input_sizes.size(); ++i) {
        out.unit_sizes[i] = i < r.input_units.size() ? r.input_units[i] : r.input_sizes[i];
      }
      if (!r.spirv_override.empty()) {
        out.code = r.spirv_override;
      } else if (!r.glsl.empty()) {
        std::string message;
        if (!compiler::CompileGlslToSpirv(r.glsl, &out.code, &message)) {
          *error = r.name + ": " + message;
          return false;
        }
      } else {
        out.cpu_only_reason = r.cpu_only_reason;
      }
      payload.reductions.push_back(std::move(out));
    }
    for (const GlslGlobal& g : globals_) {
      spirv::SpirvGlobal out;
      out.name = g.name;
      out.kind = g.allocation ? KILN_SPIRV_GLOBAL_ALLOCATION : KILN_SPIRV_GLOBAL_VALUE;
      out.size = g.allocation ? 0 : g.size;
      out.block_offset = g.block_offset;
      out.unit_size = g.unit_size;
      payload.globals.push_back(out);
    }
    payload_bytes_ = spirv::WriteSpirvPayload(payload);
    return true;
  }
  std::string& payload_bytes() { return payload_bytes_; }

  const KilnHalModuleDesc* Build() {
    kernel_descs_.clear();
    for (const GlslKernel& k : kernels_) {
      KilnHalKernelDesc d{};
      d.struct_size = sizeof(d);
      d.name = k.name.c_str();
      d.signature = KILN_HAL_SIG_KERNEL | (k.input_sizes.empty() ? 0 : KILN_HAL_SIG_IN) |
                    (k.output_size ? KILN_HAL_SIG_OUT : 0) | KILN_HAL_SIG_X;
      d.kernel_level = KILN_HAL_LEVEL(1, 0);
      d.num_inputs = static_cast<uint32_t>(k.input_sizes.size());
      d.input_element_sizes = k.input_sizes.data();
      d.output_element_size = k.output_size;
      kernel_descs_.push_back(d);
    }
    reduction_descs_.clear();
    for (const GlslReduction& r : reductions_) {
      KilnHalReductionDesc d{};
      d.struct_size = sizeof(d);
      d.kernel_level = KILN_HAL_LEVEL(1, 0);
      d.name = r.reflected_name.empty() ? r.name.c_str() : r.reflected_name.c_str();
      d.num_inputs = static_cast<uint32_t>(r.input_sizes.size());
      d.input_element_sizes = r.input_sizes.data();
      d.accumulator_size = r.accumulator_stride;
      d.accumulator_alignment = 4;
      d.result_size = r.result_size;
      reduction_descs_.push_back(d);
    }
    global_descs_.clear();
    uint64_t offset = 0;
    for (const GlslGlobal& g : globals_) {
      KilnHalGlobalDesc d{};
      d.struct_size = sizeof(d);
      d.name = g.name.c_str();
      d.flags = g.allocation ? KILN_HAL_GLOBAL_ALLOCATION : 0;
      d.size = g.allocation ? sizeof(void*) : g.size;
      d.offset = offset;
      offset += (d.size + 15) / 16 * 16;
      d.default_data = g.default_value.empty() ? nullptr : g.default_value.data();
      global_descs_.push_back(d);
    }
    payload_ = KilnHalPayload{};
    payload_.struct_size = sizeof(payload_);
    payload_.tag = KILN_SPIRV_PAYLOAD_TAG;
    payload_.data = payload_bytes_.data();
    payload_.size = payload_bytes_.size();
    desc_ = KilnHalModuleDesc{};
    desc_.struct_size = sizeof(desc_);
    desc_.name = name_.c_str();
    desc_.num_payloads = 1;
    desc_.payloads = &payload_;
    desc_.num_kernels = static_cast<uint32_t>(kernel_descs_.size());
    desc_.kernels = kernel_descs_.data();
    desc_.num_globals = static_cast<uint32_t>(global_descs_.size());
    desc_.globals = global_descs_.data();
    desc_.num_reductions = static_cast<uint32_t>(reduction_descs_.size());
    desc_.reductions = reduction_descs_.data();
    desc_.flags = flags_;
    desc_.hal_level = KILN_HAL_LEVEL(1, 0);
    desc_.abi_version = KILN_KERNEL_ABI_VERSION;
    return &desc_;
  }

 private:
  std::string name_;
  std::deque<GlslKernel> kernels_;
  std::deque<GlslReduction> reductions_;
  bool no_reduction_rows_ = false;
  std::vector<GlslGlobal> globals_;
  uint32_t block_size_ = 0;
  uint32_t flags_ = 0;
  std::string payload_bytes_;
  std::vector<KilnHalKernelDesc> kernel_descs_;
  std::vector<KilnHalGlobalDesc> global_descs_;
  std::vector<KilnHalReductionDesc> reduction_descs_;
  KilnHalPayload payload_{};
  KilnHalModuleDesc desc_{};
};

// The push-constant block and index helper every hand-written kernel starts with (kiln/spirv_abi.h).
inline std::string KernelPreamble(int num_views, const std::string& extensions = "") {
  return "#version 450\n" + extensions +
         "layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;\n"
         "layout(push_constant, std430) uniform KilnLaunch { uvec4 dim; uvec4 origin; uvec4 view[" +
         std::to_string(num_views) +
         "]; } kiln;\n"
         "uint kiln_index(uint v, uvec3 p) {\n"
         "  return kiln.view[v].x + p.x * kiln.view[v].y + p.y * kiln.view[v].z + p.z * kiln.view[v].w;\n"
         "}\n";
}

// A kernel with one input and an output of the same 4-byte GLSL `type` (float, int, uint):
// out0[cell] = `expression`, in which `x` is the input element.
inline GlslKernel UnaryKernel(const std::string& name, const std::string& type, const std::string& expression) {
  GlslKernel k;
  k.name = name;
  k.input_sizes = {4};
  k.output_size = 4;
  k.glsl = KernelPreamble(2) + "layout(set = 0, binding = 1, std430) readonly buffer In0 { " + type +
           " in0[]; };\n"
           "layout(set = 0, binding = 9, std430) writeonly buffer Out { " + type + " out0[]; };\n"
           "void main() {\n"
           "  uvec3 p = gl_GlobalInvocationID + kiln.origin.xyz;\n"
           "  if (any(greaterThanEqual(p, kiln.dim.xyz))) return;\n"
           "  " + type + " x = in0[kiln_index(0, p)];\n"
           "  out0[kiln_index(1, p)] = " + expression + ";\n}\n";
  return k;
}

inline KilnHalBufferView View(KilnHalBuffer* buffer, uint32_t element_size, uint64_t stride_x,
                              uint64_t stride_y = 0, uint64_t stride_z = 0, uint64_t offset = 0) {
  KilnHalBufferView view{};
  view.struct_size = sizeof(view);
  view.buffer = buffer;
  view.element_size = element_size;
  view.offset = offset;
  view.stride_x = stride_x;
  view.stride_y = stride_y;
  view.stride_z = stride_z;
  return view;
}

inline KilnHalReduceDesc Reduce(uint32_t reduction, uint32_t dim_x, uint32_t dim_y, uint32_t dim_z,
                                const KilnHalBufferView* inputs, uint32_t num_inputs) {
  KilnHalReduceDesc desc{};
  desc.struct_size = sizeof(desc);
  desc.reduction_index = reduction;
  desc.dim_x = dim_x;
  desc.dim_y = dim_y;
  desc.dim_z = dim_z;
  desc.inputs = inputs;
  desc.num_inputs = num_inputs;
  return desc;
}

inline KilnHalForEachDesc ForEach(uint32_t kernel, uint32_t dim_x, uint32_t dim_y, uint32_t dim_z,
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

#endif  // KILN_TESTS_VULKAN_VULKAN_HARNESS_H_
