// A loaded kernel module (kernel_module.h): reading and verifying it, and its HAL description.

#include "runtime/device/kernel_module.h"

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
  module->view_.Build(module->desc_, module->name_);
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
