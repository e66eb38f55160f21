// Data-movement and reduction ops: RESHAPE, SQUEEZE, CONCATENATION, PAD, TRANSPOSE, MEAN (tensor_ops.h).

#include "ops/reference/tensor_ops.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace kiln::ops::reference {

namespace {

std::string DimsToString(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// Row-major element strides of `dims`.
Dims Strides(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

// Advances the row-major multi-index `index` over `dims`; returns false after the last element.
bool Next(const Dims& dims, Dims* index) {
  for (size_t d = dims.size(); d-- > 0;) {
    if (++(*index)[d] < dims[d]) return true;
    (*index)[d] = 0;
  }
  return false;
}

}  // namespace

bool ReshapeOutputShape(const Dims& input, const std::vector<int32_t>& requested, Dims* output,
                        std::string* error) {
  const int64_t input_count = NumElements(input);
  int stretch = -1;
  int64_t known_count = 1;
  bool overflow = false;  // the known dimensions' product passed int64 (it is 0 all the same if one of them is 0)
  Dims result(requested.begin(), requested.end());
  for (size_t i = 0; i < requested.size(); ++i) {
    if (requested[i] == -1) {
      if (stretch != -1) {
        *error = "more than one dimension is -1";
        return false;
      }
      stretch = static_cast<int>(i);
    } else if (requested[i] < 0) {
      *error = "dimension " + std::to_string(i) + " is " + std::to_string(requested[i]);
      return false;
    } else if (requested[i] == 0) {
      known_count = 0;
      overflow = false;
    } else if (known_count != 0 && __builtin_mul_overflow(known_count, int64_t{requested[i]}, &known_count)) {
      overflow = true;
    }
  }
  if (overflow) {
    *error = "the shape " + DimsToString(Dims(requested.begin(), requested.end())) +
             " has more elements than a 64-bit count holds";
    return false;
  }
  if (stretch != -1) {
    if (known_count == 0) {
      *error = "cannot infer the -1 dimension when another dimension is 0";
      return false;
    }
    result[stretch] = input_count / known_count;
  }
  // The result's count without overflow: known_count is exact here, and the stretched dimension divides into it.
  const int64_t result_count = stretch != -1 ? known_count * result[stretch] : known_count;
  if (result_count != input_count) {
    *error = "cannot reshape " + DimsToString(input) + " (" + std::to_string(input_count) + " elements) to " +
             DimsToString(Dims(requested.begin(), requested.end()));
    return false;
  }
  *output = std::move(result);
  return true;
}

bool SqueezeOutputShape(const Dims& input, const std::vector<int32_t>& squeeze_dims, Dims* output,
                        std::string* error) {
  const int64_t rank = static_cast<int64_t>(input.size());
  std::vector<bool> squeeze(input.size(), squeeze_dims.empty());
  if (squeeze_dims.empty()) {
    for (size_t i = 0; i < input.size(); ++i) squeeze[i] = input[i] == 1;
  }
  for (int32_t dim : squeeze_dims) {
    const int64_t d = dim < 0 ? dim + rank : dim;
    if (d < 0 || d >= rank) {
      *error =
          "squeeze dimension " + std::to_string(dim) + " is out of range for rank " + std::to_string(rank);
      return false;
    }
    if (input[d] != 1) {
      *error = "squeeze dimension " + std::to_string(dim) + " has size " + std::to_string(input[d]) +
               ", not 1, in " + DimsToString(input);
      return false;
    }
    squeeze[d] = true;
  }
  output->clear();
  for (size_t i = 0; i < input.size(); ++i) {
    if (!squeeze[i]) output->push_back(input[i]);
  }
  return true;
}

bool ConcatOutputShape(const std::vector<Dims>& inputs, int axis, Dims* output, std::string* error) {
  if (inputs.empty()) {
    *error = "no inputs";
    return false;
  }
  Dims result = inputs[0];
  if (axis < 0 || axis >= static_cast<int>(result.size())) {
    *error = "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(result.size());
    return false;
  }
  for (size_t i = 1; i < inputs.size(); ++i) {
    const Dims& dims = inputs[i];
    bool compatible = dims.size() == result.size();
    for (size_t d = 0; compatible && d < dims.size(); ++d) {
      compatible = static_cast<int>(d) == axis || dims[d] == inputs[0][d];
    }
    if (!compatible) {
      *error = "input " + std::to_string(i) + " has shape " + DimsToString(dims) +
               ", incompatible with input 0 " + DimsToString(inputs[0]) + " for concatenation along axis " +
               std::to_string(axis);
      return false;
    }
    result[axis] += dims[axis];
  }
  *output = std::move(result);
  return true;
}

ConcatParams MakeConcatParams(const std::vector<Dims>& inputs, int axis, Activation activation) {
  ConcatParams params;
  params.activation = activation;
  params.outer = 1;
  for (int d = 0; d < axis; ++d) params.outer *= inputs[0][d];
  for (const Dims& dims : inputs) {
    int64_t slice = 1;
    for (size_t d = axis; d < dims.size(); ++d) slice *= dims[d];
    params.slice_sizes.push_back(slice);
  }
  return params;
}

void ConcatFloat(const ConcatParams& params, const float* const* inputs, float* output) {
  // The output is, for each outer index, the inputs' slices one after the other.
  float* out = output;
  for (int64_t o = 0; o < params.outer; ++o) {
    for (size_t i = 0; i < params.slice_sizes.size(); ++i) {
      const int64_t slice = params.slice_sizes[i];
      const float* in = inputs[i] + o * slice;
      for (int64_t k = 0; k < slice; ++k) *out++ = Activate(params.activation, in[k]);
    }
  }
}

void ConcatInt8(const ConcatParams& params, const int8_t* const* inputs, int8_t* output) {
  int8_t* out = output;
  for (int64_t o = 0; o < params.outer; ++o) {
    for (size_t i = 0; i < params.slice_sizes.size(); ++i) {
      const int64_t slice = params.slice_sizes[i];
      if (slice == 0) continue;
      std::memcpy(out, inputs[i] + o * slice, static_cast<size_t>(slice));
      out += slice;
    }
  }
}

Dims PadOutputShape(const PadParams& params) {
  Dims output(params.input_dims.size());
  for (size_t d = 0; d < output.size(); ++d)
    output[d] = params.before[d] + params.input_dims[d] + params.after[d];
  return output;
}

namespace {

template <typename T>
void PadTyped(const PadParams& params, T value, const T* input, T* output) {
  const Dims output_dims = PadOutputShape(params);
  const int64_t output_count = NumElements(output_dims);
  for (int64_t i = 0; i < output_count; ++i) output[i] = value;
  if (NumElements(params.input_dims) == 0) return;
  const Dims output_strides = Strides(output_dims);
  // Each input element lands at its index shifted by the leading padding.
  Dims index(params.input_dims.size(), 0);
  int64_t i = 0;
  do {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d) offset += (index[d] + params.before[d]) * output_strides[d];
    output[offset] = input[i++];
  } while (Next(params.input_dims, &index));
}

}  // namespace

void PadFloat(const PadParams& params, const float* input, float* output) {
  PadTyped(params, params.value, input, output);
}

template <typename T>
void PadQuantized(const PadParams& params, T value, const T* input, T* output) {
  PadTyped(params, value, input, output);
}
template void PadQuantized<int8_t>(const PadParams&, int8_t, const int8_t*, int8_t*);
template void PadQuantized<uint8_t>(const PadParams&, uint8_t, const uint8_t*, uint8_t*);

bool TransposeOutputShape(const Dims& input, const std::vector<int32_t>& perm, Dims* output,
                          std::string* error) {
  if (perm.size() != input.size()) {
    *error = "perm has " + std::to_string(perm.size()) + " entries for an input of rank " +
             std::to_string(input.size());
    return false;
  }
  std::vector<bool> seen(perm.size(), false);
  Dims result(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) {
    const int32_t p = perm[d];
    if (p < 0 || p >= static_cast<int32_t>(perm.size()) || seen[p]) {
      *error = "perm is not a permutation of [0, " + std::to_string(perm.size()) + ")";
      return false;
    }
    seen[p] = true;
    result[d] = input[p];
  }
  *output = std::move(result);
  return true;
}

namespace {

template <typename T>
void TransposeTyped(const TransposeParams& params, const T* input, T* output) {
  Dims output_dims(params.perm.size());
  for (size_t d = 0; d < output_dims.size(); ++d) output_dims[d] = params.input_dims[params.perm[d]];
  const int64_t count = NumElements(output_dims);
  if (count == 0) return;
  const Dims input_strides = Strides(params.input_dims);
  if (output_dims.empty()) {  // a scalar
    output[0] = input[0];
    return;
  }
  // Output index d walks input dimension perm[d]. The innermost loop runs along the input's contiguous last
  // dimension (output dimension `inner`), reading in order and writing with the output's stride there; the
  // index arithmetic happens once per run of that loop, not once per element.
  const size_t rank = output_dims.size();
  size_t inner = 0;
  while (params.perm[inner] != static_cast<int32_t>(rank - 1)) ++inner;
  const Dims output_strides = Strides(output_dims);
  const int64_t run = output_dims[inner];
  const int64_t run_stride = output_strides[inner];
  Dims outer = output_dims;
  outer[inner] = 1;
  Dims index(rank, 0);
  do {
    int64_t in_offset = 0, out_offset = 0;
    for (size_t d = 0; d < rank; ++d) {
      in_offset += index[d] * input_strides[params.perm[d]];
      out_offset += index[d] * output_strides[d];
    }
    const T* in = input + in_offset;
    T* out = output + out_offset;
    for (int64_t i = 0; i < run; ++i) out[i * run_stride] = in[i];
  } while (Next(outer, &index));
}

}  // namespace

void TransposeFloat(const TransposeParams& params, const float* input, float* output) {
  TransposeTyped(params, input, output);
}

template <typename T>
void TransposeQuantized(const TransposeParams& params, const T* input, T* output) {
  TransposeTyped(params, input, output);
}
template void TransposeQuantized<int8_t>(const TransposeParams&, const int8_t*, int8_t*);
template void TransposeQuantized<uint8_t>(const TransposeParams&, const uint8_t*, uint8_t*);

bool MakeMeanParams(const Dims& input, const std::vector<int32_t>& axes, bool keep_dims, MeanParams* params,
                    Dims* output, std::string* error) {
  const int64_t rank = static_cast<int64_t>(input.size());
  std::vector<bool> reduced(input.size(), false);
  for (int32_t axis : axes) {
    const int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) {
      *error = "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank);
      return false;
    }
    reduced[a] = true;
  }
  output->clear();
  for (size_t d = 0; d < input.size(); ++d) {
    if (!reduced[d]) {
      output->push_back(input[d]);
    } else if (keep_dims) {
      output->push_back(1);
    }
  }
  params->input_dims = input;
  params->reduced = std::move(reduced);
  return true;
}

