// Where the sample driver meets kernel code: the __kiln_rt_* runtime services that kernel code calls back
// (kiln/kernel_abi.h), and the driver's calls into kernel code. To make it yours: provide the services your
// device's code imports (a module importing one that RuntimeSymbols lacks is refused at module_load, naming
// it), and call into your compiled code the way your device runs it.
#include <string.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kiln/hal.h"
#include "kiln/hal_util.h"
#include "kiln/kernel_abi.h"
#include "sample_driver.h"
#include "sample_jit.h"

namespace kiln_sample {

// ---- Runtime services the kernels call (kernel_abi.h) ---------------------------------------------------
// Kernel code does not pass its script; the driver makes it current on the thread before calling in.

thread_local Script* t_script = nullptr;
thread_local std::string* t_failure = nullptr;  // set by a service when the running code did something wrong

namespace {

void RtDebug(const char* message, uint32_t element_type, uint32_t vector_size, const void* value) {
  if (!t_script) return;
  // A template keeps this short: the message only. The CPU driver formats the value too.
  t_script->instance()->Log(kKilnHalLogDebug, "script " + t_script->module->name + ": " +
                                                  (message ? message : "") +
                                                  (element_type != kKilnNoType ? " (value not shown)" : ""));
}

int32_t RtSendToClient(int32_t command, const void* data, uint32_t size, int32_t blocking) {
  if (!t_script || !t_script->instance()->services.send_to_client) return 0;
  const KilnHalServices& services = t_script->instance()->services;
  services.send_to_client(services.user_data, t_script->user_data, command, data, size);
  return 1;
}

int64_t RtUptimeNanos() {
  if (t_script) return static_cast<int64_t>(t_script->instance()->NowNs());
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
int64_t RtUptimeMillis() { return RtUptimeNanos() / 1000000; }

int64_t RtTime(int64_t* timer) {
  const int64_t now = static_cast<int64_t>(::time(nullptr));
  if (timer) *timer = now;
  return now;
}

void RtLocaltime(KilnKernelTm* out, int64_t when) {
  if (!out) return;
  const time_t t = static_cast<time_t>(when);
  struct tm local;
  memset(&local, 0, sizeof(local));
  localtime_r(&t, &local);
  *out = KilnKernelTm{local.tm_sec,  local.tm_min,  local.tm_hour, local.tm_mday, local.tm_mon,
                      local.tm_year, local.tm_wday, local.tm_yday, local.tm_isdst};
}

void RtElementAccessError(const KilnKernelAllocation* allocation, uint32_t x, uint32_t y, uint32_t z,
                          uint32_t element_size) {
  if (!t_failure || !t_failure->empty()) return;  // the first problem is the one worth reporting
  *t_failure = "element access (" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) +
               ") of " + std::to_string(element_size) + "-byte elements outside " +
               (allocation ? "an allocation of " + std::to_string(allocation->dim_x) + "x" +
                                 std::to_string(allocation->dim_y) + "x" + std::to_string(allocation->dim_z) +
                                 " " + std::to_string(allocation->element_size) + "-byte elements"
                           : std::string("a NULL allocation"));
}

uint32_t ScalarSize(uint32_t element_type) {
  switch (element_type) {
    case kKilnInt8:
    case kKilnUInt8:
    case kKilnBool:
      return 1;
    case kKilnInt16:
    case kKilnUInt16:
    case kKilnFloat16:
      return 2;
    case kKilnInt32:
    case kKilnUInt32:
    case kKilnFloat32:
      return 4;
    case kKilnInt64:
    case kKilnUInt64:
    case kKilnFloat64:
      return 8;
    default:
      return 0;
  }
}

KilnKernelAllocation* RtCreateAllocation(uint32_t element_type, uint32_t vector_size, uint32_t dim_x,
                                         uint32_t dim_y, uint32_t dim_z) {
  const uint32_t scalar = ScalarSize(element_type);
  if (!t_script || scalar == 0 || vector_size < 1 || vector_size > 4 || dim_x == 0 || dim_x > kMaxDim ||
      dim_y > kMaxDim || dim_z > kMaxDim) {
    return nullptr;
  }
  const uint64_t element = uint64_t{scalar} * (vector_size == 3 ? 4 : vector_size);  // a 3-vector is padded
  const uint64_t row = element * dim_x, plane = row * std::max(dim_y, 1u);
  const uint64_t total = plane * std::max(dim_z, 1u);
  if (total > kMaxBufferSize) return nullptr;
  void* data = t_script->instance()->Allocate(static_cast<size_t>(total), kBufferAlignment);
  if (!data) return nullptr;
  memset(data, 0, static_cast<size_t>(total));
  auto allocation = std::make_unique<KilnKernelAllocation>(
      KilnKernelAllocation{sizeof(KilnKernelAllocation), static_cast<uint32_t>(element), element_type,
                           vector_size, dim_x, dim_y, dim_z, 0, row, plane, data});
  t_script->created.emplace_back(std::move(allocation), data);
  return t_script->created.back().first.get();
}

}  // namespace

// What the sample provides, by the names the bitcode imports. rsForEach from kernel code
// (__kiln_rt_for_each) is missing on purpose: module_load shows how a driver refuses such a module.
std::vector<std::pair<std::string, void*>> RuntimeSymbols() {
  return {
      {"__kiln_rt_debug", reinterpret_cast<void*>(&RtDebug)},
      {"__kiln_rt_send_to_client", reinterpret_cast<void*>(&RtSendToClient)},
      {"__kiln_rt_uptime_millis", reinterpret_cast<void*>(&RtUptimeMillis)},
      {"__kiln_rt_uptime_nanos", reinterpret_cast<void*>(&RtUptimeNanos)},
      {"__kiln_rt_time", reinterpret_cast<void*>(&RtTime)},
      {"__kiln_rt_localtime", reinterpret_cast<void*>(&RtLocaltime)},
      {"__kiln_rt_element_access_error", reinterpret_cast<void*>(&RtElementAccessError)},
      {"__kiln_rt_create_allocation", reinterpret_cast<void*>(&RtCreateAllocation)},
  };
}

// Calls into JIT-compiled code. That code has no -fsanitize=function signature in front of it, so UBSan's
// check (which reads bytes before the callee) must not run on these calls.
#if defined(__clang__)
#define SAMPLE_NO_SANITIZE_FUNCTION __attribute__((no_sanitize("function")))
#else
#define SAMPLE_NO_SANITIZE_FUNCTION
#endif
using ExpandFn = void (*)(const KilnKernelLaunch*, uint32_t, uint32_t, uint32_t, uint32_t);
using AccumFn = void (*)(const KilnKernelLaunch*, void*, uint32_t, uint32_t, uint32_t, uint32_t);
using UnaryFn = void (*)(void*);                // reduce init
using BinaryFn = void (*)(void*, const void*);  // reduce out (and combine, unused here)
using InvokeFn = void (*)(const void*);
SAMPLE_NO_SANITIZE_FUNCTION void CallExpand(void* fn, const KilnKernelLaunch* l, uint32_t y, uint32_t z) {
  reinterpret_cast<ExpandFn>(fn)(l, 0, l->dim_x, y, z);
}
SAMPLE_NO_SANITIZE_FUNCTION void CallAccum(void* fn, const KilnKernelLaunch* l, void* acc, uint32_t y,
                                           uint32_t z) {
  reinterpret_cast<AccumFn>(fn)(l, acc, 0, l->dim_x, y, z);
}
SAMPLE_NO_SANITIZE_FUNCTION void CallUnary(void* fn, void* a) { reinterpret_cast<UnaryFn>(fn)(a); }
SAMPLE_NO_SANITIZE_FUNCTION void CallBinary(void* fn, void* a, const void* b) {
  reinterpret_cast<BinaryFn>(fn)(a, b);
}
SAMPLE_NO_SANITIZE_FUNCTION void CallInvoke(void* fn, const void* args) {
  reinterpret_cast<InvokeFn>(fn)(args);
}

void* LookupOrNull(Script* script, const std::string& symbol) {
  std::string ignored;
  return script->instance()->linker->Lookup(script->image, symbol, &ignored);
}

}  // namespace kiln_sample
