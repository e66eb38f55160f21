// The runtime services that kernel code calls back (kiln/kernel_abi.h's __kiln_rt_* imports): rsDebug,
// messages to the app, time, element access errors, rsCreateAllocation and rsForEach. JIT-linked code calls
// them as plain C functions without its script, so whoever runs kernel code makes the script current on the
// thread first (CurrentScope), and a service's complaint fails that launch or invocation.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/cpu/driver_internal.h"
#include "kiln/hal.h"
#include "kiln/kernel_abi.h"

namespace kiln {
namespace cpu {

thread_local Script* t_script = nullptr;
thread_local RunState* t_run_state = nullptr;

namespace {

// ---- Runtime services the kernels call (kernel_abi.h) -----------------------------------------------------

uint32_t ScalarSize(uint32_t type) {
  switch (type) {
    case kKilnFloat32:
    case kKilnInt32:
    case kKilnUInt32:
      return 4;
    case kKilnUInt8:
    case kKilnInt8:
    case kKilnBool:
      return 1;
    case kKilnInt16:
    case kKilnUInt16:
    case kKilnFloat16:
      return 2;
    case kKilnInt64:
    case kKilnUInt64:
    case kKilnFloat64:
      return 8;
    default:
      return 0;
  }
}

std::string FormatLane(uint32_t type, const uint8_t* p) {
  char text[64];
  switch (type) {
    case kKilnFloat32: {
      float v;
      memcpy(&v, p, 4);
      snprintf(text, sizeof(text), "%g", v);
      break;
    }
    case kKilnFloat64: {
      double v;
      memcpy(&v, p, 8);
      snprintf(text, sizeof(text), "%g", v);
      break;
    }
    case kKilnInt8:
      snprintf(text, sizeof(text), "%d", static_cast<int8_t>(*p));
      break;
    case kKilnUInt8:
    case kKilnBool:
      snprintf(text, sizeof(text), "%u", *p);
      break;
    case kKilnInt16: {
      int16_t v;
      memcpy(&v, p, 2);
      snprintf(text, sizeof(text), "%d", v);
      break;
    }
    case kKilnUInt16:
    case kKilnFloat16: {
      uint16_t v;
      memcpy(&v, p, 2);
      snprintf(text, sizeof(text), type == kKilnFloat16 ? "half(0x%04x)" : "%u", v);
      break;
    }
    case kKilnInt32: {
      int32_t v;
      memcpy(&v, p, 4);
      snprintf(text, sizeof(text), "%d", v);
      break;
    }
    case kKilnUInt32: {
      uint32_t v;
      memcpy(&v, p, 4);
      snprintf(text, sizeof(text), "%u", v);
      break;
    }
    case kKilnInt64: {
      int64_t v;
      memcpy(&v, p, 8);
      snprintf(text, sizeof(text), "%lld", static_cast<long long>(v));
      break;
    }
    case kKilnUInt64: {
      uint64_t v;
      memcpy(&v, p, 8);
      snprintf(text, sizeof(text), "%llu", static_cast<unsigned long long>(v));
      break;
    }
    default:
      snprintf(text, sizeof(text), "<type %u>", type);
  }
  return text;
}

extern "C" void KilnRtDebug(const char* message, uint32_t element_type, uint32_t vector_size,
                            const void* value) {
  Script* script = t_script;
  if (!script) return;
  std::string line = "script " + script->module->name + ": " + (message ? message : "");
  if (element_type == KILN_KERNEL_DEBUG_POINTER) {
    char text[32];
    snprintf(text, sizeof(text), " %p", value);
    line += text;
  } else if (element_type == KILN_KERNEL_DEBUG_MATRIX && value && vector_size <= 4) {
    const float* m = static_cast<const float*>(value);
    for (uint32_t row = 0; row < vector_size; ++row) {
      line += row ? ", [" : " [";
      for (uint32_t col = 0; col < vector_size; ++col) {
        line += (col ? " " : "") +
                FormatLane(kKilnFloat32, reinterpret_cast<const uint8_t*>(&m[col * vector_size + row]));
      }
      line += "]";
    }
  } else if (element_type != kKilnNoType && value && ScalarSize(element_type) && vector_size >= 1 &&
             vector_size <= 4) {
    const uint8_t* lanes = static_cast<const uint8_t*>(value);
    line += vector_size > 1 ? " {" : " ";
    for (uint32_t lane = 0; lane < vector_size; ++lane) {
      line += (lane ? ", " : "") + FormatLane(element_type, lanes + lane * ScalarSize(element_type));
    }
    if (vector_size > 1) line += "}";
  }
  script->instance()->Log(kKilnHalLogDebug, line);
}

extern "C" int32_t KilnRtSendToClient(int32_t cmd_id, const void* data, uint32_t size, int32_t blocking) {
  Script* script = t_script;
  if (!script) return 0;
  const KilnHalServices& services = script->instance()->services;
  if (!services.send_to_client) return 0;
  services.send_to_client(services.user_data, script->user_data, cmd_id, data, size);
  return 1;
}

extern "C" int64_t KilnRtUptimeNanos(void) {
  Script* script = t_script;
  if (script) return static_cast<int64_t>(script->instance()->NowNs());
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
extern "C" int64_t KilnRtUptimeMillis(void) { return KilnRtUptimeNanos() / 1000000; }

extern "C" int64_t KilnRtTime(int64_t* timer) {
  int64_t now = static_cast<int64_t>(::time(nullptr));
  if (timer) *timer = now;
  return now;
}

extern "C" void KilnRtLocaltime(KilnKernelTm* out, int64_t when) {
  if (!out) return;
  time_t t = static_cast<time_t>(when);
  struct tm local;
  memset(&local, 0, sizeof(local));
  localtime_r(&t, &local);
  *out = KilnKernelTm{local.tm_sec,  local.tm_min,  local.tm_hour, local.tm_mday, local.tm_mon,
                      local.tm_year, local.tm_wday, local.tm_yday, local.tm_isdst};
}

extern "C" void KilnRtElementAccessError(const KilnKernelAllocation* allocation, uint32_t x, uint32_t y,
                                         uint32_t z, uint32_t element_size) {
  std::string text = "element access (" + std::to_string(x) + ", " + std::to_string(y) + ", " +
                     std::to_string(z) + ") of " + std::to_string(element_size) + "-byte elements";
  if (allocation) {
    text += " outside an allocation of " + std::to_string(allocation->dim_x) + "x" +
            std::to_string(allocation->dim_y) + "x" + std::to_string(allocation->dim_z) + " " +
            std::to_string(allocation->element_size) + "-byte elements";
  } else {
    text += " through a NULL allocation";
  }
  if (t_run_state) t_run_state->Fail(text, kKilnInvalidArgument);  // the kernel's access, not the device
}

extern "C" KilnKernelAllocation* KilnRtCreateAllocation(uint32_t element_type, uint32_t vector_size,
                                                        uint32_t dim_x, uint32_t dim_y, uint32_t dim_z) {
  Script* script = t_script;
  uint32_t scalar = ScalarSize(element_type);
  if (!script || !scalar || vector_size < 1 || vector_size > 4 || dim_x == 0) return nullptr;
  uint64_t element_size = static_cast<uint64_t>(scalar) * (vector_size == 3 ? 4 : vector_size);
  uint64_t row = element_size * dim_x;
  uint64_t plane = row * std::max<uint32_t>(dim_y, 1);
  unsigned __int128 total = static_cast<unsigned __int128>(plane) * std::max<uint32_t>(dim_z, 1);
  if (total > (uint64_t{1} << 40)) return nullptr;
  Instance* instance = script->instance();
  void* data = instance->Allocate(static_cast<size_t>(total), kBufferAlignment);
  if (!data) return nullptr;
  memset(data, 0, static_cast<size_t>(total));
  auto allocation = std::make_unique<KilnKernelAllocation>();
  *allocation = KilnKernelAllocation{sizeof(KilnKernelAllocation),
                                     static_cast<uint32_t>(element_size),
                                     element_type,
                                     vector_size,
                                     dim_x,
                                     dim_y,
                                     dim_z,
                                     0,
                                     row,
                                     plane,
                                     data};
  KilnKernelAllocation* result = allocation.get();
  std::lock_guard<std::mutex> lock(script->owned_mutex);
  script->created_allocations.emplace_back(std::move(allocation), data);
  return result;
}

extern "C" int32_t KilnRtForEach(const char* kernel_name, const KilnKernelAllocation* const* allocations,
                                 uint32_t num_allocations, const KilnKernelLaunchOptions* options);

}  // namespace

const std::vector<RuntimeSymbol>& RuntimeSymbols() {
  static const std::vector<RuntimeSymbol> symbols = {
      {"__kiln_rt_debug", reinterpret_cast<void*>(&KilnRtDebug)},
      {"__kiln_rt_send_to_client", reinterpret_cast<void*>(&KilnRtSendToClient)},
      {"__kiln_rt_uptime_millis", reinterpret_cast<void*>(&KilnRtUptimeMillis)},
      {"__kiln_rt_uptime_nanos", reinterpret_cast<void*>(&KilnRtUptimeNanos)},
      {"__kiln_rt_time", reinterpret_cast<void*>(&KilnRtTime)},
      {"__kiln_rt_localtime", reinterpret_cast<void*>(&KilnRtLocaltime)},
      {"__kiln_rt_element_access_error", reinterpret_cast<void*>(&KilnRtElementAccessError)},
      {"__kiln_rt_create_allocation", reinterpret_cast<void*>(&KilnRtCreateAllocation)},
      {"__kiln_rt_for_each", reinterpret_cast<void*>(&KilnRtForEach)},
  };
  return symbols;
}

namespace {

// rsForEach from kernel code: a launch of the current script over allocations (host pointers already).
extern "C" int32_t KilnRtForEach(const char* kernel_name, const KilnKernelAllocation* const* allocations,
                                 uint32_t num_allocations, const KilnKernelLaunchOptions* options) {
  Script* script = t_script;
  RunState* outer = t_run_state;
  auto fail = [&](const std::string& text) {
    if (outer) outer->Fail("rsForEach(" + std::string(kernel_name ? kernel_name : "(null)") + "): " + text);
    return 0;
  };
  if (!script) return 0;
  Module* module = script->module;
  uint32_t index = 0;
  while (index < module->kernels.size() && (!kernel_name || module->kernels[index].name != kernel_name))
    ++index;
  if (index == module->kernels.size()) return fail("no such kernel in script " + module->name);
  const KernelInfo& kernel = module->kernels[index];
  if (!kernel.supported) return fail("cannot run here: " + kernel.reason);
  const bool has_output = kernel.signature & KILN_HAL_SIG_OUT;
  const uint32_t needed = static_cast<uint32_t>(kernel.input_sizes.size()) + (has_output ? 1 : 0);
  if (num_allocations != needed || (needed > 0 && !allocations)) {
    return fail(std::to_string(num_allocations) + " allocations given, the kernel needs " +
                std::to_string(needed));
  }
  if (needed == 0) return fail("a kernel without inputs or output has no launch extent");
  PreparedLaunch p;
  KilnKernelLaunch& launch = p.launch;
  launch.struct_size = sizeof(launch);
  launch.abi_version = KILN_KERNEL_ABI_VERSION;
  launch.num_inputs = static_cast<uint32_t>(kernel.input_sizes.size());
  const KilnKernelAllocation* first = allocations[0];
  if (!first) return fail("allocation 0 is NULL");
  uint32_t dims[3] = {first->dim_x, std::max<uint32_t>(first->dim_y, 1), std::max<uint32_t>(first->dim_z, 1)};
  for (uint32_t i = 0; i < needed; ++i) {
    const KilnKernelAllocation* a = allocations[i];
    if (!a || !a->data) return fail("allocation " + std::to_string(i) + " is NULL");
    uint32_t expected = i < launch.num_inputs ? kernel.input_sizes[i] : kernel.output_size;
    if (a->element_size != expected) {
      return fail("allocation " + std::to_string(i) + " has " + std::to_string(a->element_size) +
                  "-byte elements, the kernel expects " + std::to_string(expected));
    }
    if (a->dim_x != dims[0] || std::max<uint32_t>(a->dim_y, 1) != dims[1] ||
        std::max<uint32_t>(a->dim_z, 1) != dims[2]) {
      return fail("allocation " + std::to_string(i) + " has other extents than allocation 0");
    }
    if (i < launch.num_inputs) {
      launch.in[i] = static_cast<const uint8_t*>(a->data);
      launch.in_stride_x[i] = a->element_size;
      launch.in_stride_y[i] = a->stride_y;
      launch.in_stride_z[i] = a->stride_z;
    } else {
      launch.out = static_cast<uint8_t*>(a->data);
      launch.out_stride_x = a->element_size;
      launch.out_stride_y = a->stride_y;
      launch.out_stride_z = a->stride_z;
    }
  }
  launch.dim_x = dims[0];
  launch.dim_y = dims[1];
  launch.dim_z = dims[2];
  launch.script = script;
  p.script = script;
  p.index = index;
  for (int d = 0; d < 3; ++d) p.range.end[d] = dims[d];
  if (options) {
    const uint32_t starts[3] = {options->x_start, options->y_start, options->z_start};
    const uint32_t ends[3] = {options->x_end, options->y_end, options->z_end};
    for (int d = 0; d < 3; ++d) {
      uint32_t end = ends[d] == 0 ? dims[d] : ends[d];
      if (starts[d] >= end || end > dims[d])
        return fail("launch options select an empty or out-of-range range");
      p.range.begin[d] = starts[d];
      p.range.end[d] = end;
    }
  }
  p.bytes_per_cell = CellBytes(kernel.input_sizes, kernel.output_size);
  // Errors of the nested launch are reported by RunPrepared and also fail the outer one.
  if (RunPrepared(p) != kKilnOk) return fail("the nested launch failed");
  return 1;
}

}  // namespace
}  // namespace cpu
}  // namespace kiln
