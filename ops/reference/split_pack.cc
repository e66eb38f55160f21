// SPLIT, SPLIT_V, PACK, UNPACK, TILE and BROADCAST_TO: shape logic and byte-moving kernels (split_pack.h).
#include "ops/reference/split_pack.h"

#include <cstring>

namespace kiln::ops::reference {
namespace {

std::string DimsText(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// outer and inner of `input` around `axis`.
void OuterInner(const Dims& input, int64_t axis, AxisPieces* pieces) {
  pieces->outer = 1;
  pieces->inner = 1;
  for (int64_t d = 0; d < axis; ++d) pieces->outer *= input[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < input.size(); ++d) pieces->inner *= input[d];
}

}  // namespace

bool NormalizeAxis(int64_t axis, int64_t rank, int64_t* out, std::string* error) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    *error = "axis " + std::to_string(axis) + " is out of range [" + std::to_string(-rank) + ", " +
             std::to_string(rank) + ") for an input of rank " + std::to_string(rank);
    return false;
  }
  *out = a;
  return true;
}

bool MakeSplit(const Dims& input, int64_t axis, int64_t num_splits, AxisPieces* pieces, std::string* error) {
  if (num_splits < 1) {
    *error = "num_splits is " + std::to_string(num_splits) + "; it must be at least 1";
    return false;
  }
  const int64_t size = input[static_cast<size_t>(axis)];
  if (size % num_splits != 0) {
    *error = "dimension " + std::to_string(axis) + " of input " + DimsText(input) + " (size " +
             std::to_string(size) + ") does not split evenly into " + std::to_string(num_splits);
    return false;
  }
  OuterInner(input, axis, pieces);
  pieces->sizes.assign(static_cast<size_t>(num_splits), size / num_splits);
  return true;
}

bool MakeSplitV(const Dims& input, int64_t axis, const std::vector<int64_t>& size_splits, AxisPieces* pieces,
                std::string* error) {
  const int64_t size = input[static_cast<size_t>(axis)];
  int64_t sum = 0;
  int64_t minus_one = -1;
  for (size_t i = 0; i < size_splits.size(); ++i) {
    const int64_t s = size_splits[i];
    if (s == -1) {
      if (minus_one >= 0) {
        *error = "size_splits holds more than one -1";
        return false;
      }
      minus_one = static_cast<int64_t>(i);
    } else if (s < 0) {
      *error =
          "size_splits[" + std::to_string(i) + "] is " + std::to_string(s) + "; sizes must be >= 0 or -1";
      return false;
    } else {
      sum += s;
    }
  }
  pieces->sizes = size_splits;
  if (minus_one >= 0) {
    if (sum > size) {
      *error = "size_splits sum to " + std::to_string(sum) + ", more than dimension " + std::to_string(axis) +
               " of size " + std::to_string(size);
      return false;
    }
    pieces->sizes[static_cast<size_t>(minus_one)] = size - sum;
  } else if (sum != size) {
    *error = "size_splits sum to " + std::to_string(sum) + ", not dimension " + std::to_string(axis) +
             " of size " + std::to_string(size);
    return false;
  }
  OuterInner(input, axis, pieces);
  return true;
}

Dims PieceShape(const Dims& input, int64_t axis, int64_t size) {
  Dims out = input;
  out[static_cast<size_t>(axis)] = size;
  return out;
}

void SplitCopy(const AxisPieces& pieces, size_t element_size, const void* input, void* const* outputs) {
  int64_t axis_total = 0;
  for (int64_t s : pieces.sizes) axis_total += s;
  const auto* in = static_cast<const unsigned char*>(input);
  const size_t row = static_cast<size_t>(axis_total * pieces.inner) * element_size;
  size_t offset = 0;  // bytes into an input row where the piece starts
  for (size_t i = 0; i < pieces.sizes.size(); ++i) {
    const size_t block = static_cast<size_t>(pieces.sizes[i] * pieces.inner) * element_size;
    if (block > 0) {
      auto* out = static_cast<unsigned char*>(outputs[i]);
      for (int64_t o = 0; o < pieces.outer; ++o) {
        std::memcpy(out + static_cast<size_t>(o) * block, in + static_cast<size_t>(o) * row + offset, block);
      }
    }
    offset += block;
  }
}

