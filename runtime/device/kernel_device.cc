// The runtime's side of kiln/hal.h for one opened device: buffers over tensors, module instances, launches.
#include "runtime/device/kernel_device.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kiln {
namespace {

// Driver buffers for `tensors`, acquired (and uploaded); the last is an output where `last_is_output`.
// Buffers for a launch's tensors; a tensor `script` holds a bound copy of shares that copy.
KilnStatus AcquireBuffers(KernelDevice* device, const DeviceScript& script, const std::vector<const KilnTensor*>& tensors,
                          bool last_is_output, std::vector<std::unique_ptr<TensorBuffer>>* buffers) {
  for (size_t t = 0; t < tensors.size(); ++t) {
    const bool is_output = last_is_output && t + 1 == tensors.size();
    buffers->push_back(std::make_unique<TensorBuffer>(device, tensors[t], is_output));
    if (KilnHalBuffer* bound = script.BoundCopy(tensors[t])) {
      buffers->back()->Share(bound);
    } else if (KilnStatus s = buffers->back()->Acquire(); s != kKilnOk) {
      return s;
    }
  }
  return kKilnOk;
}

}  // namespace
// ---------------------------------------------------------------------------------------------------------
// TensorBuffer

TensorBuffer::~TensorBuffer() {
  if (buffer_ != nullptr && !shared_) device_->driver().buffer_destroy(buffer_);
}

KilnStatus TensorBuffer::Acquire(bool upload) {
  const KilnHalDriver& d = device_->driver();
  const uint64_t size = tensor_->bytes == 0 ? 1 : tensor_->bytes;
  const uint32_t alignment = device_->info().limits.buffer_alignment ? device_->info().limits.buffer_alignment : 1;
  KilnHalBufferDesc desc{};
  desc.struct_size = sizeof desc;
  desc.size = size;
  const bool aligned = reinterpret_cast<uintptr_t>(tensor_->data) % alignment == 0;
  if ((device_->info().flags & KILN_HAL_DEVICE_HOST_SHARED_MEMORY) && aligned && tensor_->data != nullptr) {
    desc.flags = KILN_HAL_BUFFER_HOST_WRAP;
    desc.host_ptr = tensor_->data;
    if (d.buffer_create(device_->device(), &desc, &buffer_) == kKilnOk && buffer_ != nullptr) return kKilnOk;
    buffer_ = nullptr;
    device_->hal()->TakeErrors();  // wrapping is an optimisation; a copy is the answer
    desc.flags = 0;
    desc.host_ptr = nullptr;
  }
  KilnStatus s = d.buffer_create(device_->device(), &desc, &buffer_);
  if (s != kKilnOk || buffer_ == nullptr) {
    buffer_ = nullptr;
    return s != kKilnOk ? s : kKilnDelegateError;
  }
  copied_ = true;
  if (upload && !is_output_ && tensor_->bytes > 0) return d.buffer_write(buffer_, 0, tensor_->data, tensor_->bytes);
  return kKilnOk;
}

KilnStatus TensorBuffer::Finish() {
  if (!copied_ || !is_output_ || tensor_->bytes == 0) return kKilnOk;
  return device_->driver().buffer_read(buffer_, 0, tensor_->bytes, tensor_->data);
}

// ---------------------------------------------------------------------------------------------------------
// KernelDevice

namespace {

// Room after the info struct handed to device_get_info, to catch a driver writing more than it was given.
constexpr size_t kInfoGuard = 512;
constexpr uint8_t kInfoGuardByte = 0x5A;

}  // namespace

