#include "runtime/model/sparsity.h"

#include <cstring>

namespace kiln {
namespace {

std::string Str(int64_t v) { return std::to_string(v); }

// True where `values` holds each of [first, first + count) exactly once.
bool IsPermutationOf(const std::vector<int>& values, size_t begin, size_t count, int first) {
  std::vector<bool> seen(count, false);
  for (size_t i = begin; i < begin + count; ++i) {
    const int64_t v = static_cast<int64_t>(values[i]) - first;
    if (v < 0 || v >= static_cast<int64_t>(count) || seen[static_cast<size_t>(v)]) return false;
    seen[static_cast<size_t>(v)] = true;
  }
  return true;
}

}  // namespace

bool Densify(const std::vector<int>& shape, const SparsityDesc& s, const uint8_t* values, size_t value_bytes,
             size_t element_size, std::vector<uint8_t>* dense, std::string* error) {
  const size_t rank = shape.size();
  const size_t blocks = s.block_map.size();
  const size_t levels = rank + blocks;
  if (element_size == 0) {
    *error = "sparse tensors need a fixed-size element type";
    return false;
  }
  if (s.traversal_order.size() != levels || s.dims.size() != levels) {
    *error = "traversal_order has " + Str(static_cast<int64_t>(s.traversal_order.size())) + " entries and " +
             "dim_metadata " + Str(static_cast<int64_t>(s.dims.size())) + "; expected " +
             Str(static_cast<int64_t>(levels)) + " (rank " + Str(static_cast<int64_t>(rank)) + " + " +
             Str(static_cast<int64_t>(blocks)) + " block dimensions)";
    return false;
  }
  if (!IsPermutationOf(s.traversal_order, 0, rank, 0) ||
      !IsPermutationOf(s.traversal_order, rank, blocks, static_cast<int>(rank))) {
    *error = "traversal_order must order the " + Str(static_cast<int64_t>(rank)) +
             " original dimensions first, then the block dimensions, each exactly once";
    return false;
  }
  for (size_t b = 0; b < blocks; ++b) {
    const int j = s.block_map[b];
    if (j < 0 || static_cast<size_t>(j) >= rank || (b > 0 && j <= s.block_map[b - 1])) {
      *error = "block_map entry " + Str(static_cast<int64_t>(b)) + " is " + Str(j) +
               "; expected increasing dimensions below the rank " + Str(static_cast<int64_t>(rank));
      return false;
    }
  }
  // Sizes and strides (in elements of the dense tensor) of the expanded dimensions.
  std::vector<int64_t> size(levels), stride(levels), orig_stride(rank);
  int64_t total = 1;
  for (size_t j = rank; j-- > 0;) {
    orig_stride[j] = total;
    total *= shape[j];
  }
  for (size_t j = 0; j < rank; ++j) {
    size[j] = shape[j];
    stride[j] = orig_stride[j];
  }
  for (size_t b = 0; b < blocks; ++b) {
    size_t level = 0;
    while (s.traversal_order[level] != static_cast<int>(rank + b)) ++level;
    const SparseDimensionDesc& d = s.dims[level];
    const int j = s.block_map[b];
    if (d.csr || d.dense_size <= 0 || shape[j] % d.dense_size != 0) {
      *error = "block dimension " + Str(static_cast<int64_t>(b)) + " must be DENSE with a size dividing dimension " +
               Str(j) + " (" + Str(shape[j]) + "); it is " +
               (d.csr ? std::string("SPARSE_CSR") : "of size " + Str(d.dense_size));
      return false;
    }
    size[rank + b] = d.dense_size;
    stride[rank + b] = orig_stride[j];
    size[j] = shape[j] / d.dense_size;
    stride[j] = orig_stride[j] * d.dense_size;
  }
  // First the number of positions of each level (DENSE multiplies it, SPARSE_CSR has as many as array_indices),
  // so that the values are counted before anything is allocated: every count then stays within the file's arrays.
  int64_t count = 1;
  for (size_t level = 0; level < levels; ++level) {
    const SparseDimensionDesc& d = s.dims[level];
    const int64_t dim_size = size[static_cast<size_t>(s.traversal_order[level])];
    if (d.csr) {
      if (d.segments.size() != static_cast<size_t>(count) + 1) break;  // reported by the walk below
      count = static_cast<int64_t>(d.indices.size());
    } else if (d.dense_size != dim_size || (dim_size != 0 && count > total / dim_size)) {
      break;  // reported by the walk below
    } else {
      count *= dim_size;
    }
    if (level + 1 == levels && value_bytes != static_cast<size_t>(count) * element_size) {
      *error = "the buffer holds " + Str(static_cast<int64_t>(value_bytes / element_size)) + " values (" +
               Str(static_cast<int64_t>(value_bytes)) + " bytes), but the sparsity stores " + Str(count);
      return false;
    }
  }
  if (static_cast<uint64_t>(total) * element_size > kMaxDenseBytes) {
    *error = "its dense form needs " + Str(total * static_cast<int64_t>(element_size)) + " bytes, more than the " +
             Str(static_cast<int64_t>(kMaxDenseBytes)) + " Kiln densifies";
    return false;
  }
  // Walk the levels in storage order: each position carries the dense offset its indices add up to.
  std::vector<int64_t> offsets = {0}, next;
  for (size_t level = 0; level < levels; ++level) {
    const SparseDimensionDesc& d = s.dims[level];
    const int dim = s.traversal_order[level];
    const std::string where = "dim_metadata " + Str(static_cast<int64_t>(level)) + " (dimension " + Str(dim) + ")";
    next.clear();
    if (!d.csr) {
      if (d.dense_size != size[dim]) {
        *error = where + ": DENSE size " + Str(d.dense_size) + "; the dimension has " + Str(size[dim]);
        return false;
      }
      if (size[dim] != 0 && static_cast<int64_t>(offsets.size()) > total / size[dim]) {
        *error = where + ": more positions than the dense tensor has elements";
        return false;
      }
      for (int64_t offset : offsets) {
        for (int64_t i = 0; i < size[dim]; ++i) next.push_back(offset + i * stride[dim]);
      }
    } else {
      const std::vector<int64_t>& seg = d.segments;
      if (seg.size() != offsets.size() + 1) {
        *error = where + ": array_segments has " + Str(static_cast<int64_t>(seg.size())) +
                 " entries; the levels above give " + Str(static_cast<int64_t>(offsets.size())) + " positions, so " +
                 Str(static_cast<int64_t>(offsets.size() + 1)) + " are needed";
        return false;
      }
      if (seg.front() != 0 || seg.back() != static_cast<int64_t>(d.indices.size())) {
        *error = where + ": array_segments must run from 0 to the " + Str(static_cast<int64_t>(d.indices.size())) +
                 " entries of array_indices";
        return false;
      }
      if (static_cast<int64_t>(d.indices.size()) > total) {
        *error = where + ": more positions than the dense tensor has elements";
        return false;
      }
      // Non-decreasing from 0 to indices.size(), so that every segment lies within array_indices.
      for (size_t p = 0; p < offsets.size(); ++p) {
        if (seg[p + 1] < seg[p]) {
          *error = where + ": array_segments decreases at entry " + Str(static_cast<int64_t>(p + 1));
          return false;
        }
      }
      for (size_t p = 0; p < offsets.size(); ++p) {
        for (int64_t i = seg[p]; i < seg[p + 1]; ++i) {
          const int64_t index = d.indices[static_cast<size_t>(i)];
          if (index < 0 || index >= size[dim]) {
            *error = where + ": array_indices entry " + Str(i) + " is " + Str(index) + ", outside [0, " +
                     Str(size[dim]) + ")";
            return false;
          }
          next.push_back(offsets[p] + index * stride[dim]);
        }
      }
    }
    offsets.swap(next);
  }
  if (value_bytes != offsets.size() * element_size) {
    *error = "the buffer holds " + Str(static_cast<int64_t>(value_bytes / element_size)) + " values (" +
             Str(static_cast<int64_t>(value_bytes)) + " bytes), but the sparsity stores " +
             Str(static_cast<int64_t>(offsets.size()));
    return false;
  }
  dense->assign(static_cast<size_t>(total) * element_size, 0);
  for (size_t i = 0; i < offsets.size(); ++i) {
    std::memcpy(dense->data() + static_cast<size_t>(offsets[i]) * element_size, values + i * element_size,
                element_size);
  }
  return true;
}

}  // namespace kiln
