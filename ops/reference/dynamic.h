// Reference kernels of the ops whose output shape depends on input values (WHERE, UNIQUE): the count comes first,
// then the values, so the op can size its output at Invoke (a dynamic tensor) between the two.
#ifndef KILN_OPS_REFERENCE_DYNAMIC_H_
#define KILN_OPS_REFERENCE_DYNAMIC_H_

#include <cstdint>
#include <map>
#include <vector>

#include "ops/reference/common.h"

namespace kiln::ops::reference {

// WHERE: how many of the `count` elements are non-zero (bool read as bytes: any non-zero byte is true; a float
// NaN is non-zero, -0.0 is zero).
template <typename T>
int64_t CountNonZero(const T* input, int64_t count) {
  int64_t n = 0;
  for (int64_t i = 0; i < count; ++i) n += input[i] != T(0) ? 1 : 0;
  return n;
}

// WHERE: the coordinates of each non-zero element of a tensor of `dims`, in row-major order, rank values each.
// `coordinates` holds CountNonZero(...) * dims.size() values.
template <typename T>
void WhereCoordinates(const T* input, const Dims& dims, int64_t* coordinates) {
  const int64_t count = NumElements(dims);
  const size_t rank = dims.size();
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    if (input[i] != T(0)) {
      for (size_t d = 0; d < rank; ++d) *coordinates++ = index[d];
    }
    for (size_t d = rank; d-- > 0;) {  // the next coordinate, row-major
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
}

// UNIQUE: the distinct values of `input` in order of first appearance, and for each element the position of its
// value among them. Values are told apart as std::map orders them (as LiteRT's kernel does: 0.0 and -0.0 are one).
template <typename T, typename Index>
void Unique(const T* input, int64_t count, std::vector<T>* values, Index* indices) {
  std::map<T, Index> seen;
  values->clear();
  for (int64_t i = 0; i < count; ++i) {
    auto [it, inserted] = seen.emplace(input[i], static_cast<Index>(values->size()));
    if (inserted) values->push_back(input[i]);
    indices[i] = it->second;
  }
}

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_DYNAMIC_H_