std::unique_ptr<KernelDevice> KernelDevice::Open(std::shared_ptr<HalDriver> driver, uint32_t index,
                                                 std::string* refusal) {
  std::unique_ptr<KernelDevice> d(new KernelDevice());
  d->hal_ = std::move(driver);
  const KilnHalDriver& t = d->hal_->table();
  auto fail = [&](const std::string& why) {
    const std::string errors = d->hal_->builtin() ? "" : d->hal_->TakeErrors();
    *refusal = why + (errors.empty() ? "" : ": " + errors);
    return nullptr;
  };
  std::vector<uint8_t> buffer(sizeof(KilnHalDeviceInfo) + kInfoGuard, kInfoGuardByte);
  KilnHalDeviceInfo info{};
  info.struct_size = sizeof info;
  info.limits.struct_size = sizeof info.limits;
  std::memcpy(buffer.data(), &info, sizeof info);
  if (t.device_get_info(t.instance, index, reinterpret_cast<KilnHalDeviceInfo*>(buffer.data())) != kKilnOk) {
    return fail("device_get_info failed");
  }
  for (size_t i = sizeof(KilnHalDeviceInfo); i < buffer.size(); ++i) {
    if (buffer[i] != kInfoGuardByte) {
      return fail("device_get_info wrote past the " + std::to_string(sizeof(KilnHalDeviceInfo)) +
                  "-byte KilnHalDeviceInfo the runtime passed");
    }
  }
  std::memcpy(&info, buffer.data(), sizeof info);
  // HAL 1.0 defines every field of both structs, so a 1.x driver writes them whole.
  if (info.struct_size != sizeof(KilnHalDeviceInfo)) {
    return fail("device_get_info reported a KilnHalDeviceInfo struct_size of " + std::to_string(info.struct_size) +
                " bytes; the runtime passed " + std::to_string(sizeof(KilnHalDeviceInfo)) + " (HAL 1.0's size)");
  }
  if (info.limits.struct_size != sizeof(KilnHalDeviceLimits)) {
    return fail("device_get_info reported a KilnHalDeviceLimits struct_size of " +
                std::to_string(info.limits.struct_size) + " bytes; HAL 1.0's is " +
                std::to_string(sizeof(KilnHalDeviceLimits)));
  }
  info.name[sizeof info.name - 1] = '\0';
  info.vendor[sizeof info.vendor - 1] = '\0';
  info.payload_tags[sizeof info.payload_tags - 1] = '\0';
  if (info.limits.buffer_alignment != 0 && (info.limits.buffer_alignment & (info.limits.buffer_alignment - 1)) != 0) {
    return fail("device_get_info reported a buffer alignment of " + std::to_string(info.limits.buffer_alignment) +
                ", not a power of two");
  }
  d->info_ = info;
  if (t.device_open(t.instance, index, &d->device_) != kKilnOk || d->device_ == nullptr) {
    d->device_ = nullptr;
    return fail("device_open failed");
  }
  d->label_ = d->hal_->builtin() ? d->hal_->name() : d->hal_->name() + " (" + info.name + ")";
  return d;
}

KernelDevice::~KernelDevice() {
  const KilnHalDriver& t = hal_->table();
  for (auto& entry : modules_) t.module_unload(entry.second.handle);
  if (device_ != nullptr) t.device_close(device_);
}

const KilnHalDriver& KernelDevice::driver() const { return hal_->table(); }

bool KernelDevice::builtin() const { return hal_->builtin(); }

void KernelDevice::ReportError(const char* format, ...) {
  va_list args;
  va_start(args, format);
  ReportV(hal_->options().reporter, hal_->options().reporter_user_data, format, args);
  va_end(args);
}

KilnHalModule* KernelDevice::LoadModule(const std::shared_ptr<const KernelModule>& module) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = modules_.find(module.get());
  if (it != modules_.end()) return it->second.handle;
  KilnHalModule* handle = nullptr;
  if (driver().module_load(device_, &module->hal_desc(), &handle) != kKilnOk || handle == nullptr) {
    if (builtin()) {
      ReportError("%s: the %s driver could not load the module", module->name().c_str(), hal_->name().c_str());
    }
    return nullptr;
  }
  modules_[module.get()] = {module, handle};
  return handle;
}

// ---------------------------------------------------------------------------------------------------------
// DeviceScript

std::unique_ptr<DeviceScript> DeviceScript::Create(KernelDevice* device, std::shared_ptr<const KernelModule> module,
                                                   void* user_data) {
  std::unique_ptr<DeviceScript> s(new DeviceScript());
  s->device_ = device;
  s->module_ = std::move(module);
  s->hal_module_ = device->LoadModule(s->module_);
  if (s->hal_module_ == nullptr) return nullptr;
  if (device->driver().script_create(s->hal_module_, user_data, &s->script_) != kKilnOk || s->script_ == nullptr) {
    s->script_ = nullptr;
    if (device->builtin()) {
      device->ReportError("%s: could not create a script instance (init() failed?)", s->module_->name().c_str());
    }
    return nullptr;
  }
  return s;
}

DeviceScript::~DeviceScript() {
  const KilnHalDriver& d = device_->driver();
  if (script_ != nullptr) d.script_destroy(script_);
  bound_.clear();  // the buffers go after the script that read them
}

KilnStatus DeviceScript::SetGlobal(const std::string& name, const void* data, size_t size) {
  return device_->driver().script_set_global(script_, name.c_str(), data, size);
}

KilnStatus DeviceScript::GetGlobal(const std::string& name, void* data, size_t size) const {
  return device_->driver().script_get_global(script_, name.c_str(), size, data);
}

