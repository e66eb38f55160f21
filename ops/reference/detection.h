// TFLite_Detection_PostProcess (the custom op SSD detection models end in): box decoding against anchors, then
// non-max suppression, either per class ("regular") or once over each anchor's best classes ("fast").
#ifndef KILN_OPS_REFERENCE_DETECTION_H_
#define KILN_OPS_REFERENCE_DETECTION_H_

#include <cstdint>
#include <vector>

namespace kiln::ops::reference {

struct DetectionParams {
  int num_boxes = 0;                    // anchors, rows of the box encodings and of the scores
  int box_code_size = 4;                // values per box encoding (>= 4; the first four are y, x, h, w)
  int num_classes = 0;                  // classes detected (> 0)
  int num_classes_with_background = 0;  // the scores' last dimension: num_classes or num_classes + 1
  int max_detections = 0;
  int max_classes_per_detection = 1;  // fast NMS: classes reported per detected box (> 0)
  int detections_per_class = 100;     // regular NMS: boxes kept per class (> 0)
  bool use_regular_nms = false;
  float score_threshold = 0.0f;  // scores >= this take part
  float iou_threshold = 0.5f;    // a box overlapping a kept one by more than this is suppressed; in (0, 1]
  float y_scale = 1.0f, x_scale = 1.0f, h_scale = 1.0f, w_scale = 1.0f;
};

// Decodes `num_boxes` center-size encodings (y, x, h, w, then box_code_size - 4 values ignored) against the
// anchors ([num_boxes, 4]: y, x, h, w) into corners (ymin, xmin, ymax, xmax), in double as LiteRT does:
//   yc = y / y_scale * ah + ay, half_h = 0.5 * exp(h / h_scale) * ah (each rounded to float), ymin = yc - half_h
// and the same for x and w. False where a decoded box is inverted (ymin > ymax or xmin > xmax: an anchor of
// negative size), which LiteRT refuses at Invoke.
bool DecodeCenterSizeBoxes(const DetectionParams& params, const float* encodings, const float* anchors, float* decoded);

// IoU of two corner boxes, 0 where either has no area.
float BoxIntersectionOverUnion(const float* a, const float* b);

// Non-max suppression of one class: the indices of the boxes chosen, best first, at most `max_selected`. Boxes
// scoring >= score_threshold are visited in decreasing score (ties: lower index first); each is kept unless a
// kept box overlaps it by more than iou_threshold.
void SelectNonMaxSuppressed(const DetectionParams& params, const float* decoded, const std::vector<float>& scores,
                            int max_selected, std::vector<int>* selected);

// Runs the NMS the params choose over `decoded` ([num_boxes, 4]) and `scores` ([num_boxes,
// num_classes_with_background], the first column background where there is one), writing the outputs: boxes
// [max_detections * max_classes_per_detection, 4], classes and scores [max_detections *
// max_classes_per_detection] (slots without a detection are 0), and the number of detections in *count.
// Orders: regular NMS lists the best max_detections (box, class) pairs over all classes by decreasing score
// (ties: the earlier class, then the better-ranked box within it); fast NMS lists the kept boxes by decreasing
// best score, each with its best max_classes_per_detection classes (ties: lower class index first) at slots
// box * max_classes_per_detection + k.
void DetectionNonMaxSuppression(const DetectionParams& params, const float* decoded, const float* scores,
                                float* out_boxes, float* out_classes, float* out_scores, float* count);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_DETECTION_H_