void JoinCopy(const AxisPieces& pieces, size_t element_size, const void* const* inputs, void* output) {
  int64_t axis_total = 0;
  for (int64_t s : pieces.sizes) axis_total += s;
  auto* out = static_cast<unsigned char*>(output);
  const size_t row = static_cast<size_t>(axis_total * pieces.inner) * element_size;
  size_t offset = 0;
  for (size_t i = 0; i < pieces.sizes.size(); ++i) {
    const size_t block = static_cast<size_t>(pieces.sizes[i] * pieces.inner) * element_size;
    if (block > 0) {
      const auto* in = static_cast<const unsigned char*>(inputs[i]);
      for (int64_t o = 0; o < pieces.outer; ++o) {
        std::memcpy(out + static_cast<size_t>(o) * row + offset, in + static_cast<size_t>(o) * block, block);
      }
    }
    offset += block;
  }
}

bool MakePack(const Dims& input, int64_t axis, int64_t count, AxisPieces* pieces, Dims* output,
              std::string* error) {
  const int64_t rank = static_cast<int64_t>(input.size());
  int64_t a = 0;
  if (!NormalizeAxis(axis, rank + 1, &a, error)) return false;
  if (count < 1) {
    *error = "values_count is " + std::to_string(count) + "; it must be at least 1";
    return false;
  }
  *output = input;
  output->insert(output->begin() + a, count);
  OuterInner(*output, a, pieces);
  pieces->sizes.assign(static_cast<size_t>(count), 1);
  return true;
}

bool MakeUnpack(const Dims& input, int64_t axis, int64_t count, AxisPieces* pieces, Dims* output,
                std::string* error) {
  const int64_t rank = static_cast<int64_t>(input.size());
  int64_t a = 0;
  if (!NormalizeAxis(axis, rank, &a, error)) return false;
  if (input[static_cast<size_t>(a)] != count) {
    *error = "dimension " + std::to_string(a) + " of input " + DimsText(input) + " has size " +
             std::to_string(input[static_cast<size_t>(a)]) + ", not num " + std::to_string(count);
    return false;
  }
  *output = input;
  output->erase(output->begin() + a);
  OuterInner(input, a, pieces);
  pieces->sizes.assign(static_cast<size_t>(count), 1);
  return true;
}

bool MakeTile(const Dims& input, const std::vector<int64_t>& multiples, RepeatParams* params,
              std::string* error) {
  if (multiples.size() != input.size()) {
    *error = "multiples has " + std::to_string(multiples.size()) + " entries; input " + DimsText(input) +
             " needs " + std::to_string(input.size());
    return false;
  }
  params->input_dims = input;
  params->output_dims = input;
  for (size_t d = 0; d < input.size(); ++d) {
    if (multiples[d] < 0) {
      *error =
          "multiples[" + std::to_string(d) + "] is " + std::to_string(multiples[d]) + "; it must be >= 0";
      return false;
    }
    params->output_dims[d] = input[d] * multiples[d];
  }
  return true;
}

bool MakeBroadcastTo(const Dims& input, const std::vector<int64_t>& shape, RepeatParams* params,
                     std::string* error) {
  if (shape.size() < input.size()) {
    *error = "shape " + DimsText(shape) + " has fewer dimensions than input " + DimsText(input);
    return false;
  }
  const size_t lead = shape.size() - input.size();
  params->input_dims.assign(lead, 1);
  params->input_dims.insert(params->input_dims.end(), input.begin(), input.end());
  params->output_dims = shape;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0) {
      *error = "shape " + DimsText(shape) + " has a negative dimension";
      return false;
    }
    if (params->input_dims[d] != 1 && params->input_dims[d] != shape[d]) {
      *error = "input " + DimsText(input) + " does not broadcast to shape " + DimsText(shape);
      return false;
    }
  }
  return true;
}

void RepeatCopy(const RepeatParams& params, size_t element_size, const void* input, void* output) {
  const size_t rank = params.output_dims.size();
  const int64_t total = NumElements(params.output_dims);
  if (total == 0) return;
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * params.input_dims[d];
  std::vector<int64_t> coord(rank, 0), in_coord(rank, 0);
  const auto* in = static_cast<const unsigned char*>(input);
  auto* out = static_cast<unsigned char*>(output);
  int64_t in_offset = 0;
  for (int64_t o = 0; o < total; ++o) {
    std::memcpy(out + static_cast<size_t>(o) * element_size,
                in + static_cast<size_t>(in_offset) * element_size, element_size);
    for (size_t d = rank; d-- > 0;) {
      ++coord[d];
      // The input coordinate wraps at the input's size (a size-1 dimension stays at 0).
      if (++in_coord[d] == params.input_dims[d]) {
        in_coord[d] = 0;
        in_offset -= (params.input_dims[d] - 1) * in_strides[d];
      } else {
        in_offset += in_strides[d];
      }
      if (coord[d] < params.output_dims[d]) break;
      coord[d] = 0;
      in_offset -= in_coord[d] * in_strides[d];
      in_coord[d] = 0;
    }
  }
}

}  // namespace kiln::ops::reference
