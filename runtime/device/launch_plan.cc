// Planning launches: a forEach or reduction checked against the kernel's reflection and cut into launches
// of at most three dimensions, before any driver is involved.
#include "runtime/device/launch_plan.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "runtime/device/kernel_device.h"

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
  } else if (num_inputs == 0) {
    // Neither inputs nor an output: the launch options alone give the extent, [0, end) along each axis they
    // name (an end of 0 along y or z means that axis is absent).
    if (options == nullptr || options->x_end == 0) {
      reporter->ReportError("%s has no input and no output: give its range with launch options (x_end, and y_end "
                            "and z_end for more dimensions)",
                            where.c_str());
      return kKilnInvalidArgument;
    }
    if (options->x_start != 0 || options->y_start != 0 || options->z_start != 0) {
      reporter->ReportError("%s has no input and no output: its range must start at 0 along every axis",
                            where.c_str());
      return kKilnUnsupported;
    }
    out_cells = {options->x_end};
    if (options->y_end != 0 || options->z_end != 0) out_cells.push_back(options->y_end ? options->y_end : 1);
    if (options->z_end != 0) out_cells.push_back(options->z_end);
    std::reverse(out_cells.begin(), out_cells.end());  // outermost first, as a tensor's dims
    options = nullptr;                                  // the range is the whole launch
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

}  // namespace kiln
