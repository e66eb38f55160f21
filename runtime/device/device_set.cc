// What a device policy chose for one interpreter or compute context, and where each kernel of each module runs.
#include "runtime/device/device_set.h"

#include <cstdio>
#include <cstring>

#include "runtime/core.h"
#include "runtime/device/kernel_module.h"

namespace kiln {

const char* PolicyName(DevicePolicy policy) {
  return KilnDevicePolicyName(static_cast<KilnDevicePolicy>(policy));
}

// ---------------------------------------------------------------------------------------------------------
// DeviceSet

namespace {

// A failure the launch caused itself: an allocation access out of range, or through a global with nothing bound
// (kiln/hal.h, "Launches"). The CPU redoes it and reports the same access; the device is not at fault, so
// nothing is quarantined and no device fault is counted. A hung batch is never that.
bool LaunchsOwnFault(KilnStatus status, bool hung) { return status == kKilnInvalidArgument && !hung; }

const char* DeviceTypeName(uint32_t type) {
  switch (type) {
    case kKilnHalDeviceCpu: return "cpu";
    case kKilnHalDeviceGpu: return "gpu";
    case kKilnHalDeviceAccelerator: return "accelerator";
    default: return "other";
  }
}

// Lower is better under prefer-gpu.
int DeviceRank(uint32_t type) {
  switch (type) {
    case kKilnHalDeviceGpu: return 0;
    case kKilnHalDeviceAccelerator: return 1;
    case kKilnHalDeviceCpu: return 3;
    default: return 2;
  }
}

std::string DescribeDevice(const KernelDevice& device) {
  const KilnHalDeviceInfo& i = device.info();
  const KilnHalDeviceLimits& l = i.limits;
  char buf[768];
  std::snprintf(buf, sizeof buf,
                "'%s' (%s, vendor '%s'), %.1f GiB, kernel level %s, payloads '%s'%s%s%s; limits: %u inputs, "
                "dims %ux%ux%u, %u threads, buffers up to %llu bytes aligned to %u",
                i.name, DeviceTypeName(i.type), i.vendor, static_cast<double>(i.memory_bytes) / (1u << 30),
                LevelString(i.max_kernel_level).c_str(), i.payload_tags,
                (i.flags & KILN_HAL_DEVICE_HOST_SHARED_MEMORY) ? ", host-shared memory" : "",
                (i.flags & KILN_HAL_DEVICE_MAPPABLE_BUFFERS) ? ", mappable buffers" : "",
                (i.flags & KILN_HAL_DEVICE_ASYNC_BATCHES) ? ", async batches" : "", l.max_inputs, l.max_dim_x,
                l.max_dim_y, l.max_dim_z, l.max_threads, static_cast<unsigned long long>(l.max_buffer_size),
                l.buffer_alignment);
  return buf;
}

}  // namespace

std::unique_ptr<DeviceSet> DeviceSet::Open(const DriverOptions& options, DecisionLog* log, KilnStatus* status) {
  *status = kKilnOk;
  std::unique_ptr<DeviceSet> set(new DeviceSet());
  set->options_ = options;
  set->log_ = log;
  std::string error;
  std::shared_ptr<HalDriver> cpu_driver = HalDriver::OpenBuiltinCpu(options, &error);
  if (cpu_driver != nullptr) set->cpu_ = KernelDevice::Open(cpu_driver, 0, &error);
  if (set->cpu_ == nullptr) {
    Report(options.reporter, options.reporter_user_data, "%s", error.c_str());
    log->Add(kKilnDecisionDevice, "kiln-cpu", "the built-in CPU driver cannot be opened: " + error);
    *status = kKilnError;
    return nullptr;
  }
  log->Add(kKilnDecisionDevice, set->cpu_->label(),
           "device 0 of kiln-cpu (built in): " + DescribeDevice(*set->cpu_));
  const std::string policy = PolicyName(options.policy);
  if (options.policy == DevicePolicy::kCpuOnly) {
    log->Add(kKilnDecisionPolicy, "policy",
             "policy cpu-only: no driver is searched; kernels run on " + set->cpu_->label());
    return set;
  }

  struct Candidate {
    std::unique_ptr<KernelDevice> device;
    size_t order;
  };
  std::vector<Candidate> candidates;
  for (const std::string& path : FindDriverFiles(options, log)) {
    std::string refusal;
    std::shared_ptr<HalDriver> driver = HalDriver::Load(path, options, log, &refusal);
    if (driver == nullptr) {
      log->Add(kKilnDecisionDriver, BaseName(path), refusal);
      continue;
    }
    uint32_t count = 0;
    if (driver->table().device_count(driver->table().instance, &count) != kKilnOk) {
      const std::string errors = driver->TakeErrors();
      log->Add(kKilnDecisionDevice, driver->name(),
               "driver " + driver->file() + ": device_count failed" + (errors.empty() ? "" : ": " + errors));
      continue;
    }
    if (count == 0) log->Add(kKilnDecisionDevice, driver->name(), "driver " + driver->file() + " has no devices");
    count = std::min<uint32_t>(count, 64);  // a driver claiming more is wrong; 64 is plenty to choose from
    for (uint32_t i = 0; i < count; ++i) {
      std::string why;
      std::unique_ptr<KernelDevice> device = KernelDevice::Open(driver, i, &why);
      const std::string subject = driver->name() + " device " + std::to_string(i);
      if (device == nullptr) {
        log->Add(kKilnDecisionDevice, subject, "device " + std::to_string(i) + " of " + driver->name() + " (" +
                                                    driver->file() + ") refused: " + why);
        continue;
      }
      log->Add(kKilnDecisionDevice, device->label(),
               "device " + std::to_string(i) + " of " + driver->name() + " (" + driver->file() +
                   "): " + DescribeDevice(*device));
      candidates.push_back({std::move(device), candidates.size()});
    }
  }

  int best = -1;
  for (size_t c = 0; c < candidates.size(); ++c) {
    const uint32_t type = candidates[c].device->info().type;
    if (options.policy == DevicePolicy::kAuto && type != kKilnHalDeviceGpu && type != kKilnHalDeviceAccelerator) {
      log->Add(kKilnDecisionDevice, candidates[c].device->label(),
               candidates[c].device->label() + " not chosen: policy auto uses only GPU or accelerator devices, "
               "this one is a " + DeviceTypeName(type) + " (use prefer-gpu to run there)");
      continue;
    }
    if (best < 0 || DeviceRank(type) < DeviceRank(candidates[best].device->info().type)) best = static_cast<int>(c);
  }
  if (best < 0) {
    if (options.policy == DevicePolicy::kGpuOnly) {
      const std::string msg = "policy gpu-only: no driver device can be used (see the driver and device "
                              "decisions); refusing to run on the CPU";
      log->Add(kKilnDecisionPolicy, "policy", msg);
      // The context or interpreter is not created, so its log cannot be read: the reasons go to the reporter.
      for (size_t i = 0; i < log->size(); ++i) {
        const Decision* d = log->Get(i);
        if (d->kind == kKilnDecisionDriver || d->kind == kKilnDecisionDevice || d->kind == kKilnDecisionPolicy) {
          if (d->message.find("refused") != std::string::npos || d->message.find("not chosen") != std::string::npos ||
              d->message.find("does not exist") != std::string::npos) {
            Report(options.reporter, options.reporter_user_data, "%s", d->message.c_str());
          }
        }
      }
      Report(options.reporter, options.reporter_user_data, "%s", msg.c_str());
      *status = kKilnUnsupported;
      return nullptr;
    }
    log->Add(kKilnDecisionPolicy, "policy",
             "policy " + policy + ": " + (candidates.empty() ? "no driver device loaded" : "no suitable device") +
                 "; kernels run on " + set->cpu_->label());
    return set;
  }
  for (size_t c = 0; c < candidates.size(); ++c) {
    if (static_cast<int>(c) != best && candidates[c].device != nullptr &&
        (options.policy != DevicePolicy::kAuto || DeviceRank(candidates[c].device->info().type) <= 1)) {
      log->Add(kKilnDecisionDevice, candidates[c].device->label(),
               candidates[c].device->label() + " not chosen: " + candidates[best].device->label() +
                   " ranks higher (gpu, accelerator, other, cpu; then search order)");
    }
  }
  set->accelerator_ = std::move(candidates[best].device);
  log->Add(kKilnDecisionPolicy, "policy",
           "policy " + policy + ": kernels run on " + set->accelerator_->label() +
               " where it supports them, otherwise on " + set->cpu_->label());
  return set;
}

DeviceSet::~DeviceSet() = default;

const ModulePlacement& DeviceSet::Place(const std::shared_ptr<const KernelModule>& module) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = placements_.find(module.get());
  if (it != placements_.end()) return it->second.placement;
  Placed& placed = placements_[module.get()];
  placed.module = module;
  const KernelModuleDesc& desc = module->desc();
  const KilnHalModuleDesc& hal = module->hal_desc();
  ModulePlacement& p = placed.placement;
  p.kernel_on_accelerator.assign(desc.kernels.size(), false);
  p.reduction_on_accelerator.assign(desc.reductions.size(), false);
  p.kernel_reason.assign(desc.kernels.size(), "");
  const std::string mod = ModuleLabel(*module);
  KernelDevice* accel = accelerator();
  auto record_all_cpu = [&](const std::string& reason) {
    for (size_t i = 0; i < desc.kernels.size(); ++i) {
      const KernelDesc& k = desc.kernels[i];
      p.kernel_reason[i] = reason;
      log_->Add(kKilnDecisionKernel, mod + ": kernel '" + k.name + "'",
                "kernel " + k.name + " (" + mod + ") runs on " + cpu_->label() + ": " + reason);
    }
  };
  if (accel == nullptr) {
    record_all_cpu(accelerator_failed_ ? "the driver device failed earlier" : "no driver device in use");
    return p;
  }
  const uint32_t device_level = accel->info().max_kernel_level;
  const std::string whole = ModuleLevelRefusal(hal.hal_level, device_level);
  if (!whole.empty()) {
    log_->Add(kKilnDecisionModule, mod,
              "module " + mod + " runs wholly on CPU: " + whole + " (" + accel->label() + ")");
    record_all_cpu("its module runs wholly on CPU");
    return p;
  }
  KilnHalModule* handle = accel->LoadModule(module);
  if (handle == nullptr) {
    const std::string errors = accel->hal()->TakeErrors();
    log_->Add(kKilnDecisionModule, mod,
              "module " + mod + " runs wholly on CPU: " + accel->label() + " could not load it" +
                  (errors.empty() ? "" : ": " + errors));
    record_all_cpu("its module runs wholly on CPU");
    return p;
  }
  const KilnHalDriver& d = accel->driver();
  for (size_t i = 0; i < desc.kernels.size(); ++i) {
    const KernelDesc& k = desc.kernels[i];
    const std::string subject = mod + ": kernel '" + k.name + "'";
    std::string reason = KernelLevelRefusal(hal.kernels[i].kernel_level, device_level);
    if (reason.empty() && d.module_kernel_supported != nullptr) {
      bool supported = true;
      const char* why = nullptr;
      if (d.module_kernel_supported(handle, static_cast<uint32_t>(i), &supported, &why) != kKilnOk) {
        const std::string errors = accel->hal()->TakeErrors();
        reason = accel->label() + ": module_kernel_supported failed" + (errors.empty() ? "" : ": " + errors);
      } else if (!supported) {
        reason = accel->label() + " cannot run it: " + (why ? std::string(why, strnlen(why, 1024)) : "no reason given");
      }
    }
    if (reason.empty()) {
      p.kernel_on_accelerator[i] = true;
      log_->Add(kKilnDecisionKernel, subject, "kernel " + k.name + " (" + mod + ") runs on " + accel->label());
    } else {
      p.kernel_reason[i] = reason;
      log_->Add(kKilnDecisionKernel, subject, "kernel " + k.name + " (" + mod + ") runs on CPU: " + reason);
    }
  }
  for (size_t i = 0; i < desc.reductions.size(); ++i) {
    const ReductionDesc& r = desc.reductions[i];
    const std::string subject = mod + ": reduction '" + r.name + "'";
    std::string reason = KernelLevelRefusal(hal.reductions[i].kernel_level, device_level);
    if (reason.empty() && d.launch_reduce == nullptr) {
      reason = accel->label() + " has no reductions (launch_reduce NULL)";
    }
    // HAL 1.1: a driver with reductions may still be unable to run this one (no GPU form, a device limit).
    if (reason.empty() && d.module_reduction_supported != nullptr) {
      bool supported = true;
      const char* why = nullptr;
      if (d.module_reduction_supported(handle, static_cast<uint32_t>(i), &supported, &why) != kKilnOk) {
        const std::string errors = accel->hal()->TakeErrors();
        reason = accel->label() + ": module_reduction_supported failed" + (errors.empty() ? "" : ": " + errors);
      } else if (!supported) {
        reason = accel->label() + " cannot run it: " + (why ? std::string(why, strnlen(why, 1024)) : "no reason given");
      }
    }
    if (reason.empty()) {
      p.reduction_on_accelerator[i] = true;
      log_->Add(kKilnDecisionKernel, subject, "reduction " + r.name + " (" + mod + ") runs on " + accel->label());
    } else {
      log_->Add(kKilnDecisionKernel, subject, "reduction " + r.name + " (" + mod + ") runs on CPU: " + reason);
    }
  }
  return p;
}

