// Reference kernels of the ops whose output shape depends on input values (WHERE, UNIQUE): the count comes first,
// then the values, so the op can size its output at Invoke (a dynamic tensor) between the two.
#ifndef KILN_OPS_REFERENCE_DYNAMIC_H_
#define KILN_OPS_REFERENCE_DYNAMIC_H_

#include <algorithm>
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

// NON_MAX_SUPPRESSION_V4/V5: the intersection over union of boxes i and j of `boxes` ([n, 4] as y1, x1, y2, x2,
// corners in either order); 0 where either box has no area.
inline float BoxIou(const float* boxes, int i, int j) {
  const float* a = boxes + 4 * static_cast<int64_t>(i);
  const float* b = boxes + 4 * static_cast<int64_t>(j);
  const float a_y0 = std::min(a[0], a[2]), a_y1 = std::max(a[0], a[2]);
  const float a_x0 = std::min(a[1], a[3]), a_x1 = std::max(a[1], a[3]);
  const float b_y0 = std::min(b[0], b[2]), b_y1 = std::max(b[0], b[2]);
  const float b_x0 = std::min(b[1], b[3]), b_x1 = std::max(b[1], b[3]);
  const float area_a = (a_y1 - a_y0) * (a_x1 - a_x0);
  const float area_b = (b_y1 - b_y0) * (b_x1 - b_x0);
  if (area_a <= 0 || area_b <= 0) return 0.0f;
  const float h = std::max(std::min(a_y1, b_y1) - std::max(a_y0, b_y0), 0.0f);
  const float w = std::max(std::min(a_x1, b_x1) - std::max(a_x0, b_x0), 0.0f);
  const float overlap = h * w;
  return overlap / (area_a + area_b - overlap);
}

// Greedy non-max suppression as TensorFlow (and LiteRT) define it: candidates above score_threshold, highest
// score first (a std::priority_queue, so that equal scores come out in the order LiteRT's does); one is dropped
// when its IoU with an already selected box is >= iou_threshold. With soft_nms_sigma > 0 (V5) a candidate's
// score decays by exp(-0.5 * iou^2 / sigma) per selected box instead, and it is selected only once its score
// survives a full pass unchanged. Writes up to max_output_size indices (and scores where `selected_scores` is not
// null); returns how many.
int NonMaxSuppression(const float* boxes, int num_boxes, const float* scores, int max_output_size, float iou_threshold,
                      float score_threshold, float soft_nms_sigma, int32_t* selected_indices, float* selected_scores);

// BROADCAST_ARGS: the broadcast of shapes a and b (numpy rules, aligned at the back) into `out`, which holds
// max(a.size(), b.size()) values. Returns false, with the position (counted in `out`) of the first pair that is
// neither equal nor has a 1, where the shapes do not broadcast.
template <typename T>
bool BroadcastShapes(const std::vector<T>& a, const std::vector<T>& b, std::vector<T>* out, size_t* bad) {
  const size_t n = std::max(a.size(), b.size());
  out->assign(n, T(1));
  for (size_t i = 0; i < n; ++i) {
    const T x = i < a.size() ? a[a.size() - 1 - i] : T(1);
    const T y = i < b.size() ? b[b.size() - 1 - i] : T(1);
    T& r = (*out)[n - 1 - i];
    if (x == y || y == T(1)) {
      r = x;
    } else if (x == T(1)) {
      r = y;
    } else {
      *bad = n - 1 - i;
      return false;
    }
  }
  return true;
}

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_DYNAMIC_H_
