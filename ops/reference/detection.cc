#include "ops/reference/detection.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace kiln::ops::reference {

bool DecodeCenterSizeBoxes(const DetectionParams& params, const float* encodings, const float* anchors,
                           float* decoded) {
  bool valid = true;
  for (int i = 0; i < params.num_boxes; ++i) {
    const float* e = encodings + static_cast<int64_t>(i) * params.box_code_size;
    const float* a = anchors + static_cast<int64_t>(i) * 4;
    const double ay = a[0], ax = a[1], ah = a[2], aw = a[3];
    const float y_center = static_cast<float>(static_cast<double>(e[0]) / params.y_scale * ah + ay);
    const float x_center = static_cast<float>(static_cast<double>(e[1]) / params.x_scale * aw + ax);
    const float half_h = static_cast<float>(0.5 * std::exp(static_cast<double>(e[2]) / params.h_scale) * ah);
    const float half_w = static_cast<float>(0.5 * std::exp(static_cast<double>(e[3]) / params.w_scale) * aw);
    float* box = decoded + static_cast<int64_t>(i) * 4;
    box[0] = y_center - half_h;
    box[1] = x_center - half_w;
    box[2] = y_center + half_h;
    box[3] = x_center + half_w;
    if (box[0] > box[2] || box[1] > box[3]) valid = false;
  }
  return valid;
}

float BoxIntersectionOverUnion(const float* a, const float* b) {
  const float area_a = (a[2] - a[0]) * (a[3] - a[1]);
  const float area_b = (b[2] - b[0]) * (b[3] - b[1]);
  if (area_a <= 0 || area_b <= 0) return 0.0f;
  const float height = std::max(std::min(a[2], b[2]) - std::max(a[0], b[0]), 0.0f);
  const float width = std::max(std::min(a[3], b[3]) - std::max(a[1], b[1]), 0.0f);
  const float intersection = height * width;
  return intersection / (area_a + area_b - intersection);
}

namespace {

// Orders by decreasing value, NaN after every number, equal values by increasing index: a strict total order,
// so that std::sort gives what a stable sort by decreasing value would.
bool Before(float a, int i, float b, int j) {
  const bool a_nan = std::isnan(a), b_nan = std::isnan(b);
  if (a_nan != b_nan) return b_nan;
  if (!a_nan && a != b) return a > b;
  return i < j;
}

}  // namespace

void SelectNonMaxSuppressed(const DetectionParams& params, const float* decoded, const std::vector<float>& scores,
                            int max_selected, std::vector<int>* selected) {
  selected->clear();
  std::vector<int> order;
  for (int i = 0; i < static_cast<int>(scores.size()); ++i) {
    if (scores[i] >= params.score_threshold) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&scores](int i, int j) { return Before(scores[i], i, scores[j], j); });
  std::vector<char> suppressed(order.size(), 0);
  for (size_t k = 0; k < order.size() && static_cast<int>(selected->size()) < max_selected; ++k) {
    if (suppressed[k]) continue;
    const float* kept = decoded + static_cast<int64_t>(order[k]) * 4;
    selected->push_back(order[k]);
    for (size_t later = k + 1; later < order.size(); ++later) {
      if (suppressed[later]) continue;
      const float* other = decoded + static_cast<int64_t>(order[later]) * 4;
      if (BoxIntersectionOverUnion(kept, other) > params.iou_threshold) suppressed[later] = 1;
    }
  }
}