void DeviceSet::Fault(const std::string& what, KilnStatus status, const std::string& errors,
                      const std::string& quarantined, bool hung) {
  std::string message = accelerator_->label() + " failed " + what + " (" + StatusName(status) + ")" +
                        (errors.empty() ? "" : ": " + errors) + "; redone on " + cpu_->label();
  if (LaunchsOwnFault(status, hung)) {
    message += " (the kernel's own access failed, not the device: nothing moves off it)";
  } else {
    const int fault = faults_.fetch_add(1) + 1;
    const bool give_up = hung || fault >= kDeviceFaultLimit;
    const bool first = give_up && !accelerator_failed_.exchange(true);
    if (first) {
      message += ", and all later work of this interpreter or context runs there (" +
                 (hung ? std::string("a hung device is given up at once")
                       : "fault " + std::to_string(fault) + " of " + std::to_string(kDeviceFaultLimit) +
                             " gives the device up") +
                 ")";
    } else if (!give_up) {
      message += (quarantined.empty() ? "" : "; " + quarantined + " runs there from now on") + " (device fault " +
                 std::to_string(fault) + " of " + std::to_string(kDeviceFaultLimit) + ")";
    }
  }
  log_->Add(kKilnDecisionFallback, what, message);
  Report(options_.reporter, options_.reporter_user_data, "%s", message.c_str());
}

