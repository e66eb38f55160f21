#include "runtime/kernel_device.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backends/cpu/cpu_driver.h"
#include "flatbuffers/flexbuffers.h"

namespace kiln {
namespace {

// Reported by a driver call that failed; the driver has already sent its message through report_error.
const char* StatusName(KilnStatus s) {
  switch (s) {
    case kKilnOk: return "ok";
    case kKilnError: return "error";
    case kKilnDelegateError: return "driver error";
    case kKilnUnresolvedOps: return "unresolved ops";
    case kKilnInvalidArgument: return "invalid argument";
    case kKilnInvalidModel: return "invalid module";
    case kKilnUnsupported: return "unsupported";
    case kKilnOutOfMemory: return "out of memory";
  }
  return "unknown status";
}

// A tensor as a driver buffer: wrapped without a copy when the device shares host memory and the data is
// aligned, otherwise copied into device memory (and back, for outputs).
class TensorBuffer {
 public:
  TensorBuffer(KernelDevice* device, const KilnTensor* tensor, bool is_output)
      : device_(device), tensor_(tensor), is_output_(is_output) {}
  ~TensorBuffer() {
    if (buffer_ != nullptr) device_->driver().buffer_destroy(buffer_);
  }
  KilnStatus Acquire() {
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
      if (d.buffer_create(device_->device(), &desc, &buffer_) == kKilnOk) return kKilnOk;
      buffer_ = nullptr;
      desc.flags = 0;
      desc.host_ptr = nullptr;
    }
    KilnStatus s = d.buffer_create(device_->device(), &desc, &buffer_);
    if (s != kKilnOk) return s;
    copied_ = true;
    if (!is_output_ && tensor_->bytes > 0) return d.buffer_write(buffer_, 0, tensor_->data, tensor_->bytes);
    return kKilnOk;
  }
  // Copies a copied output back into the tensor.
  KilnStatus Finish() {
    if (!copied_ || !is_output_ || tensor_->bytes == 0) return kKilnOk;
    return device_->driver().buffer_read(buffer_, 0, tensor_->bytes, tensor_->data);
  }
  KilnHalBuffer* get() const { return buffer_; }

 private:
  KernelDevice* device_;
  const KilnTensor* tensor_;
  bool is_output_;
  bool copied_ = false;
  KilnHalBuffer* buffer_ = nullptr;
};

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

}  // namespace

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

std::unique_ptr<KernelDevice> KernelDevice::OpenCpu(const KernelDeviceOptions& options) {
  std::unique_ptr<KernelDevice> d(new KernelDevice());
  d->options_ = options;
  if (options.num_threads > 0) d->threads_config_ = std::to_string(options.num_threads);
  d->services_.struct_size = sizeof(KilnHalServices);
  d->services_.user_data = d.get();
  d->services_.log = &KernelDevice::Log;
  d->services_.report_error = &KernelDevice::DriverError;
  d->services_.allocate = [](void*, size_t size, size_t alignment) -> void* {
    return std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  };
  d->services_.free = [](void*, void* p) { std::free(p); };
  d->services_.now_ns = [](void*) -> uint64_t {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
  };
  d->services_.get_config = &KernelDevice::GetConfig;
  d->services_.send_to_client = &KernelDevice::SendToClient;
  d->driver_.struct_size = sizeof(KilnHalDriver);
  if (kiln_cpu_driver_query(KILN_HAL_VERSION_MAJOR, KILN_HAL_VERSION_MINOR, &d->services_, &d->driver_) != kKilnOk) {
    d->ReportError("the CPU driver refused to start");
    return nullptr;
  }
  d->driver_ready_ = true;
  uint32_t count = 0;
  if (d->driver_.device_count(d->driver_.instance, &count) != kKilnOk || count == 0) {
    d->ReportError("the CPU driver has no device");
    return nullptr;
  }
  d->info_.struct_size = sizeof(KilnHalDeviceInfo);
  d->info_.limits.struct_size = sizeof(KilnHalDeviceLimits);
  if (d->driver_.device_get_info(d->driver_.instance, 0, &d->info_) != kKilnOk ||
      d->driver_.device_open(d->driver_.instance, 0, &d->device_) != kKilnOk) {
    d->ReportError("cannot open the CPU device");
    return nullptr;
  }
  return d;
}

