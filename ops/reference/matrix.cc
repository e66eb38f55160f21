#include "ops/reference/matrix.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace kiln::ops::reference {

int64_t SortedSegmentCount(const int32_t* ids, int64_t count, int64_t* bad) {
  for (int64_t i = 0; i < count; ++i) {
    const int64_t previous = i == 0 ? -1 : ids[i - 1];
    const int64_t step = static_cast<int64_t>(ids[i]) - previous;
    if (i == 0 ? ids[0] != 0 : (step != 0 && step != 1)) {
      *bad = i;
      return -1;
    }
  }
  return count == 0 ? 0 : static_cast<int64_t>(ids[count - 1]) + 1;
}

void MatrixDiag(const void* input, int64_t batches, int64_t n, size_t element_size, void* output) {
  if (batches * n == 0) return;  // nothing to write (and the buffers may be null)
  const auto* in = static_cast<const char*>(input);
  auto* out = static_cast<char*>(output);
  const size_t matrix = static_cast<size_t>(n * n) * element_size;
  for (int64_t b = 0; b < batches; ++b) {
    char* m = out + static_cast<size_t>(b) * matrix;
    std::memset(m, 0, matrix);
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(m + static_cast<size_t>(i * n + i) * element_size, in + static_cast<size_t>(b * n + i) * element_size,
                  element_size);
    }
  }
}

void MatrixSetDiag(const void* input, const void* diagonal, int64_t batches, int64_t rows, int64_t cols,
                   size_t element_size, void* output) {
  if (batches * rows * cols == 0) return;
  const auto* in = static_cast<const char*>(input);
  const auto* diag = static_cast<const char*>(diagonal);
  auto* out = static_cast<char*>(output);
  const int64_t n = std::min(rows, cols);
  const size_t matrix = static_cast<size_t>(rows * cols) * element_size;
  if (out != in) std::memcpy(out, in, static_cast<size_t>(batches) * matrix);
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(out + static_cast<size_t>(b) * matrix + static_cast<size_t>(i * cols + i) * element_size,
                  diag + static_cast<size_t>(b * n + i) * element_size, element_size);
    }
  }
}

std::vector<int64_t> ClampUpdateStarts(const Dims& operand, const Dims& update, const std::vector<int64_t>& starts) {
  std::vector<int64_t> clamped(starts.size());
  for (size_t d = 0; d < starts.size(); ++d) clamped[d] = std::clamp<int64_t>(starts[d], 0, operand[d] - update[d]);
  return clamped;
}

void DynamicUpdateSlice(const Dims& operand, const Dims& update, const std::vector<int64_t>& starts,
                        size_t element_size, const void* operand_data, const void* update_data, void* output) {
  if (NumElements(operand) == 0) return;
  auto* out = static_cast<char*>(output);
  if (output != operand_data) {
    std::memcpy(out, operand_data, static_cast<size_t>(NumElements(operand)) * element_size);
  }
  const int64_t count = NumElements(update);
  if (count == 0) return;
  const auto* in = static_cast<const char*>(update_data);
  const size_t rank = operand.size();
  if (rank == 0) {
    std::memcpy(out, in, element_size);
    return;
  }
  // Row by row along the update's last dimension: the offset of each row's start in the output.
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank - 1; d-- > 0;) strides[d] = strides[d + 1] * operand[d + 1];
  const int64_t row = update[rank - 1];
  const size_t row_bytes = static_cast<size_t>(row) * element_size;
  std::vector<int64_t> index(rank, 0);
  for (int64_t done = 0; done < count; done += row) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) offset += (starts[d] + index[d]) * strides[d];
    std::memcpy(out + static_cast<size_t>(offset) * element_size, in + static_cast<size_t>(done) * element_size,
                row_bytes);
    for (size_t d = rank - 1; d-- > 0;) {
      if (++index[d] < update[d]) break;
      index[d] = 0;
    }
  }
}

