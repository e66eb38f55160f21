// STRIDED_SLICE, SLICE, GATHER and EXPAND_DIMS: shape logic and byte-moving kernels (slicing.h).
#include "ops/reference/slicing.h"

#include <algorithm>
#include <bitset>
#include <cstring>

namespace kiln::ops::reference {
namespace {

std::string DimsText(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// Row-major element strides of `dims`.
std::vector<int64_t> Strides(const Dims& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

// ceil(a / b) for b != 0, in integers.
int64_t CeilDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  const int64_t r = a % b;
  if (r != 0 && ((r > 0) == (b > 0))) ++q;
  return q;
}

bool Bit(uint32_t mask, int i) { return ((mask >> i) & 1u) != 0; }

// One dimension of the input as STRIDED_SLICE sees it after its spec is expanded.
struct EffectiveDim {
  enum Kind { kFull, kNewAxis, kSpec } kind = kFull;
  int spec_index = -1;  // kSpec: the entry of begin/end/strides
  int input_dim = -1;   // kFull, kSpec: the input dimension
};

// Expands the ellipsis and new axes of `spec` (LiteRT's rules: an ellipsis covers the input dimensions the
// other entries leave, at least one; an entry with both ellipsis and new-axis bits is an ellipsis; dimensions
// after the last entry are taken whole).
bool ExpandSpec(const Dims& input, const StridedSliceSpec& spec, std::vector<EffectiveDim>* out,
                uint32_t* new_axis_mask, std::string* error) {
  const size_t n = spec.begin.size();
  if (spec.end.size() != n || spec.strides.size() != n) {
    *error = "begin, end and strides have " + std::to_string(n) + ", " + std::to_string(spec.end.size()) +
             " and " + std::to_string(spec.strides.size()) + " entries; they must have the same number";
    return false;
  }
  const int rank = static_cast<int>(input.size());
  if (n > 32) {
    *error = "begin has " + std::to_string(n) + " entries, more than the masks can address";
    return false;
  }
  const uint32_t valid = n == 32 ? ~0u : ((1u << n) - 1u);
  const uint32_t ellipsis = spec.ellipsis_mask & valid;
  const uint32_t new_axis = spec.new_axis_mask & valid & ~ellipsis;
  *new_axis_mask = new_axis;
  if (std::bitset<32>(ellipsis).count() > 1) {
    *error = "ellipsis_mask " + std::to_string(spec.ellipsis_mask) + " has more than one bit set";
    return false;
  }
  const int num_new = static_cast<int>(std::bitset<32>(new_axis).count());
  const int effective = rank + num_new;
  if (effective > kMaxStridedSliceDims) {
    *error = "the input has rank " + std::to_string(rank) + " and the slice adds " + std::to_string(num_new) +
             " axes; at most " + std::to_string(kMaxStridedSliceDims) + " dimensions are supported";
    return false;
  }
  if (static_cast<int>(n) > effective) {
    *error = "begin has " + std::to_string(n) + " entries but the input has rank " + std::to_string(rank) +
             (num_new > 0 ? " (plus " + std::to_string(num_new) + " new axes)" : "");
    return false;
  }
  const int covered = 1 + effective - static_cast<int>(n);  // dimensions an ellipsis stands for
  out->clear();
  int spec_i = 0;
  int in_d = 0;
  while (static_cast<int>(out->size()) < effective) {
    EffectiveDim e;
    if (spec_i < static_cast<int>(n) && Bit(ellipsis, spec_i)) {
      for (int k = 0; k < covered; ++k) {
        e.kind = EffectiveDim::kFull;
        e.input_dim = in_d++;
        out->push_back(e);
      }
      ++spec_i;
      continue;
    }
    if (spec_i < static_cast<int>(n) && Bit(new_axis, spec_i)) {
      e.kind = EffectiveDim::kNewAxis;
      e.spec_index = spec_i++;
    } else if (spec_i < static_cast<int>(n)) {
      e.kind = EffectiveDim::kSpec;
      e.spec_index = spec_i++;
      e.input_dim = in_d++;
    } else {
      e.kind = EffectiveDim::kFull;
      e.input_dim = in_d++;
    }
    out->push_back(e);
  }
  return true;
}

template <size_t N>
void CopyBox(const StridedSlicePlan& plan, const unsigned char* in, unsigned char* out) {
  const size_t nd = plan.count.size();
  int64_t total = 1;
  for (int64_t c : plan.count) total *= c;
  if (total == 0) return;
  std::vector<int64_t> index(nd, 0);
  std::vector<int64_t> advance(nd);  // input elements between neighbours along each dimension
  int64_t offset = 0;
  for (size_t d = 0; d < nd; ++d) {
    offset += plan.start[d] * plan.input_stride[d];
    advance[d] = plan.step[d] * plan.input_stride[d];
  }
  for (int64_t o = 0; o < total; ++o) {
    std::memcpy(out + static_cast<size_t>(o) * N, in + static_cast<size_t>(offset) * N, N);
    for (size_t d = nd; d-- > 0;) {
      if (++index[d] < plan.count[d]) {
        offset += advance[d];
        break;
      }
      offset -= (plan.count[d] - 1) * advance[d];
      index[d] = 0;
    }
  }
}

void CopyBoxAny(const StridedSlicePlan& plan, size_t element_size, const unsigned char* in,
                unsigned char* out) {
  switch (element_size) {
    case 1:
      return CopyBox<1>(plan, in, out);
    case 2:
      return CopyBox<2>(plan, in, out);
    case 4:
      return CopyBox<4>(plan, in, out);
    case 8:
      return CopyBox<8>(plan, in, out);
    default:
      break;
  }
  // Other sizes: copy as bytes, with the element as an extra innermost dimension.
  StridedSlicePlan bytes = plan;
  for (int64_t& s : bytes.input_stride) s *= static_cast<int64_t>(element_size);
  bytes.start.push_back(0);
  bytes.step.push_back(1);
  bytes.count.push_back(static_cast<int64_t>(element_size));
  bytes.input_stride.push_back(1);
  CopyBox<1>(bytes, in, out);
}

template <typename Index>
bool GatherImpl(const GatherParams& p, size_t element_size, const void* input, const Index* indices,
                void* output, int64_t* bad) {
  const int64_t total_indices = p.batch * p.num_indices;
  for (int64_t i = 0; i < total_indices; ++i) {
    if (indices[i] < 0 || static_cast<int64_t>(indices[i]) >= p.axis_size) {
      *bad = i;
      return false;
    }
  }
  const size_t block = static_cast<size_t>(p.inner) * element_size;
  if (block == 0) return true;
  const auto* in = static_cast<const unsigned char*>(input);
  auto* out = static_cast<unsigned char*>(output);
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t o = 0; o < p.outer; ++o) {
      const int64_t in_base = (b * p.outer + o) * p.axis_size;
      const int64_t out_base = (b * p.outer + o) * p.num_indices;
      for (int64_t i = 0; i < p.num_indices; ++i) {
        const int64_t index = static_cast<int64_t>(indices[b * p.num_indices + i]);
        std::memcpy(out + static_cast<size_t>(out_base + i) * block,
                    in + static_cast<size_t>(in_base + index) * block, block);
      }
    }
  }
  return true;
}

}  // namespace