KilnStatus DeviceScript::BindAllocation(const std::string& name, KilnTensor* tensor, uint32_t lanes) {
  const GlobalDesc* g = module_->desc().FindGlobal(name);
  const KilnHalDriver& d = device_->driver();
  if (d.script_bind_allocation == nullptr) {
    device_->ReportError("%s: binding '%s': the %s driver cannot bind allocations", module_->name().c_str(),
                         name.c_str(), device_->hal()->name().c_str());
    return kKilnUnsupported;
  }
  auto old = bound_.find(name);
  if (tensor == nullptr) {
    KilnStatus s = d.script_bind_allocation(script_, name.c_str(), nullptr, 0, 0, 0, 0, 0);
    if (old != bound_.end()) bound_.erase(old);
    return s;
  }
  // An allocation's element is the tensor's innermost dimension when the global is a typed pointer to a
  // vector; otherwise one scalar of the tensor's type. rs_allocation globals learn their type from the tensor.
  uint32_t vector_size = 1;
  std::vector<int64_t> cells(tensor->dims.begin(), tensor->dims.end());
  if (lanes >= 2 && lanes <= 4) {
    const int64_t stored = lanes == 3 ? 4 : lanes;
    if (cells.empty() || cells.back() != stored) {
      device_->ReportError("%s: binding '%s' as %u-lane elements needs an innermost dimension of %lld, the tensor's "
                           "is %s",
                           module_->name().c_str(), name.c_str(), lanes, static_cast<long long>(stored),
                           cells.empty() ? "absent" : std::to_string(cells.back()).c_str());
      return kKilnInvalidArgument;
    }
    vector_size = lanes;
    cells.pop_back();
  } else if (lanes != 0 && lanes != 1) {
    device_->ReportError("%s: binding '%s': elements have 1 to 4 lanes, not %u", module_->name().c_str(),
                         name.c_str(), lanes);
    return kKilnInvalidArgument;
  } else if (lanes == 1) {
    // Scalars, whatever the shape.
  } else if (g->type.kind == KernelTypeKind::kPointer && g->type.vector_size > 1) {
    std::string error;
    if (!KernelCellDims(*tensor, g->type, &cells, &error)) {
      device_->ReportError("%s: binding '%s': %s", module_->name().c_str(), name.c_str(), error.c_str());
      return kKilnInvalidArgument;
    }
    vector_size = g->type.vector_size;
  } else if (!cells.empty() && cells.back() >= 2 && cells.back() <= 4 && cells.size() >= 2 &&
             g->type.kind != KernelTypeKind::kPointer && tensor->type == kKilnUInt8 && cells.back() == 4) {
    // A uint8 tensor [..., 4] is an image of uchar4 pixels, as RenderScript apps bind them.
    vector_size = 4;
    cells.pop_back();
  }
  // Allocations have 3 dimensions: further outer dimensions fold into z, as they do when a kernel maps over a
  // tensor (a [1, 128, 128, 16] activation binds as x = 16, y = 128, z = 128).
  if (cells.size() > 3) {
    int64_t z = 1;
    for (size_t i = 0; i + 2 < cells.size(); ++i) z *= cells[i];
    cells = {z, cells[cells.size() - 2], cells.back()};
  }
  const uint64_t lane = TypeSize(tensor->type);
  const uint64_t element = lane * (vector_size == 3 ? 4 : vector_size);
  // Kernels may write bound allocations, so a device that cannot share the tensor's memory gets a copy that
  // moves in before and out after every piece of device work (UploadBindings/DownloadBindings).
  // Another global bound to the same tensor through a device copy: share that copy (one tensor, one memory).
  std::shared_ptr<KilnHalBuffer> shared;
  for (const auto& [other, b] : bound_) {
    if (b.tensor == tensor && b.copied && other != name) shared = b.buffer;
  }
  KilnHalBufferDesc desc{};
  desc.struct_size = sizeof desc;
  desc.size = tensor->bytes ? tensor->bytes : 1;
  KilnHalBuffer* handle = shared.get();
  bool copied = shared != nullptr;
  const uint32_t alignment = device_->info().limits.buffer_alignment ? device_->info().limits.buffer_alignment : 1;
  if (!shared && (device_->info().flags & KILN_HAL_DEVICE_HOST_SHARED_MEMORY) &&
      reinterpret_cast<uintptr_t>(tensor->data) % alignment == 0) {
    desc.flags = KILN_HAL_BUFFER_HOST_WRAP;
    desc.host_ptr = tensor->data;
    if (d.buffer_create(device_->device(), &desc, &handle) != kKilnOk) handle = nullptr;
  }
  if (handle == nullptr) {
    if (device_->builtin()) {
      device_->ReportError("%s: binding '%s': the device cannot share the tensor's memory", module_->name().c_str(),
                           name.c_str());
      return kKilnUnsupported;
    }
    desc.flags = 0;
    desc.host_ptr = nullptr;
    if (KilnStatus s = d.buffer_create(device_->device(), &desc, &handle); s != kKilnOk || handle == nullptr) {
      return s != kKilnOk ? s : kKilnDelegateError;
    }
    copied = true;
    if (tensor->bytes > 0) {
      if (KilnStatus s = d.buffer_write(handle, 0, tensor->data, tensor->bytes); s != kKilnOk) {
        d.buffer_destroy(handle);
        return s;
      }
    }
  }
  uint32_t dims[3] = {0, 0, 0};
  for (size_t i = 0; i < cells.size(); ++i) dims[i] = static_cast<uint32_t>(cells[cells.size() - 1 - i]);
  if (cells.empty()) dims[0] = 1;
  KilnHalBufferView view{};
  view.struct_size = sizeof view;
  view.element_size = static_cast<uint32_t>(element);
  view.buffer = handle;
  view.stride_x = element;
  view.stride_y = element * (dims[0] ? dims[0] : 1);
  view.stride_z = view.stride_y * (dims[1] ? dims[1] : 1);
  if (!shared) {
    auto destroy = d.buffer_destroy;
    shared = std::shared_ptr<KilnHalBuffer>(handle, [destroy](KilnHalBuffer* b) { destroy(b); });
  }
  KilnStatus s = d.script_bind_allocation(script_, name.c_str(), &view, tensor->type, vector_size, dims[0],
                                          dims[1], dims[2]);
  if (s != kKilnOk) return s;  // `shared` releases a buffer made for this binding
  bound_[name] = {std::move(shared), tensor, copied};
  return kKilnOk;
}

