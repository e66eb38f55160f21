// Sparse constant tensors (the .tflite schema's SparsityParameters), densified when the model is read, so that
// every op, DENSIFY included, sees ordinary dense data.
//
// A tensor of rank r with k block dimensions is stored over r + k "expanded" dimensions: an original dimension j
// that block_map names (block b) is split into shape[j] / B_b blocks (dimension j) and the B_b entries of a block
// (dimension r + b). traversal_order lists the expanded dimensions in storage order, the r blocked original ones
// first, then the k block ones; dims[l] describes the l-th dimension of that order: DENSE (dense_size entries) or
// SPARSE_CSR (for each position of the levels above, the entries array_segments[p] to array_segments[p + 1] of
// array_indices). The values are the tensor's buffer, one per position of the last level, in storage order.
#ifndef KILN_RUNTIME_MODEL_SPARSITY_H_
#define KILN_RUNTIME_MODEL_SPARSITY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

struct SparseDimensionDesc {
  bool csr = false;                        // SPARSE_CSR; else DENSE
  int dense_size = 0;                      // DENSE: the dimension's size
  std::vector<int64_t> segments, indices;  // SPARSE_CSR
};

struct SparsityDesc {
  std::vector<int> traversal_order;
  std::vector<int> block_map;
  std::vector<SparseDimensionDesc> dims;
};

// The largest dense form Kiln makes of a sparse tensor (1 GiB): a few bytes of sparsity can describe a huge
// tensor, so the size is bounded before anything is allocated.
constexpr uint64_t kMaxDenseBytes = uint64_t{1} << 30;

// Writes the dense form of the `value_bytes` bytes of values (elements of `element_size` bytes) into `dense`
// (product(shape) elements, zeros where nothing is stored). Every index and segment is checked: false with
// `*error` saying what is inconsistent where the sparsity does not describe `shape` or the values.
bool Densify(const std::vector<int>& shape, const SparsityDesc& sparsity, const uint8_t* values, size_t value_bytes,
             size_t element_size, std::vector<uint8_t>* dense, std::string* error);

}  // namespace kiln

#endif  // KILN_RUNTIME_MODEL_SPARSITY_H_