KernelDevice::~KernelDevice() {
  for (auto& entry : modules_) driver_.module_unload(entry.second.handle);
  if (device_ != nullptr) driver_.device_close(device_);
  if (driver_ready_) driver_.shutdown(driver_.instance);
}

void KernelDevice::ReportError(const char* format, ...) {
  va_list args;
  va_start(args, format);
  ReportV(options_.reporter, options_.reporter_user_data, format, args);
  va_end(args);
}

void KernelDevice::Log(void* self, KilnHalLogLevel level, const char* message) {
  // rsDebug and driver warnings reach the user's error reporter; tracing does not.
  if (level == kKilnHalLogInfo) return;
  static_cast<KernelDevice*>(self)->ReportError("%s", message);
}

void KernelDevice::DriverError(void* self, KilnStatus status, const char* message) {
  static_cast<KernelDevice*>(self)->ReportError("%s (%s)", message, StatusName(status));
}

const char* KernelDevice::GetConfig(void* self, const char* key) {
  auto* d = static_cast<KernelDevice*>(self);
  if (std::strcmp(key, "cpu.threads") == 0 && !d->threads_config_.empty()) return d->threads_config_.c_str();
  return nullptr;  // the driver's defaults (and its environment variables) apply
}

void KernelDevice::SendToClient(void* self, void* script_user_data, int32_t command, const void* data,
                                size_t size) {
  auto* d = static_cast<KernelDevice*>(self);
  if (d->options_.on_message) d->options_.on_message(script_user_data, command, data, size);
}

KilnHalModule* KernelDevice::LoadModule(const std::shared_ptr<const KernelModule>& module) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = modules_.find(module.get());
  if (it != modules_.end()) return it->second.handle;
  KilnHalModule* handle = nullptr;
  if (driver_.module_load(device_, &module->hal_desc(), &handle) != kKilnOk) {
    ReportError("%s: the %s driver could not load the module", module->name().c_str(), driver_.name);
    return nullptr;
  }
  modules_[module.get()] = {module, handle};
  return handle;
}

std::unique_ptr<KernelScript> KernelScript::Create(KernelDevice* device, std::shared_ptr<const KernelModule> module,
                                                   void* user_data) {
  std::unique_ptr<KernelScript> s(new KernelScript());
  s->device_ = device;
  s->module_ = std::move(module);
  s->hal_module_ = device->LoadModule(s->module_);
  if (s->hal_module_ == nullptr) return nullptr;
  if (device->driver().script_create(s->hal_module_, user_data, &s->script_) != kKilnOk) {
    device->ReportError("%s: could not create a script instance (init() failed?)", s->module_->name().c_str());
    return nullptr;
  }
  return s;
}

KernelScript::~KernelScript() {
  const KilnHalDriver& d = device_->driver();
  if (script_ != nullptr) d.script_destroy(script_);
  for (auto& b : bound_) d.buffer_destroy(b.second);
}

KilnStatus KernelScript::SetGlobal(const std::string& name, const void* data, size_t size) {
  const GlobalDesc* g = module_->desc().FindGlobal(name);
  if (g == nullptr) {
    device_->ReportError("%s: the script has no global '%s'", module_->name().c_str(), name.c_str());
    return kKilnInvalidArgument;
  }
  if (g->is_const) {
    device_->ReportError("%s: global '%s' is const and cannot be set", module_->name().c_str(), name.c_str());
    return kKilnInvalidArgument;
  }
  if (g->is_allocation || g->type.kind == KernelTypeKind::kPointer) {
    device_->ReportError("%s: global '%s' is an allocation: bind a tensor with KilnScriptBindAllocation",
                         module_->name().c_str(), name.c_str());
    return kKilnInvalidArgument;
  }
  if (size != g->size) {
    device_->ReportError("%s: global '%s' (%s) is %u bytes, %zu given", module_->name().c_str(), name.c_str(),
                         KernelTypeName(g->type).c_str(), g->size, size);
    return kKilnInvalidArgument;
  }
  return device_->driver().script_set_global(script_, name.c_str(), data, size);
}