KilnHalBuffer* DeviceScript::BoundCopy(const KilnTensor* tensor) const {
  for (const auto& [name, b] : bound_) {
    if (b.tensor == tensor && b.copied) return b.buffer.get();
  }
  return nullptr;
}

KilnStatus DeviceScript::ForgetTensor(const KilnTensor* tensor) {
  std::vector<std::string> names;
  for (const auto& [name, b] : bound_) {
    if (b.tensor == tensor) names.push_back(name);
  }
  KilnStatus result = kKilnOk;
  for (const std::string& name : names) {
    // Binding NULL drops the entry and destroys its buffer whatever the driver answers (an entry exists only
    // when the driver has script_bind_allocation).
    if (KilnStatus s = BindAllocation(name, nullptr); s != kKilnOk && result == kKilnOk) result = s;
  }
  return result;
}

KilnStatus DeviceScript::UploadBindings() {
  for (auto& [name, b] : bound_) {
    // A constant (a model's weights) was written when bound and cannot have changed.
    if (!b.copied || b.tensor->bytes == 0 || b.tensor->allocation == kKilnMmapRo) continue;
    if (KilnStatus s = device_->driver().buffer_write(b.buffer.get(), 0, b.tensor->data, b.tensor->bytes);
        s != kKilnOk) {
      return s;
    }
  }
  return kKilnOk;
}

KilnStatus DeviceScript::DownloadBindings() {
  for (auto& [name, b] : bound_) {
    // A constant's memory is read-only (often the mapped model file): kernels must not write it.
    if (!b.copied || b.tensor->bytes == 0 || b.tensor->allocation == kKilnMmapRo) continue;
    if (KilnStatus s = device_->driver().buffer_read(b.buffer.get(), 0, b.tensor->bytes, b.tensor->data);
        s != kKilnOk) {
      return s;
    }
  }
  return kKilnOk;
}

KilnStatus DeviceScript::Invoke(int invokable_index, const void* args, size_t size) {
  const KilnHalDriver& d = device_->driver();
  if (d.script_invoke == nullptr) {
    device_->ReportError("%s: the %s driver cannot run invokables", module_->name().c_str(),
                         device_->hal()->name().c_str());
    return kKilnUnsupported;
  }
  if (KilnStatus s = UploadBindings(); s != kKilnOk) return s;
  if (KilnStatus s = d.script_invoke(script_, static_cast<uint32_t>(invokable_index), args, size); s != kKilnOk) {
    return s;
  }
  return DownloadBindings();
}