bool MakeStridedSlicePlan(const Dims& input, const StridedSliceSpec& spec, StridedSlicePlan* plan,
                          std::string* error) {
  std::vector<EffectiveDim> dims;
  uint32_t new_axis = 0;
  if (!ExpandSpec(input, spec, &dims, &new_axis, error)) return false;
  const std::vector<int64_t> strides = Strides(input);
  *plan = StridedSlicePlan();
  for (const EffectiveDim& e : dims) {
    int64_t start = 0, step = 1, count = 1, input_stride = 0;
    bool keep = true;
    if (e.kind == EffectiveDim::kFull) {
      count = input[e.input_dim];
      input_stride = strides[e.input_dim];
    } else if (e.kind == EffectiveDim::kSpec) {
      const int i = e.spec_index;
      const int64_t size = input[e.input_dim];
      input_stride = strides[e.input_dim];
      step = spec.strides[i];
      if (step == 0) {
        *error = "strides[" + std::to_string(i) + "] is 0; a stride must be non-zero";
        return false;
      }
      if (Bit(spec.shrink_axis_mask, i)) {
        // Shrinking takes element begin[i] whatever the stride, and drops the dimension.
        const int64_t b = spec.begin[i];
        if (b < -size || b >= size) {
          *error = "begin[" + std::to_string(i) + "] = " + std::to_string(b) +
                   " is out of range for shrinking dimension " + std::to_string(e.input_dim) + " of size " +
                   std::to_string(size);
          return false;
        }
        start = b < 0 ? b + size : b;
        step = 1;
        keep = false;
      } else if (size == 0) {
        count = 0;
      } else {
        const bool forward = step > 0;
        int64_t b = spec.begin[i];
        if (b < 0) b += size;
        start = forward ? std::clamp<int64_t>(b, 0, size) : std::clamp<int64_t>(b, -1, size - 1);
        if (Bit(spec.begin_mask, i)) start = forward ? 0 : size - 1;
        int64_t stop = spec.end[i];
        if (spec.offset) stop += start;
        if (stop < 0) stop += size;
        stop = forward ? std::clamp<int64_t>(stop, 0, size) : std::clamp<int64_t>(stop, -1, size - 1);
        if (Bit(spec.end_mask, i)) stop = forward ? size : -1;
        count = std::max<int64_t>(0, CeilDiv(stop - start, step));
        if (count == 0) start = 0;
      }
    }
    plan->start.push_back(start);
    plan->step.push_back(step);
    plan->count.push_back(count);
    plan->input_stride.push_back(input_stride);
    if (keep) plan->output_dims.push_back(count);
  }
  return true;
}

