// Non-max suppression (dynamic.h): the reference kernel of NON_MAX_SUPPRESSION_V4 and V5.
#include "ops/reference/dynamic.h"

#include <cmath>
#include <deque>
#include <queue>

namespace kiln::ops::reference {

int NonMaxSuppression(const float* boxes, int num_boxes, const float* scores, int max_output_size, float iou_threshold,
                      float score_threshold, float soft_nms_sigma, int32_t* selected_indices, float* selected_scores) {
  struct Candidate {
    int index;
    float score;
    int checked_until;  // selections [0, checked_until) already applied to this candidate's score
  };
  auto lower = [](const Candidate& a, const Candidate& b) { return a.score < b.score; };
  std::priority_queue<Candidate, std::deque<Candidate>, decltype(lower)> queue(lower);
  for (int i = 0; i < num_boxes; ++i) {
    if (scores[i] > score_threshold) queue.push(Candidate{i, scores[i], 0});
  }
  const int limit = std::min(static_cast<int>(queue.size()), max_output_size);
  const float decay = soft_nms_sigma > 0.0f ? -0.5f / soft_nms_sigma : 0.0f;
  int selected = 0;
  while (selected < limit && !queue.empty()) {
    Candidate c = queue.top();
    queue.pop();
    const float first_score = c.score;
    bool suppressed = false;
    // Newest selections first: overlapping boxes tend to have close scores.
    for (int s = selected - 1; s >= c.checked_until; --s) {
      const float iou = BoxIou(boxes, c.index, selected_indices[s]);
      if (iou >= iou_threshold) {
        suppressed = true;
        break;
      }
      if (soft_nms_sigma > 0.0f) c.score *= std::exp(decay * iou * iou);
      if (c.score <= score_threshold) break;
    }
    c.checked_until = selected;
    if (suppressed) continue;
    if (c.score == first_score) {
      selected_indices[selected] = c.index;
      if (selected_scores != nullptr) selected_scores[selected] = c.score;
      ++selected;
    }
    if (c.score > score_threshold) queue.push(c);
  }
  return selected;
}

}  // namespace kiln::ops::reference