KilnStatus KernelScript::GetGlobal(const std::string& name, void* data, size_t size) const {
  const GlobalDesc* g = module_->desc().FindGlobal(name);
  if (g == nullptr || size != g->size) {
    device_->ReportError("%s: %s", module_->name().c_str(),
                         g == nullptr ? ("the script has no global '" + name + "'").c_str()
                                      : ("global '" + name + "' is " + std::to_string(g->size) + " bytes, " +
                                         std::to_string(size) + " asked for")
                                            .c_str());
    return kKilnInvalidArgument;
  }
  return device_->driver().script_get_global(script_, name.c_str(), size, data);
}

KilnStatus KernelScript::BindAllocation(const std::string& name, KilnTensor* tensor) {
  const GlobalDesc* g = module_->desc().FindGlobal(name);
  if (g == nullptr || !(g->is_allocation || g->type.kind == KernelTypeKind::kPointer)) {
    device_->ReportError("%s: '%s' is not an rs_allocation or pointer global", module_->name().c_str(),
                         name.c_str());
    return kKilnInvalidArgument;
  }
  const KilnHalDriver& d = device_->driver();
  auto old = bound_.find(name);
  if (tensor == nullptr) {
    KilnStatus s = d.script_bind_allocation(script_, name.c_str(), nullptr, 0, 0, 0, 0, 0);
    if (old != bound_.end()) {
      d.buffer_destroy(old->second);
      bound_.erase(old);
    }
    return s;
  }
  if (tensor->data == nullptr) {
    device_->ReportError("%s: the tensor bound to '%s' has no memory", module_->name().c_str(), name.c_str());
    return kKilnInvalidArgument;
  }
  // An allocation's element is the tensor's innermost dimension when the global is a typed pointer to a
  // vector; otherwise one scalar of the tensor's type. rs_allocation globals learn their type from the tensor.
  uint32_t vector_size = 1;
  std::vector<int64_t> cells(tensor->dims.begin(), tensor->dims.end());
  if (g->type.kind == KernelTypeKind::kPointer && g->type.vector_size > 1) {
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
  TensorBuffer buffer(device_, tensor, /*is_output=*/false);
  // Bound allocations are written by kernels too, so they must be shared, not copied.
  KilnHalBufferDesc desc{};
  desc.struct_size = sizeof desc;
  desc.size = tensor->bytes ? tensor->bytes : 1;
  desc.flags = KILN_HAL_BUFFER_HOST_WRAP;
  desc.host_ptr = tensor->data;
  KilnHalBuffer* handle = nullptr;
  if (!(device_->info().flags & KILN_HAL_DEVICE_HOST_SHARED_MEMORY) ||
      d.buffer_create(device_->device(), &desc, &handle) != kKilnOk) {
    device_->ReportError("%s: binding '%s': the device cannot share the tensor's memory", module_->name().c_str(),
                         name.c_str());
    return kKilnUnsupported;
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
  if (old != bound_.end()) d.buffer_destroy(old->second);
  bound_[name] = handle;
  return kKilnOk;
}

KilnStatus KernelScript::SetGlobalsFromOptions(const uint8_t* data, size_t size, const std::string& what) {
  if (data == nullptr || size == 0) return kKilnOk;
  std::vector<uint8_t> reuse;
  if (!flexbuffers::VerifyBuffer(data, size, &reuse)) {
    device_->ReportError("%s: the custom options are not a valid FlexBuffers map", what.c_str());
    return kKilnInvalidArgument;
  }
  const flexbuffers::Reference root = flexbuffers::GetRoot(data, size);
  if (!root.IsMap()) {
    device_->ReportError("%s: the custom options are not a FlexBuffers map", what.c_str());
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
      device_->ReportError("%s: custom option '%s' matches no global of %s (its globals: %s)", what.c_str(),
                           key.c_str(), module_->name().c_str(), names.empty() ? "none" : names.c_str());
      return kKilnInvalidArgument;
    }
    if (!g->settable() || g->is_allocation || g->type.kind != KernelTypeKind::kScalar) {
      device_->ReportError("%s: custom option '%s' cannot set global '%s %s' (%s)", what.c_str(), key.c_str(),
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
      device_->ReportError("%s: custom option '%s' has the wrong type for global '%s %s' (%s)", what.c_str(),
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
          device_->ReportError("%s: custom option '%s': globals of type %s cannot be set from options", what.c_str(),
                               key.c_str(), KernelTypeName(g->type).c_str());
          return kKilnUnsupported;
      }
    }
    if (KilnStatus s = SetGlobal(key, bytes.data(), bytes.size()); s != kKilnOk) return s;
  }
  return kKilnOk;
}

namespace {

// One strided launch geometry: up to 3 dims (x innermost) plus base offsets and strides of every tensor.
struct Geometry {
  uint32_t dim[3] = {1, 1, 1};
  std::vector<uint64_t> base;                    // per tensor
  std::vector<std::array<uint64_t, 3>> strides;  // per tensor, x y z
};

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

}  // namespace

KilnStatus KernelScript::ForEach(int kernel_index, const KilnTensor* const* inputs, int num_inputs,
                                 KilnTensor* output, const KilnLaunchOptions* options) {
  const KernelDesc& k = module_->desc().kernels[kernel_index];
  const std::string where = module_->name() + ": kernel '" + k.name + "'";
  if (num_inputs != static_cast<int>(k.inputs.size())) {
    device_->ReportError("%s takes %zu input(s), %d given", where.c_str(), k.inputs.size(), num_inputs);
    return kKilnInvalidArgument;
  }
  if (k.has_output() != (output != nullptr)) {
    device_->ReportError("%s %s", where.c_str(),
                         k.has_output() ? "returns a value: an output tensor is required"
                                        : "returns void: pass no output tensor");
    return kKilnInvalidArgument;
  }
  std::vector<std::vector<int64_t>> cells(num_inputs);
  std::string error;
  for (int i = 0; i < num_inputs; ++i) {
    if (inputs[i] == nullptr || inputs[i]->data == nullptr) {
      device_->ReportError("%s: input %d is NULL or has no memory", where.c_str(), i);
      return kKilnInvalidArgument;
    }
    if (!KernelCellDims(*inputs[i], k.inputs[i], &cells[i], &error)) {
      device_->ReportError("%s: input %d: %s", where.c_str(), i, error.c_str());
      return kKilnInvalidArgument;
    }
  }
  std::vector<int64_t> out_cells;
  if (output != nullptr) {
    if (output->data == nullptr && output->bytes > 0) {
      device_->ReportError("%s: the output has no memory", where.c_str());
      return kKilnInvalidArgument;
    }
    if (!KernelCellDims(*output, k.output, &out_cells, &error)) {
      device_->ReportError("%s: output: %s", where.c_str(), error.c_str());
      return kKilnInvalidArgument;
    }
    std::vector<std::vector<int64_t>> all = cells;
    all.push_back(out_cells);
    std::vector<int64_t> joint;
    if (!BroadcastCellDims(all, &joint, &error) || joint != out_cells) {
      device_->ReportError("%s: the inputs do not broadcast to the output's shape%s%s", where.c_str(),
                           error.empty() ? "" : ": ", error.c_str());
      return kKilnInvalidArgument;
    }
  } else if (!BroadcastCellDims(cells, &out_cells, &error)) {
    device_->ReportError("%s: %s", where.c_str(), error.c_str());
    return kKilnInvalidArgument;
  }
  for (int64_t d : out_cells) {
    if (d == 0) return kKilnOk;  // nothing to compute
    if (d > UINT32_MAX) {
      device_->ReportError("%s: a dimension of %lld cells is too large for one launch", where.c_str(),
                           static_cast<long long>(d));
      return kKilnInvalidArgument;
    }
  }

  // Tensors: inputs, then the output.
  std::vector<std::unique_ptr<TensorBuffer>> buffers;
  std::vector<std::vector<uint64_t>> strides;
  for (int i = 0; i < num_inputs; ++i) {
    buffers.push_back(std::make_unique<TensorBuffer>(device_, inputs[i], false));
    strides.push_back(BroadcastStrides(cells[i], out_cells, k.inputs[i].size));
  }
  if (output != nullptr) {
    buffers.push_back(std::make_unique<TensorBuffer>(device_, output, true));
    strides.push_back(BroadcastStrides(out_cells, out_cells, k.output.size));
  }
  for (auto& b : buffers) {
    if (KilnStatus s = b->Acquire(); s != kKilnOk) {
      device_->ReportError("%s: could not give the device a buffer", where.c_str());
      return s;
    }
  }

  std::vector<Geometry> launches = PlanLaunches(out_cells, strides);
  if (options != nullptr) {
    const bool uses_coords = (k.signature & (kKernelSigX | kKernelSigY | kKernelSigZ)) != 0;
    if (launches.size() != 1) {
      device_->ReportError("%s: launch options need a tensor of at most 3 dimensions", where.c_str());
      return kKilnUnsupported;
    }
    Geometry& g = launches[0];
    Range r[3];
    if (!ApplyRange(options->x_start, options->x_end, g.dim[0], &r[0]) ||
        !ApplyRange(options->y_start, options->y_end, g.dim[1], &r[1]) ||
        !ApplyRange(options->z_start, options->z_end, g.dim[2], &r[2])) {
      device_->ReportError("%s: launch options are outside the %ux%ux%u launch", where.c_str(), g.dim[0], g.dim[1],
                           g.dim[2]);
      return kKilnInvalidArgument;
    }
    if (uses_coords && (r[0].start || r[1].start || r[2].start)) {
      device_->ReportError("%s reads its coordinates, so a launch range must start at 0", where.c_str());
      return kKilnUnsupported;
    }
    for (int d = 0; d < 3; ++d) {
      g.dim[d] = r[d].end - r[d].start;
      for (size_t t = 0; t < g.base.size(); ++t) g.base[t] += r[d].start * g.strides[t][d];
    }
  }

  const KilnHalDriver& d = device_->driver();
  for (const Geometry& g : launches) {
    std::vector<KilnHalBufferView> views(buffers.size());
    for (size_t t = 0; t < buffers.size(); ++t) {
      KilnHalBufferView& v = views[t];
      v.struct_size = sizeof v;
      v.element_size = t < static_cast<size_t>(num_inputs) ? k.inputs[t].size : k.output.size;
      v.buffer = buffers[t]->get();
      v.offset = g.base[t];
      v.stride_x = g.strides[t][0];
      v.stride_y = g.strides[t][1];
      v.stride_z = g.strides[t][2];
    }
    KilnHalForEachDesc desc{};
    desc.struct_size = sizeof desc;
    desc.kernel_index = static_cast<uint32_t>(kernel_index);
    desc.dim_x = g.dim[0];
    desc.dim_y = g.dim[1];
    desc.dim_z = g.dim[2];
    desc.num_inputs = static_cast<uint32_t>(num_inputs);
    desc.inputs = views.data();
    desc.output = output != nullptr ? &views.back() : nullptr;
    if (KilnStatus s = d.launch_for_each(script_, &desc); s != kKilnOk) {
      device_->ReportError("%s: the %s driver failed the launch", where.c_str(), d.name);
      return s;
    }
  }
  if (output != nullptr) return buffers.back()->Finish();
  return kKilnOk;
}

KilnStatus KernelScript::Invoke(int invokable_index, const void* args, size_t size) {
  const InvokableDesc& inv = module_->desc().invokables[invokable_index];
  if (size != inv.args_size) {
    device_->ReportError("%s: invokable '%s' takes %u bytes of arguments, %zu given", module_->name().c_str(),
                         inv.name.c_str(), inv.args_size, size);
    return kKilnInvalidArgument;
  }
  return device_->driver().script_invoke(script_, static_cast<uint32_t>(invokable_index), args, size);
}

KilnStatus KernelScript::Reduce(int reduction_index, const KilnTensor* const* inputs, int num_inputs, void* result,
                                size_t result_size, const KilnLaunchOptions* options) {
  const ReductionDesc& r = module_->desc().reductions[reduction_index];
  const std::string where = module_->name() + ": reduction '" + r.name + "'";
  const KilnHalDriver& d = device_->driver();
  if (d.launch_reduce == nullptr) {
    device_->ReportError("%s: the %s driver has no reductions", where.c_str(), d.name);
    return kKilnUnsupported;
  }
  if (num_inputs != static_cast<int>(r.inputs.size()) || result_size != r.result.size) {
    device_->ReportError("%s takes %zu input(s) and a %u-byte result; %d input(s) and %zu bytes given",
                         where.c_str(), r.inputs.size(), r.result.size, num_inputs, result_size);
    return kKilnInvalidArgument;
  }
  std::vector<std::vector<int64_t>> cells(num_inputs);
  std::string error;
  for (int i = 0; i < num_inputs; ++i) {
    if (inputs[i] == nullptr || !KernelCellDims(*inputs[i], r.inputs[i], &cells[i], &error)) {
      device_->ReportError("%s: input %d: %s", where.c_str(), i, inputs[i] ? error.c_str() : "NULL");
      return kKilnInvalidArgument;
    }
  }
  std::vector<int64_t> dims;
  if (!BroadcastCellDims(cells, &dims, &error)) {
    device_->ReportError("%s: %s", where.c_str(), error.c_str());
    return kKilnInvalidArgument;
  }
  std::vector<std::unique_ptr<TensorBuffer>> buffers;
  std::vector<std::vector<uint64_t>> strides;
  for (int i = 0; i < num_inputs; ++i) {
    buffers.push_back(std::make_unique<TensorBuffer>(device_, inputs[i], false));
    if (KilnStatus s = buffers.back()->Acquire(); s != kKilnOk) return s;
    strides.push_back(BroadcastStrides(cells[i], dims, r.inputs[i].size));
  }
  std::vector<Geometry> launches = PlanLaunches(dims, strides);
  if (launches.size() != 1 || (options != nullptr && options->struct_size != 0 &&
                               (options->x_start || options->x_end || options->y_start || options->y_end ||
                                options->z_start || options->z_end))) {
    device_->ReportError("%s: reductions run over whole inputs of at most 3 foldable dimensions", where.c_str());
    return kKilnUnsupported;
  }
  const Geometry& g = launches[0];
  std::vector<KilnHalBufferView> views(buffers.size());
  for (size_t t = 0; t < buffers.size(); ++t) {
    KilnHalBufferView& v = views[t];
    v.struct_size = sizeof v;
    v.element_size = r.inputs[t].size;
    v.buffer = buffers[t]->get();
    v.offset = g.base[t];
    v.stride_x = g.strides[t][0];
    v.stride_y = g.strides[t][1];
    v.stride_z = g.strides[t][2];
  }
  KilnHalReduceDesc desc{};
  desc.struct_size = sizeof desc;
  desc.reduction_index = static_cast<uint32_t>(reduction_index);
  desc.dim_x = g.dim[0];
  desc.dim_y = g.dim[1];
  desc.dim_z = g.dim[2];
  desc.num_inputs = static_cast<uint32_t>(num_inputs);
  desc.inputs = views.data();
  return d.launch_reduce(script_, &desc, result_size, result);
}

}  // namespace kiln
