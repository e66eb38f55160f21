#include "runtime/kernel_module.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <new>

#include "kiln/compute.h"
#include "runtime/core.h"

namespace kiln {

std::shared_ptr<const KernelModule> KernelModule::Create(const uint8_t* data, size_t size, const std::string& name,
                                                         std::string* error) {
  std::shared_ptr<KernelModule> module(new KernelModule());
  module->name_ = name;
  if (!ReadKernelModule(data, size, &module->desc_, error)) return nullptr;
  module->BuildHalDesc();
  return module;
}

int KernelModule::KernelIndex(const std::string& name) const {
  for (size_t i = 0; i < desc_.kernels.size(); ++i) {
    if (desc_.kernels[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int KernelModule::InvokableIndex(const std::string& name) const {
  for (size_t i = 0; i < desc_.invokables.size(); ++i) {
    if (desc_.invokables[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int KernelModule::ReductionIndex(const std::string& name) const {
  for (size_t i = 0; i < desc_.reductions.size(); ++i) {
    if (desc_.reductions[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

void KernelModule::BuildHalDesc() {
  for (const PayloadDesc& p : desc_.payloads) {
    KilnHalPayload payload{};
    payload.struct_size = sizeof(KilnHalPayload);
    payload.tag = p.target.c_str();
    payload.data = p.data.data();
    payload.size = p.data.size();
    payloads_.push_back(payload);
  }
  kernel_input_sizes_.resize(desc_.kernels.size());
  for (size_t i = 0; i < desc_.kernels.size(); ++i) {
    const KernelDesc& k = desc_.kernels[i];
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
  for (const GlobalDesc& g : desc_.globals) {
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
  for (const InvokableDesc& inv : desc_.invokables) {
    KilnHalInvokableDesc d{};
    d.struct_size = sizeof(KilnHalInvokableDesc);
    d.args_size = inv.args_size;
    d.name = inv.name.c_str();
    d.symbol = inv.symbol.empty() ? nullptr : inv.symbol.c_str();
    d.kernel_level = PackLevel(inv.hal_level);
    invokables_.push_back(d);
  }
  reduction_input_sizes_.resize(desc_.reductions.size());
  for (size_t i = 0; i < desc_.reductions.size(); ++i) {
    const ReductionDesc& r = desc_.reductions[i];
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
  for (const std::string& s : desc_.imports) imports_.push_back(s.c_str());
  compile_options_ = desc_.precision == KernelPrecision::kFull      ? "fp=full"
                     : desc_.precision == KernelPrecision::kRelaxed ? "fp=relaxed"
                                                                    : "fp=imprecise";

  hal_desc_.struct_size = sizeof(KilnHalModuleDesc);
  hal_desc_.num_payloads = static_cast<uint32_t>(payloads_.size());
  hal_desc_.name = name_.c_str();
  hal_desc_.payloads = payloads_.data();
  hal_desc_.num_kernels = static_cast<uint32_t>(kernels_.size());
  hal_desc_.num_globals = static_cast<uint32_t>(globals_.size());
  hal_desc_.kernels = kernels_.data();
  hal_desc_.globals = globals_.data();
  hal_desc_.num_invokables = static_cast<uint32_t>(invokables_.size());
  hal_desc_.num_reductions = static_cast<uint32_t>(reductions_.size());
  hal_desc_.invokables = invokables_.data();
  hal_desc_.reductions = reductions_.data();
  hal_desc_.compile_options = compile_options_.c_str();
  hal_desc_.flags = desc_.has_init ? KILN_HAL_MODULE_HAS_INIT : 0u;
  hal_desc_.hal_level = PackLevel(desc_.hal_level);
  hal_desc_.abi_version = desc_.abi_version;
  hal_desc_.num_imports = static_cast<uint32_t>(imports_.size());
  hal_desc_.imports = imports_.data();
}

}  // namespace kiln

extern "C" {

KilnModule* KilnModuleCreateWithErrorReporter(const void* data, size_t size, KilnErrorReporter reporter,
                                              void* user_data) {
  if (data == nullptr || size == 0) {
    kiln::Report(reporter, user_data, "KilnModuleCreate: the module buffer is %s", data ? "empty" : "NULL");
    return nullptr;
  }
  std::string error;
  auto impl = kiln::KernelModule::Create(static_cast<const uint8_t*>(data), size, "<memory>", &error);
  if (impl == nullptr) {
    kiln::Report(reporter, user_data, "kernel module: %s", error.c_str());
    return nullptr;
  }
  auto* module = new (std::nothrow) KilnModule;
  if (module != nullptr) module->impl = std::move(impl);
  return module;
}

KilnModule* KilnModuleCreate(const void* data, size_t size) {
  return KilnModuleCreateWithErrorReporter(data, size, nullptr, nullptr);
}

KilnModule* KilnModuleCreateFromFileWithErrorReporter(const char* path, KilnErrorReporter reporter,
                                                      void* user_data) {
  if (path == nullptr) {
    kiln::Report(reporter, user_data, "KilnModuleCreateFromFile: the path is NULL");
    return nullptr;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    kiln::Report(reporter, user_data, "%s: cannot open kernel module: %s", path, std::strerror(errno));
    return nullptr;
  }
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.empty()) {
    kiln::Report(reporter, user_data, "%s: the kernel module file is empty", path);
    return nullptr;
  }
  std::string error;
  auto impl = kiln::KernelModule::Create(bytes.data(), bytes.size(), path, &error);
  if (impl == nullptr) {
    kiln::Report(reporter, user_data, "%s: %s", path, error.c_str());
    return nullptr;
  }
  auto* module = new (std::nothrow) KilnModule;
  if (module != nullptr) module->impl = std::move(impl);
  return module;
}

KilnModule* KilnModuleCreateFromFile(const char* path) {
  return KilnModuleCreateFromFileWithErrorReporter(path, nullptr, nullptr);
}

void KilnModuleDelete(KilnModule* module) { delete module; }

int32_t KilnModuleGetKernelCount(const KilnModule* module) {
  return module ? static_cast<int32_t>(module->impl->desc().kernels.size()) : 0;
}

const char* KilnModuleGetKernelName(const KilnModule* module, int32_t index) {
  if (module == nullptr || index < 0 || index >= KilnModuleGetKernelCount(module)) return nullptr;
  return module->impl->desc().kernels[index].name.c_str();
}

}  // extern "C"
