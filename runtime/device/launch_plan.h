// The runtime's half of a launch, before any driver is involved: a forEach or reduction checked against the
// kernel's reflection (element types, shapes, broadcasting) and cut into launches, and the HAL structs that
// describe one launch. A failure here is the caller's; a failure after it is the driver's.
#ifndef KILN_RUNTIME_DEVICE_LAUNCH_PLAN_H_
#define KILN_RUNTIME_DEVICE_LAUNCH_PLAN_H_

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "kiln/compute.h"
#include "kiln/hal.h"
#include "runtime/core.h"
#include "runtime/device/kernel_module.h"

namespace kiln {

class KernelDevice;

// One launch of a forEach: up to 3 dims (x innermost), and per tensor (inputs, then the output) the byte offset
// of cell (0, 0, 0) and the byte strides.
struct LaunchGeometry {
  uint32_t dim[3] = {1, 1, 1};
  std::vector<uint64_t> base;
  std::vector<std::array<uint64_t, 3>> strides;
};

// A forEach checked against the kernel's reflection and cut into launches; the runtime's half of a launch,
// before any driver is involved (so a failure after it is the driver's).
struct ForEachPlan {
  int kernel_index = -1;
  std::vector<const KilnTensor*> tensors;  // inputs, then the output when the kernel has one
  std::vector<uint32_t> element_sizes;     // per tensor
  int num_inputs = 0;
  bool has_output = false;
  bool empty = false;  // nothing to compute (a zero extent)
  std::vector<LaunchGeometry> launches;
};
// Checks a forEach of kernel `kernel_index` and plans it. Reports through `reporter` and returns an error for
// anything wrong with the arguments.
KilnStatus PlanForEach(const KernelModule& module, int kernel_index, const KilnTensor* const* inputs, int num_inputs,
                       KilnTensor* output, const KilnLaunchOptions* options, KernelDevice* reporter,
                       ForEachPlan* plan);

// The buffer views of one launch of geometry `g`: tensor t in `buffer_of(t)`, with `element_sizes[t]`.
std::vector<KilnHalBufferView> LaunchViews(const LaunchGeometry& g,
                                           const std::vector<uint32_t>& element_sizes,
                                           const std::function<KilnHalBuffer*(size_t)>& buffer_of);
// One launch of `plan` with geometry `g` over `views` (LaunchViews), which must outlive the launch.
KilnHalForEachDesc ForEachLaunch(const ForEachPlan& plan, const LaunchGeometry& g,
                                 const std::vector<KilnHalBufferView>& views);

struct ReducePlan {
  int reduction_index = -1;
  std::vector<const KilnTensor*> inputs;
  std::vector<uint32_t> element_sizes;
  LaunchGeometry launch;
  size_t result_size = 0;
};
KilnStatus PlanReduce(const KernelModule& module, int reduction_index, const KilnTensor* const* inputs,
                      int num_inputs, size_t result_size, const KilnLaunchOptions* options, KernelDevice* reporter,
                      ReducePlan* plan);


// The cells a kernel element type spans in `tensor`: its dims without the innermost one when the element is a
// vector (which must equal the vector's lanes). False with `*error` when the types or lanes do not match.
bool KernelCellDims(const KilnTensor& tensor, const KernelTypeDesc& element, std::vector<int64_t>* cells,
                    std::string* error);

// numpy broadcasting of cell shapes. False with `*error` when they are incompatible.
bool BroadcastCellDims(const std::vector<std::vector<int64_t>>& shapes, std::vector<int64_t>* out,
                       std::string* error);

}  // namespace kiln

#endif  // KILN_RUNTIME_DEVICE_LAUNCH_PLAN_H_
