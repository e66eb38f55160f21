// The TFLite_Detection_PostProcess reference kernel (ops/reference/detection.h) against a plain formulation
// written here: NMS by repeatedly taking the best remaining candidate (no sorting), the regular path's merge by
// repeated arg-max over every (class, box) kept, the fast path's classes by repeated arg-max. Random boxes and
// scores over many sizes, both NMS kinds, with and without a background class, ties, empty inputs.
#include "ops/reference/detection.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace kiln::ops::reference {
namespace {

struct Outputs {
  std::vector<float> boxes, classes, scores;
  float count = -1;
};

float PlainIou(const float* a, const float* b) {
  const float area_a = (a[2] - a[0]) * (a[3] - a[1]);
  const float area_b = (b[2] - b[0]) * (b[3] - b[1]);
  if (area_a <= 0 || area_b <= 0) return 0;
  float h = std::fmin(a[2], b[2]) - std::fmax(a[0], b[0]);
  float w = std::fmin(a[3], b[3]) - std::fmax(a[1], b[1]);
  if (h < 0) h = 0;
  if (w < 0) w = 0;
  return h * w / (area_a + area_b - h * w);
}

// Greedy NMS: take the best remaining box (ties: lowest index), drop those overlapping it, repeat.
std::vector<int> PlainNms(const DetectionParams& p, const std::vector<float>& decoded, const std::vector<float>& scores,
                          int limit) {
  const int n = static_cast<int>(scores.size());
  std::vector<bool> alive(n);
  for (int i = 0; i < n; ++i) alive[i] = scores[i] >= p.score_threshold;
  std::vector<int> chosen;
  while (static_cast<int>(chosen.size()) < limit) {
    int best = -1;
    for (int i = 0; i < n; ++i) {
      if (alive[i] && (best < 0 || scores[i] > scores[best])) best = i;
    }
    if (best < 0) break;
    chosen.push_back(best);
    alive[best] = false;
    for (int i = 0; i < n; ++i) {
      if (alive[i] && PlainIou(&decoded[best * 4], &decoded[i * 4]) > p.iou_threshold) alive[i] = false;
    }
  }
  return chosen;
}

Outputs Plain(const DetectionParams& p, const std::vector<float>& encodings, const std::vector<float>& anchors,
              const std::vector<float>& scores) {
  std::vector<float> decoded(p.num_boxes * 4);
  for (int i = 0; i < p.num_boxes; ++i) {
    const float* e = &encodings[i * p.box_code_size];
    const float* a = &anchors[i * 4];
    const float yc = static_cast<float>(double(e[0]) / p.y_scale * a[2] + a[0]);
    const float xc = static_cast<float>(double(e[1]) / p.x_scale * a[3] + a[1]);
    const float hh = static_cast<float>(0.5 * std::exp(double(e[2]) / p.h_scale) * a[2]);
    const float hw = static_cast<float>(0.5 * std::exp(double(e[3]) / p.w_scale) * a[3]);
    decoded[i * 4 + 0] = yc - hh;
    decoded[i * 4 + 1] = xc - hw;
    decoded[i * 4 + 2] = yc + hh;
    decoded[i * 4 + 3] = xc + hw;
  }
  const int slots = p.max_detections * p.max_classes_per_detection;
  Outputs out;
  out.boxes.assign(slots * 4, 0);
  out.classes.assign(slots, 0);
  out.scores.assign(slots, 0);
  const int offset = p.num_classes_with_background - p.num_classes;
  auto score = [&](int box, int c) { return scores[box * p.num_classes_with_background + c + offset]; };
  auto put = [&](int slot, int box, int c) {
    for (int k = 0; k < 4; ++k) out.boxes[slot * 4 + k] = decoded[box * 4 + k];
    out.classes[slot] = static_cast<float>(c);
    out.scores[slot] = score(box, c);
  };
  if (p.use_regular_nms) {
    struct Kept {
      int box, c, rank;
    };
    std::vector<Kept> kept;
    for (int c = 0; c < p.num_classes; ++c) {
      std::vector<float> s(p.num_boxes);
      for (int b = 0; b < p.num_boxes; ++b) s[b] = score(b, c);
      const std::vector<int> chosen = PlainNms(p, decoded, s, p.detections_per_class);
      for (int r = 0; r < static_cast<int>(chosen.size()); ++r) kept.push_back({chosen[r], c, r});
    }
    // Repeated arg-max over (score desc, class asc, rank asc): kept is in class, then rank order already.
    std::vector<bool> used(kept.size());
    int count = 0;
    while (count < p.max_detections) {
      int best = -1;
      for (int i = 0; i < static_cast<int>(kept.size()); ++i) {
        if (!used[i] && (best < 0 || score(kept[i].box, kept[i].c) > score(kept[best].box, kept[best].c))) best = i;
      }
      if (best < 0) break;
      used[best] = true;
      put(count++, kept[best].box, kept[best].c);
    }
    out.count = static_cast<float>(count);
  } else {
    const int per_box = std::min(p.max_classes_per_detection, p.num_classes);
    std::vector<float> max_scores(p.num_boxes);
    for (int b = 0; b < p.num_boxes; ++b) {
      max_scores[b] = score(b, 0);
      for (int c = 1; c < p.num_classes; ++c) max_scores[b] = std::fmax(max_scores[b], score(b, c));
    }
    const std::vector<int> chosen = PlainNms(p, decoded, max_scores, p.max_detections);
    for (int i = 0; i < static_cast<int>(chosen.size()); ++i) {
      std::vector<bool> used(p.num_classes);
      for (int k = 0; k < per_box; ++k) {
        int best = -1;
        for (int c = 0; c < p.num_classes; ++c) {
          if (!used[c] && (best < 0 || score(chosen[i], c) > score(chosen[i], best))) best = c;
        }
        used[best] = true;
        put(i * p.max_classes_per_detection + k, chosen[i], best);
      }
    }
    out.count = static_cast<float>(chosen.size());
  }
  return out;
}

Outputs RunKernel(const DetectionParams& p, const std::vector<float>& encodings, const std::vector<float>& anchors,
                  const std::vector<float>& scores, bool* valid = nullptr) {
  std::vector<float> decoded(p.num_boxes * 4);
  const bool ok = DecodeCenterSizeBoxes(p, encodings.data(), anchors.data(), decoded.data());
  if (valid != nullptr) *valid = ok;
  const int slots = p.max_detections * p.max_classes_per_detection;
  Outputs out;
  out.boxes.assign(slots * 4, -7);
  out.classes.assign(slots, -7);
  out.scores.assign(slots, -7);
  DetectionNonMaxSuppression(p, decoded.data(), scores.data(), out.boxes.data(), out.classes.data(), out.scores.data(),
                             &out.count);
  return out;
}

void ExpectSame(const Outputs& got, const Outputs& want, const std::string& where) {
  EXPECT_EQ(got.count, want.count) << where;
  EXPECT_EQ(got.boxes, want.boxes) << where;
  EXPECT_EQ(got.classes, want.classes) << where;
  EXPECT_EQ(got.scores, want.scores) << where;
}

TEST(DetectionPostProcessTest, RandomCasesAgainstPlainFormulation) {
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  int cases = 0;
  for (bool regular : {false, true}) {
    for (int num_boxes : {0, 1, 2, 7, 31}) {
      for (int num_classes : {1, 2, 5}) {
        for (int background : {0, 1}) {
          for (int per_detection : {1, 2, 7}) {
            for (int code_size : {4, 6}) {
              DetectionParams p;
              p.num_boxes = num_boxes;
              p.box_code_size = code_size;
              p.num_classes = num_classes;
              p.num_classes_with_background = num_classes + background;
              p.max_detections = 1 + (cases % 6);
              p.max_classes_per_detection = regular ? 1 : per_detection;
              p.detections_per_class = 1 + (cases % 4);
              p.use_regular_nms = regular;
              p.score_threshold = (cases % 3 == 0) ? -2.0f : 0.1f * (cases % 5);
              p.iou_threshold = (cases % 2 == 0) ? 0.2f : 0.6f;
              p.y_scale = 10, p.x_scale = 10, p.h_scale = 5, p.w_scale = 5;
              std::vector<float> enc(num_boxes * code_size), anchors(num_boxes * 4),
                  scores(num_boxes * p.num_classes_with_background);
              for (float& v : enc) v = unit(gen);
              for (float& v : scores) v = unit(gen);
              for (int i = 0; i < num_boxes; ++i) {  // overlapping neighbours on a 4-wide grid
                anchors[i * 4 + 0] = 0.1f * (i / 4);
                anchors[i * 4 + 1] = 0.1f * (i % 4);
                anchors[i * 4 + 2] = 0.12f + 0.05f * (unit(gen) + 1);
                anchors[i * 4 + 3] = 0.12f + 0.05f * (unit(gen) + 1);
              }
              bool valid = false;
              const Outputs got = RunKernel(p, enc, anchors, scores, &valid);
              EXPECT_TRUE(valid);
              ExpectSame(got, Plain(p, enc, anchors, scores), "case " + std::to_string(cases));
              ++cases;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 360);
}

// Identity decoding (zero encodings, unit scales keep the anchor's center; exp(0) keeps its size).
DetectionParams HandParams(int boxes, int classes, int background) {
  DetectionParams p;
  p.num_boxes = boxes;
  p.num_classes = classes;
  p.num_classes_with_background = classes + background;
  p.max_detections = 3;
  p.max_classes_per_detection = 1;
  p.score_threshold = 0.0f;
  p.iou_threshold = 0.5f;
  return p;
}

TEST(DetectionPostProcessTest, HandCaseFastSuppressesOverlap) {
  DetectionParams p = HandParams(3, 1, 1);
  // Anchors (y, x, h, w): boxes 0 and 1 overlap with IoU 0.6; box 2 stands apart.
  const std::vector<float> anchors = {0.5f, 0.5f, 1.0f, 1.0f, 0.5f, 0.75f, 1.0f, 1.0f, 3.0f, 3.0f, 1.0f, 1.0f};
  const std::vector<float> enc(12, 0.0f);
  const std::vector<float> scores = {0.0f, 0.7f, 0.0f, 0.9f, 0.0f, 0.3f};  // background, class 0
  const Outputs got = RunKernel(p, enc, anchors, scores);
  EXPECT_EQ(got.count, 2);
  EXPECT_EQ(got.boxes, (std::vector<float>{0.0f, 0.25f, 1.0f, 1.25f, 2.5f, 2.5f, 3.5f, 3.5f, 0, 0, 0, 0}));
  EXPECT_EQ(got.classes, (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(got.scores, (std::vector<float>{0.9f, 0.3f, 0}));
  // A looser IoU bound keeps box 0 as well.
  p.iou_threshold = 0.7f;
  const Outputs loose = RunKernel(p, enc, anchors, scores);
  EXPECT_EQ(loose.count, 3);
  EXPECT_EQ(loose.scores, (std::vector<float>{0.9f, 0.7f, 0.3f}));
}

TEST(DetectionPostProcessTest, HandCaseRegularAcrossClasses) {
  DetectionParams p = HandParams(2, 2, 0);
  p.use_regular_nms = true;
  p.max_detections = 3;
  const std::vector<float> anchors = {0.5f, 0.5f, 1.0f, 1.0f, 5.0f, 5.0f, 1.0f, 1.0f};
  const std::vector<float> enc(8, 0.0f);
  const std::vector<float> scores = {0.2f, 0.8f, 0.6f, 0.4f};  // box 0: classes 0, 1; box 1: classes 0, 1
  const Outputs got = RunKernel(p, enc, anchors, scores);
  EXPECT_EQ(got.count, 3);
  EXPECT_EQ(got.classes, (std::vector<float>{1, 0, 1}));
  EXPECT_EQ(got.scores, (std::vector<float>{0.8f, 0.6f, 0.4f}));
  EXPECT_EQ(got.boxes, (std::vector<float>{0, 0, 1, 1, 4.5f, 4.5f, 5.5f, 5.5f, 4.5f, 4.5f, 5.5f, 5.5f}));
}

TEST(DetectionPostProcessTest, TiesGoToTheLowerIndexAndTheEarlierClass) {
  const std::vector<float> anchors = {0.5f, 0.5f, 1.0f, 1.0f, 5.0f, 5.0f, 1.0f, 1.0f, 9.0f, 9.0f, 1.0f, 1.0f};
  const std::vector<float> enc(12, 0.0f);
  const std::vector<float> scores = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};  // 3 boxes x 2 classes, all equal
  DetectionParams fast = HandParams(3, 2, 0);
  fast.max_classes_per_detection = 2;
  const Outputs f = RunKernel(fast, enc, anchors, scores);
  EXPECT_EQ(f.count, 3);
  EXPECT_EQ(f.classes, (std::vector<float>{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(f.boxes[0], 0.0f);
  EXPECT_EQ(f.boxes[8], 4.5f);  // second detection: box 1
  DetectionParams regular = HandParams(3, 2, 0);
  regular.use_regular_nms = true;
  regular.max_detections = 4;
  const Outputs r = RunKernel(regular, enc, anchors, scores);
  EXPECT_EQ(r.count, 4);
  EXPECT_EQ(r.classes, (std::vector<float>{0, 0, 0, 1}));
  EXPECT_EQ(r.boxes[4 * 3], 0.0f);  // class 1's best box is box 0
}

TEST(DetectionPostProcessTest, ThresholdsNaNAndEmpty) {
  const std::vector<float> anchors = {0.5f, 0.5f, 1.0f, 1.0f, 5.0f, 5.0f, 1.0f, 1.0f};
  const std::vector<float> enc(8, 0.0f);
  DetectionParams p = HandParams(2, 1, 0);
  p.score_threshold = 0.5f;
  // A score equal to the threshold takes part; NaN never does.
  Outputs got = RunKernel(p, enc, anchors, {0.5f, std::nanf("")});
  EXPECT_EQ(got.count, 1);
  EXPECT_EQ(got.scores[0], 0.5f);
  p.use_regular_nms = true;
  got = RunKernel(p, enc, anchors, {std::nanf(""), 0.49f});
  EXPECT_EQ(got.count, 0);
  EXPECT_EQ(got.scores, (std::vector<float>{0, 0, 0}));
  // No boxes, or no room for detections.
  DetectionParams none = HandParams(0, 3, 1);
  EXPECT_EQ(RunKernel(none, {}, {}, {}).count, 0);
  none.use_regular_nms = true;
  EXPECT_EQ(RunKernel(none, {}, {}, {}).count, 0);
  p.max_detections = 0;
  got = RunKernel(p, enc, anchors, {0.9f, 0.8f});
  EXPECT_EQ(got.count, 0);
  EXPECT_TRUE(got.boxes.empty());
}

TEST(DetectionPostProcessTest, IouAndInvertedBoxes) {
  const float a[] = {0, 0, 2, 2}, b[] = {1, 1, 3, 3}, flat[] = {0, 0, 0, 2};
  EXPECT_FLOAT_EQ(BoxIntersectionOverUnion(a, b), 1.0f / 7.0f);
  EXPECT_EQ(BoxIntersectionOverUnion(a, flat), 0.0f);
  EXPECT_EQ(BoxIntersectionOverUnion(a, a), 1.0f);
  DetectionParams p = HandParams(1, 1, 0);
  std::vector<float> decoded(4);
  const float enc[] = {0, 0, 0, 0}, negative[] = {0, 0, -1, 1};
  EXPECT_FALSE(DecodeCenterSizeBoxes(p, enc, negative, decoded.data()));
  EXPECT_EQ(decoded, (std::vector<float>{0.5f, -0.5f, -0.5f, 0.5f}));
}

}  // namespace
}  // namespace kiln::ops::reference