KilnStatus DeviceScript::Run(const ForEachPlan& plan) {
  if (plan.empty) return kKilnOk;
  std::vector<std::unique_ptr<TensorBuffer>> buffers;
  if (KilnStatus s = AcquireBuffers(device_, *this, plan.tensors, plan.has_output, &buffers); s != kKilnOk) return s;
  if (KilnStatus s = UploadBindings(); s != kKilnOk) return s;
  const KilnHalDriver& d = device_->driver();
  for (const LaunchGeometry& g : plan.launches) {
    const std::vector<KilnHalBufferView> views =
        LaunchViews(g, plan.element_sizes, [&](size_t t) { return buffers[t]->get(); });
    const KilnHalForEachDesc desc = ForEachLaunch(plan, g, views);
    if (KilnStatus s = d.launch_for_each(script_, &desc); s != kKilnOk) {
      if (device_->builtin()) {
        device_->ReportError("%s: kernel '%s': the %s driver failed the launch", module_->name().c_str(),
                             module_->desc().kernels[plan.kernel_index].name.c_str(), device_->hal()->name().c_str());
      }
      return s;
    }
  }
  if (plan.has_output) {
    if (KilnStatus s = buffers.back()->Finish(); s != kKilnOk) return s;
  }
  return DownloadBindings();
}

KilnStatus DeviceScript::Run(const ReducePlan& plan, void* result) {
  const KilnHalDriver& d = device_->driver();
  if (d.launch_reduce == nullptr) {
    device_->ReportError("%s: reduction '%s': the %s driver has no reductions", module_->name().c_str(),
                         module_->desc().reductions[plan.reduction_index].name.c_str(),
                         device_->hal()->name().c_str());
    return kKilnUnsupported;
  }
  std::vector<std::unique_ptr<TensorBuffer>> buffers;
  if (KilnStatus s = AcquireBuffers(device_, *this, plan.inputs, false, &buffers); s != kKilnOk) return s;
  if (KilnStatus s = UploadBindings(); s != kKilnOk) return s;
  const LaunchGeometry& g = plan.launch;
  const std::vector<KilnHalBufferView> views =
      LaunchViews(g, plan.element_sizes, [&](size_t t) { return buffers[t]->get(); });
  KilnHalReduceDesc desc{};
  desc.struct_size = sizeof desc;
  desc.reduction_index = static_cast<uint32_t>(plan.reduction_index);
  desc.dim_x = g.dim[0];
  desc.dim_y = g.dim[1];
  desc.dim_z = g.dim[2];
  desc.num_inputs = static_cast<uint32_t>(plan.inputs.size());
  desc.inputs = views.data();
  if (KilnStatus s = d.launch_reduce(script_, &desc, plan.result_size, result); s != kKilnOk) return s;
  return DownloadBindings();
}

// ---------------------------------------------------------------------------------------------------------
// DeviceBatch

KilnStatus DeviceBatch::Begin() {
  if (!device_->hal()->has_batches()) return kKilnOk;
  KilnStatus s = device_->driver().batch_create(device_->device(), &batch_);
  if (s == kKilnOk && batch_ == nullptr) s = kKilnDelegateError;
  if (s != kKilnOk) batch_ = nullptr;
  return s;
}

KilnStatus DeviceBatch::ForEach(DeviceScript* script, const KilnHalForEachDesc& desc) {
  const KilnHalDriver& d = device_->driver();
  return batch_ != nullptr ? d.batch_record_for_each(batch_, script->handle(), &desc)
                           : d.launch_for_each(script->handle(), &desc);
}

KilnStatus DeviceBatch::Submit() {
  if (batch_ == nullptr) return kKilnOk;
  const KilnHalDriver& d = device_->driver();
  KilnHalFence* fence = nullptr;
  KilnStatus s = d.batch_submit(batch_, &fence);
  if (s == kKilnOk && fence != nullptr) {
    bool done = false;
    const uint64_t timeout = device_->hal()->options().batch_timeout_ns;
    s = d.fence_wait(fence, timeout != 0 ? timeout : UINT64_MAX, &done);
    if (s == kKilnOk && !done) {
      // Given up: the fence, the batch and the memory it names stay the driver's (destroying any of them
      // would wait for, or race with, work that may never finish).
      abandoned_ = true;
      device_->hal()->NoteError("the batch did not finish within " + std::to_string(timeout / 1000000u) +
                                " ms (the interpreter's device timeout) and was given up");
      return kKilnDelegateError;
    }
    d.fence_destroy(fence);
  } else if (s == kKilnOk) {
    s = kKilnDelegateError;
  }
  return s;
}

void DeviceBatch::Release() {
  if (batch_ != nullptr && !abandoned_) device_->driver().batch_destroy(batch_);
  batch_ = nullptr;
}

}  // namespace kiln
