#include "runtime/kernel_device.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "flatbuffers/flexbuffers.h"

namespace kiln {
namespace {

// Byte strides of a tensor with `cells` (right-aligned) broadcast against `out` dims.
std::vector<uint64_t> BroadcastStrides(const std::vector<int64_t>& cells, const std::vector<int64_t>& out,
                                       uint64_t element_size) {
  std::vector<uint64_t> strides(out.size(), 0);
  uint64_t stride = element_size;
  const size_t offset = out.size() - cells.size();
  for (size_t i = cells.size(); i-- > 0;) {
    strides[offset + i] = (cells[i] == 1 && out[offset + i] != 1) ? 0 : stride;
    stride *= static_cast<uint64_t>(cells[i]);
  }
  return strides;
}

struct Range {
  uint32_t start, end;
};

// Applies rs_script_call-style limits to one extent. False when they are out of range.
bool ApplyRange(uint32_t start, uint32_t end, uint32_t extent, Range* out) {
  if (end == 0) end = extent;
  if (start >= end || end > extent) return false;
  *out = {start, end};
  return true;
}

using Geometry = LaunchGeometry;

// Splits `out_dims` (cells) and each tensor's byte strides into launches of at most 3 dimensions. Outer
// dimensions fold into z when every tensor's strides allow it; otherwise each outer index is its own launch.
std::vector<Geometry> PlanLaunches(const std::vector<int64_t>& out_dims,
                                   const std::vector<std::vector<uint64_t>>& strides) {
  const size_t n = out_dims.size();
  const size_t tensors = strides.size();
  auto inner = [&](size_t dim_from_right) -> int64_t {
    return dim_from_right < n ? out_dims[n - 1 - dim_from_right] : 1;
  };
  auto stride_of = [&](size_t t, size_t dim_from_right) -> uint64_t {
    return dim_from_right < n ? strides[t][n - 1 - dim_from_right] : 0;
  };
  std::vector<Geometry> launches;
  Geometry g;
  g.dim[0] = static_cast<uint32_t>(inner(0));
  g.dim[1] = static_cast<uint32_t>(inner(1));
  g.base.assign(tensors, 0);
  g.strides.resize(tensors);
  for (size_t t = 0; t < tensors; ++t) g.strides[t] = {stride_of(t, 0), stride_of(t, 1), stride_of(t, 2)};
  if (n <= 3) {
    g.dim[2] = static_cast<uint32_t>(inner(2));
    launches.push_back(g);
    return launches;
  }
  // Outer dims [0, n-2) would fold into z with stride = the stride of dim n-3.
  bool foldable = true;
  for (size_t t = 0; t < tensors && foldable; ++t) {
    for (size_t i = 0; i + 3 < n; ++i) {
      if (strides[t][i] != strides[t][i + 1] * static_cast<uint64_t>(out_dims[i + 1])) foldable = false;
    }
  }
  if (foldable) {
    int64_t z = 1;
    for (size_t i = 0; i + 2 < n; ++i) z *= out_dims[i];
    g.dim[2] = static_cast<uint32_t>(z);
    launches.push_back(g);
    return launches;
  }
  // One launch (z = 1) per index of the outer n-2 dims.
  int64_t outer = 1;
  for (size_t i = 0; i + 2 < n; ++i) outer *= out_dims[i];
  for (int64_t flat = 0; flat < outer; ++flat) {
    Geometry l = g;
    l.dim[2] = 1;
    int64_t rest = flat;
    for (size_t i = n - 2; i-- > 0;) {
      const int64_t idx = rest % out_dims[i];
      rest /= out_dims[i];
      for (size_t t = 0; t < tensors; ++t) l.base[t] += static_cast<uint64_t>(idx) * strides[t][i];
    }
    launches.push_back(l);
  }
  return launches;
}

// Driver buffers for `tensors`, acquired (and uploaded); the last is an output where `last_is_output`.
KilnStatus AcquireBuffers(KernelDevice* device, const std::vector<const KilnTensor*>& tensors,
                          bool last_is_output, std::vector<std::unique_ptr<TensorBuffer>>* buffers) {
  for (size_t t = 0; t < tensors.size(); ++t) {
    const bool is_output = last_is_output && t + 1 == tensors.size();
    buffers->push_back(std::make_unique<TensorBuffer>(device, tensors[t], is_output));
    if (KilnStatus s = buffers->back()->Acquire(); s != kKilnOk) return s;
  }
  return kKilnOk;
}

}  // namespace

std::vector<KilnHalBufferView> LaunchViews(const LaunchGeometry& g,
                                           const std::vector<uint32_t>& element_sizes,
                                           const std::function<KilnHalBuffer*(size_t)>& buffer_of) {
  std::vector<KilnHalBufferView> views(element_sizes.size());
  for (size_t t = 0; t < views.size(); ++t) {
    KilnHalBufferView& v = views[t];
    v.struct_size = sizeof v;
    v.element_size = element_sizes[t];
    v.buffer = buffer_of(t);
    v.offset = g.base[t];
    v.stride_x = g.strides[t][0];
    v.stride_y = g.strides[t][1];
    v.stride_z = g.strides[t][2];
  }
  return views;
}

KilnHalForEachDesc ForEachLaunch(const ForEachPlan& plan, const LaunchGeometry& g,
                                 const std::vector<KilnHalBufferView>& views) {
  KilnHalForEachDesc desc{};
  desc.struct_size = sizeof desc;
  desc.kernel_index = static_cast<uint32_t>(plan.kernel_index);
  desc.dim_x = g.dim[0];
  desc.dim_y = g.dim[1];
  desc.dim_z = g.dim[2];
  desc.num_inputs = static_cast<uint32_t>(plan.num_inputs);
  desc.inputs = views.data();
  desc.output = plan.has_output ? &views.back() : nullptr;
  return desc;
}

// ---------------------------------------------------------------------------------------------------------
// TensorBuffer

TensorBuffer::~TensorBuffer() {
  if (buffer_ != nullptr) device_->driver().buffer_destroy(buffer_);
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
// Shapes

bool KernelCellDims(const KilnTensor& tensor, const KernelTypeDesc& element, std::vector<int64_t>* cells,
                    std::string* error) {
  if (element.kind != KernelTypeKind::kScalar && element.kind != KernelTypeKind::kStruct) {
    *error = "the kernel's element type " + KernelTypeName(element) + " cannot map over a tensor";
    return false;
  }
  cells->assign(tensor.dims.begin(), tensor.dims.end());
  if (element.kind == KernelTypeKind::kStruct) {
    // A struct element spans the innermost dimension of a uint8 tensor of its size.
    if (tensor.type != kKilnUInt8 && tensor.type != kKilnInt8) {
      *error = "a " + KernelTypeName(element) + " element needs a uint8 tensor, got " + KilnTypeGetName(tensor.type);
      return false;
    }
    if (cells->empty() || cells->back() != static_cast<int64_t>(element.size)) {
      *error = "a " + KernelTypeName(element) + " element needs an innermost dimension of " +
               std::to_string(element.size) + " bytes";
      return false;
    }
    cells->pop_back();
    return true;
  }
  if (tensor.type != element.element_type) {
    *error = std::string("the kernel takes ") + KernelTypeName(element) + " elements but the tensor is " +
             KilnTypeGetName(tensor.type);
    return false;
  }
  if (element.vector_size > 1) {
    // A 3-lane vector occupies 4 lanes, as in RenderScript allocations.
    const int64_t lanes = element.vector_size == 3 ? 4 : element.vector_size;
    if (cells->empty() || cells->back() != lanes) {
      *error = "a " + KernelTypeName(element) + " element maps to an innermost dimension of " +
               std::to_string(lanes) + ", but the tensor's is " +
               (cells->empty() ? std::string("absent (a scalar)") : std::to_string(cells->back()));
      return false;
    }
    cells->pop_back();
  }
  return true;
}

bool BroadcastCellDims(const std::vector<std::vector<int64_t>>& shapes, std::vector<int64_t>* out,
                       std::string* error) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  out->assign(rank, 1);
  for (size_t k = 0; k < shapes.size(); ++k) {
    const auto& s = shapes[k];
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = (*out)[rank - s.size() + i];
      if (s[i] == o || s[i] == 1) continue;
      if (o == 1) {
        o = s[i];
        continue;
      }
      *error = "input " + std::to_string(k) + " does not broadcast: dimension " + std::to_string(i) + " is " +
               std::to_string(s[i]) + " where another input has " + std::to_string(o);
      return false;
    }
  }
  return true;
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
  for (auto& b : bound_) d.buffer_destroy(b.second.buffer);
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
    if (old != bound_.end()) {
      d.buffer_destroy(old->second.buffer);
      bound_.erase(old);
    }
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
  if (cells.size() > 3) {
    device_->ReportError("%s: binding '%s': allocations have at most 3 dimensions, the tensor has %zu",
                         module_->name().c_str(), name.c_str(), cells.size());
    return kKilnInvalidArgument;
  }
  const uint64_t lane = TypeSize(tensor->type);
  const uint64_t element = lane * (vector_size == 3 ? 4 : vector_size);
  // Kernels may write bound allocations, so a device that cannot share the tensor's memory gets a copy that
  // moves in before and out after every piece of device work (UploadBindings/DownloadBindings).
  KilnHalBufferDesc desc{};
  desc.struct_size = sizeof desc;
  desc.size = tensor->bytes ? tensor->bytes : 1;
  KilnHalBuffer* handle = nullptr;
  bool copied = false;
  const uint32_t alignment = device_->info().limits.buffer_alignment ? device_->info().limits.buffer_alignment : 1;
  if ((device_->info().flags & KILN_HAL_DEVICE_HOST_SHARED_MEMORY) &&
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
  KilnStatus s = d.script_bind_allocation(script_, name.c_str(), &view, tensor->type, vector_size, dims[0],
                                          dims[1], dims[2]);
  if (s != kKilnOk) {
    d.buffer_destroy(handle);
    return s;
  }
  if (old != bound_.end()) d.buffer_destroy(old->second.buffer);
  bound_[name] = {handle, tensor, copied};
  return kKilnOk;
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
    if (!b.copied || b.tensor->bytes == 0) continue;
    if (KilnStatus s = device_->driver().buffer_write(b.buffer, 0, b.tensor->data, b.tensor->bytes); s != kKilnOk) {
      return s;
    }
  }
  return kKilnOk;
}

