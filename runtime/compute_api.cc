// The compute API (kiln/compute.h): contexts, scripts and context-owned tensors, over DeviceSet/KernelScript.
#include "kiln/compute.h"

#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <set>
#include <string>

#include "runtime/device/kernel_script.h"

struct KilnContextOptions {
  int32_t num_threads = -1;
  KilnErrorReporter reporter = nullptr;
  void* reporter_user_data = nullptr;
  KilnMessageHandler message_handler = nullptr;
  void* message_user_data = nullptr;
  int32_t policy = kKilnDeviceAuto;  // a KilnDevicePolicy, checked at creation
  std::string driver_path;
  bool allow_any_driver_dependency = false;
};

struct KilnContext {
  KilnContextOptions options;
  kiln::DecisionLog decisions;  // before `devices`, which records into it until destroyed
  std::unique_ptr<kiln::DeviceSet> devices;
  // Guards the members below, which making and deleting scripts and tensors update (possibly on several threads).
  std::mutex mutex;
  int live_objects = 0;  // scripts and tensors; must be 0 at delete
  // The live scripts, which KilnTensorDelete tells to forget the tensor.
  std::set<KilnScript*> scripts;
};

struct KilnScript {
  KilnContext* context = nullptr;
  std::unique_ptr<kiln::KernelScript> impl;
};

namespace {

void ReportTo(const KilnContext* context, const char* format, ...) __attribute__((format(printf, 2, 3)));
void ReportTo(const KilnContext* context, const char* format, ...) {
  va_list args;
  va_start(args, format);
  kiln::ReportV(context ? context->options.reporter : nullptr, context ? context->options.reporter_user_data : nullptr,
                format, args);
  va_end(args);
}

}  // namespace