namespace {

// Folds every input element into its output element (each set to `init` first) with `combine(acc, in)`,
// visiting the input in row-major order.
template <typename In, typename Acc, typename Combine>
void ReduceInto(const MeanParams& params, const In* input, Acc* output, Acc init, Combine combine) {
  const Dims& dims = params.input_dims;
  // The output, with or without kept 1s, is laid out as the input with reduced dimensions set to 1.
  Dims output_dims = dims;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (params.reduced[d]) output_dims[d] = 1;
  }
  const int64_t output_count = NumElements(output_dims);
  for (int64_t o = 0; o < output_count; ++o) output[o] = init;
  if (output_count == 0 || NumElements(dims) == 0) return;
  const Dims output_strides = Strides(output_dims);
  Dims index(dims.size(), 0);
  int64_t i = 0;
  do {
    int64_t offset = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (!params.reduced[d]) offset += index[d] * output_strides[d];
    }
    output[offset] = combine(output[offset], input[i++]);
  } while (Next(dims, &index));
}

template <typename In, typename Acc>
void ReduceSum(const MeanParams& params, const In* input, Acc* output) {
  ReduceInto(params, input, output, Acc{0}, [](Acc acc, In x) { return acc + static_cast<Acc>(x); });
}

int64_t OutputCount(const MeanParams& params) {
  int64_t count = 1;
  for (size_t d = 0; d < params.input_dims.size(); ++d) {
    if (!params.reduced[d]) count *= params.input_dims[d];
  }
  return count;
}

}  // namespace

