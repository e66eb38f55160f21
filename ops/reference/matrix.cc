#include "ops/reference/matrix.h"

#include <algorithm>
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

}  // namespace kiln::ops::reference