extern "C" {

KilnContextOptions* KilnContextOptionsCreate(void) { return new (std::nothrow) KilnContextOptions; }
void KilnContextOptionsDelete(KilnContextOptions* options) { delete options; }

void KilnContextOptionsSetNumThreads(KilnContextOptions* options, int32_t num_threads) {
  if (options) options->num_threads = num_threads;
}

void KilnContextOptionsSetErrorReporter(KilnContextOptions* options, KilnErrorReporter reporter,
                                        void* user_data) {
  if (options == nullptr) return;
  options->reporter = reporter;
  options->reporter_user_data = user_data;
}

void KilnContextOptionsSetMessageHandler(KilnContextOptions* options, KilnMessageHandler handler,
                                         void* user_data) {
  if (options == nullptr) return;
  options->message_handler = handler;
  options->message_user_data = user_data;
}

void KilnContextOptionsSetDevicePolicy(KilnContextOptions* options, KilnDevicePolicy policy) {
  // Read as the int a C caller may pass: KilnContextCreate checks the range.
  if (options != nullptr) std::memcpy(&options->policy, &policy, sizeof(int32_t));
}

void KilnContextOptionsSetDriverPath(KilnContextOptions* options, const char* path) {
  if (options != nullptr) options->driver_path = path != nullptr ? path : "";
}

void KilnContextOptionsSetAllowAnyDriverDependency(KilnContextOptions* options, bool allow) {
  if (options != nullptr) options->allow_any_driver_dependency = allow;
}

KilnContext* KilnContextCreate(const KilnContextOptions* options) {
  if (options != nullptr && (options->policy < kKilnDeviceAuto || options->policy > kKilnDeviceGpuOnly)) {
    kiln::Report(options->reporter, options->reporter_user_data, "KilnContextCreate: unknown device policy %d",
                 static_cast<int>(options->policy));
    return nullptr;
  }
  auto* context = new (std::nothrow) KilnContext;
  if (context == nullptr) return nullptr;
  if (options != nullptr) context->options = *options;
  kiln::DriverOptions device_options;
  device_options.policy = static_cast<kiln::DevicePolicy>(context->options.policy);
  device_options.driver_path = context->options.driver_path;
  device_options.allow_any_dependency = context->options.allow_any_driver_dependency;
  device_options.num_threads = context->options.num_threads;
  device_options.reporter = context->options.reporter;
  device_options.reporter_user_data = context->options.reporter_user_data;
  if (context->options.message_handler != nullptr) {
    device_options.on_message = [context](void* script, int32_t command, const void* data, size_t size) {
      context->options.message_handler(context->options.message_user_data, static_cast<KilnScript*>(script),
                                       command, data, size);
    };
  }
  KilnStatus status = kKilnOk;
  context->devices = kiln::DeviceSet::Open(device_options, &context->decisions, &status);
  if (context->devices == nullptr) {
    delete context;
    return nullptr;
  }
  return context;
}

void KilnContextDelete(KilnContext* context) {
  if (context == nullptr) return;
  int live_objects = 0;
  {
    std::lock_guard<std::mutex> lock(context->mutex);
    live_objects = context->live_objects;
  }
  if (live_objects != 0) {
    ReportTo(context, "KilnContextDelete: %d script(s) or tensor(s) of this context are still alive; delete them "
                      "first (the context is leaked to keep them valid)",
             live_objects);
    return;
  }
  delete context;
}

namespace {

// A context tensor of `type` and shape `dims` without memory yet; null (reported as `caller`) on bad arguments.
KilnTensor* NewContextTensor(const char* caller, KilnContext* context, KilnType type, const int* dims,
                             int32_t num_dims) {
  if (context == nullptr || num_dims < 0 || (num_dims > 0 && dims == nullptr)) return nullptr;
  if (kiln::TypeSize(type) == 0) {
    ReportTo(context, "%s: type %s has no fixed element size", caller, KilnTypeGetName(type));
    return nullptr;
  }
  auto* t = new (std::nothrow) KilnTensor;
  if (t == nullptr) return nullptr;
  t->type = type;
  t->allocation = kKilnCustom;
  t->context = context;
  std::string error;
  if (!kiln::SetTensorShape(t, dims, num_dims, &error)) {
    ReportTo(context, "%s: %s", caller, error.c_str());
    delete t;
    return nullptr;
  }
  return t;
}

KilnTensor* CountLive(KilnContext* context, KilnTensor* t) {
  std::lock_guard<std::mutex> lock(context->mutex);
  ++context->live_objects;
  return t;
}

}  // namespace

KilnTensor* KilnTensorCreate(KilnContext* context, KilnType type, const int* dims, int32_t num_dims) {
  KilnTensor* t = NewContextTensor("KilnTensorCreate", context, type, dims, num_dims);
  if (t == nullptr) return nullptr;
  t->owned.reset(kiln::AlignedAlloc(t->bytes));
  if (t->owned == nullptr) {
    ReportTo(context, "KilnTensorCreate: out of memory for %zu bytes", t->bytes);
    delete t;
    return nullptr;
  }
  std::memset(t->owned.get(), 0, t->bytes);
  t->data = t->owned.get();
  return CountLive(context, t);
}

KilnTensor* KilnTensorCreateFromHostMemory(KilnContext* context, KilnType type, const int* dims, int32_t num_dims,
                                           void* data, size_t size) {
  static_assert(KILN_HOST_MEMORY_ALIGNMENT <= kiln::kTensorAlignment, "the CPU driver must accept the alignment");
  constexpr const char* kCaller = "KilnTensorCreateFromHostMemory";
  if (context != nullptr && data == nullptr) {
    ReportTo(context, "%s: the memory is NULL", kCaller);
    return nullptr;
  }
  if (context != nullptr && reinterpret_cast<uintptr_t>(data) % KILN_HOST_MEMORY_ALIGNMENT != 0) {
    ReportTo(context, "%s: the memory at %p is not aligned to %d bytes (KILN_HOST_MEMORY_ALIGNMENT); copy it into a "
                      "tensor of KilnTensorCreate instead",
             kCaller, data, KILN_HOST_MEMORY_ALIGNMENT);
    return nullptr;
  }
  KilnTensor* t = NewContextTensor(kCaller, context, type, dims, num_dims);
  if (t == nullptr) return nullptr;
  if (size != t->bytes) {
    ReportTo(context, "%s: the memory holds %zu bytes, but the shape and type need %zu", kCaller, size, t->bytes);
    delete t;
    return nullptr;
  }
  t->data = data;
  return CountLive(context, t);
}

void KilnTensorDelete(KilnTensor* tensor) {
  if (tensor == nullptr) return;
  KilnTensor* t = tensor;
  if (t->context == nullptr) {
    kiln::Report(nullptr, nullptr, "KilnTensorDelete: the tensor was not made by KilnTensorCreate; not deleted");
    return;
  }
  {
    KilnContext* context = t->context;
    std::lock_guard<std::mutex> lock(context->mutex);
    // Every script that still binds the tensor unbinds it, as binding NULL would, so that no later launch
    // reads its freed memory.
    for (KilnScript* script : context->scripts) script->impl->ForgetTensor(t);
    --context->live_objects;
  }
  delete t;
}

KilnScript* KilnScriptCreate(KilnContext* context, const KilnModule* module) {
  if (context == nullptr || module == nullptr) {
    ReportTo(context, "KilnScriptCreate: %s is NULL", context ? "the module" : "the context");
    return nullptr;
  }
  auto* script = new (std::nothrow) KilnScript;
  if (script == nullptr) return nullptr;
  script->context = context;
  script->impl = kiln::KernelScript::Create(context->devices.get(), module->impl, script);
  if (script->impl == nullptr) {
    delete script;
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(context->mutex);
  context->scripts.insert(script);
  ++context->live_objects;
  return script;
}

void KilnScriptDelete(KilnScript* script) {
  if (script == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(script->context->mutex);
    script->context->scripts.erase(script);
    --script->context->live_objects;
  }
  delete script;
}

KilnStatus KilnScriptSetGlobal(KilnScript* script, const char* name, const void* data, size_t size) {
  if (script == nullptr || name == nullptr || data == nullptr) return kKilnInvalidArgument;
  return script->impl->SetGlobal(name, data, size);
}

KilnStatus KilnScriptGetGlobal(const KilnScript* script, const char* name, void* data, size_t size) {
  if (script == nullptr || name == nullptr || data == nullptr) return kKilnInvalidArgument;
  return script->impl->GetGlobal(name, data, size);
}

KilnStatus KilnScriptBindAllocationWithElement(KilnScript* script, const char* name, KilnTensor* tensor,
                                              int32_t vector_size) {
  if (script == nullptr || name == nullptr || vector_size < 1 || vector_size > 4) return kKilnInvalidArgument;
  return script->impl->BindAllocation(name, tensor, static_cast<uint32_t>(vector_size));
}

KilnStatus KilnScriptBindAllocation(KilnScript* script, const char* name, KilnTensor* tensor) {
  if (script == nullptr || name == nullptr) return kKilnInvalidArgument;
  return script->impl->BindAllocation(name, tensor);
}

KilnStatus KilnScriptForEach(KilnScript* script, const char* kernel, const KilnTensor* const* inputs,
                             int32_t num_inputs, KilnTensor* output, const KilnLaunchOptions* launch_options) {
  if (script == nullptr || kernel == nullptr || num_inputs < 0 || (num_inputs > 0 && inputs == nullptr)) {
    return kKilnInvalidArgument;
  }
  const int index = script->impl->module().KernelIndex(kernel);
  if (index < 0) {
    ReportTo(script->context, "%s: the script has no kernel '%s'", script->impl->module().name().c_str(), kernel);
    return kKilnInvalidArgument;
  }
  return script->impl->ForEach(index, inputs, num_inputs, output, launch_options);
}

KilnStatus KilnScriptInvoke(KilnScript* script, const char* name, const void* args, size_t size) {
  if (script == nullptr || name == nullptr || (size > 0 && args == nullptr)) return kKilnInvalidArgument;
  const int index = script->impl->module().InvokableIndex(name);
  if (index < 0) {
    ReportTo(script->context, "%s: the script has no invokable '%s'", script->impl->module().name().c_str(), name);
    return kKilnInvalidArgument;
  }
  return script->impl->Invoke(index, args, size);
}

KilnStatus KilnScriptReduce(KilnScript* script, const char* name, const KilnTensor* const* inputs,
                            int32_t num_inputs, void* result, size_t result_size,
                            const KilnLaunchOptions* launch_options) {
  if (script == nullptr || name == nullptr || result == nullptr || num_inputs < 0 ||
      (num_inputs > 0 && inputs == nullptr)) {
    return kKilnInvalidArgument;
  }
  const int index = script->impl->module().ReductionIndex(name);
  if (index < 0) {
    ReportTo(script->context, "%s: the script has no reduction '%s'", script->impl->module().name().c_str(), name);
    return kKilnInvalidArgument;
  }
  return script->impl->Reduce(index, inputs, num_inputs, result, result_size, launch_options);
}

int32_t KilnContextGetDecisionCount(const KilnContext* context) {
  return context != nullptr ? static_cast<int32_t>(context->decisions.size()) : 0;
}

KilnStatus KilnContextGetDecision(const KilnContext* context, int32_t index, KilnDecisionKind* out_kind,
                                  const char** out_subject, const char** out_message) {
  const kiln::Decision* d =
      context != nullptr && index >= 0 ? context->decisions.Get(static_cast<size_t>(index)) : nullptr;
  if (d == nullptr) return kKilnInvalidArgument;
  if (out_kind != nullptr) *out_kind = d->kind;
  if (out_subject != nullptr) *out_subject = d->subject.c_str();
  if (out_message != nullptr) *out_message = d->message.c_str();
  return kKilnOk;
}

}  // extern "C"
