// Builds the HAL description of a kernel module (hal_view.h): the structs a driver's module_load reads.

#include "formats/kmod/hal_view.h"

namespace kiln {

void HalModuleView::Build(const KernelModuleDesc& desc_in, const std::string& name) {
  *this = HalModuleView();
  const KernelModuleDesc& module = desc_in;
  for (const PayloadDesc& p : module.payloads) {
    KilnHalPayload payload{};
    payload.struct_size = sizeof(KilnHalPayload);
    payload.tag = p.target.c_str();
    payload.data = p.data.data();
    payload.size = p.data.size();
    payloads_.push_back(payload);
  }
  kernel_input_sizes_.resize(module.kernels.size());
  for (size_t i = 0; i < module.kernels.size(); ++i) {
    const KernelDesc& k = module.kernels[i];
    for (const KernelTypeDesc& t : k.inputs) kernel_input_sizes_[i].push_back(t.size);
    KilnHalKernelDesc d{};
    d.struct_size = sizeof(KilnHalKernelDesc);
    d.signature = k.signature;
    d.name = k.name.c_str();
    d.expand_symbol = k.expand_symbol.empty() ? nullptr : k.expand_symbol.c_str();
    d.kernel_level = PackLevel(k.hal_level);
    d.num_inputs = static_cast<uint32_t>(k.inputs.size());
    d.input_element_sizes = kernel_input_sizes_[i].data();
    d.output_element_size = k.has_output() ? k.output.size : 0;
    kernels_.push_back(d);
  }
  uint64_t offset = 0;
  for (const GlobalDesc& g : module.globals) {
    KilnHalGlobalDesc d{};
    d.struct_size = sizeof(KilnHalGlobalDesc);
    d.flags = (g.is_const ? KILN_HAL_GLOBAL_CONST : 0u) | (g.is_allocation ? KILN_HAL_GLOBAL_ALLOCATION : 0u) |
              (g.type.kind == KernelTypeKind::kPointer ? KILN_HAL_GLOBAL_POINTER : 0u);
    d.name = g.name.c_str();
    d.size = g.size;
    const uint64_t align = g.alignment ? g.alignment : 1;
    offset = (offset + align - 1) / align * align;
    d.offset = offset;
    offset += g.size;
    d.default_data = g.default_value.size() == g.size ? g.default_value.data() : nullptr;
    globals_.push_back(d);
  }
  for (const InvokableDesc& inv : module.invokables) {
    KilnHalInvokableDesc d{};
    d.struct_size = sizeof(KilnHalInvokableDesc);
    d.args_size = inv.args_size;
    d.name = inv.name.c_str();
    d.symbol = inv.symbol.empty() ? nullptr : inv.symbol.c_str();
    d.kernel_level = PackLevel(inv.hal_level);
    invokables_.push_back(d);
  }
  reduction_input_sizes_.resize(module.reductions.size());
  for (size_t i = 0; i < module.reductions.size(); ++i) {
    const ReductionDesc& r = module.reductions[i];
    for (const KernelTypeDesc& t : r.inputs) reduction_input_sizes_[i].push_back(t.size);
    KilnHalReductionDesc d{};
    d.struct_size = sizeof(KilnHalReductionDesc);
    d.kernel_level = PackLevel(r.hal_level);
    d.name = r.name.c_str();
    d.init_symbol = r.init_symbol.empty() ? nullptr : r.init_symbol.c_str();
    d.accum_symbol = r.accum_symbol.empty() ? nullptr : r.accum_symbol.c_str();
    d.combine_symbol = r.combine_symbol.empty() ? nullptr : r.combine_symbol.c_str();
    d.out_symbol = r.out_symbol.empty() ? nullptr : r.out_symbol.c_str();
    d.num_inputs = static_cast<uint32_t>(r.inputs.size());
    d.accumulator_size = r.accumulator_size;
    d.accumulator_alignment = r.accumulator_alignment;
    d.result_size = r.result.size;
    d.input_element_sizes = reduction_input_sizes_[i].data();
    reductions_.push_back(d);
  }
  for (const std::string& s : module.imports) imports_.push_back(s.c_str());
  compile_options_ = module.precision == KernelPrecision::kFull      ? "fp=full"
                     : module.precision == KernelPrecision::kRelaxed ? "fp=relaxed"
                                                                    : "fp=imprecise";

  desc_.struct_size = sizeof(KilnHalModuleDesc);
  desc_.num_payloads = static_cast<uint32_t>(payloads_.size());
  desc_.name = name.c_str();
  desc_.payloads = payloads_.data();
  desc_.num_kernels = static_cast<uint32_t>(kernels_.size());
  desc_.num_globals = static_cast<uint32_t>(globals_.size());
  desc_.kernels = kernels_.data();
  desc_.globals = globals_.data();
  desc_.num_invokables = static_cast<uint32_t>(invokables_.size());
  desc_.num_reductions = static_cast<uint32_t>(reductions_.size());
  desc_.invokables = invokables_.data();
  desc_.reductions = reductions_.data();
  desc_.compile_options = compile_options_.c_str();
  desc_.flags = module.has_init ? KILN_HAL_MODULE_HAS_INIT : 0u;
  desc_.hal_level = PackLevel(module.hal_level);
  desc_.abi_version = module.abi_version;
  desc_.num_imports = static_cast<uint32_t>(imports_.size());
  desc_.imports = imports_.data();
}

}  // namespace kiln