KilnStatus DeviceScript::DownloadBindings() {
  for (auto& [name, b] : bound_) {
    if (!b.copied || b.tensor->bytes == 0) continue;
    if (KilnStatus s = device_->driver().buffer_read(b.buffer, 0, b.tensor->bytes, b.tensor->data); s != kKilnOk) {
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
  if (KilnStatus s = AcquireBuffers(device_, plan.tensors, plan.has_output, &buffers); s != kKilnOk) return s;
  if (KilnStatus s = UploadBindings(); s != kKilnOk) return s;
  const KilnHalDriver& d = device_->driver();
  for (const Geometry& g : plan.launches) {
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
  if (KilnStatus s = AcquireBuffers(device_, plan.inputs, false, &buffers); s != kKilnOk) return s;
  if (KilnStatus s = UploadBindings(); s != kKilnOk) return s;
  const Geometry& g = plan.launch;
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
// Planning launches

KilnStatus PlanForEach(const KernelModule& module, int kernel_index, const KilnTensor* const* inputs, int num_inputs,
                       KilnTensor* output, const KilnLaunchOptions* options, KernelDevice* reporter,
                       ForEachPlan* plan) {
  const KernelDesc& k = module.desc().kernels[kernel_index];
  const std::string where = module.name() + ": kernel '" + k.name + "'";
  if (num_inputs != static_cast<int>(k.inputs.size())) {
    reporter->ReportError("%s takes %zu input(s), %d given", where.c_str(), k.inputs.size(), num_inputs);
    return kKilnInvalidArgument;
  }
  if (k.has_output() != (output != nullptr)) {
    reporter->ReportError("%s %s", where.c_str(),
                          k.has_output() ? "returns a value: an output tensor is required"
                                         : "returns void: pass no output tensor");
    return kKilnInvalidArgument;
  }
  std::vector<std::vector<int64_t>> cells(num_inputs);
  std::string error;
  for (int i = 0; i < num_inputs; ++i) {
    if (inputs[i] == nullptr || inputs[i]->data == nullptr) {
      reporter->ReportError("%s: input %d is NULL or has no memory", where.c_str(), i);
      return kKilnInvalidArgument;
    }
    if (!KernelCellDims(*inputs[i], k.inputs[i], &cells[i], &error)) {
      reporter->ReportError("%s: input %d: %s", where.c_str(), i, error.c_str());
      return kKilnInvalidArgument;
    }
  }
  std::vector<int64_t> out_cells;
  if (output != nullptr) {
    if (output->data == nullptr && output->bytes > 0) {
      reporter->ReportError("%s: the output has no memory", where.c_str());
      return kKilnInvalidArgument;
    }
    if (!KernelCellDims(*output, k.output, &out_cells, &error)) {
      reporter->ReportError("%s: output: %s", where.c_str(), error.c_str());
      return kKilnInvalidArgument;
    }
    std::vector<std::vector<int64_t>> all = cells;
    all.push_back(out_cells);
    std::vector<int64_t> joint;
    if (!BroadcastCellDims(all, &joint, &error) || joint != out_cells) {
      reporter->ReportError("%s: the inputs do not broadcast to the output's shape%s%s", where.c_str(),
                            error.empty() ? "" : ": ", error.c_str());
      return kKilnInvalidArgument;
    }
  } else if (!BroadcastCellDims(cells, &out_cells, &error)) {
    reporter->ReportError("%s: %s", where.c_str(), error.c_str());
    return kKilnInvalidArgument;
  }
  plan->kernel_index = kernel_index;
  plan->num_inputs = num_inputs;
  plan->has_output = output != nullptr;
  plan->tensors.assign(inputs, inputs + num_inputs);
  if (output != nullptr) plan->tensors.push_back(output);
  plan->element_sizes.clear();
  for (int i = 0; i < num_inputs; ++i) plan->element_sizes.push_back(k.inputs[i].size);
  if (output != nullptr) plan->element_sizes.push_back(k.output.size);
  plan->launches.clear();
  plan->empty = false;
  for (int64_t d : out_cells) {
    if (d == 0) {
      plan->empty = true;  // nothing to compute
      return kKilnOk;
    }
    if (d > UINT32_MAX) {
      reporter->ReportError("%s: a dimension of %lld cells is too large for one launch", where.c_str(),
                            static_cast<long long>(d));
      return kKilnInvalidArgument;
    }
  }
  std::vector<std::vector<uint64_t>> strides;
  for (int i = 0; i < num_inputs; ++i) strides.push_back(BroadcastStrides(cells[i], out_cells, k.inputs[i].size));
  if (output != nullptr) strides.push_back(BroadcastStrides(out_cells, out_cells, k.output.size));
  plan->launches = PlanLaunches(out_cells, strides);
  if (options != nullptr) {
    const bool uses_coords = (k.signature & (kKernelSigX | kKernelSigY | kKernelSigZ)) != 0;
    if (plan->launches.size() != 1) {
      reporter->ReportError("%s: launch options need a tensor of at most 3 dimensions", where.c_str());
      return kKilnUnsupported;
    }
    Geometry& g = plan->launches[0];
    Range r[3];
    if (!ApplyRange(options->x_start, options->x_end, g.dim[0], &r[0]) ||
        !ApplyRange(options->y_start, options->y_end, g.dim[1], &r[1]) ||
        !ApplyRange(options->z_start, options->z_end, g.dim[2], &r[2])) {
      reporter->ReportError("%s: launch options are outside the %ux%ux%u launch", where.c_str(), g.dim[0], g.dim[1],
                            g.dim[2]);
      return kKilnInvalidArgument;
    }
    if (uses_coords && (r[0].start || r[1].start || r[2].start)) {
      reporter->ReportError("%s reads its coordinates, so a launch range must start at 0", where.c_str());
      return kKilnUnsupported;
    }
    for (int d = 0; d < 3; ++d) {
      g.dim[d] = r[d].end - r[d].start;
      for (size_t t = 0; t < g.base.size(); ++t) g.base[t] += r[d].start * g.strides[t][d];
    }
  }
  return kKilnOk;
}

KilnStatus PlanReduce(const KernelModule& module, int reduction_index, const KilnTensor* const* inputs,
                      int num_inputs, size_t result_size, const KilnLaunchOptions* options, KernelDevice* reporter,
                      ReducePlan* plan) {
  const ReductionDesc& r = module.desc().reductions[reduction_index];
  const std::string where = module.name() + ": reduction '" + r.name + "'";
  if (num_inputs != static_cast<int>(r.inputs.size()) || result_size != r.result.size) {
    reporter->ReportError("%s takes %zu input(s) and a %u-byte result; %d input(s) and %zu bytes given",
                          where.c_str(), r.inputs.size(), r.result.size, num_inputs, result_size);
    return kKilnInvalidArgument;
  }
  std::vector<std::vector<int64_t>> cells(num_inputs);
  std::string error;
  for (int i = 0; i < num_inputs; ++i) {
    if (inputs[i] == nullptr || !KernelCellDims(*inputs[i], r.inputs[i], &cells[i], &error)) {
      reporter->ReportError("%s: input %d: %s", where.c_str(), i, inputs[i] ? error.c_str() : "NULL");
      return kKilnInvalidArgument;
    }
  }
  std::vector<int64_t> dims;
  if (!BroadcastCellDims(cells, &dims, &error)) {
    reporter->ReportError("%s: %s", where.c_str(), error.c_str());
    return kKilnInvalidArgument;
  }
  std::vector<std::vector<uint64_t>> strides;
  for (int i = 0; i < num_inputs; ++i) strides.push_back(BroadcastStrides(cells[i], dims, r.inputs[i].size));
  std::vector<Geometry> launches = PlanLaunches(dims, strides);
  if (launches.size() != 1 || (options != nullptr && options->struct_size != 0 &&
                               (options->x_start || options->x_end || options->y_start || options->y_end ||
                                options->z_start || options->z_end))) {
    reporter->ReportError("%s: reductions run over whole inputs of at most 3 foldable dimensions", where.c_str());
    return kKilnUnsupported;
  }
  plan->reduction_index = reduction_index;
  plan->inputs.assign(inputs, inputs + num_inputs);
  plan->element_sizes.clear();
  for (int i = 0; i < num_inputs; ++i) plan->element_sizes.push_back(r.inputs[i].size);
  plan->launch = launches[0];
  plan->result_size = result_size;
  return kKilnOk;
}

// ---------------------------------------------------------------------------------------------------------
// KernelScript

std::unique_ptr<KernelScript> KernelScript::Create(DeviceSet* devices, std::shared_ptr<const KernelModule> module,
                                                   void* user_data) {
  std::unique_ptr<KernelScript> s(new KernelScript());
  s->devices_ = devices;
  s->module_ = std::move(module);
  s->user_data_ = user_data;
  s->placement_ = &devices->Place(s->module_);
  bool any_accel = false, any_cpu = !s->module_->desc().invokables.empty();
  for (bool on : s->placement_->kernel_on_accelerator) (on ? any_accel : any_cpu) = true;
  for (bool on : s->placement_->reduction_on_accelerator) (on ? any_accel : any_cpu) = true;
  KernelDevice* accel = devices->accelerator();
  if (any_accel && accel != nullptr) {
    s->accel_.script = DeviceScript::Create(accel, s->module_, user_data);
    if (s->accel_.script == nullptr) {
      s->accel_failed_ = true;
      const std::string errors = accel->hal()->TakeErrors();
      devices->log()->Add(KILN_DECISION_FALLBACK, ModuleLabel(*s->module_),
                          "script of " + ModuleLabel(*s->module_) + ": " + accel->label() + " could not create it" +
                              (errors.empty() ? "" : ": " + errors) + "; its kernels run on " +
                              devices->cpu()->label());
    } else {
      s->ReadBack(&s->accel_);
    }
  }
  if (any_cpu || s->accel_.script == nullptr) {
    if (s->Cpu() == nullptr) return nullptr;
  }
  return s;
}

KernelScript::~KernelScript() = default;

KernelDevice* KernelScript::reporter() const { return devices_->cpu(); }

std::string KernelScript::Subject(const char* what, const std::string& name) const {
  return std::string(what) + " '" + name + "' of " + ModuleLabel(*module_);
}

bool KernelScript::accelerator_usable() const {
  return !accel_failed_ && accel_.script != nullptr && devices_->accelerator() != nullptr;
}

KernelScript::Instance* KernelScript::Cpu() {
  if (cpu_.script != nullptr) return &cpu_;
  cpu_.script = DeviceScript::Create(devices_->cpu(), module_, user_data_);
  if (cpu_.script == nullptr) return nullptr;
  if (shadow_.empty()) {
    ReadBack(&cpu_);
  } else if (Sync(&cpu_) != kKilnOk) {
    cpu_.script.reset();
    return nullptr;
  }
  if (ApplyBindings(&cpu_) != kKilnOk) {
    cpu_.script.reset();
    cpu_.seen.clear();
    return nullptr;
  }
  return &cpu_;
}

KilnStatus KernelScript::Sync(Instance* instance) {
  for (const auto& [name, bytes] : shadow_) {
    uint64_t& seen = instance->seen[name];
    const uint64_t version = version_[name];
    if (seen == version) continue;
    if (KilnStatus s = instance->script->SetGlobal(name, bytes.data(), bytes.size()); s != kKilnOk) return s;
    seen = version;
  }
  return kKilnOk;
}

void KernelScript::ReadBack(Instance* instance) {
  for (const GlobalDesc& g : module_->desc().globals) {
    if (!g.settable() || g.is_allocation || g.type.kind == KernelTypeKind::kPointer) continue;
    std::vector<uint8_t> bytes(g.size);
    if (instance->script->GetGlobal(g.name, bytes.data(), bytes.size()) != kKilnOk) continue;
    auto it = shadow_.find(g.name);
    if (it == shadow_.end() || it->second != bytes) {
      shadow_[g.name] = std::move(bytes);
      version_[g.name] = next_version_++;
    }
    instance->seen[g.name] = version_[g.name];
  }
}

KilnStatus KernelScript::ApplyBindings(Instance* instance) {
  for (const auto& [name, binding] : bindings_) {
    if (KilnStatus s = instance->script->BindAllocation(name, binding.tensor, binding.lanes); s != kKilnOk) return s;
  }
  return kKilnOk;
}

void KernelScript::ForgetTensor(const KilnTensor* tensor) {
  if (tensor == nullptr) return;
  for (auto it = bindings_.begin(); it != bindings_.end();) {
    if (it->second.tensor != tensor) {
      ++it;
      continue;
    }
    forgotten_.insert(it->first);
    it = bindings_.erase(it);
  }
  // The built-in driver unbinds a bound global without fail. Should it not, the CPU instance goes, and Cpu()
  // makes a fresh one from the shadow and bindings_ when it is next needed: no driver state may keep pointing
  // at the tensor's memory.
  if (cpu_.script != nullptr && cpu_.script->ForgetTensor(tensor) != kKilnOk) {
    cpu_.script.reset();
    cpu_.seen.clear();
  }
  // The accelerator instance too when it is no longer used: its bindings name the tensor, and its buffers may
  // wrap the tensor's memory.
  if (accel_.script != nullptr) {
    if (KilnStatus s = accel_.script->ForgetTensor(tensor); s != kKilnOk && accelerator_usable()) {
      AcceleratorFailed("unbinding a deleted tensor from " + ModuleLabel(*module_), s);
    }
  }
}

KilnStatus KernelScript::NoteForgotten(KilnStatus status) {
  if (status == kKilnOk || forgotten_.empty()) return status;
  std::string names;
  for (const std::string& name : forgotten_) names += (names.empty() ? "'" : ", '") + name + "'";
  const bool one = forgotten_.size() == 1;
  reporter()->ReportError("%s: note: global%s %s %s no tensor bound: %s tensor was deleted (KilnTensorDelete) while "
                          "bound, and nothing was bound since",
                          module_->name().c_str(), one ? "" : "s", names.c_str(), one ? "has" : "have",
                          one ? "its" : "their");
  return status;
}

KilnStatus KernelScript::CheckPointerGlobals(const char* what, const std::string& name,
                                             const std::vector<std::string>& pointer_globals) const {
  KilnStatus status = kKilnOk;
  for (const std::string& global : pointer_globals) {
    if (bindings_.count(global)) continue;
    reporter()->ReportError(
        "%s: %s '%s' reads pointer global '%s', which is not bound%s (bind a tensor with "
        "KilnScriptBindAllocation)",
        module_->name().c_str(), what, name.c_str(), global.c_str(),
        forgotten_.count(global) ? ": its tensor was deleted (KilnTensorDelete) while bound" : "");
    status = kKilnInvalidArgument;
  }
  return status;
}

KilnStatus KernelScript::CheckKernelBindings(int kernel_index) const {
  const KernelDesc& k = module_->desc().kernels[kernel_index];
  return CheckPointerGlobals("kernel", k.name, k.pointer_globals);
}

void KernelScript::AcceleratorFailed(const std::string& what, KilnStatus status) {
  KernelDevice* accel = accel_.script ? accel_.script->device() : nullptr;
  const std::string errors = accel ? accel->hal()->TakeErrors() : "";
  devices_->AcceleratorFailed(what, status, errors);
}

bool KernelScript::KernelOnAccelerator(int kernel_index) const {
  return accelerator_usable() && placement_->kernel_on_accelerator[kernel_index];
}

KernelDevice* KernelScript::DeviceFor(int kernel_index) const {
  return KernelOnAccelerator(kernel_index) ? devices_->accelerator() : devices_->cpu();
}

DeviceScript* KernelScript::PrepareAccelerator() {
  if (!accelerator_usable()) return nullptr;
  if (KilnStatus s = Sync(&accel_); s != kKilnOk) {
    AcceleratorFailed("setting the globals of " + ModuleLabel(*module_), s);
    return nullptr;
  }
  return accel_.script.get();
}

KilnStatus KernelScript::OnCpu(const std::function<KilnStatus(DeviceScript*)>& work) {
  Instance* cpu = Cpu();
  if (cpu == nullptr) return kKilnError;
  if (KilnStatus s = Sync(cpu); s != kKilnOk) return s;
  const KilnStatus s = work(cpu->script.get());
  ReadBack(cpu);
  return s;
}

KilnStatus KernelScript::RunOnCpu(const ForEachPlan& plan) {
  return OnCpu([&](DeviceScript* script) { return script->Run(plan); });
}

void KernelScript::AcceleratorWorkDone() {
  if (accel_.script != nullptr) ReadBack(&accel_);
}

KilnStatus KernelScript::SetGlobal(const std::string& name, const void* data, size_t size) {
  const GlobalDesc* g = module_->desc().FindGlobal(name);
  if (g == nullptr) {
    reporter()->ReportError("%s: the script has no global '%s'", module_->name().c_str(), name.c_str());
    return kKilnInvalidArgument;
  }
  if (g->is_const) {
    reporter()->ReportError("%s: global '%s' is const and cannot be set", module_->name().c_str(), name.c_str());
    return kKilnInvalidArgument;
  }
  if (g->is_allocation || g->type.kind == KernelTypeKind::kPointer) {
    reporter()->ReportError("%s: global '%s' is an allocation: bind a tensor with KilnScriptBindAllocation",
                            module_->name().c_str(), name.c_str());
    return kKilnInvalidArgument;
  }
  if (size != g->size) {
    reporter()->ReportError("%s: global '%s' (%s) is %u bytes, %zu given", module_->name().c_str(), name.c_str(),
                            KernelTypeName(g->type).c_str(), g->size, size);
    return kKilnInvalidArgument;
  }
  const auto* bytes = static_cast<const uint8_t*>(data);
  shadow_[name].assign(bytes, bytes + size);
  version_[name] = next_version_++;
  // The CPU instance takes it now, so a driver-side problem surfaces at this call; a device instance takes it
  // before its next launch.
  if (cpu_.script != nullptr) return Sync(&cpu_);
  return kKilnOk;
}

KilnStatus KernelScript::GetGlobal(const std::string& name, void* data, size_t size) {
  const GlobalDesc* g = module_->desc().FindGlobal(name);
  if (g == nullptr || size != g->size) {
    reporter()->ReportError("%s: %s", module_->name().c_str(),
                            g == nullptr ? ("the script has no global '" + name + "'").c_str()
                                         : ("global '" + name + "' is " + std::to_string(g->size) + " bytes, " +
                                            std::to_string(size) + " asked for")
                                               .c_str());
    return kKilnInvalidArgument;
  }
  auto it = shadow_.find(name);
  if (it != shadow_.end() && it->second.size() == size) {
    std::memcpy(data, it->second.data(), size);
    return kKilnOk;
  }
  Instance* instance = cpu_.script != nullptr ? &cpu_ : accelerator_usable() ? &accel_ : Cpu();
  if (instance == nullptr) return kKilnError;
  return instance->script->GetGlobal(name, data, size);
}

KilnStatus KernelScript::BindAllocation(const std::string& name, KilnTensor* tensor, uint32_t lanes) {
  const GlobalDesc* g = module_->desc().FindGlobal(name);
  if (g == nullptr || !(g->is_allocation || g->type.kind == KernelTypeKind::kPointer)) {
    reporter()->ReportError("%s: '%s' is not an rs_allocation or pointer global", module_->name().c_str(),
                            name.c_str());
    return kKilnInvalidArgument;
  }
  if (tensor != nullptr && tensor->data == nullptr) {
    reporter()->ReportError("%s: the tensor bound to '%s' has no memory", module_->name().c_str(), name.c_str());
    return kKilnInvalidArgument;
  }
  if (cpu_.script != nullptr) {
    if (KilnStatus s = cpu_.script->BindAllocation(name, tensor, lanes); s != kKilnOk) return s;
  }
  if (tensor == nullptr) {
    bindings_.erase(name);
  } else {
    bindings_[name] = {tensor, lanes};
  }
  forgotten_.erase(name);
  if (accelerator_usable()) {
    if (KilnStatus s = accel_.script->BindAllocation(name, tensor, lanes); s != kKilnOk) {
      AcceleratorFailed("binding '" + name + "' of " + ModuleLabel(*module_), s);
      if (Cpu() == nullptr) return kKilnError;
    }
  }
  return kKilnOk;
}

KilnStatus KernelScript::ForEach(int kernel_index, const KilnTensor* const* inputs, int num_inputs,
                                 KilnTensor* output, const KilnLaunchOptions* options) {
  ForEachPlan plan;
  if (KilnStatus s = PlanForEach(*module_, kernel_index, inputs, num_inputs, output, options, reporter(), &plan);
      s != kKilnOk) {
    return s;
  }
  // Before any driver: the generated code would dereference an unbound pointer global (NULL on the CPU).
  if (KilnStatus s = CheckKernelBindings(kernel_index); s != kKilnOk) return s;
  if (KernelOnAccelerator(kernel_index)) {
    KilnStatus s = Sync(&accel_);
    if (s == kKilnOk) s = accel_.script->Run(plan);
    if (s == kKilnOk) {
      ReadBack(&accel_);  // kernels may change globals (rsAtomicInc on a global)
      return kKilnOk;
    }
    AcceleratorFailed(Subject("kernel", module_->desc().kernels[kernel_index].name), s);
  }
  return NoteForgotten(RunOnCpu(plan));
}

KilnStatus KernelScript::Invoke(int invokable_index, const void* args, size_t size) {
  const InvokableDesc& inv = module_->desc().invokables[invokable_index];
  if (size != inv.args_size) {
    reporter()->ReportError("%s: invokable '%s' takes %u bytes of arguments, %zu given", module_->name().c_str(),
                            inv.name.c_str(), inv.args_size, size);
    return kKilnInvalidArgument;
  }
  if (KilnStatus s = CheckPointerGlobals("invokable", inv.name, inv.pointer_globals); s != kKilnOk) return s;
  return NoteForgotten(OnCpu([&](DeviceScript* script) { return script->Invoke(invokable_index, args, size); }));
}

KilnStatus KernelScript::Reduce(int reduction_index, const KilnTensor* const* inputs, int num_inputs, void* result,
                                size_t result_size, const KilnLaunchOptions* options) {
  ReducePlan plan;
  if (KilnStatus s = PlanReduce(*module_, reduction_index, inputs, num_inputs, result_size, options, reporter(), &plan);
      s != kKilnOk) {
    return s;
  }
  const ReductionDesc& r = module_->desc().reductions[reduction_index];
  if (KilnStatus s = CheckPointerGlobals("reduction", r.name, r.pointer_globals); s != kKilnOk) return s;
  if (accelerator_usable() && placement_->reduction_on_accelerator[reduction_index]) {
    // The device writes a scratch result, so a failed attempt never leaves half a result behind.
    std::vector<uint8_t> scratch(result_size);
    KilnStatus s = Sync(&accel_);
    if (s == kKilnOk) s = accel_.script->Run(plan, scratch.data());
    if (s == kKilnOk) {
      std::memcpy(result, scratch.data(), result_size);
      ReadBack(&accel_);
      return kKilnOk;
    }
    AcceleratorFailed(Subject("reduction", module_->desc().reductions[reduction_index].name), s);
  }
  return NoteForgotten(OnCpu([&](DeviceScript* script) { return script->Run(plan, result); }));
}

KilnStatus KernelScript::SetGlobalsFromOptions(const uint8_t* data, size_t size, const std::string& what) {
  if (data == nullptr || size == 0) return kKilnOk;
  std::vector<uint8_t> reuse;
  if (!flexbuffers::VerifyBuffer(data, size, &reuse)) {
    reporter()->ReportError("%s: the custom options are not a valid FlexBuffers map", what.c_str());
    return kKilnInvalidArgument;
  }
  const flexbuffers::Reference root = flexbuffers::GetRoot(data, size);
  if (!root.IsMap()) {
    reporter()->ReportError("%s: the custom options are not a FlexBuffers map", what.c_str());
    return kKilnInvalidArgument;
  }
  const flexbuffers::Map map = root.AsMap();
  const flexbuffers::TypedVector keys = map.Keys();
  const flexbuffers::Vector values = map.Values();
  std::string names;
  for (const GlobalDesc& g : module_->desc().globals) names += (names.empty() ? "" : ", ") + g.name;
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string key = keys[i].AsKey();
    const flexbuffers::Reference v = values[i];
    const GlobalDesc* g = module_->desc().FindGlobal(key);
    if (g == nullptr) {
      reporter()->ReportError("%s: custom option '%s' matches no global of %s (its globals: %s)", what.c_str(),
                           key.c_str(), module_->name().c_str(), names.empty() ? "none" : names.c_str());
      return kKilnInvalidArgument;
    }
    if (!g->settable() || g->is_allocation || g->type.kind != KernelTypeKind::kScalar) {
      reporter()->ReportError("%s: custom option '%s' cannot set global '%s %s' (%s)", what.c_str(), key.c_str(),
                           KernelTypeName(g->type).c_str(), key.c_str(),
                           g->is_const ? "it is const" : "only numeric scalars and vectors can be set");
      return kKilnInvalidArgument;
    }
    const uint32_t lanes = g->type.vector_size;
    std::vector<double> numbers;
    bool is_float_value = false;
    if (v.IsFloat() || v.IsInt() || v.IsUInt() || v.IsBool()) {
      numbers.push_back(v.AsDouble());
      is_float_value = v.IsFloat();
    } else if (v.IsTypedVector() || v.IsFixedTypedVector()) {
      const flexbuffers::TypedVector vec = v.IsTypedVector() ? v.AsTypedVector() : flexbuffers::TypedVector::EmptyTypedVector();
      const flexbuffers::FixedTypedVector fixed =
          v.IsFixedTypedVector() ? v.AsFixedTypedVector() : flexbuffers::FixedTypedVector::EmptyFixedTypedVector();
      const size_t count = v.IsTypedVector() ? vec.size() : fixed.size();
      for (size_t k = 0; k < count; ++k) {
        const flexbuffers::Reference e = v.IsTypedVector() ? vec[k] : fixed[k];
        numbers.push_back(e.AsDouble());
        is_float_value = is_float_value || e.IsFloat();
      }
    } else if (v.IsVector()) {
      const flexbuffers::Vector vec = v.AsVector();
      for (size_t k = 0; k < vec.size(); ++k) {
        numbers.push_back(vec[k].AsDouble());
        is_float_value = is_float_value || vec[k].IsFloat();
      }
    }
    const KilnType lane_type = g->type.element_type;
    const bool global_is_float = lane_type == kKilnFloat32 || lane_type == kKilnFloat64 || lane_type == kKilnFloat16;
    if (numbers.size() != lanes || (is_float_value && !global_is_float)) {
      reporter()->ReportError("%s: custom option '%s' has the wrong type for global '%s %s' (%s)", what.c_str(),
                           key.c_str(), KernelTypeName(g->type).c_str(), key.c_str(),
                           numbers.size() != lanes ? ("expected " + std::to_string(lanes) + " number(s), got " +
                                                      std::to_string(numbers.size()))
                                                         .c_str()
                                                   : "a float value for an integer global");
      return kKilnInvalidArgument;
    }
    std::vector<uint8_t> bytes(g->size, 0);
    const size_t lane_size = TypeSize(lane_type);
    for (uint32_t k = 0; k < lanes; ++k) {
      uint8_t* p = bytes.data() + k * lane_size;
      const double x = numbers[k];
      switch (lane_type) {
        case kKilnFloat32: { float f = static_cast<float>(x); std::memcpy(p, &f, 4); break; }
        case kKilnFloat64: std::memcpy(p, &x, 8); break;
        case kKilnInt8: case kKilnBool: { int8_t q = static_cast<int8_t>(x); std::memcpy(p, &q, 1); break; }
        case kKilnUInt8: { uint8_t q = static_cast<uint8_t>(x); std::memcpy(p, &q, 1); break; }
        case kKilnInt16: { int16_t q = static_cast<int16_t>(x); std::memcpy(p, &q, 2); break; }
        case kKilnUInt16: { uint16_t q = static_cast<uint16_t>(x); std::memcpy(p, &q, 2); break; }
        case kKilnInt32: { int32_t q = static_cast<int32_t>(x); std::memcpy(p, &q, 4); break; }
        case kKilnUInt32: { uint32_t q = static_cast<uint32_t>(x); std::memcpy(p, &q, 4); break; }
        case kKilnInt64: { int64_t q = v.IsVector() ? static_cast<int64_t>(x) : v.AsInt64(); std::memcpy(p, &q, 8); break; }
        case kKilnUInt64: { uint64_t q = static_cast<uint64_t>(x); std::memcpy(p, &q, 8); break; }
        default:
          reporter()->ReportError("%s: custom option '%s': globals of type %s cannot be set from options", what.c_str(),
                               key.c_str(), KernelTypeName(g->type).c_str());
          return kKilnUnsupported;
      }
    }
    if (KilnStatus s = SetGlobal(key, bytes.data(), bytes.size()); s != kKilnOk) return s;
  }
  return kKilnOk;
}

}  // namespace kiln