int64_t ReducedCount(const MeanParams& params) {
  int64_t count = 1;
  for (size_t d = 0; d < params.input_dims.size(); ++d) {
    if (params.reduced[d]) count *= params.input_dims[d];
  }
  return count;
}

void MeanFloat(const MeanParams& params, const float* input, float* output) {
  const int64_t reduced_count = ReducedCount(params);
  const int64_t output_count = OutputCount(params);
  if (reduced_count == 0) {
    for (int64_t o = 0; o < output_count; ++o) output[o] = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  ReduceSum(params, input, output);
  for (int64_t o = 0; o < output_count; ++o) output[o] /= static_cast<float>(reduced_count);
}

void SumFloat(const MeanParams& params, const float* input, float* output) { ReduceSum(params, input, output); }

void SumInt8(const MeanParams& params, const int8_t* input, int64_t* sums) { ReduceSum(params, input, sums); }

void SumUInt8(const MeanParams& params, const uint8_t* input, int64_t* sums) { ReduceSum(params, input, sums); }

void SumInt16(const MeanParams& params, const int16_t* input, int64_t* sums) { ReduceSum(params, input, sums); }

}  // namespace kiln::ops::reference

namespace kiln::ops::reference {

// The type a running sum is kept in: the float itself, or the unsigned twin of an integer type (sums wrap).
template <typename T, bool = std::is_floating_point_v<T>>
struct RunningSum {
  using type = T;
};
template <typename T>
struct RunningSum<T, false> {
  using type = std::make_unsigned_t<T>;
};

template <typename T>
void Cumsum(const CumsumParams& params, const T* input, T* output) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < params.axis; ++d) outer *= params.dims[d];
  for (size_t d = params.axis + 1; d < params.dims.size(); ++d) inner *= params.dims[d];
  const int64_t length = params.dims[params.axis];
  using Sum = typename RunningSum<T>::type;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      Sum sum = 0;
      for (int64_t k = 0; k < length; ++k) {
        const int64_t at = (o * length + (params.reverse ? length - 1 - k : k)) * inner + i;
        if (params.exclusive) {
          output[at] = static_cast<T>(sum);
          sum += static_cast<Sum>(input[at]);
        } else {
          sum += static_cast<Sum>(input[at]);
          output[at] = static_cast<T>(sum);
        }
      }
    }
  }
}