bool StridedSliceOffsetShape(const Dims& input, const StridedSliceSpec& spec, Dims* output,
                             std::string* error) {
  std::vector<EffectiveDim> dims;
  uint32_t new_axis = 0;
  if (!ExpandSpec(input, spec, &dims, &new_axis, error)) return false;
  output->clear();
  for (const EffectiveDim& e : dims) {
    if (e.kind == EffectiveDim::kFull) {
      output->push_back(input[e.input_dim]);
    } else if (e.kind == EffectiveDim::kNewAxis) {
      output->push_back(1);
    } else {
      const int i = e.spec_index;
      if (spec.strides[i] == 0) {
        *error = "strides[" + std::to_string(i) + "] is 0; a stride must be non-zero";
        return false;
      }
      if (Bit(spec.shrink_axis_mask, i)) continue;
      output->push_back(std::max<int64_t>(0, CeilDiv(spec.end[i], spec.strides[i])));
    }
  }
  return true;
}

bool MakeSlicePlan(const Dims& input, const std::vector<int64_t>& begin, const std::vector<int64_t>& size,
                   StridedSlicePlan* plan, std::string* error) {
  const size_t rank = input.size();
  if (begin.size() != rank || size.size() != rank) {
    *error = "begin and size have " + std::to_string(begin.size()) + " and " + std::to_string(size.size()) +
             " entries; the input " + DimsText(input) + " needs " + std::to_string(rank);
    return false;
  }
  const std::vector<int64_t> strides = Strides(input);
  *plan = StridedSlicePlan();
  for (size_t d = 0; d < rank; ++d) {
    const int64_t b = begin[d];
    int64_t s = size[d];
    if (b < 0 || b > input[d]) {
      *error = "begin[" + std::to_string(d) + "] = " + std::to_string(b) + " is out of range for dimension " +
               std::to_string(d) + " of size " + std::to_string(input[d]);
      return false;
    }
    if (s < -1) {
      *error = "size[" + std::to_string(d) + "] = " + std::to_string(s) + " is negative (only -1 is allowed)";
      return false;
    }
    if (s == -1) s = input[d] - b;
    if (b + s > input[d]) {
      *error = "begin[" + std::to_string(d) + "] + size[" + std::to_string(d) + "] = " + std::to_string(b) +
               " + " + std::to_string(s) + " exceeds dimension " + std::to_string(d) + " of size " +
               std::to_string(input[d]);
      return false;
    }
    plan->start.push_back(s == 0 ? 0 : b);
    plan->step.push_back(1);
    plan->count.push_back(s);
    plan->input_stride.push_back(strides[d]);
    plan->output_dims.push_back(s);
  }
  return true;
}