void ReverseSequence(const Dims& dims, int seq_dim, int batch_dim, const int64_t* lengths, size_t element_size,
                     const void* input, void* output) {
  const int64_t count = NumElements(dims);
  if (count == 0) return;
  const size_t rank = dims.size();
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank - 1; d-- > 0;) strides[d] = strides[d + 1] * dims[d + 1];
  const auto* in = static_cast<const char*>(input);
  auto* out = static_cast<char*>(output);
  std::vector<int64_t> index(rank, 0);
  const size_t seq = static_cast<size_t>(seq_dim);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t length = lengths[index[static_cast<size_t>(batch_dim)]];
    int64_t source = i;
    if (index[seq] < length) source += (length - 1 - 2 * index[seq]) * strides[seq];
    std::memcpy(out + static_cast<size_t>(i) * element_size, in + static_cast<size_t>(source) * element_size,
                element_size);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
}

bool SparseToDense(const Dims& dims, const int64_t* indices, int64_t tuples, int64_t depth, const void* values,
                   bool scalar_value, const void* default_value, size_t element_size, void* output, int64_t* bad) {
  auto* out = static_cast<char*>(output);
  const int64_t count = NumElements(dims);
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(out + static_cast<size_t>(i) * element_size, default_value, element_size);
  }
  // Every tuple checked before anything is written over the default.
  for (int64_t t = 0; t < tuples; ++t) {
    for (int64_t k = 0; k < depth; ++k) {
      const int64_t v = indices[t * depth + k];
      if (v < 0 || v >= dims[static_cast<size_t>(k)]) {
        *bad = t;
        return false;
      }
    }
  }
  const auto* vals = static_cast<const char*>(values);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    for (int64_t k = 0; k < depth; ++k) offset = offset * dims[static_cast<size_t>(k)] + indices[t * depth + k];
    std::memcpy(out + static_cast<size_t>(offset) * element_size,
                vals + (scalar_value ? 0 : static_cast<size_t>(t) * element_size), element_size);
  }
  return true;
}

void EmbeddingLookupSparse(Combiner combiner, const int32_t* ids, const int64_t* buckets, const float* weights,
                           int64_t count, const float* params, int64_t width, int64_t output_rows, float* output) {
  for (int64_t i = 0; i < output_rows * width; ++i) output[i] = 0.0f;
  int64_t current = 0, members = 0;
  float total = 0.0f, squares = 0.0f;
  const auto finish = [&] {
    if (combiner == Combiner::kSum || members == 0) return;
    const float divisor = combiner == Combiner::kMean ? total : std::sqrt(squares);
    for (int64_t k = 0; k < width; ++k) output[current * width + k] /= divisor;
  };
  for (int64_t i = 0; i < count; ++i) {
    if (buckets[i] != current) {
      finish();
      current = buckets[i];
      members = 0;
      total = squares = 0.0f;
    }
    ++members;
    const float w = weights[i];
    total += w;
    squares += w * w;
    const float* row = params + static_cast<int64_t>(ids[i]) * width;
    for (int64_t k = 0; k < width; ++k) output[current * width + k] += row[k] * w;
  }
  finish();
}

FakeQuantGrid NudgeFakeQuant(float min, float max, int32_t quant_min, int32_t quant_max) {
  const float qmin = static_cast<float>(quant_min), qmax = static_cast<float>(quant_max);
  FakeQuantGrid grid;
  grid.scale = (max - min) / (qmax - qmin);
  const float zero_point_from_min = qmin - min / grid.scale;
  float zero_point;
  if (zero_point_from_min < qmin) {
    zero_point = qmin;
  } else if (zero_point_from_min > qmax) {
    zero_point = qmax;
  } else {
    zero_point = std::round(zero_point_from_min);
  }
  grid.nudged_min = (qmin - zero_point) * grid.scale;
  grid.nudged_max = (qmax - zero_point) * grid.scale;
  return grid;
}

void FakeQuant(const FakeQuantGrid& grid, int64_t count, const float* input, float* output) {
  const float inverse = 1.0f / grid.scale;
  for (int64_t i = 0; i < count; ++i) {
    // NaN: max(nudged_min, NaN) keeps nudged_min, as LiteRT's order of std::max/std::min does.
    const float clamped = std::min(grid.nudged_max, std::max(grid.nudged_min, input[i]));
    output[i] = std::round((clamped - grid.nudged_min) * inverse) * grid.scale + grid.nudged_min;
  }
}

}  // namespace kiln::ops::reference