namespace {

void WriteDetection(const float* box, int slot, int class_index, float score, float* out_boxes, float* out_classes,
                    float* out_scores) {
  std::memcpy(out_boxes + static_cast<int64_t>(slot) * 4, box, 4 * sizeof(float));
  out_classes[slot] = static_cast<float>(class_index);
  out_scores[slot] = score;
}

// The best `count` entries of values[0..n) by decreasing value, ties to the lower index.
void TopIndices(const float* values, int n, int count, int* indices) {
  std::vector<int> all(n);
  std::iota(all.begin(), all.end(), 0);
  std::sort(all.begin(), all.end(), [values](int i, int j) { return Before(values[i], i, values[j], j); });
  std::copy(all.begin(), all.begin() + count, indices);
}

void RegularNms(const DetectionParams& p, const float* decoded, const float* scores, float* out_boxes,
                float* out_classes, float* out_scores, float* count) {
  const int offset = p.num_classes_with_background - p.num_classes;
  struct Candidate {
    int box;
    int class_index;
    float score;
    int position;  // in the list before sorting: the earlier class, then the better-ranked box, wins a tie
  };
  std::vector<Candidate> best;  // the best max_detections so far, best first
  std::vector<float> class_scores(p.num_boxes);
  std::vector<int> selected;
  for (int c = 0; c < p.num_classes; ++c) {
    for (int b = 0; b < p.num_boxes; ++b) {
      class_scores[b] = scores[static_cast<int64_t>(b) * p.num_classes_with_background + c + offset];
    }
    SelectNonMaxSuppressed(p, decoded, class_scores, p.detections_per_class, &selected);
    for (int b : selected) best.push_back({b, c, class_scores[b], 0});
    for (size_t i = 0; i < best.size(); ++i) best[i].position = static_cast<int>(i);
    std::sort(best.begin(), best.end(),
              [](const Candidate& x, const Candidate& y) { return Before(x.score, x.position, y.score, y.position); });
    if (static_cast<int>(best.size()) > p.max_detections) best.resize(p.max_detections);
  }
  for (size_t i = 0; i < best.size(); ++i) {
    WriteDetection(decoded + static_cast<int64_t>(best[i].box) * 4, static_cast<int>(i), best[i].class_index,
                   best[i].score, out_boxes, out_classes, out_scores);
  }
  *count = static_cast<float>(best.size());
}

void FastNms(const DetectionParams& p, const float* decoded, const float* scores, float* out_boxes, float* out_classes,
             float* out_scores, float* count) {
  const int offset = p.num_classes_with_background - p.num_classes;
  const int per_box = std::min(p.max_classes_per_detection, p.num_classes);
  std::vector<int> top_classes(static_cast<size_t>(p.num_boxes) * per_box);
  std::vector<float> max_scores(p.num_boxes);
  for (int b = 0; b < p.num_boxes; ++b) {
    const float* row = scores + static_cast<int64_t>(b) * p.num_classes_with_background + offset;
    int* top = top_classes.data() + static_cast<int64_t>(b) * per_box;
    TopIndices(row, p.num_classes, per_box, top);
    max_scores[b] = row[top[0]];
  }
  std::vector<int> selected;
  SelectNonMaxSuppressed(p, decoded, max_scores, p.max_detections, &selected);
  for (size_t i = 0; i < selected.size(); ++i) {
    const int b = selected[i];
    const float* row = scores + static_cast<int64_t>(b) * p.num_classes_with_background + offset;
    const int* top = top_classes.data() + static_cast<int64_t>(b) * per_box;
    for (int k = 0; k < per_box; ++k) {
      WriteDetection(decoded + static_cast<int64_t>(b) * 4, static_cast<int>(i) * p.max_classes_per_detection + k,
                     top[k], row[top[k]], out_boxes, out_classes, out_scores);
    }
  }
  *count = static_cast<float>(selected.size());
}

}  // namespace

void DetectionNonMaxSuppression(const DetectionParams& params, const float* decoded, const float* scores,
                                float* out_boxes, float* out_classes, float* out_scores, float* count) {
  const int64_t slots = static_cast<int64_t>(params.max_detections) * params.max_classes_per_detection;
  std::fill(out_boxes, out_boxes + slots * 4, 0.0f);
  std::fill(out_classes, out_classes + slots, 0.0f);
  std::fill(out_scores, out_scores + slots, 0.0f);
  if (params.use_regular_nms) {
    RegularNms(params, decoded, scores, out_boxes, out_classes, out_scores, count);
  } else {
    FastNms(params, decoded, scores, out_boxes, out_classes, out_scores, count);
  }
}

}  // namespace kiln::ops::reference
