// The Vulkan driver's programs (a kernel's or reduction's SPIR-V with its layouts and pipelines), modules and
// scripts: shared by the files that load them, set their state, and resolve and record their launches.
#ifndef KILN_BACKENDS_VULKAN_MODULE_H_
#define KILN_BACKENDS_VULKAN_MODULE_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "backends/vulkan/driver_internal.h"

namespace kiln {
namespace vulkan {

// What kernels and reductions share: one SPIR-V module, its descriptor and pipeline layouts, and the checks
// that decide whether it can run here.
struct ShaderProgram {
  std::string name;
  uint32_t level = 0;
  std::vector<uint32_t> input_sizes;
  uint32_t units[KILN_KERNEL_MAX_INPUTS + 1] =
      {};  // per binding's array element: inputs, then [8] the output
  uint32_t push_size = 0;
  bool supported = false;
  std::string reason;
  std::string entry_point;
  std::vector<uint32_t> code;
  VkShaderModule shader = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  std::vector<uint32_t> bindings;  // in the set layout's order
  std::string layout_description;  // for messages, e.g. "the kernel's: 2 inputs, an output, 1 allocations"
  bool reports_faults = false;     // declares the fault record (binding 27, kiln/spirv_abi.h "Faults")
  bool reads_usr = false;          // declares the launch's usrData (binding 28, kiln/spirv_abi.h "usrData")
};

struct KernelInfo : ShaderProgram {
  uint32_t signature = 0;
  uint32_t output_size = 0;
  bool has_output = false;
  VkPipeline pipelines[kNumShapes] = {};
  uint32_t workgroups[kNumShapes][3] = {};
};

// A two-pass workgroup reduction (kiln/spirv_abi.h, "Reductions"): pass 0 leaves one accumulator per
// workgroup in the partials buffer, pass 1 combines them and writes the result words.
struct ReductionInfo : ShaderProgram {
  uint32_t result_size = 0;  // bytes, as the reflection gives them
  uint32_t result_words = 0;
  uint32_t accumulator_stride = 0;
  uint32_t workgroup = 0;  // W: workgroup size along x, a power of two
  VkPipeline passes[2] = {};
};

struct GlobalInfo {
  std::string name;
  uint32_t flags = 0;
  uint64_t size = 0;
  std::vector<uint8_t> default_value;
  bool on_gpu = false;  // has a row in the payload's global table
  uint32_t kind = KILN_SPIRV_GLOBAL_VALUE;
  uint32_t block_offset = 0;
  uint32_t unit_size = 0;
  int allocation_index = -1;  // binding KILN_SPIRV_FIRST_ALLOCATION_BINDING + this
};

struct Module {
  Device* device = nullptr;
  std::string name;
  std::vector<KernelInfo> kernels;
  std::vector<ReductionInfo> reductions;
  std::vector<GlobalInfo> globals;
  uint32_t block_size = 0;
  uint32_t num_allocations = 0;
  bool has_init = false;
  KilnHalModuleInfo info{};
  std::atomic<int> live_scripts{0};
};

struct Script {
  Module* module = nullptr;
  void* user_data = nullptr;
  std::mutex mutex;                          // guards the state below against concurrent set/bind/record
  std::vector<std::vector<uint8_t>> values;  // per global, the host's value
  std::vector<uint8_t> block;                // the GPU's image of the globals
  std::vector<Buffer*> allocations;          // per allocation binding, NULL when unbound
  std::atomic<uint32_t> launches{0};         // for-each launches recorded: each one's rsRand seed (dim.w)
  Instance* instance() const { return module->device->instance; }
};

inline Module* AsModule(KilnHalModule* h) { return reinterpret_cast<Module*>(h); }
inline Script* AsScript(KilnHalScript* h) { return reinterpret_cast<Script*>(h); }

// pipeline.cc
uint32_t ReductionWorkgroup(const VkPhysicalDeviceLimits& limits, uint32_t accumulator_stride);
bool CheckProgram(Device* device, Module* module, ShaderProgram* program, uint32_t required_features,
                  const std::vector<uint32_t>& spec_ids);
bool BuildKernel(Device* device, KernelInfo* kernel, uint32_t* created, uint32_t* cached);
bool BuildReduction(Device* device, ReductionInfo* reduction, uint32_t* created, uint32_t* cached);
void DestroyKernel(Device* device, KernelInfo* kernel);
void DestroyReduction(Device* device, ReductionInfo* reduction);
void SaveCache(Device* device);

// module.cc
KilnStatus ModuleLoad(KilnHalDevice* handle, const KilnHalModuleDesc* in_desc, KilnHalModule** out_module);
KilnStatus ModuleUnload(KilnHalModule* handle);
KilnStatus ModuleGetInfo(KilnHalModule* handle, KilnHalModuleInfo* out_info);
KilnStatus ModuleKernelSupported(KilnHalModule* handle, uint32_t kernel_index, bool* out_supported,
                                 const char** out_reason);
KilnStatus ModuleReductionSupported(KilnHalModule* handle, uint32_t reduction_index, bool* out_supported,
                                    const char** out_reason);

// script.cc
bool ViewInUnits(const KilnHalBufferView& view, uint32_t unit, const std::string& what, uint32_t out[4],
                 std::string* out_error);
KilnStatus ScriptCreate(KilnHalModule* handle, void* script_user_data, KilnHalScript** out_script);
KilnStatus ScriptDestroy(KilnHalScript* handle);
KilnStatus ScriptSetGlobal(KilnHalScript* handle, const char* name, const void* data, uint64_t size);
KilnStatus ScriptGetGlobal(KilnHalScript* handle, const char* name, uint64_t size, void* out_data);
KilnStatus ScriptBindAllocation(KilnHalScript* handle, const char* name, const KilnHalBufferView* in_view,
                                uint32_t element_type, uint32_t vector_size, uint32_t dim_x, uint32_t dim_y,
                                uint32_t dim_z);

}  // namespace vulkan
}  // namespace kiln

#endif  // KILN_BACKENDS_VULKAN_MODULE_H_