void DeviceSet::KernelFailed(const KernelModule* module, bool reduction, int index, const std::string& what,
                             KilnStatus status, const std::string& errors) {
  if (accelerator_ == nullptr) return;
  std::string quarantined;
  if (!LaunchsOwnFault(status, /*hung=*/false)) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = placements_.find(module);
    if (it != placements_.end()) {
      ModulePlacement& p = it->second.placement;
      std::vector<bool>& on = reduction ? p.reduction_on_accelerator : p.kernel_on_accelerator;
      if (index >= 0 && static_cast<size_t>(index) < on.size() && on[static_cast<size_t>(index)]) {
        on[static_cast<size_t>(index)] = false;
        const auto& desc = module->desc();
        const std::string& name = reduction ? desc.reductions[static_cast<size_t>(index)].name
                                            : desc.kernels[static_cast<size_t>(index)].name;
        quarantined = std::string(reduction ? "reduction '" : "kernel '") + name + "' of " + ModuleLabel(*module);
        if (!reduction) p.kernel_reason[static_cast<size_t>(index)] = "quarantined: a launch on the device failed";
      }
    }
  }
  Fault(what, status, errors, quarantined, /*hung=*/false);
}

void DeviceSet::AcceleratorFailed(const std::string& what, KilnStatus status, const std::string& errors, bool hung) {
  if (accelerator_ == nullptr) return;
  Fault(what, status, errors, "", hung);
}

}  // namespace kiln

extern "C" {

const char* KilnDevicePolicyName(KilnDevicePolicy policy) {
  // C callers may pass any int: read it as one (an out-of-range enum load is undefined in C++).
  int value;
  std::memcpy(&value, &policy, sizeof value);
  switch (value) {
    case kKilnDeviceAuto: return "auto";
    case kKilnDeviceCpuOnly: return "cpu-only";
    case kKilnDevicePreferGpu: return "prefer-gpu";
    case kKilnDeviceGpuOnly: return "gpu-only";
  }
  return "unknown";
}

}  // extern "C"