template void Cumsum<float>(const CumsumParams&, const float*, float*);
template void Cumsum<int32_t>(const CumsumParams&, const int32_t*, int32_t*);
template void Cumsum<int64_t>(const CumsumParams&, const int64_t*, int64_t*);

template <typename T>
void ReduceElements(ReduceKind kind, const MeanParams& params, const T* input, T* output) {
  switch (kind) {
    case ReduceKind::kMax:
      // A NaN never replaces the running value (LiteRT's `in > current`), and an empty reduction gives lowest().
      ReduceInto(params, input, output, std::numeric_limits<T>::lowest(),
                 [](T acc, T x) { return x > acc ? x : acc; });
      return;
    case ReduceKind::kMin:
      ReduceInto(params, input, output, std::numeric_limits<T>::max(), [](T acc, T x) { return x < acc ? x : acc; });
      return;
    case ReduceKind::kProd:
      if constexpr (std::is_floating_point_v<T>) {
        ReduceInto(params, input, output, T{1}, [](T acc, T x) { return acc * x; });
      } else {
        // Wrapping, in an unsigned type at least as wide as unsigned int (narrower ones would promote to int).
        using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
        ReduceInto(params, input, output, T{1},
                   [](T acc, T x) { return static_cast<T>(static_cast<U>(acc) * static_cast<U>(x)); });
      }
      return;
    case ReduceKind::kAny:
      // Bools as their bytes: any non-zero byte is true (a byte other than 0 or 1 is no valid bool to load).
      if constexpr (std::is_same_v<T, uint8_t>) {
        ReduceInto(params, input, output, uint8_t{0}, [](uint8_t a, uint8_t x) { return uint8_t{a || x != 0}; });
      }
      return;
    case ReduceKind::kAll:
      if constexpr (std::is_same_v<T, uint8_t>) {
        ReduceInto(params, input, output, uint8_t{1}, [](uint8_t a, uint8_t x) { return uint8_t{a && x != 0}; });
      }
      return;
  }
}

template void ReduceElements<float>(ReduceKind, const MeanParams&, const float*, float*);
template void ReduceElements<int8_t>(ReduceKind, const MeanParams&, const int8_t*, int8_t*);
template void ReduceElements<uint8_t>(ReduceKind, const MeanParams&, const uint8_t*, uint8_t*);
template void ReduceElements<int16_t>(ReduceKind, const MeanParams&, const int16_t*, int16_t*);
template void ReduceElements<int32_t>(ReduceKind, const MeanParams&, const int32_t*, int32_t*);
template void ReduceElements<int64_t>(ReduceKind, const MeanParams&, const int64_t*, int64_t*);

}  // namespace kiln::ops::reference