void StridedSliceCopy(const StridedSlicePlan& plan, size_t element_size, const void* input, void* output) {
  CopyBoxAny(plan, element_size, static_cast<const unsigned char*>(input),
             static_cast<unsigned char*>(output));
}

bool MakeGatherParams(const Dims& input, const Dims& indices, int axis, int batch_dims, GatherParams* params,
                      Dims* output, std::string* error) {
  const int rank = static_cast<int>(input.size());
  const int index_rank = static_cast<int>(indices.size());
  const int given_axis = axis, given_batch_dims = batch_dims;
  if (axis < 0) axis += rank;
  if (batch_dims < 0) batch_dims += index_rank;
  if (axis < 0 || axis >= rank) {
    *error = "axis " + std::to_string(given_axis) + " is out of range for an input of rank " +
             std::to_string(rank);
    return false;
  }
  if (batch_dims < 0 || batch_dims > index_rank) {
    *error = "batch_dims " + std::to_string(given_batch_dims) + " is out of range for indices of rank " +
             std::to_string(index_rank);
    return false;
  }
  if (batch_dims > axis) {
    *error = "batch_dims " + std::to_string(batch_dims) + " must not exceed axis " + std::to_string(axis);
    return false;
  }
  for (int d = 0; d < batch_dims; ++d) {
    if (input[d] != indices[d]) {
      *error = "batch dimension " + std::to_string(d) + " differs: input " + DimsText(input) + ", indices " +
               DimsText(indices);
      return false;
    }
  }
  *params = GatherParams();
  output->clear();
  for (int d = 0; d < batch_dims; ++d) params->batch *= input[d];
  for (int d = batch_dims; d < axis; ++d) params->outer *= input[d];
  params->axis_size = input[axis];
  for (int d = axis + 1; d < rank; ++d) params->inner *= input[d];
  params->num_indices = 1;
  for (int d = batch_dims; d < index_rank; ++d) params->num_indices *= indices[d];
  output->assign(input.begin(), input.begin() + axis);
  output->insert(output->end(), indices.begin() + batch_dims, indices.end());
  output->insert(output->end(), input.begin() + axis + 1, input.end());
  return true;
}

bool GatherCopy(const GatherParams& params, size_t element_size, const void* input, const int32_t* indices,
                void* output, int64_t* bad) {
  return GatherImpl(params, element_size, input, indices, output, bad);
}

bool GatherCopy(const GatherParams& params, size_t element_size, const void* input, const int64_t* indices,
                void* output, int64_t* bad) {
  return GatherImpl(params, element_size, input, indices, output, bad);
}

bool ExpandDimsOutputShape(const Dims& input, int64_t axis, Dims* output, std::string* error) {
  const int64_t rank = static_cast<int64_t>(input.size());
  const int64_t given = axis;
  if (axis < 0) axis += rank + 1;
  if (axis < 0 || axis > rank) {
    *error = "axis " + std::to_string(given) + " is out of range [" + std::to_string(-rank - 1) + ", " +
             std::to_string(rank) + "] for an input of rank " + std::to_string(rank);
    return false;
  }
  *output = input;
  output->insert(output->begin() + axis, 1);
  return true;
}

}  // namespace kiln::ops::reference
